/* gap_writers.c: the gap as table, JSON or Markdown.
 *
 * The table and Markdown views share one table printer (report/table.h):
 * cells are formatted once, then printed aligned (table) or with pipes (md). */
#include "gap_writers.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "table.h"
#include "text.h"
#include "writer_helpers.h"

static void pad(FILE *o, int n)
{
    for (int i = 0; i < n; i++)
        fputc(' ', o);
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
    /* the size per call is in "ceilings matched" (the table keeps within 120 columns) */
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

/* ---- gap: the sentences every view shows (text, Markdown, HTML) ------------------------ */

/* A trace's step table, when it has one (evidence "step"). */
static const cJSON *step_evidence(const mb_run *r)
{
    const cJSON *step = r->evidence ? cJSON_GetObjectItemCaseSensitive(r->evidence, "step") : NULL;
    return cJSON_IsObject(step) ? step : NULL;
}

/* The step was cut on the GPU's timeline (the host runs ahead of it). */
static bool gpu_timeline(const mb_run *r)
{
    const cJSON *tl = cJSON_GetObjectItemCaseSensitive(step_evidence(r), "timeline");
    return cJSON_IsString(tl) && strcmp(tl->valuestring, "gpu") == 0;
}

void mb_gap_step_words(char *buf, size_t len, const mb_gap *g)
{
    char t[32], u[32], given[96] = "";
    mb_fmt_seconds(t, sizeof t, mb_gap_per_step(g, g->total));
    const cJSON *traced = cJSON_GetObjectItemCaseSensitive(step_evidence(g->run), "trace_seconds");
    if (cJSON_IsNumber(traced)) {
        mb_fmt_seconds(u, sizeof u, traced->valuedouble);
        snprintf(given, sizeof given, ", given by --step-ms (traced: %s)", u);
    }
    if (g->steps_known)
        snprintf(buf, len, "%d step%s, %s per step%s%s", g->steps, g->steps == 1 ? "" : "s", t,
                 gpu_timeline(g->run) ? " on the GPU's timeline: the host runs ahead" : "", given);
    else
        snprintf(buf, len, "%s in all, step count unknown", t);
}

const char *mb_gap_part_prefix(const cJSON *part)
{
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(part, "kind"));
    return kind && strcmp(kind, "cpu") == 0 ? "CPU: " : kind && strcmp(kind, "idle") == 0 ? "GPU idle: " : "GPU busy: ";
}

int mb_gap_step_notes(const mb_gap *g, char notes[][MB_GAP_NOTE_LEN], int max)
{
    const cJSON *step = step_evidence(g->run);
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(step, "step_given_why");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(step, "timeline_why");
    int n = 0;
    if (cJSON_IsString(given) && n < max)
        snprintf(notes[n++], MB_GAP_NOTE_LEN, "%s", given->valuestring);
    if (gpu_timeline(g->run) && cJSON_IsString(why) && n < max) {
        const cJSON *cs = cJSON_GetObjectItemCaseSensitive(step, "closing_sync");
        const cJSON *cn = cJSON_GetObjectItemCaseSensitive(cs, "count"), *ct = cJSON_GetObjectItemCaseSensitive(cs, "seconds");
        int at = snprintf(notes[n], MB_GAP_NOTE_LEN, "%s", why->valuestring);
        if (cJSON_IsNumber(cn) && cn->valuedouble > 0 && cJSON_IsNumber(ct) && at > 0 && at < MB_GAP_NOTE_LEN) {
            char t[32];
            mb_fmt_seconds(t, sizeof t, ct->valuedouble);
            snprintf(notes[n] + at, MB_GAP_NOTE_LEN - (size_t)at,
                     "; the closing synchronize after the last step (%s waiting for the queued steps) is no step's "
                     "sync",
                     t);
        }
        n++;
    }
    return n;
}

void mb_gap_bottleneck_words(char *buf, size_t len, const mb_gap *g, const mb_diagnosis *d)
{
    char share[32];
    mb_fmt_share(share, sizeof share, d->bottleneck_share);
    if (d->n == 0) /* the share is the largest stage's, no pattern's ("balanced, 90.1% of the run" read as one) */
        snprintf(buf, len, "%s: no pattern reaches its threshold (the diagnosis below); its largest stage: %s, %s of "
                 "the %s", d->bottleneck, g->stages[d->bottleneck_stage].stage->name, share, run_unit_word(g));
    else
        snprintf(buf, len, "%s, %s of the %s (the diagnosis below); its largest stage: %s", d->bottleneck, share,
                 run_unit_word(g), g->stages[d->bottleneck_stage].stage->name);
}

void mb_gap_stage_verdict(char *buf, size_t len, const mb_gap *g, const mb_gap_stage *st)
{
    char lost[32], eff[32], share[32];
    /* A stage whose time all runs beside other work (a GPU-bound loop's launch calls, its set-up while kernels
     * run) is in the list at 0 s: say why, before what its ceiling says of its own time */
    if (st->exposed <= 0 && st->stage->seconds > 0 && len > 0) {
        char own[32];
        mb_fmt_seconds(own, sizeof own, mb_gap_per_step(g, st->stage->seconds));
        int n = snprintf(buf, len, "overlapped: its %s per %s runs while other work does, none of it exposed; ", own,
                         run_unit_word(g));
        if (n > 0 && (size_t)n < len) {
            buf += n;
            len -= (size_t)n;
        }
    }
    if (st->match < 0) {
        snprintf(buf, len, "no ceiling: %s", st->bound_hint);
        return;
    }
    if (st->beyond[0]) {
        snprintf(buf, len, "%s", st->beyond);
        return;
    }
    mb_fmt_share(eff, sizeof eff, st->efficiency);
    if (st->above_ceiling || st->time_lost <= 0) {
        snprintf(buf, len, "at %s of its ceiling: nothing lost", eff);
        return;
    }
    mb_fmt_seconds(lost, sizeof lost, mb_gap_per_step(g, st->time_lost));
    mb_fmt_share(share, sizeof share, st->time_lost / g->total);
    snprintf(buf, len, "%s lost (%s of the %s), at %s of its ceiling", lost, share, run_unit_word(g), eff);
}

/* ---- gap: text and Markdown ----------------------------------------------------------- */

static void print_wrapped(FILE *o, const char *lead, const char *text);

/* A header line: Markdown as it is, text wrapped at 120 columns. */
static void header_line(FILE *o, bool md, const char *lead, const char *text)
{
    if (md)
        fprintf(o, "%s%s\n", lead, text);
    else
        print_wrapped(o, lead, text);
}

static void gap_header(FILE *o, const mb_gap *g, bool md)
{
    const mb_run *r = g->run;
    char u[32], words[320];
    if (md)
        fprintf(o, "# mlbench gap\n\n");
    else
        fprintf(o, "mlbench gap\n");
    const char *b = md ? "- " : "  ";
    /* paths can be longer than a line: wrapped (cut) at 120 columns */
    char line[8192];
    mb_gap_step_words(words, sizeof words, g);
    snprintf(line, sizeof line, "%s (%s, %s)", r->path ? r->path : "?", r->kind ? r->kind : "?", words);
    header_line(o, md, md ? "- run: " : "  run: ", line);
    const mb_ceilings *c = g->ceilings;
    snprintf(line, sizeof line, "%s%s%s (host %s, started %s)", c->path, c->label ? ": " : "", c->label ? c->label : "",
             c->host ? c->host : "?", c->started_utc ? c->started_utc : "?");
    header_line(o, md, md ? "- ceilings: " : "  ceilings: ", line);
    if (g->unaccounted > 0) {
        char sh[32];
        mb_fmt_seconds(u, sizeof u, mb_gap_per_step(g, g->unaccounted));
        mb_fmt_share(sh, sizeof sh, g->unaccounted / g->total);
        fprintf(o, "%stime in no stage: %s per %s (%s), counted in the %s time\n", b, u, run_unit_word(g), sh,
                run_unit_word(g));
    }
    fprintf(o, "%stimes are per %s\n", b, run_unit_word(g));
}

/* A cell padded to w display columns, then two spaces. */
static void put_cell(FILE *o, const char *s, int w, char align)
{
    int gap = w - width(s);
    if (align == 'r')
        pad(o, gap);
    fputs(s, o);
    pad(o, (align == 'r' ? 0 : gap) + 2);
}

/* The column of stage names in gap's lists: the longest name + 1, at most
 * 25 (a longer name takes its own line). */
static int name_width(const mb_gap *g)
{
    int w = 8;
    for (int i = 0; i < g->n; i++)
        if (width(g->stages[i].stage->name) + 1 > w)
            w = width(g->stages[i].stage->name) + 1;
    return w > 25 ? 25 : w;
}

/* The headline: every stage by exposed time, the ones without a ceiling
 * too, so the part of the step that dominates comes first whether or not
 * mlbench can bound it; then how much of the step has a ceiling. */
static void gap_headline_text(FILE *o, const mb_gap *g, const mb_diagnosis *d, bool md)
{
    char bounded[32], rest[32], step[32], all[32];
    if (d) { /* the one bottleneck, in the diagnosis' words (the JSON's "bottleneck", the page's headline) */
        char line[384];
        mb_gap_bottleneck_words(line, sizeof line, g, d);
        put_item(o, md, md ? "**Bottleneck:** " : "bottleneck: ", line);
        if (d->bottleneck_note[0])
            put_item(o, md, md ? "\n" : "            ", d->bottleneck_note);
        if (md)
            fputc('\n', o);
    }
    mb_fmt_share(bounded, sizeof bounded, g->bounded_share);
    mb_fmt_share(rest, sizeof rest, 1 - g->bounded_share);
    mb_fmt_seconds(step, sizeof step, mb_gap_per_step(g, g->total));
    mb_fmt_seconds(all, sizeof all, mb_gap_per_step(g, g->all_total));
    fprintf(o, md ? "## What the %s is made of\n\n" : "what the %s is made of, largest first\n", run_unit_word(g));
    int nw = name_width(g) - 1; /* a longer name takes its own line */
    if (nw < 5)
        nw = 5;
    if (md)
        fprintf(o, "| # | stage | time per %s | share | against its ceiling |\n| ---: | --- | ---: | ---: | --- |\n",
                run_unit_word(g));
    else
        fprintf(o, "       %-*s  %8s  %7s  %s\n", nw, "stage", "time", "share", "against its ceiling");
    for (int k = 0; k < g->n; k++) {
        const mb_gap_stage *st = &g->stages[g->headline[k]];
        char tm[32], share[32], verdict[MB_GAP_VERDICT_LEN];
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, st->exposed));
        mb_fmt_share(share, sizeof share, st->share);
        mb_gap_stage_verdict(verdict, sizeof verdict, g, st);
        if (md) {
            fprintf(o, "| %d | %s | %s | %s | %s |\n", k + 1, st->stage->name, tm, share, verdict);
            continue;
        }
        fprintf(o, "  %3d. ", k + 1);
        if (width(st->stage->name) > nw) {
            fprintf(o, "%s\n", st->stage->name);
            pad(o, 7);
            put_cell(o, "", nw, 'l');
        } else {
            put_cell(o, st->stage->name, nw, 'l');
        }
        put_cell(o, tm, 8, 'r');
        put_cell(o, share, 7, 'r');
        int at = 7 + nw + 2 + 8 + 2 + 7 + 2;
        put_wrapped(o, at, at, verdict);
    }
    if (g->unaccounted > 0) {
        char tm[32], share[32];
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, g->unaccounted));
        mb_fmt_share(share, sizeof share, g->unaccounted / g->total);
        if (md)
            fprintf(o, "| | (no stage) | %s | %s | time no stage covers |\n", tm, share);
        else
        {
            fprintf(o, "       ");
            put_cell(o, "(no stage)", nw, 'l');
            put_cell(o, tm, 8, 'r');
            put_cell(o, share, 7, 'r');
            fprintf(o, "time no stage covers\n");
        }
    }
    char line[512];
    snprintf(line, sizeof line,
             "%s of the %s has a ceiling: every stage with one at its ceiling gives %s per %s (%.2fx, from %s); "
             "the other %s has none and stays as it is",
             bounded, run_unit_word(g), all, run_unit_word(g), g->all_speedup, step, rest);
    put_item(o, md, md ? "\n" : "  ", line);
    fputc('\n', o);
}

/* The trace's step table (evidence "step"): what the step is made of. */
static void gap_step_table(FILE *o, const mb_gap *g, bool md)
{
    const cJSON *step = step_evidence(g->run);
    if (step == NULL)
        return;
    const cJSON *secs = cJSON_GetObjectItemCaseSensitive(step, "seconds");
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(step, "steps");
    const cJSON *win = cJSON_GetObjectItemCaseSensitive(step, "window");
    char tm[32];
    mb_fmt_seconds(tm, sizeof tm, cJSON_IsNumber(secs) ? secs->valuedouble : 0);
    bool steps = cJSON_IsString(win) && strcmp(win->valuestring, "trace") != 0;
    bool optimizer = steps && strcmp(win->valuestring, "Optimizer.step") == 0;
    /* cut at the user's own annotation (docs/traces.md): its name is the window */
    bool annotation = steps && !optimizer && strcmp(win->valuestring, "ProfilerStep") != 0;
    int count = cJSON_IsNumber(n) ? (int)n->valuedouble : 0;
    bool one = count == 1;
    char at[128];
    snprintf(at, sizeof at, "%s from the start of one '%s' annotation to the next", one ? "step" : "steps",
             annotation ? win->valuestring : "");
    const char *what = !steps ? (one ? "trace window" : "trace windows")
                       : gpu_timeline(g->run)
                           ? (one ? "step cut on the GPU's timeline" : "steps cut on the GPU's timeline")
                       : optimizer  ? (one ? "step between Optimizer.step calls" : "steps between Optimizer.step calls")
                       : annotation ? at
                                    : (one ? "ProfilerStep" : "ProfilerSteps");
    const cJSON *traced = cJSON_GetObjectItemCaseSensitive(step, "trace_seconds");
    char of[256];
    if (cJSON_IsNumber(traced)) {
        char tt[32];
        mb_fmt_seconds(tt, sizeof tt, traced->valuedouble);
        snprintf(of, sizeof of, "given by --step-ms; traced: %s, %s %d %s", tt, one ? "its" : "the mean of", count,
                 what);
    } else
        snprintf(of, sizeof of, "%s%d %s", one ? "" : "mean of ", count, what);
    if (md) {
        fprintf(o, "## The step, end to end\n\n%s (%s):\n\n", tm, of);
    } else { /* a long annotation name wraps (vLLM's '## Call CompiledFxGraph None ##': 125 columns) */
        char line[320];
        snprintf(line, sizeof line, "%s (%s)", tm, of);
        print_wrapped(o, "the step, end to end: ", line);
    }
    char notes[2][MB_GAP_NOTE_LEN];
    int nn = mb_gap_step_notes(g, notes, 2);
    for (int i = 0; i < nn; i++) {
        put_item(o, md, md ? "" : "  ", notes[i]);
        if (md)
            fputc('\n', o);
    }
    mb_table t;
    mb_table_init(&t, "llrr", "part", "class", "time", "share");
    double sum = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(step, "parts"))
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(p, "name");
        const cJSON *cls = cJSON_GetObjectItemCaseSensitive(p, "class");
        const cJSON *ps = cJSON_GetObjectItemCaseSensitive(p, "seconds");
        const cJSON *sh = cJSON_GetObjectItemCaseSensitive(p, "share");
        if (!cJSON_IsString(name) || !cJSON_IsNumber(ps) || !cJSON_IsNumber(sh))
            continue;
        char label[160], c[64], pt[32], share[32];
        snprintf(label, sizeof label, "%s%s", mb_gap_part_prefix(p), name->valuestring);
        snprintf(c, sizeof c, "%s", cJSON_IsString(cls) ? cls->valuestring : "");
        mb_fmt_seconds(pt, sizeof pt, ps->valuedouble);
        mb_fmt_share(share, sizeof share, sh->valuedouble);
        sum += sh->valuedouble;
        const char *row[] = { label, c, pt, share };
        mb_table_row(&t, row);
    }
    char total[32];
    mb_fmt_share(total, sizeof total, sum);
    const char *row[] = { md ? "**step**" : "step", "", tm, total };
    mb_table_row(&t, row);
    mb_table_print(o, indented(&t), md);
    mb_table_free(&t);
    fputc('\n', o);
}

/* A name cut to `cols` display columns with "…" (the table keeps within 120
 * columns; the headline and "ceilings matched" show it whole). */
static void short_name(char *buf, size_t len, const char *name, int cols)
{
    if (width(name) <= cols) {
        snprintf(buf, len, "%s", name);
        return;
    }
    size_t at = 0;
    for (int w = 0; name[at] && at + 4 < len; at++) {
        if (((unsigned char)name[at] & 0xC0) != 0x80 && ++w > cols - 1)
            break;
    }
    snprintf(buf, len, "%.*s\u2026", (int)at, name);
}

static void gap_stage_table(FILE *o, const mb_gap *g, bool md)
{
    mb_table t;
    /* "at ceiling" is in the JSON (seconds_at_ceiling): the table keeps
     * within 120 columns */
    mb_table_init(&t, "llrrrrrrr", "stage", "component", "time", "exposed", "measured", "ceiling", "eff.", "lost",
             "share");
    /* the component ("allreduce bf16 8 ranks") wraps when a row would pass
     * 120 columns (TraceLens's MI300X ResNet and H100 OWLv2 traces) */
    t.fit_col = 1;
    t.fit_min = 12;
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
            mb_fmt_share(eff, sizeof eff, st->efficiency);
            mb_fmt_seconds(atc, sizeof atc, mb_gap_per_step(g, st->time_at_ceiling));
            mb_fmt_seconds(lost, sizeof lost, mb_gap_per_step(g, st->time_lost));
            if (st->above_ceiling) /* its efficiency, over 100%, says why: the table keeps within 120 columns */
                snprintf(lost, sizeof lost, "0");
            if (st->hidden) { /* no rate to hold: its text says why */
                snprintf(meas, sizeof meas, "-");
                snprintf(eff, sizeof eff, "-");
                snprintf(lost, sizeof lost, "0");
            }
        } else {
            snprintf(ceil, sizeof ceil, "no ceiling");
            snprintf(eff, sizeof eff, "-");
            snprintf(atc, sizeof atc, "-");
            snprintf(lost, sizeof lost, "-");
        }
        mb_fmt_share(share, sizeof share, st->share);
        (void)atc;
        char name[96];
        short_name(name, sizeof name, s->name, md ? 1 << 20 : 24);
        const char *row[] = { name, what, tm, ex, meas, ceil, eff, lost, share };
        mb_table_row(&t, row);
    }
    if (g->unaccounted > 0) {
        char tm[32], share[32];
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, g->unaccounted));
        mb_fmt_share(share, sizeof share, g->unaccounted / g->total);
        const char *row[] = { "(no stage)", "", tm, tm, "", "", "", "", share };
        mb_table_row(&t, row);
    }
    {
        char tm[32];
        mb_fmt_seconds(tm, sizeof tm, mb_gap_per_step(g, g->total));
        const char *row[] = { md ? "**total**" : "total", "", "", tm, "", "", "", "", "100.0%" };
        mb_table_row(&t, row);
    }
    mb_table_print(o, indented(&t), md);
    mb_table_free(&t);
}

/* "  name           text", the text wrapped under itself; a long name
 * takes its own line. */

static void put_named(FILE *o, const char *lead, int name_w, const char *name, const char *text)
{
    const int NAME_W = name_w;
    int at = width(lead) + NAME_W;
    fprintf(o, "%s%s", lead, name);
    int w = width(name);
    if (w >= NAME_W) {
        fputc('\n', o);
        pad(o, at);
    } else {
        pad(o, NAME_W - w);
    }
    put_wrapped(o, at, at, text);
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
            if (md) {
                fprintf(o, "- **%s**: `%s`%s\n", st->stage->name, cr->label, rest);
            } else {
                char line[MB_GAP_WHY_LEN + 256];
                snprintf(line, sizeof line, "%s%s", cr->label, rest);
                put_named(o, "  ", name_width(g), st->stage->name, line);
            }
        } else if (md) {
            fprintf(o, "- **%s**: %s\n", st->stage->name, st->why);
        } else {
            put_named(o, "  ", name_width(g), st->stage->name, st->why);
        }
        if (st->match >= 0 && strcmp(g->ceilings->cases[st->match].phase, "median") != 0)
            fprintf(o, "%s%-*sceiling: the case's %s rate (%s)\n", md ? "  - " : "  ", md ? 0 : 15, "",
                    g->ceilings->cases[st->match].phase,
                    md ? "`--ceiling burst|sustained`" : "--ceiling burst|sustained");
        if (st->beyond[0]) /* wrapped: the text keeps within 120 columns */
            put_item(o, md, md ? "  - " : "                 ", st->beyond);
        else if (st->above_ceiling)
            put_item(o, md, md ? "  - " : "                 ",
                     "at its ceiling within the case's noise ([above_ceiling] margin): no time lost counted");
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
        char lost[32], share[32], eff[32], line[256];
        mb_fmt_seconds(lost, sizeof lost, mb_gap_per_step(g, st->time_lost));
        mb_fmt_share(share, sizeof share, st->time_lost / g->total);
        mb_fmt_share(eff, sizeof eff, st->efficiency);
        snprintf(line, sizeof line, "%s per %s (%s of the %s), at %s of its ceiling", lost, run_unit_word(g), share,
                 run_unit_word(g), eff);
        if (md) {
            fprintf(o, "%d. **%s**: %s\n", ++shown, st->stage->name, line);
        } else {
            char num[16];
            snprintf(num, sizeof num, "  %d. ", ++shown);
            put_named(o, num, name_width(g), st->stage->name, line);
        }
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
    mb_table t;
    mb_table_init(&t, "lrr", md ? "stage" : "", run_unit_word(g), "speed-up");
    char now[32];
    mb_fmt_seconds(now, sizeof now, mb_gap_per_step(g, g->total));
    const char *first[] = { "now", now, "1.00x" };
    mb_table_row(&t, first);
    for (int k = 0; k < g->n; k++) {
        const mb_gap_stage *st = &g->stages[g->ranking[k]];
        if (!mb_gap_stage_bounded(st))
            continue;
        char a[32], sp[32];
        mb_fmt_seconds(a, sizeof a, mb_gap_per_step(g, st->amdahl_total));
        snprintf(sp, sizeof sp, "%.2fx", st->amdahl_speedup);
        char name[96];
        short_name(name, sizeof name, st->stage->name, md ? 1 << 20 : 40);
        const char *row[] = { name, a, sp };
        mb_table_row(&t, row);
    }
    char a[32], sp[32];
    mb_fmt_seconds(a, sizeof a, mb_gap_per_step(g, g->all_total));
    snprintf(sp, sizeof sp, "%.2fx", g->all_speedup);
    char label[96], bounded[32];
    mb_fmt_share(bounded, sizeof bounded, g->bounded_share);
    snprintf(label, sizeof label, "all stages with a ceiling (%s of the %s)", bounded, run_unit_word(g));
    const char *all[] = { label, a, sp };
    mb_table_row(&t, all);
    mb_table_print(o, indented(&t), md);
    mb_table_free(&t);
}

static void gap_diagnosis(FILE *o, const mb_diagnosis *d, bool md)
{
    if (d == NULL)
        return;
    fprintf(o, md ? "\n## Diagnosis\n\nFrom %s.\n\n" : "\ndiagnosis (from %s)\n", d->fig.source);
    if (d->n == 0)
    {
        if (md)
            fprintf(o, "%s.\n", d->balanced);
        else
            put_item(o, md, "  ", d->balanced);
    }
    for (int i = 0; i < d->n; i++) {
        const mb_finding *f = &d->findings[i];
        const char *rank = i == 0 ? "primary" : i == 1 && d->runner_up ? "runner-up" : "also";
        fprintf(o, md ? "### %d. %s (%s, %.1f%%)\n\n" : "  %d. %s (%s, %.1f%%)\n", i + 1, f->title, rank,
                100 * f->weight);
        for (int j = 0; j < f->n_evidence; j++)
            put_item(o, md, md ? "- " : "     - ", f->evidence[j]);
        if (f->n_remedies)
            fprintf(o, md ? "\nRemedies:\n\n" : "     remedies:\n");
        for (int j = 0; j < f->n_remedies; j++)
            put_item(o, md, md ? "- " : "     * ", f->remedies[j]);
        if (md)
            fputc('\n', o);
    }
    for (int i = 0; i < d->n_notes; i++)
        put_item(o, md, md ? "- note: " : "  note: ", d->notes[i]);
}

/* Writes "<lead><text>" wrapped at 120 columns, continuation lines indented
 * under the text: notes are wrapped, never cut; a word longer than a line (a
 * case id) is cut into lines. */
static void print_wrapped(FILE *o, const char *lead, const char *text)
{
    fputs(lead, o);
    mb_text_wrap(o, width(lead), width(lead), text, MB_TEXT_CUT | MB_TEXT_BYTES);
}

static void gap_projection(FILE *o, const mb_gap *g, const mb_diagnosis *d, bool md)
{
    if (!g->has_target)
        return;
    fprintf(o, md ? "\n## Projection onto %s (%s)\n\n" : "\nprojection onto %s (%s)\n", g->target_label,
            g->target_kind);
    /* one time basis: each stage's exposed time here and there (hidden time
     * stays hidden), so the rows add up to the step on both sides */
    mb_table t;
    mb_table_init(&t, "lrrl", "stage", "here (exposed)", "there (exposed)", "from");
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *st = &g->stages[i];
        char h[32], th[32];
        mb_fmt_seconds(h, sizeof h, mb_gap_per_step(g, st->exposed));
        mb_fmt_seconds(th, sizeof th, mb_gap_per_step(g, st->target_seconds));
        const char *row[] = { st->stage->name, h, th, st->target_source ? st->target_source : "kept" };
        mb_table_row(&t, row);
    }
    if (g->unaccounted > 0) {
        char h[32];
        mb_fmt_seconds(h, sizeof h, mb_gap_per_step(g, g->unaccounted));
        const char *row[] = { "(no stage)", h, h, "kept" };
        mb_table_row(&t, row);
    }
    char h[32], th[32], sp[64];
    mb_fmt_seconds(h, sizeof h, mb_gap_per_step(g, g->total));
    mb_fmt_seconds(th, sizeof th, mb_gap_per_step(g, g->target_total));
    double speedup = mb_speedup(g->total, g->target_total);
    if (speedup >= 1)
        snprintf(sp, sizeof sp, "%.2fx faster there", speedup);
    else
        snprintf(sp, sizeof sp, "%.2fx slower there", speedup > 0 ? 1 / speedup : 0);
    const char *row[] = { run_unit_word(g), h, th, sp };
    mb_table_row(&t, row);
    mb_table_print(o, indented(&t), md);
    mb_table_free(&t);
    fprintf(o, md ? "\nHow each stage was projected:\n\n" : "  how each stage was projected:\n");
    for (int i = 0; i < g->n; i++) {
        char lead[96];
        snprintf(lead, sizeof lead, md ? "- %.60s: " : "  - %.60s: ", g->stages[i].stage->name);
        print_wrapped(o, lead, g->stages[i].target_why);
    }
    if (g->unaccounted > 0)
        print_wrapped(o, md ? "- (no stage): " : "  - (no stage): ", "time in no stage is unchanged");
    int here = d ? d->bottleneck_stage : g->bottleneck; /* the stage behind the one bottleneck */
    if (g->target_bottleneck >= 0 && g->target_bottleneck != here) {
        const mb_gap_stage *b = &g->stages[g->target_bottleneck];
        fprintf(o, md ? "\nNew bottleneck: **%s** (%.1f%% of the %s there; here: %s, %.1f%%)\n"
                      : "  new bottleneck: %s (%.1f%% of the %s there; here: %s, %.1f%%)\n",
                b->stage->name, 100 * b->target_seconds / g->target_total, run_unit_word(g),
                g->stages[here].stage->name, 100 * g->stages[here].share);
    } else if (g->target_bottleneck >= 0) {
        const mb_gap_stage *b = &g->stages[g->target_bottleneck];
        fprintf(o, md ? "\nBottleneck unchanged: **%s** (%.1f%% of the %s there)\n"
                      : "  bottleneck unchanged: %s (%.1f%% of the %s there)\n",
                b->stage->name, 100 * b->target_seconds / g->target_total, run_unit_word(g));
    }
    fprintf(o, md ? "\nAssumptions:\n\n" : "  assumptions:\n");
    for (int i = 0; i < g->n_assumptions; i++)
        print_wrapped(o, md ? "- " : "  - ", g->assumptions[i]);
}

static void gap_warnings(FILE *o, const mb_gap *g, bool md)
{
    const mb_run *r = g->run;
    if (r->n_warnings == 0 && g->n_notes == 0)
        return;
    fprintf(o, md ? "\n## Warnings\n\n" : "\nwarnings\n");
    for (int i = 0; i < g->n_notes; i++)
        put_item(o, md, md ? "- " : "  - ", g->notes[i]);
    for (int i = 0; i < r->n_warnings; i++)
        put_item(o, md, md ? "- " : "  - ", r->warnings[i]);
}

/* Simplify runs (stage files version 2): each stage at three levels, the
 * hardware ceiling, the part alone, the part in the full loop, and which gap
 * is which (mb_gap_stage_levels, MB_LEVELS_TOLERANCE in gap.h). */

static void gap_levels_table(FILE *o, const mb_gap *g, bool md)
{
    if (!mb_gap_has_levels(g))
        return;
    fprintf(o, md ? "\n## Three levels per stage (simplify)\n\n"
                  : "\nthree levels per stage (simplify): hardware ceiling -> the part alone -> in the full loop\n");
    mb_table t;
    mb_table_init(&t, "lrrrrrrl", "stage", "at ceiling", "alone", "in loop", "rate alone", "rate in loop", "exposed",
             "verdict");
    t.fit_col = 7; /* the verdict wraps: "negligible (under 1% of the step)" beside a long stage name took 126 */
    t.fit_min = 20;
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
        mb_table_row(&t, row);
    }
    mb_table_print(o, indented(&t), md);
    mb_table_free(&t);
    fprintf(o, md ? "\n" : "");
    char legend[640];
    mb_gap_levels_legend(legend, sizeof legend);
    print_wrapped(o, md ? "" : "  ", legend); /* 120 columns, like every text output */
    for (int i = 0; i < g->n; i++) {
        mb_gap_levels L = mb_gap_stage_levels(g, i, MB_LEVELS_TOLERANCE);
        char note[512];
        if (!mb_gap_levels_work_note(g, i, &L, note, sizeof note))
            continue;
        if (md)
            fputc('\n', o); /* a paragraph of its own */
        print_wrapped(o, md ? "" : "  ", note);
    }
}


static void gap_text(FILE *o, const mb_gap *g, const mb_diagnosis *d, bool md)
{
    gap_header(o, g, md);
    fputc('\n', o);
    gap_headline_text(o, g, d, md);
    gap_step_table(o, g, md);
    gap_stage_table(o, g, md);
    gap_levels_table(o, g, md);
    gap_matches(o, g, md);
    gap_ranking(o, g, md);
    gap_amdahl(o, g, md);
    gap_diagnosis(o, d, md);
    gap_projection(o, g, d, md);
    if (g->projection_text) /* the machines ranked (project_rank.c) */
        fputs(g->projection_text, o);
    gap_warnings(o, g, md);
}

/* ---- gap: JSON ----------------------------------------------------------------------- */

static cJSON *levels_json(const mb_gap *g, const mb_gap_stage *st)
{
    mb_gap_levels L = mb_gap_stage_levels(g, (int)(st - g->stages), MB_LEVELS_TOLERANCE);
    if (!L.has_levels)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    add_num_or_null(o, "ceiling_seconds_per_step", mb_gap_per_step(g, L.ceiling_seconds), L.has_ceiling);
    cJSON_AddNumberToObject(o, "isolated_seconds_per_step", mb_gap_per_step(g, L.isolated_seconds));
    cJSON_AddNumberToObject(o, "loop_seconds_per_step", mb_gap_per_step(g, L.loop_seconds));
    if (st->stage->has_isolated_work) /* the part did other work alone (simplify's loader) */
        cJSON_AddNumberToObject(o, "isolated_work_per_step", mb_gap_per_step(g, st->stage->isolated_work));
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
    /* a matmul stage's bytes moved at least, and which side of the roofline held it ([roofline]) */
    add_num_or_null(o, "min_bytes", s->min_bytes, s->min_bytes > 0);
    add_str_or_null(o, "roofline", s->min_bytes > 0 && st->match >= 0 ? (st->by_bytes ? "memory" : "compute") : NULL);
    cJSON_AddNumberToObject(o, "seconds", s->seconds);
    cJSON_AddNumberToObject(o, "seconds_per_step", mb_gap_per_step(g, s->seconds));
    cJSON_AddNumberToObject(o, "exposed_seconds", st->exposed);
    cJSON_AddNumberToObject(o, "hidden_seconds", s->seconds - st->exposed);
    add_num_or_null(o, "measured_rate", st->measured_rate, has_work && !st->hidden);
    add_num_or_null(o, "ceiling_rate", st->ceiling_rate, st->match >= 0);
    add_str_or_null(o, "rate_unit", has_work ? (strcmp(s->work_unit, "flop") == 0 ? "flop/s"
                                                : strcmp(s->work_unit, "byte") == 0 ? "byte/s"
                                                : strcmp(s->work_unit, "launch") == 0 ? "launch/s"
                                                : "sync/s")
                                             : NULL);
    add_num_or_null(o, "efficiency", st->efficiency, st->match >= 0 && !st->hidden);
    add_num_or_null(o, "seconds_at_ceiling", st->time_at_ceiling, st->match >= 0);
    add_num_or_null(o, "seconds_lost", st->time_lost, st->match >= 0);
    cJSON_AddBoolToObject(o, "above_ceiling", st->above_ceiling);
    cJSON_AddBoolToObject(o, "bounded", mb_gap_stage_bounded(st));
    if (st->beyond[0])
        cJSON_AddStringToObject(o, "beyond", st->beyond);
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
    cJSON_AddNumberToObject(o, "periodic_share", f->periodic_share);
    cJSON_AddNumberToObject(o, "unattributed_share", f->unattributed_share);
    cJSON_AddBoolToObject(o, "random_disk", f->random_disk);
    cJSON_AddBoolToObject(o, "fp32_compute", f->fp32_compute);
    cJSON_AddBoolToObject(o, "tf32_compute", f->tf32_compute);
    cJSON_AddBoolToObject(o, "step_table", f->step_table);
    if (f->step_table) {
        cJSON_AddNumberToObject(o, "tensor_share", f->tensor_share);
        cJSON_AddNumberToObject(o, "memory_bound_share", f->memory_share);
        cJSON_AddNumberToObject(o, "launch_idle_share", f->launch_idle_share);
        cJSON_AddNumberToObject(o, "host_idle_share", f->host_idle_share);
    }
    add_num_or_null(o, "kernels_per_step", f->kernels_per_step, f->kernels_per_step >= 0);
    add_num_or_null(o, "median_kernel_seconds", f->median_kernel_s, f->median_kernel_s > 0);
    add_num_or_null(o, "host_seconds_per_op", f->host_op_s, f->host_op_s > 0);
    add_num_or_null(o, "host_seconds_per_kernel", f->host_kernel_s, f->host_kernel_s > 0);
    add_num_or_null(o, "launch_ceiling_seconds", f->launch_ceiling_s, f->launch_ceiling_s > 0);
    add_num_or_null(o, "tensor_efficiency", f->tensor_efficiency, f->tensor_efficiency >= 0);
    add_num_or_null(o, "memory_bound_bytes_per_s", f->memory_rate, f->memory_rate >= 0);
    add_num_or_null(o, "memory_bound_ceiling_bytes_per_s", f->memory_ceiling, f->memory_ceiling > 0);
    add_num_or_null(o, "memory_bound_bandwidth_bytes_per_s", f->memory_bandwidth, f->memory_bandwidth > 0);
    add_num_or_null(o, "memory_bound_efficiency", f->memory_efficiency, f->memory_efficiency >= 0);
    if (f->memory_ceiling_case)
        cJSON_AddStringToObject(o, "memory_bound_ceiling_case", f->memory_ceiling_case);
    else
        cJSON_AddNullToObject(o, "memory_bound_ceiling_case");
    add_num_or_null(o, "memory_bound_shaped_share", f->memory_shaped_share, f->memory_shaped_share >= 0);
    cJSON_AddBoolToObject(o, "cpu_only", f->cpu_only);
    add_num_or_null(o, "torch_threads", f->torch_threads, f->torch_threads > 0);
    add_num_or_null(o, "host_ranks", f->host_ranks, f->host_ranks > 0);
    add_num_or_null(o, "cpus_allowed", f->cpus_allowed, f->cpus_allowed > 0);
    return o;
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
    /* the headline: every stage by exposed time, with or without a ceiling */
    cJSON *head = cJSON_AddObjectToObject(doc, "headline");
    cJSON_AddNumberToObject(head, "bounded_share", g->bounded_share);
    cJSON *hs = cJSON_AddArrayToObject(head, "stages");
    for (int k = 0; k < g->n; k++) {
        const mb_gap_stage *st = &g->stages[g->headline[k]];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", st->stage->name);
        cJSON_AddNumberToObject(o, "exposed_seconds_per_step", mb_gap_per_step(g, st->exposed));
        cJSON_AddNumberToObject(o, "share", st->share);
        cJSON_AddBoolToObject(o, "has_ceiling", mb_gap_stage_bounded(st));
        add_num_or_null(o, "seconds_lost_per_step", mb_gap_per_step(g, st->time_lost), st->match >= 0);
        add_num_or_null(o, "efficiency", st->efficiency, st->match >= 0 && !st->hidden);
        add_str_or_null(o, "no_ceiling", st->match >= 0 ? (st->beyond[0] ? st->beyond : NULL) : st->bound_hint);
        cJSON_AddItemToArray(hs, o);
    }
    cJSON *am = cJSON_AddObjectToObject(doc, "amdahl");
    cJSON_AddNumberToObject(am, "step_seconds_now", mb_gap_per_step(g, g->total));
    cJSON_AddNumberToObject(am, "step_seconds_all_at_ceiling", mb_gap_per_step(g, g->all_total));
    cJSON_AddNumberToObject(am, "speedup_all", g->all_speedup);
    /* the one bottleneck: the diagnosis' words, its share, the stage behind it */
    cJSON_AddStringToObject(doc, "bottleneck", d ? d->bottleneck : g->stages[g->bottleneck].stage->name);
    cJSON_AddNumberToObject(doc, "bottleneck_share", d ? d->bottleneck_share : g->stages[g->bottleneck].share);
    cJSON_AddStringToObject(doc, "bottleneck_stage", g->stages[d ? d->bottleneck_stage : g->bottleneck].stage->name);
    add_str_or_null(doc, "bottleneck_note", d && d->bottleneck_note[0] ? d->bottleneck_note : NULL);
    if (d) {
        cJSON *dj = cJSON_AddObjectToObject(doc, "diagnosis");
        cJSON_AddItemToObject(dj, "figures", figures_json(&d->fig));
        add_str_or_null(dj, "primary", d->n > 0 ? d->findings[0].id : NULL);
        add_str_or_null(dj, "runner_up", d->runner_up ? d->findings[1].id : NULL);
        add_str_or_null(dj, "balanced", d->n == 0 ? d->balanced : NULL);
        cJSON_AddItemToObject(dj, "notes", strings_json(d->notes, d->n_notes));
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
    if (g->projection_json) /* the kernel-level projection and ranking (project_rank.c) */
        cJSON_AddItemToObject(doc, "machines", cJSON_Duplicate(g->projection_json, true));
    return doc;
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
