/* disk_uring.c: disk reads through io_uring (liburing) at queue depth qd.
 *
 * One iteration keeps qd reads in flight until ios_per_iter have completed;
 * its seconds are the wall time from the first submission to the last
 * completion. Inside that region each completion's stamps are checked on a
 * stride of sectors (DISK_STAMP_STEP; first and last always), a few cache
 * lines per read; a byte-for-byte check of a window of one buffer follows
 * the region.
 *
 * Where io_uring is not permitted (io_uring_queue_init fails with EPERM or
 * ENOSYS: seccomp in containers, kernel.io_uring_disabled) the case is
 * SKIPPED with that reason rather than run with pread: a depth-1 pread number
 * filed under "io_uring qd=32" would be read as a queue-depth-32 ceiling. The
 * disk/pread cases give the depth-1 baseline in any case.
 */
#include "disk_file.h"

#ifdef MB_HAVE_URING

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>
#include <string.h>

static const mb_param_spec uring_params[] = {
    DISK_PARAM_FILE_SIZE,
    DISK_PARAM_BLOCK_SIZE,
    DISK_PARAM_PATTERN,
    DISK_PARAM_MODE,
    { "qd", MB_P_INT, "32", NULL, 1, 1024, "reads kept in flight (io_uring queue depth)" },
    DISK_PARAM_IOS,
    DISK_PARAM_SEED,
    MB_PARAM_END,
};

typedef struct uring_state {
    disk_case *c;
    struct io_uring ring;
    bool ring_ok;
    double *issued;  /* per buffer: when its read was submitted */
    int *free_slots; /* stack of idle buffers */
    int n_free;
    int *fresh;      /* buffers prepared since the last submit */
    int n_fresh;
} uring_state;

static int not_permitted(int rc, mb_err *err)
{
    return mb_errf(err, MB_ESKIP,
                   "io_uring not permitted here (io_uring_queue_init: %s; seccomp or "
                   "kernel.io_uring_disabled); the disk/pread cases give the depth-1 baseline",
                   strerror(-rc));
}

static int uring_probe(const mb_params *p, mb_err *why)
{
    struct io_uring ring;
    int rc = io_uring_queue_init(1, &ring, 0);
    if (rc < 0) {
        if (rc == -EPERM || rc == -ENOSYS || rc == -EACCES)
            return not_permitted(rc, why);
        return mb_errf(why, MB_ESKIP, "io_uring_queue_init: %s", strerror(-rc));
    }
    io_uring_queue_exit(&ring);
    return disk_case_probe(p, DISK_HAS_MODE | DISK_HAS_QD, why);
}

static void uring_teardown(void *state)
{
    uring_state *s = state;
    if (!s)
        return;
    if (s->ring_ok)
        io_uring_queue_exit(&s->ring);
    disk_case_free(s->c);
    free(s->issued);
    free(s->free_slots);
    free(s->fresh);
    free(s);
}

static int uring_setup(const mb_params *p, void **state, mb_err *err)
{
    uring_state *s = calloc(1, sizeof *s);
    if (!s)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = disk_case_setup(p, DISK_HAS_MODE | DISK_HAS_QD, &s->c, err);
    if (rc != MB_OK)
        goto fail;
    int qd = s->c->qd;
    s->issued = calloc((size_t)qd, sizeof *s->issued);
    s->free_slots = calloc((size_t)qd, sizeof *s->free_slots);
    s->fresh = calloc((size_t)qd, sizeof *s->fresh);
    if (!s->issued || !s->free_slots || !s->fresh) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto fail;
    }
    rc = io_uring_queue_init((unsigned)qd, &s->ring, 0);
    if (rc < 0) {
        rc = (rc == -EPERM || rc == -ENOSYS || rc == -EACCES)
                 ? not_permitted(rc, err)
                 : mb_errf(err, MB_ESYS, "io_uring_queue_init(%d): %s", qd, strerror(-rc));
        goto fail;
    }
    s->ring_ok = true;
    *state = s;
    return MB_OK;
fail:
    uring_teardown(s);
    return rc;
}

static void queue_read(uring_state *s, long long *submitted)
{
    disk_case *c = s->c;
    int slot = s->free_slots[--s->n_free];
    long long off = disk_next_offset(c);
    struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring); /* never NULL: at most qd queued */
    io_uring_prep_read(sqe, c->fd, c->bufs + (size_t)slot * (size_t)c->bs, (unsigned)c->bs,
                       (unsigned long long)off);
    io_uring_sqe_set_data64(sqe, (uint64_t)slot);
    c->slot_off[slot] = off;
    s->fresh[s->n_fresh++] = slot;
    (*submitted)++;
}

static int completion_error(const disk_case *c, int res, long long off, mb_err *err)
{
    if (res >= 0)
        return mb_errf(err, MB_EVERIFY, "short read: %d of %lld bytes at offset %lld", res, c->bs, off);
    if (res == -EINVAL && c->mode == DISK_DIRECT)
        return mb_errf(err, MB_ESYS,
                       "O_DIRECT read of %lld bytes at %lld rejected: %s (block size or alignment "
                       "not accepted by the device)", c->bs, off, strerror(-res));
    return mb_errf(err, MB_ESYS, "io_uring read of %lld bytes at offset %lld: %s", c->bs, off,
                   strerror(-res));
}

static int uring_run(void *state, double *seconds, mb_err *err)
{
    uring_state *s = state;
    disk_case *c = s->c;
    long long n = c->ios_per_iter, submitted = 0, completed = 0, inflight = 0;
    int rc = MB_OK;

    s->n_free = 0;
    for (int i = c->qd - 1; i >= 0; i--)
        s->free_slots[s->n_free++] = i;
    s->n_fresh = 0;
    while (s->n_free > 0 && submitted < n)
        queue_read(s, &submitted);

    double start = mb_now(), now = start;
    while (completed < n) {
        double t_issue = mb_now();
        for (int i = 0; i < s->n_fresh; i++)
            s->issued[s->fresh[i]] = t_issue;
        inflight += s->n_fresh;
        s->n_fresh = 0;
        int r = io_uring_submit_and_wait(&s->ring, 1);
        if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
            rc = mb_errf(err, MB_ESYS, "io_uring_submit_and_wait: %s", strerror(-r));
            break;
        }
        now = mb_now();
        unsigned head, seen = 0;
        struct io_uring_cqe *cqe;
        io_uring_for_each_cqe(&s->ring, head, cqe)
        {
            int slot = (int)io_uring_cqe_get_data64(cqe);
            long long off = c->slot_off[slot];
            seen++;
            inflight--;
            completed++;
            s->free_slots[s->n_free++] = slot;
            disk_lat_record(&c->lat, now - s->issued[slot]);
            if (rc != MB_OK)
                continue;
            if (cqe->res != c->bs)
                rc = completion_error(c, cqe->res, off, err);
            else
                rc = disk_case_check_read(c, c->bufs + (size_t)slot * (size_t)c->bs, off,
                                          DISK_STAMP_STEP, err);
        }
        io_uring_cq_advance(&s->ring, seen);
        if (rc != MB_OK)
            break;
        while (s->n_free > 0 && submitted < n)
            queue_read(s, &submitted);
    }
    /* After an error, wait for what is still in flight (submitting what is
     * still queued): the kernel owns those buffers until they complete. */
    while (inflight > 0) {
        int r = io_uring_submit_and_wait(&s->ring, 1);
        if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
            break;
        unsigned head, seen = 0;
        struct io_uring_cqe *cqe;
        io_uring_for_each_cqe(&s->ring, head, cqe) seen++;
        io_uring_cq_advance(&s->ring, seen);
        inflight -= seen;
    }
    if (rc != MB_OK)
        return rc;
    *seconds = now - start;
    disk_case_account(c, now - start);
    return disk_case_check_slots(c, err);
}

/* verify(): one read through the ring, nothing else in flight. */
static int uring_read_one(void *ctx, disk_case *c, unsigned char *buf, long long off, mb_err *err)
{
    struct io_uring *ring = &((uring_state *)ctx)->ring;
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    io_uring_prep_read(sqe, c->fd, buf, (unsigned)c->bs, (unsigned long long)off);
    int r = io_uring_submit_and_wait(ring, 1);
    if (r < 0)
        return mb_errf(err, MB_ESYS, "io_uring_submit_and_wait: %s", strerror(-r));
    struct io_uring_cqe *cqe;
    r = io_uring_wait_cqe(ring, &cqe);
    if (r < 0)
        return mb_errf(err, MB_ESYS, "io_uring_wait_cqe: %s", strerror(-r));
    int res = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    return res == c->bs ? MB_OK : completion_error(c, res, off, err);
}

static int uring_verify(void *state, mb_err *err)
{
    uring_state *s = state;
    return disk_case_verify(s->c, uring_read_one, s, err);
}

static double uring_work(void *state)
{
    return disk_case_work(((uring_state *)state)->c);
}

static void uring_timing_start(void *state)
{
    disk_case_timing_start(((uring_state *)state)->c);
}

static void uring_report(void *state, mb_report *r)
{
    disk_case_report(((uring_state *)state)->c, r, NULL);
}

const mb_component_ops mb_disk_uring = {
    .component = "disk",
    .backend = "io_uring",
    .summary = "file reads through io_uring at queue depth qd (direct: O_DIRECT device; cached: page cache)",
    .work_unit = "byte",
    .rate_unit = "MB/s",
    .rate_scale = 1e6,
    .params = uring_params,
    .probe = uring_probe,
    .setup = uring_setup,
    .run = uring_run,
    .work_per_iter = uring_work,
    .verify = uring_verify,
    .report = uring_report,
    .timing_start = uring_timing_start,
    .teardown = uring_teardown,
};

#else

MB_NOT_BUILT_IN(mb_disk_uring, "disk", "io_uring", "byte", "MB/s", 1e6,
                "liburing not found at build time (apt-get install liburing-dev)");

#endif
