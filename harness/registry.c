/* registry.c: the explicit list of component backends.
 *
 * Adding a backend = one new file in kernels/ + one extern and one array line
 * here. Explicit on purpose: constructor-attribute self-registration silently
 * drops entries when objects come from a static library. Backends whose
 * library was not found at build time still have a table (MB_NOT_BUILT_IN)
 * so `mlbench list` says why they cannot run. */
#include <string.h>

#include "component.h"

/* host side */
/* CPU counterparts */
/* GPU */
/* collectives */

const mb_component_ops *const mb_registry[] = {
    /* host side */
    /* CPU counterparts */
    /* GPU */
    /* collectives */
    NULL, /* keeps the array non-empty; not counted */
};

const size_t mb_registry_len = sizeof mb_registry / sizeof mb_registry[0] - 1;

const mb_component_ops *mb_registry_find(const char *component, const char *backend)
{
    for (size_t i = 0; i < mb_registry_len; i++) {
        const mb_component_ops *ops = mb_registry[i];
        if (strcmp(ops->component, component) == 0 &&
            (backend == NULL || strcmp(ops->backend, backend) == 0))
            return ops;
    }
    return NULL;
}
