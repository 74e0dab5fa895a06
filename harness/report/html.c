/* html.c: the HTML page frame and the generic charts that the results page
 * (results_page.c) and the gap and compare pages (analysis/gap/gap_page.c,
 * analysis/compare/compare_page.c) share. */
#include "html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "file_write.h"
#include "format.h"  /* mb_fmt_seconds: one time format in every view */
#include "svg.h"

/* ---- frame ---------------------------------------------------------------------- */

static const char CSS[] =
    "body{font-family:sans-serif;font-size:14px;color:#222;max-width:1240px;margin:0 auto;padding:8px 16px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ccc}h3{font-size:15px}"
    "table{border-collapse:collapse;margin:6px 0}td,th{border:1px solid #ccc;padding:3px 6px;text-align:left;"
    "vertical-align:top}td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f2f2f2}"
    "svg.chart{display:block;max-width:100%;height:auto;margin:8px 0}.note{color:#555}"
    "code{font-size:12px}.bad{color:#a00}li,p{overflow-wrap:anywhere}"
    "@media print{body{max-width:none}h2{break-after:avoid}svg.chart,table{break-inside:avoid}}";

void mb_html_escape(FILE *o, const char *s)
{
    mb_svg_escape(o, s);
}

void mb_html_begin(FILE *o, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          o);
    mb_html_escape(o, title);
    fprintf(o, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", CSS);
    mb_html_escape(o, title);
    fputs("</h1>\n", o);
}

void mb_html_end(FILE *o)
{
    fputs("<p class=\"note\">Made by mlbench. Hover a bar or point for its value.</p>\n</body>\n</html>\n", o);
}

/* ---- generic charts ------------------------------------------------------------------ */

static bool has_bar(const mb_html_bars *b, int i)
{
    return isfinite(b->hi[i]) && b->hi[i] >= 0 && (!b->log || b->hi[i] > 0);
}

void mb_html_bar_chart(FILE *o, const mb_html_bars *b)
{
    int n = b->n_cat * b->n_group;
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < n; i++) {
        if (!has_bar(b, i))
            continue;
        double top = b->err_hi && b->err_hi[i] > b->hi[i] ? b->err_hi[i] : b->hi[i];
        hi = fmax(hi, top);
        if (b->hi[i] > 0)
            lo = fmin(lo, b->hi[i]);
        if (b->lo && b->lo[i] > 0)
            lo = fmin(lo, b->lo[i]);
    }
    double row = b->n_group > 1 ? 14.0 * b->n_group + 8 : 22;
    double h = 44 + row * (b->n_cat > 0 ? b->n_cat : 1) + 44;
    mb_chart c;
    mb_chart_begin(&c, o, b->id, b->title, MB_HTML_WIDTH, h, b->label_px > 0 ? b->label_px : 320, 44);
    if (b->log && b->from_one && isfinite(lo) && lo > 0 && hi > 0) {
        double e = fmax(1, ceil(fmax(fabs(log10(lo)), fabs(log10(hi))) - 1e-9));
        lo = pow(10, -e);
        hi = pow(10, e);
    }
    c.x = (mb_scale){ b->log ? (isfinite(lo) ? lo : 1) : 0, hi > 0 ? hi : 1, c.left, c.right, b->log };
    mb_scale_nice(&c.x);
    if (b->groups && b->n_group >= 1) { /* one group too: it says which machine the bars are */
        /* only the groups drawn: no "peak" key on a chart without a peak bar */
        int cols[16], nl = 0;
        const char *names[16];
        for (int g = 0; g < b->n_group && nl < 16; g++) {
            bool drawn = false;
            for (int k = 0; k < b->n_cat && !drawn; k++)
                drawn = has_bar(b, k * b->n_group + g);
            if (!drawn)
                continue;
            names[nl] = b->groups[g];
            cols[nl++] = b->colors ? b->colors[g] : g;
        }
        if (nl > 0)
            mb_chart_legend(&c, nl, names, cols);
    }
    if (b->seconds)
        mb_chart_x_time_axis(&c, b->x_label);
    else
        mb_chart_x_axis(&c, b->x_label);
    for (int k = 0; k < b->n_cat; k++) {
        mb_chart_category(&c, k, b->n_cat, b->cats[k]);
        for (int g = 0; g < b->n_group; g++) {
            int i = k * b->n_group + g;
            if (!has_bar(b, i))
                continue;
            double from = b->lo && isfinite(b->lo[i]) && b->lo[i] >= 0 ? b->lo[i] : 0;
            if (b->log && from <= 0)
                from = c.x.d0;
            const char *case_id = b->case_ids ? b->case_ids[i] : NULL;
            mb_chart_bar_case(&c, k, b->n_cat, g, b->n_group, from, b->hi[i], b->colors ? b->colors[g] : g,
                              b->titles && b->titles[i] ? b->titles[i] : "", case_id, case_id ? b->hi[i] : NAN);
            if (b->err_lo && b->err_hi && b->err_lo[i] >= 0 && b->err_hi[i] >= 0)
                mb_chart_bar_error(&c, k, b->n_cat, g, b->n_group, b->err_lo[i], b->err_hi[i]);
        }
    }
    mb_chart_end(&c);
}

/* one time format in every view (format.h) */
static void fmt_secs(char *buf, size_t len, double s)
{
    mb_fmt_seconds(buf, len, s);
}

int mb_part_color(const char *id)
{
    static const struct {
        const char *id;
        int color;
    } map[] = { { "gemm", MB_COLOR_TENSOR },      { "conv", MB_COLOR_CONV },   { "attention", MB_COLOR_ATTENTION },
                { "memory_bound", MB_COLOR_MEMORY }, { "copy", MB_COLOR_COPY }, { "collective", MB_COLOR_COMM },
                { "host_collective", MB_COLOR_COMM }, { "data", MB_COLOR_DATA }, { "sync", MB_COLOR_SYNC },
                { "launch", MB_COLOR_LAUNCH },    { "host", MB_COLOR_HOST }, { "queued", MB_COLOR_KERNEL_WAIT },
                /* a CPU-only trace's parts (trace_cpu.c) */
                { "memory", MB_COLOR_MEMORY },    { "python", MB_COLOR_HOST }, { "optimizer", MB_COLOR_OPTIMIZER } };
    for (size_t i = 0; id && i < sizeof map / sizeof *map; i++)
        if (strcmp(map[i].id, id) == 0)
            return map[i].color;
    return MB_COLOR_OTHER;
}

void mb_html_stacked_bar(FILE *o, const char *id, const char *title, const mb_html_part *parts, int n)
{
    double total = 0;
    for (int i = 0; i < n; i++)
        total += parts[i].seconds > 0 ? parts[i].seconds : 0;
    mb_chart c;
    mb_chart_begin(&c, o, id, title, MB_HTML_WIDTH, 44 + 40 + 44, 60, 44);
    c.x = (mb_scale){ 0, total > 0 ? total : 1, c.left, c.right, false }; /* seconds: a time axis */
    mb_scale_nice(&c.x);
    const char *names[64];
    int cols[64], nl = 0;
    for (int i = 0; i < n && nl < 64; i++)
        if (parts[i].seconds > 0) {
            names[nl] = parts[i].name;
            cols[nl++] = parts[i].color;
        }
    mb_chart_legend(&c, nl, names, cols);
    mb_chart_x_time_axis(&c, "time");
    mb_chart_category(&c, 0, 1, "step");
    double at = 0;
    for (int i = 0; i < n; i++) {
        if (!(parts[i].seconds > 0))
            continue;
        char t[256], s[32];
        fmt_secs(s, sizeof s, parts[i].seconds);
        snprintf(t, sizeof t, "%s: %s (%.1f%%)", parts[i].name, s, 100 * parts[i].seconds / total);
        mb_chart_bar(&c, 0, 1, 0, 1, at, at + parts[i].seconds, parts[i].color, t);
        at += parts[i].seconds;
    }
    mb_chart_end(&c);
}

/* ---- a page to a file ------------------------------------------------------------------ */

int mb_html_write_file(const char *path, mb_html_page_fn fn, const void *what, mb_err *err)
{
    /* formatted in memory first: the page is written whole (atomically) or not at all */
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL)
        return mb_errno(err, MB_ESYS, "open_memstream");
    int rc = fn(mem, what, err);
    if (fclose(mem) != 0 && rc == MB_OK)
        rc = mb_errno(err, MB_ESYS, "formatting the HTML page");
    if (rc == MB_OK)
        rc = mb_write_file_atomic(path, text, err);
    free(text);
    return rc;
}
