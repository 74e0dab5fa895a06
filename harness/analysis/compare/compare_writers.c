/* compare_writers.c: compare as table, JSON or Markdown.
 *
 * The table and Markdown views share one table printer (report/table.h):
 * cells are formatted once, then printed aligned (table) or with pipes (md). */
#include "compare_writers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "table.h"
#include "text.h"
#include "writer_helpers.h"

/* ---- compare ---------------------------------------------------------------------------- */

/* The symbol of a work unit: FLOP, B, else the unit itself (op, launch). */
static const char *work_symbol(const char *work_unit)
{
    if (work_unit == NULL || work_unit[0] == '\0')
        return "op";
    if (strcmp(work_unit, "flop") == 0)
        return "FLOP";
    if (strcmp(work_unit, "byte") == 0)
        return "B";
    return work_unit;
}



void mb_compare_fmt_rate(char *buf, size_t len, double rate_abs, const char *work_unit, bool latency_first)
{
    if (!(rate_abs > 0) || !isfinite(rate_abs)) {
        snprintf(buf, len, "-");
    } else if (latency_first) {
        char t[32];
        mb_fmt_seconds(t, sizeof t, 1.0 / rate_abs);
        snprintf(buf, len, "%s/%s", t, work_symbol(work_unit));
    } else {
        char u[32];
        snprintf(u, sizeof u, "%s/s", work_symbol(work_unit));
        mb_fmt_si(buf, len, rate_abs, u);
    }
}

void mb_compare_fmt_per_usd(char *buf, size_t len, double per_usd_abs, const char *work_unit)
{
    char u[32];
    snprintf(u, sizeof u, "%s/$", work_symbol(work_unit));
    if (per_usd_abs > 0)
        mb_fmt_si(buf, len, per_usd_abs, u);
    else
        snprintf(buf, len, "-");
}

/* What machine i's results say of the case, one word for every view (the
 * JSON's status too): a datasheet figure is said apart (rate_from). */
static const char *run_state(const mb_compare *c, const mb_compare_row *r, int i)
{
    if (r->idx[i] < 0)
        return "absent";
    const mb_case_ref *cr = &c->m[i].cases[r->idx[i]];
    if (cr->usable)
        return "ok";
    if (r->not_runnable[i])
        return "not runnable here";
    return strcmp(cr->status, "ok") != 0 ? cr->status : "not verified";
}

const char *mb_compare_state(const mb_compare *c, const mb_compare_row *r, int i)
{
    return r->from_sheet[i] ? "datasheet" : run_state(c, r, i);
}

void mb_compare_fmt_what(char *buf, size_t len, const char *component, const char *device)
{
    snprintf(buf, len, "%s (%s)", component, mb_compare_device_name(device));
}

/* Machine i is priced and a GPU machine: its price pays for its GPUs too. */
static bool priced_gpu_machine(const mb_compare *c, int i)
{
    return c->price[i] > 0 && mb_compare_has_gpu(c, i);
}

void mb_compare_usd_note(char *buf, size_t len, const mb_compare *c, const char *device)
{
    if (strcmp(device, "gpu") == 0) {
        snprintf(buf, len, "GPU rows divide the GPUs' work by the whole machine's price (its host CPU, memory and "
                           "disk included).");
        return;
    }
    /* "B", "A and B", "A, B and D" */
    int n = 0, left = 0;
    for (int i = 0; i < c->n_m; i++)
        left += priced_gpu_machine(c, i);
    char who[128] = "";
    for (int i = 0; i < c->n_m; i++)
        if (priced_gpu_machine(c, i)) {
            size_t at = strlen(who);
            snprintf(who + at, sizeof who - at, "%s%c", n == 0 ? "" : n + 1 == left ? " and " : ", ", 'A' + i);
            n++;
        }
    int at = snprintf(buf, len, "Host CPU rows divide the host CPU's work by the whole machine's price");
    if (at < 0 || (size_t)at >= len)
        return;
    if (n == 0)
        snprintf(buf + at, len - (size_t)at, ".");
    else
        snprintf(buf + at, len - (size_t)at,
                 "; %s %s, whose %s for %s GPUs too: %s host CPU work per $ charges the host CPU for the GPUs.", who,
                 n > 1 ? "are GPU machines" : "is a GPU machine", n > 1 ? "prices pay" : "price pays",
                 n > 1 ? "their" : "its", n > 1 ? "their" : "its");
}

bool mb_compare_usd_shown(const mb_compare *c, const char *device)
{
    for (int b = 0; b < c->n_best; b++)
        for (int i = 0; i < c->n_m; i++)
            if (!strcmp(c->best[b].device, device) && c->best[b].per_usd_abs[i] > 0)
                return true;
    return false;
}

/* A row's rate on machine i: the ceiling the results file gives, scaled; else its state. */
void mb_compare_fmt_cell(char *buf, size_t len, const mb_compare *c, const mb_compare_row *r, int i)
{
    if (r->from_sheet[i] && r->rate[i] > 0) {
        const mb_case_ref *any = NULL;
        for (int k = 0; k < c->n_m && any == NULL; k++)
            if (r->idx[k] >= 0)
                any = &c->m[k].cases[r->idx[k]];
        char v[48];
        mb_compare_fmt_rate(v, sizeof v, any ? r->rate[i] * any->rate_scale : -1,
                            any ? mb_compare_work_unit(any) : NULL,
                            r->latency_first);
        snprintf(buf, len, "%s (datasheet)", v);
        return;
    }
    if (r->not_runnable[i] && r->rate[i] < 0) {
        snprintf(buf, len, "%s (%s)", mb_compare_state(c, r, i), r->not_runnable[i]);
        return;
    }
    if (r->idx[i] < 0 || r->rate[i] < 0) {
        snprintf(buf, len, "%s", mb_compare_state(c, r, i));
        return;
    }
    const mb_case_ref *cr = &c->m[i].cases[r->idx[i]];
    char v[64];
    mb_compare_fmt_rate(v, sizeof v, cr->rate_abs, mb_compare_work_unit(cr), r->latency_first);
    /* the state every other view gives the case: its ceiling is not reliable */
    snprintf(buf, len, "%s%s", v, cr->noisy ? " noisy" : "");
}

/* Machine i's best case of a kind: "52.3 TFLOP/s cublaslt", or "-". */
void mb_compare_fmt_best(char *buf, size_t len, const mb_compare *c, const mb_compare_best *b, int i)
{
    if (b->row[i] < 0) {
        snprintf(buf, len, "-");
        return;
    }
    const mb_case_ref *cr = &c->m[i].cases[c->rows[b->row[i]].idx[i]];
    char v[48];
    mb_compare_fmt_rate(v, sizeof v, b->rate_abs[i], b->work_unit, b->latency_first);
    snprintf(buf, len, "%s %s%s", v, cr->backend ? cr->backend : "", cr->noisy ? " noisy" : "");
}

/* "0.91x (2 of 11)": a geometric mean and its coverage. */
static void fmt_geo(char *buf, size_t len, double geomean, int n, int total)
{
    char r[32];
    mb_fmt_ratio(r, sizeof r, geomean);
    if (geomean > 0)
        snprintf(buf, len, "%s (%d of %d)", r, n, total);
    else
        snprintf(buf, len, "- (0 of %d)", total);
}

static bool compare_priced(const mb_compare *c)
{
    for (int i = 0; i < c->n_m; i++)
        if (c->price[i] > 0)
            return true;
    return false;
}

/* A section's title: capitalized as a Markdown heading, in lower case in a
 * terminal. */
static void section(FILE *o, bool md, const char *title)
{
    if (md)
        fprintf(o, "\n## %s\n\n", title);
    else
        fprintf(o, "\n%c%s\n", title[0] >= 'A' && title[0] <= 'Z' ? title[0] - 'A' + 'a' : title[0], title + 1);
}

/* A section's title and the paragraph that says what it shows: worded for
 * the page in Markdown, shorter and indented in a terminal. */
static void section_lead(FILE *o, bool md, const char *title, const char *md_lead, const char *text_lead)
{
    section(o, md, title);
    fputs(md ? md_lead : text_lead, o);
}

/* A column head for machine i: the letter alone in a terminal (the labels
 * are listed above the tables, and a GPU model per column would push rows
 * past 120 columns), the letter and label in Markdown. */
static void machine_head(char *buf, size_t len, const mb_compare *c, int i, bool md)
{
    if (md)
        snprintf(buf, len, "%c %s", 'A' + i, c->label[i]);
    else
        snprintf(buf, len, "%c", 'A' + i);
}

enum { CTX_CELL_MAX = 32 }; /* context values wider than this are cut in a terminal */
enum { CELL = 96 };

/* A column per machine and, after each but A's, its ratio to A: the heads
 * of compare's tables ("B/A", or "B/A per $" with ratio_suffix " per $"). */
static void machine_columns(mb_table *t, const mb_compare *c, bool md, const char *ratio_suffix,
                            char heads[][64])
{
    for (int i = 0; i < c->n_m && t->ncol < MB_TABLE_MAX_COLS; i++) {
        machine_head(heads[t->ncol], 64, c, i, md);
        mb_table_add_col(t, heads[t->ncol], 'r');
        if (i > 0 && t->ncol < MB_TABLE_MAX_COLS) {
            snprintf(heads[t->ncol], 64, "%c/A%s", 'A' + i, ratio_suffix);
            mb_table_add_col(t, heads[t->ncol], 'r');
        }
    }
}

/* A row's cells under machine_columns: machine i's figure, already in
 * cells[*col], then (but for A) its ratio to A. */
static void machine_cells(const mb_table *t, char cells[][CELL], const char **p, int *col, int i, double ratio)
{
    p[*col] = cells[*col];
    (*col)++;
    if (i > 0 && *col < t->ncol) {
        mb_fmt_ratio(cells[*col], CELL, ratio);
        p[*col] = cells[*col];
        (*col)++;
    }
}

static void compare_machines_text(FILE *o, const mb_compare *c, bool md)
{
    fprintf(o, md ? "# mlbench compare\n\n" : "mlbench compare\n");
    /* the file on a line of its own: a label, a path and a price do not fit 120 columns together */
    for (int i = 0; i < c->n_m; i++) {
        fprintf(o, md ? "- %c: **%s**" : "  %c: %s", 'A' + i, c->label[i]);
        if (c->price[i] > 0)
            fprintf(o, ", %.4g USD/hour", c->price[i]);
        fprintf(o, md ? ", `%s` (started %s)\n" : "\n     %s (started %s)\n", c->m[i].path,
                c->m[i].started_utc ? c->m[i].started_utc : "?");
    }
    fputs(md ? "\nRatios are to A: above 1x is faster than A (a higher rate; for latencies, a shorter time).\n"
             : "  ratios are to A: above 1x is faster than A (a higher rate; for latencies, a shorter time)\n",
          o);
}

/* What a best-per-kind table shows of each machine's best case. */
typedef enum best_view {
    BEST_WITH_BACKEND, /* its rate and backend */
    BEST_RATE,         /* its rate alone (a terminal too narrow for the backends) */
    BEST_PER_USD,      /* the work a dollar buys */
} best_view;

/* A kind is a row when some machine has a figure for it. */
static bool best_shown(const mb_compare *c, const mb_compare_best *k, best_view v)
{
    for (int i = 0; i < c->n_m; i++)
        if (v == BEST_PER_USD ? k->per_usd_abs[i] > 0 : k->row[i] >= 0)
            return true;
    return false;
}

/* Machine i's figure of kind k into buf; its ratio to A returned. */
static double best_cell(char *buf, const mb_compare *c, const mb_compare_best *k, int i, best_view v)
{
    if (v == BEST_WITH_BACKEND)
        mb_compare_fmt_best(buf, CELL, c, k, i);
    else if (v == BEST_RATE)
        mb_compare_fmt_rate(buf, CELL, k->rate_abs[i], k->work_unit, k->latency_first);
    else
        mb_compare_fmt_per_usd(buf, CELL, k->per_usd_abs[i], k->work_unit);
    if (v != BEST_PER_USD)
        return k->ratio[i];
    bool both = k->per_usd_abs[i] > 0 && k->per_usd_abs[0] > 0;
    return both ? k->per_usd_abs[i] / k->per_usd_abs[0] : -1;
}

/* Best per kind: what each machine does at its best, kind by kind. */
static void best_table(mb_table *t, const mb_compare *c, bool md, best_view v, char heads[][64])
{
    mb_table_init(t, "ll", "component", "kind");
    machine_columns(t, c, md, v == BEST_PER_USD ? " per $" : "", heads);
    for (int b = 0; b < c->n_best; b++) {
        const mb_compare_best *k = &c->best[b];
        if (!best_shown(c, k, v))
            continue;
        char cells[MB_TABLE_MAX_COLS][CELL];
        mb_compare_fmt_what(cells[0], CELL, k->component, k->device);
        const char *p[MB_TABLE_MAX_COLS] = { cells[0], k->kind[0] ? k->kind : "(all)" };
        int col = 2;
        for (int i = 0; i < c->n_m && col < t->ncol; i++) {
            double ratio = best_cell(cells[col], c, k, i, v);
            machine_cells(t, cells, p, &col, i, ratio);
        }
        mb_table_row(t, p);
    }
}

static void compare_best_text(FILE *o, const mb_compare *c, bool md)
{
    section(o, md, "Best verified case per component and kind");
    mb_table t;
    char heads[MB_TABLE_MAX_COLS][64];
    /* with the backends when the table still fits a terminal */
    best_table(&t, c, md, BEST_WITH_BACKEND, heads);
    bool backends = md || mb_table_text_width(indented(&t)) <= TEXT_COLS;
    if (!backends) {
        mb_table_free(&t);
        best_table(&t, c, md, BEST_RATE, heads);
    }
    fputs(md ? "Each machine's fastest case that ran and passed verification, with its backend: what a buyer "
               "compares.\n\n"
          : backends ? "  each machine's fastest case that ran and passed verification, with its backend\n"
                     : "  each machine's fastest case that ran and passed verification (its backend: --format md)\n",
          o);
    fputs(md ? "A figure marked *noisy* is a case whose repetitions (or burst, sustained and median) disagree beyond its "
               "own noise, as `mlbench report` marks it: not a reliable ceiling.\n\n"
             : "  noisy = the case's repetitions disagree (as `mlbench report` marks it): not a reliable ceiling\n",
          o);
    mb_table_print(o, indented(&t), md);
    mb_table_free(&t);
}

/* Geometric means as rows of component x view, a column per machine: stays
 * narrow however many machines are compared. */
static void geomean_table(FILE *o, const mb_compare *c, bool md, bool usd)
{
    mb_table t;
    mb_table_init(&t, "ll", "component", "view");
    char heads[MB_TABLE_MAX_COLS][64];
    for (int i = 1; i < c->n_m && t.ncol < MB_TABLE_MAX_COLS; i++) {
        snprintf(heads[t.ncol], sizeof heads[t.ncol], usd ? "%c/A per $" : "%c/A", 'A' + i);
        mb_table_add_col(&t, heads[t.ncol], 'r');
    }
    for (int g = 0; g < c->n_geo; g++) {
        const mb_compare_geo *geo = &c->geo[g];
        if (geo->n_total == 0 && geo->best_total == 0)
            continue;
        for (int view = 0; view < 2; view++) {
            char cells[MB_TABLE_MAX_COLS][CELL];
            mb_compare_fmt_what(cells[0], CELL, geo->component, geo->device);
            const char *p[MB_TABLE_MAX_COLS] = { view == 0 || md ? cells[0] : "",
                                            view == 0 ? "best per kind" : "like-for-like" };
            for (int i = 1, col = 2; i < c->n_m && col < t.ncol; i++, col++) {
                double x = view == 0 ? (usd ? geo->best_geomean_usd[i] : geo->best_geomean[i])
                                     : (usd ? geo->geomean_usd[i] : geo->geomean[i]);
                fmt_geo(cells[col], CELL, x, x > 0 ? (view == 0 ? geo->best_n[i] : geo->n[i]) : 0,
                        view == 0 ? geo->best_total : geo->n_total);
                p[col] = cells[col];
            }
            mb_table_row(&t, p);
        }
    }
    mb_table_print(o, indented(&t), md);
    mb_table_free(&t);
}

static void compare_geomeans_text(FILE *o, const mb_compare *c, bool md)
{
    section_lead(o, md, "Geometric means of the ratios to A per component and device",
                 "Per component and the device its cases run on: the *host CPU* (of a GPU machine too) or a *GPU*. "
                 "*Best per kind*: over the kinds where both machines have a best case (the table above). "
                 "*Like-for-like*: over the cases both ran and verified. (n of m): kinds or cases in the mean, of "
                 "those that ran on some machine.\n\n",
                 "  per component and the device its cases run on: the host CPU (of a GPU machine too) or a GPU\n"
                 "  best per kind: over the kinds both have (table above); like-for-like: over the cases both ran\n"
                 "  and verified; (n of m): kinds or cases in the mean, of those that ran on some machine\n");
    geomean_table(o, c, md, false);
}

/* What work per dollar divides, a line per device kind shown: the whole
 * machine's price, whatever device did the work. */
static void usd_notes(FILE *o, const mb_compare *c, bool md)
{
    for (int d = 0; d < MB_COMPARE_DEVICES; d++) {
        if (!mb_compare_usd_shown(c, mb_compare_devices[d]))
            continue;
        char note[512];
        mb_compare_usd_note(note, sizeof note, c, mb_compare_devices[d]);
        put_item(o, md, md ? "- " : "  ", note);
    }
    if (md)
        fputc('\n', o);
}

static void compare_per_dollar_text(FILE *o, const mb_compare *c, bool md)
{
    section_lead(o, md, "Work per dollar",
                 "Rate x 3600 / (USD per hour of the whole machine): the work an hour buys, per dollar, of the best "
                 "case per kind.\n\n",
                 "  rate x 3600 / (USD per hour of the whole machine): the work one dollar buys, best case per kind\n");
    usd_notes(o, c, md);
    mb_table t;
    char heads[MB_TABLE_MAX_COLS][64];
    best_table(&t, c, md, BEST_PER_USD, heads);
    mb_table_print(o, indented(&t), md);
    mb_table_free(&t);

    fputs(md ? "\nGeometric means of the per-dollar ratios to A, each divided as its device's note above says:\n\n"
             : "\n  geometric means of the per-dollar ratios to A, each divided as its device's note above says\n",
          o);
    geomean_table(o, c, md, true);
}

/* Like-for-like: the cases that ran and passed verification on every machine. */
static void compare_common_text(FILE *o, const mb_compare *c, bool md)
{
    section_lead(o, md, "Cases on every machine", "The cases that ran and passed verification on every machine.\n\n",
                 "  the cases that ran and passed verification on every machine\n");
    mb_table t;
    mb_table_init(&t, "l", "case");
    /* a long case label wraps within its column: the table keeps to 120 columns */
    t.fit_col = 0;
    t.fit_min = 30;
    char heads[MB_TABLE_MAX_COLS][64];
    machine_columns(&t, c, md, "", heads);
    int n = 0;
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        if (!row->everywhere)
            continue;
        char cells[MB_TABLE_MAX_COLS][CELL];
        const char *p[MB_TABLE_MAX_COLS] = { row->label };
        int col = 1;
        for (int i = 0; i < c->n_m && col < t.ncol; i++) {
            mb_compare_fmt_cell(cells[col], CELL, c, row, i);
            machine_cells(&t, cells, p, &col, i, row->ratio[i]);
        }
        mb_table_row(&t, p);
        n++;
    }
    if (n)
        mb_table_print(o, indented(&t), md);
    else
        fputs(md ? "None.\n" : "  none\n", o);
    mb_table_free(&t);
}

static void compare_partial_text(FILE *o, const mb_compare *c, bool md)
{
    section(o, md, "Cases not on every machine");
    int n = 0;
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        if (row->everywhere)
            continue;
        char states[2048];
        size_t at = 0;
        for (int i = 0; i < c->n_m && at < sizeof states; i++) {
            char cell[512];
            mb_compare_fmt_cell(cell, sizeof cell, c, row, i);
            at += (size_t)snprintf(states + at, sizeof states - at, "%s%c %s", i ? ", " : "", 'A' + i, cell);
        }
        /* a long case label puts the states on a line of their own, wrapped
         * (a reason a case cannot run is long): 120 columns */
        bool wrap = !md && 2 + width(row->label) + 2 + width(states) > TEXT_COLS;
        if (wrap) {
            fprintf(o, "  %s:\n      ", row->label);
            put_wrapped(o, 6, 6, states);
        } else {
            fprintf(o, md ? "- `%s`: %s\n" : "  %s: %s\n", row->label, states);
        }
        n++;
    }
    if (n == 0)
        fprintf(o, md ? "None.\n" : "  none\n");
}

static void compare_context_text(FILE *o, const mb_compare *c, bool md)
{
    section(o, md, "Context differences");
    if (c->n_ctx == 0) {
        fprintf(o, md ? "None of the compared entries differ.\n" : "  none of the compared entries differ\n");
        return;
    }
    mb_table x;
    mb_table_init(&x, "l", "entry");
    char xh[MB_TABLE_MAX_COLS][64];
    for (int i = 0; i < c->n_m && x.ncol < MB_TABLE_MAX_COLS; i++) {
        machine_head(xh[i], sizeof xh[i], c, i, md);
        mb_table_add_col(&x, xh[i], 'l');
    }
    /* a terminal row stays within 120 columns: the values share what the keys leave */
    int key_w = 5;
    for (int k = 0; k < c->n_ctx; k++)
        key_w = width(c->ctx[k].key) > key_w ? width(c->ctx[k].key) : key_w;
    int cell_max = (TEXT_COLS - 2 - key_w - 2 * (x.ncol - 1)) / (x.ncol - 1 > 0 ? x.ncol - 1 : 1);
    cell_max = cell_max > CTX_CELL_MAX ? CTX_CELL_MAX : cell_max < 8 ? 8 : cell_max;
    for (int k = 0; k < c->n_ctx; k++) {
        const char *p[MB_TABLE_MAX_COLS];
        char cut[MB_TABLE_MAX_COLS][CTX_CELL_MAX + 4];
        p[0] = c->ctx[k].key;
        for (int i = 0; i < c->n_m && i + 1 < x.ncol; i++) {
            p[i + 1] = c->ctx[k].value[i][0] ? c->ctx[k].value[i] : "(none)";
            /* Markdown and JSON keep the whole value */
            if (!md && width(p[i + 1]) > cell_max) {
                snprintf(cut[i + 1], sizeof cut[i + 1], "%.*s...", cell_max - 3, p[i + 1]);
                p[i + 1] = cut[i + 1];
            }
        }
        mb_table_row(&x, p);
    }
    mb_table_print(o, indented(&x), md);
    mb_table_free(&x);
}

static void compare_text(FILE *o, const mb_compare *c, bool md)
{
    compare_machines_text(o, c, md);
    compare_best_text(o, c, md);
    compare_geomeans_text(o, c, md);
    if (compare_priced(c))
        compare_per_dollar_text(o, c, md);
    compare_common_text(o, c, md);
    compare_partial_text(o, c, md);
    compare_context_text(o, c, md);
}

static cJSON *nums_json(const double *v, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, v[i] >= 0 && isfinite(v[i]) ? cJSON_CreateNumber(v[i]) : cJSON_CreateNull());
    return a;
}

cJSON *mb_compare_to_json(const mb_compare *c)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", "mlbench-compare");
    /* 2: geomean is a list per component and device, cases and best say their device */
    cJSON_AddNumberToObject(doc, "version", 2);
    cJSON *ms = cJSON_AddArrayToObject(doc, "machines");
    for (int i = 0; i < c->n_m; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "label", c->label[i]);
        cJSON_AddStringToObject(o, "path", c->m[i].path);
        add_str_or_null(o, "started_utc", c->m[i].started_utc);
        add_num_or_null(o, "usd_per_hour", c->price[i], c->price[i] > 0);
        cJSON_AddItemToArray(ms, o);
    }
    cJSON *cases = cJSON_AddArrayToObject(doc, "cases");
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "id", row->id);
        cJSON_AddStringToObject(o, "component", row->component);
        cJSON_AddStringToObject(o, "device", row->device);
        add_str_or_null(o, "rate_unit", row->rate_unit);
        cJSON *st = cJSON_AddArrayToObject(o, "status");
        cJSON *why = cJSON_AddArrayToObject(o, "not_runnable");
        for (int i = 0; i < c->n_m; i++) {
            cJSON_AddItemToArray(st, cJSON_CreateString(run_state(c, row, i)));
            cJSON_AddItemToArray(why, row->not_runnable[i] ? cJSON_CreateString(row->not_runnable[i])
                                                           : cJSON_CreateNull());
        }
        cJSON_AddItemToObject(o, "rate", nums_json(row->rate, c->n_m));
        cJSON *noisy = cJSON_AddArrayToObject(o, "noisy");
        for (int i = 0; i < c->n_m; i++)
            cJSON_AddItemToArray(noisy, cJSON_CreateBool(row->idx[i] >= 0 && c->m[i].cases[row->idx[i]].noisy));
        cJSON *from = cJSON_AddArrayToObject(o, "rate_from");
        for (int i = 0; i < c->n_m; i++)
            cJSON_AddItemToArray(from, row->from_sheet[i] ? cJSON_CreateString("datasheet")
                                       : row->rate[i] >= 0 ? cJSON_CreateString("measured")
                                                           : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "ratio", nums_json(row->ratio, c->n_m));
        cJSON_AddItemToObject(o, "per_usd", nums_json(row->per_usd, c->n_m));
        if (row->rate_unit && strlen(row->rate_unit) > 2 && !strcmp(row->rate_unit + strlen(row->rate_unit) - 2, "/s")) {
            char u[48];
            snprintf(u, sizeof u, "%.*s/$", (int)strlen(row->rate_unit) - 2, row->rate_unit);
            cJSON_AddStringToObject(o, "per_usd_unit", u);
        }
        cJSON_AddBoolToObject(o, "on_every_machine", row->everywhere);
        cJSON_AddItemToArray(cases, o);
    }
    cJSON *best = cJSON_AddArrayToObject(doc, "best");
    for (int b = 0; b < c->n_best; b++) {
        const mb_compare_best *k = &c->best[b];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "component", k->component);
        cJSON_AddStringToObject(o, "device", k->device);
        cJSON_AddStringToObject(o, "kind", k->kind);
        cJSON_AddStringToObject(o, "work_unit", k->work_unit);
        cJSON *ids = cJSON_AddArrayToObject(o, "case");
        for (int i = 0; i < c->n_m; i++)
            cJSON_AddItemToArray(ids, k->row[i] >= 0 ? cJSON_CreateString(c->rows[k->row[i]].id) : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "rate_per_s", nums_json(k->rate_abs, c->n_m));
        cJSON *noisy = cJSON_AddArrayToObject(o, "noisy");
        for (int i = 0; i < c->n_m; i++)
            cJSON_AddItemToArray(noisy, cJSON_CreateBool(k->row[i] >= 0 &&
                                                         c->m[i].cases[c->rows[k->row[i]].idx[i]].noisy));
        cJSON_AddItemToObject(o, "ratio", nums_json(k->ratio, c->n_m));
        cJSON_AddItemToObject(o, "per_usd", nums_json(k->per_usd_abs, c->n_m));
        cJSON_AddItemToArray(best, o);
    }
    cJSON *geo = cJSON_AddArrayToObject(doc, "geomean");
    for (int k = 0; k < c->n_geo; k++) {
        const mb_compare_geo *g = &c->geo[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddItemToArray(geo, o);
        cJSON_AddStringToObject(o, "component", g->component);
        cJSON_AddStringToObject(o, "device", g->device);
        /* like-for-like: the cases both ran and verified */
        cJSON_AddItemToObject(o, "ratio", nums_json(g->geomean, c->n_m));
        cJSON_AddItemToObject(o, "per_usd_ratio", nums_json(g->geomean_usd, c->n_m));
        cJSON *n = cJSON_AddArrayToObject(o, "cases");
        for (int i = 0; i < c->n_m; i++)
            cJSON_AddItemToArray(n, cJSON_CreateNumber(g->n[i]));
        cJSON_AddNumberToObject(o, "cases_total", g->n_total);
        cJSON *b = cJSON_AddObjectToObject(o, "best_per_kind");
        cJSON_AddItemToObject(b, "ratio", nums_json(g->best_geomean, c->n_m));
        cJSON_AddItemToObject(b, "per_usd_ratio", nums_json(g->best_geomean_usd, c->n_m));
        cJSON *bn = cJSON_AddArrayToObject(b, "kinds");
        for (int i = 0; i < c->n_m; i++)
            cJSON_AddItemToArray(bn, cJSON_CreateNumber(g->best_n[i]));
        cJSON_AddNumberToObject(b, "kinds_total", g->best_total);
    }
    /* what per_usd divides, per device kind with a figure: the text's and the page's notes */
    cJSON *notes = cJSON_AddObjectToObject(doc, "per_usd_notes");
    for (int d = 0; d < MB_COMPARE_DEVICES; d++)
        if (mb_compare_usd_shown(c, mb_compare_devices[d])) {
            char note[512];
            mb_compare_usd_note(note, sizeof note, c, mb_compare_devices[d]);
            cJSON_AddStringToObject(notes, mb_compare_devices[d], note);
        }
    cJSON *ctx = cJSON_AddObjectToObject(doc, "context_differences");
    for (int k = 0; k < c->n_ctx; k++)
        cJSON_AddItemToObject(ctx, c->ctx[k].key, strings_json(c->ctx[k].value, c->n_m));
    return doc;
}

int mb_compare_write(FILE *out, const mb_compare *c, const char *format, mb_err *err)
{
    if (strcmp(format, "json") == 0)
        return write_json(out, mb_compare_to_json(c), err);
    if (strcmp(format, "table") == 0 || strcmp(format, "md") == 0) {
        compare_text(out, c, strcmp(format, "md") == 0);
        return MB_OK;
    }
    return mb_errf(err, MB_EUSAGE, "--format %s: expected table, json or md", format);
}
