/* trace_flops.c: FLOPs of the matmul, convolution and attention ops a trace
 * recorded with record_shapes=True ("Input Dims", "Input type", "Concrete
 * Inputs").
 *
 * The counts use harness/api/formulas.h: 2*M*N*K per GEMM, 2*N*K*C*R*S*P*Q per
 * convolution (C per group, from the weight's second dimension); attention
 * uses mb_proj_sdpa_flops (project.h), the formula the kernel-level
 * projection uses too. */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

#include "formulas.h"
#include "project.h"

/* Where an op keeps stride/padding/dilation among its Concrete Inputs (index
 * into the op's schema), and what it is. -1 = the op has no such argument. */
typedef struct op_schema {
    const char *name;
    int kind;
    int stride, padding, dilation, transposed, mask;
    bool backward;
    bool self_first; /* backward (self, grad_output, weight): torch <= 1.10's cudnn/miopen ops */
} op_schema;

static const op_schema schemas[] = {
    {"aten::mm", TR_OP_GEMM, -1, -1, -1, -1, -1, false, false},
    {"aten::addmm", TR_OP_GEMM, -1, -1, -1, -1, -1, false, false},
    {"aten::bmm", TR_OP_GEMM, -1, -1, -1, -1, -1, false, false},
    {"aten::baddbmm", TR_OP_GEMM, -1, -1, -1, -1, -1, false, false},
    {"aten::matmul", TR_OP_GEMM, -1, -1, -1, -1, -1, false, false},
    {"aten::linear", TR_OP_GEMM, -1, -1, -1, -1, -1, false, false},
    /* convolution(input, weight, bias, stride, padding, dilation, transposed,
     * output_padding, groups); _convolution adds flags after groups. */
    {"aten::convolution", TR_OP_CONV, 3, 4, 5, 6, -1, false, false},
    {"aten::_convolution", TR_OP_CONV, 3, 4, 5, 6, -1, false, false},
    /* conv2d(input, weight, bias, stride, padding, dilation, groups) */
    {"aten::conv1d", TR_OP_CONV, 3, 4, 5, -1, -1, false, false},
    {"aten::conv2d", TR_OP_CONV, 3, 4, 5, -1, -1, false, false},
    {"aten::conv3d", TR_OP_CONV, 3, 4, 5, -1, -1, false, false},
    /* cudnn_convolution(self, weight, padding, stride, dilation, groups, ...) */
    {"aten::cudnn_convolution", TR_OP_CONV, 3, 2, 4, -1, -1, false, false},
    /* miopen_convolution(self, weight, bias, padding, stride, dilation, groups, ...) */
    {"aten::miopen_convolution", TR_OP_CONV, 4, 3, 5, -1, -1, false, false},
    /* convolution_backward(grad_output, input, weight, bias_sizes, stride,
     * padding, dilation, transposed, output_padding, groups, output_mask) */
    {"aten::convolution_backward", TR_OP_CONV, 4, 5, 6, 7, 10, true, false},
    /* torch <= 1.10 (kineto's tb_plugin samples, torch 1.9):
     * cudnn_convolution_backward(self, grad_output, weight, padding, stride,
     * dilation, groups, benchmark, deterministic, allow_tf32, output_mask);
     * miopen's without allow_tf32. Its children (_backward_input,
     * _backward_weight) launch the kernels and record no weight or input
     * shape of their own: this op is the one with the FLOPs. */
    {"aten::cudnn_convolution_backward", TR_OP_CONV, 4, 3, 5, -1, 10, true, true},
    {"aten::miopen_convolution_backward", TR_OP_CONV, 4, 3, 5, -1, 9, true, true},
};

static const op_schema *schema_of(const char *name)
{
    if (strncmp(name, "aten::", 6) != 0)
        return NULL;
    for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++)
        if (strcmp(name, schemas[i].name) == 0)
            return &schemas[i];
    return NULL;
}

/* Attention ops: where each keeps its causal flag among its Concrete Inputs
 * (its schema in PyTorch's native_functions.yaml; the cuDNN ones checked
 * against torch 2.11 traces), and how query/key are laid out. The memory-
 * efficient kernels take a mask type (0 none, 1 and 2 causal) instead of a
 * bool. A name of the family that is not listed (a new variant) has no
 * known causal position: its FLOPs stay unknown rather than guessed. */
typedef struct attn_schema {
    const char *name;
    bool blhd;      /* query [b, l, h, d] (the inner flash/efficient ops); else [b, h, l, d] */
    bool backward;  /* the output's gradient comes first, then query and key */
    int causal;     /* index of is_causal (or the mask type) */
    bool mask_type; /* an int mask type rather than a bool */
} attn_schema;

static const attn_schema attn_schemas[] = {
    {"aten::scaled_dot_product_attention", false, false, 5, false},
    {"aten::_scaled_dot_product_attention_math", false, false, 5, false},
    {"aten::_scaled_dot_product_flash_attention", false, false, 4, false},
    {"aten::_scaled_dot_product_flash_attention_backward", false, true, 11, false},
    {"aten::_scaled_dot_product_efficient_attention", false, false, 6, false},
    {"aten::_scaled_dot_product_efficient_attention_backward", false, true, 11, false},
    {"aten::_scaled_dot_product_cudnn_attention", false, false, 6, false},
    {"aten::_scaled_dot_product_cudnn_attention_backward", false, true, 14, false},
    {"aten::_cudnn_attention_forward", false, false, 10, false},
    {"aten::_cudnn_attention_backward", false, true, 14, false},
    {"aten::_flash_attention_forward", true, false, 8, false},
    {"aten::_flash_attention_backward", true, true, 11, false},
    {"aten::_efficient_attention_forward", true, false, 9, true},
    {"aten::_efficient_attention_backward", true, true, 14, true},
};

/* The attention family, as the kernel-level projection has always
 * recognised it (project_trace.c): any aten op naming scaled_dot_product,
 * _cudnn_attention_, _flash_attention_ or _efficient_attention_. */
static bool attention_name(const char *name)
{
    return strncmp(name, "aten::", 6) == 0 &&
           (strstr(name, "scaled_dot_product") != NULL || strstr(name, "_cudnn_attention_") != NULL ||
            strstr(name, "_flash_attention_") != NULL || strstr(name, "_efficient_attention_") != NULL);
}

/* A matmul kernel torch.compile (Inductor) generated from a Triton template
 * (max-autotune): its record_function carries the kernel's name,
 * triton_tem_fused_<the aten ops it fused>_<n> (triton_tem_fused_mm_0,
 * triton_tem_fused_addmm_relu_3), and the kernel's arguments. Other
 * templates (convolution, flex attention, mm_plus_mm's two products) are
 * not read: their kernels keep their time only. */
static bool template_matmul_name(const char *name)
{
    static const char *const ops[] = {"_mm_", "_addmm_", "_bmm_", "_baddbmm_"};
    if (strncmp(name, "triton_tem_fused_", 17) != 0 || strstr(name, "mm_plus_mm") != NULL)
        return false;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strstr(name + 16, ops[i]) != NULL) /* from the '_' that ends "fused" */
            return true;
    return false;
}

/* A matmul of an extension's own namespace (not aten): vLLM's CPU backend
 * runs its GEMMs as _C::weight_packed_linear and _C::onednn_mm, which read
 * as Python (a gemma-3 prefill's 72% of the step, plamo-3's 65%). One
 * whose name ends in "linear" takes linear's operands (input[..., K],
 * weight[N, K]), checked like linear's; one ending in "_mm" or "_gemm" has
 * no known operand order (onednn_mm writes its first): time only. */
static int custom_matmul_name(const char *name)
{
    const char *sep = strstr(name, "::");
    if (sep == NULL || strncmp(name, "aten::", 6) == 0)
        return 0;
    const char *last = sep + 2, *next;
    while ((next = strstr(last, "::")) != NULL)
        last = next + 2;
    size_t n = strlen(last);
    if ((n == 6 || (n > 6 && last[n - 7] == '_')) && strcmp(last + n - 6, "linear") == 0)
        return 1;
    if ((n > 3 && strcmp(last + n - 3, "_mm") == 0) || (n > 5 && strcmp(last + n - 5, "_gemm") == 0))
        return 2;
    return 0;
}

int mb_tr_op_kind(const char *name)
{
    const op_schema *s = schema_of(name);
    if (s)
        return s->kind;
    if (template_matmul_name(name) || custom_matmul_name(name))
        return TR_OP_GEMM;
    return attention_name(name) ? TR_OP_ATTN : TR_OP_NONE;
}

bool mb_tr_attention_shape(const char *name, const tr_shapes *sh, tr_attention *a)
{
    if (!attention_name(name))
        return false;
    const attn_schema *sc = NULL;
    for (size_t i = 0; i < sizeof attn_schemas / sizeof attn_schemas[0] && sc == NULL; i++)
        if (strcmp(name, attn_schemas[i].name) == 0)
            sc = &attn_schemas[i];
    /* Unlisted variants: the sdpa-style names take [b, h, l, d], the inner
     * flash/efficient ones [b, l, h, d]; backward by name. */
    bool blhd = sc ? sc->blhd
                   : strstr(name, "scaled_dot_product") == NULL && strstr(name, "_cudnn_attention_") == NULL;
    bool backward = sc ? sc->backward : strstr(name, "backward") != NULL;
    int q = backward ? 1 : 0, k = q + 1;
    if (sh->n_tensors <= k || sh->rank[q] != 4 || sh->rank[k] != 4)
        return false;
    const int64_t *qd = sh->dims[q], *kd = sh->dims[k];
    a->b = (double)qd[0];
    a->d = (double)qd[3];
    a->h = (double)(blhd ? qd[2] : qd[1]);
    a->l = (double)(blhd ? qd[1] : qd[2]);
    a->s = (double)(blhd ? kd[1] : kd[2]);
    a->backward = backward;
    a->esize = sh->n_types > q ? mb_tr_dtype_bytes(sh->types[q]) : 0;
    a->causal = -1;
    if (sc && sc->causal < sh->n_concrete) {
        const char *c = sh->concrete[sc->causal];
        if (sc->mask_type && c[0] >= '0' && c[0] <= '9' && c[1] == '\0')
            a->causal = c[0] != '0';
        else if (!sc->mask_type && (strcmp(c, "True") == 0 || strcmp(c, "False") == 0))
            a->causal = c[0] == 'T';
    }
    return a->b > 0 && a->h > 0 && a->l > 0 && a->s > 0 && a->d > 0;
}

/* FLOPs of an attention op (mb_proj_sdpa_flops: 4 b h l s d forward, 10 b h
 * l s d backward, half of either when causal). The causal flag must be
 * read: guessing "full" would double a causal model's FLOPs. */
static bool attention_flops(const char *name, const tr_shapes *sh, double *flops, const char **why)
{
    tr_attention a;
    if (!mb_tr_attention_shape(name, sh, &a)) {
        *why = "attention query/key shapes not recorded";
        return false;
    }
    if (a.causal < 0) {
        *why = "attention causal flag not recorded (Concrete Inputs)";
        return false;
    }
    *flops = mb_proj_sdpa_flops(a.b, a.h, a.l, a.s, a.d, a.backward, a.causal == 1);
    return true;
}

bool mb_tr_complex_type(const char *type)
{
    return strncmp(type, "c10::complex<", 13) == 0;
}

const char *mb_tr_dtype_of_torch(const char *type)
{
    static const struct {
        const char *torch, *mb;
    } map[] = {
        {"float", "fp32"},          {"c10::Half", "fp16"},   {"c10::BFloat16", "bf16"},
        {"double", "fp64"},         {"c10::Float8_e4m3fn", "fp8"}, {"c10::Float8_e5m2", "fp8"},
        {"c10::Float8_e4m3fnuz", "fp8"}, {"c10::Float8_e5m2fnuz", "fp8"},
        {"signed char", "int8"},    {"c10::qint8", "int8"},
        /* complex: its real and imaginary parts in the real type (mb_tr_complex_type: 4 real products each) */
        {"c10::complex<double>", "fp64"}, {"c10::complex<float>", "fp32"}, {"c10::complex<c10::Half>", "fp16"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(type, map[i].torch) == 0)
            return map[i].mb;
    return NULL;
}

/* tf32 is no torch dtype: an fp32 op whose kernels ran TF32 math
 * (mb_tr_kernel_tf32) takes it in the analysis. */
static const char *const dtype_names[] = {NULL, "fp32", "fp16", "bf16", "fp64", "fp8", "int8", "tf32"};

/* The first hint in this order wins, not the first in the name: cuBLAS's
 * ampere_fp16_s16816gemm_fp16_* (fp16 inputs, fp32 accumulate) is fp16, not
 * the TF32 that a bare s16816 (CUTLASS's fp32-input tensor-op GEMMs) means
 * (JeremyMorlier/GPUModel's A100 traces: their fp16 GEMMs read TF32, and a
 * T4 and a V100 kept their time in --target for want of a TF32 peak). */
int mb_tr_kernel_math(const char *name, size_t len)
{
    static const struct {
        const char *needle;
        int math;
    } hints[] = {
        { "e4m3", MB_PM_FP8 }, { "e5m2", MB_PM_FP8 },  { "fp8", MB_PM_FP8 },   { "bf16", MB_PM_BF16 },
        { "bfloat16", MB_PM_BF16 }, { "tf32", MB_PM_TF32 }, { "imma", MB_PM_INT8 }, { "i8i8", MB_PM_INT8 },
        { "f16", MB_PM_FP16 }, { "fp16", MB_PM_FP16 }, { "half", MB_PM_FP16 },  { "hgemm", MB_PM_FP16 }, { "h884", MB_PM_FP16 },
        { "h1688", MB_PM_FP16 }, { "h16816", MB_PM_FP16 }, { "s1688", MB_PM_TF32 }, { "s16816", MB_PM_TF32 },
        { "dgemm", MB_PM_FP64 }, { "sgemm", MB_PM_FP32 }, { "scudnn", MB_PM_FP32 },
        /* cuBLAS/cuDNN's xmma kernels on fp32 with TF32 off (sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_...: 62 ms of
         * an fp32 GPT's step on an H200, bench/data); with it on they say tf32f32, found above */
        { "f32f32_f32f32_f32", MB_PM_FP32 },
    };
    for (size_t i = 0; i < sizeof hints / sizeof *hints; i++)
        if (memmem(name, len, hints[i].needle, strlen(hints[i].needle)))
            return hints[i].math;
    return -1;
}

bool mb_tr_kernel_tf32(const char *name, size_t len)
{
    return mb_tr_kernel_math(name, len) == MB_PM_TF32;
}

bool mb_tr_kernel_fp32(const char *name, size_t len)
{
    return mb_tr_kernel_math(name, len) == MB_PM_FP32;
}

int mb_tr_dtype_index(const char *mb_dtype)
{
    for (int i = 1; mb_dtype && i < (int)(sizeof dtype_names / sizeof dtype_names[0]); i++)
        if (strcmp(mb_dtype, dtype_names[i]) == 0)
            return i;
    return 0;
}

const char *mb_tr_dtype_name(int index)
{
    if (index <= 0 || index >= (int)(sizeof dtype_names / sizeof dtype_names[0]))
        return NULL;
    return dtype_names[index];
}

static bool dims_known(const tr_shapes *sh, int t, int min_rank)
{
    return t < sh->n_tensors && sh->rank[t] >= min_rank;
}

static double prod(const int64_t *d, int n)
{
    double p = 1;
    for (int i = 0; i < n; i++)
        p *= (double)d[i];
    return p;
}

/* matmul semantics (numpy): 1-D operands are vectors, leading dims
 * broadcast into a batch. */
static bool matmul_flops(const tr_shapes *sh, int a, int b, double *flops)
{
    if (!dims_known(sh, a, 1) || !dims_known(sh, b, 1))
        return false;
    const int64_t *A = sh->dims[a], *B = sh->dims[b];
    int ra = sh->rank[a], rb = sh->rank[b];
    double m = ra >= 2 ? (double)A[ra - 2] : 1;
    double k = (double)A[ra - 1];
    double n = rb >= 2 ? (double)B[rb - 1] : 1;
    double kb = rb >= 2 ? (double)B[rb - 2] : (double)B[0];
    if (k != kb)
        return false;
    /* Broadcast batch dims (all but the last two of each). */
    int ba = ra > 2 ? ra - 2 : 0, bb = rb > 2 ? rb - 2 : 0;
    int nb = ba > bb ? ba : bb;
    double batch = 1;
    for (int i = 0; i < nb; i++) {
        int ia = ba - nb + i, ib = bb - nb + i;
        double da = ia >= 0 ? (double)A[ia] : 1, db = ib >= 0 ? (double)B[ib] : 1;
        batch *= da > db ? da : db;
    }
    *flops = mb_gemm_flops(m, n, k, batch);
    return true;
}

/* A Triton template matmul's arguments are its operands A [..., M, K] and
 * B [..., K, N], then any epilogue inputs (a bias, a residual) and the
 * output [..., M, N], in an order the template chooses (addmm's bias may
 * come first): the first two tensors that chain (A's last dim is B's
 * second-last) and have an argument of the product's shape among the others
 * are the operands. */
static bool template_matmul_flops(const tr_shapes *sh, double *flops)
{
    for (int a = 0; a < sh->n_tensors; a++)
        for (int b = a + 1; b < sh->n_tensors && dims_known(sh, a, 2); b++) {
            if (!dims_known(sh, b, 2))
                continue;
            const int64_t *A = sh->dims[a], *B = sh->dims[b];
            int ra = sh->rank[a], rb = sh->rank[b];
            if (A[ra - 1] != B[rb - 2])
                continue;
            for (int o = 0; o < sh->n_tensors; o++) {
                int ro = sh->rank[o];
                const int64_t *O = sh->dims[o];
                if (o != a && o != b && ro >= 2 && O[ro - 2] == A[ra - 2] && O[ro - 1] == B[rb - 1])
                    return matmul_flops(sh, a, b, flops);
            }
        }
    return false;
}

static bool gemm_flops(const char *name, const tr_shapes *sh, double *flops, const char **why)
{
    *why = "matmul operand shapes not as expected";
    if (template_matmul_name(name))
        return template_matmul_flops(sh, flops);
    if (strcmp(name, "aten::mm") == 0 || strcmp(name, "aten::bmm") == 0) {
        int r = strcmp(name, "aten::mm") == 0 ? 2 : 3;
        if (!dims_known(sh, 0, r) || !dims_known(sh, 1, r) || sh->rank[0] != r || sh->rank[1] != r)
            return false;
        return matmul_flops(sh, 0, 1, flops);
    }
    if (strcmp(name, "aten::addmm") == 0 || strcmp(name, "aten::baddbmm") == 0)
        return matmul_flops(sh, 1, 2, flops);
    if (strcmp(name, "aten::matmul") == 0)
        return matmul_flops(sh, 0, 1, flops);
    /* linear(input[..., K], weight[N, K], bias) */
    if (!dims_known(sh, 0, 1) || !dims_known(sh, 1, 2) || sh->rank[1] != 2)
        return false;
    const int64_t *x = sh->dims[0], *w = sh->dims[1];
    int rx = sh->rank[0];
    if (x[rx - 1] != w[1])
        return false;
    *flops = mb_gemm_flops(prod(x, rx - 1), (double)w[0], (double)w[1], 1);
    return true;
}

/* Parses "[1, 1]" (or "1") into up to n ints; returns how many. */
static int parse_int_list(const char *s, int64_t *out, int n)
{
    int k = 0;
    while (*s && k < n) {
        while (*s == '[' || *s == ' ' || *s == ',' || *s == '(')
            s++;
        if (*s == ']' || *s == ')' || *s == '\0')
            break;
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s)
            return -1;
        out[k++] = v;
        s = end;
    }
    return k;
}

/* One spatial parameter list for `ns` spatial dims: a list of ns values, or
 * one value applied to all. */
static bool spatial_param(const tr_shapes *sh, int idx, int ns, int64_t *out)
{
    if (idx < 0 || idx >= sh->n_concrete || sh->concrete[idx][0] == '\0')
        return false;
    int64_t v[TR_MAX_DIMS];
    int k = parse_int_list(sh->concrete[idx], v, TR_MAX_DIMS);
    if (k == ns) {
        memcpy(out, v, sizeof *out * (size_t)ns);
        return true;
    }
    if (k == 1) {
        for (int i = 0; i < ns; i++)
            out[i] = v[0];
        return true;
    }
    return false;
}

/* A convolution backward's forward-sized products: one per gradient asked
 * for (input, weight), from its output_mask when recorded, else both. */
static int conv_products(const op_schema *op, const tr_shapes *sh)
{
    if (op->mask < 0 || op->mask >= sh->n_concrete || sh->concrete[op->mask][0] != '[')
        return 2;
    /* "[True, True, False]": grad_input, grad_weight, grad_bias. */
    const char *m = sh->concrete[op->mask];
    const char *second = strchr(m, ',');
    return (strncmp(m + 1, "True", 4) == 0) + (second && strncmp(second + 2, "True", 4) == 0);
}

static bool conv_flops(const op_schema *op, const tr_shapes *sh, double *flops, const char **why)
{
    /* Forward: input [N, C, spatial...], weight [K, C/groups, filter...].
     * Backward: grad_output [N, K, out...], input, weight (or input,
     * grad_output, weight). */
    int grad = op->self_first ? 1 : 0, in = op->backward ? (op->self_first ? 0 : 1) : 0, wt = op->backward ? 2 : 1;
    *why = "convolution input/weight shapes not recorded";
    if (!dims_known(sh, in, 3) || !dims_known(sh, wt, 3) || sh->rank[in] != sh->rank[wt])
        return false;
    int ns = sh->rank[in] - 2;
    const int64_t *x = sh->dims[in], *w = sh->dims[wt];
    if (op->transposed >= 0 && op->transposed < sh->n_concrete &&
        strcmp(sh->concrete[op->transposed], "True") == 0) {
        *why = "transposed convolution (FLOPs not modelled)";
        return false;
    }
    double out_spatial = 1;
    if (op->backward) {
        if (!dims_known(sh, grad, 3) || sh->rank[grad] != ns + 2) {
            *why = "convolution grad_output shape not recorded";
            return false;
        }
        out_spatial = prod(sh->dims[grad] + 2, ns);
    } else {
        int64_t stride[TR_MAX_DIMS], pad[TR_MAX_DIMS], dil[TR_MAX_DIMS];
        if (!spatial_param(sh, op->stride, ns, stride) || !spatial_param(sh, op->padding, ns, pad)) {
            *why = "convolution stride/padding not recorded (Concrete Inputs)";
            return false;
        }
        if (!spatial_param(sh, op->dilation, ns, dil))
            for (int i = 0; i < ns; i++)
                dil[i] = 1;
        for (int i = 0; i < ns; i++) {
            int o = mb_conv_out_dim((int)x[2 + i], (int)w[2 + i], (int)pad[i], (int)stride[i],
                                    (int)dil[i]);
            if (o <= 0) {
                *why = "convolution shapes give no output";
                return false;
            }
            out_spatial *= o;
        }
    }
    double f = mb_conv_flops((double)x[0], (double)w[0], (double)w[1], prod(w + 2, ns), 1,
                             out_spatial, 1);
    if (op->backward)
        f *= conv_products(op, sh);
    *flops = f;
    return true;
}

/* The bytes a matmul op moves at least: each tensor argument once (its
 * operands, a bias; a Triton template's output is among its arguments) and,
 * but for a template, its output, flops / 2K elements of its first
 * operand's type. A skinny product (a decode step's [2, 1024] x [1024,
 * 6144]) is bound by reading its weights, not by its FLOPs: the roofline's
 * other side. 0 when an argument's element type is not recorded. */
double mb_tr_matmul_bytes(const char *name, const tr_shapes *sh, double flops)
{
    double bytes = 0;
    int first = -1;
    for (int t = 0; t < sh->n_tensors; t++) {
        if (sh->rank[t] < 1) /* a scalar, None, a list, more dims than kept */
            continue;
        int es = t < sh->n_types ? mb_tr_dtype_bytes(sh->types[t]) : 0;
        if (es == 0)
            return 0;
        bytes += prod(sh->dims[t], sh->rank[t]) * es;
        if (first < 0)
            first = t;
    }
    if (first < 0 || flops <= 0)
        return 0;
    if (template_matmul_name(name))
        return bytes;
    /* K: the first operand's last dim (mm, bmm, matmul, linear's input), addmm's and baddbmm's second */
    bool bias = strcmp(name, "aten::addmm") == 0 || strcmp(name, "aten::baddbmm") == 0;
    int a = bias ? 1 : 0;
    if (!dims_known(sh, a, 1) || sh->dims[a][sh->rank[a] - 1] <= 0)
        return 0;
    double k = (double)sh->dims[a][sh->rank[a] - 1], out = flops / (2 * k);
    /* an argument past the inputs of the output's size is the output itself (out=: torch.compile's extern
     * mm(a, b, out=buf)), counted above already (a compiled tiny LM's bytes read 25% high) */
    int inputs = strcmp(name, "aten::mm") == 0 || strcmp(name, "aten::bmm") == 0 || strcmp(name, "aten::matmul") == 0
                     ? 2
                     : 3; /* addmm, baddbmm: a bias first; linear and its kind: input, weight, bias */
    for (int t = inputs; t < sh->n_tensors; t++)
        if (sh->rank[t] >= 1 && prod(sh->dims[t], sh->rank[t]) == out)
            return bytes;
    return bytes + out * mb_tr_dtype_bytes(sh->types[a]);
}

int mb_tr_op_products(const char *name, const tr_shapes *sh)
{
    const op_schema *op = schema_of(name);
    return op && op->kind == TR_OP_CONV && op->backward ? conv_products(op, sh) : 1;
}

bool mb_tr_op_flops(const char *name, const tr_shapes *sh, double *flops, const char **why)
{
    const op_schema *op = schema_of(name);
    *why = "not a matmul/convolution/attention op";
    bool from_template = op == NULL && template_matmul_name(name);
    int custom = op == NULL ? custom_matmul_name(name) : 0;
    if (op == NULL && !from_template && !custom && !attention_name(name))
        return false;
    if (sh->n_tensors == 0) {
        *why = "no Input Dims recorded for it";
        return false;
    }
    if (custom == 2) {
        *why = "an extension's matmul whose operand order is not known";
        return false;
    }
    if (from_template || custom)
        return gemm_flops(name, sh, flops, why); /* a custom linear: linear's operands */
    if (op == NULL)
        return attention_flops(name, sh, flops, why);
    if (op->kind == TR_OP_GEMM)
        return gemm_flops(name, sh, flops, why);
    return conv_flops(op, sh, flops, why);
}
