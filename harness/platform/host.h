/* host.h: this host's basic facts (platform layer): caches, CPUs, memory,
 * name. Best effort: an unknown fact is 0 (or ""), never an error. */
#ifndef MB_HOST_H
#define MB_HOST_H

#include <stdbool.h>
#include <stddef.h>

#include "mb.h" /* mb_err */

/* "32768K", "8M", "512" (sysfs cache sizes, cpuinfo's "cache size") in bytes. */
long long mb_parse_cache_size(const char *s);
/* Size in bytes of the last-level cache (0 when unknown). */
long long mb_llc_bytes(void);
/* Online logical CPUs. */
int mb_online_cpus(void);
/* Physical memory in bytes (0 when unknown) and what is available now. */
long long mb_ram_bytes(void);
long long mb_ram_available_bytes(void);

/* The rule every component applies before it allocates host memory:
 * `bytes_needed` fits when it is at most 80% of the memory available now
 * (MemAvailable; MemTotal on a kernel without it), so that the OS, the page
 * cache and the rest of the process keep room and the run never swaps.
 * MB_OK when it fits or nothing is known; else MB_ESKIP with "does not fit:
 * WHAT need X MiB, Y MiB available (at most 80% may be used)". */
int mb_mem_fits(double bytes_needed, const char *what, mb_err *err);
/* The same against `available` bytes (<= 0: unknown, so it fits). */
int mb_mem_fits_in(double bytes_needed, long long available, const char *what, mb_err *err);
/* Short host name (no domain). */
const char *mb_hostname(void);
/* NUMA nodes the kernel lists (/sys/devices/system/node/nodeN); 1 when it lists none. */
int mb_numa_nodes(void);
/* One cache of cpu0 as sysfs describes it (/sys/devices/system/cpu/cpu0/cache/indexN). */
typedef struct mb_cache_info {
    int level;
    char type[32];         /* Data, Instruction, Unified */
    long long size_bytes;
} mb_cache_info;
/* cpu0's caches, at most max, in sysfs's order; returns how many. */
int mb_cpu_caches(mb_cache_info *out, int max);
/* Transparent huge pages in force ("always", "madvise", "never"; "unknown"
 * when the kernel does not say). Not thread-safe: one static buffer. */
const char *mb_thp_mode(void);
/* This boot's id (/proc/sys/kernel/random/boot_id): tells ranks on one machine
 * apart from ranks on another whatever their host names; false when unknown. */
bool mb_boot_id(char *out, size_t len);

#endif
