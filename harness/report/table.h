/* table.h: the one table printer of both flows (the results table of
 * `mlbench report`, gap and compare): columns with a head and an alignment,
 * rows of cells formatted once, printed aligned for a terminal or as a
 * Markdown table. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

enum { MB_TABLE_MAX_COLS = 12 };

/* How a table is measured and written (flags, or-ed). */
enum {
    /* the Markdown rule without blanks: |---|---:| instead of | --- | ---: | */
    MB_TABLE_MD_TIGHT = 1u << 0,
};

typedef struct mb_table {
    int ncol;
    const char *head[MB_TABLE_MAX_COLS]; /* not copied: they outlive the table */
    char align[MB_TABLE_MAX_COLS];       /* 'l' or 'r' */
    char **cells;                        /* nrows * ncol copies */
    int nrows;
    bool oom; /* a row could not be stored: it is missing */
    /* terminal layout: printed before every line (NULL: none) */
    const char *indent;
    /* a column that gives way so that a line fits MB_TEXT_COLS, down to
     * fit_min columns; its cells wrap at spaces onto lines of their own,
     * two columns further in (-1: none, the default) */
    int fit_col, fit_min;
    unsigned flags;
} mb_table;

/* A table with one column per character of aligns ('l' or 'r'), its heads
 * the variadic const char * arguments; no indent, no fitting column. */
void mb_table_init(mb_table *t, const char *aligns, ...);
/* One more column, its head set at run time (machine names in compare). */
void mb_table_add_col(mb_table *t, const char *head, char align);
/* One row: ncol cells (NULL: empty), copied. */
void mb_table_row(mb_table *t, const char *const *cells);
void mb_table_free(mb_table *t);

/* Columns the table takes in a terminal, indent included, before fitting. */
int mb_table_text_width(const mb_table *t);
/* The whole table: aligned for a terminal, or Markdown when md. */
void mb_table_print(FILE *o, const mb_table *t, bool md);

/* Row by row, for a caller that puts lines of its own after a row (the
 * results table's notes): the column widths, then the head, then each row.
 * Lines never end in blanks. */
typedef struct mb_table_layout {
    int w[MB_TABLE_MAX_COLS];
} mb_table_layout;
void mb_table_layout_of(const mb_table *t, mb_table_layout *l);
void mb_table_put_head(FILE *o, const mb_table *t, const mb_table_layout *l);
void mb_table_put_row(FILE *o, const mb_table *t, const mb_table_layout *l, int r);
/* The column where column c starts, indent included. */
int mb_table_col_start(const mb_table *t, const mb_table_layout *l, int c);
