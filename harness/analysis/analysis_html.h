/* analysis_html.h: `mlbench gap --html` and `mlbench compare --html`, one
 * self-contained page each (report/html.h: inline SVG and CSS, no scripts,
 * same input -> same bytes). */
#ifndef MB_ANALYSIS_HTML_H
#define MB_ANALYSIS_HTML_H

#include <stdio.h>

#include "compare.h"
#include "diagnose.h"
#include "gap.h"

/* What the step is made of (every stage by exposed time, as a table and a
 * chart), the step as a stacked bar, the stage table, the ranking by time
 * lost as a waterfall from the step now to the step at every ceiling, the
 * diagnosis with evidence and remedies, the projection when there is a
 * target. */
int mb_gap_html(FILE *o, const mb_gap *g, const mb_diagnosis *d, mb_err *err);

/* Machines, grouped bars per component, ratios, geometric means, and
 * throughput per dollar when prices were given. */
int mb_compare_html(FILE *o, const mb_compare *c, mb_err *err);

#endif
