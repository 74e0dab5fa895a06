/* cpu_report.h: what every CPU compute backend (OpenBLAS and oneDNN GEMM,
 * oneDNN convolution) reports the same way: the peak its threads can reach,
 * their count, and the note when they outnumber the physical cores. */
#ifndef MB_CPU_REPORT_H
#define MB_CPU_REPORT_H

#include "component.h"
#include "cpu_info.h"

/* The peak of `threads` threads in dtype (GFLOP/s, with its source) and the
 * `threads` metric. */
void mb_cpu_report_peak(mb_report *r, mb_cpu_dtype dt, int threads);
/* "N threads on M physical cores: ..." when SMT siblings share FMA units. */
void mb_cpu_report_smt_note(mb_report *r, int threads);

#endif
