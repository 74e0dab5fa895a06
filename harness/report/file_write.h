/* file_write.h: writing a file whole or not at all (report/ layer: both
 * flows write through it). */
#ifndef MB_FILE_WRITE_H
#define MB_FILE_WRITE_H

#include "mb.h" /* mb_err */

/* Writes text to path atomically: path.tmp.PID (removed on a signal), fsync,
 * rename over path, fsync of the directory. */
int mb_write_file_atomic(const char *path, const char *text, mb_err *err);
/* The same, but path must not exist yet: it is claimed with link() (or an
 * O_EXCL placeholder where the file system has no hard links), so two runs
 * that picked one name never overwrite each other; MB_EUSAGE with errno
 * EEXIST when the name is taken. */
int mb_write_file_new(const char *path, const char *text, mb_err *err);

#endif
