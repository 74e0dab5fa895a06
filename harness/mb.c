#include "mb.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int mb_verrf(mb_err *err, int code, const char *fmt, va_list ap)
{
    if (err == NULL || err->code != MB_OK)
        return err && err->code != MB_OK ? err->code : code;
    err->code = code;
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return code;
}

int mb_errf(mb_err *err, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = mb_verrf(err, code, fmt, ap);
    va_end(ap);
    return rc;
}

int mb_errno(mb_err *err, int code, const char *fmt, ...)
{
    int saved = errno;
    if (err == NULL || err->code != MB_OK)
        return err && err->code != MB_OK ? err->code : code;
    va_list ap;
    va_start(ap, fmt);
    mb_verrf(err, code, fmt, ap);
    va_end(ap);
    size_t n = strlen(err->msg);
    snprintf(err->msg + n, sizeof err->msg - n, ": %s", strerror(saved));
    return code;
}

void mb_err_clear(mb_err *err)
{
    if (err) {
        err->code = MB_OK;
        err->msg[0] = '\0';
    }
}

int mb_exit_status(int code)
{
    switch (code) {
    case MB_OK:
    case MB_ESKIP:
        return 0;
    case MB_EUSAGE:
        return 2;
    default:
        return 1;
    }
}

void mb_utc_now(char *buf, size_t len)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int mb_json_depth_at(const char *text, size_t off)
{
    int depth = 0;
    bool in_string = false;
    for (size_t i = 0; i < off && text[i]; i++) {
        char c = text[i];
        if (in_string) {
            if (c == '\\' && text[i + 1])
                i++;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            depth++;
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        }
    }
    return depth;
}
