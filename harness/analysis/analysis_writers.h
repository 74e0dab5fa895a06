/* analysis_writers.h: `mlbench gap` and `mlbench compare` output as a
 * terminal table, JSON or Markdown. Writers only read the built model. */
#ifndef MB_ANALYSIS_WRITERS_H
#define MB_ANALYSIS_WRITERS_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "compare.h"
#include "diagnose.h"
#include "gap.h"

/* format: "table" | "json" | "md". MB_EUSAGE for another. */
int mb_gap_write(FILE *out, const mb_gap *g, const mb_diagnosis *d, const char *format, mb_err *err);
int mb_compare_write(FILE *out, const mb_compare *c, const char *format, mb_err *err);

/* The JSON documents ("format": "mlbench-gap" / "mlbench-compare", version 1). */
cJSON *mb_gap_to_json(const mb_gap *g, const mb_diagnosis *d);
cJSON *mb_compare_to_json(const mb_compare *c);

/* Human figures: "1.23 ms", "312 GB/s", "4.1 us/launch" (rate in work units/s). */
void mb_fmt_seconds(char *buf, size_t len, double seconds);
void mb_fmt_rate(char *buf, size_t len, double rate, const char *work_unit);

#endif
