/* case_identity.c: one rule for "the same case" across results files
 * (case_identity.h). */
#include "case_identity.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "component.h"
#include "params.h"

#define MAX_PARAMS 64

/* A case as the rule sees it: component, backend and name=value pairs,
 * pointing into `buf` (a copy of the id cut into pieces). */
typedef struct case_key {
    const char *component, *backend;
    const char *name[MAX_PARAMS], *value[MAX_PARAMS];
    int n;
    char buf[4096];
} case_key;

static const char *str_of(const cJSON *o, const char *name)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(s) ? s->valuestring : NULL;
}

/* "k1=v1,k2=v2": a piece without '=' belongs to the value before it (a text
 * parameter's value may hold a comma). */
static bool key_from_tail(char *tail, case_key *k)
{
    for (char *s = tail; s && *s;) {
        char *comma = strchr(s, ',');
        if (comma)
            *comma = '\0';
        char *eq = strchr(s, '=');
        if (eq == NULL && k->n == 0)
            return false;
        if (eq == NULL) {
            s[-1] = ','; /* the comma cut before this piece: glued back onto the previous value */
        } else {
            if (k->n == MAX_PARAMS)
                return false;
            *eq = '\0';
            k->name[k->n] = s;
            k->value[k->n++] = eq + 1;
        }
        s = comma ? comma + 1 : NULL;
    }
    return true;
}

/* Cuts an id into component, backend and pairs; false when it is not of the
 * form component/backend/k=v,... (then only the exact id pairs it). The id,
 * not the "params" object, is what the rule relaxes: it is what the case is
 * known by. */
static bool key_of(const char *id, case_key *k)
{
    memset(k, 0, offsetof(case_key, buf));
    if (id == NULL || (size_t)snprintf(k->buf, sizeof k->buf, "%s", id) >= sizeof k->buf)
        return false;
    char *slash1 = strchr(k->buf, '/'), *slash2 = slash1 ? strchr(slash1 + 1, '/') : NULL;
    if (slash2 == NULL)
        return false;
    *slash1 = *slash2 = '\0';
    k->component = k->buf;
    k->backend = slash1 + 1;
    return key_from_tail(slash2 + 1, k);
}

static const char *value_in(const case_key *k, const char *name)
{
    for (int i = 0; i < k->n; i++)
        if (strcmp(k->name[i], name) == 0)
            return k->value[i];
    return NULL;
}

/* The backend's parameter table, or NULL when this build does not know it.
 * Built-in tables first: the full registry loads the GPU modules (200+ MB of
 * libraries), which only a GPU backend's table is worth. */
static const mb_param_spec *spec_of(const case_key *k)
{
    const mb_component_ops *ops = mb_registry_find_builtin(k->component, k->backend);
    if (ops == NULL)
        ops = mb_registry_find(k->component, k->backend);
    return ops && !ops->params_unknown ? ops->params : NULL;
}

/* The parameters both ids have are equal. As text: the harness writes ids
 * normalised (sizes in bytes, booleans true/false: params.c). */
static bool shared_equal(const case_key *a, const case_key *b)
{
    for (int i = 0; i < a->n; i++) {
        const char *other = value_in(b, a->name[i]);
        if (other && strcmp(other, a->value[i]) != 0)
            return false;
    }
    return true;
}

/* Every parameter `a` has and `b` lacks holds the backend's default in a. */
static bool rest_default(const case_key *a, const case_key *b, const mb_param_spec *spec)
{
    for (int i = 0; i < a->n; i++) {
        if (value_in(b, a->name[i]))
            continue;
        const mb_param_spec *ps = mb_param_spec_find(spec, a->name[i]);
        if (ps == NULL || ps->def == NULL)
            return false; /* a parameter this build lacks, or one without default: no value to hold it to */
        if (!mb_param_values_equal(ps, a->value[i], ps->def))
            return false;
    }
    return true;
}

static bool same_names(const case_key *a, const case_key *b)
{
    if (a->n != b->n)
        return false;
    for (int i = 0; i < a->n; i++)
        if (value_in(b, a->name[i]) == NULL)
            return false;
    return true;
}

/* "component/backend/" equal in both ids. */
static bool same_prefix(const char *a, const char *b)
{
    const char *slash1 = strchr(a, '/'), *slash2 = slash1 ? strchr(slash1 + 1, '/') : NULL;
    if (slash2 == NULL)
        return false;
    size_t n = (size_t)(slash2 - a) + 1;
    return strncmp(a, b, n) == 0;
}

bool mb_case_ids_same(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return false;
    if (strcmp(a, b) == 0)
        return true;
    if (!same_prefix(a, b))
        return false; /* the common answer, before cutting the ids up */
    case_key ka, kb;
    if (!key_of(a, &ka) || !key_of(b, &kb))
        return false;
    if (strcmp(ka.component, kb.component) != 0 || strcmp(ka.backend, kb.backend) != 0)
        return false;
    if (!shared_equal(&ka, &kb))
        return false;
    if (same_names(&ka, &kb))
        return true; /* the same pairs in another order */
    /* Only now the table: files of two versions of a backend; a lookup may
     * load a GPU module, which files of one version never need. */
    const mb_param_spec *spec = spec_of(&ka);
    return spec && rest_default(&ka, &kb, spec) && rest_default(&kb, &ka, spec);
}

bool mb_case_same(const cJSON *a, const cJSON *b)
{
    return mb_case_ids_same(str_of(a, "id"), str_of(b, "id"));
}

const cJSON *mb_case_find_same(const cJSON *cases, const cJSON *c)
{
    const char *id = str_of(c, "id");
    const cJSON *it;
    cJSON_ArrayForEach(it, cases)
    {
        const char *other = str_of(it, "id");
        if (id && other && strcmp(id, other) == 0)
            return it;
    }
    cJSON_ArrayForEach(it, cases)
    {
        if (mb_case_same(c, it))
            return it;
    }
    return NULL;
}
