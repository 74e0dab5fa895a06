/* hostmem_util.h: what the host-memory backends (STREAM, memcpy) share:
 * array sizing from the caches, the does-it-fit check, and big buffers. */
#ifndef MB_HOSTMEM_UTIL_H
#define MB_HOSTMEM_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#include "mb.h"

/* Below this an array is never auto-sized, whatever the caches say. */
#define MB_HOSTMEM_MIN_AUTO_BYTES (64LL << 20)
/* Auto size when the LLC size is unknown. */
#define MB_HOSTMEM_FALLBACK_BYTES (256LL << 20)

/* Bytes per array for `requested` (0 = auto: 4 x the total last-level cache,
 * at least MB_HOSTMEM_MIN_AUTO_BYTES, STREAM's rule). *llc gets the LLC total
 * it used (0 when unknown). */
long long mb_hostmem_array_bytes(long long requested, long long *llc);

/* MB_ESKIP with the numbers when `arrays` arrays of `bytes` do not fit in the
 * memory available now (or, when that is unknown, in RAM) with a 20%
 * margin. MB_OK when they do or when neither figure is known. */
int mb_hostmem_fits(int arrays, long long bytes, mb_err *err);

/* Anonymous private mapping, asked for transparent huge pages (pages are not
 * touched here: first touch decides their NUMA node). NULL + err on failure. */
void *mb_hostmem_map(size_t bytes, mb_err *err);
void mb_hostmem_unmap(void *p, size_t bytes);

#endif
