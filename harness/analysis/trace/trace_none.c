/* trace_none.c: the trace reader when zlib was missing at build time
 * (scripts/setup.sh installs zlib1g-dev; the JSON parser is mlbench's own,
 * json_stream.c). */
#include "trace.h"

#include "project.h"

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

int mb_trace_walk(const char *path, tr_event_fn fn, void *ctx, cJSON **device_props, mb_err *err)
{
    (void)fn;
    (void)ctx;
    if (device_props)
        *device_props = NULL;
    return mb_trace_read_with(path, NULL, &(mb_run){ 0 }, err);
}

int mb_proj_trace_load(const char *path, mb_proj_trace **out, mb_err *err)
{
    *out = NULL;
    return mb_trace_read_with(path, NULL, &(mb_run){ 0 }, err);
}

void mb_proj_trace_free(mb_proj_trace *t)
{
    (void)t;
}

const char *mb_proj_trace_device(const mb_proj_trace *t)
{
    (void)t;
    return "";
}

int mb_proj_trace_steps(const mb_proj_trace *t)
{
    (void)t;
    return 0;
}

int mb_proj_trace_run(const mb_proj_trace *t, const mb_proj_gpu *here, const mb_proj_gpu *there, double host_scale,
                      mb_proj_outcome *out, mb_err *err)
{
    (void)t;
    (void)here;
    (void)there;
    (void)host_scale;
    (void)out;
    return mb_errf(err, MB_EUSAGE, "this mlbench was built without zlib: no trace projection");
}

int mb_proj_trace_calibrate(const mb_proj_trace *t, const mb_proj_gpu *here, double step_seconds, double *host_scale,
                            double *trace_seconds, double *floor_seconds, mb_err *err)
{
    (void)t;
    (void)here;
    (void)step_seconds;
    *host_scale = 1;
    *trace_seconds = *floor_seconds = 0;
    return mb_errf(err, MB_EUSAGE, "this mlbench was built without zlib: no trace projection");
}
