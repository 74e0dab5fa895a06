/* run_read.h: one entry point for a run file of either kind. */
#ifndef MB_RUN_READ_H
#define MB_RUN_READ_H

#include "stages.h"

/* Picks the reader by content (gzip or a "traceEvents" key near the start is
 * a PyTorch trace; anything else a stage file) and reads `path` into *out. */
int mb_run_read(const char *path, mb_run *out, mb_err *err);

#endif
