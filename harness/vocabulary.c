/* vocabulary.c: the tables behind harness/api/vocabulary.h. */
#include "vocabulary.h"

#include <stdio.h>
#include <string.h>

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* Order matters for mb_coll_kind_in: a name that another contains comes
 * after it (allreduce and reducescatter before reduce, allgather before
 * gather, reducescatter before scatter). */
static const mb_coll_kind coll_kinds[] = {
    /* vLLM's custom all-reduce kernels: vllm::cross_device_reduce_1stage, _2stage */
    { "allreduce", "all-reduce", true, MB_COLL_ALLREDUCE, "crossdevicereduce", MB_MSG_LARGER, true },
    { "reducescatter", "reduce-scatter", true, MB_COLL_REDUCESCATTER, NULL, MB_MSG_INPUT, false },
    { "allgather", "all-gather", true, MB_COLL_ALLGATHER, NULL, MB_MSG_OUTPUT, false },
    { "broadcast", "broadcast", true, MB_COLL_BROADCAST, NULL, MB_MSG_LARGER, true },
    /* DeepEP's expert-parallel kernels (deep_ep::intranode::dispatch,
     * internode::combine, internode_ll::..., their notify/barrier helpers)
     * are the all-to-all of a mixture of experts. */
    { "alltoall", "all-to-all", false, MB_COLL_ALLREDUCE, "internode|intranode", MB_MSG_LARGER, false },
    { "sendrecv", "send/recv", false, MB_COLL_ALLREDUCE, "send|recv", MB_MSG_LARGER, false },
    { "reduce", "reduce", false, MB_COLL_ALLREDUCE, NULL, MB_MSG_LARGER, true },
    { "barrier", "barrier", false, MB_COLL_ALLREDUCE, NULL, MB_MSG_LARGER, false },
    { "gather", "gather", false, MB_COLL_ALLREDUCE, NULL, MB_MSG_LARGER, false },
    { "scatter", "scatter", false, MB_COLL_ALLREDUCE, NULL, MB_MSG_LARGER, false },
};

static const mb_stage_component stage_components[] = {
    { "gemm", "flops", "flop", "gpu" },
    { "conv", "flops", "flop", "gpu" },
    { "attention", "flops", "flop", "gpu" }, /* held against the GEMM case (configs/gap/matching.ini) */
    { "copy", "bytes", "byte", "gpu" },
    { "membw", "bytes", "byte", "gpu" },
    { "disk", "bytes", "byte", "cpu" },
    { "allreduce", "bytes", "byte", "gpu" },
    { "allgather", "bytes", "byte", "gpu" },
    { "reducescatter", "bytes", "byte", "gpu" },
    { "broadcast", "bytes", "byte", "gpu" },
    { "launch", "launches", "launch", "gpu" },
    { "sync", "syncs", "sync", "gpu" },
    { "hostmem", "bytes", "byte", "cpu" },
    { "other", NULL, "s", NULL }, /* device only when the file says */
};

/* ---- collective kinds ------------------------------------------------------ */

const mb_coll_kind *mb_coll_kind_find(const char *name)
{
    for (size_t i = 0; i < COUNT(coll_kinds); i++)
        if (strcmp(coll_kinds[i].name, name) == 0)
            return &coll_kinds[i];
    return NULL;
}

/* Lower case without '_', cut to the buffer. */
static void normalise(const char *text, char *out, size_t cap)
{
    size_t k = 0;
    for (size_t i = 0; text[i] && i < cap - 1; i++) {
        char c = text[i];
        if (c != '_')
            out[k++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
    }
    out[k] = '\0';
}

static bool contains_alias(const char *text, const char *aliases)
{
    for (const char *p = aliases; p && *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        char word[32];
        snprintf(word, sizeof word, "%.*s", (int)len, p);
        if (strstr(text, word))
            return true;
        p += len + (bar ? 1 : 0);
    }
    return false;
}

const mb_coll_kind *mb_coll_kind_in(const char *text)
{
    char low[128];
    normalise(text, low, sizeof low);
    for (size_t i = 0; i < COUNT(coll_kinds); i++)
        if (strstr(low, coll_kinds[i].name) || contains_alias(low, coll_kinds[i].aliases))
            return &coll_kinds[i];
    return NULL;
}

bool mb_coll_from_name(const char *name, mb_collective *out)
{
    const mb_coll_kind *k = mb_coll_kind_find(name);
    if (k == NULL || !k->measured)
        return false;
    *out = k->coll;
    return true;
}

bool mb_is_collective(const char *component)
{
    mb_collective c;
    return mb_coll_from_name(component, &c);
}

static const mb_coll_kind *measured_kind(mb_collective c)
{
    for (size_t i = 0; i < COUNT(coll_kinds); i++)
        if (coll_kinds[i].measured && coll_kinds[i].coll == c)
            return &coll_kinds[i];
    return NULL;
}

const char *mb_coll_component(mb_collective c)
{
    const mb_coll_kind *k = measured_kind(c);
    return k ? k->name : "?";
}

const char *mb_coll_name(mb_collective c)
{
    const mb_coll_kind *k = measured_kind(c);
    return k ? k->title : "?";
}

const char *mb_coll_stage_component(const char *name)
{
    const mb_coll_kind *k = mb_coll_kind_find(name);
    return k && k->measured ? k->name : "other";
}

/* ---- stage components ------------------------------------------------------ */

const mb_stage_component *mb_stage_component_find(const char *name)
{
    for (size_t i = 0; i < COUNT(stage_components); i++)
        if (strcmp(stage_components[i].name, name) == 0)
            return &stage_components[i];
    return NULL;
}

const char *mb_stage_component_names(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < COUNT(stage_components) && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? "|" : "", stage_components[i].name);
        used += n > 0 ? (size_t)n : 0;
    }
    return buf;
}

/* The first component with work key `key`, by index; COUNT when none. */
static size_t first_with_key(const char *key)
{
    size_t i = 0;
    while (i < COUNT(stage_components) &&
           !(stage_components[i].work_key && strcmp(stage_components[i].work_key, key) == 0))
        i++;
    return i;
}

const char *mb_work_key(size_t n)
{
    for (size_t i = 0; i < COUNT(stage_components); i++) {
        const char *key = stage_components[i].work_key;
        if (key == NULL || first_with_key(key) != i) /* time only, or a key seen before */
            continue;
        if (n-- == 0)
            return key;
    }
    return NULL;
}

bool mb_is_work_key(const char *key)
{
    return first_with_key(key) < COUNT(stage_components);
}

bool mb_dtype_is_integer(const char *dtype)
{
    return dtype && (strncmp(dtype, "int", 3) == 0 || strncmp(dtype, "uint", 4) == 0);
}

const char *mb_rate_unit_for_dtype(const char *unit, const char *dtype, char *buf, size_t len)
{
    const char *flop = unit ? strstr(unit, "FLOP") : NULL;
    if (flop == NULL || !mb_dtype_is_integer(dtype))
        return unit;
    snprintf(buf, len, "%.*sOP%s", (int)(flop - unit), unit, flop + 4);
    return buf;
}
