/* project_rank.c: the run projected onto several machines and ranked
 * (project_rank.h). */
#include "project_rank.h"
#include "suite.h"
#include "vocabulary.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "format.h"
#include "html.h"
#include "svg.h"
#include "text.h"
#include "gap.h"
#include "hardware.h"
#include "paths.h"
#include "reference.h"

static const char *const class_names[MB_PC_N] = { "tensor", "memory", "copy", "communication", "kernel_wait",
                                                  "host" };
static const char class_marks[MB_PC_N] = { '#', '=', '+', '~', ':', '.' };
/* The classes in words, for legends and charts. */
static const char *const class_words[MB_PC_N] = { "matrix math", "memory-bound", "host<->device copies",
                                                  "communication", "kernel wait (GPU idle)",
                                                  "host (GPU idle)" };
/* The same, for a run whose step is the host CPU's own compute (no GPU to idle). */
static const char *const class_words_cpu[MB_PC_N] = { "matrix math", "memory-bound", "host<->device copies",
                                                      "communication", "kernel wait", "host CPU" };
/* The classes in the colours the step's parts have on every page (report/html.h). */
static const int class_colors[MB_PC_N] = { MB_COLOR_TENSOR, MB_COLOR_MEMORY, MB_COLOR_COPY, MB_COLOR_COMM,
                                           MB_COLOR_KERNEL_WAIT, MB_COLOR_HOST };

static const char *const *words_of(const mb_ranking *r)
{
    return r->host_run ? class_words_cpu : class_words;
}

/* The classes a legend lists, their words, colours (cols may be NULL) and
 * bar marks (marks may be NULL): kernel wait only where a step has some (a
 * CPU run or a stage file has none). Returns how many. */
static int shown_classes(const mb_ranking *r, const char **names, int *cols, char *marks)
{
    bool queued = r->here_cls[MB_PC_QUEUED] > 0;
    for (int i = 0; i < r->n; i++)
        queued |= r->rows[i].ok && r->rows[i].cls[MB_PC_QUEUED] > 0;
    int n = 0;
    for (int c = 0; c < MB_PC_N; c++) {
        if (c == MB_PC_QUEUED && !queued)
            continue;
        names[n] = words_of(r)[c];
        if (cols)
            cols[n] = class_colors[c];
        if (marks)
            marks[n] = class_marks[c];
        n++;
    }
    return n;
}

static bool is_file(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_trace(const mb_run *run)
{
    return run->kind && strcmp(run->kind, "pytorch-trace") == 0;
}

/* A trace without GPU events (trace_cpu.c: its step table is the host's):
 * no kernel to project, its stages are the per-stage model's. */
static bool cpu_trace(const mb_run *run)
{
    const cJSON *step = run->evidence ? cJSON_GetObjectItemCaseSensitive(run->evidence, "step") : NULL;
    const cJSON *where = cJSON_IsObject(step) ? cJSON_GetObjectItemCaseSensitive(step, "where") : NULL;
    return is_trace(run) && cJSON_IsString(where) && strcmp(where->valuestring, "cpu") == 0;
}

/* A trace's GPU idle time in allocation and set-up calls, seconds a step
 * (its step table's "setup" part; 0 without one). */
static double setup_seconds(const mb_run *run)
{
    const cJSON *step = run->evidence ? cJSON_GetObjectItemCaseSensitive(run->evidence, "step") : NULL;
    const cJSON *parts = cJSON_IsObject(step) ? cJSON_GetObjectItemCaseSensitive(step, "parts") : NULL, *p;
    cJSON_ArrayForEach(p, parts)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(p, "id");
        const cJSON *sec = cJSON_GetObjectItemCaseSensitive(p, "seconds");
        if (cJSON_IsString(id) && strcmp(id->valuestring, "setup") == 0 && cJSON_IsNumber(sec))
            return sec->valuedouble;
    }
    return 0;
}

/* A trace's count at `path` of its evidence is 0 (false: not a trace, or
 * the count is not there). */
static bool trace_count_zero(const mb_run *run, const char *a, const char *b)
{
    const cJSON *o = run->evidence ? cJSON_GetObjectItemCaseSensitive(run->evidence, a) : NULL;
    const cJSON *n = cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, b) : NULL;
    if (cJSON_IsObject(n)) /* {count, seconds} */
        n = cJSON_GetObjectItemCaseSensitive(n, "count");
    return cJSON_IsNumber(n) && n->valuedouble == 0;
}

/* Most of the host's time here is set-up the trace holds once (its start):
 * what bounds that trace on every machine is not the loop's step. */
static bool setup_holds_host(const mb_ranking *r)
{
    return r->here_setup > 0 && r->here_setup >= 0.5 * r->here_cls[MB_PC_HOST];
}

/* "; 1.34 s of the 1.72 s the host takes here is one-time set-up ...": said
 * where the host bounds a step whose host time is mostly set-up. */
static void setup_clause(const mb_ranking *r, char *buf, size_t len)
{
    char s[32], h[32];
    mb_fmt_seconds(s, sizeof s, r->here_setup);
    mb_fmt_seconds(h, sizeof h, r->here_cls[MB_PC_HOST]);
    snprintf(buf, len, "%s of the %s the host takes here is one-time set-up in the trace (allocation, module loading, "
             "the context's creation), paid once on every machine: profile after warm-up "
             "(torch.profiler.schedule with warmup steps) for the loop's own answer", s, h);
}

bool mb_rank_gpus_unrecorded(const mb_run *run)
{
    const cJSON *step = run->evidence ? cJSON_GetObjectItemCaseSensitive(run->evidence, "step") : NULL;
    const cJSON *n = cJSON_IsObject(step) ? cJSON_GetObjectItemCaseSensitive(step, "gpus_unrecorded") : NULL;
    return cpu_trace(run) && cJSON_IsNumber(n) && n->valuedouble > 0;
}

bool mb_rank_wanted(const char *targets, const mb_run *run)
{
    if (targets == NULL)
        return false;
    return strcmp(targets, "all") == 0 || strchr(targets, ',') != NULL || is_trace(run);
}

/* ---- the machines ------------------------------------------------------------ */

typedef struct name_list {
    char **v;
    int n;
} name_list;

static int list_add(name_list *l, const char *s, mb_err *err)
{
    for (int i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0)
            return MB_OK; /* a reference and its datasheet's stem may coincide: once */
    char **v = realloc(l->v, sizeof *v * (size_t)(l->n + 1));
    if (v == NULL || (v[l->n] = strdup(s)) == NULL) {
        if (v)
            l->v = v;
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    l->v = v;
    l->n++;
    return MB_OK;
}

static void list_free(name_list *l)
{
    for (int i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* `all`: every reference machine, then every GPU datasheet not already a
 * reference's, each list sorted. */
static int list_all(name_list *l, mb_err *err)
{
    const char *roots[2] = { mb_reference_root(), NULL };
    char hw[PATH_MAX];
    mb_config_path(hw, sizeof hw, "hardware");
    roots[1] = hw;
    for (int k = 0; k < 2; k++) {
        DIR *d = opendir(roots[k]);
        if (d == NULL)
            continue;
        name_list found = { 0 };
        struct dirent *e;
        int rc = MB_OK;
        while ((e = readdir(d)) != NULL && rc == MB_OK) {
            if (e->d_name[0] == '.')
                continue;
            char stem[256];
            snprintf(stem, sizeof stem, "%s", e->d_name);
            if (k == 0 && mb_reference_exists(stem))
                rc = list_add(&found, stem, err);
            else if (k == 1 && ends_with(stem, ".ini")) {
                stem[strlen(stem) - 4] = '\0';
                mb_datasheet *s = NULL;
                mb_err why = { 0 };
                if (mb_datasheet_find(stem, &s, &why) == MB_OK && mb_datasheet_is_gpu(s))
                    rc = list_add(&found, stem, err);
                mb_datasheet_free(s);
            }
        }
        closedir(d);
        if (found.n > 1)
            qsort(found.v, (size_t)found.n, sizeof *found.v, cmp_str);
        for (int i = 0; i < found.n && rc == MB_OK; i++)
            rc = list_add(l, found.v[i], err);
        list_free(&found);
        if (rc)
            return rc;
    }
    return MB_OK;
}

static int parse_targets(const char *targets, name_list *l, mb_err *err)
{
    if (strcmp(targets, "all") == 0)
        return list_all(l, err);
    char *copy = strdup(targets), *save = NULL;
    if (copy == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = MB_OK;
    for (char *t = strtok_r(copy, ",", &save); t && rc == MB_OK; t = strtok_r(NULL, ",", &save)) {
        while (isspace((unsigned char)*t))
            t++;
        if (*t == '\0')
            continue;
        rc = strcmp(t, "all") == 0 ? list_all(l, err) : list_add(l, t, err);
    }
    free(copy);
    if (rc == MB_OK && l->n == 0)
        rc = mb_errf(err, MB_EUSAGE, "--target %s: no machine named", targets);
    return rc;
}

/* The best verified rate of GPU cases of `component` (and dtype, and
 * membw op, when given), in work units per second; 0 when none. */
static double best_case(const mb_ceilings *c, const char *component, const char *dtype, const char *op)
{
    double best = 0;
    for (int i = 0; c && i < c->n_cases; i++) {
        const mb_case_ref *k = &c->cases[i];
        if (!k->usable || strcmp(k->component, component) != 0 || (k->device && strcmp(k->device, "gpu") != 0))
            continue;
        const char *d = mb_case_param(k, "dtype");
        if (dtype && (d == NULL || strcmp(d, dtype) != 0))
            continue;
        const char *o = mb_case_param(k, "op");
        if (op && (o == NULL || strcmp(o, op) != 0))
            continue;
        if (k->rate_abs > best)
            best = k->rate_abs;
    }
    return best;
}

/* What a measured figure is taken from: the best of these kinds of case that
 * were measured. */
typedef struct figure_source {
    const char *component, *dtype, *op;
} figure_source;

static const char *const pm_dtype[MB_PM_N] = { "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "fp64" };
static const char *const membw_ops[] = { "read", "write", "copy", "triad" };

/* The best rate of the sources on one machine, over only the sources `other`
 * measured too (NULL: all): two machines' figures then come from the same
 * kinds of case (like with like). A results file cut short that lacks the
 * CUDA cores' fp32 peak case, say, must not be held against a machine whose
 * fp32 figure comes from it. */
static double best_of(const mb_ceilings *c, const mb_ceilings *other, const figure_source *src, int n)
{
    double best = 0;
    for (int i = 0; i < n; i++) {
        if (other && best_case(other, src[i].component, src[i].dtype, src[i].op) <= 0)
            continue;
        best = fmax(best, best_case(c, src[i].component, src[i].dtype, src[i].op));
    }
    return best;
}

/* Replaces the datasheet figures of g by what `c` measured on that GPU:
 * memory bandwidth (membw ops), GEMM math per dtype, the CUDA cores' fp32
 * (peak), each from the kinds of case `other` measured too when it is given.
 * True when any figure was measured. */
static bool overlay_measured(mb_proj_gpu *g, const mb_ceilings *c, const mb_ceilings *other)
{
    bool any = false;
    figure_source bw_src[sizeof membw_ops / sizeof *membw_ops];
    for (size_t i = 0; i < sizeof membw_ops / sizeof *membw_ops; i++)
        bw_src[i] = (figure_source){ "membw", NULL, membw_ops[i] };
    double bw = best_of(c, other, bw_src, (int)(sizeof bw_src / sizeof *bw_src));
    if (bw > 0) {
        g->bw = bw;
        any = true;
    }
    for (int m = 0; m < MB_PM_N; m++) {
        figure_source src[2] = { { "gemm", pm_dtype[m], NULL }, { "peak", "fp32", NULL } };
        double f = best_of(c, other, src, m == MB_PM_FP32 ? 2 : 1);
        if (f > 0) {
            g->flops[m] = f;
            any = true;
        }
    }
    return any;
}

/* A machine to project onto: its GPU figures for the kernel model, and the
 * pieces the per-stage model needs. */
typedef struct machine {
    char label[96];
    bool measured;
    bool have_gpu;
    char gpu_why[1100];
    mb_proj_gpu gpu;
    mb_reference ref;
    bool is_ref;
    mb_ceilings results;
    bool is_results;
    mb_datasheet *sheet; /* owned when not the reference's */
} machine;

static void machine_free(machine *m)
{
    if (m->is_ref)
        mb_reference_free(&m->ref);
    else
        mb_datasheet_free(m->sheet);
    if (m->is_results)
        mb_ceilings_free(&m->results);
    memset(m, 0, sizeof *m);
}

static void machine_gpu(machine *m, const mb_datasheet *sheet, const mb_ceilings *measured)
{
    mb_err why = { 0 };
    if (sheet == NULL) {
        snprintf(m->gpu_why, sizeof m->gpu_why, "no GPU datasheet for this machine");
        return;
    }
    if (!mb_datasheet_is_gpu(sheet)) {
        snprintf(m->gpu_why, sizeof m->gpu_why, "%s is not a GPU", mb_datasheet_name(sheet));
        return;
    }
    if (mb_proj_gpu_from_datasheet(sheet, &m->gpu, &why)) {
        snprintf(m->gpu_why, sizeof m->gpu_why, "%s", why.msg);
        return;
    }
    m->have_gpu = true;
    if (measured)
        m->measured = overlay_measured(&m->gpu, measured, NULL);
}

static int machine_load(const char *name, const char *phase, machine *m, mb_err *err)
{
    memset(m, 0, sizeof *m);
    if (!is_file(name) && mb_reference_exists(name)) {
        if (mb_reference_load(name, &m->ref, err) || mb_ceilings_use_phase(&m->ref.measured, phase, err))
            return err->code;
        m->is_ref = true;
        m->sheet = m->ref.sheet;
        snprintf(m->label, sizeof m->label, "%s", mb_reference_label(&m->ref));
        machine_gpu(m, m->sheet, &m->ref.measured);
        return MB_OK;
    }
    if (ends_with(name, ".json") || (is_file(name) && !ends_with(name, ".ini"))) {
        if (mb_ceilings_load(name, &m->results, err) || mb_ceilings_use_phase(&m->results, phase, err))
            return err->code;
        m->is_results = true;
        snprintf(m->label, sizeof m->label, "%s", mb_ceilings_label(&m->results));
        mb_err why = { 0 };
        if (mb_datasheet_match(m->results.machine, &m->sheet, &why) != MB_OK)
            m->sheet = NULL;
        machine_gpu(m, m->sheet, &m->results);
        return MB_OK;
    }
    mb_err why = { 0 };
    int rc = is_file(name) ? mb_datasheet_load(name, &m->sheet, &why) : mb_datasheet_find(name, &m->sheet, &why);
    if (rc)
        return mb_errf(err, rc == MB_ESYS ? MB_ESYS : MB_EUSAGE,
                       "--target %s: %s (a target is a results file, a reference machine, a datasheet of "
                       "configs/hardware, a comma-separated list of them, or all)",
                       name, why.msg);
    snprintf(m->label, sizeof m->label, "%s", mb_datasheet_name(m->sheet));
    machine_gpu(m, m->sheet, NULL);
    return MB_OK;
}

/* The row's checked error in its mode, for a trace that ran on here_stem
 * (project_checked.h: this project's pairs where they projected from that
 * GPU, else the public data's leave-one-GPU-out figure; never checked: the
 * nearest checked class). A malformed line is an error naming it. */
static int checked_error(const mb_ini *errors, const mb_datasheet *sheet, const char *here_stem, mb_rank_row *row,
                         mb_err *err)
{
    int rc = mb_checked_find(errors, row->source, mb_datasheet_stem(sheet), here_stem, &row->checked, err);
    row->checked_pct = row->checked.pct;
    row->checked_n = row->checked.n;
    return rc;
}

/* ---- the per-stage model (stage files) ------------------------------------------- */

static int class_of_component(const char *c)
{
    if (c == NULL)
        return MB_PC_HOST;
    if (!strcmp(c, "gemm") || !strcmp(c, "conv") || !strcmp(c, "attention") || !strcmp(c, "peak"))
        return MB_PC_TENSOR;
    if (!strcmp(c, "membw") || !strcmp(c, "memset"))
        return MB_PC_MEMORY;
    if (!strcmp(c, "copy") || !strcmp(c, "pcie"))
        return MB_PC_COPY;
    if (!strcmp(c, "nccl") || !strcmp(c, "coll") || !strcmp(c, "p2p") || mb_is_collective(c))
        return MB_PC_COMM;
    return MB_PC_HOST;
}

static void stage_split(const mb_gap *g, bool there, double *cls, double *comm_on_host)
{
    for (int c = 0; c < MB_PC_N; c++)
        cls[c] = 0;
    for (int i = 0; i < g->n; i++) {
        const mb_gap_stage *s = &g->stages[i];
        const char *dev = s->stage->device, *role = s->stage->role;
        /* a CPU's GEMMs are the host's time, not matrix math; a collective on the host (gloo, MPI) is
         * communication all the same (a 300-rank gloo run's all-reduce, 85% of its step, was drawn as host
         * code, under "the host ... bounds the step ... CUDA Graphs"); a GPU's idle between kernels it had
         * queued (role overhead: a trace's kernel wait) is neither */
        int c = class_of_component(s->stage->component);
        bool on_cpu = dev && strcmp(dev, "cpu") == 0;
        if (!on_cpu && role && strcmp(role, "overhead") == 0)
            c = MB_PC_QUEUED;
        double t = mb_gap_per_step(g, there ? s->target_seconds : s->exposed);
        cls[on_cpu && c != MB_PC_COMM ? MB_PC_HOST : c] += t;
        if (comm_on_host && on_cpu && c == MB_PC_COMM)
            *comm_on_host += t;
    }
    cls[MB_PC_HOST] += mb_gap_per_step(g, g->unaccounted);
}

static int per_stage_row(const mb_run *run, const mb_ceilings *here, const mb_ini *matching, machine *m,
                         mb_rank_row *row, mb_err *err)
{
    mb_gap g;
    memset(&g, 0, sizeof g);
    int rc = mb_gap_build(run, here, matching, &g, err);
    if (rc == MB_OK) {
        if (m->is_ref)
            rc = mb_gap_project_reference(&g, mb_reference_label(&m->ref), &m->ref.measured, m->ref.sheet,
                                          matching, err);
        else if (m->is_results)
            rc = mb_gap_project_results(&g, &m->results, matching, err);
        else
            rc = mb_gap_project_datasheet(&g, m->sheet, mb_datasheet_is_gpu(m->sheet), err);
    }
    if (rc == MB_OK) {
        row->ok = true;
        row->step = mb_gap_per_step(&g, g.target_total);
        stage_split(&g, true, row->cls, NULL);
        snprintf(row->source, sizeof row->source, "%s", m->is_ref || m->is_results ? "measured" : "datasheet");
    }
    mb_gap_free(&g);
    return rc;
}

/* ---- prices ------------------------------------------------------------------------ */

static bool name_is(const mb_rank_row *r, const char *name, size_t n)
{
    return (strlen(r->name) == n && strncasecmp(r->name, name, n) == 0) ||
           (strlen(r->label) == n && strncasecmp(r->label, name, n) == 0);
}

static int set_price(mb_ranking *r, const char *spec, const char *where, mb_err *err)
{
    const char *eq = strrchr(spec, '=');
    char *end = NULL;
    double usd = eq ? strtod(eq + 1, &end) : NAN;
    if (eq == NULL || eq == spec || end == eq + 1 || !isfinite(usd) || usd <= 0 ||
        (end && *end && !isspace((unsigned char)*end)))
        return mb_errf(err, MB_EUSAGE, "%s %s: expected NAME=USD_PER_HOUR with a positive price", where, spec);
    size_t n = (size_t)(eq - spec);
    while (n > 0 && isspace((unsigned char)spec[n - 1]))
        n--;
    for (int i = 0; i < r->n; i++)
        if (name_is(&r->rows[i], spec, n)) {
            r->rows[i].price = usd;
            return MB_OK;
        }
    char names[1024] = "";
    for (int i = 0; i < r->n; i++) {
        size_t l = strlen(names);
        snprintf(names + l, sizeof names - l, "%s%s", i ? ", " : "", r->rows[i].name);
    }
    char word[64], near[64], hint[96] = "";
    snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), spec);
    if (mb_did_you_mean(word, names, near, sizeof near)) /* a100-sxm4-80gb: a100-sxm-80gb */
        snprintf(hint, sizeof hint, " - did you mean '%s'?", near);
    return mb_errf(err, MB_EUSAGE, "%s %.*s: no machine of the ranking has that name%s (machines: %s)", where,
                   (int)n, spec, hint, names);
}

/* --price NAME=USD, or several at once as NAME=USD,NAME=USD (the form
 * people type; it once read as one name up to the last '='). */
static int set_price_list(mb_ranking *r, const char *list, mb_err *err)
{
    char *copy = strdup(list), *save = NULL;
    if (copy == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    int rc = MB_OK;
    for (char *one = strtok_r(copy, ",", &save); rc == MB_OK && one; one = strtok_r(NULL, ",", &save))
        rc = set_price(r, one, "--price", err);
    free(copy);
    return rc;
}

static int read_prices(mb_ranking *r, const char *path, mb_err *err)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return mb_errno(err, MB_EUSAGE, "--prices %s: cannot open", path);
    char line[512], where[PATH_MAX + 32];
    int rc = MB_OK, no = 0;
    while (rc == MB_OK && fgets(line, sizeof line, f)) {
        no++;
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        p[strcspn(p, "\r\n")] = '\0';
        if (*p == '\0' || *p == '#' || *p == ';')
            continue;
        snprintf(where, sizeof where, "%s:%d:", path, no);
        rc = set_price(r, p, where, err);
    }
    fclose(f);
    return rc;
}

/* ---- building ---------------------------------------------------------------------- */

static int add_note(mb_ranking *r, mb_err *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int add_note(mb_ranking *r, mb_err *err, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **v = realloc(r->notes, sizeof *v * (size_t)(r->n_notes + 1));
    if (v == NULL || (v[r->n_notes] = strdup(buf)) == NULL) {
        if (v)
            r->notes = v;
        return mb_errf(err, MB_ESYS, "out of memory");
    }
    r->notes = v;
    r->n_notes++;
    return MB_OK;
}

/* USD per step of a projected, priced row; 0 otherwise. */
static double usd_per_step(const mb_rank_row *w)
{
    return w->ok && w->price > 0 ? w->price / 3600 * w->step : 0;
}

/* What a row is ranked by: its cost per step when the ranking is by cost
 * and it has a price, else its step. */
static double rank_value(const mb_rank_row *w, bool by_cost)
{
    return by_cost && w->price > 0 ? usd_per_step(w) : w->step;
}

/* The order: projected rows first; by cost, the priced ones before the rest;
 * a lower bound after the whole projections of its kind (it cannot be placed
 * among them); then by cost or step. */
static int cmp_rows(const mb_rank_row *x, const mb_rank_row *y, bool by_cost)
{
    if (x->ok != y->ok)
        return x->ok ? -1 : 1;
    if (!x->ok)
        return strcmp(x->name, y->name);
    if (by_cost && (x->price > 0) != (y->price > 0))
        return x->price > 0 ? -1 : 1;
    if ((x->kept > 0) != (y->kept > 0))
        return x->kept > 0 ? 1 : -1;
    double a = rank_value(x, by_cost), b = rank_value(y, by_cost);
    return (a > b) - (a < b);
}

static int cmp_by_step(const void *a, const void *b)
{
    return cmp_rows(a, b, false);
}

static int cmp_by_cost(const void *a, const void *b)
{
    return cmp_rows(a, b, true);
}

/* ---- the answer: ranks the model can stand behind, the verdict ------------------------- */

/* How far a projection onto this row's machine may be off: its checked error
 * (projections onto that GPU measured), else the expected error of its mode
 * (project_rank.h; what bench/project_validate and tests/gpu_pair.sh measure).
 * A per-stage row has no measured error: the datasheet mode's is the floor. */
static double row_error_pct(const mb_rank_row *w)
{
    if (w->checked_n > 0)
        return w->checked_pct;
    return strcmp(w->source, "measured") == 0 ? MB_RANK_EXPECTED_ERROR_MEASURED_PCT
                                               : MB_RANK_EXPECTED_ERROR_DATASHEET_PCT;
}

/* Whether the model cannot tell row w from row x, before it in the ranking's
 * order: their values within the larger of the two rows' errors. A lower
 * bound w (after the rows projected whole of its kind) is close to x when
 * its bound is below x's value or within that error above it: it may be as
 * fast (or as cheap) as x. A priced row and an unpriced one are ranked by
 * different quantities and are never close. */
static bool rows_close(const mb_rank_row *x, const mb_rank_row *w, bool by_cost)
{
    if (by_cost && (x->price > 0) != (w->price > 0))
        return false;
    double a = rank_value(x, by_cost), b = rank_value(w, by_cost), e = fmax(x->error_pct, w->error_pct) / 100;
    if (!(a > 0) || !(b > 0))
        return false;
    return w->kept > 0 && x->kept == 0 ? (b - a) / a <= e : fabs(b - a) / fmin(a, b) <= e;
}

/* The ranks: no two rows the model cannot tell apart (rows_close) get
 * distinct ones. Each row reaches the last row after it that is close to it;
 * a rank runs on while any of its rows reaches further, so it holds every
 * row between two close ones (a rank can then span more than the error end
 * to end: 100, 103 and 118 with errors of 2%, 2% and 22% are one rank, as
 * 100 and 118 are within 22%). */
static void rank_groups(mb_ranking *r)
{
    int rank = 0, reach = -1;
    for (int i = 0; i < r->n; i++) {
        mb_rank_row *w = &r->rows[i];
        w->rank = 0;
        if (w->ok)
            w->error_pct = row_error_pct(w);
    }
    for (int i = 0; i < r->n; i++) {
        mb_rank_row *w = &r->rows[i];
        if (!w->ok)
            continue;
        if (i > reach)
            rank++;
        w->rank = rank;
        for (int j = i + 1; j < r->n; j++)
            if (r->rows[j].ok && j > reach && rows_close(w, &r->rows[j], r->by_cost))
                reach = j;
    }
}

/* The seconds of a split in the classes of mask (bit 1 << class). */
static double in_classes(const double *cls, unsigned mask)
{
    double t = 0;
    for (int c = 0; c < MB_PC_N; c++)
        if (mask & (1u << c))
            t += cls[c];
    return t;
}

/* The GPU idle: waiting on the host, or between kernels it had queued. */
#define IDLE_CLASSES ((1u << MB_PC_HOST) | (1u << MB_PC_QUEUED))

/* Classes (mask: the GPU idle, communication) bound the step on every
 * machine when each projection spends at least half of its step in them and
 * none is faster than this machine by more than its error: then no GPU
 * helps. */
static bool bound_everywhere(const mb_ranking *r, unsigned mask)
{
    int n = 0;
    for (int i = 0; i < r->n; i++) {
        const mb_rank_row *w = &r->rows[i];
        if (!w->ok || w->kept > 0)
            continue;
        n++;
        if (in_classes(w->cls, mask) < 0.5 * w->step || r->here_step / w->step - 1 > w->error_pct / 100)
            return false;
    }
    return n > 0 && in_classes(r->here_cls, mask) >= 0.5 * r->here_step;
}

/* A class's shares summed over every step, here and each projection whole:
 * which part of the GPU's idle time is the larger. */
static double idle_part(const mb_ranking *r, int cls)
{
    double t = r->here_step > 0 ? r->here_cls[cls] / r->here_step : 0;
    for (int i = 0; i < r->n; i++) {
        const mb_rank_row *w = &r->rows[i];
        if (w->ok && w->kept == 0 && w->step > 0)
            t += w->cls[cls] / w->step;
    }
    return t;
}

/* The largest share of a class in any step, here or projected whole. */
static double max_share(const mb_ranking *r, int cls)
{
    double m = r->here_step > 0 ? r->here_cls[cls] / r->here_step : 0;
    for (int i = 0; i < r->n; i++) {
        const mb_rank_row *w = &r->rows[i];
        if (w->ok && w->kept == 0 && w->step > 0)
            m = fmax(m, w->cls[cls] / w->step);
    }
    return m;
}

/* "12%" or "12-15%": the least and the most share of classes (mask) in the projected steps. */
static void class_share_range(const mb_ranking *r, unsigned mask, char *buf, size_t len)
{
    double lo = 1, hi = 0;
    for (int i = 0; i < r->n; i++) {
        const mb_rank_row *w = &r->rows[i];
        if (!w->ok || w->kept > 0)
            continue;
        lo = fmin(lo, in_classes(w->cls, mask) / w->step);
        hi = fmax(hi, in_classes(w->cls, mask) / w->step);
    }
    if (lround(100 * lo) == lround(100 * hi))
        snprintf(buf, len, "%.0f%%", 100 * lo);
    else
        snprintf(buf, len, "%.0f-%.0f%%", 100 * lo, 100 * hi);
}

/* The sentence when one class bounds the step on every machine: what helps
 * instead. A collective that ran on the host (gloo, MPI over the CPUs) moves
 * to the GPUs' own links with NCCL, said only when GPUs are ranked. */
static void nothing_helps_verdict(mb_ranking *r)
{
    char share[48], wait[112] = "";
    if (r->idle_bound) {
        /* the GPU's own gaps between kernels it had queued are no host code; the same cures shorten them */
        class_share_range(r, IDLE_CLASSES, share, sizeof share);
        /* its share said where it is a notable part of some step (not "0%" beside 93% host) */
        if (max_share(r, MB_PC_QUEUED) >= 0.05) {
            char q[48];
            class_share_range(r, 1u << MB_PC_QUEUED, q, sizeof q);
            snprintf(wait, sizeof wait, ", %s between kernels it had queued", q);
        }
        const char *what = r->queued_bound ? "the GPU's own time between the kernels it had queued (kernel wait, "
                                             "not host code)"
                                           : r->no_dataloader ? "the host (CPU, Python, kernel launches)"
                                                              : "the host (CPU, Python, kernel launches, data loading)";
        if (!r->queued_bound && setup_holds_host(r)) { /* particle_transformer's trace: 1.34 s of 1.81 in one launch */
            char clause[400];
            setup_clause(r, clause, sizeof clause);
            snprintf(r->verdict, sizeof r->verdict,
                     "No GPU helps this trace: %s bounds the step on every machine (the GPU idle %s of each projected "
                     "step), and %s", what, share, clause);
            return;
        }
        snprintf(r->verdict, sizeof r->verdict,
                 "No GPU helps: %s bounds the step on every machine (the GPU idle %s of each projected step%s) and no "
                 "projection is faster than this one beyond the model's error. %s helps instead: CUDA Graphs or "
                 "torch.compile(mode=\"reduce-overhead\"), fewer and larger kernels (a larger batch%s)%s%s",
                 what, share, wait, r->queued_bound ? "Fewer kernel boundaries" : "Faster host code",
                 r->no_optimizer ? "" : ", fused optimizers",
                 r->queued_bound || r->no_dataloader ? "" : ", more DataLoader workers",
                 r->queued_bound ? "" : ", a faster CPU");
        return;
    }
    class_share_range(r, 1u << MB_PC_COMM, share, sizeof share);
    bool on_host = !r->host_run && r->here_comm_on_host >= 0.5 * r->here_cls[MB_PC_COMM];
    snprintf(r->verdict, sizeof r->verdict,
             "No %s helps: communication between the ranks bounds the step on every machine (%s of each projected "
             "step) and no projection is faster than this one beyond the model's error. A faster path between the "
             "ranks helps instead: %sa faster network between the nodes (its ceiling: mlbench --suite allreduce "
             "across the nodes), the all-reduce overlapped with the backward pass (DDP's gradient buckets), fewer "
             "all-reduces (gradient accumulation under no_sync()), smaller gradients on the wire (a bf16 compression "
             "hook)",
             r->host_run ? "faster CPU" : "GPU", share,
             on_host ? "the collective on the GPUs (NCCL, backend=\"nccl\") instead of on the host (gloo, MPI), " : "");
}

static void fmt_usd(char *buf, size_t len, double usd);

/* The names a verdict lists beside a machine: this many, the rest counted ("and 3 more"); one more than this is
 * listed whole rather than counted. */
#define MATES_SHOWN 4

/* Whether row i stands beside row `of` in the verdict: bounds false, a row projected whole within the larger of
 * the two rows' errors of it (the model cannot tell them apart); bounds true, a lower bound whose bound is below
 * of's value or within the error above it (only its least known: it may be as fast, or as cheap). */
static bool is_mate(const mb_ranking *r, int of, int i, bool by_cost, bool bounds)
{
    const mb_rank_row *f = &r->rows[of], *w = &r->rows[i];
    double a = by_cost ? usd_per_step(f) : f->step, b = by_cost ? usd_per_step(w) : w->step;
    if (i == of || !w->ok || (w->kept > 0) != bounds || !(a > 0) || !(b > 0))
        return false;
    double e = fmax(f->error_pct, w->error_pct) / 100;
    return bounds ? (b - a) / a <= e : fabs(b - a) / fmin(a, b) <= e;
}

/* "A, B, C, D and 3 more": the mates of row `of` (is_mate), a lower bound with its bound (">$0.0145", ">105 ms").
 * Returns how many there are. */
static int rank_mates(const mb_ranking *r, int of, bool by_cost, bool bounds, char *buf, size_t len)
{
    int n = 0, shown = 0;
    for (int i = 0; i < r->n; i++)
        n += is_mate(r, of, i, by_cost, bounds);
    size_t at = 0;
    buf[0] = '\0';
    for (int i = 0; i < r->n && at < len; i++) {
        if (!is_mate(r, of, i, by_cost, bounds) || (n > MATES_SHOWN + 1 && shown == MATES_SHOWN))
            continue;
        const mb_rank_row *w = &r->rows[i];
        char v[32] = "";
        if (bounds && by_cost)
            fmt_usd(v, sizeof v, usd_per_step(w) * 1000);
        else if (bounds)
            mb_fmt_seconds(v, sizeof v, w->step);
        at += (size_t)snprintf(buf + at, len - at, "%s%s%s%s", at ? ", " : "", w->label, bounds ? " >" : "", v);
        shown++;
    }
    if (shown < n && at < len)
        snprintf(buf + at, len - at, " and %d more", n - shown);
    return n;
}

/* Appends to the verdict, after `at`, the lower bounds that may be as fast (as cheap) as row `of`: a lower bound
 * is never named fastest or cheapest as if its figure were exact, nor left out of the sentence. */
static size_t bounds_said(mb_ranking *r, size_t at, int of, bool by_cost)
{
    char list[512];
    if (at >= sizeof r->verdict || rank_mates(r, of, by_cost, true, list, sizeof list) == 0)
        return at;
    int w = snprintf(r->verdict + at, sizeof r->verdict - at, "; possibly as %s or %s (only a lower bound known%s): "
                     "%s", by_cost ? "cheap" : "fast", by_cost ? "cheaper" : "faster",
                     by_cost ? ", per 1000 steps" : "", list);
    at += w > 0 ? (size_t)w : 0;
    return at < sizeof r->verdict ? at : sizeof r->verdict - 1; /* cut: the next clause appends nothing */
}

/* Every machine as fast: the verdict adds the cheapest per step of the priced ones. False: none priced. */
static bool cheapest_said(mb_ranking *r, int cheapest)
{
    if (cheapest < 0)
        return false;
    char u[32];
    size_t at = strlen(r->verdict);
    fmt_usd(u, sizeof u, usd_per_step(&r->rows[cheapest]) * 1000);
    int w = snprintf(r->verdict + at, sizeof r->verdict - at, ". Of the priced machines the cheapest per step: %s, "
                     "%s per 1000 steps", r->rows[cheapest].label, u);
    bounds_said(r, at + (w > 0 ? (size_t)w : 0), cheapest, true);
    return true;
}

static int rank_verdict(mb_ranking *r, mb_err *err)
{
    (void)err;
    int fastest = -1, cheapest = -1;
    for (int i = 0; i < r->n; i++) {
        const mb_rank_row *w = &r->rows[i];
        if (!w->ok || w->kept > 0)
            continue;
        if (fastest < 0 || w->step < r->rows[fastest].step)
            fastest = i;
        if (w->price > 0 && (cheapest < 0 || usd_per_step(w) < usd_per_step(&r->rows[cheapest])))
            cheapest = i;
    }
    /* a CPU run ranks host CPUs (host_run): its compute is the host's by
     * definition, and "no GPU helps ... CUDA Graphs" would be said of CPUs */
    r->idle_bound = !r->host_run && bound_everywhere(r, IDLE_CLASSES);
    /* what idles it is named by the larger part over every step (here and each projection): a loop that calls
     * .item() every step (the host's 93% here) reads kernel wait up to 12% onto a Tesla P4, where its host's time
     * alone is 47% of the step; still the host's loop */
    r->queued_bound = r->idle_bound && idle_part(r, MB_PC_QUEUED) > idle_part(r, MB_PC_HOST);
    r->host_bound = r->idle_bound && !r->queued_bound;
    /* a 300-rank gloo run, its all-reduce 85% of the step, read "Fastest: H100 SXM 80GB, 1.00x ... none is faster
     * beyond it": true, without what helps */
    r->comm_bound = !r->idle_bound && bound_everywhere(r, 1u << MB_PC_COMM);
    char mates[512], t[32], u[32];
    if (r->nothing_scaled && !r->idle_bound && !r->comm_bound) { /* what bounds it everywhere is said below */
        snprintf(r->verdict, sizeof r->verdict,
                 "Nothing to rank: no stage of this run has a ceiling here (each stage says why: no FLOPs or bytes "
                 "recorded, or no case measured here for them), so every machine keeps this step as it is and the "
                 "model cannot tell them apart");
        if (!cheapest_said(r, cheapest)) /* priced: ranked by cost (rank_groups) */
            for (int i = 0; i < r->n; i++)
                if (r->rows[i].ok)
                    r->rows[i].rank = 1;
        return MB_OK;
    }
    if (r->idle_bound || r->comm_bound) {
        nothing_helps_verdict(r);
        /* every machine as fast: with prices the price decides (ranked by cost); the ranks are rank_groups',
         * one group unless a machine is truly apart (a lower bound beyond the error of its neighbour) */
        cheapest_said(r, cheapest);
        return MB_OK;
    }
    if (fastest < 0) {
        snprintf(r->verdict, sizeof r->verdict, "No machine was projected whole (see the notes)");
        return MB_OK;
    }
    const mb_rank_row *f = &r->rows[fastest];
    mb_fmt_seconds(t, sizeof t, f->step);
    rank_mates(r, fastest, false, false, mates, sizeof mates);
    int at = 0;
    if (cheapest >= 0) {
        const mb_rank_row *c = &r->rows[cheapest];
        char m2[512];
        char upto_c[96] = "";
        fmt_usd(u, sizeof u, usd_per_step(c) * 1000);
        rank_mates(r, cheapest, true, false, m2, sizeof m2);
        if (c->step_max > 0) { /* costed at its GPU's time; the host's bound costs more */
            char v[24];
            fmt_usd(v, sizeof v, c->price / 3600 * c->step_max * 1000);
            snprintf(upto_c, sizeof upto_c, " if the host keeps up (up to %s if it does not)", v);
        }
        at = snprintf(r->verdict, sizeof r->verdict, "Cheapest per step: %s, %s per 1000 steps%s%s%s%s", c->label,
                      u, upto_c, m2[0] ? " (the model cannot tell it from " : "", m2, m2[0] ? ")" : "");
        at = (int)bounds_said(r, (size_t)at, cheapest, true);
        if (at < (int)sizeof r->verdict - 1)
            at += snprintf(r->verdict + at, sizeof r->verdict - (size_t)at, "; ");
        if (at >= (int)sizeof r->verdict) /* cut: the clauses after it append nothing */
            at = (int)sizeof r->verdict - 1;
    }
    char upto[96] = "";
    if (f->step_max > 0) { /* the host's own time may lengthen it (host_open) */
        char m[32];
        mb_fmt_seconds(m, sizeof m, f->step_max);
        snprintf(upto, sizeof upto, " if the host keeps up (up to %s a step if it does not: note below)", m);
    }
    at += snprintf(r->verdict + at, sizeof r->verdict - (size_t)at, "%s: %s, %s per step (%.2fx here)%s%s%s%s",
                   at ? "fastest" : "Fastest", f->label, t, r->here_step / f->step, upto,
                   mates[0] ? " (the model cannot tell it from " : "", mates, mates[0] ? ")" : "");
    if (at < (int)sizeof r->verdict)
        at = (int)bounds_said(r, (size_t)at, fastest, false);
    /* 1.02x from a host CPU read as a gain (pytorch/examples' vae on this VM
     * against the H100 box's host CPU, 22% expected error) */
    double ratio = r->here_step / f->step;
    if (at >= (int)sizeof r->verdict)
        return MB_OK;
    if (f->error_pct > 0 && fabs(ratio - 1) <= f->error_pct / 100)
        at += snprintf(r->verdict + at, sizeof r->verdict - (size_t)at,
                 "; within the model's expected error (%.0f%%) of this machine: none is faster beyond it",
                 f->error_pct);
    else if (ratio < 1)
        at += snprintf(r->verdict + at, sizeof r->verdict - (size_t)at, "; slower than this machine: none is faster");
    /* the V100 fixture with --host-ms 50: a B200 at 50 ms, 1.93x, its GPU idle 55% of that; a faster GPU still
     * would gain little there (a CPU run's host is its compute: not said of host CPUs) */
    if (!r->host_run && f->kept == 0 && f->cls[MB_PC_HOST] >= 0.5 * f->step && at < (int)sizeof r->verdict) {
        char clause[400];
        setup_clause(r, clause, sizeof clause);
        snprintf(r->verdict + at, sizeof r->verdict - (size_t)at,
                 "; the host bounds its step there (the GPU waiting on it %.0f%% of it): %s",
                 100 * f->cls[MB_PC_HOST] / f->step,
                 setup_holds_host(r) ? clause
                 : r->no_dataloader  ? "faster host code (Python, kernel launches) gains more there than a faster GPU"
                                     : "faster host code (data loading, Python, kernel launches) gains more there "
                                       "than a faster GPU");
    }
    return MB_OK;
}

/* The trace's GPU, from its datasheet; *have_measured when the ceilings are
 * of that same GPU and measured some of its figures. */
static int here_gpu(const mb_proj_trace *t, const mb_ceilings *here, mb_proj_gpu *sheet_gpu, bool *have_measured,
                    char *label, size_t len, char *stem, size_t stem_len, mb_err *err)
{
    mb_datasheet *d = NULL, *dc = NULL;
    mb_err why = { 0 };
    const char *dev = mb_proj_trace_device(t);
    if (*dev == '\0')
        return mb_errf(err, MB_EUSAGE,
                       "the trace records no GPU (deviceProperties): the kernel-level projection needs the GPU "
                       "it ran on");
    /* MB_ESKIP: the ranking falls back to the per-stage model and says why */
    if (mb_datasheet_match(dev, &d, &why) != MB_OK)
        return mb_errf(err, why.code == MB_ESKIP ? MB_ESKIP : MB_EUSAGE,
                       "the trace ran on %s, which has no datasheet here (%s): the kernel-level model starts from "
                       "that GPU's figures; add them (configs/hardware/NAME.ini with `match = ` a part of that name, "
                       "docs/gpu-gemm-conv.md \"Datasheets\")",
                       dev, why.msg);
    int rc = mb_proj_gpu_from_datasheet(d, sheet_gpu, err);
    *have_measured = false;
    if (rc == MB_OK && here && mb_datasheet_match(here->machine, &dc, &why) == MB_OK &&
        strcmp(mb_datasheet_file(dc), mb_datasheet_file(d)) == 0) {
        mb_proj_gpu measured = *sheet_gpu;
        *have_measured = overlay_measured(&measured, here, NULL);
    }
    snprintf(label, len, "%s", dev);
    snprintf(stem, stem_len, "%s", mb_datasheet_stem(d) ? mb_datasheet_stem(d) : "");
    mb_datasheet_free(d);
    mb_datasheet_free(dc);
    return rc;
}

/* A re-laid step without what the host's own time added to it (the floor
 * of a loop whose host ran ahead: mb_proj_outcome.host_wait_*): the GPU's. */
static void without_host_wait(mb_proj_step_split *sp, double wait)
{
    sp->step -= wait;
    sp->cls[MB_PC_HOST] -= wait;
}

/* A re-laid step in the loop's terms: times unit, plus extra host time. */
static void scale_split(const mb_proj_step_split *sp, double unit, double extra, double *step, double *cls)
{
    *step = sp->step * unit + extra;
    for (int c = 0; c < MB_PC_N; c++)
        cls[c] = sp->cls[c] * unit + (c == MB_PC_HOST ? extra : 0);
}

/* --host-ms: the host's own time to issue a step, without the profiler. It
 * closes the range of a loop whose host runs ahead (each row's step is its
 * GPU's time or the host's, the longer); any other loop has its host's time
 * in the trace or in --step-ms, and a host slower than the step it issues is
 * a figure of another loop. */
static int set_host_given(mb_ranking *r, const mb_proj_outcome *base, const mb_rank_opts *o, mb_err *err)
{
    char h[32], s[32];
    mb_fmt_seconds(h, sizeof h, o->host_seconds);
    mb_fmt_seconds(s, sizeof s, r->here_step);
    if (!base->gpu_timeline)
        return mb_errf(err, MB_EUSAGE,
                       "--host-ms: this trace's steps are cut on the host's timeline (the loop waits for its GPU "
                       "within each step), so the host's time is in the trace; --step-ms gives the loop's own step");
    if (!r->host_open)
        return mb_errf(err, MB_EUSAGE,
                       "--host-ms with --step-ms: the step given is longer than the GPU's work here, so it is "
                       "already the host's time; give one of them");
    if (o->host_seconds > r->here_step * (1 + 0.01))
        return mb_errf(err, MB_EUSAGE,
                       "--host-ms %s is longer than the loop's step here (%s): its host issues a step in at most "
                       "that; a host time from another loop, batch or machine, or from under the profiler?",
                       h, s);
    r->host_given = o->host_seconds;
    return MB_OK;
}

/* Whether the ceilings were measured on a GPU of this name (their context's
 * gpus[].name), as gap's note on another GPU's ceilings reads it. */
static bool ceilings_of_gpu(const mb_ceilings *c, const char *dev)
{
    const cJSON *gpus = c && c->context ? cJSON_GetObjectItemCaseSensitive(c->context, "gpus") : NULL;
    const cJSON *gp;
    cJSON_ArrayForEach(gp, gpus)
    {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(gp, "name");
        if (cJSON_IsString(name) && strcasecmp(name->valuestring, dev) == 0)
            return true;
    }
    return false;
}

static int kernel_rows(const char *run_path, const mb_ceilings *here, name_list *names, const mb_rank_opts *o,
                       const mb_ini *errors, mb_ranking *r, mb_err *err)
{
    mb_proj_trace *t = NULL;
    mb_proj_gpu h_sheet;
    bool have_meas = false;
    mb_proj_outcome base;
    char here_stem[64] = "";
    int rc = mb_proj_trace_load(run_path, &t, err);
    if (rc == MB_OK)
        rc = here_gpu(t, here, &h_sheet, &have_meas, r->here, sizeof r->here, here_stem, sizeof here_stem, err);
    /* The per-stage model scales the stages from the ceilings here: only
     * when they were measured on the trace's GPU (a V100 trace held to an
     * H100's ceilings would rank a T4 at 0.14x) */
    if (rc == MB_ESKIP && !ceilings_of_gpu(here, mb_proj_trace_device(t))) {
        char why[sizeof err->msg];
        snprintf(why, sizeof why, "%s", err->msg);
        mb_err_clear(err); /* the first error stands otherwise */
        rc = mb_errf(err, MB_EUSAGE, "%s; or give ceilings measured on that GPU (--ceilings)", why);
        r->other_gpu = true;
    }
    r->host_scale = 1;
    if (rc == MB_OK && o->step_seconds > 0)
        rc = mb_proj_trace_calibrate(t, &h_sheet, o->step_seconds, &r->host_scale, &r->trace_step, &r->gpu_floor,
                                     err);
    if (rc == MB_OK && r->gpu_floor > 2 * o->step_seconds) {
        char given[32], floor_s[32];
        mb_fmt_seconds(given, sizeof given, o->step_seconds);
        mb_fmt_seconds(floor_s, sizeof floor_s, r->gpu_floor);
        rc = mb_errf(err, MB_EUSAGE,
                     "--step-ms: %s is less than half of the trace's step with no host time at all (%s): not a "
                     "step of the loop this trace recorded? (milliseconds per step)",
                     given, floor_s);
    }
    if (rc == MB_OK)
        rc = mb_proj_trace_run(t, &h_sheet, NULL, r->host_scale, &base, err);
    if (rc) {
        mb_proj_trace_free(t);
        return rc;
    }
    /* Given the loop's own step, every step shown is in its terms: a loop
     * slower than its trace spent the difference outside what the trace
     * recorded, host time on any GPU (`extra`); a faster one re-lays at the
     * host scale found, whose step times `unit` is the loop's (1 up to the
     * bisection's tolerance; more when the GPU part alone is longer: then
     * the projection is its ratio). */
    double unit = 1, extra = 0;
    /* A loop whose host ran ahead here (steps cut on the GPU's timeline) has
     * the GPU's step, and the trace does not say how fast its host issues a
     * step without the profiler: the profiled host's time is an upper bound
     * (the profiler's cost per op lengthens it: GPT bf16 on an H200, 38.5 ms
     * a step traced against 35.0 ms of GPU work, timed 35.03), as is a
     * --step-ms that is the GPU's step (the host kept pace with it). Then
     * the steps are the GPU's, in the loop's terms, and a row whose GPU work
     * is shorter than the bound carries it (step_max) instead of taking it:
     * a B200 ranked 1.00x on that bound had 22.5 ms of GPU work. A --step-ms
     * well above the GPU's step names the host's time: calibrated, it bounds
     * every row. */
    double gpu_here = base.here.step - base.host_wait_here;
    r->host_open = base.gpu_timeline && gpu_here > 0 &&
                   (o->step_seconds <= 0 || o->step_seconds <= (1 + MB_RANK_GPU_BOUND_SHARE) * gpu_here);
    if (r->host_open) {
        unit = o->step_seconds > 0 ? o->step_seconds / gpu_here : 1;
        r->host_upper = o->step_seconds > 0 ? o->step_seconds : base.host_step; /* at scale 1: as profiled */
        without_host_wait(&base.here, base.host_wait_here);
    } else if (o->step_seconds > 0 && r->host_scale >= 1)
        extra = o->step_seconds - base.here.step;
    else if (o->step_seconds > 0 && base.here.step > 0)
        unit = o->step_seconds / base.here.step;
    r->step_given = o->step_seconds;
    if (o->step_seconds <= 0)
        r->trace_step = base.here.step;
    snprintf(r->here_source, sizeof r->here_source, "%s", have_meas ? "measured" : "datasheet");
    scale_split(&base.here, unit, extra, &r->here_step, r->here_cls);
    if (o->host_seconds > 0 && (rc = set_host_given(r, &base, o, err)) != MB_OK) {
        mb_proj_trace_free(t);
        return rc;
    }
    memcpy(r->here_kernel, base.here.kernel, sizeof r->here_kernel);
    r->steps = base.steps;
    for (int i = 0; i < names->n && rc == MB_OK; i++) {
        mb_rank_row *row = &r->rows[r->n++];
        machine m;
        snprintf(row->name, sizeof row->name, "%s", names->v[i]);
        snprintf(row->model, sizeof row->model, "kernel");
        rc = machine_load(names->v[i], o->phase, &m, err);
        if (rc)
            break;
        snprintf(row->label, sizeof row->label, "%s", m.label);
        if (!m.have_gpu) {
            snprintf(row->note, sizeof row->note, "not projected: %s", m.gpu_why);
        } else {
            /* like with like: a measured target against what was measured here, each figure from
             * the kinds of case both machines measured; else both from datasheets */
            mb_proj_gpu hg = h_sheet, there;
            bool measured = false;
            machine_gpu(&m, m.sheet, NULL); /* the datasheet's figures; m.measured stays */
            there = m.gpu;
            if (m.measured && have_meas) {
                const mb_ceilings *tc = m.is_ref ? &m.ref.measured : &m.results;
                /* a kind of case both measured gives both sides a figure, so the two agree */
                measured = overlay_measured(&hg, here, tc) && overlay_measured(&there, tc, here);
            }
            mb_proj_outcome out;
            rc = mb_proj_trace_run(t, &hg, &there, r->host_scale, &out, err);
            if (rc == MB_OK) {
                row->ok = true;
                if (r->host_open) /* the GPU's step; the host's bound beside it */
                    without_host_wait(&out.there, out.host_wait_there);
                scale_split(&out.there, unit, extra, &row->step, row->cls);
                if (r->host_given > row->step) { /* the host issues a step in that time: its GPU idles the rest */
                    row->cls[MB_PC_HOST] += r->host_given - row->step;
                    row->step = r->host_given;
                } else if (r->host_given <= 0 && r->host_open && r->host_upper > row->step * (1 + 0.01))
                    row->step_max = r->host_upper; /* a range of 1% or less says nothing */
                memcpy(row->kernel, out.there.kernel, sizeof row->kernel);
                snprintf(row->source, sizeof row->source, "%s", measured ? "measured" : "datasheet");
                rc = checked_error(errors, m.sheet, here_stem, row, err);
                r->kernels = out.kernels / (out.steps > 0 ? out.steps : 1);
                r->with_shapes = out.with_shapes / (out.steps > 0 ? out.steps : 1);
                row->kept = out.no_peak > 0 ? out.no_peak / (out.steps > 0 ? out.steps : 1) : 0;
                if (out.no_peak > 0 && row->kept == 0)
                    row->kept = 1; /* fewer than one per step: still a lower bound */
                if (row->kept > 0)
                    row->step_max = 0; /* a lower bound already: '>' its step */
                /* Kept time is a lower bound only on a GPU no faster than here: an A100's fp16 GEMMs kept on an
                 * RTX PRO 6000 Blackwell (125 TFLOP/s FP32, no fp16 figure) ranked it after a P100 */
                bool no_faster = there.flops[MB_PM_FP32] <= hg.flops[MB_PM_FP32] && there.bw <= hg.bw;
                if (row->kept > 0 && !no_faster) {
                    row->ok = false;
                    snprintf(row->note, sizeof row->note,
                             "not projected: %lld kernels per step have no peak for their math in its datasheet, and "
                             "it is faster than here in the FP32 peak or the bandwidth it gives: their time kept would "
                             "bound nothing", row->kept);
                } else if (row->kept > 0)
                    snprintf(row->note, sizeof row->note,
                             "%lld kernels per step kept their time (the datasheet has no peak for their math): the "
                             "step is a lower bound, ranked after the machines projected whole of its kind",
                             row->kept);
            }
        }
        machine_free(&m);
    }
    mb_proj_trace_free(t);
    return rc;
}

static int stage_rows(const mb_run *run, const mb_ceilings *here, const mb_ini *matching, name_list *names,
                      const mb_rank_opts *o, mb_ranking *r, mb_err *err)
{
    mb_gap g;
    memset(&g, 0, sizeof g);
    if (mb_rank_gpus_unrecorded(run))
        return mb_errf(err, MB_EUSAGE, "%s", MB_GPUS_UNRECORDED);
    int rc = mb_gap_build(run, here, matching, &g, err);
    if (rc)
        return rc;
    if (o->host_seconds > 0) {
        mb_gap_free(&g);
        return mb_errf(err, MB_EUSAGE, MB_HOST_MS_NEEDS_KERNELS " (%s)",
                       r->per_stage_why[0] ? r->per_stage_why : "a stage file");
    }
    snprintf(r->here, sizeof r->here, "%s", mb_ceilings_label(here));
    snprintf(r->here_source, sizeof r->here_source, "measured");
    r->here_step = mb_gap_per_step(&g, g.total);
    stage_split(&g, false, r->here_cls, &r->here_comm_on_host);
    r->steps = g.steps;
    /* A run whose step is mostly compute on the host CPU: no GPU datasheet
     * can take it (each would keep that compute as it is, ranking 21 GPUs
     * at 1.00x), and a measured target takes it onto its host CPU. */
    char names_cpu[256], why_cpu[640];
    double host = mb_gap_host_compute(&g, names_cpu, sizeof names_cpu);
    mb_gap_host_compute_why(&g, why_cpu, sizeof why_cpu);
    bool onto_host = mb_gap_onto_host(&g);
    r->host_run = onto_host;
    mb_gap_free(&g);
    int left_out = 0;
    for (int i = 0; i < names->n && rc == MB_OK; i++) {
        machine m;
        rc = machine_load(names->v[i], o->phase, &m, err);
        if (rc)
            break;
        bool measured = m.is_ref || m.is_results;
        if (onto_host && !measured && m.sheet && mb_datasheet_is_gpu(m.sheet)) {
            left_out++;
            machine_free(&m);
            continue;
        }
        mb_rank_row *row = &r->rows[r->n++];
        snprintf(row->name, sizeof row->name, "%s", names->v[i]);
        snprintf(row->model, sizeof row->model, "per-stage");
        snprintf(row->label, sizeof row->label, "%.80s%s", m.label, onto_host ? "'s host CPU" : "");
        mb_err why = { 0 };
        if (per_stage_row(run, here, matching, &m, row, &why) != MB_OK)
            snprintf(row->note, sizeof row->note, "not projected: %s", why.msg);
        else if (host > 0 && measured)
            snprintf(row->note, sizeof row->note,
                     "this run's compute on the CPU (%s) takes that machine's CPU cases, not its GPU", names_cpu);
        machine_free(&m);
    }
    if (rc == MB_OK && left_out > 0 && r->n == 0) {
        r->other_gpu = true; /* one target too: no per-stage fallback to say it again */
        return mb_errf(err, MB_EUSAGE, "no GPU can be ranked for this run: %s", why_cpu);
    }
    if (rc == MB_OK && left_out > 0)
        rc = add_note(r, err, "%d GPU datasheet%s left out: %s", left_out, left_out == 1 ? "" : "s", why_cpu);
    return rc;
}

/* A GPU-bound step whose host ran ahead: what is known of the host's time,
 * and what the rows with a range mean. */
static int host_open_note(mb_ranking *r, mb_err *err)
{
    char here[32], upper[32], why[256];
    mb_fmt_seconds(here, sizeof here, r->here_step);
    mb_fmt_seconds(upper, sizeof upper, r->host_upper);
    if (r->host_given > 0) {
        mb_fmt_seconds(upper, sizeof upper, r->host_given);
        return add_note(r, err,
                        "the host ran ahead of the GPU here (a loop that never synchronises): the step is the GPU's "
                        "(%s); --host-ms gives the host's own time to issue a step, %s: on each machine the step is "
                        "its GPU's time or that, the longer (the host queues steps while the GPU works through them)",
                        here, upper);
    }
    if (r->step_given > 0)
        snprintf(why, sizeof why, "--step-ms, the loop timed without the profiler, is its GPU's step (within %.0f%%): "
                 "its host kept pace and took at most %s a step",
                 100 * MB_RANK_GPU_BOUND_SHARE, upper);
    else
        snprintf(why, sizeof why, "under the profiler its host took %s a step, an upper bound (the profiler's cost "
                 "per op lengthens it); --step-ms, the loop timed without it, bounds it by that step", upper);
    return add_note(r, err,
                    "the host ran ahead of the GPU here (a loop that never synchronises): the step is the GPU's (%s), "
                    "and how fast the host issues a step without the profiler is not in the trace: %s. Onto a GPU "
                    "whose work takes less, the step lies between its GPU's time and that bound (a range, '<' the "
                    "speed-up), ranked and costed at its GPU's time: as fast as the host keeps up",
                    here, why);
}

/* What --step-ms did to the trace's step. */
static int calibration_note(mb_ranking *r, mb_err *err)
{
    char given[32], traced[32], floor_s[32];
    mb_fmt_seconds(given, sizeof given, r->step_given);
    mb_fmt_seconds(traced, sizeof traced, r->trace_step);
    mb_fmt_seconds(floor_s, sizeof floor_s, r->gpu_floor);
    if (r->host_scale >= 1)
        return add_note(r, err,
                        "--step-ms %s is not shorter than the trace's step (%s): the trace is re-laid as recorded "
                        "and the difference counts as host time on every machine",
                        given, traced);
    if (r->gpu_floor > r->step_given * (1 + 1e-4))
        return add_note(r, err,
                        "--step-ms %s: even with no host time the trace's step is %s (its GPU part, slower under the "
                        "profiler): the projection is re-laid without host time and its ratio applied to %s",
                        given, floor_s, given);
    return add_note(r, err,
                    "--step-ms %s: the profiler lengthened the trace's host time (its step %s); re-laid with the host's "
                    "time x %.2f, the trace's step is %s, and every projection is re-laid at that scale",
                    given, traced, r->host_scale, given);
}

/* Of a run's GPU stages' exposed time (gpu_only; else all its stages'), the
 * part the per-stage model can scale: stages with a ceiling here. The rest
 * keeps its time on every machine (a trace without shapes: its GEMMs and
 * convolutions time only). */
static int scalable_share(const mb_run *run, const mb_ceilings *here, const mb_ini *matching, bool gpu_only,
                          double *share, mb_err *err)
{
    mb_gap g;
    memset(&g, 0, sizeof g);
    int rc = mb_gap_build(run, here, matching, &g, err);
    if (rc)
        return rc;
    double gpu = 0, scaled = 0;
    for (int i = 0; i < g.n; i++) {
        const mb_stage *st = g.stages[i].stage;
        if (gpu_only && (!st->device || strcmp(st->device, "gpu") != 0))
            continue;
        gpu += g.stages[i].exposed;
        if (g.stages[i].match >= 0 && g.stages[i].ceiling_rate > 0)
            scaled += g.stages[i].exposed;
    }
    *share = gpu > 0 ? scaled / gpu : 1;
    mb_gap_free(&g);
    return MB_OK;
}

int mb_rank_build(const char *run_path, const mb_run *run, const mb_ceilings *here, const mb_ini *matching,
                  const mb_rank_opts *o, mb_ranking *r, mb_err *err)
{
    memset(r, 0, sizeof *r);
    name_list names = { 0 };
    int rc = parse_targets(o->targets, &names, err);
    if (rc == MB_OK && (r->rows = calloc((size_t)names.n + 1, sizeof *r->rows)) == NULL)
        rc = mb_errf(err, MB_ESYS, "out of memory");
    r->epoch_steps = o->epoch_steps;
    mb_ini errors = { 0 };
    bool kernel = is_trace(run) && !cpu_trace(run);
    r->here_setup = kernel ? setup_seconds(run) : 0;
    r->no_dataloader = trace_count_zero(run, "host", "dataloader");
    r->no_optimizer = trace_count_zero(run, "trace", "optimizer_steps");
    if (cpu_trace(run))
        snprintf(r->per_stage_why, sizeof r->per_stage_why, "a trace without GPU events has no kernels");
    if (rc == MB_OK && kernel)
        rc = mb_ini_load_gap("projection_error.ini", &errors, err);
    if (rc == MB_OK) {
        snprintf(r->model, sizeof r->model, "%s", kernel ? "kernel" : "per-stage");
        rc = kernel ? kernel_rows(run_path, here, &names, o, &errors, r, err)
                    : stage_rows(run, here, matching, &names, o, r, err);
        if (kernel && rc == MB_ESKIP && r->n == 0) {
            /* the trace's GPU has no datasheet: its stages still scale by
             * the ratio of each target's figure to the ceilings here, when
             * most of its GPU time has one (a trace without shapes ranked
             * every GPU, a T4 too, at 1.00x: its GEMMs kept their time) */
            char why[sizeof err->msg];
            snprintf(why, sizeof why, "%s", err->msg);
            mb_err_clear(err);
            double share = 0;
            rc = scalable_share(run, here, matching, true, &share, err);
            if (rc == MB_OK && share < 0.5) {
                r->other_gpu = true; /* no per-stage fallback for one target either */
                rc = mb_errf(err, MB_EUSAGE,
                             "%s; the per-stage model, from the ceilings here, could scale only %.0f%% of its GPU "
                             "time (the rest has no FLOPs or bytes: profile with record_shapes=True)",
                             why, 100 * share);
            } else if (rc == MB_OK) {
                snprintf(r->per_stage_why, sizeof r->per_stage_why, "%s", why);
                snprintf(r->model, sizeof r->model, "per-stage");
                rc = stage_rows(run, here, matching, &names, o, r, err);
            }
        }
    }
    mb_ini_free(&errors);
    list_free(&names);
    for (int i = 0; rc == MB_OK && i < o->n_prices; i++)
        rc = set_price_list(r, o->prices[i], err);
    if (rc == MB_OK && o->prices_file)
        rc = read_prices(r, o->prices_file, err);
    for (int i = 0; i < r->n; i++) /* with prices: ranked by cost per step */
        r->by_cost |= r->rows[i].ok && r->rows[i].price > 0;
    if (rc == MB_OK && r->n > 1)
        qsort(r->rows, (size_t)r->n, sizeof *r->rows, r->by_cost ? cmp_by_cost : cmp_by_step);
    if (rc == MB_OK && strcmp(r->model, "per-stage") == 0 && r->n > 0) {
        /* a CPU trace without shapes (torch 1.13 without Kineto) read "Fastest: H100 SXM 80GB's host CPU, 1.00x"
         * with every stage kept as it was */
        double share = 1;
        rc = scalable_share(run, here, matching, false, &share, err);
        r->nothing_scaled = rc == MB_OK && share <= 0;
    }
    if (rc == MB_OK)
        rank_groups(r);
    if (rc == MB_OK)
        rc = rank_verdict(r, err);
    if (rc == MB_OK && strcmp(r->model, "kernel") == 0)
        rc = add_note(r, err,
                      "kernel-level model: each GPU kernel scaled by what bounds it (Habitat's roofline exponent "
                      "from its FLOPs/bytes against the target's ridge point; %lld of %lld kernels per step have "
                      "recorded shapes, the others count as compute-bound for matmul/conv/attention and "
                      "memory-bound otherwise), its grid's waves on the target's SMs; a memory-bound kernel slower "
                      "than its bytes at this GPU's bandwidth scales only that part by bandwidth, the rest by the "
                      "SMs; kernels of %.0f us or less keep their time (latency-bound)",
                      r->with_shapes, r->kernels, MB_PROJ_LATENCY_S * 1e6);
    if (rc == MB_OK && strcmp(r->model, "kernel") == 0)
        rc = add_note(r, err,
                      "the step re-laid on the target's timeline: host calls keep their durations and the gaps "
                      "between them, kernels their stream order and launch, syncs wait for what they waited for "
                      "here; host-to-device copies scale by PCIe; a collective's bytes scale by the GPU-to-GPU link "
                      "(NVLink, PCIe on a card without it), its latency and waiting for the other ranks stay (kept "
                      "when a datasheet lacks the link)");
    if (rc == MB_OK && r->host_open)
        rc = host_open_note(r, err);
    else if (rc == MB_OK && r->step_given > 0)
        rc = calibration_note(r, err);
    else if (rc == MB_OK && strcmp(r->model, "kernel") == 0 && r->here_cls[MB_PC_HOST] >= 0.1 * r->here_step) {
        /* the H200's GPU-bound transformer: traced 41.0 ms a step, 31.7% of it host code with the GPU idle,
         * timed 27.6 ms without the profiler; a B200 read 41 ms, 1.00x, and 18.8 ms with --step-ms */
        char h[32];
        mb_fmt_seconds(h, sizeof h, r->here_cls[MB_PC_HOST]);
        rc = add_note(r, err,
                      "the host's time is as the profiler recorded it (%s a step with the GPU idle here, %.0f%% of "
                      "it), which its cost per op lengthens: with the host's own time every projected step would be "
                      "as long as shown or shorter, and a faster GPU gain more; --step-ms, the loop's step timed without the "
                      "profiler, sets the host's time from it",
                      h, 100 * r->here_cls[MB_PC_HOST] / r->here_step);
    }
    /* Wings236's graph-break trace: "One-time set-up ... a kernel's first launch 4.37 ms" in its diagnosis,
     * and every machine's projected step held those 4.37 ms */
    if (rc == MB_OK && r->here_setup > 0 && r->here_step > 0) {
        char t[32];
        mb_fmt_seconds(t, sizeof t, r->here_setup);
        rc = add_note(r, err,
                      "every projected step holds the trace's one-time set-up as here (%s a step, %.0f%% of it: "
                      "allocation, first launches, torch.compile compiling), host time no GPU shortens; a trace "
                      "profiled after warm-up gives the loop's own step",
                      t, 100 * r->here_setup / r->here_step);
    }
    if (rc == MB_OK && strcmp(r->model, "per-stage") == 0)
        rc = add_note(r, err,
                      "per-stage model (%s): each stage scaled by one ratio of the target's ceiling or datasheet "
                      "figure to the one here, hidden time stays hidden; its error has not been measured against a "
                      "second machine",
                      r->per_stage_why[0] ? r->per_stage_why : "a stage file has no kernels");
    if (rc == MB_OK && strcmp(r->model, "kernel") == 0)
        rc = add_note(r, err,
                      "expected error of a projected step: %.0f%% mean absolute with datasheet figures, %.0f%% with "
                      "measured ceilings (paired public measurements of 8 GPUs, bench/project_validate; docs/gap.md); "
                      "%.0f%% and %.0f%% on the 2 of them the model was not developed on; between an H100 and an "
                      "H200, which share their tensor cores, %.1f%% and %.1f%% (%d projections of training steps "
                      "timed on lent GPUs, bench/data/pair-h100-h200-gpubound*)",
                      MB_RANK_EXPECTED_ERROR_DATASHEET_PCT, MB_RANK_EXPECTED_ERROR_MEASURED_PCT,
                      MB_RANK_HELD_OUT_ERROR_DATASHEET_PCT, MB_RANK_HELD_OUT_ERROR_MEASURED_PCT,
                      MB_RANK_PAIR_ERROR_DATASHEET_PCT, MB_RANK_PAIR_ERROR_MEASURED_PCT, MB_RANK_PAIR_PROJECTIONS);
    if (rc == MB_OK && strcmp(r->model, "kernel") == 0)
        rc = add_note(r, err,
                      "checked: the mean absolute error of the projected steps onto that GPU, in the row's mode "
                      "(datasheet or measured; configs/gap/projection_error.ini): on the same public measurements, "
                      "each GPU's figure from projections made without its data (leave-one-GPU-out), or on this "
                      "project's own pairs (an H100 and an H200) where the trace ran on a GPU of the architecture "
                      "they projected from; '-': never checked against a measurement from such a trace, the checked "
                      "class of its architecture named below, or that none of its architecture was checked");
    if (rc == MB_OK && strcmp(r->model, "kernel") == 0) {
        char **cn = NULL;
        int n_cn = 0;
        rc = mb_checked_notes(r->rows, r->n, &cn, &n_cn, err);
        for (int i = 0; i < n_cn; i++) {
            if (rc == MB_OK)
                rc = add_note(r, err, "%s", cn[i]);
            free(cn[i]);
        }
        free(cn);
    }
    if (rc == MB_OK)
        rc = add_note(r, err,
                      "'measured': the target's and this machine's measured ceilings (reference machines, results "
                      "files); 'datasheet': datasheet figures on both sides, so the ratio compares like with like");
    return rc;
}

void mb_rank_free(mb_ranking *r)
{
    free(r->rows);
    for (int i = 0; i < r->n_notes; i++)
        free(r->notes[i]);
    free(r->notes);
    memset(r, 0, sizeof *r);
}

/* ---- output --------------------------------------------------------------------------- */

static void fmt_usd(char *buf, size_t len, double usd)
{
    if (usd <= 0 || !isfinite(usd))
        snprintf(buf, len, "-");
    else if (usd >= 100)
        snprintf(buf, len, "$%.0f", usd);
    else if (usd >= 0.01)
        snprintf(buf, len, "$%.3g", usd);
    else
        snprintf(buf, len, "$%.2g", usd); /* %g keeps 3 significant digits of small sums */
}

/* A bar of `w` characters for cls scaled to `max`, one mark per class. */
static void bar(char *buf, int w, const double *cls, double max)
{
    int at = 0;
    double acc = 0;
    for (int c = 0; c < MB_PC_N; c++) {
        acc += cls[c];
        int upto = max > 0 ? (int)lround(w * acc / max) : 0;
        while (at < upto && at < w)
            buf[at++] = class_marks[c];
    }
    buf[at] = '\0';
}

/* "<lead><text>", the text wrapped under itself; a word longer than a line
 * (a path) is cut into lines. */
static void print_wrapped(FILE *o, const char *lead, const char *text)
{
    fputs(lead, o);
    int indent = (int)strlen(lead);
    mb_text_wrap(o, indent, indent, text, MB_TEXT_CUT | MB_TEXT_BYTES);
}

/* A row's step as the table shows it: ">52.4 ms" a lower bound, "22.5-38.5
 * ms" a step the host may lengthen up to its bound; its length. */
static int step_text(char *buf, size_t len, const mb_rank_row *w)
{
    char a[24], b[24];
    mb_fmt_seconds(a, sizeof a, w->step);
    if (w->step_max > 0) {
        mb_fmt_seconds(b, sizeof b, w->step_max);
        char *unit = strchr(a, ' '); /* one unit when both have it: "22.5-38.5 ms" */
        const char *unit_b = strchr(b, ' ');
        if (unit && unit_b && strcmp(unit, unit_b) == 0)
            *unit = '\0';
        return snprintf(buf, len, "%s-%s", a, b);
    }
    return snprintf(buf, len, "%s%s", w->kept > 0 ? ">" : "", a);
}

/* A row's cost of `steps` steps as the table shows it: "$0.0281", ">$0.0145" for a lower bound (its step is
 * one, so its cost is too), "$0.0376-0.0642" for a step the host may lengthen (its range: costed at its GPU's
 * time alone, a B200's 22.5 ms read $0.0376 where the host's 38.5 ms costs $0.0642), "-" unpriced. */
static void cost_text(char *buf, size_t len, const mb_rank_row *w, double steps)
{
    char u[24], v[24];
    fmt_usd(u, sizeof u, w->price / 3600 * w->step * steps);
    if (w->step_max > 0 && u[0] == '$') {
        fmt_usd(v, sizeof v, w->price / 3600 * w->step_max * steps);
        snprintf(buf, len, "%s-%s", u, v[0] == '$' ? v + 1 : v);
        return;
    }
    snprintf(buf, len, "%s%s", w->kept > 0 && u[0] == '$' ? ">" : "", u);
}

static void rank_text(FILE *o, const mb_ranking *r, bool md)
{
    bool prices = false;
    double max = r->here_step;
    for (int i = 0; i < r->n; i++) {
        prices |= r->rows[i].price > 0;
        if (r->rows[i].ok && r->rows[i].step > max)
            max = r->rows[i].step;
    }
    /* a step whose host is not known shows its range ("22.5-38.5 ms"): the
     * column widens and the bar gives it back, so a line stays in 120 columns */
    int sw = 9;
    for (int i = 0; i < r->n; i++) {
        char t[48];
        if (r->rows[i].ok && step_text(t, sizeof t, &r->rows[i]) > sw)
            sw = (int)strlen(t);
    }
    /* ... and so does a cost of such a step ("$0.0376-0.0642") */
    int cw = 10, ew = 9;
    for (int i = 0; i < r->n && prices; i++) {
        char t[64];
        if (!r->rows[i].ok)
            continue;
        cost_text(t, sizeof t, &r->rows[i], 1000);
        cw = (int)fmax(cw, (double)strlen(t));
        cost_text(t, sizeof t, &r->rows[i], r->epoch_steps > 0 ? (double)r->epoch_steps : 0);
        ew = (int)fmax(ew, (double)strlen(t));
    }
    int bw = (prices ? 12 - (cw - 10) - (ew - 9) : 28) - (sw - 9);
    if (bw < 4)
        bw = 4; /* the narrowest bar that still shows a split; the header's word shortens to it */
    char hs[32];
    mb_fmt_seconds(hs, sizeof hs, r->here_step);
    const char *title = r->by_cost ? "achines ranked by cost per step (priced ones first), then by projected step time"
                                   : "achines ranked by projected step time";
    fprintf(o, md ? "\n## M%s\n\n" : "\nm%s\n", title);
    if (md) { /* the closing ** right after the text: after a line break CommonMark shows it as text; a '>' (a
               * lower bound, ">26.1 ms") escaped, as one opening a wrapped line would start a block quote */
        char bold[2 * sizeof r->verdict + 8];
        size_t b = (size_t)snprintf(bold, sizeof bold, "**");
        for (const char *c = r->verdict; *c && b + 4 < sizeof bold; c++) {
            if (*c == '>')
                bold[b++] = '\\';
            bold[b++] = *c;
        }
        snprintf(bold + b, sizeof bold - b, "**");
        print_wrapped(o, "", bold);
        fputc('\n', o);
    } else
        print_wrapped(o, "  ", r->verdict);
    char lead[2048], per[96];
    if (r->step_given > 0)
        snprintf(per, sizeof per, "given by --step-ms; %d traced steps", r->steps);
    else
        snprintf(per, sizeof per, "mean of %d", r->steps);
    int at = snprintf(lead, sizeof lead, "%s model; here: %s (%s), %s per step (%s); #: machines share a rank "
                      "where the model cannot tell two of them apart (their projected %s differ by less than the "
                      "larger of their errors), with every machine between those two, so a rank can span more than "
                      "the error end to end; a lower bound ('>') comes after the machines projected whole of its kind "
                      "(priced or not) and is told apart from one only when its bound is beyond that error above "
                      "it; bar:",
                      strcmp(r->model, "kernel") == 0 ? "kernel-level" : "per-stage", r->here, r->here_source, hs,
                      per, r->by_cost ? "costs" : "steps");
    const char *names[MB_PC_N];
    char marks[MB_PC_N];
    int n_shown = shown_classes(r, names, NULL, marks);
    for (int k = 0; k < n_shown && at < (int)sizeof lead; k++)
        at += snprintf(lead + at, sizeof lead - (size_t)at, "%s %c %s", k ? "," : "", marks[k], names[k]);
    print_wrapped(o, md ? "" : "  ", lead);
    if (md)
        fputc('\n', o);
    if (md) {
        fprintf(o, "| # | machine | from | step | vs here | checked |%s bar |\n",
                prices ? " $/h | $/1k steps | $/epoch |" : "");
        fprintf(o, "| ---: | --- | --- | ---: | ---: | ---: |%s --- |\n", prices ? " ---: | ---: | ---: |" : "");
    } else {
        fprintf(o, "  %-3s %-34s %-9s %*s %8s %7s", "#", "machine", "from", sw, "step", "vs here", "checked");
        if (prices)
            fprintf(o, " %7s %*s %*s", "$/h", cw, "$/1k steps", ew, "$/epoch");
        fprintf(o, "  %s\n", bw >= 10 ? "step split" : "bar");
    }
    char b[64], st[48], sp[32], ph[24], pk[32], pe[32];
    bar(b, bw, r->here_cls, max);
    if (md)
        fprintf(o, "| - | %s (here) | %s | %s | 1.00x | |%s `%s` |\n", r->here, r->here_source, hs,
                prices ? " | | |" : "", b);
    else {
        fprintf(o, "  %-3s %-34.34s %-9s %*s %8s %7s", "-", r->here, r->here_source, sw, hs, "1.00x", "");
        if (prices)
            fprintf(o, " %7s %*s %*s", "", cw, "", ew, "");
        fprintf(o, "  %s\n", b);
    }
    for (int i = 0; i < r->n; i++) {
        const mb_rank_row *w = &r->rows[i];
        char num[16];
        snprintf(num, sizeof num, "%d", w->rank);
        if (!w->ok) {
            if (md)
                fprintf(o, "| - | %s | | | | |%s %s |\n", w->label[0] ? w->label : w->name, prices ? " | | |" : "",
                        w->note);
            else
                fprintf(o, "  %-3s %-34.34s %s\n", "-", w->label[0] ? w->label : w->name, "not projected (note below)");
            continue;
        }
        /* a lower bound says so: '>' the step, '<' the speed-up (kept kernels ran at this machine's speed); a
         * step the host may lengthen, its range and '<' the speed-up */
        step_text(st, sizeof st, w);
        snprintf(sp, sizeof sp, "%s%.2fx", w->kept > 0 || w->step_max > 0 ? "<" : "",
                 w->step > 0 ? r->here_step / w->step : 0);
        bar(b, bw, w->cls, max);
        fmt_usd(ph, sizeof ph, w->price);
        cost_text(pk, sizeof pk, w, 1000);
        cost_text(pe, sizeof pe, w, r->epoch_steps > 0 ? (double)r->epoch_steps : 0);
        char ck[16] = "-";
        if (w->checked_n > 0)
            snprintf(ck, sizeof ck, "%.0f%%", w->checked_pct);
        if (md) {
            fprintf(o, "| %s | %s | %s | %s | %s | %s |", num, w->label, w->source, st, sp, ck);
            if (prices)
                fprintf(o, " %s | %s | %s |", ph, pk, pe);
            fprintf(o, " `%s` |\n", b);
        } else {
            fprintf(o, "  %-3s %-34.34s %-9s %*s %8s %7s", num, w->label, w->source, sw, st, sp, ck);
            if (prices)
                fprintf(o, " %7s %*s %*s", ph, cw, pk, ew, pe);
            fprintf(o, "  %s\n", b);
        }
    }
    for (int i = 0; i < r->n; i++)
        if (r->rows[i].note[0]) {
            snprintf(lead, sizeof lead, md ? "- %.40s: " : "  note, %.40s: ",
                     r->rows[i].label[0] ? r->rows[i].label : r->rows[i].name);
            print_wrapped(o, lead, r->rows[i].note);
        }
    fprintf(o, md ? "\nAssumptions:\n\n" : "  assumptions:\n");
    for (int i = 0; i < r->n_notes; i++)
        print_wrapped(o, md ? "- " : "  - ", r->notes[i]);
}

int mb_rank_text(const mb_ranking *r, bool md, char **text, mb_err *err)
{
    size_t len = 0;
    *text = NULL;
    FILE *o = open_memstream(text, &len);
    if (o == NULL)
        return mb_errno(err, MB_ESYS, "open_memstream");
    rank_text(o, r, md);
    if (fclose(o) != 0) {
        free(*text);
        *text = NULL;
        return mb_errno(err, MB_ESYS, "formatting the ranking");
    }
    return MB_OK;
}

static cJSON *split_json(const double *cls)
{
    cJSON *s = cJSON_CreateObject();
    for (int c = 0; c < MB_PC_N; c++)
        cJSON_AddNumberToObject(s, class_names[c], cls[c]);
    return s;
}

/* The GPU events' time per step by kind: as the trace recorded them (here) or
 * as projected, before the re-lay and --step-ms (GPU time: the profiler does
 * not lengthen it). What scripts/gpu_pair.py kernels holds against the
 * kernels two GPUs ran. */
static cJSON *kernel_json(const double *k)
{
    static const char *const kind_names[MB_PK_N] = { [MB_PK_GEMM] = "gemm", [MB_PK_CONV] = "conv",
                                                    [MB_PK_ATTENTION] = "attention", [MB_PK_MEMORY] = "memory",
                                                    [MB_PK_TRANSFER] = "transfer",
                                                    [MB_PK_COLLECTIVE] = "collective" };
    cJSON *s = cJSON_CreateObject();
    for (int i = 0; i < MB_PK_N; i++)
        cJSON_AddNumberToObject(s, kind_names[i], k[i]);
    return s;
}

cJSON *mb_rank_json(const mb_ranking *r)
{
    cJSON *doc = cJSON_CreateObject();
    cJSON_AddStringToObject(doc, "model", r->model);
    /* the answer: what the order is by, the one sentence, whether no GPU helps */
    cJSON_AddStringToObject(doc, "ranked_by", r->by_cost ? "cost" : "step");
    cJSON_AddStringToObject(doc, "verdict", r->verdict);
    cJSON_AddBoolToObject(doc, "gpu_idle_bound", r->idle_bound);
    cJSON_AddBoolToObject(doc, "host_bound", r->host_bound);
    cJSON_AddBoolToObject(doc, "kernel_wait_bound", r->queued_bound);
    cJSON_AddBoolToObject(doc, "communication_bound", r->comm_bound);
    cJSON_AddBoolToObject(doc, "nothing_to_rank", r->nothing_scaled && !r->idle_bound && !r->comm_bound);
    cJSON *h = cJSON_AddObjectToObject(doc, "here");
    cJSON_AddStringToObject(h, "machine", r->here);
    cJSON_AddStringToObject(h, "figures", r->here_source);
    cJSON_AddNumberToObject(h, "step_seconds", r->here_step);
    if (strcmp(r->model, "kernel") == 0) {
        cJSON_AddNumberToObject(h, "trace_step_seconds", r->trace_step);
        cJSON_AddNumberToObject(h, "host_scale", r->host_scale);
        if (r->step_given > 0)
            cJSON_AddNumberToObject(h, "step_seconds_given", r->step_given);
        /* the host ran ahead of a GPU-bound step: its own time is known only as at most this */
        if (r->host_open && r->host_given <= 0)
            cJSON_AddNumberToObject(h, "host_seconds_max", r->host_upper);
        else
            cJSON_AddNullToObject(h, "host_seconds_max");
        if (r->host_given > 0)
            cJSON_AddNumberToObject(h, "host_seconds_given", r->host_given);
    }
    cJSON_AddItemToObject(h, "split_seconds", split_json(r->here_cls));
    if (strcmp(r->model, "kernel") == 0) /* of split_seconds.host: set-up the trace holds once */
        cJSON_AddNumberToObject(h, "setup_seconds", r->here_setup);
    if (strcmp(r->model, "kernel") == 0)
        cJSON_AddItemToObject(h, "kernel_seconds", kernel_json(r->here_kernel));
    cJSON_AddNumberToObject(doc, "steps", r->steps);
    cJSON *rows = cJSON_AddArrayToObject(doc, "ranking");
    for (int i = 0; i < r->n; i++) {
        const mb_rank_row *w = &r->rows[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "target", w->name);
        cJSON_AddStringToObject(o, "machine", w->label);
        cJSON_AddStringToObject(o, "model", w->model);
        cJSON_AddBoolToObject(o, "projected", w->ok);
        if (w->ok) {
            cJSON_AddNumberToObject(o, "rank", w->rank); /* shared by the machines the model cannot tell apart */
            cJSON_AddNumberToObject(o, "error_pct", w->error_pct);
            cJSON_AddStringToObject(o, "figures", w->source);
            cJSON_AddNumberToObject(o, "step_seconds", w->step);
            cJSON_AddNumberToObject(o, "speedup", w->step > 0 ? r->here_step / w->step : 0);
            cJSON_AddItemToObject(o, "split_seconds", split_json(w->cls));
            if (strcmp(w->model, "kernel") == 0)
                cJSON_AddItemToObject(o, "kernel_seconds", kernel_json(w->kernel));
            if (w->step_max > 0) { /* the host's own time may lengthen the step up to this (host_open) */
                cJSON_AddNumberToObject(o, "step_seconds_max", w->step_max);
                cJSON_AddNumberToObject(o, "speedup_min", r->here_step / w->step_max);
            }
            cJSON_AddBoolToObject(o, "lower_bound", w->kept > 0);
            cJSON_AddNumberToObject(o, "kept_kernels_per_step", (double)w->kept);
            if (w->checked_n > 0) { /* configs/gap/projection_error.ini */
                cJSON_AddNumberToObject(o, "checked_error_pct", w->checked_pct);
                cJSON_AddNumberToObject(o, "checked_projections", (double)w->checked_n);
                /* public: leave-one-GPU-out on public data; pairs: this project's, from checked_from */
                cJSON_AddStringToObject(o, "checked_basis", w->checked.basis);
                if (w->checked.from[0])
                    cJSON_AddStringToObject(o, "checked_from", w->checked.from);
            } else {
                cJSON_AddNullToObject(o, "checked_error_pct");
                cJSON_AddNumberToObject(o, "checked_projections", 0);
                if (w->checked.nearest[0] && strcmp(w->model, "kernel") == 0) {
                    cJSON_AddStringToObject(o, "checked_nearest", w->checked.nearest);
                    cJSON_AddNumberToObject(o, "checked_nearest_error_pct", w->checked.nearest_pct);
                }
                if (w->checked.pairs_n > 0) { /* the pairs, from another architecture than the trace's GPU */
                    cJSON_AddStringToObject(o, "checked_from", w->checked.from);
                    cJSON_AddNumberToObject(o, "checked_pairs_error_pct", w->checked.pairs_pct);
                    cJSON_AddNumberToObject(o, "checked_pairs_projections", (double)w->checked.pairs_n);
                }
            }
        }
        if (w->price > 0) {
            cJSON_AddNumberToObject(o, "usd_per_hour", w->price);
            if (w->ok) {
                cJSON_AddNumberToObject(o, "usd_per_step", w->price / 3600 * w->step);
                /* a lower bound's step makes its cost one too: at least usd_per_step */
                cJSON_AddBoolToObject(o, "usd_lower_bound", w->kept > 0);
                if (w->step_max > 0) /* the cost at the host's bound, as step_seconds_max */
                    cJSON_AddNumberToObject(o, "usd_per_step_max", w->price / 3600 * w->step_max);
                if (r->epoch_steps > 0)
                    cJSON_AddNumberToObject(o, "usd_per_epoch", w->price / 3600 * w->step * (double)r->epoch_steps);
                if (r->epoch_steps > 0 && w->step_max > 0)
                    cJSON_AddNumberToObject(o, "usd_per_epoch_max",
                                            w->price / 3600 * w->step_max * (double)r->epoch_steps);
            }
        }
        if (w->note[0])
            cJSON_AddStringToObject(o, "note", w->note);
        cJSON_AddItemToArray(rows, o);
    }
    cJSON *e = cJSON_AddObjectToObject(doc, "expected_error_pct");
    if (strcmp(r->model, "kernel") == 0) { /* mean absolute error of a step (bench/project_validate) */
        cJSON_AddNumberToObject(e, "datasheet", MB_RANK_EXPECTED_ERROR_DATASHEET_PCT);
        cJSON_AddNumberToObject(e, "measured", MB_RANK_EXPECTED_ERROR_MEASURED_PCT);
        cJSON *h = cJSON_AddObjectToObject(e, "held_out"); /* the GPUs added after the model was written */
        cJSON_AddNumberToObject(h, "datasheet", MB_RANK_HELD_OUT_ERROR_DATASHEET_PCT);
        cJSON_AddNumberToObject(h, "measured", MB_RANK_HELD_OUT_ERROR_MEASURED_PCT);
        cJSON *a = cJSON_AddObjectToObject(e, "same_architecture"); /* H100 and H200, this project's pairs */
        cJSON_AddNumberToObject(a, "datasheet", MB_RANK_PAIR_ERROR_DATASHEET_PCT);
        cJSON_AddNumberToObject(a, "measured", MB_RANK_PAIR_ERROR_MEASURED_PCT);
        cJSON_AddNumberToObject(a, "projections", MB_RANK_PAIR_PROJECTIONS);
    } else {
        cJSON_AddNullToObject(e, "datasheet");
        cJSON_AddNullToObject(e, "measured");
        cJSON_AddNullToObject(e, "held_out");
        cJSON_AddNullToObject(e, "same_architecture");
    }
    cJSON *a = cJSON_AddArrayToObject(doc, "assumptions");
    for (int i = 0; i < r->n_notes; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(r->notes[i]));
    return doc;
}

/* ---- HTML ------------------------------------------------------------------------------- */

/* A chart row's label: its rank (shared within the error), the machine, its
 * price per hour when priced, what it lacks; row -1 is here. */
static void machine_label(char *buf, size_t len, const mb_ranking *r, int row)
{
    if (row < 0) {
        snprintf(buf, len, "%.120s (here)", r->here);
        return;
    }
    const mb_rank_row *w = &r->rows[row];
    char rank[16] = "-", price[96] = "", checked[48] = "";
    if (w->rank > 0)
        snprintf(rank, sizeof rank, "%d", w->rank);
    if (w->price > 0 && w->ok) {
        char h[24];
        fmt_usd(h, sizeof h, w->price);
        snprintf(price, sizeof price, ", %s/h", h);
    }
    if (w->checked_n > 0)
        snprintf(checked, sizeof checked, ", checked: %.0f%%", w->checked_pct);
    char upto[48] = "";
    if (w->ok && w->step_max > 0) {
        char m[24];
        mb_fmt_seconds(m, sizeof m, w->step_max);
        snprintf(upto, sizeof upto, " (up to %s: the host)", m);
    }
    snprintf(buf, len, "%s. %.90s%s%s%s%s", rank, w->label,
             !w->ok ? " (not projected)" : w->kept > 0 ? " (lower bound)" : "", upto, price, checked);
}

/* The priced machines' cost per 1000 steps, in the ranking's order. */
static void cost_chart(FILE *o, const mb_ranking *r)
{
    int n = 0;
    double max = 0;
    for (int i = 0; i < r->n; i++)
        if (r->rows[i].ok && r->rows[i].price > 0) {
            n++;
            max = fmax(max, usd_per_step(&r->rows[i]) * 1000);
        }
    if (n == 0)
        return;
    mb_chart c;
    mb_chart_begin(&c, o, "costs", "Cost per 1000 steps of the priced machines, in the ranking's order (USD)",
                   MB_HTML_WIDTH, 60 + 26.0 * n + 44, 430, 44);
    c.x = (mb_scale){ 0, max > 0 ? max : 1, c.left, c.right, false };
    mb_scale_nice(&c.x);
    mb_chart_x_plain_axis(&c, "USD per 1000 steps");
    for (int i = 0, k = 0; i < r->n; i++) {
        const mb_rank_row *w = &r->rows[i];
        if (!w->ok || !(w->price > 0))
            continue;
        char label[200], t[200], u[32];
        machine_label(label, sizeof label, r, i);
        cost_text(u, sizeof u, w, 1000);
        snprintf(t, sizeof t, "%.90s: %s per 1000 steps%s", w->label, u,
                 w->kept > 0 ? " (a lower bound)" : w->step_max > 0 ? " (the first if the host keeps up)" : "");
        mb_chart_category(&c, k, n, label);
        mb_chart_bar(&c, k, n, 0, 1, 0, usd_per_step(w) * 1000, 0, t);
        mb_chart_bar_value(&c, k, n, usd_per_step(w) * 1000, u);
        k++;
    }
    mb_chart_end(&c);
}

/* One stacked bar per machine (here first), split by class, on one time
 * axis; then the assumptions. */
void mb_rank_html(FILE *o, const mb_ranking *r)
{
    int n = r->n + 1;
    double max = r->here_step;
    for (int i = 0; i < r->n; i++)
        if (r->rows[i].ok && r->rows[i].step > max)
            max = r->rows[i].step;
    fprintf(o, "<h2>%s</h2>\n<p class=\"bottleneck\">", r->by_cost ? "Machines ranked by cost per step (priced ones "
                                                                      "first), then by projected step time"
                                                                    : "Machines ranked by projected step time");
    mb_html_escape(o, r->verdict);
    fputs("</p>\n<p>Machines share a rank where the model cannot tell two of them apart (their projected steps, with "
          "prices their costs, differ by less than the larger of their errors), with every machine between those "
          "two, so a rank can span more than the error end to end. A lower bound comes after the machines projected "
          "whole of its kind (priced or not) and is told apart from one only when its bound is beyond that error "
          "above it.</p>\n", o);
    mb_chart c;
    char title[256];
    snprintf(title, sizeof title, "Step time projected onto each machine (%s model), split by what bounds it",
             strcmp(r->model, "kernel") == 0 ? "kernel-level" : "per-stage");
    mb_chart_begin(&c, o, "machines", title, MB_HTML_WIDTH, 60 + 26.0 * n + 44, 430, 44);
    c.x = (mb_scale){ 0, max > 0 ? max : 1e-3, c.left, c.right, false }; /* seconds: the axis picks its unit */
    mb_scale_nice(&c.x);
    const char *names[MB_PC_N];
    int cols[MB_PC_N], n_shown = shown_classes(r, names, cols, NULL);
    mb_chart_legend(&c, n_shown, names, cols);
    mb_chart_x_time_axis(&c, "time per step");
    for (int i = 0; i < n; i++) {
        const double *cls = i == 0 ? r->here_cls : r->rows[i - 1].cls;
        char label[200];
        machine_label(label, sizeof label, r, i - 1);
        mb_chart_category(&c, i, n, label);
        if (i > 0 && !r->rows[i - 1].ok)
            continue;
        double at = 0;
        for (int k = 0; k < MB_PC_N; k++) {
            if (!(cls[k] > 0))
                continue;
            char t[256], s[32];
            mb_fmt_seconds(s, sizeof s, cls[k]);
            snprintf(t, sizeof t, "%s: %s", words_of(r)[k], s);
            mb_chart_bar(&c, i, n, 0, 1, at, at + cls[k], class_colors[k], t);
            at += cls[k];
        }
    }
    mb_chart_end(&c);
    if (r->by_cost)
        cost_chart(o, r);
    fputs("<ul>\n", o);
    for (int i = 0; i < r->n; i++)
        if (r->rows[i].note[0]) {
            fputs("<li>", o);
            mb_html_escape(o, r->rows[i].label);
            fputs(": ", o);
            mb_html_escape(o, r->rows[i].note);
            fputs("</li>\n", o);
        }
    for (int i = 0; i < r->n_notes; i++) {
        fputs("<li>", o);
        mb_html_escape(o, r->notes[i]);
        fputs("</li>\n", o);
    }
    fputs("</ul>\n", o);
}
