/* options.h: run-wide settings from the command line that some components
 * need (set once by main before the suite runs, read-only afterwards). */
#ifndef MB_OPTIONS_H
#define MB_OPTIONS_H

#include <stdbool.h>

typedef struct mb_run_options {
    const char *disk_dir;  /* --disk-dir: where the disk test file is created; NULL = default
                              (a fresh temporary directory under the current directory) */
    const char *disk_file; /* --disk-file: a user's existing file, benchmarked read-only; NULL = none */
    bool quiet;            /* -q */
} mb_run_options;

const mb_run_options *mb_options(void);
void mb_options_set(const mb_run_options *opts);

#endif
