/* disk_file.h: what the disk backends (pread, io_uring, mmap) share.
 *
 *  - the test file: created once per (directory, size) in --disk-dir (default:
 *    a fresh mkdtemp directory under the current directory), filled with a
 *    verifiable pattern, never overwriting anything (O_CREAT|O_EXCL), removed
 *    at exit, on error and on SIGINT/SIGTERM (mb_cleanup_add, services.h); or the
 *    user's --disk-file, opened O_RDONLY only and never written;
 *  - the pattern: every 512-byte sector starts with a 16-byte stamp
 *    (sector index, mix(seed, sector index)) followed by a splitmix64 stream
 *    seeded with the second word, so any sector can be regenerated alone and
 *    a read from the wrong offset, a stale buffer or a zero page is caught;
 *  - page-cache control without root: cold (fsync + POSIX_FADV_DONTNEED,
 *    checked with mincore) and cached (read it all, checked with mincore);
 *  - one disk case: parameters, buffers, offsets, verification samples,
 *    latency samples and the report, so each backend only has its I/O loop.
 */
#ifndef MB_DISK_FILE_H
#define MB_DISK_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "blockdev.h"
#include "component.h"

#define DISK_SECTOR 512
#define DISK_STAMP_BYTES 16
/* O_DIRECT needs aligned buffers; 4096 covers every logical block size in use. */
#define DISK_BUF_ALIGN 4096
/* Stamps checked inside the timed loop: every DISK_STAMP_STEP-th sector of
 * each read, and always its first and last (2 for 4 KiB, 65 for 1 MiB). */
#define DISK_STAMP_STEP 32
/* Bytes compared in full after each iteration (mb_disk_case_check_slots). */
#define DISK_CHECK_WINDOW (64 * 1024)

/* ---- the pattern ------------------------------------------------------------ */

/* Fills buf (len a multiple of DISK_SECTOR) with the content of the file at
 * offset (a multiple of DISK_SECTOR). */
void mb_disk_pattern_fill(uint64_t seed, long long offset, void *buf, size_t len);

/* Checks the stamp of every `step`-th sector of buf (and always the last one)
 * against the pattern at offset. Returns the byte offset in buf of the first
 * bad stamp, or -1 when all match. */
long long mb_disk_pattern_check_stamps(uint64_t seed, long long offset, const void *buf,
                                    size_t len, size_t step);

/* Compares every byte. Returns the index of the first differing byte, or -1. */
long long mb_disk_pattern_compare(uint64_t seed, long long offset, const void *buf, size_t len);

/* ---- the test file ------------------------------------------------------------ */

typedef struct disk_file {
    char path[4096];
    long long size;
    uint64_t seed;   /* pattern seed (owned files only) */
    bool owned;      /* created by mlbench with the pattern; false for --disk-file */
    bool memory_fs;  /* tmpfs/ramfs: no device behind it */
    bool kept;       /* MLBENCH_DISK_KEEP: left in place at exit */
    int cleanup_slot;
    int lock_fd;     /* holds flock(LOCK_EX) while we run: the file is in use */
} disk_file;

/* Creates `path` (which must not exist: O_CREAT|O_EXCL), registers it with
 * mb_cleanup, and writes `size` bytes of the pattern, fsyncs and drops it
 * from the page cache. Refuses with MB_ESKIP when the file system has less
 * than size + a reserve free. On any error the file is removed again. */
int mb_disk_file_create(const char *path, long long size, uint64_t seed, disk_file *out,
                     mb_err *err);

/* Removes stale test files of killed runs from dir: names of our own
 * pattern (mlbench-disk-<pid>-<size>.dat, and mlbench-disk-<pid>-XXXXXX/
 * temporary directories holding only such files) whose process <pid> no
 * longer exists and whose lock nobody holds. Tells the user what it removed
 * (mb_notice); returns the number of files removed. Anything else is never
 * touched. */
int mb_disk_sweep_stale(const char *dir);

/* Removes a file created by mb_disk_file_create and forgets its cleanup slot. */
void mb_disk_file_remove(disk_file *f);

/* The file a case reads: the user's --disk-file (read-only) when set,
 * otherwise the shared test file of `size` bytes in --disk-dir (or in the
 * run's temporary directory), created on first use and kept until exit or
 * mb_disk_files_release(). The pointer stays valid until mb_disk_files_release. */
int mb_disk_file_acquire(long long size, const disk_file **out, mb_err *err);

/* Removes every shared test file and the temporary directory now (tests;
 * mlbench itself leaves this to mb_cleanup at exit). */
void mb_disk_files_release(void);

/* The directory where the shared test files go (for probes and messages):
 * --disk-dir, or the current directory when the temporary directory is not
 * made yet. For --disk-file, its directory. */
void mb_disk_target_dir(char *buf, size_t len);

/* True when `path` lies on a file system without a device (tmpfs, ramfs). */
bool mb_disk_path_on_memory_fs(const char *path);

/* ---- page cache ------------------------------------------------------------------ */

/* Fraction of the file's pages resident in the page cache (mincore over a
 * read-only mapping), in [0, 1]. */
int mb_disk_resident_fraction(int fd, long long size, double *fraction, mb_err *err);

/* Drops the file from the page cache (fsync + POSIX_FADV_DONTNEED; no root
 * needed for clean pages) and measures what stayed resident. */
int mb_disk_make_cold(int fd, long long size, double *resident, mb_err *err);

/* Reads the whole file through the page cache and measures residency. */
int mb_disk_make_cached(int fd, long long size, double *resident, mb_err *err);

/* ---- a disk case -------------------------------------------------------------------- */

typedef enum disk_mode { DISK_DIRECT, DISK_CACHED, DISK_MMAP } disk_mode;

/* Which parameters a backend has (its spec lists the same names). */
enum {
    DISK_HAS_MODE = 1 << 0, /* mode = direct|cached */
    DISK_HAS_QD = 1 << 1,   /* qd */
    DISK_HAS_ADVICE = 1 << 2 /* advice = random|normal|sequential (mmap) */
};

/* Parameter spec entries shared by the backends' tables. */
#define DISK_PARAM_FILE_SIZE                                                              \
    { "file_size", MB_P_SIZE, "1g", NULL, 1 << 20, 1e15,               \
      "size of the test file mlbench creates (ignored with --disk-file)" }
#define DISK_PARAM_BLOCK_SIZE                                                             \
    { "block_size", MB_P_SIZE, "4k", NULL, 512, 67108864,                                 \
      "bytes per read, a multiple of 512; offsets are aligned to it" }
#define DISK_PARAM_PATTERN                                                                \
    { "pattern", MB_P_ENUM, "random", "random|sequential", 0, -1,                         \
      "random: uniform block-aligned offsets; sequential: consecutive blocks, wrapping" }
#define DISK_PARAM_MODE                                                                   \
    { "mode", MB_P_ENUM, "direct", "direct|cached", 0, -1,                                \
      "direct: O_DIRECT (the device); cached: file resident in the page cache (RAM)" }
#define DISK_PARAM_IOS                                                                    \
    { "ios_per_iter", MB_P_INT, "0", NULL, 0, 1 << 24,                                    \
      "reads per timed iteration; 0 = auto (16 MiB worth, at least 16; 32 x qd when qd > 1)" }
#define DISK_PARAM_SEED                                                                   \
    { "seed", MB_P_INT, "0", NULL, 0, 9.0e15,                                             \
      "seed of the random offsets; 0 = a new one per case (reported as info)" }

typedef struct disk_lat {
    double *us; /* ring of per-read latencies in microseconds */
    long long cap, count;
} disk_lat;

typedef struct disk_case {
    const disk_file *file;
    int fd;           /* the benchmark's descriptor (O_DIRECT in direct mode) */
    int ref_fd;       /* plain buffered O_RDONLY descriptor for reference reads */
    disk_mode mode;
    bool random;
    int advice;       /* mmap: MADV_* */
    long long bs, nblocks, ios_per_iter;
    int qd;
    uint64_t seed;    /* of the random offsets (drawn when the parameter is 0) */
    uint64_t rng;     /* random offsets */
    long long next_block; /* sequential position */

    unsigned char *bufs;   /* qd buffers of bs bytes, DISK_BUF_ALIGN aligned */
    long long *slot_off;   /* offset last read into each buffer, -1 = none */
    unsigned char *check;  /* bs bytes for reference reads */

    /* verify(): sample offsets; for --disk-file also their reference bytes,
     * read at setup through the page cache. */
    int n_samples;
    long long *sample_off;
    unsigned char *sample_ref;

    disk_lat lat;
    double *iter_iops;    /* ring of per-iteration IOPS (the metric is their median) */
    long long n_iters;
    long long total_ios;
    double total_seconds;
    double resident;      /* cached: after reading it all; cold modes: at setup */
    double resident_max;  /* mmap: the most found resident before an iteration */
    long long checked_bytes_full;
    int bad;              /* a read failed verification inside run() */
    mb_err bad_err;
    char note[256];       /* set up once, reported */

    /* The block device's read counters around the timed runs (blockdev.h):
     * read at timing_start and after every iteration (mb_disk_case_account). */
    char dev_name[64], dev_stat[512], dev_note[320];
    mb_blockdev_stat dev_before, dev_after;
    bool have_dev_before, have_dev_after;
    long long ios_at_dev_before, ios_at_dev_after; /* total_ios at each sample */
} disk_case;

/* Reads the parameters in `has`, acquires the file, opens it for the mode,
 * allocates buffers and latency storage, prepares the cache state (cold for
 * direct/mmap, resident for cached) and the verification samples. */
int mb_disk_case_setup(const mb_params *p, unsigned has, disk_case **out, mb_err *err);
void mb_disk_case_free(disk_case *c);

/* Common probe: tmpfs / O_DIRECT support for direct mode, cold cache for mmap. */
int mb_disk_case_probe(const mb_params *p, unsigned has, mb_err *why);

/* The next offset to read (random or sequential). */
static inline long long disk_next_offset(disk_case *c)
{
    long long block;
    if (c->random) {
        /* Lemire's multiply-shift: uniform over [0, nblocks) without a division. */
        block = (long long)(((unsigned __int128)mb_splitmix64(&c->rng) * (uint64_t)c->nblocks) >> 64);
    } else {
        block = c->next_block;
        if (++c->next_block == c->nblocks)
            c->next_block = 0;
    }
    return block * c->bs;
}

/* Books one finished iteration: its reads and timed seconds; reads the
 * device's counters (after the iteration's clock stopped). */
void mb_disk_case_account(disk_case *c, double seconds);

/* For the synchronous backends (pread, mmap): one read of buf at off that
 * took `seconds`, booked (latency) and checked (stamps, step DISK_STAMP_STEP);
 * and the end of an iteration whose clock started at `start` and whose last
 * read was at last_off: *seconds set, the iteration booked, the moving window
 * checked (mb_disk_case_check_slots). */
int mb_disk_case_sync_read_done(disk_case *c, const unsigned char *buf, long long off, double seconds,
                                mb_err *err);
int mb_disk_case_sync_iteration_done(disk_case *c, double start, long long last_off, double *seconds,
                                     mb_err *err);

static inline void disk_lat_record(disk_lat *l, double seconds)
{
    l->us[l->count % l->cap] = seconds * 1e6;
    l->count++;
}

/* Stamp check of a completed read of buf at offset (owned files; a no-op
 * for --disk-file). step 1 = every sector. On a mismatch records it in the
 * case (first wins) and returns MB_EVERIFY. */
int mb_disk_case_check_read(disk_case *c, const unsigned char *buf, long long offset, size_t step,
                         mb_err *err);

/* After a batch, outside the timed region: byte-for-byte check of a window
 * (DISK_CHECK_WINDOW) of the last read of one buffer, both moving on with
 * every iteration (pattern, or a fresh buffered re-read for --disk-file). */
int mb_disk_case_check_slots(disk_case *c, mb_err *err);

/* The same byte-for-byte check of a moving window, for a block read at
 * offset into buf by a backend that keeps its own buffers (io_uring). */
int mb_disk_case_check_window(disk_case *c, const unsigned char *buf, long long offset, mb_err *err);

/* Reads one block at offset through the case's own path into buf (verify()). */
typedef int (*disk_read_fn)(void *ctx, disk_case *c, unsigned char *buf, long long offset,
                            mb_err *err);
/* verify(): full byte compare of the sample blocks read through `read`. */
int mb_disk_case_verify(disk_case *c, disk_read_fn read, void *ctx, mb_err *err);

double mb_disk_case_work(const disk_case *c);
/* Drops the latency and per-iteration samples taken so far (the warm-up's). */
void mb_disk_case_timing_start(disk_case *c);
void mb_disk_case_report(disk_case *c, mb_report *r, const char *engine_note);

/* Reads len bytes at offset with pread, looping over short reads; MB_ESYS on
 * error, MB_EVERIFY on a premature end of file. */
int mb_disk_pread_full(int fd, void *buf, size_t len, long long offset, mb_err *err);

#endif
