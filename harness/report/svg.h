/* svg.h: a small SVG chart writer for the HTML pages (results_page.c,
 * analysis/gap/gap_page.c, analysis/compare/compare_page.c). mlbench draws its own charts so that a GPU node
 * with no plotting runtime (and often no network) can still produce them:
 * SVG is text.
 *
 * A chart is a plot area inside a fixed-size SVG, with an x and a y scale
 * (linear or log). Everything is written in a stable order with fixed number
 * formats, so the same input gives the same bytes. The elements carry classes
 * the browser test counts: `g.series` (one per line/point series, with
 * data-name), `circle.pt` (a point), `rect.bar` (a bar or bar segment),
 * `text.axis-label`, `text.tick`, `text.cat` (a category label, which must
 * end left of the plot area). */
#ifndef MB_SVG_H
#define MB_SVG_H

#include <stdbool.h>
#include <stdio.h>

/* A map from data values [d0, d1] to pixels [r0, r1] (r1 < r0 for a y axis
 * that grows upwards). Log scales need d0 > 0. */
typedef struct mb_scale {
    double d0, d1;
    double r0, r1;
    bool log;
} mb_scale;

double mb_scale_map(const mb_scale *s, double v);

/* Widens the domain to round numbers: a log scale to whole decades, a linear
 * one to a multiple of its tick step (and to 0 when the data are all one
 * sign, so bars start at 0). */
void mb_scale_nice(mb_scale *s);

/* Tick values in [d0, d1], ascending: a log scale's powers of ten, a linear
 * scale's multiples of the 1-2-5 step that gives 4 to 10 ticks. Returns the
 * count (at most max). */
int mb_scale_ticks(const mb_scale *s, double *ticks, int max);

/* "1.5k", "20M", "1T", "0.25": tick labels with SI prefixes. */
void mb_svg_fmt_si(char *buf, size_t len, double v);

/* The unit of a time axis: of s, ms, µs and ns the largest that shows
 * `seconds` as 1 or more (a 150 ms step in ms, a 1.4 µs copy in µs), so
 * that the ticks are plain numbers under one unit. An SI prefix on a tick of
 * a unit that has one already reads as nonsense ("1.2m milliseconds"). */
typedef struct mb_time_unit {
    const char *name;  /* "s", "ms", "µs", "ns" */
    double per_second; /* 1, 1e3, 1e6, 1e9 */
} mb_time_unit;
mb_time_unit mb_time_unit_for(double seconds);

/* A tick label as a plain number with the decimals its step between ticks
 * needs (step 0.2: "0.4", step 50: "150", 0: "0"): no prefix, no exponent. */
void mb_svg_fmt_tick(char *buf, size_t len, double v, double step);
/* A size in bytes with binary prefixes and 3 digits: 65536 is "64 KiB". */
void mb_svg_fmt_bytes(char *buf, size_t len, double v);

/* Writes s with & < > " ' escaped for XML text and attributes. */
void mb_svg_escape(FILE *o, const char *s);

/* Roofline: attainable rate at arithmetic intensity ai (work per byte) under
 * a compute roof `peak` (work/s) and a memory slope `bw` (byte/s), and the
 * ridge point where the two meet (peak / bw). */
double mb_roofline_at(double ai, double peak, double bw);
double mb_roofline_ridge(double peak, double bw);

enum { MB_SVG_COLORS = 13 };
/* The palette: colour i % MB_SVG_COLORS (colour-blind-safe, prints in grey). */
const char *mb_svg_color(int i);

enum { MB_CHART_LABELS = 64 };
typedef struct mb_chart {
    FILE *o;
    double w, h;                     /* the SVG's size in pixels */
    double left, right, top, bottom; /* the plot area's edges */
    mb_scale x, y;
    /* boxes (x0, y0, x1, y1 px) of the labels placed by mb_chart_label, so
     * that a later one moves clear of them */
    double label_box[MB_CHART_LABELS][4];
    int n_labels;
} mb_chart;

/* Opens an SVG of w x h with a title line; the plot area is the rest minus
 * the margins (left for category labels, bottom for the x axis). id names the
 * chart for the test (data-chart). */
void mb_chart_begin(mb_chart *c, FILE *o, const char *id, const char *title, double w, double h, double margin_left,
                    double margin_bottom);
/* x axis with ticks at the bottom and y axis with ticks at the left; either
 * label may be NULL (no axis drawn: category charts have no y axis). */
void mb_chart_x_axis(mb_chart *c, const char *label);
/* An x axis of plain numbers (0, 0.005, 0.01), no SI prefix: money, where
 * "5m" reads as five million dollars. */
void mb_chart_x_plain_axis(mb_chart *c, const char *label);
void mb_chart_y_axis(mb_chart *c, const char *label);
/* An x axis of time: the x scale is in seconds; the unit is the one the
 * scale's end needs (mb_time_unit_for), the ticks are plain numbers in it
 * and the label reads "what (unit)": "time per step (µs)". */
void mb_chart_x_time_axis(mb_chart *c, const char *what);

/* A series of n points, joined by a line when `line`; err_lo/err_hi (may be
 * NULL; a negative entry = none) draw vertical error bars. Points outside
 * the domain are left out. unit is shown in each point's hover title. */
void mb_chart_series(mb_chart *c, const char *name, int color, int n, const double *x, const double *y,
                     const double *err_lo, const double *err_hi, bool line, const char *unit);

/* A line y = f(x) drawn as a straight segment from (x0, y0) to (x1, y1) in
 * data units, dashed when `dashed`, with an optional label at its end. */
void mb_chart_segment(mb_chart *c, double x0, double y0, double x1, double y1, int color, bool dashed,
                      const char *label);

/* Category charts (horizontal bars): the plot's height is split into n_cat
 * rows, each into n_group bars. A bar spans x0..x1 on the x scale; title is
 * its hover text. */
void mb_chart_category(mb_chart *c, int cat, int n_cat, const char *label);
void mb_chart_bar(mb_chart *c, int cat, int n_cat, int group, int n_group, double x0, double x1, int color,
                  const char *title);
/* A bar's value written just right of x (data units: the bar's end) on row
 * cat of n_cat, class "value": a bar too short to see still says its
 * figure. Leave room for it right of the plot area. */
void mb_chart_bar_value(mb_chart *c, int cat, int n_cat, double x, const char *text);
/* A horizontal error bar on a category bar at x lo..hi. */
void mb_chart_bar_error(mb_chart *c, int cat, int n_cat, int group, int n_group, double lo, double hi);

/* A legend under the title: n names with their colours, in rows that wrap
 * at the chart's width; the plot area (and a y scale ending at its top)
 * moves down by the extra rows. Call it before drawing into the plot. */
void mb_chart_legend(mb_chart *c, int n, const char *const *names, const int *colors);

void mb_chart_end(mb_chart *c);

/* ---- placed labels, single points, sweeps (added for issue 17: charts that cannot mislead) ---- */

/* The box (px) a label of `text` takes at baseline y, ending at x when `end`
 * (text-anchor end) or starting there: CHAR_W per character (UTF-8 counted
 * by code point), 12 px tall. */
void mb_svg_label_box(const char *text, double x, double y, bool end, double box[4]);

/* A text label of class `cls` at (x, y) px, anchored at its end when `end`.
 * Where its box would overlap a label placed before on this chart, it moves
 * down (then up) in steps of one line until it is clear, staying inside the
 * plot area: two roofs of close peaks keep two readable labels. Returns the
 * baseline y it was drawn at. */
double mb_chart_label(mb_chart *c, double x, double y, bool end, int color, const char *cls, const char *text);

/* A group of points drawn one by one (each with its own colour and hover
 * title): mb_chart_series_begin, mb_chart_point..., mb_chart_series_end.
 * case_id (may be NULL) and value (the number the page shows for that case,
 * in the case's own unit; NaN for none) become data-case and data-value, so
 * that a test can check the figure against the results file. */
void mb_chart_series_begin(mb_chart *c, const char *name);
void mb_chart_point(mb_chart *c, double x, double y, int color, const char *title, const char *case_id,
                    double value);
void mb_chart_series_end(mb_chart *c);

/* mb_chart_series where a line joins two neighbouring points only when
 * their x values are at most max_ratio apart (x sorted ascending): a sweep
 * of 4 KiB and 256 MiB is two points, not a made-up curve between them.
 * max_ratio INFINITY joins all, 0 none. y_unit and x_unit name the hover
 * title's numbers ("54.8 GB/s at 268M B"). */
void mb_chart_sweep(mb_chart *c, const char *name, int color, int n, const double *x, const double *y,
                    const double *err_lo, const double *err_hi, double max_ratio, const char *y_unit,
                    const char *x_unit);

/* mb_chart_bar with data-case and data-value (as mb_chart_point). */
void mb_chart_bar_case(mb_chart *c, int cat, int n_cat, int group, int n_group, double x0, double x1, int color,
                       const char *title, const char *case_id, double value);

#endif
