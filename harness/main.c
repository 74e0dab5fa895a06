/* main.c: the mlbench command line. The only place that exits.
 *
 *   mlbench [run] [--suite NAME|FILE[,...]] [options]   measure (default suite: all)
 *   mlbench list                                       components, parameters, availability
 *   mlbench report FILE                                re-print a results file
 *   mlbench gap ... / mlbench compare ...              analysis (harness/analysis/analysis_cli.c)
 *   mlbench trace FILE                                 what mlbench reads from a profiler trace
 *   mlbench COMMAND --help                             its usage on stdout, exit 0 (a usage error:
 *                                                      exit 2, said on stderr)
 *
 * Exit status: 0 all ran (skips are not failures), 1 a benchmark or its
 * verification failed (or a --baseline check failed), 2 usage or input error. */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis.h"
#include "baseline.h"
#include "reference.h"
#include "cleanup.h"
#include "context.h"
#include "dist.h"
#include "dist_extra.h"
#include "gbench_shim.h"
#include "results_page.h"
#include "mb_git_revision.h"
#include "options.h"
#include "params.h"
#include "paths.h"
#include "results.h"
#include "run_read.h"
#include "runner.h"
#include "suite.h"
#include "text.h"
#include "trace.h"
#include "results_writers.h"

/* Defaults of the measuring command line, shown by --help. */
#define DEFAULT_TOLERANCE 0.10    /* --baseline: how far below a case may fall */
#define DEFAULT_FLEET_MARGIN 0.10 /* under MPI: how far below the median a rank is flagged */
#define DEFAULT_DIST_TIMEOUT MB_DIST_TIMEOUT_DEFAULT /* under MPI: seconds before unresponsive ranks are given up */
#define MAX_DIST_TIMEOUT 86400
/* Google Benchmark flags passed through; more is a usage error. */
enum { MAX_GB_FLAGS = 32 };

typedef struct cli {
    const char *suite;
    const char *filter;
    const char *out;
    const char *format;
    const char *gbench_out;
    const char *html;
    const char *baseline;
    double tolerance;
    mb_runner_opts run;
    mb_run_options opts;
    char *gb_flags[MAX_GB_FLAGS];
    int n_gb_flags;
} cli;

static void usage(FILE *f)
{
    char names[1024];
    mb_suite_names(names, sizeof names);
    fprintf(f,
            "usage: mlbench [run] [--suite S[,...]] [options]     run a suite (default: all)\n"
            "       mlbench list [--format table|json]            components, parameters, availability\n"
            "       mlbench report FILE [--format F] [--html PAGE] print a results file again\n"
            "       mlbench gap --run RUN [--ceilings RESULTS] [--target T]   gap of a real run\n"
            "       mlbench compare A.json B.json [...]           machines side by side\n"
            "       mlbench trace FILE                            what mlbench reads from a profiler trace\n"
            "       mlbench COMMAND --help                        that command's own usage and options\n"
            "\n");
    fputs("suites: ", f);
    mb_text_wrap(f, 8, 8, names, 0);
    fprintf(f,
            "        (configs in %s/suites)\n"
            "\n"
            "options:\n"
            "  --suite S          suite name, job file path, or a comma list of them\n"
            "  --filter REGEX     run only cases whose id or section matches (POSIX extended regex)\n"
            "  --out FILE         results file (default results/<host>-<UTC time>.json)\n"
            "  --format F         table (default), json, csv or md on stdout\n"
            "  --gbench-out FILE  also write Google Benchmark-compatible JSON (for compare.py)\n"
            "  --html PAGE        also write a self-contained HTML page with charts (docs/report.md)\n"
            "  --repetitions N    repetitions per case (the ceiling is their median)\n"
            "  --min-time S       seconds of timed iterations per repetition\n"
            "  --warmup-time S    seconds of untimed warm-up per case\n"
            "  --disk-dir DIR     where the disk test file is created (default: a temporary\n"
            "                     directory under the current directory)\n"
            "  --disk-file PATH   benchmark an existing file read-only instead\n"
            "  --baseline FILE    compare with an earlier results file: exit 1 when a case is\n"
            "                     more than --tolerance (default %.2f) below it\n"
            "  --fleet-margin F   under MPI: flag ranks more than F (default %.2f) below the median\n"
            "  --dist-timeout S   under MPI: give up on unresponsive ranks after S seconds (default %.0f)\n"
            "  --benchmark_*      passed to Google Benchmark (e.g. --benchmark_enable_random_interleaving)\n"
            "  -q, --quiet        no progress on stderr\n"
            "  -h, --help         this text\n"
            "  -V, --version      version\n"
            "\n"
            "exit status: 0 all ran (skips are not failures), 1 a case or a check failed, 2 usage error\n",
            mb_config_dir(), DEFAULT_TOLERANCE, DEFAULT_FLEET_MARGIN, DEFAULT_DIST_TIMEOUT);
}

static int parse_double_arg(const char *opt, const char *v, double lo, double hi, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (end == v || *end || !(d >= lo && d <= hi)) {
        fprintf(stderr, "mlbench: %s: expected a number in [%g, %g], got '%s'\n", opt, lo, hi, v);
        return MB_EUSAGE;
    }
    *out = d;
    return MB_OK;
}

enum {
    OPT_SUITE = 256, OPT_FILTER, OPT_OUT, OPT_FORMAT, OPT_GBENCH_OUT, OPT_REPS, OPT_MIN_TIME,
    OPT_WARMUP, OPT_DISK_DIR, OPT_DISK_FILE, OPT_BASELINE, OPT_TOLERANCE, OPT_FLEET_MARGIN,
    OPT_DIST_TIMEOUT, OPT_HTML,
};

/* A stray word: a suite name without --suite, or a mistyped subcommand or
 * suite: said with the likely meaning. */
static void unexpected_argument(const char *arg)
{
    static const char subcommands[] = "list, report, gap, compare, trace, run";
    char near[64], suites[1024], quoted[96];
    mb_suite_names(suites, sizeof suites);
    snprintf(quoted, sizeof quoted, ", %s,", arg);
    char padded[1100];
    snprintf(padded, sizeof padded, ", %s,", suites);
    if (strstr(padded, quoted))
        fprintf(stderr, "mlbench: unexpected argument '%s' - did you mean '--suite %s'? (see --help)\n", arg, arg);
    else if (mb_did_you_mean(arg, subcommands, near, sizeof near))
        fprintf(stderr, "mlbench: unknown command '%s' - did you mean 'mlbench %s'? (see --help)\n", arg, near);
    else if (mb_did_you_mean(arg, suites, near, sizeof near))
        fprintf(stderr, "mlbench: unexpected argument '%s' - did you mean '--suite %s'? (see --help)\n", arg, near);
    else
        fprintf(stderr, "mlbench: unexpected argument '%s' (see --help)\n", arg);
}

/* Parses the measuring command line. Returns MB_OK, MB_EUSAGE, or -1 when
 * --help/--version was handled. */
static int parse_cli(int argc, char **argv, cli *c)
{
    static const struct option longopts[] = {
        { "suite", required_argument, NULL, OPT_SUITE },
        { "filter", required_argument, NULL, OPT_FILTER },
        { "out", required_argument, NULL, OPT_OUT },
        { "format", required_argument, NULL, OPT_FORMAT },
        { "gbench-out", required_argument, NULL, OPT_GBENCH_OUT },
        { "html", required_argument, NULL, OPT_HTML },
        { "repetitions", required_argument, NULL, OPT_REPS },
        { "min-time", required_argument, NULL, OPT_MIN_TIME },
        { "warmup-time", required_argument, NULL, OPT_WARMUP },
        { "disk-dir", required_argument, NULL, OPT_DISK_DIR },
        { "disk-file", required_argument, NULL, OPT_DISK_FILE },
        { "baseline", required_argument, NULL, OPT_BASELINE },
        { "tolerance", required_argument, NULL, OPT_TOLERANCE },
        { "fleet-margin", required_argument, NULL, OPT_FLEET_MARGIN },
        { "dist-timeout", required_argument, NULL, OPT_DIST_TIMEOUT },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { "version", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    /* Google Benchmark's own flags are taken out first: getopt would reject them. */
    int kept = 1;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--benchmark_", 12) == 0) {
            if (c->n_gb_flags == MAX_GB_FLAGS) {
                fprintf(stderr, "mlbench: too many --benchmark_* flags\n");
                return MB_EUSAGE;
            }
            c->gb_flags[c->n_gb_flags++] = argv[i];
        } else {
            argv[kept++] = argv[i];
        }
    }
    argc = kept;
    opterr = 0;
    int ch;
    double d;
    while ((ch = getopt_long(argc, argv, ":qhV", longopts, NULL)) != -1) {
        switch (ch) {
        case OPT_SUITE: c->suite = optarg; break;
        case OPT_FILTER: c->filter = optarg; break;
        case OPT_OUT: c->out = optarg; break;
        case OPT_FORMAT: c->format = optarg; break;
        case OPT_GBENCH_OUT: c->gbench_out = optarg; break;
        case OPT_HTML: c->html = optarg; break;
        case OPT_DISK_DIR: c->opts.disk_dir = optarg; break;
        case OPT_DISK_FILE: c->opts.disk_file = optarg; break;
        case OPT_BASELINE: c->baseline = optarg; break;
        case OPT_REPS:
            if (parse_double_arg("--repetitions", optarg, 1, MB_MAX_REPETITIONS, &d) || d != (int)d)
                return MB_EUSAGE;
            c->run.repetitions = (int)d;
            break;
        case OPT_MIN_TIME:
            if (parse_double_arg("--min-time", optarg, 1e-4, MB_MAX_CASE_SECONDS, &c->run.min_time))
                return MB_EUSAGE;
            break;
        case OPT_WARMUP:
            if (parse_double_arg("--warmup-time", optarg, 0, MB_MAX_CASE_SECONDS, &c->run.warmup_time))
                return MB_EUSAGE;
            break;
        case OPT_TOLERANCE:
            if (parse_double_arg("--tolerance", optarg, 0, 1, &c->tolerance))
                return MB_EUSAGE;
            break;
        case OPT_FLEET_MARGIN:
            if (parse_double_arg("--fleet-margin", optarg, 0, 1, &c->run.fleet_margin))
                return MB_EUSAGE;
            break;
        case OPT_DIST_TIMEOUT:
            if (parse_double_arg("--dist-timeout", optarg, 1, MAX_DIST_TIMEOUT, &c->run.dist_timeout))
                return MB_EUSAGE;
            break;
        case 'q': c->run.quiet = c->opts.quiet = true; break;
        case 'h': usage(stdout); return -1;
        case 'V': printf("mlbench %s (git %s)\n", MB_VERSION, MB_GIT_REVISION); return -1;
        case ':':
            fprintf(stderr, "mlbench: option %s needs a value (see --help)\n", argv[optind - 1]);
            return MB_EUSAGE;
        default:
            fprintf(stderr, "mlbench: unknown option '%s' (see --help)\n", argv[optind - 1]);
            return MB_EUSAGE;
        }
    }
    if (optind < argc) {
        unexpected_argument(argv[optind]);
        return MB_EUSAGE;
    }
    if (!mb_format_valid(c->format)) {
        fprintf(stderr, "mlbench: --format: expected table, json, csv or md, got '%s'\n", c->format);
        return MB_EUSAGE;
    }
    if (c->opts.disk_dir && c->opts.disk_file) {
        fprintf(stderr, "mlbench: --disk-dir and --disk-file exclude each other\n");
        return MB_EUSAGE;
    }
    return MB_OK;
}

/* ---- the arguments of list, report and trace ------------------------------- */

/* Each subcommand's usage, one text: on stdout for --help, on stderr after a
 * usage error, so what a mistake shows is what --help shows. */
static const char LIST_USAGE[] =
    "usage: mlbench list [--format table|json]\n"
    "  the components and their backends, whether each can run here (and why not), their\n"
    "  parameters (type, default, range) and the shipped suites\n"
    "  --format F   table (default) or json\n"
    "  -h, --help   this text\n";

static const char REPORT_USAGE[] =
    "usage: mlbench report FILE [--format table|json|csv|md] [--html PAGE]\n"
    "  print a results file of `mlbench --suite ...` again\n"
    "  --format F   table (default), json, csv or md on stdout\n"
    "  --html PAGE  also write a self-contained HTML page with charts (docs/report.md)\n"
    "  --           the end of the options: a FILE that starts with - goes after it\n"
    "  -h, --help   this text\n";

static const char TRACE_USAGE[] =
    "usage: mlbench trace [--] FILE(.json|.json.gz)\n"
    "  what mlbench reads from a PyTorch profiler trace (steps, stages, GPU utilization,\n"
    "  warnings), as JSON on stdout (docs/traces.md)\n"
    "  --           the end of the options: a FILE that starts with - goes after it\n"
    "  -h, --help   this text\n";

/* What a subcommand's command line gave. */
typedef struct sub_args {
    const char *format; /* --format, NULL when not given */
    const char *html;   /* --html, NULL when not given */
    const char *file;   /* the one positional argument, NULL when none */
    bool help;          /* -h or --help */
} sub_args;

enum { SUB_FORMAT = 256, SUB_HTML };

/* One argument that is no option: the file, when the command takes one and
 * has none yet. */
static int sub_positional(const char *arg, bool takes_file, sub_args *a, mb_err *err)
{
    if (takes_file && a->file == NULL) {
        a->file = arg;
        return MB_OK;
    }
    return mb_errf(err, MB_EUSAGE, "unexpected argument '%s'", arg);
}

/* Parses a subcommand's arguments (argv[0] is its name) with the options in
 * opts. Scans them all even after an error, so that --help anywhere wins: a
 * user who asks for the usage gets it, not a complaint about another word.
 * Returns MB_OK (a->help set for --help) or MB_EUSAGE with the first error. */
static int parse_sub_args(int argc, char **argv, const struct option *opts, bool takes_file, sub_args *a,
                          mb_err *err)
{
    memset(a, 0, sizeof *a);
    optind = 0; /* glibc: full re-initialisation */
    opterr = 0; /* the messages are ours, with the command's name */
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (ch) {
        case SUB_FORMAT: a->format = optarg; break;
        case SUB_HTML: a->html = optarg; break;
        case 'h': a->help = true; break;
        case ':': mb_errf(err, MB_EUSAGE, "%s needs a value", argv[optind - 1]); break;
        default: mb_errf(err, MB_EUSAGE, "unknown option '%s'", argv[optind - 1]); break;
        }
    }
    /* getopt moved the other arguments here, and those after a "--" */
    for (int i = optind; i < argc; i++)
        sub_positional(argv[i], takes_file, a, err);
    if (a->help)
        return MB_OK;
    if (err->code != MB_OK)
        return err->code;
    if (takes_file && a->file == NULL)
        return mb_errf(err, MB_EUSAGE, "a FILE is required");
    return MB_OK;
}

/* After parsing: the usage on stdout for --help (exit 0), or the error and
 * the usage on stderr (exit 2). Returns -1 when the command goes on. */
static int sub_usage_status(int rc, const sub_args *a, const mb_err *err, const char *cmd, const char *usage)
{
    if (rc == MB_OK && a->help) {
        fputs(usage, stdout);
        return 0;
    }
    if (rc == MB_OK)
        return -1;
    fprintf(stderr, "mlbench %s: %s\n", cmd, err->msg);
    fputs(usage, stderr);
    return mb_exit_status(rc);
}

/* list: --format table|json; no file. */
static int parse_list_args(int argc, char **argv, sub_args *a, mb_err *err)
{
    static const struct option opts[] = {
        { "format", required_argument, NULL, SUB_FORMAT },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int rc = parse_sub_args(argc, argv, opts, false, a, err);
    if (rc != MB_OK || a->help)
        return rc;
    if (a->format == NULL)
        a->format = "table";
    if (strcmp(a->format, "table") && strcmp(a->format, "json"))
        return mb_errf(err, MB_EUSAGE, "--format %s: expected table or json", a->format);
    return MB_OK;
}

/* report: FILE, --format table|json|csv|md, --html PAGE. */
static int parse_report_args(int argc, char **argv, sub_args *a, mb_err *err)
{
    static const struct option opts[] = {
        { "format", required_argument, NULL, SUB_FORMAT },
        { "html", required_argument, NULL, SUB_HTML },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int rc = parse_sub_args(argc, argv, opts, true, a, err);
    if (rc != MB_OK || a->help)
        return rc;
    if (a->format == NULL)
        a->format = "table";
    if (!mb_format_valid(a->format))
        return mb_errf(err, MB_EUSAGE, "--format %s: expected table, json, csv or md", a->format);
    return MB_OK;
}

/* trace: FILE and no option but --help. */
static int parse_trace_args(int argc, char **argv, sub_args *a, mb_err *err)
{
    static const struct option opts[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    return parse_sub_args(argc, argv, opts, true, a, err);
}

/* ---- mlbench list --------------------------------------------------------- */

/* mlbench list's text: parameters and wrapped lines start at this column */
enum { LIST_INDENT = 31 };

static int cmd_list(int argc, char **argv)
{
    sub_args a;
    mb_err err = { 0 };
    int status = sub_usage_status(parse_list_args(argc, argv, &a, &err), &a, &err, "list", LIST_USAGE);
    if (status >= 0)
        return status;
    bool json = strcmp(a.format, "json") == 0;
    cJSON *doc = cJSON_CreateArray();
    for (size_t i = 0; i < mb_registry_count(); i++) {
        const mb_component_ops *ops = mb_registry_at(i);
        mb_err why = { 0 };
        int rc = ops->probe ? ops->probe(NULL, &why) : MB_OK;
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "component", ops->component);
        cJSON_AddStringToObject(o, "backend", ops->backend);
        cJSON_AddStringToObject(o, "summary", ops->summary ? ops->summary : "");
        cJSON_AddBoolToObject(o, "available", rc == MB_OK);
        cJSON_AddStringToObject(o, "why_not", rc == MB_OK ? "" : why.msg);
        cJSON_AddStringToObject(o, "rate_unit", ops->rate_unit ? ops->rate_unit : "");
        cJSON *ps = cJSON_AddArrayToObject(o, "params");
        for (const mb_param_spec *p = ops->params; p && p->name; p++) {
            cJSON *x = cJSON_CreateObject();
            cJSON_AddStringToObject(x, "name", p->name);
            cJSON_AddStringToObject(x, "type", mb_param_type_name(p->type));
            if (p->def)
                cJSON_AddStringToObject(x, "default", p->def);
            else
                cJSON_AddNullToObject(x, "default");
            if (p->choices)
                cJSON_AddStringToObject(x, "choices", p->choices);
            bool numeric = p->type == MB_P_INT || p->type == MB_P_SIZE || p->type == MB_P_DOUBLE;
            if (numeric && p->min <= p->max) {
                cJSON_AddNumberToObject(x, "min", p->min);
                cJSON_AddNumberToObject(x, "max", p->max);
            }
            cJSON_AddStringToObject(x, "help", p->help ? p->help : "");
            cJSON_AddItemToArray(ps, x);
        }
        cJSON_AddItemToArray(doc, o);
    }
    if (json) {
        char *t = cJSON_Print(doc);
        if (t == NULL) {
            fprintf(stderr, "mlbench list: out of memory\n");
            cJSON_Delete(doc);
            return mb_exit_status(MB_ESYS);
        }
        printf("%s\n", t);
        free(t);
    } else {
        printf("%s\n\n", mb_dist_describe());
        const cJSON *o;
        cJSON_ArrayForEach(o, doc)
        {
            bool ok = cJSON_IsTrue(cJSON_GetObjectItem(o, "available"));
            /* 120 columns: the text after the first 31 wraps, indented under itself */
            int col = printf("%-14s %-10s %-4s ", cJSON_GetObjectItem(o, "component")->valuestring,
                             cJSON_GetObjectItem(o, "backend")->valuestring, ok ? "yes" : "no");
            mb_text_wrap(stdout, col, LIST_INDENT + 2, cJSON_GetObjectItem(o, "summary")->valuestring, 0);
            if (!ok) {
                printf("%*s why not: ", LIST_INDENT - 1, "");
                mb_text_wrap(stdout, LIST_INDENT + 9, LIST_INDENT + 2, cJSON_GetObjectItem(o, "why_not")->valuestring,
                             0);
            }
            const cJSON *p;
            cJSON_ArrayForEach(p, cJSON_GetObjectItem(o, "params"))
            {
                const cJSON *def = cJSON_GetObjectItem(p, "default");
                const cJSON *ch = cJSON_GetObjectItem(p, "choices");
                char range[96] = "";
                if (cJSON_GetObjectItem(p, "min"))
                    snprintf(range, sizeof range, " [%.15g..%.15g]", cJSON_GetObjectItem(p, "min")->valuedouble,
                             cJSON_GetObjectItem(p, "max")->valuedouble);
                /* the name, type and default unbroken; the help wraps after them */
                int col = printf("%*s%s (%s%s%s%s) = %s: ", LIST_INDENT, "",
                                 cJSON_GetObjectItem(p, "name")->valuestring,
                                 cJSON_GetObjectItem(p, "type")->valuestring, ch ? ": " : "", ch ? ch->valuestring : "",
                                 range, cJSON_IsString(def) ? def->valuestring : "(required)");
                mb_text_wrap(stdout, col, LIST_INDENT + 2, cJSON_GetObjectItem(p, "help")->valuestring, 0);
            }
        }
        char names[1024];
        mb_suite_names(names, sizeof names);
        printf("\nsuites: ");
        mb_text_wrap(stdout, 8, 8, names, 0);
    }
    cJSON_Delete(doc);
    return 0;
}

/* ---- mlbench report ------------------------------------------------------- */

static int cmd_report(int argc, char **argv)
{
    sub_args a;
    mb_err err = { 0 };
    int status = sub_usage_status(parse_report_args(argc, argv, &a, &err), &a, &err, "report", REPORT_USAGE);
    if (status >= 0)
        return status;
    const char *file = a.file, *format = a.format, *html = a.html;
    cJSON *doc;
    if (mb_results_load(file, &doc, &err) != MB_OK) {
        /* a run file given to report: name the command that reads it */
        mb_file_kind kind = mb_run_file_kind(file);
        if (kind == MB_FILE_TRACE || kind == MB_FILE_STAGES)
            fprintf(stderr, "mlbench report: %s: a %s, not a results file: use `mlbench gap --run %s`\n", file,
                    kind == MB_FILE_TRACE ? "PyTorch trace" : "stage-metrics file", file);
        else
            fprintf(stderr, "mlbench report: %s\n", err.msg);
        return 2;
    }
    /* on stderr, so that every format's stdout stays what it is (the page says it in its machine card) */
    char unfinished[256];
    if (mb_results_unfinished(doc, unfinished, sizeof unfinished))
        fprintf(stderr, "mlbench report: %s: %s\n", file, unfinished);
    status = 0;
    if (mb_write_results(stdout, doc, format, &err) != MB_OK) {
        fprintf(stderr, "mlbench report: %s\n", err.msg);
        status = mb_exit_status(err.code);
    }
    if (html && mb_html_results_file(html, doc, &err) != MB_OK) {
        fprintf(stderr, "mlbench report: --html: %s\n", err.msg);
        status = mb_exit_status(err.code);
    }
    cJSON_Delete(doc);
    return status;
}

/* ---- mlbench trace -------------------------------------------------------- */

static int cmd_trace(int argc, char **argv)
{
    sub_args a;
    mb_err err = { 0 };
    int status = sub_usage_status(parse_trace_args(argc, argv, &a, &err), &a, &err, "trace", TRACE_USAGE);
    if (status >= 0)
        return status;
    if (mb_trace_dump(a.file, stdout, &err) != MB_OK) {
        fprintf(stderr, "mlbench trace: %s\n", err.msg);
        return mb_exit_status(err.code);
    }
    return 0;
}

/* ---- measuring ------------------------------------------------------------ */

/* After the run: table on stdout, optional Google Benchmark JSON, baseline. */
static int finish_outputs(const cli *c, const mb_journal *j, int *status)
{
    mb_err err = { 0 };
    /* the results file is written: a view that fails loses nothing measured */
    if (mb_write_results(stdout, j->doc, c->format, &err) != MB_OK) {
        fprintf(stderr, "mlbench: %s\n", err.msg);
        *status = 1;
    }
    mb_dist_fleet_print(stdout, j->doc);
    if (c->gbench_out && mb_write_gbench_json(c->gbench_out, j->doc, &err) != MB_OK) {
        fprintf(stderr, "mlbench: %s\n", err.msg);
        *status = 1;
    }
    /* the results file is already written: a page that fails loses nothing measured */
    if (c->html && mb_html_results_file(c->html, j->doc, &err) != MB_OK) {
        fprintf(stderr, "mlbench: --html: %s\n", err.msg);
        *status = 1;
    }
    if (c->baseline) {
        cJSON *base = NULL, *failures = NULL;
        if (mb_results_open(c->baseline, &base, NULL, &err) != MB_OK ||
            mb_baseline_check(j->doc, base, c->tolerance, &failures, &err) == MB_EUSAGE) {
            fprintf(stderr, "mlbench: --baseline: %s\n", err.msg);
            cJSON_Delete(base);
            return 2;
        }
        if (cJSON_GetArraySize(cJSON_GetObjectItem(failures, "failed")) > 0)
            *status = 1;
        mb_baseline_print(stdout, failures, c->tolerance);
        cJSON_Delete(failures);
        cJSON_Delete(base);
    }
    return *status;
}

static int cmd_measure(int argc, char **argv)
{
    cli c = { .suite = "all", .format = "table", .tolerance = DEFAULT_TOLERANCE };
    c.run.warmup_time = -1;
    c.run.fleet_margin = DEFAULT_FLEET_MARGIN;
    c.run.dist_timeout = DEFAULT_DIST_TIMEOUT;
    int full_argc = argc;
    /* the command line as given, for the results file: parse_cli takes the
     * Google Benchmark flags out of argv */
    char **full_argv = malloc(sizeof *full_argv * (size_t)(argc + 1));
    if (full_argv == NULL) {
        fprintf(stderr, "mlbench: out of memory copying the command line\n");
        return mb_exit_status(MB_ESYS);
    }
    memcpy(full_argv, argv, sizeof *full_argv * (size_t)(argc + 1));
    int rc = parse_cli(argc, argv, &c);
    if (rc != MB_OK) {
        free(full_argv);
        return rc < 0 ? 0 : 2;
    }
    mb_err err = { 0 };
    if (mb_gb_init(c.n_gb_flags, c.gb_flags, &err) != MB_OK) {
        fprintf(stderr, "mlbench: %s\n", err.msg);
        free(full_argv);
        return 2;
    }
    mb_options_set(&c.opts);
    mb_dist_set_timeout(c.run.dist_timeout);
    /* Under MPI only rank 0 reports progress (the others would repeat it). */
    if (mb_dist_rank() != 0)
        c.run.quiet = true;
    mb_suite suite;
    if (mb_suite_load(c.suite, &suite, &err) != MB_OK ||
        (c.filter && mb_suite_filter(&suite, c.filter, &err) != MB_OK)) {
        fprintf(stderr, "mlbench: %s\n", err.msg);
        free(full_argv);
        return 2;
    }
    if (suite.n_cases == 0) {
        fprintf(stderr, "mlbench: no case to run (suite '%s'%s%s)\n", c.suite, c.filter ? ", filter " : "",
                c.filter ? c.filter : "");
        mb_suite_free(&suite);
        free(full_argv);
        return 2;
    }
    bool root = mb_dist_rank() == 0;
    char path[PATH_MAX];
    mb_journal j = { 0 };
    int status = 0;
    if (root) {
        cJSON *ctx = mb_context_collect(c.opts.disk_dir);
        int rc = c.out ? mb_journal_open(&j, c.out, c.suite, full_argc, full_argv, ctx, &err)
                       : mb_journal_open_default(&j, c.suite, full_argc, full_argv, ctx, &err);
        if (rc != MB_OK)
            goto fatal;
        snprintf(path, sizeof path, "%s", j.path);
    }
    mb_dist_add_contexts(root ? j.doc : NULL, c.opts.disk_dir, c.run.dist_timeout);
    mb_run_summary sum;
    if (mb_run_suite(&suite, &c.run, &j, &sum, &err) != MB_OK)
        goto fatal;
    if (root) {
        if (mb_journal_finish(&j, &err) != MB_OK)
            goto fatal;
        status = sum.failed > 0 ? 1 : 0;
        status = finish_outputs(&c, &j, &status);
        if (!c.run.quiet)
            fprintf(stderr, "%d ok, %d skipped, %d failed; results: %s\n", sum.ok, sum.skipped, sum.failed, path);
    }
    status = mb_dist_agree(status);
    mb_journal_close(&j);
    mb_suite_free(&suite);
    free(full_argv);
    return status;
fatal:
    fprintf(stderr, "mlbench: %s%s%s\n", err.msg, root && j.written ? "; results so far are in " : "",
            root && j.written ? j.path : "");
    mb_journal_close(&j);
    mb_suite_free(&suite);
    free(full_argv);
    return mb_exit_status(err.code ? err.code : MB_EFAIL);
}

int main(int argc, char **argv)
{
    mb_err err = { 0 };
    if (mb_dist_init(&argc, &argv, &err) != MB_OK) {
        fprintf(stderr, "mlbench: %s\n", err.msg);
        return 2;
    }
    mb_cleanup_install();
    int status;
    const char *cmd = argc > 1 ? argv[1] : "";
    if (strcmp(cmd, "list") == 0)
        status = cmd_list(argc - 1, argv + 1);
    else if (strcmp(cmd, "report") == 0)
        status = cmd_report(argc - 1, argv + 1);
    else if (strcmp(cmd, "gap") == 0)
        status = mb_cmd_gap(argc - 1, argv + 1);
    else if (strcmp(cmd, "compare") == 0)
        status = mb_cmd_compare(argc - 1, argv + 1);
    else if (strcmp(cmd, "trace") == 0)
        status = cmd_trace(argc - 1, argv + 1);
    else if (strcmp(cmd, "run") == 0)
        status = cmd_measure(argc - 1, argv + 1);
    else
        status = cmd_measure(argc, argv);
    mb_cleanup_run();
    mb_dist_finalize();
    return status;
}
