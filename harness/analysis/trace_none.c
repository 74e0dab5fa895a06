/* trace_none.c: the trace reader when zlib was missing at build time
 * (scripts/setup.sh installs zlib1g-dev; the JSON parser is mlbench's own,
 * json_stream.c). */
#include "trace.h"

int mb_trace_read(const char *path, mb_run *out, mb_err *err)
{
    return mb_trace_read_with(path, NULL, out, err);
}

int mb_trace_read_with(const char *path, struct tr_rules *rules, mb_run *out, mb_err *err)
{
    (void)rules;
    mb_run_init(out);
    return mb_errf(err, MB_EUSAGE,
                   "%s: this mlbench was built without zlib, so it cannot read PyTorch "
                   "traces (install zlib1g-dev and rebuild)",
                   path);
}

int mb_trace_dump(const char *path, FILE *out, mb_err *err)
{
    return mb_trace_dump_with(path, NULL, out, err);
}

int mb_trace_dump_with(const char *path, struct tr_rules *rules, FILE *out, mb_err *err)
{
    (void)out;
    mb_run run;
    return mb_trace_read_with(path, rules, &run, err);
}
