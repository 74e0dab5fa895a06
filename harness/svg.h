/* svg.h: a small SVG chart writer for the HTML reports (html_report.c,
 * analysis/analysis_html.c). mlbench draws its own charts so that a GPU node
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

/* Writes s with & < > " ' escaped for XML text and attributes. */
void mb_svg_escape(FILE *o, const char *s);

/* Roofline: attainable rate at arithmetic intensity ai (work per byte) under
 * a compute roof `peak` (work/s) and a memory slope `bw` (byte/s), and the
 * ridge point where the two meet (peak / bw). */
double mb_roofline_at(double ai, double peak, double bw);
double mb_roofline_ridge(double peak, double bw);

enum { MB_SVG_COLORS = 12 };
/* The palette: colour i % MB_SVG_COLORS (colour-blind-safe, prints in grey). */
const char *mb_svg_color(int i);

typedef struct mb_chart {
    FILE *o;
    double w, h;                     /* the SVG's size in pixels */
    double left, right, top, bottom; /* the plot area's edges */
    mb_scale x, y;
} mb_chart;

/* Opens an SVG of w x h with a title line; the plot area is the rest minus
 * the margins (left for category labels, bottom for the x axis). id names the
 * chart for the test (data-chart). */
void mb_chart_begin(mb_chart *c, FILE *o, const char *id, const char *title, double w, double h, double margin_left,
                    double margin_bottom);
/* x axis with ticks at the bottom and y axis with ticks at the left; either
 * label may be NULL (no axis drawn: category charts have no y axis). */
void mb_chart_x_axis(mb_chart *c, const char *label);
void mb_chart_y_axis(mb_chart *c, const char *label);

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
/* A horizontal error bar on a category bar at x lo..hi. */
void mb_chart_bar_error(mb_chart *c, int cat, int n_cat, int group, int n_group, double lo, double hi);

/* A legend under the title: n names with their colours, in rows that wrap
 * at the chart's width; the plot area (and a y scale ending at its top)
 * moves down by the extra rows. Call it before drawing into the plot. */
void mb_chart_legend(mb_chart *c, int n, const char *const *names, const int *colors);

void mb_chart_end(mb_chart *c);

#endif
