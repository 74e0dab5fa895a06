/* backends.h: joining a backend's description (core library) and its code
 * (backend file or GPU module) into the harness-facing mb_component_ops.
 * See "description and code" in harness/api/component.h. */
#ifndef MB_BACKENDS_H
#define MB_BACKENDS_H

#include <stddef.h>

#include "component.h"

/* The description lists, one per folder (kernels/<folder>/descriptions.c)
 * and one per GPU module (kernels/shared/gpu_descriptions.c), each terminated by
 * MB_BACKEND_DESC_END. */
extern const mb_backend_desc mb_disk_backends[], mb_cpu_backends[], mb_coll_backends[];
extern const mb_backend_desc mb_cuda_backends[], mb_cudnn_backends[], mb_nccl_backends[];

/* What a GPU module exports under its symbol (e.g. "mb_module_cuda_code"). */
typedef const mb_backend_code *const *(*mb_module_code_fn)(size_t *n);

/* Entries before the terminator. */
size_t mb_backend_desc_count(const mb_backend_desc *list);

/* Pairs every description desc[i] with the one code table of its component
 * and backend, in matched[i] (n_desc entries). MB_EUSAGE naming the backend when a description has no code or
 * two, a code table has no description, or a code table lacks a required
 * function (probe, setup, run, work_per_iter, verify, teardown; a
 * placeholder needs only probe). */
int mb_backends_match(const mb_backend_desc *const *desc, size_t n_desc, const mb_backend_code *const *code,
                      size_t n_code, const mb_backend_code **matched, mb_err *err);

/* The harness-facing table: the description's facts, the code's functions.
 * A placeholder (code->unavailable) shows that text as its summary and
 * accepts any parameter key (params_unknown). */
mb_component_ops mb_backend_compose(const mb_backend_desc *desc, const mb_backend_code *code);

#endif
