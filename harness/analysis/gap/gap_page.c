/* gap_page.c: the gap page. Figures come from the same model the text
 * writers print (gap.c, diagnose.c); this file only lays them out. */
#include "gap_page.h"

#include "project_rank.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "gap_writers.h"
#include "html.h"
#include "page_helpers.h"
#include "svg.h"
#include "vocabulary.h"

/* ---- gap ---------------------------------------------------------------------------- */

static const char *per(const mb_gap *g)
{
    return g->steps_known ? "step" : "run";
}

static void gap_header(FILE *o, const mb_gap *g)
{
    char b[512];
    fputs("<table class=\"card\">\n<tr><th>run</th>", o);
    snprintf(b, sizeof b, "%s (%s)", g->run->path ? g->run->path : "?", g->run->kind ? g->run->kind : "?");
    td(o, b, false);
    fputs("</tr>\n<tr><th>step</th>", o);
    mb_gap_step_words(b, sizeof b, g); /* the text header's words */
    td(o, b, false);
    fputs("</tr>\n<tr><th>ceilings</th>", o);
    snprintf(b, sizeof b, "%s (%s, started %s)", g->ceilings->path, mb_ceilings_label(g->ceilings),
             g->ceilings->started_utc ? g->ceilings->started_utc : "?");
    td(o, b, false);
    fputs("</tr>\n</table>\n", o);
}

/* A trace's step table (evidence "step", the same parts the text table
 * shows): GPU busy by kernel group and GPU idle by what the host did. The
 * names live in the evidence JSON, which outlives the page. Returns the
 * number of parts, 0 when the run has none. */
static int step_parts(const mb_gap *g, mb_html_part *parts, int max, char names[][160])
{
    const cJSON *step = g->run->evidence ? cJSON_GetObjectItemCaseSensitive(g->run->evidence, "step") : NULL;
    int n = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(step, "parts"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
        const cJSON *secs = cJSON_GetObjectItemCaseSensitive(p, "seconds");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(p, "id");
        if (n >= max || !cJSON_IsString(name) || !cJSON_IsNumber(secs))
            continue;
        snprintf(names[n], 160, "%s%s", mb_gap_part_prefix(p), name->valuestring); /* as the text names it */
        parts[n] = (mb_html_part){ names[n], secs->valuedouble, mb_part_color(cJSON_GetStringValue(id)) };
        n++;
    }
    return n;
}

enum { MAX_STEP_PARTS = 32 };

/* A stage file's stage in the colour of its category (report/html.h): the
 * colours a trace's parts and the machines' split have. */
static int stage_color(const mb_stage *s)
{
    const char *c = s->component;
    if (s->role && strcmp(s->role, "data") == 0)
        return MB_COLOR_DATA;
    if (s->role && strcmp(s->role, "optimizer") == 0)
        return MB_COLOR_OPTIMIZER;
    if (strcmp(c, "gemm") == 0 || strcmp(c, "attention") == 0)
        return MB_COLOR_TENSOR;
    if (strcmp(c, "conv") == 0)
        return MB_COLOR_CONV;
    if (strcmp(c, "membw") == 0 || strcmp(c, "hostmem") == 0)
        return MB_COLOR_MEMORY;
    if (strcmp(c, "copy") == 0)
        return MB_COLOR_COPY;
    if (mb_is_collective(c) || (s->role && strcmp(s->role, "communication") == 0))
        return MB_COLOR_COMM;
    if (strcmp(c, "disk") == 0)
        return MB_COLOR_DATA;
    if (strcmp(c, "sync") == 0)
        return MB_COLOR_SYNC;
    if (strcmp(c, "launch") == 0)
        return MB_COLOR_LAUNCH;
    return MB_COLOR_OTHER;
}

/* Legend rows mb_chart_legend will need for these names at this width (its
 * own wrapping rule), so the chart can grow by them instead of squeezing
 * the bar. */
static int legend_rows(const char *const *names, int n, double w)
{
    double x = 8;
    int rows = 1;
    for (int i = 0; i < n; i++) {
        double iw = 14 + 7.0 * (double)strlen(names[i]) + 14;
        if (x > 8 && x + iw > w - 8) {
            x = 8;
            rows++;
        }
        x += iw;
    }
    return rows;
}

/* The step as one stacked bar, tall enough to read (72 px), each part with
 * its share written on it where the label fits; every part's time and share
 * are in the table under it. */
static void step_bar(FILE *o, const char *title, const char *axis, const mb_html_part *parts, int n)
{
    enum { BAR_PX = 72, AXIS_PX = 44, TOP_PX = 44 };
    double total = 0;
    const char *names[64] = { 0 };
    int cols[64] = { 0 }, nl = 0;
    for (int i = 0; i < n; i++)
        if (parts[i].seconds > 0) {
            total += parts[i].seconds;
            if (nl < 64) {
                names[nl] = parts[i].name;
                cols[nl++] = parts[i].color;
            }
        }
    double h = TOP_PX + 16.0 * (legend_rows(names, nl, MB_HTML_WIDTH) - 1) + BAR_PX + AXIS_PX;
    mb_chart c;
    mb_chart_begin(&c, o, "step", title, MB_HTML_WIDTH, h, 60, AXIS_PX);
    c.x = (mb_scale){ 0, total > 0 ? total : 1, c.left, c.right, false }; /* seconds: a time axis */
    mb_scale_nice(&c.x);
    mb_chart_legend(&c, nl, names, cols);
    mb_chart_x_time_axis(&c, axis);
    mb_chart_category(&c, 0, 1, "step");
    double at = 0, mid = (c.top + c.bottom) / 2 + 4;
    for (int i = 0; i < n; i++) {
        if (!(parts[i].seconds > 0))
            continue;
        char t[256], s[32], share[32];
        mb_fmt_seconds(s, sizeof s, parts[i].seconds);
        mb_fmt_share(share, sizeof share, parts[i].seconds / total);
        snprintf(t, sizeof t, "%s: %s (%s)", parts[i].name, s, share);
        mb_chart_bar(&c, 0, 1, 0, 1, at, at + parts[i].seconds, parts[i].color, t);
        double a = mb_scale_map(&c.x, at), b = mb_scale_map(&c.x, at + parts[i].seconds);
        if (b - a >= 7.0 * (double)strlen(share) + 14) {
            fprintf(o, "<text class=\"share\" x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"12\" "
                       "stroke=\"#fff\" stroke-width=\"3\" paint-order=\"stroke\">%s</text>\n",
                    (a + b) / 2, mid, share);
        }
        at += parts[i].seconds;
    }
    mb_chart_end(&c);
}

/* The parts of the bar with their times and shares: for a trace the GPU
 * busy/idle table (the same parts as the text's step table). */
static void step_table(FILE *o, const mb_gap *g, const mb_html_part *parts, int n, bool trace)
{
    double total = 0;
    for (int i = 0; i < n; i++)
        total += parts[i].seconds > 0 ? parts[i].seconds : 0;
    fprintf(o, "<table class=\"step-parts\"><tr><th></th><th>%s</th>%s<th>time per %s</th><th>share</th></tr>\n",
            trace ? "part" : "stage", trace ? "<th>GPU</th>" : "", per(g));
    for (int i = 0; i < n; i++) {
        if (!(parts[i].seconds > 0))
            continue;
        char tm[32], share[32];
        const char *name = parts[i].name;
        bool idle = strncmp(name, "GPU idle: ", 10) == 0, busy = strncmp(name, "GPU busy: ", 10) == 0;
        mb_fmt_seconds(tm, sizeof tm, parts[i].seconds);
        mb_fmt_share(share, sizeof share, parts[i].seconds / total);
        fprintf(o, "<tr><td><span style=\"display:inline-block;width:10px;height:10px;background:%s\"></span></td>",
                mb_svg_color(parts[i].color));
        td(o, trace && (idle || busy) ? name + 10 : name, false);
        if (trace)
            td(o, idle ? "idle" : busy ? "busy" : "", false);
        td(o, tm, true);
        td(o, share, true);
        fputs("</tr>\n", o);
    }
    fputs("</table>\n", o);
}

static void headline_table(FILE *o, const mb_gap *g)
{
    fprintf(o, "<table class=\"headline\"><tr><th>#</th><th>stage</th><th>time per %s</th><th>share</th>"
               "<th>against its ceiling</th></tr>\n",
            per(g));
    for (int k = 0; k < g->n; k++) {
        const mb_gap_stage *st = &g->stages[g->headline[k]];
        char num[16], tm[32], share[32], verdict[MB_GAP_VERDICT_LEN];
        snprintf(num, sizeof num, "%d", k + 1);
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, st->exposed));
        mb_fmt_share(share, sizeof share, st->share);
        mb_gap_stage_verdict(verdict, sizeof verdict, g, st);
        fputs("<tr>", o);
        td(o, num, true);
        td(o, st->stage->name, false);
        td(o, tm, true);
        td(o, share, true);
        td(o, verdict, false);
        fputs("</tr>\n", o);
    }
    if (g->unaccounted > 0) {
        char tm[32], share[32];
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, g->unaccounted));
        mb_fmt_share(share, sizeof share, g->unaccounted / g->total);
        fputs("<tr><td></td>", o);
        td(o, "(no stage)", false);
        td(o, tm, true);
        td(o, share, true);
        td(o, "time no stage covers", false);
        fputs("</tr>\n", o);
    }
    fputs("</table>\n", o);
}

/* The headline chart's three kinds of time, in the palette of svg.c:
 * vermillion for what a ceiling says is lost, blue for the rest of a
 * bounded stage, grey for time nothing bounds. */
enum { PART_LOST, PART_AT, PART_NONE, PARTS };
static const int part_color[PARTS] = { 4, 0, 7 };
static const char *const part_name[PARTS] = { "time lost against its ceiling", "time at its ceiling",
                                              "no ceiling (time only)" };

/* One row of the headline chart: a stage's exposed time per step split
 * into its kinds (seconds), the figure written after the bar and the hover
 * text, which is the headline table's row. */
typedef struct headline_row {
    const char *name;
    double part[PARTS];
    char value[96];
    char hover[MB_GAP_VERDICT_LEN + 256];
} headline_row;

static void headline_row_of(const mb_gap *g, const mb_gap_stage *st, headline_row *r)
{
    double exposed = mb_gap_per_step(g, st->exposed);
    char tm[32], lost[32], share[32], verdict[MB_GAP_VERDICT_LEN];
    mb_fmt_seconds(tm, sizeof tm, exposed);
    mb_fmt_share(share, sizeof share, st->share);
    mb_gap_stage_verdict(verdict, sizeof verdict, g, st);
    r->name = st->stage->name;
    if (!mb_gap_stage_bounded(st)) { /* a stage that beat its case has none either */
        r->part[PART_NONE] = exposed;
        snprintf(r->value, sizeof r->value, "%s, no ceiling", tm);
    } else {
        r->part[PART_LOST] = st->above_ceiling ? 0 : fmin(exposed, mb_gap_per_step(g, st->time_lost));
        r->part[PART_AT] = exposed - r->part[PART_LOST];
        mb_fmt_seconds(lost, sizeof lost, r->part[PART_LOST]);
        if (r->part[PART_LOST] > 0)
            snprintf(r->value, sizeof r->value, "%s, %s lost", tm, lost);
        else
            snprintf(r->value, sizeof r->value, "%s, nothing lost", tm);
    }
    snprintf(r->hover, sizeof r->hover, "%s: %s per %s (%s), %s", r->name, tm, per(g), share, verdict);
}

/* The time in no stage, as a row without a ceiling. */
static void headline_rest_row(const mb_gap *g, headline_row *r)
{
    char tm[32], share[32];
    mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, g->unaccounted));
    mb_fmt_share(share, sizeof share, g->unaccounted / g->total);
    r->name = "(no stage)";
    r->part[PART_NONE] = mb_gap_per_step(g, g->unaccounted);
    snprintf(r->value, sizeof r->value, "%s, in no stage", tm);
    snprintf(r->hover, sizeof r->hover, "(no stage): %s per %s (%s), time no stage covers", tm, per(g), share);
}

/* A part counts as drawn when it is more than rounding: a stage exactly
 * at its ceiling has no lost part, one at 0% efficiency no part at it. */
static bool part_drawn(const headline_row *r, int k)
{
    double all = r->part[PART_LOST] + r->part[PART_AT] + r->part[PART_NONE];
    return r->part[k] > 1e-9 * all;
}

/* The legend names only the kinds of time some row has. */
static int headline_legend(const headline_row *rows, int n, const char **names, int *cols)
{
    int nl = 0;
    for (int k = 0; k < PARTS; k++) {
        bool drawn = false;
        for (int i = 0; i < n && !drawn; i++)
            drawn = part_drawn(&rows[i], k);
        if (drawn) {
            names[nl] = part_name[k];
            cols[nl++] = part_color[k];
        }
    }
    return nl;
}

static void headline_bars(mb_chart *c, const headline_row *r, int row, int n)
{
    double at = 0;
    for (int k = 0; k < PARTS; k++) {
        if (!part_drawn(r, k))
            continue;
        mb_chart_bar(c, row, n, 0, 1, at, at + r->part[k], part_color[k], r->hover);
        at += r->part[k];
    }
    mb_chart_bar_value(c, row, n, at, r->value);
}

/* What the step is made of as a chart: every stage by exposed time, largest
 * first, with or without a ceiling (the headline's rows), the part lost
 * first so that losses line up at 0. A ranking of the stages with a
 * ceiling alone drew one full-width bar for a 1.4 µs copy on a step that
 * host code fills: the longest bar must be what the step is made of. */
static int headline_chart(FILE *o, const mb_gap *g, mb_err *err)
{
    enum { ROW_PX = 22, TOP_PX = 44, AXIS_PX = 44, LABEL_PX = 220, VALUE_PX = 170 };
    int n = g->n + (g->unaccounted > 0);
    headline_row *rows = calloc((size_t)(n > 0 ? n : 1), sizeof *rows);
    if (rows == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    double max = 0;
    for (int k = 0; k < n; k++) {
        if (k < g->n)
            headline_row_of(g, &g->stages[g->headline[k]], &rows[k]);
        else
            headline_rest_row(g, &rows[k]);
        max = fmax(max, rows[k].part[PART_LOST] + rows[k].part[PART_AT] + rows[k].part[PART_NONE]);
    }
    const char *names[PARTS] = { 0 };
    int cols[PARTS] = { 0 }, nl = headline_legend(rows, n, names, cols);
    char title[192], axis[48];
    snprintf(title, sizeof title, "Every stage by exposed time per %s, largest first: the part lost against its "
                                  "ceiling, the part at it, or no ceiling",
             per(g));
    snprintf(axis, sizeof axis, "exposed time per %s", per(g));
    double h = TOP_PX + 16.0 * (legend_rows(names, nl, MB_HTML_WIDTH) - 1) + ROW_PX * (n > 0 ? n : 1) + AXIS_PX;
    mb_chart c;
    mb_chart_begin(&c, o, "headline", title, MB_HTML_WIDTH, h, LABEL_PX, AXIS_PX);
    c.right -= VALUE_PX; /* room for each bar's figure */
    c.x = (mb_scale){ 0, max > 0 ? max : 1, c.left, c.right, false };
    mb_scale_nice(&c.x);
    mb_chart_legend(&c, nl, names, cols);
    mb_chart_x_time_axis(&c, axis);
    for (int k = 0; k < n; k++) {
        mb_chart_category(&c, k, n, rows[k].name);
        headline_bars(&c, &rows[k], k, n);
    }
    mb_chart_end(&c);
    free(rows);
    return MB_OK;
}

/* What the step is made of, largest first, with or without a ceiling: the
 * same headline the text output starts with, as a table and a chart. */
static int gap_headline(FILE *o, const mb_gap *g, const mb_diagnosis *d, mb_err *err)
{
    char bounded[32], all[32];
    if (d) { /* the one bottleneck, the text headline's and the JSON's words */
        char line[384];
        mb_gap_bottleneck_words(line, sizeof line, g, d);
        fputs("<p class=\"bottleneck\"><b>Bottleneck:</b> ", o);
        mb_html_escape(o, line);
        fputs("</p>\n", o);
        if (d->bottleneck_note[0])
            p_text(o, "p", d->bottleneck_note);
    }
    mb_fmt_share(bounded, sizeof bounded, g->bounded_share);
    mb_fmt_seconds(all, sizeof all, mb_gap_per_step(g, g->all_total));
    fprintf(o, "<h2>What the %s is made of</h2>\n<p><b>%s</b> of the %s has a ceiling: every stage with one at its "
               "ceiling gives %s per %s (%.2fx); the rest has none and stays as it is.</p>\n",
            per(g), bounded, per(g), all, per(g), g->all_speedup);
    headline_table(o, g);
    return headline_chart(o, g, err);
}

static int gap_stacked(FILE *o, const mb_gap *g, mb_err *err)
{
    int max = g->n + 1 > MAX_STEP_PARTS ? g->n + 1 : MAX_STEP_PARTS;
    mb_html_part *parts = calloc((size_t)max, sizeof *parts);
    char(*names)[160] = calloc((size_t)max, sizeof *names);
    if (parts == NULL || names == NULL) {
        free(parts);
        free(names);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    char title[96];
    int n = step_parts(g, parts, max, names), n_trace = n;
    if (n > 0) {
        /* a trace: the step explained end to end, GPU busy and idle (a CPU-only trace: what the CPU ran) */
        const cJSON *step = cJSON_GetObjectItemCaseSensitive(g->run->evidence, "step");
        const char *where = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(step, "where"));
        snprintf(title, sizeof title, "The step, end to end: %s",
                 where && strcmp(where, "cpu") == 0 ? "the CPU's time by what it ran"
                                                    : "GPU busy by kernel group, GPU idle by host activity");
    } else {
        for (int i = 0; i < g->n; i++)
            parts[n++] = (mb_html_part){ g->stages[i].stage->name, mb_gap_per_step(g, g->stages[i].exposed),
                                         stage_color(g->stages[i].stage) };
        if (g->unaccounted > 0)
            parts[n++] = (mb_html_part){ "(no stage)", mb_gap_per_step(g, g->unaccounted), MB_COLOR_OTHER };
        snprintf(title, sizeof title, "The %s, end to end: exposed time per stage", per(g));
    }
    char axis[32];
    snprintf(axis, sizeof axis, "time per %s", per(g));
    fprintf(o, "<h2>The %s end to end</h2>\n", per(g));
    char notes[2][MB_GAP_NOTE_LEN]; /* what set the step: --step-ms, the GPU's timeline */
    for (int i = 0, nn = mb_gap_step_notes(g, notes, 2); i < nn; i++)
        p_text(o, "p", notes[i]);
    step_bar(o, title, axis, parts, n);
    step_table(o, g, parts, n, n_trace > 0);
    free(parts);
    free(names);
    return MB_OK;
}

static void gap_table(FILE *o, const mb_gap *g)
{
    /* time and exposed time, as the text table: the share is of the exposed
     * time (the headline's), and a stage overlapped by others has less of it */
    fputs("<table class=\"stages\"><tr><th>stage</th><th>ceiling matched</th><th>time</th><th>exposed</th>"
          "<th>efficiency</th><th>at ceiling</th><th>lost</th><th>share</th></tr>\n",
          o);
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        char tm[32], ex[32], atc[32], lost[32], eff[32], share[32];
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, st->stage->seconds));
        mb_fmt_seconds(ex, sizeof ex, mb_gap_per_step(g, st->exposed));
        mb_fmt_share(share, sizeof share, st->share);
        fputs("<tr>", o);
        td(o, st->stage->name, false);
        if (st->match >= 0) {
            mb_fmt_seconds(atc, sizeof atc, mb_gap_per_step(g, st->time_at_ceiling));
            mb_fmt_seconds(lost, sizeof lost, mb_gap_per_step(g, st->time_lost));
            mb_fmt_share(eff, sizeof eff, st->efficiency); /* 0.04%, as the text's table: not 0.0% */
            if (st->hidden) /* syncs the GPU never idled in: no rate, nothing lost */
                snprintf(eff, sizeof eff, "-");
            td(o, g->ceilings->cases[st->match].label, false);
        } else {
            snprintf(atc, sizeof atc, "-");
            snprintf(lost, sizeof lost, "-");
            snprintf(eff, sizeof eff, "-");
            td(o, st->why, false);
        }
        td(o, tm, true);
        td(o, ex, true);
        td(o, eff, true);
        td(o, atc, true);
        td(o, st->above_ceiling ? "0 (above)" : lost, true);
        td(o, share, true);
        fputs("</tr>\n", o);
    }
    fputs("</table>\n", o);
}

/* The sentence that stands for the waterfall when it has nothing to draw
 * (no stage has a ceiling, or none loses time); false when it has. */
static bool waterfall_absent(FILE *o, const mb_gap *g, int n_lost)
{
    bool bounded = false;
    for (int i = 0; i < g->n; i++)
        bounded = bounded || mb_gap_stage_bounded(&g->stages[i]);
    if (bounded && n_lost > 0)
        return false;
    char now[32];
    mb_fmt_seconds(now, sizeof now, mb_gap_per_step(g, g->total));
    if (!bounded)
        fprintf(o, "<p>No stage has a ceiling, so no ceiling takes anything off: the %s stays %s.</p>\n", per(g), now);
    else
        fprintf(o, "<p>No stage loses time against its ceiling (each one with a ceiling runs at it or faster), so at "
                   "every ceiling the %s stays %s.</p>\n",
                per(g), now);
    return true;
}

/* A bar at least 2 px wide: a loss a hundredth of a pixel wide drew
 * nothing; its figure is written beside it. */
static void visible_bar(mb_chart *c, int row, int n, double x0, double x1, const char *title)
{
    double min = 2 * (c->x.d1 - c->x.d0) / (c->right - c->left);
    if (x1 - x0 < min) {
        x1 = fmin(x0 + min, c->x.d1);
        x0 = x1 - min;
    }
    mb_chart_bar(c, row, n, 0, 1, x0, x1, part_color[PART_LOST], title);
}

/* The waterfall's stage rows (n_rows with the total's): each loss from
 * where the one before it ended, in ranking order. */
static void waterfall_stages(mb_chart *c, const mb_gap *g, int n_rows)
{
    double at = 0;
    for (int k = 0, row = 0; k < g->n; k++) {
        const mb_gap_stage *st = &g->stages[g->ranking[k]];
        if (st->match < 0 || !(st->time_lost > 0))
            continue;
        double l = mb_gap_per_step(g, st->time_lost);
        char lost[32], verdict[MB_GAP_VERDICT_LEN], hover[MB_GAP_VERDICT_LEN + 136];
        mb_fmt_seconds(lost, sizeof lost, l);
        mb_gap_stage_verdict(verdict, sizeof verdict, g, st);
        snprintf(hover, sizeof hover, "%s: %s", st->stage->name, verdict);
        mb_chart_category(c, row, n_rows, st->stage->name);
        visible_bar(c, row, n_rows, at, at + l, hover);
        mb_chart_bar_value(c, row, n_rows, at + l, lost);
        at += l;
        row++;
    }
}

/* The waterfall's last row, named as the Amdahl table's last row: every
 * stage with a ceiling at it, `sum` (seconds per step) taken off in all. */
static void waterfall_total(mb_chart *c, const mb_gap *g, int n, double sum)
{
    char cat[96], value[64], hover[256], bounded[32], rest[32], lost[32], now[32], all[32];
    mb_fmt_share(bounded, sizeof bounded, g->bounded_share);
    mb_fmt_share(rest, sizeof rest, 1 - g->bounded_share);
    mb_fmt_seconds(lost, sizeof lost, sum);
    mb_fmt_seconds(now, sizeof now, mb_gap_per_step(g, g->total));
    mb_fmt_seconds(all, sizeof all, mb_gap_per_step(g, g->all_total));
    snprintf(cat, sizeof cat, "all stages with a ceiling (%s of the %s)", bounded, per(g));
    snprintf(value, sizeof value, "%s in all", lost);
    snprintf(hover, sizeof hover, "every stage with a ceiling at it: %s per %s (%.2fx, from %s); the other %s of the "
                                  "%s has no ceiling",
             all, per(g), g->all_speedup, now, rest, per(g));
    mb_chart_category(c, n, n + 1, cat);
    visible_bar(c, n, n + 1, 0, sum, hover);
    mb_chart_bar_value(c, n, n + 1, sum, value);
}

/* The ranking by time lost as a waterfall: from the step now, each stage's
 * loss taken away in ranking order, down to the step at every ceiling. Its
 * axis is the time taken off the step, 0 to all of it, not the whole step:
 * on real traces the losses are a sliver of the step (0.09% of it on the
 * H100 data-loader trace), and on a step-long axis every stage's bar was
 * under a pixel wide, an empty chart between two equal bars. */
static void gap_waterfall(FILE *o, const mb_gap *g)
{
    enum { ROW_PX = 22, TOP_PX = 44, AXIS_PX = 44, LABEL_PX = 350, VALUE_PX = 150 };
    fprintf(o, "<h2>Ranking by time lost: from the %s now to the %s at every ceiling</h2>\n", per(g), per(g));
    int n = 0;
    double sum = 0;
    for (int k = 0; k < g->n; k++) {
        const mb_gap_stage *st = &g->stages[g->ranking[k]];
        if (st->match >= 0 && st->time_lost > 0) {
            n++;
            sum += mb_gap_per_step(g, st->time_lost);
        }
    }
    if (waterfall_absent(o, g, n))
        return;
    char now[32], all[32], title[256], axis[64];
    mb_fmt_seconds(now, sizeof now, mb_gap_per_step(g, g->total));
    mb_fmt_seconds(all, sizeof all, mb_gap_per_step(g, g->all_total));
    snprintf(title, sizeof title, "From the %s now (%s) to the %s at every ceiling (%s, %.2fx): what each stage's "
                                  "ceiling takes off, largest first",
             per(g), now, per(g), all, g->all_speedup);
    snprintf(axis, sizeof axis, "time taken off the %s", per(g));
    char off[32], share[32];
    mb_fmt_seconds(off, sizeof off, sum);
    mb_fmt_share(share, sizeof share, sum / mb_gap_per_step(g, g->total));
    /* the axis is the time taken off, not the step: a full-width bar may be 2 µs of a 12 ms step */
    fprintf(o, "<p>Every stage with a ceiling at it takes <b>%s</b> off the %s (%s of it): %s now, %s at every "
               "ceiling (%.2fx). The axis is the time taken off, not the whole %s.</p>\n",
            off, per(g), share, now, all, g->all_speedup, per(g));
    mb_chart c;
    mb_chart_begin(&c, o, "waterfall", title, MB_HTML_WIDTH, TOP_PX + ROW_PX * (n + 1.0) + AXIS_PX, LABEL_PX, AXIS_PX);
    c.right -= VALUE_PX;
    c.x = (mb_scale){ 0, sum, c.left, c.right, false };
    mb_scale_nice(&c.x);
    mb_chart_x_time_axis(&c, axis);
    waterfall_stages(&c, g, n + 1);
    waterfall_total(&c, g, n, sum);
    mb_chart_end(&c);
}

static void gap_diagnosis(FILE *o, const mb_diagnosis *d)
{
    if (d == NULL)
        return;
    fputs("<h2>Diagnosis</h2>\n", o);
    fputs("<p class=\"note\">From ", o);
    mb_html_escape(o, d->fig.source);
    fputs(".</p>\n", o);
    if (d->n == 0)
        fputs("<p>No pattern passed its threshold (configs/gap/thresholds.ini); follow the ranking by time "
              "lost.</p>\n",
              o);
    for (int i = 0; i < d->n; i++) {
        const mb_finding *f = &d->findings[i];
        fprintf(o, "<h3>%d. ", i + 1);
        mb_html_escape(o, f->title);
        fputs("</h3>\n<p>Evidence:</p>\n<ul class=\"evidence\">\n", o);
        for (int j = 0; j < f->n_evidence; j++)
            p_text(o, "li", f->evidence[j]);
        fputs("</ul>\n", o);
        if (f->n_remedies) {
            fputs("<p>Remedies:</p>\n<ul class=\"remedies\">\n", o);
            for (int j = 0; j < f->n_remedies; j++)
                p_text(o, "li", f->remedies[j]);
            fputs("</ul>\n", o);
        }
    }
    for (int i = 0; i < d->n_notes; i++)
        p_text(o, "p", d->notes[i]);
}

static int gap_projection(FILE *o, const mb_gap *g, mb_err *err)
{
    if (!g->has_target)
        return MB_OK;
    fputs("<h2>Projection onto ", o);
    mb_html_escape(o, g->target_label);
    fputs("</h2>\n", o);
    int n = g->n + 1;
    const char **cats = calloc((size_t)n, sizeof *cats);
    char **titles = calloc((size_t)(2 * n), sizeof *titles);
    double *hi = calloc((size_t)(2 * n), sizeof *hi);
    if (!cats || !titles || !hi) {
        free(cats);
        free(titles);
        free(hi);
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    for (int i = 0; i < n; i++) {
        double here = i < g->n ? g->stages[i].stage->seconds : g->total;
        double there = i < g->n ? g->stages[i].target_seconds : g->target_total;
        cats[i] = i < g->n ? g->stages[i].stage->name : per(g);
        hi[2 * i] = mb_gap_per_step(g, here);
        hi[2 * i + 1] = mb_gap_per_step(g, there);
        char t[1024], s[32];
        mb_fmt_seconds(s, sizeof s, mb_gap_per_step(g, here));
        snprintf(t, sizeof t, "%s here: %s", cats[i], s);
        titles[2 * i] = strdup(t);
        mb_fmt_seconds(s, sizeof s, mb_gap_per_step(g, there));
        snprintf(t, sizeof t, "%s there: %s (%s)", cats[i], s, i < g->n ? g->stages[i].target_why : "total");
        titles[2 * i + 1] = strdup(t);
    }
    const char *groups[] = { "here", g->target_label };
    char title[256];
    snprintf(title, sizeof title, "Per stage, here and projected onto %.160s", g->target_label);
    char axis[32];
    snprintf(axis, sizeof axis, "time per %s", per(g));
    mb_html_bars b = { .id = "projection",
                       .title = title,
                       .x_label = axis,
                       .seconds = true,
                       .n_cat = n,
                       .n_group = 2,
                       .cats = cats,
                       .groups = groups,
                       .hi = hi,
                       .titles = (const char *const *)titles,
                       .label_px = 220 };
    mb_html_bar_chart(o, &b);
    fprintf(o, "<p>%.2fx faster there.", mb_speedup(g->total, g->target_total));
    if (g->target_bottleneck >= 0) {
        fputs(" New bottleneck: <b>", o);
        mb_html_escape(o, g->stages[g->target_bottleneck].stage->name);
        fputs("</b>.", o);
    }
    fputs("</p>\n<p>Assumptions:</p>\n<ul>\n", o);
    for (int i = 0; i < g->n_assumptions; i++)
        p_text(o, "li", g->assumptions[i]);
    fputs("</ul>\n", o);
    for (int i = 0; i < 2 * n; i++)
        free(titles[i]);
    free(titles);
    free(cats);
    free(hi);
    return MB_OK;
}

/* Simplify runs (stage files version 2, docs/simplify.md): each stage at
 * three levels, the hardware ceiling, the part alone and the part in the
 * full loop, and the verdict, with the same strings the text table prints;
 * then one group of three bars per stage (time per step at each level). */
static void levels_row(FILE *o, const mb_gap *g, int i, const mb_gap_levels *L)
{
    const mb_gap_stage *st = &g->stages[i];
    char atc[32], alone[32], loop[32], ra[32] = "-", rl[32] = "-", ex[32];
    if (L->has_ceiling)
        mb_fmt_seconds(atc, sizeof atc, mb_gap_per_step(g, L->ceiling_seconds));
    else
        snprintf(atc, sizeof atc, "no ceiling");
    mb_fmt_seconds(alone, sizeof alone, mb_gap_per_step(g, L->isolated_seconds));
    mb_fmt_seconds(loop, sizeof loop, mb_gap_per_step(g, L->loop_seconds));
    mb_fmt_seconds(ex, sizeof ex, mb_gap_per_step(g, st->exposed));
    if (L->isolated_rate > 0) {
        mb_fmt_rate(ra, sizeof ra, L->isolated_rate, st->stage->work_unit);
        mb_fmt_rate(rl, sizeof rl, L->loop_rate, st->stage->work_unit);
    }
    fputs("<tr>", o);
    td(o, st->stage->name, false);
    td(o, atc, true);
    td(o, alone, true);
    td(o, loop, true);
    td(o, ra, true);
    td(o, rl, true);
    td(o, ex, true);
    fprintf(o, "<td class=\"verdict\" data-verdict=\"%d\">", (int)L->verdict);
    mb_html_escape(o, L->verdict_text);
    fputs("</td></tr>\n", o);
}

static int gap_levels(FILE *o, const mb_gap *g, mb_err *err)
{
    if (!mb_gap_has_levels(g))
        return MB_OK;
    int n = 0;
    for (int i = 0; i < g->n; i++)
        n += mb_gap_stage_levels(g, i, MB_LEVELS_TOLERANCE).has_levels;
    const char **cats = calloc((size_t)n, sizeof *cats);
    double *hi = calloc((size_t)n * 3, sizeof *hi);
    char **titles = calloc((size_t)n * 3, sizeof *titles);
    int rc = MB_OK;
    if (cats == NULL || hi == NULL || titles == NULL) {
        rc = mb_errf(err, MB_ESYS, "out of memory");
        goto fail;
    }
    fputs("<h2>Three levels per stage (simplify)</h2>\n"
          "<p>Hardware ceiling, the part alone (the rest of the loop stubbed out), the part in the full loop; "
          "see docs/simplify.md.</p>\n<table class=\"levels\"><tr><th>stage</th><th>at ceiling</th><th>alone</th>"
          "<th>in loop</th><th>rate alone</th><th>rate in loop</th><th>exposed</th><th>verdict</th></tr>\n",
          o);
    int k = 0;
    for (int i = 0; i < g->n; i++) {
        mb_gap_levels L = mb_gap_stage_levels(g, i, MB_LEVELS_TOLERANCE);
        if (!L.has_levels)
            continue;
        levels_row(o, g, i, &L);
        /* In the loop, the bar is what the step waits for: a loader with
         * workers takes the whole step beside it (its row's "in loop") and
         * costs the step only its exposed wait; drawn at the whole step, a
         * minGPT loader of 1.5 ms alone read as 767 ms in the loop. */
        const double secs[3] = { L.has_ceiling ? L.ceiling_seconds : NAN, L.isolated_seconds,
                                 g->stages[i].exposed };
        static const char *const what[3] = { "at its ceiling", "alone", "in the full loop, waited for" };
        cats[k] = g->stages[i].stage->name;
        for (int j = 0; j < 3; j++) {
            char t[256], s[32];
            hi[3 * k + j] = mb_gap_per_step(g, secs[j]); /* NAN: no bar, no ceiling */
            mb_fmt_seconds(s, sizeof s, mb_gap_per_step(g, secs[j]));
            snprintf(t, sizeof t, "%s %s: %s per %s (%s)", cats[k], what[j], s, per(g), L.verdict_text);
            if ((titles[3 * k + j] = strdup(t)) == NULL) {
                rc = mb_errf(err, MB_ESYS, "out of memory");
                goto fail;
            }
        }
        k++;
    }
    char legend[640];
    mb_gap_levels_legend(legend, sizeof legend);
    fputs("</table>\n<p>", o);
    mb_html_escape(o, legend);
    fputs("</p>\n", o);
    for (int i = 0; i < g->n; i++) {
        mb_gap_levels L = mb_gap_stage_levels(g, i, MB_LEVELS_TOLERANCE);
        char note[512];
        if (mb_gap_levels_work_note(g, i, &L, note, sizeof note)) {
            fputs("<p>", o);
            mb_html_escape(o, note);
            fputs("</p>\n", o);
        }
    }
    static const char *const groups[3] = { "hardware ceiling", "alone", "in the full loop (what the step waits for)" };
    char title[96];
    snprintf(title, sizeof title, "Each stage at three levels: time per %s", per(g));
    char axis[32];
    snprintf(axis, sizeof axis, "time per %s", per(g));
    mb_html_bars bars = { .id = "levels", .title = title, .x_label = axis, .seconds = true, .n_cat = n,
                          .n_group = 3, .cats = cats, .groups = groups, .hi = hi,
                          .titles = (const char *const *)titles, .label_px = 220 };
    mb_html_bar_chart(o, &bars);
fail:
    for (int j = 0; titles && j < 3 * n; j++)
        free(titles[j]);
    free(titles);
    free(cats);
    free(hi);
    return rc;
}

int mb_gap_html(FILE *o, const mb_gap *g, const mb_diagnosis *d, mb_err *err)
{
    mb_html_begin(o, "mlbench gap");
    gap_header(o, g);
    int rc = gap_headline(o, g, d, err);
    if (rc == MB_OK)
        rc = gap_stacked(o, g, err);
    if (rc == MB_OK) {
        fputs("<h2>Stages against their ceilings</h2>\n", o);
        gap_table(o, g);
        rc = gap_levels(o, g, err);
    }
    if (rc == MB_OK)
        gap_waterfall(o, g);
    if (rc == MB_OK)
        gap_diagnosis(o, d);
    if (rc == MB_OK)
        rc = gap_projection(o, g, err);
    if (rc == MB_OK && g->machines) /* the machines ranked (project_rank.c) */
        mb_rank_html(o, g->machines);
    if (rc == MB_OK && (g->n_notes || g->run->n_warnings)) {
        fputs("<h2>Warnings</h2>\n<ul>\n", o);
        for (int i = 0; i < g->n_notes; i++)
            p_text(o, "li", g->notes[i]);
        for (int i = 0; i < g->run->n_warnings; i++)
            p_text(o, "li", g->run->warnings[i]);
        fputs("</ul>\n", o);
    }
    mb_html_end(o);
    return rc;
}
