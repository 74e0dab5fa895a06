/* compare_page.h: `mlbench compare --html`, one self-contained page
 * (report/html.h: inline SVG and CSS, no scripts, same input -> same bytes). */
#ifndef MB_COMPARE_PAGE_H
#define MB_COMPARE_PAGE_H

#include <stdio.h>

#include "compare.h"

/* Machines, grouped bars per component, ratios, geometric means, and
 * throughput per dollar when prices were given. */
int mb_compare_html(FILE *o, const mb_compare *c, mb_err *err);

#endif
