/* trace.h: internals of the PyTorch profiler (Kineto) trace reader.
 *
 *   trace.c           streaming parse (json_stream.c over zlib chunks), one event at a
 *                     time into the compact state below
 *   trace_classes.c   class rules from configs/gap/kernel_classes.ini
 *   trace_flops.c     FLOPs of matmul/conv ops from recorded shapes
 *   trace_bytes.c     bytes of memory-bound ops from recorded shapes
 *   trace_analysis.c  after the parse: interval merging, steps, FLOP
 *                     attribution, stages and evidence
 *
 * Memory: nothing here grows with the size of the JSON. What grows is one
 * 24-byte record per GPU event (kernel, memcpy, memset), one 24-byte record
 * per kernel-launch call plus its 16-byte [start, end) interval, one 16-byte
 * interval (two for the step table) per host sync call, DataLoader or
 * collective annotation, one record per ProfilerStep and per matmul/conv/
 * attention/memory-bound op and autograd node. docs/traces.md gives the
 * figures. */
#ifndef MB_TRACE_H
#define MB_TRACE_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stages.h"

/* Debug entry for `mlbench trace FILE`: reads the trace and prints one JSON
 * object {path, kind, steps, step_seconds, total_seconds, gpu_utilization,
 * stages[], warnings[], evidence} to `out`. Same errors as mb_trace_read. */
int mb_trace_dump(const char *path, FILE *out, mb_err *err);

struct tr_rules;
/* mb_trace_read and mb_trace_dump with class rules the caller loaded
 * (mb_tr_rules_load) and keeps, instead of compiling configs/gap/
 * kernel_classes.ini for every read: a process that reads many traces
 * (the fuzzer, at hundreds of inputs a second) compiles the regular
 * expressions once. The rules' name cache is used and grows (bounded).
 * NULL rules: load the configured ones. */
int mb_trace_read_with(const char *path, struct tr_rules *rules, mb_run *out, mb_err *err);
int mb_trace_dump_with(const char *path, struct tr_rules *rules, FILE *out, mb_err *err);

/* The longest gap before a queued kernel that is the GPU's own time between
 * kernels (kernel wait): launching the next queued kernel takes a few us
 * (in the 44 unsampled real traces here at most 12 us on a datacenter GPU,
 * an A100's cuDNN layout kernel, and 28.5 us on a laptop's RTX 500 Ada).
 * A longer idle with the next kernel queued waits on something the trace
 * does not show (another stream's event, kernels a sampled trace left out:
 * HTA's trace_filter fixture has queued gaps of up to 59 ms, HTA's "other
 * wait"); it keeps the host's attribution. The step table
 * (trace_analysis.c) and the projection's re-laid steps (project_trace.c)
 * both hold their gaps to it. */
enum { MB_KERNEL_WAIT_MAX_NS = 50000 };

/* ---- class rules (trace_classes.c) ---------------------------------------- */

/* Fixed kernel class indices; the ini may add more after TR_CLASS_FIXED. */
enum {
    TR_CLASS_OTHER = 0,
    TR_CLASS_GEMM,
    TR_CLASS_CONV,
    TR_CLASS_NCCL,
    TR_CLASS_MEMCPY,
    TR_CLASS_MEMSET,
    TR_CLASS_FIXED,
    TR_MAX_CLASSES = 32, /* TR_EV_CLASS holds the index */
};

enum tr_rt_kind { TR_RT_NONE = 0, TR_RT_LAUNCH, TR_RT_SYNC, TR_RT_BLOCKING, TR_RT_SETUP };
enum tr_ann_kind { TR_ANN_NONE = 0, TR_ANN_STEP, TR_ANN_DATALOADER, TR_ANN_COLLECTIVE, TR_ANN_OPTIMIZER,
                   TR_ANN_COMPILE };
enum tr_rule_set { TR_SET_KERNEL = 0, TR_SET_RUNTIME, TR_SET_ANNOTATION, TR_SET_MEMOP, TR_SET_DISPATCH, TR_N_SETS };
/* [dispatch_op] key: an op that does no work of its own (a view, an empty tensor): what dispatching costs */
enum { TR_DISPATCH_METADATA = 1 };
/* [memory_op] keys: how a memory-bound op's output is counted (trace_bytes.c). */
enum tr_memop_model {
    TR_MOP_NONE = 0,
    TR_MOP_OUT,      /* reads its tensor inputs, writes one output the size of the largest */
    TR_MOP_INPLACE,  /* reads its tensor inputs, its output is one of them */
    TR_MOP_REDUCE,   /* reads its tensor inputs, its output is small (not counted) */
    TR_MOP_GRADIENT, /* reads its inputs but the largest (a shape only), writes a gradient that size */
    TR_MOP_GATHER,   /* per index element, reads and writes one row of its table (embedding) */
    TR_MOP_PICK,     /* per index element, reads one element of its values (nll_loss) */
    TR_MOP_ARGS,     /* a generated kernel's arguments, outputs among them: each tensor once (Inductor) */
    TR_MOP_UPDATE,   /* reads its tensor inputs, writes its first back (an optimizer's in-place update) */
    TR_MOP_BAG,      /* per index element, reads one row of its table; the bags written not counted (EmbeddingBag).
                      * The last model: mb_tr_op_bytes refuses any value past it */
};

enum { TR_USER_RANGES = 32 };

typedef struct tr_rule {
    int value;  /* class index, tr_rt_kind, tr_ann_kind or tr_memop_model */
    regex_t re;
} tr_rule;

typedef struct tr_cache_entry {
    char *name;       /* NULL = free slot; len bytes, may hold NULs */
    size_t len;
    uint64_t hash;
    int set;
    int value;
} tr_cache_entry;

typedef struct tr_rules {
    char path[4096];
    char *class_names[TR_MAX_CLASSES];
    int n_classes;
    int layout_class; /* the class "layout" (cuDNN's NCHW<->NHWC conversions), -1 none: its kernels are "other",
                         flagged TR_EV_LAYOUT */
    tr_rule *rules[TR_N_SETS];
    int n_rules[TR_N_SETS];
    /* Names repeat (a training step launches the same kernels every step),
     * and glibc's regexec is slow on 500-character kernel names, so each
     * distinct name is classified once. Bounded: past TR_CACHE_MAX distinct
     * names the rules are evaluated every time. */
    tr_cache_entry *cache;
    size_t cache_cap, cache_used;
} tr_rules;

/* Loads the rules from `path` (NULL: configs/gap/kernel_classes.ini via
 * mb_config_path). MB_EUSAGE naming file:line on a bad rule. */
int mb_tr_rules_load(tr_rules *r, const char *path, mb_err *err);
void mb_tr_rules_free(tr_rules *r);
/* Classifies a NUL-terminated name with the rules of `set`; 0 when no rule
 * matches (TR_CLASS_OTHER / TR_RT_NONE / TR_ANN_NONE). */
int mb_tr_classify(tr_rules *r, int set, const char *name, size_t len);

/* ---- FLOPs of ops (trace_flops.c) ----------------------------------------- */

/* Op families: matmul, convolution, memory-bound ([memory_op]), attention
 * (SDPA, FlashAttention, memory-efficient, cuDNN), and TR_OP_BWD, an
 * autograd node of the backward pass ("MmBackward0", "autograd::engine::
 * evaluate_function: MmBackward0"), which does no work of its own but links
 * the kernels under it to their forward op by its "Sequence number". */
enum mb_tr_op_kind { TR_OP_NONE = 0, TR_OP_GEMM, TR_OP_CONV, TR_OP_MEM, TR_OP_ATTN, TR_OP_BWD, TR_N_OP_KINDS };

/* A kernel torch.compile generated records every argument: a fusion of a
 * dozen ops passes tens, a foreach kernel over a model's parameters
 * hundreds. Only the parser's current event holds these (about 21 KB). */
#define TR_MAX_TENSORS 256
#define TR_MAX_DIMS 6
/* cuDNN's attention backward keeps is_causal at argument 14 */
#define TR_MAX_CONCRETE 16
#define TR_TYPE_LEN 24
#define TR_CONCRETE_LEN 40
/* rank of an input recorded as a list of shapes (a TensorList, "Input Dims"
 * [[[4, 4], [4]], ...]): only its total element count is kept. */
#define TR_RANK_LIST (-2)

/* The shapes a cpu_op recorded (args "Input Dims", "Input type",
 * "Concrete Inputs"), truncated to the first few inputs. */
typedef struct tr_shapes {
    int n_tensors;                                /* entries of Input Dims kept */
    bool more;                                    /* Input Dims had more entries than TR_MAX_TENSORS */
    int rank[TR_MAX_TENSORS];                     /* -1 = more dims than kept, TR_RANK_LIST */
    int64_t dims[TR_MAX_TENSORS][TR_MAX_DIMS];
    double list_numel[TR_MAX_TENSORS];            /* TR_RANK_LIST: elements of all the list's tensors */
    int n_types;
    char types[TR_MAX_TENSORS][TR_TYPE_LEN];
    int n_concrete;
    char concrete[TR_MAX_CONCRETE][TR_CONCRETE_LEN];
} tr_shapes;

/* Which family an op name belongs to (aten::mm, aten::addmm, aten::bmm,
 * aten::baddbmm, aten::matmul, aten::linear -> GEMM; aten::convolution,
 * aten::_convolution, aten::conv1d/2d/3d, aten::cudnn_convolution,
 * aten::miopen_convolution, aten::convolution_backward -> CONV;
 * aten::scaled_dot_product_*, aten::_cudnn_attention_*,
 * aten::_flash_attention_*, aten::_efficient_attention_* -> ATTN). */
int mb_tr_op_kind(const char *name);
/* FLOPs of one matmul/convolution/attention op from its shapes. Returns
 * false with *why set when the shapes needed were not recorded or do not
 * fit the op. */
bool mb_tr_op_flops(const char *name, const tr_shapes *sh, double *flops, const char **why);
/* A matmul op's bytes moved at least (its arguments once and its output), given its FLOPs; 0: unknown. */
double mb_tr_matmul_bytes(const char *name, const tr_shapes *sh, double flops);
/* How many forward-sized products an op with FLOPs counted: a convolution
 * backward's gradients asked for (1 or 2), else 1. */
int mb_tr_op_products(const char *name, const tr_shapes *sh);

/* An attention op's sizes as its query and key record them: query [b, h,
 * l, d] (or [b, l, h, d], as the variant takes it), key/value s long. */
typedef struct tr_attention {
    double b, h, l, s, d;
    bool backward;
    int causal;    /* 1 causal, 0 not, -1 not recorded (Concrete Inputs) */
    int esize;     /* bytes per query element, 0 unknown */
} tr_attention;
/* The sizes of an attention op (aten::scaled_dot_product_*,
 * aten::_cudnn_attention_*, aten::_flash_attention_*,
 * aten::_efficient_attention_*, forward or backward: a backward op's query
 * and key follow the output's gradient). False when the name is no
 * attention op or its query/key shapes were not recorded. Its FLOPs:
 * mb_proj_sdpa_flops (project.h). */
bool mb_tr_attention_shape(const char *name, const tr_shapes *sh, tr_attention *a);
/* mlbench dtype ("fp32", "fp16", "bf16", "fp64", "fp8", "int8") of a
 * PyTorch scalar type name ("float", "c10::Half", ...); NULL if unknown. */
/* A complex element type (c10::complex<double>): a product of two is 4 real products and 2 sums, so a
 * matmul's FLOPs are 4 times its shapes' (zgemm's 8mnk against dgemm's 2mnk). */
bool mb_tr_complex_type(const char *type);
const char *mb_tr_dtype_of_torch(const char *type);
/* Bytes per element of a PyTorch scalar type name as "Input type" records it
 * ("float" 4, "c10::Half" 2, "long int" 8, "bool" 1, ...); 0 when the name
 * is not a tensor's ("Scalar", "TensorList", "", unknown). */
int mb_tr_dtype_bytes(const char *type);
/* ---- bytes of memory-bound ops (trace_bytes.c) ---------------------------- */
/* Bytes a memory-bound op moves, from its recorded shapes: the sum over its
 * tensor inputs of numel x element size, plus for TR_MOP_OUT one output the
 * size of the largest input (TR_MOP_INPLACE: the output is an input;
 * TR_MOP_UPDATE: the first input written back too). A lower bound: an
 * in-place op (but an update) also writes what it read, a reduction's
 * (TR_MOP_REDUCE) output is not counted, and a kernel may read an input
 * more than once. The indexed models count what their index selects:
 * TR_MOP_GATHER one row of the table read and written per index element,
 * TR_MOP_BAG one row read (the bags written are fewer than the indices),
 * TR_MOP_PICK one value read. A TensorList takes the element size of the op's
 * first plain tensor input (PyTorch does not record a list's dtype). Returns
 * false with *why set when no byte count follows from the shapes. */
bool mb_tr_op_bytes(int model, const tr_shapes *sh, double *bytes, const char **why);
/* An op whose bytes mb_tr_op_bytes left unknown only because its TensorLists
 * recorded no element type (no plain tensor input gives it): its bytes with
 * 1-byte elements, which a kernel's element size multiplies. */
bool mb_tr_op_list_unit_bytes(int model, const tr_shapes *sh, double *unit);
/* The element size a kernel's name states, in bytes (0: none): PyTorch's
 * copy kernels that move elements by size (CatArrayBatchedCopy<OpaqueType<2u>,
 * ...>) or name their element type (CatArrayBatchedCopy<float, ...>), and
 * the foreach kernels' functor, whose first template argument is the lists'
 * element type (multi_tensor_apply_kernel<..., BinaryOpScalarFunctor<
 * c10::BFloat16, 1, 1, 0>, ...>). */
int mb_tr_kernel_elem_bytes(const char *name, size_t len);
/* The math a kernel's name says it runs (cuBLAS/cuDNN/CUTLASS spell the
 * dtypes into their names): an MB_PM_* of project.h, -1 when it says none.
 * One reading for the trace's stages and --target's kernel projection. */
int mb_tr_kernel_math(const char *name, size_t len);
/* A kernel whose name says it runs TF32 math on fp32 data: cuBLAS/cuDNN's
 * xmma kernels (sm80_xmma_gemm_f32f32_tf32f32_f32_..., sm90_..._tf32f32_...)
 * and CUTLASS's Ampere ones (cutlass_80_tensorop_s1688gemm_...). PyTorch
 * records such ops as float (torch has no tf32 dtype): with
 * torch.backends.cuda.matmul.allow_tf32 or set_float32_matmul_precision
 * ("high"), and cuDNN's allow_tf32 (on by default), fp32 matmuls and
 * convolutions run on the tensor cores. */
bool mb_tr_kernel_tf32(const char *name, size_t len);
/* A kernel whose name says it runs fp32 math on the CUDA cores, no tensor
 * core: cuBLAS's and CUTLASS's SIMT GEMMs (ampere_sgemm_*, cutlass_80_simt_
 * sgemm_*, magma_sgemmEx_kernel, sm80_xmma_gemm_f32f32_f32f32_f32_*) and
 * cuDNN's fp32 convolutions (scudnn_*, implicit_convolve_sgemm): fp32
 * matmuls with TF32 off (PyTorch's default
 * for matmuls since 1.12) or a GPU without TF32. */
bool mb_tr_kernel_fp32(const char *name, size_t len);
/* The same as a small index (0 = unknown) and back: ops store the index. */
int mb_tr_dtype_index(const char *mb_dtype);
const char *mb_tr_dtype_name(int index);

/* ---- the state the parse fills (trace.c) and the analysis reads ---------- */

/* One GPU event: start ns, (duration ns << 13 | TR_EV_SMALL_GRID | element size << 8 |
 * TR_EV_TF32 | class), correlation id. Kept as three int64 so
 * trace_analysis.c can merge intervals in place as pairs. The element size
 * (bytes, 0 = not named) is what a kernel's name says of its elements
 * (mb_tr_kernel_elem_bytes); TR_EV_TF32, that it runs TF32 math
 * (mb_tr_kernel_tf32); TR_EV_LAYOUT, that it converts a tensor's layout
 * (the rules' "layout" class, counted as "other"); TR_EV_FP32, that it
 * runs fp32 math on the CUDA cores (mb_tr_kernel_fp32); TR_EV_SMALL_GRID,
 * that it ran on fewer thread blocks than half its GPU's SMs (its grid
 * against deviceProperties' numSms; NCCL's kernels left out); the class
 * takes the low 5 bits (TR_MAX_CLASSES). */
#define TR_EV_WORDS 3
#define TR_EV_TF32 0x80
#define TR_EV_LAYOUT 0x40
#define TR_EV_FP32 0x20
#define TR_EV_CLASS 0x1f
#define TR_EV_SMALL_GRID 0x1000
#define TR_EV_DUR_SHIFT 13
#define TR_DUR_MAX ((INT64_C(1) << 50) - 1)
/* One copy or collective moving more than 2^53 bytes (8 PiB) is not a real
 * event: its byte count is ignored (the event counts as unsized), so sums and
 * the per-call block size stay exact integers that fit a long long. */
#define TR_MAX_EVENT_BYTES 9007199254740992.0

enum tr_dir { TR_DIR_H2D = 0, TR_DIR_D2H, TR_DIR_D2D, TR_DIR_P2P, TR_DIR_UNKNOWN, TR_N_DIRS };
enum tr_mem { TR_MEM_PAGEABLE = 0, TR_MEM_PINNED, TR_MEM_DEVICE, TR_MEM_UNKNOWN, TR_N_MEMS };

typedef struct tr_copy_stat {
    long long count;
    long long sized;   /* how many had a byte count */
    double bytes;
    int64_t ns;
    int64_t sized_ns;  /* time of the events with a byte count */
} tr_copy_stat;

#define TR_MAX_STREAMS 64

typedef struct tr_device {
    int64_t id;
    int64_t *ev;       /* TR_EV_WORDS per event */
    size_t n_ev, cap_ev;
    long long kernels, memcpys, memsets;
    int64_t streams[TR_MAX_STREAMS];
    int n_streams;
    bool streams_overflow;
    /* the whole trace, by the kernels' names (the device's evidence) */
    int64_t class_ns[TR_MAX_CLASSES];
    long long class_count[TR_MAX_CLASSES];
    tr_copy_stat copies[TR_N_DIRS][TR_N_MEMS];
    tr_copy_stat memset;
    /* what the steps hold, a kernel an op with FLOPs took in its op's
     * family (the stages; trace_analysis.c, count_in_steps) */
    int64_t step_class_ns[TR_MAX_CLASSES];
    long long step_class_count[TR_MAX_CLASSES];
    int64_t step_layout_ns; /* ... of them layout conversions (TR_EV_LAYOUT), whatever their class */
    long long step_layout_count;
    int64_t step_fp32_ns;   /* ... of them fp32 math on the CUDA cores (TR_EV_FP32) */
    long long step_fp32_count;
    int64_t step_small_ns;  /* ... of them on fewer blocks than half the SMs (TR_EV_SMALL_GRID) */
    long long step_small_count;
    int sms;                /* deviceProperties' numSms for this device: 0 not looked up yet, -1 unknown */
    tr_copy_stat step_copies[TR_N_DIRS][TR_N_MEMS];
    tr_copy_stat step_memset;
} tr_device;

typedef struct tr_named_stat {
    char name[64];
    long long count;
    int64_t ns;
} tr_named_stat;

#define TR_MAX_NAMED 32

typedef struct tr_named_table {
    tr_named_stat s[TR_MAX_NAMED];
    int n;
    tr_named_stat rest;    /* names past TR_MAX_NAMED */
    long long count;
    int64_t ns;
} tr_named_table;

typedef struct tr_coll_stat {
    char name[24];     /* allreduce, allgather, reducescatter, broadcast, alltoall, sendrecv, reduce, ... */
    char dtype[16];    /* float, half, bf16, ... ("" = unknown) */
    long long calls;
    long long sized;   /* calls with a byte count */
    double bytes;
    int64_t ns;
    int64_t sized_ns;
    int ranks;         /* max Group size seen (0 = unknown) */
} tr_coll_stat;

#define TR_MAX_COLLS 32

/* A copy, memset or collective kernel as the parse saw it, so that its
 * statistics can be counted again over the steps' windows once they are
 * known (trace_analysis.c, count_in_steps): the stages hold what the steps
 * hold, as the step table does. */
enum tr_xfer_kind { TR_XFER_COPY = 0, TR_XFER_MEMSET, TR_XFER_COLL };

typedef struct tr_xfer {
    int64_t ts, dur;
    double bytes;      /* -1: no byte count */
    int device;        /* index into tr_state.devices */
    short coll;        /* TR_XFER_COLL: index into tr_state.colls */
    signed char kind;  /* tr_xfer_kind */
    signed char dir, mem; /* TR_XFER_COPY */
} tr_xfer;
#define TR_MAX_WHY 32
#define TR_MAX_ANN_NAMES 64 /* distinct names of the user's own annotations kept */

typedef struct tr_step {
    long long number;  /* N of ProfilerStep#N (-1 if none) */
    int64_t start, end;
    int64_t pid;       /* the process that recorded it (ProfilerStep#N; 0 unknown) */
} tr_step;

/* A launch call this long is no launch's own cost (module loading on a
 * kernel's first launch, lazy initialisation, waiting for room in the queue). */
#define TR_LONG_LAUNCH_NS 10000000
/* A kernel's first launch this long loads its module (cuModuleLoad, the
 * lazy loading of CUDA 11.7 on): set-up. An RTX 3090's first ResNet-50
 * inference: 22 first launches of 27 us to 29 ms, 98 ms in all, the other
 * 111 launches 7 us at the median, none over 100 us; the 9 first launches
 * between 0.12 and 8.8 ms (38.7 ms) read as a launch-bound step. */
#define TR_FIRST_LAUNCH_NS 100000

#define TR_MAX_HOST_THREADS 64

/* An op's first call this long, and this many times its later calls' mean
 * (two at least), loads a library or builds its kernels (cuDNN's first
 * convolution, cuBLAS's handle, lazy module loading in an elementwise op's
 * first launch): set-up. A cold H200 ResNet-18 at batch 1: the first
 * aten::cudnn_convolution 141 ms (20.5 ms of it in CUDA calls), the 19
 * others 3 ms; the first aten::relu_ 16.2 ms, the 16 others 17 us; 227 ms of
 * 316 read as host code and "Host-overhead (launch) bound". */
#define TR_FIRST_CALL_NS 1000000
#define TR_FIRST_CALL_RATIO 20

/* An op name's calls (one per distinct name, by a 64-bit hash of it): its
 * earliest call, and the count and time of them all. */
typedef struct tr_op_calls {
    uint64_t hash; /* 0: a free slot */
    int64_t ts, dur, total_ns;
    long long count;
    char name[48];
} tr_op_calls;

typedef struct tr_launch {
    int64_t thread;    /* pid/tid key */
    int64_t ts;
    int64_t corr;
} tr_launch;

/* A kernel's earliest event in the trace (one per distinct name, by a
 * 64-bit hash of it): its launch loads the kernel's module. */
typedef struct tr_first_kernel {
    uint64_t hash; /* 0: a free slot */
    int64_t ts, corr;
} tr_first_kernel;

/* tr_flop_op.flags */
enum {
    TR_OPF_PARENT = 1,        /* encloses an op of its family whose shapes gave a count: not a leaf */
    TR_OPF_PARENT_ANY = 2,    /* encloses an op of its family, counted or not */
    TR_OPF_BWD_OUTER = 4,     /* TR_OP_BWD: encloses another autograd node */
    TR_OPF_BWD_TENSOR = 8,    /* TR_OP_BWD: encloses a matmul/conv/attention op */
    TR_OPF_LINKED = 16,       /* FLOPs from the forward op its autograd node belongs to */
    TR_OPF_IN_BWD = 32,       /* inside an autograd node (a backward op) */
    TR_OPF_FROM_BWD = 64,     /* a forward convolution's FLOPs from its backward op's shapes */
    TR_OPF_SPARSE = 128,      /* a matmul around a sparse-only op: a sparse operand, no FLOPs from its shape */
};

/* Why an op or kernel has no count: the link to its forward op failed. */
enum { TR_LINK_NONE = 0, TR_LINK_NOT_BWD, TR_LINK_NO_FWD, TR_LINK_AMBIGUOUS, TR_LINK_FAMILY, TR_LINK_N };

/* An op's interval on its thread. */
typedef struct tr_mark {
    int64_t thread, start, end;
} tr_mark;

typedef struct tr_flop_op { /* 64 bytes: one per op of a family (above), with or without a count */
    int64_t thread;
    int64_t start, end;
    double flops;       /* FLOPs; TR_OP_MEM: bytes moved (mb_tr_op_bytes); < 0: no count (why) */
    int64_t gpu_ns;     /* filled by the analysis */
    int32_t seq;        /* autograd "Sequence number" (-1 none, or past INT32_MAX; the analysis passes it down) */
    float bytes;        /* TR_OP_GEMM with FLOPs: its bytes moved at least (mb_tr_matmul_bytes); 0 unknown */
    int32_t kernels;    /* filled by the analysis */
    int32_t parent;     /* the analysis: index of the enclosing op on its thread, -1 none */
    uint8_t kind;       /* mb_tr_op_kind */
    uint8_t dtype;      /* index into tr_dtype_names (0 = unknown) */
    uint8_t flags;      /* TR_OPF_* */
    uint8_t why;        /* no count: index into tr_state.why (0 = none) */
    uint8_t link;       /* the analysis: TR_LINK_* when a backward op found no forward op */
    uint8_t family;     /* the analysis: TR_OP_BWD given FLOPs: its forward op's kind */
    uint8_t products;   /* forward-sized products its FLOPs count (mb_tr_op_products); 0: no count */
    /* TR_OP_MEM whose TensorLists recorded shapes but no element type
     * (aten::cat, foreach ops): flops holds -(its bytes with 1-byte
     * elements) until the kernels it launched name one element size (the
     * analysis): TR_ELEM_* */
    uint8_t per_elem;
} tr_flop_op;

/* tr_flop_op.per_elem: not such an op (0), no kernel has named a size yet,
 * its kernels named two sizes (a list of two dtypes: bytes stay unknown), or
 * TR_ELEM_SIZE + the size its kernels named. */
enum { TR_ELEM_PENDING = 1, TR_ELEM_MIXED = 2, TR_ELEM_SIZE = 16 };

/* What the host was doing, as [start, end) pairs, for the step table: the
 * GPU's idle time is attributed to the first of these kinds (in this order)
 * whose interval covers it, else to "other host code". Set-up comes before
 * the collective that holds it: a 2.6 ms allocation inside the 7th of 12
 * _c10d_functional::all_to_all_single calls (2x A100 MoE) is the
 * allocator's, as a communicator's creation in the first call is set-up. */
enum tr_host_kind { TR_HOST_DATA = 0, TR_HOST_SYNC, TR_HOST_SETUP, TR_HOST_COLL, TR_HOST_LAUNCH, TR_N_HOST };

typedef struct tr_ivlist {
    int64_t *iv; /* [start, end) pairs */
    size_t n, cap;
} tr_ivlist;

/* Host-side classes of a CPU-only run (trace_cpu.c), in priority order after
 * data loading: an instant covered by several counts in the first. Matmuls
 * and convolutions come before the optimizer: one whose step evaluates a
 * closure (LBFGS) runs the model's forward and backward inside it. A
 * collective comes last: gloo runs it on threads of its own, beside the
 * backward that DDP overlaps it with, so only the instants no op covers
 * (the training thread waiting for it) are its exposed time. */
enum tr_cpu_class { TR_CPU_CONV = 0, TR_CPU_GEMM, TR_CPU_OPT, TR_CPU_MEM, TR_CPU_OPS, TR_CPU_COLL, TR_CPU_N };

/* One host collective event of a CPU-only run (gloo:all_reduce,
 * c10d::allreduce_, record_param_comms), with the size its args record:
 * trace_cpu.c counts each call once and splits the step's collective time
 * by kind (docs/traces.md, "CPU-only traces"). */
typedef struct tr_host_coll {
    int64_t thread, start, end;
    bool runs;         /* the backend's own event (gloo:all_reduce, on a thread of gloo's): the work itself,
                          where c10d::allreduce_ on the caller's thread is its request */
    double bytes;      /* as nccl-tests counts them; -1 = not recorded */
    int32_t ranks;     /* "Group size"; 0 = not recorded */
    char name[20];     /* allreduce, allgather, ..., barrier, unknown */
    char dtype[12];    /* float, half, bf16, double; "" = unknown */
} tr_host_coll;

typedef struct tr_state {
    tr_rules *rules;     /* own_rules, or the caller's (mb_trace_read_with) */
    tr_rules own_rules;
    /* What the parse saw. */
    long long events, complete_events, skipped_events, other_phase_events;
    int64_t span_start, span_end; /* over complete events; start > end = none */
    int64_t host_start;  /* the first host event's start (a call, an op, an annotation); INT64_MAX: none */
    long long pre_window_events; /* GPU events left out as work from before the profiler's window */
    int64_t pre_window_ns;       /* ... their GPU time */
    int64_t pre_window_end;      /* ... where the last of them ended */
    long long profiler_ranges; /* cuda_profiler_range events (the CUPTI range profiler) */
    long long other_runtime_calls; /* events of another accelerator's "*_runtime" category */
    long long runtime_calls;       /* cuda_runtime / cuda_driver events: CUDA activity was recorded */
    long long hip_calls;           /* ... of them named hip*: ROCm's HIP, an AMD GPU */
    long long copy_calls;          /* ... of them copies and memsets (cudaMemcpyAsync, cuMemsetD32) */
    char other_runtime[32];        /* the first such category, "mtia_runtime" */
    int64_t profiler_end; /* the end of the profiler's own span (cat "Trace"); INT64_MIN: none in the trace */
    double json_bytes;
    bool have_device_props, have_dist_info, have_base_time, have_schema;
    long long base_time_ns, schema_version;
    int record_shapes; /* -1 unknown, 0, 1 */
    cJSON *device_props; /* copies of the small top-level objects */
    cJSON *dist_info;
    /* GPU side. */
    tr_device *devices;
    int n_devices;
    long long gpu_events_without_device;
    tr_coll_stat colls[TR_MAX_COLLS];
    int n_colls;
    long long nccl_kernels_unsized;
    tr_xfer *xfers;      /* every copy, memset and collective kernel */
    size_t n_xfers, cap_xfers;
    /* Host side. */
    tr_named_table launch, sync, blocking;
    /* launch calls in set-up (launch_setup): TR_LONG_LAUNCH_NS or more (a
     * first launch loading its module, lazy initialisation, a full launch
     * queue) or a kernel's first launch of TR_FIRST_LAUNCH_NS or more; not a
     * launch's cost */
    long long long_launches;
    int64_t long_launch_ns, longest_launch_ns;
    /* allocation and set-up calls (host_iv[TR_HOST_SETUP]): the [runtime]
     * setup names, the long launches, and any other runtime call of
     * TR_LONG_LAUNCH_NS or more that neither waits nor copies */
    tr_named_table setup;
    long long overhead_records;          /* of them, CUPTI's overhead records (module loading, buffers) */
    int64_t compile_thread, compile_end; /* the last compile annotation's (TR_ANN_COMPILE): nested ones are its */
    int64_t coll_thread, coll_end;       /* the last collective counted on the host: nested ones are its */
    int64_t capture_begin;               /* a stream capture's cudaStreamBeginCapture start; -1: none open */
    long long captures;                  /* CUDA/HIP graph captures (BeginCapture ... EndCapture) in the trace */
    /* per host thread (the first TR_MAX_HOST_THREADS): the last event's start and end and the latest end so
     * far, for the gap before a TorchScript fusion group's call (its fuser compiling) */
    struct tr_thread_at {
        int64_t thread, prev_ts, prev_end, frontier;
    } host_threads[TR_MAX_HOST_THREADS];
    int n_host_threads;
    long long optimizer_annotations;     /* Optimizer.step#... (TR_ANN_OPTIMIZER): the loop steps an optimizer */
    long long compiled_regions;          /* "Torch-Compiled Region", "CompiledFunction": torch.compile's code runs */
    long long fused_optimizer;           /* a fused optimizer runs: Optimizer.step#Fused... (apex, DeepSpeed,
                                            TorchRec's FusedAdam) or torch's aten::_fused_adam(w)_/_fused_sgd_ */
    long long foreach_optimizer;         /* aten::_foreach_* ops inside an Optimizer.step: a foreach optimizer */
    long long uncat_events, uncat_ops;   /* complete events without a "cat"; of them, named as ops ("ns::op", an
                                            autograd node) */
    /* GEMM and convolution kernel time by the math their names say (mb_tr_kernel_math's order: fp32, tf32,
     * fp16, bf16, fp8, int8, fp64; the last, a name that says none) */
    int64_t matmul_math_ns[8];
    int64_t opt_thread, opt_end;         /* the last Optimizer.step annotation's thread and end */
    tr_named_table cuda_sync_events;
    tr_named_table small_grids; /* kernels on fewer blocks than half their GPU's SMs, by short name (whole trace) */
    long long dataloader_count;
    long long dataloader_in_process; /* of them, _SingleProcessDataLoaderIter's: num_workers=0 */
    int64_t dataloader_ns;
    int64_t *host_wait;      /* [start, end) pairs */
    size_t n_host_wait, cap_host_wait;
    tr_ivlist host_iv[TR_N_HOST];
    tr_ivlist sync_calls;    /* [start, end) of each [runtime] sync call, unmerged: the closing one is told apart */
    tr_ivlist coll_calls;    /* ... of each collective call on the host, its outermost named op (count_collective) */
    long long coll_host_count;
    long long cpu_op_events; /* cpu_op records (aten ops): the profiler's host cost is per op */
    long long gpu_only_ops;  /* of them, ops only a GPU runs (cuDNN's, MIOpen's) */
    long long gpu_labels;    /* metadata lanes Kineto labels "GPU N" (process_labels) */
    char gpu_only_op[48];    /* the first one's name */
    long long cpu_only_ops;  /* ops only a CPU runs (oneDNN's, NNPACK's) */
    long long backward_ops;  /* ops and autograd nodes named for the backward pass: none in inference */
    tr_step *steps;
    size_t n_steps, cap_steps;
    /* the host's Optimizer.step annotations: a trace without ProfilerSteps
     * has its steps cut at them (trace_analysis.c, steps_from_optimizer) */
    tr_step *opt_marks;
    size_t n_opt_marks, cap_opt_marks;
    /* the host's other annotations (record_function of the user's own, no
     * rule of [annotation] matched), each its name's index in ann_names as
     * .number: without ProfilerSteps or optimizer steps, one that recurs
     * over most of the trace cuts the steps (steps_from_annotation) */
    tr_step *ann_marks;
    size_t n_ann_marks, cap_ann_marks;
    char ann_names[TR_MAX_ANN_NAMES][64];
    int n_ann_names;
    bool steps_from_optimizer, steps_from_annotation;
    bool steps_from_markers; /* ProfilerSteps that hold nothing: each step from one to the next */
    char step_annotation[64];   /* the annotation that cut them */
    /* the user's iteration annotation when each holds 2+ optimizer steps whole (a GAN's train_step), said */
    long long opt_steps_per_ann, opt_ann_count;
    char opt_ann_name[64];
    char step_windows_said[96]; /* "train_step annotations" */
    int64_t before_first_step_ns, after_last_step_ns; /* what those steps leave out */
    tr_launch *launches;
    size_t n_launches, cap_launches;
    tr_first_kernel *first_kernels; /* open addressing, cap a power of 2 (0: none yet) */
    size_t n_first_kernels, cap_first_kernels;
    tr_op_calls *op_calls;          /* the same, by op name */
    size_t n_op_calls, cap_op_calls;
    /* launch i (file order) in set-up, no launch's cost: TR_LONG_LAUNCH_NS or
     * more, or a kernel's first launch of TR_FIRST_LAUNCH_NS or more
     * (mb_tr_first_launches); NULL: the long ones only */
    unsigned char *launch_setup;
    /* correlation ids of graph replays (cudaGraphLaunch): their kernels were
     * captured earlier, not launched by the ops around the replay; sorted by
     * mb_tr_first_launches */
    int64_t *graph_corrs;
    size_t n_graph_corrs, cap_graph_corrs;
    /* asynchronous copy and memset calls (cudaMemcpyAsync, cudaMemsetAsync: a runtime call with Memcpy or
     * Memset in its name that no [runtime] kind takes): their correlation ids join the copies to the step
     * whose host code enqueued them (the timeline's cut); with the correlation ids of the copies between the
     * device and pageable memory, the calls that wait as a blocking copy does (mb_tr_pageable_copy_waits) */
    struct tr_async_copy {
        int64_t ts, end, corr;
        char name[32];
    } *async_copies;
    size_t n_async_copies, cap_async_copies;
    int64_t *pageable_corrs;
    size_t n_pageable_corrs, cap_pageable_corrs;
    /* the durations of the ops [dispatch_op] names (aten::view, aten::empty, ...): the host's cost of
     * dispatching an op that does nothing, profiler included, on this machine */
    int64_t *dispatch_durs;
    size_t n_dispatch_durs, cap_dispatch_durs;
    int64_t *op_ts;          /* each op's start (cpu_op_events of them): the ops a step's windows hold */
    size_t n_op_ts, cap_op_ts;
    tr_flop_op *flop_ops;
    size_t n_flop_ops, cap_flop_ops;
    long long ops_without_shapes[TR_N_OP_KINDS]; /* by mb_tr_op_kind */
    char shape_why[TR_N_OP_KINDS][96];           /* first reason a shape did not give FLOPs/bytes */
    /* Distinct "op: reason" texts of ops whose shapes gave no count
     * (tr_flop_op.why indexes them; 0 = none, the last one takes the rest). */
    char why[TR_MAX_WHY][96];
    int n_why;
    long long ops_with_dims;                     /* cpu_ops that recorded Input Dims */
    /* Optional: each complete event is also shown to this function
     * (mb_trace_walk, for the kernel-level projection of project_trace.c). */
    struct tr_event_view_hook *hook;
    tr_ivlist cpu_iv[TR_CPU_N];                  /* host events by tr_cpu_class (trace_cpu.c) */
    tr_ivlist cpu_backward;                      /* autograd::engine::evaluate_function events: the backward */
    tr_ivlist cpu_dense_embedding;               /* an embedding's dense backward (trace_cpu.c dense_embedding) */
    /* the loop's own record_function ranges by name (trace_cpu.c user_range): the one a step's long stretches
     * with no op lie in is named; TR_USER_RANGES names at most, the rest not kept */
    struct tr_user_range {
        char name[64];
        tr_ivlist iv;
    } user_ranges[TR_USER_RANGES];
    int n_user_ranges;
    long long cpu_count[TR_CPU_N];
    /* memory-bound ops by name ([memory_op]) whose shapes gave no bytes: the memory-bound class when no op
     * recorded shapes (a torch without Kineto), else the other ops' (mb_tr_cpu_stages) */
    tr_ivlist cpu_mem_unsized;
    long long cpu_mem_unsized_count;
    bool array_form;                             /* a bare JSON array (torch.autograd.profiler without Kineto) */
    tr_host_coll *host_colls;                    /* CPU-only: the host collectives with their sizes */
    size_t n_host_colls, cap_host_colls;
    /* ops only a sparse tensor calls (mb_tr_sparse_marker): a matmul around one multiplies a sparse operand */
    tr_mark *sparse_marks;
    size_t n_sparse_marks, cap_sparse_marks;
    bool sparse_applied;                         /* mb_tr_sort_flop_ops has read them */
    long long sparse_matmuls;                    /* matmul ops found around one (outermost ones) */
} tr_state;

void mb_tr_state_free(tr_state *st);

/* trace.c: one copy or memset of dur ns and `bytes` (-1: no byte count) into c. */
void mb_tr_copy_add(tr_copy_stat *c, int64_t dur, double bytes);
/* trace.c: one collective kernel of dur ns and `bytes` (-1: no size args) into c; an unsized one counts in
 * st->nccl_kernels_unsized. */
void mb_tr_coll_add(tr_state *st, tr_coll_stat *c, int64_t dur, double bytes);

/* trace_cpu.c: keeps a host event's interval by class (false: out of memory); `mem_bytes`: a memory-bound op
 * whose shapes gave its bytes (fold_cpu_op); `op`: a cpu_op event, not an annotation. */
bool mb_tr_cpu_fold(tr_state *st, const char *name, size_t len, int64_t ts, int64_t dur, bool mem_bytes,
                    bool mem_named, bool op);
/* trace_cpu.c: keeps a host collective of a run without GPU events (false:
 * out of memory). */
bool mb_tr_cpu_coll_add(tr_state *st, const tr_host_coll *c);
/* trace_cpu.c: a trace without GPU events: the step split into data
 * loading, collective, optimizer, conv, gemm, memory-bound ops, other aten ops and Python,
 * as stages of `run` and as evidence "step" in `ev`. */
int mb_tr_cpu_stages(tr_state *st, mb_run *run, cJSON *ev, mb_err *err);
/* A trace without GPU events whose ops ran on the CPU though a GPU was there
 * (deviceProperties): CUDA's runtime was called but launched and copied
 * nothing, or ops only a CPU runs (oneDNN's) did, and none only a GPU runs. */
bool mb_tr_ran_on_cpu(const tr_state *st);

/* The median of v's n values (sorted in place); 0 when n is 0. */
double mb_tr_median_i64(int64_t *v, size_t n);

/* The lesser and the greater of two timestamps or durations (ns), for the reader's files alike. */
static inline int64_t imin(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static inline int64_t imax(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

/* trace_analysis.c: [start, end) pairs sorted and merged in place (touching
 * ones too); returns the new count. */
size_t mb_tr_merge_intervals(int64_t *iv, size_t n);
/* The asynchronous copy calls whose copy is between the device and pageable memory, as blocking copies: host
 * waits (the step table's sync part) and named in host.blocking_copy. False: out of memory. */
bool mb_tr_pageable_copy_waits(tr_state *st);
/* trace_analysis.c: length of the intersection of two merged lists. */
int64_t mb_tr_intersection(const int64_t *x, size_t nx, const int64_t *y, size_t ny);
/* trace_analysis.c: st's ops (tr_flop_op) by thread, then start, the
 * enclosing op before the ops inside it. */
void mb_tr_sort_flop_ops(tr_state *st);
/* trace.c: an op only a sparse tensor calls ("sparse" in its aten name:
 * _sparse_addmm, sparse_dim, _sparse_mm; _nnz, _indices, _values, coalesce,
 * crow_indices...). */
bool mb_tr_sparse_marker(const char *name);
/* trace.c: once, on ops sorted by mb_tr_sort_flop_ops: every matmul op
 * around a sparse marker loses its count (TR_OPF_SPARSE, with its reason). */
void mb_tr_apply_sparse(tr_state *st);
/* trace.c: marks by thread, then start; whether a mark of the sorted list
 * lies within [start, end) on `thread`. */
void mb_tr_sort_marks(tr_mark *m, size_t n);
bool mb_tr_mark_within(const tr_mark *m, size_t n, int64_t thread, int64_t start, int64_t end);

/* ---- the timeline the steps are cut on (trace_timeline.c) ----------------- */

/* A kernel launch call ([ts, end), its correlation id) and a GPU event of the
 * main device ([start, end), the correlation id of the call that launched
 * it; -1 when not recorded). */
typedef struct tr_call {
    int64_t corr, ts, end;
} tr_call;
typedef struct tr_gpu_span {
    int64_t corr, start, end;
} tr_gpu_span;

typedef struct tr_timeline {
    bool gpu;              /* the steps are cut on the GPU's timeline (the host runs ahead) */
    int overrun;           /* steps whose GPU work ends after their ProfilerStep window */
    int64_t overrun_mean_ns; /* by how much, on average over those steps */
    int64_t last_launch;   /* start of the last launch call inside a step (0: none) */
    int64_t lead_in_ns;    /* step 0's time before where the step before would have ended: left out */
    int64_t *win;          /* [start, end) per step: the GPU's windows, else the ProfilerSteps' */
} tr_timeline;

/* trace_timeline.c: the window of steps ([start, end) pairs, sorted by
 * start, not overlapping) that holds ts; -1 when none. */
long mb_tr_window_of(const int64_t *steps, size_t n, int64_t ts);

/* Chooses the timeline of n ProfilerSteps (sorted, [start, end) pairs): the
 * GPU's when at least half the steps' GPU work (the spans their launches
 * started) ends after the step's window and every step launched work; then
 * step k is [end of step k-1's GPU work, end of its own), step 0 starting
 * where the GPU was free to run its first event, or where the step before
 * would have ended by the later steps' heads (lead_in_ns: what that leaves
 * out). Else the steps as given.
 * false: out of memory. Free with mb_tr_timeline_free. */
bool mb_tr_timeline(const int64_t *steps, size_t n, const tr_call *launches, size_t nl, const tr_gpu_span *spans,
                    size_t ns, tr_timeline *out);
void mb_tr_timeline_free(tr_timeline *t);

/* After a parse without ProfilerSteps: the steps cut at the optimizer's
 * annotations, else at a user annotation once an iteration, else none
 * (docs/traces.md); mb_tr_analyse and mb_trace_walk (the projection) alike. */
void mb_tr_cut_steps(tr_state *st);

/* After a parse, while the launches and host_iv[TR_HOST_LAUNCH] are in file
 * order: each kernel's first launch of TR_FIRST_LAUNCH_NS or more (and under
 * TR_LONG_LAUNCH_NS, set-up already) moves to set-up: st->launch_setup, its
 * interval in host_iv[TR_HOST_SETUP], the setup table and the long launch
 * counts. false: out of memory. */
bool mb_tr_first_launches(tr_state *st);
/* The same for ops: an op's first call of TR_FIRST_CALL_NS or more and
 * TR_FIRST_CALL_RATIO times its later calls' mean (the outermost of nested
 * ones) adds its interval to host_iv[TR_HOST_SETUP] and the setup table. A
 * trace with GPU activity only (the set-up stage is the GPU's idle time).
 * false: out of memory. */
bool mb_tr_first_calls(tr_state *st);

/* After a successful parse: builds the stages, warnings and evidence of
 * `run` from `st`. May reorder/overwrite st's arrays. */
int mb_tr_analyse(tr_state *st, mb_run *run, mb_err *err);
/* What cuts the steps, the evidence's step.window: "ProfilerStep",
 * "Optimizer.step" (a trace without ProfilerSteps, its steps cut at the
 * optimizer's), the name of the user's annotation that cut them (without
 * either) or "trace" (one window); and the windows in a sentence
 * ("ProfilerSteps", "optimizer steps", "train_step annotations", "trace"). */
const char *mb_tr_window(const tr_state *st);
const char *mb_tr_windows_said(const tr_state *st);

/* ---- every event, one at a time (mb_trace_walk) --------------------------- */

/* TR_V_ENQUEUE: an asynchronous copy or memset call (cudaMemcpyAsync, cudaMemsetAsync), which enqueues its GPU
 * event as a launch call does its kernel */
enum tr_view_kind { TR_V_KERNEL = 1, TR_V_MEMCPY, TR_V_MEMSET, TR_V_LAUNCH, TR_V_SYNC, TR_V_CPU_OP, TR_V_STEP,
                    TR_V_ENQUEUE };

/* What one complete ('X') event said, for readers that keep more than the
 * summary of tr_state: the kernel-level projection keeps every kernel with
 * its grid, block and stream, every launch and sync call, and the FLOPs or
 * bytes of ops with recorded shapes. -1 = not recorded. */
typedef struct tr_event_view {
    int kind;           /* tr_view_kind */
    int cls;            /* TR_V_KERNEL/MEMCPY/MEMSET: kernel class; TR_V_SYNC: TR_RT_SYNC or TR_RT_BLOCKING */
    const char *name;
    int64_t thread, ts, dur;
    int64_t device, stream, corr, ext_id;
    int64_t grid[3], block[3]; /* 0 = not recorded */
    int64_t regs, smem;        /* per thread / per block; -1 */
    double bytes;              /* memcpy/memset bytes, a collective kernel's message (as nccl-tests counts
                                  it); -1 */
    double link_bytes;         /* a collective kernel: the bytes one rank's link carries, its message x the
                                  busbw factor of its kind and group (group unknown: the factor's limit, 2
                                  for an all-reduce); -1 unknown */
    int copy_dir;              /* tr_dir of a memcpy */
    const tr_shapes *sh;       /* TR_V_CPU_OP */
    tr_rules *rules;
} tr_event_view;

/* Returns MB_OK to go on; anything else stops the read with that code and
 * the message it put in err. */
typedef int (*tr_event_fn)(void *ctx, const tr_event_view *v, mb_err *err);

typedef struct tr_event_view_hook {
    tr_event_fn fn;
    void *ctx;
    mb_err err;
} tr_event_view_hook;

/* Reads the trace at `path` (the same reader, bounds and errors as
 * mb_trace_read) and shows each complete event to fn; a trace without
 * ProfilerSteps then shows the steps mb_tr_cut_steps cut as TR_V_STEP
 * events named "step", after every other event. *device_props (may be
 * NULL) receives a copy of the trace's deviceProperties (NULL when absent),
 * which the caller frees with cJSON_Delete. */
int mb_trace_walk(const char *path, tr_event_fn fn, void *ctx, cJSON **device_props, mb_err *err);

#endif
