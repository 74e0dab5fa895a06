/* analysis_writers.c: gap and compare as table, JSON or Markdown.
 *
 * The table and Markdown views share one small column layout (tbl_*): cells
 * are formatted once, then printed aligned (table) or with pipes (md). */
#include "analysis_writers.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"

/* ---- human figures ------------------------------------------------------------- */

void mb_fmt_seconds(char *buf, size_t len, double s)
{
    if (!isfinite(s))
        snprintf(buf, len, "-");
    else if (s == 0)
        snprintf(buf, len, "0 s");
    else if (fabs(s) < 1e-6)
        snprintf(buf, len, "%.3g ns", s * 1e9);
    else if (fabs(s) < 1e-3)
        snprintf(buf, len, "%.3g us", s * 1e6);
    else if (fabs(s) < 1)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else
        snprintf(buf, len, "%.4g s", s);
}

static void scaled(char *buf, size_t len, double v, const char *const *units, int n, double step)
{
    int i = 0;
    while (fabs(v) >= step && i < n - 1) {
        v /= step;
        i++;
    }
    snprintf(buf, len, "%.3g %s", v, units[i]);
}

void mb_fmt_rate(char *buf, size_t len, double rate, const char *unit)
{
    if (!(rate > 0) || !isfinite(rate) || unit == NULL) {
        snprintf(buf, len, "-");
        return;
    }
    if (strcmp(unit, "flop") == 0) {
        static const char *const u[] = { "FLOP/s", "kFLOP/s", "MFLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s" };
        scaled(buf, len, rate, u, 6, 1000);
    } else if (strcmp(unit, "byte") == 0) {
        static const char *const u[] = { "B/s", "kB/s", "MB/s", "GB/s", "TB/s" };
        scaled(buf, len, rate, u, 5, 1000);
    } else if (strcmp(unit, "launch") == 0 || strcmp(unit, "sync") == 0) {
        char t[32];
        mb_fmt_seconds(t, sizeof t, 1.0 / rate);
        snprintf(buf, len, "%s/%s", t, unit);
    } else if (strcmp(unit, "s") == 0) {
        snprintf(buf, len, "-");
    } else {
        snprintf(buf, len, "%.3g %s/s", rate, unit);
    }
}

static void fmt_pct(char *buf, size_t len, double f)
{
    if (!isfinite(f) || f < 0)
        snprintf(buf, len, "-");
    else if (f > 0 && f < 0.001)
        snprintf(buf, len, "%.1g%%", 100 * f);
    else
        snprintf(buf, len, "%.1f%%", 100 * f);
}

static void fmt_size(char *buf, size_t len, double v)
{
    static const char *const u[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    int i = 0;
    while (v >= 1024 && i < 4) {
        v /= 1024;
        i++;
    }
    snprintf(buf, len, v == floor(v) ? "%.0f%s" : "%.3g%s", v, u[i]);
}

/* ---- a table that prints as text or Markdown ------------------------------------- */

enum { TBL_MAX_COLS = 12 };

typedef struct tbl {
    int ncol;
    const char *head[TBL_MAX_COLS];
    char align[TBL_MAX_COLS]; /* 'l' or 'r' */
    char **cells;             /* nrows * ncol */
    int nrows;
    bool oom;
} tbl;

static void tbl_init(tbl *t, const char *aligns, ...)
{
    memset(t, 0, sizeof *t);
    va_list ap;
    va_start(ap, aligns);
    for (int i = 0; aligns[i] && i < TBL_MAX_COLS; i++) {
        t->align[i] = aligns[i];
        t->head[i] = va_arg(ap, const char *);
        t->ncol++;
    }
    va_end(ap);
}

/* Sets one head at run time (machine names in compare). */
static void tbl_add_col(tbl *t, const char *head, char align)
{
    if (t->ncol < TBL_MAX_COLS) {
        t->head[t->ncol] = head;
        t->align[t->ncol++] = align;
    }
}

static void tbl_row(tbl *t, const char *const *cells)
{
    char **g = realloc(t->cells, sizeof *g * (size_t)((t->nrows + 1) * t->ncol));
    if (g == NULL) {
        t->oom = true;
        return;
    }
    t->cells = g;
    for (int c = 0; c < t->ncol; c++) {
        char *s = strdup(cells[c] ? cells[c] : "");
        if (s == NULL)
            t->oom = true;
        t->cells[t->nrows * t->ncol + c] = s;
    }
    t->nrows++;
}

static void tbl_free(tbl *t)
{
    for (int i = 0; i < t->nrows * t->ncol; i++)
        free(t->cells[i]);
    free(t->cells);
}

/* Display width in characters (UTF-8 continuation bytes do not count). */
static int width(const char *s)
{
    int w = 0;
    for (; *s; s++)
        w += ((unsigned char)*s & 0xC0) != 0x80;
    return w;
}

static void pad(FILE *o, int n)
{
    for (int i = 0; i < n; i++)
        fputc(' ', o);
}

static void tbl_print(FILE *o, const tbl *t, bool md, const char *indent)
{
    int w[TBL_MAX_COLS] = { 0 };
    for (int c = 0; c < t->ncol; c++) {
        w[c] = width(t->head[c]);
        for (int r = 0; r < t->nrows; r++) {
            const char *s = t->cells[r * t->ncol + c];
            if (s && width(s) > w[c])
                w[c] = width(s);
        }
    }
    for (int r = -1; r < t->nrows; r++) {
        fputs(md ? "" : indent, o);
        for (int c = 0; c < t->ncol; c++) {
            const char *s = r < 0 ? t->head[c] : t->cells[r * t->ncol + c];
            if (s == NULL)
                s = "";
            if (md) {
                fprintf(o, "| %s ", s);
                continue;
            }
            int gap = w[c] - width(s);
            if (t->align[c] == 'r')
                pad(o, gap);
            fputs(s, o);
            if (c < t->ncol - 1)
                pad(o, (t->align[c] == 'r' ? 0 : gap) + 2);
        }
        fputs(md ? "|\n" : "\n", o);
        if (md && r < 0) {
            for (int c = 0; c < t->ncol; c++)
                fputs(t->align[c] == 'r' ? "| ---: " : "| --- ", o);
            fputs("|\n", o);
        }
    }
}

/* ---- gap: shared pieces ------------------------------------------------------------- */

static void stage_what(char *buf, size_t len, const mb_stage *s)
{
    size_t n = (size_t)snprintf(buf, len, "%s", s->component);
#define ADD(...)                                                  \
    do {                                                          \
        if (n < len)                                              \
            n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__); \
    } while (0)
    if (s->dtype)
        ADD(" %s", s->dtype);
    if (s->direction)
        ADD(" %s", s->direction);
    if (s->memory)
        ADD(" %s", s->memory);
    if (s->pattern)
        ADD(" %s", s->pattern);
    if (s->block_size > 0) {
        char b[32];
        fmt_size(b, sizeof b, (double)s->block_size);
        ADD(" %s", b);
    }
    if (s->ranks > 0)
        ADD(" %d ranks", s->ranks);
    if (s->device && strcmp(s->device, "cpu") == 0 &&
        (strcmp(s->component, "gemm") == 0 || strcmp(s->component, "conv") == 0 || strcmp(s->component, "other") == 0))
        ADD(" (cpu)");
#undef ADD
}

static const char *run_unit_word(const mb_gap *g)
{
    return g->steps_known ? "step" : "run";
}

/* ---- gap: text and Markdown ----------------------------------------------------------- */

static void gap_header(FILE *o, const mb_gap *g, bool md)
{
    const mb_run *r = g->run;
    char t[32], u[32];
    mb_fmt_seconds(t, sizeof t, mb_gap_per_step(g, g->total));
    if (md)
        fprintf(o, "# mlbench gap\n\n");
    else
        fprintf(o, "mlbench gap\n");
    const char *b = md ? "- " : "  ";
    fprintf(o, "%srun: %s (%s", b, r->path ? r->path : "?", r->kind ? r->kind : "?");
    if (g->steps_known)
        fprintf(o, ", %d steps, %s per step", g->steps, t);
    else
        fprintf(o, ", %s in all, step count unknown", t);
    fprintf(o, ")\n");
    const mb_ceilings *c = g->ceilings;
    fprintf(o, "%sceilings: %s (host %s, started %s)\n", b, c->path, c->host ? c->host : "?",
            c->started_utc ? c->started_utc : "?");
    if (g->unaccounted > 0) {
        mb_fmt_seconds(u, sizeof u, mb_gap_per_step(g, g->unaccounted));
        fprintf(o, "%stime in no stage: %s per %s (%.1f%%), counted in the %s time\n", b, u, run_unit_word(g),
                100 * g->unaccounted / g->total, run_unit_word(g));
    }
    fprintf(o, "%stimes are per %s\n", b, run_unit_word(g));
}

/* The trace's step table (evidence "step"): what the step is made of. */
static void gap_step_table(FILE *o, const mb_gap *g, bool md)
{
    const cJSON *step = g->run->evidence ? cJSON_GetObjectItemCaseSensitive(g->run->evidence, "step") : NULL;
    if (!cJSON_IsObject(step))
        return;
    const cJSON *secs = cJSON_GetObjectItemCaseSensitive(step, "seconds");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(step, "steps");
    const cJSON *win = cJSON_GetObjectItemCaseSensitive(step, "window");
    char tm[32];
    mb_fmt_seconds(tm, sizeof tm, cJSON_IsNumber(secs) ? secs->valuedouble : 0);
    bool steps = cJSON_IsString(win) && strcmp(win->valuestring, "ProfilerStep") == 0;
    fprintf(o, md ? "## The step, end to end\n\n%s (mean of %d %s):\n\n" : "the step, end to end: %s (mean of %d %s)\n",
            tm, cJSON_IsNumber(n) ? (int)n->valuedouble : 0, steps ? "ProfilerSteps" : "trace windows");
    tbl t;
    tbl_init(&t, "llrr", "part", "class", "time", "share");
    double sum = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(step, "parts"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
        const cJSON *kind = cJSON_GetObjectItemCaseSensitive(p, "kind");
        const cJSON *cls = cJSON_GetObjectItemCaseSensitive(p, "class");
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(p, "seconds");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(p, "share");
        if (!cJSON_IsString(name) || !cJSON_IsNumber(ps) || !cJSON_IsNumber(sh))
            continue;
        bool idle = cJSON_IsString(kind) && strcmp(kind->valuestring, "idle") == 0;
        char label[160], c[64], pt[32], share[32];
        bool cpu = cJSON_IsString(kind) && strcmp(kind->valuestring, "cpu") == 0; /* CPU-only trace */
        snprintf(label, sizeof label, "%s%s", cpu ? "CPU: " : idle ? "GPU idle: " : "GPU busy: ", name->valuestring);
        snprintf(c, sizeof c, "%s", cJSON_IsString(cls) ? cls->valuestring : "");
        mb_fmt_seconds(pt, sizeof pt, ps->valuedouble);
        fmt_pct(share, sizeof share, sh->valuedouble);
        sum += sh->valuedouble;
        const char *row[] = { label, c, pt, share };
        tbl_row(&t, row);
    }
    char total[32];
    fmt_pct(total, sizeof total, sum);
    const char *row[] = { md ? "**step**" : "step", "", tm, total };
    tbl_row(&t, row);
    tbl_print(o, &t, md, "  ");
    tbl_free(&t);
    fputc('\n', o);
}

static void gap_stage_table(FILE *o, const mb_gap *g, bool md)
{
    tbl t;
    tbl_init(&t, "llrrrrrrrr", "stage", "component", "time", "exposed", "measured", "ceiling", "eff.", "at ceiling",
             "lost", "share");
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        const mb_stage *s = st->stage;
        char what[96], tm[32], ex[32], meas[32], ceil[32], eff[32], atc[32], lost[32], share[32];
        stage_what(what, sizeof what, s);
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, s->seconds));
        mb_fmt_seconds(ex, sizeof ex, mb_gap_per_step(g, st->exposed));
        mb_fmt_rate(meas, sizeof meas, st->measured_rate, s->work_unit);
        if (st->match >= 0) {
            mb_fmt_rate(ceil, sizeof ceil, st->ceiling_rate, s->work_unit);
            fmt_pct(eff, sizeof eff, st->efficiency);
            mb_fmt_seconds(atc, sizeof atc, mb_gap_per_step(g, st->time_at_ceiling));
            mb_fmt_seconds(lost, sizeof lost, mb_gap_per_step(g, st->time_lost));
            if (st->above_ceiling)
                snprintf(lost, sizeof lost, "0 (above)");
        } else {
            snprintf(ceil, sizeof ceil, "no ceiling");
            snprintf(eff, sizeof eff, "-");
            snprintf(atc, sizeof atc, "-");
            snprintf(lost, sizeof lost, "-");
        }
        fmt_pct(share, sizeof share, st->share);
        const char *row[] = { s->name, what, tm, ex, meas, ceil, eff, atc, lost, share };
        tbl_row(&t, row);
    }
    if (g->unaccounted > 0) {
        char tm[32], share[32];
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, g->unaccounted));
        fmt_pct(share, sizeof share, g->unaccounted / g->total);
        const char *row[] = { "(no stage)", "", tm, tm, "", "", "", "", "", share };
        tbl_row(&t, row);
    }
    {
        char tm[32];
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, g->total));
        const char *row[] = { md ? "**total**" : "total", "", "", tm, "", "", "", "", "", "100.0%" };
        tbl_row(&t, row);
    }
    tbl_print(o, &t, md, "  ");
    tbl_free(&t);
}

static void gap_matches(FILE *o, const mb_gap *g, bool md)
{
    fprintf(o, md ? "\n## Ceilings matched\n\n" : "\nceilings matched (only status ok + verification passed)\n");
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        if (st->match >= 0) {
            /* the why starts with the case id: shown by its label (the full id is in the JSON) */
            const mb_case_ref *cr = &g->ceilings->cases[st->match];
            size_t n = strlen(cr->id);
            const char *rest = strncmp(st->why, cr->id, n) == 0 ? st->why + n : st->why;
            fprintf(o, md ? "- **%s**: `%s`%s\n" : "  %-14s %s%s\n", st->stage->name, cr->label, rest);
        } else if (md) {
            fprintf(o, "- **%s**: %s\n", st->stage->name, st->why);
        } else {
            fprintf(o, "  %-14s %s\n", st->stage->name, st->why);
        }
        if (st->match >= 0 && strcmp(g->ceilings->cases[st->match].phase, "median") != 0)
            fprintf(o, "%s%-*sceiling: the case's %s rate (%s)\n", md ? "  - " : "  ", md ? 0 : 15, "",
                    g->ceilings->cases[st->match].phase,
                    md ? "`--ceiling burst|sustained`" : "--ceiling burst|sustained");
        if (st->above_ceiling)
            fprintf(o, md ? "  - faster than this ceiling: the case is not a ceiling for this stage (other shape "
                            "or cache); no time lost counted\n"
                          : "  %-14s faster than this ceiling: the case is not a ceiling for this stage (other "
                            "shape or cache); no time lost counted\n",
                    "");
    }
}

static void gap_ranking(FILE *o, const mb_gap *g, bool md)
{
    fprintf(o, md ? "\n## Ranking by time lost\n\n" : "\nranking by time lost\n");
    int shown = 0;
    for (int k = 0; k < g->n; k++) {
        const mb_gap_stage *st = &g->stages[g->ranking[k]];
        if (st->match < 0 || st->time_lost <= 0)
            continue;
        char lost[32];
        mb_fmt_seconds(lost, sizeof lost, mb_gap_per_step(g, st->time_lost));
        fprintf(o, md ? "%d. **%s**: %s per %s (%.1f%% of the %s), at %.1f%% of its ceiling\n"
                      : "  %d. %-14s %s per %s (%.1f%% of the %s), at %.1f%% of its ceiling\n",
                ++shown, st->stage->name, lost, run_unit_word(g), 100 * st->time_lost / g->total, run_unit_word(g),
                100 * st->efficiency);
    }
    if (shown == 0)
        fprintf(o, md ? "No stage loses time against a ceiling.\n" : "  no stage loses time against a ceiling\n");
}

static void gap_amdahl(FILE *o, const mb_gap *g, bool md)
{
    fprintf(o, md ? "\n## Amdahl projection\n\n%s time if only this stage reached its ceiling (the others "
                    "unchanged):\n\n"
                  : "\nAmdahl projection: %s time if only this stage reached its ceiling (others unchanged)\n",
            run_unit_word(g));
    tbl t;
    tbl_init(&t, "lrr", md ? "stage" : "", run_unit_word(g), "speed-up");
    char now[32];
    mb_fmt_seconds(now, sizeof now, mb_gap_per_step(g, g->total));
    const char *first[] = { "now", now, "1.00x" };
    tbl_row(&t, first);
    for (int k = 0; k < g->n; k++) {
        const mb_gap_stage *st = &g->stages[g->ranking[k]];
        if (st->match < 0)
            continue;
        char a[32], sp[32];
        mb_fmt_seconds(a, sizeof a, mb_gap_per_step(g, st->amdahl_total));
        snprintf(sp, sizeof sp, "%.2fx", st->amdahl_speedup);
        const char *row[] = { st->stage->name, a, sp };
        tbl_row(&t, row);
    }
    char a[32], sp[32];
    mb_fmt_seconds(a, sizeof a, mb_gap_per_step(g, g->all_total));
    snprintf(sp, sizeof sp, "%.2fx", g->all_speedup);
    const char *all[] = { "all stages at ceiling", a, sp };
    tbl_row(&t, all);
    tbl_print(o, &t, md, "  ");
    tbl_free(&t);
}

static void gap_diagnosis(FILE *o, const mb_diagnosis *d, bool md)
{
    if (d == NULL)
        return;
    fprintf(o, md ? "\n## Diagnosis\n\nFrom %s.\n\n" : "\ndiagnosis (from %s)\n", d->fig.source);
    if (d->n == 0)
        fprintf(o, md ? "%s.\n" : "  %s\n", d->balanced);
    for (int i = 0; i < d->n; i++) {
        const mb_finding *f = &d->findings[i];
        const char *rank = i == 0 ? "primary" : i == 1 && d->runner_up ? "runner-up" : "also";
        fprintf(o, md ? "### %d. %s (%s, %.1f%%)\n\n" : "  %d. %s (%s, %.1f%%)\n", i + 1, f->title, rank,
                100 * f->weight);
        for (int j = 0; j < f->n_evidence; j++)
            fprintf(o, md ? "- %s\n" : "     - %s\n", f->evidence[j]);
        if (f->n_remedies)
            fprintf(o, md ? "\nRemedies:\n\n" : "     remedies:\n");
        for (int j = 0; j < f->n_remedies; j++)
            fprintf(o, md ? "- %s\n" : "     * %s\n", f->remedies[j]);
        if (md)
            fputc('\n', o);
    }
}

static void gap_projection(FILE *o, const mb_gap *g, bool md)
{
    if (!g->has_target)
        return;
    fprintf(o, md ? "\n## Projection onto %s (%s)\n\n" : "\nprojection onto %s (%s)\n", g->target_label,
            g->target_kind);
    tbl t;
    tbl_init(&t, "lrrll", "stage", "here", "there", "from", "how");
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        char h[32], th[32];
        mb_fmt_seconds(h, sizeof h, mb_gap_per_step(g, st->stage->seconds));
        mb_fmt_seconds(th, sizeof th, mb_gap_per_step(g, st->target_seconds));
        const char *row[] = { st->stage->name, h, th, st->target_source ? st->target_source : "kept",
                              st->target_why };
        tbl_row(&t, row);
    }
    if (g->unaccounted > 0) {
        char h[32];
        mb_fmt_seconds(h, sizeof h, mb_gap_per_step(g, g->unaccounted));
        const char *row[] = { "(no stage)", h, h, "kept", "time in no stage is unchanged" };
        tbl_row(&t, row);
    }
    char h[32], th[32], sp[64];
    mb_fmt_seconds(h, sizeof h, mb_gap_per_step(g, g->total));
    mb_fmt_seconds(th, sizeof th, mb_gap_per_step(g, g->target_total));
    snprintf(sp, sizeof sp, "%.2fx faster there", mb_speedup(g->total, g->target_total));
    const char *row[] = { run_unit_word(g), h, th, "", sp };
    tbl_row(&t, row);
    tbl_print(o, &t, md, "  ");
    tbl_free(&t);
    if (g->target_bottleneck >= 0) {
        const mb_gap_stage *b = &g->stages[g->target_bottleneck];
        fprintf(o, md ? "\nNew bottleneck: **%s** (%.1f%% of the %s there; here: %s, %.1f%%)\n"
                      : "  new bottleneck: %s (%.1f%% of the %s there; here: %s, %.1f%%)\n",
                b->stage->name, 100 * b->target_seconds / g->target_total, run_unit_word(g),
                g->stages[g->bottleneck].stage->name, 100 * g->stages[g->bottleneck].share);
    }
    fprintf(o, md ? "\nAssumptions:\n\n" : "  assumptions:\n");
    for (int i = 0; i < g->n_assumptions; i++)
        fprintf(o, md ? "- %s\n" : "  - %s\n", g->assumptions[i]);
}

static void gap_warnings(FILE *o, const mb_gap *g, bool md)
{
    const mb_run *r = g->run;
    if (r->n_warnings == 0 && g->n_notes == 0)
        return;
    fprintf(o, md ? "\n## Warnings\n\n" : "\nwarnings\n");
    for (int i = 0; i < g->n_notes; i++)
        fprintf(o, md ? "- %s\n" : "  - %s\n", g->notes[i]);
    for (int i = 0; i < r->n_warnings; i++)
        fprintf(o, md ? "- %s\n" : "  - %s\n", r->warnings[i]);
}

/* Simplify runs (stage files version 2): each stage at three levels, the
 * hardware ceiling, the part alone, the part in the full loop, and which gap
 * is which (mb_gap_stage_levels). */
#define MB_LEVELS_TOLERANCE 0.10

static void gap_levels_table(FILE *o, const mb_gap *g, bool md)
{
    if (!mb_gap_has_levels(g))
        return;
    fprintf(o, md ? "\n## Three levels per stage (simplify)\n\n"
                  : "\nthree levels per stage (simplify): hardware ceiling -> the part alone -> in the full loop\n");
    tbl t;
    tbl_init(&t, "lrrrrrrl", "stage", "at ceiling", "alone", "in loop", "rate alone", "rate in loop", "exposed",
             "verdict");
    for (int i = 0; i < g->n; i++) {
        mb_gap_levels L = mb_gap_stage_levels(g, i, MB_LEVELS_TOLERANCE);
        if (!L.has_levels)
            continue;
        const mb_gap_stage *st = &g->stages[i];
        char atc[32], alone[32], loop[32], ra[32], rl[32], ex[32];
        if (L.has_ceiling)
            mb_fmt_seconds(atc, sizeof atc, mb_gap_per_step(g, L.ceiling_seconds));
        else
            snprintf(atc, sizeof atc, "no ceiling");
        mb_fmt_seconds(alone, sizeof alone, mb_gap_per_step(g, L.isolated_seconds));
        mb_fmt_seconds(loop, sizeof loop, mb_gap_per_step(g, L.loop_seconds));
        mb_fmt_seconds(ex, sizeof ex, mb_gap_per_step(g, st->exposed));
        if (L.isolated_rate > 0) {
            mb_fmt_rate(ra, sizeof ra, L.isolated_rate, st->stage->work_unit);
            mb_fmt_rate(rl, sizeof rl, L.loop_rate, st->stage->work_unit);
        } else {
            snprintf(ra, sizeof ra, "-");
            snprintf(rl, sizeof rl, "-");
        }
        const char *row[] = { st->stage->name, atc, alone, loop, ra, rl, ex, L.verdict_text };
        tbl_row(&t, row);
    }
    tbl_print(o, &t, md, "  ");
    tbl_free(&t);
    fprintf(o, md ? "\n" : "");
    fprintf(o, "%sslow by itself: alone it is more than %.0f%% from its ceiling (optimise the part); slow only in "
               "the pipeline: in the loop it takes more than %.0f%% longer than alone while the step waits for it "
               "(overlap, workers, pinning, prefetch, contention)\n",
            md ? "" : "  ", MB_LEVELS_TOLERANCE * 100, MB_LEVELS_TOLERANCE * 100);
}


static void gap_text(FILE *o, const mb_gap *g, const mb_diagnosis *d, bool md)
{
    gap_header(o, g, md);
    fputc('\n', o);
    gap_step_table(o, g, md);
    gap_stage_table(o, g, md);
    gap_levels_table(o, g, md);
    gap_matches(o, g, md);
    gap_ranking(o, g, md);
    gap_amdahl(o, g, md);
    gap_diagnosis(o, d, md);
    gap_projection(o, g, md);
    gap_warnings(o, g, md);
}

/* ---- gap: JSON ----------------------------------------------------------------------- */

static void add_num_or_null(cJSON *o, const char *k, double v, bool known)
{
    if (known && isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static cJSON *levels_json(const mb_gap *g, const mb_gap_stage *st)
{
    mb_gap_levels L = mb_gap_stage_levels(g, (int)(st - g->stages), MB_LEVELS_TOLERANCE);
    if (!L.has_levels)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    add_num_or_null(o, "ceiling_seconds_per_step", mb_gap_per_step(g, L.ceiling_seconds), L.has_ceiling);
    cJSON_AddNumberToObject(o, "isolated_seconds_per_step", mb_gap_per_step(g, L.isolated_seconds));
    cJSON_AddNumberToObject(o, "loop_seconds_per_step", mb_gap_per_step(g, L.loop_seconds));
    add_num_or_null(o, "ceiling_rate", st->ceiling_rate, L.has_ceiling);
    add_num_or_null(o, "isolated_rate", L.isolated_rate, L.isolated_rate > 0);
    add_num_or_null(o, "loop_rate", L.loop_rate, L.loop_rate > 0);
    cJSON_AddNumberToObject(o, "self_gap_seconds_per_step", mb_gap_per_step(g, L.self_gap));
    cJSON_AddNumberToObject(o, "pipeline_gap_seconds_per_step", mb_gap_per_step(g, L.pipeline_gap));
    cJSON_AddStringToObject(o, "verdict", L.verdict_text);
    return o;
}

static cJSON *stage_json(const mb_gap *g, const mb_gap_stage *st)
{
    const mb_stage *s = st->stage;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddStringToObject(o, "component", s->component);
    add_str_or_null(o, "device", s->device);
    add_str_or_null(o, "dtype", s->dtype);
    add_str_or_null(o, "direction", s->direction);
    add_str_or_null(o, "memory", s->memory);
    add_str_or_null(o, "pattern", s->pattern);
    add_num_or_null(o, "block_size", (double)s->block_size, s->block_size > 0);
    add_num_or_null(o, "ranks", s->ranks, s->ranks > 0);
    add_num_or_null(o, "calls", (double)s->count, s->count > 0);
    bool has_work = strcmp(s->work_unit, "s") != 0;
    add_num_or_null(o, "work", s->work, has_work);
    add_str_or_null(o, "work_unit", has_work ? s->work_unit : NULL);
    cJSON_AddNumberToObject(o, "seconds", s->seconds);
    cJSON_AddNumberToObject(o, "seconds_per_step", mb_gap_per_step(g, s->seconds));
    cJSON_AddNumberToObject(o, "exposed_seconds", st->exposed);
    cJSON_AddNumberToObject(o, "hidden_seconds", s->seconds - st->exposed);
    add_num_or_null(o, "measured_rate", st->measured_rate, has_work);
    add_num_or_null(o, "ceiling_rate", st->ceiling_rate, st->match >= 0);
    add_str_or_null(o, "rate_unit", has_work ? (strcmp(s->work_unit, "flop") == 0 ? "flop/s"
                                                : strcmp(s->work_unit, "byte") == 0 ? "byte/s"
                                                : strcmp(s->work_unit, "launch") == 0 ? "launch/s"
                                                : "sync/s")
                                             : NULL);
    add_num_or_null(o, "efficiency", st->efficiency, st->match >= 0);
    add_num_or_null(o, "seconds_at_ceiling", st->time_at_ceiling, st->match >= 0);
    add_num_or_null(o, "seconds_lost", st->time_lost, st->match >= 0);
    cJSON_AddBoolToObject(o, "above_ceiling", st->above_ceiling);
    cJSON_AddNumberToObject(o, "share", st->share);
    if (st->match >= 0) {
        cJSON *m = cJSON_AddObjectToObject(o, "ceiling");
        cJSON_AddStringToObject(m, "id", g->ceilings->cases[st->match].id);
        /* median (the repetitions'), burst or sustained: `gap --ceiling` */
        cJSON_AddStringToObject(m, "phase", g->ceilings->cases[st->match].phase);
        cJSON_AddStringToObject(m, "why", st->why);
        cJSON_AddNullToObject(o, "no_ceiling");
        cJSON *a = cJSON_AddObjectToObject(o, "amdahl");
        cJSON_AddNumberToObject(a, "step_seconds", mb_gap_per_step(g, st->amdahl_total));
        cJSON_AddNumberToObject(a, "speedup", st->amdahl_speedup);
    } else {
        cJSON_AddNullToObject(o, "ceiling");
        cJSON_AddStringToObject(o, "no_ceiling", st->why);
        cJSON_AddNullToObject(o, "amdahl");
    }
    add_str_or_null(o, "source", s->source);
    cJSON_AddItemToObject(o, "levels", levels_json(g, st));
    return o;
}

static cJSON *figures_json(const mb_diag_figures *f)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", f->source);
    add_num_or_null(o, "gpu_utilization", f->gpu_util, f->gpu_util >= 0);
    add_num_or_null(o, "cpu_utilization", f->cpu_util, f->cpu_util >= 0);
    add_num_or_null(o, "gpu_idle_share", f->gpu_idle_share, f->gpu_idle_share >= 0);
    cJSON_AddNumberToObject(o, "compute_share", f->compute_share);
    add_num_or_null(o, "compute_efficiency", f->compute_efficiency, f->compute_efficiency >= 0);
    cJSON_AddNumberToObject(o, "launch_share", f->launch_share);
    add_num_or_null(o, "launch_idle_ratio", f->launch_idle_ratio, f->launch_idle_ratio >= 0);
    cJSON_AddNumberToObject(o, "launches", f->launches);
    cJSON_AddNumberToObject(o, "sync_share", f->sync_share);
    add_num_or_null(o, "sync_host_share", f->sync_host_share, f->sync_host_share >= 0);
    cJSON_AddNumberToObject(o, "syncs", f->syncs);
    cJSON_AddNumberToObject(o, "data_share", f->data_share);
    cJSON_AddNumberToObject(o, "copy_share", f->copy_share);
    cJSON_AddNumberToObject(o, "pageable_copy_share", f->pageable_share);
    cJSON_AddNumberToObject(o, "communication_share", f->comm_share);
    cJSON_AddNumberToObject(o, "cpu_compute_share", f->cpu_share);
    cJSON_AddBoolToObject(o, "random_disk", f->random_disk);
    cJSON_AddBoolToObject(o, "fp32_compute", f->fp32_compute);
    cJSON_AddBoolToObject(o, "step_table", f->step_table);
    if (f->step_table) {
        cJSON_AddNumberToObject(o, "tensor_share", f->tensor_share);
        cJSON_AddNumberToObject(o, "memory_bound_share", f->memory_share);
        cJSON_AddNumberToObject(o, "launch_idle_share", f->launch_idle_share);
        cJSON_AddNumberToObject(o, "host_idle_share", f->host_idle_share);
    }
    add_num_or_null(o, "kernels_per_step", f->kernels_per_step, f->kernels_per_step >= 0);
    add_num_or_null(o, "median_kernel_seconds", f->median_kernel_s, f->median_kernel_s > 0);
    add_num_or_null(o, "launch_ceiling_seconds", f->launch_ceiling_s, f->launch_ceiling_s > 0);
    add_num_or_null(o, "tensor_efficiency", f->tensor_efficiency, f->tensor_efficiency >= 0);
    add_num_or_null(o, "memory_bound_bytes_per_s", f->memory_rate, f->memory_rate >= 0);
    add_num_or_null(o, "memory_bound_ceiling_bytes_per_s", f->memory_ceiling, f->memory_ceiling > 0);
    add_num_or_null(o, "memory_bound_efficiency", f->memory_efficiency, f->memory_efficiency >= 0);
    if (f->memory_ceiling_case)
        cJSON_AddStringToObject(o, "memory_bound_ceiling_case", f->memory_ceiling_case);
    else
        cJSON_AddNullToObject(o, "memory_bound_ceiling_case");
    add_num_or_null(o, "memory_bound_shaped_share", f->memory_shaped_share, f->memory_shaped_share >= 0);
    return o;
}

static cJSON *strings_json(char *const *s, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(s[i]));
    return a;
}

static cJSON *projection_json(const mb_gap *g)
{
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "target", g->target_label);
    cJSON_AddStringToObject(p, "kind", g->target_kind);
    cJSON_AddNumberToObject(p, "step_seconds_here", mb_gap_per_step(g, g->total));
    cJSON_AddNumberToObject(p, "step_seconds_there", mb_gap_per_step(g, g->target_total));
    cJSON_AddNumberToObject(p, "speedup", mb_speedup(g->total, g->target_total));
    add_str_or_null(p, "bottleneck_there",
                    g->target_bottleneck >= 0 ? g->stages[g->target_bottleneck].stage->name : NULL);
    cJSON *st = cJSON_AddArrayToObject(p, "stages");
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *s = &g->stages[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", s->stage->name);
        cJSON_AddNumberToObject(o, "seconds_per_step_here", mb_gap_per_step(g, s->stage->seconds));
        cJSON_AddNumberToObject(o, "seconds_per_step_there", mb_gap_per_step(g, s->target_seconds));
        cJSON_AddBoolToObject(o, "projected", s->projected);
        add_num_or_null(o, "rate_there", s->target_rate, s->projected);
        add_str_or_null(o, "rate_there_from", s->target_source);
        cJSON_AddStringToObject(o, "how", s->target_why);
        cJSON_AddItemToArray(st, o);
    }
    cJSON_AddItemToObject(p, "assumptions", strings_json(g->assumptions, g->n_assumptions));
    return p;
}

cJSON *mb_gap_to_json(const mb_gap *g, const mb_diagnosis *d)
{
    const mb_run *r = g->run;
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "format", "mlbench-gap");
    cJSON_AddNumberToObject(doc, "version", 1);
    cJSON *run = cJSON_AddObjectToObject(doc, "run");
    add_str_or_null(run, "path", r->path);
    add_str_or_null(run, "kind", r->kind);
    add_num_or_null(run, "steps", g->steps, g->steps_known);
    cJSON_AddNumberToObject(run, "total_seconds", g->total);
    cJSON_AddNumberToObject(run, "step_seconds", mb_gap_per_step(g, g->total));
    cJSON_AddNumberToObject(run, "stage_seconds", g->stage_sum);
    cJSON_AddNumberToObject(run, "unaccounted_seconds", g->unaccounted);
    add_num_or_null(run, "gpu_utilization", r->gpu_utilization, r->gpu_utilization >= 0);
    add_num_or_null(run, "cpu_utilization", r->cpu_utilization, r->cpu_utilization >= 0);
    add_num_or_null(run, "batches_per_second", r->batches_per_second, r->batches_per_second >= 0);
    cJSON_AddItemToObject(run, "warnings", strings_json(r->warnings, r->n_warnings));
    /* The step table first thing a reader finds: parts[] {id, name, kind,
     * class, seconds, share}; null for a stage file. */
    const cJSON *step = r->evidence ? cJSON_GetObjectItemCaseSensitive(r->evidence, "step") : NULL;
    if (cJSON_IsObject(step))
        cJSON_AddItemToObject(doc, "step", cJSON_Duplicate(step, true));
    else
        cJSON_AddNullToObject(doc, "step");
    cJSON_AddItemToObject(doc, "notes", strings_json(g->notes, g->n_notes));
    cJSON *c = cJSON_AddObjectToObject(doc, "ceilings");
    cJSON_AddStringToObject(c, "path", g->ceilings->path);
    add_str_or_null(c, "host", g->ceilings->host);
    add_str_or_null(c, "started_utc", g->ceilings->started_utc);
    cJSON_AddStringToObject(doc, "times_per", run_unit_word(g));
    cJSON *stages = cJSON_AddArrayToObject(doc, "stages");
    for (int i = 0; i < g->n; i++)
        cJSON_AddItemToArray(stages, stage_json(g, &g->stages[i]));
    cJSON *rank = cJSON_AddArrayToObject(doc, "ranking");
    for (int k = 0; k < g->n; k++) {
        const mb_gap_stage *st = &g->stages[g->ranking[k]];
        if (st->match < 0 || st->time_lost <= 0)
            continue;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", st->stage->name);
        cJSON_AddNumberToObject(o, "seconds_lost_per_step", mb_gap_per_step(g, st->time_lost));
        cJSON_AddNumberToObject(o, "share_of_step", st->time_lost / g->total);
        cJSON_AddItemToArray(rank, o);
    }
    cJSON *am = cJSON_AddObjectToObject(doc, "amdahl");
    cJSON_AddNumberToObject(am, "step_seconds_now", mb_gap_per_step(g, g->total));
    cJSON_AddNumberToObject(am, "step_seconds_all_at_ceiling", mb_gap_per_step(g, g->all_total));
    cJSON_AddNumberToObject(am, "speedup_all", g->all_speedup);
    cJSON_AddStringToObject(doc, "bottleneck", g->stages[g->bottleneck].stage->name);
    if (d) {
        cJSON *dj = cJSON_AddObjectToObject(doc, "diagnosis");
        cJSON_AddItemToObject(dj, "figures", figures_json(&d->fig));
        add_str_or_null(dj, "primary", d->n > 0 ? d->findings[0].id : NULL);
        add_str_or_null(dj, "runner_up", d->runner_up ? d->findings[1].id : NULL);
        add_str_or_null(dj, "balanced", d->n == 0 ? d->balanced : NULL);
        cJSON *fs = cJSON_AddArrayToObject(dj, "findings");
        for (int i = 0; i < d->n; i++) {
            const mb_finding *f = &d->findings[i];
            cJSON *o = cJSON_CreateObject();
            cJSON_AddStringToObject(o, "pattern", f->id);
            cJSON_AddStringToObject(o, "title", f->title);
            cJSON_AddNumberToObject(o, "weight", f->weight);
            cJSON_AddItemToObject(o, "evidence", strings_json(f->evidence, f->n_evidence));
            cJSON_AddItemToObject(o, "remedies", strings_json(f->remedies, f->n_remedies));
            cJSON_AddItemToArray(fs, o);
        }
    }
    if (g->has_target)
        cJSON_AddItemToObject(doc, "projection", projection_json(g));
    else
        cJSON_AddNullToObject(doc, "projection");
    return doc;
}

static int write_json(FILE *o, cJSON *doc, mb_err *err)
{
    if (doc == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (text == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    fputs(text, o);
    fputc('\n', o);
    free(text);
    return MB_OK;
}

int mb_gap_write(FILE *out, const mb_gap *g, const mb_diagnosis *d, const char *format, mb_err *err)
{
    if (strcmp(format, "json") == 0)
        return write_json(out, mb_gap_to_json(g, d), err);
    if (strcmp(format, "table") == 0 || strcmp(format, "md") == 0) {
        gap_text(out, g, d, strcmp(format, "md") == 0);
        return MB_OK;
    }
    return mb_errf(err, MB_EUSAGE, "--format %s: expected table, json or md", format);
}

/* ---- compare ---------------------------------------------------------------------------- */

static void fmt_rate_cell(char *buf, size_t len, const mb_compare *c, const mb_compare_row *r, int i)
{
    int k = r->idx[i];
    if (r->from_sheet[i]) {
        snprintf(buf, len, "%.4g %s (datasheet)", r->rate[i], r->rate_unit ? r->rate_unit : "");
        return;
    }
    if (k < 0) {
        snprintf(buf, len, "(absent)");
        return;
    }
    const mb_case_ref *cr = &c->m[i].cases[k];
    if (!cr->usable) {
        snprintf(buf, len, "%s", strcmp(cr->status, "ok") != 0 ? cr->status : "not verified");
        return;
    }
    if (r->latency_first && cr->rate_abs > 0) {
        char t[32];
        mb_fmt_seconds(t, sizeof t, 1.0 / cr->rate_abs);
        snprintf(buf, len, "%s/%s", t, cr->work_unit ? cr->work_unit : "op");
    } else {
        snprintf(buf, len, "%.4g %s", cr->rate, cr->rate_unit ? cr->rate_unit : "");
    }
}

static void fmt_ratio(char *buf, size_t len, double ratio)
{
    if (ratio < 0)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.2fx", ratio);
}

static void per_usd_unit(char *buf, size_t len, const char *rate_unit)
{
    size_t n = rate_unit ? strlen(rate_unit) : 0;
    if (n > 2 && strcmp(rate_unit + n - 2, "/s") == 0)
        snprintf(buf, len, "%.*s/$", (int)(n - 2), rate_unit);
    else
        snprintf(buf, len, "%s*h/$", rate_unit ? rate_unit : "");
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

static void compare_text(FILE *o, const mb_compare *c, bool md)
{
    fprintf(o, md ? "# mlbench compare\n\n" : "mlbench compare\n");
    for (int i = 0; i < c->n_m; i++) {
        fprintf(o, md ? "- %c: **%s** `%s` (started %s)" : "  %c: %s  %s  (started %s)", 'A' + i, c->label[i],
                c->m[i].path, c->m[i].started_utc ? c->m[i].started_utc : "?");
        if (c->price[i] > 0)
            fprintf(o, ", %.4g USD/hour", c->price[i]);
        fputc('\n', o);
    }
    fprintf(o, md ? "\nRatios are to %s (A): above 1 is faster (a higher rate; for latencies, a shorter "
                    "time).\n\n## Cases on every machine\n\n"
                  : "  ratios are to %s (A): above 1 is faster (a higher rate; for latencies, a shorter time)\n\n"
                    "cases on every machine\n",
            c->label[0]);
    tbl t;
    tbl_init(&t, "l", "case");
    char heads[2 * TBL_MAX_COLS][64];
    int nh = 0;
    for (int i = 0; i < c->n_m && t.ncol < TBL_MAX_COLS; i++) {
        machine_head(heads[nh], sizeof heads[nh], c, i, md);
        tbl_add_col(&t, heads[nh++], 'r');
        if (i > 0 && t.ncol < TBL_MAX_COLS) {
            snprintf(heads[nh], sizeof heads[nh], "%c/A", 'A' + i);
            tbl_add_col(&t, heads[nh++], 'r');
        }
    }
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        if (!row->everywhere)
            continue;
        char cells[TBL_MAX_COLS][64];
        const char *p[TBL_MAX_COLS];
        int k = 0;
        p[k++] = row->label;
        for (int i = 0; i < c->n_m && k < t.ncol; i++) {
            fmt_rate_cell(cells[k], sizeof cells[k], c, row, i);
            p[k] = cells[k];
            k++;
            if (i > 0 && k < t.ncol) {
                fmt_ratio(cells[k], sizeof cells[k], row->ratio[i]);
                p[k] = cells[k];
                k++;
            }
        }
        tbl_row(&t, p);
    }
    tbl_print(o, &t, md, "  ");
    tbl_free(&t);

    fprintf(o, md ? "\n## Geometric mean of the ratios per component\n\n" : "\ngeometric mean of the ratios per component\n");
    tbl g;
    tbl_init(&g, "l", "component");
    char gh[TBL_MAX_COLS][64];
    for (int i = 1; i < c->n_m && g.ncol < TBL_MAX_COLS; i++) {
        snprintf(gh[i], sizeof gh[i], "%c/A", 'A' + i);
        tbl_add_col(&g, gh[i], 'r');
    }
    for (int k = 0; k < c->n_geo; k++) {
        char cells[TBL_MAX_COLS][64];
        const char *p[TBL_MAX_COLS];
        p[0] = c->geo[k].component;
        for (int i = 1; i < c->n_m && i < g.ncol; i++) {
            if (c->geo[k].geomean[i] < 0)
                snprintf(cells[i], sizeof cells[i], "-");
            else
                snprintf(cells[i], sizeof cells[i], "%.2fx (%d)", c->geo[k].geomean[i], c->geo[k].n[i]);
            p[i] = cells[i];
        }
        tbl_row(&g, p);
    }
    tbl_print(o, &g, md, "  ");
    tbl_free(&g);

    bool priced = false;
    for (int i = 0; i < c->n_m; i++)
        priced = priced || c->price[i] > 0;
    if (priced) {
        fprintf(o, md ? "\n## Throughput per dollar\n\nrate x 3600 / (USD per hour): work per dollar.\n\n"
                      : "\nthroughput per dollar (rate x 3600 / USD per hour = work per dollar)\n");
        tbl u;
        tbl_init(&u, "l", "case");
        char uh[TBL_MAX_COLS][64];
        for (int i = 0; i < c->n_m && u.ncol < TBL_MAX_COLS; i++) {
            machine_head(uh[i], sizeof uh[i], c, i, md);
            tbl_add_col(&u, uh[i], 'r');
        }
        for (int r = 0; r < c->n_rows; r++) {
            const mb_compare_row *row = &c->rows[r];
            if (!row->everywhere)
                continue;
            char cells[TBL_MAX_COLS][64], unit[48];
            const char *p[TBL_MAX_COLS];
            p[0] = row->label;
            per_usd_unit(unit, sizeof unit, row->rate_unit);
            for (int i = 0; i < c->n_m && i + 1 < u.ncol; i++) {
                if (row->per_usd[i] < 0)
                    snprintf(cells[i + 1], sizeof cells[i + 1], "-");
                else
                    snprintf(cells[i + 1], sizeof cells[i + 1], "%.4g %s", row->per_usd[i], unit);
                p[i + 1] = cells[i + 1];
            }
            tbl_row(&u, p);
        }
        tbl_print(o, &u, md, "  ");
        tbl_free(&u);
        fprintf(o, md ? "\nGeometric mean of the per-dollar ratios:\n\n" : "  geometric mean of the per-dollar ratios:");
        for (int k = 0; k < c->n_geo; k++)
            for (int i = 1; i < c->n_m; i++)
                if (c->geo[k].geomean_usd[i] > 0)
                    fprintf(o, md ? "- %s %c/A: %.2fx\n" : " %s %c/A %.2fx;", c->geo[k].component, 'A' + i,
                            c->geo[k].geomean_usd[i]);
        fputc('\n', o);
    }

    fprintf(o, md ? "\n## Cases not on every machine\n\n" : "\ncases not on every machine\n");
    int only = 0;
    for (int r = 0; r < c->n_rows; r++) {
        const mb_compare_row *row = &c->rows[r];
        if (row->everywhere)
            continue;
        char on[64] = "";
        size_t n = 0;
        for (int i = 0; i < c->n_m && n < sizeof on - 2; i++)
            if (row->idx[i] >= 0 || row->from_sheet[i])
                n += (size_t)snprintf(on + n, sizeof on - n, "%s%c", n ? "," : "", 'A' + i);
        fprintf(o, md ? "- `%s`: only on %s\n" : "  %s: only on %s\n", row->label, on);
        only++;
    }
    if (only == 0)
        fprintf(o, md ? "None.\n" : "  none\n");

    fprintf(o, md ? "\n## Context differences\n\n" : "\ncontext differences\n");
    if (c->n_ctx == 0) {
        fprintf(o, md ? "None of the compared entries differ.\n" : "  none of the compared entries differ\n");
        return;
    }
    tbl x;
    tbl_init(&x, "l", "entry");
    char xh[TBL_MAX_COLS][64];
    for (int i = 0; i < c->n_m && x.ncol < TBL_MAX_COLS; i++) {
        machine_head(xh[i], sizeof xh[i], c, i, md);
        tbl_add_col(&x, xh[i], 'l');
    }
    for (int k = 0; k < c->n_ctx; k++) {
        const char *p[TBL_MAX_COLS];
        char cut[TBL_MAX_COLS][CTX_CELL_MAX + 4];
        p[0] = c->ctx[k].key;
        for (int i = 0; i < c->n_m && i + 1 < x.ncol; i++) {
            p[i + 1] = c->ctx[k].value[i][0] ? c->ctx[k].value[i] : "(none)";
            /* a terminal row stays readable; Markdown and JSON keep the whole value */
            if (!md && strlen(p[i + 1]) > CTX_CELL_MAX) {
                snprintf(cut[i + 1], sizeof cut[i + 1], "%.*s...", CTX_CELL_MAX - 3, p[i + 1]);
                p[i + 1] = cut[i + 1];
            }
        }
        tbl_row(&x, p);
    }
    tbl_print(o, &x, md, "  ");
    tbl_free(&x);
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
    cJSON_AddNumberToObject(doc, "version", 1);
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
        add_str_or_null(o, "rate_unit", row->rate_unit);
        cJSON *st = cJSON_AddArrayToObject(o, "status");
        for (int i = 0; i < c->n_m; i++) {
            const char *s = row->idx[i] < 0 ? "absent"
                            : c->m[i].cases[row->idx[i]].usable ? "ok"
                            : strcmp(c->m[i].cases[row->idx[i]].status, "ok") ? c->m[i].cases[row->idx[i]].status
                                                                              : "not-verified";
            cJSON_AddItemToArray(st, cJSON_CreateString(s));
        }
        cJSON_AddItemToObject(o, "rate", nums_json(row->rate, c->n_m));
        cJSON *from = cJSON_AddArrayToObject(o, "rate_from");
        for (int i = 0; i < c->n_m; i++)
            cJSON_AddItemToArray(from, row->from_sheet[i] ? cJSON_CreateString("datasheet")
                                       : row->rate[i] >= 0 ? cJSON_CreateString("measured")
                                                           : cJSON_CreateNull());
        cJSON_AddItemToObject(o, "ratio", nums_json(row->ratio, c->n_m));
        cJSON_AddItemToObject(o, "per_usd", nums_json(row->per_usd, c->n_m));
        cJSON_AddBoolToObject(o, "on_every_machine", row->everywhere);
        cJSON_AddItemToArray(cases, o);
    }
    cJSON *geo = cJSON_AddObjectToObject(doc, "geomean");
    for (int k = 0; k < c->n_geo; k++) {
        cJSON *o = cJSON_AddObjectToObject(geo, c->geo[k].component);
        cJSON_AddItemToObject(o, "ratio", nums_json(c->geo[k].geomean, c->n_m));
        cJSON_AddItemToObject(o, "per_usd_ratio", nums_json(c->geo[k].geomean_usd, c->n_m));
        cJSON *n = cJSON_AddArrayToObject(o, "cases");
        for (int i = 0; i < c->n_m; i++)
            cJSON_AddItemToArray(n, cJSON_CreateNumber(c->geo[k].n[i]));
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
