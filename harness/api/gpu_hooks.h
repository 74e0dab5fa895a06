/* gpu_hooks.h: what the harness asks of the GPU side, implemented in
 * kernels/gpu/helpers/gpu_context.c in libmlbench_cuda.so and reached through
 * harness/modules.c, which answers "no GPU" when the module is absent.
 * The harness itself never includes CUDA headers. */
#ifndef MB_GPU_HOOKS_H
#define MB_GPU_HOOKS_H

#include <cjson/cJSON.h>

#include "component.h"
#include "phases.h"

/* Adds "gpus": [...] to the context object: name, UUID, compute capability,
 * SMs, clocks, memory, bus width, L2, ECC, PCIe bus id and link, driver,
 * runtime, cuBLAS, cuDNN, NCCL versions. Without a device: "gpus": [] and
 * "gpu_unavailable": "<CUDA error text>". Never fails. */
void mb_gpu_context_add(cJSON *context);

/* NVML sampling around a case's timed repetitions (clocks, temperature,
 * power, throttle reasons).
 * begin returns an opaque snapshot or NULL (no NVML / no GPU); end reports the
 * before/after figures into r as metrics and adds a note when the SM clock
 * dropped during the case. Both are no-ops without NVML. */
void *mb_gpu_monitor_begin(void);
void mb_gpu_monitor_end(void *snapshot, mb_report *r);

/* One NVML reading now (SM clock, power, clock-event reasons) for the
 * burst/sustained phases; false without NVML or GPU. */
bool mb_gpu_read(mb_phase_reading *out);
/* NVML clock-event reason bits as text ("sw_power_cap,gpu_idle"; "none");
 * "unknown" without the CUDA module. */
void mb_gpu_reasons_text(unsigned long long bits, char *buf, size_t len);

#endif
