/* compare_writers.h: `mlbench compare` output as a terminal table, JSON or
 * Markdown. Writers only read the built model. */
#ifndef MB_COMPARE_WRITERS_H
#define MB_COMPARE_WRITERS_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "compare.h"
#include "format.h" /* the numbers and times of every view */

/* format: "table" | "json" | "md". MB_EUSAGE for another. */
int mb_compare_write(FILE *out, const mb_compare *c, const char *format, mb_err *err);

/* The JSON document ("format": "mlbench-compare", version 2). */
cJSON *mb_compare_to_json(const mb_compare *c);

/* ---- compare's figures (text, Markdown and HTML show the same strings) ---- */
/* A rate in work units per second: "52.3 TFLOP/s"; latency-first: "4.1 us/op". */
void mb_compare_fmt_rate(char *buf, size_t len, double rate_abs, const char *work_unit, bool latency_first);
/* Work per dollar: "1.08 EFLOP/$". */
void mb_compare_fmt_per_usd(char *buf, size_t len, double per_usd_abs, const char *work_unit);
/* "gemm (host CPU)", "gemm (GPU)": a component and the device kind its cases run on. */
void mb_compare_fmt_what(char *buf, size_t len, const char *component, const char *device);
/* What work per dollar divides for the device kind ("cpu" | "gpu"): the
 * whole machine's price; for host CPU rows, which priced machines are GPU
 * machines whose price pays for their GPUs too. */
void mb_compare_usd_note(char *buf, size_t len, const mb_compare *c, const char *device);
/* Some best case of the device kind has a work-per-dollar figure. */
bool mb_compare_usd_shown(const mb_compare *c, const char *device);
/* A case's state on machine i: ok, absent, skipped, failed, not verified,
 * not runnable here (compare.h: not_runnable), datasheet. */
const char *mb_compare_state(const mb_compare *c, const mb_compare_row *r, int i);
/* A case's rate on machine i, or its state ("not runnable here (REASON)"). */
void mb_compare_fmt_cell(char *buf, size_t len, const mb_compare *c, const mb_compare_row *r, int i);
/* Machine i's best case of a kind: "52.3 TFLOP/s cublaslt". */
void mb_compare_fmt_best(char *buf, size_t len, const mb_compare *c, const mb_compare_best *b, int i);

#endif
