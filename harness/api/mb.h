/* mb.h: error handling shared by the whole of mlbench.
 *
 * Errors travel as return codes with a caller-owned message. The first error
 * recorded wins: later calls to mb_errf on the same mb_err keep the original
 * text, so the root cause is what the user sees. Nothing outside main() exits.
 */
#ifndef MB_H
#define MB_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MB_ERR_LEN 1024

enum mb_code {
    MB_OK = 0,
    MB_EFAIL = 1,   /* a benchmark or its verification failed (exit 1) */
    MB_EUSAGE = 2,  /* bad command line, config, or input file (exit 2) */
    MB_ESKIP = 3,   /* cannot run here: no device, library, dtype, memory */
    MB_EVERIFY = 4, /* output did not match the reference */
    MB_ESYS = 5,    /* an OS call failed (I/O, memory) */
};

typedef struct mb_err {
    int code;
    char msg[MB_ERR_LEN];
} mb_err;

/* Record an error (first one wins) and return its code, so callers write
 * `return mb_errf(err, MB_EUSAGE, "...")`. err may be NULL. */
int mb_errf(mb_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int mb_verrf(mb_err *err, int code, const char *fmt, va_list ap);

/* Same, appending ": strerror(errno)". */
int mb_errno(mb_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void mb_err_clear(mb_err *err);

/* Maps an mb_code to the process exit status of the CLI (0, 1 or 2). */
int mb_exit_status(int code);

/* UTC time as "YYYY-MM-DDTHH:MM:SSZ". Here, below both the results journal
 * and the context collector, so neither has to include the other. */
void mb_utc_now(char *buf, size_t len);

/* How deeply brackets ([ {) are nested at byte `off` of JSON text (strings
 * skipped), so a parse error caused by cJSON's nesting limit
 * (CJSON_NESTING_LIMIT, 1000) can say so instead of "malformed". */
int mb_json_depth_at(const char *text, size_t off);

#ifdef __cplusplus
}
#endif

#endif
