"""peers gemm: sgemm through a second caller of the same libraries, numpy (OpenBLAS) and torch (oneDNN), in
Debian's Python (the mode's description is in mlbench.peers' docstring). Standard library only here; the callers
run in /usr/bin/python3 with numpy and torch."""

import json
import os
import re
import subprocess

from .common import die, niced, ratio, rotate, run_job, say, usable_case

SYS_PYTHON = "/usr/bin/python3"

GEMM_CALLER = r"""
import json, os, sys, time
n, seconds, which = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
ncpu = len(os.sched_getaffinity(0))
import numpy as np
rng = np.random.default_rng()
a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
if which == "numpy":
    f = lambda: a @ b
    lib = "numpy a @ b"
else:
    import torch
    torch.set_num_threads(ncpu)
    ta = torch.from_numpy(a).to_mkldnn()
    tw = torch.from_numpy(np.ascontiguousarray(b.T)).to_mkldnn()
    f = lambda: torch._C._nn.mkldnn_linear(ta, tw, None)
    lib = "torch mkldnn_linear (oneDNN)"
c = f()
c = c.to_dense().numpy() if which != "numpy" else c
# Known answer: a few elements recomputed in double.
for i, j in ((0, 0), (n - 1, n - 1), (n // 2, 7)):
    ref = float(np.dot(a[i].astype(np.float64), b[:, j].astype(np.float64)))
    tol = 4 * 2.0**-24 * n**0.5 * float(np.abs(a[i].astype(np.float64) * b[:, j]).sum())
    if abs(float(c[i, j]) - ref) > tol:
        sys.exit(f"wrong result at ({i},{j}): {c[i, j]} vs {ref}")
t_end = time.perf_counter() + 0.5
while time.perf_counter() < t_end:
    f()
times = []
t_end = time.perf_counter() + seconds
while time.perf_counter() < t_end or len(times) < 5:
    t0 = time.perf_counter()
    f()
    times.append(time.perf_counter() - t0)
times.sort()
print(json.dumps({"gflops_median": 2 * n**3 / times[len(times) // 2] / 1e9,
                  "gflops_best": 2 * n**3 / times[0] / 1e9, "calls": len(times), "lib": lib}))
"""


def compare_gemm(args, work, report):
    if not os.access(SYS_PYTHON, os.X_OK):
        die(f"{SYS_PYTHON} not found: the GEMM peers need Debian's python3-numpy (and python3-torch)", 1)
    n = args.gemm_n
    pairs = [("openblas", "numpy"), ("onednn", "torch")]
    for backend, caller in pairs:
        if args.filter and not re.search(args.filter, backend):
            continue
        job = (f"[global]\nrepetitions = {args.reps}\nmin_time = {args.min_time}\n\n[g]\ncomponent = gemm\n"
               f"backend = {backend}\ndtype = fp32\nm = {n}\nn = {n}\nk = {n}\n")
        cmd = [SYS_PYTHON, "-c", GEMM_CALLER, str(n), str(args.gemm_seconds), caller]
        ml, peer, lib = [], [], None
        try:
            for pair in range(args.pairs):
                for tool in rotate(["mlbench", caller], pair):
                    if tool == "mlbench":
                        c = usable_case(run_job(args.mlbench, job, work), f"gemm/{backend}")
                        sus = c.json.get("sustained") or {}
                        ml.append(sus.get("rate") or c.json["rate"]["median"])
                    else:
                        p = subprocess.run(niced(cmd), capture_output=True, text=True)
                        if p.returncode != 0:
                            raise RuntimeError(f"{caller} caller failed: {(p.stderr or p.stdout)[-300:]}")
                        got = json.loads(p.stdout.strip().splitlines()[-1])
                        peer.append(got["gflops_median"])
                        lib = got["lib"]
                say(f"gemm {backend} pair {pair + 1}: mlbench {ml[-1]:.1f}, {caller} {peer[-1]:.1f} GFLOP/s")
        except RuntimeError as e:
            report.append({"section": "gemm", "case": f"{backend} fp32 {n}^3", "error": str(e)})
            continue
        report.append({"section": "gemm", "case": f"{backend} fp32 {n}^3", "unit": "GFLOP/s",
                       "rates": {"mlbench": ml, lib: peer}, "ratios": {f"vs {caller}": ratio(ml, peer)},
                       "peer_commands": {caller: f"{SYS_PYTHON} -c <GEMM_CALLER in mlbench/peers/gemm.py> {n} "
                                                 f"{args.gemm_seconds} {caller}"},
                       "mlbench_figure": "sustained rate (the ceiling gap uses), else the median",
                       "peer_figure": "median of timed calls", "mlbench_job": job})
