#!/usr/bin/env python3
"""gap_views: one run, one step, one set of shares, one bottleneck, in every
view of `mlbench gap` (issue 31): text, Markdown, JSON and the HTML page.

Runs: the run-ahead traces (scripts/gen_large_trace.py --pattern runahead and
runahead-after: steps cut on the GPU's timeline), a torch.compile'd step and
its CUDA-graph replay (--pattern compiled, graphed), a real H200 trace (bench/data, GPT bf16)
with and without --step-ms, real H200 loops that never synchronise and one that waits on
loss.item() (bench/data/pair-h100-h200-nosync*), and a stage file. For each: the JSON's
run.step_seconds, step.seconds and amdahl.step_seconds_now are one number;
the headline's shares and the step table's add up to 100%; the bottleneck is
the diagnosis' primary title; and the text, the Markdown and the page print
that step, those shares (as mb_fmt_share rounds them) and that bottleneck.

Environment (tests/CMakeLists.txt): MLBENCH, SRC, WORK.
"""
import html
import json
import os
import re
import subprocess
import sys

MLBENCH, SRC, WORK = os.environ["MLBENCH"], os.environ["SRC"], os.environ["WORK"]
GEN = os.path.join(SRC, "scripts", "gen_large_trace.py")
PAIR = os.path.join(SRC, "bench", "data", "pair-h100-h200-gpubound2", "h200")
fails = 0


def check(name, cond, detail=""):
    global fails
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, "" if cond else ": %s" % (detail,)))
    fails += 0 if cond else 1


def run(args, fmt):
    cmd = [MLBENCH, "gap"] + args + (["--format", fmt] if fmt else [])
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def share(f):
    """mb_fmt_share: one decimal, one significant digit below 0.1%."""
    return "%.1g%%" % (100 * f) if 0 < f < 0.001 else "%.1f%%" % (100 * f)


def fmt_seconds(s):
    """mb_fmt_seconds (harness/report/format.c): rounded to 3 significant digits
    first, then in s/ms/µs/ns; 0 is "0 s"."""
    if abs(s) < 999.5:
        s = float("%.3g" % s)
    if s == 0:
        return "0 s"
    for unit, k, below in (("ns", 1e9, 1e-6), ("µs", 1e6, 1e-3), ("ms", 1e3, 1), ("s", 1, 999.5)):
        if abs(s) < below:
            return "%.3g %s" % (s * k, unit)
    return "%.0f s" % s


def flat(text):
    return " ".join(text.split())


def views(name, args):
    d = json.loads(run(args, "json"))
    text, md = flat(run(args, None)), flat(run(args, "md"))
    page_path = os.path.join(WORK, name + ".html")
    run(args + ["--html", page_path], None)
    page = flat(html.unescape(re.sub(r"<[^>]+>", " ", open(page_path, encoding="utf-8").read())))
    step = d["amdahl"]["step_seconds_now"]
    if d["step"]:
        check("%s: one step in the JSON (run, step table, Amdahl)" % name,
              abs(d["run"]["step_seconds"] - d["step"]["seconds"]) < 1e-12 and abs(step - d["step"]["seconds"]) < 1e-12,
              (d["run"]["step_seconds"], d["step"]["seconds"], step))
        check("%s: the step table's shares add up to 100%%" % name,
              abs(sum(p["share"] for p in d["step"]["parts"]) - 1) < 1e-9, d["step"]["parts"])
    heads = d["headline"]["stages"]
    unacc = d["run"]["unaccounted_seconds"] / d["run"]["total_seconds"]
    check("%s: the headline's shares add up to 100%%" % name,
          abs(sum(h["share"] for h in heads) + unacc - 1) < 1e-9, heads)
    primary = d["diagnosis"]["findings"][0]["title"] if d["diagnosis"]["findings"] else "balanced"
    check("%s: the JSON's bottleneck is the diagnosis' primary" % name, d["bottleneck"] == primary,
          (d["bottleneck"], primary))
    words = "%s, %s of the" % (d["bottleneck"], share(d["bottleneck_share"]))
    per = fmt_seconds(step)
    # a trace without ProfilerSteps is one window, its span: "43.5 s in all", times per run
    said = "%s in all" % per if d["step"] and d["step"].get("window") == "trace" else "%s per step" % per
    for view, body in (("text", text), ("Markdown", md), ("page", page)):
        check("%s %s: the step (%s)" % (name, view, said), said in body, body[:400])
        check("%s %s: the bottleneck first, in the JSON's words" % (name, view), words in body, (words, body[:600]))
        missing = [h["name"] for h in heads if not re.search(re.escape(h["name"]) + r" \|? ?" +
                                                              re.escape(fmt_seconds(h["exposed_seconds_per_step"]))
                                                              + r" \|? ?" + re.escape(share(h["share"])), body)]
        check("%s %s: every headline row with the JSON's time and share" % (name, view), not missing, missing)
        if d["step"]:
            # the text's step table is titled with the step; the page's shows it in its header (above)
            check("%s %s: the step table's parts, with the JSON's shares" % (name, view),
                  (view == "page" or re.search(r"end to end:? %s \(" % re.escape(per), body)) and
                  all(share(p["share"]) in body for p in d["step"]["parts"]), per)
    return d


def nosync():
    """Real loops that never synchronise (bench/data/pair-h100-h200-nosync*, an H200, 2026-11-29): the host runs
    ahead, so the step is cut on the GPU's timeline, and that step is the one the loop takes without the profiler
    (CUDA events around 30 steps, steps.json) within 2% (all four read 0.2% or less); the profiler's closing
    synchronize is no step's sync. tinymlp-item waits on loss.item() every step: host-bound, its traced step holds
    the profiler's own host time, so the share is said to be an upper bound until --step-ms gives the loop's step."""
    base = os.path.join(SRC, "bench", "data", "pair-h100-h200-nosync", "h200")
    steps = json.load(open(os.path.join(base, "steps.json")))["workloads"]
    for name in ("gpt-bf16-nosync", "gpt-fp32-nosync", "resnet50-bf16-nosync", "lnchain-fp32-nosync"):
        args = ["--run", os.path.join(base, name + ".pt.trace.json.gz"),
                "--ceilings", os.path.join(base, "ceilings.json")]
        d = views(name, args)
        measured = steps[name]["step_ms"] / 1e3
        check("%s: the step is the GPU's timeline's" % name, d["step"]["timeline"] == "gpu", d["step"].get("timeline"))
        check("%s: the traced step within 2%% of the loop's without the profiler" % name,
              abs(d["run"]["step_seconds"] / measured - 1) <= 0.02, (d["run"]["step_seconds"], measured))
        check("%s: the closing synchronize is no step's sync" % name,
              sum(p["share"] for p in d["step"]["parts"] if p["id"] == "sync") < 0.01, d["step"]["parts"])
        check("%s: GPU compute bound" % name, d["bottleneck"].startswith("GPU compute bound"), d["bottleneck"])
    host_open(os.path.join(base, "gpt-bf16-nosync.pt.trace.json.gz"), os.path.join(base, "ceilings.json"),
              steps["gpt-bf16-nosync"]["step_ms"])
    profiled_host_note()
    base = os.path.join(SRC, "bench", "data", "pair-h100-h200-nosync2", "h200")
    item = json.load(open(os.path.join(base, "steps.json")))["workloads"]["tinymlp-item"]["step_ms"]
    args = ["--run", os.path.join(base, "tinymlp-item.pt.trace.json.gz"),
            "--ceilings", os.path.join(base, "ceilings.json")]
    d = views("tinymlp-item", args)
    check("tinymlp-item: host-overhead bound, its share an upper bound under the profiler",
          d["bottleneck"].startswith("Host-overhead") and "upper bound" in flat(run(args, None)), d["bottleneck"])
    d = views("tinymlp-item --step-ms", args + ["--step-ms", "%.4f" % item])
    check("tinymlp-item --step-ms: the loop's step, still host-overhead bound",
          abs(d["run"]["step_seconds"] - item / 1e3) < 1e-6 and d["bottleneck"].startswith("Host-overhead"),
          (d["run"]["step_seconds"], d["bottleneck"]))


def host_time_per_step(trace):
    """By hand: the mean of the host's ProfilerStep windows, less what the closing synchronize (after the last
    launch) overlaps of them."""
    import gzip
    ev = json.load(gzip.open(trace, "rt"))["traceEvents"]
    win = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("cat") == "user_annotation" and
           e["name"].startswith("ProfilerStep")]
    last_launch = max(e["ts"] for e in ev if e.get("cat") == "cuda_runtime" and "Launch" in e["name"])
    closing = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("cat") == "cuda_runtime" and
               e["name"] == "cudaDeviceSynchronize" and e["ts"] >= last_launch]
    host = sum(b - a - sum(max(0, min(b, y) - max(a, x)) for x, y in closing) for a, b in win)
    return host / len(win) / 1e6


def profiled_host_note():
    """A loop that synchronises every step (the H200's GPU-bound transformer, bench/data): traced 41.0 ms, timed
    27.6 ms. Without --step-ms the ranking's host time is the profiler's, and a note says so with the here split's
    host time and share; with --step-ms it is gone."""
    base = os.path.join(SRC, "bench", "data", "pair-h100-h200-gpubound", "h200")
    args = ["--run", os.path.join(base, "transformer-bf16.pt.trace.json.gz"), "--ceilings",
            os.path.join(base, "ceilings.json"), "--target", "b200"]
    m = json.loads(run(args, "json"))["machines"]
    host = m["here"]["split_seconds"]["host"]
    want = "the host's time is as the profiler recorded it (%s a step with the GPU idle here, %.0f%% of it)" % (
        fmt_seconds(host), 100 * host / m["here"]["step_seconds"])
    check("profiled host: the ranking says its host time is the profiler's", any(want in a for a in m["assumptions"]),
          (want, m["assumptions"]))
    step = json.load(open(os.path.join(base, "steps.json")))["workloads"]["transformer-bf16"]["step_ms"]
    m = json.loads(run(args + ["--step-ms", "%.4f" % step], "json"))["machines"]
    check("profiled host --step-ms: no such note", not any("as the profiler recorded it" in a for a in m["assumptions"]),
          m["assumptions"])


def host_open(trace, ceilings, step_ms):
    """GPT bf16 that never synchronises (an H200): 35.0 ms of GPU work a step, its host 38.5 ms a step under the
    profiler (35.03 ms timed without it, the host kept pace). Projected, here is the step table's step, and onto a
    GPU whose work takes less (a B200) the step is a range: its GPU's time, ranked, up to the host's bound (the
    profiled host, or the step given when it is the GPU's); a slower GPU (an H100) has one figure. A --step-ms well
    above the GPU's step names the host's time: no range, the step at least that (it was 1.00x at 38.5 ms)."""
    args = ["--run", trace, "--ceilings", ceilings, "--target", "b200,h100-sxm"]
    d = views("host-open", args)
    m, host = d["machines"], host_time_per_step(trace)
    rows = {r["target"]: r for r in m["ranking"]}
    b200, h100 = rows["b200"], rows["h100-sxm"]
    check("host-open: here is the step table's step (the GPU's), not the profiled host's",
          abs(m["here"]["step_seconds"] - d["step"]["seconds"]) < 1e-9, (m["here"]["step_seconds"], d["step"]))
    check("host-open: the host's bound is its time per step under the profiler (by hand %.5g s)" % host,
          abs(m["here"]["host_seconds_max"] - host) < 1e-6 * host, m["here"]["host_seconds_max"])
    check("host-open: B200's step is its GPU's time, up to the host's bound",
          b200["step_seconds"] < 0.8 * host and b200["step_seconds_max"] == m["here"]["host_seconds_max"] and
          abs(b200["speedup_min"] - m["here"]["step_seconds"] / b200["step_seconds_max"]) < 1e-9 and
          abs(b200["speedup"] - m["here"]["step_seconds"] / b200["step_seconds"]) < 1e-9, b200)
    check("host-open: B200 ranked first, at its GPU's time", m["ranking"][0]["target"] == "b200" and
          "if the host keeps up" in m["verdict"], (m["ranking"][0]["target"], m["verdict"]))
    check("host-open: a slower GPU (H100) has one figure", "step_seconds_max" not in h100 and
          h100["step_seconds"] > host, h100)
    rng = "%s-%s" % (fmt_seconds(b200["step_seconds"]).split(" ")[0], fmt_seconds(host))
    for view, body in (("text", flat(run(args, None))), ("Markdown", flat(run(args, "md")))):
        check("host-open %s: the range (%s) and '<' the speed-up" % (view, rng),
              rng in body and "<%.2fx" % b200["speedup"] in body, body[-3000:])
    # priced: costed at its GPU's time, the host's bound's cost beside it ($6/h over the bound, by hand)
    m = json.loads(run(args + ["--price", "b200=6,h100-sxm=5"], "json"))["machines"]
    check("host-open priced: the cheapest's cost up to the host's bound",
          "if the host keeps up (up to $%.3g if it does not)" % (6 / 3600 * host * 1000) in m["verdict"], m["verdict"])
    # ... and its cost a range in the table, both ends in the JSON, per 1000 steps and per epoch
    b200 = next(r for r in m["ranking"] if r["target"] == "b200")
    lo, hi = 6 / 3600 * b200["step_seconds"], 6 / 3600 * host
    check("host-open priced: the JSON's cost at both ends (by hand from the step and the host's bound)",
          abs(b200["usd_per_step"] - lo) < 1e-6 * lo and abs(b200["usd_per_step_max"] - hi) < 1e-6 * hi, b200)
    priced = args + ["--price", "b200=6,h100-sxm=5", "--epoch-steps", "100000"]
    cost = "$%.3g-%.3g" % (lo * 1000, hi * 1000)
    epoch = "$%.3g-%.3g" % (lo * 1e5, hi * 1e5)
    text = run(priced, None)
    for view, body in (("text", flat(text)), ("Markdown", flat(run(priced, "md")))):
        check("host-open priced %s: the cost a range (%s, %s an epoch)" % (view, cost, epoch),
              cost in body and epoch in body, body[-3000:])
    check("host-open priced text: every line in 120 columns",
          max(len(line) for line in text.splitlines()) <= 120, max(text.splitlines(), key=len))
    pm = json.loads(run(priced, "json"))["machines"]
    b200 = next(r for r in pm["ranking"] if r["target"] == "b200")
    check("host-open priced: an epoch's cost at both ends",
          abs(b200["usd_per_epoch"] - lo * 1e5) < 1e-6 * lo * 1e5 and
          abs(b200["usd_per_epoch_max"] - hi * 1e5) < 1e-6 * hi * 1e5, b200)
    page_path = os.path.join(WORK, "host-open-priced.html")
    run(priced + ["--html", page_path], None)
    page = html.unescape(open(page_path, encoding="utf-8").read())
    check("host-open priced page: the cost's range on its bar", "%s per 1000 steps (the first if the host keeps "
          "up)" % cost in page, "")
    page = open(os.path.join(WORK, "host-open.html"), encoding="utf-8").read()
    check("host-open page: the bound beside the bar", "(up to %s: the host)" % fmt_seconds(host) in page, "")
    # the loop's own step, the GPU's within 5%: the host took at most that
    m = json.loads(run(args + ["--step-ms", "%.4f" % step_ms], "json"))["machines"]
    b200 = next(r for r in m["ranking"] if r["target"] == "b200")
    given = float("%.4f" % step_ms) / 1e3
    check("host-open --step-ms (the GPU's step): bounded by the step given",
          abs(m["here"]["host_seconds_max"] - given) < 1e-12 and abs(b200["step_seconds_max"] - given) < 1e-12 and
          b200["step_seconds"] < 0.8 * given, (m["here"], b200))
    # a step 20% above the GPU's: the host's time, calibrated; every row at least that
    slow = 1.2 * d["step"]["seconds"]
    m = json.loads(run(args + ["--step-ms", "%.4f" % (slow * 1e3)], "json"))["machines"]
    b200 = next(r for r in m["ranking"] if r["target"] == "b200")
    check("host-open --step-ms 1.2x the GPU's: the host's time, no range", m["here"]["host_seconds_max"] is None and
          "step_seconds_max" not in b200 and b200["step_seconds"] >= slow * 0.999, (m["here"], b200))
    host_ms(args, d["step"]["seconds"])


def host_ms(args, gpu_step):
    """--host-ms, the host's own time to issue a step: each row's step is its GPU's time or that, the longer (the
    B200's 22.5 ms of GPU work, the H100's 40.5), no range; a host slower than the loop's step, a loop that
    synchronises and a stage file are refused, saying why."""
    m = json.loads(run(args, "json"))["machines"]
    gpu = {r["target"]: r["step_seconds"] for r in m["ranking"]}  # without --host-ms: each GPU's time
    b200, h100 = gpu["b200"], gpu["h100-sxm"]
    for host in (0.5 * (b200 + gpu_step), 0.5 * b200):  # between the B200's GPU time and the step; under both
        d = json.loads(run(args + ["--host-ms", "%.6f" % (host * 1e3)], "json"))
        m = d["machines"]
        rows = {r["target"]: r for r in m["ranking"]}
        want_b200 = max(b200, round(host * 1e3, 6) / 1e3)
        check("--host-ms %.1f ms: B200 %.2f ms (the longer of its GPU's %.2f and the host's), one figure" % (
              host * 1e3, want_b200 * 1e3, b200 * 1e3), abs(rows["b200"]["step_seconds"] - want_b200) < 1e-9 and
              "step_seconds_max" not in rows["b200"] and m["here"]["host_seconds_max"] is None and
              abs(m["here"]["host_seconds_given"] - round(host * 1e3, 6) / 1e3) < 1e-12, (rows["b200"], m["here"]))
        check("--host-ms %.1f ms: the B200's host class is the step less its GPU's time" % (host * 1e3),
              abs(rows["b200"]["split_seconds"]["host"] - (rows["b200"]["step_seconds"] - b200) -
                  gpu_split(args, "b200")["host"]) < 1e-9, rows["b200"]["split_seconds"])
        check("--host-ms %.1f ms: the H100 (GPU work longer) unchanged; no 'if the host keeps up'" % (host * 1e3),
              abs(rows["h100-sxm"]["step_seconds"] - h100) < 1e-12 and "if the host keeps up" not in m["verdict"] and
              "the host bounds its step there" not in m["verdict"] and  # the B200's GPU idle 22% at most
              any("--host-ms gives the host's own time to issue a step" in n for n in m["assumptions"]),
              (rows["h100-sxm"], m["verdict"]))
        text = flat(run(args + ["--host-ms", "%.6f" % (host * 1e3)], None))
        table = text.split("machines ranked")[-1].split("assumptions")[0]
        check("--host-ms %.1f ms text: no range" % (host * 1e3), re.search(r"<\d", table) is None and
              "%s-" % fmt_seconds(rows["b200"]["step_seconds"]).split(" ")[0] not in table, table)
    for bad, why in ((["--host-ms", "%.3f" % (1.05 * gpu_step * 1e3)], "is longer than the loop's step here"),
                     (["--host-ms", "0"], "expected a positive number of milliseconds")):
        p = subprocess.run([MLBENCH, "gap"] + args + bad, capture_output=True, text=True)
        check("--host-ms refused: %s" % why, p.returncode == 2 and why in p.stderr and not p.stdout,
              (p.returncode, p.stderr))
    no_target = [a for a in args if a not in ("--target", "b200,h100-sxm")]
    p = subprocess.run([MLBENCH, "gap"] + no_target + ["--host-ms", "10"], capture_output=True, text=True)
    check("--host-ms without --target: refused", p.returncode == 2 and "go with --target" in p.stderr, p.stderr)


def gpu_split(args, target):
    m = json.loads(run(args, "json"))["machines"]
    return next(r for r in m["ranking"] if r["target"] == target)["split_seconds"]


def main():
    os.makedirs(WORK, exist_ok=True)
    ra = os.path.join(WORK, "runahead.json")
    subprocess.run([sys.executable, GEN, "--out", ra, "--pattern", "runahead", "--record-shapes"], check=True,
                   capture_output=True)
    here = os.path.join(SRC, "tests", "data", "gap_here.json")
    d = views("runahead", ["--run", ra, "--ceilings", here])
    check("runahead: the step table says the GPU's timeline", d["step"]["timeline"] == "gpu", d["step"])
    after = os.path.join(WORK, "runahead-after.json")  # the closing synchronize after the last ProfilerStep
    subprocess.run([sys.executable, GEN, "--out", after, "--pattern", "runahead-after", "--record-shapes"],
                   check=True, capture_output=True)
    views("runahead-after", ["--run", after, "--ceilings", here])
    for pattern in ("compiled", "graphed"):  # torch.compile's Triton kernels; the same replayed from a CUDA graph
        path = os.path.join(WORK, pattern + ".json")
        subprocess.run([sys.executable, GEN, "--out", path, "--pattern", pattern] +
                       (["--record-shapes"] if pattern == "compiled" else []), check=True, capture_output=True)
        views(pattern, ["--run", path, "--ceilings", here])
    gpt = [os.path.join(PAIR, "gpt-bf16.pt.trace.json.gz"), "--ceilings", os.path.join(PAIR, "ceilings.json")]
    views("gpt-bf16", ["--run"] + gpt)
    steps = json.load(open(os.path.join(PAIR, "steps.json")))["workloads"]["gpt-bf16"]["step_ms"]
    d = views("gpt-bf16 --step-ms", ["--run"] + gpt + ["--step-ms", "%.4f" % steps])
    check("gpt-bf16 --step-ms: the step is the loop's", abs(d["run"]["step_seconds"] - steps / 1e3) < 1e-6,
          (d["run"]["step_seconds"], steps))
    # a loop that synchronises has its host's time in the trace: --host-ms is refused, and so is a stage file
    p = subprocess.run([MLBENCH, "gap", "--run"] + gpt + ["--target", "b200", "--host-ms", "10"], capture_output=True,
                       text=True)
    check("--host-ms on a loop that synchronises: refused, pointing to --step-ms",
          p.returncode == 2 and "cut on the host's timeline" in p.stderr and "--step-ms" in p.stderr, p.stderr)
    p = subprocess.run([MLBENCH, "gap", "--run", os.path.join(SRC, "tests", "data", "gap_run.json"), "--ceilings", here,
                        "--target", "b200", "--host-ms", "10"], capture_output=True, text=True)
    check("--host-ms on a stage file: refused", p.returncode == 2 and "projected stage by stage" in p.stderr, p.stderr)
    nosync()
    views("stage file", ["--run", os.path.join(SRC, "tests", "data", "gap_run.json"), "--ceilings", here])
    # one colour per category on every page: the step's parts and the machines' split agree
    page = os.path.join(WORK, "colours.html")
    run(["--run"] + gpt + ["--target", "b200", "--html", page], None)
    legend = dict((name, colour) for colour, name in re.findall(
        r'<rect[^>]*fill="(#[0-9A-Fa-f]{6})"[^>]*/><text class="legend-item"[^>]*>([^<]*)</text>',
        open(page, encoding="utf-8").read()))
    check("colours: GEMM kernels as matrix math, memory-bound kernels as memory-bound, host as host",
          legend.get("GPU busy: GEMM kernels") == legend.get("matrix math") and
          legend.get("GPU busy: memory-bound kernels (elementwise, normalization, reduction, optimizer)") ==
          legend.get("memory-bound") and legend.get("GPU idle: other host code (framework, Python)") ==
          legend.get("host (GPU idle)") and len({legend.get("GPU idle: in kernel launch calls"),
                                                  legend.get("no ceiling (time only)")}) == 2, legend)
    print("%d failed" % fails)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
