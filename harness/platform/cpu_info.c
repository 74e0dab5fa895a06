/* cpu_info.c: the host CPU from /proc/cpuinfo and sysfs, and its computed
 * theoretical FLOP/s. See cpu_info.h for the assumptions. */
#include "cpu_info.h"

#include <ctype.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "component.h" /* mb_now */
#include "formulas.h"
#include "host.h" /* mb_parse_cache_size */

#define MAX_CORE_PAIRS 8192

/* ---- small text helpers ---------------------------------------------------- */

/* Reads a whole (small, procfs/sysfs) file into a NUL-terminated buffer.
 * procfs files report size 0, so read until EOF. NULL on failure. */
static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
        if (len + 1 == cap) {
            char *grown = realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    if (buf != NULL)
        buf[len] = '\0';
    return buf;
}

static long long read_ll(const char *path, long long fallback)
{
    char *text = read_text(path);
    if (text == NULL)
        return fallback;
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text)
        v = fallback;
    free(text);
    return v;
}

/* "key\t: value" -> value of the line if its key is `key`, else NULL. The
 * value is copied (trimmed) into out. */
static bool line_value(const char *line, size_t line_len, const char *key, char *out,
                       size_t out_len)
{
    size_t klen = strlen(key);
    if (line_len < klen || strncmp(line, key, klen) != 0)
        return false;
    const char *p = line + klen;
    const char *end = line + line_len;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    if (p == end || *p != ':')
        return false;
    p++;
    while (p < end && *p == ' ')
        p++;
    size_t n = (size_t)(end - p);
    if (n >= out_len)
        n = out_len - 1;
    memcpy(out, p, n);
    out[n] = '\0';
    return true;
}

/* Whole-word match in a space-separated flag list ("avx512f" must not match
 * "avx512fp16"). */
static bool has_flag(const char *flags, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = flags; (p = strstr(p, name)) != NULL; p += n) {
        bool starts = p == flags || p[-1] == ' ';
        bool ends = p[n] == '\0' || p[n] == ' ' || p[n] == '\n';
        if (starts && ends)
            return true;
    }
    return false;
}

/* "... CPU @ 2.10GHz" -> 2.1e9; 0 when the model name carries no clock. */
static double clock_from_model_name(const char *model)
{
    const char *at = strchr(model, '@');
    if (at == NULL)
        return 0.0;
    char *end;
    double v = strtod(at + 1, &end);
    while (*end == ' ')
        end++;
    if (v <= 0.0)
        return 0.0;
    if (strncasecmp(end, "GHz", 3) == 0)
        return v * 1e9;
    if (strncasecmp(end, "MHz", 3) == 0)
        return v * 1e6;
    return 0.0;
}

/* ---- parsing --------------------------------------------------------------- */

typedef struct core_pair {
    long phys, core;
} core_pair;

static void add_pair(core_pair *pairs, int *n, long phys, long core)
{
    for (int i = 0; i < *n; i++)
        if (pairs[i].phys == phys && pairs[i].core == core)
            return;
    if (*n < MAX_CORE_PAIRS)
        pairs[(*n)++] = (core_pair){ phys, core };
}

/* The SIMD words the results context lists, x86 and Arm. */
static const char *const simd_names[] = {
    "sse4_2",   "avx",      "avx2",     "fma",   "avx512f", "avx512_bf16", "avx512_fp16",
    "amx_bf16", "amx_tile", "amx_int8", "asimd", "sve",
};

const char *mb_cpu_simd_name(int i)
{
    if (i < 0 || (size_t)i >= sizeof simd_names / sizeof *simd_names)
        return NULL;
    return simd_names[i];
}

static unsigned simd_mask(const char *flags)
{
    unsigned mask = 0;
    for (int i = 0; mb_cpu_simd_name(i) != NULL; i++)
        if (has_flag(flags, mb_cpu_simd_name(i)))
            mask |= 1u << i;
    return mask;
}

/* What the text gives beyond the first block's fields. */
typedef struct text_counts {
    int blocks, pairs_n;
    long cores_per_pkg, max_phys;
    char board_model[128]; /* Arm's "Model" line, after the processor blocks */
} text_counts;

/* Reads one line of the first processor block (the one that describes the
 * CPU) into `out`, the flags text, the "cpu MHz" text and the counts. */
static void parse_first_block_line(const char *line, size_t len, mb_cpu_info *out, char *flags,
                                   size_t flags_len, char *mhz, size_t mhz_len,
                                   text_counts *tc)
{
    char value[256];
    line_value(line, len, "vendor_id", out->vendor, sizeof out->vendor);
    line_value(line, len, "model name", out->model, sizeof out->model);
    line_value(line, len, "cpu MHz", mhz, mhz_len);
    if (!line_value(line, len, "flags", flags, flags_len))
        line_value(line, len, "Features", flags, flags_len); /* Arm */
    if (line_value(line, len, "cpu family", value, sizeof value))
        out->family = (int)strtol(value, NULL, 10);
    if (line_value(line, len, "model", value, sizeof value))
        out->model_id = (int)strtol(value, NULL, 10);
    if (line_value(line, len, "cpu cores", value, sizeof value))
        tc->cores_per_pkg = strtol(value, NULL, 10);
}

/* Physical cores: the given count, else distinct (physical id, core id)
 * pairs, else "cpu cores", else the logical CPUs. */
static int physical_cores_of(int given, const text_counts *tc, int logical)
{
    if (given > 0)
        return given;
    if (tc->pairs_n > 0)
        return tc->pairs_n;
    if (tc->cores_per_pkg > 0)
        return (int)tc->cores_per_pkg;
    return logical;
}

static void set_clock(mb_cpu_info *out, double max_freq_khz, const char *mhz)
{
    double model_hz = clock_from_model_name(out->model);
    if (max_freq_khz > 0) {
        out->clock_hz = max_freq_khz * 1e3;
        snprintf(out->clock_source, sizeof out->clock_source, "cpufreq cpuinfo_max_freq");
    } else if (model_hz > 0) {
        out->clock_hz = model_hz;
        snprintf(out->clock_source, sizeof out->clock_source,
                 "model name (base clock; boost not counted)");
    } else if (mhz[0] != '\0' && strtod(mhz, NULL) > 0) {
        out->clock_hz = strtod(mhz, NULL) * 1e6;
        snprintf(out->clock_source, sizeof out->clock_source,
                 "/proc/cpuinfo cpu MHz (current clock, not the max)");
    } else {
        snprintf(out->clock_source, sizeof out->clock_source, "unknown");
    }
}

void mb_cpu_info_parse(const char *cpuinfo, double max_freq_khz, int physical_cores,
                       int logical_cpus, mb_cpu_info *out)
{
    memset(out, 0, sizeof *out);
    char flags[8192] = "", mhz[64] = "", value[256];
    text_counts tc = { .max_phys = -1 };
    long phys = -1, core = -1;
    core_pair *pairs = calloc(MAX_CORE_PAIRS, sizeof *pairs);

    for (const char *line = cpuinfo ? cpuinfo : ""; *line != '\0';) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (line_value(line, len, "processor", value, sizeof value)) {
            tc.blocks++;
            phys = core = -1;
        }
        if (line_value(line, len, "physical id", value, sizeof value)) {
            phys = strtol(value, NULL, 10);
            if (phys > tc.max_phys)
                tc.max_phys = phys;
        }
        if (line_value(line, len, "core id", value, sizeof value)) {
            core = strtol(value, NULL, 10);
            if (pairs != NULL)
                add_pair(pairs, &tc.pairs_n, phys, core);
        }
        if (!tc.board_model[0])
            line_value(line, len, "Model", tc.board_model, sizeof tc.board_model);
        if (tc.blocks <= 1) /* the first block describes the CPU */
            parse_first_block_line(line, len, out, flags, sizeof flags, mhz, sizeof mhz, &tc);
        line += len + (nl ? 1 : 0);
    }
    free(pairs);

    if (!out->model[0])
        snprintf(out->model, sizeof out->model, "%s", tc.board_model);
    out->logical_cpus = logical_cpus > 0 ? logical_cpus : tc.blocks;
    out->physical_cores = physical_cores_of(physical_cores, &tc, out->logical_cpus);
    out->text_cores = tc.pairs_n;
    out->sockets = tc.max_phys >= 0 ? (int)tc.max_phys + 1 : 0;
    out->mhz_now = mhz[0] != '\0' ? strtod(mhz, NULL) : 0.0;
    out->mhz_max = max_freq_khz > 0 ? max_freq_khz / 1e3 : 0.0;
    out->simd = simd_mask(flags);

    out->sse2 = has_flag(flags, "sse2");
    out->avx = has_flag(flags, "avx");
    out->fma = has_flag(flags, "fma");
    out->avx2 = has_flag(flags, "avx2");
    out->avx512f = has_flag(flags, "avx512f");
    out->avx512_bf16 = has_flag(flags, "avx512_bf16");
    out->amx_bf16 = has_flag(flags, "amx_bf16");
    out->amx_tile = has_flag(flags, "amx_tile");

    set_clock(out, max_freq_khz, mhz);
    mb_cpu_info_derive(out);
}

/* ---- the FMA guess ----------------------------------------------------------- */

static bool is_amd(const mb_cpu_info *ci)
{
    return strcmp(ci->vendor, "AuthenticAMD") == 0 || strcmp(ci->vendor, "HygonGenuine") == 0;
}

static void set_guess(mb_cpu_info *ci, mb_cpu_isa isa, int units, int bits, const char *why)
{
    ci->isa = isa;
    ci->fma_units = units;
    ci->vector_bits = bits;
    snprintf(ci->fma_guess, sizeof ci->fma_guess, "%s", why);
}

void mb_cpu_info_derive(mb_cpu_info *ci)
{
    /* Linux exposes no FMA unit count: these are per-microarchitecture
     * guesses, stated in every peak's source string. A "unit" of a pre-FMA
     * ISA is one add pipe plus one multiply pipe of that width. */
    if (ci->avx512f) {
        if (is_amd(ci) && ci->family <= 25)
            set_guess(ci, MB_ISA_AVX512, 2, 256, "guess: AMD Zen 4 splits 512-bit FMAs over "
                                                 "2 x 256-bit FMA pipes");
        else if (is_amd(ci))
            set_guess(ci, MB_ISA_AVX512, 2, 512, "guess: 2 x 512-bit FMA pipes (Zen 5 server; "
                                                 "client Zen 5 has 256-bit pipes)");
        else
            set_guess(ci, MB_ISA_AVX512, 2, 512, "guess: 2 x 512-bit FMA units (Xeon Gold/"
                                                 "Platinum; many Silver/Bronze/client parts have 1)");
    } else if (ci->avx2 && ci->fma) {
        if (is_amd(ci) && ci->family == 23 && ci->model_id < 0x30)
            set_guess(ci, MB_ISA_AVX2_FMA, 2, 128, "guess: AMD Zen 1 has 2 x 128-bit FMA pipes");
        else
            set_guess(ci, MB_ISA_AVX2_FMA, 2, 256, "guess: 2 x 256-bit FMA units (Haswell and "
                                                   "later, Zen 2 and later)");
    } else if (ci->avx) {
        set_guess(ci, MB_ISA_AVX, 1, 256, "guess: 1 x 256-bit add + 1 x 256-bit multiply pipe");
    } else if (ci->sse2) {
        set_guess(ci, MB_ISA_SSE2, 1, 128, "guess: 1 x 128-bit add + 1 x 128-bit multiply pipe");
    } else {
        set_guess(ci, MB_ISA_SCALAR, 1, 64, "guess: 1 scalar add + 1 scalar multiply per cycle");
    }
}

double mb_cpu_info_flops_per_cycle(const mb_cpu_info *ci, mb_cpu_dtype dtype)
{
    switch (dtype) {
    case MB_CPU_FP64:
        return mb_flops_per_cycle(ci->fma_units, ci->vector_bits < 64 ? 64 : ci->vector_bits, 64);
    case MB_CPU_FP32:
        if (ci->isa == MB_ISA_SCALAR)
            return mb_flops_per_cycle(ci->fma_units, 32, 32);
        return mb_flops_per_cycle(ci->fma_units, ci->vector_bits, 32);
    case MB_CPU_BF16:
        /* AMX: one TMUL per core; TDPBF16PS does 16x16x32 multiply-adds in
         * 16 cycles = 1024 FLOP/cycle. avx512_bf16: VDPBF16PS does two bf16
         * products per fp32 lane, twice the fp32 FMA rate. Both guesses. */
        if (ci->amx_bf16 && ci->amx_tile)
            return 1024.0;
        if (ci->avx512_bf16)
            return 2.0 * mb_flops_per_cycle(ci->fma_units, ci->vector_bits, 32);
        return 0.0;
    }
    return 0.0;
}

static int cores_counted(const mb_cpu_info *ci, int cores)
{
    if (cores <= 0 || cores > ci->physical_cores)
        return ci->physical_cores;
    return cores;
}

double mb_cpu_info_peak_flops(const mb_cpu_info *ci, mb_cpu_dtype dtype, int cores)
{
    return mb_cpu_peak_flops(cores_counted(ci, cores), ci->clock_hz,
                             mb_cpu_info_flops_per_cycle(ci, dtype));
}

static const char *bf16_path(const mb_cpu_info *ci)
{
    if (ci->amx_bf16 && ci->amx_tile)
        return "amx_bf16; guess: 1 TMUL per core, 1024 FLOP/cycle";
    if (ci->avx512_bf16)
        return "avx512_bf16; guess: VDPBF16PS at 2x the fp32 FMA rate";
    return "no avx512_bf16/amx_bf16: no native bf16";
}

void mb_cpu_info_peak_source(const mb_cpu_info *ci, mb_cpu_dtype dtype, int cores, char *buf,
                             size_t len)
{
    int n = cores_counted(ci, cores);
    double fpc = mb_cpu_info_flops_per_cycle(ci, dtype);
    if (dtype == MB_CPU_BF16)
        snprintf(buf, len, "computed: %d physical cores x %.2f GHz (%s) x %g %s FLOP/cycle (%s)",
                 n, ci->clock_hz / 1e9, ci->clock_source, fpc, mb_cpu_dtype_name(dtype),
                 bf16_path(ci));
    else
        snprintf(buf, len, "computed: %d physical cores x %.2f GHz (%s) x %g %s FLOP/cycle "
                           "(%s; %s)",
                 n, ci->clock_hz / 1e9, ci->clock_source, fpc, mb_cpu_dtype_name(dtype),
                 mb_cpu_isa_name(ci->isa), ci->fma_guess);
}

/* ---- environment caps ----------------------------------------------------------- */

bool mb_cpu_openblas_core_isa(const char *core, mb_cpu_isa *isa)
{
    /* OpenBLAS's x86-64 core names (driver/others/dynamic.c, case-insensitive
     * there too) and the widest ISA their kernels use. */
    static const struct {
        const char *name;
        mb_cpu_isa isa;
    } cores[] = {
        { "SkylakeX", MB_ISA_AVX512 },   { "Cooperlake", MB_ISA_AVX512 },
        { "SapphireRapids", MB_ISA_AVX512 },
        { "Haswell", MB_ISA_AVX2_FMA },  { "Zen", MB_ISA_AVX2_FMA },
        { "Excavator", MB_ISA_AVX2_FMA },
        { "Sandybridge", MB_ISA_AVX },   { "Bulldozer", MB_ISA_AVX },
        { "Piledriver", MB_ISA_AVX },    { "Steamroller", MB_ISA_AVX },
        { "Nehalem", MB_ISA_SSE2 },      { "Core2", MB_ISA_SSE2 },
        { "Penryn", MB_ISA_SSE2 },       { "Dunnington", MB_ISA_SSE2 },
        { "Prescott", MB_ISA_SSE2 },     { "Atom", MB_ISA_SSE2 },
        { "Barcelona", MB_ISA_SSE2 },    { "Opteron", MB_ISA_SSE2 },
        { "Opteron_SSE3", MB_ISA_SSE2 }, { "Nano", MB_ISA_SSE2 },
        { "Banias", MB_ISA_SSE2 },       { "Katmai", MB_ISA_SSE2 },
    };
    if (core == NULL)
        return false;
    for (size_t i = 0; i < sizeof cores / sizeof *cores; i++)
        if (strcasecmp(core, cores[i].name) == 0) {
            *isa = cores[i].isa;
            return true;
        }
    return false;
}

bool mb_cpu_onednn_isa(const char *name, mb_cpu_isa *isa)
{
    if (name == NULL || *name == '\0')
        return false;
    char up[128];
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof up; n++) /* "AVX-512" and "avx512" alike */
        up[n] = (char)toupper((unsigned char)(name[n] == '-' ? '_' : name[n]));
    up[n] = '\0';
    if (strstr(up, "AMX") || strstr(up, "AVX512") || strstr(up, "AVX_512") || strstr(up, "AVX10"))
        *isa = MB_ISA_AVX512;
    else if (strstr(up, "AVX2"))
        *isa = MB_ISA_AVX2_FMA;
    else if (strstr(up, "AVX"))
        *isa = MB_ISA_AVX;
    else if (strstr(up, "SSE"))
        *isa = MB_ISA_SSE2;
    else
        return false; /* ALL, DEFAULT, or something newer than this table */
    return true;
}

void mb_cpu_info_capped(const mb_cpu_info *ci, mb_cpu_isa isa, mb_cpu_info *out)
{
    *out = *ci;
    if (isa < MB_ISA_AVX512)
        out->avx512f = out->avx512_bf16 = out->amx_bf16 = out->amx_tile = false;
    if (isa < MB_ISA_AVX2_FMA)
        out->avx2 = out->fma = false;
    if (isa < MB_ISA_AVX)
        out->avx = false;
    if (isa < MB_ISA_SSE2)
        out->sse2 = false;
    mb_cpu_info_derive(out);
}

bool mb_cpu_cap_note(const mb_cpu_info *ci, const char *library, const char *kernels,
                     mb_cpu_isa used, const char *var, const char *value, mb_cpu_dtype dtype,
                     char *note, size_t len)
{
    if (used >= ci->isa)
        return false;
    mb_cpu_info capped;
    mb_cpu_info_capped(ci, used, &capped);
    double full = mb_cpu_info_flops_per_cycle(ci, dtype);
    double part = mb_cpu_info_flops_per_cycle(&capped, dtype);
    char cause[160];
    if (var && value && *value)
        snprintf(cause, sizeof cause, "because %s=%s is set", var, value);
    else
        snprintf(cause, sizeof cause, "by the library's own choice (no %s set)", var ? var : "variable");
    char ceiling[320];
    if (full > 0 && part < full)
        snprintf(ceiling, sizeof ceiling,
                 "at most %g of %g %s FLOP/cycle per core (%.0f%% of the peak); this rate is "
                 "not the CPU's ceiling",
                 part, full, mb_cpu_dtype_name(dtype), 100.0 * part / full);
    else if (full > 0)
        snprintf(ceiling, sizeof ceiling,
                 "the FMA guess gives %g %s FLOP/cycle per core either way (%s), but the "
                 "narrower kernels are what ran",
                 full, mb_cpu_dtype_name(dtype), ci->fma_guess);
    else
        snprintf(ceiling, sizeof ceiling, "no native %s path either way", mb_cpu_dtype_name(dtype));
    snprintf(note, len, "%s runs its %s kernels (%s) on this %s CPU %s: %s", library, kernels,
             mb_cpu_isa_name(used), mb_cpu_isa_name(ci->isa), cause, ceiling);
    return true;
}

const char *mb_cpu_isa_name(mb_cpu_isa isa)
{
    switch (isa) {
    case MB_ISA_SCALAR: return "scalar";
    case MB_ISA_SSE2: return "sse2";
    case MB_ISA_AVX: return "avx";
    case MB_ISA_AVX2_FMA: return "avx2+fma";
    case MB_ISA_AVX512: return "avx512f";
    }
    return "?";
}

const char *mb_cpu_dtype_name(mb_cpu_dtype dtype)
{
    switch (dtype) {
    case MB_CPU_FP64: return "fp64";
    case MB_CPU_FP32: return "fp32";
    case MB_CPU_BF16: return "bf16";
    }
    return "?";
}

/* ---- the host ----------------------------------------------------------------- */

/* Calls fn(cpu, arg) for every id in a sysfs CPU list ("0-3,8,10-11"). */
static void for_each_in_list(const char *list, void (*fn)(int, void *), void *arg)
{
    const char *p = list;
    while (p != NULL && *p != '\0' && *p != '\n') {
        char *end;
        long lo = strtol(p, &end, 10);
        if (end == p)
            break;
        long hi = lo;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        for (long c = lo; c <= hi; c++)
            fn((int)c, arg);
        p = *end == ',' ? end + 1 : NULL;
    }
}

typedef struct topo_count {
    core_pair *pairs;
    int n_pairs;
    int logical;
} topo_count;

static void count_core(int cpu, void *arg)
{
    topo_count *tc = arg;
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
    long phys = (long)read_ll(path, -1);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
    long core = (long)read_ll(path, -1);
    tc->logical++;
    if (core >= 0)
        add_pair(tc->pairs, &tc->n_pairs, phys, core);
}

static mb_cpu_info host_info;
static pthread_once_t host_once = PTHREAD_ONCE_INIT;

/* The clock a busy core runs at, from a chain of dependent register-to-
 * register integer adds (one cycle each on every x86 core since the P6;
 * register operands, because some renamers fold add-immediate chains):
 * cycles / seconds. The best of many short runs (~0.3 ms, inside one
 * scheduler time slice), since preemption only makes a run slower. Used
 * where the kernel gives no cpufreq maximum, as in most VMs, whose "cpu MHz"
 * is the nominal (TSC) clock while the cores boost above it. 0 off x86-64,
 * and 0 for an impossible result (above 7 GHz). */
double mb_cpu_measure_clock_hz(void)
{
#if defined(__x86_64__)
    const uint64_t loops = 64 * 1024; /* x 16 adds: 1 M cycles */
    double best = 0.0;
    for (int run = 0; run < 64; run++) {
        uint64_t x = 0, n = loops, one = 1;
        double t0 = mb_now();
        __asm__ volatile("1:\n\t"
                         "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
                         "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
                         "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
                         "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
                         "sub $1, %1\n\t"
                         "jnz 1b"
                         : "+r"(x), "+r"(n)
                         : "r"(one)
                         : "cc");
        double dt = mb_now() - t0;
        if (dt > 0 && 16.0 * (double)loops / dt > best)
            best = 16.0 * (double)loops / dt;
    }
    return best < 7e9 ? best : 0.0;
#else
    return 0.0;
#endif
}

static void read_host(void)
{
    topo_count tc = { calloc(MAX_CORE_PAIRS, sizeof(core_pair)), 0, 0 };
    char *online = read_text("/sys/devices/system/cpu/online");
    if (tc.pairs != NULL && online != NULL)
        for_each_in_list(online, count_core, &tc);
    free(online);
    free(tc.pairs);

    double max_khz = (double)read_ll("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", 0);
    char *cpuinfo = read_text("/proc/cpuinfo");
    mb_cpu_info_parse(cpuinfo, max_khz, tc.n_pairs, tc.logical, &host_info);
    free(cpuinfo);
    if (max_khz <= 0)
        mb_cpu_info_use_measured_clock(&host_info, mb_cpu_measure_clock_hz());
}

void mb_cpu_info_use_measured_clock(mb_cpu_info *ci, double measured_hz)
{
    /* A peak must not sit below what the cores demonstrably do: a boost
     * clock the text does not show wins (2% margin for timer noise). */
    ci->measured_clock_hz = measured_hz;
    if (measured_hz <= ci->clock_hz * 1.02)
        return;
    char was[sizeof ci->clock_source];
    snprintf(was, sizeof was, "%s", ci->clock_source);
    if (ci->clock_hz > 0)
        snprintf(ci->clock_source, sizeof ci->clock_source,
                 "measured on one busy core; %.100s said %.2f GHz", was, ci->clock_hz / 1e9);
    else
        snprintf(ci->clock_source, sizeof ci->clock_source, "measured on one busy core");
    ci->clock_hz = measured_hz;
}

const mb_cpu_info *mb_cpu_info_host(void)
{
    pthread_once(&host_once, read_host);
    return &host_info;
}

/* LLC: the highest cache level of each online CPU that holds data; distinct
 * instances are told apart by their shared_cpu_list. */
typedef struct llc_sum {
    char seen[256][64];
    int n_seen;
    long long bytes;
} llc_sum;

static void add_llc_of(int cpu, void *arg)
{
    llc_sum *s = arg;
    char path[160];
    int best_level = 0;
    char best_size[32] = "", best_shared[64] = "";
    for (int idx = 0; idx < 16; idx++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
        int level = (int)read_ll(path, -1);
        if (level < 0)
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, idx);
        char *type = read_text(path);
        bool data = type != NULL && strncmp(type, "Instruction", 11) != 0;
        free(type);
        if (!data || level <= best_level)
            continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx);
        char *size = read_text(path);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
                 cpu, idx);
        char *shared = read_text(path);
        if (size != NULL) {
            best_level = level;
            snprintf(best_size, sizeof best_size, "%s", size);
            snprintf(best_shared, sizeof best_shared, "L%d:%s", level, shared ? shared : "?");
        }
        free(size);
        free(shared);
    }
    if (best_level == 0)
        return;
    for (int i = 0; i < s->n_seen; i++)
        if (strcmp(s->seen[i], best_shared) == 0)
            return;
    if (s->n_seen < 256)
        snprintf(s->seen[s->n_seen++], sizeof s->seen[0], "%s", best_shared);
    s->bytes += mb_parse_cache_size(best_size);
}

long long mb_cpu_llc_total_bytes(void)
{
    llc_sum *s = calloc(1, sizeof *s);
    char *online = read_text("/sys/devices/system/cpu/online");
    long long bytes = 0;
    if (s != NULL && online != NULL) {
        for_each_in_list(online, add_llc_of, s);
        bytes = s->bytes;
    }
    free(online);
    free(s);
    return bytes;
}

int mb_cpu_allowed(int *cpus, int max)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        if (max > 0)
            cpus[0] = 0;
        return 1;
    }
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, &set))
            continue;
        if (n < max)
            cpus[n] = c;
        n++;
    }
    return n > 0 ? n : 1;
}

int mb_cpu_threads_for(int want, int when_zero, mb_err *err)
{
    if (want == 0)
        return when_zero;
    int allowed = mb_cpu_allowed(NULL, 0);
    if (want > allowed) {
        mb_errf(err, MB_ESKIP, "threads=%d but this process may run on %d CPUs", want, allowed);
        return -1;
    }
    return want;
}
