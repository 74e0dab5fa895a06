/* cpu_info.h: what the host CPU is, and its theoretical FLOP/s.
 *
 * Read once from /proc/cpuinfo and sysfs. The peak is derived, never looked
 * up: physical cores x max clock x FLOPs per cycle per core, where FLOPs per
 * cycle come from the widest vector ISA found (avx512f, avx2+fma, avx, sse2)
 * and a GUESS of the FMA units per core for that ISA and vendor (Linux does
 * not expose the unit count). Every figure carries a text saying where it came
 * from, so a report can print it next to the number.
 *
 * The parser is separate from the reading so tests can feed fake flag sets and
 * clocks (mb_cpu_info_parse). */
#ifndef MB_CPU_INFO_H
#define MB_CPU_INFO_H

#include <stdbool.h>
#include <stddef.h>

#include "mb.h" /* mb_err */

typedef enum mb_cpu_isa {
    MB_ISA_SCALAR, /* nothing below: x87/scalar only */
    MB_ISA_SSE2,   /* 128-bit, separate add and multiply */
    MB_ISA_AVX,    /* 256-bit, separate add and multiply */
    MB_ISA_AVX2_FMA,
    MB_ISA_AVX512,
} mb_cpu_isa;

typedef enum mb_cpu_dtype {
    MB_CPU_FP64,
    MB_CPU_FP32,
    MB_CPU_BF16, /* avx512_bf16 dot products or AMX tiles; 0 FLOP/s without */
} mb_cpu_dtype;

typedef struct mb_cpu_info {
    char vendor[32];  /* "GenuineIntel", "AuthenticAMD", ... */
    char model[128];  /* model name */
    int family;       /* cpu family (AMD Zen 4 = 25, Zen 5 = 26) */
    int model_id;     /* model number within the family */
    int logical_cpus; /* online */
    int physical_cores;

    /* Flags of interest. */
    bool sse2, avx, fma, avx2, avx512f, avx512_bf16, amx_bf16, amx_tile;

    double clock_hz;          /* max clock when known; see clock_source */
    char clock_source[160];   /* "cpufreq cpuinfo_max_freq", "model name", ... */
    double measured_clock_hz; /* mb_cpu_measure_clock_hz() when it was run, else 0 */

    /* Derived by mb_cpu_info_derive(). */
    mb_cpu_isa isa;
    int vector_bits;       /* width of the FMA datapath the guess assumes */
    int fma_units;         /* per core, a guess */
    char fma_guess[160];   /* why that guess */

    /* What the text itself says, as the results context records it (the
     * counts above may come from sysfs instead). */
    int text_cores;     /* distinct (physical id, core id) pairs; 0 when it lists none */
    int sockets;        /* highest "physical id" + 1; 0 when it has none */
    double mhz_now;     /* the first block's "cpu MHz" (current clock); 0 when absent */
    double mhz_max;     /* the cpufreq maximum given to the parser, in MHz; 0: unknown */
    unsigned simd;      /* bit i set: mb_cpu_simd_name(i) is among the flags */
} mb_cpu_info;

/* The SIMD flags the results context lists (x86 "flags" and Arm "Features"
 * words), by index from 0; NULL past the last. */
const char *mb_cpu_simd_name(int i);

/* The host's info, read on first call (thread-safe) and cached. Never NULL:
 * unknown fields are 0 / "". */
const mb_cpu_info *mb_cpu_info_host(void);

/* Fills `out` from the text of /proc/cpuinfo (its first processor block;
 * Arm's "Features" stand for "flags", a "Model" line anywhere for a missing
 * "model name"),
 * a cpufreq cpuinfo_max_freq value in kHz (<= 0: unknown) and the number of
 * physical and logical cores (<= 0: counted from the text: "cpu cores" or
 * processor blocks). Clock precedence: cpufreq max, then "@ X.XXGHz" in the
 * model name, then "cpu MHz" (the current clock, not the max). Calls
 * mb_cpu_info_derive(). */
void mb_cpu_info_parse(const char *cpuinfo, double max_freq_khz, int physical_cores,
                       int logical_cpus, mb_cpu_info *out);

/* Without a cpufreq maximum (most VMs) the host info also measures the clock
 * of a busy core (mb_cpu_measure_clock_hz: a chain of dependent one-cycle
 * adds) and uses it when it is above what the text says: a VM's "cpu MHz" is
 * the nominal clock while the cores boost above it, and a peak below the
 * measured ceiling would be nonsense. The clock source then says so. */
double mb_cpu_measure_clock_hz(void);
void mb_cpu_info_use_measured_clock(mb_cpu_info *ci, double measured_hz);

/* Sets isa, vector_bits, fma_units and fma_guess from the flags, vendor and
 * family. */
void mb_cpu_info_derive(mb_cpu_info *ci);

/* FLOPs per cycle per core for a dtype (0 when the CPU has no native path,
 * e.g. bf16 without avx512_bf16/AMX). */
double mb_cpu_info_flops_per_cycle(const mb_cpu_info *ci, mb_cpu_dtype dtype);

/* Theoretical FLOP/s of `cores` cores (<= 0: all physical cores; more than
 * physical cores counts the physical ones: SMT threads share the FMA units).
 * 0 when unknown. */
double mb_cpu_info_peak_flops(const mb_cpu_info *ci, mb_cpu_dtype dtype, int cores);

/* One line saying how the peak was derived, e.g. "computed: 2 cores x
 * 2.60 GHz (model name) x 32 FLOP/cycle (avx512f ... guess: ...)". */
void mb_cpu_info_peak_source(const mb_cpu_info *ci, mb_cpu_dtype dtype, int cores,
                             char *buf, size_t len);

/* ---- what the environment does to a library's kernels ----------------------
 * OPENBLAS_CORETYPE forces OpenBLAS's kernels for a named core (Haswell =
 * AVX2 on an AVX-512 CPU: half the FMA width); DNNL_MAX_CPU_ISA and
 * ONEDNN_MAX_CPU_ISA cap oneDNN's ISA. The ISA of a kernel set, by name:
 * OpenBLAS core names (openblas_get_corename(), OPENBLAS_CORETYPE values)
 * and oneDNN ISA names (DNNL_MAX_CPU_ISA values, dnnl_cpu_isa2str() text).
 * Returns false for a name it does not know (no claim is made then). */
bool mb_cpu_openblas_core_isa(const char *core, mb_cpu_isa *isa);
bool mb_cpu_onednn_isa(const char *name, mb_cpu_isa *isa);

/* The CPU as a library limited to `isa` sees it: the flags above it
 * cleared, the FMA guess derived again (so its peak is what those kernels
 * can reach at most). */
void mb_cpu_info_capped(const mb_cpu_info *ci, mb_cpu_isa isa, mb_cpu_info *out);

/* When a library runs kernels of an ISA below the CPU's (`used` < ci->isa),
 * writes a note naming the library, its kernels, the cause (`var`=`value`
 * when that variable is set, else the library's own choice) and the
 * ceiling it implies (the capped peak as a fraction of the CPU's for
 * `dtype`), and returns true. False (note untouched) otherwise. */
bool mb_cpu_cap_note(const mb_cpu_info *ci, const char *library, const char *kernels,
                     mb_cpu_isa used, const char *var, const char *value, mb_cpu_dtype dtype,
                     char *note, size_t len);

const char *mb_cpu_isa_name(mb_cpu_isa isa);
const char *mb_cpu_dtype_name(mb_cpu_dtype dtype);

/* Total bytes of all last-level caches of the online CPUs (each distinct
 * instance counted once, from /sys/devices/system/cpu/cpu*\/cache/index*),
 * 0 when unknown. STREAM sizes its arrays from this. */
long long mb_cpu_llc_total_bytes(void);

/* CPUs this process may run on (its affinity mask), in order; returns the
 * count (>= 1) and stores up to `max` ids in `cpus`. */
int mb_cpu_allowed(int *cpus, int max);

/* The threads a CPU case runs on: `want` (its "threads" parameter), or
 * `when_zero` for threads=0 (each backend's "all": a library's own default
 * count, or every CPU this process may use); -1 with MB_ESKIP when `want` is
 * more than the CPUs this process may run on. */
int mb_cpu_threads_for(int want, int when_zero, mb_err *err);

#endif
