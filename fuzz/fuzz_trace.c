/* fuzz_trace: the Kineto (PyTorch profiler) trace reader, plain JSON and
 * gzip (gzread detects the gzip magic, so one target covers both: seeds are
 * plain traces and .json.gz fixtures), through the analysis that turns the
 * events into stages, and the `mlbench trace` JSON dump.
 *
 * The class rules (configs/gap/kernel_classes.ini, ~100 regular
 * expressions) are compiled once: compiling them for every input cost more
 * than reading it (134 inputs/s). fuzz_gapconfig fuzzes the rules file. */
#include "fuzz_util.h"
#include "stages.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static tr_rules rules;
    static int loaded;
    if (!loaded) {
        mb_err lerr = { 0 };
        if (tr_rules_load(&rules, NULL, &lerr) != MB_OK) {
            fprintf(stderr, "fuzz_trace: %s\n", lerr.msg);
            abort();
        }
        loaded = 1;
    }
    const char *path = fuzz_file(data, size);
    mb_err err = { 0 };
    int rc = mb_trace_dump_with(path, &rules, fuzz_null(), &err);
    fuzz_check_error(rc, &err);
    return 0;
}
