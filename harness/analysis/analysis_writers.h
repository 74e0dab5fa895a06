/* analysis_writers.h: `mlbench gap` and `mlbench compare` output as a
 * terminal table, JSON or Markdown. Writers only read the built model. */
#ifndef MB_ANALYSIS_WRITERS_H
#define MB_ANALYSIS_WRITERS_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "compare.h"
#include "format.h" /* the numbers and times of every view */
#include "diagnose.h"
#include "gap.h"

/* format: "table" | "json" | "md". MB_EUSAGE for another. */
int mb_gap_write(FILE *out, const mb_gap *g, const mb_diagnosis *d, const char *format, mb_err *err);
int mb_compare_write(FILE *out, const mb_compare *c, const char *format, mb_err *err);

/* The JSON documents ("format": "mlbench-gap", version 1 / "mlbench-compare", version 2). */
cJSON *mb_gap_to_json(const mb_gap *g, const mb_diagnosis *d);
cJSON *mb_compare_to_json(const mb_compare *c);

/* ---- gap's sentences: the text, Markdown and the page show the same words ---- */
#define MB_GAP_NOTE_LEN 640
/* "8 steps, 5.7 ms per step on the GPU's timeline: the host runs ahead[, given by --step-ms (traced: 7 ms)]" */
void mb_gap_step_words(char *buf, size_t len, const mb_gap *g);
/* What set the step: the --step-ms sentence, the timeline's why with the closing synchronize; returns how many. */
int mb_gap_step_notes(const mb_gap *g, char notes[][MB_GAP_NOTE_LEN], int max);
/* "GPU compute bound: memory-bound kernels, 89.7% of the step (the diagnosis below); its largest stage: ..." */
void mb_gap_bottleneck_words(char *buf, size_t len, const mb_gap *g, const mb_diagnosis *d);
/* A headline row's verdict: the time lost against the ceiling, or what would bound a stage that has none. */
void mb_gap_stage_verdict(char *buf, size_t len, const mb_gap *g, const mb_gap_stage *st);


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
