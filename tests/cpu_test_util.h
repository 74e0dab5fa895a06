/* cpu_test_util.h: driving a host/CPU backend through its ops table in the
 * cmocka tests (test_hostmem, test_cpu_gemm, test_cpu_conv). */
#ifndef MB_CPU_TEST_UTIL_H
#define MB_CPU_TEST_UTIL_H

#include <stdio.h>
#include <string.h>

#include "component.h"
#include "params.h"
#include "case_report.h"

/* "name=value" pairs -> params; NULL (and err filled) on a bad pair. */
static inline mb_params *ct_params(const mb_component_ops *ops, const char *const *kv, int n,
                                   mb_err *err)
{
    char names[16][64], values[16][64];
    const char *np[16], *vp[16];
    for (int i = 0; i < n && i < 16; i++) {
        const char *eq = strchr(kv[i], '=');
        snprintf(names[i], sizeof names[i], "%.*s", (int)(eq - kv[i]), kv[i]);
        snprintf(values[i], sizeof values[i], "%s", eq + 1);
        np[i] = names[i];
        vp[i] = values[i];
    }
    return mb_params_build(ops->params, np, vp, n, err);
}

/* probe + setup; returns the code and leaves the state in *state. */
static inline int ct_setup(const mb_component_ops *ops, const char *const *kv, int n,
                           void **state, mb_err *err)
{
    mb_params *p = ct_params(ops, kv, n, err);
    if (p == NULL)
        return MB_EUSAGE;
    int rc = ops->probe(p, err);
    if (rc == MB_OK)
        rc = ops->setup(p, state, err);
    mb_params_free(p);
    return rc;
}

/* One timed iteration; asserts it worked and took time. */
static inline double ct_run(const mb_component_ops *ops, void *state)
{
    mb_err err = { 0 };
    double seconds = -1.0;
    int rc = ops->run(state, &seconds, &err);
    if (rc != MB_OK)
        fprintf(stderr, "run: %s\n", err.msg);
    assert_int_equal(rc, MB_OK);
    assert_true(seconds > 0.0);
    return seconds;
}

#define CT_N(a) ((int)(sizeof(a) / sizeof((a)[0])))

#endif
