/* Terminal text wrapped at MB_TEXT_COLS: one wrapper for the results table's
 * notes, gap, compare, projection and ranking views. */
#include "text.h"

#include <stdbool.h>
#include <string.h>

static bool continuation_byte(char c)
{
    return ((unsigned char)c & 0xC0) == 0x80;
}

/* Columns the n bytes at p take. */
static int span_cols(const char *p, size_t n, unsigned flags)
{
    if (flags & MB_TEXT_BYTES)
        return (int)n;
    int cols = 0;
    for (size_t i = 0; i < n; i++)
        cols += !continuation_byte(p[i]);
    return cols;
}

/* Bytes of the first `cols` columns of the n bytes at p (a character is
 * never split unless words are measured in bytes). */
static size_t span_bytes(const char *p, size_t n, int cols, unsigned flags)
{
    if (flags & MB_TEXT_BYTES)
        return (size_t)cols < n ? (size_t)cols : n;
    size_t i = 0;
    for (int c = 0; i < n && c < cols; c++)
        for (i++; i < n && continuation_byte(p[i]); i++)
            ;
    return i;
}

static void new_line(FILE *out, int indent)
{
    fprintf(out, "\n%*s", indent, "");
}

void mb_text_wrap(FILE *out, int first_col, int indent, const char *text, unsigned flags)
{
    int col = first_col;
    bool line_start = true;
    const char *p = text;
    for (;;) {
        p += strspn(p, " ");
        if (*p == '\0')
            break;
        size_t n = strcspn(p, " ");
        int w = span_cols(p, n, flags);
        if (!line_start && col + 1 + w > MB_TEXT_COLS) {
            new_line(out, indent);
            col = indent;
        } else if (!line_start) {
            fputc(' ', out);
            col++;
        }
        /* the word does not fit even a fresh line: cut it there, unless the
         * room left is too narrow to hold a useful piece */
        while ((flags & MB_TEXT_CUT) && w > MB_TEXT_COLS - col && MB_TEXT_COLS - col > 8) {
            int part = MB_TEXT_COLS - col;
            size_t bytes = span_bytes(p, n, part, flags);
            fwrite(p, 1, bytes, out);
            new_line(out, indent);
            col = indent;
            p += bytes;
            n -= bytes;
            w -= part;
        }
        fwrite(p, 1, n, out);
        col += w;
        line_start = false;
        p += n;
    }
    fputc('\n', out);
}

int mb_text_width(const char *s)
{
    return s ? span_cols(s, strlen(s), 0) : 0;
}
