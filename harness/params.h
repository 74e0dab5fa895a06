/* params.h: building and validating a case's parameters (harness side).
 * Components read them through the accessors in component.h. */
#ifndef MB_PARAMS_H
#define MB_PARAMS_H

#include "component.h"

/* Builds the parameters of a case from a spec and `n` name=value pairs
 * (values as text). Every name must be in the spec; every value must parse
 * and be in range; missing names take the default; a spec entry without a
 * default must be given. On error returns NULL and fills err (MB_EUSAGE) with
 * "parameter NAME: ..." so the caller can prefix the file:line. */
mb_params *mb_params_build(const mb_param_spec *spec, const char *const *names,
                           const char *const *values, int n, mb_err *err);
/* Validates one value against its spec entry (no allocation). */
int mb_param_check(const mb_param_spec *ps, const char *value, mb_err *err);
const mb_param_spec *mb_param_spec_find(const mb_param_spec *spec, const char *name);
void mb_params_free(mb_params *p);
mb_params *mb_params_clone(const mb_params *p);

/* Iteration in spec order. */
int mb_params_count(const mb_params *p);
const char *mb_params_name(const mb_params *p, int i);
const char *mb_params_value(const mb_params *p, int i); /* normalised text */
/* A parameter's value, NULL when the component has no such parameter
 * (mb_param_str asserts it exists: for code that serves every component). */
const char *mb_param_str_opt(const mb_params *p, const char *name);

/* "name=value,name=value" in name order (the case identity's tail). */
char *mb_params_key(const mb_params *p);

/* Short text of a type for `mlbench list`. */
const char *mb_param_type_name(mb_param_type t);

/* Whether two texts are one value of the parameter `ps` ("4k" = "4096" for a
 * size, "on" = "true" for a bool); NULL ps: the texts are equal. */
bool mb_param_values_equal(const mb_param_spec *ps, const char *a, const char *b);

#endif
