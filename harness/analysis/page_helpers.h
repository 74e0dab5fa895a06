/* page_helpers.h: the paragraph and table-cell writers that gap's and
 * compare's pages (gap/gap_page.c, compare/compare_page.c) share. Static
 * inline: one copy of each for both rooms, and no symbol exported without the
 * mb_ prefix (test exported_symbols). */
#ifndef MB_PAGE_HELPERS_H
#define MB_PAGE_HELPERS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "html.h"

/* n bytes of s, escaped (in pieces: the escape takes a string). */
static inline void escape_span(FILE *o, const char *s, size_t n)
{
    char piece[512];
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof piece - 1 ? n - done : sizeof piece - 1;
        memcpy(piece, s + done, k);
        piece[k] = '\0';
        mb_html_escape(o, piece);
        done += k;
    }
}

/* Text whose `quoted` spans (commands, options, file names: the text and
 * Markdown views' code) are <code> on the page; a backtick without its pair
 * is printed as it is. */
static inline void escape_code_spans(FILE *o, const char *text)
{
    const char *at = text;
    for (;;) {
        const char *open = strchr(at, '`');
        const char *close = open ? strchr(open + 1, '`') : NULL;
        if (close == NULL) {
            escape_span(o, at, strlen(at));
            return;
        }
        escape_span(o, at, (size_t)(open - at));
        fputs("<code>", o);
        escape_span(o, open + 1, (size_t)(close - open - 1));
        fputs("</code>", o);
        at = close + 1;
    }
}

static inline void p_text(FILE *o, const char *tag, const char *text)
{
    fprintf(o, "<%s>", tag);
    escape_code_spans(o, text);
    fprintf(o, "</%s>\n", tag);
}

static inline void td(FILE *o, const char *text, bool numeric)
{
    fputs(numeric ? "<td class=\"n\">" : "<td>", o);
    mb_html_escape(o, text ? text : "");
    fputs("</td>", o);
}

#endif
