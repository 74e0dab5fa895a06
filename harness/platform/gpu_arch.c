/* gpu_arch.c: reads configs/gpu-arch.ini with inih (see gpu_arch.h). */
#include "gpu_arch.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

/* The rate keys a section may hold, each also as geforce_<key>. */
static const char *const rate_keys[] = { "fp64", "fp32", "tf32", "fp16", "bf16",
                                         "fp8", "int8", "cores_fp16", "cores_fp64" };

typedef struct arch_parse {
    char want[16];  /* "sm_90" */
    const char *key;
    int found;
    double value, geforce_value; /* 0: not in the section */
    int problem;    /* first problem in the section: 1 bad value, 2 unknown key */
    char bad_key[64], bad_value[64];
    mb_gpu_arch_row *row;
} arch_parse;

static int is_rate_key(const char *name)
{
    for (size_t i = 0; i < sizeof rate_keys / sizeof *rate_keys; i++)
        if (strcmp(name, rate_keys[i]) == 0)
            return 1;
    return 0;
}

/* Every rate of the wanted section is checked, not only the one asked for:
 * a typo in the table fails whichever benchmark reads it first. */
static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    arch_parse *p = user;
    if (strcmp(section, p->want) != 0)
        return 1;
    p->found = 1;
    if (strcmp(name, "name") == 0) {
        snprintf(p->row->name, sizeof p->row->name, "%s", value);
        return 1;
    }
    if (strcmp(name, "source") == 0) {
        snprintf(p->row->source, sizeof p->row->source, "%s", value);
        return 1;
    }
    int geforce = strncmp(name, "geforce_", 8) == 0;
    const char *key = geforce ? name + 8 : name;
    int problem = 0;
    double v = 0;
    if (!is_rate_key(key)) {
        problem = 2;
    } else {
        char *end;
        errno = 0;
        v = strtod(value, &end);
        while (*end == ' ' || *end == '\t')
            end++;
        if (errno || end == value || *end != '\0' || !(v > 0))
            problem = 1;
    }
    if (problem) {
        /* inih goes on after an error and reports the first line: keep the
         * first problem's details to match it. */
        if (p->problem == 0) {
            p->problem = problem;
            snprintf(p->bad_key, sizeof p->bad_key, "%s", name);
            snprintf(p->bad_value, sizeof p->bad_value, "%s", value);
        }
        return 0;
    }
    if (strcmp(key, p->key) == 0)
        *(geforce ? &p->geforce_value : &p->value) = v;
    return 1;
}

int mb_gpu_arch_rate(const char *path, int major, int minor, const char *device_name,
                     const char *key, double *per_clk_sm, mb_gpu_arch_row *row, mb_err *err)
{
    mb_gpu_arch_row scratch;
    if (row == NULL)
        row = &scratch;
    memset(row, 0, sizeof *row);
    char buf[4096];
    if (path == NULL)
        path = mb_config_path(buf, sizeof buf, "gpu-arch.ini");
    arch_parse p = { .key = key, .row = row };
    snprintf(p.want, sizeof p.want, "sm_%d%d", major, minor);
    int line = ini_parse(path, on_entry, &p);
    if (line == -1)
        return mb_errno(err, MB_ESKIP, "%s: cannot read the architecture table", path);
    if (line == -2)
        return mb_errf(err, MB_ESYS, "%s: out of memory", path);
    if (line > 0 && p.problem == 2)
        return mb_errf(err, MB_EUSAGE,
                       "%s:%d: unknown key '%s' in [%s] (expected name, source, fp64, fp32, tf32, "
                       "fp16, bf16, fp8, int8, cores_fp16, cores_fp64, or geforce_<one of those>)",
                       path, line, p.bad_key, p.want);
    if (line > 0 && p.problem == 1)
        return mb_errf(err, MB_EUSAGE,
                       "%s:%d: [%s] %s = '%s' is not a positive number (FLOPs per clock per SM)",
                       path, line, p.want, p.bad_key, p.bad_value);
    if (line > 0)
        return mb_errf(err, MB_EUSAGE, "%s:%d: malformed line (expected [section] or key = value)",
                       path, line);
    if (!p.found)
        return mb_errf(err, MB_ESKIP,
                       "no [%s] in %s: no computed peak for compute capability %d.%d", p.want,
                       path, major, minor);
    row->geforce = device_name && strstr(device_name, "GeForce") != NULL && p.geforce_value > 0;
    double v = row->geforce ? p.geforce_value : p.value;
    if (!(v > 0))
        return mb_errf(err, MB_ESKIP,
                       "[%s] of %s has no %s (no such math on this architecture, or no figure "
                       "checked against a datasheet yet)",
                       p.want, path, key);
    snprintf(row->section, sizeof row->section, "%s", p.want);
    snprintf(row->desc, sizeof row->desc, "%s %s%s %s %.0f FLOP/clk/SM", p.want, row->name,
             row->geforce ? " GeForce" : "", key, v);
    *per_clk_sm = v;
    return MB_OK;
}
