/* hostmem_util.c: sizing, fit check and buffers for the host-memory backends. */
#include "hostmem_util.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "host.h"
#include "cpu_info.h"

long long mb_hostmem_array_bytes(long long requested, long long *llc)
{
    long long total_llc = mb_cpu_llc_total_bytes();
    if (llc != NULL)
        *llc = total_llc;
    if (requested > 0)
        return requested;
    if (total_llc <= 0)
        return MB_HOSTMEM_FALLBACK_BYTES;
    long long bytes = 4 * total_llc;
    return bytes < MB_HOSTMEM_MIN_AUTO_BYTES ? MB_HOSTMEM_MIN_AUTO_BYTES : bytes;
}

int mb_hostmem_fits(int arrays, long long bytes, mb_err *err)
{
    char what[64];
    snprintf(what, sizeof what, "%d arrays x %.1f MiB", arrays, (double)bytes / 1048576.0);
    return mb_mem_fits((double)arrays * (double)bytes, what, err);
}

void *mb_hostmem_map(size_t bytes, mb_err *err)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        mb_errno(err, MB_ESYS, "mmap of %zu bytes", bytes);
        return NULL;
    }
    /* Huge pages take TLB misses out of a bandwidth ceiling; a kernel without
     * THP refuses the advice, which is harmless. */
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    return p;
}

void mb_hostmem_unmap(void *p, size_t bytes)
{
    if (p != NULL)
        munmap(p, bytes);
}
