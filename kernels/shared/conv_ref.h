/* conv_ref.h: the host side of the GPU convolution benchmark (conv_cudnn.c),
 * compiled with or without CUDA and unit-tested without a GPU
 * (tests/test_conv_ref.c): the problem (2-D cross-correlation, as cuDNN's
 * CUDNN_CROSS_CORRELATION and every framework's "conv"), its layouts, the
 * random inputs of each direction, the CPU reference of one output element in
 * double, the tolerance, the sampled check, and the comparison of two whole
 * GPU outputs (two algorithms) used for large problems.
 *
 * Tensors (logical shapes; storage order from the layout):
 *   x  N x C x H x W     (NHWC: N, H, W, C innermost)
 *   w  K x C x R x S     (NHWC: K, R, S, C innermost, cuDNN's filter format)
 *   y  N x K x P x Q     P = out_dim(H, R, pad_h, stride_h, dilation), etc.
 * Directions (each one multiply-add per (n,k,c,r,s,p,q), so the same FLOPs):
 *   fwd         y  = conv(x, w)                   inputs x, w
 *   bwd_data    dx = conv_transpose(dy, w)        inputs dy (y's shape), w
 *   bwd_filter  dw = sum over n,p,q of dy * x     inputs x, dy
 */
#ifndef MB_CONV_REF_H
#define MB_CONV_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gemm_common.h" /* mb_elem, mb_elem_store/load */
#include "mb.h"

typedef enum mb_conv_dir { MB_CONV_FWD, MB_CONV_BWD_DATA, MB_CONV_BWD_FILTER } mb_conv_dir;
typedef enum mb_conv_layout { MB_CONV_NCHW, MB_CONV_NHWC } mb_conv_layout;
typedef enum mb_conv_dtype {
    MB_CONV_FP32, /* fp32 data, strict fp32 math (cuDNN CUDNN_FMA_MATH) */
    MB_CONV_TF32, /* fp32 data, TF32 tensor cores allowed (CUDNN_DEFAULT_MATH) */
    MB_CONV_FP16, /* fp16 data, fp32 compute, tensor cores */
    MB_CONV_BF16, /* bf16 data, fp32 compute, tensor cores */
} mb_conv_dtype;

typedef struct mb_conv_problem {
    int n, c, h, w, k, r, s;
    int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
    int p, q; /* output height and width */
    mb_conv_dir dir;
    mb_conv_layout layout;
    mb_conv_dtype dtype;
    mb_elem elem; /* storage type of all three tensors */
    uint64_t seed;
} mb_conv_problem;

/* Parses direction/layout/dtype names ("fwd", "nhwc", "bf16"). MB_EUSAGE. */
int mb_conv_parse(const char *dir, const char *layout, const char *dtype, mb_conv_dir *d,
                  mb_conv_layout *l, mb_conv_dtype *t, mb_err *err);
const char *mb_conv_dir_name(mb_conv_dir d);
const char *mb_conv_dtype_name(mb_conv_dtype t);
const char *mb_conv_layout_name(mb_conv_layout l);

/* Fills p, computing the output size. MB_EUSAGE when a size is not positive
 * or the filter does not fit the padded input. */
int mb_conv_problem_init(mb_conv_problem *p, int n, int c, int h, int w, int k, int r, int s,
                         int pad_h, int pad_w, int stride_h, int stride_w, int dilation,
                         mb_conv_dir dir, mb_conv_layout layout, mb_conv_dtype dtype,
                         uint64_t seed, mb_err *err);

/* cuDNN's legacy convolution API indexes tensors with 32-bit integers: it
 * refuses a tensor of more than INT_MAX elements (PyTorch splits the batch
 * before calling it). MB_ESKIP naming the tensor, before any device work. */
int mb_conv_check_limits(const mb_conv_problem *p, mb_err *err);

/* FLOPs of one convolution (mb_conv_flops, the same for all directions). */
double mb_conv_problem_flops(const mb_conv_problem *p);

/* Elements of tensor 'x', 'w' or 'y'. */
uint64_t mb_conv_elems(const mb_conv_problem *p, char tensor);
/* The tensor the direction writes ('y', 'x' or 'w'); the other two are its inputs. */
char mb_conv_output(const mb_conv_problem *p);

/* Storage index of an element from its logical coordinates. */
uint64_t mb_conv_x_index(const mb_conv_problem *p, int n, int c, int h, int w);
uint64_t mb_conv_w_index(const mb_conv_problem *p, int k, int c, int r, int s);
uint64_t mb_conv_y_index(const mb_conv_problem *p, int n, int k, int pp, int qq);

/* Element idx of input tensor 'x', 'w' or 'y' (dy): a pure function of
 * (seed, tensor, idx), uniform in [-1, 1) rounded to the storage type. */
double mb_conv_input(const mb_conv_problem *p, char tensor, uint64_t idx);
void mb_conv_fill(const mb_conv_problem *p, char tensor, void *dst, uint64_t first,
                  uint64_t count);

typedef struct mb_conv_ref {
    double value, sum_abs, norm2; /* as mb_gemm_ref */
} mb_conv_ref;

/* Output element `out_index` (storage order of the output tensor) computed
 * on the CPU in double from the inputs. */
mb_conv_ref mb_conv_reference(const mb_conv_problem *p, uint64_t out_index);
/* rel_sum * sum_abs + rel_norm * (norm2 + |value|), per dtype. */
double mb_conv_tolerance(const mb_conv_problem *p, const mb_conv_ref *r);

typedef int (*mb_conv_fetch_fn)(void *ctx, uint64_t out_index, double *value, mb_err *err);

/* Checks `samples` output elements (every element when the output is no
 * larger): the first, the last, then positions drawn from the seed. MB_OK or
 * MB_EVERIFY naming the first bad element. *checked gets the count. */
int mb_conv_check(const mb_conv_problem *p, int samples, mb_conv_fetch_fn fetch, void *ctx,
                  int *checked, mb_err *err);

/* Compares two whole outputs of the same problem (two algorithms):
 * ||a - b||_2 <= rel * ||a||_2 and max |a - b| <= 10 * rel * max |a|, with
 * rel per dtype (fp32 1e-4, tf32 and fp16 1e-2, bf16 3e-2). NaN or infinity
 * in either output fails (an overflow in both must not compare equal).
 * MB_OK or MB_EVERIFY with the figures. */
int mb_conv_compare(const mb_conv_problem *p, const void *a, const void *b, uint64_t count,
                    mb_err *err);

#endif
