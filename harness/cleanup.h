/* cleanup.h: files mlbench created and must remove, also on Ctrl-C.
 *
 * A fixed table of paths, unlinked (and rmdir'ed for directories) by
 * mb_cleanup_run() at exit, and by the SIGINT/SIGTERM/SIGHUP/SIGPIPE handler, which
 * then re-raises the signal with its default action so the exit status tells
 * the shell what happened. Only async-signal-safe calls in the handler. */
#ifndef MB_CLEANUP_H
#define MB_CLEANUP_H

#include <stdbool.h>

#include "services.h" /* mb_cleanup_add, mb_cleanup_forget, mb_owner_gone: what kernels use */

/* Removes every registered path, files first, then directories. */
void mb_cleanup_run(void);
/* Installs the signal handlers and an atexit hook (idempotent). */
void mb_cleanup_install(void);

#endif
