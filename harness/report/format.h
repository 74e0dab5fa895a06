/* format.h: the one number and time formatter of every view (text,
 * Markdown, CSV, JSON-free strings, SVG, pages), of both flows. */
#ifndef MB_FORMAT_H
#define MB_FORMAT_H

#include <stddef.h>

/* A time: 3 significant digits in s, ms, µs or ns, the unit chosen after
 * rounding ("1 s" for 999.7 ms); whole seconds from 1000 s; "-" when not
 * finite. */
void mb_fmt_seconds(char *buf, size_t len, double seconds);
/* v with an SI prefix and unit, 3 significant digits, never an exponent:
 * "3.93 PFLOP/$", "1 TB/s" for 999.7 GB/s; "-" when negative or not finite. */
void mb_fmt_si(char *buf, size_t len, double v, const char *unit);
/* A rate in work units per second: "312 GB/s", "52.3 TFLOP/s"; launches and
 * syncs as time per call ("4.1 µs/launch"); "-" for time-only work ("s"). */
void mb_fmt_rate(char *buf, size_t len, double rate, const char *work_unit);
/* A share: "12.3%", one significant digit below 0.1% ("0.02%"), "-" when unknown. */
void mb_fmt_share(char *buf, size_t len, double share);
/* A ratio: "0.91x", "12.3x", "0.0034x" (two significant digits at least). */
void mb_fmt_ratio(char *buf, size_t len, double ratio);
/* An elapsed time on a progress line: "42s", "1m05s". */
void mb_fmt_elapsed(char *buf, size_t len, double seconds);
/* A plain number of the run table: 4 significant digits below 10^4, whole
 * above, "1.234e+09" only past 10^9 or below 10^-3, where no unit helps. */
void mb_fmt_number(char *buf, size_t len, double v);

#endif
