/* results_page.h: the results page, self-contained HTML (inline SVG and CSS;
 * no network, no scripts, no fonts: GPU nodes are often air-gapped). Hover
 * values are SVG <title> elements, which every browser shows without
 * JavaScript.
 * Output is deterministic: the same input gives the same bytes (no clock is
 * read, everything is written in input order).
 *
 * The page frame and the generic charts are in report/html.h, shared with
 * the gap and compare pages (analysis/gap/gap_page.c,
 * analysis/compare/compare_page.c). */
#ifndef MB_RESULTS_PAGE_H
#define MB_RESULTS_PAGE_H

#include <stdbool.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "html.h"
#include "mb.h"

/* Arithmetic intensity of a GEMM or convolution case (a results case
 * object): flop per byte of operands read and result written once (the
 * minimum traffic), all in the case's dtype; NaN when the parameters do not
 * say. Where the roofline places the case. */
double mb_case_intensity(const cJSON *c);

/* The run / report page of a results document (results/README.md):
 * machine card, ceiling vs peak per component, roofline, bandwidth vs
 * size for copies and collectives, disk sequential vs random, burst vs
 * sustained, skipped and failed cases, all cases. */
int mb_html_results(FILE *o, const cJSON *doc, mb_err *err);

/* Writes the page to path atomically (whole or not at all). */
int mb_html_results_file(const char *path, const cJSON *doc, mb_err *err);

#endif
