#!/usr/bin/env python3
"""long_collective.py MLBENCH [--steps 1000] [--kernels 200]: how long `mlbench
gap` (and `gap --target h200-sxm`) takes on an H100 trace whose one collective kernel spans the whole run (an
all-reduce or DeepEP's all-to-all spinning on its own stream) beside STEPS
ProfilerSteps of KERNELS short compute kernels each.

Why: the step table gives copies and collectives only the gaps between
compute kernels (docs/traces.md). The first version of that rule looked back,
in every gap, as far as the longest event: 25.7 s on this trace (1000 x 200)
on the 2-vCPU VM of 2026-11-28, against 0.19 s once the copies and
collectives became one sorted list read with a cursor. The projection's step
split (gap --target) had the same rule per step: 1.71 s -> 0.56 s with
--steps 20 --kernels 5000. A benchmark, not a test: it prints the
time and checks nothing. Stdlib only."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def write(path, steps, kernels):
    ev = []
    t = 0
    step_us = kernels * 10
    for s in range(steps):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s, "pid": 1, "tid": 1,
                   "ts": t, "dur": step_us})
        for k in range(kernels):
            ev.append({"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "pid": 0, "tid": 7,
                       "ts": t + k * 10, "dur": 5, "args": {"device": 0, "stream": 7}})
        t += step_us
    ev.append({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0,
               "tid": 20, "ts": 0, "dur": t, "args": {"device": 0, "stream": 20}})
    with open(path, "w") as f:   # an H100: `gap --target` projects it kernel by kernel
        json.dump({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132,
                                         "maxThreadsPerMultiprocessor": 2048}], "traceEvents": ev}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mlbench")
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--kernels", type=int, default=200)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "long_collective.json")
        write(path, a.steps, a.kernels)
        ceilings = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "results", "reference", "h100-sxm")
        for extra in ([], ["--target", "h200-sxm"]):
            t0 = time.perf_counter()
            r = subprocess.run([a.mlbench, "gap", "--run", path, "--ceilings", ceilings, "--format", "json"] + extra,
                               capture_output=True, text=True)
            secs = time.perf_counter() - t0
            if r.returncode != 0:
                sys.exit("mlbench gap failed: " + r.stderr.strip())
            print("%d steps x %d kernels beside one run-long collective: mlbench gap %s%.2f s" % (
                a.steps, a.kernels, " ".join(extra) + " " if extra else "", secs))


if __name__ == "__main__":
    main()
