/* test_svg.c: the SVG chart writer (harness/report/svg.c) against values computed
 * by hand: linear and log scale positions, nice domains and their ticks, the
 * roofline and its ridge point, escaping, and the pixel geometry a chart
 * writes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "svg.h"

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

static void test_scale_map(void **s)
{
    (void)s;
    mb_scale lin = { 0, 10, 100, 0, false }; /* a y axis: 0 at the bottom (100 px) */
    CLOSE(mb_scale_map(&lin, 0), 100);
    CLOSE(mb_scale_map(&lin, 2.5), 75);
    CLOSE(mb_scale_map(&lin, 10), 0);
    mb_scale lg = { 1, 1000, 0, 300, true }; /* 3 decades over 300 px: 100 px each */
    CLOSE(mb_scale_map(&lg, 10), 100);
    CLOSE(mb_scale_map(&lg, 100), 200);
    CLOSE(mb_scale_map(&lg, sqrt(1000.0)), 150); /* 10^1.5 halfway */
    assert_true(isnan(mb_scale_map(&lg, 0)));    /* no log of 0 */
    assert_true(isnan(mb_scale_map(&lg, -1)));
}

static void test_nice_and_ticks(void **s)
{
    (void)s;
    /* span 87: steps 1, 2, 5 give more than 10 intervals, 10 gives 9 -> 0..90 */
    mb_scale lin = { 3, 87, 0, 100, false };
    mb_scale_nice(&lin);
    CLOSE(lin.d0, 0);
    CLOSE(lin.d1, 90);
    double t[32];
    int n = mb_scale_ticks(&lin, t, 32);
    assert_int_equal(n, 10);
    CLOSE(t[0], 0);
    CLOSE(t[3], 30);
    CLOSE(t[9], 90);
    /* 0.3 .. 2500 on a log scale: whole decades 0.1 .. 10000, one tick each */
    mb_scale lg = { 0.3, 2500, 0, 100, true };
    mb_scale_nice(&lg);
    CLOSE(lg.d0, 0.1);
    CLOSE(lg.d1, 10000);
    n = mb_scale_ticks(&lg, t, 32);
    assert_int_equal(n, 6);
    CLOSE(t[0], 0.1);
    CLOSE(t[5], 10000);
    /* a decade already round stays */
    mb_scale exact = { 1e12, 1e15, 0, 100, true };
    mb_scale_nice(&exact);
    CLOSE(exact.d0, 1e12);
    CLOSE(exact.d1, 1e15);
    /* negative data: the linear domain reaches 0 from below, step 0.5 over 3.2 */
    mb_scale neg = { -3.2, -1, 0, 100, false };
    mb_scale_nice(&neg);
    CLOSE(neg.d0, -3.5);
    CLOSE(neg.d1, 0);
}

/* Domains at the edge of the doubles (fuzz_results found a log domain of
 * 1.5e308 rounding up to 1e309 = inf, whose ticks converted inf to int):
 * the domain stays finite, the ticks are finite and inside it. */
static void test_extreme_domains(void **s)
{
    (void)s;
    double t[32];
    mb_scale lg = { 2, 1.5e308, 0, 100, true };
    mb_scale_nice(&lg);
    CLOSE(lg.d0, 1);
    CLOSE(lg.d1, 1e308);
    int n = mb_scale_ticks(&lg, t, 32);
    assert_int_equal(n, 32); /* 309 decades, the first 32 */
    CLOSE(t[0], 1);
    CLOSE(t[31], 1e31);
    mb_scale tiny = { 1e-320, 1e-300, 0, 100, true }; /* a subnormal low end */
    mb_scale_nice(&tiny);
    CLOSE(tiny.d0, 1e-307);
    CLOSE(tiny.d1, 1e-300);
    assert_int_equal(mb_scale_ticks(&tiny, t, 32), 8);
    /* a span beyond the doubles: the domain is kept as given (rounding it
     * would give NaN), and it gets no ticks rather than NaN ones */
    mb_scale wide = { -1.7e308, 1.7e308, 0, 100, false };
    mb_scale_nice(&wide);
    CLOSE(wide.d0, -1.7e308);
    CLOSE(wide.d1, 1.7e308);
    assert_int_equal(mb_scale_ticks(&wide, t, 32), 0);
    mb_scale inf = { 1, INFINITY, 0, 100, true };
    mb_scale_nice(&inf);
    CLOSE(inf.d1, 1e308);
    mb_scale raw = { 1, INFINITY, 0, 100, false }; /* never rounded */
    assert_int_equal(mb_scale_ticks(&raw, t, 32), 0);
}

static void test_roofline(void **s)
{
    (void)s;
    /* H100 SXM bf16 dense 989.4 TFLOP/s over HBM3 3352.32 GB/s: ridge at 295.14 FLOP/byte */
    double peak = 989.4e12, bw = 3352.32e9;
    CLOSE(mb_roofline_ridge(peak, bw), 989.4e12 / 3352.32e9);
    assert_true(fabs(mb_roofline_ridge(peak, bw) - 295.1389) < 1e-3);
    CLOSE(mb_roofline_at(10, peak, bw), 33.5232e12); /* memory-bound: 10 x bw */
    CLOSE(mb_roofline_at(1000, peak, bw), peak);     /* compute-bound */
    CLOSE(mb_roofline_at(mb_roofline_ridge(peak, bw), peak, bw), peak);
    assert_true(isinf(mb_roofline_ridge(peak, 0)));
}

static void test_text(void **s)
{
    (void)s;
    char b[32];
    mb_svg_fmt_si(b, sizeof b, 1500);
    assert_string_equal(b, "1.5k");
    mb_svg_fmt_si(b, sizeof b, 2e13);
    assert_string_equal(b, "20T");
    mb_svg_fmt_si(b, sizeof b, 0.25);
    assert_string_equal(b, "0.25");
    mb_svg_fmt_si(b, sizeof b, 0);
    assert_string_equal(b, "0");
    /* small ticks with SI prefixes, never an exponent ("1e-05") */
    mb_svg_fmt_si(b, sizeof b, 1e-5);
    assert_string_equal(b, "10\xC2\xB5"); /* 10µ */
    mb_svg_fmt_si(b, sizeof b, 0.001);
    assert_string_equal(b, "1m");
    mb_svg_fmt_si(b, sizeof b, 2e-9);
    assert_string_equal(b, "2n");
    mb_svg_fmt_si(b, sizeof b, 0.05);
    assert_string_equal(b, "0.05");
    /* the prefix after rounding: 999.7 is 1k, not 1e+03 */
    mb_svg_fmt_si(b, sizeof b, 999.7);
    assert_string_equal(b, "1k");
    mb_svg_fmt_bytes(b, sizeof b, 65536);
    assert_string_equal(b, "64 KiB");
    mb_svg_fmt_bytes(b, sizeof b, 268435456);
    assert_string_equal(b, "256 MiB");
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    mb_svg_escape(o, "<a & 'b' \"c\">");
    fclose(o);
    assert_string_equal(text, "&lt;a &amp; &#39;b&#39; &quot;c&quot;&gt;");
    free(text);
}

/* The chart writes what the scales say: 400 x 300 with a 100 px left and a
 * 40 px bottom margin gives the plot area x 100..376 (24 px right margin),
 * y 44..260 (44 px for title and legend). */
static void test_chart_geometry(void **s)
{
    (void)s;
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    mb_chart c;
    mb_chart_begin(&c, o, "t", "a <title>", 400, 300, 100, 40);
    CLOSE(c.left, 100);
    CLOSE(c.right, 376);
    CLOSE(c.top, 44);
    CLOSE(c.bottom, 260);
    c.x = (mb_scale){ 1, 1000, c.left, c.right, true };
    c.y = (mb_scale){ 0, 10, c.bottom, c.top, false };
    mb_chart_x_axis(&c, "x");
    mb_chart_y_axis(&c, "y");
    double x[] = { 10, 5000 }, y[] = { 5, 5 };
    mb_chart_series(&c, "s", 0, 2, x, y, NULL, NULL, false, "u");
    /* a category row: 2 rows over 216 px = 108 each, bars in the middle 80% */
    mb_chart_bar(&c, 1, 2, 0, 1, 1, 100, 2, "bar");
    mb_chart_category(&c, 0, 2, "a label far too long to fit in the hundred pixel margin");
    mb_chart_end(&c);
    fclose(o);
    /* x = 10 is one decade of three over 276 px: 100 + 92 = 192; y = 5 halfway: 152 */
    assert_non_null(strstr(text, "<circle class=\"pt\" cx=\"192.00\" cy=\"152.00\""));
    /* 5000 is outside 1..1000: left out, so one point only */
    assert_null(strstr(text, "cx=\"376.00\""));
    assert_non_null(strstr(text, "a &lt;title&gt;"));
    /* ticks of the log x axis: 1, 10, 100, 1k at 100, 192, 284, 376, 18 px under the axis */
    assert_non_null(strstr(text, "<text class=\"tick\" x=\"284.00\" y=\"278.00\" text-anchor=\"middle\">100</text>"));
    assert_non_null(strstr(text, ">1k</text>"));
    /* bar: row 1 starts at 44 + 108 = 152, + 10.8 = 162.8; 1..100 is 100..284 */
    assert_non_null(strstr(text, "<rect class=\"bar\" x=\"100.00\" y=\"162.80\" width=\"184.00\" height=\"86.40\""));
    /* the label is cut to (100 - 10) / 7 = 12 characters (6 of its start, an ellipsis, 5 of its end: the end
     * tells neighbouring rows apart), whole in its title */
    assert_non_null(strstr(text, ">a labe\xE2\x80\xA6" "argin</text>"));
    assert_non_null(strstr(text, "<title>a label far too long to fit in the hundred pixel margin</title>"));
    free(text);
}

/* A time axis picks its unit from the data and writes plain numbers: the
 * old axis put an SI prefix on milliseconds, "1.2m milliseconds" for a
 * 1.2 µs step. */
static void test_time_unit_and_ticks(void **s)
{
    (void)s;
    assert_string_equal(mb_time_unit_for(0.150).name, "ms");
    assert_string_equal(mb_time_unit_for(1.4e-6).name, "µs");
    assert_string_equal(mb_time_unit_for(2.5).name, "s");
    assert_string_equal(mb_time_unit_for(4e-10).name, "ns");
    assert_string_equal(mb_time_unit_for(0.000999999999999).name, "ms"); /* 1 ms computed a hair short */
    assert_string_equal(mb_time_unit_for(0).name, "s");
    CLOSE(mb_time_unit_for(1.4e-6).per_second, 1e6);
    char b[32];
    mb_svg_fmt_tick(b, sizeof b, 0.4000000000001, 0.2);
    assert_string_equal(b, "0.4");
    mb_svg_fmt_tick(b, sizeof b, 150, 50);
    assert_string_equal(b, "150");
    mb_svg_fmt_tick(b, sizeof b, 1e-17, 0.05); /* a rounding's zero */
    assert_string_equal(b, "0");
    mb_svg_fmt_tick(b, sizeof b, 0.15, 0.05);
    assert_string_equal(b, "0.15");
    mb_svg_fmt_tick(b, sizeof b, 2000, 500);
    assert_string_equal(b, "2000");
}

/* Every tick text of the x axis in text, with its label. */
static int x_ticks(const char *text, char ticks[][32], int max, char *label, size_t len)
{
    const char *axis = strstr(text, "<g class=\"axis x\">"), *end = strstr(axis, "</g>");
    int n = 0;
    for (const char *p = strstr(axis, "class=\"tick\""); p && p < end && n < max; p = strstr(p + 1, "class=\"tick\"")) {
        const char *a = strchr(p, '>') + 1, *z = strchr(a, '<');
        snprintf(ticks[n++], 32, "%.*s", (int)(z - a), a);
    }
    const char *l = strstr(axis, "class=\"axis-label\"");
    const char *a = strchr(l, '>') + 1, *z = strchr(a, '<');
    snprintf(label, len, "%.*s", (int)(z - a), a);
    return n;
}

static void time_axis(double seconds, char **text, size_t *len)
{
    FILE *o = open_memstream(text, len);
    mb_chart c;
    mb_chart_begin(&c, o, "t", "t", 400, 300, 100, 40);
    c.x = (mb_scale){ 0, seconds, c.left, c.right, false };
    mb_scale_nice(&c.x);
    mb_chart_x_time_axis(&c, "time per step");
    mb_chart_end(&c);
    fclose(o);
}

/* A 1.2 µs step on a time axis reads 0 .. 1.2 over "time per step (µs)"; a
 * 37.7 ms one 0 .. 40 over ms; a 150 s one 0 .. 160 over s. */
static void test_time_axis(void **s)
{
    (void)s;
    static const struct {
        double seconds;
        const char *label, *last;
    } want[] = { { 1.2e-6, "time per step (µs)", "1.2" },
                 { 0.0377, "time per step (ms)", "40" },
                 { 150, "time per step (s)", "160" } };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        char *text = NULL;
        size_t len = 0;
        time_axis(want[k].seconds, &text, &len);
        char ticks[32][32], label[64];
        int n = x_ticks(text, ticks, 32, label, sizeof label);
        assert_string_equal(label, want[k].label);
        assert_true(n >= 4);
        assert_string_equal(ticks[0], "0");
        assert_string_equal(ticks[n - 1], want[k].last);
        for (int i = 0; i < n; i++) /* digits and a point: no prefix, no exponent */
            if (strspn(ticks[i], "0123456789.") != strlen(ticks[i]))
                fail_msg("tick \"%s\" of %s is not a plain number", ticks[i], label);
        free(text);
    }
}

/* A bar's figure is written 6 px right of its end, in the middle of its row. */
static void test_bar_value(void **s)
{
    (void)s;
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    mb_chart c;
    mb_chart_begin(&c, o, "t", "t", 400, 300, 100, 40); /* plot x 100..376, y 44..260 */
    c.x = (mb_scale){ 0, 10, c.left, c.right, false };
    mb_chart_bar_value(&c, 1, 2, 5, "5 ms"); /* x = 100 + 138 + 6; row 1 of 2: 44 + 108 + 54 + 4 */
    mb_chart_end(&c);
    fclose(o);
    assert_non_null(strstr(text, "<text class=\"value\" x=\"244.00\" y=\"210.00\">5 ms</text>"));
    free(text);
}

/* Legend rows wrap at the chart's width and push the plot area down. */
static void test_legend_wraps(void **s)
{
    (void)s;
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    mb_chart c;
    mb_chart_begin(&c, o, "t", "t", 220, 300, 50, 40);
    c.y = (mb_scale){ 0, 1, c.bottom, c.top, false };
    /* each name is 10 characters: 14 + 70 + 14 = 98 px; two end at 8 + 196 <= 220 - 8, the third wraps */
    const char *names[] = { "aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc" };
    int colors[] = { 0, 1, 2 };
    mb_chart_legend(&c, 3, names, colors);
    mb_chart_end(&c);
    fclose(o);
    assert_non_null(strstr(text, "<text class=\"legend-item\" x=\"120.00\" y=\"33.00\">bbbbbbbbbb"));
    assert_non_null(strstr(text, "<text class=\"legend-item\" x=\"22.00\" y=\"49.00\">cccccccccc"));
    CLOSE(c.top, 60); /* second row at 40, + 20 */
    CLOSE(c.y.r1, 60);
    free(text);
}


/* A label's box: 7 px per character (code points, not bytes), 12 px tall
 * from 10 above the baseline to 2 below. */
static void test_label_box(void **s)
{
    (void)s;
    double b[4];
    mb_svg_label_box("abcd", 100, 50, true, b); /* ends at x */
    CLOSE(b[0], 72);
    CLOSE(b[1], 40);
    CLOSE(b[2], 100);
    CLOSE(b[3], 52);
    mb_svg_label_box("\xC2\xB5s", 10, 50, false, b); /* "µs": two characters, three bytes */
    CLOSE(b[0], 10);
    CLOSE(b[2], 24);
}

/* Two labels for the same place: the second moves one line (12 px) down,
 * a third one line up; a label far away stays where it was put. */
static void test_labels_move_clear(void **s)
{
    (void)s;
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    mb_chart c;
    mb_chart_begin(&c, o, "t", "t", 400, 300, 50, 40);
    CLOSE(mb_chart_label(&c, 300, 100, true, 1, "roof-label", "fp64 peak 67T"), 100);
    CLOSE(mb_chart_label(&c, 300, 100, true, 2, "roof-label", "fp32 peak 67T"), 112);
    CLOSE(mb_chart_label(&c, 300, 100, true, 3, "roof-label", "tf32 peak 67T"), 88);
    CLOSE(mb_chart_label(&c, 100, 200, false, 4, "roof-label", "far"), 200);
    /* at the plot's top edge (44): up is out of the plot, so down past the others */
    mb_chart_label(&c, 300, 60, true, 1, "roof-label", "top one");
    CLOSE(mb_chart_label(&c, 300, 60, true, 1, "roof-label", "top two"), 72);
    assert_int_equal(c.n_labels, 6);
    mb_chart_end(&c);
    fclose(o);
    assert_non_null(strstr(text, "<text class=\"roof-label\" x=\"300.00\" y=\"112.00\" text-anchor=\"end\" "
                                 "fill=\"#009E73\">fp32 peak 67T</text>"));
    assert_non_null(strstr(text, "<text class=\"roof-label\" x=\"100.00\" y=\"200.00\" fill=\"#D55E00\">far</text>"));
    free(text);
}

/* A sweep joins neighbours at most max_ratio apart: 1, 4, 16 one line;
 * 16 -> 1024 (64x) a gap; 1024, 4096 a second line; 10^6 alone. */
static void test_sweep_joins_neighbours_only(void **s)
{
    (void)s;
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    mb_chart c;
    mb_chart_begin(&c, o, "t", "t", 400, 300, 50, 40);
    c.x = (mb_scale){ 1, 1e7, c.left, c.right, true };
    c.y = (mb_scale){ 0, 10, c.bottom, c.top, false };
    double x[] = { 1, 4, 16, 1024, 4096, 1e6 }, y[] = { 1, 2, 3, 4, 5, 6 };
    mb_chart_sweep(&c, "s", 0, 6, x, y, NULL, NULL, 16, "GB/s", "B");
    mb_chart_end(&c);
    fclose(o);
    int lines = 0, pts = 0;
    for (const char *p = strstr(text, "<polyline"); p; p = strstr(p + 1, "<polyline"))
        lines++;
    for (const char *p = strstr(text, "<circle class=\"pt\""); p; p = strstr(p + 1, "<circle class=\"pt\""))
        pts++;
    assert_int_equal(lines, 2);
    assert_int_equal(pts, 6);
    /* the first line has three points, the second two */
    const char *a = strstr(text, "points=\""), *b = strstr(a + 1, "points=\"");
    int ca = 0, cb = 0;
    for (const char *p = a + 8; *p != '"'; p++)
        ca += *p == ',';
    for (const char *p = b + 8; *p != '"'; p++)
        cb += *p == ',';
    assert_int_equal(ca, 3);
    assert_int_equal(cb, 2);
    /* the value as the table prints it, the size in binary units (1e6 B is 977 KiB, not "1MB") */
    assert_non_null(strstr(text, "<title>s: 6 GB/s at 977 KiB</title>"));
    assert_non_null(strstr(text, "<title>s: 4 GB/s at 1 KiB</title>"));
    free(text);
}

/* A bar and a point that show a case carry it and their value. */
static void test_case_attributes(void **s)
{
    (void)s;
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    mb_chart c;
    mb_chart_begin(&c, o, "t", "t", 400, 300, 100, 40);
    c.x = (mb_scale){ 0, 100, c.left, c.right, false };
    c.y = (mb_scale){ 0, 100, c.bottom, c.top, false };
    mb_chart_bar_case(&c, 0, 1, 0, 1, 0, 50, 0, "t", "gemm/x\"1", 50);
    mb_chart_series_begin(&c, "p");
    mb_chart_point(&c, 50, 50, 3, "a case", "conv/y", 0.1234567891);
    mb_chart_point(&c, 500, 50, 3, "outside", "conv/z", 1); /* outside the domain: left out */
    mb_chart_series_end(&c);
    mb_chart_end(&c);
    fclose(o);
    assert_non_null(strstr(text, "data-case=\"gemm/x&quot;1\" data-value=\"50\"><title>t</title></rect>"));
    assert_non_null(strstr(text, "fill=\"#CC79A7\" data-case=\"conv/y\" data-value=\"0.123456789\"><title>a case"));
    assert_null(strstr(text, "conv/z"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scale_map), cmocka_unit_test(test_nice_and_ticks), cmocka_unit_test(test_extreme_domains),
        cmocka_unit_test(test_roofline),
        cmocka_unit_test(test_text),      cmocka_unit_test(test_chart_geometry), cmocka_unit_test(test_legend_wraps),
        cmocka_unit_test(test_label_box),
        cmocka_unit_test(test_labels_move_clear),
        cmocka_unit_test(test_sweep_joins_neighbours_only),
        cmocka_unit_test(test_case_attributes),
        cmocka_unit_test(test_time_unit_and_ticks),
        cmocka_unit_test(test_time_axis),
        cmocka_unit_test(test_bar_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
