/* disk_io_uring.c: disk reads through io_uring (liburing) at queue depth qd.
 *
 * The fastest path the kernel offers, and nothing per read that fio does not
 * do inside the timed window:
 *
 *  - registered buffers and file (io_uring_register_buffers/_files,
 *    IORING_OP_READ_FIXED, IOSQE_FIXED_FILE), as fio's --fixedbufs
 *    --registerfiles: no page pinning and no file lookup per read. Where the
 *    kernel refuses (RLIMIT_MEMLOCK without CAP_IPC_LOCK, an old kernel) the
 *    case falls back to plain reads and says so in a note; `registered = off`
 *    asks for plain reads (fio's default);
 *  - batched completion: every completion that is there is reaped in one
 *    pass (io_uring_for_each_cqe + io_uring_cq_advance). Submission two ways,
 *    as the job file says, because neither is the faster everywhere:
 *    `submit = batch` (default) sends all the refills with the one
 *    io_uring_enter that also waits for the next completion (fewest system
 *    calls: a fast NVMe device at high IOPS); `submit = each` sends every read
 *    as soon as it is prepared, as fio's default (iodepth_batch_submit=1),
 *    which on a virtio disk read 4 KiB at queue depth 32 about 1.2x faster
 *    (docs/disk.md). The suites run both for the queued cases;
 *  - the queue is kept full across iterations: when an iteration has counted
 *    its ios_per_iter completions the clock stops, the refills are submitted
 *    and run() returns with qd reads in flight. The next iteration first reaps
 *    (without counting or timing them) what completed meanwhile, refills, and
 *    only then starts the clock: the queue is full at both ends of the timed
 *    window, as in fio's time-based runs, rather than draining at the end of
 *    every iteration;
 *  - 2 x qd buffers: a completed buffer's stamps are checked only after the
 *    refills are submitted (into other buffers), while the device is busy, so
 *    the check never delays a submission. Every read's stamps are checked
 *    (DISK_STAMP_STEP stride; first and last sector always); after each
 *    iteration, untimed, a window of the last read is compared byte for byte;
 *  - `sqpoll = on` (IORING_SETUP_SQPOLL: a kernel thread submits, and the
 *    loop polls the completion ring instead of sleeping in the kernel, as
 *    fio's --sqthread_poll) and
 *    `iopoll = on` (IORING_SETUP_IOPOLL: completions polled, direct mode only,
 *    needs a device with poll queues) as job-file options; a case whose
 *    option the kernel or device refuses is skipped with the reason.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/uio.h>

/* Kernel ABI values (include/uapi/linux/io_uring.h) for a liburing older
 * than the kernel: 2.2 lacks the last two, 2.1 all three. The kernel
 * answers EINVAL where it lacks one, and ring_init retries without. */
#ifndef IORING_SETUP_COOP_TASKRUN
#define IORING_SETUP_COOP_TASKRUN (1U << 8)
#endif
#ifndef IORING_SETUP_SINGLE_ISSUER
#define IORING_SETUP_SINGLE_ISSUER (1U << 12)
#endif
#ifndef IORING_SETUP_DEFER_TASKRUN
#define IORING_SETUP_DEFER_TASKRUN (1U << 13)
#endif

typedef struct uring_state {
    disk_case *c;
    struct io_uring ring;
    bool ring_ok;
    bool want_registered, sqpoll, iopoll;
    bool submit_each;         /* submit = each: one submission per read, as fio's default */
    bool reg_bufs, reg_file;  /* what the kernel accepted */
    unsigned setup_flags;     /* IORING_SETUP_* the ring was created with */
    char fallback[320];       /* why registration was refused, reported as a note */
    int nbuf;                 /* 2 x qd buffers */
    unsigned char *pool;      /* nbuf buffers of bs bytes, DISK_BUF_ALIGN aligned */
    long long *off;           /* per buffer: offset of its last read */
    double *issued;           /* per buffer: when its read was submitted */
    int *free_slots, n_free;  /* idle buffers */
    int *fresh, n_fresh;      /* prepared since the last submit */
    int *done, n_done;        /* completed, stamps not checked yet */
    int inflight;             /* prepared or submitted, not completed */
    /* Over the timed iterations: the fewest reads left in flight when run()
     * returned (qd: the queue stayed full), and the reads that completed
     * between iterations, neither timed nor counted. */
    long long queue_at_return_min, untimed_reads;
    long long spin_waits, spin_timeouts; /* SQPOLL: waits the ring polling ended; ones it gave up */
    long long sq_full_waits;             /* SQPOLL: times no SQ entry was free yet (next_sqe) */
} uring_state;

static int not_permitted(int rc, mb_err *err)
{
    return mb_errf(err, MB_ESKIP,
                   "io_uring not permitted here (io_uring_queue_init: %s; seccomp or "
                   "kernel.io_uring_disabled); the disk/pread cases give the depth-1 baseline",
                   strerror(-rc));
}

static bool on(const mb_params *p, const char *name)
{
    return strcmp(mb_param_str(p, name), "on") == 0;
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
    if (p && on(p, "iopoll") && strcmp(mb_param_str(p, "mode"), "direct") != 0)
        return mb_errf(why, MB_ESKIP, "iopoll = on needs mode = direct (polled completions exist only "
                                      "for O_DIRECT reads)");
    return mb_disk_case_probe(p, DISK_HAS_MODE | DISK_HAS_QD, why);
}

static unsigned char *slot_buf(const uring_state *s, int slot)
{
    return s->pool + (size_t)slot * (size_t)s->c->bs;
}

/* Waits for every read still in flight (submitting what is prepared): the
 * kernel owns those buffers until they complete. Their stamps are checked
 * when `check` (nothing is left unverified that was read). */
static int drain(uring_state *s, bool check, mb_err *err)
{
    int rc = MB_OK;
    while (s->inflight > 0) {
        int r = io_uring_submit_and_wait(&s->ring, 1);
        if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
            if (rc == MB_OK)
                rc = mb_errf(err, MB_ESYS, "io_uring_submit_and_wait: %s", strerror(-r));
            break;
        }
        s->n_fresh = 0;
        unsigned head, seen = 0;
        struct io_uring_cqe *cqe;
        io_uring_for_each_cqe(&s->ring, head, cqe)
        {
            int slot = (int)io_uring_cqe_get_data64(cqe);
            seen++;
            s->inflight--;
            if (check && rc == MB_OK && cqe->res == s->c->bs)
                rc = mb_disk_case_check_read(s->c, slot_buf(s, slot), s->off[slot], DISK_STAMP_STEP, err);
            s->free_slots[s->n_free++] = slot;
        }
        io_uring_cq_advance(&s->ring, seen);
    }
    return rc;
}

static void uring_teardown(void *state)
{
    uring_state *s = state;
    if (!s)
        return;
    if (s->ring_ok) {
        mb_err ignored = { 0 };
        drain(s, false, &ignored);
        io_uring_queue_exit(&s->ring);
    }
    mb_disk_case_free(s->c);
    free(s->pool);
    free(s->off);
    free(s->issued);
    free(s->free_slots);
    free(s->fresh);
    free(s->done);
    free(s);
}

/* The task-work flags fio sets too (engines/io_uring.c): completions are
 * run when this task asks for them (DEFER_TASKRUN, which needs
 * SINGLE_ISSUER) instead of interrupting it with an IPI for each one
 * (COOP_TASKRUN). A kernel that does not know one answers EINVAL: the flag
 * is dropped and the setup retried, as fio does. */
static int ring_init(uring_state *s, mb_err *err)
{
    struct io_uring_params params;
    unsigned mode = (s->sqpoll ? IORING_SETUP_SQPOLL : 0) | (s->iopoll ? IORING_SETUP_IOPOLL : 0);
    unsigned extra = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    int qd = s->c->qd, rc;
    for (;;) {
        memset(&params, 0, sizeof params);
        params.flags = mode | extra;
        rc = io_uring_queue_init_params((unsigned)qd, &s->ring, &params);
        if (rc != -EINVAL || extra == 0)
            break;
        if (extra & IORING_SETUP_DEFER_TASKRUN)
            extra &= ~(IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_SINGLE_ISSUER);
        else
            extra = 0;
    }
    if (rc == 0) {
        s->ring_ok = true;
        s->setup_flags = params.flags;
        return MB_OK;
    }
    if (mode && (rc == -EPERM || rc == -EINVAL || rc == -EOPNOTSUPP))
        return mb_errf(err, MB_ESKIP, "io_uring_queue_init with %s%s refused: %s", s->sqpoll ? "SQPOLL " : "",
                       s->iopoll ? "IOPOLL " : "", strerror(-rc));
    if (rc == -EPERM || rc == -ENOSYS || rc == -EACCES)
        return not_permitted(rc, err);
    return mb_errf(err, MB_ESYS, "io_uring_queue_init(%d): %s", qd, strerror(-rc));
}

static void memlock_text(char *buf, size_t len)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        snprintf(buf, len, "RLIMIT_MEMLOCK %llu KiB", (unsigned long long)rl.rlim_cur / 1024);
    else
        snprintf(buf, len, "RLIMIT_MEMLOCK unlimited");
}

/* Registered buffers and file, or plain reads with the reason in a note. */
static int register_resources(uring_state *s, mb_err *err)
{
    if (!s->want_registered)
        return MB_OK;
    disk_case *c = s->c;
    struct iovec *iov = calloc((size_t)s->nbuf, sizeof *iov);
    if (!iov)
        return mb_errf(err, MB_ESYS, "out of memory");
    for (int i = 0; i < s->nbuf; i++) {
        iov[i].iov_base = slot_buf(s, i);
        iov[i].iov_len = (size_t)c->bs;
    }
    int rb = io_uring_register_buffers(&s->ring, iov, (unsigned)s->nbuf);
    free(iov);
    s->reg_bufs = rb == 0;
    int rf = io_uring_register_files(&s->ring, &c->fd, 1);
    s->reg_file = rf == 0;
    if (rb < 0 || rf < 0) {
        char lim[64];
        memlock_text(lim, sizeof lim);
        snprintf(s->fallback, sizeof s->fallback,
                 "io_uring registration refused, plain reads instead:%s%s%s%s (%s; registered buffers are "
                 "locked memory: raise the limit or grant CAP_IPC_LOCK)",
                 rb < 0 ? " io_uring_register_buffers: " : "", rb < 0 ? strerror(-rb) : "",
                 rf < 0 ? " io_uring_register_files: " : "", rf < 0 ? strerror(-rf) : "", lim);
    }
    return MB_OK;
}

/* A free submission entry. Without SQPOLL the kernel has taken every
 * entry by the time io_uring_enter returns, so one of the qd entries is
 * always free. With SQPOLL the kernel thread moves the SQ head only after
 * its submission batch, and a read's completion can land in the CQ ring
 * before that: the ring looks full for a moment (a NULL entry crashed 1 run
 * in ~30 at 4 KiB, queue depth 1). io_uring_sqring_wait waits for the
 * thread to free one (no system call when one is free already). */
static struct io_uring_sqe *next_sqe(uring_state *s, mb_err *err)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);
    while (!sqe && s->sqpoll) {
        s->sq_full_waits++;
        int r = io_uring_sqring_wait(&s->ring);
        if (r < 0 && r != -EINTR) {
            mb_errf(err, MB_ESYS, "io_uring_sqring_wait: %s", strerror(-r));
            return NULL;
        }
        sqe = io_uring_get_sqe(&s->ring);
    }
    if (!sqe)
        mb_errf(err, MB_ESYS, "io_uring submission ring full with %d reads in flight (queue depth %d)",
                s->inflight, s->c->qd);
    return sqe;
}

/* Fills sqe with a read of `slot`'s buffer at `off`. */
static void prep_slot(uring_state *s, struct io_uring_sqe *sqe, int slot, long long off)
{
    disk_case *c = s->c;
    int fd = s->reg_file ? 0 : c->fd;
    if (s->reg_bufs)
        io_uring_prep_read_fixed(sqe, fd, slot_buf(s, slot), (unsigned)c->bs, (unsigned long long)off, slot);
    else
        io_uring_prep_read(sqe, fd, slot_buf(s, slot), (unsigned)c->bs, (unsigned long long)off);
    if (s->reg_file)
        sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, (uint64_t)slot);
    s->off[slot] = off;
    s->inflight++;
}

static int submit_and_wait(uring_state *s, unsigned wait, mb_err *err)
{
    double t = mb_now();
    for (int i = 0; i < s->n_fresh; i++)
        s->issued[s->fresh[i]] = t;
    s->n_fresh = 0;
    int r = wait ? io_uring_submit_and_wait(&s->ring, wait) : io_uring_submit(&s->ring);
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
        return mb_errf(err, MB_ESYS, "io_uring_submit%s: %s", wait ? "_and_wait" : "", strerror(-r));
    return MB_OK;
}

static int refill(uring_state *s, mb_err *err)
{
    while (s->inflight < s->c->qd) {
        struct io_uring_sqe *sqe = next_sqe(s, err);
        if (!sqe)
            return MB_ESYS;
        int slot = s->free_slots[--s->n_free];
        prep_slot(s, sqe, slot, disk_next_offset(s->c));
        s->fresh[s->n_fresh++] = slot;
        if (s->submit_each) {
            int rc = submit_and_wait(s, 0, err);
            if (rc != MB_OK)
                return rc;
        }
    }
    return MB_OK;
}

/* Stamps of the reads reaped last time; their buffers become free again. */
static int check_done(uring_state *s, mb_err *err)
{
    int rc = MB_OK;
    for (int i = 0; i < s->n_done; i++) {
        int slot = s->done[i];
        if (rc == MB_OK)
            rc = mb_disk_case_check_read(s->c, slot_buf(s, slot), s->off[slot], DISK_STAMP_STEP, err);
        s->free_slots[s->n_free++] = slot;
    }
    s->n_done = 0;
    return rc;
}

static int completion_error(const uring_state *s, int res, long long off, mb_err *err)
{
    const disk_case *c = s->c;
    if (res >= 0)
        return mb_errf(err, MB_EVERIFY, "short read: %d of %lld bytes at offset %lld", res, c->bs, off);
    if (res == -EOPNOTSUPP && s->iopoll)
        return mb_errf(err, MB_ESKIP, "iopoll = on: the device has no poll queues (read: %s; e.g. NVMe "
                                      "needs nvme.poll_queues=N)", strerror(-res));
    if (res == -EINVAL && c->mode == DISK_DIRECT)
        return mb_errf(err, MB_ESYS,
                       "O_DIRECT read of %lld bytes at %lld rejected: %s (block size or alignment "
                       "not accepted by the device)", c->bs, off, strerror(-res));
    return mb_errf(err, MB_ESYS, "io_uring read of %lld bytes at offset %lld: %s", c->bs, off,
                   strerror(-res));
}

/* Reaps up to `limit` completions that are there. Timed ones record their
 * latency (from submission to `now`). Returns the number reaped; *rc gets
 * the first failed read. */
static long long reap(uring_state *s, long long limit, double now, bool timed, int *rc, mb_err *err)
{
    unsigned head, seen = 0;
    struct io_uring_cqe *cqe;
    io_uring_for_each_cqe(&s->ring, head, cqe)
    {
        if ((long long)seen == limit)
            break;
        int slot = (int)io_uring_cqe_get_data64(cqe);
        seen++;
        s->inflight--;
        if (timed)
            disk_lat_record(&s->c->lat, now - s->issued[slot]);
        if (cqe->res != s->c->bs && *rc == MB_OK)
            *rc = completion_error(s, cqe->res, s->off[slot], err);
        s->done[s->n_done++] = slot;
    }
    io_uring_cq_advance(&s->ring, seen);
    return seen;
}

/* SQPOLL: the kernel thread takes the submissions, and completions land in
 * the CQ ring without a system call, so the timed loop waits for one by
 * polling the ring, as fio's --sqthread_poll does (engines/io_uring.c enters
 * the kernel for completions only without an SQ thread). Entering the kernel
 * to sleep until a completion and be woken again, as the other modes do, cost
 * this mode half its rate at 4 KiB, queue depth 1 (docs/disk.md). The wait
 * costs this CPU while it spins, as fio's does. After SPIN_LIMIT seconds
 * without a completion it waits in the kernel instead: a completion that
 * never comes must not spin forever. */
#define SPIN_LIMIT 1.0

static int submit_and_spin(uring_state *s, mb_err *err)
{
    int rc = submit_and_wait(s, 0, err);
    double give_up = 0;
    for (unsigned spins = 1; rc == MB_OK && io_uring_cq_ready(&s->ring) == 0; spins++) {
        if (spins % 4096 != 0)
            continue;
        double t = mb_now();
        if (give_up == 0) {
            give_up = t + SPIN_LIMIT;
        } else if (t > give_up) {
            s->spin_timeouts++;
            return submit_and_wait(s, 1, err);
        }
    }
    s->spin_waits++;
    return rc;
}

/* One read of block 0 through the ring as the timed loop does it: an
 * IOPOLL ring on a device without poll queues, or a READ_FIXED the kernel
 * rejects, shows here rather than in the first timed iteration. */
static int first_read(uring_state *s, mb_err *err)
{
    struct io_uring_sqe *sqe = next_sqe(s, err);
    if (!sqe)
        return MB_ESYS;
    prep_slot(s, sqe, s->free_slots[--s->n_free], 0);
    int rc = MB_OK;
    while (s->inflight > 0 && rc == MB_OK) {
        rc = submit_and_wait(s, 1, err);
        if (rc == MB_OK)
            reap(s, 1, 0, false, &rc, err);
    }
    if (rc == MB_OK)
        rc = check_done(s, err);
    else /* a failed read's buffer (none if the submission failed) */
        while (s->n_done > 0)
            s->free_slots[s->n_free++] = s->done[--s->n_done];
    return rc;
}

static int uring_setup(const mb_params *p, void **state, mb_err *err)
{
    uring_state *s = calloc(1, sizeof *s);
    if (!s)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = mb_disk_case_setup(p, DISK_HAS_MODE | DISK_HAS_QD, &s->c, err);
    if (rc != MB_OK)
        goto fail;
    s->want_registered = strcmp(mb_param_str(p, "registered"), "auto") == 0;
    s->sqpoll = on(p, "sqpoll");
    s->iopoll = on(p, "iopoll");
    s->submit_each = strcmp(mb_param_str(p, "submit"), "each") == 0;
    int qd = s->c->qd;
    s->nbuf = 2 * qd;
    size_t bytes = (size_t)s->nbuf * (size_t)s->c->bs;
    if (posix_memalign((void **)&s->pool, DISK_BUF_ALIGN, bytes) != 0) {
        s->pool = NULL;
        rc = mb_errf(err, MB_ESKIP, "cannot allocate %zu bytes of read buffers", bytes);
        goto fail;
    }
    /* Touched now (no page fault in a timed read); 0xA5 is no valid stamp,
     * so a read that never lands is caught. */
    memset(s->pool, 0xA5, bytes);
    s->off = calloc((size_t)s->nbuf, sizeof *s->off);
    s->issued = calloc((size_t)s->nbuf, sizeof *s->issued);
    s->free_slots = calloc((size_t)s->nbuf, sizeof *s->free_slots);
    s->fresh = calloc((size_t)s->nbuf, sizeof *s->fresh);
    s->done = calloc((size_t)s->nbuf, sizeof *s->done);
    if (!s->off || !s->issued || !s->free_slots || !s->fresh || !s->done) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto fail;
    }
    for (int i = s->nbuf - 1; i >= 0; i--)
        s->free_slots[s->n_free++] = i;
    rc = ring_init(s, err);
    if (rc == MB_OK)
        rc = register_resources(s, err);
    if (rc == MB_OK)
        rc = first_read(s, err);
    if (rc != MB_OK)
        goto fail;
    s->queue_at_return_min = -1;
    *state = s;
    return MB_OK;
fail:
    uring_teardown(s);
    return rc;
}

static int uring_run(void *state, double *seconds, mb_err *err)
{
    uring_state *s = state;
    disk_case *c = s->c;
    const long long n = c->ios_per_iter;
    int rc = MB_OK;

    /* Untimed: what completed since the last iteration returned is checked
     * and replaced, so the clock starts with qd reads in flight. */
    if (s->setup_flags & IORING_SETUP_DEFER_TASKRUN) /* post what completed meanwhile */
        io_uring_enter((unsigned)s->ring.ring_fd, 0, 0, IORING_ENTER_GETEVENTS, NULL);
    s->untimed_reads += reap(s, s->nbuf, 0, false, &rc, err);
    if (rc == MB_OK)
        rc = check_done(s, err);
    if (rc != MB_OK)
        return rc;
    rc = refill(s, err);
    if (rc != MB_OK)
        return rc;

    long long completed = 0;
    double start = mb_now(), now = start;
    while (completed < n) {
        rc = s->sqpoll ? submit_and_spin(s, err) : submit_and_wait(s, 1, err);
        if (rc != MB_OK)
            return rc;
        now = mb_now();
        /* The refills are with the device: check last round's buffers now. */
        rc = check_done(s, err);
        if (rc == MB_OK)
            completed += reap(s, n - completed, now, true, &rc, err);
        if (rc == MB_OK)
            rc = refill(s, err);
        if (rc != MB_OK)
            return rc;
    }
    /* The clock has stopped at the n-th completion. The refills go in now,
     * so the device stays busy while the harness books the iteration. */
    rc = submit_and_wait(s, 0, err);
    if (rc != MB_OK)
        return rc;
    /* Reads the kernel holds now (submitted, not reaped): qd unless the
     * queue drained. With SQPOLL the entries still in the ring are the
     * poller's to take: handed over already. */
    long long held = s->inflight - (s->sqpoll ? 0 : (long long)io_uring_sq_ready(&s->ring));
    if (s->queue_at_return_min < 0 || held < s->queue_at_return_min)
        s->queue_at_return_min = held;
    *seconds = now - start;
    mb_disk_case_account(c, now - start);
    /* The last read reaped is in done[] until check_done(): its buffer is
     * not in flight, so its window can be compared byte for byte. */
    int last = s->done[s->n_done - 1];
    rc = mb_disk_case_check_window(c, slot_buf(s, last), s->off[last], err);
    if (rc == MB_OK)
        rc = check_done(s, err);
    return rc;
}

/* verify(): one read through the ring, nothing else in flight. */
static int uring_read_one(void *ctx, disk_case *c, unsigned char *buf, long long off, mb_err *err)
{
    struct io_uring *ring = &((uring_state *)ctx)->ring;
    struct io_uring_sqe *sqe = next_sqe(ctx, err);
    if (!sqe)
        return MB_ESYS;
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
    return res == c->bs ? MB_OK : completion_error(ctx, res, off, err);
}

static int uring_verify(void *state, mb_err *err)
{
    uring_state *s = state;
    /* The reads still in flight from the last iteration are checked too. */
    int rc = drain(s, true, err);
    if (rc == MB_OK)
        rc = check_done(s, err);
    if (rc != MB_OK)
        return rc;
    return mb_disk_case_verify(s->c, uring_read_one, s, err);
}

static double uring_work(void *state)
{
    return mb_disk_case_work(((uring_state *)state)->c);
}

static void uring_timing_start(void *state)
{
    uring_state *s = state;
    s->queue_at_return_min = -1;
    s->untimed_reads = 0;
    s->spin_waits = s->spin_timeouts = s->sq_full_waits = 0;
    mb_disk_case_timing_start(s->c);
}

static void uring_report(void *state, mb_report *r)
{
    uring_state *s = state;
    char how[512];
    unsigned f = s->setup_flags;
    snprintf(how, sizeof how, "%s buffers, %s file, SQPOLL %s, IOPOLL %s, task work %s; %s; reaped in "
                              "batches; completions %s; queue kept full across iterations",
             s->reg_bufs ? "registered (READ_FIXED)" : "plain", s->reg_file ? "registered" : "plain",
             s->sqpoll ? "on" : "off", s->iopoll ? "on" : "off",
             (f & IORING_SETUP_DEFER_TASKRUN) ? "deferred (COOP_TASKRUN|SINGLE_ISSUER|DEFER_TASKRUN)"
             : (f & IORING_SETUP_COOP_TASKRUN) ? "cooperative (COOP_TASKRUN)" : "default",
             s->submit_each ? "each read submitted as it is prepared (submit = each)"
                            : "refills submitted together (submit = batch)",
             s->sqpoll ? "polled in the ring by this thread (a CPU spins, as fio's --sqthread_poll)"
                       : "waited for in the kernel");
    mb_report_info(r, "io_uring", how);
    if (s->sqpoll) {
        mb_report_metric(r, "ring_polled_waits", (double)s->spin_waits, "waits");
        mb_report_metric(r, "ring_poll_timeouts", (double)s->spin_timeouts, "waits");
        mb_report_metric(r, "sq_full_waits", (double)s->sq_full_waits, "waits");
    }
    if (s->queue_at_return_min >= 0)
        mb_report_metric(r, "queue_at_iteration_end", (double)s->queue_at_return_min, "reads");
    mb_report_metric(r, "untimed_reads", (double)s->untimed_reads, "reads");
    mb_disk_case_report(s->c, r, s->fallback);
}

const mb_backend_code mb_disk_io_uring = {
    .component = "disk",
    .backend = "io_uring",
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

MB_NOT_BUILT_IN(mb_disk_io_uring, "disk", "io_uring",
                "liburing not found at build time (apt-get install liburing-dev)");

#endif
