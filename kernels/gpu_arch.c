/* gpu_arch.c: reads configs/gpu-cuda-cores.ini with inih (see gpu_arch.h). */
#include "gpu_arch.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "paths.h"

typedef struct arch_parse {
    char want[32];  /* "sm_90" */
    int found;
    int bad_line_is_value; /* 1: value error, 2: unknown key */
    char bad_key[64];
    mb_gpu_arch *out;
} arch_parse;

static int on_entry(void *user, const char *section, const char *name, const char *value)
{
    arch_parse *p = user;
    if (strcmp(section, p->want) != 0)
        return 1;
    p->found = 1;
    mb_gpu_arch *a = p->out;
    if (strcmp(name, "name") == 0) {
        snprintf(a->name, sizeof a->name, "%s", value);
        return 1;
    }
    if (strcmp(name, "source") == 0) {
        snprintf(a->source, sizeof a->source, "%s", value);
        return 1;
    }
    double *slot = strcmp(name, "fp16") == 0   ? &a->fp16
                   : strcmp(name, "fp32") == 0 ? &a->fp32
                   : strcmp(name, "fp64") == 0 ? &a->fp64
                                               : NULL;
    int problem = 0;
    double v = 0;
    if (slot == NULL) {
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
        if (p->bad_line_is_value == 0) {
            p->bad_line_is_value = problem;
            snprintf(p->bad_key, sizeof p->bad_key, "%s", name);
        }
        return 0;
    }
    *slot = v;
    return 1;
}

int mb_gpu_arch_load(const char *path, int major, int minor, mb_gpu_arch *out, mb_err *err)
{
    memset(out, 0, sizeof *out);
    char buf[1024];
    if (path == NULL)
        path = mb_config_path(buf, sizeof buf, "gpu-cuda-cores.ini");
    arch_parse p = { .out = out };
    snprintf(p.want, sizeof p.want, "sm_%d%d", major, minor);
    int line = ini_parse(path, on_entry, &p);
    if (line == -1)
        return mb_errno(err, MB_ESKIP, "%s: cannot open", path);
    if (line == -2)
        return mb_errf(err, MB_ESYS, "%s: out of memory", path);
    if (line > 0 && p.bad_line_is_value == 2)
        return mb_errf(err, MB_EUSAGE, "%s:%d: unknown key '%s' in [%s] (expected name, fp16, fp32, fp64, source)",
                       path, line, p.bad_key, p.want);
    if (line > 0 && p.bad_line_is_value == 1)
        return mb_errf(err, MB_EUSAGE, "%s:%d: %s in [%s] must be a positive number (FLOPs per clock per SM)",
                       path, line, p.bad_key, p.want);
    if (line > 0)
        return mb_errf(err, MB_EUSAGE, "%s:%d: malformed line", path, line);
    if (!p.found)
        return mb_errf(err, MB_ESKIP, "%s has no [%s] (compute capability %d.%d): add its rates", path,
                       p.want, major, minor);
    return MB_OK;
}

double mb_gpu_arch_flops(const mb_gpu_arch *a, const char *dtype)
{
    if (strcmp(dtype, "fp16") == 0)
        return a->fp16;
    if (strcmp(dtype, "fp32") == 0)
        return a->fp32;
    if (strcmp(dtype, "fp64") == 0)
        return a->fp64;
    return 0;
}
