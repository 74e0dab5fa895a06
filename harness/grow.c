/* Arrays that grow by doubling: one realloc rule for the trace readers. */
#include "grow.h"

#include <stdlib.h>

bool mb_grow(void **data, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap * 2 : 256;
    while (c < need)
        c *= 2;
    void *d = realloc(*data, c * elem);
    if (d == NULL)
        return false;
    *data = d;
    *cap = c;
    return true;
}
