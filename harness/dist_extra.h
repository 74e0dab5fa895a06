/* dist_extra.h: more of harness/dist.c, for the runner's results context.
 * dist.h is the runner's contract; what the collective backends need
 * (agreement, min/max, timeout, the communicator) is in harness/api/services.h. */
#ifndef MB_DIST_EXTRA_H
#define MB_DIST_EXTRA_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "mb.h"
#include "services.h" /* what the collectives need: agreement, min/max, timeout, comm */

/* Sets what mb_dist_timeout (services.h) returns: the CLI's --dist-timeout. */
void mb_dist_set_timeout(double seconds); /* <= 0: back to the default */

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
/* The first such finding as a note for the collective cases:
 * mb_dist_core_sharing_note (services.h). */

#endif
