/* fuzz_suite: suite job files (INI, docs/suites.md): sections, parameter
 * lists and ranges, run keys, and `include` (of shipped suites by name, of
 * paths, and of itself: the fuzzer's file is /proc/self/fd/N, which a job
 * may name). */
#include "fuzz_util.h"
#include "suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    mb_err err = { 0 };
    mb_suite s;
    memset(&s, 0, sizeof s);
    int rc = mb_suite_load_file(path, &s, &err);
    fuzz_check_error(rc, &err);
    if (rc == MB_OK) {
        mb_err ferr = { 0 };
        mb_suite_filter(&s, "gemm|disk", &ferr);
        mb_suite_free(&s);
    }
    return 0;
}
