/* gpu_context.c: the GPU part of the machine context and the NVML monitor
 * around each GPU case (harness/api/gpu_hooks.h), built with CUDA.
 *
 * NVML is loaded at run time with dlopen("libnvidia-ml.so.1"): it ships with
 * the driver, not with the toolkit (no nvml.h or libnvidia-ml here), and a
 * machine without the driver must still run the host benchmarks. So the few
 * NVML types and prototypes used are declared below by hand, as nvml.h
 * declares them (the NVML API is a stable C ABI: these entry points have not
 * changed since their _v2 versions). */
#include "gpu_hooks.h"

#include <cuda_runtime_api.h>
#include <cublasLt.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "formulas.h"
#include "gpu_util.h"
#include "pcie.h"

/* ---- NVML, declared by hand (see above) ------------------------------------ */

typedef int nvmlReturn_t; /* enum in nvml.h; NVML_SUCCESS = 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };   /* nvmlClockType_t */
enum { NVML_TEMPERATURE_GPU = 0 };                /* nvmlTemperatureSensors_t */

/* nvmlClocksEventReasons (formerly ...ThrottleReasons) bits. */
static const struct {
    unsigned long long bit;
    const char *name;
} clock_reasons[] = {
    { 0x1ull, "gpu_idle" },
    { 0x2ull, "applications_clocks_setting" },
    { 0x4ull, "sw_power_cap" },
    { 0x8ull, "hw_slowdown" },
    { 0x10ull, "sync_boost" },
    { 0x20ull, "sw_thermal_slowdown" },
    { 0x40ull, "hw_thermal_slowdown" },
    { 0x80ull, "hw_power_brake_slowdown" },
    { 0x100ull, "display_clock_setting" },
};
/* Reasons that mean "slower than it could be" (not idle, not a setting). */
#define THROTTLE_MASK (0x4ull | 0x8ull | 0x20ull | 0x40ull | 0x80ull)
#define REASON_GPU_IDLE 0x1ull

static struct nvml {
    int ok;
    char why[256];
    nvmlReturn_t (*init)(void);
    const char *(*error_string)(nvmlReturn_t);
    nvmlReturn_t (*handle_by_bus_id)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned *);
    nvmlReturn_t (*power)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned *);
    nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*pstate)(nvmlDevice_t, int *);
    nvmlReturn_t (*driver_version)(char *, unsigned);
} nvml;

static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;

static void *sym(void *lib, const char *name)
{
    return dlsym(lib, name);
}

static void nvml_load(void)
{
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(nvml.why, sizeof nvml.why, "NVML not available: %s", dlerror());
        return;
    }
    *(void **)&nvml.init = sym(lib, "nvmlInit_v2");
    *(void **)&nvml.error_string = sym(lib, "nvmlErrorString");
    *(void **)&nvml.handle_by_bus_id = sym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
    *(void **)&nvml.clock = sym(lib, "nvmlDeviceGetClockInfo");
    *(void **)&nvml.max_clock = sym(lib, "nvmlDeviceGetMaxClockInfo");
    *(void **)&nvml.temperature = sym(lib, "nvmlDeviceGetTemperature");
    *(void **)&nvml.power = sym(lib, "nvmlDeviceGetPowerUsage");
    *(void **)&nvml.power_limit = sym(lib, "nvmlDeviceGetEnforcedPowerLimit");
    *(void **)&nvml.energy = sym(lib, "nvmlDeviceGetTotalEnergyConsumption");
    *(void **)&nvml.reasons = sym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
    if (nvml.reasons == NULL) /* drivers before 535 */
        *(void **)&nvml.reasons = sym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
    *(void **)&nvml.pstate = sym(lib, "nvmlDeviceGetPerformanceState");
    *(void **)&nvml.driver_version = sym(lib, "nvmlSystemGetDriverVersion");
    if (nvml.init == NULL || nvml.handle_by_bus_id == NULL) {
        snprintf(nvml.why, sizeof nvml.why, "NVML too old: nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2 missing");
        return;
    }
    nvmlReturn_t rc = nvml.init();
    if (rc != 0) {
        snprintf(nvml.why, sizeof nvml.why, "nvmlInit_v2: %s",
                 nvml.error_string ? nvml.error_string(rc) : "error");
        return;
    }
    nvml.ok = 1; /* the library stays loaded and initialised for the process */
}

static int nvml_ready(void)
{
    pthread_once(&nvml_once, nvml_load);
    return nvml.ok;
}

/* NVML handle of CUDA device `dev`, found by PCI bus id (NVML's device order
 * is not CUDA's, and CUDA_VISIBLE_DEVICES renumbers CUDA's). */
static nvmlDevice_t nvml_device(int dev)
{
    char busid[32];
    nvmlDevice_t h = NULL;
    if (!nvml_ready() || cudaDeviceGetPCIBusId(busid, (int)sizeof busid, dev) != cudaSuccess)
        return NULL;
    return nvml.handle_by_bus_id(busid, &h) == 0 ? h : NULL;
}

static void reasons_text(unsigned long long bits, char *buf, size_t len)
{
    buf[0] = '\0';
    size_t used = 0;
    for (size_t i = 0; i < sizeof clock_reasons / sizeof *clock_reasons; i++)
        if (bits & clock_reasons[i].bit)
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s", used ? "," : "",
                                     clock_reasons[i].name);
    if (used == 0)
        snprintf(buf, len, "none");
}

/* ---- context ------------------------------------------------------------------- */

static void add_version(cJSON *o, const char *key, int v, int has_patch)
{
    char buf[32];
    if (v <= 0) {
        cJSON_AddNullToObject(o, key);
        return;
    }
    /* CUDA: 1000*major + 10*minor. cuDNN 9: 10000*major + 100*minor + patch.
     * NCCL 2.x: 10000*major + 100*minor + patch. */
    if (has_patch)
        snprintf(buf, sizeof buf, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    else
        snprintf(buf, sizeof buf, "%d.%d", v / 1000, v % 1000 / 10);
    cJSON_AddStringToObject(o, key, buf);
}

/* cuDNN and NCCL live in their own modules (libmlbench_cudnn.so,
 * libmlbench_nccl.so), which this one must not depend on: ask the libraries
 * themselves, if the dynamic loader finds them, under their current sonames. */
static void add_library_version(cJSON *sw, const char *key, const char *soname, const char *fn_name,
                                bool out_param)
{
    void *h = dlopen(soname, RTLD_LAZY | RTLD_LOCAL);
    if (h == NULL) {
        const char *e = dlerror();
        char why[512];
        snprintf(why, sizeof why, "not loadable: %s", e ? e : soname);
        cJSON_AddStringToObject(sw, key, why);
        return;
    }
    void *fn = dlsym(h, fn_name);
    int v = 0;
    if (fn && out_param) {
        int (*get)(int *) = (int (*)(int *))fn; /* ncclResult_t ncclGetVersion(int *) */
        if (get(&v) != 0)
            v = 0;
    } else if (fn) {
        v = (int)((size_t(*)(void))fn)(); /* size_t cudnnGetVersion(void) */
    }
    add_version(sw, key, v, 1);
    dlclose(h);
}

static void add_software(cJSON *context)
{
    cJSON *sw = cJSON_AddObjectToObject(context, "gpu_software");
    int v = 0;
    add_version(sw, "cuda_driver_api", cudaDriverGetVersion(&v) == cudaSuccess ? v : 0, 0);
    v = 0;
    add_version(sw, "cuda_runtime", cudaRuntimeGetVersion(&v) == cudaSuccess ? v : 0, 0);
    size_t lt = cublasLtGetVersion(); /* 130100 = 13.1.0: major*10000 + minor*100 + patch */
    add_version(sw, "cublaslt", (int)lt, 1);
    add_library_version(sw, "cudnn", "libcudnn.so.9", "cudnnGetVersion", false);
    add_library_version(sw, "nccl", "libnccl.so.2", "ncclGetVersion", true);
    char drv[96];
    if (nvml_ready() && nvml.driver_version && nvml.driver_version(drv, sizeof drv) == 0)
        cJSON_AddStringToObject(sw, "driver", drv);
    else
        cJSON_AddNullToObject(sw, "driver");
    cJSON_AddStringToObject(sw, "nvml", nvml_ready() ? "loaded" : nvml.why);
}

static void add_uuid(cJSON *g, const cudaUUID_t *u)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    char s[64];
    snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
             b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    cJSON_AddStringToObject(g, "uuid", s);
}

static void add_nvml(cJSON *g, int dev)
{
    nvmlDevice_t h = nvml_device(dev);
    if (h == NULL) {
        cJSON_AddStringToObject(g, "nvml", nvml_ready() ? "device not found by PCI bus id" : nvml.why);
        return;
    }
    cJSON *n = cJSON_AddObjectToObject(g, "nvml");
    unsigned v;
    unsigned long long bits;
    int ps;
    if (nvml.clock && nvml.clock(h, NVML_CLOCK_SM, &v) == 0)
        cJSON_AddNumberToObject(n, "sm_clock_mhz", v);
    if (nvml.clock && nvml.clock(h, NVML_CLOCK_MEM, &v) == 0)
        cJSON_AddNumberToObject(n, "memory_clock_mhz", v);
    if (nvml.max_clock && nvml.max_clock(h, NVML_CLOCK_SM, &v) == 0)
        cJSON_AddNumberToObject(n, "sm_clock_max_mhz", v);
    if (nvml.max_clock && nvml.max_clock(h, NVML_CLOCK_MEM, &v) == 0)
        cJSON_AddNumberToObject(n, "memory_clock_max_mhz", v);
    if (nvml.temperature && nvml.temperature(h, NVML_TEMPERATURE_GPU, &v) == 0)
        cJSON_AddNumberToObject(n, "temperature_c", v);
    if (nvml.power && nvml.power(h, &v) == 0)
        cJSON_AddNumberToObject(n, "power_w", v / 1e3);
    if (nvml.power_limit && nvml.power_limit(h, &v) == 0)
        cJSON_AddNumberToObject(n, "power_limit_w", v / 1e3);
    if (nvml.pstate && nvml.pstate(h, &ps) == 0)
        cJSON_AddNumberToObject(n, "pstate", ps);
    if (nvml.reasons && nvml.reasons(h, &bits) == 0) {
        char buf[256];
        reasons_text(bits, buf, sizeof buf);
        cJSON_AddStringToObject(n, "clock_event_reasons", buf);
    }
}

static void add_gpu(cJSON *gpus, int dev)
{
    struct cudaDeviceProp p;
    cJSON *g = cJSON_CreateObject();
    cJSON_AddItemToArray(gpus, g);
    cJSON_AddNumberToObject(g, "index", dev);
    cJSON_AddBoolToObject(g, "benchmark_device", dev == mb_cuda_device());
    cudaError_t e = cudaGetDeviceProperties(&p, dev);
    if (e != cudaSuccess) {
        char msg[256];
        snprintf(msg, sizeof msg, "cudaGetDeviceProperties: %s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
        cJSON_AddStringToObject(g, "error", msg);
        return;
    }
    int attr = 0;
#define ATTR(a) (cudaDeviceGetAttribute(&attr, (a), dev) == cudaSuccess ? attr : 0)
    char buf[64];
    cJSON_AddStringToObject(g, "name", p.name);
    add_uuid(g, &p.uuid);
    snprintf(buf, sizeof buf, "%d.%d", p.major, p.minor);
    cJSON_AddStringToObject(g, "compute_capability", buf);
    cJSON_AddNumberToObject(g, "sms", p.multiProcessorCount);
    cJSON_AddNumberToObject(g, "clock_max_mhz", ATTR(cudaDevAttrClockRate) / 1e3);
    int mem_khz = ATTR(cudaDevAttrMemoryClockRate);
    cJSON_AddNumberToObject(g, "memory_clock_max_mhz", mem_khz / 1e3);
    cJSON_AddNumberToObject(g, "memory_bytes", (double)p.totalGlobalMem);
    cJSON_AddNumberToObject(g, "memory_bus_width_bits", p.memoryBusWidth);
    cJSON_AddNumberToObject(g, "memory_bandwidth_gbps_theoretical",
                            mb_mem_bandwidth_gbps(mem_khz * 1e3, p.memoryBusWidth, 2.0));
    cJSON_AddNumberToObject(g, "l2_bytes", p.l2CacheSize);
    cJSON_AddNumberToObject(g, "shared_memory_per_sm_bytes", (double)p.sharedMemPerMultiprocessor);
    cJSON_AddBoolToObject(g, "ecc", p.ECCEnabled != 0);
    cJSON_AddNumberToObject(g, "max_threads_per_sm", p.maxThreadsPerMultiProcessor);
#undef ATTR
    char busid[32];
    if (cudaDeviceGetPCIBusId(busid, (int)sizeof busid, dev) == cudaSuccess) {
        cJSON_AddStringToObject(g, "pci_bus_id", busid);
        mb_pcie_context_add(g, mb_sysfs_root(), busid);
    }
    add_nvml(g, dev);
}

void mb_gpu_context_add_impl(cJSON *context)
{
    cJSON *gpus = cJSON_GetObjectItemCaseSensitive(context, "gpus");
    if (gpus == NULL)
        gpus = cJSON_AddArrayToObject(context, "gpus");
    add_software(context);
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        char msg[256];
        if (e != cudaSuccess)
            snprintf(msg, sizeof msg, "cudaGetDeviceCount: %s: %s", cudaGetErrorName(e), cudaGetErrorString(e));
        else
            snprintf(msg, sizeof msg, "cudaGetDeviceCount: no CUDA device");
        cudaGetLastError();
        cJSON_AddStringToObject(context, "gpu_unavailable", msg);
        return;
    }
    for (int dev = 0; dev < n; dev++)
        add_gpu(gpus, dev);
}

/* ---- monitor ------------------------------------------------------------------- */

typedef struct gpu_sample {
    unsigned sm_mhz, mem_mhz, temp_c, power_mw;
    unsigned long long reasons, energy_mj;
    int have_sm, have_mem, have_temp, have_power, have_reasons, have_energy;
} gpu_sample;

typedef struct gpu_snapshot {
    nvmlDevice_t h;
    double t;
    unsigned sm_max_mhz;
    gpu_sample before;
} gpu_snapshot;

static void take(nvmlDevice_t h, gpu_sample *s)
{
    memset(s, 0, sizeof *s);
    s->have_sm = nvml.clock && nvml.clock(h, NVML_CLOCK_SM, &s->sm_mhz) == 0;
    s->have_mem = nvml.clock && nvml.clock(h, NVML_CLOCK_MEM, &s->mem_mhz) == 0;
    s->have_temp = nvml.temperature && nvml.temperature(h, NVML_TEMPERATURE_GPU, &s->temp_c) == 0;
    s->have_power = nvml.power && nvml.power(h, &s->power_mw) == 0;
    s->have_reasons = nvml.reasons && nvml.reasons(h, &s->reasons) == 0;
    s->have_energy = nvml.energy && nvml.energy(h, &s->energy_mj) == 0;
}

void *mb_gpu_monitor_begin_impl(void)
{
    nvmlDevice_t h = nvml_device(mb_cuda_device());
    if (h == NULL)
        return NULL;
    gpu_snapshot *snap = calloc(1, sizeof *snap);
    if (snap == NULL)
        return NULL;
    snap->h = h;
    if (!nvml.max_clock || nvml.max_clock(h, NVML_CLOCK_SM, &snap->sm_max_mhz) != 0)
        snap->sm_max_mhz = 0;
    take(h, &snap->before);
    snap->t = mb_now();
    return snap;
}

/* One reading for the burst/sustained phases (harness/api/phases.h). The handle
 * is looked up once per device: readings come every 20 ms of a phase. */
bool mb_gpu_read_impl(mb_phase_reading *out)
{
    static int cached_dev = -1;
    static nvmlDevice_t cached;
    int dev = mb_cuda_device();
    if (dev != cached_dev) {
        cached = nvml_device(dev);
        cached_dev = dev;
    }
    memset(out, 0, sizeof *out);
    if (cached == NULL)
        return false;
    gpu_sample s;
    take(cached, &s);
    out->have_sm = s.have_sm;
    out->sm_mhz = s.sm_mhz;
    out->have_power = s.have_power;
    out->power_w = s.power_mw / 1e3;
    out->have_reasons = s.have_reasons;
    out->reasons = s.reasons;
    return s.have_sm || s.have_power || s.have_reasons;
}

void mb_gpu_reasons_text_impl(unsigned long long bits, char *buf, size_t len)
{
    reasons_text(bits, buf, len);
}

void mb_gpu_monitor_end_impl(void *snapshot, mb_report *r)
{
    gpu_snapshot *snap = snapshot;
    if (snap == NULL)
        return;
    gpu_sample a;
    take(snap->h, &a);
    double dt = mb_now() - snap->t;
    const gpu_sample *b = &snap->before;
    if (b->have_sm && a.have_sm) {
        mb_report_metric(r, "gpu_sm_clock_mhz_before", b->sm_mhz, "MHz");
        mb_report_metric(r, "gpu_sm_clock_mhz_after", a.sm_mhz, "MHz");
    }
    if (b->have_mem && a.have_mem) {
        mb_report_metric(r, "gpu_mem_clock_mhz_before", b->mem_mhz, "MHz");
        mb_report_metric(r, "gpu_mem_clock_mhz_after", a.mem_mhz, "MHz");
    }
    if (b->have_temp && a.have_temp) {
        mb_report_metric(r, "gpu_temp_c_before", b->temp_c, "C");
        mb_report_metric(r, "gpu_temp_c_after", a.temp_c, "C");
    }
    if (b->have_power && a.have_power) {
        mb_report_metric(r, "gpu_power_w_before", b->power_mw / 1e3, "W");
        mb_report_metric(r, "gpu_power_w_after", a.power_mw / 1e3, "W");
    }
    if (b->have_energy && a.have_energy && a.energy_mj >= b->energy_mj && dt > 0)
        mb_report_metric(r, "gpu_power_w_mean", (double)(a.energy_mj - b->energy_mj) / 1e3 / dt, "W");
    char buf[256];
    if (b->have_reasons) {
        reasons_text(b->reasons, buf, sizeof buf);
        mb_report_info(r, "gpu_clock_reasons_before", buf);
    }
    if (a.have_reasons) {
        reasons_text(a.reasons, buf, sizeof buf);
        mb_report_info(r, "gpu_clock_reasons_after", buf);
        if (a.reasons & THROTTLE_MASK) {
            reasons_text(a.reasons & THROTTLE_MASK, buf, sizeof buf);
            mb_report_note(r, "GPU clocks were held down at the end of the case: %s", buf);
        }
    }
    /* The samples bracket the timed repetitions (harness/runner.c), after the
     * warm-up: a drop is a fall below the first, or below 90% of the maximum
     * while throttled. A GPU that NVML calls idle at the end (a component
     * whose last repetition ended with host work) has merely clocked down for
     * lack of work, which says nothing about the timed runs: no drop then. */
    bool idle_after = a.have_reasons && (a.reasons & REASON_GPU_IDLE) && !(a.reasons & THROTTLE_MASK);
    if (!idle_after && b->have_sm && a.have_sm && a.sm_mhz + 50 < b->sm_mhz)
        mb_report_note(r, "SM clock dropped during the case: %u MHz before, %u MHz after", b->sm_mhz, a.sm_mhz);
    else if (a.have_sm && snap->sm_max_mhz && a.sm_mhz < 0.9 * snap->sm_max_mhz && a.have_reasons &&
             (a.reasons & THROTTLE_MASK))
        mb_report_note(r, "SM clock %u MHz at the end of the case, below 90%% of its maximum %u MHz", a.sm_mhz,
                       snap->sm_max_mhz);
    free(snap);
}
