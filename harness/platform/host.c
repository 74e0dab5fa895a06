/* host.c: this host's basic facts from sysfs, /proc/meminfo and uname. */
#include "host.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mb.h"
#include "paths.h"

long long mb_parse_cache_size(const char *s)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end == 'K')
        v *= 1024;
    else if (*end == 'M')
        v *= 1024 * 1024;
    else if (*end == 'G')
        v *= 1024LL * 1024 * 1024;
    return v;
}

long long mb_llc_bytes(void)
{
    long long best = 0;
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        char p[PATH_MAX], buf[64];
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (!mb_read_first_line(p, buf, sizeof buf))
            break;
        int level = atoi(buf);
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!mb_read_first_line(p, buf, sizeof buf))
            continue;
        if (level >= best_level) {
            best_level = level;
            best = mb_parse_cache_size(buf);
        }
    }
    return best;
}

int mb_online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static long long meminfo(const char *key)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL)
        return 0;
    char line[256];
    long long v = 0;
    size_t klen = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
            v = strtoll(line + klen + 1, NULL, 10) * 1024;
            break;
        }
    }
    fclose(f);
    return v;
}

long long mb_ram_bytes(void)
{
    return meminfo("MemTotal");
}

long long mb_ram_available_bytes(void)
{
    return meminfo("MemAvailable");
}

const char *mb_hostname(void)
{
    static char name[256];
    if (name[0] == '\0') {
        if (gethostname(name, sizeof name - 1) != 0)
            snprintf(name, sizeof name, "unknown-host");
        char *dot = strchr(name, '.');
        if (dot)
            *dot = '\0';
        for (char *p = name; *p; p++)
            if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
                *p = '_';
    }
    return name;
}

int mb_mem_fits_in(double bytes_needed, long long available, const char *what, mb_err *err)
{
    /* need > 4/5 of available, in exact products: 80% itself fits. */
    if (available > 0 && bytes_needed * 5.0 > (double)available * 4.0)
        return mb_errf(err, MB_ESKIP,
                       "does not fit: %s need %.1f MiB, %.1f MiB available "
                       "(at most 80%% may be used)",
                       what, bytes_needed / 1048576.0, (double)available / 1048576.0);
    return MB_OK;
}

int mb_mem_fits(double bytes_needed, const char *what, mb_err *err)
{
    long long available = mb_ram_available_bytes();
    if (available <= 0)
        available = mb_ram_bytes(); /* no MemAvailable: at least not beyond RAM */
    return mb_mem_fits_in(bytes_needed, available, what, err);
}

int mb_numa_nodes(void)
{
    int nodes = 0;
    for (int i = 0; i < 1024; i++) {
        char p[PATH_MAX];
        struct stat st;
        snprintf(p, sizeof p, "/sys/devices/system/node/node%d", i);
        if (stat(p, &st) == 0)
            nodes++;
    }
    return nodes ? nodes : 1;
}

int mb_cpu_caches(mb_cache_info *out, int max)
{
    int n = 0;
    for (int i = 0; i < 16 && n < max; i++) {
        char p[PATH_MAX], level[16], size[32];
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (!mb_read_first_line(p, level, sizeof level))
            break;
        mb_cache_info *c = &out[n];
        c->type[0] = '\0';
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        mb_read_first_line(p, c->type, sizeof c->type);
        snprintf(p, sizeof p, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!mb_read_first_line(p, size, sizeof size))
            continue;
        c->level = atoi(level);
        c->size_bytes = mb_parse_cache_size(size);
        n++;
    }
    return n;
}

const char *mb_thp_mode(void)
{
    static char mode[16];
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    char line[128] = "";
    if (f != NULL) {
        if (fgets(line, sizeof line, f) == NULL)
            line[0] = '\0';
        fclose(f);
    }
    /* "always [madvise] never": the bracketed word is in force. */
    char *open = strchr(line, '['), *close = open ? strchr(open, ']') : NULL;
    if (open == NULL || close == NULL || close - open - 1 >= (long)sizeof mode)
        return "unknown";
    memcpy(mode, open + 1, (size_t)(close - open - 1));
    mode[close - open - 1] = '\0';
    return mode;
}

bool mb_boot_id(char *out, size_t len)
{
    return mb_read_first_line("/proc/sys/kernel/random/boot_id", out, len);
}
