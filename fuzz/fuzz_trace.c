/* fuzz_trace: the Kineto (PyTorch profiler) trace reader, plain JSON and
 * gzip (gzread detects the gzip magic, so one target covers both: seeds are
 * plain traces and .json.gz fixtures), through the analysis that turns the
 * events into stages, and the `mlbench trace` JSON dump. */
#include "fuzz_util.h"
#include "stages.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    mb_err err = { 0 };
    int rc = mb_trace_dump(path, fuzz_null(), &err);
    fuzz_check_error(rc, &err);
    return 0;
}
