/* compare.h: machines side by side. Cases of several results files joined
 * by identity ("id": component/backend/params), ratios to the first file,
 * the geometric mean of the ratios per component, cases present on some
 * machines only, throughput per dollar when prices are given, and the
 * context differences that explain numbers (driver, clocks, PCIe link, CPU
 * model, kernel; the keys are configs/gap/compare.ini). */
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
    const char *rate_unit;
    bool latency_first;
    int *idx;        /* per machine: case index, -1 = absent */
    double *rate;    /* per machine: rate.median in rate_unit; < 0 = not usable */
    double *ratio;   /* per machine: rate / first machine's rate; < 0 = none */
    double *per_usd; /* per machine: rate x 3600 / price (rate unit x s per $); < 0 = no price */
    bool *from_sheet; /* per machine: rate is a datasheet figure, not a measurement (mb_compare_fill_datasheet) */
    bool everywhere; /* present on every machine */
} mb_compare_row;

typedef struct mb_compare_geo {
    const char *component;
    double *geomean;     /* per machine: geometric mean of the ratios; < 0 = none */
    int *n;              /* per machine: cases in it */
    double *geomean_usd; /* per machine: the same for throughput per dollar */
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
    mb_compare_ctx *ctx;  /* only the keys whose values differ */
    int n_ctx;
} mb_compare;

/* labels: "NAME=FILE" overrides of the machine labels (mb_machine_labels).
 * prices: "NAME=USD_PER_HOUR" strings, NAME = a machine's label, host name,
 * file path or file name. MB_EUSAGE on a malformed label or price, or a NAME
 * that fits no file. */
int mb_compare_build(const mb_ceilings *machines, int n, const char *const *labels, int n_labels,
                     const char *const *prices, int n_prices, const mb_ini *keys, mb_compare *out, mb_err *err);
/* Fills the cells of machine `m` that hold no usable measurement with its
 * datasheet's figure for that kind of work, where the datasheet has one,
 * marked from_sheet: measured figures first, datasheets only where no
 * measurement exists. Such cells never enter the geometric means, and no
 * ratio is computed against a datasheet figure in the first column. */
int mb_compare_fill_datasheet(mb_compare *c, int m, const mb_datasheet *d, mb_err *err);
void mb_compare_free(mb_compare *c);

#endif
