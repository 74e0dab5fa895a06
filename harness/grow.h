/* Arrays that grow by doubling. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Makes room for `need` elements of `elem` bytes in *data (capacity *cap, in
 * elements): doubles from 256 until it fits. False, *data untouched, when
 * memory runs out. */
bool mb_grow(void **data, size_t *cap, size_t need, size_t elem);
