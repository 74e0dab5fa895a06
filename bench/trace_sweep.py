#!/usr/bin/env python3
"""trace_sweep.py MLBENCH CEILINGS TRACE_OR_DIR...: every PyTorch trace given
(a folder: its *.json and *.json.gz) through `mlbench gap` as a new user would,
and the checks of tests/gap_views.py on each (one step, shares adding up to
100%, one bottleneck, the same figures in text, Markdown, JSON and the page).

For traces nobody here wrote: HolisticTraceAnalysis's tests/data (fetch it;
seven of them are ../shared/fixtures/kineto), a user's report. A trace
`gap` refuses is listed with its message (a refusal must say why and what to
do); a crash, a hang (60 s) or a failed check is counted. Exit 1 if any.
Stdlib only.

The sweep of 2026-11-28 (HTA's 31 traces, the H100 reference as ceilings)
found what tests now hold: a ProfilerStep marked past the profiler's span, a
reason cut mid-word, fbgemm_gpu's kernels read as GEMMs, the CUPTI range
profiler's and MTIA's traces read as CPU work (docs/traces.md). DeepSeek's
H800 training trace (deepseek-ai/profile-data, train.json) found DeepEP's
all-to-all read as compute and taking the overlapped GEMMs' time.
AMD-AGI/TraceLens's tests/traces (H100, B200, MI300X; HuggingFace models,
vLLM, SGLang, xDiT; 26 readable) found: GEMM cases held by their iteration's
size instead of one product's; kernels launched before the active step
counted in the stages; a sync before a step's first launch counted as its
host time; a Triton attn_fwd inside SDPA in no step-table part; blocking
copies outside the sync stage; symmetric-memory all-reduces and TensorRT-LLM
bmm_ kernels as other compute; two collective stages of one name. Kineto's
own tb_plugin samples (pytorch/kineto, tb_plugin/samples before its removal:
ResNet-50 on a V100, torch 1.8-1.9, DataLoader with 0 and 4 workers) found:
ProfilerStep and DataLoader annotations under cat "Operator" read as ops
(one window, the DataLoader's 29% as host code), every convolution without
FLOPs (torch 1.9 records no stride/padding: the forward's come from its
backward op now), a reason cut at "(Concrete", and a finding under its
threshold stated as "(threshold 60%)". The sweep of 2026-12-01 (13 traces
from 10 repositories none had used: T4, RTX 3090/4060/4080, 2x A100, CPU on
a Mac and Windows) passed these checks and still found, by reading the
traces: a kernel's first launches (module loading, 0.12-8.8 ms) read as a
launch-bound run; cuDNN's sgemm kernels as a "gemm" stage on a trace without
shapes; the profiler's own lead-in as Python host code; an all-to-all
projected at NVLink speed onto PCIe cards; the host in a collective call as
host code in one table and communication in the other; hints meant for
stage files or Kineto-less PyTorch (docs/traces.md). The second sweep of
2026-12-01 (33 traces from 23 more repositories: A100, H200 NVL, A10G, T4,
RTX 2080 Ti/3060/4090/500 Ada/5070 Ti, CPU on Colab and laptops) found: fp16
cuBLAS GEMMs read as TF32; CPU runs on GPU machines read as unrecorded GPU
activity; forward-only convolutions held to a backward case; cuDNN's and
cuBLAS's first calls, CUPTI's module loading and TorchScript's fuser
compiling read as host code; a legacy export's empty ProfilerStep markers
read as 17.5-us steps; a faster GPU without a peak for the trace's math
ranked as a lower bound; cuDNN's RNN kernels read as convolutions."""
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))


def traces(args):
    for a in args:
        if os.path.isdir(a):
            yield from sorted(glob.glob(os.path.join(a, "*.json")) + glob.glob(os.path.join(a, "*.json.gz")))
        else:
            yield a


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    mlbench, ceilings = argv[1], argv[2]
    os.environ.update(MLBENCH=mlbench, SRC=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
                      WORK=tempfile.mkdtemp(prefix="trace-sweep."))
    import gap_views  # the checks, on the environment above

    bad = 0
    for path in traces(argv[3:]):
        name = os.path.basename(path)
        try:
            r = subprocess.run([mlbench, "gap", "--run", path, "--ceilings", ceilings], capture_output=True,
                               text=True, timeout=60)
        except subprocess.TimeoutExpired:
            print("HANG %s" % name)
            bad += 1
            continue
        if r.returncode == 2:
            print("refused %s: %s" % (name, r.stderr.strip()))
            continue
        if r.returncode != 0:
            print("FAIL %s: exit %d: %s" % (name, r.returncode, r.stderr.strip()[-400:]))
            bad += 1
            continue
        before = gap_views.fails
        gap_views.views(name, ["--run", path, "--ceilings", ceilings])
        bad += gap_views.fails > before
    print("%d trace(s) with a failure" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
