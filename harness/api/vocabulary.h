/* vocabulary.h: the names both flows share, each listed once.
 *
 * - Collective kinds: the four mlbench measures (components of the same
 *   name, with their mb_collective) and the others a trace names (all-to-all,
 *   send/recv, ...), with the spellings a trace uses and which buffer
 *   nccl-tests counts as the message.
 * - Stage components: what a stage's work maps to (the measuring side's
 *   component names), with the key a stage file gives the work under, its
 *   unit and the side it usually runs on.
 *
 * The stage-file reader, the trace reader, gap, diagnosis and the collective
 * kernels ask these lookups instead of listing names. Pure data, no state. */
#ifndef MB_VOCABULARY_H
#define MB_VOCABULARY_H

#include <stdbool.h>
#include <stddef.h>

#include "formulas.h"

/* ---- collective kinds ------------------------------------------------------ */

/* Which buffer's size is the message (nccl-tests' `size`). */
typedef enum mb_coll_message {
    MB_MSG_LARGER, /* the larger of input and output (all-reduce, broadcast, kinds nccl-tests has no rule for) */
    MB_MSG_OUTPUT, /* the full gathered output (all-gather) */
    MB_MSG_INPUT,  /* the full input (reduce-scatter) */
} mb_coll_message;

typedef struct mb_coll_kind {
    const char *name;      /* lower case, no '_': "allreduce"; the component name when measured */
    const char *title;     /* as nccl-tests writes it: "all-reduce" */
    bool measured;         /* mlbench benchmarks it: `coll` is its enum */
    mb_collective coll;    /* only when measured */
    const char *aliases;   /* other spellings in trace names, '|'-separated, or NULL: "send|recv" */
    mb_coll_message message;
    bool input_is_message; /* input and output are the same size: an op's first input tensor is the message */
} mb_coll_kind;

/* The kind named exactly `name` ("allreduce", "alltoall"), or NULL. */
const mb_coll_kind *mb_coll_kind_find(const char *name);
/* The kind a trace's collective or kernel name spells, or NULL: case and '_'
 * do not count ("all_reduce", "_allgather_base", "AllReduce" read alike), and
 * the first kind whose name or alias the text contains wins, in the table's
 * order, so "ncclKernel_AllReduce_RING_LL_Sum_float" is an all-reduce and not
 * a reduce, and "ncclDevKernel_SendRecv" a send/recv. */
const mb_coll_kind *mb_coll_kind_in(const char *text);
/* The measured collective named `name` into *out; false (and *out untouched)
 * for any other name, so this is also "is this component a collective". */
bool mb_coll_from_name(const char *name, mb_collective *out);
bool mb_is_collective(const char *component);
/* "allreduce": the component name of a measured collective. */
const char *mb_coll_component(mb_collective c);
/* "all-reduce", ... as nccl-tests names them. */
const char *mb_coll_name(mb_collective c);
/* The stage component a collective of kind `name` is held against: the
 * kind's own name where mlbench measures it, else "other". */
const char *mb_coll_stage_component(const char *name);

/* ---- stage components ------------------------------------------------------ */

typedef struct mb_stage_component {
    const char *name;      /* "gemm" */
    const char *work_key;  /* stage-file key of the work amount: "flops"; NULL = time only */
    const char *work_unit; /* mb_stage.work_unit: "flop"; "s" for time only */
    const char *device;    /* the usual side, "gpu" or "cpu"; NULL = only where the file says */
} mb_stage_component;

/* The component named `name`, or NULL. */
const mb_stage_component *mb_stage_component_find(const char *name);
/* All component names joined by '|' ("gemm|conv|...|other") into buf;
 * returns buf. */
const char *mb_stage_component_names(char *buf, size_t len);
/* The distinct work keys, in table order ("flops", "bytes", ...): the i-th,
 * or NULL past the last. */
const char *mb_work_key(size_t i);
bool mb_is_work_key(const char *key);

/* ---- integer dtypes count operations (one home for the rule) ---- */
/* int8, uint8, int4...: their multiply-adds are integer operations, OP/s not FLOP/s. */
bool mb_dtype_is_integer(const char *dtype);
/* The rate unit of a case of dtype: "TFLOP/s" of an int8 case is "TOP/s" (buf
 * holds it); any other unit or dtype is returned as it is. New results files
 * are written with it and mb_results_load rewrites older files' the same way. */
const char *mb_rate_unit_for_dtype(const char *unit, const char *dtype, char *buf, size_t len);

#endif
