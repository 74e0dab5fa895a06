/* The one table printer: cells are formatted once by the caller, then laid
 * out here for a terminal (aligned, fitted to MB_TEXT_COLS) or as Markdown. */
#include "table.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

void mb_table_init(mb_table *t, const char *aligns, ...)
{
    memset(t, 0, sizeof *t);
    t->fit_col = -1;
    va_list ap;
    va_start(ap, aligns);
    for (int i = 0; aligns[i] && i < MB_TABLE_MAX_COLS; i++) {
        t->align[i] = aligns[i];
        t->head[i] = va_arg(ap, const char *);
        t->ncol++;
    }
    va_end(ap);
}

void mb_table_add_col(mb_table *t, const char *head, char align)
{
    if (t->ncol < MB_TABLE_MAX_COLS) {
        t->head[t->ncol] = head;
        t->align[t->ncol++] = align;
    }
}

void mb_table_row(mb_table *t, const char *const *cells)
{
    char **g = realloc(t->cells, sizeof *g * (size_t)((t->nrows + 1) * t->ncol));
    if (g == NULL) {
        t->oom = true;
        return;
    }
    t->cells = g;
    for (int c = 0; c < t->ncol; c++) {
        char *s = strdup(cells[c] ? cells[c] : "");
        if (s == NULL)
            t->oom = true;
        t->cells[t->nrows * t->ncol + c] = s;
    }
    t->nrows++;
}

void mb_table_free(mb_table *t)
{
    for (int i = 0; i < t->nrows * t->ncol; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->nrows = 0;
}

static const char *cell(const mb_table *t, int r, int c)
{
    const char *s = r < 0 ? t->head[c] : t->cells[r * t->ncol + c];
    return s ? s : "";
}

/* Bytes of the first `cols` columns of s (a character is never split). */
static size_t bytes_of(const char *s, int cols)
{
    size_t n = strlen(s);
    size_t i = 0;
    for (int c = 0; i < n && c < cols; c++)
        for (i++; i < n && ((unsigned char)s[i] & 0xC0) == 0x80; i++)
            ;
    return i;
}

static int indent_width(const mb_table *t)
{
    return t->indent ? mb_text_width(t->indent) : 0;
}

/* Widest cell of each column, head included. */
static void natural_widths(const mb_table *t, int *w)
{
    for (int c = 0; c < t->ncol; c++) {
        w[c] = mb_text_width(cell(t, -1, c));
        for (int r = 0; r < t->nrows; r++)
            if (mb_text_width(cell(t, r, c)) > w[c])
                w[c] = mb_text_width(cell(t, r, c));
    }
}

int mb_table_text_width(const mb_table *t)
{
    int w[MB_TABLE_MAX_COLS];
    natural_widths(t, w);
    int total = indent_width(t);
    for (int c = 0; c < t->ncol; c++)
        total += w[c] + (c < t->ncol - 1 ? 2 : 0);
    return total;
}

void mb_table_layout_of(const mb_table *t, mb_table_layout *l)
{
    memset(l, 0, sizeof *l);
    natural_widths(t, l->w);
    int f = t->fit_col;
    if (f < 0 || f >= t->ncol)
        return;
    int fixed = indent_width(t) + 2 * (t->ncol - 1);
    for (int c = 0; c < t->ncol; c++)
        fixed += c == f ? 0 : l->w[c];
    if (l->w[f] > MB_TEXT_COLS - fixed)
        l->w[f] = MB_TEXT_COLS - fixed > t->fit_min ? MB_TEXT_COLS - fixed : t->fit_min;
}

int mb_table_col_start(const mb_table *t, const mb_table_layout *l, int c)
{
    int at = indent_width(t);
    for (int i = 0; i < c && i < t->ncol; i++)
        at += l->w[i] + 2;
    return at;
}

/* A terminal line whose blanks are held back until text follows them: no
 * line ends in blanks. */
typedef struct line {
    FILE *o;
    int blanks;
} line;

static void put_blanks(line *ln, int n)
{
    ln->blanks += n > 0 ? n : 0;
}

static void put_text(line *ln, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == ' ') {
            ln->blanks++;
            continue;
        }
        for (; ln->blanks > 0; ln->blanks--)
            fputc(' ', ln->o);
        fputc(s[i], ln->o);
    }
}

static void end_line(line *ln)
{
    fputc('\n', ln->o);
    ln->blanks = 0;
}

/* The part of s that fits `cols` columns, broken at a space when there is
 * one (else cut); *rest is what follows it, spaces skipped, NULL when done. */
static size_t fitting_part(const char *s, int cols, const char **rest)
{
    size_t n = strlen(s), take = n;
    if (mb_text_width(s) > cols) {
        size_t at = bytes_of(s, cols);
        take = at;
        while (take > 0 && s[take] != ' ')
            take--;
        if (take == 0)
            take = at;
    }
    const char *r = s + take;
    while (*r == ' ')
        r++;
    *rest = *r ? r : NULL;
    return take;
}

static void put_line(FILE *o, const mb_table *t, const mb_table_layout *l, int r)
{
    line ln = { o, 0 };
    const char *rest = NULL;
    if (t->indent)
        put_text(&ln, t->indent, strlen(t->indent));
    for (int c = 0; c < t->ncol; c++) {
        const char *s = cell(t, r, c);
        size_t n = strlen(s);
        if (c == t->fit_col && r >= 0)
            n = fitting_part(s, l->w[c], &rest);
        char part[n + 1];
        memcpy(part, s, n);
        part[n] = '\0';
        int gap = l->w[c] - mb_text_width(part);
        if (t->align[c] == 'r')
            put_blanks(&ln, gap);
        put_text(&ln, part, n);
        if (c < t->ncol - 1)
            put_blanks(&ln, (t->align[c] == 'r' ? 0 : gap) + 2);
    }
    end_line(&ln);
    /* the rest of a fitted cell, two columns further in */
    int at = rest ? mb_table_col_start(t, l, t->fit_col) + 2 : 0;
    while (rest) {
        const char *s = rest;
        size_t n = fitting_part(s, l->w[t->fit_col] - 2, &rest);
        put_blanks(&ln, at);
        put_text(&ln, s, n);
        end_line(&ln);
    }
}

void mb_table_put_head(FILE *o, const mb_table *t, const mb_table_layout *l)
{
    put_line(o, t, l, -1);
}

void mb_table_put_row(FILE *o, const mb_table *t, const mb_table_layout *l, int r)
{
    if (r >= 0 && r < t->nrows)
        put_line(o, t, l, r);
}

/* A Markdown cell: a pipe or a line break in the text would end the cell
 * or the row. */
static void md_cell(FILE *o, const char *s)
{
    fputs("| ", o);
    for (; *s; s++)
        fputc(*s == '|' ? '/' : *s == '\n' ? ' ' : *s, o);
    fputc(' ', o);
}

static void md_print(FILE *o, const mb_table *t)
{
    for (int r = -1; r < t->nrows; r++) {
        for (int c = 0; c < t->ncol; c++)
            md_cell(o, cell(t, r, c));
        fputs("|\n", o);
        if (r >= 0)
            continue;
        bool tight = t->flags & MB_TABLE_MD_TIGHT;
        for (int c = 0; c < t->ncol; c++)
            fputs(t->align[c] == 'r' ? (tight ? "|---:" : "| ---: ") : (tight ? "|---" : "| --- "), o);
        fputs("|\n", o);
    }
}

void mb_table_print(FILE *o, const mb_table *t, bool md)
{
    if (md) {
        md_print(o, t);
        return;
    }
    mb_table_layout l;
    mb_table_layout_of(t, &l);
    mb_table_put_head(o, t, &l);
    for (int r = 0; r < t->nrows; r++)
        mb_table_put_row(o, t, &l, r);
}
