/* disk_overhead.c: what the disk cases do per read besides the read itself,
 * in nanoseconds per read, on buffers that are not in the CPU caches (as a
 * block just written by the device is not):
 *
 *   stamps   mb_disk_pattern_check_stamps(step DISK_STAMP_STEP): the per-read
 *            sector-stamp check of pread, mmap and io_uring;
 *   latency  two mb_now() and one disk_lat_record(): pread's per-read clock
 *            and sample (io_uring reads the clock once per batch).
 *
 * Built and run by bench/disk_overhead.sh against build/libmlbench.so. The
 * figures go to docs/disk.md ("What each read costs besides the read"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "disk_file.h"

#define POOL (512LL << 20) /* far above any last-level cache */

static double per_read_stamps(unsigned char *pool, long long bs, uint64_t seed)
{
    long long nblk = POOL / bs, reads = 0;
    volatile long long sink = 0;
    double start = mb_now();
    for (int pass = 0; pass < 2; pass++)
        for (long long b = 0; b < nblk; b++, reads++)
            sink += mb_disk_pattern_check_stamps(seed, b * bs, pool + b * bs, (size_t)bs, DISK_STAMP_STEP);
    double t = mb_now() - start;
    if (sink != -reads) {
        fprintf(stderr, "disk_overhead: a stamp did not match\n");
        exit(1);
    }
    return t / (double)reads * 1e9;
}

static double per_read_latency(void)
{
    disk_lat lat = { .cap = 1 << 16, .count = 0 };
    lat.us = calloc((size_t)lat.cap, sizeof *lat.us);
    const long long n = 1 << 22;
    double start = mb_now();
    for (long long i = 0; i < n; i++) {
        double t0 = mb_now();
        double t1 = mb_now();
        disk_lat_record(&lat, t1 - t0);
    }
    double t = mb_now() - start;
    free(lat.us);
    return t / (double)n * 1e9;
}

int main(void)
{
    unsigned char *pool = NULL;
    if (posix_memalign((void **)&pool, 4096, (size_t)POOL) != 0)
        return 1;
    const uint64_t seed = 12345;
    mb_disk_pattern_fill(seed, 0, pool, (size_t)POOL);
    printf("%-10s %12s %12s\n", "block", "stamps ns", "latency ns");
    const long long sizes[] = { 4096, 131072, 1048576 };
    double lat = per_read_latency();
    for (int i = 0; i < 3; i++)
        printf("%-10lld %12.1f %12.1f\n", sizes[i], per_read_stamps(pool, sizes[i], seed), lat);
    free(pool);
    return 0;
}
