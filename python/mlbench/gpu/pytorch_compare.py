"""pytorch_compare.py: mlbench's ceilings next to what PyTorch gets on the same
GPU in the same run, as ratios mlbench / PyTorch.

For each case (GEMM bf16/fp16/tf32 8192^3 and bf16 4096^3; pinned h2d/d2h
copies, pageable h2d and d2h copies, a d2d copy, a triad) it runs mlbench on that one
case (a generated job file, its JSON results read back), then measures the
same thing with PyTorch right after, so both see the same clocks and
temperature. A ratio near 1 means mlbench's ceiling is what a framework gets;
clearly below 1 means mlbench leaves performance on the table (a bug to fix);
above 1 is what a ceiling may be (PyTorch pays dispatch and picks its own
algorithms). The byte and FLOP counts are the same on both sides: d2d counts
read + write (2 x size), triad counts 3 arrays, GEMM 2*M*N*K.

PyTorch timing: CUDA events around `iters` back-to-back calls, after 3
warm-up calls, 5 repetitions, median rate. Outputs are checked (copies
exactly, GEMM rows against an fp32 reference).

GEMM rows are also compared like for like in mlbench's two phases
(harness/api/phases.h, docs/gpu-gemm-conv.md "Burst and sustained"): PyTorch runs
the same burst windows (count, length, idle gap before each) and the same
settle + sustained stretch, with the lengths read from mlbench's results file,
the same batch of GEMMs per timed call (mlbench's gemms_per_iteration) and the
same input distribution (uniform in [-1, 1), as mlbench's mb_gemm_input). The
table then gives burst/burst and sustained/sustained ratios; the verdict asks
>= 0.97 for both on every GEMM row, and >= 0.95 of every other case, a membw
case run in both grid shapes (waves = 1 and 0) by the faster, its ceiling. The `mlbench` column is the case's
ceiling, the figure mlbench's own table, JSON and gap show (the sustained
phase for compute cases, else the repetitions' median), and `ratio` holds it
against PyTorch's rate in the same phase (on an H200, 2026-11-26, this
column showed the repetitions' median, bf16 8192^3 0.85 of PyTorch's quick
timing, beside a ceiling 1.11 of PyTorch's sustained rate).

Usage:
  python3 -m mlbench.gpu.pytorch_compare [--mlbench CMD] [--only REGEX] [--json FILE]
  (or scripts/pytorch_compare.py, the bundle's bin/pytorch_compare.py)
    --mlbench CMD  how to run mlbench (default: $MLBENCH, else the bundle's
                   run.sh beside its python/ folder or in .bundle/, else mlbench)
Needs torch with CUDA (the GPU machine's python3); stdlib otherwise.
"""
import argparse
import json
import os
import re
import shlex
import statistics
import sys
import tempfile
import time

from .. import results, runner, tree_root

MIB = 1 << 20

# label, mlbench job-file section, PyTorch measurement (kind, arguments)
CASES = [
    ("gemm bf16 8192^3", {"component": "gemm", "backend": "cublaslt", "shape": "8192x8192x8192", "dtype": "bf16"},
     ("gemm", {"dtype": "bf16", "n": 8192})),
    ("gemm fp16 8192^3", {"component": "gemm", "backend": "cublaslt", "shape": "8192x8192x8192", "dtype": "fp16"},
     ("gemm", {"dtype": "fp16", "n": 8192})),
    ("gemm tf32 8192^3", {"component": "gemm", "backend": "cublaslt", "shape": "8192x8192x8192", "dtype": "tf32"},
     ("gemm", {"dtype": "tf32", "n": 8192})),
    ("gemm bf16 4096^3", {"component": "gemm", "backend": "cublaslt", "shape": "4096x4096x4096", "dtype": "bf16"},
     ("gemm", {"dtype": "bf16", "n": 4096})),
    ("gemm fp16 4096^3", {"component": "gemm", "backend": "cublaslt", "shape": "4096x4096x4096", "dtype": "fp16"},
     ("gemm", {"dtype": "fp16", "n": 4096})),
    ("gemm tf32 4096^3", {"component": "gemm", "backend": "cublaslt", "shape": "4096x4096x4096", "dtype": "tf32"},
     ("gemm", {"dtype": "tf32", "n": 4096})),
    ("gemm bf16 8192^3 cublas", {"component": "gemm", "backend": "cublas", "shape": "8192x8192x8192", "dtype": "bf16"},
     ("gemm", {"dtype": "bf16", "n": 8192})),
    ("copy h2d pinned 256 MiB", {"component": "copy", "backend": "cuda", "direction": "h2d", "memory": "pinned",
                                 "size": "256m"}, ("copy", {"dir": "h2d", "pinned": True, "size": 256 * MIB})),
    ("copy d2h pinned 256 MiB", {"component": "copy", "backend": "cuda", "direction": "d2h", "memory": "pinned",
                                 "size": "256m"}, ("copy", {"dir": "d2h", "pinned": True, "size": 256 * MIB})),
    ("copy h2d pinned 1 GiB", {"component": "copy", "backend": "cuda", "direction": "h2d", "memory": "pinned",
                               "size": "1g"}, ("copy", {"dir": "h2d", "pinned": True, "size": 1024 * MIB})),
    ("copy h2d pinned 64 KiB", {"component": "copy", "backend": "cuda", "direction": "h2d", "memory": "pinned",
                                "size": "64k"}, ("copy", {"dir": "h2d", "pinned": True, "size": 64 * 1024})),
    ("copy h2d pageable 256 MiB", {"component": "copy", "backend": "cuda", "direction": "h2d", "memory": "pageable",
                                   "size": "256m"}, ("copy", {"dir": "h2d", "pinned": False, "size": 256 * MIB})),
    ("copy d2h pageable 256 MiB", {"component": "copy", "backend": "cuda", "direction": "d2h", "memory": "pageable",
                                   "size": "256m"}, ("copy", {"dir": "d2h", "pinned": False, "size": 256 * MIB})),
    ("copy d2d 1 GiB (r+w)", {"component": "copy", "backend": "cuda", "direction": "d2d", "size": "1g"},
     ("copy", {"dir": "d2d", "pinned": True, "size": 1024 * MIB})),
    ("membw triad fp32 256 MiB", {"component": "membw", "backend": "cuda", "op": "triad", "dtype": "fp32",
                                  "size": "256m"}, ("triad", {"size": 256 * MIB})),
    # the other grid shape (waves = 0: one unrolled step per thread); the suites run both
    ("membw triad fp32 256 MiB waves=0", {"component": "membw", "backend": "cuda", "op": "triad", "dtype": "fp32",
                                          "size": "256m", "waves": "0"}, ("triad", {"size": 256 * MIB})),
    # membw's copy kernel against PyTorch's device-to-device copy of the same bytes (read + write)
    ("membw copy fp32 1 GiB vs d2d", {"component": "membw", "backend": "cuda", "op": "copy", "dtype": "fp32",
                                      "size": "1g"}, ("copy", {"dir": "d2d", "pinned": True, "size": 1024 * MIB})),
    ("membw copy fp32 1 GiB vs d2d waves=0", {"component": "membw", "backend": "cuda", "op": "copy",
                                              "dtype": "fp32", "size": "1g", "waves": "0"},
     ("copy", {"dir": "d2d", "pinned": True, "size": 1024 * MIB})),
]


def default_mlbench():
    """$MLBENCH, else the bundle's run.sh (this package in a bundle: run.sh beside its python/ folder; in the source
    tree: .bundle/run.sh), else mlbench on PATH."""
    if os.environ.get("MLBENCH"):
        return os.environ["MLBENCH"]
    root = tree_root()
    for cand in ((os.path.join(root, "run.sh"), os.path.join(root, ".bundle", "run.sh")) if root else ()):
        if os.path.isfile(cand):
            return os.path.normpath(cand)
    return "mlbench"


def run_mlbench(cmd, label, section, workdir):
    """Runs one case; returns (rate, unit, status text, efficiency, peak source,
    the case object of the results file or None)."""
    name = "cmp-" + re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    text = "[%s]\n" % name + "".join("%s = %s\n" % (k, v) for k, v in section.items())
    job = runner.write_job(os.path.join(workdir, name + ".ini"), text)
    try:
        run = runner.run_mlbench(shlex.split(cmd), job, os.path.join(workdir, name + ".json"))
    except results.ResultsError as e:
        return None, "", "mlbench wrote a results file it cannot read: %s" % e, None, "", None
    if run.results is None:
        return None, "", "mlbench failed (exit %d): %s" % (run.returncode, run.output.strip()[-300:]), None, "", None
    if not run.results.cases:
        return None, "", "mlbench ran no case", None, "", None
    c = run.results.cases[0]
    # only a usable case (ok, verified, a ceiling above zero) is held against PyTorch: a fast wrong number is none
    if not c.usable:
        return None, c.rate_unit or "", "%s: %s" % (c.state, c.reason), None, "", c.json
    # c.rate: the case's ceiling, the one figure every view of mlbench shows (the sustained phase for compute
    # cases, else the repetitions' median)
    return (c.rate, c.rate_unit, "ok, verification %s" % c.verification, c.json.get("efficiency"),
            c.peak_source or "", c.json)


def phase_opts(case):
    """mlbench's phase lengths as its results file records them for `case`,
    or None when the case has no burst and sustained phases."""
    b, s = (case or {}).get("burst"), (case or {}).get("sustained")
    if not isinstance(b, dict) or not isinstance(s, dict):
        return None
    return {"windows": int(b["windows"]), "window": float(b["window_seconds"]), "idle": float(b["idle_seconds"]),
            "settle": float(s["settle_seconds"]), "sustained": float(s["window_seconds"])}


def phases(run, opts, now=time.monotonic, sleep=time.sleep):
    """mlbench's burst and sustained phases (harness/phases.c) around run(),
    which does one timed batch and returns (timed seconds, work). Burst: each
    of opts["windows"] windows follows an idle gap and runs batches until
    opts["window"] seconds have passed; its rate is the median of the windows'.
    Sustained: batches for opts["settle"] seconds untimed, then for
    opts["sustained"] seconds timed. Rates in work per second."""
    def run_for(length):
        start, seconds, work = now(), 0.0, 0.0
        while True:
            sec, w = run()
            seconds += sec
            work += w
            t = now()
            if t - start >= length:
                return seconds, work, t - start

    rates = []
    for _ in range(opts["windows"]):
        sleep(opts["idle"])
        seconds, work, _ = run_for(opts["window"])
        rates.append(work / seconds)
    if opts["settle"] > 0:
        run_for(opts["settle"])
    seconds, work, wall = run_for(opts["sustained"])
    return {"burst": statistics.median(rates), "burst_best": max(rates), "burst_windows": len(rates),
            "sustained": work / seconds, "sustained_wall_seconds": wall}


def mlbench_phase(case, phase):
    """(rate, mean SM clock or None) of a phase in mlbench's results."""
    p = case[phase]
    clock = (p.get("sm_clock_mhz") or {}).get("mean")
    return p["rate"], clock


def timed(torch, fn, iters, reps=5, warmup=3):
    """Median seconds per call: CUDA events around `iters` calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    per_call = []
    for _ in range(reps):
        start.record()
        for _ in range(iters):
            fn()
        stop.record()
        stop.synchronize()
        per_call.append(start.elapsed_time(stop) / 1e3 / iters)
    return statistics.median(per_call)


def set_tf32(torch, on):
    """TF32 for fp32 matmuls: the fp32_precision setting from PyTorch 2.9 on
    (allow_tf32 is deprecated there), allow_tf32 before."""
    matmul = torch.backends.cuda.matmul
    if hasattr(matmul, "fp32_precision"):
        matmul.fp32_precision = "tf32" if on else "ieee"
    else:
        matmul.allow_tf32 = on


def uniform(torch, n, t, g):
    """n x n in [-1, 1), as mlbench fills GEMM inputs (kernels/shared/gemm_common.c
    mb_gemm_input: uniform doubles rounded to the type). The distribution
    matters: a GPU at its power cap runs slower on inputs that toggle more
    bits (randn's and uniform's power differ)."""
    x = torch.rand(n, n, device="cuda", dtype=torch.float32, generator=g) * 2 - 1
    return x.to(t)


def torch_gemm(torch, dtype, n, opts=None, batch=None):
    """Rate of torch.mm: the quick timing, and with opts mlbench's burst and
    sustained phases (batch GEMMs per timed call)."""
    set_tf32(torch, dtype == "tf32")
    t = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32}[dtype]
    g = torch.Generator(device="cuda").manual_seed(1)
    a = uniform(torch, n, t, g)
    b = uniform(torch, n, t, g)
    c = torch.empty(n, n, device="cuda", dtype=t)
    flops = 2.0 * n * n * n
    sec = timed(torch, lambda: torch.mm(a, b, out=c), iters=10 if n >= 8192 else 50)
    extra = {}
    if opts:
        k = batch or max(1, int(-(-2e-3 // sec)))  # about 2 ms per timed call, as mlbench
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def run():
            start.record()
            for _ in range(k):
                torch.mm(a, b, out=c)
            stop.record()
            stop.synchronize()
            return start.elapsed_time(stop) / 1e3, flops * k

        ph = phases(run, opts)
        extra = {"burst": ph["burst"] / 1e12, "sustained": ph["sustained"] / 1e12, "batch": k}
    ref = a[:8].double() @ b.double()
    err = ((c[:8].double() - ref).abs().max() / ref.abs().max()).item()
    tol = 1e-2 if dtype != "tf32" else 5e-3
    set_tf32(torch, False)
    return flops / sec / 1e12, "TFLOP/s", err <= tol, "max rel err %.1e" % err, extra


def torch_copy(torch, direction, pinned, size):
    g = torch.Generator().manual_seed(2)
    host = torch.randint(0, 256, (size,), dtype=torch.uint8, generator=g)
    if pinned:
        host = host.pin_memory()
    dev = torch.empty(size, dtype=torch.uint8, device="cuda")
    iters = max(1, min(100, (256 * MIB) // size))
    if direction == "h2d":
        fn = lambda: dev.copy_(host, non_blocking=True)
        sec = timed(torch, fn, iters)
        ok = torch.equal(dev.cpu(), host)
        work = size
    elif direction == "d2h":
        src = torch.randint(0, 256, (size,), dtype=torch.uint8, device="cuda")
        fn = lambda: host.copy_(src, non_blocking=True)
        sec = timed(torch, fn, iters)
        torch.cuda.synchronize()
        ok = torch.equal(host, src.cpu())
        work = size
    else:
        src = host.to("cuda")
        fn = lambda: dev.copy_(src)
        sec = timed(torch, fn, iters)
        ok = torch.equal(dev, src)
        work = 2 * size  # read + write, as mlbench counts d2d
    return work / sec / 1e9, "GB/s", ok, "%d copies per timing" % iters, {}


def torch_triad(torch, size):
    n = size // 4
    b = torch.rand(n, device="cuda") + 1
    c = torch.rand(n, device="cuda") + 1
    a = torch.empty(n, device="cuda")
    sec = timed(torch, lambda: torch.add(b, c, alpha=0.4, out=a), iters=20)
    ok = torch.allclose(a, b + 0.4 * c)
    return 3 * size / sec / 1e9, "GB/s", ok, "torch.add(b, c, alpha=0.4, out=a)", {}


def measure_torch(torch, kind, args, case=None):
    if kind == "gemm":
        batch = ((case or {}).get("metrics", {}).get("gemms_per_iteration") or {}).get("value")
        return torch_gemm(torch, args["dtype"], args["n"], phase_opts(case), int(batch) if batch else None)
    if kind == "copy":
        return torch_copy(torch, args["dir"], args["pinned"], args["size"])
    return torch_triad(torch, args["size"])


def main(argv=None, prog=None):
    """The command line; argv without the program's name (default sys.argv[1:]), prog as usage names it."""
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0])
    ap.add_argument("--mlbench", default=default_mlbench(), help="command that runs mlbench")
    ap.add_argument("--only", default="", help="run only cases whose label matches this regex")
    ap.add_argument("--json", default="", help="also write the table as JSON here")
    opts = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("pytorch_compare: torch is not importable with %s" % sys.executable, file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("pytorch_compare: torch sees no CUDA device", file=sys.stderr)
        return 77
    print("GPU: %s; torch %s (CUDA %s); mlbench: %s" % (torch.cuda.get_device_name(), torch.__version__,
                                                         torch.version.cuda, opts.mlbench))
    print(HEADER)
    rows = []
    with tempfile.TemporaryDirectory(prefix="mlbench-cmp-") as work:
        for label, section, (kind, args) in CASES:
            if opts.only and not re.search(opts.only, label):
                continue
            mb = run_mlbench(opts.mlbench, label, section, work)
            torch.cuda.empty_cache()
            pt = measure_torch(torch, kind, args, mb[5])
            torch.cuda.empty_cache()
            rows.append(make_row(label, mb, pt))
            for line in row_lines(rows[-1]):
                print(line, flush=True)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump({"gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=2)
    lines, status = summary(rows)
    for line in lines:
        print(line)
    return status


HEADER = "%-28s %10s %10s %-8s %7s %6s %9s %9s" % ("case", "mlbench", "pytorch", "unit", "ratio", "eff",
                                                   "burst b/b", "sust s/s")


def make_row(label, mb, pt):
    """One table row from run_mlbench's and measure_torch's results. `mlbench`
    is the case's ceiling (as mlbench's table, JSON and gap show it); `ratio`
    is it over PyTorch's rate measured the same way: on rows with phases (GEMM)
    PyTorch's rate in the ceiling's phase (sustained), else its quick timing.
    burst_ratio and sustained_ratio compare both phases like with like."""
    mb_rate, mb_unit, mb_status, mb_eff, mb_peak, case = mb
    pt_rate, pt_unit, pt_ok, pt_note, pt_phases = pt
    ceiling_phase = ((case or {}).get("ceiling") or {}).get("source")
    if pt_phases and ceiling_phase in ("burst", "sustained") and pt_phases.get(ceiling_phase):
        pt_rate = pt_phases[ceiling_phase]
    ratio = mb_rate / pt_rate if mb_rate and pt_rate and mb_unit == pt_unit else None
    r = {"case": label, "unit": pt_unit, "mlbench": mb_rate, "mlbench_status": mb_status,
         "mlbench_efficiency": mb_eff, "mlbench_peak": mb_peak,
         "pytorch": pt_rate, "pytorch_check": "passed" if pt_ok else "FAILED",
         "pytorch_note": pt_note, "ratio": ratio, "phases": bool(pt_phases)}
    if pt_phases and mb_rate and mb_unit == pt_unit:
        for ph in ("burst", "sustained"):
            rate, clock = mlbench_phase(case, ph)
            r["mlbench_" + ph] = rate
            r["mlbench_%s_sm_mhz" % ph] = clock
            r["pytorch_" + ph] = pt_phases[ph]
            r[ph + "_ratio"] = rate / pt_phases[ph] if rate and pt_phases[ph] else None
        r["gemms_per_call"] = pt_phases.get("batch")
    return r


def fmt_ratio(v):
    return "%.3f" % v if v is not None else "-"


def row_lines(r):
    """The row as printed: the table line, and for rows with phases a line
    with both phases' rates and mlbench's SM clock in each."""
    lines = ["%-28s %10s %10.2f %-8s %7s %6s %9s %9s   mlbench %s; torch check %s (%s)" % (
        r["case"], "%.2f" % r["mlbench"] if r["mlbench"] else "-", r["pytorch"], r["unit"], fmt_ratio(r["ratio"]),
        "%.0f%%" % (100 * r["mlbench_efficiency"]) if r["mlbench_efficiency"] else "-",
        fmt_ratio(r.get("burst_ratio")), fmt_ratio(r.get("sustained_ratio")), r["mlbench_status"],
        r["pytorch_check"], r["pytorch_note"])]
    if r.get("phases") and "mlbench_burst" in r:
        parts = []
        for ph in ("burst", "sustained"):
            clock = r["mlbench_%s_sm_mhz" % ph]
            parts.append("%s mlbench %.2f%s / torch %.2f" % (
                ph, r["mlbench_" + ph], " @%.0f MHz" % clock if clock else "", r["pytorch_" + ph]))
        lines.append("%-28s %s (%s GEMMs per timed call)" % ("", "; ".join(parts), r.get("gemms_per_call")))
    return lines


WAVES0 = " waves=0"  # the label suffix of a membw row's second grid shape (CASES)


def summary(rows):
    """The lines printed after the table and the exit status (0 = all good).
    Needs no torch: tests/pytorch_compare_test.py calls it with made-up rows."""
    lines = []
    # Rows with phases are judged like for like below, both phases. A membw case run with both grid shapes
    # is judged by the faster: that is its ceiling (the suites run waves = 1, 0; docs/gpu-io.md).
    best = {}
    for r in rows:
        if not r.get("phases") and r["ratio"] is not None:
            key = r["case"][:-len(WAVES0)] if r["case"].endswith(WAVES0) else r["case"]
            best[key] = max(best.get(key, r["ratio"]), r["ratio"])
    low = [case for case, ratio in best.items() if ratio < 0.95]
    if low:
        # No %-formatting here: the text itself holds a percent sign.
        lines.append("mlbench is more than 5% below PyTorch on: " + ", ".join(low))
    checks = done_means(rows)
    if checks:
        lines.append("done-means (issue 3):")
        lines.extend("  " + line for line in checks)
    like = like_for_like(rows)
    if like:
        lines.append("like for like, GEMM (issue 9: burst/burst and sustained/sustained >= %.2f):" % LIKE_MIN)
        lines.extend("  " + line for line in like)
    failed = [line for line in checks + like if not line.startswith("ok")]
    torch_bad = [r["case"] for r in rows if r.get("pytorch_check") != "passed"]
    if torch_bad:
        lines.append("PyTorch's own output check failed on: " + ", ".join(torch_bad))
    ok = not low and not failed and not torch_bad
    lines.append("verdict: %s" % ("PASS" if ok else "FAIL"))
    return lines, 0 if ok else 1


LIKE_MIN = 0.97


def like_for_like(rows):
    """One line per GEMM row: ok when both phase ratios are >= LIKE_MIN; a row
    without them (mlbench failed, no phases in its results) misses."""
    lines = []
    for r in rows:
        if not r["case"].startswith("gemm"):
            continue
        b, s = r.get("burst_ratio"), r.get("sustained_ratio")
        ok = b is not None and s is not None and b >= LIKE_MIN and s >= LIKE_MIN
        lines.append("%s  %s: burst/burst %s, sustained/sustained %s" % (
            "ok  " if ok else "MISS", r["case"], fmt_ratio(b), fmt_ratio(s)))
    return lines


# Issue 3's done-means: (case, test on the row, what it asks). Its GEMM
# check (within 3% of PyTorch) is now issue 9's like-for-like one above.
DONE_MEANS = [
    ("copy d2d 1 GiB (r+w)", lambda r: (r["mlbench_efficiency"] or 0) >= 0.85, "d2d >= 85% of the HBM bandwidth"),
    ("copy h2d pinned 1 GiB", lambda r: (r["mlbench_efficiency"] or 0) >= 0.85, "pinned h2d >= 85% of the link rate"),
    ("copy h2d pinned 256 MiB", lambda r: (r["mlbench_efficiency"] or 0) >= 0.85, "pinned h2d >= 85% of the link"),
    ("copy d2h pinned 256 MiB", lambda r: (r["mlbench_efficiency"] or 0) >= 0.85, "pinned d2h >= 85% of the link"),
]


def done_means(rows):
    """One line per done-means check whose case ran."""
    by_case = {r["case"]: r for r in rows}
    lines = []
    for case, test, what in DONE_MEANS:
        r = by_case.get(case)
        if r is None:
            continue
        eff = "%.0f%% of %s" % (100 * r["mlbench_efficiency"], r["mlbench_peak"]) if r["mlbench_efficiency"] else "-"
        ratio = "%.3f" % r["ratio"] if r["ratio"] is not None else "-"
        lines.append("%s  %s: ratio %s, efficiency %s" % ("ok  " if test(r) else "MISS", what, ratio, eff))
    return lines


if __name__ == "__main__":
    sys.exit(main(prog="python3 -m mlbench.gpu.pytorch_compare"))
