/* project_validate: the measured error of the kernel-level projection
 * (harness/analysis/project/project.h) on paired measurements: the same workloads
 * timed on two or more GPUs. Each workload measured on GPU A is projected
 * onto every other GPU B it was measured on, operator by operator, with the
 * datasheets of configs/hardware on both sides, and compared with what B
 * measured; next to three baselines: no change, the ratio of FP32 peaks,
 * the ratio of memory bandwidths.
 *
 *   project_validate DATA.csv [--ceilings CEILINGS.csv] [--max-mean PCT] [--expect PCT] [--per-workload] [--breakdown]
 *                    [--only TEXT] [--skip-gpu GPU]... [--with-gpu GPU]... [--per-target] [--check-per-target INI]
 *                    [--step-form scale|scale-work|ops|work|outside|fit] [--leave-one-out]
 *
 * --ceilings: measured figures instead of the datasheets' on both sides
 * (gpu,fp32_flops,bw_bytes,source; a 0 keeps the datasheet's; rows of one
 * GPU merge): the "measured target" mode. --breakdown: the error by GPU
 * pair, operator kind and operator size, with the data's own floor (below).
 * --only TEXT: the workloads whose name holds TEXT; --skip-gpu GPU
 * (repeatable): no pair with that GPU (held-out splits: a model change must
 * hold on each); --with-gpu GPU (repeatable): only the pairs with one of
 * these GPUs on either side (the P100 and the P4 came after the model was
 * written: a test it was not developed on, docs/gap.md).
 *
 * DATA.csv: workload,gpu,op,kind,weight,flops,bytes,ms (bench/data/
 * neusight_labels.csv, made by bench/neusight_extract.py): one "(step)" row
 * per workload and GPU with the measured step (end-to-end) time, then its
 * operators in graph order (kind gemm, memory or other; weight = how many
 * times the op runs per step). --max-mean: exit 1 when the model's mean
 * absolute step error exceeds PCT. --expect PCT: exit 1 unless that mean,
 * to 0.1%, is PCT: CI holds the figure the ranking states
 * (harness/analysis/project/project_rank.h) to what this program measures, both
 * ways, so a model change that moves it must restate it.
 *
 * --per-target: the mean absolute step error of the projections onto each
 * GPU and their count, as the section of configs/gap/projection_error.ini
 * for this mode ([datasheet] or [measured]) that `gap --target` shows beside
 * each machine. --check-per-target INI: exit 1 unless that section of INI
 * holds exactly these figures (to 0.1 and the count).
 *
 * --step-form: how the step on B follows from its projected operators (the
 * candidates below main's helpers; scale unless told). --leave-one-out: each
 * projection onto a GPU made by a model fitted without any of that GPU's
 * data: what is fitted (only `--step-form fit`'s choice) is fitted once per
 * GPU on the projections between the others. The figures CI holds are this
 * mode's: a model that fits something to these labels is then measured on
 * data it did not see; one that fits nothing gives the in-sample figures. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gapconfig.h"
#include "hardware.h"
#include "project.h"

enum { MAX_OPS = 512, MAX_RUNS = 128, MAX_GPUS = 16, N_METHODS = 4 };
static const char *const method_names[N_METHODS] = { "model", "no change", "fp32 peak ratio", "bandwidth ratio" };

typedef struct op {
    char kind[16];
    double weight, flops, bytes, ms;
} op;

typedef struct run {
    char workload[64], gpu[32];
    double step_ms;
    double overhead_ms; /* run_overhead */
    op *ops;
    int n_ops;
} run;

typedef struct stats {
    double sum_abs, max_abs, sum_signed, sum_speedup;
    long n;
    double op_sum_abs;
    long op_n;
} stats;

/* --breakdown: where the error comes from, per ordered GPU pair and per op
 * kind. For each pair, summed over its workloads: the model's step error,
 * the error of its projected operator sum against the operators B measured,
 * and the data's own floor: the step error this projection would still have
 * with every operator's time on B known exactly (step_A x sum_B / sum_A),
 * i.e. how far the step-to-operator-sum ratio differs between the two
 * measurements. Per kind (gemm, memory, other): projected / measured - 1 of
 * the kind's time on B, and the kind's share of B's operator sum. */
enum { N_KINDS = 3, N_SIZES = 3 };
static const char *const kind_names[N_KINDS] = { "gemm", "memory", "other" };
static const char *const size_names[N_SIZES] = { "< 0.1 ms", "0.1-1 ms", ">= 1 ms" };

typedef struct pair_stats {
    char a[32], b[32];
    long n;
    double step_abs, sum_abs, floor_abs, own_abs;
    double proj[N_KINDS], meas[N_KINDS], share[N_KINDS];
} pair_stats;

typedef struct op_class {
    double sum_abs, time;
    long n;
} op_class;

/* --per-target: the step errors of the projections onto each GPU */
typedef struct target_stats {
    char gpu[32];
    double sum_abs;
    long n;
} target_stats;

static target_stats targets[MAX_GPUS];
static int n_targets;

/* per workload: each method's mean |e| over the workload's projections. The
 * goal's "on no workload worse than the best baseline" read per workload: the
 * model against the one baseline that does best on that workload (beside the
 * stricter per-projection count, whose best baseline is chosen after seeing
 * each projection's answer). */
typedef struct workload_stats {
    char name[64];
    double sum_abs[N_METHODS];
    long n;
} workload_stats;

static workload_stats workload_errs[MAX_RUNS];
static int n_workload_errs;

static void add_workload(const char *name, const double *abs_err)
{
    int i = 0;
    while (i < n_workload_errs && strcmp(workload_errs[i].name, name) != 0)
        i++;
    if (i == n_workload_errs) /* at most one entry per run: MAX_RUNS is enough */
        snprintf(workload_errs[n_workload_errs++].name, sizeof workload_errs[0].name, "%.63s", name);
    for (int m = 0; m < N_METHODS; m++)
        workload_errs[i].sum_abs[m] += abs_err[m];
    workload_errs[i].n++;
}

/* The workloads on which the model's mean |e| is above the best baseline's, each named. */
static void print_per_workload_means(void)
{
    int worse = 0;
    for (int i = 0; i < n_workload_errs; i++) {
        const workload_stats *w = &workload_errs[i];
        int best = 1;
        for (int m = 2; m < N_METHODS; m++)
            if (w->sum_abs[m] < w->sum_abs[best])
                best = m;
        if (w->sum_abs[0] <= w->sum_abs[best] + 1e-12)
            continue;
        printf("    %-28s model %5.1f%%, %s %5.1f%% (%ld projections)\n", w->name, 100 * w->sum_abs[0] / w->n,
               method_names[best], 100 * w->sum_abs[best] / w->n, w->n);
        worse++;
    }
    printf("  per workload (the mean |e| of its projections): the model is worse than the best baseline for that "
           "workload on %d of %d%s\n", worse, n_workload_errs, worse ? " (listed above)" : "");
}

static pair_stats pairs[MAX_GPUS * MAX_GPUS];
static int n_pairs;
static op_class op_classes[N_KINDS][N_SIZES];

static int kind_index(const char *kind)
{
    for (int k = 0; k < N_KINDS; k++)
        if (strcmp(kind, kind_names[k]) == 0)
            return k;
    return N_KINDS - 1;
}

static int size_index(double ms)
{
    return ms < 0.1 ? 0 : ms < 1 ? 1 : 2;
}

static pair_stats *pair_of(const char *a, const char *b)
{
    for (int i = 0; i < n_pairs; i++)
        if (strcmp(pairs[i].a, a) == 0 && strcmp(pairs[i].b, b) == 0)
            return &pairs[i];
    if (n_pairs == MAX_GPUS * MAX_GPUS)
        return NULL;
    pair_stats *p = &pairs[n_pairs++];
    snprintf(p->a, sizeof p->a, "%s", a);
    snprintf(p->b, sizeof p->b, "%s", b);
    return p;
}

static void print_breakdown(void)
{
    printf("breakdown by GPU pair (mean over its workloads; per kind: projected / measured - 1 of the kind's time on "
           "B, and its share of B's operator sum):\n");
    printf("  %-15s    %-15s %3s %8s %8s %8s", "from", "to", "n", "step|e|", "opsum|e|", "floor|e|");
    for (int k = 0; k < N_KINDS; k++)
        printf(" %15s", kind_names[k]);
    printf("\n");
    double step = 0, sum = 0, floor = 0, own = 0;
    long n = 0;
    for (int i = 0; i < n_pairs; i++) {
        const pair_stats *p = &pairs[i];
        printf("  %-15s -> %-15s %3ld %7.1f%% %7.1f%% %7.1f%%", p->a, p->b, p->n, 100 * p->step_abs / (double)p->n,
               100 * p->sum_abs / (double)p->n, 100 * p->floor_abs / (double)p->n);
        for (int k = 0; k < N_KINDS; k++)
            if (p->meas[k] > 0)
                printf("  %+6.1f%% (%3.0f%%)", 100 * (p->proj[k] / p->meas[k] - 1), 100 * p->share[k] / (double)p->n);
            else
                printf(" %15s", "-");
        printf("\n");
        step += p->step_abs;
        sum += p->sum_abs;
        floor += p->floor_abs;
        own += p->own_abs;
        n += p->n;
    }
    if (n) {
        printf("  all: step %.1f%%, operator sum %.1f%%, the data's floor %.1f%% (the step error with every "
               "operator known exactly)\n",
               100 * step / (double)n, 100 * sum / (double)n, 100 * floor / (double)n);
        /* how much of that floor is B's own mismatch, and how much carrying A's ratio adds */
        printf("  B's own step against its operator sum: %.1f%% (the floor of a step taken as B's operators, "
               "--step-form ops)\n", 100 * own / (double)n);
    }
    printf("breakdown by operator kind and its time on B (operators of 0.05 ms or more, every pair):\n");
    printf("  %-8s %-10s %7s %9s %12s\n", "kind", "time", "ops", "mean|e|", "time share");
    double total = 0;
    for (int k = 0; k < N_KINDS; k++)
        for (int z = 0; z < N_SIZES; z++)
            total += op_classes[k][z].time;
    for (int k = 0; k < N_KINDS; k++)
        for (int z = 0; z < N_SIZES; z++) {
            const op_class *c = &op_classes[k][z];
            if (c->n)
                printf("  %-8s %-10s %7ld %8.1f%% %11.1f%%\n", kind_names[k], size_names[z], c->n,
                       100 * c->sum_abs / (double)c->n, total > 0 ? 100 * c->time / total : 0);
        }
}

static int read_csv(const char *path, run *runs, int *n_runs)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    char line[1024];
    int lineno = 0;
    *n_runs = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        if (lineno == 1)
            continue; /* header */
        char w[64], g[32], name[128], kind[16];
        double weight, flops, bytes, ms;
        if (sscanf(line, "%63[^,],%31[^,],%127[^,],%15[^,],%lf,%lf,%lf,%lf", w, g, name, kind, &weight, &flops,
                   &bytes, &ms) != 8) {
            fprintf(stderr, "%s:%d: expected workload,gpu,op,kind,weight,flops,bytes,ms\n", path, lineno);
            fclose(f);
            return -1;
        }
        if (strcmp(name, "(step)") == 0) {
            if (*n_runs == MAX_RUNS) {
                fprintf(stderr, "%s:%d: more than %d runs\n", path, lineno, MAX_RUNS);
                fclose(f);
                return -1;
            }
            run *r = &runs[(*n_runs)++];
            memset(r, 0, sizeof *r);
            snprintf(r->workload, sizeof r->workload, "%s", w);
            snprintf(r->gpu, sizeof r->gpu, "%s", g);
            r->step_ms = ms;
            r->ops = calloc(MAX_OPS, sizeof *r->ops);
            if (r->ops == NULL) {
                fclose(f);
                return -1;
            }
            continue;
        }
        run *r = *n_runs ? &runs[*n_runs - 1] : NULL;
        if (r == NULL || strcmp(r->workload, w) || strcmp(r->gpu, g) || r->n_ops == MAX_OPS) {
            fprintf(stderr, "%s:%d: an operator outside its (step) row's run\n", path, lineno);
            fclose(f);
            return -1;
        }
        op *o = &r->ops[r->n_ops++];
        snprintf(o->kind, sizeof o->kind, "%s", kind);
        o->weight = weight;
        o->flops = flops;
        o->bytes = bytes;
        o->ms = ms;
    }
    fclose(f);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What an operator costs on this machine before it does any GPU work: the
 * median time of the run's operators that launch none (kind "other": size,
 * getitem, getattr, eq: NeuSight's harness times each operator alone, so
 * every time includes its Python dispatch and timing overhead). The model
 * keeps that much of each operator's time unscaled (mb_proj_kernel.overhead).
 * 0 when the run has no such operator. */
static double run_overhead(const run *r)
{
    double *t = malloc((size_t)(r->n_ops + 1) * sizeof *t), med = 0;
    int n = 0;
    for (int i = 0; t && i < r->n_ops; i++)
        if (strcmp(r->ops[i].kind, "other") == 0)
            t[n++] = r->ops[i].ms;
    if (n > 0) {
        qsort(t, (size_t)n, sizeof *t, cmp_double);
        med = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    }
    free(t);
    return med;
}

typedef struct ceiling {
    char gpu[32];
    double flops, bw;
} ceiling;
static ceiling ceilings[MAX_GPUS];
static int n_ceilings;

static int read_ceilings(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        return -1;
    }
    char line[512], g[32];
    double fl, bw;
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        if (++lineno == 1)
            continue;
        if (sscanf(line, "%31[^,],%lf,%lf", g, &fl, &bw) != 3 || n_ceilings == MAX_GPUS) {
            fprintf(stderr, "%s:%d: expected gpu,fp32_flops,bw_bytes,source\n", path, lineno);
            fclose(f);
            return -1;
        }
        ceiling *c = NULL;
        for (int i = 0; i < n_ceilings; i++)
            if (strcmp(ceilings[i].gpu, g) == 0)
                c = &ceilings[i];
        if (c == NULL) {
            c = &ceilings[n_ceilings++];
            snprintf(c->gpu, sizeof c->gpu, "%s", g);
        }
        if (fl > 0)
            c->flops = fl;
        if (bw > 0)
            c->bw = bw;
    }
    fclose(f);
    return 0;
}

/* The GPU `stem` for the model, and *fp32 for the 'fp32 peak ratio'
 * baseline: the datasheet's FP32 peak as printed (at the boost clock), or
 * the measured ceiling. */
static int load_gpu(const char *stem, mb_proj_gpu *g, double *fp32)
{
    mb_datasheet *d = NULL;
    mb_err err = { 0 };
    int rc = mb_datasheet_find(stem, &d, &err);
    if (rc == MB_OK)
        rc = mb_proj_gpu_from_datasheet(d, g, &err);
    mb_datasheet_free(d);
    if (rc != MB_OK)
        fprintf(stderr, "%s: %s\n", stem, err.msg);
    *fp32 = rc == MB_OK ? g->flops[MB_PM_FP32] / (g->sustained > 0 ? g->sustained : 1) : 0;
    for (int i = 0; rc == MB_OK && i < n_ceilings; i++)
        if (strcmp(ceilings[i].gpu, stem) == 0) {
            if (ceilings[i].flops > 0)
                *fp32 = g->flops[MB_PM_FP32] = ceilings[i].flops; /* measured: the clock it held is in it */
            if (ceilings[i].bw > 0)
                g->bw = ceilings[i].bw;
        }
    return rc;
}

/* One operator's projected time (seconds): gemm compute-bound by its shapes,
 * memory-bound ops by their bytes, the rest (views, getitem, size: framework
 * overhead) kept. */
static double project_op(const op *o, double overhead_ms, const mb_proj_gpu *a, const mb_proj_gpu *b)
{
    double s = o->ms * 1e-3;
    if (strcmp(o->kind, "other") == 0)
        return s;
    mb_proj_kernel k = { .seconds = s, .flops = o->flops, .bytes = o->bytes, .math = MB_PM_FP32,
                         .tensor = strcmp(o->kind, "gemm") == 0, .overhead = overhead_ms * 1e-3 };
    return mb_proj_kernel_time(&k, a, b).seconds;
}

static void add(stats *st, double pred, double meas, double from)
{
    double e = (pred - meas) / meas;
    st->sum_abs += fabs(e);
    st->sum_signed += e;
    st->max_abs = fmax(st->max_abs, fabs(e));
    /* error of the predicted speed-up from -> there */
    st->sum_speedup += fabs((from / pred) / (from / meas) - 1);
    st->n++;
}

static void print_stats(const char *title, stats *st)
{
    printf("%s\n", title);
    printf("  %-16s %9s %9s %9s %11s %10s\n", "method", "mean|e|", "max|e|", "bias", "speedup|e|", "op mean|e|");
    for (int m = 0; m < N_METHODS; m++) {
        const stats *s = &st[m];
        if (s->n == 0)
            continue;
        char opcol[32] = "-";
        if (s->op_n)
            snprintf(opcol, sizeof opcol, "%.1f%%", 100 * s->op_sum_abs / (double)s->op_n);
        printf("  %-16s %8.1f%% %8.1f%% %+8.1f%% %10.1f%% %10s\n", method_names[m], 100 * s->sum_abs / (double)s->n,
               100 * s->max_abs, 100 * s->sum_signed / (double)s->n, 100 * s->sum_speedup / (double)s->n, opcol);
    }
    printf("  (%ld projections)\n", st[0].n);
}

/* A percentage as the figures print it, to 0.1: what --expect and
 * --check-per-target compare. */
static double pct1(double fraction)
{
    return round(1000 * fraction) / 10;
}

static double target_mean(const target_stats *t)
{
    return t->sum_abs / (double)t->n;
}

static void add_target(const char *gpu, double abs_err)
{
    int i = 0;
    while (i < n_targets && strcmp(targets[i].gpu, gpu) != 0)
        i++;
    if (i == MAX_GPUS)
        return;
    if (i == n_targets) {
        snprintf(targets[i].gpu, sizeof targets[i].gpu, "%s", gpu);
        n_targets++;
    }
    targets[i].sum_abs += abs_err;
    targets[i].n++;
}

static int cmp_target(const void *a, const void *b)
{
    return strcmp(((const target_stats *)a)->gpu, ((const target_stats *)b)->gpu);
}

static void print_per_target(const char *mode)
{
    printf("[%s]\n", mode);
    for (int i = 0; i < n_targets; i++)
        printf("%s = %.1f %ld\n", targets[i].gpu, pct1(target_mean(&targets[i])), targets[i].n);
}

/* --check-per-target: the section `mode` of the INI file against targets[] */
static int check_per_target(const char *path, const char *mode)
{
    mb_ini ini;
    mb_err err;
    if (mb_ini_load(path, &ini, &err) != MB_OK) {
        fprintf(stderr, "project_validate: %s\n", err.msg);
        return 2;
    }
    int bad = 0, listed = 0;
    for (int i = 0; i < ini.n; i++) {
        if (strcmp(ini.e[i].section, mode) != 0)
            continue;
        listed++;
        double pct;
        long n;
        const target_stats *t = NULL;
        for (int k = 0; k < n_targets && t == NULL; k++)
            if (strcmp(targets[k].gpu, ini.e[i].key) == 0)
                t = &targets[k];
        if (sscanf(ini.e[i].value, "%lf %ld", &pct, &n) != 2 || t == NULL ||
            fabs(pct1(target_mean(t)) - pct) > 0.01 || n != t->n) {
            if (t)
                fprintf(stderr, "project_validate: %s [%s] %s = %s, measured %.1f %ld\n", path, mode, ini.e[i].key,
                        ini.e[i].value, pct1(target_mean(t)), t->n);
            else
                fprintf(stderr, "project_validate: %s [%s] %s: no projection onto it\n", path, mode, ini.e[i].key);
            bad = 1;
        }
    }
    if (listed != n_targets) {
        fprintf(stderr, "project_validate: %s [%s] lists %d GPUs, the data project onto %d (--per-target)\n", path,
                mode, listed, n_targets);
        bad = 1;
    }
    mb_ini_free(&ini);
    return bad;
}

static int usage(void)
{
    fprintf(stderr, "usage: project_validate DATA.csv [--ceilings CEILINGS.csv] [--max-mean PCT] [--expect PCT] "
                    "[--per-workload] [--breakdown] [--only TEXT] [--skip-gpu GPU]... [--with-gpu GPU]... "
                    "[--per-target] [--check-per-target INI] [--step-form FORM|fit] [--leave-one-out]\n");
    return 2;
}

/* --with-gpu and --skip-gpu: true when no GPU was named, or when a or b is one of them */
static bool pair_selected(const char *a, const char *b, const char *const *gpus, int n_gpus)
{
    if (n_gpus == 0)
        return true;
    for (int i = 0; i < n_gpus; i++)
        if (strcmp(a, gpus[i]) == 0 || strcmp(b, gpus[i]) == 0)
            return true;
    return false;
}

/* --step-form: how the step on B follows from the operators projected onto
 * it. NeuSight times each operator alone and the step end to end, and the
 * two do not agree: the step is 0.65-1.2 x the operator sum, differently on
 * each GPU (docs/gap.md, "the data's own floor"). What is outside the
 * operators can be carried from A in several ways; each is a candidate:
 *   scale       step_A x sum_proj / sum_A: A's step-to-operators ratio kept (the default)
 *   scale-work  the same ratio of the operators' GPU work: each operator's per-operator
 *               overhead (run_overhead: timed with it, hidden behind the GPU in a step) out of both sums
 *   ops         sum_proj: B's step is its operators, nothing of A's ratio kept
 *   work        sum_proj less the per-operator overheads: B's step is its operators' GPU work
 *   outside     sum_proj + (step_A - sum_A): the time outside the operators kept unscaled, as the
 *               trace projection's re-lay keeps host time
 * fit: the candidate with the lowest mean |e| on the projections that involve
 * none of the held-out GPUs (under --leave-one-out the target's GPU; else the
 * --with-gpu GPUs; else every projection: in-sample) - the one rule here that
 * is chosen on the data, so that leave-one-out can choose it without the GPU
 * it is tested on. */
enum { SF_SCALE = 0, SF_SCALE_WORK, SF_OPS, SF_WORK, SF_OUTSIDE, N_FORMS, SF_FIT = N_FORMS };
static const char *const form_names[N_FORMS] = { "scale", "scale-work", "ops", "work", "outside" };

/* One projection A -> B, everything the step forms and the statistics need. */
typedef struct proj {
    int a, b;                  /* runs */
    double form[N_FORMS];      /* the step on B by each form, seconds */
    double base[N_METHODS];    /* the baselines' steps; [0] unused */
    double sum_a, sum_proj, sum_b, kind_proj[N_KINDS], kind_meas[N_KINDS];
    bool same_graph, shown;    /* shown: selected by --with-gpu */
} proj;

/* The steps on B that each form gives from A's step, A's operator sum, its
 * projection onto B, and `hidden`: the per-operator overheads of A's
 * operators that run GPU work (each timed with its operator, hidden behind
 * the GPU in a step). */
static void step_forms(double step_a, double sum_a, double sum_proj, double hidden, double *out)
{
    out[SF_SCALE] = step_a * sum_proj / sum_a;
    out[SF_SCALE_WORK] = sum_a > hidden ? step_a * (sum_proj - hidden) / (sum_a - hidden) : out[SF_SCALE];
    out[SF_OPS] = sum_proj;
    out[SF_WORK] = sum_proj - hidden;
    out[SF_OUTSIDE] = sum_proj + step_a - sum_a;
}

static double rel_err(double pred, double meas)
{
    return fabs(pred - meas) / meas;
}

/* The form with the lowest mean |e| over the projections in which neither
 * GPU is one of held[] (first of equals: scale before the others); scale
 * when there is none. *mean, *n: its figure and how many it was chosen on. */
static int fit_form(const proj *p, int n_p, const run *runs, const char *const *held, int n_held, double *mean,
                    long *n)
{
    double sum[N_FORMS] = { 0 };
    long cnt = 0;
    for (int i = 0; i < n_p; i++) {
        if (n_held && pair_selected(runs[p[i].a].gpu, runs[p[i].b].gpu, held, n_held))
            continue;
        for (int f = 0; f < N_FORMS; f++)
            sum[f] += rel_err(p[i].form[f], runs[p[i].b].step_ms * 1e-3);
        cnt++;
    }
    int best = SF_SCALE;
    for (int f = 1; f < N_FORMS; f++)
        if (sum[f] < sum[best] - 1e-12)
            best = f;
    *mean = cnt ? sum[best] / (double)cnt : 0;
    *n = cnt;
    return best;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    double max_mean = -1, expect = -1;
    int per_workload = 0, breakdown = 0, per_target = 0, loo = 0, form_opt = SF_SCALE;
    const char *check_ini = NULL;
    const char *only = NULL, *skip_gpu[MAX_GPUS], *with_gpu[MAX_GPUS];
    int n_skip = 0, n_with = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max-mean") == 0 && i + 1 < argc)
            max_mean = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc)
            expect = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--ceilings") == 0 && i + 1 < argc) {
            if (read_ceilings(argv[++i]) != 0)
                return 2;
        } else if (strcmp(argv[i], "--per-workload") == 0)
            per_workload = 1;
        else if (strcmp(argv[i], "--breakdown") == 0)
            breakdown = 1;
        else if (strcmp(argv[i], "--per-target") == 0)
            per_target = 1;
        else if (strcmp(argv[i], "--leave-one-out") == 0)
            loo = 1;
        else if (strcmp(argv[i], "--step-form") == 0 && i + 1 < argc) {
            const char *f = argv[++i];
            form_opt = strcmp(f, "fit") == 0 ? SF_FIT : -1;
            for (int k = 0; k < N_FORMS; k++)
                if (strcmp(f, form_names[k]) == 0)
                    form_opt = k;
            if (form_opt < 0) {
                fprintf(stderr, "project_validate: --step-form %s: scale, scale-work, ops, work, outside or fit\n", f);
                return 2;
            }
        } else if (strcmp(argv[i], "--check-per-target") == 0 && i + 1 < argc)
            check_ini = argv[++i];
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--skip-gpu") == 0 && i + 1 < argc && n_skip < MAX_GPUS)
            skip_gpu[n_skip++] = argv[++i];
        else if (strcmp(argv[i], "--with-gpu") == 0 && i + 1 < argc && n_with < MAX_GPUS)
            with_gpu[n_with++] = argv[++i];
        else if (path == NULL && argv[i][0] != '-')
            path = argv[i];
        else
            return usage();
    }
    if (path == NULL)
        return usage();
    static run runs[MAX_RUNS];
    int n = 0;
    if (read_csv(path, runs, &n) != 0)
        return 2;
    for (int i = 0; i < n; i++)
        runs[i].overhead_ms = run_overhead(&runs[i]);
    /* Every projection of the data (--only, --skip-gpu), those --with-gpu
     * selects marked shown: a fitted form is chosen on the others. */
    static proj projs[MAX_RUNS * MAX_GPUS];
    int n_p = 0;
    stats all[N_METHODS] = { 0 };
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            run *a = &runs[i], *b = &runs[j];
            if (i == j || strcmp(a->workload, b->workload) != 0)
                continue;
            if ((only && strstr(a->workload, only) == NULL) ||
                (n_skip && pair_selected(a->gpu, b->gpu, skip_gpu, n_skip)))
                continue;
            if (n_p == (int)(sizeof projs / sizeof projs[0])) {
                fprintf(stderr, "project_validate: more than %d projections\n", n_p);
                return 2;
            }
            proj *p = &projs[n_p];
            memset(p, 0, sizeof *p);
            p->a = i;
            p->b = j;
            p->shown = pair_selected(a->gpu, b->gpu, with_gpu, n_with);
            mb_proj_gpu ga, gb;
            double fp32_a, fp32_b;
            if (load_gpu(a->gpu, &ga, &fp32_a) || load_gpu(b->gpu, &gb, &fp32_b))
                return 2;
            double hidden = 0;
            p->same_graph = a->n_ops == b->n_ops;
            for (int k = 0; k < a->n_ops; k++) {
                const op *o = &a->ops[k];
                double pt = project_op(o, a->overhead_ms, &ga, &gb);
                p->sum_a += o->weight * o->ms * 1e-3;
                p->sum_proj += o->weight * pt;
                if (strcmp(o->kind, "other") != 0)
                    hidden += o->weight * fmin(a->overhead_ms, o->ms) * 1e-3;
                if (p->same_graph) {
                    int kind = kind_index(o->kind);
                    double meas = b->ops[k].weight * b->ops[k].ms * 1e-3;
                    p->sum_b += meas;
                    p->kind_proj[kind] += o->weight * pt;
                    p->kind_meas[kind] += meas;
                    if (p->shown && b->ops[k].ms >= 0.05) {
                        op_class *c = &op_classes[kind][size_index(b->ops[k].ms)];
                        c->sum_abs += fabs(pt - b->ops[k].ms * 1e-3) / (b->ops[k].ms * 1e-3);
                        c->time += meas;
                        c->n++;
                    }
                }
                /* per operator: the same graph on both GPUs, in the same order */
                if (p->shown && p->same_graph && strcmp(o->kind, "other") != 0 && b->ops[k].ms >= 0.05) {
                    double meas = b->ops[k].ms * 1e-3;
                    double base[N_METHODS] = { pt, o->ms * 1e-3, o->ms * 1e-3 * fp32_a / fp32_b,
                                               o->ms * 1e-3 * ga.bw / gb.bw };
                    for (int m = 0; m < N_METHODS; m++) {
                        all[m].op_sum_abs += fabs(base[m] - meas) / meas;
                        all[m].op_n++;
                    }
                }
            }
            if (p->sum_a <= 0)
                continue;
            double from = a->step_ms * 1e-3;
            step_forms(from, p->sum_a, p->sum_proj, hidden, p->form);
            p->base[1] = from;
            p->base[2] = from * fp32_a / fp32_b;
            p->base[3] = from * ga.bw / gb.bw;
            n_p++;
        }
    /* The form of each projection: the one asked for, or fitted without the
     * held-out GPUs (under --leave-one-out: its target's, chosen once per GPU). */
    const char *gpus[MAX_GPUS];
    int n_gpus = 0, gpu_form[MAX_GPUS];
    for (int i = 0; i < n_p; i++) {
        const char *g = runs[projs[i].b].gpu;
        int k = 0;
        while (k < n_gpus && strcmp(gpus[k], g) != 0)
            k++;
        if (k == n_gpus && n_gpus < MAX_GPUS) {
            gpus[n_gpus] = g;
            gpu_form[n_gpus++] = form_opt;
        }
    }
    int form_all = form_opt;
    if (form_opt == SF_FIT) {
        double mean;
        long cnt;
        if (loo)
            for (int k = 0; k < n_gpus; k++) {
                gpu_form[k] = fit_form(projs, n_p, runs, &gpus[k], 1, &mean, &cnt);
                printf("step form fitted without %s: %s (%.1f%% mean |e| over the %ld projections between the "
                       "other GPUs)\n", gpus[k], form_names[gpu_form[k]], 100 * mean, cnt);
            }
        else {
            form_all = fit_form(projs, n_p, runs, with_gpu, n_with, &mean, &cnt);
            printf("step form fitted on the %ld projections %s: %s (%.1f%% mean |e|)\n", cnt,
                   n_with ? "without the --with-gpu GPUs" : "of the data (in-sample)", form_names[form_all],
                   100 * mean);
        }
    }
    long worse = 0, workloads = 0, worse_than[N_METHODS] = { 0 };
    for (int i = 0; i < n_p; i++) {
        proj *p = &projs[i];
        if (!p->shown)
            continue;
        const run *a = &runs[p->a], *b = &runs[p->b];
        int form = form_all;
        if (loo)
            for (int k = 0; k < n_gpus; k++)
                if (strcmp(gpus[k], b->gpu) == 0)
                    form = gpu_form[k];
        double from = a->step_ms * 1e-3, meas = b->step_ms * 1e-3;
        double pred[N_METHODS] = { p->form[form], p->base[1], p->base[2], p->base[3] };
        double abs_err[N_METHODS];
        for (int m = 0; m < N_METHODS; m++) {
            abs_err[m] = rel_err(pred[m], meas);
            add(&all[m], pred[m], meas, from);
        }
        double model_err = abs_err[0], best_base = INFINITY;
        for (int m = 1; m < N_METHODS; m++) {
            best_base = fmin(best_base, abs_err[m]);
            worse_than[m] += model_err > abs_err[m] + 1e-12;
        }
        workloads++;
        add_target(b->gpu, model_err);
        add_workload(a->workload, abs_err);
        if (model_err > best_base + 1e-12)
            worse++;
        pair_stats *ps = p->same_graph && p->sum_b > 0 ? pair_of(a->gpu, b->gpu) : NULL;
        if (ps) {
            ps->n++;
            ps->step_abs += model_err;
            ps->sum_abs += fabs(p->sum_proj / p->sum_b - 1);
            ps->floor_abs += fabs(from * p->sum_b / p->sum_a - meas) / meas;
            ps->own_abs += fabs(p->sum_b - meas) / meas;
            for (int k = 0; k < N_KINDS; k++) {
                ps->proj[k] += p->kind_proj[k];
                ps->meas[k] += p->kind_meas[k];
                ps->share[k] += p->kind_meas[k] / p->sum_b;
            }
        }
        if (per_workload)
            printf("%-28s %-15s -> %-15s measured %9.2f ms  model %9.2f ms (%+6.1f%%)  best baseline %5.1f%%\n",
                   a->workload, a->gpu, b->gpu, b->step_ms, 1e3 * pred[0], 100 * (pred[0] - meas) / meas,
                   100 * best_base);
    }
    printf("kernel-level projection against paired measurements (%s): %s figures on both sides\n", path,
           n_ceilings ? "measured" : "datasheet");
    if (loo || form_opt != SF_SCALE)
        printf("  the step on B: %s%s\n", form_opt == SF_FIT ? "the fitted form (above)" : form_names[form_opt],
               !loo                ? ""
               : form_opt == SF_FIT ? "; leave-one-GPU-out: each projection onto a GPU by a model fitted without that "
                                      "GPU's data"
                                    : "; leave-one-GPU-out: nothing is fitted to these data, each projection is the "
                                      "in-sample one");
    print_stats("per step (end to end), every ordered pair of GPUs that ran the same workload:", all);
    printf("  the model is worse than the best of the three baselines (chosen per projection) on %ld of %ld\n", worse,
           workloads);
    for (int m = 1; m < N_METHODS; m++)
        printf("  the model is worse than '%s' on %ld of %ld\n", method_names[m], worse_than[m], workloads);
    print_per_workload_means();
    if (breakdown)
        print_breakdown();
    qsort(targets, (size_t)n_targets, sizeof targets[0], cmp_target);
    const char *mode = n_ceilings ? "measured" : "datasheet";
    if (per_target)
        print_per_target(mode);
    for (int i = 0; i < n; i++)
        free(runs[i].ops);
    double mean = all[0].n ? 100 * all[0].sum_abs / (double)all[0].n : 0;
    if (max_mean >= 0 && mean > max_mean) {
        fprintf(stderr, "project_validate: mean absolute error %.1f%% exceeds %.1f%%\n", mean, max_mean);
        return 1;
    }
    if (expect >= 0 && fabs(pct1(mean / 100) - expect) > 0.01) {
        fprintf(stderr, "project_validate: mean absolute error %.1f%%, stated as %.1f%%: restate it\n", mean, expect);
        return 1;
    }
    if (check_ini)
        return check_per_target(check_ini, mode);
    return 0;
}
