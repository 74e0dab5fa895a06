/* host.h: this host's basic facts (platform layer): caches, CPUs, memory,
 * name. Best effort: an unknown fact is 0 (or ""), never an error. */
#ifndef MB_HOST_H
#define MB_HOST_H

/* "32768K", "8M", "512" (sysfs cache sizes, cpuinfo's "cache size") in bytes. */
long long mb_parse_cache_size(const char *s);
/* Size in bytes of the last-level cache (0 when unknown). */
long long mb_llc_bytes(void);
/* Online logical CPUs. */
int mb_online_cpus(void);
/* Physical memory in bytes (0 when unknown) and what is available now. */
long long mb_ram_bytes(void);
long long mb_ram_available_bytes(void);
/* Short host name (no domain). */
const char *mb_hostname(void);

#endif
