"""peers stream: host memory against John McCalpin's STREAM (the mode's description is in mlbench.peers'
docstring). Standard library only."""

import os
import re
import shlex
import subprocess

from .common import die, niced, ratio, rotate, run_job, say

STREAM_KERNELS = ("copy", "scale", "add", "triad")
STREAM_URL = "https://www.cs.virginia.edu/stream/ (FTP/Code/stream.c)"


def parse_stream(text):
    """{kernel: best rate in GB/s} from STREAM's output ("Copy: <best MB/s> ...")."""
    out = {}
    for k in STREAM_KERNELS:
        m = re.search(rf"^{k.capitalize()}:\s+([0-9.]+)\s", text, re.M)
        if m:
            out[k] = float(m.group(1)) / 1e3
    if len(out) != len(STREAM_KERNELS):
        raise ValueError("not STREAM output: expected Copy:, Scale:, Add:, Triad: lines with a best rate")
    if "Solution Validates" not in text:
        raise ValueError("STREAM did not validate its results")
    return out


def build_stream(args, tmp):
    exe = os.path.join(tmp, "stream")
    cmd = ["cc", "-O3", "-march=native", "-fopenmp", f"-DSTREAM_ARRAY_SIZE={args.stream_elements}",
           "-DNTIMES=20", "-mcmodel=medium", args.stream_c, "-o", exe]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"building STREAM failed: {shlex.join(cmd)}\n{p.stderr[-800:]}", 1)
    return exe, cmd


def compare_stream(args, work, report):
    exe, build = build_stream(args, work)
    placements = [("default placement", {}), ("OMP_PROC_BIND=spread", {"OMP_PROC_BIND": "spread",
                                                                       "OMP_PLACES": "cores"})]

    def run_stream(env_add):
        env = dict(os.environ)
        env.update(env_add)
        p = subprocess.run(niced([exe]), env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"stream exited {p.returncode}: {p.stderr[-300:]}")
        return parse_stream(p.stdout)

    cal = {label: run_stream(env) for label, env in placements}
    best_label = max(cal, key=lambda k: cal[k]["triad"])
    env_best = dict(placements)[best_label]
    size = args.stream_elements * 8
    job = (f"[global]\nrepetitions = {args.reps}\nmin_time = {args.min_time}\n\n[s]\ncomponent = hostmem\n"
           f"backend = stream\nkernel = {', '.join(STREAM_KERNELS)}\narray_size = {size}\n")
    ml = {k: [] for k in STREAM_KERNELS}
    peer = {k: [] for k in STREAM_KERNELS}
    for pair in range(args.pairs):
        for tool in rotate(["mlbench", "stream"], pair):
            if tool == "stream":
                got = run_stream(env_best)
                for k in STREAM_KERNELS:
                    peer[k].append(got[k])
            else:
                for c in run_job(args.mlbench, job, work):
                    if c.usable:
                        ml[c.params["kernel"]].append(c.json["rate"]["best"])
        say(f"stream pair {pair + 1}: " + ", ".join(
            f"{k} {ml[k][-1] if ml[k] else float('nan'):.1f}/{peer[k][-1]:.1f}" for k in STREAM_KERNELS))
    for k in STREAM_KERNELS:
        if len(ml[k]) != args.pairs:
            report.append({"section": "stream", "case": k, "error": "mlbench case not ok"})
            continue
        report.append({"section": "stream", "case": f"{k} {size >> 20} MiB/array", "unit": "GB/s (best)",
                       "rates": {"mlbench": ml[k], "STREAM": peer[k]},
                       "ratios": {"vs STREAM": ratio(ml[k], peer[k])},
                       "peer_commands": {"build": shlex.join(build),
                                         "run": " ".join(f"{a}={b}" for a, b in env_best.items()) + " ./stream"},
                       "stream_placements": cal, "mlbench_job": job})
