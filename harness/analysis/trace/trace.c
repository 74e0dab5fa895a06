/* trace.c: streaming reader of PyTorch profiler (Kineto) Chrome traces.
 *
 * The file is read through zlib's gzread (which also passes plain .json
 * through unchanged) in chunks and fed to json_stream's event parser: no DOM
 * of traceEvents is ever built, and the only per-event state is one fixed
 * `event` record that is reset when the next event starts. Each finished
 * event is folded at once into tr_state (trace.h), whose growth is per GPU
 * event / launch call / sync call, never per JSON byte. The key order inside
 * an event is free in JSON, so fields are gathered first and the event is
 * interpreted at its closing brace.
 *
 * Timestamps are microseconds, often fractional ("1712195495505543.2"); a
 * double cannot hold such a value to the nanosecond, so numbers are read
 * from their text straight into int64 nanoseconds. */
#include "trace.h"

#include "formulas.h"
#include "grow.h"
#include "json_stream.h"
#include "vocabulary.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

enum {
    CHUNK = 1 << 18,       /* the most read and parsed at once */
    FIRST_CHUNK = 1 << 14, /* the first read; each read doubles it up to CHUNK */
    ZBUF = 1 << 17,        /* zlib's input buffer for files at least this big */
    NAME_CAP = 4096,
    CAPTURE_MAX_NODES = 200000, /* deviceProperties/distributedInfo are small */
    CAPTURE_MAX_DEPTH = 32,
};

/* Bounds on hostile input (docs/reliability.md, "Hostile inputs"). Real
 * Kineto traces nest under 10 levels, hold strings of a few KB (kernel
 * names, shapes) and compress 10-25x with gzip. */
#define MAX_NESTING 1000              /* the same limit as cJSON's for the other readers */
#define MAX_TOKEN_BYTES (16ULL << 20) /* a token cut by a read is kept whole in the buffer */
#define MAX_GZIP_RATIO 100            /* 4x the most seen (23x); checked past MIN_BOMB_BYTES */
#define MIN_BOMB_BYTES (256ULL << 20)

enum cat {
    CAT_NONE = 0,
    CAT_KERNEL,
    CAT_MEMCPY,
    CAT_MEMSET,
    CAT_RUNTIME,
    CAT_SYNC,
    CAT_CPU_OP,
    CAT_ANNOTATION,
    CAT_TRACE, /* the profiler's own span, "PyTorch Profiler (0)" */
    CAT_RANGE, /* cuda_profiler_range: a kernel under the CUPTI range profiler */
    CAT_OTHER_RUNTIME, /* another accelerator's runtime calls: mtia_runtime, xpu_runtime, ... */
    CAT_OVERHEAD, /* CUPTI's overhead records: module loading, the profiler's buffers */
    CAT_GPU_OTHER, /* another event of a GPU's lane: gpu_user_annotation (a record_function's span there) */
    CAT_OTHER,
};

enum top_key { TK_NONE = 0, TK_EVENTS, TK_DEVPROPS, TK_DISTINFO, TK_BASETIME, TK_SCHEMA, TK_SHAPES, TK_NODES };
enum ev_key { EK_NONE = 0, EK_PH, EK_CAT, EK_NAME, EK_PID, EK_TID, EK_TS, EK_DUR, EK_ARGS };
enum arg_key {
    AK_NONE = 0,
    AK_DEVICE,
    AK_STREAM,
    AK_CORR,
    AK_BYTES,
    AK_KIND,
    AK_COLL,
    AK_IN_NELEMS,
    AK_OUT_NELEMS,
    AK_GROUP,
    AK_DTYPE,
    AK_DIMS,
    AK_TYPES,
    AK_CONCRETE,
    AK_GRID,
    AK_BLOCK,
    AK_REGS,
    AK_SMEM,
    AK_EXT_ID,
    AK_SEQ,
    AK_FWD_TID,
    AK_LABELS,
};

enum have {
    H_PH = 1u << 0,
    H_NAME = 1u << 1,
    H_PID = 1u << 2,
    H_TID = 1u << 3,
    H_TS = 1u << 4,
    H_DUR = 1u << 5,
    H_DEVICE = 1u << 6,
    H_STREAM = 1u << 7,
    H_CORR = 1u << 8,
    H_BYTES = 1u << 9,
    H_KIND = 1u << 10,
    H_COLL = 1u << 11,
    H_IN = 1u << 12,
    H_OUT = 1u << 13,
    H_GROUP = 1u << 14,
    H_DTYPE = 1u << 15,
    H_SEQ = 1u << 17,
    H_PID_NUM = 1u << 16,
    H_LABELS = 1u << 18,
};

enum scalar { SC_NUM, SC_STR, SC_BOOL, SC_NULL };

typedef struct event {
    unsigned have;
    char ph;
    int cat;
    size_t name_len;
    int64_t pid, tid, ts, dur;
    int64_t device, stream, corr, group;
    double bytes, in_nelems, out_nelems;
    char coll[24], dtype[16], kind[24], labels[16];
    tr_shapes sh;
    int64_t grid[3], block[3], regs, smem, ext_id; /* for the event view; -1/0 = not recorded */
    int64_t seq, fwd_tid; /* autograd "Sequence number", "Fwd thread id"; -1 = not recorded */
    int cur_tensor;
    bool in_list_elem; /* inside one shape of a TensorList input */
    double list_prod;  /* ... its element count so far */
    char name[NAME_CAP];
} event;

typedef struct parser {
    tr_state *st;
    int depth;
    bool top_seen, top_is_array, saw_events;
    bool saw_nodes; /* a top-level "nodes" array: an execution trace */
    int top_key;
    int events_depth; /* depth whose values are the events; 0 = not inside */
    int ev_depth;     /* depth whose values are an event's fields; 0 = none */
    int ev_key, arg_key;
    bool in_args, arg_array, dims_inner;
    int arg_elem;
    /* Capture of small top-level objects into cJSON. */
    cJSON *cap_stack[CAPTURE_MAX_DEPTH];
    int cap_n, cap_skip_depth, cap_target;
    long long cap_nodes;
    char cap_key[256];
    unsigned long long tokens; /* JSON tokens seen so far: a string too long for memory shows as none */
    /* Errors raised inside callbacks (the parse is cancelled). */
    char fail[512];
    int fail_code;
    event ev;
} parser;

/* ---- small helpers ------------------------------------------------------- */

static bool fail(parser *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(parser *p, int code, const char *fmt, ...)
{
    if (p->fail_code == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->fail, sizeof p->fail, fmt, ap);
        va_end(ap);
        p->fail_code = code;
    }
    return false;
}

#define KEY_IS(s, n, lit) ((n) == sizeof(lit) - 1 && memcmp((s), (lit), sizeof(lit) - 1) == 0)

/* Microseconds as text ("123", "123.4567", "-1.5e3") to nanoseconds,
 * rounding the 4th decimal. Exponent forms go through strtod. */
static bool parse_ns(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    int64_t ip = 0;
    int nd = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (ip > INT64_MAX / 10000)
            return false;
        ip = ip * 10 + (s[i++] - '0');
        nd++;
    }
    int64_t frac = 0;
    int fd = 0;
    bool up = false;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (fd < 3)
                frac = frac * 10 + (s[i] - '0');
            else if (fd == 3)
                up = s[i] >= '5';
            fd++;
            i++;
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        char buf[64];
        if (n >= sizeof buf)
            return false;
        memcpy(buf, s, n);
        buf[n] = '\0';
        char *end;
        double v = strtod(buf, &end) * 1000.0;
        if (*end != '\0' || !isfinite(v) || fabs(v) > 9e18)
            return false;
        *out = llround(v);
        return true;
    }
    if (i != n || (nd == 0 && fd == 0))
        return false;
    for (int k = fd < 3 ? fd : 3; k < 3; k++)
        frac *= 10;
    int64_t v = ip * 1000 + frac + (up ? 1 : 0);
    *out = neg ? -v : v;
    return true;
}

static bool parse_i64(const char *s, size_t n, int64_t *out)
{
    int64_t ns;
    if (!parse_ns(s, n, &ns))
        return false;
    *out = ns / 1000; /* integer part (fractions truncated) */
    return true;
}

static bool parse_double(const char *s, size_t n, double *out)
{
    char buf[64];
    if (n == 0 || n >= sizeof buf)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (*end != '\0' || !isfinite(v))
        return false;
    *out = v;
    return true;
}

static void copy_str(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        n = cap - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
}

static int64_t hash_text(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return (int64_t)(h | (1ULL << 62)); /* keeps string ids apart from small numbers */
}

/* Kineto's categories; the legacy autograd profiler's ("Kernel", "Memcpy",
 * "Runtime", "Operator") read the same way. */
static int cat_of(const char *s, size_t n)
{
    if (KEY_IS(s, n, "kernel") || KEY_IS(s, n, "Kernel"))
        return CAT_KERNEL;
    if (KEY_IS(s, n, "cpu_op") || KEY_IS(s, n, "Operator"))
        return CAT_CPU_OP;
    if (KEY_IS(s, n, "cuda_runtime") || KEY_IS(s, n, "cuda_driver") || KEY_IS(s, n, "Runtime"))
        return CAT_RUNTIME;
    if (KEY_IS(s, n, "gpu_memcpy") || KEY_IS(s, n, "Memcpy"))
        return CAT_MEMCPY;
    if (KEY_IS(s, n, "gpu_memset") || KEY_IS(s, n, "Memset"))
        return CAT_MEMSET;
    if (KEY_IS(s, n, "user_annotation"))
        return CAT_ANNOTATION;
    if (KEY_IS(s, n, "cuda_sync"))
        return CAT_SYNC;
    if (KEY_IS(s, n, "Trace"))
        return CAT_TRACE;
    if (KEY_IS(s, n, "cuda_profiler_range"))
        return CAT_RANGE;
    if (KEY_IS(s, n, "overhead") || KEY_IS(s, n, "Overhead"))
        return CAT_OVERHEAD;
    if (n > 8 && memcmp(s + n - 8, "_runtime", 8) == 0)
        return CAT_OTHER_RUNTIME;
    if (n > 4 && memcmp(s, "gpu_", 4) == 0)
        return CAT_GPU_OTHER;
    return CAT_OTHER;
}

static int64_t thread_of(const event *e)
{
    int64_t pid = e->have & H_PID ? e->pid : 0, tid = e->have & H_TID ? e->tid : 0;
    return (int64_t)((uint64_t)pid * 1000003ULL ^ (uint64_t)tid);
}

/* ---- folding one finished event into the state --------------------------- */

static tr_device *device_slot(tr_state *st, int64_t id, parser *p)
{
    for (int i = 0; i < st->n_devices; i++)
        if (st->devices[i].id == id)
            return &st->devices[i];
    tr_device *d = realloc(st->devices, sizeof *d * (size_t)(st->n_devices + 1));
    if (d == NULL) {
        fail(p, MB_ESYS, "out of memory");
        return NULL;
    }
    st->devices = d;
    d = &st->devices[st->n_devices++];
    memset(d, 0, sizeof *d);
    d->id = id;
    return d;
}

static void note_stream(tr_device *d, int64_t stream)
{
    for (int i = 0; i < d->n_streams; i++)
        if (d->streams[i] == stream)
            return;
    if (d->n_streams < TR_MAX_STREAMS)
        d->streams[d->n_streams++] = stream;
    else
        d->streams_overflow = true;
}

_Static_assert(TR_MAX_CLASSES <= TR_EV_CLASS + 1, "a GPU event's class bits hold every class");

/* flags: TR_EV_TF32, TR_EV_LAYOUT, TR_EV_FP32, TR_EV_SMALL_GRID */
static bool push_gpu_event(parser *p, tr_device *d, int cls, int elem_bytes, int flags)
{
    const event *e = &p->ev;
    if (!mb_grow((void **)&d->ev, &d->cap_ev, (d->n_ev + 1) * TR_EV_WORDS, sizeof(int64_t)))
        return fail(p, MB_ESYS, "out of memory (%zu GPU events)", d->n_ev);
    int64_t dur = e->dur < TR_DUR_MAX ? e->dur : TR_DUR_MAX;
    int64_t *w = d->ev + d->n_ev * TR_EV_WORDS;
    w[0] = e->ts;
    w[1] = (int64_t)(((uint64_t)dur << TR_EV_DUR_SHIFT) | ((uint64_t)elem_bytes & 0xf) << 8 |
                     ((uint64_t)flags & (TR_EV_TF32 | TR_EV_LAYOUT | TR_EV_FP32 | TR_EV_SMALL_GRID)) |
                     ((uint64_t)cls & TR_EV_CLASS));
    w[2] = e->have & H_CORR ? e->corr : -1;
    d->n_ev++;
    d->class_ns[cls] += e->dur;
    d->class_count[cls]++;
    note_stream(d, e->have & H_STREAM ? e->stream : e->have & H_TID ? e->tid : -1);
    return true;
}

/* deviceProperties' numSms of device id (Kineto writes deviceProperties
 * before traceEvents), -1 unknown. */
static int sms_of(const tr_state *st, int64_t id)
{
    const cJSON *prop;
    cJSON_ArrayForEach(prop, st->device_props)
    {
        const cJSON *i = cJSON_GetObjectItemCaseSensitive(prop, "id");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(prop, "numSms");
        /* in range before the cast: a hostile id is no integer */
        if (cJSON_IsNumber(i) && i->valuedouble >= 0 && i->valuedouble < 1e15 && (int64_t)i->valuedouble == id &&
            cJSON_IsNumber(n))
            return n->valuedouble >= 1 && n->valuedouble <= 1e6 ? (int)n->valuedouble : -1;
    }
    /* one GPU listed: the GPU, whatever its id (ROCm numbers its agents from 1 or 2) */
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(st->device_props, 0), "numSms");
    if (cJSON_GetArraySize(st->device_props) == 1 && cJSON_IsNumber(n))
        return n->valuedouble >= 1 && n->valuedouble <= 1e6 ? (int)n->valuedouble : -1;
    return -1;
}

/* A kernel's function name, for a reader: "void at::native::(anonymous
 * namespace)::GammaBetaBackwardCUDAKernelTemplate<float, ...>(...)" reads
 * "GammaBetaBackwardCUDAKernelTemplate"; a name without a namespace or
 * template ("sm80_xmma_gemm_...") is kept, to 63 characters. */
static void kernel_short_name(const char *name, size_t len, char *out, size_t cap)
{
    static const char anon[] = "(anonymous namespace)::";
    const char *s = name, *end = name + len, *a;
    while ((a = memmem(s, (size_t)(end - s), anon, sizeof anon - 1)) != NULL && a == s)
        s += sizeof anon - 1;
    if (end - s > 5 && strncmp(s, "void ", 5) == 0)
        s += 5;
    const char *stop = s, *last = s;
    while (stop < end && *stop != '<' && *stop != '(') {
        if (stop + 1 < end && stop[0] == ':' && stop[1] == ':')
            last = stop + 2;
        stop++;
        if (stop < end && *stop == '(' && stop + sizeof anon - 1 <= end &&
            strncmp(stop, anon, sizeof anon - 1) == 0) { /* at::native::(anonymous namespace)::kernel */
            stop += sizeof anon - 1;
            last = stop;
        }
    }
    /* CUTLASS's kernels are one template, cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_tn_align1>: the
     * argument names the kernel */
    size_t n = (size_t)(stop - last);
    if (stop < end && *stop == '<' && n >= 6 && strncmp(last, "Kernel", 6) == 0 &&
        strspn(last + 6, "0123456789") == n - 6) {
        const char *arg = stop + 1, *argend = arg;
        while (argend < end && *argend != ',' && *argend != '>' && *argend != '<')
            argend++;
        for (const char *c = arg; c + 1 < argend; c++)
            if (c[0] == ':' && c[1] == ':')
                arg = c + 2;
        if (argend > arg) {
            last = arg;
            stop = argend;
        }
    }
    snprintf(out, cap, "%.*s", (int)(stop - last < 63 ? stop - last : 63), last);
}

static tr_device *gpu_device(parser *p)
{
    const event *e = &p->ev;
    int64_t id;
    if (e->have & H_DEVICE)
        id = e->device;
    else if (e->have & H_PID_NUM)
        id = e->pid; /* Kineto puts GPU lanes on pid = device index */
    else {
        p->st->gpu_events_without_device++;
        id = -1;
    }
    return device_slot(p->st, id, p);
}

static int elem_size(const char *dtype)
{
    static const struct {
        const char *name;
        int size;
    } sizes[] = {
        {"float", 4},   {"float32", 4}, {"half", 2},    {"float16", 2}, {"bfloat16", 2},
        {"double", 8},  {"float64", 8}, {"int", 4},     {"int32", 4},   {"long", 8},
        {"int64", 8},   {"char", 1},    {"int8", 1},    {"byte", 1},    {"uint8", 1},
        {"bool", 1},    {"short", 2},   {"int16", 2},   {"float8_e4m3fn", 1},
        {"float8_e5m2", 1},
    };
    char low[16];
    size_t n = strlen(dtype);
    if (n >= sizeof low)
        return 0;
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)(dtype[i] >= 'A' && dtype[i] <= 'Z' ? dtype[i] + 32 : dtype[i]);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (strcmp(low, sizes[i].name) == 0)
            return sizes[i].size;
    return 0;
}

/* Collective from the "Collective name" arg or, without args, the kernel
 * name (ncclKernel_AllReduce_RING_LL_Sum_float, ncclDevKernel_SendRecv). */
static void collective_of(const event *e, char *out, size_t cap)
{
    const mb_coll_kind *k = mb_coll_kind_in(e->have & H_COLL ? e->coll : e->name);
    snprintf(out, cap, "%s", k ? k->name : "unknown");
}

/* How nccl-tests sizes the message of a collective named `name` (what
 * collective_of wrote); an unknown kind by the larger buffer. */
static mb_coll_message message_of(const char *name)
{
    const mb_coll_kind *k = mb_coll_kind_find(name);
    return k ? k->message : MB_MSG_LARGER;
}

static const char *coll_dtype(const char *d)
{
    char low[16];
    size_t n = strlen(d);
    if (n >= sizeof low)
        return d;
    for (size_t i = 0; i <= n; i++)
        low[i] = (char)(d[i] >= 'A' && d[i] <= 'Z' ? d[i] + 32 : d[i]);
    if (strcmp(low, "float") == 0 || strcmp(low, "float32") == 0)
        return "float";
    if (strcmp(low, "half") == 0 || strcmp(low, "float16") == 0)
        return "half";
    if (strcmp(low, "bfloat16") == 0)
        return "bf16";
    if (strcmp(low, "double") == 0 || strcmp(low, "float64") == 0)
        return "double";
    return d;
}

/* The event as a tr_xfer record (false: out of memory). */
static bool push_xfer(parser *p, const tr_device *d, int kind, double bytes, int dir, int mem, int coll)
{
    tr_state *st = p->st;
    if (!mb_grow((void **)&st->xfers, &st->cap_xfers, st->n_xfers + 1, sizeof *st->xfers))
        return fail(p, MB_ESYS, "out of memory");
    st->xfers[st->n_xfers++] = (tr_xfer){.ts = p->ev.ts, .dur = p->ev.dur, .bytes = bytes,
                                         .device = (int)(d - st->devices), .coll = (short)coll,
                                         .kind = (signed char)kind, .dir = (signed char)dir,
                                         .mem = (signed char)mem};
    return true;
}

/* A collective kernel's message in bytes as nccl-tests count them: all-gather
 * the full output buffer, reduce-scatter the full input, the others the
 * (equal) input; -1 without a dtype and a count. */
static double coll_event_bytes(const event *e, const char *name)
{
    int es = e->have & H_DTYPE ? elem_size(e->dtype) : 0;
    double nel = -1;
    mb_coll_message msg = message_of(name);
    if (msg == MB_MSG_OUTPUT && e->have & H_OUT)
        nel = e->out_nelems;
    else if (e->have & H_IN)
        nel = e->in_nelems;
    if (e->have & H_IN && e->have & H_OUT && msg == MB_MSG_LARGER && e->out_nelems > nel)
        nel = e->out_nelems;
    return es > 0 && nel >= 0 && nel * es <= TR_MAX_EVENT_BYTES ? nel * es : -1;
}

/* What one rank's link carries for a collective kernel (tr_event_view's
 * link_bytes): the message x the busbw factor of its kind and group; a
 * group not recorded takes the factor's limit (2 for an all-reduce, 1 for
 * the others), an upper bound. -1 unknown. */
static double coll_link_bytes(const event *e)
{
    char name[24];
    collective_of(e, name, sizeof name);
    double bytes = coll_event_bytes(e, name);
    mb_collective kind;
    if (bytes < 0)
        return -1;
    if (!mb_coll_from_name(name, &kind))
        return bytes;
    int ranks = e->have & H_GROUP && e->group > 0 && e->group <= INT_MAX ? (int)e->group : INT_MAX;
    return bytes * mb_busbw_factor(kind, ranks);
}

static bool fold_collective(parser *p, const tr_device *d)
{
    tr_state *st = p->st;
    const event *e = &p->ev;
    char name[24];
    collective_of(e, name, sizeof name);
    const char *dtype = e->have & H_DTYPE ? coll_dtype(e->dtype) : "";
    tr_coll_stat *c = NULL;
    for (int i = 0; i < st->n_colls; i++)
        if (strcmp(st->colls[i].name, name) == 0 && strcmp(st->colls[i].dtype, dtype) == 0)
            c = &st->colls[i];
    if (c == NULL) {
        if (st->n_colls == TR_MAX_COLLS)
            c = &st->colls[TR_MAX_COLLS - 1]; /* folded into the last kind */
        else {
            c = &st->colls[st->n_colls++];
            memset(c, 0, sizeof *c);
            snprintf(c->name, sizeof c->name, "%s", name);
            snprintf(c->dtype, sizeof c->dtype, "%s", dtype);
        }
    }
    if (e->have & H_GROUP && e->group > c->ranks && e->group <= INT_MAX)
        c->ranks = (int)e->group;
    double bytes = coll_event_bytes(e, name);
    mb_tr_coll_add(st, c, e->dur, bytes);
    return push_xfer(p, d, TR_XFER_COLL, bytes, 0, 0, (int)(c - st->colls));
}

static void copy_kind(const event *e, int *dir, int *mem)
{
    /* "Memcpy HtoD (Pageable -> Device)", "Memcpy DtoH (Device -> Pinned)",
     * "Memcpy DtoD (Device -> Device)", "Memcpy PtoP (Device -> Device)";
     * ROCm: "Memcpy HtoD (Host -> Device)" with args kind "HtoD". */
    static const char *const dirs[] = {"HtoD", "DtoH", "DtoD", "PtoP"};
    *dir = TR_DIR_UNKNOWN;
    for (int i = 0; i < 4; i++)
        if (strstr(e->name, dirs[i]) || (e->have & H_KIND && strstr(e->kind, dirs[i])))
            *dir = i;
    *mem = TR_MEM_UNKNOWN;
    const char *paren = strchr(e->name, '(');
    if (paren) {
        if (strstr(paren, "Pageable"))
            *mem = TR_MEM_PAGEABLE;
        else if (strstr(paren, "Pinned"))
            *mem = TR_MEM_PINNED;
        else if (strstr(paren, "Device -> Device"))
            *mem = TR_MEM_DEVICE;
    }
    if (*mem == TR_MEM_UNKNOWN && (*dir == TR_DIR_D2D || *dir == TR_DIR_P2P))
        *mem = TR_MEM_DEVICE;
}

/* The event's byte count, -1 when it has none usable. */
static double copy_bytes(const event *e)
{
    return e->have & H_BYTES && e->bytes >= 0 && e->bytes <= TR_MAX_EVENT_BYTES ? (double)e->bytes : -1;
}

void mb_tr_coll_add(tr_state *st, tr_coll_stat *c, int64_t dur, double bytes)
{
    c->calls++;
    c->ns += dur;
    if (bytes >= 0) {
        c->sized++;
        c->bytes += bytes;
        c->sized_ns += dur;
    } else
        st->nccl_kernels_unsized++;
}

void mb_tr_copy_add(tr_copy_stat *c, int64_t dur, double bytes)
{
    c->count++;
    c->ns += dur;
    if (bytes >= 0) {
        c->sized++;
        c->bytes += bytes;
        c->sized_ns += dur;
    }
}

static void add_named_call(tr_named_table *t, const char *name, int64_t dur);

static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h ? h : 1; /* 0 marks a free slot */
}

/* Tables by name hash (st->first_kernels, st->op_calls): open addressing,
 * cap a power of 2, each entry of `size` bytes starting with its uint64_t
 * hash (0: a free slot). The slot of h: its entry, or the free one it
 * takes. */
static void *hash_slot(void *table, size_t size, size_t cap, uint64_t h)
{
    size_t i = (size_t)h & (cap - 1);
    for (;;) {
        uint64_t *at = (uint64_t *)((char *)table + i * size);
        if (*at == 0 || *at == h)
            return at;
        i = (i + 1) & (cap - 1);
    }
}

/* Room for one more entry, the table at most half full: doubles it (64
 * entries at first), moving the entries. false: out of memory. */
static bool hash_reserve(void **table, size_t size, size_t *cap, size_t n)
{
    if (2 * (n + 1) <= *cap)
        return true;
    size_t grown = *cap ? 2 * *cap : 64;
    char *t = calloc(grown, size), *old = *table;
    if (t == NULL)
        return false;
    for (size_t i = 0; i < *cap; i++)
        if (*(uint64_t *)(old + i * size) != 0)
            memcpy(hash_slot(t, size, grown, *(uint64_t *)(old + i * size)), old + i * size, size);
    free(old);
    *table = t;
    *cap = grown;
    return true;
}

/* The kernel's name in st->first_kernels: the earliest of its events. */
static bool note_first_kernel(parser *p)
{
    tr_state *st = p->st;
    const event *e = &p->ev;
    if (!(e->have & H_CORR))
        return true;
    if (!hash_reserve((void **)&st->first_kernels, sizeof *st->first_kernels, &st->cap_first_kernels,
                      st->n_first_kernels))
        return fail(p, MB_ESYS, "out of memory");
    uint64_t h = name_hash(e->name, e->name_len);
    tr_first_kernel *f = hash_slot(st->first_kernels, sizeof *f, st->cap_first_kernels, h);
    if (f->hash == 0) {
        *f = (tr_first_kernel){.hash = h, .ts = e->ts, .corr = e->corr};
        st->n_first_kernels++;
    } else if (e->ts < f->ts) {
        f->ts = e->ts;
        f->corr = e->corr;
    }
    return true;
}

/* The op's name in st->op_calls: its earliest call, and the count and time
 * of all. */
static bool note_op_call(parser *p)
{
    tr_state *st = p->st;
    const event *e = &p->ev;
    if (!hash_reserve((void **)&st->op_calls, sizeof *st->op_calls, &st->cap_op_calls, st->n_op_calls))
        return fail(p, MB_ESYS, "out of memory");
    uint64_t h = name_hash(e->name, e->name_len);
    tr_op_calls *c = hash_slot(st->op_calls, sizeof *c, st->cap_op_calls, h);
    if (c->hash == 0) {
        *c = (tr_op_calls){.hash = h, .ts = e->ts, .dur = e->dur};
        snprintf(c->name, sizeof c->name, "%.47s", e->name);
        st->n_op_calls++;
    } else if (e->ts < c->ts) {
        c->ts = e->ts;
        c->dur = e->dur;
    }
    c->count++;
    c->total_ns += e->dur;
    return true;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Appends [s, e) to l. false: out of memory. */
static bool iv_append(tr_ivlist *l, int64_t s, int64_t e)
{
    if (!mb_grow((void **)&l->iv, &l->cap, (l->n + 1) * 2, sizeof(int64_t)))
        return false;
    l->iv[2 * l->n] = s;
    l->iv[2 * l->n + 1] = e;
    l->n++;
    return true;
}

bool mb_tr_first_launches(tr_state *st)
{
    tr_ivlist *liv = &st->host_iv[TR_HOST_LAUNCH], *setup = &st->host_iv[TR_HOST_SETUP];
    size_t nl = st->n_launches <= liv->n ? st->n_launches : liv->n, n = 0;
    /* sorted once here, for this and for the analysis' graph replays (nothing reads their file order) */
    if (st->n_graph_corrs > 0) /* qsort's pointer must not be NULL, even for no elements */
        qsort(st->graph_corrs, st->n_graph_corrs, sizeof *st->graph_corrs, cmp_i64);
    if (st->n_first_kernels == 0 || nl == 0)
        return true;
    int64_t *corrs = malloc(sizeof *corrs * st->n_first_kernels);
    if (corrs == NULL)
        return false;
    for (size_t i = 0; i < st->cap_first_kernels; i++)
        if (st->first_kernels[i].hash != 0)
            corrs[n++] = st->first_kernels[i].corr;
    qsort(corrs, n, sizeof *corrs, cmp_i64);
    bool ok = true;
    for (size_t i = 0; i < nl && ok; i++) {
        const tr_launch *l = &st->launches[i];
        int64_t t0 = liv->iv[2 * i], d = liv->iv[2 * i + 1] - t0;
        /* a graph's replay is no kernel's first launch: its kernels were loaded when it was captured, and a
         * large graph's launch costs about a microsecond a node every replay (TriForce's Llama-2-7B decode step:
         * one 1.59-ms cudaGraphLaunch of 1387 kernels, after ten warm-up replays, read "a kernel's first
         * launch", a one-time cost) */
        if (d >= TR_LONG_LAUNCH_NS || d < TR_FIRST_LAUNCH_NS || l->corr < 0 ||
            !bsearch(&l->corr, corrs, n, sizeof *corrs, cmp_i64) ||
            (st->n_graph_corrs > 0 &&
             bsearch(&l->corr, st->graph_corrs, st->n_graph_corrs, sizeof *st->graph_corrs, cmp_i64)))
            continue;
        if (st->launch_setup == NULL) { /* the long ones first */
            if ((st->launch_setup = malloc(nl)) == NULL) {
                ok = false;
                break;
            }
            for (size_t k = 0; k < nl; k++)
                st->launch_setup[k] = liv->iv[2 * k + 1] - liv->iv[2 * k] >= TR_LONG_LAUNCH_NS;
        }
        if (!(ok = iv_append(setup, t0, t0 + d)))
            break;
        st->launch_setup[i] = 1;
        st->long_launches++;
        st->long_launch_ns += d;
        st->longest_launch_ns = d > st->longest_launch_ns ? d : st->longest_launch_ns;
        add_named_call(&st->setup, "a kernel's first launch", d);
    }
    free(corrs);
    return ok;
}

static int cmp_call_start(const void *a, const void *b)
{
    const tr_op_calls *x = *(tr_op_calls *const *)a, *y = *(tr_op_calls *const *)b;
    if (x->ts != y->ts)
        return (x->ts > y->ts) - (x->ts < y->ts);
    return (x->dur < y->dur) - (x->dur > y->dur); /* the outer one first */
}

static bool slow_first_call(const tr_op_calls *c)
{
    if (c->hash == 0 || c->count < 3 || c->dur < TR_FIRST_CALL_NS)
        return false;
    double later = (double)(c->total_ns - c->dur) / (double)(c->count - 1);
    return (double)c->dur >= TR_FIRST_CALL_RATIO * later;
}

/* cudaMemcpyAsync to pageable memory returns only once the copy is done, after the stream's earlier work; from
 * pageable memory it may be synchronous with respect to the host, the driver staging it through pinned memory
 * (CUDA's API synchronization notes): the host waits in it as in a blocking copy. HTA's TorchRec trace: six
 * such copies to the host a step (.item(), .cpu()), 91.6 ms of GPU idle a step inside them, read as host code. */
bool mb_tr_pageable_copy_waits(tr_state *st)
{
    if (st->n_async_copies == 0 || st->n_pageable_corrs == 0)
        return true;
    qsort(st->pageable_corrs, st->n_pageable_corrs, sizeof *st->pageable_corrs, cmp_i64);
    for (size_t i = 0; i < st->n_async_copies; i++) {
        const struct tr_async_copy *c = &st->async_copies[i];
        if (!bsearch(&c->corr, st->pageable_corrs, st->n_pageable_corrs, sizeof *st->pageable_corrs, cmp_i64))
            continue;
        if (!mb_grow((void **)&st->host_wait, &st->cap_host_wait, (st->n_host_wait + 1) * 2, sizeof(int64_t)) ||
            !iv_append(&st->host_iv[TR_HOST_SYNC], c->ts, c->end))
            return false;
        st->host_wait[st->n_host_wait * 2] = c->ts;
        st->host_wait[st->n_host_wait * 2 + 1] = c->end;
        st->n_host_wait++;
        add_named_call(&st->blocking, c->name, c->end - c->ts);
    }
    return true;
}

/* A copy of the list's intervals, to merge apart from it; NULL: out of memory. */
static int64_t *merged_copy(const tr_ivlist *l)
{
    int64_t *iv = malloc(sizeof *iv * 2 * (l->n ? l->n : 1));
    if (iv != NULL && l->n > 0)
        memcpy(iv, l->iv, sizeof *iv * 2 * l->n);
    return iv;
}

bool mb_tr_first_calls(tr_state *st)
{
    if (st->n_devices == 0 || st->n_op_calls == 0)
        return true;
    tr_op_calls **slow = malloc(sizeof *slow * st->n_op_calls);
    tr_ivlist *setup = &st->host_iv[TR_HOST_SETUP];
    /* the set-up calls already named (context creation in cudaDeviceGetStreamPriorityRange, a cudaFree):
     * a first call holding one is named for its own time only (the alexnet fixture listed aten::to's 29.9 s
     * and, inside it, the runtime call's 29.9 s: 70.6 s of calls in a 43.4 s run) */
    size_t n_named = setup->n;
    int64_t *named = merged_copy(setup);
    /* ... and one that waits for the GPU in it (a blocking copy to the host, a synchronize) is not slow by
     * set-up: fbgemm::permute_sparse_features' first call in HTA's TorchRec trace, 9.8 ms at step 1009, is a
     * 9.49 ms cudaMemcpyAsync to pageable memory */
    const tr_ivlist *sync = &st->host_iv[TR_HOST_SYNC];
    size_t n_waits = sync->n;
    int64_t *waits = merged_copy(sync);
    size_t n = 0;
    if (slow == NULL || named == NULL || waits == NULL) {
        free(slow);
        free(named);
        free(waits);
        return false;
    }
    n_named = mb_tr_merge_intervals(named, n_named);
    n_waits = mb_tr_merge_intervals(waits, n_waits);
    for (size_t i = 0; i < st->cap_op_calls; i++)
        if (slow_first_call(&st->op_calls[i]))
            slow[n++] = &st->op_calls[i];
    qsort(slow, n, sizeof *slow, cmp_call_start);
    int64_t end = INT64_MIN;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++) {
        const tr_op_calls *c = slow[i];
        if (c->ts + c->dur <= end) /* inside the last one kept: aten::conv2d's aten::cudnn_convolution */
            continue;
        end = c->ts + c->dur;
        int64_t call[2] = { c->ts, end };
        if (c->dur - mb_tr_intersection(waits, n_waits, call, 1) < TR_FIRST_CALL_NS)
            continue;
        if (!(ok = iv_append(setup, c->ts, end)))
            break;
        int64_t own = c->dur - mb_tr_intersection(named, n_named, call, 1);
        if (own < TR_FIRST_CALL_NS) /* the calls inside it are the set-up, named already */
            continue;
        char name[64];
        snprintf(name, sizeof name, "%.47s (first call)", c->name);
        add_named_call(&st->setup, name, own);
    }
    free(slow);
    free(named);
    free(waits);
    return ok;
}

/* TorchScript's fusion groups run as fused_* ops or, while the profiling
 * executor has not fused yet, fallback_function; tensorexpr/nvFuser groups
 * as prim:: nodes. */
static bool torchscript_fusion_call(const char *name)
{
    return strncmp(name, "fused_", 6) == 0 || strcmp(name, "fallback_function") == 0 ||
           strcmp(name, "prim::TensorExprGroup") == 0 || strcmp(name, "prim::CudaFusionGroup") == 0;
}

/* The host thread's last event and the gap before this one. A TorchScript
 * function compiles its fusion groups (NVRTC) on the call that first runs
 * them, with nothing recorded: 145 and 148 ms before the two fallback_function
 * calls of an A100 particle transformer's delta_r2 (its later calls 0.5 ms),
 * read as CPU compute. A gap of TR_LONG_LAUNCH_NS or more before such a
 * call is set-up. Events of a thread come in the order of their start. */
static bool note_host_gap(parser *p)
{
    tr_state *st = p->st;
    const event *e = &p->ev;
    int64_t th = thread_of(e);
    int i = 0;
    while (i < st->n_host_threads && st->host_threads[i].thread != th)
        i++;
    if (i == st->n_host_threads) {
        if (i == TR_MAX_HOST_THREADS)
            return true;
        st->host_threads[st->n_host_threads++] =
            (struct tr_thread_at){.thread = th, .prev_ts = e->ts, .prev_end = e->ts, .frontier = e->ts};
    }
    struct tr_thread_at *t = &st->host_threads[i];
    if (torchscript_fusion_call(e->name) && e->ts >= t->prev_ts) {
        /* after what ended last, or from the start of the op it is the first call inside */
        int64_t from = t->frontier <= e->ts ? t->frontier : t->prev_end <= e->ts ? t->prev_end : t->prev_ts;
        if (e->ts - from >= TR_LONG_LAUNCH_NS) {
            if (!iv_append(&st->host_iv[TR_HOST_SETUP], from, e->ts))
                return fail(p, MB_ESYS, "out of memory");
            add_named_call(&st->setup, "TorchScript fuser compiling", e->ts - from);
        }
    }
    t->prev_ts = e->ts;
    t->prev_end = e->ts + e->dur;
    if (t->prev_end > t->frontier)
        t->frontier = t->prev_end;
    return true;
}

static bool fold_gpu(parser *p)
{
    event *e = &p->ev;
    tr_device *d = gpu_device(p);
    if (d == NULL)
        return false;
    int cls, elem_bytes = 0, flags = 0;
    if (e->cat == CAT_KERNEL) {
        cls = mb_tr_classify(p->st->rules, TR_SET_KERNEL, e->name, e->name_len);
        if (cls == p->st->rules->layout_class) { /* moves memory: "other", and counted apart */
            flags |= TR_EV_LAYOUT;
            cls = TR_CLASS_OTHER;
        }
        elem_bytes = mb_tr_kernel_elem_bytes(e->name, e->name_len);
        if (cls == TR_CLASS_GEMM || cls == TR_CLASS_CONV) {
            int m = mb_tr_kernel_math(e->name, e->name_len);
            p->st->matmul_math_ns[m >= 0 && m < 7 ? m : 7] += e->dur;
        }
        flags |= mb_tr_kernel_tf32(e->name, e->name_len)   ? TR_EV_TF32
                 : mb_tr_kernel_fp32(e->name, e->name_len) ? TR_EV_FP32
                                                           : 0;
        /* a grid that leaves half the GPU's SMs idle (NCCL's run few blocks by design) */
        if (d->sms == 0)
            d->sms = sms_of(p->st, d->id);
        int64_t g0 = e->grid[0], g1 = e->grid[1] > 0 ? e->grid[1] : 1, g2 = e->grid[2] > 0 ? e->grid[2] : 1;
        /* each dimension at most the SM count (1e6 at most) before the product: no overflow on a hostile grid */
        if (d->sms > 0 && g0 > 0 && g0 <= d->sms && g1 <= d->sms && g2 <= d->sms && 2 * g0 * g1 * g2 <= d->sms &&
            cls != TR_CLASS_NCCL) {
            char shortname[64];
            flags |= TR_EV_SMALL_GRID;
            kernel_short_name(e->name, e->name_len, shortname, sizeof shortname);
            add_named_call(&p->st->small_grids, shortname, e->dur);
        }
        d->kernels++;
        if (cls == TR_CLASS_NCCL && !fold_collective(p, d))
            return false;
        if (!note_first_kernel(p))
            return false;
    } else if (e->cat == CAT_MEMCPY) {
        cls = TR_CLASS_MEMCPY;
        d->memcpys++;
        int dir, mem;
        copy_kind(e, &dir, &mem);
        mb_tr_copy_add(&d->copies[dir][mem], e->dur, copy_bytes(e));
        if (mem == TR_MEM_PAGEABLE && e->have & H_CORR && e->corr > 0) {
            tr_state *st = p->st;
            if (!mb_grow((void **)&st->pageable_corrs, &st->cap_pageable_corrs, st->n_pageable_corrs + 1,
                         sizeof *st->pageable_corrs))
                return fail(p, MB_ESYS, "out of memory");
            st->pageable_corrs[st->n_pageable_corrs++] = e->corr;
        }
        if (!push_xfer(p, d, TR_XFER_COPY, copy_bytes(e), dir, mem, 0))
            return false;
    } else {
        cls = TR_CLASS_MEMSET;
        d->memsets++;
        mb_tr_copy_add(&d->memset, e->dur, copy_bytes(e));
        if (!push_xfer(p, d, TR_XFER_MEMSET, copy_bytes(e), 0, 0, 0))
            return false;
    }
    return push_gpu_event(p, d, cls, elem_bytes, flags);
}

static void add_named_call(tr_named_table *t, const char *name, int64_t dur)
{
    t->count++;
    t->ns += dur;
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->s[i].name, name) == 0) {
            t->s[i].count++;
            t->s[i].ns += dur;
            return;
        }
    tr_named_stat *s = t->n < TR_MAX_NAMED ? &t->s[t->n++] : &t->rest;
    if (s != &t->rest)
        snprintf(s->name, sizeof s->name, "%.63s", name);
    else
        snprintf(s->name, sizeof s->name, "(other)");
    s->count++;
    s->ns += dur;
}

static void add_named(tr_named_table *t, const event *e)
{
    add_named_call(t, e->name, e->dur);
}

static bool push_host_wait(parser *p)
{
    tr_state *st = p->st;
    if (!mb_grow((void **)&st->host_wait, &st->cap_host_wait, (st->n_host_wait + 1) * 2,
              sizeof(int64_t)))
        return fail(p, MB_ESYS, "out of memory");
    st->host_wait[st->n_host_wait * 2] = p->ev.ts;
    st->host_wait[st->n_host_wait * 2 + 1] = p->ev.ts + p->ev.dur;
    st->n_host_wait++;
    return true;
}

/* The event's [ts, ts + dur) into an interval list. */
static bool push_iv(parser *p, tr_ivlist *l)
{
    return iv_append(l, p->ev.ts, p->ev.ts + p->ev.dur) || fail(p, MB_ESYS, "out of memory");
}

/* The event into one of the step table's host lists. */
static bool push_host_iv(parser *p, int kind)
{
    return push_iv(p, &p->st->host_iv[kind]);
}

/* An asynchronous copy or memset call with its correlation id (cudaMemcpyAsync, cudaMemsetAsync, hipMemcpyAsync:
 * no [runtime] kind takes them): it enqueues its GPU event. */
static bool enqueue_call(const event *e)
{
    return (e->have & H_CORR) && e->corr > 0 &&
           (memmem(e->name, e->name_len, "Memcpy", 6) != NULL || memmem(e->name, e->name_len, "Memset", 6) != NULL);
}

/* A CUDA or HIP graph being captured (cudaStreamBeginCapture ... cudaStreamEndCapture): the launches inside only
 * record the graph, nothing runs, and the host's time is the capture's, once (vLLM's decode capture on an MI300X:
 * 428 launches, 7 kernels run, read "CPU compute bound"). The capture is set-up. 1 when the event was a
 * capture's begin or end (taken), 0 to go on, -1 out of memory (failed). */
static int stream_capture(parser *p)
{
    tr_state *st = p->st;
    const event *e = &p->ev;
    bool begin = memmem(e->name, e->name_len, "StreamBeginCapture", 18) != NULL;
    bool end = memmem(e->name, e->name_len, "StreamEndCapture", 16) != NULL;
    if (begin) {
        st->capture_begin = e->ts;
        return 1;
    }
    if (!end)
        return 0;
    int64_t from = st->capture_begin;
    st->capture_begin = -1;
    if (from < 0 || from > e->ts)
        return 1;
    st->captures++;
    add_named_call(&st->setup, "graph capture (StreamBeginCapture ... EndCapture)", e->ts + e->dur - from);
    if (!iv_append(&st->host_iv[TR_HOST_SETUP], from, e->ts + e->dur)) {
        fail(p, MB_ESYS, "out of memory");
        return -1;
    }
    return 1;
}

static bool fold_runtime(parser *p)
{
    tr_state *st = p->st;
    event *e = &p->ev;
    int kind = mb_tr_classify(st->rules, TR_SET_RUNTIME, e->name, e->name_len);
    switch (kind) {
    case TR_RT_LAUNCH:
        add_named(&st->launch, e);
        if (e->dur >= TR_LONG_LAUNCH_NS) {
            st->long_launches++;
            st->long_launch_ns += e->dur;
            if (e->dur > st->longest_launch_ns)
                st->longest_launch_ns = e->dur;
        }
        if (!mb_grow((void **)&st->launches, &st->cap_launches, st->n_launches + 1,
                  sizeof *st->launches))
            return fail(p, MB_ESYS, "out of memory");
        st->launches[st->n_launches++] =
            (tr_launch){.thread = thread_of(e), .ts = e->ts, .corr = e->have & H_CORR ? e->corr : -1};
        if (e->have & H_CORR && memmem(e->name, e->name_len, "GraphLaunch", 11) != NULL) {
            if (!mb_grow((void **)&st->graph_corrs, &st->cap_graph_corrs, st->n_graph_corrs + 1,
                         sizeof *st->graph_corrs))
                return fail(p, MB_ESYS, "out of memory");
            st->graph_corrs[st->n_graph_corrs++] = e->corr;
        }
        /* a launch this long loads a module or initialises: set-up, not launching */
        if (e->dur >= TR_LONG_LAUNCH_NS) {
            add_named(&st->setup, e);
            if (!push_host_iv(p, TR_HOST_SETUP))
                return false;
        }
        return push_host_iv(p, TR_HOST_LAUNCH);
    case TR_RT_SYNC:
        add_named(&st->sync, e);
        return push_host_wait(p) && push_host_iv(p, TR_HOST_SYNC) && push_iv(p, &st->sync_calls);
    case TR_RT_BLOCKING:
        add_named(&st->blocking, e);
        return push_host_wait(p) && push_host_iv(p, TR_HOST_SYNC);
    case TR_RT_SETUP:
        add_named(&st->setup, e);
        return push_host_iv(p, TR_HOST_SETUP);
    default:
        switch (stream_capture(p)) {
        case 1:
            return true;
        case -1:
            return false;
        }
        if (enqueue_call(e)) { /* joined to its copy later: a step's work, a pageable copy's wait */
            if (!mb_grow((void **)&st->async_copies, &st->cap_async_copies, st->n_async_copies + 1,
                         sizeof *st->async_copies))
                return fail(p, MB_ESYS, "out of memory");
            struct tr_async_copy *c = &st->async_copies[st->n_async_copies++];
            *c = (struct tr_async_copy){.ts = e->ts, .end = e->ts + e->dur, .corr = e->corr};
            snprintf(c->name, sizeof c->name, "%.*s", (int)(e->name_len < 31 ? e->name_len : 31), e->name);
        }
        /* A runtime call of 10 ms or more that neither launches, waits nor copies is
         * a first call creating the context (the alexnet fixture's
         * cudaDeviceGetStreamPriorityRange, 29.9 s): set-up too. */
        if (e->dur < TR_LONG_LAUNCH_NS || memmem(e->name, e->name_len, "Memcpy", 6) != NULL ||
            memmem(e->name, e->name_len, "Memset", 6) != NULL)
            return true;
        add_named(&st->setup, e);
        return push_host_iv(p, TR_HOST_SETUP);
    }
}

/* An autograd node's name, for traces that record no "Fwd thread id":
 * "autograd::engine::evaluate_function: MmBackward0", "MmBackward0". */
static bool autograd_node_name(const char *name)
{
    if (strncmp(name, "autograd::engine::evaluate_function: ", 37) == 0)
        return true;
    const char *b = strstr(name, "Backward");
    return b != NULL && b[8] >= '0' && b[8] <= '9';
}

/* A record_function of the user's own ("train_step"), kept by its name for
 * a trace that marks no steps otherwise (steps_from_annotation). In the
 * array form without categories, an op is "ns::op" and an autograd node
 * "MmBackward0": what is neither is an annotation. A name of "trace" would
 * read as the window of no steps; past TR_MAX_ANN_NAMES names, a new one is
 * not kept. */
static bool keep_user_annotation(parser *p)
{
    tr_state *st = p->st;
    event *e = &p->ev;
    if (e->cat == CAT_NONE && (memmem(e->name, e->name_len, "::", 2) != NULL || autograd_node_name(e->name)))
        return true;
    if (e->name[0] == '\0' || strcmp(e->name, "trace") == 0)
        return true;
    int k = 0;
    while (k < st->n_ann_names && strncmp(st->ann_names[k], e->name, sizeof st->ann_names[k] - 1) != 0)
        k++;
    if (k == TR_MAX_ANN_NAMES)
        return true;
    if (k == st->n_ann_names)
        snprintf(st->ann_names[st->n_ann_names++], sizeof st->ann_names[0], "%.63s", e->name);
    if (!mb_grow((void **)&st->ann_marks, &st->cap_ann_marks, st->n_ann_marks + 1, sizeof *st->ann_marks))
        return fail(p, MB_ESYS, "out of memory");
    st->ann_marks[st->n_ann_marks++] = (tr_step){.number = k, .start = e->ts, .end = e->ts + e->dur};
    return true;
}

/* One collective on the host, counted once: c10d::allreduce_ holds nccl:all_reduce and a record_param_comms,
 * and a second record_param_comms follows it (HTA's V100 DDP trace read "8080 calls" for its 2020 all-reduces).
 * A call is an outermost named one (Kineto writes a thread's events by start, so it comes first); the
 * record_param_comms count only in a trace that has nothing else. False: out of memory. */
static bool count_collective(parser *p)
{
    tr_state *st = p->st;
    const event *e = &p->ev;
    st->coll_host_count++;
    if (e->name_len == 18 && memcmp(e->name, "record_param_comms", 18) == 0)
        return true;
    int64_t thread = thread_of(e);
    if (st->coll_calls.n > 0 && thread == st->coll_thread && e->ts + e->dur <= st->coll_end)
        return true;
    st->coll_thread = thread;
    st->coll_end = e->ts + e->dur;
    return push_iv(p, &st->coll_calls);
}

static bool fold_annotation(parser *p)
{
    tr_state *st = p->st;
    event *e = &p->ev;
    int kind = mb_tr_classify(st->rules, TR_SET_ANNOTATION, e->name, e->name_len);
    if (kind == TR_ANN_DATALOADER) {
        st->dataloader_count++;
        /* PyTorch names the iterator: _SingleProcessDataLoaderIter when
         * num_workers=0, _MultiProcessingDataLoaderIter otherwise */
        st->dataloader_in_process += memmem(e->name, e->name_len, "_SingleProcessDataLoaderIter", 28) != NULL;
        st->dataloader_ns += e->dur;
        return push_host_wait(p) && push_host_iv(p, TR_HOST_DATA);
    }
    if (kind == TR_ANN_COLLECTIVE)
        return count_collective(p) && push_host_iv(p, TR_HOST_COLL);
    /* torch.compile compiling (Dynamo, Inductor: "... (dynamo_timed)"): set-up, once a graph; a compiled
     * ResNet-18's first calls spent 1.42 s of 1.73 s so and read "Host-overhead (launch) bound, 95.8%". The
     * regions nest: the set-up table names the outermost (Kineto writes a thread's events by start). */
    if (kind == TR_ANN_COMPILE) {
        int64_t thread = thread_of(e);
        if (!(thread == st->compile_thread && e->ts + e->dur <= st->compile_end)) {
            add_named(&st->setup, e);
            st->compile_thread = thread;
            st->compile_end = e->ts + e->dur;
        }
        return push_host_iv(p, TR_HOST_SETUP);
    }
    if (kind == TR_ANN_OPTIMIZER) {
        st->optimizer_annotations++;
        /* "Optimizer.step#FusedAdam.step": TorchRec's, apex's or DeepSpeed's fused optimizer (HTA's TorchRec
         * traces were told to fuse theirs) */
        const char *cls = memchr(e->name, '#', e->name_len);
        st->fused_optimizer += cls && strncmp(cls + 1, "Fused", 5) == 0;
        st->opt_thread = thread_of(e);
        st->opt_end = e->ts + e->dur;
        if (!mb_grow((void **)&st->opt_marks, &st->cap_opt_marks, st->n_opt_marks + 1, sizeof *st->opt_marks))
            return fail(p, MB_ESYS, "out of memory");
        st->opt_marks[st->n_opt_marks++] = (tr_step){.number = -1, .start = e->ts, .end = e->ts + e->dur};
    }
    if (kind == TR_ANN_NONE)
        return keep_user_annotation(p);
    if (kind == TR_ANN_STEP) {
        if (!mb_grow((void **)&st->steps, &st->cap_steps, st->n_steps + 1, sizeof *st->steps))
            return fail(p, MB_ESYS, "out of memory");
        const char *hash = strrchr(e->name, '#');
        long long n = hash ? strtoll(hash + 1, NULL, 10) : -1;
        st->steps[st->n_steps++] =
            (tr_step){.number = n, .start = e->ts, .end = e->ts + e->dur, .pid = e->have & H_PID ? e->pid : 0};
    }
    return true;
}

_Static_assert(sizeof(tr_flop_op) == 64, "one op record is 64 bytes");
_Static_assert(sizeof(tr_launch) == 24, "one launch record is 24 bytes");
_Static_assert(TR_MAX_WHY < 255, "tr_flop_op.why is one byte");

/* The "op: reason" text of an op whose shapes gave no count, kept once: the
 * hint of a time-only stage quotes the reason behind most of its time.
 * Returns its index + 1, or 0 past TR_MAX_WHY distinct texts. */
static uint8_t why_index(tr_state *st, const char *name, const char *why)
{
    char text[sizeof st->why[0]];
    /* the reason whole (a fixed text of under 60 characters), the op's name
     * cut to what is left: "(Concrete Inputs)" cut to "(Concrete" read as
     * another word */
    int room = (int)sizeof text - 3 - (int)strlen(why);
    snprintf(text, sizeof text, "%.*s: %s", room < 40 ? (room > 0 ? room : 0) : 40, name, why);
    for (int i = 0; i < st->n_why; i++)
        if (strcmp(st->why[i], text) == 0)
            return (uint8_t)(i + 1);
    if (st->n_why == TR_MAX_WHY)
        return 0;
    memcpy(st->why[st->n_why++], text, sizeof text);
    return (uint8_t)st->n_why;
}

/* Kineto of torch 1.8-1.9 writes ProfilerStep#N and enumerate(DataLoader)#
 * under "Operator", as it writes the ops (kineto's tb_plugin samples, a
 * ResNet-50 on a V100): read as the annotations they are, or a trace of
 * steps reads as one window and its DataLoader waits as host code. Only
 * these kinds and Optimizer.step#: a collective op (c10d::, nccl:) is an op
 * as well. */
static bool operator_annotation(parser *p)
{
    int kind = mb_tr_classify(p->st->rules, TR_SET_ANNOTATION, p->ev.name, p->ev.name_len);
    return kind == TR_ANN_STEP || kind == TR_ANN_DATALOADER || kind == TR_ANN_OPTIMIZER;
}

/* An op only a GPU runs: cuDNN's and MIOpen's (aten::cudnn_convolution,
 * aten::miopen_batch_norm). In a trace without GPU events they say that the
 * run used a GPU the profiler did not record (torch.autograd.profiler
 * without use_cuda=True): its ops' times are the host's, not CPU work. */
static bool gpu_only_op(const char *name)
{
    /* a query, not cuDNN's work: nn.LSTM, GRU and RNN ask it every forward, on a CPU too (torch 1.13 on a
     * machine without a GPU: an LSTM's CPU trace read "GPU activity not recorded") */
    if (strcmp(name, "aten::cudnn_is_acceptable") == 0)
        return false;
    return strncmp(name, "aten::cudnn_", 12) == 0 || strncmp(name, "aten::_cudnn_", 13) == 0 ||
           strncmp(name, "aten::miopen_", 13) == 0 || strncmp(name, "aten::_miopen_", 14) == 0;
}

/* oneDNN (mkldnn) and NNPACK kernels run on the CPU only: a trace of such ops
 * that lists a GPU and recorded none of its calls ran on the CPU (a Colab
 * ResNet-50 forward on the CPU of a T4 machine read "GPU activity not
 * recorded"). */
static bool cpu_only_op(const char *name)
{
    return strncmp(name, "aten::mkldnn_", 13) == 0 || strncmp(name, "aten::_mkldnn_", 14) == 0 ||
           strncmp(name, "aten::_nnpack_", 14) == 0;
}

/* Every op of a family is kept, with its count or without one: a kernel
 * launched inside an op whose shapes gave no count is still that op's (a
 * memory-bound op's time without bytes, a backward matmul that takes its
 * FLOPs from its forward op). An autograd node is kept for the link:
 * forward ops record "Fwd thread id" 0, a node the forward's thread (>= 1),
 * both with the node's "Sequence number". */
static bool fold_cpu_op(parser *p)
{
    tr_state *st = p->st;
    event *e = &p->ev;
    st->cpu_op_events++; /* each one costs the host the profiler's own time */
    if (!mb_grow((void **)&st->op_ts, &st->cap_op_ts, st->n_op_ts + 1, sizeof *st->op_ts))
        return fail(p, MB_ESYS, "out of memory");
    st->op_ts[st->n_op_ts++] = e->ts;
    if (e->cat == CAT_CPU_OP && !note_op_call(p))
        return false;
    if (e->cat == CAT_CPU_OP &&
        mb_tr_classify(st->rules, TR_SET_DISPATCH, e->name, e->name_len) == TR_DISPATCH_METADATA) {
        if (!mb_grow((void **)&st->dispatch_durs, &st->cap_dispatch_durs, st->n_dispatch_durs + 1,
                     sizeof *st->dispatch_durs))
            return fail(p, MB_ESYS, "out of memory");
        st->dispatch_durs[st->n_dispatch_durs++] = e->dur;
    }
    if (gpu_only_op(e->name) && st->gpu_only_ops++ == 0)
        snprintf(st->gpu_only_op, sizeof st->gpu_only_op, "%.47s", e->name);
    if (cpu_only_op(e->name))
        st->cpu_only_ops++;
    st->backward_ops += strstr(e->name, "ackward") != NULL; /* aten::convolution_backward, ConvolutionBackward0 */
    if (mb_tr_sparse_marker(e->name)) {
        if (!mb_grow((void **)&st->sparse_marks, &st->cap_sparse_marks, st->n_sparse_marks + 1,
                     sizeof *st->sparse_marks))
            return fail(p, MB_ESYS, "out of memory");
        st->sparse_marks[st->n_sparse_marks++] = (tr_mark){thread_of(e), e->ts, e->ts + e->dur};
    }
    if (e->sh.n_tensors > 0)
        st->ops_with_dims++;
    int kind = mb_tr_op_kind(e->name), model = TR_MOP_NONE;
    /* [memory_op] names aten ops and the kernels torch.compile generates
     * (triton_*), whose record_function carries the kernel's name: no
     * other op is tried against its rules, one regex pass per op. */
    if (kind == TR_OP_NONE && (strncmp(e->name, "aten::", 6) == 0 || strncmp(e->name, "triton_", 7) == 0)) {
        model = mb_tr_classify(st->rules, TR_SET_MEMOP, e->name, e->name_len);
        if (model != TR_MOP_NONE)
            kind = TR_OP_MEM;
    }
    if (kind == TR_OP_NONE && e->have & H_SEQ && e->seq >= 0 &&
        (e->fwd_tid > 0 || (e->fwd_tid < 0 && autograd_node_name(e->name))))
        kind = TR_OP_BWD;
    if (kind == TR_OP_NONE) {
        /* c10d::allreduce_, record_param_comms: the host inside a collective */
        if (mb_tr_classify(st->rules, TR_SET_ANNOTATION, e->name, e->name_len) == TR_ANN_COLLECTIVE)
            return count_collective(p) && push_host_iv(p, TR_HOST_COLL);
        return true;
    }
    double count = -1; /* FLOPs, or bytes for a memory-bound op */
    const char *why = NULL;
    bool ok = kind == TR_OP_BWD ? false
              : kind == TR_OP_MEM ? mb_tr_op_bytes(model, &e->sh, &count, &why)
                                  : mb_tr_op_flops(e->name, &e->sh, &count, &why);
    /* a Gaussian-process solve in complex128 (mv, dot, mm on c10::complex<double>) was counted at a quarter of
     * its real FLOPs and held to a bf16 GEMM case */
    bool complex = ok && kind != TR_OP_MEM && e->sh.n_types > 0 && mb_tr_complex_type(e->sh.types[0]);
    double bytes = ok && kind == TR_OP_GEMM ? mb_tr_matmul_bytes(e->name, &e->sh, count) : 0;
    if (complex)
        count *= 4;
    if (!ok && kind != TR_OP_BWD) {
        st->ops_without_shapes[kind]++;
        if (st->shape_why[kind][0] == '\0')
            snprintf(st->shape_why[kind], sizeof st->shape_why[kind], "%.30s: %.60s", e->name, why);
    }
    if (!mb_grow((void **)&st->flop_ops, &st->cap_flop_ops, st->n_flop_ops + 1, sizeof *st->flop_ops))
        return fail(p, MB_ESYS, "out of memory");
    tr_flop_op *op = &st->flop_ops[st->n_flop_ops++];
    memset(op, 0, sizeof *op);
    op->thread = thread_of(e);
    op->start = e->ts;
    op->end = e->ts + e->dur;
    op->flops = ok ? count : -1;
    double unit;
    if (!ok && kind == TR_OP_MEM && mb_tr_op_list_unit_bytes(model, &e->sh, &unit)) {
        op->flops = -unit; /* the analysis multiplies it by a kernel's element size */
        op->per_elem = TR_ELEM_PENDING;
    }
    op->seq = e->have & H_SEQ && e->seq >= 0 && e->seq <= INT32_MAX ? (int32_t)e->seq : -1;
    /* past a float's range (shapes of 1e14 per dim, a fuzzer's): unknown, not the UB of an out-of-range cast */
    op->bytes = bytes > 0 && bytes < FLT_MAX ? (float)bytes : 0;
    op->parent = -1;
    op->kind = (uint8_t)kind;
    op->why = ok || kind == TR_OP_BWD ? 0 : why_index(st, e->name, why);
    op->products = ok && kind == TR_OP_CONV ? (uint8_t)mb_tr_op_products(e->name, &e->sh) : 0;
    /* The first input with a known tensor type (a bias may be None, "") */
    for (int i = 0; i < e->sh.n_types && op->dtype == 0; i++)
        op->dtype = (uint8_t)mb_tr_dtype_index(mb_tr_dtype_of_torch(e->sh.types[i]));
    return true;
}

bool mb_tr_sparse_marker(const char *name)
{
    static const char *const only_sparse[] = {"_nnz", "_indices", "_values", "indices", "values", "coalesce",
                                              "is_coalesced", "crow_indices", "col_indices", "ccol_indices",
                                              "row_indices"};
    if (strncmp(name, "aten::", 6) != 0)
        return false;
    if (strstr(name + 6, "sparse") != NULL)
        return true;
    for (size_t i = 0; i < sizeof only_sparse / sizeof only_sparse[0]; i++)
        if (strcmp(name + 6, only_sparse[i]) == 0)
            return true;
    return false;
}

static int cmp_mark(const void *a, const void *b)
{
    const tr_mark *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

void mb_tr_sort_marks(tr_mark *m, size_t n)
{
    if (n > 1) /* qsort takes no NULL array */
        qsort(m, n, sizeof *m, cmp_mark);
}

bool mb_tr_mark_within(const tr_mark *m, size_t n, int64_t thread, int64_t start, int64_t end)
{
    size_t lo = 0, hi = n; /* the first mark on `thread` that starts at or after `start` */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m[mid].thread < thread || (m[mid].thread == thread && m[mid].start < start))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && m[lo].thread == thread && m[lo].start < end && m[lo].end <= end;
}

/* torch.spmm and torch.mm on a sparse tensor record the operand's dense
 * shape ([2708, 2708] for a graph's 8128 stored entries): counted as a dense
 * product, pytorch/examples' gcn read 1.85 GFLOP per step, 119% of the CPU
 * GEMM ceiling, for about 11 MFLOP of work. Such a product runs an op only a
 * sparse tensor calls (torch 1.13: aten::mm > aten::_sparse_addmm >
 * aten::addmm > aten::sparse_dim), so every matmul op around one loses its
 * count; its kernels or its time stay, with the reason. */
void mb_tr_apply_sparse(tr_state *st)
{
    if (st->sparse_applied || st->n_sparse_marks == 0)
        return;
    st->sparse_applied = true;
    mb_tr_sort_marks(st->sparse_marks, st->n_sparse_marks);
    int64_t outer_end = INT64_MIN, outer_thread = -1;
    for (size_t i = 0; i < st->n_flop_ops; i++) {
        tr_flop_op *op = &st->flop_ops[i];
        if (op->kind != TR_OP_GEMM)
            continue;
        if (!mb_tr_mark_within(st->sparse_marks, st->n_sparse_marks, op->thread, op->start, op->end))
            continue;
        op->flags |= TR_OPF_SPARSE;
        st->cpu_count[TR_CPU_GEMM]--; /* a CPU-only run's classes (trace_cpu.c): an event of the other ops */
        op->flops = -1; /* taker() gives its kernels CAUSE_SPARSE */
        if (op->thread != outer_thread || op->start >= outer_end) { /* ops sorted outer first */
            st->sparse_matmuls++;
            st->cpu_count[TR_CPU_OPS]++;
            outer_thread = op->thread;
            outer_end = op->end;
        }
    }
}

/* The event to the caller's hook (mb_trace_walk). */
static bool show_event(parser *p)
{
    tr_state *st = p->st;
    const event *e = &p->ev;
    tr_event_view v = {
        .name = e->name, .thread = thread_of(e), .ts = e->ts, .dur = e->dur,
        .device = e->have & H_DEVICE ? e->device : -1, .stream = e->have & H_STREAM ? e->stream : -1,
        .corr = e->have & H_CORR ? e->corr : -1, .ext_id = e->ext_id, .regs = e->regs, .smem = e->smem,
        .bytes = e->have & H_BYTES ? e->bytes : -1, .link_bytes = -1, .rules = st->rules, .sh = &e->sh,
    };
    memcpy(v.grid, e->grid, sizeof v.grid);
    memcpy(v.block, e->block, sizeof v.block);
    switch (e->cat) {
    case CAT_KERNEL:
        v.kind = TR_V_KERNEL;
        v.cls = mb_tr_classify(st->rules, TR_SET_KERNEL, e->name, e->name_len);
        if (v.cls == TR_CLASS_NCCL) {
            char name[24];
            collective_of(e, name, sizeof name);
            v.bytes = coll_event_bytes(e, name);
            v.link_bytes = coll_link_bytes(e);
        }
        break;
    case CAT_MEMCPY: {
        int mem;
        v.kind = TR_V_MEMCPY;
        v.cls = TR_CLASS_MEMCPY;
        copy_kind(e, &v.copy_dir, &mem);
        break;
    }
    case CAT_MEMSET:
        v.kind = TR_V_MEMSET;
        v.cls = TR_CLASS_MEMSET;
        break;
    case CAT_RUNTIME: {
        int rt = mb_tr_classify(st->rules, TR_SET_RUNTIME, e->name, e->name_len);
        if (rt == TR_RT_NONE && enqueue_call(e)) {
            v.kind = TR_V_ENQUEUE;
            break;
        }
        if (rt == TR_RT_NONE || rt == TR_RT_SETUP) /* the re-laid timeline's host time between calls holds set-up */
            return true;
        v.kind = rt == TR_RT_LAUNCH ? TR_V_LAUNCH : TR_V_SYNC;
        v.cls = rt;
        break;
    }
    case CAT_CPU_OP:
        /* torch 1.9's ProfilerStep#N is an "Operator" event: a step, as the reader's (operator_annotation) */
        v.kind = mb_tr_classify(st->rules, TR_SET_ANNOTATION, e->name, e->name_len) == TR_ANN_STEP ? TR_V_STEP
                                                                                                     : TR_V_CPU_OP;
        break;
    case CAT_ANNOTATION:
        if (mb_tr_classify(st->rules, TR_SET_ANNOTATION, e->name, e->name_len) != TR_ANN_STEP)
            return true;
        v.kind = TR_V_STEP;
        break;
    default:
        return true;
    }
    int rc = st->hook->fn(st->hook->ctx, &v, &st->hook->err);
    return rc == MB_OK || fail(p, rc, "%s", st->hook->err.msg);
}

/* Bytes of one host collective as nccl-tests counts them, from its args:
 * "In/Out msg nelems" with "dtype" (record_param_comms), else the first
 * input's "Input Dims" x "Input type" (gloo:all_reduce, c10d ops), which is
 * the message only where input and output are the same size. -1 unknown. */
static double host_coll_bytes(const event *e, const char *name)
{
    if (e->have & H_DTYPE && e->have & (H_IN | H_OUT)) {
        int es = elem_size(e->dtype);
        double nel = -1;
        mb_coll_message msg = message_of(name);
        if (msg == MB_MSG_OUTPUT)
            nel = e->have & H_OUT ? e->out_nelems : -1;
        else if (msg == MB_MSG_INPUT)
            nel = e->have & H_IN ? e->in_nelems : -1;
        else
            nel = fmax(e->have & H_IN ? e->in_nelems : -1, e->have & H_OUT ? e->out_nelems : -1);
        return es > 0 && nel >= 0 && nel * es <= TR_MAX_EVENT_BYTES ? nel * es : -1;
    }
    const tr_shapes *sh = &e->sh;
    const mb_coll_kind *k = mb_coll_kind_find(name);
    if (k == NULL || !k->input_is_message || sh->n_tensors < 1 || sh->n_types < 1 || sh->rank[0] < 0)
        return -1;
    int es = mb_tr_dtype_bytes(sh->types[0]);
    double nel = 1;
    for (int d = 0; d < sh->rank[0]; d++)
        nel *= (double)sh->dims[0][d];
    return es > 0 && nel >= 0 && nel * es <= TR_MAX_EVENT_BYTES ? nel * es : -1;
}

/* A host collective of a run without GPU events, with its kind, size and
 * group size where the event records them. */
static bool fold_cpu_collective(parser *p)
{
    tr_state *st = p->st;
    const event *e = &p->ev;
    if (st->n_devices > 0 || mb_tr_classify(st->rules, TR_SET_ANNOTATION, e->name, e->name_len) != TR_ANN_COLLECTIVE)
        return true;
    tr_host_coll c = {.thread = thread_of(e), .start = e->ts, .end = e->ts + e->dur,
                      .runs = e->name_len > 5 && strncmp(e->name, "gloo:", 5) == 0};
    collective_of(e, c.name, sizeof c.name);
    c.bytes = host_coll_bytes(e, c.name);
    if (e->have & H_GROUP && e->group > 0 && e->group <= INT32_MAX)
        c.ranks = (int32_t)e->group;
    const char *dt = e->have & H_DTYPE ? coll_dtype(e->dtype) : NULL;
    if (dt == NULL && e->sh.n_types > 0) {
        /* "Input type" spells c10::Half: the collectives' names, as the dtype arg */
        static const char *const mb[] = {"fp32", "fp16", "bf16", "fp64"}, *const coll[] = {"float", "half", "bf16",
                                                                                            "double"};
        const char *t = mb_tr_dtype_of_torch(e->sh.types[0]);
        for (int i = 0; i < 4 && t; i++)
            if (strcmp(t, mb[i]) == 0)
                dt = coll[i];
    }
    snprintf(c.dtype, sizeof c.dtype, "%s", dt ? dt : "");
    return mb_tr_cpu_coll_add(st, &c) || fail(p, MB_ESYS, "out of memory");
}

static bool fold_cpu_class(parser *p)
{
    /* fold_cpu_op kept this op last when it is of a family: a memory-bound
     * op with its bytes is the CPU's memory-bound class, the rest other ops */
    const tr_state *st = p->st;
    const tr_flop_op *last = st->n_flop_ops ? &st->flop_ops[st->n_flop_ops - 1] : NULL;
    bool mem_named = last && last->kind == TR_OP_MEM && last->start == p->ev.ts &&
                     last->end == p->ev.ts + p->ev.dur && last->thread == thread_of(&p->ev);
    bool mem_bytes = mem_named && last->flops >= 0;
    if (!mb_tr_cpu_fold(p->st, p->ev.name, p->ev.name_len, p->ev.ts, p->ev.dur, mem_bytes, mem_named,
                        p->ev.cat == CAT_CPU_OP))
        return fail(p, MB_ESYS, "out of memory");
    return fold_cpu_collective(p);
}

static bool finish_event(parser *p)
{
    tr_state *st = p->st;
    event *e = &p->ev;
    if (!(e->have & H_PH) || e->ph != 'X') {
        st->other_phase_events++; /* metadata, flows, instants, counters */
        /* Kineto labels a lane per GPU it saw ("process_labels": "GPU 0"), GPU activity recorded or not: an
         * old-format trace (torch 1.8's "Operator" events, no deviceProperties) of a loop on the GPU with its
         * CUDA activity off read "a run without a GPU" */
        st->gpu_labels += (e->have & H_PH) && e->ph == 'M' && (e->have & H_LABELS) &&
                          strncmp(e->labels, "GPU ", 4) == 0 && (e->have & H_NAME) && strcmp(e->name, "process_labels") == 0;
        return true;
    }
    if (!(e->have & H_TS) || !(e->have & H_DUR) || e->dur < 0) {
        st->skipped_events++;
        return true;
    }
    st->complete_events++;
    /* The span is what the trace recorded, not the profiler's own window
     * ("PyTorch Profiler (0)"): a CPU trace's window opened 7.9 ms before its
     * first op (a 4.9-ms model_forward), and that lead-in, no op and no call,
     * read as Python host code, 82% of the run. */
    if (e->cat != CAT_TRACE && e->ts < st->span_start)
        st->span_start = e->ts;
    if (e->cat != CAT_TRACE && e->ts + e->dur > st->span_end)
        st->span_end = e->ts + e->dur;
    if (e->cat == CAT_TRACE && e->ts + e->dur > st->profiler_end)
        st->profiler_end = e->ts + e->dur;
    /* Host events: every category but the GPU's and the profiler's own. Of the others (python_function with
     * with_stack, a category this reader does not know), those of a GPU lane carry a device or a stream, or a
     * gpu_ category (gpu_user_annotation, its lane in pid and tid only): a Python frame recorded before the
     * first op is the host's. */
    bool other_host = e->cat == CAT_OTHER && !(e->have & (H_DEVICE | H_STREAM));
    if ((e->cat == CAT_RUNTIME || e->cat == CAT_CPU_OP || e->cat == CAT_ANNOTATION || e->cat == CAT_OTHER_RUNTIME ||
         e->cat == CAT_NONE || other_host) && e->ts < st->host_start)
        st->host_start = e->ts;
    st->profiler_ranges += e->cat == CAT_RANGE;
    st->other_runtime_calls += e->cat == CAT_OTHER_RUNTIME;
    st->runtime_calls += e->cat == CAT_RUNTIME;
    st->hip_calls += e->cat == CAT_RUNTIME && strncmp(e->name, "hip", 3) == 0;
    st->copy_calls += e->cat == CAT_RUNTIME && (e->have & H_NAME) &&
                      (strstr(e->name, "Memcpy") || strstr(e->name, "Memset"));
    if (!(e->have & H_NAME))
        e->name[0] = '\0';
    /* torch.compile's code running (a cpu_op or an annotation, by torch version) */
    st->compiled_regions += (e->cat == CAT_CPU_OP || e->cat == CAT_ANNOTATION) &&
                            (strncmp(e->name, "Torch-Compiled Region", 21) == 0 ||
                             strcmp(e->name, "CompiledFunction") == 0);
    /* torch.optim's foreach (the default on CUDA since torch 2.0): its _foreach_* ops inside Optimizer.step (a
     * clip_grad_norm_'s _foreach_norm outside it is no foreach optimizer); Kineto writes a thread's events by
     * start, so the annotation comes first */
    st->foreach_optimizer += e->cat == CAT_CPU_OP && strncmp(e->name, "aten::_foreach_", 15) == 0 &&
                             st->opt_end > 0 && e->ts < st->opt_end && thread_of(e) == st->opt_thread;
    /* torch.optim's fused=True: one op per parameter group (aten::_fused_adamw_, _fused_sgd_, _fused_adagrad_;
     * not aten::_fused_dropout or _fused_sdp_choice) */
    st->fused_optimizer += e->cat == CAT_CPU_OP && (strncmp(e->name, "aten::_fused_adam", 17) == 0 ||
                                                    strncmp(e->name, "aten::_fused_sgd", 16) == 0 ||
                                                    strncmp(e->name, "aten::_fused_adagrad", 20) == 0);
    if (st->hook && !show_event(p))
        return false;
    if ((e->cat == CAT_CPU_OP || e->cat == CAT_RUNTIME || e->cat == CAT_ANNOTATION) && !note_host_gap(p))
        return false;
    switch (e->cat) {
    case CAT_KERNEL:
    case CAT_MEMCPY:
    case CAT_MEMSET:
        return fold_gpu(p);
    case CAT_RUNTIME:
        return fold_runtime(p);
    case CAT_SYNC:
        add_named(&st->cuda_sync_events, e);
        return true;
    case CAT_OVERHEAD:
        /* CUPTI's overhead records, on a track of their own: "Runtime Triggered Module Loading" and "Lazy
         * Function Loading" (a cold H200 ResNet-18's 80 ms inside its first ops, read as host code), "Activity
         * Buffer Request" (the profiler's own buffers: 1.8 ms inside an A100's first matmul, read "CPU compute
         * bound"). Set-up, not the loop's work. */
        st->overhead_records++;
        add_named(&st->setup, e);
        return push_host_iv(p, TR_HOST_SETUP);
    case CAT_CPU_OP:
        if (operator_annotation(p))
            return fold_annotation(p) && fold_cpu_class(p);
        return fold_cpu_op(p) && fold_cpu_class(p);
    case CAT_ANNOTATION:
        return fold_annotation(p) && fold_cpu_class(p);
    case CAT_NONE:
        /* No "cat": the array form written by torch.autograd.profiler
         * without Kineto (Debian's python3-torch), CPU events only:
         * annotations and ops read by their names. */
        p->st->uncat_events++;
        p->st->uncat_ops += memmem(p->ev.name, p->ev.name_len, "::", 2) != NULL || autograd_node_name(p->ev.name);
        return fold_annotation(p) && fold_cpu_op(p) && fold_cpu_class(p);
    default:
        return true;
    }
}

static void begin_event(parser *p)
{
    event *e = &p->ev;
    e->have = 0;
    e->cat = CAT_NONE;
    e->ph = 0;
    e->name[0] = '\0';
    e->name_len = 0;
    e->sh.n_tensors = e->sh.n_types = e->sh.n_concrete = 0;
    e->sh.more = false;
    e->cur_tensor = -1;
    e->in_list_elem = false;
    memset(e->grid, 0, sizeof e->grid);
    memset(e->block, 0, sizeof e->block);
    e->regs = e->smem = e->ext_id = -1;
    e->seq = e->fwd_tid = -1;
    p->ev_key = p->arg_key = EK_NONE;
    p->in_args = p->arg_array = p->dims_inner = false;
    p->st->events++;
}

/* ---- the top-level objects kept whole (deviceProperties, distributedInfo) - */

static void capture_add(parser *p, cJSON *item)
{
    cJSON *parent = p->cap_stack[p->cap_n - 1];
    if (cJSON_IsArray(parent))
        cJSON_AddItemToArray(parent, item);
    else
        cJSON_AddItemToObject(parent, p->cap_key, item);
}

static bool capture_scalar(parser *p, int kind, const char *s, size_t n)
{
    if (p->cap_skip_depth > 0 || ++p->cap_nodes > CAPTURE_MAX_NODES)
        return true;
    cJSON *item = NULL;
    double v;
    char *str;
    switch (kind) {
    case SC_NUM:
        item = cJSON_CreateNumber(parse_double(s, n, &v) ? v : 0);
        break;
    case SC_STR:
        str = strndup(s, n);
        if (str) {
            item = cJSON_CreateString(str);
            free(str);
        }
        break;
    case SC_BOOL:
        item = cJSON_CreateBool(n != 0);
        break;
    default:
        item = cJSON_CreateNull();
    }
    if (item == NULL)
        return fail(p, MB_ESYS, "out of memory");
    capture_add(p, item);
    return true;
}

static bool capture_start(parser *p, bool is_map)
{
    if (p->cap_skip_depth > 0 || p->cap_n >= CAPTURE_MAX_DEPTH || ++p->cap_nodes > CAPTURE_MAX_NODES) {
        p->cap_skip_depth++;
        return true;
    }
    cJSON *item = is_map ? cJSON_CreateObject() : cJSON_CreateArray();
    if (item == NULL)
        return fail(p, MB_ESYS, "out of memory");
    if (p->cap_n > 0)
        capture_add(p, item);
    p->cap_stack[p->cap_n++] = item;
    return true;
}

static void capture_end(parser *p)
{
    if (p->cap_skip_depth > 0) {
        p->cap_skip_depth--;
        return;
    }
    if (p->cap_n == 0)
        return;
    cJSON *done = p->cap_stack[--p->cap_n];
    if (p->cap_n > 0)
        return;
    cJSON **slot = p->cap_target == TK_DEVPROPS ? &p->st->device_props : &p->st->dist_info;
    cJSON_Delete(*slot);
    *slot = done;
}

/* ---- parser callbacks (json_stream.h) ----------------------------------- */

static bool event_field(parser *p, int kind, const char *s, size_t n)
{
    event *e = &p->ev;
    switch (p->ev_key) {
    case EK_PH:
        if (kind == SC_STR && n > 0) {
            e->ph = s[0];
            e->have |= H_PH;
        }
        break;
    case EK_CAT:
        if (kind == SC_STR)
            e->cat = cat_of(s, n);
        if (e->cat == CAT_OTHER_RUNTIME && p->st->other_runtime[0] == '\0')
            copy_str(p->st->other_runtime, sizeof p->st->other_runtime, s, n);
        break;
    case EK_NAME:
        if (kind == SC_STR) {
            copy_str(e->name, sizeof e->name, s, n);
            e->name_len = n < sizeof e->name ? n : sizeof e->name - 1;
            e->have |= H_NAME;
        }
        break;
    case EK_PID:
    case EK_TID: {
        int64_t v;
        bool num = kind == SC_NUM && parse_i64(s, n, &v);
        if (!num)
            v = hash_text(s, n);
        if (p->ev_key == EK_PID) {
            e->pid = v;
            e->have |= H_PID | (num ? H_PID_NUM : 0);
        } else {
            e->tid = v;
            e->have |= H_TID;
        }
        break;
    }
    case EK_TS:
    case EK_DUR: {
        int64_t v;
        if ((kind == SC_NUM || kind == SC_STR) && parse_ns(s, n, &v)) {
            if (p->ev_key == EK_TS) {
                e->ts = v;
                e->have |= H_TS;
            } else {
                e->dur = v;
                e->have |= H_DUR;
            }
        }
        break;
    }
    default:
        break;
    }
    return true;
}

static void arg_number(event *e, unsigned flag, int64_t *dst, const char *s, size_t n)
{
    if (parse_i64(s, n, dst))
        e->have |= flag;
}

static void arg_double(event *e, unsigned flag, double *dst, const char *s, size_t n)
{
    if (parse_double(s, n, dst))
        e->have |= flag;
}

static bool arg_value(parser *p, int kind, const char *s, size_t n)
{
    event *e = &p->ev;
    bool num = kind == SC_NUM, str = kind == SC_STR;
    switch (p->arg_key) {
    case AK_DEVICE:
        if (num)
            arg_number(e, H_DEVICE, &e->device, s, n);
        break;
    case AK_STREAM:
        if (num)
            arg_number(e, H_STREAM, &e->stream, s, n);
        break;
    case AK_CORR:
        if (num)
            arg_number(e, H_CORR, &e->corr, s, n);
        break;
    case AK_BYTES:
        if (num || str)
            arg_double(e, H_BYTES, &e->bytes, s, n);
        break;
    case AK_KIND:
        if (str) {
            copy_str(e->kind, sizeof e->kind, s, n);
            e->have |= H_KIND;
        }
        break;
    case AK_LABELS:
        if (str) {
            copy_str(e->labels, sizeof e->labels, s, n);
            e->have |= H_LABELS;
        }
        break;
    case AK_COLL:
        if (str) {
            copy_str(e->coll, sizeof e->coll, s, n);
            e->have |= H_COLL;
        }
        break;
    case AK_IN_NELEMS:
        if (num || str)
            arg_double(e, H_IN, &e->in_nelems, s, n);
        break;
    case AK_OUT_NELEMS:
        if (num || str)
            arg_double(e, H_OUT, &e->out_nelems, s, n);
        break;
    case AK_GROUP:
        if (num || str)
            arg_number(e, H_GROUP, &e->group, s, n);
        break;
    case AK_DTYPE:
        if (str) {
            copy_str(e->dtype, sizeof e->dtype, s, n);
            e->have |= H_DTYPE;
        }
        break;
    case AK_SEQ:
        if (num)
            arg_number(e, H_SEQ, &e->seq, s, n);
        break;
    case AK_FWD_TID:
        if (num)
            parse_i64(s, n, &e->fwd_tid);
        break;
    case AK_REGS:
    case AK_SMEM:
    case AK_EXT_ID: {
        int64_t v;
        if (num && parse_i64(s, n, &v))
            *(p->arg_key == AK_REGS ? &e->regs : p->arg_key == AK_SMEM ? &e->smem : &e->ext_id) = v;
        break;
    }
    default:
        break;
    }
    return true;
}

/* An element of an args array: "Input type" / "Concrete Inputs" strings. */
static void arg_element(parser *p, int kind, const char *s, size_t n)
{
    tr_shapes *sh = &p->ev.sh;
    int i = p->arg_elem++;
    if ((p->arg_key == AK_GRID || p->arg_key == AK_BLOCK) && kind == SC_NUM && i < 3) {
        int64_t v;
        if (parse_i64(s, n, &v) && v > 0)
            (p->arg_key == AK_GRID ? p->ev.grid : p->ev.block)[i] = v;
        return;
    }
    if (kind != SC_STR)
        return;
    if (p->arg_key == AK_TYPES && i < TR_MAX_TENSORS) {
        copy_str(sh->types[i], TR_TYPE_LEN, s, n);
        sh->n_types = i + 1;
    } else if (p->arg_key == AK_CONCRETE && i < TR_MAX_CONCRETE) {
        copy_str(sh->concrete[i], TR_CONCRETE_LEN, s, n);
        sh->n_concrete = i + 1;
    }
}

static void dim_value(parser *p, const char *s, size_t n)
{
    tr_shapes *sh = &p->ev.sh;
    int t = p->ev.cur_tensor;
    if (t < 0 || t >= TR_MAX_TENSORS || sh->rank[t] < 0)
        return;
    int64_t v;
    if (sh->rank[t] >= TR_MAX_DIMS || !parse_i64(s, n, &v)) {
        sh->rank[t] = -1;
        return;
    }
    sh->dims[t][sh->rank[t]++] = v;
}

/* A dimension of one shape inside a TensorList input. */
static void list_dim_value(parser *p, const char *s, size_t n)
{
    int64_t v;
    if (parse_i64(s, n, &v))
        p->ev.list_prod *= (double)v;
    else
        p->ev.list_prod = 0;
}

static int on_scalar(parser *p, int kind, const char *s, size_t n)
{
    p->tokens++;
    if (p->cap_n > 0 || p->cap_skip_depth > 0)
        return capture_scalar(p, kind, s, n);
    int d = p->depth;
    if (d == 0)
        return fail(p, MB_EUSAGE, "not a trace: the JSON is a single value, expected an object with traceEvents");
    if (d == p->ev_depth)
        return event_field(p, kind, s, n);
    if (p->ev_depth) {
        if (p->in_args && d == p->ev_depth + 1)
            return arg_value(p, kind, s, n);
        if (p->arg_array && d == p->ev_depth + 2)
            arg_element(p, kind, s, n);
        else if (p->dims_inner && d == p->ev_depth + 3 && kind == SC_NUM)
            dim_value(p, s, n);
        else if (p->ev.in_list_elem && d == p->ev_depth + 4 && kind == SC_NUM)
            list_dim_value(p, s, n);
        return 1;
    }
    if (d == p->events_depth)
        return fail(p, MB_EUSAGE, "traceEvents[%lld] is not an object", p->st->events);
    if (!p->top_is_array && d == 1) {
        tr_state *st = p->st;
        int64_t v;
        switch (p->top_key) {
        case TK_EVENTS:
            return fail(p, MB_EUSAGE, "traceEvents is not an array");
        case TK_BASETIME:
            if (kind == SC_NUM && parse_i64(s, n, &v)) {
                st->base_time_ns = v;
                st->have_base_time = true;
            }
            break;
        case TK_SCHEMA:
            if (kind == SC_NUM && parse_i64(s, n, &v)) {
                st->schema_version = v;
                st->have_schema = true;
            }
            break;
        case TK_SHAPES:
            if (kind == SC_NUM && parse_i64(s, n, &v))
                st->record_shapes = v != 0;
            else if (kind == SC_BOOL)
                st->record_shapes = n != 0;
            break;
        case TK_DEVPROPS:
            st->have_device_props = true;
            break;
        case TK_DISTINFO:
            st->have_dist_info = true;
            break;
        default:
            break;
        }
    }
    return 1;
}

static int cb_null(void *ctx)
{
    return on_scalar(ctx, SC_NULL, "", 0);
}

static int cb_boolean(void *ctx, int v)
{
    return on_scalar(ctx, SC_BOOL, "", (size_t)(v != 0));
}

static int cb_number(void *ctx, const char *s, size_t n)
{
    return on_scalar(ctx, SC_NUM, s, n);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
    return on_scalar(ctx, SC_STR, (const char *)s, n);
}

static int top_key_of(const char *s, size_t n)
{
    if (KEY_IS(s, n, "traceEvents"))
        return TK_EVENTS;
    if (KEY_IS(s, n, "deviceProperties"))
        return TK_DEVPROPS;
    if (KEY_IS(s, n, "distributedInfo"))
        return TK_DISTINFO;
    if (KEY_IS(s, n, "baseTimeNanoseconds"))
        return TK_BASETIME;
    if (KEY_IS(s, n, "schemaVersion"))
        return TK_SCHEMA;
    if (KEY_IS(s, n, "record_shapes"))
        return TK_SHAPES;
    if (KEY_IS(s, n, "nodes"))
        return TK_NODES;
    return TK_NONE;
}

static int ev_key_of(const char *s, size_t n)
{
    switch (n) {
    case 2:
        return KEY_IS(s, n, "ph") ? EK_PH : KEY_IS(s, n, "ts") ? EK_TS : EK_NONE;
    case 3:
        return KEY_IS(s, n, "cat") ? EK_CAT : KEY_IS(s, n, "pid") ? EK_PID
               : KEY_IS(s, n, "tid")                           ? EK_TID
               : KEY_IS(s, n, "dur")                           ? EK_DUR
                                                               : EK_NONE;
    case 4:
        return KEY_IS(s, n, "name") ? EK_NAME : KEY_IS(s, n, "args") ? EK_ARGS : EK_NONE;
    default:
        return EK_NONE;
    }
}

static int arg_key_of(const char *s, size_t n)
{
    switch (n) {
    case 4:
        return KEY_IS(s, n, "kind") ? AK_KIND : KEY_IS(s, n, "grid") ? AK_GRID : AK_NONE;
    case 5:
        return KEY_IS(s, n, "bytes")   ? AK_BYTES
               : KEY_IS(s, n, "dtype") ? AK_DTYPE
               : KEY_IS(s, n, "block") ? AK_BLOCK
                                       : AK_NONE;
    case 6:
        return KEY_IS(s, n, "device")   ? AK_DEVICE
               : KEY_IS(s, n, "stream") ? AK_STREAM
               : KEY_IS(s, n, "labels") ? AK_LABELS
                                        : AK_NONE;
    case 10:
        return KEY_IS(s, n, "Input Dims") ? AK_DIMS
               : KEY_IS(s, n, "Input type") ? AK_TYPES
               : KEY_IS(s, n, "Group size") ? AK_GROUP
                                            : AK_NONE;
    case 11:
        return KEY_IS(s, n, "correlation") ? AK_CORR : KEY_IS(s, n, "External id") ? AK_EXT_ID : AK_NONE;
    case 13:
        return KEY_IS(s, n, "In msg nelems")   ? AK_IN_NELEMS
               : KEY_IS(s, n, "shared memory") ? AK_SMEM
               : KEY_IS(s, n, "Fwd thread id") ? AK_FWD_TID
                                               : AK_NONE;
    case 14:
        return KEY_IS(s, n, "Out msg nelems") ? AK_OUT_NELEMS : AK_NONE;
    case 20:
        return KEY_IS(s, n, "registers per thread") ? AK_REGS : AK_NONE;
    case 15:
        if (KEY_IS(s, n, "Collective name"))
            return AK_COLL;
        if (KEY_IS(s, n, "Sequence number"))
            return AK_SEQ;
        return KEY_IS(s, n, "Concrete Inputs") ? AK_CONCRETE : AK_NONE;
    default:
        return AK_NONE;
    }
}

static int cb_map_key(void *ctx, const unsigned char *key, size_t n)
{
    ((parser *)ctx)->tokens++;
    parser *p = ctx;
    const char *s = (const char *)key;
    if (p->cap_n > 0 || p->cap_skip_depth > 0) {
        copy_str(p->cap_key, sizeof p->cap_key, s, n);
        return 1;
    }
    if (p->ev_depth) {
        if (p->depth == p->ev_depth)
            p->ev_key = ev_key_of(s, n);
        else if (p->in_args && p->depth == p->ev_depth + 1)
            p->arg_key = arg_key_of(s, n);
    } else if (!p->top_is_array && p->depth == 1)
        p->top_key = top_key_of(s, n);
    return 1;
}

static int on_start(parser *p, bool is_map)
{
    p->tokens++;
    int d = p->depth++;
    if (d >= MAX_NESTING)
        return fail(p, MB_EUSAGE, "JSON nested deeper than %d levels (not a profiler trace)", MAX_NESTING);
    if (p->cap_n > 0 || p->cap_skip_depth > 0)
        return capture_start(p, is_map);
    if (d == 0) {
        p->top_seen = true;
        if (!is_map) {
            p->top_is_array = p->saw_events = true; /* the bare-array form of the format */
            p->st->array_form = true;
            p->events_depth = 1;
        }
        return 1;
    }
    if (p->ev_depth) {
        if (d == p->ev_depth && is_map && p->ev_key == EK_ARGS)
            p->in_args = true;
        else if (p->in_args && d == p->ev_depth + 1 && !is_map &&
                 (p->arg_key == AK_DIMS || p->arg_key == AK_TYPES || p->arg_key == AK_CONCRETE ||
                  p->arg_key == AK_GRID || p->arg_key == AK_BLOCK)) {
            p->arg_array = true;
            p->arg_elem = 0;
        } else if (p->arg_array && d == p->ev_depth + 2) {
            int t = p->arg_elem++;
            if (p->arg_key == AK_DIMS && !is_map && t < TR_MAX_TENSORS) {
                p->dims_inner = true;
                p->ev.cur_tensor = t;
                p->ev.sh.rank[t] = 0;
                p->ev.sh.list_numel[t] = 0;
                p->ev.sh.n_tensors = t + 1;
            } else if (p->arg_key == AK_DIMS && t >= TR_MAX_TENSORS)
                p->ev.sh.more = true;
        } else if (p->dims_inner && d == p->ev_depth + 3 && !is_map) {
            /* A TensorList: [[4, 4], [4]] - one shape per tensor. */
            tr_shapes *sh = &p->ev.sh;
            int t = p->ev.cur_tensor;
            if (sh->rank[t] == 0 || sh->rank[t] == TR_RANK_LIST) {
                sh->rank[t] = TR_RANK_LIST;
                p->ev.in_list_elem = true;
                p->ev.list_prod = 1;
            }
        }
        return 1;
    }
    if (d == p->events_depth) {
        if (!is_map)
            return fail(p, MB_EUSAGE, "traceEvents[%lld] is not an object", p->st->events);
        p->ev_depth = d + 1;
        begin_event(p);
        return 1;
    }
    if (!p->top_is_array && d == 1) {
        switch (p->top_key) {
        case TK_EVENTS:
            if (is_map)
                return fail(p, MB_EUSAGE, "traceEvents is not an array");
            p->events_depth = 2;
            p->saw_events = true;
            return 1;
        case TK_DEVPROPS:
        case TK_DISTINFO:
            if (p->top_key == TK_DEVPROPS)
                p->st->have_device_props = true;
            else
                p->st->have_dist_info = true;
            p->cap_target = p->top_key;
            p->cap_nodes = 0;
            return capture_start(p, is_map);
        case TK_NODES:
            p->saw_nodes = !is_map;
            return 1;
        default:
            return 1;
        }
    }
    return 1;
}

static int on_end(parser *p, bool is_map)
{
    p->tokens++;
    int d = --p->depth;
    if (p->cap_n > 0 || p->cap_skip_depth > 0) {
        capture_end(p);
        return 1;
    }
    if (p->ev_depth) {
        if (d == p->ev_depth - 1) {
            p->ev_depth = 0;
            return finish_event(p);
        }
        if (p->in_args && d == p->ev_depth)
            p->in_args = false;
        else if (p->arg_array && d == p->ev_depth + 1)
            p->arg_array = false;
        else if (p->ev.in_list_elem && d == p->ev_depth + 3) {
            p->ev.sh.list_numel[p->ev.cur_tensor] += p->ev.list_prod;
            p->ev.in_list_elem = false;
        } else if (p->dims_inner && d == p->ev_depth + 2)
            p->dims_inner = false;
        return 1;
    }
    if (p->events_depth && d == p->events_depth - 1 && !is_map)
        p->events_depth = 0;
    return 1;
}

static int cb_start_map(void *ctx)
{
    return on_start(ctx, true);
}

static int cb_end_map(void *ctx)
{
    return on_end(ctx, true);
}

static int cb_start_array(void *ctx)
{
    return on_start(ctx, false);
}

static int cb_end_array(void *ctx)
{
    return on_end(ctx, false);
}

static const js_callbacks callbacks = {
    .on_null = cb_null,
    .on_boolean = cb_boolean,
    .on_number = cb_number,
    .on_string = cb_string,
    .on_start_map = cb_start_map,
    .on_map_key = cb_map_key,
    .on_end_map = cb_end_map,
    .on_start_array = cb_start_array,
    .on_end_array = cb_end_array,
};

/* ---- driving the parse ----------------------------------------------------- */

static unsigned long long count_lines(const unsigned char *buf, size_t n)
{
    unsigned long long lines = 0;
    const unsigned char *end = buf + n;
    while ((buf = memchr(buf, '\n', (size_t)(end - buf))) != NULL) {
        lines++;
        buf++;
    }
    return lines;
}

/* "byte N (line L)" of the uncompressed JSON, plus the parser's or our
 * reason; buf starts at byte `offset`, line `lines` + 1. */
static int parse_error(const char *path, const js_parser *js, parser *p, const unsigned char *buf,
                       size_t len, unsigned long long offset, unsigned long long lines, mb_err *err)
{
    size_t at = js->err_off < len ? js->err_off : len;
    unsigned long long line = lines + 1 + count_lines(buf, at);
    if (p->fail_code)
        return mb_errf(err, p->fail_code, "%s: byte %llu (line %llu): %s", path, offset + at, line,
                       p->fail);
    const char *reason = js->err ? js->err : "invalid JSON";
    if (js->err_off >= len) /* the input ended inside a token or value */
        return mb_errf(err, MB_EUSAGE,
                       "%s: byte %llu (line %llu): %s: the trace ends early (truncated file?); "
                       "expected the rest of the JSON",
                       path, offset + at, line, reason);
    return mb_errf(err, MB_EUSAGE, "%s: byte %llu (line %llu): %s (expected Chrome-trace JSON)", path,
                   offset + at, line, reason);
}

/* Makes room for at least `want` bytes in *buf: doubling, at most to
 * MAX_TOKEN_BYTES + CHUNK (the driver refuses longer tokens first). */
static int grow_buffer(unsigned char **buf, size_t *cap, size_t want, mb_err *err)
{
    size_t c = *cap;
    while (c < want)
        c *= 2;
    if (c == *cap)
        return MB_OK;
    unsigned char *bigger = realloc(*buf, c);
    if (bigger == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *buf = bigger;
    *cap = c;
    return MB_OK;
}

/* Reads up to `room` bytes; 0 at the end, -1 (*rc set) on failure. */
static int read_some(gzFile gz, const char *path, unsigned char *dst, size_t room,
                     unsigned long long total, int *rc, mb_err *err)
{
    int n = gzread(gz, dst, (unsigned)room);
    int zerr;
    if (n < 0) {
        const char *msg = gzerror(gz, &zerr);
        if (zerr == Z_ERRNO)
            *rc = mb_errno(err, MB_EUSAGE, "%s: cannot read", path);
        else
            *rc = mb_errf(err, MB_EUSAGE,
                    "%s: compressed byte %lld (uncompressed byte %llu): gzip data is corrupt: %s", path,
                    (long long)gzoffset(gz), total, msg);
        return -1;
    }
    if (n == 0) {
        const char *msg = gzerror(gz, &zerr);
        if (zerr == Z_BUF_ERROR) {
            *rc = mb_errf(err, MB_EUSAGE,
                    "%s: compressed byte %lld (uncompressed byte %llu): the gzip stream ends early (%s): "
                    "truncated file?",
                    path, (long long)gzoffset(gz), total, msg);
            return -1;
        }
    }
    return n;
}

/* The buffer holds `have` unconsumed bytes (a token cut by the last read)
 * at its front, then each read appends after them; mb_js_parse consumes whole
 * tokens only, so memory is bounded by the longest token. */
static int read_and_parse(const char *path, parser *p, mb_err *err)
{
    int rc = MB_OK;
    unsigned char *buf = NULL;
    errno = 0;
    gzFile gz = gzopen(path, "rb");
    if (gz == NULL)
        return errno ? mb_errno(err, MB_EUSAGE, "%s: cannot open", path)
                     : mb_errf(err, MB_ESYS, "%s: cannot open (out of memory)", path);
    /* Large buffers pay on big traces (fewer zlib calls) but cost a small
     * file more to allocate than to parse: zlib's own buffer is enlarged
     * only for files past it, and the chunk starts small and doubles up to
     * CHUNK. */
    struct stat sb;
    if (stat(path, &sb) != 0 || sb.st_size >= ZBUF)
        gzbuffer(gz, ZBUF);
    size_t cap = FIRST_CHUNK, have = 0;
    js_parser *js = malloc(sizeof *js);
    buf = malloc(cap);
    if (buf == NULL || js == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto fail;
    }
    mb_js_init(js, &callbacks, p);
    unsigned long long offset = 0, lines = 0, total = 0; /* offset, lines: of buf[0] */
    for (;;) {
        size_t want = total >= cap && cap < CHUNK ? cap * 2 : cap;
        if (have > want / 2)
            want = have * 2; /* a long token: keep reads at least as big as it */
        if ((rc = grow_buffer(&buf, &cap, want, err)) != MB_OK)
            goto fail;
        /* A cut token is parsed again from its start after each read: reads
         * at least as big as it keep that linear, and a read never takes it
         * past MAX_TOKEN_BYTES + 1, so a longer one is caught still cut. */
        size_t room = cap - have;
        if (have > 0 && room > have && room > CHUNK)
            room = have > CHUNK ? have : CHUNK;
        if (have > 0 && have + room > MAX_TOKEN_BYTES + 1)
            room = MAX_TOKEN_BYTES + 1 - have;
        int n = read_some(gz, path, buf + have, room, total, &rc, err);
        if (n < 0)
            goto fail;
        total += (unsigned long long)n;
        size_t len = have + (size_t)n, used = 0;
        bool eof = n == 0;
        if (eof && total == 0)
            break; /* empty file: said below */
        if (mb_js_parse(js, buf, len, eof, &used) != JS_OK) {
            rc = parse_error(path, js, p, buf, len, offset, lines, err);
            goto fail;
        }
        lines += count_lines(buf, used);
        offset += used;
        have = len - used;
        memmove(buf, buf + used, have);
        if (eof)
            break;
        if (have > MAX_TOKEN_BYTES) {
            rc = mb_errf(err, MB_EUSAGE,
                         "%s: byte %llu (line %llu): one JSON string or number longer than "
                         "%llu MiB: not a profiler trace",
                         path, offset, lines + 1, MAX_TOKEN_BYTES >> 20);
            goto fail;
        }
        /* A gzip bomb: deflate reaches ~1000x on repeated bytes. */
        long long packed = gzdirect(gz) ? 0 : (long long)gzoffset(gz);
        if (packed > 0 && total > MIN_BOMB_BYTES && total / (unsigned long long)packed > MAX_GZIP_RATIO) {
            rc = mb_errf(err, MB_EUSAGE,
                         "%s: gzip expands more than %dx (%llu MiB from %.2f MiB compressed): a gzip bomb, not "
                         "a profiler trace (real traces compress 10-25x)",
                         path, MAX_GZIP_RATIO, total >> 20, (double)packed / (1 << 20));
            goto fail;
        }
    }
    p->st->json_bytes = (double)total;
    if (!p->top_seen)
        rc = mb_errf(err, MB_EUSAGE, "%s: empty file (expected Chrome-trace JSON with traceEvents)",
                     path);
    else if (!p->saw_events && p->saw_nodes) /* HTA's benchmark_simple_add_et.json: ops as a graph, no times */
        rc = mb_errf(err, MB_EUSAGE,
                     "%s: a PyTorch execution trace (ExecutionTraceObserver: its \"nodes\" are the ops and their "
                     "inputs, without their times), not a profiler trace: record the loop with torch.profiler "
                     "(docs/traces.md)",
                     path);
    else if (!p->saw_events)
        rc = mb_errf(err, MB_EUSAGE,
                     "%s: not a PyTorch profiler trace: the JSON object has no traceEvents array",
                     path);
fail:
    free(js);
    free(buf);
    gzclose(gz);
    return rc;
}

void mb_tr_state_free(tr_state *st)
{
    mb_tr_rules_free(&st->own_rules); /* the caller's rules stay the caller's */
    for (int i = 0; i < st->n_devices; i++)
        free(st->devices[i].ev);
    free(st->devices);
    free(st->host_wait);
    for (int k = 0; k < TR_N_HOST; k++)
        free(st->host_iv[k].iv);
    free(st->sync_calls.iv);
    free(st->coll_calls.iv);
    for (int k = 0; k < TR_CPU_N; k++)
        free(st->cpu_iv[k].iv);
    free(st->cpu_backward.iv);
    free(st->cpu_dense_embedding.iv);
    for (int k = 0; k < st->n_user_ranges; k++)
        free(st->user_ranges[k].iv.iv);
    free(st->cpu_mem_unsized.iv);
    free(st->host_colls);
    free(st->steps);
    free(st->opt_marks);
    free(st->ann_marks);
    free(st->launches);
    free(st->first_kernels);
    free(st->launch_setup);
    free(st->op_calls);
    free(st->xfers);
    free(st->graph_corrs);
    free(st->async_copies);
    free(st->dispatch_durs);
    free(st->op_ts);
    free(st->pageable_corrs);
    free(st->flop_ops);
    free(st->sparse_marks);
    cJSON_Delete(st->device_props);
    cJSON_Delete(st->dist_info);
    memset(st, 0, sizeof *st);
}

/* A fresh parse of st by p with `rules`, or the configured ones when NULL. */
static int parse_start(tr_state *st, parser *p, tr_rules *rules, mb_err *err)
{
    st->span_start = INT64_MAX;
    st->host_start = INT64_MAX;
    st->capture_begin = -1;
    st->span_end = INT64_MIN;
    st->profiler_end = INT64_MIN;
    st->record_shapes = -1;
    p->st = st;
    st->rules = rules;
    if (rules != NULL)
        return MB_OK;
    st->rules = &st->own_rules;
    return mb_tr_rules_load(st->rules, NULL, err);
}

static void parse_free(tr_state *st, parser *p)
{
    if (st)
        mb_tr_state_free(st);
    /* A parse that stopped inside deviceProperties/distributedInfo leaves
     * the half-built copy on the capture stack, not yet in st. */
    if (p && p->cap_n > 0)
        cJSON_Delete(p->cap_stack[0]);
    free(st);
    free(p);
}

/* A valid trace whose times are not the run's: refused with what it is and
 * how to profile instead (docs/traces.md), before anything is read from it. */
static int refuse_times_not_the_runs(const tr_state *st, const char *path, mb_err *err)
{
    /* "[]" or "traceEvents": []: what torch.profiler with a schedule exports
     * when export_chrome_trace runs after its last cycle's trace was handed to
     * on_trace_ready (or when none was): a common first mistake, seen here on a
     * minGPT DDP loop, that otherwise reads "the run has no stages". */
    if (st->events == 0)
        return mb_errf(err, MB_EUSAGE,
                       "%s: the trace holds no events: the profiler recorded nothing it exported. torch.profiler "
                       "with a schedule hands each active cycle's trace to on_trace_ready; export_chrome_trace after "
                       "the schedule's last cycle (or with no step inside an active cycle) writes an empty one: export "
                       "in on_trace_ready (torch.profiler.tensorboard_trace_handler, or a function calling "
                       "prof.export_chrome_trace)",
                       path);
    /* Kineto's CUPTI range profiler (experimental_config profiler_metrics)
     * replays each kernel to read its counters: the kernels come as
     * cuda_profiler_range events, not on a timeline, and every launch waits
     * for the replays (HTA's cupti_profiler trace: 67 ms a launch). Nothing
     * in it is the run's time. */
    if (st->profiler_ranges > 0 && st->n_devices == 0)
        return mb_errf(err, MB_EUSAGE,
                       "%s: recorded with the CUPTI range profiler (%lld cuda_profiler_range event%s, "
                       "experimental_config profiler_metrics): each kernel was replayed to read its counters, so "
                       "its times are not the run's and it holds no GPU timeline; profile without "
                       "profiler_metrics for `mlbench gap`",
                       path, st->profiler_ranges, st->profiler_ranges == 1 ? "" : "s");
    /* Another accelerator's runtime (HTA's MTIA traces: mtia_runtime,
     * mtia_ccp_events) and no GPU events: its ops ran there, and read as
     * host computation they would be held against the CPU's ceilings. */
    if (st->other_runtime_calls > 0 && st->n_devices == 0)
        return mb_errf(err, MB_EUSAGE,
                       "%s: %lld runtime call%s of an accelerator mlbench does not read (%s) and no GPU events: its "
                       "ops ran on that device, not on the CPU; `mlbench gap` reads NVIDIA and AMD GPU traces and "
                       "CPU-only ones",
                       path, st->other_runtime_calls, st->other_runtime_calls == 1 ? "" : "s", st->other_runtime);
    /* Launch calls without a kernel: the GPU's activity was not recorded, and
     * the ops that launched work would read as host computation. */
    if (st->launch.count > 0 && st->n_devices == 0)
        /* PyTorch records the runtime calls with ProfilerActivity.CPU alone (HazyResearch/zoology's A100
         * notebook: 260 launches, activities=[ProfilerActivity.CPU]); with CUDA on, the GPU's records can
         * still be lost (solangii/gpu-practice's RTX 4060 trace under WSL: 7 launches, no kernel) */
        return mb_errf(err, MB_EUSAGE,
                       "%s: %lld kernel launch call%s but no GPU activity (kernel, gpu_memcpy, gpu_memset events): "
                       "the ops ran on a GPU the trace did not record. Either ProfilerActivity.CUDA was off "
                       "(PyTorch records CUDA's runtime calls with ProfilerActivity.CPU alone): profile with "
                       "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]; or it was on and the GPU's "
                       "activity records did not arrive (seen under WSL, with drivers whose CUPTI does not trace "
                       "activity, and in a trace exported before the profiler stopped): profile a few steps on the "
                       "machine itself and check that kernels appear (prof.key_averages() lists CUDA time)",
                       path, st->launch.count, st->launch.count == 1 ? "" : "s");
    /* An object-form file whose events carry no category and no op's name is no profiler trace (Kineto writes a
     * category on every event; torch.autograd.profiler's bare array, which has none, names aten ops): a homework's
     * "Averaged Layer Profiler", per-layer averages laid end to end, read "CPU compute bound, a run without a GPU" */
    if (!st->array_form && st->n_devices == 0 && st->uncat_events > 0 && st->uncat_events == st->complete_events &&
        st->uncat_ops == 0)
        return mb_errf(err, MB_EUSAGE,
                       "%s: %lld events without a category (\"cat\") and none named as an op (\"aten::mm\"): not a "
                       "PyTorch profiler trace (torch.profiler writes a category on every event); give the trace "
                       "torch.profiler exported (prof.export_chrome_trace, tensorboard_trace_handler)",
                       path, st->uncat_events);
    /* Neither an op nor GPU activity: nothing to cut into stages (a trace of 77.9 s holding five CUDA runtime
     * calls read "CPU compute bound, python (host code) 100%"). */
    if (st->cpu_op_events == 0 && st->n_devices == 0)
        return mb_errf(err, MB_EUSAGE,
                       "%s: no op (cpu_op events) and no GPU activity in its %.4g s: nothing the run did is "
                       "recorded%s; profile the loop's steps with activities=[ProfilerActivity.CPU, "
                       "ProfilerActivity.CUDA] and export inside the profiler's active steps",
                       path, st->span_end > st->span_start ? (double)(st->span_end - st->span_start) / 1e9 : 0.0,
                       st->runtime_calls > 0 ? " (only CUDA runtime calls)" : "");
    return MB_OK;
}

int mb_trace_read_with(const char *path, tr_rules *rules, mb_run *out, mb_err *err)
{
    mb_run_init(out);
    tr_state *st = calloc(1, sizeof *st);
    parser *p = calloc(1, sizeof *p);
    mb_run run;
    mb_run_init(&run);
    int rc;
    if (st == NULL || p == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    if ((rc = parse_start(st, p, rules, err)) != MB_OK)
        goto done;
    rc = read_and_parse(path, p, err);
    if (rc != MB_OK)
        goto done;
    if ((rc = refuse_times_not_the_runs(st, path, err)) != MB_OK)
        goto done;
    run.path = strdup(path);
    run.kind = strdup("pytorch-trace");
    if (run.path == NULL || run.kind == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    rc = mb_tr_analyse(st, &run, err);
done:
    if (rc == MB_OK)
        *out = run;
    else
        mb_run_free(&run);
    parse_free(st, p);
    return rc;
}

int mb_trace_read(const char *path, mb_run *out, mb_err *err)
{
    return mb_trace_read_with(path, NULL, out, err);
}

/* A trace without ProfilerSteps: the steps the analysis cuts (at the
 * optimizer's annotations or the user's), else one window of the trace's
 * span (every complete event's, as gap's run), shown as step events after
 * the rest, so a projection of its steps is of the steps gap reports: the
 * projection's own span of launches and kernels left out the ops before
 * the first and after the last (hpdl's T4 ResNet-50 trace: "here 44.4 ms"
 * beside a run of 48.6 ms). */
static int walk_cut_steps(tr_state *st, tr_event_view_hook *hook, mb_err *err)
{
    mb_tr_cut_steps(st);
    tr_step whole = {.start = st->span_start, .end = st->span_end};
    const tr_step *steps = st->n_steps > 0 ? st->steps : &whole;
    size_t n = st->n_steps > 0 ? st->n_steps : st->span_end > st->span_start;
    for (size_t i = 0; i < n; i++) {
        tr_event_view v = {.name = "step", .kind = TR_V_STEP, .thread = -1, .ts = steps[i].start,
                           .dur = steps[i].end - steps[i].start, .device = -1, .stream = -1, .corr = -1,
                           .ext_id = -1, .regs = -1, .smem = -1, .bytes = -1, .link_bytes = -1,
                           .rules = st->rules};
        int rc = hook->fn(hook->ctx, &v, &hook->err);
        if (rc != MB_OK)
            return mb_errf(err, rc, "%s", hook->err.msg);
    }
    return MB_OK;
}

int mb_trace_walk(const char *path, tr_event_fn fn, void *ctx, cJSON **device_props, mb_err *err)
{
    if (device_props)
        *device_props = NULL;
    tr_state *st = calloc(1, sizeof *st);
    parser *p = calloc(1, sizeof *p);
    tr_event_view_hook hook = {.fn = fn, .ctx = ctx};
    int rc;
    if (st == NULL || p == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto done;
    }
    st->hook = &hook;
    if ((rc = parse_start(st, p, NULL, err)) != MB_OK)
        goto done;
    rc = read_and_parse(path, p, err);
    if (rc == MB_OK && st->n_steps == 0)
        rc = walk_cut_steps(st, &hook, err);
    if (rc == MB_OK && device_props) {
        *device_props = st->device_props;
        st->device_props = NULL;
    }
done:
    parse_free(st, p);
    return rc;
}

/* ---- debug view ------------------------------------------------------------ */

static cJSON *stage_json(const mb_stage *s)
{
    cJSON *o = cJSON_CreateObject();
    if (o == NULL)
        return NULL;
    cJSON_AddStringToObject(o, "name", s->name ? s->name : "");
    cJSON_AddStringToObject(o, "component", s->component ? s->component : "");
    const struct {
        const char *key, *value;
    } strs[] = {{"dtype", s->dtype},     {"direction", s->direction}, {"memory", s->memory},
                {"pattern", s->pattern}, {"device", s->device},       {"role", s->role},
                {"work_unit", s->work_unit}, {"source", s->source}};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (strs[i].value)
            cJSON_AddStringToObject(o, strs[i].key, strs[i].value);
    if (s->block_size)
        cJSON_AddNumberToObject(o, "block_size", (double)s->block_size);
    if (s->ranks)
        cJSON_AddNumberToObject(o, "ranks", s->ranks);
    cJSON_AddNumberToObject(o, "work", s->work);
    cJSON_AddNumberToObject(o, "seconds", s->seconds);
    cJSON_AddNumberToObject(o, "count", (double)s->count);
    return o;
}

int mb_trace_dump(const char *path, FILE *out, mb_err *err)
{
    return mb_trace_dump_with(path, NULL, out, err);
}

int mb_trace_dump_with(const char *path, tr_rules *rules, FILE *out, mb_err *err)
{
    mb_run run;
    int rc = mb_trace_read_with(path, rules, &run, err);
    if (rc != MB_OK)
        return rc;
    cJSON *o = cJSON_CreateObject();
    cJSON *stages = cJSON_CreateArray(), *warnings = cJSON_CreateArray();
    if (o == NULL || stages == NULL || warnings == NULL) {
        cJSON_Delete(o);
        cJSON_Delete(stages);
        cJSON_Delete(warnings);
        mb_run_free(&run);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    cJSON_AddStringToObject(o, "path", run.path);
    cJSON_AddStringToObject(o, "kind", run.kind);
    cJSON_AddNumberToObject(o, "steps", run.steps);
    cJSON_AddNumberToObject(o, "step_seconds", run.step_seconds);
    cJSON_AddNumberToObject(o, "total_seconds", run.total_seconds);
    /* absent is null, never a sentinel number */
    if (run.gpu_utilization >= 0)
        cJSON_AddNumberToObject(o, "gpu_utilization", run.gpu_utilization);
    else
        cJSON_AddNullToObject(o, "gpu_utilization");
    for (int i = 0; i < run.n_stages; i++)
        cJSON_AddItemToArray(stages, stage_json(&run.stages[i]));
    cJSON_AddItemToObject(o, "stages", stages);
    for (int i = 0; i < run.n_warnings; i++)
        cJSON_AddItemToArray(warnings, cJSON_CreateString(run.warnings[i]));
    cJSON_AddItemToObject(o, "warnings", warnings);
    if (run.evidence) {
        cJSON_AddItemToObject(o, "evidence", run.evidence);
        run.evidence = NULL; /* now owned by o */
    }
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    mb_run_free(&run);
    if (text == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int w = fprintf(out, "%s\n", text);
    free(text);
    if (w < 0)
        return mb_errno(err, MB_ESYS, "writing the trace summary");
    return MB_OK;
}
