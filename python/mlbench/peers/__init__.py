#!/usr/bin/env python3
"""peers: every host-side ceiling of mlbench next to its peer, in one command.

Each comparison alternates mlbench and the peer on the same resource, at
least three pairs (--pairs, default 3), rotating which one runs first, and
prints per case the median of the pairs' ratios (mlbench / peer; > 1 means
mlbench's ceiling is higher). A ceiling is the best the hardware does, so a
ratio below 1.00 means mlbench's ceiling is too low.

  disk    direct reads of one file that mlbench writes (or --disk-file):
          against fio's default io_uring (or psync for pread) and fio's best
          configuration, picked per case from measured candidates
          (--fixedbufs --registerfiles, with batched submit/complete, with
          --sqthread_poll, with --hipri) in a first calibration round.
          mlbench runs the same way: its default, and for io_uring its own
          options (sqpoll = on, iopoll = on; at depth 32 also submit = each)
          as candidates; "best vs fio best" holds the best of mlbench's
          against fio's best (the suites run those options, and the ceiling
          is the fastest).
          --baseline BIN adds another mlbench binary (e.g. main's) to every
          pair: before/after on the same file.
  stream  host memory against John McCalpin's STREAM. stream.c is not
          packaged: it is published at https://www.cs.virginia.edu/stream/
          (FTP/Code/stream.c); give its path with --stream-c. It is built
          with cc -O3 -march=native -fopenmp and the same array size as the
          mlbench case; the better of default OpenMP placement and
          OMP_PROC_BIND=spread is its configuration.
  gemm    sgemm 2048^3 (--gemm-n) through a second caller of the same
          libraries, in Debian's Python (/usr/bin/python3): numpy's a @ b
          (OpenBLAS behind libblas.so.3) against gemm/openblas, and torch's
          oneDNN inner product (mkldnn_linear, libdnnl.so.2) against
          gemm/onednn. The environment (OPENBLAS_*, OMP_*) is left as the
          machine sets it; both callers use every CPU of the affinity mask.

Nothing is written outside a temporary directory made under --dir (disk
files) or the system's temporary directory (STREAM binary); all of it is
removed at the end, also on Ctrl-C.

Exit status: 0 every ratio at least --min-ratio (default 0: report only),
1 some ratio below it, 2 usage (e.g. --only stream without --stream-c).
Standard library only.
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

# name, backend, block size, qd, pattern
DISK_CASES = [
    ("pread 4k random qd1", "pread", "4k", 1, "random"),
    ("io_uring 4k random qd1", "io_uring", "4k", 1, "random"),
    ("io_uring 4k random qd32", "io_uring", "4k", 32, "random"),
    ("io_uring 128k random qd32", "io_uring", "128k", 32, "random"),
    ("io_uring 1m sequential qd32", "io_uring", "1m", 32, "sequential"),
]

STREAM_KERNELS = ("copy", "scale", "add", "triad")
STREAM_URL = "https://www.cs.virginia.edu/stream/ (FTP/Code/stream.c)"
SYS_PYTHON = "/usr/bin/python3"


def die(msg, code=2):
    print(f"peers: {msg}", file=sys.stderr)
    sys.exit(code)


def say(msg):
    print(f"  {msg}", file=sys.stderr, flush=True)


NICE = []


def niced(cmd):
    """Every tool at the same priority: --nice -15 (root) keeps other load on a
    shared machine from deciding the ratio."""
    return NICE + cmd


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def rotate(items, k):
    k %= len(items)
    return items[k:] + items[:k]


# ---- mlbench -----------------------------------------------------------------

def run_mlbench(binary, job_text, work, extra, env_add=None):
    """Runs one job file; returns its cases (JSON dicts)."""
    job = os.path.join(work, "job.ini")
    out = os.path.join(work, "out.json")
    with open(job, "w") as f:
        f.write(job_text)
    if os.path.exists(out):
        os.unlink(out)
    env = dict(os.environ)
    env.update(env_add or {})
    cmd = [binary, "--suite", job, "--out", out, "-q"] + extra
    p = subprocess.run(niced(cmd), env=env, capture_output=True, text=True)
    if p.returncode < 0:  # a crash is the finding, whatever the results file holds
        raise RuntimeError(f"{binary} killed by {signal.Signals(-p.returncode).name}: {shlex.join(cmd)}")
    if not os.path.exists(out):
        die(f"{binary} wrote no results (exit {p.returncode}): {(p.stderr or p.stdout)[-500:]}", 1)
    with open(out) as f:
        return json.load(f)["cases"]


def ok_case(cases, what):
    good = [c for c in cases if c.get("status") == "ok"]
    if not good:
        c = cases[0] if cases else {}
        raise RuntimeError(f"mlbench {what}: {c.get('status', 'no case')}: {c.get('reason', '')}")
    return good[0]


# ---- disk --------------------------------------------------------------------

def disk_job(case, reps, min_time, size, extra=""):
    name, backend, bs, qd, pattern = case
    text = (f"[global]\nrepetitions = {reps}\nmin_time = {min_time}\nwarmup_time = 0.3\nfile_size = {size}\n\n"
            f"[c]\ncomponent = disk\nbackend = {backend}\nmode = direct\npattern = {pattern}\nblock_size = {bs}\n")
    if backend == "io_uring":
        text += f"qd = {qd}\n"
    return text + extra


def mlbench_variants(case):
    """(label, job-file lines): mlbench's default first, then its own options
    that a ceiling may take (the suites run `sqpoll = off, on` for the queued
    cases, and `submit = batch, each` at depth 32; gap and compare keep the
    fastest), as fio_variants are fio's."""
    if case[1] != "io_uring":
        return [("mlbench", "")]
    variants = [("mlbench", ""), ("mlbench sqpoll", "sqpoll = on\n"), ("mlbench iopoll", "iopoll = on\n")]
    if case[3] > 1:  # at depth 1 the two ways of submitting are one
        variants += [("mlbench submit each", "submit = each\n"),
                     ("mlbench sqpoll submit each", "sqpoll = on\nsubmit = each\n")]
    return variants


def fio_base(case, path, runtime, ramp):
    _, backend, bs, qd, pattern = case
    return ["fio", "--name=peers", f"--filename={path}", "--readonly", "--direct=1",
            f"--rw={'randread' if pattern == 'random' else 'read'}", f"--bs={bs}", f"--iodepth={qd}",
            "--time_based", f"--runtime={runtime}", f"--ramp_time={ramp}", "--randrepeat=0",
            "--norandommap", "--iomem_align=4096", "--output-format=json"]


def fio_variants(case):
    """(label, extra options): the default first, then the candidates for
    fio's best configuration."""
    _, backend, _, qd, _ = case
    if backend == "pread":
        return [("psync (default)", ["--ioengine=psync"]),
                ("pvsync2", ["--ioengine=pvsync2"]),
                ("pvsync2 --hipri", ["--ioengine=pvsync2", "--hipri"])]
    fixed = ["--ioengine=io_uring", "--fixedbufs", "--registerfiles"]
    batch = [f"--iodepth_batch_submit={qd}", f"--iodepth_batch_complete_max={qd}"]
    return [("io_uring (default)", ["--ioengine=io_uring"]),
            ("fixedbufs registerfiles", fixed),
            ("fixedbufs registerfiles batch", fixed + batch),
            ("fixedbufs registerfiles sqthread_poll", fixed + ["--sqthread_poll=1"]),
            ("fixedbufs registerfiles hipri", fixed + ["--hipri"])]


def keep_candidates(cal, default):
    """The calibrated candidates ({label: rate}) that run in every pair: the
    default always, the others at least half the fastest."""
    top = max(cal.values())
    return {k for k, v in cal.items() if k == default or v >= top / 2}


def run_fio(cmd):
    p = subprocess.run(niced(cmd), capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip()[-200:]
    try:
        job = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]
        if job.get("error"):
            return None, f"fio job error {job['error']}"
        return job["read"]["bw_bytes"] / 1e6, None
    except (ValueError, KeyError, IndexError) as e:
        return None, f"cannot read fio's output: {e}"


def make_disk_file(args, work):
    """mlbench's own pattern file, kept for the comparison (removed with work)."""
    datadir = os.path.join(work, "data")
    os.mkdir(datadir)
    cases = run_mlbench(args.mlbench, disk_job(DISK_CASES[0], 1, 0.01, args.size), work,
                        ["--disk-dir", datadir], {"MLBENCH_DISK_KEEP": "1"})
    c = ok_case(cases, "creating the test file")
    return c["info"]["file"]


def compare_disk(args, work, report):
    if shutil.which("fio") is None:
        die("fio is not installed (apt-get install fio)")
    path = args.disk_file or make_disk_file(args, work)
    say(f"disk: file {path} ({os.path.getsize(path) >> 20} MiB)")
    for case in DISK_CASES:
        name = case[0]
        if args.filter and not re.search(args.filter, name):
            continue
        jobs = {label: disk_job(case, args.reps, args.min_time, args.size, extra)
                for label, extra in mlbench_variants(case)}
        job = jobs["mlbench"]
        base = fio_base(case, path, args.runtime, args.ramp)
        variants = fio_variants(case)
        # Calibration: each fio candidate once. Refused ones (e.g. --hipri
        # without poll queues) and ones under half the fastest (e.g.
        # --sqthread_poll competing for 2 vCPUs) leave; the others run in
        # every pair, and fio's best is the one with the highest median.
        cal, why = {}, {}
        for label, extra in variants:
            rate, err = run_fio(base + extra)
            if rate is None:
                why[label] = err
            else:
                cal[label] = rate
        if variants[0][0] not in cal:
            report.append({"section": "disk", "case": name, "error": f"fio default failed: {why}"})
            continue
        kept = [(label, extra) for label, extra in variants if label in keep_candidates(cal, variants[0][0])]
        # mlbench's own options, calibrated the same way: a skipped one (iopoll
        # without poll queues, sqpoll refused) and one under half the fastest
        # leave; the default always stays.
        ml_cal, ml_why = {}, {}
        for label in jobs:
            cases = run_mlbench(args.mlbench, jobs[label], work, ["--disk-file", path])
            good = [c for c in cases if c.get("status") == "ok"]
            if good:
                ml_cal[label] = good[0]["rate"]["median"]
            else:
                ml_why[label] = (cases[0].get("reason") or cases[0].get("status", "")) if cases else "no case"
        if "mlbench" not in ml_cal:
            report.append({"section": "disk", "case": name, "error": f"mlbench failed: {ml_why.get('mlbench')}"})
            continue
        ml_kept = [k for k in jobs if k in keep_candidates(ml_cal, "mlbench")]
        say(f"disk {name}: calibration " + ", ".join(f"{k} {v:.0f}" for k, v in {**ml_cal, **cal}.items())
            + (f"; refused: {', '.join(list(ml_why) + list(why))}" if why or ml_why else ""))
        tools = ml_kept + [label for label, _ in kept] + (["baseline"] if args.baseline else [])
        opts = dict(kept)
        rates = {k: [] for k in tools}
        for pair in range(args.pairs):
            for tool in rotate(tools, pair):
                if tool in jobs or tool == "baseline":
                    binary = args.baseline if tool == "baseline" else args.mlbench
                    c = ok_case(run_mlbench(binary, jobs.get(tool, job), work, ["--disk-file", path]), name)
                    rates[tool].append(c["rate"]["median"])
                else:
                    rate, err = run_fio(base + opts[tool])
                    if rate is None:
                        raise RuntimeError(f"fio ({tool}) failed: {err}")
                    rates[tool].append(rate)
            say(f"disk {name}: pair {pair + 1}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in rates.items()))
        default = variants[0][0]
        best = max(opts, key=lambda k: statistics.median(rates[k]))
        ml_best = max(ml_kept, key=lambda k: statistics.median(rates[k]))
        row = {"section": "disk", "case": name, "unit": "MB/s",
               "rates": {"mlbench": rates["mlbench"], "mlbench best": rates[ml_best], "fio default": rates[default],
                         "fio best": rates[best]},
               "all_rates": rates, "fio_calibration": cal, "fio_refused": why, "fio_best": best,
               "mlbench_calibration": ml_cal, "mlbench_refused": ml_why, "mlbench_best": ml_best,
               "peer_commands": {"fio default": shlex.join(base + opts[default]),
                                 "fio best": shlex.join(base + opts[best])},
               "mlbench_job": job, "mlbench_best_job": jobs[ml_best]}
        if args.baseline:
            row["rates"]["baseline"] = rates["baseline"]
        # mlbench's default against fio's default; the best of each tool's options against each other
        # (the ceiling: the suites run mlbench's options and keep the faster)
        row["ratios"] = {
            "vs fio default": ratio(rates["mlbench"], rates[default]),
            "vs fio best": ratio(rates["mlbench"], rates[best]),
            "best vs fio best": ratio(rates[ml_best], rates[best]),
        }
        if args.baseline:
            row["ratios"]["vs baseline"] = ratio(rates["mlbench"], rates["baseline"])
        report.append(row)


def ratio(a, b):
    """Median of the pairs' ratios: each pair ran back to back."""
    return statistics.median(x / y for x, y in zip(a, b))


# ---- STREAM ------------------------------------------------------------------

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
                for c in run_mlbench(args.mlbench, job, work, []):
                    if c.get("status") == "ok":
                        ml[c["params"]["kernel"]].append(c["rate"]["best"])
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


# ---- GEMM --------------------------------------------------------------------

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
                        c = ok_case(run_mlbench(args.mlbench, job, work, []), f"gemm/{backend}")
                        sus = c.get("sustained") or {}
                        ml.append(sus.get("rate") or c["rate"]["median"])
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
                       "peer_commands": {caller: f"{SYS_PYTHON} -c <GEMM_CALLER in scripts/peers> {n} "
                                                 f"{args.gemm_seconds} {caller}"},
                       "mlbench_figure": "sustained rate (the ceiling gap uses), else the median",
                       "peer_figure": "median of timed calls", "mlbench_job": job})


# ---- output -------------------------------------------------------------------

def print_table(report):
    print(f"{'section':<7} {'case':<30} {'mlbench':>9} {'peer(s)':<40} {'ratios (median of pairs)'}")
    for r in report:
        if "error" in r:
            print(f"{r['section']:<7} {r['case']:<30} {'-':>9} {r['error']}")
            continue
        ml = statistics.median(r["rates"]["mlbench"])
        peers = ", ".join(f"{k} {statistics.median(v):.1f}" for k, v in r["rates"].items() if k != "mlbench")
        ratios = ", ".join(f"{k} {v:.3f}" for k, v in r["ratios"].items())
        extra = f" [fio best = {r['fio_best']}]" if "fio_best" in r else ""
        if r.get("mlbench_best", "mlbench") != "mlbench":
            extra += f" [mlbench best = {r['mlbench_best']}]"
        print(f"{r['section']:<7} {r['case']:<30} {ml:>9.1f} {peers:<40} {ratios}{extra}  ({r['unit']})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mlbench", default=os.environ.get("MLBENCH", "mlbench"), help="the mlbench binary")
    ap.add_argument("--baseline", help="disk: a second mlbench binary run in every pair (before/after)")
    ap.add_argument("--only", default="disk,stream,gemm",
                    help="comma-separated sections: disk, stream, gemm (default: all; stream needs --stream-c)")
    ap.add_argument("--filter", help="regex on the case names of the selected sections")
    ap.add_argument("--pairs", type=int, default=3, help="alternating pairs per case (at least 3)")
    ap.add_argument("--reps", default="3", help="mlbench repetitions per run (default 3)")
    ap.add_argument("--min-time", default="1", help="mlbench min_time per repetition (default 1 s)")
    ap.add_argument("--dir", default=".", help="disk: where the test file goes (a real file system, not tmpfs)")
    ap.add_argument("--disk-file", help="disk: read this existing file instead (read-only)")
    ap.add_argument("--size", default="1g", help="disk: size of the test file (default 1g)")
    ap.add_argument("--runtime", type=float, default=4, help="disk: fio seconds per run (default 4)")
    ap.add_argument("--ramp", type=float, default=1, help="disk: fio ramp_time (default 1)")
    ap.add_argument("--stream-c", help=f"path to McCalpin's stream.c, published at {STREAM_URL}")
    ap.add_argument("--stream-elements", type=int, default=16 << 20,
                    help="STREAM_ARRAY_SIZE, doubles per array (default 16 Mi = 128 MiB)")
    ap.add_argument("--gemm-n", type=int, default=2048, help="gemm: m = n = k (default 2048)")
    ap.add_argument("--gemm-seconds", type=float, default=3, help="gemm: peer's timed seconds per run")
    ap.add_argument("--min-ratio", type=float, default=0, help="exit 1 when a ratio is below this")
    ap.add_argument("--nice", type=int, default=0, help="run every tool under nice -n N (e.g. -15 as root)")
    ap.add_argument("--json", help="also write every rate, ratio and peer command line here")
    args = ap.parse_args()

    if args.nice:
        NICE[:] = ["nice", "-n", str(args.nice)]
    sections = [s.strip() for s in args.only.split(",") if s.strip()]
    for s in sections:
        if s not in ("disk", "stream", "gemm"):
            die(f"--only: unknown section '{s}' (disk, stream, gemm)")
    if args.pairs < 3:
        die("--pairs: at least 3 (one pair says nothing on a shared machine)")
    if shutil.which(args.mlbench) is None and not os.access(args.mlbench, os.X_OK):
        die(f"mlbench binary not found: {args.mlbench} (use --mlbench)")
    if args.baseline and not os.access(args.baseline, os.X_OK):
        die(f"--baseline {args.baseline}: not an executable")
    if "stream" in sections and not (args.stream_c and os.path.isfile(args.stream_c)):
        msg = (f"STREAM is not packaged and is not downloaded here: get stream.c from {STREAM_URL} and "
               f"give its path with --stream-c" + (f" ({args.stream_c}: no such file)" if args.stream_c else ""))
        if sections == ["stream"] or args.stream_c:
            die(msg)
        print(f"peers: stream skipped: {msg}", file=sys.stderr)
        sections.remove("stream")
    if args.disk_file and not os.path.isfile(args.disk_file):
        die(f"--disk-file {args.disk_file}: no such file")
    if not os.path.isdir(args.dir):
        die(f"--dir {args.dir}: not a directory")

    work = tempfile.mkdtemp(prefix="mlbench-peers-", dir=os.path.abspath(args.dir))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    report = []
    meta = {"load_start": load(), "pairs": args.pairs, "nice": args.nice}
    try:
        for s in sections:
            try:
                {"disk": compare_disk, "stream": compare_stream, "gemm": compare_gemm}[s](args, work, report)
            except RuntimeError as e:
                report.append({"section": s, "case": "-", "error": str(e)})
    except KeyboardInterrupt:
        print("peers: interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(work, ignore_errors=True)
    meta["load_end"] = load()
    print_table(report)
    print(f"load average at start {meta['load_start']}, at end {meta['load_end']}; "
          f"{args.pairs} alternating pairs per case")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": report}, f, indent=2)
    # Against peers only: a ratio to --baseline is a before/after, not a ceiling check.
    low = [r for r in report if "ratios" in r and any(v < args.min_ratio for k, v in r["ratios"].items()
                                                      if k != "vs baseline")]
    bad = [r for r in report if "error" in r]
    return 1 if low or bad else 0


if __name__ == "__main__":
    sys.exit(main())
