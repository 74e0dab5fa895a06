/* page_helpers.h: the paragraph and table-cell writers that gap's and
 * compare's pages (gap/gap_page.c, compare/compare_page.c) share. Static
 * inline: one copy of each for both rooms, and no symbol exported without the
 * mb_ prefix (test exported_symbols). */
#ifndef MB_PAGE_HELPERS_H
#define MB_PAGE_HELPERS_H

#include <stdbool.h>
#include <stdio.h>

#include "html.h"

static inline void p_text(FILE *o, const char *tag, const char *text)
{
    fprintf(o, "<%s>", tag);
    mb_html_escape(o, text);
    fprintf(o, "</%s>\n", tag);
}

static inline void td(FILE *o, const char *text, bool numeric)
{
    fputs(numeric ? "<td class=\"n\">" : "<td>", o);
    mb_html_escape(o, text ? text : "");
    fputs("</td>", o);
}

#endif
