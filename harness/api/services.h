/* services.h: what the harness does for kernels, and nothing more.
 *
 * A kernel includes harness/api (this header, component.h, formulas.h, ...)
 * and harness/platform, never a harness internal (options.h, cleanup.h,
 * dist.h, ...): the kernels' include path has neither harness/ nor
 * harness/analysis on it (CMakeLists.txt, MB_KERNEL_INCLUDE_DIRS), and the
 * tests kernel_includes and kernel_printing check both rules.
 *
 * Implemented in the harness: harness/services.c (scratch directory,
 * notices), harness/cleanup.c (scratch files), harness/dist.c (ranks and
 * agreement). */
#ifndef MB_SERVICES_H
#define MB_SERVICES_H

#include <stdbool.h>

#include "mb.h"

#ifdef MB_HAVE_MPI
#include <mpi.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- scratch files ------------------------------------------------------- */

/* --disk-dir: the directory where a disk kernel creates its test files;
 * NULL when the user gave none (the kernel then makes a temporary directory
 * under the current directory). */
const char *mb_disk_dir(void);
/* --disk-file: a user's existing file that a disk kernel reads, read-only
 * (never written); NULL when the user gave none. */
const char *mb_disk_file(void);

/* Registers a file (or, is_dir, an empty directory) that the harness removes
 * at exit and on SIGINT/SIGTERM/SIGHUP/SIGPIPE; returns a slot >= 0, or -1
 * when the table is full. */
int mb_cleanup_add(const char *path, bool is_dir);
/* Forgets a slot (its owner removed the path itself, or keeps it). */
void mb_cleanup_forget(int slot);
/* True when no process PID exists (on this host, in this PID namespace):
 * files named with PID by an mlbench run are then stale. */
bool mb_owner_gone(long pid);

/* ---- telling the user ------------------------------------------------------ */

/* Something the user must hear that belongs to no case (a stale file of a
 * killed run removed): the harness prints it, on stderr as
 * "mlbench: <text>". Kernels never print themselves; what concerns a case
 * is a note of its report (mb_report_note) or its error (mb_err). */
void mb_notice(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- this process among the ranks -------------------------------------------
 * Without MPI (or when not started by an MPI launcher) every call behaves as
 * a single process: rank 0 in a world of 1, one node. */

int mb_dist_rank(void);
int mb_dist_size(void);
/* Local rank on this node (for picking a GPU), 0 when single. */
int mb_dist_local_rank(void);
/* Ranks on this node (MPI_Comm_split_type SHARED) and nodes in the job. */
int mb_dist_local_size(void);
int mb_dist_nodes(void);
/* Host name of a rank (exchanged at init); "" for a rank out of range. */
const char *mb_dist_host_of(int rank);
/* "built with Open MPI x.y" or "built without MPI: single-process only". */
const char *mb_dist_describe(void);
/* The first finding of ranks sharing CPUs, as a note for the collective
 * cases ("" when none). */
const char *mb_dist_core_sharing_note(void);

/* ---- agreeing among the ranks ------------------------------------------------ */

/* The default of --dist-timeout and $MLBENCH_DIST_TIMEOUT: one home for it
 * (the CLI's help and docs/collectives.md say it too). */
#define MB_DIST_TIMEOUT_DEFAULT 600.0
/* Seconds a rank waits for the others in dist's agreement and in the
 * collectives' polled waits (NCCL): the CLI's --dist-timeout, else
 * $MLBENCH_DIST_TIMEOUT, else MB_DIST_TIMEOUT_DEFAULT. */
double mb_dist_timeout(void);

/* Every rank passes its status and message; every rank gets the worst (max)
 * code, and err then holds the message of the lowest rank with that code, as
 * "rank R (host): message" on every rank. Lets a collective backend skip
 * or fail on all ranks together instead of leaving some waiting for the
 * others (one rank without a GPU, one rank that ran out of memory). On a
 * world of one: returns code unchanged. */
int mb_dist_agree_err(int code, mb_err *err);

/* Replaces *v by its maximum (or minimum) over ranks. */
int mb_dist_max_double(double *v, mb_err *err);
int mb_dist_min_double(double *v, mb_err *err);

#ifdef MB_HAVE_MPI
/* The communicator the collective backends use (a duplicate of the world,
 * errors returned, not fatal); MPI_COMM_NULL when MPI is not running. */
MPI_Comm mb_dist_comm(void);
/* Records an MPI error code as "what: <MPI_Error_string>"; MB_OK for
 * MPI_SUCCESS. Here, beside the communicator the harness owns, because
 * harness/dist.c and the collective backends (coll_mpi, coll_nccl) both use
 * it; not in mb.h, so that only files built with MPI see mpi.h. */
int mb_mpi_err(int rc, mb_err *err, const char *what);
#endif

#ifdef __cplusplus
}
#endif

#endif
