/* disk_pread.c: disk reads with pread(2), one at a time (queue depth 1).
 *
 * The plain baseline: what a single-threaded loader that calls read() sees.
 * An iteration's seconds are the wall time (CLOCK_MONOTONIC) of its loop of
 * reads, the loop's own cost included (offsets, two clock reads, a latency
 * sample and a strided stamp check per read), as in fio's psync engine, the
 * peer (scripts/fio_compare.py). Not subtracting the checks keeps the device
 * from idling untimed between reads. Each read's latency is the time around
 * its pread. */
#include <errno.h>
#include <unistd.h>

#include "disk_file.h"

static int pread_probe(const mb_params *p, mb_err *why)
{
    return mb_disk_case_probe(p, DISK_HAS_MODE, why);
}

static int pread_setup(const mb_params *p, void **state, mb_err *err)
{
    return mb_disk_case_setup(p, DISK_HAS_MODE, (disk_case **)state, err);
}

/* Why a pread of a whole block did not return bs bytes (errno still set). */
static int read_failed(const disk_case *c, ssize_t r, long long off, mb_err *err)
{
    if (r >= 0)
        return mb_errf(err, MB_EVERIFY, "short read: %zd of %lld bytes at offset %lld", r, c->bs, off);
    if (errno == EINVAL && c->mode == DISK_DIRECT)
        return mb_errno(err, MB_ESYS,
                        "O_DIRECT pread of %lld bytes at %lld rejected (block size or alignment "
                        "not accepted by the device)", c->bs, off);
    return mb_errno(err, MB_ESYS, "pread of %lld bytes at offset %lld", c->bs, off);
}

/* One read of a whole block, retried only on EINTR. */
static int read_block(disk_case *c, unsigned char *buf, long long off, mb_err *err)
{
    ssize_t r;
    do
        r = pread(c->fd, buf, (size_t)c->bs, off);
    while (r < 0 && errno == EINTR);
    return r == c->bs ? MB_OK : read_failed(c, r, off, err);
}

static int pread_run(void *state, double *seconds, mb_err *err)
{
    disk_case *c = state;
    unsigned char *buf = c->bufs;
    long long off = 0;
    double start = mb_now();
    for (long long i = 0; i < c->ios_per_iter; i++) {
        off = disk_next_offset(c);
        double t0 = mb_now();
        ssize_t r = pread(c->fd, buf, (size_t)c->bs, off);
        double t1 = mb_now();
        if (r != c->bs) {
            if (!(r < 0 && errno == EINTR))
                return read_failed(c, r, off, err);
            int rc = read_block(c, buf, off, err); /* interrupted: retried, timed in full */
            if (rc != MB_OK)
                return rc;
            t1 = mb_now();
        }
        int rc = mb_disk_case_sync_read_done(c, buf, off, t1 - t0, err);
        if (rc != MB_OK)
            return rc;
    }
    return mb_disk_case_sync_iteration_done(c, start, off, seconds, err);
}

static int pread_read_one(void *ctx, disk_case *c, unsigned char *buf, long long off, mb_err *err)
{
    (void)ctx;
    return read_block(c, buf, off, err);
}

static double pread_work(void *state)
{
    return mb_disk_case_work(state);
}

static int pread_verify(void *state, mb_err *err)
{
    return mb_disk_case_verify(state, pread_read_one, NULL, err);
}

static void pread_timing_start(void *state)
{
    mb_disk_case_timing_start(state);
}

static void pread_report(void *state, mb_report *r)
{
    mb_disk_case_report(state, r, NULL);
}

static void pread_teardown(void *state)
{
    mb_disk_case_free(state);
}

const mb_backend_code mb_disk_pread = {
    .component = "disk",
    .backend = "pread",
    .probe = pread_probe,
    .setup = pread_setup,
    .run = pread_run,
    .work_per_iter = pread_work,
    .verify = pread_verify,
    .report = pread_report,
    .timing_start = pread_timing_start,
    .teardown = pread_teardown,
};
