/* writer_helpers.h: the table, text and JSON helpers that gap's and compare's
 * writers (gap/gap_writers.c, compare/compare_writers.c) share. Static inline:
 * one copy of each for both rooms, and no symbol exported without the mb_
 * prefix (test exported_symbols). */
#ifndef MB_WRITER_HELPERS_H
#define MB_WRITER_HELPERS_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "mb.h"
#include "table.h"
#include "text.h"

/* ---- tables: report/table.h, every one indented in a terminal ----------------------- */

static inline mb_table *indented(mb_table *t)
{
    t->indent = "  ";
    return t;
}

/* Display width in characters (UTF-8 continuation bytes do not count). */
static inline int width(const char *s)
{
    return mb_text_width(s);
}

enum { TEXT_COLS = MB_TEXT_COLS };

/* Prints text wrapped at TEXT_COLS: the first line after `first` columns of
 * indent already printed by the caller, the next ones indented by `hang`.
 * A word longer than a line is printed whole. */
static inline void put_wrapped(FILE *o, int first, int hang, const char *text)
{
    mb_text_wrap(o, first, hang, text, 0);
}

/* A bullet or item line: the prefix, then the text wrapped under itself. */
static inline void put_item(FILE *o, bool md, const char *prefix, const char *text)
{
    if (md) {
        fprintf(o, "%s%s\n", prefix, text);
        return;
    }
    fputs(prefix, o);
    put_wrapped(o, width(prefix), width(prefix), text);
}

/* ---- JSON ---------------------------------------------------------------------------- */

static inline void add_num_or_null(cJSON *o, const char *k, double v, bool known)
{
    if (known && isfinite(v))
        cJSON_AddNumberToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static inline void add_str_or_null(cJSON *o, const char *k, const char *v)
{
    if (v)
        cJSON_AddStringToObject(o, k, v);
    else
        cJSON_AddNullToObject(o, k);
}

static inline cJSON *strings_json(char *const *s, int n)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateString(s[i]));
    return a;
}

static inline int write_json(FILE *o, cJSON *doc, mb_err *err)
{
    if (doc == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    char *text = cJSON_Print(doc);
    cJSON_Delete(doc);
    if (text == NULL)
        return mb_errf(err, MB_ESYS, "out of memory");
    fputs(text, o);
    fputc('\n', o);
    free(text);
    return MB_OK;
}

#endif
