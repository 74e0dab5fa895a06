/* test_format.c: the one number and time formatter (harness/report/format.c),
 * as a table of answers (fio's num2str test is the model): every unit
 * boundary, the values that round across it (999.7 GB/s is "1 TB/s", never
 * "1e+03 GB/s"), zero, negatives and what is not a number. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "format.h"

typedef struct {
    double v;
    const char *unit; /* mb_fmt_si / mb_fmt_rate */
    const char *want;
} answer;

static void check_table(void (*fn)(char *, size_t, double, const char *), const answer *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char got[64];
        fn(got, sizeof got, t[i].v, t[i].unit);
        if (strcmp(got, t[i].want) != 0)
            fail_msg("%g %s: got '%s', want '%s'", t[i].v, t[i].unit ? t[i].unit : "", got, t[i].want);
    }
}

static void seconds(char *buf, size_t len, double v, const char *unit)
{
    (void)unit;
    mb_fmt_seconds(buf, len, v);
}

static void share(char *buf, size_t len, double v, const char *unit)
{
    (void)unit;
    mb_fmt_share(buf, len, v);
}

static void ratio(char *buf, size_t len, double v, const char *unit)
{
    (void)unit;
    mb_fmt_ratio(buf, len, v);
}

static void number(char *buf, size_t len, double v, const char *unit)
{
    (void)unit;
    mb_fmt_number(buf, len, v);
}

static void elapsed(char *buf, size_t len, double v, const char *unit)
{
    (void)unit;
    mb_fmt_elapsed(buf, len, v);
}

static void test_seconds(void **st)
{
    (void)st;
    static const answer t[] = {
        { 0, NULL, "0 s" },          { 1.234e-9, NULL, "1.23 ns" },  { 999.4e-9, NULL, "999 ns" },
        { 999.7e-9, NULL, "1 µs" },  { 1e-6, NULL, "1 µs" },         { 12.34e-6, NULL, "12.3 µs" },
        { 999.7e-6, NULL, "1 ms" },  { 0.0375, NULL, "37.5 ms" },    { 0.9997, NULL, "1 s" },
        { 1.5, NULL, "1.5 s" },      { 999.4, NULL, "999 s" },        { 999.7, NULL, "1000 s" },
        { 12345.6, NULL, "12346 s" }, { NAN, NULL, "-" },             { INFINITY, NULL, "-" },
    };
    check_table(seconds, t, sizeof t / sizeof *t);
}

static void test_si(void **st)
{
    (void)st;
    static const answer t[] = {
        { 0, "B/s", "0 B/s" },          { 999.4, "B/s", "999 B/s" },        { 999.7, "B/s", "1 kB/s" },
        { 999.7e9, "B/s", "1 TB/s" },   { 999.4e9, "B/s", "999 GB/s" },     { 1e12, "B/s", "1 TB/s" },
        { 3.93e15, "FLOP/$", "3.93 PFLOP/$" }, { 0.0125, "s", "12.5 ms" }, { 0.99949, "s", "999 ms" },
        { 1e-13, "s", "0.1 ps" },       { -1, "B/s", "-" },                 { NAN, "B/s", "-" },
    };
    check_table(mb_fmt_si, t, sizeof t / sizeof *t);
}

static void test_rate(void **st)
{
    (void)st;
    static const answer t[] = {
        { 999.7e9, "byte", "1 TB/s" },       { 4.036e12, "byte", "4.04 TB/s" },   { 769e12, "flop", "769 TFLOP/s" },
        { 999.7e12, "flop", "1 PFLOP/s" },   { 1.0 / 3.31e-6, "launch", "3.31 µs/launch" },
        { 1.0 / 4.18e-3, "sync", "4.18 ms/sync" }, { 12.0, "io", "12 io/s" }, { 5, "s", "-" }, { 0, "byte", "-" },
        { NAN, "flop", "-" },
    };
    check_table(mb_fmt_rate, t, sizeof t / sizeof *t);
}

static void test_share_ratio_number_elapsed(void **st)
{
    (void)st;
    static const answer shares[] = {
        { 0, NULL, "0.0%" },      { 0.0002, NULL, "0.02%" }, { 0.0009994, NULL, "0.1%" }, { 0.001, NULL, "0.1%" },
        { 0.123, NULL, "12.3%" }, { 1, NULL, "100.0%" },     { -0.1, NULL, "-" },         { NAN, NULL, "-" },
        { 99.9, NULL, "9990.0%" }, { 9.68e28, NULL, "9.68e+30%" },
    };
    check_table(share, shares, sizeof shares / sizeof *shares);
    static const answer ratios[] = {
        { 1234.4, NULL, "1234x" }, { 12.34, NULL, "12.3x" }, { 0.912, NULL, "0.91x" }, { 0.00345, NULL, "0.0034x" },
        { 0, NULL, "-" },
    };
    check_table(ratio, ratios, sizeof ratios / sizeof *ratios);
    static const answer numbers[] = {
        { 0, NULL, "0" },          { 154.3, NULL, "154.3" },   { 0.351, NULL, "0.351" },  { 9999.4, NULL, "9999" },
        { 10976, NULL, "10976" },  { 1.5e9, NULL, "1.500e+09" }, { 0.0005, NULL, "5.000e-04" }, { NAN, NULL, "-" },
    };
    check_table(number, numbers, sizeof numbers / sizeof *numbers);
    static const answer times[] = {
        { 0, NULL, "0s" }, { 42.4, NULL, "42s" }, { 59.7, NULL, "1m00s" }, { 65, NULL, "1m05s" }, { -1, NULL, "-" },
    };
    check_table(elapsed, times, sizeof times / sizeof *times);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seconds),
        cmocka_unit_test(test_si),
        cmocka_unit_test(test_rate),
        cmocka_unit_test(test_share_ratio_number_elapsed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
