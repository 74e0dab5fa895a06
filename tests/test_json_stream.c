/* test_json_stream.c: known answers for the trace reader's streaming JSON
 * parser (harness/analysis/trace/json_stream.c): every token kind, escapes,
 * number grammar, errors with their byte offsets, and the same events for
 * every chunk size (a token cut anywhere by a read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../harness/analysis/trace/json_stream.h"

typedef struct {
    char ev[16384]; /* the events as text: n t f #num s<len>:bytes k<len>:bytes { } [ ] */
    size_t n;
    int stop_at; /* the callback numbered this (1-based) returns 0; 0: never */
    int calls;
} rec;

static int add(rec *r, const char *tag, const void *s, size_t n)
{
    size_t t = strlen(tag);
    assert_true(r->n + t + n + 2 < sizeof r->ev);
    memcpy(r->ev + r->n, tag, t);
    r->n += t;
    memcpy(r->ev + r->n, s, n); /* may hold NUL: compared with memcmp */
    r->n += n;
    r->ev[r->n++] = ' ';
    r->ev[r->n] = '\0';
    return ++r->calls != r->stop_at;
}

static int on_null(void *c)
{
    return add(c, "n", "", 0);
}

static int on_boolean(void *c, int v)
{
    return add(c, v ? "t" : "f", "", 0);
}

static int on_number(void *c, const char *s, size_t n)
{
    return add(c, "#", s, n);
}

static int on_string(void *c, const unsigned char *s, size_t n)
{
    char tag[32];
    snprintf(tag, sizeof tag, "s%zu:", n);
    return add(c, tag, s, n);
}

static int on_key(void *c, const unsigned char *s, size_t n)
{
    char tag[32];
    snprintf(tag, sizeof tag, "k%zu:", n);
    return add(c, tag, s, n);
}

static int on_start_map(void *c)
{
    return add(c, "{", "", 0);
}

static int on_end_map(void *c)
{
    return add(c, "}", "", 0);
}

static int on_start_array(void *c)
{
    return add(c, "[", "", 0);
}

static int on_end_array(void *c)
{
    return add(c, "]", "", 0);
}

static const js_callbacks cbs = {on_null,      on_boolean, on_number,      on_string,   on_start_map,
                                 on_key,       on_end_map, on_start_array, on_end_array};

typedef struct {
    js_status st;
    size_t err_at; /* absolute offset of the offending byte */
    const char *why;
} outcome;

/* Feeds doc[0..len) `chunk` bytes at a time the way trace.c does: the cut
 * token's bytes move to the front and the next chunk goes after them; the
 * end is one more call with no new bytes and at_eof. */
static outcome run(const char *doc, size_t len, size_t chunk, rec *r)
{
    js_parser *p = malloc(sizeof *p);
    unsigned char *buf = malloc(len + 1);
    assert_non_null(p);
    assert_non_null(buf);
    mb_js_init(p, &cbs, r);
    size_t have = 0, fed = 0, base = 0;
    outcome o = {JS_OK, 0, NULL};
    for (;;) {
        size_t n = len - fed < chunk ? len - fed : chunk;
        memcpy(buf + have, doc + fed, n);
        fed += n;
        bool eof = n == 0;
        size_t used = 0;
        o.st = mb_js_parse(p, buf, have + n, eof, &used);
        if (o.st != JS_OK) {
            o.err_at = base + p->err_off;
            o.why = p->err;
            break;
        }
        assert_true(used <= have + n);
        base += used;
        have = have + n - used;
        memmove(buf, buf + used, have);
        if (eof) {
            assert_true(mb_js_done(p));
            break;
        }
    }
    free(buf);
    free(p);
    return o;
}

static outcome run_str(const char *doc, rec *r)
{
    memset(r, 0, sizeof *r);
    return run(doc, strlen(doc), 1 << 20, r);
}

static void expect_events(const char *doc, const char *events)
{
    rec r;
    outcome o = run_str(doc, &r);
    if (o.st != JS_OK)
        fail_msg("%s: error at %zu: %s", doc, o.err_at, o.why ? o.why : "(canceled)");
    assert_string_equal(r.ev, events);
}

static void expect_error(const char *doc, size_t at, const char *why)
{
    rec r;
    outcome o = run_str(doc, &r);
    if (o.st != JS_ERROR)
        fail_msg("%s: accepted (%s)", doc, r.ev);
    if (o.err_at != at || strstr(o.why, why) == NULL)
        fail_msg("%s: error at %zu: %s; expected at %zu: %s", doc, o.err_at, o.why, at, why);
}

static void test_tokens(void **state)
{
    (void)state;
    expect_events("{\"a\": [null, true, false, -0, 1e308, 1.5E-3, \"x\"], \"b\": {}, \"c\": []}",
                  "{ k1:a [ n t f #-0 #1e308 #1.5E-3 s1:x ] k1:b { } k1:c [ ] } ");
    expect_events(" \t\r\n42 \n", "#42 ");
    expect_events("\"\"", "s0: ");
    expect_events("[0, -1, 12.5e+10, 3E-0, 0.0]", "[ #0 #-1 #12.5e+10 #3E-0 #0.0 ] ");
    expect_events("{\"\": null}", "{ k0: n } ");
}

static void test_escapes(void **state)
{
    (void)state;
    rec r;
    const char *doc = "[\"a\\nb\\\"c\\\\d\\/e\\b\\f\\r\\t\", \"\\u0041\\u00e9\\u20ac\\ud83d\\ude00\", "
                      "\"x\\u0000y\", \"\\ud800z\\udc00\", \"\\ud800\\u0041\"]";
    outcome o = run_str(doc, &r);
    assert_int_equal(o.st, JS_OK);
    static const char want[] = "[ s13:a\nb\"c\\d/e\b\f\r\t s10:A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 "
                               "s3:x\0y s3:?z? s2:?A ] ";
    assert_int_equal(r.n, sizeof want - 1);
    assert_memory_equal(r.ev, want, sizeof want - 1);
    expect_error("[\"\\x\"]", 3, "'\\' occurs before a character");
    expect_error("[\"\\u12G4\"]", 6, "non-hex");
    expect_error("[\"a\x01\"]", 3, "invalid character inside string");
    expect_events("[\"\xff\xfe\"]", "[ s2:\xff\xfe ] "); /* UTF-8 not validated */
    /* past the 8-bytes-at-a-time scan */
    expect_error("[\"abcdefghijklmnop\x1f\"]", 18, "invalid character inside string");
    expect_events("[\"abcdefghijklmnopq\\\"rstuvwxyz0123456789\\\\\"]",
                  "[ s38:abcdefghijklmnopq\"rstuvwxyz0123456789\\ ] ");
    expect_events("[\"\x7f\x80\xa0\xdc\xe0\xff~!#$%&'()*+,-.\"]", "[ s20:\x7f\x80\xa0\xdc\xe0\xff~!#$%&'()*+,-. ] ");
}

static void test_numbers(void **state)
{
    (void)state;
    expect_error("[01]", 2, "after array element");
    expect_error("[1.]", 3, "after the decimal point");
    expect_error("[.5]", 1, "invalid char");
    expect_error("[-]", 2, "after the minus sign");
    expect_error("[+1]", 1, "invalid char");
    expect_error("[1e]", 3, "after the exponent");
    expect_error("[1e+]", 4, "after the exponent");
    expect_error("[--1]", 2, "after the minus sign");
    expect_error("[NaN]", 1, "lexical error");
    expect_error("[1x]", 2, "invalid char");
    expect_events("-0", "#-0 ");
    expect_error("-", 1, "premature EOF");
    expect_error("1.", 2, "premature EOF");
}

static void test_literals_and_structure(void **state)
{
    (void)state;
    expect_error("[tru]", 4, "invalid string");
    expect_error("[True]", 1, "invalid char");
    expect_error("[nulll]", 5, "invalid char");
    expect_error("{\"a\" 1}", 5, "separated by a colon");
    expect_error("{\"a\": 1,, }", 8, "invalid object key");
    expect_error("{1: 2}", 1, "invalid object key");
    expect_error("{\"a\": 1 \"b\"}", 8, "inside map, I expect");
    expect_error("[1 2]", 3, "after array element");
    expect_error("[,]", 1, "unallowed token");
    expect_error("[1,]", 3, "unallowed token");
    expect_error("]", 0, "unallowed token");
    expect_error("{\"a\"]", 4, "separated by a colon");
}

static void test_ends(void **state)
{
    (void)state;
    expect_error("", 0, "premature EOF");
    expect_error("  \n", 3, "premature EOF");
    expect_error("{\"a\": [1, 2", 11, "premature EOF");
    expect_error("[\"abc", 5, "premature EOF");
    expect_error("[tr", 3, "premature EOF");
    expect_error("{} x", 3, "trailing garbage");
    expect_error("{}{}", 2, "trailing garbage");
    expect_error("1 2", 2, "trailing garbage");
    expect_events("{}  \n", "{ } ");
}

static void test_nesting(void **state)
{
    (void)state;
    char doc[2 * JS_MAX_DEPTH + 4];
    memset(doc, '[', JS_MAX_DEPTH);
    memset(doc + JS_MAX_DEPTH, ']', JS_MAX_DEPTH);
    rec *r = calloc(1, sizeof *r + 4 * JS_MAX_DEPTH);
    assert_non_null(r);
    outcome o = run(doc, 2 * JS_MAX_DEPTH, 1 << 20, r);
    assert_int_equal(o.st, JS_OK);
    memmove(doc + 1, doc, 2 * JS_MAX_DEPTH);
    doc[0] = '[';
    doc[2 * JS_MAX_DEPTH + 1] = ']';
    memset(r, 0, sizeof *r);
    o = run(doc, 2 * JS_MAX_DEPTH + 2, 1 << 20, r);
    assert_int_equal(o.st, JS_ERROR);
    assert_int_equal(o.err_at, JS_MAX_DEPTH);
    assert_non_null(strstr(o.why, "nested too deep"));
    free(r);
}

static void test_cancel(void **state)
{
    (void)state;
    rec r;
    memset(&r, 0, sizeof r);
    r.stop_at = 3; /* '{', key "ab", then the string "xy" at byte 7 */
    const char *doc = "{\"ab\": \"xy\", \"c\": 1}";
    outcome o = run(doc, strlen(doc), 1 << 20, &r);
    assert_int_equal(o.st, JS_CANCELED);
    assert_int_equal(o.err_at, 7);
    assert_string_equal(r.ev, "{ k2:ab s2:xy ");
}

/* Every chunk size from 1 to the whole document gives the same events: a
 * token cut at any byte is kept and parsed again whole. */
static void test_chunk_boundaries(void **state)
{
    (void)state;
    const char *doc = "{\"traceEvents\": [{\"ph\": \"X\", \"name\": \"k\\u00e9\\ud83d\\ude00\\n\\\"q\\\"\", "
                      "\"ts\": 1712195495505543.2, \"dur\": -1.5e-3, \"args\": {\"a\": [true, false, null, "
                      "0, 12345678901234567890]}}, {}], \"x\": \"\\u0000\", \"y\" : [[[]]] }\n";
    size_t len = strlen(doc);
    rec *whole = calloc(1, sizeof *whole), *cut = calloc(1, sizeof *cut);
    assert_non_null(whole);
    assert_non_null(cut);
    assert_int_equal(run(doc, len, len, whole).st, JS_OK);
    for (size_t chunk = 1; chunk <= len; chunk++) {
        memset(cut, 0, sizeof *cut);
        assert_int_equal(run(doc, len, chunk, cut).st, JS_OK);
        assert_int_equal(cut->n, whole->n);
        assert_memory_equal(cut->ev, whole->ev, whole->n);
    }
    /* Errors land on the same byte whatever the chunking. */
    const char *bad = "{\"a\": [1, 2, 3.], \"b\": 4}";
    for (size_t chunk = 1; chunk <= strlen(bad); chunk++) {
        memset(cut, 0, sizeof *cut);
        outcome o = run(bad, strlen(bad), chunk, cut);
        assert_int_equal(o.st, JS_ERROR);
        assert_int_equal(o.err_at, 15);
    }
    free(whole);
    free(cut);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tokens),         cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_numbers),        cmocka_unit_test(test_literals_and_structure),
        cmocka_unit_test(test_ends),           cmocka_unit_test(test_nesting),
        cmocka_unit_test(test_cancel),         cmocka_unit_test(test_chunk_boundaries),
    };
    return cmocka_run_group_tests(tests, 0, 0);
}
