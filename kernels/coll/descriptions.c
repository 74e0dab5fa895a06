/* descriptions.c: the description of the MPI collective backends
 * (component.h, "description and code"): names, units, flags and parameters,
 * in the core library, so a build without MPI (MB_NOT_BUILT_IN) still lists
 * them. One file per kernel folder; the order is `mlbench list`'s. */

#include "coll_common.h"
#include "component.h"

extern const mb_backend_desc mb_coll_backends[];

static const mb_param_spec coll_mpi_params[] = {
    { "size", MB_P_SIZE, "1m", NULL, 1, 1099511627776.0,
      "bytes: the buffer (all-reduce, broadcast), the gathered output (all-gather), the input (reduce-scatter)" },
    { "dtype", MB_P_ENUM, "float", MB_COLL_DTYPE_CHOICES, 0, -1,
      "element type (MPI: float, double; half and bf16 have no standard MPI type)" },
    { "inplace", MB_P_BOOL, "0", NULL, 0, -1, "in place (MPI_IN_PLACE) instead of separate buffers" },
    { "batch", MB_P_INT, "1", NULL, 1, 100000, "collectives back to back per timed iteration" },
    { "warmup", MB_P_INT, "5", NULL, 0, 100000, "untimed collectives in setup, same count on every rank" },
    MB_PARAM_END,
};

/* The four collectives differ only in name and summary. */
#define COLL_MPI(comp, summary_text) \
    { MB_DESCRIBE(comp, "mpi", "byte", "GB/s", 1e9, coll_mpi_params, summary_text), .collective = true }

const mb_backend_desc mb_coll_backends[] = {
    COLL_MPI("allreduce", "MPI_Allreduce (sum) on host buffers: bus bandwidth, GB/s"),
    COLL_MPI("allgather", "MPI_Allgather on host buffers: bus bandwidth, GB/s"),
    COLL_MPI("reducescatter", "MPI_Reduce_scatter_block (sum) on host buffers: bus bandwidth, GB/s"),
    COLL_MPI("broadcast", "MPI_Bcast from rank 0 on host buffers: bus bandwidth, GB/s"),
    MB_BACKEND_DESC_END,
};
