/* paths.h: where mlbench finds its data (configs/) at run time, and reading small files. */
#ifndef MB_PATHS_H
#define MB_PATHS_H

#include <stdbool.h>
#include <stddef.h>

/* The configs directory, first match of:
 *   $MLBENCH_CONFIG_DIR
 *   <dir of the executable>/../share/mlbench/configs   (installed)
 *   <dir of the executable>/configs                     (build tree copy)
 *   the source tree's configs/ (compiled in)            (build tree)
 * Never NULL: falls back to the compiled-in source path. */
const char *mb_config_dir(void);

/* Joins config dir + relative path into buf; returns buf. */
char *mb_config_path(char *buf, unsigned long len, const char *relative);

/* Reads the first line of a small file (sysfs, procfs) into buf, trailing
 * whitespace removed. False when it cannot be opened or is empty. */
bool mb_read_first_line(const char *path, char *buf, size_t len);

#endif
