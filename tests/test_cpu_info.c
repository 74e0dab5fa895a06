/* cpu_info: parsing of /proc/cpuinfo text, the clock's precedence, the ISA and
 * FMA guess, and the peak arithmetic, on fake CPUs with known answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include <math.h>

#include "cpu_info.h"

#define ASSERT_NEAR(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* Two processor blocks sharing one core (SMT) plus a second core. */
static const char XEON_GOLD[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
    "model name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz\ncpu MHz\t\t: 1000.000\n"
    "physical id\t: 0\ncore id\t\t: 0\ncpu cores\t: 16\n"
    "flags\t\t: fpu sse sse2 avx fma avx2 avx512f avx512dq avx512_vnni\n\n"
    "processor\t: 1\nvendor_id\t: GenuineIntel\nphysical id\t: 0\ncore id\t\t: 0\n\n"
    "processor\t: 2\nvendor_id\t: GenuineIntel\nphysical id\t: 0\ncore id\t\t: 1\n\n";

static const char ZEN4[] =
    "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n"
    "model name\t: AMD EPYC\ncpu MHz\t\t: 2596.148\n"
    "flags\t\t: fpu sse2 avx fma avx2 avx512f avx512_bf16 avx512_vnni\n";

static const char HASWELL[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
    "model name\t: Intel(R) Core(TM) i7-4770 CPU @ 3.40GHz\nflags\t\t: sse2 avx fma avx2\n";

static const char SANDY[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
    "model name\t: Intel(R) Core(TM) i7-2600 CPU @ 3.40GHz\nflags\t\t: sse2 avx\n";

static const char OLD[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Pentium 4\n"
    "cpu MHz\t\t: 3000.000\nflags\t\t: sse sse2\n";

static const char SAPPHIRE[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
    "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
    "flags\t\t: sse2 avx fma avx2 avx512f avx512_bf16 amx_bf16 amx_tile amx_int8\n";

/* avx512fp16 must not be read as avx512f. */
static const char LOOKALIKE[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: X @ 1.00GHz\n"
    "flags\t\t: sse2 avx fma avx2 avx512fp16 amx_bf16\n";

static void test_xeon_model_name_clock_and_cores(void **s)
{
    (void)s;
    mb_cpu_info ci;
    mb_cpu_info_parse(XEON_GOLD, 0, 0, 0, &ci);
    assert_string_equal(ci.vendor, "GenuineIntel");
    assert_string_equal(ci.model, "Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz");
    assert_int_equal(ci.family, 6);
    assert_int_equal(ci.model_id, 85);
    assert_int_equal(ci.logical_cpus, 3);
    assert_int_equal(ci.physical_cores, 2); /* (0,0) twice, (0,1) */
    assert_true(ci.avx512f && ci.avx2 && ci.fma && !ci.avx512_bf16);
    /* The model name's clock wins over "cpu MHz" (the current clock). */
    ASSERT_NEAR(ci.clock_hz, 2.1e9, 1.0);
    assert_non_null(strstr(ci.clock_source, "model name"));
    assert_int_equal(ci.isa, MB_ISA_AVX512);
    assert_int_equal(ci.fma_units, 2);
    assert_int_equal(ci.vector_bits, 512);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP64), 32.0, 0);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP32), 64.0, 0);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_BF16), 0.0, 0);
    /* 2 cores x 2.1 GHz x 64 */
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_FP32, 0), 268.8e9, 1e3);
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_FP64, 1), 67.2e9, 1e3);
    /* More cores than physical ones count the physical ones. */
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_FP64, 64), 134.4e9, 1e3);
}

static void test_cpufreq_wins_and_given_counts(void **s)
{
    (void)s;
    mb_cpu_info ci;
    mb_cpu_info_parse(XEON_GOLD, 3.7e6, 16, 32, &ci);
    ASSERT_NEAR(ci.clock_hz, 3.7e9, 1.0);
    assert_non_null(strstr(ci.clock_source, "cpuinfo_max_freq"));
    assert_int_equal(ci.physical_cores, 16);
    assert_int_equal(ci.logical_cpus, 32);
    /* 16 x 3.7e9 x 64 */
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_FP32, 0), 3788.8e9, 1e3);
}

static void test_zen4_mhz_fallback_and_bf16(void **s)
{
    (void)s;
    mb_cpu_info ci;
    mb_cpu_info_parse(ZEN4, 0, 2, 2, &ci);
    ASSERT_NEAR(ci.clock_hz, 2596.148e6, 1.0);
    assert_non_null(strstr(ci.clock_source, "current"));
    /* Zen 4 runs 512-bit FMAs over 2 x 256-bit pipes: 32 fp32 FLOP/cycle. */
    assert_int_equal(ci.isa, MB_ISA_AVX512);
    assert_int_equal(ci.vector_bits, 256);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP32), 32.0, 0);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP64), 16.0, 0);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_BF16), 64.0, 0);
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_FP32, 0), 2 * 2596.148e6 * 32, 1e3);
    char src[512];
    mb_cpu_info_peak_source(&ci, MB_CPU_FP32, 0, src, sizeof src);
    assert_non_null(strstr(src, "guess"));
    assert_non_null(strstr(src, "2 physical cores"));
    assert_non_null(strstr(src, "2.60 GHz"));
    assert_non_null(strstr(src, "current clock"));
    mb_cpu_info_peak_source(&ci, MB_CPU_BF16, 0, src, sizeof src);
    assert_non_null(strstr(src, "avx512_bf16"));
}

static void test_older_isas(void **s)
{
    (void)s;
    mb_cpu_info ci;
    mb_cpu_info_parse(HASWELL, 0, 4, 8, &ci);
    assert_int_equal(ci.isa, MB_ISA_AVX2_FMA);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP32), 32.0, 0);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP64), 16.0, 0);
    /* 4 x 3.4e9 x 16 */
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_FP64, 0), 217.6e9, 1e3);

    mb_cpu_info_parse(SANDY, 0, 4, 8, &ci);
    assert_int_equal(ci.isa, MB_ISA_AVX);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP32), 16.0, 0);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP64), 8.0, 0);

    mb_cpu_info_parse(OLD, 0, 1, 1, &ci);
    assert_int_equal(ci.isa, MB_ISA_SSE2);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP32), 8.0, 0);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_FP64), 4.0, 0);
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_FP64, 0), 12e9, 1e3);
}

static void test_amx_and_flag_words(void **s)
{
    (void)s;
    mb_cpu_info ci;
    mb_cpu_info_parse(SAPPHIRE, 2.0e6, 56, 112, &ci);
    assert_true(ci.amx_bf16 && ci.amx_tile);
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_BF16), 1024.0, 0);
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_BF16, 0), 56 * 2.0e9 * 1024, 1e6);

    mb_cpu_info_parse(LOOKALIKE, 0, 1, 1, &ci);
    assert_false(ci.avx512f);
    assert_int_equal(ci.isa, MB_ISA_AVX2_FMA);
    /* amx_bf16 without amx_tile is not a usable AMX path */
    ASSERT_NEAR(mb_cpu_info_flops_per_cycle(&ci, MB_CPU_BF16), 0.0, 0);
    char src[512];
    mb_cpu_info_peak_source(&ci, MB_CPU_BF16, 0, src, sizeof src);
    assert_non_null(strstr(src, "no native bf16"));
}

static void test_unknown_clock_gives_no_peak(void **s)
{
    (void)s;
    mb_cpu_info ci;
    mb_cpu_info_parse("processor\t: 0\nflags\t\t: sse2\n", 0, 0, 0, &ci);
    assert_int_equal(ci.physical_cores, 1);
    assert_string_equal(ci.clock_source, "unknown");
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_FP32, 0), 0.0, 0);
    mb_cpu_info_parse(NULL, 0, 0, 0, &ci); /* empty text: no crash, zeros */
    assert_int_equal(ci.isa, MB_ISA_SCALAR);
}

static void test_measured_clock(void **s)
{
    (void)s;
    mb_cpu_info ci;
    mb_cpu_info_parse(ZEN4, 0, 2, 2, &ci);
    mb_cpu_info_use_measured_clock(&ci, 2.6e9); /* within 2%: the text stays */
    ASSERT_NEAR(ci.clock_hz, 2596.148e6, 1.0);
    assert_non_null(strstr(ci.clock_source, "cpu MHz"));
    mb_cpu_info_use_measured_clock(&ci, 3.5e9); /* boost the text does not show */
    ASSERT_NEAR(ci.clock_hz, 3.5e9, 1.0);
    ASSERT_NEAR(ci.measured_clock_hz, 3.5e9, 1.0);
    assert_non_null(strstr(ci.clock_source, "measured"));
    assert_non_null(strstr(ci.clock_source, "2.60 GHz"));
    ASSERT_NEAR(mb_cpu_info_peak_flops(&ci, MB_CPU_FP32, 0), 2 * 3.5e9 * 32, 1e3);
#if defined(__x86_64__)
    double hz = mb_cpu_measure_clock_hz();
    assert_true(hz > 0.3e9 && hz < 10e9);
#endif
}

static void test_host(void **s)
{
    (void)s;
    const mb_cpu_info *ci = mb_cpu_info_host();
    assert_non_null(ci);
    assert_true(ci->logical_cpus >= 1);
    assert_true(ci->physical_cores >= 1 && ci->physical_cores <= ci->logical_cpus);
    assert_ptr_equal(ci, mb_cpu_info_host()); /* cached */
    int cpus[8];
    int n = mb_cpu_allowed(cpus, 8);
    assert_true(n >= 1);
    assert_true(cpus[0] >= 0);
    assert_true(mb_cpu_llc_total_bytes() >= 0);
}

/* OPENBLAS_CORETYPE=Haswell on an AVX-512 Xeon: OpenBLAS's AVX2 kernels,
 * half the FMA width; the note names the variable and the fraction. Values
 * are passed in: tests never change OPENBLAS_CORETYPE itself. */
static void test_env_cap_note(void **s)
{
    (void)s;
    mb_cpu_isa isa;
    assert_true(mb_cpu_openblas_core_isa("Haswell", &isa));
    assert_int_equal(isa, MB_ISA_AVX2_FMA);
    assert_true(mb_cpu_openblas_core_isa("skylakex", &isa)); /* case-insensitive, as OpenBLAS */
    assert_int_equal(isa, MB_ISA_AVX512);
    assert_true(mb_cpu_openblas_core_isa("Sandybridge", &isa));
    assert_int_equal(isa, MB_ISA_AVX);
    assert_false(mb_cpu_openblas_core_isa("NoSuchCore", &isa));
    assert_false(mb_cpu_openblas_core_isa(NULL, &isa));
    assert_true(mb_cpu_onednn_isa("AVX2", &isa));
    assert_int_equal(isa, MB_ISA_AVX2_FMA);
    assert_true(mb_cpu_onednn_isa("avx512_core_bf16", &isa));
    assert_int_equal(isa, MB_ISA_AVX512);
    assert_true(mb_cpu_onednn_isa("Intel AVX-512 with Intel DL Boost", &isa));
    assert_int_equal(isa, MB_ISA_AVX512);
    assert_true(mb_cpu_onednn_isa("SSE41", &isa));
    assert_int_equal(isa, MB_ISA_SSE2);
    assert_false(mb_cpu_onednn_isa("ALL", &isa));

    mb_cpu_info xeon;
    mb_cpu_info_parse(XEON_GOLD, 0, 0, 0, &xeon); /* 2 x 512-bit FMA: 64 fp32 FLOP/cycle */
    char note[512] = "";
    assert_true(mb_cpu_cap_note(&xeon, "OpenBLAS", "Haswell", MB_ISA_AVX2_FMA, "OPENBLAS_CORETYPE", "Haswell",
                                MB_CPU_FP32, note, sizeof note));
    assert_non_null(strstr(note, "OpenBLAS runs its Haswell kernels (avx2+fma) on this avx512f CPU"));
    assert_non_null(strstr(note, "because OPENBLAS_CORETYPE=Haswell is set"));
    assert_non_null(strstr(note, "at most 32 of 64 fp32 FLOP/cycle per core (50% of the peak)"));
    /* The library's own choice: said so. */
    assert_true(mb_cpu_cap_note(&xeon, "OpenBLAS", "Sandybridge", MB_ISA_AVX, "OPENBLAS_CORETYPE", NULL,
                                MB_CPU_FP64, note, sizeof note));
    assert_non_null(strstr(note, "by the library's own choice (no OPENBLAS_CORETYPE set)"));
    assert_non_null(strstr(note, "(25% of the peak)")); /* 1 x 256-bit add+mul: 8 of 32 fp64 */
    /* Kernels as wide as the CPU: no note, the buffer untouched. */
    snprintf(note, sizeof note, "untouched");
    assert_false(mb_cpu_cap_note(&xeon, "OpenBLAS", "SkylakeX", MB_ISA_AVX512, "OPENBLAS_CORETYPE", NULL,
                                 MB_CPU_FP32, note, sizeof note));
    assert_string_equal(note, "untouched");
    mb_cpu_info haswell;
    mb_cpu_info_parse(HASWELL, 0, 0, 0, &haswell);
    assert_false(mb_cpu_cap_note(&haswell, "OpenBLAS", "Haswell", MB_ISA_AVX2_FMA, "OPENBLAS_CORETYPE", "Haswell",
                                 MB_CPU_FP32, note, sizeof note));
    /* Zen 4 (512-bit ops on 256-bit pipes): capped, but the same guessed peak. */
    mb_cpu_info zen4;
    mb_cpu_info_parse(ZEN4, 0, 0, 0, &zen4);
    assert_true(mb_cpu_cap_note(&zen4, "OpenBLAS", "Haswell", MB_ISA_AVX2_FMA, "OPENBLAS_CORETYPE", "Haswell",
                                MB_CPU_FP32, note, sizeof note));
    assert_non_null(strstr(note, "either way"));
    /* The capped CPU loses the flags above the cap, so its bf16 path too. */
    mb_cpu_info capped;
    mb_cpu_info_capped(&zen4, MB_ISA_AVX2_FMA, &capped);
    assert_false(capped.avx512f);
    assert_true(capped.avx2);
    assert_int_equal(capped.isa, MB_ISA_AVX2_FMA);
    assert_true(mb_cpu_info_flops_per_cycle(&capped, MB_CPU_BF16) == 0.0);
}

/* ---- the facts the results context records (context.cpu) ------------------ */

/* The SIMD words of ci->simd, space-separated, in the list's order. */
static void simd_words(const mb_cpu_info *ci, char *out, size_t len)
{
    out[0] = '\0';
    for (int i = 0; mb_cpu_simd_name(i) != NULL; i++)
        if (ci->simd & (1u << i))
            snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? " " : "",
                     mb_cpu_simd_name(i));
}

/* Two sockets of two cores, each with two SMT threads (8 blocks): 4 distinct
 * (physical id, core id) pairs, highest physical id 1. */
static const char TWO_SOCKETS[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n"
    "model name\t: Intel(R) Xeon(R) Platinum 8468\ncpu MHz\t\t: 2100.000\n"
    "physical id\t: 0\ncore id\t\t: 0\ncpu cores\t: 2\n"
    "flags\t\t: fpu sse2 ssse3 sse4_1 sse4_2 avx fma avx2 avx512f avx512fp16 avx512_fp16 "
    "amx_int8 amx_tile\n\n"
    "processor\t: 1\nphysical id\t: 0\ncore id\t\t: 1\ncpu MHz\t\t: 800.000\n\n"
    "processor\t: 2\nphysical id\t: 1\ncore id\t\t: 0\n\n"
    "processor\t: 3\nphysical id\t: 1\ncore id\t\t: 1\n\n"
    "processor\t: 4\nphysical id\t: 0\ncore id\t\t: 0\n\n"
    "processor\t: 5\nphysical id\t: 0\ncore id\t\t: 1\n\n"
    "processor\t: 6\nphysical id\t: 1\ncore id\t\t: 0\n\n"
    "processor\t: 7\nphysical id\t: 1\ncore id\t\t: 1\n";

static void test_context_facts(void **s)
{
    (void)s;
    mb_cpu_info ci;
    char words[256];
    /* sysfs counts given (as on a host): the text's own count is kept apart */
    mb_cpu_info_parse(TWO_SOCKETS, 3.8e6, 6, 8, &ci);
    assert_int_equal(ci.physical_cores, 6);
    assert_int_equal(ci.text_cores, 4);
    assert_int_equal(ci.sockets, 2);
    assert_int_equal(ci.logical_cpus, 8);
    ASSERT_NEAR(ci.mhz_now, 2100.0, 1e-9); /* the first block's, not processor 1's */
    ASSERT_NEAR(ci.mhz_max, 3800.0, 1e-9);
    simd_words(&ci, words, sizeof words);
    /* avx512fp16 (not a listed word) is not avx512_fp16's match; ssse3 is not sse4_2 */
    assert_string_equal(words, "sse4_2 avx avx2 fma avx512f avx512_fp16 amx_tile amx_int8");
    /* nothing given: no cpufreq maximum, counts from the text */
    mb_cpu_info_parse(TWO_SOCKETS, 0, 0, 0, &ci);
    assert_int_equal(ci.physical_cores, 4);
    assert_int_equal(ci.logical_cpus, 8);
    assert_true(ci.mhz_max == 0.0);
    /* a VM's one-block text without ids: no pairs, no sockets */
    mb_cpu_info_parse(ZEN4, 0, 0, 0, &ci);
    assert_int_equal(ci.text_cores, 0);
    assert_int_equal(ci.sockets, 0);
    ASSERT_NEAR(ci.mhz_now, 2596.148, 1e-9);
    simd_words(&ci, words, sizeof words);
    assert_string_equal(words, "avx avx2 fma avx512f avx512_bf16");
}

/* Arm: "Features" instead of "flags", no "model name", the board's "Model"
 * after the processor blocks. */
static const char ARM_BOARD[] =
    "processor\t: 0\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid sve\n"
    "CPU implementer\t: 0x41\nCPU part\t: 0xd08\n\n"
    "processor\t: 1\nBogoMIPS\t: 108.00\nFeatures\t: fp asimd evtstrm crc32 cpuid sve\n\n"
    "Hardware\t: BCM2835\nModel\t\t: Raspberry Pi 4 Model B Rev 1.4\n";

static void test_arm_features_and_model(void **s)
{
    (void)s;
    mb_cpu_info ci;
    char words[256];
    mb_cpu_info_parse(ARM_BOARD, 0, 0, 0, &ci);
    assert_string_equal(ci.model, "Raspberry Pi 4 Model B Rev 1.4");
    assert_string_equal(ci.vendor, "");
    assert_int_equal(ci.logical_cpus, 2);
    assert_int_equal(ci.text_cores, 0);
    assert_true(ci.mhz_now == 0.0);
    simd_words(&ci, words, sizeof words);
    assert_string_equal(words, "asimd sve");
    assert_int_equal(ci.isa, MB_ISA_SCALAR); /* no x86 vector ISA claimed */
    /* a "model name" wins over a later "Model" */
    mb_cpu_info_parse("processor\t: 0\nmodel name\t: ARMv7 Processor rev 3 (v7l)\n\n"
                      "Model\t\t: Raspberry Pi 3\n",
                      0, 0, 0, &ci);
    assert_string_equal(ci.model, "ARMv7 Processor rev 3 (v7l)");
    assert_string_equal(mb_cpu_simd_name(0), "sse4_2");
    assert_null(mb_cpu_simd_name(-1));
    int n = 0;
    while (mb_cpu_simd_name(n) != NULL)
        n++;
    assert_int_equal(n, 12);
}

/* threads=0 is each caller's default; more than the CPUs this process may
 * use is a skip that names both counts. */
static void test_threads_for(void **s)
{
    (void)s;
    int allowed = mb_cpu_allowed(NULL, 0);
    mb_err err = { 0 };
    assert_int_equal(mb_cpu_threads_for(0, 7, &err), 7);
    assert_int_equal(mb_cpu_threads_for(1, 7, &err), 1);
    assert_int_equal(mb_cpu_threads_for(allowed, 7, &err), allowed);
    assert_int_equal(err.code, MB_OK);
    assert_int_equal(mb_cpu_threads_for(allowed + 1, 7, &err), -1);
    assert_int_equal(err.code, MB_ESKIP);
    char want[128];
    snprintf(want, sizeof want, "threads=%d but this process may run on %d CPUs", allowed + 1,
             allowed);
    assert_string_equal(err.msg, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_xeon_model_name_clock_and_cores),
        cmocka_unit_test(test_cpufreq_wins_and_given_counts),
        cmocka_unit_test(test_zen4_mhz_fallback_and_bf16),
        cmocka_unit_test(test_older_isas),
        cmocka_unit_test(test_amx_and_flag_words),
        cmocka_unit_test(test_unknown_clock_gives_no_peak),
        cmocka_unit_test(test_measured_clock),
        cmocka_unit_test(test_env_cap_note),
        cmocka_unit_test(test_host),
        cmocka_unit_test(test_context_facts),
        cmocka_unit_test(test_arm_features_and_model),
        cmocka_unit_test(test_threads_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
