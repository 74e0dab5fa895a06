/* mb_table (harness/report/table.c): known answers for the terminal layout
 * (alignment, blanks, widths in characters or bytes, the fitted column) and
 * for Markdown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "table.h"
#include "text.h"

/* What mb_table_print prints, in a buffer the caller frees. */
static char *printed(const mb_table *t, bool md)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    mb_table_print(f, t, md);
    fclose(f);
    return buf;
}

static void expect(const mb_table *t, bool md, const char *want)
{
    char *got = printed(t, md);
    assert_string_equal(got, want);
    free(got);
}

static char *repeat(char c, int n)
{
    char *s = malloc((size_t)n + 1);
    memset(s, c, (size_t)n);
    s[n] = '\0';
    return s;
}

/* name and count: left then right aligned, two blanks apart, no line
 * ending in blanks (an empty last cell leaves none). */
static void test_aligned(void **state)
{
    (void)state;
    mb_table t;
    mb_table_init(&t, "lr", "name", "n");
    t.indent = "  ";
    mb_table_row(&t, (const char *const[]){ "a", "1" });
    mb_table_row(&t, (const char *const[]){ "long", "100" });
    mb_table_row(&t, (const char *const[]){ "b", "" });
    mb_table_row(&t, (const char *const[]){ NULL, "7" });
    expect(&t, false,
           "  name    n\n"
           "  a       1\n"
           "  long  100\n"
           "  b\n"
           "          7\n");
    assert_int_equal(mb_table_text_width(&t), 2 + 4 + 2 + 3);
    mb_table_free(&t);
}

/* A column added at run time takes its place after the others. */
static void test_add_col(void **state)
{
    (void)state;
    mb_table t;
    mb_table_init(&t, "l", "k");
    mb_table_add_col(&t, "A", 'r');
    mb_table_add_col(&t, "B/A", 'r');
    assert_int_equal(t.ncol, 3);
    mb_table_row(&t, (const char *const[]){ "x", "10", "2.00x" });
    expect(&t, false,
           "k   A    B/A\n"
           "x  10  2.00x\n");
    mb_table_free(&t);
}

/* "3.87 µs" is 7 characters and 8 bytes: measured in characters it lines
 * up with "1.00 ms" (measured in bytes it would end a column short). */
static void test_utf8_width(void **state)
{
    (void)state;
    mb_table t;
    mb_table_init(&t, "lr", "case", "time");
    mb_table_row(&t, (const char *const[]){ "a", "3.87 \u00b5s" });
    mb_table_row(&t, (const char *const[]){ "b", "1.00 ms" });
    expect(&t, false,
           "case     time\n"
           "a     3.87 \u00b5s\n"
           "b     1.00 ms\n");
    mb_table_free(&t);
}

/* Markdown: the rule says each column's alignment; a pipe or a line break
 * in a cell would break the row and is replaced. */
static void test_markdown(void **state)
{
    (void)state;
    mb_table t;
    mb_table_init(&t, "lr", "stage", "time");
    t.indent = "  "; /* a terminal's indent: not in Markdown */
    mb_table_row(&t, (const char *const[]){ "a|b", "1 s" });
    mb_table_row(&t, (const char *const[]){ "two\nlines", NULL });
    expect(&t, true,
           "| stage | time |\n"
           "| --- | ---: |\n"
           "| a/b | 1 s |\n"
           "| two lines |  |\n");
    t.flags = MB_TABLE_MD_TIGHT;
    expect(&t, true,
           "| stage | time |\n"
           "|---|---:|\n"
           "| a/b | 1 s |\n"
           "| two lines |  |\n");
    mb_table_free(&t);
}

/* The fitted column gives way so that a line fits MB_TEXT_COLS (120): its
 * cell breaks at the last space that fits, the rest two columns further in;
 * a word longer than the room is cut, never lost. */
static void test_fit_column(void **state)
{
    (void)state;
    char *a = repeat('a', 100), *b = repeat('b', 30), *c = repeat('c', 130);
    char label[160];
    snprintf(label, sizeof label, "%s %s", a, b);
    mb_table t;
    mb_table_init(&t, "lr", "case", "x");
    t.fit_col = 0;
    t.fit_min = 10;
    mb_table_row(&t, (const char *const[]){ label, "1" });
    mb_table_row(&t, (const char *const[]){ c, "2" });
    /* room: 120 - 2 (blanks) - 1 (x) = 117 columns */
    char *want = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&want, &len);
    fprintf(f, "case%*sx\n", 117 - 4 + 2, "");
    fprintf(f, "%s%*s1\n", a, 117 - 100 + 2, "");
    fprintf(f, "  %s\n", b);
    fprintf(f, "%.117s  2\n", c);
    fprintf(f, "  %s\n", c + 117);
    fclose(f);
    expect(&t, false, want);
    mb_table_layout l;
    mb_table_layout_of(&t, &l);
    assert_int_equal(l.w[0], 117);
    assert_int_equal(mb_table_col_start(&t, &l, 1), 119);
    free(want);
    mb_table_free(&t);
    free(a);
    free(b);
    free(c);
}

/* The fitted column never narrows below fit_min, even when the line then
 * passes 120 columns. */
static void test_fit_min(void **state)
{
    (void)state;
    char *wide = repeat('w', 110);
    mb_table t;
    mb_table_init(&t, "rl", "n", "case");
    t.fit_col = 1;
    t.fit_min = 12;
    mb_table_row(&t, (const char *const[]){ wide, "one two three four" });
    mb_table_layout l;
    mb_table_layout_of(&t, &l);
    assert_int_equal(l.w[1], 12); /* 120 - 110 - 2 = 8 < 12 */
    char *got = printed(&t, false);
    char want[512];
    /* the rest two columns into the 12 of the case column: "three four" fits */
    snprintf(want, sizeof want, "%*s  case\n%s  one two\n%*s  three four\n", 110, "n", wide, 112, "");
    assert_string_equal(got, want);
    free(got);
    mb_table_free(&t);
    free(wide);
}

/* Row by row: a caller's own lines go between the rows. */
static void test_row_by_row(void **state)
{
    (void)state;
    mb_table t;
    mb_table_init(&t, "ll", "state", "case");
    mb_table_row(&t, (const char *const[]){ "ok", "gemm" });
    mb_table_row(&t, (const char *const[]){ "noisy", "copy" });
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    mb_table_layout l;
    mb_table_layout_of(&t, &l);
    mb_table_put_head(f, &t, &l);
    for (int r = 0; r < t.nrows; r++) {
        mb_table_put_row(f, &t, &l, r);
        fprintf(f, "%*snote %d\n", mb_table_col_start(&t, &l, 1), "", r);
    }
    mb_table_put_row(f, &t, &l, 7); /* no such row: nothing */
    fclose(f);
    assert_string_equal(buf, "state  case\n"
                             "ok     gemm\n"
                             "       note 0\n"
                             "noisy  copy\n"
                             "       note 1\n");
    free(buf);
    mb_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_aligned),    cmocka_unit_test(test_add_col),  cmocka_unit_test(test_utf8_width),
        cmocka_unit_test(test_markdown),   cmocka_unit_test(test_fit_column), cmocka_unit_test(test_fit_min),
        cmocka_unit_test(test_row_by_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
