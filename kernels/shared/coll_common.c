#include "coll_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "halfconv.h"

/* ---- dtypes ------------------------------------------------------------------ */

static const struct {
    const char *name;
    size_t size;
    double exact_limit; /* largest N such that every integer 0..N is exact */
} dtypes[] = {
    [MB_DT_FLOAT] = { "float", 4, 16777216.0 },
    [MB_DT_DOUBLE] = { "double", 8, 9007199254740992.0 },
    [MB_DT_HALF] = { "half", 2, 2048.0 },
    [MB_DT_BF16] = { "bf16", 2, 256.0 },
};

int mb_coll_dtype_parse(const char *name, mb_coll_dtype *out, mb_err *err)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strcmp(name, dtypes[i].name) == 0) {
            *out = (mb_coll_dtype)i;
            return MB_OK;
        }
    return mb_errf(err, MB_EUSAGE, "parameter dtype: '%s' is not one of %s", name,
                   MB_COLL_DTYPE_CHOICES);
}

const char *mb_coll_dtype_name(mb_coll_dtype t)
{
    return dtypes[t].name;
}

size_t mb_coll_dtype_size(mb_coll_dtype t)
{
    return dtypes[t].size;
}

/* ---- geometry ------------------------------------------------------------------ */

int mb_coll_shape_init(mb_coll_shape *s, mb_collective coll, mb_coll_dtype dtype,
                       long long size, int nranks, mb_err *err)
{
    memset(s, 0, sizeof *s);
    s->coll = coll;
    s->dtype = dtype;
    s->nranks = nranks;
    size_t es = mb_coll_dtype_size(dtype);
    size_t n = (size_t)nranks;
    bool per_rank_split = coll == MB_COLL_ALLGATHER || coll == MB_COLL_REDUCESCATTER;
    s->count = per_rank_split ? (size_t)size / (n * es) : (size_t)size / es;
    if (s->count == 0)
        return mb_errf(err, MB_ESKIP, "size %lld B holds less than one %s (%zu B)%s", size,
                       mb_coll_dtype_name(dtype), es,
                       per_rank_split ? " per rank" : "");
    switch (coll) {
    case MB_COLL_ALLGATHER:
        s->in_elems = s->count;
        s->out_elems = n * s->count;
        break;
    case MB_COLL_REDUCESCATTER:
        s->in_elems = n * s->count;
        s->out_elems = s->count;
        break;
    default:
        s->in_elems = s->out_elems = s->count;
        break;
    }
    s->bytes = (double)(per_rank_split ? n * s->count : s->count) * (double)es;
    return MB_OK;
}

/* ---- known inputs ---------------------------------------------------------------- */

int mb_coll_pattern_init(mb_coll_pattern *p, mb_coll_dtype dtype, int nranks, uint64_t seed,
                         mb_err *err)
{
    memset(p, 0, sizeof *p);
    double limit = dtypes[dtype].exact_limit, n = nranks;
    if (nranks < 1 || n > limit)
        return mb_errf(err, MB_ESKIP,
                       "no exact check possible: %d ranks exceed %s's exact integer range (%.0f)",
                       nranks, mb_coll_dtype_name(dtype), limit);
    /* Half the range for g, the rest for h; small caps keep in-place growth
     * (see docs/collectives.md) and the numbers readable. */
    double g = limit / (2 * n);
    g = g > 64 ? 64 : g < 1 ? 1 : g;
    double h = (limit - n * (double)(uint32_t)g) / n + 1;
    h = h > 16 ? 16 : h < 1 ? 1 : h;
    p->dtype = dtype;
    p->nranks = nranks;
    p->seed = seed;
    p->g_max = (uint32_t)g;
    p->h_mod = (uint32_t)h;
    for (int r = 0; r < nranks; r++)
        p->h_sum += (double)((uint32_t)r % p->h_mod);
    return MB_OK;
}

static uint32_t g_of(const mb_coll_pattern *p, size_t i)
{
    uint64_t state = p->seed ^ ((uint64_t)i * 0xD1B54A32D192ED03ull);
    return 1 + (uint32_t)(mb_splitmix64(&state) % p->g_max);
}

double mb_coll_value(const mb_coll_pattern *p, int rank, size_t global_index)
{
    return (double)g_of(p, global_index) + (double)((uint32_t)rank % p->h_mod);
}

static void store(mb_coll_dtype t, void *buf, size_t i, double v)
{
    switch (t) {
    case MB_DT_FLOAT: ((float *)buf)[i] = (float)v; break;
    case MB_DT_DOUBLE: ((double *)buf)[i] = v; break;
    case MB_DT_HALF: ((uint16_t *)buf)[i] = mb_float_to_half((float)v); break;
    case MB_DT_BF16: ((uint16_t *)buf)[i] = mb_float_to_bf16((float)v); break;
    }
}

double mb_coll_load(mb_coll_dtype t, const void *buf, size_t i)
{
    switch (t) {
    case MB_DT_FLOAT: return ((const float *)buf)[i];
    case MB_DT_DOUBLE: return ((const double *)buf)[i];
    case MB_DT_HALF: return mb_half_to_float(((const uint16_t *)buf)[i]);
    case MB_DT_BF16: return mb_bf16_to_float(((const uint16_t *)buf)[i]);
    }
    return 0;
}

void mb_coll_fill_input(const mb_coll_pattern *p, const mb_coll_shape *s, int rank, void *buf,
                        size_t first, size_t n)
{
    size_t base = s->coll == MB_COLL_ALLGATHER ? (size_t)rank * s->count : 0;
    for (size_t i = 0; i < n; i++)
        store(p->dtype, buf, i, mb_coll_value(p, rank, base + first + i));
}

void mb_coll_fill_value(mb_coll_dtype t, void *buf, size_t n, double value)
{
    for (size_t i = 0; i < n; i++)
        store(t, buf, i, value);
}

double mb_coll_expected(const mb_coll_pattern *p, const mb_coll_shape *s, int rank, size_t i)
{
    double n = p->nranks;
    switch (s->coll) {
    case MB_COLL_ALLREDUCE:
        return n * g_of(p, i) + p->h_sum;
    case MB_COLL_REDUCESCATTER:
        return n * g_of(p, (size_t)rank * s->count + i) + p->h_sum;
    case MB_COLL_ALLGATHER:
        return mb_coll_value(p, (int)(i / s->count), i);
    case MB_COLL_BROADCAST:
        return mb_coll_value(p, 0, i);
    }
    return 0;
}

void mb_coll_check_output(const mb_coll_pattern *p, const mb_coll_shape *s, int rank,
                          const void *buf, size_t first, size_t n, mb_coll_mismatch *m)
{
    for (size_t i = 0; i < n; i++) {
        double got = mb_coll_load(p->dtype, buf, i), want = mb_coll_expected(p, s, rank, first + i);
        if (got != want) {
            if (m->count == 0) {
                m->first = first + i;
                m->got = got;
                m->want = want;
            }
            m->count++;
        }
    }
}

int mb_coll_mismatch_err(const mb_coll_mismatch *m, const char *where, size_t n, mb_err *err)
{
    if (m->count == 0)
        return MB_OK;
    return mb_errf(err, MB_EVERIFY, "%s%s%zu of %zu elements differ; first at [%zu]: got %g, expected %g",
                   where ? where : "", where ? ": " : "", m->count, n, m->first, m->got, m->want);
}

void mb_coll_test_corrupt(mb_coll_dtype t, void *buf, size_t n, int rank)
{
    const char *env = getenv("MLBENCH_TEST_CORRUPT_RANK");
    if (env == NULL || *env == '\0' || atoi(env) != rank || n == 0)
        return;
    size_t i = n / 2;
    store(t, buf, i, mb_coll_load(t, buf, i) - 1); /* +1 could round back at the top of bf16's range */
}

/* ---- timing samples ---------------------------------------------------------------- */

int mb_coll_samples_add(mb_coll_samples *t, double seconds, mb_err *err)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 256;
        double *s = realloc(t->s, sizeof *s * (size_t)cap);
        if (s == NULL)
            return mb_errf(err, MB_ESYS, "out of memory for %d timing samples", cap);
        t->s = s;
        t->cap = cap;
    }
    t->s[t->n++] = seconds;
    return MB_OK;
}

void mb_coll_samples_free(mb_coll_samples *t)
{
    free(t->s);
    memset(t, 0, sizeof *t);
}

void mb_coll_report_common(mb_report *r, const mb_coll_shape *s, const mb_coll_samples *t,
                           int per_run, bool inplace)
{
    mb_report_info(r, "collective", mb_coll_name(s->coll));
    mb_report_info(r, "dtype", mb_coll_dtype_name(s->dtype));
    mb_report_info(r, "placement", inplace ? "in-place" : "out-of-place");
    mb_report_metric(r, "bytes", s->bytes, "B");
    mb_report_metric(r, "ranks", s->nranks, "");
    mb_report_metric(r, "busbw_factor", mb_busbw_factor(s->coll, s->nranks), "");
    if (s->nranks <= 1)
        mb_report_note(r, "one rank: no bus traffic%s; the rate is algbw, %s",
                       mb_busbw_factor(s->coll, s->nranks) > 0 ? "" : ", so busbw is 0 (as nccl-tests reports it)",
                       inplace ? "but in place the library has nothing to move: the time is the call's overhead "
                                 "(read the latency), not a bandwidth"
                               : "the bytes per second of the local copy");
    if (t->n == 0 || per_run < 1)
        return;
    double one = mb_median(t->s, t->n) / per_run; /* seconds of one collective */
    mb_report_metric(r, "latency", one * 1e6, "us");
    mb_report_metric(r, "algbw", mb_algbw(s->bytes, one) / 1e9, "GB/s");
    mb_report_metric(r, "busbw", mb_busbw(s->coll, s->bytes, one, s->nranks) / 1e9, "GB/s");
}
