/* conv_onednn.c: CPU forward convolution ceiling through oneDNN (C API,
 * dnnl.h), f32, and bf16 where the CPU has native bf16 (avx512_bf16 or AMX).
 *
 * Parameters mirror cuDNN's (n, c, h, w, k, r, s, pad, stride). src/dst use
 * the `layout` asked for (nchw, nhwc, or `any`: oneDNN picks, usually a
 * blocked nChw16c); weights are always `any` and reordered once in setup, as
 * frameworks do for inference. The chosen formats and the implementation
 * oneDNN picked are reported. Direct algorithm (what PyTorch and TensorFlow
 * ask oneDNN for); FLOPs = mb_conv_flops = 2 N K C R S P Q.
 *
 * Setup (untimed): primitive creation, input reorders. Timed region:
 * dnnl_primitive_execute + dnnl_stream_wait. Verification: the output is
 * reordered to f32 nchw and sampled elements (corners + random, or all with
 * verify_samples = 0) are compared with a direct convolution in double over
 * the exact inputs (bf16 inputs are generated already rounded). Tolerance:
 * 4 u32 sqrt(C R S) sum |x w|, plus 2^-8 |ref| for a bf16 output. */
#include "component.h"
#include "cpu_info.h"
#include "cpu_report.h"
#include "cpu_test_hooks.h"
#include "onednn_util.h"

/* bf16 needs native dot products: oneDNN would emulate it on plain AVX-512,
 * which measures the emulation, not a ceiling. */
int mb_test_conv_bf16_support(const mb_cpu_info *ci, mb_err *why)
{
    if (ci->avx512_bf16 || (ci->amx_bf16 && ci->amx_tile))
        return MB_OK;
    return mb_errf(why, MB_ESKIP, "bf16: CPU '%s' has neither avx512_bf16 nor amx_bf16",
                   ci->model[0] ? ci->model : "unknown");
}

#ifdef MB_HAVE_DNNL
#include <math.h>
#include <oneapi/dnnl/dnnl.h>
#include <oneapi/dnnl/dnnl_debug.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "formulas.h"

#define CONV_DEFAULT_SAMPLES 256

typedef struct conv_shape {
    int n, c, h, w, k, r, s, pad, stride, p, q;
} conv_shape;

typedef struct conv_state {
    conv_shape sh;
    bool bf16;
    int threads;
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    dnnl_primitive_desc_t conv_pd;
    dnnl_primitive_t conv, dst_reorder;
    dnnl_memory_t src, wei, dst; /* in the primitive's formats */
    dnnl_memory_t dst_user;      /* f32 nchw, for verification */
    float *x, *wt;               /* exact inputs, nchw and kcrs */
    int n_samples;               /* 0 = every element */
    long long *samples;          /* flat nkpq indices */
    char impl[128], src_fmt[64], wei_fmt[64], dst_fmt[64];
    bool ran;
} conv_state;

/* ---- shape, support, fit ------------------------------------------------------ */

static int read_shape(const mb_params *p, conv_shape *sh, mb_err *err)
{
    sh->n = (int)mb_param_int(p, "n");
    sh->c = (int)mb_param_int(p, "c");
    sh->h = (int)mb_param_int(p, "h");
    sh->w = (int)mb_param_int(p, "w");
    sh->k = (int)mb_param_int(p, "k");
    sh->r = (int)mb_param_int(p, "r");
    sh->s = (int)mb_param_int(p, "s");
    sh->pad = (int)mb_param_int(p, "pad");
    sh->stride = (int)mb_param_int(p, "stride");
    sh->p = mb_conv_out_dim(sh->h, sh->r, sh->pad, sh->stride, 1);
    sh->q = mb_conv_out_dim(sh->w, sh->s, sh->pad, sh->stride, 1);
    if (sh->p <= 0 || sh->q <= 0)
        return mb_errf(err, MB_EUSAGE, "parameters h/w/r/s/pad/stride: a %dx%d filter with pad "
                       "%d does not fit a %dx%d input", sh->r, sh->s, sh->pad, sh->h, sh->w);
    return MB_OK;
}

static int check_dtype(const mb_params *p, mb_err *why)
{
    if (strcmp(mb_param_str(p, "dtype"), "bf16") != 0)
        return MB_OK;
    int rc = mb_test_conv_bf16_support(mb_cpu_info_host(), why);
    if (rc != MB_OK)
        return rc;
    if (!mb_onednn_isa_has_bf16())
        return mb_errf(why, MB_ESKIP, "bf16: oneDNN's effective ISA is %s (DNNL_MAX_CPU_ISA?)",
                       dnnl_cpu_isa2str(dnnl_get_effective_cpu_isa()));
    return MB_OK;
}

/* x, w (f32 reference copies), the primitive's src/wei/dst and the f32 dst
 * copy: about 2 (x + w) + 2 dst f32 elements. */
static int check_fits(const conv_shape *sh, mb_err *err)
{
    double x = (double)sh->n * sh->c * sh->h * sh->w, w = (double)sh->k * sh->c * sh->r * sh->s;
    double y = (double)sh->n * sh->k * sh->p * sh->q;
    double need = 4.0 * (2 * (x + w) + 2 * y);
    return mb_mem_fits(need, "tensors", err);
}

static int conv_probe(const mb_params *p, mb_err *why)
{
    if (p == NULL)
        return MB_OK;
    conv_shape sh;
    int rc;
    if ((rc = read_shape(p, &sh, why)) != MB_OK || (rc = check_dtype(p, why)) != MB_OK)
        return rc;
    if (mb_onednn_resolve_threads(p, why) < 0)
        return MB_ESKIP;
    return check_fits(&sh, why);
}

/* ---- helpers -------------------------------------------------------------------- */

/* Round to nearest even, as oneDNN converts. */
static float round_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    u += 0x7FFFu + ((u >> 16) & 1u);
    u &= 0xFFFF0000u;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void fill_random(float *x, size_t count, uint64_t seed, bool bf16)
{
    for (size_t i = 0; i < count; i++) {
        float v = (float)mb_rand_unit(&seed);
        if (bf16)
            v = round_to_bf16(v);
        x[i] = v != 0.0f ? v : 0.5f;
    }
}

/* oneDNN's own notation for a blocked layout: dims ordered outermost first
 * by stride (a = n/o, b = c/i, c = h, d = w), upper case when the dim is also
 * blocked inside, then the inner blocks: nchw = abcd, nhwc = acdb,
 * nChw16c = aBcd16b. */
static void format_name(const dnnl_memory_desc_t *md, char *buf, size_t len)
{
    if (md->format_kind != dnnl_blocked) {
        snprintf(buf, len, "opaque");
        return;
    }
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    int order[DNNL_MAX_NDIMS];
    for (int d = 0; d < md->ndims; d++)
        order[d] = d;
    for (int i = 1; i < md->ndims; i++) /* stable insertion sort, strides descending */
        for (int j = i; j > 0 && b->strides[order[j]] > b->strides[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t at = 0;
    for (int i = 0; i < md->ndims && at + 1 < len; i++) {
        bool blocked = false;
        for (int k = 0; k < b->inner_nblks; k++)
            blocked |= b->inner_idxs[k] == order[i];
        buf[at++] = (char)((blocked ? 'A' : 'a') + order[i]);
    }
    buf[at] = '\0';
    for (int k = 0; k < b->inner_nblks && at < len; k++)
        at += (size_t)snprintf(buf + at, len - at, "%lld%c", (long long)b->inner_blks[k],
                               'a' + (int)b->inner_idxs[k]);
}

/* Byte offset of logical element idx[] in a blocked memory (as oneDNN's
 * memory_desc_wrapper::off_v computes it). */
static size_t blocked_offset(const dnnl_memory_desc_t *md, const dnnl_dim_t *idx, size_t esz)
{
    const dnnl_blocking_desc_t *b = &md->format_desc.blocking;
    dnnl_dim_t pos[DNNL_MAX_NDIMS];
    for (int d = 0; d < md->ndims; d++)
        pos[d] = idx[d] + md->padded_offsets[d];
    dnnl_dim_t off = md->offset0, blk_stride = 1;
    for (int k = b->inner_nblks - 1; k >= 0; k--) {
        int d = (int)b->inner_idxs[k];
        off += (pos[d] % b->inner_blks[k]) * blk_stride;
        pos[d] /= b->inner_blks[k];
        blk_stride *= b->inner_blks[k];
    }
    for (int d = 0; d < md->ndims; d++)
        off += pos[d] * b->strides[d];
    return (size_t)off * esz;
}

/* Copies user f32 data (tag) into a new memory of `md` via a reorder. */
static int load_input(conv_state *st, const float *data, const dnnl_dims_t dims,
                      dnnl_format_tag_t tag, const dnnl_memory_desc_t *md, dnnl_memory_t *out,
                      mb_err *err)
{
    int rc = MB_OK;
    dnnl_memory_desc_t user_md;
    dnnl_memory_t user = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t reorder = NULL;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&user_md, 4, dims, dnnl_f32, tag), "user md");
    DNNL_TRY(dnnl_memory_create(&user, &user_md, st->engine, (void *)data), "user memory");
    DNNL_TRY(dnnl_memory_create(out, md, st->engine, DNNL_MEMORY_ALLOCATE), "input memory");
    DNNL_TRY(dnnl_reorder_primitive_desc_create(&pd, &user_md, st->engine, md, st->engine, NULL),
             "input reorder desc");
    DNNL_TRY(dnnl_primitive_create(&reorder, pd), "input reorder");
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, user }, { DNNL_ARG_TO, *out } };
    DNNL_TRY(dnnl_primitive_execute(reorder, st->stream, 2, args), "input reorder execute");
    DNNL_TRY(dnnl_stream_wait(st->stream), "stream wait");
fail:
    if (reorder)
        dnnl_primitive_destroy(reorder);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (user)
        dnnl_memory_destroy(user);
    return rc;
}

/* The f32 nchw copy of dst and the reorder that fills it. */
static int make_dst_user(conv_state *st, const dnnl_dims_t dims, const dnnl_memory_desc_t *dst_md,
                         mb_err *err)
{
    int rc = MB_OK;
    dnnl_memory_desc_t user_md;
    dnnl_primitive_desc_t pd = NULL;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&user_md, 4, dims, dnnl_f32, dnnl_nchw), "dst user md");
    DNNL_TRY(dnnl_memory_create(&st->dst_user, &user_md, st->engine, DNNL_MEMORY_ALLOCATE),
             "dst user memory");
    DNNL_TRY(dnnl_reorder_primitive_desc_create(&pd, dst_md, st->engine, &user_md, st->engine,
                                                NULL), "dst reorder desc");
    DNNL_TRY(dnnl_primitive_create(&st->dst_reorder, pd), "dst reorder");
fail:
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    return rc;
}

static void choose_samples(conv_state *st, int want)
{
    const conv_shape *sh = &st->sh;
    long long total = (long long)sh->n * sh->k * sh->p * sh->q;
    if (want == 0 || total <= want) {
        st->n_samples = 0;
        return;
    }
    st->samples = malloc(sizeof *st->samples * (size_t)want);
    if (st->samples == NULL) { /* check everything rather than nothing */
        st->n_samples = 0;
        return;
    }
    uint64_t seed = 0xC0FFEEull;
    for (int i = 0; i < want; i++)
        st->samples[i] = i == 0 ? 0 : i == 1 ? total - 1
                                             : (long long)(mb_splitmix64(&seed) % (uint64_t)total);
    st->n_samples = want;
}

static void conv_teardown(void *state);

static int create_primitive(conv_state *st, const char *layout, mb_err *err)
{
    int rc = MB_OK;
    const conv_shape *sh = &st->sh;
    dnnl_data_type_t dt = st->bf16 ? dnnl_bf16 : dnnl_f32;
    dnnl_format_tag_t act = strcmp(layout, "nchw") == 0   ? dnnl_nchw
                            : strcmp(layout, "nhwc") == 0 ? dnnl_nhwc
                                                          : dnnl_format_tag_any;
    dnnl_dims_t src_dims = { sh->n, sh->c, sh->h, sh->w }, wei_dims = { sh->k, sh->c, sh->r, sh->s },
                dst_dims = { sh->n, sh->k, sh->p, sh->q };
    dnnl_dims_t strides = { sh->stride, sh->stride }, pads = { sh->pad, sh->pad };
    dnnl_memory_desc_t src_md, wei_md, dst_md;
    dnnl_convolution_desc_t cd;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dt, act), "src md");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&wei_md, 4, wei_dims, dt, dnnl_format_tag_any), "wei md");
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dt, act), "dst md");
    DNNL_TRY(dnnl_convolution_forward_desc_init(&cd, dnnl_forward_inference,
                                                dnnl_convolution_direct, &src_md, &wei_md, NULL,
                                                &dst_md, strides, pads, pads),
             "convolution desc");
    DNNL_TRY(dnnl_primitive_desc_create(&st->conv_pd, &cd, NULL, st->engine, NULL),
             "convolution primitive desc (no implementation for this shape/dtype?)");
    DNNL_TRY(dnnl_primitive_create(&st->conv, st->conv_pd), "convolution primitive");

    const char *impl = NULL;
    dnnl_primitive_desc_query(st->conv_pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(st->impl, sizeof st->impl, "%s", impl ? impl : "?");
    const dnnl_memory_desc_t *psrc = dnnl_primitive_desc_query_md(st->conv_pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *pwei = dnnl_primitive_desc_query_md(st->conv_pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *pdst = dnnl_primitive_desc_query_md(st->conv_pd, dnnl_query_dst_md, 0);
    format_name(psrc, st->src_fmt, sizeof st->src_fmt);
    format_name(pwei, st->wei_fmt, sizeof st->wei_fmt);
    format_name(pdst, st->dst_fmt, sizeof st->dst_fmt);

    if ((rc = load_input(st, st->x, src_dims, dnnl_nchw, psrc, &st->src, err)) != MB_OK ||
        (rc = load_input(st, st->wt, wei_dims, dnnl_oihw, pwei, &st->wei, err)) != MB_OK)
        goto fail;
    DNNL_TRY(dnnl_memory_create(&st->dst, pdst, st->engine, DNNL_MEMORY_ALLOCATE), "dst memory");
    /* All-ones bytes are NaN in f32 and bf16: an element never written fails. */
    void *dst_ptr = NULL;
    DNNL_TRY(dnnl_memory_get_data_handle(st->dst, &dst_ptr), "dst handle");
    memset(dst_ptr, 0xFF, dnnl_memory_desc_get_size(pdst));
    rc = make_dst_user(st, dst_dims, pdst, err);
fail:
    return rc;
}

static int conv_setup(const mb_params *p, void **state, mb_err *err)
{
    int rc;
    conv_shape sh;
    if ((rc = read_shape(p, &sh, err)) != MB_OK || (rc = check_dtype(p, err)) != MB_OK ||
        (rc = check_fits(&sh, err)) != MB_OK)
        return rc;
    int threads = mb_onednn_resolve_threads(p, err);
    if (threads < 0)
        return MB_ESKIP;
    conv_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *state = st;
    st->sh = sh;
    st->bf16 = strcmp(mb_param_str(p, "dtype"), "bf16") == 0;
    /* Before the primitive exists: oneDNN partitions work by the thread
     * count it sees at creation. */
    st->threads = mb_onednn_set_threads(threads);
    size_t nx = (size_t)sh.n * sh.c * sh.h * sh.w, nw = (size_t)sh.k * sh.c * sh.r * sh.s;
    st->x = malloc(nx * sizeof *st->x);
    st->wt = malloc(nw * sizeof *st->wt);
    if (st->x == NULL || st->wt == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory for the inputs");
        goto fail;
    }
    fill_random(st->x, nx, 0x5EC, st->bf16);
    fill_random(st->wt, nw, 0x3E1, st->bf16);
    DNNL_TRY(dnnl_engine_create(&st->engine, dnnl_cpu, 0), "engine");
    DNNL_TRY(dnnl_stream_create(&st->stream, st->engine, dnnl_stream_default_flags), "stream");
    if ((rc = create_primitive(st, mb_param_str(p, "layout"), err)) != MB_OK)
        goto fail;
    choose_samples(st, (int)mb_param_int(p, "verify_samples"));
    return MB_OK;
fail:
    conv_teardown(st);
    *state = NULL;
    return rc;
}

static int conv_run(void *state, double *seconds, mb_err *err)
{
    conv_state *st = state;
    int rc = mb_onednn_run_timed(st->conv, st->stream, st->src, st->wei, st->dst, "convolution execute", seconds, err);
    st->ran = st->ran || rc == MB_OK;
    return rc;
}

static double conv_work(void *state)
{
    const conv_shape *sh = &((conv_state *)state)->sh;
    return mb_conv_flops(sh->n, sh->k, sh->c, sh->r, sh->s, sh->p, sh->q);
}

/* Direct convolution at output (n, k, p, q) in double; *mag = sum |x w|. */
static double reference(const conv_state *st, long long flat, double *mag)
{
    const conv_shape *sh = &st->sh;
    int q = (int)(flat % sh->q), p = (int)(flat / sh->q % sh->p),
        k = (int)(flat / ((long long)sh->q * sh->p) % sh->k),
        n = (int)(flat / ((long long)sh->q * sh->p * sh->k));
    double sum = 0.0, m = 0.0;
    for (int c = 0; c < sh->c; c++)
        for (int r = 0; r < sh->r; r++) {
            int h = p * sh->stride - sh->pad + r;
            if (h < 0 || h >= sh->h)
                continue;
            for (int s = 0; s < sh->s; s++) {
                int w = q * sh->stride - sh->pad + s;
                if (w < 0 || w >= sh->w)
                    continue;
                double prod = (double)st->x[(((size_t)n * sh->c + c) * sh->h + h) * sh->w + w] *
                              (double)st->wt[(((size_t)k * sh->c + c) * sh->r + r) * sh->s + s];
                sum += prod;
                m += fabs(prod);
            }
        }
    *mag = m;
    return sum;
}

static int conv_verify(void *state, mb_err *err)
{
    conv_state *st = state;
    int rc = MB_OK;
    if (!st->ran)
        return mb_errf(err, MB_ESKIP, "no iteration ran");
    dnnl_exec_arg_t args[2] = { { DNNL_ARG_FROM, st->dst }, { DNNL_ARG_TO, st->dst_user } };
    DNNL_TRY(dnnl_primitive_execute(st->dst_reorder, st->stream, 2, args), "dst reorder execute");
    DNNL_TRY(dnnl_stream_wait(st->stream), "stream wait");
    const float *y = NULL;
    DNNL_TRY(dnnl_memory_get_data_handle(st->dst_user, (void **)&y), "dst handle");
    const conv_shape *sh = &st->sh;
    long long total = (long long)sh->n * sh->k * sh->p * sh->q;
    long long checks = st->n_samples > 0 ? st->n_samples : total, bad = 0, first = -1;
    double first_got = 0, first_want = 0, first_tol = 0;
    double crs_sqrt = sqrt((double)sh->c * sh->r * sh->s);
    for (long long i = 0; i < checks; i++) {
        long long flat = st->n_samples > 0 ? st->samples[i] : i;
        double mag, want = reference(st, flat, &mag);
        double tol = 4.0 * 0x1p-24 * crs_sqrt * mag + (st->bf16 ? 0x1p-8 * fabs(want) : 0.0);
        if (fabs((double)y[flat] - want) <= tol) /* false for NaN */
            continue;
        if (bad++ == 0) {
            first = flat;
            first_got = y[flat];
            first_want = want;
            first_tol = tol;
        }
    }
    if (bad == 0)
        return MB_OK;
    return mb_errf(err, MB_EVERIFY, "conv %s: %lld of %lld checked outputs wrong; first at flat "
                   "nkpq index %lld: %.9g, expected %.9g (tolerance %.3g)",
                   st->bf16 ? "bf16" : "fp32", bad, checks, first, first_got, first_want,
                   first_tol);
fail:
    return rc;
}

static void conv_report(void *state, mb_report *r)
{
    conv_state *st = state;
    mb_cpu_dtype dt = st->bf16 ? MB_CPU_BF16 : MB_CPU_FP32;
    mb_cpu_report_peak(r, dt, st->threads);
    mb_report_metric(r, "p", st->sh.p, "");
    mb_report_metric(r, "q", st->sh.q, "");
    mb_report_info(r, "implementation", st->impl);
    mb_report_info(r, "src_format", st->src_fmt);
    mb_report_info(r, "weights_format", st->wei_fmt);
    mb_report_info(r, "dst_format", st->dst_fmt);
    mb_onednn_report(r, dt);
    char how[128];
    if (st->n_samples > 0)
        snprintf(how, sizeof how, "%d sampled outputs vs a direct convolution in double",
                 st->n_samples);
    else
        snprintf(how, sizeof how, "every output vs a direct convolution in double");
    mb_report_info(r, "verification", how);
    mb_cpu_report_smt_note(r, st->threads);
}

static void conv_teardown(void *state)
{
    conv_state *st = state;
    if (st == NULL)
        return;
    if (st->conv)
        dnnl_primitive_destroy(st->conv);
    if (st->dst_reorder)
        dnnl_primitive_destroy(st->dst_reorder);
    if (st->conv_pd)
        dnnl_primitive_desc_destroy(st->conv_pd);
    dnnl_memory_t mems[4] = { st->src, st->wei, st->dst, st->dst_user };
    for (int i = 0; i < 4; i++)
        if (mems[i])
            dnnl_memory_destroy(mems[i]);
    if (st->stream)
        dnnl_stream_destroy(st->stream);
    if (st->engine)
        dnnl_engine_destroy(st->engine);
    free(st->x);
    free(st->wt);
    free(st->samples);
    free(st);
    mb_onednn_restore_threads();
}

void mb_test_conv_corrupt(void *state)
{
    conv_state *st = state;
    const conv_shape *sh = &st->sh;
    /* The last element: always checked (a sampled corner), and in a blocked
     * layout its offset depends on every dim and on the block padding. */
    long long flat = (long long)sh->n * sh->k * sh->p * sh->q - 1;
    dnnl_dim_t idx[4] = { flat / ((long long)sh->q * sh->p * sh->k),
                          flat / ((long long)sh->q * sh->p) % sh->k, flat / sh->q % sh->p,
                          flat % sh->q };
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(st->conv_pd, dnnl_query_dst_md, 0);
    unsigned char *base = NULL;
    dnnl_memory_get_data_handle(st->dst, (void **)&base);
    size_t off = blocked_offset(md, idx, st->bf16 ? 2 : 4);
    /* Flip the sign and exponent's top bit: off by far more than any tolerance. */
    base[off + (st->bf16 ? 1 : 3)] ^= 0xC0;
}

const mb_backend_code mb_conv_onednn = {
    .component = "conv",
    .backend = "onednn",
    .probe = conv_probe,
    .setup = conv_setup,
    .run = conv_run,
    .work_per_iter = conv_work,
    .verify = conv_verify,
    .report = conv_report,
    .teardown = conv_teardown,
};

#else /* !MB_HAVE_DNNL */

MB_NOT_BUILT_IN(mb_conv_onednn, "conv", "onednn", "oneDNN not found at build time (apt-get install libdnnl-dev)");

void mb_test_conv_corrupt(void *state)
{
    (void)state;
}

#endif
