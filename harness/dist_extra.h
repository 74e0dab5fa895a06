/* dist_extra.h: more of harness/dist.c, for the collective backends
 * (kernels/coll_*.c) and the runner's results context. dist.h is the runner's
 * contract; this header is what the collectives need beyond it. */
#ifndef MB_DIST_EXTRA_H
#define MB_DIST_EXTRA_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "mb.h"

/* Ranks on this node (MPI_Comm_split_type SHARED) and nodes in the job. */
int mb_dist_local_size(void);
int mb_dist_nodes(void);
/* Host name of a rank (exchanged at init); "" for a rank out of range. */
const char *mb_dist_host_of(int rank);

/* Seconds a rank waits for the others in dist's agreement and in the
 * collectives' polled waits (NCCL): mb_dist_set_timeout's value (the CLI's
 * --dist-timeout), else $MLBENCH_DIST_TIMEOUT, else 300. */
double mb_dist_timeout(void);
void mb_dist_set_timeout(double seconds); /* <= 0: back to the default */

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

/* Adds "dist": {rank, size, local_rank, local_size, nodes, host, mpi, nics:
 * [{name, speed_mbps}], nic_total_gbps} to a rank's context before the
 * runner gathers the contexts. */
void mb_dist_context_add(cJSON *context);

/* Collective (every rank calls it, rank 0 with the results document, the
 * others with NULL): adds the "dist" object to rank 0's context and, under
 * MPI with 2+ ranks, "fleet_ranks": [{rank, host, context}] with every rank's
 * context (mb_context_collect(disk_dir) + "dist") to the document. A rank
 * that does not answer within timeout_s stops the job with a message
 * (nothing has been measured yet). */
void mb_dist_add_contexts(cJSON *doc, const char *disk_dir, double timeout_s);

/* Prints the fleet summary of a results document (cases that have a "fleet"
 * object, see mb_dist_fleet_merge): per case the median, min and max rate
 * over ranks, then the flagged ranks. Prints nothing without fleet data. */
void mb_dist_fleet_print(FILE *out, const cJSON *doc);

/* Ranks of one machine (same kernel boot id: containers and namespaces
 * count as one machine, whatever their host names) that share CPUs, from
 * fleet_ranks' contexts (dist.cpu_affinity, dist.machine_id): per machine
 * where there are more ranks than the CPUs they may use together, or two
 * ranks bound to overlapping CPUs, {machine_id, ranks: [{rank, host, cpus}],
 * reason}. An empty array when none. Rank 0 stores it as
 * context.dist.core_sharing and warns on stderr. */
cJSON *mb_dist_core_sharing(const cJSON *fleet_ranks);
/* The first such finding as a note for the collective cases ("" when none). */
const char *mb_dist_core_sharing_note(void);

#ifdef MB_HAVE_MPI
#include <mpi.h>
/* The communicator the collective backends use (a duplicate of the world,
 * errors returned, not fatal); MPI_COMM_NULL when MPI is not running. */
MPI_Comm mb_dist_comm(void);
/* Records an MPI error code as "what: <MPI_Error_string>"; MB_OK for MPI_SUCCESS. */
int mb_mpi_err(int rc, mb_err *err, const char *what);
#endif

#endif
