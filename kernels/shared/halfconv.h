/* halfconv.h: float <-> half / bfloat16 / fp8 e4m3 on the host. */
#ifndef MB_HALFCONV_H
#define MB_HALFCONV_H

#include <stdint.h>

/* IEEE binary16, round to nearest even, overflow to infinity. */
uint16_t mb_float_to_half(float f);
float mb_half_to_float(uint16_t h);
/* bfloat16, round to nearest even; NaN stays NaN. */
uint16_t mb_float_to_bf16(float f);
float mb_bf16_to_float(uint16_t h);
/* OCP FP8 E4M3 (bias 7, no infinities, max 448), saturating. */
uint8_t mb_float_to_fp8e4m3(float f);
float mb_fp8e4m3_to_float(uint8_t v);

#endif
