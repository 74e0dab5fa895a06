/* compare.h: machines side by side. Cases of several results files joined
 * by identity ("id": component/backend/params), ratios to the first file,
 * cases present on some machines only, throughput per dollar when prices
 * are given, and the context differences that explain numbers (driver,
 * clocks, PCIe link, CPU model, kernel; the keys are configs/gap/compare.ini).
 *
 * Two views, because unlike machines (an H100 box and a CPU box) share few
 * cases: like-for-like, the cases both machines ran and verified; and best
 * per kind, each machine's best verified case per component and kind of
 * work (dtype, op, direction...: configs/gap/compare.ini [best]), what a
 * buyer compares. Every geometric mean carries its coverage (n of m).
 *
 * Both views, their geometric means and work per dollar are kept apart per
 * device kind: a case runs on the host CPU or on a GPU (mb_case_ref.device,
 * configs/gap/matching.ini [devices]). Two GPU boxes share their host CPU
 * cases most readily; a mean of those must not read as the GPUs'. */
#ifndef MB_COMPARE_H
#define MB_COMPARE_H

#include <stdbool.h>

#include "ceilings.h"
#include "gapconfig.h"
#include "hardware.h"

typedef struct mb_compare_row {
    const char *id;
    const char *label;   /* mb_case_label: what text, Markdown and HTML show */
    const char *component;
    const char *device;  /* "cpu" (the host) | "gpu": its cases' mb_case_ref.device */
    const char *rate_unit;
    bool latency_first;
    int *idx;        /* per machine: case index, -1 = absent */
    double *rate;    /* per machine: rate.median in rate_unit; < 0 = not usable */
    double *ratio;   /* per machine: rate / first machine's rate; < 0 = none */
    double *per_usd; /* per machine: rate x 3600 / price (rate unit x s per $); < 0 = no price */
    bool *from_sheet; /* per machine: rate is a datasheet figure, not a measurement (mb_compare_fill_datasheet) */
    const char **not_runnable; /* per machine: why the case cannot run there (mb_compare_build), else NULL */
    const char *no_path; /* a machine's reason that names the library or path, not the machine ([datasheet]
                          * cannot_run_anywhere): no machine runs the case, none gets a datasheet figure; else NULL */
    bool everywhere; /* ran and verified (usable, measured) on every machine */
} mb_compare_row;

/* One kind of work of a component (e.g. gemm dtype=fp32): each machine's
 * best verified, measured case of that kind. */
typedef struct mb_compare_best {
    const char *component;
    const char *device;   /* "cpu" | "gpu": a kind of work on the host and on a GPU are two kinds */
    char kind[128];       /* the kind parameters, "dtype=fp32 op=read"; "" = the whole component */
    const char *work_unit; /* "flop", "byte", "op"... */
    bool latency_first;
    int *row;             /* per machine: index into rows of its best case, -1 = none */
    double *rate_abs;     /* per machine: that case's rate in work units per second; < 0 = none */
    double *ratio;        /* per machine: rate_abs / A's; < 0 = none */
    double *per_usd_abs;  /* per machine: work units per dollar = rate_abs x 3600 / USD per hour; < 0 = none */
} mb_compare_best;

typedef struct mb_compare_geo {
    const char *component;
    const char *device; /* "cpu" | "gpu": the means are per component and device kind */
    /* like-for-like: over the cases usable (measured, verified) on A and machine i */
    double *geomean;     /* per machine: geometric mean of the ratios; < 0 = none */
    int *n;              /* per machine: cases in it ... */
    int n_total;         /* ... of this many cases of the component usable on some machine */
    double *geomean_usd; /* per machine: the same for throughput per dollar */
    /* best per kind: over the kinds where A and machine i both have a best case */
    double *best_geomean;     /* per machine; < 0 = none */
    int *best_n;              /* per machine: kinds in it ... */
    int best_total;           /* ... of this many kinds with a best case on some machine */
    double *best_geomean_usd; /* per machine: the same per dollar */
} mb_compare_geo;

typedef struct mb_compare_ctx {
    char *key;
    char **value; /* per machine, "" when absent */
} mb_compare_ctx;

typedef struct mb_compare {
    const mb_ceilings *m; /* the machines, in order; the first is the reference */
    int n_m;
    char **label;         /* per machine: mb_machine_labels, owned */
    double *price;        /* per machine USD/hour; 0 = none */
    mb_compare_row *rows;
    int n_rows;
    mb_compare_geo *geo;
    int n_geo;
    mb_compare_best *best; /* in order of first appearance */
    int n_best;
    mb_compare_ctx *ctx;  /* only the keys whose values differ */
    int n_ctx;
} mb_compare;

/* labels: "NAME=FILE" overrides of the machine labels (mb_machine_labels).
 * prices: "NAME=USD_PER_HOUR" strings, NAME = any name the output shows for
 * a machine: its letter (A, B, ...), label, host name, file path or file
 * name. MB_EUSAGE on a malformed label or price, or a NAME that fits no
 * machine (the message lists the names that do). keys: [context], [best]
 * and [datasheet] of configs/gap/compare.ini. A case a machine's results
 * hold as skipped or failed with a reason containing one of [datasheet]
 * cannot_run's phrases (the library or path cannot do that work there:
 * "fp8 is not available through cublasGemmEx") is not runnable there:
 * row.not_runnable[i] is its reason. */
int mb_compare_build(const mb_ceilings *machines, int n, const char *const *labels, int n_labels,
                     const char *const *prices, int n_prices, const mb_ini *keys, mb_compare *out, mb_err *err);
/* Fills the cells of machine `m` that hold no usable measurement with its
 * datasheet's figure for that kind of work, where the datasheet has one,
 * marked from_sheet: measured figures first, datasheets only where no
 * measurement exists. Never a cell the machine's own results say cannot run
 * there (row.not_runnable[m]), nor any cell of a case another machine's
 * results say its library or path cannot run at all (row.no_path: cuBLAS
 * fp8 through cublasGemmEx, on every GPU): a datasheet's peak is no rate of
 * a path that does not exist. Nor latencies, a D2D copy (the sheet counts its bytes
 * twice), or a case of the other device kind than the sheet's. Such cells
 * never enter the geometric means, and no ratio is computed against a
 * datasheet figure in the first column. */
int mb_compare_fill_datasheet(mb_compare *c, int m, const mb_datasheet *d, mb_err *err);
void mb_compare_free(mb_compare *c);

/* Work per dollar: a rate (work units per second) for an hour at
 * usd_per_hour, rate x 3600 / usd_per_hour; < 0 without a price. */
double mb_compare_per_usd(double rate, double usd_per_hour);

/* The work unit compare counts a case in: its work_unit, except "OP" for
 * integer operations (an int8 GEMM's rate_unit is TOP/s, results.h
 * mb_rate_unit_for_dtype): int8 is shown in OP/s and pairs only with int8. */
const char *mb_compare_work_unit(const mb_case_ref *cr);

/* The device kinds a case runs on (mb_case_ref.device), in the order the
 * per-device notes list them. */
enum { MB_COMPARE_DEVICES = 2 };
extern const char *const mb_compare_devices[MB_COMPARE_DEVICES];

/* A device kind as the output names it: "host CPU" for "cpu", "GPU" for "gpu". */
const char *mb_compare_device_name(const char *device);

/* Machine i is a GPU machine: its context lists a GPU, or a case of it ran on one. */
bool mb_compare_has_gpu(const mb_compare *c, int i);

#endif
