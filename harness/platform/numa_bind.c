/* numa_bind.c: NUMA binding through hwloc (see numa_bind.h). */
#include "numa_bind.h"

#include <errno.h>
#include <stdlib.h>

#ifdef MB_HAVE_HWLOC
#include <hwloc.h>

struct mb_numa_binding {
    hwloc_topology_t topo;
    hwloc_bitmap_t old_cpus;
    hwloc_bitmap_t old_nodes;
    hwloc_membind_policy_t old_policy;
    int have_old_mem;
    int node;
};

int mb_numa_bind(int node, mb_numa_binding **out, mb_err *why)
{
    *out = NULL;
    if (node < 0)
        return mb_errf(why, MB_ESKIP, "NUMA node unknown");
    mb_numa_binding *b = calloc(1, sizeof *b);
    if (b == NULL)
        return mb_errf(why, MB_ESYS, "out of memory");
    b->node = node;
    if (hwloc_topology_init(&b->topo) != 0 || hwloc_topology_load(b->topo) != 0) {
        int rc = mb_errno(why, MB_ESKIP, "hwloc could not read the topology");
        if (b->topo)
            hwloc_topology_destroy(b->topo);
        free(b);
        return rc;
    }
    hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(b->topo, (unsigned)node);
    if (obj == NULL) {
        hwloc_topology_destroy(b->topo);
        free(b);
        return mb_errf(why, MB_ESKIP, "NUMA node %d not in the hwloc topology", node);
    }
    b->old_cpus = hwloc_bitmap_alloc();
    b->old_nodes = hwloc_bitmap_alloc();
    hwloc_get_cpubind(b->topo, b->old_cpus, HWLOC_CPUBIND_THREAD);
    b->have_old_mem = hwloc_get_membind(b->topo, b->old_nodes, &b->old_policy,
                                        HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) == 0;
    if (hwloc_set_cpubind(b->topo, obj->cpuset, HWLOC_CPUBIND_THREAD) != 0) {
        int rc = mb_errno(why, MB_ESKIP, "binding the thread to the CPUs of NUMA node %d", node);
        mb_numa_unbind(b);
        return rc;
    }
    if (hwloc_set_membind(b->topo, obj->nodeset, HWLOC_MEMBIND_BIND,
                          HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET) != 0) {
        int rc = mb_errno(why, MB_ESKIP, "setting the memory policy to NUMA node %d", node);
        mb_numa_unbind(b);
        return rc;
    }
    *out = b;
    return MB_OK;
}

void mb_numa_restore_memory_policy(mb_numa_binding *b)
{
    if (b == NULL || b->topo == NULL)
        return;
    if (b->have_old_mem && !hwloc_bitmap_iszero(b->old_nodes))
        hwloc_set_membind(b->topo, b->old_nodes, b->old_policy, HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET);
    else
        hwloc_set_membind(b->topo, hwloc_topology_get_topology_nodeset(b->topo), HWLOC_MEMBIND_DEFAULT,
                          HWLOC_MEMBIND_THREAD | HWLOC_MEMBIND_BYNODESET);
}

void mb_numa_unbind(mb_numa_binding *b)
{
    if (b == NULL)
        return;
    if (b->topo) {
        mb_numa_restore_memory_policy(b);
        if (b->old_cpus && !hwloc_bitmap_iszero(b->old_cpus))
            hwloc_set_cpubind(b->topo, b->old_cpus, HWLOC_CPUBIND_THREAD);
        hwloc_topology_destroy(b->topo);
    }
    hwloc_bitmap_free(b->old_cpus);
    hwloc_bitmap_free(b->old_nodes);
    free(b);
}

int mb_numa_node_of(mb_numa_binding *b, const void *addr, size_t len)
{
    if (b == NULL || b->topo == NULL || addr == NULL || len == 0)
        return -1;
    if (len > (64u << 20))
        len = 64u << 20;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int node = -1;
    if (set && hwloc_get_area_memlocation(b->topo, addr, len, set, HWLOC_MEMBIND_BYNODESET) == 0) {
        int w = hwloc_bitmap_weight(set);
        node = w == 1 ? hwloc_bitmap_first(set) : w > 1 ? -2 : -1;
    }
    hwloc_bitmap_free(set);
    return node;
}

#else /* !MB_HAVE_HWLOC */

int mb_numa_bind(int node, mb_numa_binding **out, mb_err *why)
{
    (void)node;
    *out = NULL;
    return mb_errf(why, MB_ESKIP, "not built with hwloc (libhwloc-dev): no NUMA binding");
}
void mb_numa_restore_memory_policy(mb_numa_binding *b) { (void)b; }
void mb_numa_unbind(mb_numa_binding *b) { (void)b; }
int mb_numa_node_of(mb_numa_binding *b, const void *addr, size_t len)
{
    (void)b, (void)addr, (void)len;
    return -1;
}

#endif
