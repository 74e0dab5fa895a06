/* numa_bind.h: keep a benchmark thread and its host buffers on one NUMA node
 * (the node of the GPU's PCIe root), through hwloc.
 *
 * Why hwloc and not raw set_mempolicy/sched_setaffinity: it turns a node
 * number into the node's CPU set and node set without hand-parsing sysfs
 * cpulists, and it tells where pages actually landed (move_pages) in one
 * call. Without hwloc at build time every call returns MB_ESKIP with why. */
#ifndef MB_NUMA_BIND_H
#define MB_NUMA_BIND_H

#include <stddef.h>

#include "mb.h"

typedef struct mb_numa_binding mb_numa_binding;

/* Binds the calling thread's CPUs to NUMA node `node` and makes the node the
 * preferred place of the thread's new pages (hwloc BIND without STRICT =
 * MPOL_PREFERRED: a full node falls back instead of invoking the OOM killer).
 * Keeps what was there before in *out for mb_numa_unbind. MB_ESKIP with the
 * reason when node < 0, the node does not exist, or binding is refused. */
int mb_numa_bind(int node, mb_numa_binding **out, mb_err *why);
/* Puts back the thread's previous memory policy, keeping the CPU binding
 * (call after the buffers are allocated). */
void mb_numa_restore_memory_policy(mb_numa_binding *b);
/* Puts back CPUs and memory policy and frees b (NULL is fine). */
void mb_numa_unbind(mb_numa_binding *b);
/* NUMA node holding the pages of [addr, addr+len): the node number, -1 when
 * unknown, -2 when the pages are spread over several nodes. Looks at most at
 * the first 64 MiB (the query walks every page). */
int mb_numa_node_of(mb_numa_binding *b, const void *addr, size_t len);

#endif
