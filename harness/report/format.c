/* format.c: every number and time the views print (format.h). One place,
 * so a figure reads the same in the gap, the run table, compare, and the
 * page: the prefix or unit follows the value rounded to what is printed (999.7
 * GB/s is "1 TB/s", never "1e+03 GB/s"), and no exponent reaches a reader.
 * tests/test_format.c holds the table of answers (fio's num2str test is the
 * model). */
#include "format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mb_fmt_seconds(char *buf, size_t len, double s)
{
    /* the unit follows the value rounded to 3 significant digits: 999.7 ms
     * is "1 s", not "1e+03 ms" */
    char r[32];
    snprintf(r, sizeof r, "%.3g", s);
    if (isfinite(s) && fabs(s) < 999.5) /* whole seconds above */
        s = strtod(r, NULL);
    if (!isfinite(s))
        snprintf(buf, len, "-");
    else if (s == 0)
        snprintf(buf, len, "0 s");
    else if (fabs(s) < 1e-6)
        snprintf(buf, len, "%.3g ns", s * 1e9);
    else if (fabs(s) < 1e-3)
        snprintf(buf, len, "%.3g \u00b5s", s * 1e6);
    else if (fabs(s) < 1)
        snprintf(buf, len, "%.3g ms", s * 1e3);
    else if (fabs(s) < 999.5) /* 3 significant digits, one format everywhere */
        snprintf(buf, len, "%.3g s", s);
    else
        snprintf(buf, len, "%.0f s", s);
}

void mb_fmt_si(char *buf, size_t len, double v, const char *unit)
{
    static const char *const up[] = { "", "k", "M", "G", "T", "P", "E", "Z" };
    static const char *const down[] = { "", "m", "µ", "n", "p" };
    if (!isfinite(v) || v < 0) {
        snprintf(buf, len, "-");
        return;
    }
    int i = 0, j = 0;
    while (v >= 999.5 && i < 7) {
        v /= 1000;
        i++;
    }
    while (v > 0 && v < 0.9995 && i == 0 && j < 4) {
        v *= 1000;
        j++;
    }
    snprintf(buf, len, "%.3g %s%s", v, i ? up[i] : down[j], unit);
}

void mb_fmt_rate(char *buf, size_t len, double rate, const char *unit)
{
    if (!(rate > 0) || !isfinite(rate) || unit == NULL || strcmp(unit, "s") == 0) {
        snprintf(buf, len, "-");
        return;
    }
    if (strcmp(unit, "launch") == 0 || strcmp(unit, "sync") == 0) { /* latency-first: time per call */
        char t[32];
        mb_fmt_seconds(t, sizeof t, 1.0 / rate);
        snprintf(buf, len, "%s/%s", t, unit);
        return;
    }
    char u[48];
    snprintf(u, sizeof u, "%s/s", strcmp(unit, "flop") == 0 ? "FLOP" : strcmp(unit, "byte") == 0 ? "B" : unit);
    mb_fmt_si(buf, len, rate, u);
}

void mb_fmt_share(char *buf, size_t len, double f)
{
    if (!isfinite(f) || f < 0)
        snprintf(buf, len, "-");
    else if (f > 0 && f < 0.001)
        snprintf(buf, len, "%.1g%%", 100 * f);
    else if (f >= 1e4) /* absurd shapes (a fuzzer's 1e14 per dim): 3 digits, not 31 */
        snprintf(buf, len, "%.3g%%", 100 * f);
    else
        snprintf(buf, len, "%.1f%%", 100 * f);
}

void mb_fmt_ratio(char *buf, size_t len, double r)
{
    if (!isfinite(r) || r <= 0) {
        snprintf(buf, len, "-");
        return;
    }
    /* two significant digits at least, never an exponent: 1234x, 12.3x, 0.91x, 0.0034x */
    int decimals = r >= 100 ? 0 : r >= 10 ? 1 : 2;
    if (r < 0.1)
        decimals = 1 - (int)floor(log10(r));
    snprintf(buf, len, "%.*fx", decimals, r);
}

void mb_fmt_elapsed(char *buf, size_t len, double s)
{
    if (!isfinite(s) || s < 0)
        snprintf(buf, len, "-");
    else if (s < 59.5)
        snprintf(buf, len, "%.0fs", s);
    else
        snprintf(buf, len, "%dm%02ds", (int)(lround(s) / 60), (int)(lround(s) % 60));
}

void mb_fmt_number(char *buf, size_t len, double v)
{
    double a = fabs(v);
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else if (v == 0)
        snprintf(buf, len, "0");
    else if (a >= 1e9 || a < 1e-3)
        snprintf(buf, len, "%.3e", v);
    else if (a >= 1e4)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.4g", v);
}
