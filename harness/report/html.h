/* html.h: the frame of a self-contained HTML page (inline SVG and CSS; no
 * network, no scripts, no fonts: GPU nodes are often air-gapped) and the
 * generic charts, shared by the results page (results_page.c) and the gap and
 * compare pages (analysis/gap/gap_page.c, analysis/compare/compare_page.c). Hover values are SVG <title>
 * elements, which every browser shows without JavaScript. Output is
 * deterministic: the same input gives the same bytes. */
#ifndef MB_REPORT_HTML_H
#define MB_REPORT_HTML_H

#include <stdbool.h>
#include <stdio.h>

#include "mb.h"

enum { MB_HTML_WIDTH = 1200 }; /* chart width in px: fits a 1280 px window and A4 landscape */

void mb_html_begin(FILE *o, const char *title);
void mb_html_end(FILE *o);
void mb_html_escape(FILE *o, const char *s);

/* A horizontal bar chart of n_cat categories with n_group bars each.
 * Arrays are [cat * n_group + group]; a bar spans lo..hi (hi < 0 or NaN: no
 * bar). err_lo/err_hi (may be NULL; < 0 = none) draw error bars; titles (may
 * be NULL) are the hover texts. log: a log x scale (zero-based bars then
 * start at the scale's left end). */
typedef struct mb_html_bars {
    const char *id, *title, *x_label;
    int n_cat, n_group;
    const char *const *cats;
    const char *const *groups; /* legend names, NULL for no legend */
    const double *lo, *hi;
    const double *err_lo, *err_hi;
    bool from_one; /* log axis of ratios: symmetric about 1 (2x and 0.5x equally far), bars from lo to hi */
    const char *const *titles;
    const int *colors; /* per group; NULL = the palette in order */
    bool log;
    /* lo, hi are seconds: a time axis in the unit the data need (s, ms, µs)
     * with plain-number ticks, x_label naming what is timed ("time per step") */
    bool seconds;
    double label_px;   /* left margin for the category labels; 0 = 320 */
    /* per bar (may be NULL; a NULL entry = none): the results case the bar
     * shows, written as data-case with the bar's value (hi) as data-value, so
     * that the browser test checks the figure against the results file */
    const char *const *case_ids;
} mb_html_bars;
void mb_html_bar_chart(FILE *o, const mb_html_bars *b);

/* One stacked bar: a step (or any total) split into parts, in order, each
 * named with its seconds; generic so that any list of (name, seconds) parts
 * can feed it (gap stages today, the step model's parts tomorrow). */
typedef struct mb_html_part {
    const char *name;
    double seconds;
    int color; /* mb_svg_color index: a category's (mb_category_color), the same on every page */
} mb_html_part;

/* One colour per category of time on every page (the step's parts, the
 * machines' split): GEMM/matrix math blue, memory-bound amber, ... */
enum mb_category_color { /* indices of mb_svg_color's palette; grey (7) is "other", as "no ceiling" is */
    MB_COLOR_TENSOR = 0, MB_COLOR_MEMORY = 1, MB_COLOR_COPY = 2, MB_COLOR_COMM = 3, MB_COLOR_HOST = 4,
    MB_COLOR_DATA = 5, MB_COLOR_SYNC = 6, MB_COLOR_OTHER = 7, MB_COLOR_CONV = 8, MB_COLOR_ATTENTION = 9,
    MB_COLOR_KERNEL_WAIT = 10, MB_COLOR_LAUNCH = 11, MB_COLOR_OPTIMIZER = 12,
};
/* The colour of a step table part by its id (gemm, conv, attention, memory_bound, copy, collective, queued, data,
 * sync, host_collective, launch, host; a CPU-only trace's memory, python and optimizer; docs/traces.md),
 * MB_COLOR_OTHER for another. */
int mb_part_color(const char *id);
void mb_html_stacked_bar(FILE *o, const char *id, const char *title, const mb_html_part *parts, int n);

/* Writes the page fn(out, what) makes to path, whole and atomically (a
 * temporary file renamed), or nothing on an error. */
typedef int (*mb_html_page_fn)(FILE *out, const void *what, mb_err *err);
int mb_html_write_file(const char *path, mb_html_page_fn fn, const void *what, mb_err *err);

#endif
