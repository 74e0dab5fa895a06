/* case_report.c: the extra metrics, info strings, notes and peak one case
 * reports (case_report.h), kept and freed by the harness. */
#include "case_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mb_report_init(mb_report *r)
{
    memset(r, 0, sizeof *r);
}

void mb_report_free(mb_report *r)
{
    for (int i = 0; i < r->n_metrics; i++) {
        free(r->metrics[i].name);
        free(r->metrics[i].unit);
    }
    for (int i = 0; i < r->n_infos; i++) {
        free(r->infos[i].name);
        free(r->infos[i].value);
    }
    for (int i = 0; i < r->n_notes; i++)
        free(r->notes[i]);
    free(r->metrics);
    free(r->infos);
    free(r->notes);
    free(r->peak_source);
    memset(r, 0, sizeof *r);
}

/* A metric or info reported twice keeps the last value. */
void mb_report_metric(mb_report *r, const char *name, double value, const char *unit)
{
    for (int i = 0; i < r->n_metrics; i++) {
        if (strcmp(r->metrics[i].name, name) == 0) {
            r->metrics[i].value = value;
            return;
        }
    }
    mb_metric *m = realloc(r->metrics, sizeof *m * (size_t)(r->n_metrics + 1));
    if (m == NULL)
        return;
    r->metrics = m;
    m[r->n_metrics].name = strdup(name);
    m[r->n_metrics].unit = strdup(unit ? unit : "");
    m[r->n_metrics].value = value;
    r->n_metrics++;
}

void mb_report_info(mb_report *r, const char *name, const char *value)
{
    for (int i = 0; i < r->n_infos; i++) {
        if (strcmp(r->infos[i].name, name) == 0) {
            char *v = strdup(value ? value : "");
            if (v) {
                free(r->infos[i].value);
                r->infos[i].value = v;
            }
            return;
        }
    }
    mb_info *in = realloc(r->infos, sizeof *in * (size_t)(r->n_infos + 1));
    if (in == NULL)
        return;
    r->infos = in;
    in[r->n_infos].name = strdup(name);
    in[r->n_infos].value = strdup(value ? value : "");
    r->n_infos++;
}

void mb_report_note(mb_report *r, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (int i = 0; i < r->n_notes; i++)
        if (strcmp(r->notes[i], buf) == 0)
            return;
    char **n = realloc(r->notes, sizeof *n * (size_t)(r->n_notes + 1));
    if (n == NULL)
        return;
    r->notes = n;
    n[r->n_notes++] = strdup(buf);
}

void mb_report_peak(mb_report *r, double rate, const char *source)
{
    r->peak = rate;
    free(r->peak_source);
    r->peak_source = strdup(source ? source : "");
}

const mb_metric *mb_report_find_metric(const mb_report *r, const char *name)
{
    for (int i = 0; i < r->n_metrics; i++)
        if (strcmp(r->metrics[i].name, name) == 0)
            return &r->metrics[i];
    return NULL;
}

const char *mb_report_find_info(const mb_report *r, const char *name)
{
    for (int i = 0; i < r->n_infos; i++)
        if (strcmp(r->infos[i].name, name) == 0)
            return r->infos[i].value;
    return NULL;
}
