/* stages.c: the mb_run container and the reader dispatch.
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

/* Looks at the first bytes: gzip (magic 1f 8b) is always a trace; a JSON
 * object naming "traceEvents" near its start is a trace; anything else goes
 * to the stage-file reader, which tells JSON from CSV itself. Kineto writes
 * "schemaVersion", "deviceProperties" and then "traceEvents" first, but
 * metadata can be long, so 1 MiB is read before giving up on the key. */
enum { PEEK_BYTES = 1 << 20 };

static int looks_like_trace(const char *path, int *is_trace, mb_err *err)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return mb_errno(err, MB_EUSAGE, "%s: cannot open", path);
    char *buf = malloc(PEEK_BYTES + 1);
    if (buf == NULL) {
        fclose(f);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    size_t n = fread(buf, 1, PEEK_BYTES, f);
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        free(buf);
        return mb_errno(err, MB_EUSAGE, "%s: cannot read", path);
    }
    buf[n] = '\0';
    *is_trace = (n >= 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b) ||
                memmem(buf, n, "\"traceEvents\"", 13) != NULL;
    free(buf);
    return MB_OK;
}

int mb_run_read(const char *path, mb_run *out, mb_err *err)
{
    int is_trace = 0;
    int rc = looks_like_trace(path, &is_trace, err);
    if (rc != MB_OK)
        return rc;
    return is_trace ? mb_trace_read(path, out, err) : mb_stagefile_read(path, out, err);
}
