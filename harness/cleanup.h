/* cleanup.h: files mlbench created and must remove, also on Ctrl-C.
 *
 * A fixed table of paths, unlinked (and rmdir'ed for directories) by
 * mb_cleanup_run() at exit, and by the SIGINT/SIGTERM/SIGHUP/SIGPIPE handler, which
 * then re-raises the signal with its default action so the exit status tells
 * the shell what happened. Only async-signal-safe calls in the handler. */
#ifndef MB_CLEANUP_H
#define MB_CLEANUP_H

#include <stdbool.h>

/* Registers a path; returns a slot >= 0, or -1 when the table is full. */
int mb_cleanup_add(const char *path, bool is_dir);
/* Forgets a slot (its owner removed the path itself). */
void mb_cleanup_forget(int slot);
/* Removes every registered path, files first, then directories. */
void mb_cleanup_run(void);
/* Installs the signal handlers and an atexit hook (idempotent). */
void mb_cleanup_install(void);
/* True when no process PID exists (on this host, in this PID namespace):
 * files named with PID by an mlbench run are then stale. */
bool mb_owner_gone(long pid);

#endif
