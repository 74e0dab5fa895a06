/* compare_page.c: the compare page. Figures come from the same model the
 * text writers print (compare.c, compare_writers.c); this file only lays
 * them out. */
#include "compare_page.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare_writers.h"
#include "formulas.h"
#include "html.h"
#include "page_helpers.h"
#include "svg.h"
#include "vocabulary.h"

/* ---- compare ------------------------------------------------------------------------ */

static void compare_machines(FILE *o, const mb_compare *c)
{
    fputs("<table class=\"machines\"><tr><th></th><th>machine</th><th>file</th><th>started (UTC)</th>"
          "<th>USD/hour</th></tr>\n",
          o);
    for (int i = 0; i < c->n_m; i++) {
        char l[4] = { (char)('A' + i), 0 }, p[32] = "";
        if (c->price[i] > 0)
            snprintf(p, sizeof p, "%.4g", c->price[i]);
        fputs("<tr>", o);
        td(o, l, false);
        td(o, c->label[i], false);
        td(o, c->m[i].path, false);
        td(o, c->m[i].started_utc ? c->m[i].started_utc : "?", false);
        td(o, p, true);
        fputs("</tr>\n", o);
    }
    fputs("</table>\n<p class=\"note\">Ratios are to A: above 1x is faster than A (a higher rate; for latencies, a "
          "shorter time).</p>\n",
          o);
}

/* Work units per second of a row's rate on machine i (rates are in the row's rate unit). */
static double row_rate_abs(const mb_compare *c, const mb_compare_row *row, int i, const char **work_unit)
{
    for (int k = 0; k < c->n_m; k++)
        if (row->idx[k] >= 0) {
            const mb_case_ref *cr = &c->m[k].cases[row->idx[k]];
            *work_unit = mb_compare_work_unit(cr);
            return row->rate[i] > 0 && cr->rate_scale > 0 ? row->rate[i] * cr->rate_scale : -1;
        }
    return -1;
}

/* The SI prefix that shows `top` work units per second as 1..999: its factor and name. */
static double si_factor(double top, const char *work_unit, char *unit, size_t len)
{
    static const char *const p[] = { "", "k", "M", "G", "T", "P", "E" };
    const char *sym = work_unit && !strcmp(work_unit, "flop") ? "FLOP" : work_unit && !strcmp(work_unit, "byte") ? "B"
                      : work_unit ? work_unit : "op";
    double f = 1;
    int i = 0;
    while (top >= 1000 * f && i < 6) {
        f *= 1000;
        i++;
    }
    snprintf(unit, len, "%s%s/s", p[i], sym);
    return f;
}

static bool row_in_chart(const mb_compare *c, const mb_compare_row *row, const mb_compare_geo *g,
                         const char *work_unit)
{
    const char *wu = NULL;
    bool any = false;
    for (int i = 0; i < c->n_m; i++)
        any = any || row_rate_abs(c, row, i, &wu) > 0;
    return any && !strcmp(row->component, g->component) && !strcmp(row->device, g->device) && wu &&
           !strcmp(wu, work_unit);
}

/* One chart per component, device kind and work unit: a row per case, a bar
 * per machine, all in one SI unit (one CPU's GFLOP/s and another's TFLOP/s
 * on one axis; log scale: machines differ by orders). */
static int compare_component(FILE *o, const mb_compare *c, const mb_compare_geo *g, const char *work_unit, int chart,
                             mb_err *err)
{
    int n = 0;
    double top = 0;
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        if (!row_in_chart(c, row, g, work_unit))
            continue;
        n++;
        for (int i = 0; i < c->n_m; i++) {
            const char *wu;
            top = fmax(top, row_rate_abs(c, row, i, &wu));
        }
    }
    if (n == 0)
        return MB_OK;
    char unit[32];
    double f = si_factor(top, work_unit, unit, sizeof unit);
    const char **cats = calloc((size_t)n, sizeof *cats);
    double *hi = calloc((size_t)(n * c->n_m), sizeof *hi);
    char **titles = calloc((size_t)(n * c->n_m), sizeof *titles);
    if (!cats || !hi || !titles) {
        free(cats);
        free(hi);
        free(titles);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    int k = 0;
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        if (!row_in_chart(c, row, g, work_unit))
            continue;
        cats[k] = row->label;
        for (int i = 0; i < c->n_m; i++) {
            const char *wu;
            double v = row_rate_abs(c, row, i, &wu);
            hi[k * c->n_m + i] = v > 0 ? v / f : -1;
            char t[1024], cell[512], ratio[32];
            mb_compare_fmt_cell(cell, sizeof cell, c, row, i);
            mb_fmt_ratio(ratio, sizeof ratio, row->ratio[i]);
            if (row->ratio[i] > 0 && i > 0)
                snprintf(t, sizeof t, "%s, %c %s: %s (%s A)", row->label, 'A' + i, c->label[i], cell, ratio);
            else
                snprintf(t, sizeof t, "%s, %c %s: %s", row->label, 'A' + i, c->label[i], cell);
            titles[k * c->n_m + i] = strdup(t);
        }
        k++;
    }
    char id[96], title[256], what[96];
    snprintf(id, sizeof id, "compare-%d", chart);
    mb_compare_fmt_what(what, sizeof what, g->component, g->device);
    snprintf(title, sizeof title, "%s: %s, log scale", what, unit);
    mb_html_bars b = { .id = id,
                       .title = title,
                       .x_label = unit,
                       .n_cat = n,
                       .n_group = c->n_m,
                       .cats = cats,
                       .groups = (const char *const *)c->label,
                       .hi = hi,
                       .titles = (const char *const *)titles,
                       .log = true,
                       .label_px = 600 }; /* case labels run to 80 characters: cut fewer */
    mb_html_bar_chart(o, &b);
    for (int i = 0; i < n * c->n_m; i++)
        free(titles[i]);
    free(titles);
    free(cats);
    free(hi);
    return MB_OK;
}

static int compare_charts(FILE *o, const mb_compare *c, mb_err *err)
{
    fputs("<h2>Per component</h2>\n", o);
    int chart = 0;
    for (int g = 0; g < c->n_geo; g++) {
        const char *units[8];
        int nu = 0;
        for (int r = 0; r < c->n_rows; r++) {
            const mb_compare_row *row = &c->rows[r];
            const char *wu = NULL;
            (void)row_rate_abs(c, row, 0, &wu); /* for its work unit */
            if (strcmp(row->component, c->geo[g].component) || strcmp(row->device, c->geo[g].device) || wu == NULL)
                continue;
            bool seen = false;
            for (int u = 0; u < nu && !seen; u++)
                seen = !strcmp(units[u], wu);
            if (!seen && nu < 8)
                units[nu++] = wu;
        }
        for (int u = 0; u < nu; u++)
            if (compare_component(o, c, &c->geo[g], units[u], chart++, err))
                return err->code;
    }
    return MB_OK;
}

typedef enum { GEO_BEST, GEO_LIKE, GEO_BEST_USD } geo_view;

static double geo_value(const mb_compare_geo *g, geo_view v, int i, int *n, int *total)
{
    *n = v == GEO_LIKE ? g->n[i] : g->best_n[i];
    *total = v == GEO_LIKE ? g->n_total : g->best_total;
    return v == GEO_LIKE ? g->geomean[i] : v == GEO_BEST ? g->best_geomean[i] : g->best_geomean_usd[i];
}

/* "gemm (GPU): B 1 of 6": a component and device kind with each machine's coverage. */
static void geo_category(char *buf, size_t len, const mb_compare *c, const mb_compare_geo *g, geo_view v)
{
    char what[96];
    mb_compare_fmt_what(what, sizeof what, g->component, g->device);
    size_t at = (size_t)snprintf(buf, len, "%s:", what);
    for (int i = 1; i < c->n_m && at < len; i++) {
        int n, total;
        double x = geo_value(g, v, i, &n, &total);
        at += (size_t)snprintf(buf + at, len - at, "%s %c %d of %d", i > 1 ? "," : "", 'A' + i, x > 0 ? n : 0,
                               total);
    }
}

/* Some machine has a mean of the view against A. */
static bool geo_has_value(const mb_compare *c, const mb_compare_geo *g, geo_view v)
{
    bool any = false;
    for (int i = 1; i < c->n_m; i++) {
        int k, t;
        any = any || geo_value(g, v, i, &k, &t) > 0;
    }
    return any;
}

/* A component and device kind is a category of the view's chart when some of
 * its cases or kinds ran: one without a mean shows as its label and "0 of m",
 * no bar, as the text's "- (0 of m)" (a GPU with nothing to compare says so). */
static bool geo_shown(const mb_compare_geo *g, geo_view v)
{
    int k, total;
    (void)geo_value(g, v, 0, &k, &total); /* the total is every machine's */
    return total > 0;
}

/* Geometric means against A, bars from 1x: a gain goes right, a loss left
 * (log axis, so 0.5x and 2x are bars of one length). */
static int compare_geomeans(FILE *o, const mb_compare *c, geo_view v, mb_err *err)
{
    static const char *const ids[] = { "geomean-best", "geomean", "geomean-usd" };
    static const char *const heads[] = {
        "Best verified case per component and kind: geometric mean of the ratios to A (log scale, from 1x)",
        ("Like-for-like, the cases both machines ran and verified: geometric mean of the ratios to A (log scale, "
         "from 1x)"),
        "Work per dollar, best case per kind: geometric mean of the ratios to A (log scale, from 1x)",
    };
    int n = 0;
    bool any = false;
    for (int g = 0; g < c->n_geo; g++) {
        n += geo_shown(&c->geo[g], v);
        any = any || geo_has_value(c, &c->geo[g], v);
    }
    if (!any) {
        fprintf(o, "<p>%s: no component has a case usable on A and another machine.</p>\n", ids[v]);
        return MB_OK;
    }
    int ng = c->n_m - 1;
    const char **cats = calloc((size_t)n, sizeof *cats);
    char (*cat_text)[160] = calloc((size_t)n, sizeof *cat_text);
    double *lo = calloc((size_t)(n * ng), sizeof *lo);
    double *hi = calloc((size_t)(n * ng), sizeof *hi);
    char **titles = calloc((size_t)(n * ng), sizeof *titles);
    int *colors = calloc((size_t)ng, sizeof *colors);
    int rc = cats && cat_text && lo && hi && titles && colors ? MB_OK : mb_errf(err, MB_ESYS, "out of memory");
    for (int g = 0, k = 0; g < c->n_geo && rc == MB_OK; g++) {
        const mb_compare_geo *geo = &c->geo[g];
        if (!geo_shown(geo, v))
            continue;
        geo_category(cat_text[k], sizeof cat_text[k], c, geo, v);
        cats[k] = cat_text[k];
        for (int i = 1; i < c->n_m; i++) {
            int m, total;
            double x = geo_value(geo, v, i, &m, &total);
            lo[k * ng + i - 1] = x > 0 ? fmin(1, x) : -1;
            hi[k * ng + i - 1] = x > 0 ? fmax(1, x) : -1;
            char t[256], r[32], what[96];
            mb_fmt_ratio(r, sizeof r, x);
            mb_compare_fmt_what(what, sizeof what, geo->component, geo->device);
            snprintf(t, sizeof t, "%s %c/A: %s over %d of %d %s", what, 'A' + i, r, x > 0 ? m : 0, total,
                     v == GEO_LIKE ? "cases" : "kinds");
            titles[k * ng + i - 1] = strdup(t);
        }
        k++;
    }
    for (int i = 0; i < ng && rc == MB_OK; i++)
        colors[i] = i + 1;
    /* the chart names A itself: an image of it alone (docs) must say what the ratios are to */
    char x_label[256];
    snprintf(x_label, sizeof x_label, "ratio to A, %s (1x = as fast as A)", c->label[0]);
    if (rc == MB_OK) {
        mb_html_bars b = { .id = ids[v],
                           .title = heads[v],
                           .x_label = x_label,
                           .n_cat = n,
                           .n_group = ng,
                           .cats = cats,
                           .groups = (const char *const *)c->label + 1,
                           .lo = lo,
                           .hi = hi,
                           .titles = (const char *const *)titles,
                           .colors = colors,
                           .log = true,
                           .from_one = true,
                           .label_px = 220 };
        mb_html_bar_chart(o, &b);
    }
    for (int i = 0; titles && i < n * ng; i++)
        free(titles[i]);
    free(titles);
    free(cats);
    free(cat_text);
    free(lo);
    free(hi);
    free(colors);
    return rc;
}

/* Best per kind: each machine's best case, its ratio, and with prices its work per dollar. */
static void compare_best_table(FILE *o, const mb_compare *c, bool usd)
{
    fputs("<table class=\"best\"><tr><th>component</th><th>kind</th>", o);
    for (int i = 0; i < c->n_m; i++) {
        fprintf(o, "<th>%c ", 'A' + i);
        mb_html_escape(o, c->label[i]);
        fputs(usd ? " per $</th>" : "</th>", o);
        if (i > 0)
            fprintf(o, usd ? "<th>%c/A per $</th>" : "<th>%c/A</th>", 'A' + i);
    }
    fputs("</tr>\n", o);
    for (int b = 0; b < c->n_best; b++) {
        const mb_compare_best *k = &c->best[b];
        bool any = false;
        for (int i = 0; i < c->n_m; i++)
            any = any || (usd ? k->per_usd_abs[i] > 0 : k->row[i] >= 0);
        if (!any)
            continue;
        char what[96];
        mb_compare_fmt_what(what, sizeof what, k->component, k->device);
        fputs("<tr>", o);
        td(o, what, false);
        td(o, k->kind[0] ? k->kind : "(all)", false);
        for (int i = 0; i < c->n_m; i++) {
            char cell[128];
            if (usd)
                mb_compare_fmt_per_usd(cell, sizeof cell, k->per_usd_abs[i], k->work_unit);
            else
                mb_compare_fmt_best(cell, sizeof cell, c, k, i);
            td(o, cell, true);
            if (i > 0) {
                bool both = usd ? k->per_usd_abs[i] > 0 && k->per_usd_abs[0] > 0 : k->ratio[i] > 0;
                mb_fmt_ratio(cell, sizeof cell, both ? (usd ? k->per_usd_abs[i] / k->per_usd_abs[0] : k->ratio[i]) : -1);
                td(o, cell, true);
            }
        }
        fputs("</tr>\n", o);
    }
    fputs("</table>\n", o);
}

static void compare_table(FILE *o, const mb_compare *c)
{
    fputs("<table class=\"ratios\"><tr><th>case</th>", o);
    for (int i = 0; i < c->n_m; i++) {
        fprintf(o, "<th>%c ", 'A' + i);
        mb_html_escape(o, c->label[i]);
        fputs("</th>", o);
        if (i > 0)
            fprintf(o, "<th>%c/A</th>", 'A' + i);
    }
    fputs("</tr>\n", o);
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        fputs("<tr><td title=\"", o);
        mb_html_escape(o, row->id);
        fputs("\">", o);
        mb_html_escape(o, row->label);
        fputs("</td>", o);
        for (int i = 0; i < c->n_m; i++) {
            char b[512];
            mb_compare_fmt_cell(b, sizeof b, c, row, i);
            td(o, b, true);
            if (i > 0) {
                mb_fmt_ratio(b, sizeof b, row->ratio[i]);
                td(o, b, true);
            }
        }
        fputs("</tr>\n", o);
    }
    fputs("</table>\n", o);
}

static void compare_context(FILE *o, const mb_compare *c)
{
    if (c->n_ctx == 0)
        return;
    fputs("<h2>Context differences</h2>\n<table class=\"ctx\"><tr><th>entry</th>", o);
    for (int i = 0; i < c->n_m; i++) {
        fprintf(o, "<th>%c ", 'A' + i);
        mb_html_escape(o, c->label[i]);
        fputs("</th>", o);
    }
    fputs("</tr>\n", o);
    for (int k = 0; k < c->n_ctx; k++) {
        fputs("<tr>", o);
        td(o, c->ctx[k].key, false);
        for (int i = 0; i < c->n_m; i++)
            td(o, c->ctx[k].value[i][0] ? c->ctx[k].value[i] : "(none)", false);
        fputs("</tr>\n", o);
    }
    fputs("</table>\n", o);
}

/* What work per dollar divides, a note per device kind shown (the text's notes). */
static void usd_notes(FILE *o, const mb_compare *c)
{
    fputs("<ul class=\"note usd\">\n", o);
    for (int d = 0; d < MB_COMPARE_DEVICES; d++) {
        if (!mb_compare_usd_shown(c, mb_compare_devices[d]))
            continue;
        char note[512];
        mb_compare_usd_note(note, sizeof note, c, mb_compare_devices[d]);
        p_text(o, "li", note);
    }
    fputs("</ul>\n", o);
}

int mb_compare_html(FILE *o, const mb_compare *c, mb_err *err)
{
    mb_html_begin(o, "mlbench compare");
    compare_machines(o, c);
    fputs("<h2>Geometric means</h2>\n<p class=\"note\">Per component and the device its cases run on: the host "
          "CPU (of a GPU machine too) or a GPU. Best per kind: each machine's fastest verified case per "
          "component and kind of work (dtype, op, direction), what a buyer compares. Like-for-like: only the cases "
          "both machines ran and verified. Each category says how many kinds or cases the mean covers, of those "
          "that ran on some machine.</p>\n",
          o);
    int rc = compare_geomeans(o, c, GEO_BEST, err);
    if (rc == MB_OK)
        rc = compare_geomeans(o, c, GEO_LIKE, err);
    if (rc == MB_OK) {
        fputs("<h2>Best verified case per component and kind</h2>\n", o);
        compare_best_table(o, c, false);
        rc = compare_charts(o, c, err);
    }
    bool priced = false;
    for (int i = 0; i < c->n_m; i++)
        priced = priced || c->price[i] > 0;
    if (rc == MB_OK && priced) {
        fputs("<h2>Price-performance</h2>\n<p class=\"note\">Work per dollar: rate x 3600 / (USD per hour of the "
              "whole machine), the work one dollar buys (e.g. TFLOP/$), of each machine's best case per kind.</p>\n",
              o);
        usd_notes(o, c);
        rc = compare_geomeans(o, c, GEO_BEST_USD, err);
        if (rc == MB_OK)
            compare_best_table(o, c, true);
    }
    if (rc == MB_OK) {
        fputs("<h2>All cases and ratios</h2>\n", o);
        compare_table(o, c);
        compare_context(o, c);
    }
    mb_html_end(o);
    return rc;
}
