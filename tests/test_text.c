/* mb_text_wrap (harness/report/text.c): known answers for each way it breaks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "text.h"

/* What mb_text_wrap prints, in a buffer the caller frees. */
static char *wrapped(int first_col, int indent, const char *text, unsigned flags)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    mb_text_wrap(f, first_col, indent, text, flags);
    fclose(f);
    return buf;
}

static char *repeat(char c, int n)
{
    char *s = malloc((size_t)n + 1);
    memset(s, c, (size_t)n);
    s[n] = '\0';
    return s;
}

static void expect(int first_col, int indent, const char *text, unsigned flags, const char *want)
{
    char *got = wrapped(first_col, indent, text, flags);
    assert_string_equal(got, want);
    free(got);
}

static void test_short_text_one_line(void **s)
{
    (void)s;
    expect(4, 4, "a  b   c", 0, "a b c\n"); /* runs of spaces collapse */
    expect(0, 0, "  lead and trail  ", 0, "lead and trail\n");
    expect(0, 0, "", 0, "\n");
}

static void test_breaks_at_the_last_space_that_fits(void **s)
{
    (void)s;
    /* 10 + 1 + 109 = 120 columns fit exactly; one more breaks */
    char *w109 = repeat('b', 109), *w110 = repeat('b', 110);
    char text[256], want[256];
    snprintf(text, sizeof text, "aaaaaaaaaa %s c", w109);
    snprintf(want, sizeof want, "aaaaaaaaaa %s\n   c\n", w109);
    expect(0, 3, text, 0, want);
    snprintf(text, sizeof text, "aaaaaaaaaa %s", w110);
    snprintf(want, sizeof want, "aaaaaaaaaa\n   %s\n", w110);
    expect(0, 3, text, 0, want);
    free(w109);
    free(w110);
}

static void test_characters_not_bytes(void **s)
{
    (void)s;
    /* 100 columns after the lead + " " + 19 two-byte characters = 120 */
    char *w100 = repeat('a', 100);
    char text[256], want[300];
    snprintf(text, sizeof text, "%s %s", w100, "ééééééééééééééééééé");
    snprintf(want, sizeof want, "%s\n", text);
    expect(0, 0, text, 0, want); /* 120 characters: one line */
    snprintf(want, sizeof want, "%s\n%s\n", w100, "ééééééééééééééééééé");
    expect(0, 0, text, MB_TEXT_BYTES, want); /* 139 bytes: two lines */
    free(w100);
}

static void test_long_word_whole_or_cut(void **s)
{
    (void)s;
    char *w250 = repeat('x', 250), *w116 = repeat('x', 116), *w118 = repeat('x', 118), *rest = repeat('x', 18);
    char text[512], want[512];
    snprintf(text, sizeof text, "id %s end", w250);
    snprintf(want, sizeof want, "id\n    %s\n    end\n", w250);
    expect(0, 4, text, 0, want); /* printed whole */
    /* cut: 116 columns after the indent of 4, twice, then the 18 left */
    snprintf(want, sizeof want, "id\n    %s\n    %s\n    %s end\n", w116, w116, rest);
    expect(0, 4, text, MB_TEXT_CUT | MB_TEXT_BYTES, want);
    /* at the start of the first line the cut uses the room after first_col */
    snprintf(text, sizeof text, "%s", w250);
    snprintf(want, sizeof want, "%s\n  %s\n  %s\n", w118, w118, "xxxxxxxxxxxxxx");
    expect(2, 2, text, MB_TEXT_CUT | MB_TEXT_BYTES, want);
    free(w250);
    free(w116);
    free(w118);
    free(rest);
}

static void test_no_cut_when_the_room_is_narrow(void **s)
{
    (void)s;
    /* 8 columns left is too narrow to hold a piece: the word goes whole */
    char *w20 = repeat('z', 20);
    char want[64];
    snprintf(want, sizeof want, "%s\n", w20);
    expect(112, 112, w20, MB_TEXT_CUT | MB_TEXT_BYTES, want);
    free(w20);
}

static void test_cut_keeps_characters_whole(void **s)
{
    (void)s;
    /* 130 two-byte characters measured as characters: 120 then 10 */
    char text[400] = "", l1[300] = "", l2[64] = "", want[400];
    for (int i = 0; i < 130; i++)
        strcat(i < 120 ? l1 : l2, "é");
    snprintf(text, sizeof text, "%s%s", l1, l2);
    snprintf(want, sizeof want, "%s\n%s\n", l1, l2);
    expect(0, 0, text, MB_TEXT_CUT, want);
}

static void test_width_counts_characters(void **s)
{
    (void)s;
    assert_int_equal(mb_text_width(""), 0);
    assert_int_equal(mb_text_width(NULL), 0);
    assert_int_equal(mb_text_width("3.87 µs/op"), 10);   /* µ is 2 bytes */
    assert_int_equal(mb_text_width("a label far\xE2\x80\xA6"), 12); /* … is 3 */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_short_text_one_line),
        cmocka_unit_test(test_breaks_at_the_last_space_that_fits),
        cmocka_unit_test(test_characters_not_bytes),
        cmocka_unit_test(test_long_word_whole_or_cut),
        cmocka_unit_test(test_no_cut_when_the_room_is_narrow),
        cmocka_unit_test(test_cut_keeps_characters_whole),
        cmocka_unit_test(test_width_counts_characters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
