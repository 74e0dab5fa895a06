/* run_read.c: picks the reader of a run file by its content.
 *
 * Above both readers (stagefile.c, trace.c) and the mb_run container
 * (stages.c), so the container never calls back into a reader. */
#include "run_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    /* A JSON array at the top is the bare-array Chrome trace that
     * torch.autograd.profiler writes without Kineto; a stage file is always
     * an object (or CSV). */
    size_t first = 0;
    while (first < n && (buf[first] == ' ' || buf[first] == '\t' || buf[first] == '\n' || buf[first] == '\r'))
        first++;
    *is_trace = (n >= 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b) ||
                memmem(buf, n, "\"traceEvents\"", 13) != NULL || (first < n && buf[first] == '[');
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

/* The first 64 KiB name the format: results files start with
 * "schema": "mlbench-results", stage files with "format": "mlbench-stages"
 * (JSON) or "# mlbench-stages" (CSV). */
mb_file_kind mb_run_file_kind(const char *path)
{
    enum { PEEK = 64 * 1024 };
    int is_trace = 0;
    mb_err e = { 0 };
    if (looks_like_trace(path, &is_trace, &e) != MB_OK)
        return MB_FILE_UNKNOWN;
    if (is_trace)
        return MB_FILE_TRACE;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return MB_FILE_UNKNOWN;
    char *buf = malloc(PEEK);
    size_t n = buf ? fread(buf, 1, PEEK, f) : 0;
    fclose(f);
    mb_file_kind kind = MB_FILE_UNKNOWN;
    if (buf && memmem(buf, n, "\"mlbench-results\"", 17))
        kind = MB_FILE_RESULTS;
    else if (buf && memmem(buf, n, "mlbench-stages", 14))
        kind = MB_FILE_STAGES;
    free(buf);
    return kind;
}
