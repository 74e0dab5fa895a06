/* Backends: every table the harness uses is its description (core library)
 * joined to its code (core or a GPU module), placeholders included; a module
 * whose code and the descriptions disagree is caught.
 *
 *   test_backends          description/code joins, placeholders, mismatches
 *   test_backends modules  the built GPU modules, dlopened from the build
 *                          directory, against the descriptions (77 without
 *                          a CUDA build) */
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "backends.h"
#include "modules.h"
#include "component.h"

static const mb_backend_desc *const builtin_lists[] = { mb_disk_backends, mb_cpu_backends, mb_coll_backends };
static const mb_backend_desc *const module_lists[] = { mb_cuda_backends, mb_cudnn_backends, mb_nccl_backends };
static const char *const module_names[] = { "cuda", "cudnn", "nccl" };
#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* The harness table carries the description's facts, the very same params. */
static void assert_from_description(const mb_component_ops *ops, const mb_backend_desc *d)
{
    assert_non_null(ops);
    assert_string_equal(ops->component, d->component);
    assert_string_equal(ops->backend, d->backend);
    assert_string_equal(ops->work_unit, d->work_unit);
    assert_string_equal(ops->rate_unit, d->rate_unit);
    assert_true(ops->rate_scale == d->rate_scale);
    assert_true(ops->params == d->params);
    assert_int_equal(ops->latency_first, d->latency_first);
    assert_int_equal(ops->collective, d->collective);
    assert_int_equal(ops->uses_gpu, d->uses_gpu);
    assert_int_equal(ops->compute, d->compute);
    assert_non_null(ops->probe);
    if (ops->params_unknown) { /* a placeholder: says why instead of what */
        assert_null(ops->setup);
    } else {
        assert_string_equal(ops->summary, d->summary);
        assert_non_null(ops->setup);
        assert_non_null(ops->run);
        assert_non_null(ops->work_per_iter);
        assert_non_null(ops->verify);
        assert_non_null(ops->teardown);
    }
}

static void test_builtin_tables_are_their_descriptions(void **s)
{
    (void)s;
    size_t i = 0;
    for (size_t l = 0; l < N_OF(builtin_lists); l++)
        for (const mb_backend_desc *d = builtin_lists[l]; d->component; d++, i++) {
            const mb_component_ops *ops = mb_registry_find_builtin(d->component, d->backend);
            assert_from_description(ops, d);
            /* In description order, first in the registry. */
            assert_true(mb_registry_at(i) == ops);
            if (ops->params_unknown)
                assert_non_null(strstr(ops->summary, "not built in: "));
        }
    assert_true(i >= 12);
}

static void test_module_tables_are_their_descriptions(void **s)
{
    (void)s;
    for (size_t l = 0; l < N_OF(module_lists); l++)
        for (const mb_backend_desc *d = module_lists[l]; d->component; d++) {
            const mb_component_ops *ops = mb_registry_find(d->component, d->backend);
            assert_from_description(ops, d);
            /* Placeholder or not, the real parameters are listed now. */
            assert_non_null(ops->params[0].name);
        }
}

/* Sized from the description lists: no backend is dropped, however many. */
static void test_registry_holds_every_description(void **s)
{
    (void)s;
    size_t n = 0;
    for (size_t l = 0; l < N_OF(builtin_lists); l++)
        n += mb_backend_desc_count(builtin_lists[l]);
    for (size_t l = 0; l < N_OF(module_lists); l++)
        n += mb_backend_desc_count(module_lists[l]);
    assert_int_equal(mb_registry_count(), n);
    assert_null(mb_registry_at(n));
}

/* A backend whose library is missing: MB_NOT_BUILT_IN's code joined to the
 * real description lists the real parameters and skips with the reason. */
MB_NOT_BUILT_IN(test_missing_openblas, "gemm", "openblas", "test: no OpenBLAS");

static const mb_backend_desc *find_desc(const mb_backend_desc *list, const char *component, const char *backend)
{
    for (const mb_backend_desc *d = list; d->component; d++)
        if (strcmp(d->component, component) == 0 && strcmp(d->backend, backend) == 0)
            return d;
    return NULL;
}

static void test_not_built_in_is_made_from_the_description(void **s)
{
    (void)s;
    const mb_backend_desc *d = find_desc(mb_cpu_backends, "gemm", "openblas");
    assert_non_null(d);
    const mb_backend_code *code[] = { &test_missing_openblas };
    const mb_backend_code *matched[1] = { NULL };
    mb_err err = { 0 };
    assert_int_equal(mb_backends_match(&d, 1, code, 1, matched, &err), MB_OK);
    mb_component_ops ops = mb_backend_compose(d, matched[0]);
    assert_from_description(&ops, d);
    assert_true(ops.params_unknown); /* suites naming any key still load */
    assert_string_equal(ops.summary, "not built in: test: no OpenBLAS");
    assert_int_equal(ops.probe(NULL, &err), MB_ESKIP);
    assert_string_equal(err.msg, "not built in: test: no OpenBLAS");
}

/* ---- mismatches ------------------------------------------------------------ */

static int fake_probe(const mb_params *p, mb_err *why)
{
    (void)p;
    (void)why;
    return MB_OK;
}
static int fake_setup(const mb_params *p, void **state, mb_err *err)
{
    (void)p;
    (void)err;
    *state = NULL;
    return MB_OK;
}
static int fake_run(void *state, double *seconds, mb_err *err)
{
    (void)state;
    (void)err;
    *seconds = 1;
    return MB_OK;
}
static double fake_work(void *state)
{
    (void)state;
    return 1;
}
static int fake_verify(void *state, mb_err *err)
{
    (void)state;
    (void)err;
    return MB_OK;
}
static void fake_teardown(void *state)
{
    (void)state;
}

#define FAKE_CODE(comp, back)                                                                          \
    { .component = comp, .backend = back, .probe = fake_probe, .setup = fake_setup, .run = fake_run,  \
      .work_per_iter = fake_work, .verify = fake_verify, .teardown = fake_teardown }

static const mb_param_spec FAKE_PARAMS[] = { MB_PARAM_END };
static const mb_backend_desc FAKE_DESC[] = {
    { .component = "gemm", .backend = "a", .summary = "A", .work_unit = "flop", .rate_unit = "TFLOP/s",
      .rate_scale = 1e12, .params = FAKE_PARAMS, .compute = true },
    { .component = "gemm", .backend = "b", .summary = "B", .work_unit = "flop", .rate_unit = "TFLOP/s",
      .rate_scale = 1e12, .params = FAKE_PARAMS, .compute = true },
    MB_BACKEND_DESC_END,
};

static const mb_backend_code CODE_A = FAKE_CODE("gemm", "a"), CODE_B = FAKE_CODE("gemm", "b");
static const mb_backend_code CODE_C = FAKE_CODE("gemm", "c"), CODE_B_OTHER_COMPONENT = FAKE_CODE("conv", "b");

/* Matches the two fake descriptions against code; the error text, or "" */
static const char *match_fake(const mb_backend_code *const *code, size_t n_code, mb_err *err)
{
    const mb_backend_desc *desc[] = { &FAKE_DESC[0], &FAKE_DESC[1] };
    const mb_backend_code *matched[2];
    mb_err_clear(err);
    int rc = mb_backends_match(desc, 2, code, n_code, matched, err);
    if (rc == MB_OK) {
        assert_true(matched[0] == code[0] || matched[0] == code[1]);
        assert_string_equal(matched[0]->backend, "a");
        assert_string_equal(matched[1]->backend, "b");
        return "";
    }
    assert_int_equal(rc, MB_EUSAGE);
    return err->msg;
}

static void test_match_pairs_by_component_and_backend(void **s)
{
    (void)s;
    mb_err err = { 0 };
    const mb_backend_code *in_order[] = { &CODE_A, &CODE_B };
    const mb_backend_code *reversed[] = { &CODE_B, &CODE_A };
    assert_string_equal(match_fake(in_order, 2, &err), "");
    assert_string_equal(match_fake(reversed, 2, &err), "");
    mb_component_ops ops = mb_backend_compose(&FAKE_DESC[1], &CODE_B);
    assert_string_equal(ops.summary, "B");
    assert_false(ops.params_unknown);
    assert_true(ops.run == fake_run);
    assert_true(ops.compute);
}

static void test_match_refuses_disagreement(void **s)
{
    (void)s;
    mb_err err = { 0 };
    const mb_backend_code *missing[] = { &CODE_A };
    assert_string_equal(match_fake(missing, 1, &err), "gemm/b is described but has no code");
    const mb_backend_code *extra[] = { &CODE_A, &CODE_B, &CODE_C };
    assert_string_equal(match_fake(extra, 3, &err), "code for gemm/c has no description");
    const mb_backend_code *twice[] = { &CODE_A, &CODE_B, &CODE_B };
    assert_string_equal(match_fake(twice, 3, &err), "gemm/b has two code tables");
    const mb_backend_code *wrong_component[] = { &CODE_A, &CODE_B_OTHER_COMPONENT };
    assert_string_equal(match_fake(wrong_component, 2, &err), "gemm/b is described but has no code");

    static const char *const fns[] = { "probe", "setup", "run", "work_per_iter", "verify", "teardown" };
    for (size_t i = 0; i < N_OF(fns); i++) {
        mb_backend_code broken = CODE_B;
        switch (i) {
        case 0: broken.probe = NULL; break;
        case 1: broken.setup = NULL; break;
        case 2: broken.run = NULL; break;
        case 3: broken.work_per_iter = NULL; break;
        case 4: broken.verify = NULL; break;
        default: broken.teardown = NULL; break;
        }
        const mb_backend_code *code[] = { &CODE_A, &broken };
        char want[128];
        snprintf(want, sizeof want, "gemm/b has no %s function", fns[i]);
        assert_string_equal(match_fake(code, 2, &err), want);
    }
    /* Optional functions may be absent. */
    mb_backend_code lean = CODE_B;
    lean.report = NULL;
    lean.timing_start = NULL;
    const mb_backend_code *code[] = { &CODE_A, &lean };
    assert_string_equal(match_fake(code, 2, &err), "");
}

/* ---- the built GPU modules ---------------------------------------------- */

static bool module_built(const char *name)
{
    const char *list = MB_TEST_MODULES; /* "cuda,cudnn,nccl" */
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0'))
            return true;
    return false;
}

/* The module's exported code, dlopened from the build directory. */
static const mb_backend_code *const *module_code(void *handle, const char *name, size_t *n)
{
    char symbol[64];
    snprintf(symbol, sizeof symbol, "mb_module_%s_code", name);
    mb_module_code_fn fn = (mb_module_code_fn)dlsym(handle, symbol);
    if (fn == NULL)
        fail_msg("%s: no %s", name, symbol);
    return fn(n);
}

static void *open_module(const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/libmlbench_%s.so", MB_TEST_MODULE_DIR, name);
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL)
        fail_msg("dlopen %s: %s", path, dlerror());
    return handle;
}

static void test_modules_match_their_descriptions(void **s)
{
    (void)s;
    for (size_t m = 0; m < N_OF(module_lists); m++) {
        if (!module_built(module_names[m]))
            continue;
        void *handle = open_module(module_names[m]);
        size_t n_code = 0;
        const mb_backend_code *const *code = module_code(handle, module_names[m], &n_code);
        size_t n = mb_backend_desc_count(module_lists[m]);
        const mb_backend_desc *desc[16];
        const mb_backend_code *matched[16];
        assert_true(n <= 16);
        for (size_t i = 0; i < n; i++)
            desc[i] = &module_lists[m][i];
        mb_err err = { 0 };
        if (mb_backends_match(desc, n, code, n_code, matched, &err) != MB_OK)
            fail_msg("libmlbench_%s.so against its descriptions: %s", module_names[m], err.msg);
        assert_int_equal(n_code, n);
        for (size_t i = 0; i < n; i++) {
            assert_null(matched[i]->unavailable); /* real code, not a placeholder */
            /* ... and the registry uses it: the module loaded and matched. */
            const mb_component_ops *ops = mb_registry_find(desc[i]->component, desc[i]->backend);
            assert_false(ops->params_unknown);
            assert_true(ops->setup == matched[i]->setup);
        }
        /* It was built for this mlbench's backend contract. */
        char abi_symbol[64], why[1024];
        snprintf(abi_symbol, sizeof abi_symbol, "mb_module_%s_abi", module_names[m]);
        if (mb_module_abi_check(dlsym(handle, abi_symbol), abi_symbol, module_names[m], why, sizeof why) != MB_OK)
            fail_msg("%s", why);
        /* Another module's descriptions do not fit this code. */
        const mb_backend_desc *other = &module_lists[(m + 1) % N_OF(module_lists)][0];
        assert_int_equal(mb_backends_match(&other, 1, code, n_code, matched, &err), MB_EUSAGE);
        dlclose(handle);
    }
}

/* A module built for another contract, or before modules said theirs, is
 * refused with the reason (the loader then gives its backends placeholder
 * tables whose probe says it). */
static void test_module_abi_refused(void **s)
{
    (void)s;
    char why[1024];
    const int now = MB_COMPONENT_ABI, stale = MB_COMPONENT_ABI - 1;
    assert_int_equal(mb_module_abi_check(&now, "mb_module_cuda_abi", "libmlbench_cuda.so", why, sizeof why), MB_OK);
    assert_int_equal(mb_module_abi_check(&stale, "mb_module_cuda_abi", "libmlbench_cuda.so", why, sizeof why),
                     MB_EUSAGE);
    assert_non_null(strstr(why, "was built for backend contract"));
    assert_non_null(strstr(why, "rebuild the modules"));
    assert_int_equal(mb_module_abi_check(NULL, "mb_module_nccl_abi", "libmlbench_nccl.so", why, sizeof why),
                     MB_EUSAGE);
    assert_non_null(strstr(why, "exports no mb_module_nccl_abi"));
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "modules") == 0) {
        if (MB_TEST_MODULES[0] == '\0') {
            printf("no GPU module in this build (no CUDA toolkit): nothing to check\n");
            return 77;
        }
        const struct CMUnitTest modules[] = { cmocka_unit_test(test_modules_match_their_descriptions) };
        return cmocka_run_group_tests(modules, NULL, NULL);
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_tables_are_their_descriptions),
        cmocka_unit_test(test_module_tables_are_their_descriptions),
        cmocka_unit_test(test_registry_holds_every_description),
        cmocka_unit_test(test_not_built_in_is_made_from_the_description),
        cmocka_unit_test(test_match_pairs_by_component_and_backend),
        cmocka_unit_test(test_match_refuses_disagreement),
        cmocka_unit_test(test_module_abi_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
