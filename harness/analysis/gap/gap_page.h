/* gap_page.h: `mlbench gap --html`, one self-contained page (report/html.h:
 * inline SVG and CSS, no scripts, same input -> same bytes). */
#ifndef MB_GAP_PAGE_H
#define MB_GAP_PAGE_H

#include <stdio.h>

#include "diagnose.h"
#include "gap.h"

/* What the step is made of (every stage by exposed time, as a table and a
 * chart), the step as a stacked bar, the stage table, the ranking by time
 * lost as a waterfall from the step now to the step at every ceiling, the
 * diagnosis with evidence and remedies, the projection when there is a
 * target. */
int mb_gap_html(FILE *o, const mb_gap *g, const mb_diagnosis *d, mb_err *err);

#endif
