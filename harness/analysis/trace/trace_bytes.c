/* trace_bytes.c: bytes moved by the memory-bound ops (elementwise,
 * normalization, reduction, optimizer) a trace recorded with
 * record_shapes=True. Which ops count, and whether their output is one of
 * their inputs, is data: [memory_op] in configs/gap/kernel_classes.ini.
 *
 * The model (docs/traces.md, "Bytes of memory-bound ops"): every tensor
 * input is read once (numel x element size from "Input Dims"/"Input type"),
 * and an out-of-place op writes one output the size of its largest input.
 * It is a lower bound: an in-place op writes back what it read, a
 * reduction's small output is left out, and a kernel
 * may read an input more than once or write several outputs. Four ops
 * read less than all of their inputs and have their own model: a pooling
 * backward ("gradient") reads its input only for the shape of the gradient
 * it writes; an embedding ("gather") reads and writes one row of its table
 * per index; an EmbeddingBag ("bag") reads one row per index and writes one
 * per bag, fewer, not counted; nll_loss ("pick") reads one logit per target.
 * A kernel that torch.compile (Inductor) generated records its arguments,
 * outputs among them ("arguments"): each tensor argument counts once, read
 * or written. */
#include "trace.h"

#include <string.h>

int mb_tr_dtype_bytes(const char *type)
{
    /* The names c10::ScalarType gets in "Input type" (toString of the
     * scalar type's C++ name). */
    static const struct {
        const char *torch;
        int bytes;
    } map[] = {
        {"float", 4},          {"c10::Half", 2},          {"c10::BFloat16", 2},      {"double", 8},
        {"long int", 8},       {"int", 4},                {"short int", 2},          {"signed char", 1},
        {"unsigned char", 1},  {"bool", 1},               {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e5m2", 1},
        {"c10::Float8_e4m3fnuz", 1}, {"c10::Float8_e5m2fnuz", 1}, {"c10::qint8", 1}, {"c10::quint8", 1},
        {"c10::complex<float>", 8}, {"c10::complex<double>", 16}, {"c10::complex<c10::Half>", 4},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(type, map[i].torch) == 0)
            return map[i].bytes;
    return 0;
}

static double numel(const int64_t *d, int rank)
{
    double n = 1; /* rank 0: a 0-d tensor holds one element */
    for (int i = 0; i < rank; i++)
        n *= (double)d[i];
    return n;
}

/* An index input (integer elements) and a values input (floating-point),
 * each the largest of its kind, for the gather, bag and pick models. */
static bool index_and_values(const tr_shapes *sh, int *idx, int *val)
{
    double ni = -1, nv = -1;
    *idx = *val = -1;
    for (int t = 0; t < sh->n_tensors && t < sh->n_types; t++) {
        if (sh->rank[t] < 0)
            continue;
        double n = numel(sh->dims[t], sh->rank[t]);
        const char *type = sh->types[t];
        if ((strcmp(type, "long int") == 0 || strcmp(type, "int") == 0) && n > ni) {
            ni = n;
            *idx = t;
        } else if (mb_tr_dtype_of_torch(type) != NULL && strcmp(type, "signed char") != 0 && n > nv) {
            nv = n;
            *val = t;
        }
    }
    return *idx >= 0 && *val >= 0;
}

/* Embedding (gather), EmbeddingBag (bag) and nll_loss (pick) touch only
 * what their index selects: counting the whole table or the whole logits
 * (32000 x 8192 for a GPT's loss) would be no lower bound. */
static bool indexed_bytes(int model, const tr_shapes *sh, double *bytes, const char **why)
{
    int idx, val;
    if (!index_and_values(sh, &idx, &val)) {
        *why = "no index and value inputs with known types";
        return false;
    }
    double n = numel(sh->dims[idx], sh->rank[idx]);
    int es_idx = mb_tr_dtype_bytes(sh->types[idx]), es = mb_tr_dtype_bytes(sh->types[val]);
    if (model == TR_MOP_PICK) { /* one value per index element */
        *bytes = n * (es_idx + es);
        return true;
    }
    /* a row of the table (its dims after the first) read per index, and for
     * gather written too; a bag's sum, mean or max is written once per bag,
     * fewer than its indices (offsets say how many): not counted */
    if (sh->rank[val] < 1) {
        *why = "the table of an embedding has no rows";
        return false;
    }
    double row = numel(sh->dims[val] + 1, sh->rank[val] - 1);
    *bytes = n * es_idx + (model == TR_MOP_BAG ? 1 : 2) * n * row * es;
    return true;
}

static const char no_list_type[] = "element type of a TensorList not recorded";

/* mb_tr_op_bytes, with `unknown_list_es` the element size of TensorLists
 * whose type nothing recorded (0: their bytes are unknown). */
static bool op_bytes(int model, const tr_shapes *sh, int unknown_list_es, double *bytes, const char **why)
{
    if (model < TR_MOP_OUT || model > TR_MOP_BAG) { /* TR_MOP_BAG: the last */
        *why = "not a memory-bound op";
        return false;
    }
    if (sh->n_tensors == 0) {
        *why = "no Input Dims recorded for it";
        return false;
    }
    if (sh->more) { /* the bytes of the first ones would be no bound worth the name */
        *why = "more tensor arguments than the reader keeps";
        return false;
    }
    /* torch 2.x records a TensorList as [] in Input Dims (no shapes): the
     * op's bytes are unknown, not the few of its other inputs. */
    for (int t = 0; t < sh->n_tensors && t < sh->n_types; t++)
        if (strcmp(sh->types[t], "TensorList") == 0 && sh->rank[t] != TR_RANK_LIST) {
            *why = "TensorList recorded without shapes";
            return false;
        }
    if (model == TR_MOP_GATHER || model == TR_MOP_BAG || model == TR_MOP_PICK)
        return indexed_bytes(model, sh, bytes, why);
    /* A TensorList's elements have no recorded type: they take the first
     * plain tensor input's (foreach ops pass lists of one dtype). */
    int list_es = 0;
    for (int t = 0; t < sh->n_tensors && t < sh->n_types && list_es == 0; t++)
        if (sh->rank[t] >= 0)
            list_es = mb_tr_dtype_bytes(sh->types[t]);
    if (list_es == 0)
        list_es = unknown_list_es;
    double sum = 0, largest = 0, first = -1;
    for (int t = 0; t < sh->n_tensors; t++) {
        const char *type = t < sh->n_types ? sh->types[t] : "";
        double b;
        if (sh->rank[t] == TR_RANK_LIST) {
            if (strcmp(type, "TensorList") != 0 || sh->list_numel[t] == 0)
                continue;
            if (list_es == 0) {
                *why = no_list_type;
                return false;
            }
            b = sh->list_numel[t] * list_es;
        } else {
            int es = mb_tr_dtype_bytes(type);
            if (es == 0)
                continue; /* a Scalar, None or non-tensor argument */
            if (sh->rank[t] < 0) {
                *why = "a tensor input has more dims than the reader keeps";
                return false;
            }
            b = numel(sh->dims[t], sh->rank[t]) * es;
        }
        sum += b;
        if (b > largest)
            largest = b;
        if (first < 0)
            first = b;
    }
    if (sum <= 0) {
        *why = "no tensor input with a known element type";
        return false;
    }
    /* out: the inputs read and an output as large as the largest written.
     * gradient (pooling backward): the largest input, the forward's input,
     * gives only the shape of the gradient written, so (sum - largest) read
     * + largest written = sum, as for inplace, reduce and arguments.
     * update: the inputs read and the first written back. */
    *bytes = model == TR_MOP_OUT ? sum + largest : model == TR_MOP_UPDATE ? sum + first : sum;
    return true;
}

bool mb_tr_op_bytes(int model, const tr_shapes *sh, double *bytes, const char **why)
{
    return op_bytes(model, sh, 0, bytes, why);
}

bool mb_tr_op_list_unit_bytes(int model, const tr_shapes *sh, double *unit)
{
    /* Only lists of no recorded type count then (a plain tensor of a known
     * type would have given theirs): the bytes scale with the element size. */
    double bytes;
    const char *why = NULL;
    if (op_bytes(model, sh, 0, &bytes, &why) || why != no_list_type)
        return false;
    return op_bytes(model, sh, 1, unit, &why);
}

/* The bytes of the type named by the template argument after `lt` (a '<'),
 * up to its ','; 0 for any other. */
static int first_argument_bytes(const char *lt, const char *end)
{
    const char *comma = memchr(lt, ',', (size_t)(end - lt));
    char type[TR_TYPE_LEN];
    size_t n = comma ? (size_t)(comma - lt - 1) : 0;
    if (n == 0 || n >= sizeof type)
        return 0;
    memcpy(type, lt + 1, n);
    type[n] = '\0';
    return mb_tr_dtype_bytes(type);
}

/* The size N of "OpaqueType<Nu>" (PyTorch moves elements of N bytes as
 * one opaque type), else the bytes of the first template argument of a
 * CatArray kernel (torch before 2.1 named the type: CatArrayBatchedCopy<float,
 * unsigned int, 4, 64, 64>) or of a foreach kernel's functor (its scalar_t:
 * a foreach op launches one kernel per dtype of its lists). */
int mb_tr_kernel_elem_bytes(const char *name, size_t len)
{
    static const char opaque[] = "OpaqueType<", cat[] = "CatArray", mta[] = "multi_tensor_apply_kernel<",
                      functor[] = "Functor<";
    const char *end = name + len, *o = memmem(name, len, opaque, sizeof opaque - 1);
    if (o != NULL) {
        const char *d = o + sizeof opaque - 1;
        int n = 0;
        while (d < end && *d >= '0' && *d <= '9' && n < 100)
            n = n * 10 + (*d++ - '0');
        return n >= 1 && n <= 15 ? n : 0; /* 4 bits of the GPU event keep it */
    }
    const char *c = memmem(name, len, cat, sizeof cat - 1);
    const char *lt = c ? memchr(c, '<', (size_t)(end - c)) : NULL;
    if (lt != NULL)
        return first_argument_bytes(lt, end);
    const char *m = memmem(name, len, mta, sizeof mta - 1);
    const char *f = m ? memmem(m, (size_t)(end - m), functor, sizeof functor - 1) : NULL;
    return f ? first_argument_bytes(f + sizeof functor - 2, end) : 0;
}
