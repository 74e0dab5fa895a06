/* analysis_cli.c: `mlbench gap` and `mlbench compare`: arguments, loading,
 * and the output written whole (stdout) or atomically (--out): a failure
 * anywhere leaves no half-written file. */
#include "analysis.h"

#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ceilings.h"
#include "compare.h"
#include "compare_page.h"
#include "compare_writers.h"
#include "context.h"
#include "diagnose.h"
#include "file_write.h"
#include "gap.h"
#include "gap_page.h"
#include "gap_writers.h"
#include "gapconfig.h"
#include "hardware.h"
#include "html.h"
#include "project_rank.h"
#include "reference.h"
#include "results.h"
#include "run_read.h"
#include "stages.h"
#include "suite.h"

static void gap_usage(FILE *o)
{
    fprintf(o,
            "usage: mlbench gap --run RUN [--ceilings RESULTS.json] [--target T[,T...]|all]\n"
            "                   [--price NAME=USD_PER_HOUR ...] [--prices FILE] [--epoch-steps N]\n"
            "                   [--step-ms MS] [--host-ms MS] [--format table|json|md] [--out FILE]\n"
            "                   [--html PAGE]\n"
            "  --run RUN         a stage-metrics file (.json/.csv, docs/stage-format.md) or a PyTorch\n"
            "                    profiler trace (.json/.json.gz, docs/traces.md); also the first argument\n"
            "  --ceilings FILE   results of `mlbench --suite ...` on the machine that ran RUN\n"
            "                    (default: the newest results/<host>-*.json here)\n"
            "  --target T        project the run onto another machine: its results file, a reference\n"
            "                    machine (results/reference/NAME: measured figures first, its\n"
            "                    datasheet where it has no measurement, e.g. h100-sxm), or a\n"
            "                    datasheet (configs/hardware/NAME.ini or a NAME with no reference);\n"
            "                    a comma-separated list or `all` (every GPU datasheet and reference\n"
            "                    machine) ranks the machines by projected step time. A PyTorch trace\n"
            "                    is projected kernel by kernel, a stage file stage by stage\n"
            "  --price NAME=USD  price per hour of a ranked machine (NAME: --target name or label):\n"
            "                    adds cost per 1000 steps (and per epoch with --epoch-steps)\n"
            "  --prices FILE     prices kept in a file, one NAME = USD_PER_HOUR per line\n"
            "  --epoch-steps N   steps per epoch, for the cost per epoch\n"
            "  --step-ms MS      the trace's training step timed without the profiler (a loop's own\n"
            "                    log): the profiler lengthens the host's time, so the step table,\n"
            "                    the headline and the diagnosis take this step (the GPU's idle parts\n"
            "                    scaled to it), and the projection first scales the trace's host\n"
            "                    time to give it (docs/gap.md)\n"
            "  --host-ms MS      with --target, for a loop that never synchronises: the host's own\n"
            "                    time to issue a step without the profiler (the loop timed at a batch\n"
            "                    small enough that its GPU idles): each machine's step is its GPU's\n"
            "                    time or this, the longer (without it: a range, docs/gap.md)\n"
            "  --ceiling P       which rate of the compute cases (GEMM, conv, peak) is their ceiling:\n"
            "                    sustained (default: what a long run gets) or burst (clocks free)\n"
            "  --format F        table (default), json or md\n"
            "  --out FILE        write there (atomically) instead of stdout\n"
            "  --html PAGE       also write a self-contained HTML page with charts\n");
}

static void compare_usage(FILE *o)
{
    fprintf(o,
            "usage: mlbench compare A.json [B.json ...] [--reference NAME ...] [--label NAME=FILE ...]\n"
            "                       [--price NAME=USD_PER_HOUR ...] [--format table|json|md] [--out FILE]\n"
            "                       [--html PAGE]\n"
            "  results files of `mlbench --suite ...`, one column per machine, ratios to A\n"
            "  --reference NAME  add a reference machine (results/reference/NAME, e.g. h100-sxm):\n"
            "                    its measured results, and its datasheet where it has no\n"
            "                    measurement, marked (datasheet)\n"
            "  --label NAME=FILE name the machine of results file FILE (default: its GPU model\n"
            "                    and count, else CPU model; then host and file name where those tie)\n"
            "  --price NAME=USD  price per hour of a machine (NAME: its letter A, B..., label,\n"
            "                    host name or file): adds work per dollar (rate x 3600 / USD per hour)\n"
            "  --format F        table (default), json or md\n"
            "  --out FILE        write there (atomically) instead of stdout\n"
            "  --html PAGE       also write a self-contained HTML page with charts\n");
}

static int check_format(const char *f, mb_err *err)
{
    if (strcmp(f, "table") && strcmp(f, "json") && strcmp(f, "md"))
        return mb_errf(err, MB_EUSAGE, "--format %s: expected table, json or md", f);
    return MB_OK;
}

/* Writes the text whole: to stdout, or atomically to path. */
static int emit(const char *path, const char *text, size_t len, mb_err *err)
{
    if (path)
        return mb_write_file_atomic(path, text, err);
    if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0)
        return mb_errno(err, MB_ESYS, "writing to stdout");
    return MB_OK;
}

/* Formats into memory first, so that --out is written whole (atomically) or
 * not at all, and a formatting error prints nothing half-done. */
typedef int (*format_fn)(FILE *out, const void *what, const char *format, mb_err *err);
static int format_and_emit(format_fn fn, const void *what, const char *format, const char *path, mb_err *err)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (mem == NULL)
        return mb_errno(err, MB_ESYS, "open_memstream");
    int rc = fn(mem, what, format, err);
    if (fclose(mem) != 0 && rc == MB_OK)
        rc = mb_errno(err, MB_ESYS, "formatting the output");
    if (rc == MB_OK)
        rc = emit(path, text, len, err);
    free(text);
    return rc;
}

/* The HTML page, whole or not at all, after the text output: a page that
 * cannot be written does not take the text away. */
/* --html PAGE: also the page, when asked for. */
static int html_emit(mb_html_page_fn fn, const void *what, const char *path, mb_err *err)
{
    return path ? mb_html_write_file(path, fn, what, err) : MB_OK;
}

static int finish(int rc, const mb_err *err, const char *cmd)
{
    if (rc != MB_OK)
        fprintf(stderr, "mlbench %s: %s\n", cmd, err->msg[0] ? err->msg : "failed");
    return mb_exit_status(rc);
}

/* ---- gap ------------------------------------------------------------------------ */

typedef struct gap_args {
    const char *run, *ceilings, *target, *format, *out, *html;
    const char *ceiling; /* burst | sustained */
    const char **prices;
    int n_prices;
    const char *prices_file;
    long long epoch_steps;
    double step_seconds; /* --step-ms, 0 = not given */
    double host_seconds; /* --host-ms, 0 = not given */
    bool help;
} gap_args;

/* A positive number of milliseconds, as seconds. */
static int parse_ms(const char *option, const char *arg, double *seconds, mb_err *err)
{
    char *end = NULL;
    double ms = strtod(arg, &end);
    if (end == arg || *end || !isfinite(ms) || ms <= 0)
        return mb_errf(err, MB_EUSAGE, "%s %s: expected a positive number of milliseconds", option, arg);
    *seconds = ms * 1e-3;
    return MB_OK;
}

/* An option gap takes once, given again: an error, not the last one silently
 * (two ranks' traces as --run A --run B read B alone and said nothing). */
static int set_once(const char **slot, const char *option, const char *value, mb_err *err)
{
    if (*slot != NULL)
        return mb_errf(err, MB_EUSAGE, "%s given twice ('%s', then '%s'): it takes one%s", option, *slot, value,
                       strcmp(option, "--run") == 0 ? " run: one trace or stage file (one rank's trace; run gap on "
                                                      "each rank's own)" : "");
    *slot = value;
    return MB_OK;
}

static int parse_gap_args(int argc, char **argv, gap_args *a, mb_err *err)
{
    static const struct option opts[] = {
        { "run", required_argument, NULL, 'r' },    { "ceilings", required_argument, NULL, 'c' },
        { "target", required_argument, NULL, 't' }, { "format", required_argument, NULL, 'f' },
        { "out", required_argument, NULL, 'o' },    { "help", no_argument, NULL, 'h' },
        { "ceiling", required_argument, NULL, 'p' }, { "html", required_argument, NULL, 'H' },
        { "price", required_argument, NULL, 'P' },   { "prices", required_argument, NULL, 'F' },
        { "epoch-steps", required_argument, NULL, 'E' }, { "step-ms", required_argument, NULL, 'S' },
        { "host-ms", required_argument, NULL, 'M' }, { NULL, 0, NULL, 0 },
    };
    memset(a, 0, sizeof *a);
    if ((a->prices = calloc((size_t)argc + 1, sizeof *a->prices)) == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    a->format = "table";
    a->ceiling = "sustained";
    optind = 0; /* glibc: full re-initialisation, so tests can call twice */
    opterr = 0;
    int ch, rc = MB_OK;
    /* the options with a default or a number: given once too */
    const char *format = NULL, *ceiling = NULL, *epoch = NULL, *step_ms = NULL, *host_ms = NULL;
    while (rc == MB_OK && (ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (ch) {
        case 'r': rc = set_once(&a->run, "--run", optarg, err); break;
        case 'c': rc = set_once(&a->ceilings, "--ceilings", optarg, err); break;
        case 't': rc = set_once(&a->target, "--target", optarg, err); break;
        case 'f':
            if ((rc = set_once(&format, "--format", optarg, err)) == MB_OK)
                a->format = optarg;
            break;
        case 'o': rc = set_once(&a->out, "--out", optarg, err); break;
        case 'p':
            if (set_once(&ceiling, "--ceiling", optarg, err))
                return err->code;
            if (strcmp(optarg, "burst") && strcmp(optarg, "sustained"))
                return mb_errf(err, MB_EUSAGE, "--ceiling %s: expected burst or sustained", optarg);
            a->ceiling = optarg;
            break;
        case 'H': rc = set_once(&a->html, "--html", optarg, err); break;
        case 'P': a->prices[a->n_prices++] = optarg; break;
        case 'F': rc = set_once(&a->prices_file, "--prices", optarg, err); break;
        case 'E': {
            if (set_once(&epoch, "--epoch-steps", optarg, err))
                return err->code;
            char *end = NULL;
            a->epoch_steps = strtoll(optarg, &end, 10);
            if (end == optarg || *end || a->epoch_steps <= 0)
                return mb_errf(err, MB_EUSAGE, "--epoch-steps %s: expected a positive whole number", optarg);
            break;
        }
        case 'S':
            if (set_once(&step_ms, "--step-ms", optarg, err) || parse_ms("--step-ms", optarg, &a->step_seconds, err))
                return err->code;
            break;
        case 'M':
            if (set_once(&host_ms, "--host-ms", optarg, err) || parse_ms("--host-ms", optarg, &a->host_seconds, err))
                return err->code;
            break;
        case 'h': a->help = true; return MB_OK;
        case ':':
            return mb_errf(err, MB_EUSAGE, "%s needs a value (see mlbench gap --help)", argv[optind - 1]);
        default:
            return mb_errf(err, MB_EUSAGE, "unknown option '%s' (see mlbench gap --help)", argv[optind - 1]);
        }
    }
    if (rc != MB_OK)
        return rc;
    if (optind < argc && a->run == NULL)
        a->run = argv[optind++];
    if (optind < argc)
        return mb_errf(err, MB_EUSAGE, "unexpected argument '%s' (see mlbench gap --help)", argv[optind]);
    if (a->run == NULL)
        return mb_errf(err, MB_EUSAGE, "--run RUN is required: a stage-metrics file or a PyTorch trace "
                                       "(see mlbench gap --help)");
    return check_format(a->format, err);
}

static bool file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

typedef struct gap_state {
    mb_run run;
    mb_ceilings here, there;
    mb_ini matching, thresholds, remedies;
    mb_datasheet *sheet;
    mb_reference ref;
    mb_gap gap;
    mb_diagnosis diag;
    mb_ranking ranking;
    char *ranking_text;
    cJSON *ranking_json;
} gap_state;

static int project(gap_state *s, const char *target, const char *phase, mb_err *err)
{
    if (!file_exists(target) && mb_reference_exists(target)) {
        if (mb_reference_load(target, &s->ref, err) || mb_ceilings_use_phase(&s->ref.measured, phase, err))
            return err->code;
        return mb_gap_project_reference(&s->gap, mb_reference_label(&s->ref), &s->ref.measured,
                                        s->ref.sheet, &s->matching, err);
    }
    if (ends_with(target, ".json") || (file_exists(target) && !ends_with(target, ".ini"))) {
        if (s->there.path == NULL &&
            (mb_ceilings_load(target, &s->there, err) || mb_ceilings_use_phase(&s->there, phase, err)))
            return err->code;
        return mb_gap_project_results(&s->gap, &s->there, &s->matching, err);
    }
    mb_err why = { 0 };
    int rc = file_exists(target) ? mb_datasheet_load(target, &s->sheet, &why)
                                 : mb_datasheet_find(target, &s->sheet, &why);
    if (rc) /* an unknown target is a usage error here, whatever the loader's code */
        return mb_errf(err, rc == MB_ESYS ? MB_ESYS : MB_EUSAGE,
                       "--target %s: %s (a target is a results file or a datasheet of configs/hardware)", target,
                       why.msg);
    return mb_gap_project_datasheet(&s->gap, s->sheet, mb_datasheet_is_gpu(s->sheet), err);
}

/* Every machine --target names is a file, a reference or a datasheet; one
 * that is none gets one error with the nearest name, before any model runs
 * (a trace's fallback to the per-stage model would say a second thing). */
static int check_targets(const char *targets, mb_err *err)
{
    if (strcmp(targets, "all") == 0)
        return MB_OK;
    char list[4096], *save = NULL;
    snprintf(list, sizeof list, "%s", targets);
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        while (*t == ' ')
            t++;
        mb_datasheet *sheet = NULL;
        mb_err why = { 0 };
        if (!*t || file_exists(t) || mb_reference_exists(t) || mb_datasheet_find(t, &sheet, &why) == MB_OK) {
            mb_datasheet_free(sheet);
            continue;
        }
        char refs[1024], stems[2048], known[3200], near[64], hint[96] = "";
        mb_reference_names(refs, sizeof refs);
        mb_datasheet_stems(stems, sizeof stems);
        snprintf(known, sizeof known, "%s%s%s", refs, refs[0] && stems[0] ? ", " : "", stems);
        if (mb_did_you_mean(t, known, near, sizeof near))
            snprintf(hint, sizeof hint, " - did you mean '%s'?", near);
        return mb_errf(err, MB_EUSAGE,
                       "--target %s: no results file, reference machine or datasheet of that name%s (a target is one of "
                       "those, a comma-separated list of them, or all; references: %s; datasheets: %s)",
                       t, hint, refs[0] ? refs : "none", stems[0] ? stems : "none");
    }
    return MB_OK;
}

/* --target LIST|all, or any target of a trace: the machines ranked
 * (project_rank.h). A trace the kernel-level model cannot read (no GPU in
 * it, one target) falls back to the per-stage projection, saying so. */
static int rank(const gap_args *a, gap_state *s, mb_err *err)
{
    mb_rank_opts o = { .targets = a->target, .prices = a->prices, .n_prices = a->n_prices,
                       .prices_file = a->prices_file, .epoch_steps = a->epoch_steps, .phase = a->ceiling,
                       .step_seconds = a->step_seconds, .host_seconds = a->host_seconds };
    if (mb_rank_gpus_unrecorded(&s->run)) /* no per-stage fallback either */
        return mb_errf(err, MB_EUSAGE, "%s", MB_GPUS_UNRECORDED);
    int rc = mb_rank_build(a->run, &s->run, &s->here, &s->matching, &o, &s->ranking, err);
    bool single = strcmp(a->target, "all") != 0 && strchr(a->target, ',') == NULL;
    if (rc == MB_EUSAGE && single && !a->n_prices && !a->prices_file && a->step_seconds == 0 && a->host_seconds == 0 &&
        !s->ranking.other_gpu) {
        fprintf(stderr, "mlbench gap: no kernel-level projection (%s): the per-stage model projects it\n",
                err->msg);
        mb_rank_free(&s->ranking);
        *err = (mb_err){ 0 };
        return project(s, a->target, a->ceiling, err);
    }
    if (rc)
        return rc;
    if (mb_rank_text(&s->ranking, strcmp(a->format, "md") == 0, &s->ranking_text, err))
        return err->code;
    if ((s->ranking_json = mb_rank_json(&s->ranking)) == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    s->gap.projection_text = s->ranking_text;
    s->gap.projection_json = s->ranking_json;
    s->gap.machines = &s->ranking;
    return MB_OK;
}

static int write_gap(FILE *out, const void *what, const char *format, mb_err *err)
{
    const gap_state *s = what;
    return mb_gap_write(out, &s->gap, &s->diag, format, err);
}

static int html_gap(FILE *out, const void *what, mb_err *err)
{
    const gap_state *s = what;
    return mb_gap_html(out, &s->gap, &s->diag, err);
}

/* A file given in the other's place says so, with the option it belongs to. */
static int check_file_kinds(const gap_args *a, mb_err *err)
{
    if (mb_run_file_kind(a->run) == MB_FILE_RESULTS)
        return mb_errf(err, MB_EUSAGE,
                       "%s: a results file, not a run: pass it as `--ceilings %s` (the run is a stage file or a "
                       "PyTorch trace)",
                       a->run, a->run);
    mb_file_kind k = a->ceilings ? mb_run_file_kind(a->ceilings) : MB_FILE_UNKNOWN;
    if (k == MB_FILE_TRACE || k == MB_FILE_STAGES)
        return mb_errf(err, MB_EUSAGE, "--ceilings %s: a %s, not a results file: pass it as `--run %s`",
                       a->ceilings, k == MB_FILE_TRACE ? "PyTorch trace" : "stage-metrics file", a->ceilings);
    return MB_OK;
}

static int run_gap(const gap_args *a, gap_state *s, mb_err *err)
{
    char newest[PATH_MAX];
    const char *ceilings = a->ceilings;
    if (check_file_kinds(a, err))
        return err->code;
    if (mb_ini_load_gap("matching.ini", &s->matching, err) || mb_ini_load_gap("thresholds.ini", &s->thresholds, err) ||
        mb_ini_load_gap("remedies.ini", &s->remedies, err))
        return err->code;
    if (ceilings == NULL) {
        if (mb_ceilings_find_newest(".", mb_hostname(), newest, sizeof newest, err))
            return err->code;
        ceilings = newest;
    }
    if (mb_run_read(a->run, &s->run, err) || (a->step_seconds > 0 && mb_trace_set_step(&s->run, a->step_seconds, err)) ||
        mb_ceilings_open(ceilings, &s->here, err) ||
        mb_ceilings_use_phase(&s->here, a->ceiling, err) || mb_gap_build(&s->run, &s->here, &s->matching, &s->gap, err) ||
        mb_diagnose(&s->gap, &s->thresholds, &s->remedies, &s->diag, err))
        return err->code;
    if (a->target && check_targets(a->target, err))
        return err->code;
    if (a->target && mb_rank_wanted(a->target, &s->run)) {
        if (rank(a, s, err))
            return err->code;
    } else if (a->target && a->host_seconds > 0) {
        return mb_errf(err, MB_EUSAGE, MB_HOST_MS_NEEDS_KERNELS);
    } else if (a->target && project(s, a->target, a->ceiling, err)) {
        return err->code;
    } else if (a->n_prices || a->prices_file || a->epoch_steps || a->host_seconds) {
        return mb_errf(err, MB_EUSAGE,
                       "--price, --prices, --epoch-steps and --host-ms go with --target (see mlbench gap --help)");
    }

    if (format_and_emit(write_gap, s, a->format, a->out, err))
        return err->code;
    return html_emit(html_gap, s, a->html, err);
}

int mb_cmd_gap(int argc, char **argv)
{
    mb_err err = { 0 };
    gap_args a;
    int rc = parse_gap_args(argc, argv, &a, &err);
    if (rc == MB_OK && a.help) {
        gap_usage(stdout);
        free(a.prices);
        return 0;
    }
    if (rc != MB_OK) {
        free(a.prices);
        return finish(rc, &err, "gap");
    }
    gap_state s;
    memset(&s, 0, sizeof s);
    mb_run_init(&s.run);
    rc = run_gap(&a, &s, &err);
    mb_diagnosis_free(&s.diag);
    mb_gap_free(&s.gap);
    mb_rank_free(&s.ranking);
    free(s.ranking_text);
    cJSON_Delete(s.ranking_json);
    free(a.prices);
    mb_datasheet_free(s.sheet);
    mb_reference_free(&s.ref);
    mb_ceilings_free(&s.there);
    mb_ceilings_free(&s.here);
    mb_run_free(&s.run);
    mb_ini_free(&s.matching);
    mb_ini_free(&s.thresholds);
    mb_ini_free(&s.remedies);
    return finish(rc, &err, "gap");
}

/* ---- compare ---------------------------------------------------------------------- */

typedef struct compare_args {
    const char **files;
    int n_files;
    const char **prices;
    int n_prices;
    const char **refs;
    int n_refs;
    const char **labels;
    int n_labels;
    const char *format, *out, *html;
    bool help;
} compare_args;

static int parse_compare_args(int argc, char **argv, compare_args *a, mb_err *err)
{
    static const struct option opts[] = {
        { "price", required_argument, NULL, 'p' }, { "label", required_argument, NULL, 'l' },
        { "format", required_argument, NULL, 'f' },
        { "out", required_argument, NULL, 'o' },   { "help", no_argument, NULL, 'h' },
        { "reference", required_argument, NULL, 'r' },
        { "html", required_argument, NULL, 'H' },  { NULL, 0, NULL, 0 },
    };
    a->format = "table";
    a->files = calloc((size_t)argc + 1, sizeof *a->files);
    a->prices = calloc((size_t)argc + 1, sizeof *a->prices);
    a->refs = calloc((size_t)argc + 1, sizeof *a->refs);
    a->labels = calloc((size_t)argc + 1, sizeof *a->labels);
    if (a->files == NULL || a->prices == NULL || a->refs == NULL || a->labels == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    optind = 0;
    opterr = 0;
    int ch;
    /* "-" first: files and options in any order */
    while ((ch = getopt_long(argc, argv, "-:h", opts, NULL)) != -1) {
        switch (ch) {
        case 1: /* a reference by name or directory is a --reference: its datasheet fills what it lacks */
            if (mb_reference_exists(optarg))
                a->refs[a->n_refs++] = optarg;
            else
                a->files[a->n_files++] = optarg;
            break;
        case 'p': a->prices[a->n_prices++] = optarg; break;
        case 'r': a->refs[a->n_refs++] = optarg; break;
        case 'l': a->labels[a->n_labels++] = optarg; break;
        case 'H': a->html = optarg; break;
        case 'f': a->format = optarg; break;
        case 'o': a->out = optarg; break;
        case 'h': a->help = true; return MB_OK;
        case ':':
            return mb_errf(err, MB_EUSAGE, "%s needs a value (see mlbench compare --help)", argv[optind - 1]);
        default:
            return mb_errf(err, MB_EUSAGE, "unknown option '%s' (see mlbench compare --help)", argv[optind - 1]);
        }
    }
    if (a->n_files + a->n_refs < 2)
        return mb_errf(err, MB_EUSAGE,
                       "compare needs two or more machines: results files or --reference NAME (see mlbench "
                       "compare --help)");
    return check_format(a->format, err);
}

static int write_compare(FILE *out, const void *what, const char *format, mb_err *err)
{
    return mb_compare_write(out, what, format, err);
}

static int html_compare(FILE *out, const void *what, mb_err *err)
{
    return mb_compare_html(out, what, err);
}

/* Machines in order: the files, then the references (their measured results
 * moved into m[], their datasheets kept in refs[] to fill what they lack). */
static int run_compare(const compare_args *a, mb_ceilings *m, mb_reference *refs, mb_ini *keys, mb_compare *c,
                       mb_err *err)
{
    if (mb_ini_load_gap("compare.ini", keys, err))
        return err->code;
    for (int i = 0; i < a->n_files; i++)
        if (mb_ceilings_open(a->files[i], &m[i], err))
            return err->code;
    for (int r = 0; r < a->n_refs; r++) {
        if (mb_reference_load(a->refs[r], &refs[r], err))
            return err->code;
        m[a->n_files + r] = refs[r].measured;
        memset(&refs[r].measured, 0, sizeof refs[r].measured);
    }
    int n = a->n_files + a->n_refs;
    if (mb_compare_build(m, n, a->labels, a->n_labels, a->prices, a->n_prices, keys, c, err))
        return err->code;
    for (int r = 0; r < a->n_refs; r++)
        if (refs[r].sheet && mb_compare_fill_datasheet(c, a->n_files + r, refs[r].sheet, err))
            return err->code;
    if (format_and_emit(write_compare, c, a->format, a->out, err))
        return err->code;
    return html_emit(html_compare, c, a->html, err);
}

int mb_cmd_compare(int argc, char **argv)
{
    mb_err err = { 0 };
    compare_args a = { 0 };
    int rc = parse_compare_args(argc, argv, &a, &err);
    if (rc == MB_OK && a.help) {
        compare_usage(stdout);
    } else if (rc == MB_OK) {
        int n = a.n_files + a.n_refs;
        mb_ceilings *m = calloc((size_t)n, sizeof *m);
        mb_reference *refs = calloc((size_t)a.n_refs + 1, sizeof *refs);
        mb_ini keys = { 0 };
        mb_compare c = { 0 };
        rc = m && refs ? run_compare(&a, m, refs, &keys, &c, &err) : mb_errf(&err, MB_ESYS, "out of memory");
        mb_compare_free(&c);
        for (int i = 0; m && i < n; i++)
            mb_ceilings_free(&m[i]);
        for (int r = 0; refs && r < a.n_refs; r++)
            mb_reference_free(&refs[r]);
        free(m);
        free(refs);
        mb_ini_free(&keys);
    }
    free(a.files);
    free(a.prices);
    free(a.refs);
    free(a.labels);
    return finish(rc, &err, "compare");
}
