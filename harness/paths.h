/* paths.h: where mlbench finds its data (configs/) at run time. */
#ifndef MB_PATHS_H
#define MB_PATHS_H

/* The configs directory, first match of:
 *   $MLBENCH_CONFIG_DIR
 *   <dir of the executable>/../share/mlbench/configs   (installed)
 *   <dir of the executable>/configs                     (build tree copy)
 *   the source tree's configs/ (compiled in)            (build tree)
 * Never NULL: falls back to the compiled-in source path. */
const char *mb_config_dir(void);

/* Joins config dir + relative path into buf; returns buf. */
char *mb_config_path(char *buf, unsigned long len, const char *relative);

#endif
