/* hardware.h: datasheet entries from configs/hardware/NAME.ini.
 *
 * One file per product. Format (INI):
 *   [product]
 *   name = NVIDIA H100 SXM5 80GB
 *   match = H100 80GB HBM3, H100 SXM        ; substrings of the CUDA device name
 *   kind = gpu                               ; gpu | cpu
 *   source = NVIDIA H100 Tensor Core GPU datasheet, 2023   ; default source
 *   [peak]                                   ; dense TFLOP/s (TOP/s for int8), never sparsity
 *   fp64 = 34
 *   fp64_tensor = 67
 *   fp32 = 67
 *   tf32 = 494.7
 *   fp16 = 989.4
 *   bf16 = 989.4
 *   fp8 = 1978.9
 *   int8 = 1978.9
 *   [memory]
 *   bandwidth_gbps = 3350
 *   capacity_gib = 80
 *   [interconnect]
 *   nvlink_gbps = 900           ; total, both directions, all links
 *   pcie_gen = 5
 *   pcie_width = 16
 *   [power]
 *   tdp_w = 700
 *   [gpu]                       ; what the kernel-level projection needs (project.h)
 *   sms = 132                   ; streaming multiprocessors
 *   boost_clock_mhz = 1980
 *   fp32_sustained_clock_mhz = 795 ; only where a power limit is documented to hold FP32 below boost (l4.ini)
 *   max_threads_per_sm = 2048   ; CUDA C++ Programming Guide, by compute capability
 *   compute_capability = 9.0    ; its architecture (gpu-arch.ini): the nearest checked class (project_checked.h)
 * Any key may have its own source as `<key>_source = ...` in the same section;
 * otherwise the section's `source`, otherwise [product] source.
 * Keys are addressed as "section.key", e.g. "peak.bf16", "memory.bandwidth_gbps".
 */
#ifndef MB_HARDWARE_H
#define MB_HARDWARE_H

#include <stdbool.h>

#include "mb.h"

typedef struct mb_datasheet mb_datasheet;

/* Loads one datasheet file. MB_EUSAGE with file:line on malformed input. */
int mb_datasheet_load(const char *path, mb_datasheet **out, mb_err *err);
/* Finds the entry whose `match` (or name) best fits device_name, searching
 * every .ini file under <config dir>/hardware. A pattern matches only on word
 * boundaries (case-insensitive), so "L4" does not match "NVIDIA L40S"; the
 * longest matching pattern wins. MB_ESKIP with a message when none matches. */
int mb_datasheet_match(const char *device_name, mb_datasheet **out, mb_err *err);
/* Loads by product file stem or name ("h100-sxm", "NVIDIA H100 SXM5 80GB"). */
int mb_datasheet_find(const char *name, mb_datasheet **out, mb_err *err);
/* The datasheets' stems, "a100-pcie-40gb, b200, ...", into buf ("" when none). */
void mb_datasheet_stems(char *buf, size_t len);
void mb_datasheet_free(mb_datasheet *d);

const char *mb_datasheet_name(const mb_datasheet *d);
const char *mb_datasheet_file(const mb_datasheet *d);
/* The file name without directory and ".ini" ("h100-sxm"). */
const char *mb_datasheet_stem(const mb_datasheet *d);
/* [product] kind: true for gpu (the loader insists on gpu or cpu). */
bool mb_datasheet_is_gpu(const mb_datasheet *d);
/* "section.key" -> value and its source. False when absent. */
bool mb_datasheet_get(const mb_datasheet *d, const char *key, double *value,
                      const char **source);

#endif
