/* results_writers.c: results documents as a terminal table, JSON, CSV,
 * Markdown or Google Benchmark's JSON (results_writers.h). */
#include "results_writers.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "file_write.h"
#include "formulas.h"
#include "results.h"
#include "vocabulary.h"
#include "table.h"
#include "text.h"

int mb_format_valid(const char *f)
{
    return f && (strcmp(f, "table") == 0 || strcmp(f, "json") == 0 || strcmp(f, "csv") == 0 ||
                 strcmp(f, "md") == 0);
}

void mb_humanize_value(const char *in, char *out, size_t len)
{
    char *end;
    long long v = strtoll(in, &end, 10);
    static const char suffix[] = { 't', 'g', 'm', 'k' };
    static const long long unit[] = { 1LL << 40, 1LL << 30, 1LL << 20, 1LL << 10 };
    if (*in && *end == '\0' && v > 0) {
        for (int i = 0; i < 4; i++) {
            if (v >= unit[i] && v % unit[i] == 0) {
                snprintf(out, len, "%lld%c", v / unit[i], suffix[i]);
                return;
            }
        }
    }
    snprintf(out, len, "%s", in);
}

static const char *str_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num_of(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static double nested(const cJSON *o, const char *a, const char *b)
{
    return num_of(cJSON_GetObjectItemCaseSensitive(o, a), b);
}

static bool in_list(const cJSON *list, const char *name)
{
    const cJSON *x;
    cJSON_ArrayForEach(x, list)
    {
        if (cJSON_IsString(x) && strcmp(x->valuestring, name) == 0)
            return true;
    }
    return false;
}

/* " name=value" (humanised) after what buf holds, within len. */
static size_t label_append(char *buf, size_t len, size_t off, const char *name, const char *value)
{
    if (off >= len)
        return off;
    char h[64];
    mb_humanize_value(value, h, sizeof h);
    return off + (size_t)snprintf(buf + off, len - off, " %s=%s", name, h);
}

void mb_case_label(const cJSON *c, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "%s/%s", str_of(c, "component"), str_of(c, "backend"));
    const cJSON *set = cJSON_GetObjectItemCaseSensitive(c, "params_set");
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(c, "params"))
    {
        if (cJSON_IsString(p) && (!cJSON_IsArray(set) || in_list(set, p->string)))
            off = label_append(buf, len, off, p->string, p->valuestring);
    }
}

void mb_case_label_of(const mb_case *c, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "%s/%s", c->ops->component, c->ops->backend);
    for (int i = 0; i < mb_params_count(c->params); i++)
        if (mb_param_is_set(c->params, mb_params_name(c->params, i)))
            off = label_append(buf, len, off, mb_params_name(c->params, i), mb_params_value(c->params, i));
}


/* The terminal table fits this many columns: long case labels, the
 * secondary figures and the notes wrap onto lines of their own. */
enum { TEXT_WIDTH = MB_TEXT_COLS, TEXT_MIN_CASE = 30 };

/* A rate of case c in its rate unit, with its unit: "154.3 GFLOP/s", or
 * for latency-first cases the time per unit of work: "3.87 us/op". */
static void rate_text(const cJSON *c, double rate, char *buf, size_t len)
{
    if (!(isfinite(rate) && rate > 0)) {
        snprintf(buf, len, "-");
        return;
    }
    char a[48];
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "latency_first"))) {
        double scale = num_of(c, "rate_scale");
        mb_fmt_seconds(a, sizeof a, 1.0 / (rate * (scale > 0 ? scale : 1)));
        snprintf(buf, len, "%s/%s", a, str_of(c, "work_unit"));
    } else {
        mb_fmt_number(a, sizeof a, rate);
        /* int8 in OP/s also where a document was not read by mb_results_load */
        char u[32];
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "params"), "dtype");
        snprintf(buf, len, "%s %s", a,
                 mb_rate_unit_for_dtype(str_of(c, "rate_unit"), cJSON_IsString(d) ? d->valuestring : NULL, u,
                                        sizeof u));
    }
}

static void pct_text(char *buf, size_t len, double f)
{
    if (isfinite(f))
        snprintf(buf, len, "%.1f%%", 100 * f);
    else
        snprintf(buf, len, "-");
}

static size_t append(char *buf, size_t len, size_t off, const char *fmt, const char *a, const char *b)
{
    if (off >= len)
        return off;
    int w = snprintf(buf + off, len - off, fmt, a, b);
    return w > 0 ? off + (size_t)w : off;
}

/* A compute case's phase rate with its mean SM clock when NVML read one. */
static void phase_text(const cJSON *c, const char *phase, char *buf, size_t len)
{
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(c, phase);
    buf[0] = '\0';
    if (!cJSON_IsObject(p))
        return;
    rate_text(c, num_of(p, "rate"), buf, len);
    double mhz = nested(p, "sm_clock_mhz", "mean");
    size_t l = strlen(buf);
    if (isfinite(mhz) && mhz > 0 && l < len)
        snprintf(buf + l, len - l, " @%.0f MHz", mhz);
}

/* The secondary figures, each with its unit: "median …; best …; cv …;
 * burst …; sustained …; peak …". */
/* A disk case's IOPS and read latency percentiles (metrics iops,
 * latency_p50/p99/p99.9, in us), "" for a case without them: the figures
 * README's component table promises, in the table as in the JSON. */
static void latency_text(const cJSON *c, char *buf, size_t len)
{
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(c, "metrics");
    double iops = nested(m, "iops", "value");
    static const char *const keys[] = { "latency_p50", "latency_p99", "latency_p99.9" };
    size_t off = 0;
    buf[0] = '\0';
    if (isfinite(iops) && iops > 0) {
        char v[32];
        mb_fmt_number(v, sizeof v, iops);
        off = append(buf, len, off, "IOPS %s%s", v, "");
    }
    for (int i = 0; i < 3; i++) {
        double us = nested(m, keys[i], "value");
        if (!isfinite(us) || us < 0)
            continue;
        char t[32];
        mb_fmt_seconds(t, sizeof t, us * 1e-6);
        off = append(buf, len, off, off ? "; %s %s" : "%s %s", i == 0 ? "latency p50" : keys[i] + 8, t);
    }
}

static void secondary_text(const cJSON *c, char *buf, size_t len)
{
    const cJSON *rate = cJSON_GetObjectItemCaseSensitive(c, "rate");
    char v[96];
    size_t off = 0;
    buf[0] = '\0';
    if (cJSON_IsObject(rate)) {
        rate_text(c, num_of(rate, "median"), v, sizeof v);
        off = append(buf, len, off, "%s%s", "median ", v);
        rate_text(c, num_of(rate, "best"), v, sizeof v);
        off = append(buf, len, off, "%s%s", "; best ", v);
        pct_text(v, sizeof v, num_of(rate, "cv"));
        off = append(buf, len, off, "%s%s", "; cv ", v);
    }
    static const char *const phases[] = { "burst", "sustained" };
    for (int i = 0; i < 2; i++) {
        phase_text(c, phases[i], v, sizeof v);
        if (v[0])
            off = append(buf, len, off, off ? "; %s %s" : "%s %s", phases[i], v);
    }
    double peak = nested(c, "peak", "value");
    if (isfinite(peak) && peak > 0) {
        rate_text(c, peak, v, sizeof v);
        off = append(buf, len, off, off ? "; %s %s" : "%s %s", "peak", v);
    }
    char lat[160];
    latency_text(c, lat, sizeof lat);
    if (lat[0])
        off = append(buf, len, off, off ? "; %s%s" : "%s%s", lat, "");
}

typedef struct text_row {
    const cJSON *c;
    mb_ceiling ceiling;
    char state[16], label[256], value[64], from[16], eff[16];
    int cases; /* > 1: this many skipped cases of one backend, one reason (same_skip) */
} text_row;

/* Skipped cases of one backend with one reason, in a row, share one line of
 * the terminal table: a machine without a GPU would otherwise print the same
 * reason for each of its 60-odd GPU cases. Markdown, CSV and JSON keep a row
 * per case. */
static bool same_skip(const cJSON *a, const cJSON *b)
{
    return strcmp(mb_case_state(a), "skipped") == 0 && strcmp(mb_case_state(b), "skipped") == 0 &&
           strcmp(str_of(a, "component"), str_of(b, "component")) == 0 &&
           strcmp(str_of(a, "backend"), str_of(b, "backend")) == 0 &&
           strcmp(str_of(a, "reason"), str_of(b, "reason")) == 0;
}

static void fill_row(const cJSON *c, text_row *r)
{
    memset(r, 0, sizeof *r);
    r->c = c;
    mb_case_ceiling(c, &r->ceiling);
    snprintf(r->state, sizeof r->state, "%s", mb_case_state(c));
    mb_case_label(c, r->label, sizeof r->label);
    if (isfinite(r->ceiling.value)) {
        rate_text(c, r->ceiling.value, r->value, sizeof r->value);
        snprintf(r->from, sizeof r->from, "%s", r->ceiling.source);
    }
    if (isfinite(r->ceiling.efficiency))
        snprintf(r->eff, sizeof r->eff, "%.0f%%", 100 * r->ceiling.efficiency);
}

/* Prints text from column `indent`, wrapped at spaces so no line passes
 * TEXT_WIDTH; continuation lines are indented two more. A word longer than
 * the room is cut, never lost: it continues on the next line. No text, no
 * line. */
static void put_wrapped(FILE *out, const char *text, int indent)
{
    if (*text == '\0')
        return;
    fprintf(out, "%*s", indent, "");
    mb_text_wrap(out, indent, indent + 2, text, MB_TEXT_CUT | MB_TEXT_BYTES);
}

/* The notes a case carries, in the order people need them: why it did not
 * run, why its verification failed, why it is noisy, then its own notes. */
static void put_notes(FILE *out, const text_row *r, int indent)
{
    const cJSON *c = r->c;
    const char *reason = str_of(c, "reason");
    if (*reason)
        put_wrapped(out, reason, indent);
    const cJSON *ver = cJSON_GetObjectItemCaseSensitive(c, "verification");
    if (strcmp(str_of(ver, "status"), "failed") == 0 && *str_of(ver, "detail")) {
        char buf[MB_ERR_LEN + 32];
        snprintf(buf, sizeof buf, "verification: %s", str_of(ver, "detail"));
        put_wrapped(out, buf, indent);
    }
    if (r->ceiling.noisy)
        put_wrapped(out, r->ceiling.why, indent);
    /* the first of its own notes in full (the component puts the one that
     * matters first); the rest are counted, and shown by md and json */
    int shown = 0, more = 0;
    const cJSON *n;
    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(c, "notes"))
    {
        if (!cJSON_IsString(n) || strncmp(n->valuestring, "noisy:", 6) == 0)
            continue;
        if (shown++ == 0)
            put_wrapped(out, n->valuestring, indent);
        else
            more++;
    }
    if (more) {
        char buf[96];
        snprintf(buf, sizeof buf, "(%d more note%s: --format md or json)", more, more == 1 ? "" : "s");
        put_wrapped(out, buf, indent);
    }
}

static const char *const TEXT_HEAD[] = { "state", "case", "ceiling", "source", "eff" };

/* The terminal table: a case's label wraps in its column so that a line
 * fits TEXT_WIDTH; its secondary figures and notes follow on lines of their
 * own, under the case. */
static int write_text_table(FILE *out, const cJSON *cases)
{
    int n = cJSON_GetArraySize(cases);
    text_row *rows = calloc((size_t)n + 1, sizeof *rows);
    if (rows == NULL)
        return MB_ESYS;
    mb_table t;
    mb_table_init(&t, "llrlr", TEXT_HEAD[0], TEXT_HEAD[1], TEXT_HEAD[2], TEXT_HEAD[3], TEXT_HEAD[4]);
    /* Widths in columns, not bytes: "3.87 µs/op" lines up with "65.59 TFLOP/s". */
    t.fit_col = 1;
    t.fit_min = TEXT_MIN_CASE;
    int kept = 0;
    for (int i = 0; i < n; i++) {
        const cJSON *c = cJSON_GetArrayItem(cases, i);
        if (kept > 0 && same_skip(rows[kept - 1].c, c)) {
            text_row *r = &rows[kept - 1];
            r->cases++;
            snprintf(r->label, sizeof r->label, "%s/%s: %d cases (--format md lists each)", str_of(c, "component"),
                     str_of(c, "backend"), r->cases);
            continue;
        }
        fill_row(c, &rows[kept]);
        rows[kept++].cases = 1;
    }
    for (int i = 0; i < kept; i++) {
        const text_row *r = &rows[i];
        mb_table_row(&t, (const char *const[]){ r->state, r->label, r->value, r->from, r->eff });
    }
    int rc = t.oom ? MB_ESYS : MB_OK;
    mb_table_layout l;
    mb_table_layout_of(&t, &l);
    mb_table_put_head(out, &t, &l);
    int indent = mb_table_col_start(&t, &l, 1);
    for (int i = 0; i < kept && rc == MB_OK; i++) {
        mb_table_put_row(out, &t, &l, i);
        char sec[768];
        secondary_text(rows[i].c, sec, sizeof sec);
        if (sec[0])
            put_wrapped(out, sec, indent);
        put_notes(out, &rows[i], indent);
    }
    mb_table_free(&t);
    free(rows);
    return rc;
}

/* ---- Markdown: one row per case, every figure in its own column ---------- */

/* Every note of a case in one cell: why it did not run, why it is noisy,
 * then its own notes. */
static void md_notes(const text_row *r, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = '\0';
    const char *reason = str_of(r->c, "reason");
    if (*reason)
        off = append(buf, len, off, "%s%s", reason, "");
    if (r->ceiling.noisy)
        off = append(buf, len, off, "%s%s", off ? "; " : "", r->ceiling.why);
    char lat[160];
    latency_text(r->c, lat, sizeof lat);
    if (lat[0])
        off = append(buf, len, off, "%s%s", off ? "; " : "", lat);
    const cJSON *n;
    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(r->c, "notes"))
    {
        if (cJSON_IsString(n) && strncmp(n->valuestring, "noisy:", 6) != 0)
            off = append(buf, len, off, "%s%s", off ? "; " : "", n->valuestring);
    }
}

static int write_md_table(FILE *out, const cJSON *cases)
{
    mb_table t;
    mb_table_init(&t, "llrlrrrrrrrl", "state", "case", "ceiling", "source", "median", "best", "cv", "burst",
                  "sustained", "peak", "eff", "notes");
    t.flags = MB_TABLE_MD_TIGHT;
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        text_row r;
        fill_row(c, &r);
        const cJSON *rate = cJSON_GetObjectItemCaseSensitive(c, "rate");
        char median[96], best[96], cv[96], burst[96], sustained[96], peak[96], notes[4096];
        rate_text(c, num_of(rate, "median"), median, sizeof median);
        rate_text(c, num_of(rate, "best"), best, sizeof best);
        pct_text(cv, sizeof cv, num_of(rate, "cv"));
        phase_text(c, "burst", burst, sizeof burst);
        phase_text(c, "sustained", sustained, sizeof sustained);
        rate_text(c, nested(c, "peak", "value"), peak, sizeof peak);
        md_notes(&r, notes, sizeof notes);
        mb_table_row(&t, (const char *const[]){ r.state, r.label, r.value[0] ? r.value : "-",
                                                r.from[0] ? r.from : "-", median, best, cv,
                                                burst[0] ? burst : "-", sustained[0] ? sustained : "-", peak,
                                                r.eff[0] ? r.eff : "-", notes });
    }
    mb_table_print(out, &t, true);
    int rc = t.oom ? MB_ESYS : MB_OK;
    mb_table_free(&t);
    return rc;
}

static void csv_field(FILE *out, const char *s)
{
    bool quote = strpbrk(s, ",\"\n") != NULL;
    if (!quote) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void csv_num(FILE *out, double v)
{
    if (isfinite(v))
        fprintf(out, "%.9g", v);
}

static int write_csv(FILE *out, const cJSON *cases)
{
    fputs("id,section,component,backend,params,status,reason,work_unit,work_per_iteration,rate_unit,"
          "rate_median,rate_best,rate_cv,seconds_per_iteration_median,peak,peak_source,efficiency,"
          "verification,burst_rate,sustained_rate,ceiling_phase,ceiling,ceiling_unit,ceiling_source,state\n",
          out);
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        char params[2048] = "";
        size_t off = 0;
        const cJSON *p;
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(c, "params"))
        {
            if (cJSON_IsString(p) && off < sizeof params)
                off += (size_t)snprintf(params + off, sizeof params - off, "%s%s=%s", off ? ";" : "",
                                        p->string, p->valuestring);
        }
        const cJSON *peak = cJSON_GetObjectItemCaseSensitive(c, "peak");
        const char *fields[] = { str_of(c, "id"), str_of(c, "section"), str_of(c, "component"),
                                 str_of(c, "backend"), params, str_of(c, "status"), str_of(c, "reason"),
                                 str_of(c, "work_unit") };
        for (size_t i = 0; i < sizeof fields / sizeof *fields; i++) {
            csv_field(out, fields[i]);
            fputc(',', out);
        }
        csv_num(out, num_of(c, "work_per_iteration"));
        fputc(',', out);
        csv_field(out, str_of(c, "rate_unit"));
        fputc(',', out);
        csv_num(out, nested(c, "rate", "median"));
        fputc(',', out);
        csv_num(out, nested(c, "rate", "best"));
        fputc(',', out);
        csv_num(out, nested(c, "rate", "cv"));
        fputc(',', out);
        csv_num(out, nested(c, "seconds_per_iteration", "median"));
        fputc(',', out);
        csv_num(out, cJSON_IsObject(peak) ? num_of(peak, "value") : NAN);
        fputc(',', out);
        csv_field(out, cJSON_IsObject(peak) ? str_of(peak, "source") : "");
        fputc(',', out);
        mb_ceiling ce;
        mb_case_ceiling(c, &ce);
        csv_num(out, ce.efficiency);
        fputc(',', out);
        csv_field(out, str_of(cJSON_GetObjectItemCaseSensitive(c, "verification"), "status"));
        fputc(',', out);
        csv_num(out, nested(c, "burst", "rate"));
        fputc(',', out);
        csv_num(out, nested(c, "sustained", "rate"));
        fputc(',', out);
        csv_field(out, str_of(c, "ceiling_phase"));
        fputc(',', out);
        csv_num(out, ce.value);
        fputc(',', out);
        csv_field(out, ce.unit);
        fputc(',', out);
        csv_field(out, isfinite(ce.value) ? ce.source : "");
        fputc(',', out);
        csv_field(out, mb_case_state(c));
        fputc('\n', out);
    }
    return MB_OK;
}

/* Whether any case's phases read an SM clock (a GPU with NVML): only then
 * does the table show "@ MHz", and the legend explain it. */
static bool any_sm_clock(const cJSON *cases)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cases)
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "sustained");
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(c, "burst");
        if (cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(s, "sm_clock_mhz")) ||
            cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(b, "sm_clock_mhz")))
            return true;
    }
    return false;
}

/* The table's legend, saying only what the table shows. */
static void text_legend(char *buf, size_t len, const cJSON *cases)
{
    snprintf(buf, len,
             "ceiling = one per case: the sustained phase's rate for compute cases (source: sustained), else the "
             "median of the repetitions' rates (source: median); the same number in every view (JSON case.ceiling). "
             "median, best = the repetitions' median and maximum; cv = their stddev / mean; eff = ceiling / peak. "
             "burst = median of short windows after idle gaps (clocks free); sustained = back-to-back work after the "
             "clocks settle%s. noisy = the repetitions' cv (or a compute case's sustained sub-windows') above max_cv, "
             "or median, burst and sustained apart by more than max(3 x cv, 5%%): not a reliable ceiling. not "
             "verified = ran, but its output was not checked: gap and compare do not use it.",
             any_sm_clock(cases) ? "; @ = mean SM clock" : "");
}

int mb_write_results(FILE *out, const cJSON *doc, const char *format, mb_err *err)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    if (strcmp(format, "json") == 0) {
        /* an older file comes out in the current version: its derived
         * ceiling written, as every other view shows it */
        cJSON *cur = mb_results_current(doc);
        char *t = cur ? cJSON_Print(cur) : NULL;
        cJSON_Delete(cur);
        if (t == NULL)
            return mb_errf(err, MB_ESYS, "out of memory");
        fprintf(out, "%s\n", t);
        free(t);
        return MB_OK;
    }
    if (strcmp(format, "csv") == 0)
        return write_csv(out, cases);
    if (strcmp(format, "md") == 0) {
        const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(doc, "context");
        const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(ctx, "cpu");
        fprintf(out, "### mlbench results: %s (%s)\n\n", str_of(cJSON_GetObjectItemCaseSensitive(ctx, "host"), "name"),
                str_of(cpu, "model"));
        if (write_md_table(out, cases) != MB_OK)
            return mb_errf(err, MB_ESYS, "out of memory formatting the results table");
        char legend[1024];
        text_legend(legend, sizeof legend, cases);
        fprintf(out, "\n%s\n", legend);
        return MB_OK;
    }
    if (strcmp(format, "table") == 0) {
        if (write_text_table(out, cases) != MB_OK)
            return mb_errf(err, MB_ESYS, "out of memory formatting the results table");
        char legend[1024];
        text_legend(legend, sizeof legend, cases);
        put_wrapped(out, legend, 0);
        return MB_OK;
    }
    return mb_errf(err, MB_EUSAGE, "unknown format '%s' (expected table, json, csv or md)", format);
}

/* ---- Google Benchmark JSON ---------------------------------------------- */

static cJSON *gb_entry(const char *name, const char *run_name, const char *run_type, const char *aggregate,
                       int rep_index, int reps, double iterations, double ns)
{
    cJSON *b = cJSON_CreateObject();
    cJSON_AddStringToObject(b, "name", name);
    cJSON_AddNumberToObject(b, "family_index", 0);
    cJSON_AddNumberToObject(b, "per_family_instance_index", 0);
    cJSON_AddStringToObject(b, "run_name", run_name);
    cJSON_AddStringToObject(b, "run_type", run_type);
    cJSON_AddNumberToObject(b, "repetitions", reps);
    if (aggregate) {
        cJSON_AddStringToObject(b, "aggregate_name", aggregate);
        cJSON_AddStringToObject(b, "aggregate_unit", strcmp(aggregate, "cv") == 0 ? "percentage" : "time");
    } else {
        cJSON_AddNumberToObject(b, "repetition_index", rep_index);
    }
    cJSON_AddNumberToObject(b, "threads", 1);
    cJSON_AddNumberToObject(b, "iterations", iterations);
    cJSON_AddNumberToObject(b, "real_time", isfinite(ns) ? ns : 0);
    cJSON_AddNumberToObject(b, "cpu_time", isfinite(ns) ? ns : 0);
    cJSON_AddStringToObject(b, "time_unit", "ns");
    return b;
}

int mb_write_gbench_json(const char *path, const cJSON *doc, mb_err *err)
{
    cJSON *out = cJSON_CreateObject();
    cJSON *ctx = cJSON_AddObjectToObject(out, "context");
    const cJSON *mctx = cJSON_GetObjectItemCaseSensitive(doc, "context");
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(mctx, "cpu");
    cJSON_AddStringToObject(ctx, "date", str_of(doc, "started_utc"));
    cJSON_AddStringToObject(ctx, "host_name", str_of(cJSON_GetObjectItemCaseSensitive(mctx, "host"), "name"));
    cJSON_AddStringToObject(ctx, "executable", "mlbench");
    cJSON_AddNumberToObject(ctx, "num_cpus", num_of(cpu, "logical_cpus"));
    double mhz = num_of(cpu, "mhz_max");
    cJSON_AddNumberToObject(ctx, "mhz_per_cpu", isfinite(mhz) ? mhz : 0);
    cJSON_AddBoolToObject(ctx, "cpu_scaling_enabled", 0);
    cJSON_AddArrayToObject(ctx, "caches");
    cJSON_AddStringToObject(ctx, "library_build_type", "release");
    cJSON *benches = cJSON_AddArrayToObject(out, "benchmarks");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(doc, "cases"))
    {
        const cJSON *reps = cJSON_GetObjectItemCaseSensitive(c, "per_repetition");
        int n = cJSON_GetArraySize(reps);
        if (!cJSON_IsArray(reps) || n == 0)
            continue;
        const char *id = str_of(c, "id");
        double ns[n];
        double iters = 0;
        for (int i = 0; i < n; i++) {
            const cJSON *r = cJSON_GetArrayItem(reps, i);
            double it = num_of(r, "iterations");
            ns[i] = num_of(r, "seconds") / it * 1e9;
            iters = it;
            cJSON_AddItemToArray(benches, gb_entry(id, id, "iteration", NULL, i, n, it, ns[i]));
        }
        char name[2048];
        const char *aggs[] = { "mean", "median", "stddev", "cv" };
        double vals[] = { mb_mean(ns, n), mb_median(ns, n), mb_stddev(ns, n), mb_cv(ns, n) };
        for (int a = 0; a < 4; a++) {
            snprintf(name, sizeof name, "%s_%s", id, aggs[a]);
            cJSON_AddItemToArray(benches, gb_entry(name, id, "aggregate", aggs[a], 0, n, iters, vals[a]));
        }
    }
    char *text = cJSON_Print(out);
    cJSON_Delete(out);
    if (text == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = mb_write_file_atomic(path, text, err);
    free(text);
    return rc;
}

void mb_fmt_case_rate(const cJSON *c, double rate, char *buf, size_t len)
{
    rate_text(c, rate, buf, len);
}

void mb_put_wrapped(FILE *out, const char *text, int indent)
{
    put_wrapped(out, text, indent);
}
