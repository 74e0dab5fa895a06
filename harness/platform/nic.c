/* nic.c: network interfaces from a /sys/class/net-like directory. */
#include "nic.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "paths.h"

#define SYSFS_NET "/sys/class/net"

static int name_cmp(const void *a, const void *b)
{
    return strcmp(((const mb_nic *)a)->name, ((const mb_nic *)b)->name);
}

/* Fills `nic` from its sysfs directory; false when it is not up. */
static bool read_nic(const char *sysfs_net, const char *name, mb_nic *nic)
{
    char path[PATH_MAX], text[64];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s/operstate", sysfs_net, name);
    if (!mb_read_first_line(path, text, sizeof text))
        return false;
    bool up = strcmp(text, "up") == 0;
    if (!up && strcmp(text, "unknown") != 0)
        return false;
    snprintf(nic->name, sizeof nic->name, "%s", name);
    nic->state_up = up;
    snprintf(path, sizeof path, "%s/%s/speed", sysfs_net, name);
    nic->speed_mbps = mb_read_first_line(path, text, sizeof text) ? strtol(text, NULL, 10) : -1;
    snprintf(path, sizeof path, "%s/%s/device", sysfs_net, name);
    nic->is_virtual = stat(path, &st) != 0;
    return true;
}

int mb_nics_at(const char *sysfs_net, mb_nic *out, int max)
{
    DIR *d = opendir(sysfs_net);
    if (d == NULL)
        return 0;
    int n = 0;
    struct dirent *e;
    while (n < max && (e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strcmp(e->d_name, "lo") != 0 &&
            read_nic(sysfs_net, e->d_name, &out[n]))
            n++;
    closedir(d);
    qsort(out, (size_t)n, sizeof *out, name_cmp);
    return n;
}

/* The interfaces of a directory in a new array (NULL when out of memory). */
static mb_nic *list_nics(const char *sysfs_net, int *n)
{
    mb_nic *nics = calloc(MB_NICS_MAX, sizeof *nics);
    *n = nics != NULL ? mb_nics_at(sysfs_net, nics, MB_NICS_MAX) : 0;
    return nics;
}

cJSON *mb_nics_json_at(const char *sysfs_net)
{
    cJSON *a = cJSON_CreateArray();
    int n;
    mb_nic *nics = list_nics(sysfs_net, &n);
    for (int i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", nics[i].name);
        if (nics[i].speed_mbps > 0)
            cJSON_AddNumberToObject(o, "speed_mbps", (double)nics[i].speed_mbps);
        else
            cJSON_AddNullToObject(o, "speed_mbps");
        cJSON_AddBoolToObject(o, "virtual", nics[i].is_virtual);
        cJSON_AddItemToArray(a, o);
    }
    free(nics);
    return a;
}

cJSON *mb_nics_json(void)
{
    return mb_nics_json_at(SYSFS_NET);
}

/* Appends "NAME SPEED Mb/s" (or "NAME (no speed)") to a ", " list. */
static void append_nic(char *out, size_t len, const mb_nic *nic)
{
    size_t used = strlen(out);
    if (used + 1 >= len)
        return;
    if (nic->speed_mbps > 0)
        snprintf(out + used, len - used, "%s%s %ld Mb/s", used ? ", " : "", nic->name,
                 nic->speed_mbps);
    else
        snprintf(out + used, len - used, "%s%s (no speed)", used ? ", " : "", nic->name);
}

double mb_nic_gbps_at(const char *sysfs_net, char *names, size_t len)
{
    if (names && len)
        names[0] = '\0';
    int n;
    mb_nic *nics = list_nics(sysfs_net, &n);
    double gbps = 0;
    for (int i = 0; i < n; i++) {
        if (nics[i].is_virtual || !nics[i].state_up || nics[i].speed_mbps <= 0)
            continue;
        gbps += (double)nics[i].speed_mbps / 8000.0; /* Mb/s -> GB/s */
        if (names && len)
            append_nic(names, len, &nics[i]);
    }
    free(nics);
    return gbps;
}

double mb_nic_gbps(char *names, size_t len)
{
    return mb_nic_gbps_at(SYSFS_NET, names, len);
}

size_t mb_nics_virtual_text_at(const char *sysfs_net, char *out, size_t len)
{
    if (len)
        out[0] = '\0';
    int n;
    mb_nic *nics = list_nics(sysfs_net, &n);
    size_t count = 0;
    for (int i = 0; i < n; i++)
        if (nics[i].is_virtual) {
            if (len)
                append_nic(out, len, &nics[i]);
            count++;
        }
    free(nics);
    return count;
}

size_t mb_nics_virtual_text(char *out, size_t len)
{
    return mb_nics_virtual_text_at(SYSFS_NET, out, len);
}
