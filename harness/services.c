/* services.c: the parts of harness/api/services.h that have no other home
 * (the scratch directory from the run options, notices); the scratch files
 * are cleanup.c's, the ranks dist.c's. */
#include "services.h"

#include <stdarg.h>
#include <stdio.h>

#include "options.h"

/* An option left empty ("--disk-dir ''") counts as not given, as it always did. */
static const char *given(const char *value)
{
    return value && value[0] ? value : NULL;
}

const char *mb_disk_dir(void)
{
    return given(mb_options()->disk_dir);
}

const char *mb_disk_file(void)
{
    return given(mb_options()->disk_file);
}

void mb_notice(const char *fmt, ...)
{
    /* One formatted line, written at once, so the notices of ranks sharing
     * a terminal do not interleave mid-line; room for a full path (4096). */
    char line[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "mlbench: %s\n", line);
}
