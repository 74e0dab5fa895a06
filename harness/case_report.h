/* case_report.h: the harness side of mb_report (component.h): extra metrics,
 * info strings, notes and the theoretical peak a case reports. */
#ifndef MB_CASE_REPORT_H
#define MB_CASE_REPORT_H

#include "component.h"

typedef struct mb_metric {
    char *name;
    double value;
    char *unit;
} mb_metric;

typedef struct mb_info {
    char *name;
    char *value;
} mb_info;

struct mb_report {
    mb_metric *metrics;
    int n_metrics;
    mb_info *infos;
    int n_infos;
    char **notes;
    int n_notes;
    double peak;        /* in the component's rate unit; 0 = unknown */
    char *peak_source;
};

void mb_report_init(mb_report *r);
void mb_report_free(mb_report *r);
/* Looks up a metric by name; NULL when absent. */
const mb_metric *mb_report_find_metric(const mb_report *r, const char *name);
const char *mb_report_find_info(const mb_report *r, const char *name);

#endif
