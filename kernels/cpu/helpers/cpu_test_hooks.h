/* cpu_test_hooks.h: test-only entry points into the host and CPU backends.
 *
 * The unit tests prove that each backend's verify() catches a wrong output:
 * they run one iteration, damage the output through these hooks, and expect
 * MB_EVERIFY. Nothing else may call them. */
#ifndef MB_CPU_TEST_HOOKS_H
#define MB_CPU_TEST_HOOKS_H

#include <stddef.h>

#include "cpu_info.h"
#include "mb.h"

/* hostmem/stream: adds 1.0 to output element `index` (mod N). */
void mb_test_stream_corrupt(void *state, size_t index);
/* hostmem/memcpy: flips one bit of destination byte `index` (mod size). */
void mb_test_memcpy_corrupt(void *state, size_t index);
/* gemm/openblas: damages one of the output elements verify() samples. */
void mb_test_gemm_corrupt(void *state);
/* gemm/onednn: damages one of the output elements verify() samples. */
void mb_test_gemm_onednn_corrupt(void *state);
/* conv/onednn: damages the last output element, which verify() always checks
 * (in the primitive's own, possibly blocked, output buffer). */
void mb_test_conv_corrupt(void *state);
/* conv/onednn: would bf16 run on a CPU described by `ci`? MB_OK or MB_ESKIP
 * with the reason. */
int mb_test_conv_bf16_support(const mb_cpu_info *ci, mb_err *why);

#endif
