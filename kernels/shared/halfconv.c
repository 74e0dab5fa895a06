/* halfconv.c: host-side conversions between float and the GPU's narrow
 * formats (IEEE half, bfloat16, OCP FP8 E4M3), for filling inputs and
 * checking outputs. Pure C: used by the GPU backends, the collectives'
 * known-input patterns and the CPU references, with or without CUDA. */
#include "halfconv.h"

#include <math.h>
#include <string.h>

/* IEEE binary16 with round-to-nearest-even. */
uint16_t mb_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    int32_t exp = (int32_t)((x >> 23) & 0xFF) - 127 + 15;
    uint32_t mant = x & 0x7FFFFFu;
    if (((x >> 23) & 0xFF) == 0xFF)
        return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7C00u);
    if (exp <= 0) {
        if (exp < -10)
            return (uint16_t)sign;
        mant |= 0x800000u;
        uint32_t shift = (uint32_t)(14 - exp);
        uint32_t h = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        h++;
    return (uint16_t)h;
}

float mb_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FFu;
    float f;
    if (exp == 0) {
        f = ldexpf((float)mant, -24);
        return sign ? -f : f;
    }
    uint32_t x = exp == 31 ? sign | 0x7F800000u | (mant << 13)
                           : sign | ((exp - 15 + 127) << 23) | (mant << 13);
    memcpy(&f, &x, 4);
    return f;
}

uint16_t mb_float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u)
        return (uint16_t)((x >> 16) | 0x40);
    x += 0x7FFFu + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

float mb_bf16_to_float(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* OCP FP8 E4M3 (bias 7, no infinities, 0x7F/0xFF = NaN, max 448), saturating. */
uint8_t mb_float_to_fp8e4m3(float f)
{
    if (isnan(f))
        return 0x7F;
    uint8_t sign = signbit(f) ? 0x80 : 0;
    float a = fabsf(f);
    if (a >= 448.0f)
        return sign | 0x7E;
    if (a < ldexpf(1.0f, -10)) /* below half the smallest subnormal (2^-9) */
        return sign;
    int e;
    frexpf(a, &e); /* a = m * 2^e, m in [0.5,1) */
    int exp = e - 1 + 7;
    if (exp <= 0) { /* subnormal: value = mant * 2^-9 */
        int mant = (int)nearbyintf(a / ldexpf(1.0f, -9));
        if (mant >= 8)
            return sign | 0x08;
        return sign | (uint8_t)mant;
    }
    float scaled = a / ldexpf(1.0f, e - 1); /* [1,2) */
    int mant = (int)nearbyintf((scaled - 1.0f) * 8.0f);
    if (mant == 8) {
        mant = 0;
        exp++;
    }
    if (exp > 15 || (exp == 15 && mant == 7))
        return sign | 0x7E;
    return sign | (uint8_t)(exp << 3) | (uint8_t)mant;
}

float mb_fp8e4m3_to_float(uint8_t v)
{
    int sign = v & 0x80, exp = (v >> 3) & 0xF, mant = v & 7;
    if (exp == 15 && mant == 7)
        return NAN;
    float f = exp == 0 ? ldexpf((float)mant, -9) : ldexpf(1.0f + mant / 8.0f, exp - 7);
    return sign ? -f : f;
}
