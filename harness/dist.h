/* dist.h: running under MPI (mpirun, srun). Implemented in harness/dist.c;
 * without MPI (or when not launched by an MPI launcher) every call behaves as
 * a single process of rank 0 in a world of 1.
 *
 * Two uses:
 *  - collective components (ops->collective): every rank runs the same case
 *    together (MPI all-reduce, NCCL with the unique id broadcast over MPI);
 *  - fleet mode: any other case runs on every rank at once, each on its own
 *    machine/GPU, and rank 0 gathers every rank's record, prints the spread
 *    and flags ranks more than a margin below the median.
 * Rank 0 writes the one results file. */
#ifndef MB_DIST_H
#define MB_DIST_H

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "mb.h"
#include "services.h" /* rank, size, local rank, host, describe: what kernels use */

/* Initialises MPI when the process was started by an MPI launcher (Open MPI's
 * OMPI_COMM_WORLD_SIZE, PMI/PMIx, Slurm's SLURM_PROCID/SLURM_NTASKS);
 * otherwise single-process. Returns MB_OK or an error. */
int mb_dist_init(int *argc, char ***argv, mb_err *err);
void mb_dist_finalize(void);
/* Aborts every rank (after a fatal error on one) with the message printed. */
void mb_dist_abort(const char *why);

bool mb_dist_active(void); /* size > 1 */

/* Barrier with a timeout in seconds (<= 0: none): MB_EFAIL with a message
 * naming the ranks that did not arrive, instead of hanging forever. */
int mb_dist_barrier(double timeout_s, mb_err *err);

/* The collective watchdog. A blocking collective (MPI_Allreduce inside a
 * backend) never returns when a peer dies and the launcher does not end the
 * job (mpirun --enable-recovery, srun --no-kill): arm() before a collective
 * case, kick() after every collective step that completed, disarm() after
 * the case. When armed and not kicked for mb_dist_timeout() seconds, a
 * thread prints which ranks are gone (same node: their pid no longer exists;
 * other nodes: cannot be told from here), removes our temporary files and
 * ends this process with status 1. Results already saved stay as they are.
 * No-ops when not under MPI. */
void mb_dist_watchdog_arm(void);
void mb_dist_watchdog_kick(void);
void mb_dist_watchdog_disarm(void);

/* Every rank passes its own status code; all get the worst (max) one. */
int mb_dist_agree(int code);

/* Gathers one JSON value from every rank to rank 0. On rank 0 returns a new
 * array indexed by rank (caller frees); on other ranks returns NULL.
 * A rank that does not answer within timeout_s gives a null entry. */
cJSON *mb_dist_gather_json(const cJSON *mine, double timeout_s, mb_err *err);

/* Fleet summary of one case from the gathered per-rank case records (the
 * array from mb_dist_gather_json): adds to `root_case` "ranks": [{rank, host,
 * status, rate}] and "fleet": {median, min, max, margin, flagged: [{rank,
 * host, rate, below_median}]}, flagging ranks whose rate.median is more than
 * `margin` (0.10 = 10%) below the median over ranks. */
void mb_dist_fleet_merge(cJSON *root_case, const cJSON *rank_cases, double margin);

#endif
