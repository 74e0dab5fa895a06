/* gap_writers.h: `mlbench gap` output as a terminal table, JSON or Markdown.
 * Writers only read the built model. */
#ifndef MB_GAP_WRITERS_H
#define MB_GAP_WRITERS_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "format.h" /* the numbers and times of every view */
#include "diagnose.h"
#include "gap.h"

/* format: "table" | "json" | "md". MB_EUSAGE for another. */
int mb_gap_write(FILE *out, const mb_gap *g, const mb_diagnosis *d, const char *format, mb_err *err);

/* The JSON document ("format": "mlbench-gap", version 1). */
cJSON *mb_gap_to_json(const mb_gap *g, const mb_diagnosis *d);

/* ---- gap's sentences: the text, Markdown and the page show the same words ---- */
#define MB_GAP_NOTE_LEN 640
/* "8 steps, 5.7 ms per step on the GPU's timeline: the host runs ahead[, given by --step-ms (traced: 7 ms)]" */
void mb_gap_step_words(char *buf, size_t len, const mb_gap *g);
/* What set the step: the --step-ms sentence, the timeline's why with the closing synchronize; returns how many. */
int mb_gap_step_notes(const mb_gap *g, char notes[][MB_GAP_NOTE_LEN], int max);
/* "GPU compute bound (memory-bound kernels 51.6%, matrix math 39.7%), 91.3% of the step (the diagnosis below);
 * its largest stage: ..." */
void mb_gap_bottleneck_words(char *buf, size_t len, const mb_gap *g, const mb_diagnosis *d);
/* How every view names a part of the step table (evidence step.parts[]): "CPU: " on a CPU-only trace, else
 * "GPU idle: " or "GPU busy: ", put before its name. */
const char *mb_gap_part_prefix(const cJSON *part);
/* A headline row's verdict: the time lost against the ceiling, or what would bound a stage that has none. */
/* A verdict's room: the stage's why, its overlap and a figure or two */
#define MB_GAP_VERDICT_LEN (MB_GAP_WHY_LEN + 192)
void mb_gap_stage_verdict(char *buf, size_t len, const mb_gap *g, const mb_gap_stage *st);

#endif
