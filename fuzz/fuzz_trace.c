/* fuzz_trace: the Kineto (PyTorch profiler) trace reader, plain JSON and
 * gzip (gzread detects the gzip magic, so one target covers both: seeds are
 * plain traces and .json.gz fixtures), through the analysis that turns the
 * events into stages, and the `mlbench trace` JSON dump.
 *
 * The class rules (configs/gap/kernel_classes.ini, ~100 regular
 * expressions) are compiled once: compiling them for every input cost more
 * than reading it (134 inputs/s). fuzz_gapconfig fuzzes the rules file.
 *
 * The reader's first read (16 KiB) holds a whole fuzz input, so the JSON
 * parser's cut-token path (a token split by a read, kept and parsed again)
 * is checked apart: the input parsed in chunks of 1..16 bytes must give the
 * same events, status and error byte as parsed whole. */
#include "fuzz_util.h"
#include "json_stream.h"
#include "stages.h"
#include "trace.h"

/* The events as one FNV-1a hash: kind, then bytes. */
static int mix(void *ctx, int kind, const void *s, size_t n)
{
    uint64_t *h = ctx;
    *h = (*h ^ (uint64_t)kind) * 1099511628211ULL;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ ((const unsigned char *)s)[i]) * 1099511628211ULL;
    *h = (*h ^ n) * 1099511628211ULL;
    return 1;
}

static int h_null(void *c) { return mix(c, 1, "", 0); }
static int h_bool(void *c, int v) { return mix(c, v ? 2 : 3, "", 0); }
static int h_num(void *c, const char *s, size_t n) { return mix(c, 4, s, n); }
static int h_str(void *c, const unsigned char *s, size_t n) { return mix(c, 5, s, n); }
static int h_key(void *c, const unsigned char *s, size_t n) { return mix(c, 6, s, n); }
static int h_sm(void *c) { return mix(c, 7, "", 0); }
static int h_em(void *c) { return mix(c, 8, "", 0); }
static int h_sa(void *c) { return mix(c, 9, "", 0); }
static int h_ea(void *c) { return mix(c, 10, "", 0); }

static const js_callbacks hash_cbs = {h_null, h_bool, h_num, h_str, h_sm, h_key, h_em, h_sa, h_ea};

typedef struct {
    uint64_t hash;
    js_status st;
    size_t at;
} js_result;

/* Parses data as trace.c does: the cut token moves to the front, the next
 * chunk goes after it, the end is a call with no new bytes. */
static js_result js_chunked(const uint8_t *data, size_t size, size_t chunk)
{
    js_result r = {14695981039346656037ULL, JS_OK, 0};
    js_parser *p = malloc(sizeof *p);
    unsigned char *buf = malloc(size + 1);
    if (p == NULL || buf == NULL)
        abort();
    mb_js_init(p, &hash_cbs, &r.hash);
    size_t have = 0, fed = 0, base = 0;
    for (;;) {
        size_t n = size - fed < chunk ? size - fed : chunk, used = 0;
        memcpy(buf + have, data + fed, n);
        fed += n;
        r.st = mb_js_parse(p, buf, have + n, n == 0, &used);
        if (r.st != JS_OK) {
            r.at = base + p->err_off;
            break;
        }
        if (used > have + n)
            abort();
        base += used;
        have = have + n - used;
        memmove(buf, buf + used, have);
        if (n == 0)
            break;
    }
    free(buf);
    free(p);
    return r;
}

static void check_chunking(const uint8_t *data, size_t size)
{
    js_result whole = js_chunked(data, size, size + 1);
    js_result cut = js_chunked(data, size, 1 + (size ? data[size - 1] % 16 : 0));
    if (whole.hash != cut.hash || whole.st != cut.st || whole.at != cut.at) {
        fprintf(stderr, "fuzz_trace: chunked parse differs: status %d/%d, byte %zu/%zu\n", whole.st, cut.st,
                whole.at, cut.at);
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tr_rules rules;
    static int loaded;
    if (!loaded) {
        mb_err lerr = { 0 };
        if (mb_tr_rules_load(&rules, NULL, &lerr) != MB_OK) {
            fprintf(stderr, "fuzz_trace: %s\n", lerr.msg);
            abort();
        }
        loaded = 1;
    }
    check_chunking(data, size);
    const char *path = fuzz_file(data, size);
    mb_err err = { 0 };
    int rc = mb_trace_dump_with(path, &rules, fuzz_null(), &err);
    fuzz_check_error(rc, &err);
    return 0;
}
