/* text_test_util.h: checks on terminal text shared by the tests of the text
 * views (test_gap.c, test_ceiling.c). */
#ifndef MB_TEXT_TEST_UTIL_H
#define MB_TEXT_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "text.h"

/* Columns of the widest line of text (characters, as mb_text_width). */
static inline int widest_line(const char *text)
{
    int widest = 0;
    while (*text) {
        size_t n = strcspn(text, "\n");
        char *line = strndup(text, n);
        int w = mb_text_width(line);
        free(line);
        widest = w > widest ? w : widest;
        text += n + (text[n] == '\n');
    }
    return widest;
}

#endif
