/* disk_mmap.c: reads of a memory-mapped file on a cold page cache.
 *
 * What a memory-mapped dataset (numpy.memmap, Arrow, safetensors) sees: each
 * read is a memcpy of block_size bytes out of the mapping, and every page not
 * yet resident faults and is read from the device synchronously (with the
 * readahead that `advice` allows). Before every iteration, outside the timed
 * region, the mapping's page-table entries are dropped (MADV_DONTNEED) and
 * the file is dropped from the page cache (POSIX_FADV_DONTNEED), and mincore
 * checks that it is cold; the most that was found resident is reported.
 * Timed like pread (the wall time of the loop of reads); fio's mmap engine
 * is the peer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "disk_file.h"

typedef struct mmap_state {
    disk_case *c;
    unsigned char *map;
    size_t len;
} mmap_state;

static int mmap_probe(const mb_params *p, mb_err *why)
{
    return mb_disk_case_probe(p, DISK_HAS_ADVICE, why);
}

static void mmap_teardown(void *state)
{
    mmap_state *s = state;
    if (!s)
        return;
    if (s->map)
        munmap(s->map, s->len);
    mb_disk_case_free(s->c);
    free(s);
}

static int mmap_setup(const mb_params *p, void **state, mb_err *err)
{
    mmap_state *s = calloc(1, sizeof *s);
    if (!s)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = mb_disk_case_setup(p, DISK_HAS_ADVICE, &s->c, err);
    if (rc != MB_OK)
        goto fail;
    s->len = (size_t)s->c->file->size;
    void *map = mmap(NULL, s->len, PROT_READ, MAP_SHARED, s->c->fd, 0);
    if (map == MAP_FAILED) {
        rc = mb_errno(err, MB_ESYS, "mmap %s", s->c->file->path);
        goto fail;
    }
    s->map = map;
    if (madvise(s->map, s->len, s->c->advice) != 0) {
        rc = mb_errno(err, MB_ESYS, "madvise");
        goto fail;
    }
    *state = s;
    return MB_OK;
fail:
    mmap_teardown(s);
    return rc;
}

/* Untimed: make the mapping and the page cache cold again. */
static int make_cold(mmap_state *s, mb_err *err)
{
    disk_case *c = s->c;
    if (madvise(s->map, s->len, MADV_DONTNEED) != 0)
        return mb_errno(err, MB_ESYS, "madvise(MADV_DONTNEED)");
    double resident;
    int rc = mb_disk_make_cold(c->fd, c->file->size, &resident, err);
    if (rc != MB_OK)
        return rc;
    if (resident > c->resident_max)
        c->resident_max = resident;
    if (resident > 0.01 && !c->note[0])
        snprintf(c->note, sizeof c->note,
                 "the page cache could not be made cold: up to %.1f%% of the file stayed resident",
                 100.0 * resident);
    return MB_OK;
}

static int mmap_run(void *state, double *seconds, mb_err *err)
{
    mmap_state *s = state;
    disk_case *c = s->c;
    int rc = make_cold(s, err);
    if (rc != MB_OK)
        return rc;
    unsigned char *buf = c->bufs;
    long long off = 0;
    double start = mb_now();
    for (long long i = 0; i < c->ios_per_iter; i++) {
        off = disk_next_offset(c);
        double t0 = mb_now();
        memcpy(buf, s->map + off, (size_t)c->bs);
        double t1 = mb_now();
        rc = mb_disk_case_sync_read_done(c, buf, off, t1 - t0, err);
        if (rc != MB_OK)
            return rc;
    }
    return mb_disk_case_sync_iteration_done(c, start, off, seconds, err);
}

static int mmap_read_one(void *ctx, disk_case *c, unsigned char *buf, long long off, mb_err *err)
{
    (void)err;
    memcpy(buf, ((mmap_state *)ctx)->map + off, (size_t)c->bs);
    return MB_OK;
}

static int mmap_verify(void *state, mb_err *err)
{
    mmap_state *s = state;
    return mb_disk_case_verify(s->c, mmap_read_one, s, err);
}

static double mmap_work(void *state)
{
    return mb_disk_case_work(((mmap_state *)state)->c);
}

static void mmap_timing_start(void *state)
{
    mb_disk_case_timing_start(((mmap_state *)state)->c);
}

static void mmap_report(void *state, mb_report *r)
{
    mb_disk_case_report(((mmap_state *)state)->c, r, NULL);
}

const mb_backend_code mb_disk_mmap = {
    .component = "disk",
    .backend = "mmap",
    .probe = mmap_probe,
    .setup = mmap_setup,
    .run = mmap_run,
    .work_per_iter = mmap_work,
    .verify = mmap_verify,
    .report = mmap_report,
    .timing_start = mmap_timing_start,
    .teardown = mmap_teardown,
};
