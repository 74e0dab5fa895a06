/* fuzz_gapconfig: the gap configuration INI files (configs/gap/: thresholds.ini,
 * matching.ini, remedies.ini, compare.ini) as the analysis reads them, and
 * kernel_classes.ini's rules (regular expressions) as the trace reader
 * compiles and applies them. */
#include "fuzz_util.h"
#include "gapconfig.h"
#include "trace.h"

static const char *const probes[][2] = {
    { "thresholds", "launch_bound_fraction" }, { "devices", "gpu" }, { "compare", "keys" },
    { "gemm", "dtype" }, { "", "" }, { "global", "x" },
};

static const char *const names[] = {
    "ampere_sgemm_128x64_nn", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "Memcpy HtoD (Pageable -> Device)",
    "cudaLaunchKernel", "cudaStreamSynchronize", "ProfilerStep#3", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
    "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    mb_err err = { 0 };
    mb_ini ini;
    int rc = mb_ini_load(path, &ini, &err);
    fuzz_check_error(rc, &err);
    if (rc == MB_OK) {
        for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
            double v;
            mb_err nerr = { 0 };
            (void)mb_ini_get(&ini, probes[i][0], probes[i][1]);
            (void)mb_ini_number(&ini, probes[i][0], probes[i][1], &v, &nerr);
            (void)mb_ini_list_has(&ini, probes[i][0], probes[i][1], "gemm");
        }
        mb_ini_free(&ini);
    }
    /* The same bytes as kernel_classes.ini. */
    tr_rules r;
    memset(&r, 0, sizeof r);
    mb_err rerr = { 0 };
    rc = mb_tr_rules_load(&r, path, &rerr);
    fuzz_check_error(rc, &rerr);
    if (rc == MB_OK) {
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            for (int set = 0; set < TR_N_SETS; set++)
                (void)mb_tr_classify(&r, set, names[i], strlen(names[i]));
    }
    mb_tr_rules_free(&r);
    return 0;
}
