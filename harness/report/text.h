/* Terminal text: the one width every text view fits and the one way long
 * text is wrapped to it. */
#pragma once

#include <stdio.h>

/* Terminal output fits this many columns (issue 17: notes wrapped, never cut). */
enum { MB_TEXT_COLS = 120 };

/* How mb_text_wrap measures and breaks words (flags, or-ed). */
enum {
    /* a word longer than a line (a case id, a path) is cut into lines
     * instead of printed whole past the edge */
    MB_TEXT_CUT = 1u << 0,
    /* words are measured in bytes, not UTF-8 characters */
    MB_TEXT_BYTES = 1u << 1,
};

/* Prints text wrapped at spaces so no line passes MB_TEXT_COLS (but for a
 * word longer than a line, without MB_TEXT_CUT): the first line goes on after
 * the `first_col` columns the caller already printed, the next ones start
 * with `indent` spaces. Runs of spaces collapse into one; ends the line. */
void mb_text_wrap(FILE *out, int first_col, int indent, const char *text, unsigned flags);

/* Columns a UTF-8 string takes: its characters (continuation bytes do not
 * count); 0 for NULL. */
int mb_text_width(const char *s);
