/* stages.c: the mb_run container (the reader dispatch is in run_read.c, so
 * the readers can depend on this file without a cycle).
 *
 * A run is built by one reader (stage file or trace) and then only read by
 * the gap model. mb_run_add_stage deep-copies so readers can build a stage on
 * the stack and free their own strings. */
#include "stages.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mb_run_init(mb_run *run)
{
    memset(run, 0, sizeof *run);
    run->gpu_utilization = -1;
    run->cpu_utilization = -1;
    run->batches_per_second = -1;
}

static void stage_free(mb_stage *s)
{
    free(s->name);
    free(s->component);
    free(s->dtype);
    free(s->direction);
    free(s->memory);
    free(s->pattern);
    free(s->work_unit);
    free(s->source);
    free(s->device);
    free(s->op);
    free(s->role);
}

void mb_run_free(mb_run *run)
{
    if (run == NULL)
        return;
    for (int i = 0; i < run->n_stages; i++)
        stage_free(&run->stages[i]);
    free(run->stages);
    for (int i = 0; i < run->n_warnings; i++)
        free(run->warnings[i]);
    free(run->warnings);
    free(run->path);
    free(run->kind);
    cJSON_Delete(run->evidence);
    mb_run_init(run);
}

/* strdup that keeps NULL as NULL; *ok turns false on allocation failure. */
static char *dup_or_null(const char *s, int *ok)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    if (d == NULL)
        *ok = 0;
    return d;
}

int mb_run_add_stage(mb_run *run, const mb_stage *s, mb_err *err)
{
    mb_stage *grown = realloc(run->stages, sizeof *grown * (size_t)(run->n_stages + 1));
    if (grown == NULL)
        return mb_errf(err, MB_ESYS, "out of memory adding stage");
    run->stages = grown;
    int ok = 1;
    mb_stage c = *s;
    c.name = dup_or_null(s->name, &ok);
    c.component = dup_or_null(s->component, &ok);
    c.dtype = dup_or_null(s->dtype, &ok);
    c.direction = dup_or_null(s->direction, &ok);
    c.memory = dup_or_null(s->memory, &ok);
    c.pattern = dup_or_null(s->pattern, &ok);
    c.work_unit = dup_or_null(s->work_unit, &ok);
    c.source = dup_or_null(s->source, &ok);
    c.device = dup_or_null(s->device, &ok);
    c.op = dup_or_null(s->op, &ok);
    c.role = dup_or_null(s->role, &ok);
    if (!ok) {
        stage_free(&c);
        return mb_errf(err, MB_ESYS, "out of memory adding stage");
    }
    run->stages[run->n_stages++] = c;
    return MB_OK;
}

void mb_run_warn(mb_run *run, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **grown = realloc(run->warnings, sizeof *grown * (size_t)(run->n_warnings + 1));
    if (grown == NULL)
        return; /* a lost warning is better than a lost run */
    run->warnings = grown;
    char *copy = strdup(buf);
    if (copy)
        run->warnings[run->n_warnings++] = copy;
}
