/* cpu_report.c: see cpu_report.h. */
#include "cpu_report.h"

void mb_cpu_report_peak(mb_report *r, mb_cpu_dtype dt, int threads)
{
    const mb_cpu_info *ci = mb_cpu_info_host();
    char source[512];
    mb_cpu_info_peak_source(ci, dt, threads, source, sizeof source);
    double peak = mb_cpu_info_peak_flops(ci, dt, threads);
    if (peak > 0)
        mb_report_peak(r, peak / 1e9, source);
    mb_report_metric(r, "threads", threads, "");
}

void mb_cpu_report_smt_note(mb_report *r, int threads)
{
    const mb_cpu_info *ci = mb_cpu_info_host();
    if (threads > ci->physical_cores && ci->physical_cores > 0)
        mb_report_note(r, "%d threads on %d physical cores: SMT threads share FMA units, the "
                       "peak counts physical cores", threads, ci->physical_cores);
}
