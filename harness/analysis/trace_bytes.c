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
 * may read an input more than once or write several outputs. */
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

bool mb_tr_op_bytes(int model, const tr_shapes *sh, double *bytes, const char **why)
{
    if (model != TR_MOP_OUT && model != TR_MOP_INPLACE && model != TR_MOP_REDUCE) {
        *why = "not a memory-bound op";
        return false;
    }
    if (sh->n_tensors == 0) {
        *why = "shapes not recorded (record_shapes=False)";
        return false;
    }
    /* A TensorList's elements have no recorded type: they take the first
     * plain tensor input's (foreach ops pass lists of one dtype). */
    int list_es = 0;
    for (int t = 0; t < sh->n_tensors && t < sh->n_types && list_es == 0; t++)
        if (sh->rank[t] >= 0)
            list_es = mb_tr_dtype_bytes(sh->types[t]);
    double sum = 0, largest = 0;
    for (int t = 0; t < sh->n_tensors; t++) {
        const char *type = t < sh->n_types ? sh->types[t] : "";
        double b;
        if (sh->rank[t] == TR_RANK_LIST) {
            if (strcmp(type, "TensorList") != 0 || sh->list_numel[t] == 0)
                continue;
            if (list_es == 0) {
                *why = "element type of a TensorList not recorded";
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
    }
    if (sum <= 0) {
        *why = "no tensor input with a known element type";
        return false;
    }
    *bytes = model == TR_MOP_OUT ? sum + largest : sum;
    return true;
}
