/* backends.c: a backend's description and code joined into the table the
 * harness uses (component.h, "description and code"). */
#include "backends.h"

#include <string.h>

size_t mb_backend_desc_count(const mb_backend_desc *list)
{
    size_t n = 0;
    while (list[n].component)
        n++;
    return n;
}

static bool same_backend(const mb_backend_desc *d, const mb_backend_code *c)
{
    return strcmp(d->component, c->component) == 0 && strcmp(d->backend, c->backend) == 0;
}

/* The first required function the code lacks, or NULL. */
static const char *missing_function(const mb_backend_code *c)
{
    if (c->probe == NULL)
        return "probe";
    if (c->unavailable)
        return NULL; /* a placeholder only probes */
    if (c->setup == NULL)
        return "setup";
    if (c->run == NULL)
        return "run";
    if (c->work_per_iter == NULL)
        return "work_per_iter";
    if (c->verify == NULL)
        return "verify";
    if (c->teardown == NULL)
        return "teardown";
    return NULL;
}

static int match_one(const mb_backend_desc *d, const mb_backend_code *const *code, size_t n_code,
                     const mb_backend_code **out, mb_err *err)
{
    *out = NULL;
    for (size_t j = 0; j < n_code; j++) {
        if (!same_backend(d, code[j]))
            continue;
        if (*out)
            return mb_errf(err, MB_EUSAGE, "%s/%s has two code tables", d->component, d->backend);
        *out = code[j];
    }
    if (*out == NULL)
        return mb_errf(err, MB_EUSAGE, "%s/%s is described but has no code", d->component, d->backend);
    const char *missing = missing_function(*out);
    if (missing)
        return mb_errf(err, MB_EUSAGE, "%s/%s has no %s function", d->component, d->backend, missing);
    return MB_OK;
}

int mb_backends_match(const mb_backend_desc *const *desc, size_t n_desc, const mb_backend_code *const *code,
                      size_t n_code, const mb_backend_code **matched, mb_err *err)
{
    size_t n = n_desc;
    for (size_t i = 0; i < n; i++) {
        int rc = match_one(desc[i], code, n_code, &matched[i], err);
        if (rc != MB_OK)
            return rc;
    }
    /* Every description found exactly one table: a table none took has no
     * description. */
    for (size_t j = 0; j < n_code; j++) {
        size_t i = 0;
        while (i < n && matched[i] != code[j])
            i++;
        if (i == n)
            return mb_errf(err, MB_EUSAGE, "code for %s/%s has no description", code[j]->component,
                           code[j]->backend);
    }
    return MB_OK;
}

mb_component_ops mb_backend_compose(const mb_backend_desc *desc, const mb_backend_code *code)
{
    return (mb_component_ops){
        .component = desc->component,
        .backend = desc->backend,
        .summary = code->unavailable ? code->unavailable : desc->summary,
        .work_unit = desc->work_unit,
        .rate_unit = desc->rate_unit,
        .rate_scale = desc->rate_scale,
        .latency_first = desc->latency_first,
        .params = desc->params,
        .probe = code->probe,
        .setup = code->setup,
        .run = code->run,
        .work_per_iter = code->work_per_iter,
        .verify = code->verify,
        .report = code->report,
        .timing_start = code->timing_start,
        .teardown = code->teardown,
        .collective = desc->collective,
        .uses_gpu = desc->uses_gpu,
        .compute = desc->compute,
        .params_unknown = code->unavailable != NULL,
    };
}
