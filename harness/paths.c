#include "paths.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MB_SOURCE_CONFIG_DIR
#define MB_SOURCE_CONFIG_DIR "configs"
#endif

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

const char *mb_config_dir(void)
{
    static char dir[PATH_MAX];
    if (dir[0])
        return dir;
    const char *env = getenv("MLBENCH_CONFIG_DIR");
    if (env && *env && is_dir(env)) {
        snprintf(dir, sizeof dir, "%s", env);
        return dir;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        const char *candidates[] = { "/../share/mlbench/configs", "/configs" };
        for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
            char p[PATH_MAX];
            snprintf(p, sizeof p, "%s%s", exe, candidates[i]);
            if (is_dir(p) && realpath(p, dir))
                return dir;
        }
    }
    snprintf(dir, sizeof dir, "%s", MB_SOURCE_CONFIG_DIR);
    return dir;
}

char *mb_config_path(char *buf, unsigned long len, const char *relative)
{
    snprintf(buf, len, "%s/%s", mb_config_dir(), relative);
    return buf;
}

bool mb_read_first_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (ok) {
        size_t n = strlen(buf);
        while (n && isspace((unsigned char)buf[n - 1]))
            buf[--n] = '\0';
    }
    return ok;
}
