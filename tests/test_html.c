/* test_html.c: the run/report page (harness/results_page.c) on hand-made
 * results: arithmetic intensities by hand, and the charts that the real
 * results in tests/data do not exercise (collectives, burst vs sustained),
 * with their counts; the browser test checks the real pages. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <unistd.h>

#include "gap_page.h"
#include "page_helpers.h"
#include "gapconfig.h"
#include "results_page.h"
#include "run_read.h"
#include "svg.h"

#define CLOSE(a, b) assert_true(fabs((double)(a) - (double)(b)) <= 1e-9 * fmax(1.0, fabs((double)(b))))

static void test_intensity(void **s)
{
    (void)s;
    /* GEMM 8192^3 bf16: 2 x 8192^3 flop over 2 bytes x 3 x 8192^2 = 8192 / 3 */
    cJSON *g = cJSON_Parse("{\"component\":\"gemm\",\"params\":{\"shape\":\"8192x8192x8192\",\"m\":\"0\","
                           "\"dtype\":\"bf16\"}}");
    CLOSE(mb_case_intensity(g), 8192.0 / 3);
    cJSON_Delete(g);
    /* m n k given: 2 x 64 x 32 x 16 / (4 x (64x16 + 16x32 + 64x32)) = 65536 / 14336 */
    g = cJSON_Parse("{\"component\":\"gemm\",\"params\":{\"m\":\"64\",\"n\":\"32\",\"k\":\"16\",\"dtype\":\"fp32\"}}");
    CLOSE(mb_case_intensity(g), 65536.0 / 14336);
    cJSON_Delete(g);
    /* ResNet stem conv, fp32: out 112 x 112; flops 2x64x112x112x3x49 = 236027904;
     * bytes 4 x (3x224x224 + 64x3x49 + 64x112x112) = 3851008 */
    cJSON *c = cJSON_Parse("{\"component\":\"conv\",\"params\":{\"n\":\"1\",\"c\":\"3\",\"h\":\"224\",\"w\":\"224\","
                           "\"k\":\"64\",\"r\":\"7\",\"s\":\"7\",\"pad\":\"3\",\"stride\":\"2\",\"dtype\":\"fp32\"}}");
    CLOSE(mb_case_intensity(c), 236027904.0 / 3851008);
    cJSON_Delete(c);
    /* cuDNN spelling (pad_h, stride_h), bf16: 3x3 same conv n=256 c=k=64 56x56 */
    c = cJSON_Parse("{\"component\":\"conv\",\"params\":{\"n\":\"256\",\"c\":\"64\",\"h\":\"56\",\"w\":\"56\","
                    "\"k\":\"64\",\"r\":\"3\",\"s\":\"3\",\"pad_h\":\"1\",\"stride_h\":\"1\",\"dtype\":\"bf16\"}}");
    double flops = 2.0 * 256 * 64 * 56 * 56 * 64 * 9, bytes = 2.0 * (256.0 * 64 * 56 * 56 * 2 + 64 * 64 * 9);
    CLOSE(mb_case_intensity(c), flops / bytes);
    cJSON_Delete(c);
    c = cJSON_Parse("{\"component\":\"gemm\",\"params\":{\"dtype\":\"fp32\"}}");
    assert_true(isnan(mb_case_intensity(c)));
    cJSON_Delete(c);
}

static char *page(const char *json)
{
    cJSON *doc = cJSON_Parse(json);
    assert_non_null(doc);
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    mb_err err = { 0 };
    assert_int_equal(mb_html_results(o, doc, &err), MB_OK);
    fclose(o);
    cJSON_Delete(doc);
    return text;
}

static int count(const char *from, const char *to, const char *what)
{
    int n = 0;
    for (const char *p = strstr(from, what); p && (to == NULL || p < to); p = strstr(p + 1, what))
        n++;
    return n;
}

#define OK_CASE(comp, backend, params, rate, extra)                                                                    \
    "{\"id\":\"" comp "/" backend "/x\",\"component\":\"" comp "\",\"backend\":\"" backend "\",\"params\":" params     \
    ",\"status\":\"ok\",\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,\"rate\":{\"median\":" rate ",\"cv\":0.1},"          \
    "\"verification\":{\"status\":\"passed\"}" extra "}"

static void test_collectives_and_burst(void **s)
{
    (void)s;
    char *t = page("{\"context\":{\"host\":{\"name\":\"h<1>\"}},\"cases\":[" OK_CASE(
        "allreduce", "nccl", "{\"size\":\"4096\",\"dtype\":\"bf16\"}", "1",
        "") "," OK_CASE("allreduce", "nccl", "{\"size\":\"1048576\",\"dtype\":\"bf16\"}", "50",
                        "") "," OK_CASE("allreduce", "mpi", "{\"size\":\"1048576\",\"dtype\":\"float\"}", "5",
                                        "") "," OK_CASE("membw", "cuda", "{\"op\":\"triad\"}", "3000",
                                                        ",\"burst\":{\"rate\":{\"median\":3100}},\"sustained\":{"
                                                        "\"rate\":{\"median\":2900}}") ","
                                                                                       "{\"id\":\"copy/cuda/"
                                                                                       "y\",\"component\":\"copy\","
                                                                                       "\"backend\":\"cuda\","
                                                                                       "\"params\":{},"
                                                                                       "\"status\":\"skipped\","
                                                                                       "\"reason\":\"no <GPU>\"}]}");
    /* the host name is escaped */
    assert_non_null(strstr(t, "<title>mlbench results: h&lt;1&gt;</title>"));
    /* busbw: two series (nccl bf16 with 2 points, mpi float with 1) */
    const char *coll = strstr(t, "data-chart=\"coll-bw\"");
    assert_non_null(coll);
    const char *end = strstr(coll, "</svg>");
    assert_int_equal(count(coll, end, "<g class=\"series\""), 2);
    assert_int_equal(count(coll, end, "<circle class=\"pt\""), 3);
    assert_int_equal(count(coll, end, "<line class=\"err\""), 3); /* cv 10%: an error bar each */
    /* burst vs sustained: one case, two bars */
    const char *burst = strstr(t, "data-chart=\"burst\"");
    assert_non_null(burst);
    end = strstr(burst, "</svg>");
    assert_int_equal(count(burst, end, "<rect class=\"bar\""), 2);
    assert_non_null(strstr(burst, "sustained 2900 GB/s (94% of burst)"));
    /* the skipped case with its reason, escaped */
    assert_non_null(strstr(t, "<td>no &lt;GPU&gt;</td>"));
    assert_null(strstr(t, "<script"));
    free(t);
}


/* ---- charts that cannot mislead (issue 17, item 4) ------------------------------------ */

/* The chart `id` of page t: its text from <svg to </svg> (a copy). */
static char *chart_svg(const char *t, const char *id)
{
    char key[128];
    snprintf(key, sizeof key, "data-chart=\"%s\"", id);
    const char *a = strstr(t, key);
    if (a == NULL)
        return NULL;
    const char *b = strstr(a, "</svg>");
    assert_non_null(b);
    return strndup(a, (size_t)(b - a));
}

/* The value of attribute `name` in the element starting at el (up to its '>'). */
static bool attr(const char *el, const char *name, char *out, size_t len)
{
    char key[64];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *end = strchr(el, '>'), *p = strstr(el, key);
    if (p == NULL || (end && p > end))
        return false;
    p += strlen(key);
    const char *q = strchr(p, '"');
    snprintf(out, len, "%.*s", (int)(q - p), p);
    return true;
}

/* The text content of the element at el (after its '>', up to '<'). */
static void content(const char *el, char *out, size_t len)
{
    const char *p = strchr(el, '>') + 1, *q = strchr(p, '<');
    snprintf(out, len, "%.*s", (int)(q - p), p);
}

typedef struct label {
    char text[256], fill[16];
    double box[4];
} label;

/* The labels of class cls in svg, with the boxes svg.c estimates for them. */
static int labels_of(const char *svg, const char *cls, label *out, int max)
{
    char key[64];
    snprintf(key, sizeof key, "<text class=\"%s\"", cls);
    int n = 0;
    for (const char *p = strstr(svg, key); p && n < max; p = strstr(p + 1, key)) {
        char x[32], y[32], anchor[16] = "";
        assert_true(attr(p, "x", x, sizeof x) && attr(p, "y", y, sizeof y));
        bool end = attr(p, "text-anchor", anchor, sizeof anchor) && strcmp(anchor, "end") == 0;
        attr(p, "fill", out[n].fill, sizeof out[n].fill);
        content(p, out[n].text, sizeof out[n].text);
        mb_svg_label_box(out[n].text, atof(x), atof(y), end, out[n].box);
        n++;
    }
    return n;
}

static void assert_no_overlap(const label *l, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++) {
            bool over = l[i].box[0] < l[j].box[2] && l[j].box[0] < l[i].box[2] && l[i].box[1] < l[j].box[3] &&
                        l[j].box[1] < l[i].box[3];
            if (over)
                fail_msg("labels overlap: \"%s\" and \"%s\"", l[i].text, l[j].text);
        }
}

/* Every dot of a roofline has the colour of the roof its dtype is on (the
 * roof label that lists the dtype), and its hover title names its case
 * (component/backend and dtype). Returns the number of dots. */
static int assert_dots_match_roofs(const char *svg, const label *roofs, int nr)
{
    int n = 0;
    for (const char *p = strstr(svg, "<circle class=\"pt\""); p; p = strstr(p + 1, "<circle class=\"pt\"")) {
        char fill[16], title[512];
        assert_true(attr(p, "fill", fill, sizeof fill));
        const char *t = strstr(p, "<title>");
        assert_non_null(t);
        content(t, title, sizeof title);
        const char *d = strstr(title, "dtype=");
        if (d == NULL)
            fail_msg("the dot's hover title names no case and dtype: %s", title);
        char dtype[16];
        sscanf(d + 6, "%15[a-z0-9]", dtype);
        int k = 0;
        for (; k < nr; k++) {
            char with[32];
            snprintf(with, sizeof with, "%s peak ", dtype);
            char listed[32];
            snprintf(listed, sizeof listed, "%s, ", dtype);
            if (strncmp(roofs[k].text, with, strlen(with)) == 0 || strstr(roofs[k].text, listed) == roofs[k].text ||
                strstr(roofs[k].text, with))
                break;
        }
        if (k == nr)
            fail_msg("no roof for the dot of %s", title);
        if (strcmp(fill, roofs[k].fill) != 0)
            fail_msg("dot of %s is %s, its roof \"%s\" is %s", title, fill, roofs[k].text, roofs[k].fill);
        n++;
    }
    return n;
}

/* Every roof and slope line lies inside the plot area (the y axis' line
 * gives its top and bottom, the x axis' its left and right). */
static void assert_lines_inside(const char *svg)
{
    const char *ya = strstr(svg, "<g class=\"axis y\">"), *xa = strstr(svg, "<g class=\"axis x\">");
    assert_non_null(ya);
    assert_non_null(xa);
    double top, bottom, left, right, d;
    assert_int_equal(sscanf(strstr(ya, "<line"), "<line x1=\"%lf\" y1=\"%lf\" x2=\"%lf\" y2=\"%lf\"", &left, &top, &d,
                            &bottom),
                     4);
    assert_int_equal(sscanf(strstr(xa, "<line"), "<line x1=\"%lf\" y1=\"%lf\" x2=\"%lf\"", &d, &d, &right), 3);
    int n = 0;
    for (const char *p = strstr(svg, "<line class=\"roof\""); p; p = strstr(p + 1, "<line class=\"roof\"")) {
        double x1, y1, x2, y2;
        const char *fmt = "<line class=\"roof\" x1=\"%lf\" y1=\"%lf\" x2=\"%lf\" y2=\"%lf\"";
        assert_int_equal(sscanf(p, fmt, &x1, &y1, &x2, &y2), 4);
        if (x1 < left - 0.01 || x2 > right + 0.01 || fmax(y1, y2) > bottom + 0.01 || fmin(y1, y2) < top - 0.01)
            fail_msg("a roof or slope outside the plot: %.2f,%.2f - %.2f,%.2f (plot %.2f..%.2f x %.2f..%.2f)", x1, y1,
                     x2, y2, left, right, top, bottom);
        n++;
    }
    assert_true(n >= 2);
}

#define GPU_GEMM(dtype, rate, peak)                                                                                    \
    "{\"id\":\"gemm/cublaslt/" dtype "\",\"component\":\"gemm\",\"backend\":\"cublaslt\",\"params\":{\"shape\":"     \
    "\"8192x8192x8192\",\"m\":\"0\",\"dtype\":\"" dtype "\"},\"status\":\"ok\",\"rate_unit\":\"TFLOP/s\","             \
    "\"rate_scale\":1e12,\"rate\":{\"median\":" rate ",\"cv\":0.01},\"peak\":{\"value\":" peak "},"                   \
    "\"verification\":{\"status\":\"passed\"}}"
#define GPU_MEMBW                                                                                                      \
    "{\"id\":\"membw/cuda/triad\",\"component\":\"membw\",\"backend\":\"cuda\",\"params\":{\"op\":\"triad\"},"       \
    "\"status\":\"ok\",\"rate_unit\":\"GB/s\",\"rate_scale\":1e9,\"rate\":{\"median\":2835,\"cv\":0.01},"              \
    "\"peak\":{\"value\":3352.32},\"verification\":{\"status\":\"passed\"}}"

/* The H100's dtypes as its results give them: fp64 and fp32 share 67
 * TFLOP/s, fp16 and bf16 989.4; int8 counts operations. */
static void test_roofline_equal_peaks_colours_titles(void **s)
{
    (void)s;
    /* one GEMM per dtype, then the memory */
    char *t = page("{\"cases\":["
                   GPU_GEMM("fp64", "53.6", "67") ","
                   GPU_GEMM("fp32", "51.7", "67") ","
                   GPU_GEMM("tf32", "358.5", "494.7") ","
                   GPU_GEMM("fp16", "655.4", "989.4") ","
                   GPU_GEMM("bf16", "704.6", "989.4") ","
                   GPU_GEMM("int8", "1268", "1978.9") ","
                   GPU_MEMBW "]}");
    char *svg = chart_svg(t, "roofline-gpu");
    assert_non_null(svg);
    label roofs[16];
    int nr = labels_of(svg, "roof-label", roofs, 16);
    /* four roofs (equal peaks share one) and the measured slope's label */
    assert_int_equal(nr, 5);
    assert_int_equal(count(svg, NULL, "<line class=\"roof\""), 4 + 2);
    assert_non_null(strstr(svg, ">fp64, fp32 peak 67 TFLOP/s<"));
    assert_non_null(strstr(svg, ">fp16, bf16 peak 989 TFLOP/s<"));
    assert_non_null(strstr(svg, ">int8 peak 1.98 POP/s<"));
    assert_no_overlap(roofs, nr);
    assert_lines_inside(svg);
    assert_int_equal(assert_dots_match_roofs(svg, roofs, nr), 6);
    /* the int8 case is in OP/s, the others in FLOP/s; a dot's hover says the table's figure */
    assert_non_null(strstr(svg, "dtype=int8: 1268 TOP/s at"));
    assert_null(strstr(svg, "dtype=int8: 1268 TFLOP/s"));
    assert_non_null(strstr(svg, "dtype=bf16: 704.6 TFLOP/s at"));
    assert_non_null(strstr(svg, ">FLOP/s (integer dtypes: OP/s)</text>"));
    /* the legend lists what is drawn: both slopes (membw has a datasheet peak) and each roof */
    assert_non_null(strstr(svg, ">datasheet memory slope</text>"));
    assert_non_null(strstr(svg, ">fp64, fp32: roof and cases</text>"));
    /* the dot is the figure of its case: data-case and data-value in the case's unit */
    assert_non_null(strstr(svg, "data-case=\"gemm/cublaslt/bf16\" data-value=\"704.6\""));
    free(svg);
    free(t);
}

/* Peaks that are close but not equal keep two labels, the second moved
 * clear of the first. */
static void test_roofline_close_peaks_offset(void **s)
{
    (void)s;
    char *t = page("{\"cases\":[" GPU_GEMM("fp16", "80", "100") "," GPU_GEMM("bf16", "81", "101") "," GPU_MEMBW "]}");
    char *svg = chart_svg(t, "roofline-gpu");
    assert_non_null(svg);
    label roofs[8];
    int nr = labels_of(svg, "roof-label", roofs, 8);
    assert_int_equal(nr, 3);
    assert_no_overlap(roofs, nr);
    assert_int_equal(assert_dots_match_roofs(svg, roofs, nr), 2);
    assert_string_not_equal(roofs[0].fill, roofs[1].fill);
    free(svg);
    free(t);
}

#define CPU_CASE(comp, backend, params, unit, scale, rate, peak)                                                      \
    "{\"id\":\"" comp "/" backend "\",\"component\":\"" comp "\",\"backend\":\"" backend "\",\"params\":" params        \
    ",\"status\":\"ok\",\"rate_unit\":\"" unit "\",\"rate_scale\":" scale ",\"rate\":{\"median\":" rate               \
    ",\"cv\":0.02}" peak ",\"verification\":{\"status\":\"passed\"}}"

/* An fp32 GEMM of n^3 on the CPU, and STREAM triad (no datasheet peak). */
#define CPU_GEMM(n, rate, peak)                                                                                        \
    CPU_CASE("gemm", "openblas", "{\"m\":\"" n "\",\"n\":\"" n "\",\"k\":\"" n "\",\"dtype\":\"fp32\"}", "GFLOP/s", "1e9",  \
             rate, ",\"peak\":{\"value\":" peak "}")
#define CPU_TRIAD(rate) CPU_CASE("hostmem", "stream", "{\"kernel\":\"triad\"}", "GB/s", "1e9", rate, "")

/* A CPU machine: no datasheet memory bandwidth, so no dashed slope and none
 * in the legend; a page without a roofline has no Roofline heading. */
static void test_roofline_legend_and_heading(void **s)
{
    (void)s;
    char *t = page("{\"cases\":[" CPU_GEMM("2048", "154.3", "2817") "," CPU_TRIAD("20") "]}");
    char *svg = chart_svg(t, "roofline-cpu");
    assert_non_null(svg);
    assert_null(strstr(svg, "datasheet"));
    assert_non_null(strstr(svg, ">measured memory slope</text>"));
    assert_int_equal(count(svg, NULL, "stroke-dasharray"), 0);
    assert_non_null(strstr(t, "<h2>Roofline</h2>"));
    assert_lines_inside(svg);
    free(svg);
    free(t);
    /* this 2-core machine's quick run: a 512^3 GEMM at 38 GFLOP/s, triad 8.5 GB/s. The x domain rounds down to
     * 1 FLOP/byte where the slope is at 8.5 GFLOP/s, under the y domain's 10 G: the slope starts at the bottom */
    t = page("{\"cases\":[" CPU_GEMM("512", "38", "536") "," CPU_TRIAD("8.5") "]}");
    svg = chart_svg(t, "roofline-cpu");
    assert_non_null(svg);
    assert_lines_inside(svg);
    free(svg);
    free(t);
    /* disk cases only, then a GEMM without any memory bandwidth: no roofline, no heading */
    t = page("{\"cases\":[" CPU_CASE("disk", "pread", "{\"block_size\":\"4096\"}", "MB/s", "1e6", "150", "") "]}");
    assert_null(strstr(t, "Roofline"));
    free(t);
    t = page("{\"cases\":[" CPU_GEMM("2048", "154.3", "2817") "]}");
    assert_null(strstr(t, "Roofline"));
    assert_null(strstr(t, "roofline-"));
    free(t);
    /* roofs and a slope but no GEMM or conv case to place: no chart of lines alone */
    t = page("{\"cases\":[" CPU_CASE("peak", "cuda", "{\"dtype\":\"fp32\"}", "TFLOP/s", "1e12", "65.6",
                                     ",\"peak\":{\"value\":66.9}") "," GPU_MEMBW "]}");
    assert_null(strstr(t, "Roofline"));
    free(t);
}

#define COPY(dir, mem, size, rate, peak)                                                                               \
    "{\"id\":\"copy/cuda/" dir "-" mem "-" size "\",\"component\":\"copy\",\"backend\":\"cuda\",\"params\":{"      \
    "\"direction\":\"" dir "\",\"memory\":\"" mem "\",\"size\":\"" size "\"},\"status\":\"ok\",\"rate_unit\":"     \
    "\"GB/s\",\"rate_scale\":1e9,\"rate\":{\"median\":" rate ",\"cv\":0.01},\"peak\":{\"value\":" peak "},"          \
    "\"verification\":{\"status\":\"passed\"}}"

/* Copies: PCIe and device-to-device on charts of their own, the link's peak
 * from the context as a line, d2d without a host-memory kind, and no line
 * across a gap in the sweep. */
static void test_copy_charts(void **s)
{
    (void)s;
    char *t = page("{\"context\":{\"gpus\":[{\"name\":\"G\",\"benchmark_device\":true,\"pcie\":{"
                   "\"max\":\"PCIe 5.0 x16\",\"max_gbps_per_direction\":63.01538}}]},\"cases\":["
                   COPY("h2d", "pinned", "4096", "1.6", "63") ","
                   COPY("h2d", "pinned", "65536", "17", "63") ","
                   COPY("h2d", "pinned", "1048576", "47.6", "63") ","
                   COPY("h2d", "pinned", "268435456", "54.1", "63") ","
                   COPY("bidir", "pinned", "268435456", "92.7", "126") ","
                   COPY("d2d", "pinned", "1073741824", "3012", "3352.32") "]}");
    char *pcie = chart_svg(t, "copy-bw"), *d2d = chart_svg(t, "copy-d2d");
    assert_non_null(pcie);
    assert_non_null(d2d);
    /* d2d is on its own chart, and not "pinned" */
    assert_null(strstr(pcie, "d2d"));
    assert_non_null(strstr(d2d, "<g class=\"series\" data-name=\"d2d\">"));
    assert_null(strstr(d2d, "pinned"));
    assert_non_null(strstr(d2d, ">GPU memory peak (datasheet): 3352 GB/s</text>"));
    /* the link's peak, one direction and (a bidir curve is drawn) both */
    assert_non_null(strstr(pcie, ">PCIe 5.0 x16 peak, one direction: 63.0 GB/s</text>"));
    assert_non_null(strstr(pcie, ">PCIe 5.0 x16 peak, both directions: 126.0 GB/s</text>"));
    /* 4k, 64k, 1m are one line (16x apart); 256m is 256x from 1m: a point alone */
    const char *h2d = strstr(pcie, "data-name=\"h2d pinned\"");
    assert_non_null(h2d);
    const char *h2d_end = strstr(h2d, "</g>");
    assert_int_equal(count(h2d, h2d_end, "<polyline"), 1);
    const char *pl = strstr(h2d, "points=\"");
    const char *pl_end = strchr(pl + 8, '"');
    assert_int_equal(count(pl, pl_end, ","), 3);
    assert_int_equal(count(h2d, h2d_end, "<circle class=\"pt\""), 4);
    /* one point of bidir: no line */
    const char *bi = strstr(pcie, "data-name=\"bidir pinned\"");
    assert_int_equal(count(bi, strstr(bi, "</g>"), "<polyline"), 0);
    /* a linear bandwidth axis from 0, the hover with its unit */
    assert_non_null(strstr(pcie, "text-anchor=\"end\">0</text>"));
    assert_non_null(strstr(pcie, "h2d pinned: 54.1 GB/s at 256 MiB"));
    free(pcie);
    free(d2d);
    free(t);
}

static void test_collectives_split_by_inplace(void **s)
{
    (void)s;
    char *t = page("{\"cases\":["
                   OK_CASE("allreduce", "nccl", "{\"size\":\"4096\",\"dtype\":\"bf16\",\"inplace\":\"0\"}", "1", "") ","
                   OK_CASE("allreduce", "nccl", "{\"size\":\"4096\",\"dtype\":\"bf16\",\"inplace\":\"1\"}", "1.2", "")
                   "]}");
    char *svg = chart_svg(t, "coll-bw");
    assert_non_null(svg);
    assert_int_equal(count(svg, NULL, "<g class=\"series\""), 2);
    assert_non_null(strstr(svg, "data-name=\"allreduce nccl bf16 out-of-place\""));
    assert_non_null(strstr(svg, "data-name=\"allreduce nccl bf16 in-place\""));
    free(svg);
    free(t);
}

/* The ceiling bar and the table cell of a case carry the number they show. */
static void test_headline_figures_marked(void **s)
{
    (void)s;
    char *t = page("{\"cases\":[" GPU_MEMBW "]}");
    char *svg = chart_svg(t, "ceiling-membw");
    assert_non_null(svg);
    assert_non_null(strstr(svg, "<rect class=\"bar\""));
    assert_non_null(strstr(svg, "data-case=\"membw/cuda/triad\" data-value=\"2835\""));
    assert_non_null(strstr(t, "<td class=\"n\" data-ceiling=\"2835\" title=\"from: median\" "
                             "data-case=\"membw/cuda/triad\" data-value=\"2835\">2835 GB/s</td>"));
    free(svg);
    free(t);
}

/* The real H100 results (../shared/h100; skipped without it unless CI). */
static char *shared_page(const char *name)
{
    const char *shared = getenv("MLBENCH_SHARED");
    char path[4096];
    snprintf(path, sizeof path, "%s/h100/%s", shared ? shared : "", name);
    FILE *f = shared ? fopen(path, "rb") : NULL;
    if (f == NULL) {
        if (getenv("CI"))
            fail_msg("CI is set and the fixture %s is missing", path);
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        fwrite(buf, 1, n, m);
    fclose(f);
    fclose(m);
    char *p = page(text);
    free(text);
    return p;
}

static void test_h100_roofline(void **s)
{
    (void)s;
    char *t = shared_page("all.json");
    if (t == NULL)
        skip();
    char *svg = chart_svg(t, "roofline-gpu");
    assert_non_null(svg);
    label roofs[16];
    int nr = labels_of(svg, "roof-label", roofs, 16);
    assert_no_overlap(roofs, nr);
    assert_non_null(strstr(svg, ">fp64, fp32 peak 67 TFLOP/s<"));
    assert_non_null(strstr(svg, ">fp16, bf16 peak 989 TFLOP/s<"));
    assert_non_null(strstr(svg, ">int8 peak 1.98 POP/s<"));
    /* 8 GEMMs and 3 convolutions passed on the GPU */
    assert_int_equal(assert_dots_match_roofs(svg, roofs, nr), 11);
    free(svg);
    svg = chart_svg(t, "roofline-cpu");
    assert_non_null(svg);
    nr = labels_of(svg, "roof-label", roofs, 16);
    assert_no_overlap(roofs, nr);
    assert_int_equal(assert_dots_match_roofs(svg, roofs, nr), 5);
    assert_null(strstr(svg, "datasheet")); /* the CPU's memory has no datasheet figure here */
    free(svg);
    /* its copies: 4 KiB and 256 MiB only, so points and no line */
    svg = chart_svg(t, "copy-bw");
    assert_non_null(svg);
    assert_int_equal(count(svg, NULL, "<polyline"), 0);
    assert_non_null(strstr(svg, ">PCIe 5.0 x16 peak, one direction: 63.0 GB/s</text>"));
    assert_null(strstr(svg, "d2d"));
    free(svg);
    svg = chart_svg(t, "copy-d2d");
    assert_non_null(svg);
    assert_null(strstr(svg, "pinned"));
    free(svg);
    free(t);
}

static void test_h100_copy_sweep(void **s)
{
    (void)s;
    char *t = shared_page("copy-membw-peak-launch.json");
    if (t == NULL)
        skip();
    char *svg = chart_svg(t, "copy-bw");
    assert_non_null(svg);
    /* five curves swept 4 KiB..1 GiB in steps of 16: one line of 6 points each; wc (1m, 256m) has none */
    assert_int_equal(count(svg, NULL, "<polyline"), 5);
    assert_int_equal(count(svg, NULL, "<circle class=\"pt\""), 5 * 6 + 2);
    label l[8];
    int n = labels_of(svg, "roof-label", l, 8);
    assert_int_equal(n, 2);
    assert_no_overlap(l, n);
    free(svg);
    svg = chart_svg(t, "copy-d2d");
    assert_non_null(svg);
    assert_int_equal(count(svg, NULL, "<polyline"), 1);
    assert_int_equal(count(svg, NULL, "<circle class=\"pt\""), 6);
    free(svg);
    free(t);
}

/* A chart says once what every one of its cases shares (the rows keep what
 * tells them apart, which a cut long label lost), and its legend names only
 * what it draws: disks have no peak, so no "peak" key. */
static void test_ceiling_chart_labels_and_legend(void **s)
{
    (void)s;
    char *t = page("{\"cases\":["
                   OK_CASE("disk", "pread", "{\"file_size\":\"512m\",\"block_size\":\"4k\",\"pattern\":\"random\"}",
                           "0.15", "") ","
                   OK_CASE("disk", "pread", "{\"file_size\":\"512m\",\"block_size\":\"1m\",\"pattern\":\"random\"}",
                           "1.2", "") ","
                   OK_CASE("hostmem", "stream", "{\"kernel\":\"copy\"}", "89.6",
                           ",\"peak\":{\"value\":120,\"source\":\"test\"}") "]}");
    char *disk = chart_svg(t, "ceiling-disk"), *mem = chart_svg(t, "ceiling-hostmem");
    assert_non_null(disk);
    assert_non_null(mem);
    assert_non_null(strstr(t, "disk: ceiling vs peak (every case: file_size=512m pattern=random)"));
    assert_non_null(strstr(disk, ">disk/pread block_size=4k</text>"));
    assert_non_null(strstr(disk, ">disk/pread block_size=1m</text>"));
    assert_null(strstr(disk, "file_size=512m</text>"));
    assert_non_null(strstr(disk, "class=\"legend-item\""));
    assert_null(strstr(disk, ">peak</text>"));
    /* one case: nothing is shared with another, its label stays whole; its peak is drawn and named */
    assert_null(strstr(t, "hostmem: ceiling vs peak (every case"));
    assert_non_null(strstr(mem, ">peak</text>"));
    free(disk);
    free(mem);
    free(t);
}

/* One io_uring case at queue depth 32 for the disk curves. */
#define URING_CASE_SUBMIT(bs, sqpoll, submit, rate)                                                 \
    OK_CASE("disk", "io_uring",                                                                     \
            "{\"block_size\":\"" bs "\",\"pattern\":\"random\",\"mode\":\"direct\",\"qd\":\"32\","     \
            "\"sqpoll\":\"" sqpoll "\",\"submit\":\"" submit "\"}",                                     \
            rate, "")
#define URING_CASE(bs, sqpoll, rate) URING_CASE_SUBMIT(bs, sqpoll, "batch", rate)

/* The suites run io_uring with sqpoll off and on, and at depth 32 with the
 * refills submitted together or each on its own: a curve per combination,
 * not two points at one block size on one curve. */
static void test_disk_curves_split_by_options(void **s)
{
    (void)s;
    char *t = page("{\"cases\":[" URING_CASE("4096", "off", "0.4") "," URING_CASE("4096", "on", "0.45") ","
                   URING_CASE("131072", "off", "1.8") "," URING_CASE("131072", "on", "2.4") ","
                   URING_CASE_SUBMIT("4096", "off", "each", "0.47") "," URING_CASE_SUBMIT("4096", "on", "each", "0.5")
                   "]}");
    char *svg = chart_svg(t, "disk");
    assert_non_null(svg);
    assert_int_equal(count(svg, NULL, "<g class=\"series\""), 4);
    assert_int_equal(count(svg, NULL, "<circle class=\"pt\""), 6);
    const char *const legend[] = { "qd=32", "qd=32 sqpoll", "qd=32 submit each", "qd=32 sqpoll submit each" };
    for (int i = 0; i < 4; i++) {
        char want[96];
        snprintf(want, sizeof want, ">io_uring random direct %s</text>", legend[i]);
        assert_non_null(strstr(svg, want));
    }
    /* each point on its own curve (the hover names the curve) */
    assert_non_null(strstr(svg, "io_uring random direct qd=32: 1.8 "));
    assert_non_null(strstr(svg, "io_uring random direct qd=32 sqpoll: 2.4 "));
    assert_null(strstr(svg, "io_uring random direct qd=32: 2.4 "));
    assert_non_null(strstr(svg, "io_uring random direct qd=32: 0.4 "));
    assert_non_null(strstr(svg, "io_uring random direct qd=32 submit each: 0.47 "));
    assert_non_null(strstr(svg, "io_uring random direct qd=32 sqpoll submit each: 0.5 "));
    free(svg);
    free(t);
}

/* ---- the gap page (harness/analysis/gap/gap_page.c) ----------------------------------------- */

/* The gap page of a stage file (its text) against tests/data/gap_here.json,
 * which lies beside the configs ctest points MLBENCH_CONFIG_DIR at. */
static char *gap_page(const char *stages)
{
    const char *cfg = getenv("MLBENCH_CONFIG_DIR");
    assert_non_null(cfg);
    char ceilings[4096], run_path[] = "/tmp/mb_test_html_XXXXXX";
    snprintf(ceilings, sizeof ceilings, "%s/../tests/data/gap_here.json", cfg);
    int fd = mkstemp(run_path);
    assert_true(fd >= 0);
    assert_true(write(fd, stages, strlen(stages)) == (ssize_t)strlen(stages));
    close(fd);
    mb_ini matching;
    mb_ceilings here;
    mb_run run;
    mb_gap g;
    mb_err err = { 0 };
    mb_run_init(&run);
    assert_int_equal(mb_ini_load_gap("matching.ini", &matching, &err), MB_OK);
    assert_int_equal(mb_ceilings_load(ceilings, &here, &err), MB_OK);
    assert_int_equal(mb_run_read(run_path, &run, &err), MB_OK);
    assert_int_equal(mb_gap_build(&run, &here, &matching, &g, &err), MB_OK);
    char *text = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&text, &len);
    assert_int_equal(mb_gap_html(o, &g, NULL, &err), MB_OK);
    fclose(o);
    mb_gap_free(&g);
    mb_run_free(&run);
    mb_ceilings_free(&here);
    mb_ini_free(&matching);
    unlink(run_path);
    return text;
}

/* A step that host code fills, and one tiny copy against its ceiling: 10 ms
 * of 'other' and 2 µs of copying that would take 0.04 µs at the ceiling
 * (gap_here's h2d pinned copy: 25 GB/s), 1.96 µs lost. */
#define TINY_COPY                                                                                                      \
    "{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"steps\":10},\"stages\":["                             \
    "{\"name\":\"python\",\"component\":\"other\",\"seconds_per_step\":0.010},"                                      \
    "{\"name\":\"copy\",\"component\":\"copy\",\"direction\":\"h2d\",\"memory\":\"pinned\","                          \
    "\"bytes_per_step\":1000,\"seconds_per_step\":2e-6}]}"

/* The width of the first rect.bar in svg whose hover title starts with `name:`; -1 without one. */
static double bar_width(const char *svg, const char *name, char *fill, size_t len)
{
    char key[128];
    snprintf(key, sizeof key, "<title>%s:", name);
    for (const char *p = strstr(svg, "<rect class=\"bar\""); p; p = strstr(p + 1, "<rect class=\"bar\"")) {
        const char *t = strstr(p, "<title>");
        if (t == NULL || strncmp(t, key, strlen(key)) != 0)
            continue;
        char w[32];
        assert_true(attr(p, "width", w, sizeof w) && attr(p, "fill", fill, len));
        return atof(w);
    }
    return -1;
}

/* The chart of what the step is made of has every stage, the ones without
 * a ceiling too, by exposed time: the old page ranked only the stages with
 * a ceiling, one full-width bar for the 2 µs copy and no sign of the 10 ms
 * of Python that make the step. Each figure is the text headline's. */
static void test_gap_headline_chart_every_stage(void **s)
{
    (void)s;
    char *t = gap_page(TINY_COPY);
    char *svg = chart_svg(t, "headline");
    assert_non_null(svg);
    assert_int_equal(count(svg, NULL, "<text class=\"cat\""), 2);
    char fill[16];
    double py = bar_width(svg, "python", fill, sizeof fill);
    assert_string_equal(fill, mb_svg_color(7)); /* grey: no ceiling */
    double copy = bar_width(svg, "copy", fill, sizeof fill);
    assert_string_equal(fill, mb_svg_color(4)); /* its first part: the time lost */
    assert_true(py > 500 && copy >= 0 && copy < 1);
    assert_non_null(strstr(svg, ">no ceiling (time only)</text>"));
    assert_non_null(strstr(svg, "<text class=\"value\""));
    assert_non_null(strstr(svg, ">10 ms, no ceiling</text>"));
    assert_non_null(strstr(svg, ">2 µs, 1.96 µs lost</text>"));
    /* the table says it as the text output does */
    assert_non_null(strstr(t, "<td>1.96 µs lost (0.02% of the step), at 2.0% of its ceiling</td>"));
    free(svg);
    free(t);
}

/* Every time axis of the page reads in one unit with plain-number ticks:
 * the old ranking of a 1.96 µs loss had ticks "500µ" .. "2m" over
 * "milliseconds". Returns the number of time axes. */
static int assert_time_axes_plain(const char *page)
{
    int n = 0;
    for (const char *a = strstr(page, "<g class=\"axis x\">"); a; a = strstr(a + 1, "<g class=\"axis x\">")) {
        const char *end = strstr(a, "</g>"), *l = strstr(a, "class=\"axis-label\"");
        char label[128];
        if (l == NULL || l > end)
            continue;
        content(l, label, sizeof label);
        if (!strstr(label, "seconds") && !strstr(label, " (s)") && !strstr(label, "(ms)") &&
            !strstr(label, "(µs)") && !strstr(label, "(ns)"))
            continue;
        n++;
        for (const char *p = strstr(a, "class=\"tick\""); p && p < end; p = strstr(p + 1, "class=\"tick\"")) {
            char tick[32];
            content(p, tick, sizeof tick);
            if (strspn(tick, "0123456789.") != strlen(tick))
                fail_msg("tick \"%s\" over \"%s\" is not a plain number", tick, label);
        }
    }
    return n;
}

static void test_gap_time_axes_plain(void **s)
{
    (void)s;
    char *t = gap_page(TINY_COPY);
    assert_true(assert_time_axes_plain(t) >= 3); /* what the step is made of, the step, the waterfall */
    assert_non_null(strstr(t, ">exposed time per step (ms)</text>"));
    assert_non_null(strstr(t, ">time taken off the step (µs)</text>"));
    free(t);
}

/* The H100 data-loader trace's shape: 150 ms of step, 100 µs lost by one
 * copy and 1.2 µs by another. On an axis of the whole step the old
 * waterfall drew them 0.6 and 0.008 px wide: empty. Every row it lists now
 * has a visible bar and its figure. */
static void test_gap_waterfall_visible(void **s)
{
    (void)s;
    char *t = gap_page("{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"steps\":10},\"stages\":["
                       "{\"name\":\"dataloading\",\"component\":\"other\",\"seconds_per_step\":0.132},"
                       "{\"name\":\"host\",\"component\":\"other\",\"seconds_per_step\":0.0178},"
                       "{\"name\":\"copy h2d\",\"component\":\"copy\",\"direction\":\"h2d\",\"memory\":\"pinned\","
                       "\"bytes_per_step\":1e7,\"seconds_per_step\":5e-4},"
                       "{\"name\":\"copy d2h\",\"component\":\"copy\",\"direction\":\"d2h\",\"memory\":\"pinned\","
                       "\"bytes_per_step\":10,\"seconds_per_step\":1.2e-6}]}");
    char *svg = chart_svg(t, "waterfall");
    assert_non_null(svg);
    int rows = count(svg, NULL, "<text class=\"cat\""), bars = 0;
    for (const char *p = strstr(svg, "<rect class=\"bar\""); p; p = strstr(p + 1, "<rect class=\"bar\"")) {
        char w[32];
        assert_true(attr(p, "width", w, sizeof w));
        if (atof(w) < 1.5)
            fail_msg("a waterfall bar %s px wide", w);
        bars++;
    }
    assert_int_equal(rows, 3); /* the two copies, then all stages with a ceiling */
    assert_int_equal(bars, rows);
    assert_non_null(strstr(svg, ">100 µs</text>"));
    assert_non_null(strstr(svg, ">1.2 µs</text>"));
    assert_non_null(strstr(svg, ">101 µs in all</text>"));
    assert_non_null(strstr(svg, "the step now (150 ms)"));
    /* the sentence over it says how much of the step that is */
    assert_non_null(strstr(t, "<p>Every stage with a ceiling at it takes <b>101 µs</b> off the step (0.07% of it): "
                              "150 ms now, 150 ms at every ceiling (1.00x)."));
    free(svg);
    free(t);
}

/* The page of a step of 10 ms of Python and a bf16 GEMM of 1e12 FLOPs in
 * `seconds`, against gap_here.json (its bf16 case: 600 TFLOP/s). */
static char *gemm_beside_python(double seconds)
{
    char stages[512];
    snprintf(stages, sizeof stages,
             "{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"steps\":10},\"stages\":["
             "{\"name\":\"python\",\"component\":\"other\",\"seconds_per_step\":0.010},"
             "{\"name\":\"gemm\",\"component\":\"gemm\",\"dtype\":\"bf16\",\"flops_per_step\":1e12,"
             "\"seconds_per_step\":%g}]}",
             seconds);
    return gap_page(stages);
}

/* No waterfall to draw: one sentence says why. */
static void test_gap_waterfall_absent(void **s)
{
    (void)s;
    char *t = gap_page("{\"format\":\"mlbench-stages\",\"version\":1,\"run\":{\"steps\":10},\"stages\":["
                       "{\"name\":\"python\",\"component\":\"other\",\"seconds_per_step\":0.010}]}");
    assert_null(strstr(t, "data-chart=\"waterfall\""));
    assert_non_null(strstr(t, "<p>No stage has a ceiling, so no ceiling takes anything off: the step stays "
                              "10 ms.</p>"));
    assert_non_null(strstr(t, "data-chart=\"headline\"")); /* the step is still shown */
    free(t);
    /* a GEMM a little faster than the case it is matched to (625 TFLOP/s against 600: within the case's noise)
     * loses nothing */
    t = gemm_beside_python(0.0016);
    assert_null(strstr(t, "data-chart=\"waterfall\""));
    assert_non_null(strstr(t, "<p>No stage loses time against its ceiling"));
    free(t);
    /* far faster (1000 TFLOP/s): the case is no ceiling for it, and the page says none has one */
    t = gemm_beside_python(0.001);
    assert_null(strstr(t, "data-chart=\"waterfall\""));
    assert_non_null(strstr(t, "<p>No stage has a ceiling, so no ceiling takes anything off"));
    assert_non_null(strstr(t, "faster than its nearest case (166.7% of it)"));
    free(t);
}

/* A note's `quoted` command is code on the page, escaped; a lone backtick
 * stays (the page printed "`--step-ms MS`" with its backticks). */
/* Every part of a CPU trace's step bar has its own colour: the optimizer
 * (often the largest part on a CPU) is not the grey of "other aten ops". */
static void test_cpu_parts_apart(void **state)
{
    (void)state;
    const char *ids[] = { "conv", "gemm", "optimizer", "memory", "ops", "python", "data", "collective" };
    int n = (int)(sizeof ids / sizeof *ids);
    assert_int_equal(mb_part_color("ops"), MB_COLOR_OTHER);
    assert_int_equal(mb_part_color("optimizer"), MB_COLOR_OPTIMIZER);
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (strcmp(ids[i], "collective") != 0 && strcmp(ids[j], "collective") != 0)
                assert_true(strcmp(mb_svg_color(mb_part_color(ids[i])), mb_svg_color(mb_part_color(ids[j]))) != 0);
}

static void test_code_spans(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *o = open_memstream(&buf, &len);
    assert_non_null(o);
    p_text(o, "p", "run `mlbench gap --step-ms <MS>` & see `x`; a lone ` stays");
    fclose(o);
    assert_string_equal(buf, "<p>run <code>mlbench gap --step-ms &lt;MS&gt;</code> &amp; see <code>x</code>; a lone ` "
                             "stays</p>\n");
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intensity),
        cmocka_unit_test(test_collectives_and_burst),
        cmocka_unit_test(test_roofline_equal_peaks_colours_titles),
        cmocka_unit_test(test_roofline_close_peaks_offset),
        cmocka_unit_test(test_roofline_legend_and_heading),
        cmocka_unit_test(test_copy_charts),
        cmocka_unit_test(test_disk_curves_split_by_options),
        cmocka_unit_test(test_collectives_split_by_inplace),
        cmocka_unit_test(test_headline_figures_marked),
        cmocka_unit_test(test_h100_roofline),
        cmocka_unit_test(test_h100_copy_sweep),
        cmocka_unit_test(test_ceiling_chart_labels_and_legend),
        cmocka_unit_test(test_gap_headline_chart_every_stage),
        cmocka_unit_test(test_gap_time_axes_plain),
        cmocka_unit_test(test_gap_waterfall_visible),
        cmocka_unit_test(test_gap_waterfall_absent), cmocka_unit_test(test_code_spans),
        cmocka_unit_test(test_cpu_parts_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
