/* hostmem_memcpy.c: single-thread memcpy bandwidth (glibc's memcpy, the
 * copy most host code actually calls) over buffers beyond the caches.
 *
 * Bytes are counted as STREAM counts its copy: read + written = 2 x size, so
 * the figure sits next to hostmem/stream copy (half of it is size / time,
 * the figure most memcpy tools print; the report says so). The copy runs on the
 * calling thread (not pinned: pinning the harness's thread would outlive the
 * case). Verified byte for byte against the random source; the destination
 * starts as the source's complement so a skipped copy cannot pass. */
#include <stdlib.h>
#include <string.h>

#include "component.h"
#include "cpu_test_hooks.h"
#include "host.h"
#include "hostmem_util.h"

typedef struct memcpy_state {
    unsigned char *src, *dst;
    size_t size;
    long long llc_bytes;
    bool ran;
} memcpy_state;

static int memcpy_probe(const mb_params *p, mb_err *why)
{
    if (p == NULL)
        return MB_OK;
    return mb_hostmem_fits(2, mb_hostmem_array_bytes(mb_param_int(p, "size"), NULL), why);
}

static void memcpy_teardown(void *state);

/* Random words in the source, their complement in the destination: every
 * page of both is touched before the first timed copy. */
static void fill_buffers(memcpy_state *st)
{
    uint64_t seed = 0x4D454D435059ull;
    size_t words = st->size / sizeof(uint64_t);
    uint64_t *s = (uint64_t *)st->src, *d = (uint64_t *)st->dst;
    for (size_t i = 0; i < words; i++) {
        s[i] = mb_splitmix64(&seed);
        d[i] = ~s[i];
    }
    for (size_t i = words * sizeof(uint64_t); i < st->size; i++) {
        st->src[i] = (unsigned char)(mb_splitmix64(&seed) | 1);
        st->dst[i] = (unsigned char)~st->src[i];
    }
}

static int memcpy_setup(const mb_params *p, void **state, mb_err *err)
{
    int rc;
    memcpy_state *st = calloc(1, sizeof *st);
    if (st == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    *state = st;
    long long bytes = mb_hostmem_array_bytes(mb_param_int(p, "size"), &st->llc_bytes);
    if ((rc = mb_hostmem_fits(2, bytes, err)) != MB_OK)
        goto fail;
    if (bytes < 1) {
        rc = mb_errf(err, MB_EUSAGE, "parameter size: must be at least 1 byte");
        goto fail;
    }
    st->size = (size_t)bytes;
    st->src = mb_hostmem_map(st->size, err);
    st->dst = st->src ? mb_hostmem_map(st->size, err) : NULL;
    if (st->dst == NULL) {
        rc = err ? err->code : MB_ESYS;
        goto fail;
    }
    fill_buffers(st);
    return MB_OK;
fail:
    memcpy_teardown(st);
    *state = NULL;
    return rc;
}

static int memcpy_run(void *state, double *seconds, mb_err *err)
{
    (void)err;
    memcpy_state *st = state;
    double t0 = mb_now();
    memcpy(st->dst, st->src, st->size);
    *seconds = mb_now() - t0;
    st->ran = true;
    return MB_OK;
}

static double memcpy_work(void *state)
{
    memcpy_state *st = state;
    return 2.0 * (double)st->size;
}

static int memcpy_verify(void *state, mb_err *err)
{
    memcpy_state *st = state;
    if (!st->ran)
        return mb_errf(err, MB_ESKIP, "no iteration ran");
    if (memcmp(st->dst, st->src, st->size) == 0)
        return MB_OK;
    size_t first = 0, bad = 0;
    for (size_t i = 0; i < st->size; i++) {
        if (st->dst[i] != st->src[i] && bad++ == 0)
            first = i;
    }
    return mb_errf(err, MB_EVERIFY, "memcpy: %zu of %zu bytes differ; first at offset %zu: "
                   "0x%02x, expected 0x%02x", bad, st->size, first, st->dst[first],
                   st->src[first]);
}

static void memcpy_report(void *state, mb_report *r)
{
    memcpy_state *st = state;
    mb_report_metric(r, "size_bytes", (double)st->size, "B");
    mb_report_metric(r, "llc_total_bytes", (double)st->llc_bytes, "B");
    mb_report_info(r, "bytes_counted", "2 x size (read + write, as STREAM copy); "
                                       "bytes copied per second = rate / 2");
    mb_report_info(r, "transparent_hugepages", mb_thp_mode());
    if (st->llc_bytes > 0 && (double)st->size < 4.0 * (double)st->llc_bytes)
        mb_report_note(r, "buffers of %.1f MiB are below 4x the %.1f MiB of last-level cache: "
                       "this measures caches, not DRAM",
                       (double)st->size / 1048576.0, st->llc_bytes / 1048576.0);
}

static void memcpy_teardown(void *state)
{
    memcpy_state *st = state;
    if (st == NULL)
        return;
    mb_hostmem_unmap(st->src, st->size);
    mb_hostmem_unmap(st->dst, st->size);
    free(st);
}

void mb_test_memcpy_corrupt(void *state, size_t index)
{
    memcpy_state *st = state;
    st->dst[index % st->size] ^= 0x10;
}

const mb_backend_code mb_hostmem_memcpy = {
    .component = "hostmem",
    .backend = "memcpy",
    .probe = memcpy_probe,
    .setup = memcpy_setup,
    .run = memcpy_run,
    .work_per_iter = memcpy_work,
    .verify = memcpy_verify,
    .report = memcpy_report,
    .teardown = memcpy_teardown,
};
