/* results_writers.h: results documents (cJSON, schema in results/README.md) as a
 * terminal table, JSON, CSV, Markdown, or Google Benchmark's JSON. Writers
 * never measure: they only read the document. */
#ifndef MB_RESULTS_WRITERS_H
#define MB_RESULTS_WRITERS_H

#include "format.h" /* mb_fmt_number, the run table's numbers */

#include <cjson/cJSON.h>
#include <stdio.h>

#include "mb.h"

/* format: "table" | "json" | "csv" | "md". MB_EUSAGE for another name. */
int mb_write_results(FILE *out, const cJSON *doc, const char *format, mb_err *err);
int mb_format_valid(const char *format);

/* Google Benchmark–compatible JSON (context + benchmarks: one entry per
 * repetition and the mean/median/stddev/cv aggregates, real_time and
 * cpu_time = manual time per iteration in ns), written atomically. */
int mb_write_gbench_json(const char *path, const cJSON *doc, mb_err *err);

/* A case as people read it: "component/backend k=v k=v", only the
 * parameters its job file set (params_set; all of them when the file does not
 * say), sizes humanised. Text, Markdown and HTML show this; the full id stays
 * in JSON and CSV. */
void mb_case_label(const cJSON *c, char *buf, size_t len);
/* The same label of a case not yet written (the progress lines). */
struct mb_case;
void mb_case_label_of(const struct mb_case *c, char *buf, size_t len);

/* "4096" -> "4k", "1048576" -> "1m"; other text unchanged. */
void mb_humanize_value(const char *in, char *out, size_t len);

/* A rate of case c in its rate unit, as the text table prints it ("154.3 GFLOP/s",
 * "10976 GFLOP/s"; latency-first cases as time per unit of work, "3.87 us/op"):
 * the hover text of the HTML page says the same figure as the table. */
void mb_fmt_case_rate(const cJSON *c, double rate, char *buf, size_t len);

/* Prints text from column indent, wrapped at spaces to 120 columns, as the
 * table's notes are (continuation lines indented two more). */
void mb_put_wrapped(FILE *out, const char *text, int indent);

#endif
