/* dist.c: running under MPI (dist.h, dist_extra.h).
 *
 * MPI is initialised only when a launcher started us; otherwise, and in a
 * build without MPI, every function acts as rank 0 of a world of 1.
 *
 * Hangs are the enemy: a rank that fails, takes another path, or dies must
 * not leave the others waiting forever. So the world's error handler is
 * MPI_ERRORS_RETURN (Open MPI's default would abort the job from inside a
 * call, with no results written), and dist's own barrier, gather and
 * agreement are non-blocking requests polled until a deadline, after which
 * the caller reports which ranks did not answer and aborts.
 *
 * Two duplicates of the world: `comm` for the collective backends' traffic
 * and `ctl` for dist's own messages, so the two never match each other. */
#include "dist.h"
#include "dist_extra.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "context.h"
#include "formulas.h"
#include "host.h"
#include "nic.h"
#include "paths.h"
#include "results.h"
#include "results_writers.h" /* mb_fmt_number */

#define HOST_LEN 64

static struct {
    bool mpi; /* MPI initialised by mb_dist_init */
    int rank, size, local_rank, local_size, nodes;
    char (*hosts)[HOST_LEN];
    long *pids; /* every rank's process id, for the watchdog */
    char self_host[HOST_LEN];
#ifdef MB_HAVE_MPI
    MPI_Comm comm, ctl;
#endif
} g = { .size = 1, .local_size = 1, .nodes = 1 };

static const char *self_host(void)
{
    if (g.self_host[0] == '\0') {
        if (gethostname(g.self_host, sizeof g.self_host) != 0)
            snprintf(g.self_host, sizeof g.self_host, "unknown");
        g.self_host[sizeof g.self_host - 1] = '\0';
        g.self_host[strcspn(g.self_host, ".")] = '\0'; /* short name */
    }
    return g.self_host;
}

/* ---- queries -------------------------------------------------------------- */

int mb_dist_rank(void) { return g.rank; }
int mb_dist_size(void) { return g.size; }
bool mb_dist_active(void) { return g.size > 1; }
int mb_dist_local_rank(void) { return g.local_rank; }
int mb_dist_local_size(void) { return g.local_size; }
int mb_dist_nodes(void) { return g.nodes; }

const char *mb_dist_host_of(int rank)
{
    if (rank < 0 || rank >= g.size)
        return "";
    return g.hosts ? g.hosts[rank] : self_host();
}

static double timeout_set;

void mb_dist_set_timeout(double seconds)
{
    timeout_set = seconds;
}

double mb_dist_timeout(void)
{
    if (timeout_set > 0)
        return timeout_set;
    const char *env = getenv("MLBENCH_DIST_TIMEOUT");
    double t = env && *env ? strtod(env, NULL) : 0;
    return t > 0 ? t : MB_DIST_TIMEOUT_DEFAULT;
}

/* ---- launcher detection ------------------------------------------------------ */

static long env_long(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? strtol(v, NULL, 10) : -1;
}

/* Started by mpirun/mpiexec (Open MPI, MPICH/Hydra's PMI, PMIx) or by srun
 * with more than one task. A Slurm batch script itself has SLURM_PROCID and
 * SLURM_NTASKS too but no step of its own: SLURM_STEP_NUM_TASKS is srun's. */
static bool launched_by_mpi(void)
{
    if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_RANK") || getenv("PMIX_RANK"))
        return true;
    if (getenv("SLURM_PROCID")) {
        long tasks = env_long("SLURM_STEP_NUM_TASKS");
        if (tasks < 0)
            tasks = env_long("SLURM_NTASKS");
        return tasks > 1;
    }
    return false;
}

#ifdef MB_HAVE_MPI

int mb_mpi_err(int rc, mb_err *err, const char *what)
{
    if (rc == MPI_SUCCESS)
        return MB_OK;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", rc);
    return mb_errf(err, MB_EFAIL, "%s: %s", what, text);
}

MPI_Comm mb_dist_comm(void)
{
    return g.mpi ? g.comm : MPI_COMM_NULL;
}

static void pause_briefly(long polls)
{
    /* Spin for the first polls (latency), then sleep so an oversubscribed
     * node (more ranks than cores, as in CI) keeps its cores for real work. */
    if (polls < 2000)
        return;
    struct timespec ts = { 0, 50000 };
    nanosleep(&ts, NULL);
}

/* Waits for every request until the deadline (timeout_s <= 0: forever).
 * Returns MB_OK, or MB_EFAIL with the indices still pending marked in
 * pending[] (may be NULL). */
static int wait_until(int n, MPI_Request *req, double timeout_s, bool *pending)
{
    double deadline = timeout_s > 0 ? mb_now() + timeout_s : INFINITY;
    for (long polls = 0;; polls++) {
        int done = 0;
        if (MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return MB_EFAIL;
        if (done)
            return MB_OK;
        if (mb_now() > deadline)
            break;
        pause_briefly(polls);
    }
    for (int i = 0; i < n; i++) {
        int flag = 1;
        if (req[i] != MPI_REQUEST_NULL)
            MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE);
        if (pending)
            pending[i] = !flag;
        if (!flag) {
            /* Nobody will answer: drop it (a receive cancels cleanly; a
             * send that cannot be cancelled is left to the abort). */
            MPI_Cancel(&req[i]);
            MPI_Request_free(&req[i]);
        }
    }
    return MB_EFAIL;
}

/* Appends "2 (hostb), 5 (hostc)" for the ranks marked in missing[]. */
static void list_ranks(char *buf, size_t len, const bool *missing, int n)
{
    buf[0] = '\0';
    int shown = 0;
    for (int r = 0; r < n; r++) {
        if (!missing[r])
            continue;
        size_t used = strlen(buf);
        if (shown++ == 8) {
            snprintf(buf + used, len - used, ", ...");
            break;
        }
        snprintf(buf + used, len - used, "%s%d (%s)", used ? ", " : "", r, mb_dist_host_of(r));
    }
}

enum { TAG_BARRIER_IN = 11, TAG_BARRIER_OUT, TAG_GATHER_LEN, TAG_GATHER_BODY };

static int setup_world(mb_err *err)
{
    int rc;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &g.comm)) != MPI_SUCCESS)
        return mb_mpi_err(rc, err, "MPI_Comm_dup");
    if ((rc = MPI_Comm_dup(MPI_COMM_WORLD, &g.ctl)) != MPI_SUCCESS)
        return mb_mpi_err(rc, err, "MPI_Comm_dup");
    MPI_Comm_rank(g.comm, &g.rank);
    MPI_Comm_size(g.comm, &g.size);

    MPI_Comm node;
    rc = MPI_Comm_split_type(g.comm, MPI_COMM_TYPE_SHARED, g.rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return mb_mpi_err(rc, err, "MPI_Comm_split_type(SHARED)");
    MPI_Comm_rank(node, &g.local_rank);
    MPI_Comm_size(node, &g.local_size);
    MPI_Comm_free(&node);

    int leader = g.local_rank == 0;
    if ((rc = MPI_Allreduce(&leader, &g.nodes, 1, MPI_INT, MPI_SUM, g.comm)) != MPI_SUCCESS)
        return mb_mpi_err(rc, err, "MPI_Allreduce(nodes)");

    g.hosts = calloc((size_t)g.size, HOST_LEN);
    if (g.hosts == NULL)
        return mb_errf(err, MB_ESYS, "out of memory for %d host names", g.size);
    char mine[HOST_LEN] = { 0 };
    snprintf(mine, sizeof mine, "%s", self_host());
    rc = MPI_Allgather(mine, HOST_LEN, MPI_CHAR, g.hosts, HOST_LEN, MPI_CHAR, g.comm);
    if (rc != MPI_SUCCESS)
        return mb_mpi_err(rc, err, "MPI_Allgather(host names)");
    g.pids = calloc((size_t)g.size, sizeof *g.pids);
    if (g.pids == NULL)
        return mb_errf(err, MB_ESYS, "out of memory for %d process ids", g.size);
    long pid = (long)getpid();
    if ((rc = MPI_Allgather(&pid, 1, MPI_LONG, g.pids, 1, MPI_LONG, g.comm)) != MPI_SUCCESS)
        return mb_mpi_err(rc, err, "MPI_Allgather(process ids)");
    return MB_OK;
}

int mb_dist_init(int *argc, char ***argv, mb_err *err)
{
    if (g.mpi || !launched_by_mpi())
        return MB_OK;
    int already = 0, provided = 0, rc;
    MPI_Initialized(&already);
    if (!already && (rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided)) != MPI_SUCCESS)
        return mb_mpi_err(rc, err, "MPI_Init_thread");
    g.mpi = true;
    return setup_world(err);
}

void mb_dist_finalize(void)
{
    if (!g.mpi)
        return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) {
        MPI_Comm_free(&g.comm);
        MPI_Comm_free(&g.ctl);
        MPI_Finalize();
    }
    mb_dist_watchdog_disarm();
    free(g.hosts);
    g.hosts = NULL;
    free(g.pids);
    g.pids = NULL;
    g.mpi = false;
    g.rank = 0;
    g.size = g.local_size = g.nodes = 1;
    g.local_rank = 0;
}

void mb_dist_abort(const char *why)
{
    fprintf(stderr, "mlbench: rank %d (%s): %s: stopping every rank\n", g.rank, self_host(), why);
    fflush(stderr);
    fflush(stdout);
    mb_cleanup_run(); /* MPI_Abort skips atexit hooks */
    if (g.mpi)
        MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

const char *mb_dist_describe(void)
{
    static char text[256];
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(lib, &len); /* allowed before MPI_Init */
    lib[strcspn(lib, ",\n")] = '\0';
    if (g.mpi)
        snprintf(text, sizeof text, "built with %.160s; %d rank%s on %d node%s", lib, g.size,
                 g.size == 1 ? "" : "s", g.nodes, g.nodes == 1 ? "" : "s");
    else
        snprintf(text, sizeof text,
                 "built with %.160s; not started by mpirun/srun: single process", lib);
    return text;
}

int mb_dist_barrier(double timeout_s, mb_err *err)
{
    if (!g.mpi || g.size == 1)
        return MB_OK;
    char names[512];
    if (g.rank == 0) {
        int n = g.size - 1;
        MPI_Request *req = malloc(sizeof *req * (size_t)n);
        bool *pending = calloc((size_t)n, sizeof *pending), *missing = calloc((size_t)g.size, sizeof *missing);
        if (req == NULL || pending == NULL || missing == NULL) {
            free(req), free(pending), free(missing);
            return mb_errf(err, MB_ESYS, "barrier: out of memory");
        }
        for (int r = 1; r < g.size; r++)
            MPI_Irecv(NULL, 0, MPI_BYTE, r, TAG_BARRIER_IN, g.ctl, &req[r - 1]);
        int rc = wait_until(n, req, timeout_s, pending);
        if (rc == MB_OK) {
            for (int r = 1; r < g.size; r++)
                MPI_Isend(NULL, 0, MPI_BYTE, r, TAG_BARRIER_OUT, g.ctl, &req[r - 1]);
            rc = wait_until(n, req, timeout_s, pending);
        } else {
            for (int r = 1; r < g.size; r++)
                missing[r] = pending[r - 1];
            list_ranks(names, sizeof names, missing, g.size);
            mb_errf(err, MB_EFAIL, "barrier: rank%s %s did not arrive within %.0f s",
                    strchr(names, ',') ? "s" : "", names, timeout_s);
        }
        if (rc != MB_OK)
            mb_errf(err, MB_EFAIL, "barrier: releasing the ranks failed");
        free(req), free(pending), free(missing);
        return rc;
    }
    MPI_Request req[2];
    MPI_Isend(NULL, 0, MPI_BYTE, 0, TAG_BARRIER_IN, g.ctl, &req[0]);
    MPI_Irecv(NULL, 0, MPI_BYTE, 0, TAG_BARRIER_OUT, g.ctl, &req[1]);
    if (wait_until(2, req, timeout_s, NULL) != MB_OK)
        return mb_errf(err, MB_EFAIL,
                       "barrier: rank 0 (%s) did not release the ranks within %.0f s "
                       "(another rank did not arrive, or rank 0 is stuck)",
                       mb_dist_host_of(0), timeout_s);
    return MB_OK;
}

static int gone_ranks(char *buf, size_t len);

/* One Iallreduce on ctl, polled; a timeout here leaves the ranks in unknown
 * states, so it aborts, naming a rank on this host whose process is gone (a
 * rank killed between two cases dies here, not inside a case's collective
 * where the watchdog would name it). */
static void allreduce_ctl(void *inout, int n, MPI_Datatype type, MPI_Op op, const char *what)
{
    MPI_Request req;
    char in[64];
    int size = 0;
    MPI_Type_size(type, &size);
    memcpy(in, inout, (size_t)(size * n));
    if (MPI_Iallreduce(in, inout, n, type, op, g.ctl, &req) != MPI_SUCCESS ||
        wait_until(1, &req, mb_dist_timeout(), NULL) != MB_OK) {
        char why[768], gone[512];
        int n_gone = gone_ranks(gone, sizeof gone);
        if (n_gone > 0)
            snprintf(why, sizeof why, "%s: no collective progress for %.0f s (--dist-timeout): rank%s %s ended",
                     what, mb_dist_timeout(), n_gone > 1 ? "s" : "", gone);
        else
            snprintf(why, sizeof why, "%s: the other ranks did not answer within %.0f s", what,
                     mb_dist_timeout());
        mb_dist_abort(why);
    }
}

int mb_dist_agree(int code)
{
    if (!g.mpi || g.size == 1)
        return code;
    allreduce_ctl(&code, 1, MPI_INT, MPI_MAX, "agreeing on a status");
    return code;
}

int mb_dist_agree_err(int code, mb_err *err)
{
    if (!g.mpi || g.size == 1)
        return code;
    /* MAXLOC over (code, rank): the worst code; ties go to the lowest rank. */
    struct { int code, rank; } mine = { code, g.rank };
    allreduce_ctl(&mine, 1, MPI_2INT, MPI_MAXLOC, "agreeing on a status");
    if (mine.code == MB_OK)
        return MB_OK;
    int from = mine.rank;
    char msg[MB_ERR_LEN];
    snprintf(msg, sizeof msg, "%s", err && from == g.rank ? err->msg : "");
    MPI_Request req;
    if (MPI_Ibcast(msg, sizeof msg, MPI_CHAR, from, g.ctl, &req) != MPI_SUCCESS ||
        wait_until(1, &req, mb_dist_timeout(), NULL) != MB_OK)
        mb_dist_abort("sharing an error message: the other ranks did not answer");
    msg[sizeof msg - 1] = '\0';
    if (err) { /* the same words on every rank; this rank's own lesser status gives way */
        char prefix[HOST_LEN + 32];
        snprintf(prefix, sizeof prefix, "rank %d (%s): ", from, mb_dist_host_of(from));
        mb_err_clear(err);
        if (strncmp(msg, prefix, strlen(prefix)) == 0) /* agreed on before */
            mb_errf(err, mine.code, "%s", msg);
        else
            mb_errf(err, mine.code, "%s%s", prefix, msg);
    }
    return mine.code;
}

int mb_dist_max_double(double *v, mb_err *err)
{
    (void)err;
    if (g.mpi && g.size > 1)
        allreduce_ctl(v, 1, MPI_DOUBLE, MPI_MAX, "maximum over ranks");
    return MB_OK;
}

int mb_dist_min_double(double *v, mb_err *err)
{
    (void)err;
    if (g.mpi && g.size > 1)
        allreduce_ctl(v, 1, MPI_DOUBLE, MPI_MIN, "minimum over ranks");
    return MB_OK;
}

/* Rank 0's side of the gather: a length then a body from every other rank,
 * received as they come until the deadline. */
static cJSON *gather_root(const cJSON *mine, double timeout_s, mb_err *err)
{
    int n = g.size;
    cJSON *out = cJSON_CreateArray();
    long long *len = calloc((size_t)n, sizeof *len);
    char **body = calloc((size_t)n, sizeof *body);
    MPI_Request *lreq = malloc(sizeof *lreq * (size_t)n), *breq = malloc(sizeof *breq * (size_t)n);
    bool *missing = calloc((size_t)n, sizeof *missing);
    if (!out || !len || !body || !lreq || !breq || !missing) {
        mb_errf(err, MB_ESYS, "gather: out of memory for %d ranks", n);
        goto done;
    }
    lreq[0] = breq[0] = MPI_REQUEST_NULL;
    for (int r = 1; r < n; r++) {
        MPI_Irecv(&len[r], 1, MPI_LONG_LONG, r, TAG_GATHER_LEN, g.ctl, &lreq[r]);
        breq[r] = MPI_REQUEST_NULL;
    }
    double deadline = timeout_s > 0 ? mb_now() + timeout_s : INFINITY;
    int left = 2 * (n - 1);
    for (long polls = 0; left > 0 && mb_now() <= deadline; polls++) {
        for (int r = 1; r < n; r++) {
            int flag = 0;
            if (lreq[r] != MPI_REQUEST_NULL) {
                MPI_Test(&lreq[r], &flag, MPI_STATUS_IGNORE);
                if (flag) {
                    left--;
                    body[r] = len[r] >= 0 && len[r] < INT_MAX ? malloc((size_t)len[r] + 1) : NULL;
                    if (body[r] == NULL) {
                        left--; /* unreadable: stays null */
                        continue;
                    }
                    MPI_Irecv(body[r], (int)len[r], MPI_CHAR, r, TAG_GATHER_BODY, g.ctl, &breq[r]);
                }
            } else if (breq[r] != MPI_REQUEST_NULL) {
                MPI_Test(&breq[r], &flag, MPI_STATUS_IGNORE);
                if (flag)
                    left--;
            }
        }
        pause_briefly(polls);
    }
    for (int r = 1; r < n; r++) {
        if (lreq[r] != MPI_REQUEST_NULL || breq[r] != MPI_REQUEST_NULL) {
            missing[r] = true;
            MPI_Request *q = lreq[r] != MPI_REQUEST_NULL ? &lreq[r] : &breq[r];
            MPI_Cancel(q);
            MPI_Request_free(q);
        }
    }
    for (int r = 0; r < n; r++) {
        cJSON *item = NULL;
        if (r == 0)
            item = mine ? cJSON_Duplicate(mine, 1) : NULL;
        else if (!missing[r] && body[r]) {
            body[r][len[r]] = '\0';
            item = cJSON_Parse(body[r]);
        }
        cJSON_AddItemToArray(out, item ? item : cJSON_CreateNull());
    }
    char names[512];
    list_ranks(names, sizeof names, missing, n);
    if (names[0])
        mb_errf(err, MB_EFAIL, "gather: rank%s %s did not answer within %.0f s",
                strchr(names, ',') ? "s" : "", names, timeout_s);
done:
    if (body)
        for (int r = 0; r < n; r++)
            if (!missing || !missing[r])
                free(body[r]); /* a cancelled receive's buffer is leaked: abort follows */
    free(len), free(body), free(lreq), free(breq), free(missing);
    return out;
}

cJSON *mb_dist_gather_json(const cJSON *mine, double timeout_s, mb_err *err)
{
    if (!g.mpi || g.size == 1) {
        cJSON *out = cJSON_CreateArray();
        cJSON_AddItemToArray(out, mine ? cJSON_Duplicate(mine, 1) : cJSON_CreateNull());
        return out;
    }
    if (g.rank == 0)
        return gather_root(mine, timeout_s, err);
    char *text = mine ? cJSON_PrintUnformatted(mine) : NULL;
    static char null_text[] = "null";
    char *send = text ? text : null_text;
    long long len = (long long)strlen(send);
    MPI_Request req[2];
    MPI_Isend(&len, 1, MPI_LONG_LONG, 0, TAG_GATHER_LEN, g.ctl, &req[0]);
    MPI_Isend(send, (int)len, MPI_CHAR, 0, TAG_GATHER_BODY, g.ctl, &req[1]);
    if (wait_until(2, req, timeout_s, NULL) != MB_OK) {
        mb_errf(err, MB_EFAIL, "gather: rank 0 (%s) did not collect within %.0f s",
                mb_dist_host_of(0), timeout_s);
        return NULL; /* text leaked on purpose: a pending send may still read it */
    }
    free(text);
    return NULL;
}

#else /* !MB_HAVE_MPI: a world of one */

int mb_dist_init(int *argc, char ***argv, mb_err *err)
{
    (void)argc, (void)argv, (void)err;
    if (launched_by_mpi())
        fprintf(stderr, "mlbench: warning: started by an MPI launcher, but built without MPI: "
                        "every process runs alone as rank 0\n");
    return MB_OK;
}

void mb_dist_finalize(void) {}

void mb_dist_abort(const char *why)
{
    fprintf(stderr, "mlbench: %s\n", why);
    fflush(stderr);
    exit(1);
}

const char *mb_dist_describe(void)
{
    return "built without MPI: single-process only";
}

int mb_dist_barrier(double timeout_s, mb_err *err)
{
    (void)timeout_s, (void)err;
    return MB_OK;
}

int mb_dist_agree(int code) { return code; }
int mb_dist_agree_err(int code, mb_err *err) { (void)err; return code; }
int mb_dist_max_double(double *v, mb_err *err) { (void)v, (void)err; return MB_OK; }
int mb_dist_min_double(double *v, mb_err *err) { (void)v, (void)err; return MB_OK; }

cJSON *mb_dist_gather_json(const cJSON *mine, double timeout_s, mb_err *err)
{
    (void)timeout_s, (void)err;
    cJSON *out = cJSON_CreateArray();
    cJSON_AddItemToArray(out, mine ? cJSON_Duplicate(mine, 1) : cJSON_CreateNull());
    return out;
}

#endif /* MB_HAVE_MPI */

/* ---- the collective watchdog (no MPI calls: it runs on its own thread) ------------ */

static struct {
    atomic_bool armed;
    _Atomic double last; /* mb_now() of the last kick */
    pthread_once_t once;
} wd = { .once = PTHREAD_ONCE_INIT };

/* "2 (vm, pid 4242)" for every rank on this host whose process is gone. */
static int gone_ranks(char *buf, size_t len)
{
    buf[0] = '\0';
    int n = 0;
    for (int r = 0; g.pids && r < g.size; r++) {
        if (r == g.rank || strcmp(mb_dist_host_of(r), self_host()) != 0)
            continue;
        if (kill((pid_t)g.pids[r], 0) == 0 || errno != ESRCH)
            continue;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%d (%s, pid %ld)", used ? ", " : "", r, mb_dist_host_of(r), g.pids[r]);
        n++;
    }
    return n;
}

/* "rank 1 (nodeB), rank 2 (nodeC)": the ranks on other hosts, whose
 * processes this one cannot look at; the suspects when none here is gone. */
static void remote_ranks(char *buf, size_t len)
{
    buf[0] = '\0';
    int n = 0;
    for (int r = 0; r < g.size; r++) {
        if (strcmp(mb_dist_host_of(r), self_host()) == 0)
            continue;
        size_t used = strlen(buf);
        if (n == 8) {
            snprintf(buf + used, len - used, ", ...");
            break;
        }
        snprintf(buf + used, len - used, "%srank %d (%s)", n ? ", " : "", r, mb_dist_host_of(r));
        n++;
    }
}

static void *watchdog_main(void *arg)
{
    (void)arg;
    /* A name a test or an operator can see (each task's comm under /proc/PID/task, top -H):
     * it exists once this rank has reached its first collective case. */
    pthread_setname_np(pthread_self(), "mb-watchdog");
    for (;;) {
        struct timespec ts = { 0, 200 * 1000 * 1000 };
        nanosleep(&ts, NULL);
        double limit = mb_dist_timeout();
        if (!atomic_load(&wd.armed) || mb_now() - atomic_load(&wd.last) < limit)
            continue;
        char gone[512];
        int n = gone_ranks(gone, sizeof gone);
        if (n > 0)
            fprintf(stderr, "mlbench: rank %d (%s): no collective progress for %.0f s (--dist-timeout): rank%s %s "
                            "ended; stopping this rank (results saved so far are kept)\n",
                    g.rank, self_host(), limit, n > 1 ? "s" : "", gone);
        else {
            char others[512];
            remote_ranks(others, sizeof others);
            fprintf(stderr, "mlbench: rank %d (%s): no collective progress for %.0f s (--dist-timeout): a rank on "
                            "another node died or hangs (from here they cannot be told apart: %s); stopping this "
                            "rank (results saved so far are kept)\n",
                    g.rank, self_host(), limit, others);
        }
        fflush(stderr);
        mb_cleanup_run();
        _exit(1); /* the main thread is stuck inside MPI: nothing else can end it */
    }
    return NULL;
}

static void watchdog_start(void)
{
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    /* The watchdog must not take signals meant for the main thread. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    if (pthread_create(&t, &a, watchdog_main, NULL) != 0)
        fprintf(stderr, "mlbench: warning: no collective watchdog (pthread_create failed): a dead rank may "
                        "leave this one waiting\n");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&a);
}

void mb_dist_watchdog_arm(void)
{
    if (!mb_dist_active())
        return;
    atomic_store(&wd.last, mb_now());
    atomic_store(&wd.armed, true);
    pthread_once(&wd.once, watchdog_start);
}

void mb_dist_watchdog_kick(void)
{
    if (atomic_load(&wd.armed))
        atomic_store(&wd.last, mb_now());
}

void mb_dist_watchdog_disarm(void)
{
    atomic_store(&wd.armed, false);
}

/* ---- context and fleet merge (no MPI calls) ------------------------------------ */

static void add_placement(cJSON *dist);
static void report_core_sharing(cJSON *doc, const cJSON *fleet_ranks);

void mb_dist_context_add(cJSON *context)
{
    if (context == NULL)
        return;
    cJSON *d = cJSON_CreateObject();
    cJSON_AddNumberToObject(d, "rank", g.rank);
    cJSON_AddNumberToObject(d, "size", g.size);
    cJSON_AddNumberToObject(d, "local_rank", g.local_rank);
    cJSON_AddNumberToObject(d, "local_size", g.local_size);
    cJSON_AddNumberToObject(d, "nodes", g.nodes);
    cJSON_AddStringToObject(d, "host", self_host());
    cJSON_AddStringToObject(d, "mpi", mb_dist_describe());
    cJSON_AddItemToObject(d, "nics", mb_nics_json());
    cJSON_AddNumberToObject(d, "nic_total_gbps", mb_nic_gbps(NULL, 0));
    add_placement(d);
    cJSON_DeleteItemFromObject(context, "dist");
    cJSON_AddItemToObject(context, "dist", d);
}

/* A rank's ceiling (results.h): what --baseline holds against the
 * baseline's ceiling, so both are the same kind of number. */
static double rate_median(const cJSON *c)
{
    mb_ceiling ce;
    mb_case_ceiling(c, &ce);
    return ce.value;
}

static const char *str_field(const cJSON *c, const char *name)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, name);
    return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* A rank's host: its record's "host" when the runner put one there, else
 * the name exchanged at init. */
static const char *host_for(const cJSON *rec, int rank)
{
    const char *h = str_field(rec, "host");
    return h ? h : mb_dist_host_of(rank);
}

void mb_dist_fleet_merge(cJSON *root_case, const cJSON *rank_cases, double margin)
{
    if (root_case == NULL || !cJSON_IsArray(rank_cases))
        return;
    int n = cJSON_GetArraySize(rank_cases);
    double *rates = malloc(sizeof *rates * (size_t)(n > 0 ? n : 1));
    if (rates == NULL)
        return;
    cJSON *ranks = cJSON_CreateArray();
    int n_rates = 0, first_failed = -1;
    for (int r = 0; r < n; r++) {
        const cJSON *rec = cJSON_GetArrayItem(rank_cases, r);
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r);
        cJSON_AddStringToObject(e, "host", host_for(rec, r));
        const char *status = cJSON_IsObject(rec) ? str_field(rec, "status") : "no answer";
        cJSON_AddStringToObject(e, "status", status ? status : "unknown");
        double rate = rate_median(rec);
        bool ok = status && strcmp(status, "ok") == 0 && isfinite(rate);
        if (ok) {
            cJSON_AddNumberToObject(e, "rate", rate);
            rates[n_rates++] = rate;
        } else {
            cJSON_AddNullToObject(e, "rate");
        }
        const char *reason = cJSON_IsObject(rec) ? str_field(rec, "reason") : NULL;
        if (reason)
            cJSON_AddStringToObject(e, "reason", reason);
        if (first_failed < 0 && (!status || strcmp(status, "ok") != 0) &&
            (!status || strcmp(status, "skipped") != 0))
            first_failed = r;
        cJSON_AddItemToArray(ranks, e);
    }

    cJSON *fleet = cJSON_CreateObject();
    cJSON *flagged = cJSON_CreateArray();
    double median = n_rates ? mb_median(rates, n_rates) : NAN;
    if (n_rates) {
        cJSON_AddNumberToObject(fleet, "median", median);
        cJSON_AddNumberToObject(fleet, "min", mb_min(rates, n_rates));
        cJSON_AddNumberToObject(fleet, "max", mb_max(rates, n_rates));
    } else {
        cJSON_AddNullToObject(fleet, "median");
        cJSON_AddNullToObject(fleet, "min");
        cJSON_AddNullToObject(fleet, "max");
    }
    cJSON_AddNumberToObject(fleet, "margin", margin);
    cJSON_AddNumberToObject(fleet, "ranks_ok", n_rates);
    for (int r = 0; n_rates && median > 0 && r < n; r++) {
        const cJSON *rec = cJSON_GetArrayItem(rank_cases, r);
        const char *status = cJSON_IsObject(rec) ? str_field(rec, "status") : NULL;
        double rate = rate_median(rec);
        if (!status || strcmp(status, "ok") != 0 || !isfinite(rate))
            continue;
        double below = (median - rate) / median;
        if (below > margin) {
            cJSON *f = cJSON_CreateObject();
            cJSON_AddNumberToObject(f, "rank", r);
            cJSON_AddStringToObject(f, "host", host_for(rec, r));
            cJSON_AddNumberToObject(f, "rate", rate);
            cJSON_AddNumberToObject(f, "below_median", below);
            cJSON_AddItemToArray(flagged, f);
        }
    }
    cJSON_AddItemToObject(fleet, "flagged", flagged);
    free(rates);

    /* A rank that failed (verification, error, no answer) fails the merged
     * case: rank 0's own success must not hide it. */
    const char *root_status = str_field(root_case, "status");
    if (first_failed >= 0 && root_status && strcmp(root_status, "ok") == 0) {
        const cJSON *rec = cJSON_GetArrayItem(rank_cases, first_failed);
        const char *reason = cJSON_IsObject(rec) ? str_field(rec, "reason") : NULL;
        char text[MB_ERR_LEN];
        snprintf(text, sizeof text, "rank %d (%s) %s: %s", first_failed, host_for(rec, first_failed),
                 cJSON_IsObject(rec) ? "failed" : "did not answer", reason ? reason : "no reason given");
        cJSON_ReplaceItemInObjectCaseSensitive(root_case, "status", cJSON_CreateString("failed"));
        cJSON_DeleteItemFromObjectCaseSensitive(root_case, "reason");
        cJSON_AddStringToObject(root_case, "reason", text);
    }
    cJSON_DeleteItemFromObjectCaseSensitive(root_case, "ranks");
    cJSON_DeleteItemFromObjectCaseSensitive(root_case, "fleet");
    cJSON_AddItemToObject(root_case, "ranks", ranks);
    cJSON_AddItemToObject(root_case, "fleet", fleet);
}

/* ---- contexts and the fleet summary ------------------------------------------------ */

void mb_dist_add_contexts(cJSON *doc, const char *disk_dir, double timeout_s)
{
    cJSON *ctx = cJSON_GetObjectItemCaseSensitive(doc, "context");
    if (g.rank == 0 && cJSON_IsObject(ctx))
        mb_dist_context_add(ctx);
    if (g.size == 1)
        return;
    /* Every rank's own context, rank 0's too (collected again: the document's
     * copy may already carry run-specific fields). */
    cJSON *mine = mb_context_collect(disk_dir);
    mb_dist_context_add(mine);
    mb_err err = { 0 };
    cJSON *all = mb_dist_gather_json(mine, timeout_s, &err);
    cJSON_Delete(mine);
    if (err.code != MB_OK) {
        cJSON_Delete(all);
        mb_dist_abort(err.msg);
    }
    if (g.rank != 0 || doc == NULL) {
        cJSON_Delete(all);
        return;
    }
    cJSON *ranks = cJSON_CreateArray();
    int n = cJSON_GetArraySize(all);
    for (int r = 0; r < n; r++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", r);
        cJSON_AddStringToObject(e, "host", mb_dist_host_of(r));
        cJSON_AddItemToObject(e, "context", cJSON_DetachItemFromArray(all, 0));
        cJSON_AddItemToArray(ranks, e);
    }
    cJSON_Delete(all);
    report_core_sharing(doc, ranks);
    cJSON_DeleteItemFromObjectCaseSensitive(doc, "fleet_ranks");
    cJSON_AddItemToObject(doc, "fleet_ranks", ranks);
}

static double num_of(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

void mb_dist_fleet_print(FILE *out, const cJSON *doc)
{
    const cJSON *c;
    bool header = false;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "cases"))
    {
        const cJSON *fleet = cJSON_GetObjectItemCaseSensitive(c, "fleet");
        const cJSON *ranks = cJSON_GetObjectItemCaseSensitive(c, "ranks");
        if (!cJSON_IsObject(fleet))
            continue;
        if (!header) {
            fprintf(out, "\nfleet: rate over ranks (median, min, max); ranks more than %.0f%% below "
                         "the median are flagged\n",
                    100 * num_of(fleet, "margin"));
            header = true;
        }
        const char *id = str_field(c, "id"), *unit = str_field(c, "rate_unit");
        double med = num_of(fleet, "median");
        if (!isfinite(med)) {
            fprintf(out, "  %s: no rank measured it\n", id ? id : "?");
            continue;
        }
        char m[32], lo[32], hi[32];
        mb_fmt_number(m, sizeof m, med);
        mb_fmt_number(lo, sizeof lo, num_of(fleet, "min"));
        mb_fmt_number(hi, sizeof hi, num_of(fleet, "max"));
        fprintf(out, "  %s: median %s, min %s, max %s%s%s over %.0f of %d ranks\n", id ? id : "?", m, lo, hi,
                unit ? " " : "", unit ? unit : "", num_of(fleet, "ranks_ok"), cJSON_GetArraySize(ranks));
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(fleet, "flagged"))
        {
            const char *host = str_field(f, "host");
            char rate[32];
            mb_fmt_number(rate, sizeof rate, num_of(f, "rate"));
            fprintf(out, "    FLAGGED rank %.0f (%s): %s%s%s, %.1f%% below the median\n", num_of(f, "rank"),
                    host ? host : "?", rate, unit ? " " : "", unit ? unit : "", 100 * num_of(f, "below_median"));
        }
    }
}

/* ---- placement: CPUs shared by ranks of one machine ---------------------------- */

/* "0-3,8" for a CPU set; returns the number of CPUs. */
static int cpu_list_text(const cpu_set_t *set, char *out, size_t len)
{
    out[0] = '\0';
    int count = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        size_t used = strlen(out);
        if (last == c)
            snprintf(out + used, len - used, "%s%d", used ? "," : "", c);
        else
            snprintf(out + used, len - used, "%s%d-%d", used ? "," : "", c, last);
        count += last - c + 1;
        c = last;
    }
    return count;
}

/* Parses "0-3,8" into a CPU set; -1 on a malformed list. */
static int cpu_list_parse(const char *text, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *p = text;
    int count = 0;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0 || a >= CPU_SETSIZE)
            return -1;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1 || b < a || b >= CPU_SETSIZE)
                return -1;
            p = end;
        }
        for (long c = a; c <= b; c++)
            CPU_SET((int)c, set);
        count += (int)(b - a + 1);
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    return count;
}

/* The CPUs this rank may run on and the machine it runs on: the kernel's
 * boot id, the same for every container or namespace "node" of one machine,
 * whatever their host names. */
static void add_placement(cJSON *dist)
{
    cpu_set_t set;
    char text[4096], boot[64];
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        cJSON_AddNumberToObject(dist, "cpu_affinity_count", cpu_list_text(&set, text, sizeof text));
        cJSON_AddStringToObject(dist, "cpu_affinity", text);
    } else {
        cJSON_AddNullToObject(dist, "cpu_affinity_count");
        cJSON_AddNullToObject(dist, "cpu_affinity");
    }
    if (mb_boot_id(boot, sizeof boot))
        cJSON_AddStringToObject(dist, "machine_id", boot);
    else
        cJSON_AddNullToObject(dist, "machine_id");
}

typedef struct placed {
    int rank;
    const char *host, *machine;
    cpu_set_t cpus;
    int count, online; /* CPUs it may use; the machine's online CPUs */
} placed;

/* Reads rank r's placement from a fleet_ranks entry; false without one. */
static bool placement_of(const cJSON *entry, placed *p)
{
    const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(entry, "context");
    const cJSON *dist = cJSON_GetObjectItemCaseSensitive(ctx, "dist");
    const char *list = str_field(dist, "cpu_affinity");
    const cJSON *rank = cJSON_GetObjectItemCaseSensitive(entry, "rank");
    p->machine = str_field(dist, "machine_id");
    p->host = str_field(entry, "host");
    if (!list || !p->machine || !cJSON_IsNumber(rank))
        return false;
    p->rank = rank->valueint;
    if (!p->host)
        p->host = "?";
    p->count = cpu_list_parse(list, &p->cpus);
    const cJSON *online = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ctx, "cpu"),
                                                          "logical_cpus");
    p->online = cJSON_IsNumber(online) ? online->valueint : p->count;
    return p->count > 0;
}

/* One finding for the ranks of one machine: more ranks than the CPUs they
 * may use together, or two ranks bound to overlapping CPUs. */
static cJSON *machine_finding(const placed *all, int n, const char *machine)
{
    cpu_set_t uni;
    CPU_ZERO(&uni);
    int ranks = 0, a = -1, b = -1;
    for (int i = 0; i < n; i++) {
        if (strcmp(all[i].machine, machine) != 0)
            continue;
        CPU_OR(&uni, &uni, &all[i].cpus);
        ranks++;
        /* Two bound ranks (fewer CPUs than the machine has) that overlap.
         * Unbound ranks overlap by design and the scheduler spreads them:
         * for those only too few CPUs in all (below) is a finding. */
        for (int j = 0; j < i && a < 0; j++) {
            cpu_set_t both;
            CPU_AND(&both, &all[i].cpus, &all[j].cpus);
            if (strcmp(all[j].machine, machine) == 0 && CPU_COUNT(&both) > 0 &&
                all[i].count < all[i].online && all[j].count < all[j].online)
                a = j, b = i;
        }
    }
    int cpus = CPU_COUNT(&uni);
    if (ranks < 2 || (ranks <= cpus && a < 0))
        return NULL;
    cJSON *f = cJSON_CreateObject();
    cJSON_AddStringToObject(f, "machine_id", machine);
    cJSON *list = cJSON_AddArrayToObject(f, "ranks");
    char hosts[512] = "", text[4096];
    for (int i = 0; i < n; i++) {
        if (strcmp(all[i].machine, machine) != 0)
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "rank", all[i].rank);
        cJSON_AddStringToObject(e, "host", all[i].host);
        cpu_list_text(&all[i].cpus, text, sizeof text);
        cJSON_AddStringToObject(e, "cpus", text);
        cJSON_AddItemToArray(list, e);
        if (!strstr(hosts, all[i].host)) {
            size_t used = strlen(hosts);
            snprintf(hosts + used, sizeof hosts - used, "%s%s", used ? ", " : "", all[i].host);
        }
    }
    cpu_list_text(&uni, text, sizeof text);
    char why[1024];
    if (a >= 0) /* the binding is the cause to fix: say so first */
        snprintf(why, sizeof why, "ranks %d (%s) and %d (%s) run on one machine and are bound to overlapping CPUs: "
                                  "they take turns on them (bind each rank to its own cores, or --bind-to none)",
                 all[a].rank, all[a].host, all[b].rank, all[b].host);
    else
        snprintf(why, sizeof why, "%d ranks on one machine (%s) may run on %d CPU%s (%.200s) between them: they take "
                                  "turns, and every time that depends on another rank waits for it",
                 ranks, hosts, cpus, cpus == 1 ? "" : "s", text);
    cJSON_AddStringToObject(f, "reason", why);
    return f;
}

cJSON *mb_dist_core_sharing(const cJSON *fleet_ranks)
{
    int n = cJSON_GetArraySize(fleet_ranks);
    placed *all = calloc((size_t)(n > 0 ? n : 1), sizeof *all);
    cJSON *out = cJSON_CreateArray();
    if (all == NULL)
        return out;
    int m = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, fleet_ranks)
        if (placement_of(e, &all[m]))
            m++;
    for (int i = 0; i < m; i++) {
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(all[j].machine, all[i].machine) == 0;
        cJSON *f = seen ? NULL : machine_finding(all, m, all[i].machine);
        if (f)
            cJSON_AddItemToArray(out, f);
    }
    free(all);
    return out;
}

static char core_sharing_note[1024];

const char *mb_dist_core_sharing_note(void)
{
    return core_sharing_note;
}

/* Rank 0, after gathering every rank's context: the findings go into the
 * document's context.dist.core_sharing, on stderr, and (the first one) into
 * the notes of the collective cases. */
static void report_core_sharing(cJSON *doc, const cJSON *fleet_ranks)
{
    cJSON *found = mb_dist_core_sharing(fleet_ranks);
    cJSON *dist = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "context"), "dist");
    if (cJSON_GetArraySize(found) == 0 || !cJSON_IsObject(dist)) {
        cJSON_Delete(found);
        return;
    }
    const cJSON *f;
    cJSON_ArrayForEach(f, found)
    {
        const char *why = str_field(f, "reason");
        fprintf(stderr, "mlbench: warning: %s\n", why ? why : "ranks share CPUs");
        if (!core_sharing_note[0] && why)
            snprintf(core_sharing_note, sizeof core_sharing_note, "CPUs shared: %s", why);
    }
    cJSON_AddItemToObject(dist, "core_sharing", found);
}
