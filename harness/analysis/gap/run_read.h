/* run_read.h: one entry point for a run file of either kind. */
#ifndef MB_RUN_READ_H
#define MB_RUN_READ_H

#include "stages.h"

/* Picks the reader by content (gzip or a "traceEvents" key near the start is
 * a PyTorch trace; anything else a stage file) and reads `path` into *out. */
int mb_run_read(const char *path, mb_run *out, mb_err *err);

/* What a file is, by content, for messages that name the right command:
 * a PyTorch trace (`gap --run`), an mlbench results file (`report`,
 * `gap --ceilings`), a stage-metrics file (`gap --run`), else unknown. */
typedef enum { MB_FILE_UNKNOWN, MB_FILE_TRACE, MB_FILE_RESULTS, MB_FILE_STAGES } mb_file_kind;
mb_file_kind mb_run_file_kind(const char *path);

#endif
