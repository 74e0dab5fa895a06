/* fuzz_util.h: what every libFuzzer target shares.
 *
 * The parsers take paths (they stream or slurp files, as mlbench does), so
 * each input is written to one memfd per process and handed over as
 * /proc/self/fd/N: no disk writes per execution, and the parser runs on the
 * exact bytes the fuzzer made. A parser error is the expected outcome for
 * most inputs; the target only checks that an error carries a message (a
 * silent failure would be a bug too). Crashes, leaks, sanitizer reports and
 * hangs are what libFuzzer reports. */
#ifndef MB_FUZZ_UTIL_H
#define MB_FUZZ_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes data to this process's memfd and returns its path. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("mlbench-fuzz", 0);
        if (fd < 0) {
            perror("memfd_create");
            abort();
        }
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
        perror("memfd write");
        abort();
    }
    return path;
}

/* A failed parse must say why. */
static inline void fuzz_check_error(int rc, const mb_err *err)
{
    if (rc != MB_OK && err->msg[0] == '\0') {
        fprintf(stderr, "parser returned %d without a message\n", rc);
        abort();
    }
}

/* Where the writers' output goes: it is exercised, not kept. */
static inline FILE *fuzz_null(void)
{
    static FILE *f;
    if (f == NULL)
        f = fopen("/dev/null", "w");
    if (f == NULL)
        abort();
    return f;
}
#endif
