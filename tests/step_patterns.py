#!/usr/bin/env python3
"""step_patterns: `mlbench gap` names the known bottleneck of every trace
pattern scripts/gen_large_trace.py --pattern writes, the step table adds up
to the step, and hidden time is never lost.

Environment (tests/CMakeLists.txt): MLBENCH (the binary), SRC (the source
tree), WORK (scratch), MLBENCH_SHARED (../shared: the H100 run and the real
Kineto fixtures; those checks skip without it, and FAIL when $CI is set).
"""
import glob
import gzip
import json
import os
import re
import subprocess
import sys

MLBENCH, SRC, WORK = os.environ["MLBENCH"], os.environ["SRC"], os.environ["WORK"]
SHARED = os.environ.get("MLBENCH_SHARED", os.path.join(SRC, "..", "shared"))
CEILINGS = os.path.join(SRC, "tests", "data", "gap_here.json")
GEN = os.path.join(SRC, "scripts", "gen_large_trace.py")
REFERENCE = os.path.join(SRC, "results", "reference", "h100-sxm")
fails = 0


def check(name, cond, detail=""):
    global fails
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, "" if cond else ": %s" % (detail,)))
    fails += 0 if cond else 1


def gap(run, ceilings=CEILINGS):
    out = subprocess.run([MLBENCH, "gap", "--run", run, "--ceilings", ceilings, "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def gap_text(run, ceilings=CEILINGS):
    return subprocess.run([MLBENCH, "gap", "--run", run, "--ceilings", ceilings],
                          check=True, capture_output=True, text=True).stdout


def share(d, ident):
    return sum(p["share"] for p in d["step"]["parts"] if p["id"] == ident)


def stage(d, name):
    return next((s for s in d["stages"] if s["name"] == name), None)


def common(name, d):
    """What every trace must satisfy: shares add up, nothing counted twice."""
    total = sum(p["share"] for p in d["step"]["parts"])
    check("%s: step shares add up to 100%% +- 1" % name, abs(total - 1) <= 0.01, total)
    if d["step"].get("where") == "cpu":  # a CPU-only trace (trace_cpu.c): its parts are the host's
        check("%s: CPU step table: parts on the CPU, gpu_utilization unknown" % name,
              all(p["kind"] == "cpu" for p in d["step"]["parts"]) and d["run"]["gpu_utilization"] is None,
              (d["step"]["parts"], d["run"]["gpu_utilization"]))
    else:
        busy = sum(p["share"] for p in d["step"]["parts"] if p["kind"] == "gpu")
        check("%s: run.gpu_utilization is the step table's GPU busy share" % name,
              abs(d["run"]["gpu_utilization"] - busy) < 1e-9, (d["run"]["gpu_utilization"], busy))
        check("%s: diagnosis utilization is the same figure" % name,
              abs(d["diagnosis"]["figures"]["gpu_utilization"] - busy) < 1e-9)
    check("%s: no 'stages add up to' note" % name, not any("add up to" in n for n in d["notes"]), d["notes"])
    check("%s: exposed stage time fits in the run" % name,
          d["run"]["stage_seconds"] <= d["run"]["total_seconds"] * 1.01,
          (d["run"]["stage_seconds"], d["run"]["total_seconds"]))


def patterns():
    os.makedirs(WORK, exist_ok=True)
    for pattern in ["dataloader", "compute-tensor", "compute-memory", "launch-bound", "sync-bound", "copy-bound",
                    "comm-bound", "cpu-bound", "balanced", "overlapped-launch", "runahead", "runahead-after",
                    "compiled", "graphed"]:
        trace = os.path.join(WORK, pattern + ".json")
        summ = os.path.join(WORK, pattern + ".summary.json")
        shapes = ["--record-shapes"] if pattern.startswith("runahead") or pattern == "compiled" else []
        subprocess.run([sys.executable, GEN, "--out", trace, "--pattern", pattern, "--summary", summ] + shapes,
                       check=True, capture_output=True)
        want = json.load(open(summ))["expect"]["finding"]
        d = gap(trace)
        dg = d["diagnosis"]
        common(pattern, d)
        check("%s: primary %s" % (pattern, want), dg["primary"] == want,
              "got %s %s" % (dg["primary"], [(f["pattern"], f["weight"]) for f in dg["findings"]]))
        if want is None:
            listed = [float(x) for x in re.findall(r"([0-9.]+)%", dg["balanced"].split("(", 1)[-1])]
            check("%s: 'balanced' says so with the shares, each once, adding up to the step" % pattern,
                  dg["balanced"] and "GPU compute" in dg["balanced"] and "data" in dg["balanced"] and
                  "host overhead" in dg["balanced"] and ", launch " not in dg["balanced"] and
                  abs(sum(listed) - 100) <= 0.5, (dg["balanced"], sum(listed)))
        else:
            check("%s: the primary explains the step" % pattern, dg["findings"][0]["weight"] >= 0.5,
                  dg["findings"][0]["weight"])
        yield pattern, d


def specific(name, d):
    dg, f = d["diagnosis"], d["diagnosis"]["findings"]
    if name == "compute-memory":
        # the ResNet look-alike: conv ~33%, memory-bound ~51%, a sync waiting
        # ~4 ms on the busy GPU
        check("compute-memory: conv ~33%", abs(share(d, "conv") - 0.33) < 0.02, share(d, "conv"))
        check("compute-memory: memory-bound ~51%", abs(share(d, "memory_bound") - 0.51) < 0.02,
              share(d, "memory_bound"))
        check("compute-memory: titled memory-bound", "memory-bound" in f[0]["title"], f[0]["title"])
        s = stage(d, "sync")
        check("compute-memory: the sync waits >= 3.5 ms per step on the host", s["seconds_per_step"] >= 3.5e-3,
              s["seconds_per_step"])
        check("compute-memory: ... and is not lost (exposed < 0.1%)", s["exposed_seconds"] < 1e-3 * s["seconds"],
              s["exposed_seconds"])
        check("compute-memory: no sync finding", all(x["pattern"] != "sync_bound" for x in f))
        # a sync's rate is its GPU idle per call, not the host's wait for the queued kernels
        if s["exposed_seconds"] > 0:
            per = s["exposed_seconds"] / s["calls"]
            check("compute-memory: the sync's measured rate is calls / GPU idle in them",
                  abs(s["measured_rate"] * per - 1) < 1e-6, (s["measured_rate"], per))
            check("compute-memory: ... its efficiency the ceiling's time per sync / that idle",
                  abs(s["efficiency"] - s["measured_rate"] / s["ceiling_rate"]) < 1e-9 * s["efficiency"],
                  (s["efficiency"], s["measured_rate"], s["ceiling_rate"]))
        check("compute-memory: memory-bound remedies", any("fuse" in r for r in f[0]["remedies"]), f[0]["remedies"])
    if name == "copy-bound":
        ev = " ".join(f[0]["evidence"])
        check("copy-bound: pageable copies and their size per call", "pageable" in ev and "KiB per call" in ev, ev)
        check("copy-bound: pinned-memory remedy", any("pinned" in r for r in f[0]["remedies"]), f[0]["remedies"])
    if name == "compute-tensor":
        check("compute-tensor: titled matrix math", "matrix math" in f[0]["title"], f[0]["title"])
    if name == "launch-bound":
        # the host-overhead look-alike: ~250 kernels of a few us, GPU idle ~96%
        check("launch-bound: 250 kernels per step", d["step"]["kernels_per_step"] == 250)
        check("launch-bound: GPU idle >= 90%", d["step"]["gpu_idle_share"] >= 0.9, d["step"]["gpu_idle_share"])
        rem = " ".join(f[0]["remedies"])
        # its loop steps no optimizer (no Optimizer.step#): no "fused optimizers" (a forward-only H100 trace was
        # told so); not compiled: torch.compile to fuse
        check("launch-bound: CUDA Graphs / reduce-overhead / torch.compile, no fused optimizers without one",
              "CUDA Graphs" in rem and "reduce-overhead" in rem and "Fused/foreach optimizers" not in rem and
              "Fuse small operations (torch.compile" in rem and "Compiled already" not in rem, rem)
        check("launch-bound: median kernel against the launch ceiling",
              any("launch cost" in e for e in f[0]["evidence"]), f[0]["evidence"])
    if name == "overlapped-launch":
        # every sync waits on a busy GPU; every launch runs under GPU work but
        # the trace's very first (the GPU has nothing queued yet), which is
        # before step 0's first kernel: a lead-in no later step has, left out
        s = stage(d, "sync")
        check("overlapped-launch: sync exposed 0", s["exposed_seconds"] == 0, s["exposed_seconds"])
        check("overlapped-launch: sync lost 0", s["seconds_lost"] in (None, 0), s["seconds_lost"])
        check("overlapped-launch: sync not ranked", all(r["name"] != "sync" for r in d["ranking"]), d["ranking"])
        # ... and no rate or efficiency: the GPU never idled in one (not "at 0.02% of its ceiling")
        check("overlapped-launch: hidden syncs have no rate or efficiency, and say why",
              s["measured_rate"] is None and s["efficiency"] is None and s["beyond"].startswith("hidden:"),
              (s["measured_rate"], s["efficiency"], s.get("beyond")))
        check("overlapped-launch: sync Amdahl gains nothing", s["amdahl"] is None or s["amdahl"]["speedup"] == 1,
              s["amdahl"])
        s = stage(d, "launch")
        first = 2e-6  # the first launch call until its kernel starts (2 us in): the GPU had nothing to run
        check("overlapped-launch: launch exposed 0 (the first call is step 0's lead-in)",
              s["exposed_seconds"] == 0 and d["step"].get("lead_in_seconds", 0) > 0,
              (s["exposed_seconds"], d["step"].get("lead_in_seconds")))
        check("overlapped-launch: launch lost <= the first call's excess",
              s["seconds_lost"] is None or s["seconds_lost"] <= first, s["seconds_lost"])
        check("overlapped-launch: host launch time hidden (>= 99%)", s["hidden_seconds"] >= 0.99 * s["seconds"],
              (s["hidden_seconds"], s["seconds"]))
    if name == "runahead-after":
        # the closing synchronize after the last ProfilerStep: the host's windows hold little GPU work
        want = json.load(open(os.path.join(WORK, name + ".summary.json")))["expect"]
        st = d["step"]
        check("runahead-after: the GPU's timeline, the GPU's step", st.get("timeline") == "gpu" and
              abs(st["seconds"] - want["step_seconds"]) < 1e-12 and d["run"]["step_seconds"] == st["seconds"],
              (st, want))
        check("runahead-after: headline shares add up to 100%",
              abs(sum(h["share"] for h in d["headline"]["stages"]) - 1) < 1e-9, d["headline"])
        check("runahead-after: the closing synchronize counted apart, no sync stage",
              stage(d, "sync") is None and st["closing_sync"]["count"] == 1, (stage(d, "sync"), st))
    if name == "runahead":
        # the loop never synchronises: its steps are cut on the GPU's timeline, the GPU's work back to back
        want = json.load(open(os.path.join(WORK, "runahead.summary.json")))["expect"]
        st = d["step"]
        check("runahead: steps cut on the GPU's timeline", st.get("timeline") == "gpu" and "runs ahead" in
              st.get("timeline_why", ""), st)
        check("runahead: the step is the GPU's (known answer)", abs(st["seconds"] - want["step_seconds"]) < 1e-12,
              (st["seconds"], want["step_seconds"]))
        check("runahead: one step time: run, step table, Amdahl", d["run"]["step_seconds"] == st["seconds"] and
              abs(d["amdahl"]["step_seconds_now"] - st["seconds"]) < 1e-12, (d["run"], d["amdahl"]))
        check("runahead: headline shares add up to 100%",
              abs(sum(h["share"] for h in d["headline"]["stages"]) - 1) < 1e-9, d["headline"])
        check("runahead: the closing synchronize is no step's sync (no sync stage, counted apart)",
              stage(d, "sync") is None and st["closing_sync"]["count"] == 1 and st["closing_sync"]["seconds"] > 0.02,
              (stage(d, "sync"), st.get("closing_sync")))
        check("runahead: memory-bound kernels ~99% of the step", share(d, "memory_bound") > 0.98,
              share(d, "memory_bound"))
        check("runahead: one bottleneck: JSON = the diagnosis' primary title",
              d["bottleneck"] == f[0]["title"] and d["bottleneck_stage"] == "memory-bound ops",
              (d["bottleneck"], f[0]["title"], d["bottleneck_stage"]))
        text = " ".join(gap_text(os.path.join(WORK, "runahead.json")).split())  # wrapped at 120 columns
        check("runahead: the text says which timeline set the step", "per step on the GPU's timeline" in text and
              "mean of 8 steps cut on the GPU's timeline" in text, text[:600])
        # projected: the GPU's re-laid steps (its kernels back to back, as here), not the host's windows
        out = subprocess.run([MLBENCH, "gap", "--run", os.path.join(WORK, "runahead.json"), "--ceilings", CEILINGS,
                              "--target", "h200-sxm,a100-sxm-80gb", "--format", "json"],
                             check=True, capture_output=True, text=True).stdout
        m = json.loads(out)["machines"]
        here, gaps = m["here"], m["here"]["step_seconds"] - m["here"]["kernel_seconds"]["memory"]
        check("runahead projected: here is the step table's step", abs(here["step_seconds"] - st["seconds"]) < 1e-12,
              (here["step_seconds"], st["seconds"]))
        for row in m["ranking"]:
            want_there = row["kernel_seconds"]["memory"] + gaps
            check("runahead projected onto %s: its kernels' time there plus the gaps here (%.4g s)"
                  % (row["machine"], want_there), abs(row["step_seconds"] - want_there) < 1e-9,
                  (row["step_seconds"], want_there))
        check("runahead: no false 'shapes not recorded' hint without GEMM time",
              not any("shapes not recorded" in e for e in f[0]["evidence"]), f[0]["evidence"])
    if name == "compiled":
        # torch.compile (Inductor): its Triton kernels are GEMMs (templates) and memory-bound kernels (pointwise,
        # reductions, foreach) with the bytes of their arguments, whatever aten ops their names carry
        want = json.load(open(os.path.join(WORK, "compiled.summary.json")))["expect"]
        check("compiled: no convolution or attention time (names of fused elementwise kernels)",
              share(d, "conv") == 0 and share(d, "attention") == 0 and stage(d, "conv") is None and
              stage(d, "attention") is None, [(p["id"], p["share"]) for p in d["step"]["parts"]])
        s = stage(d, "gemm")
        check("compiled: the cuBLAS and the Triton template matmuls, with their FLOPs (known answer)",
              s is not None and s["work"] == want["gemm"]["flops"] and
              abs(s["seconds"] - want["gemm"]["seconds"]) < 1e-12, (s, want["gemm"]))
        s = stage(d, "memory-bound ops")
        check("compiled: Triton pointwise/reduction/foreach kernels memory-bound, each tensor argument once",
              s is not None and s["work"] == want["memory_bound"]["bytes"] and
              abs(s["seconds"] - want["memory_bound"]["seconds"]) < 1e-12, (s, want["memory_bound"]))
        s = stage(d, "memory-bound ops (bytes unknown)")
        why = next((h["no_ceiling"] for h in d["headline"]["stages"] if h["name"] == s["name"]), "") if s else ""
        check("compiled: a kernel of 300 arguments: time only, and why (not the bytes of the first 256)",
              s is not None and abs(s["seconds"] - want["memory_bound"]["unknown_seconds"]) < 1e-12 and
              "more tensor arguments than the reader keeps" in why, (s, why))
        check("compiled: no time without a class ('other compute')", stage(d, "other compute") is None,
              [x["name"] for x in d["stages"]])
        check("compiled: named a GEMM-bound step", d["bottleneck_stage"] == "gemm", d["bottleneck_stage"])
        rem = " ".join(d["diagnosis"]["findings"][0]["remedies"])
        check("compiled: not told to compile (its Torch-Compiled Region), told what is left",
              "Compile and fuse the model" not in rem and "Compiled already" in rem, rem)
    if name == "graphed":
        # replayed from a CUDA graph: no op launched the kernels in this trace, and the hint says so
        heads = {h["name"]: h["no_ceiling"] or "" for h in d["headline"]["stages"]}
        for st in ("gemm", "other compute"):
            check("graphed: %s time only, and why: a CUDA graph's replay" % st,
                  st in heads and "replayed from a CUDA graph" in heads[st] and "launched outside" not in heads[st]
                  and "without a byte model" not in heads[st], heads)
        want = json.load(open(os.path.join(WORK, "graphed.summary.json")))
        s = stage(d, "launch")
        check("graphed: one launch call per step, which launched the graph's kernels",
              s["calls"] == d["run"]["steps"] and s["work"] == want["kernels_per_step"] * want["steps"], s)
        evid = " ".join(d["diagnosis"]["findings"][0]["evidence"])
        check("graphed: the diagnosis says why no FLOP/s (the replay), not 'record shapes' of recorded shapes",
              "no FLOP/s against the GEMM/conv ceilings: replayed from a CUDA graph" in evid and
              "record_shapes=True" not in evid, evid)
    if name == "dataloader":
        blocks = gap_text(os.path.join(WORK, "dataloader.json")).split("\n\n")
        lines = blocks[1].split("\n")
        check("dataloader: the bottleneck, then the headline first in the text output, led by data loading",
              lines[0].startswith("bottleneck: Data-loading bound") and lines[1].startswith("what the step is made of")
              and "1. dataloading" in lines[3], blocks[1])
        check("dataloader: then the step table", blocks[2].startswith("the step, end to end"), blocks[2])


def memory_bytes():
    """compute-memory --record-shapes: the batch-norm and add ops' bytes (counted
    by hand in the generator) over their kernels' time, against a membw copy
    ceiling of 2500 GB/s; without shapes the evidence says time only."""
    ceil = json.load(open(CEILINGS))
    ceil["cases"].append({
        "id": "membw/cuda/dtype=fp32,op=copy,size=268435456", "section": "membw", "component": "membw",
        "backend": "cuda", "params": {"op": "copy", "dtype": "fp32", "size": "268435456"}, "status": "ok",
        "reason": None, "work_unit": "byte", "work_per_iteration": 536870912, "rate_unit": "GB/s",
        "rate_scale": 1e9, "latency_first": False, "repetitions": 5, "iterations": 100,
        "rate": {"median": 2500, "best": 2510, "mean": 2500, "cv": 0.01},
        "peak": {"value": 3352.32, "source": "hand-made test figure"}, "efficiency": 0.7458,
        "verification": {"status": "passed", "detail": "hand-made"}, "metrics": {}, "info": {}, "notes": []})
    ceilings = os.path.join(WORK, "membw_ceilings.json")
    with open(ceilings, "w") as f:
        json.dump(ceil, f)
    trace = os.path.join(WORK, "compute-memory-shapes.json")
    summ = os.path.join(WORK, "compute-memory-shapes.summary.json")
    subprocess.run([sys.executable, GEN, "--out", trace, "--pattern", "compute-memory", "--record-shapes",
                    "--summary", summ], check=True, capture_output=True)
    want = json.load(open(summ))["expect"]["memory_bound"]
    d = gap(trace, ceilings)
    common("compute-memory shapes", d)
    fig, f = d["diagnosis"]["figures"], d["diagnosis"]["findings"][0]
    rate = fig.get("memory_bound_bytes_per_s")
    check("memory bytes: bytes/s of the shaped memory-bound ops", rate is not None and
          abs(rate - want["bytes_per_s"]) <= 1e-9 * want["bytes_per_s"], (rate, want["bytes_per_s"]))
    s = stage(d, "memory-bound ops")
    # held to its bytes at 2500 GB/s plus, per kernel, the GPU's least time per kernel: the launch case of op
    # graph in the same ceilings (kernels replayed back to back)
    graph = next(c for c in ceil["cases"] if c["component"] == "launch" and c["params"].get("op") == "graph")
    per_kernel = 1 / (graph["rate"]["median"] * graph["rate_scale"])
    held = s["work"] / (s["calls"] * per_kernel + s["work"] / 2500e9)
    check("memory bytes: the membw copy case is the bandwidth, held with the GPU's least time per kernel",
          fig.get("memory_bound_bandwidth_bytes_per_s") == 2500e9 and
          abs(fig.get("memory_bound_ceiling_bytes_per_s") - held) <= 1e-9 * held and
          fig.get("memory_bound_ceiling_case", "").startswith("membw/cuda/"), (fig, held))
    eff = fig.get("memory_bound_efficiency")
    check("memory bytes: % of the ceiling", eff is not None and abs(eff - want["bytes_per_s"] / held) < 1e-9,
          (eff, want["bytes_per_s"] / held))
    sh = fig.get("memory_bound_shaped_share")
    check("memory bytes: share of memory-bound time with shapes (the optimizer has none)",
          sh is not None and abs(sh - want["shaped_share"]) < 1e-9, (sh, want["shaped_share"]))
    s = stage(d, "memory-bound ops")
    check("memory bytes: a membw stage with the bytes", s is not None and s["component"] == "membw" and
          s["work"] == want["bytes"] and abs(s["seconds"] - want["seconds"]) < 1e-12, s)
    line = ("memory-bound kernels move %.4g GB/s, %.0f%% of their ceiling %.4g GB/s: the measured memory bandwidth "
            "2500 GB/s" % (want["bytes_per_s"] / 1e9, 100 * want["bytes_per_s"] / held, held / 1e9))
    check("memory bytes: the evidence says GB/s and % of the ceiling",
          any(e.startswith(line) and "%.0f%% of their time has recorded shapes" % (100 * want["shaped_share"]) in e
              for e in f["evidence"]), (line, f["evidence"]))
    bare = gap(trace)  # ceilings without a membw case
    ev, fig = bare["diagnosis"]["findings"][0]["evidence"], bare["diagnosis"]["figures"]
    check("memory bytes: no membw case: bytes/s without a ceiling",
          any("GB/s" in e and "no membw ceiling measured" in e for e in ev) and
          fig["memory_bound_ceiling_bytes_per_s"] is None and fig["memory_bound_efficiency"] is None and
          abs(fig["memory_bound_bytes_per_s"] - want["bytes_per_s"]) <= 1e-9 * want["bytes_per_s"], (ev, fig))
    plain = gap(os.path.join(WORK, "compute-memory.json"), ceilings)
    ev = plain["diagnosis"]["findings"][0]["evidence"]
    why = next((h["no_ceiling"] for h in plain["headline"]["stages"] if h["name"] == "other compute"), "")
    check("memory bytes: without shapes, time only, and why as the stage table says it",
          why.startswith("bytes unknown: ") and
          any(e == "memory-bound kernels: time only: " + why[len("bytes unknown: "):] for e in ev),
          (why, ev))
    check("memory bytes: ... and no bytes/s", plain["diagnosis"]["figures"]["memory_bound_bytes_per_s"] is None)


def h100():
    trace = os.path.join(SHARED, "h100", "resnet18-dataloader-bound.pt.trace.json.gz")
    ceilings = os.path.join(SHARED, "h100", "all.json")
    if not os.path.exists(trace):
        if os.environ.get("CI"):
            check("H100 data-loader trace present (CI)", False, trace)
        else:
            print("skip H100 data-loader trace: %s not found" % trace)
        return
    d = gap(trace, ceilings)
    common("h100 dataloader", d)
    parts = sorted(d["step"]["parts"], key=lambda p: -p["share"])
    check("h100 dataloader: data loading first", parts[0]["id"] == "data", parts[0])
    check("h100 dataloader: data loading >= 85%", parts[0]["share"] >= 0.85, parts[0]["share"])
    check("h100 dataloader: diagnosed data-loading bound", d["diagnosis"]["primary"] == "data_loading_bound",
          d["diagnosis"]["primary"])
    # issue 17: the headline starts with what dominates the step, with or
    # without a ceiling; one share per figure; memset against membw write
    head = d["headline"]["stages"]
    check("h100 dataloader: the headline starts with data loading", head[0]["name"] == "dataloading", head[0])
    check("h100 dataloader: ... which has no ceiling and says what would bound it",
          not head[0]["has_ceiling"] and "bytes" in (head[0]["no_ceiling"] or ""), head[0])
    check("h100 dataloader: headline share = step table share",
          abs(head[0]["share"] - share(d, "data")) < 1e-9, (head[0]["share"], share(d, "data")))
    check("h100 dataloader: bounded share under 5% (data loading has no ceiling)",
          0 < d["headline"]["bounded_share"] < 0.05, d["headline"]["bounded_share"])
    ms = stage(d, "memset")
    check("h100 dataloader: memset held against membw write",
          ms is not None and ms["ceiling"] is not None and "op=write" in ms["ceiling"]["id"], ms and ms["ceiling"])
    text = gap_text(trace, ceilings)
    wide = [l for l in text.split("\n") if len(l) > 120]
    check("h100 dataloader: text within 120 columns", not wide, wide[:3])
    check("h100 dataloader: the text says how much of the step has a ceiling", "of the step has a ceiling" in text)
    for pct in ("87.9%",):
        check("h100 dataloader: one rounding of the data share (%s, never 87.8%%)" % pct,
              pct in text and "87.8%" not in text)
    cpu = os.path.join(SRC, "tests", "data", "cpu_quick.json")
    text = gap_text(trace, cpu)
    check("h100 trace on CPU ceilings: one warning, the CUDA error not repeated per stage",
          text.count("without a usable GPU") == 1 and text.count("cudaError") == 0, text[-1500:])
    other = json.load(open(ceilings))
    for g in other["context"].get("gpus", []):
        g["name"] = "NVIDIA A100-SXM4-80GB"
    json.dump(other, open(os.path.join(WORK, "a100.json"), "w"))
    notes = gap(trace, os.path.join(WORK, "a100.json"))["notes"]
    check("h100 trace on another GPU's ceilings: one note naming both",
          sum("the trace ran on NVIDIA H100 80GB HBM3" in n and "A100" in n for n in notes) == 1, notes)
    check("h100 trace on its own GPU's ceilings: no such note",
          not any("the trace ran on" in n for n in d["notes"]), d["notes"])
    stages = os.path.join(SHARED, "h100", "resnet18-dataloader-bound.stages.json")
    if os.path.exists(stages):
        d = gap(stages, ceilings)
        f = d["diagnosis"]["findings"]
        check("h100 stage file: data-loading bound, 90.2%",
              f and f[0]["pattern"] == "data_loading_bound" and abs(f[0]["weight"] - 0.902) < 0.001,
              [(x["pattern"], x["weight"]) for x in f])


def fixtures():
    files = sorted(glob.glob(os.path.join(SHARED, "fixtures", "kineto", "*.json*")))
    if not files:
        if os.environ.get("CI"):
            check("Kineto fixtures present (CI)", False, SHARED)
        else:
            print("skip Kineto fixtures: none under %s" % SHARED)
        return
    for f in files:
        name = os.path.basename(f).split("__")[0]
        t = json.loads(subprocess.run([MLBENCH, "trace", f], check=True, capture_output=True, text=True).stdout)
        if t["evidence"]["step"] is None:
            check("%s: no GPU events: no step table, gpu_utilization null" % name, t["gpu_utilization"] is None,
                  t["gpu_utilization"])
            continue
        total = sum(p["share"] for p in t["evidence"]["step"]["parts"])
        check("%s: trace step shares add up to 100%% +- 1" % name, abs(total - 1) <= 0.01, total)
        d = gap(f)
        common(name, d)
        dg = d["diagnosis"]
        check("%s: a diagnosis or 'balanced' with the shares" % name, dg["primary"] or dg["balanced"], dg)
        check("%s: the headline's shares add up to 100%%" % name,
              abs(sum(h["share"] for h in d["headline"]["stages"]) + d["run"]["unaccounted_seconds"] /
                  d["run"]["total_seconds"] - 1) < 1e-6, d["headline"])
        if d["step"].get("where") == "cpu":
            # a CPU-only trace's parts are the CPU's in every view: the text says "CPU: ...", so does the page
            page = os.path.join(WORK, name + ".html")
            subprocess.run([MLBENCH, "gap", "--run", f, "--ceilings", CEILINGS, "--html", page], check=True,
                           capture_output=True)
            html_text, text = open(page, encoding="utf-8").read(), gap_text(f)
            labels = ["CPU: " + p["name"] for p in d["step"]["parts"]]
            check("%s: the page names the CPU's parts as the text does, never 'GPU busy'" % name,
                  all(x in text and x in html_text for x in labels) and "GPU busy:" not in html_text and
                  "GPU idle:" not in html_text and "GPU busy by kernel group" not in html_text, labels)
        if d["step"].get("window") == "trace" and d.get("bottleneck_note"):
            # no ProfilerStep (HTA's alexnet): the trace's span is a run, and the host's upper bound says so
            note = d["bottleneck_note"]
            check("%s: no ProfilerStep: the upper bound is per run, not per step" % name,
                  "ops per run recorded" in note and "the run lies between" in note and "per step" not in note and
                  "steps in the trace (prof.step())" in note, note)
        if name == "ns_resolution_trace":
            # HTA's V100 trace: a loop whose host runs ahead (84.8 ms on average), the profiler's closing synchronize
            # (89 ms) after its last launch; before issue 31 that sync was 15% of the step, 17.8 ms "lost"
            st = d["step"]
            check("%s: the host runs ahead: steps on the GPU's timeline" % name, st["timeline"] == "gpu", st)
            check("%s: the closing synchronize is no step's sync" % name, st["closing_sync"]["count"] >= 1 and
                  stage(d, "sync") is None and all(h["name"] != "sync" for h in d["headline"]["stages"]),
                  (st["closing_sync"], stage(d, "sync")))
            check("%s: the step is the GPU's: busy ~97%% of it" % name, st["gpu_busy_share"] > 0.95, st)
            # --host-ms 50 (the host's own step; the GPU's here is 96.7 ms): a B200's 22.4 ms of GPU work waits for it,
            # so the verdict says the host bounds the fastest machine's step, with the share from its split
            p = subprocess.run([MLBENCH, "gap", "--run", f, "--ceilings", CEILINGS, "--target", "b200,t4", "--host-ms",
                                "50", "--format", "json"], capture_output=True, text=True)
            m = json.loads(p.stdout)["machines"] if p.returncode == 0 else {}
            first = m["ranking"][0] if m else {}
            idle = "%.0f%%" % (100 * first["split_seconds"]["host"] / first["step_seconds"]) if first else "?"
            check("%s --host-ms 50: the B200 at 50 ms, the host bounds it there (GPU idle %s)" % (name, idle),
                  first.get("target") == "b200" and abs(first["step_seconds"] - 0.05) < 1e-12 and
                  first["split_seconds"]["host"] >= 0.025 and
                  "; the host bounds its step there (the GPU waiting on it %s of it)" % idle in m["verdict"],
                  (p.returncode, p.stderr[-300:], first, m.get("verdict")))
        with (gzip.open if f.endswith(".gz") else open)(f, "rt", encoding="utf-8") as fh:
            doc = json.load(fh)
        devices = [x.get("name") or "" for x in (doc.get("deviceProperties") if isinstance(doc, dict) else None) or []]
        if any("A100-PG509-200" in x for x in devices) and d["step"].get("where") != "cpu":
            # Meta's A100 boards name themselves by their board (PG509-200): ranked by the kernel-level model from the
            # A100 SXM4 40GB's datasheet (they were refused: "no datasheet here matches")
            p = subprocess.run([MLBENCH, "gap", "--run", f, "--ceilings", CEILINGS, "--target", "all", "--format",
                                "json"], capture_output=True, text=True)
            m = json.loads(p.stdout)["machines"] if p.returncode == 0 else {}
            check("%s: an A100-PG509-200 trace ranked by the kernel-level model" % name,
                  m.get("model") == "kernel" and m["here"]["machine"] == devices[0] and
                  any(r["projected"] for r in m["ranking"]), (p.returncode, p.stderr[-300:], m.get("per_stage_why")))


H100_PROPS = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132, "maxThreadsPerMultiprocessor": 2048}


def projected(path, targets):
    """`gap --target` on a trace: its JSON and its text."""
    args = [MLBENCH, "gap", "--run", path, "--ceilings", CEILINGS, "--target", targets]
    d = json.loads(subprocess.run(args + ["--format", "json"], check=True, capture_output=True, text=True).stdout)
    return d, subprocess.run(args, check=True, capture_output=True, text=True).stdout


def split_shares(row):
    return {k: v / row["step_seconds"] for k, v in row["split_seconds"].items()}


def kernel_wait_projected(path):
    """The kernel-wait loop projected onto other GPUs: its 2-us kernels are
    latency-bound (kept), the gaps between queued kernels the GPU's own (kept
    in the re-laid step): per step busy 400 us, kernel wait 597, host 103, on
    every machine. The split says kernel wait, not host, and the verdict what
    bounds the step: no GPU helps, fewer kernel boundaries do."""
    d, text = projected(path, "h100-sxm,h200-sxm")
    m = d["machines"]
    rows = [m["here"]] + [r for r in m["ranking"] if r.get("projected")]
    want = {"memory": 400 / 1100, "kernel_wait": 597 / 1100, "host": 103 / 1100}
    check("kernel-wait, --target: here and each projection split busy / kernel wait / host (the step table's figures)",
          len(rows) == 3 and all(abs(split_shares(r)[k] - v) < 1e-6 for r in rows for k, v in want.items()) and
          abs(split_shares(m["here"])["kernel_wait"] - share(gap(path), "queued")) < 1e-9,
          [split_shares(r) for r in rows])
    check("kernel-wait, --target: no GPU helps, the GPU's own gaps bound the step (not the host)",
          m["gpu_idle_bound"] and m["kernel_wait_bound"] and not m["host_bound"] and m["verdict"].startswith(
              "No GPU helps: the GPU's own time between the kernels it had queued (kernel wait, not host code) "
              "bounds the step on every machine (the GPU idle 64% of each projected step, 54% between kernels it "
              "had queued)") and "Fewer kernel boundaries helps instead" in m["verdict"] and
          "DataLoader" not in m["verdict"], m["verdict"])
    check("kernel-wait, --target: the bars' legend names kernel wait and the bars draw it",
          ": kernel wait (GPU idle), . host (GPU idle)" in " ".join(text.split()) and
          re.search(r"H100 SXM 80GB +\S+ +\S+ +\S+ +[0-9.]+x .*#?=+:+\.+\n", text) is not None, text)


def kernel_wait_ahead():
    """The kernel-wait loop whose host runs ahead: each step's 200 launches
    take 80 us of a 100-us ProfilerStep, its kernels (2 us each, 3 us apart)
    run later on the GPU's timeline, back to back with the previous step's
    (3 us after its last). A step cut on the GPU's timeline is 1000 us:
    busy 400, kernel wait 600 (every gap follows a launch long returned);
    the first, from its first kernel, 997 (busy 400, kernel wait 597): a
    mean of 999.5 us over the 6. The projection keeps the GPU's step alone
    (no launch in it), and a gap queued here stays queued there: the
    split's kernel wait is the step table's."""
    ev, corr = [], 0
    for k in range(6):
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k, "pid": 1, "tid": 1,
                   "ts": 100.0 * k, "dur": 100.0})
        for i in range(200):
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": 100.0 * k + 0.4 * i, "dur": 0.3, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "pid": 0, "tid": 7,
                       "ts": 1000.0 + 1000.0 * k + 5.0 * i, "dur": 2.0,
                       "args": {"device": 0, "stream": 7, "correlation": corr}})
    path = os.path.join(WORK, "kernel-wait-ahead.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
    d = gap(path)
    check("kernel-wait-ahead: the GPU's timeline, 400 us busy and 599.5 us kernel wait of 999.5 a step",
          d["step"].get("timeline") == "gpu" and abs(share(d, "memory_bound") - 400 / 999.5) < 1e-6 and
          abs(share(d, "queued") - 599.5 / 999.5) < 1e-6, [(p["id"], p["share"]) for p in d["step"]["parts"]])
    # the launch calls (200 x 0.3 us a step) all run while the GPU works: a 0-s row says so, with their own time
    text = " ".join(gap_text(path).split())
    check("kernel-wait-ahead: the launch row at 0 s says its 60 us a step are overlapped",
          "launch 0 s 0.0% overlapped: its 60 µs per step runs while other work does, none of it exposed;" in text,
          text[:1500])
    p, _ = projected(path, "h100-sxm")
    here = split_shares(p["machines"]["here"])
    rows = [split_shares(r) for r in p["machines"]["ranking"] if r.get("projected")]
    check("kernel-wait-ahead, --target: the re-laid GPU step keeps its gaps as kernel wait, here and there",
          abs(here["kernel_wait"] - share(d, "queued")) < 1e-6 and len(rows) == 1 and
          abs(rows[0]["kernel_wait"] - 599.5 / 999.5) < 1e-6 and abs(rows[0]["host"]) < 1e-9, (here, rows))


def kernel_wait():
    """A loop that queues its small kernels ahead (all 200 of a step launched,
    0.3 us each, before the first runs at 100 us), 2 us each with 3 us
    between them on the GPU, in steps of 1100 us: the gaps are the GPU's own
    between queued kernels (kernel wait, HTA's name), not host code; with
    many short kernels they count as launch overhead, and the diagnosis says
    which part of the idle time they are. Per step: busy 400 us, queued 199
    x 3 = 597, in launch calls 60 (before the first kernel), host 40 + 3."""
    ev, corr = [], 0
    for k in range(4):
        t0 = k * 1100.0
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k, "pid": 1, "tid": 1,
                   "ts": t0, "dur": 1100.0})
        for i in range(200):
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": t0 + 0.4 * i, "dur": 0.3, "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": "kernel", "name": "vectorized_elementwise_kernel", "pid": 0, "tid": 7,
                       "ts": t0 + 100 + 5.0 * i, "dur": 2.0,
                       "args": {"device": 0, "stream": 7, "correlation": corr}})
    path = os.path.join(WORK, "kernel-wait.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
    d = gap(path)
    common("kernel-wait", d)
    want = {"memory_bound": 400, "queued": 597, "launch": 60, "host": 43}
    check("kernel-wait: the gaps between queued kernels are their own part, not host code",
          all(abs(share(d, k) - v / 1100) < 1e-6 for k, v in want.items()),
          [(p["id"], p["share"]) for p in d["step"]["parts"]])
    kw, host = stage(d, "kernel wait (GPU idle)"), stage(d, "host code (GPU idle)")
    hint = next((h.get("no_ceiling") or "" for h in d["headline"]["stages"]
                 if h["name"] == "kernel wait (GPU idle)"), "")
    check("kernel-wait: its stage, the GPU's, with the gaps and their mean; host code holds only the host's time",
          kw is not None and kw["device"] == "gpu" and abs(kw["exposed_seconds"] - 4 * 597e-6) < 1e-9 and
          "(796 gaps, 3 µs each on average; HTA's kernel wait), not host code" in hint and host is not None and
          abs(host["seconds"] - 4 * 43e-6) < 1e-9, (kw, host, hint))
    f = d["diagnosis"]["findings"]
    ev_text = " ".join(f[0]["evidence"]) if f else ""
    check("kernel-wait: launch overhead (many short kernels), the kernel wait counted and said",
          d["diagnosis"]["primary"] == "launch_bound" and abs(f[0]["weight"] - 700 / 1100) < 1e-6 and
          "with the next kernel already queued 54.3% (kernel wait)" in ev_text and
          not any(x["pattern"] in ("cpu_compute_bound", "unattributed_time") for x in f),
          [(x["pattern"], x["weight"]) for x in f] + [ev_text])
    # --step-ms 1.0: the GPU's time (busy 400 + kernel wait 597 us) kept, the host's 103 us scaled to the 3 left
    out = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", CEILINGS, "--step-ms", "1.0", "--format",
                          "json"], check=True, capture_output=True, text=True).stdout
    g = json.loads(out)
    kw = stage(g, "kernel wait (GPU idle)")
    check("kernel-wait, --step-ms: the kernel wait is the GPU's time, kept; the host's parts shrink",
          abs(share(g, "queued") - 0.597) < 1e-6 and abs(share(g, "memory_bound") - 0.4) < 1e-6 and
          abs(share(g, "launch") + share(g, "host") - 0.003) < 1e-6 and
          abs(kw["exposed_seconds"] - 4 * 597e-6) < 1e-9, [(p["id"], p["share"]) for p in g["step"]["parts"]])
    kernel_wait_projected(path)


def other_maker():
    """A trace that names no GPU (no deviceProperties, as ROCm traces often
    are) still shows its maker by its runtime calls: HIP calls held against an
    NVIDIA GPU's ceilings get one note; the same trace with CUDA calls none."""
    ceil = json.load(open(CEILINGS))
    for g in ceil["context"]["gpus"]:
        g["name"] = "NVIDIA H100 80GB HBM3"
    ceilings = os.path.join(WORK, "nvidia.json")
    with open(ceilings, "w") as f:
        json.dump(ceil, f)
    for api, want in (("hip", 1), ("cuda", 0)):
        events = [{"ph": "X", "cat": "cuda_runtime", "name": api + "LaunchKernel", "pid": 1, "tid": 1, "ts": 0,
                   "dur": 5, "args": {"correlation": 1}},
                  {"ph": "X", "cat": "kernel", "name": "elementwise_kernel", "pid": 0, "tid": 7, "ts": 10,
                   "dur": 100, "args": {"device": 0, "stream": 7, "correlation": 1}}]
        path = os.path.join(WORK, "maker-%s.json" % api)
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)
        notes = gap(path, ceilings)["notes"]
        n = sum("the trace ran on an AMD GPU (its HIP runtime calls" in x and "another maker's GPU" in x
                for x in notes)
        check("other maker: %s calls, %d note" % (api, want), n == want, notes)
    # ROCm numbers its agents: the one GPU deviceProperties lists (id 0) ran the kernels of device 2 (SGLang's
    # MI300X traces read "the trace does not name the GPU")
    for e in events:
        if e["cat"] == "kernel":
            e["args"]["device"] = 2
    path = os.path.join(WORK, "maker-hip-agent.json")
    with open(path, "w") as f:
        json.dump({"deviceProperties": [{"id": 0, "name": "AMD Instinct MI300X", "totalGlobalMem": 206141652992,
                                         "computeMajor": 9, "computeMinor": 4, "numSms": 304}],
                   "traceEvents": [dict(e, name=e["name"].replace("cuda", "hip")) for e in events]}, f)
    text = " ".join(" ".join(gap(path, ceilings)["notes"]).split())
    check("one GPU listed, its kernels on agent 2: named", "the trace ran on AMD Instinct MI300X" in text and
          "does not name the GPU" not in text, text)


def kernel_steps(name, kernels, props):
    """Four 1000-us ProfilerSteps, each launching `kernels` [(name, us, cat, extra args)] 3 us apart and running them
    on one stream from 20 us in, 10 us apart; written to WORK/name.json with deviceProperties [props]."""
    ev, corr = [], 0
    for k in range(4):
        t0 = k * 1000.0
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k, "pid": 1, "tid": 1,
                   "ts": t0, "dur": 1000.0})
        at = t0 + 20
        for i, (kname, dur, cat, extra) in enumerate(kernels):
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync" if cat == "gpu_memset"
                       else "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t0 + 2 + 3 * i, "dur": 2.0,
                       "args": {"correlation": corr}})
            ev.append({"ph": "X", "cat": cat, "name": kname, "pid": 0, "tid": 7, "ts": at, "dur": dur,
                       "args": dict({"device": 0, "stream": 7, "correlation": corr}, **extra)})
            at += dur + 10
    path = os.path.join(WORK, name + ".json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"deviceProperties": [props], "traceEvents": ev}, f)
    return path


def layout_conversions():
    """An NCHW convolution net as cuDNN runs it: per 1000-us step an implicit-GEMM convolution kernel (800 us),
    cuDNN's nchwToNhwcKernel before it (100 us) and nhwcToNchwKernel after it (60 us), launched 10 us apart. The
    conversions are 16% of the step, named with channels_last as the first remedy; at 1% (a 6-us and a 4-us one)
    they are a rounding, not said; a channels_last run has none."""
    def trace(name, convert):
        conv = [("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw", 800.0, "kernel", {})]
        if convert:
            conv = ([("void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true>",
                      convert[0], "kernel", {})] + conv +
                    [("void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false>",
                      convert[1], "kernel", {})])
        return gap(kernel_steps(name, conv, H100_PROPS))
    d = trace("layout-nchw", (100.0, 60.0))
    common("layout-nchw", d)
    lay = d["step"].get("layout_conversions") or {}
    check("layout: the step's conversions, 2 kernels, 160 us, 16% of the step",
          lay.get("kernels") == 2 and abs(lay.get("seconds", 0) - 160e-6) < 1e-12 and
          abs(lay.get("share", 0) - 0.16) < 1e-9, lay)
    f = d["diagnosis"]["findings"][0]
    ev_text, rem = " ".join(f["evidence"]), f["remedies"]
    check("layout: GPU compute bound, the conversions said, channels_last the first remedy",
          f["pattern"] == "gpu_compute_bound" and "(nchwToNhwc/nhwcToNchw kernels): 2 a step, 160 µs, 16.0% of the "
          "step" in ev_text and rem and rem[0].startswith("Convolutions in NCHW") and "channels_last" in rem[0],
          (f["pattern"], ev_text, rem))
    # --step-ms 2: the loop's step twice the traced one; the conversions keep their time, their share halves
    out = subprocess.run([MLBENCH, "gap", "--run", os.path.join(WORK, "layout-nchw.json"), "--ceilings", CEILINGS,
                          "--step-ms", "2", "--format", "json"], check=True, capture_output=True, text=True).stdout
    lay = json.loads(out)["step"].get("layout_conversions") or {}
    check("layout, --step-ms 2: 160 us, 8% of the step given",
          abs(lay.get("seconds", 0) - 160e-6) < 1e-12 and abs(lay.get("share", 0) - 0.08) < 1e-9, lay)
    for name, convert in (("layout-rounding", (6.0, 4.0)), ("layout-channels-last", None)):
        d = trace(name, convert)
        f = d["diagnosis"]["findings"][0]
        check("%s: no conversion said, no channels_last remedy" % name,
              f["pattern"] == "gpu_compute_bound" and "NCHW" not in " ".join(f["evidence"] + f["remedies"]),
              (f["pattern"], f["evidence"], f["remedies"]))


def layout_launches():
    """A launch-bound NCHW convolution loop: per 1000-us step 12 elementwise kernels, 2 convolutions and, around
    them, 4 of cuDNN's layout conversions (2 us each; 5 us a convolution), the GPU idle the rest of the step in host
    code. The conversions are 4 of the step's 18 kernels (22.2%): the launch-bound finding says so, with channels_last
    among its remedies, although their time is 0.8% of the step; with one conversion (1 of 15, 6.7%, under
    [launch_bound] layout_kernels_share_min) or none, nothing is said."""
    ew = ("void at::native::vectorized_elementwise_kernel<4>", 2.0, "kernel", {})
    conv = ("sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw", 5.0, "kernel", {})
    to_nhwc = ("void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true>", 2.0, "kernel", {})
    to_nchw = ("void cudnn::engines_precompiled::nhwcToNchwKernel<float, float, float, true, false>", 2.0, "kernel", {})
    for name, kernels, said in (("layout-launches", [ew] * 12 + [to_nhwc, conv, to_nchw] * 2, True),
                                ("layout-launches-one", [ew] * 12 + [to_nhwc, conv, conv], False),
                                ("layout-launches-none", [ew] * 12 + [conv, conv], False)):
        d = gap(kernel_steps(name, kernels, H100_PROPS))
        f = d["diagnosis"]["findings"][0]
        ev_text, rem = " ".join(f["evidence"]), " ".join(f["remedies"])
        if said:
            check("%s: launch bound, the conversions 4 of the 18 kernels a step, channels_last a remedy" % name,
                  f["pattern"] == "launch_bound" and "(nchwToNhwc/nhwcToNchw kernels): 4 of the 18 kernels a step "
                  "launches (22.2%)" in ev_text and "channels_last" in rem, (f["pattern"], ev_text, rem))
        else:
            check("%s: launch bound, no conversion said, no channels_last" % name,
                  f["pattern"] == "launch_bound" and "NCHW" not in ev_text + rem, (f["pattern"], ev_text, rem))


def remedies_already_done():
    """Remedies true of the run only: a fused optimizer (TorchRec's Optimizer.step#FusedAdam.step, torch's
    aten::_fused_adamw_ inside Optimizer.step#AdamW.step) is not told to fuse it, an unfused AdamW is, a foreach one
    (its _foreach_ ops inside Optimizer.step, not a grad clipping's after it) is told fused=True is left; a GPU of
    compute capability 7 is told fp16 activations, not bf16 (it has none); a step whose GEMMs run bf16 is told no
    lower precision, and channels_last only where it has convolutions; an AMD GPU's set-up (hipLaunchKernel) is not
    told CUDA_MODULE_LOADING, an NVIDIA one's is."""
    ew = ("void at::native::vectorized_elementwise_kernel<4>", 2.0, "kernel", {})
    # (name, the optimizer's class, its op inside Optimizer.step, an op after it, told fused/foreach, told foreach)
    for name, opt, inside, after, told, foreach in (
            ("optimizer-adamw", "AdamW", None, None, True, False),
            ("optimizer-fusedadam", "FusedAdam", None, None, False, False),
            ("optimizer-adamw-fused", "AdamW", "aten::_fused_adamw_", None, False, False),
            ("optimizer-adamw-foreach", "AdamW", "aten::_foreach_addcdiv_", None, False, True),
            ("optimizer-adamw-clip", "AdamW", None, "aten::_foreach_norm", True, False)):
        path = kernel_steps(name, [ew] * 20, H100_PROPS)
        doc = json.load(open(path))
        for k in range(4):  # the optimizer's step late in each step, its op inside it; grad clipping's after it
            doc["traceEvents"].append({"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#%s.step" % opt,
                                       "pid": 1, "tid": 1, "ts": 1000.0 * k + 500, "dur": 100.0})
            for op, at in ((inside, 510), (after, 700)):
                if op:
                    doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1,
                                               "ts": 1000.0 * k + at, "dur": 80.0})
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        d = gap(path)
        rem = " ".join(r for f in d["diagnosis"]["findings"] for r in f["remedies"])
        check("%s: %s" % (name, "told fused optimizers" if told else "foreach already: told fused=True" if foreach
                          else "fused already: not told to fuse it"),
              ("Fused/foreach optimizers" in rem) == told and ("Foreach optimizer already" in rem) == foreach and
              d["diagnosis"]["findings"][0]["pattern"] == "launch_bound", rem)
    membound = [("void at::native::vectorized_elementwise_kernel<4>", 800.0, "kernel", {})]
    for major, want, not_want in ((7, "fp16 autocast", "bf16 autocast"), (9, "bf16 autocast", "fp16 autocast")):
        d = gap(kernel_steps("membound-sm%d0" % major, membound, dict(H100_PROPS, computeMajor=major, computeMinor=0)))
        f = d["diagnosis"]["findings"][0]
        rem = " ".join(f["remedies"])
        check("memory-bound kernels on compute capability %d: %s, not %s; no channels_last without a convolution" %
              (major, want, not_want), f["pattern"] == "gpu_compute_bound" and want in rem and not_want not in rem and
              "channels_last" not in rem, rem)
    # a bf16 model's memory-bound step (its GEMMs bf16 by their kernels' names): no lower-precision advice; a conv
    # net's, channels_last
    bf16_gemm = ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 100.0, "kernel", {})
    conv = ("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc", 100.0, "kernel", {})
    for name, mm, want, not_want in (("membound-bf16-gemm", bf16_gemm, None, "autocast"),
                                     ("membound-bf16-conv", conv, "channels_last", "autocast")):
        d = gap(kernel_steps(name, membound + [mm], H100_PROPS))
        f = d["diagnosis"]["findings"][0]
        rem = " ".join(f["remedies"])
        check("%s: %s, no %s" % (name, want or "no channels_last", not_want),
              f["pattern"] == "gpu_compute_bound" and not_want not in rem and
              (("channels_last" in rem) == (want == "channels_last")), rem)
    for api, want, not_want in (("hip", "MIOpen's kernel cache", "CUDA_MODULE_LOADING"),
                                ("cuda", "CUDA_MODULE_LOADING", "MIOpen")):
        # a first launch of 30 ms (module loading) and ten 100-us kernels: set-up, once
        events = []
        for i in range(11):
            t = 0 if i == 0 else 30000 + 200 * i
            events.append({"ph": "X", "cat": "cuda_runtime", "name": api + "LaunchKernel", "pid": 1, "tid": 1,
                           "ts": t, "dur": 30000 if i == 0 else 5, "args": {"correlation": i + 1}})
            events.append({"ph": "X", "cat": "kernel", "name": "elementwise_kernel", "pid": 0, "tid": 7,
                           "ts": t + (30000 if i == 0 else 5) + 2, "dur": 100,
                           "args": {"device": 0, "stream": 7, "correlation": i + 1}})
        path = os.path.join(WORK, "setup-%s.json" % api)
        with open(path, "w") as f:
            json.dump({"traceEvents": events}, f)
        d = gap(path)
        fs = [f for f in d["diagnosis"]["findings"] if f["pattern"] == "setup_once"]
        rem = " ".join(fs[0]["remedies"]) if fs else ""
        check("set-up on %s: %s, not %s" % (api, want, not_want), fs and want in rem and not_want not in rem,
              [(f["pattern"], f["remedies"]) for f in d["diagnosis"]["findings"]])


def host_collectives():
    """Each step's all-reduce as torch's NCCL process group records it on the host: c10d::allreduce_ holding a
    record_param_comms and nccl:all_reduce, then a second record_param_comms after it, the GPU idle meanwhile. The
    host-collective stage counts one call a step (4), not every op of the nest (16: HTA's V100 DDP trace read
    "8080 calls" for 2020 all-reduces)."""
    path = kernel_steps("host-collectives", [("void at::native::vectorized_elementwise_kernel<4>", 100.0, "kernel",
                                              {})], H100_PROPS)
    doc = json.load(open(path))
    for k in range(4):
        t0 = 1000.0 * k
        for name, cat, ts, dur in (("c10d::allreduce_", "cpu_op", 300, 200), ("record_param_comms", "cpu_op", 305, 190),
                                   ("nccl:all_reduce", "user_annotation", 320, 100),
                                   ("record_param_comms", "cpu_op", 520, 10)):
            doc["traceEvents"].append({"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": t0 + ts,
                                       "dur": dur})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    d = gap(path)
    s = stage(d, "collective on the host (GPU idle)") or {}
    check("host collectives: one call a step, the nest counted once", s.get("calls") == 4 and
          "(4 calls in the steps)" in s.get("source", ""), s)


def pageable_async_copies():
    """cudaMemcpyAsync to pageable memory waits, as a blocking copy does (CUDA's API synchronization notes): per
    1000-us step a 100-us kernel (20-120), then the host in cudaMemcpyAsync from 30 to 700 while its copy to the
    host runs at 650-660, then host code. The GPU idle inside the call, 570 us a step, is the step table's sync
    part and the call a blocking copy; the same copy to pinned memory returns at once in a real run, and its idle
    time stays the host's (HTA's TorchRec trace: 91.6 ms a step inside such copies read as host code)."""
    for mem, want_sync in (("Pageable", 570e-6), ("Pinned", 0.0)):
        ev = []
        for k in range(4):
            t0, c = 1000.0 * k, 2 * k
            ev += [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k, "pid": 1, "tid": 1,
                    "ts": t0, "dur": 1000.0},
                   {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t0 + 2,
                    "dur": 5.0, "args": {"correlation": c + 1}},
                   {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>",
                    "pid": 0, "tid": 7, "ts": t0 + 20, "dur": 100.0,
                    "args": {"device": 0, "stream": 7, "correlation": c + 1}},
                   {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": t0 + 30,
                    "dur": 670.0, "args": {"correlation": c + 2}},
                   {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> %s)" % mem, "pid": 0, "tid": 7,
                    "ts": t0 + 650, "dur": 10.0, "args": {"device": 0, "stream": 7, "correlation": c + 2,
                                                          "bytes": 4096}}]
        path = os.path.join(WORK, "async-copy-%s.json" % mem.lower())
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
        d = gap(path)
        sync = sum(p["seconds"] for p in d["step"]["parts"] if p["id"] == "sync")
        check("cudaMemcpyAsync to %s memory: %.0f us a step of GPU idle in a sync or blocking copy" %
              (mem.lower(), want_sync * 1e6), abs(sync - want_sync) < 1e-9,
              [(p["id"], p["seconds"]) for p in d["step"]["parts"]])
        out = subprocess.run([MLBENCH, "trace", path], check=True, capture_output=True, text=True).stdout
        blocking = json.loads(out)["evidence"]["host"].get("blocking_copy") or {}
        check("cudaMemcpyAsync to %s memory: %s" % (mem.lower(), "4 blocking copies" if want_sync else "none blocking"),
              blocking.get("count", 0) == (4 if want_sync else 0), blocking)


def graph_replays():
    """A launch-bound step that replays a CUDA graph already (one cudaGraphLaunch beside its 20 kernels) is told
    to capture more of the step; one without a replay, to use CUDA Graphs."""
    ew = ("void at::native::vectorized_elementwise_kernel<4>", 2.0, "kernel", {})
    for name, graphed in (("launch-graphed", True), ("launch-ungraphed", False)):
        path = kernel_steps(name, [ew] * 20, H100_PROPS)
        doc = json.load(open(path))
        if graphed:
            for k in range(4):
                doc["traceEvents"] += [
                    {"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 1,
                     "ts": 1000.0 * k + 700, "dur": 5.0, "args": {"correlation": 9000 + k}},
                    {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>",
                     "pid": 0, "tid": 7, "ts": 1000.0 * k + 710, "dur": 2.0,
                     "args": {"device": 0, "stream": 7, "correlation": 9000 + k}}]
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        d = gap(path)
        f = d["diagnosis"]["findings"][0]
        rem = " ".join(f["remedies"])
        check("%s: launch bound, %s" % (name, "capture more of the step" if graphed else "CUDA Graphs"),
              f["pattern"] == "launch_bound" and ("replay part of the step already" in rem) == graphed and
              ("CUDA Graphs (torch.cuda.graphs)" in rem) == (not graphed), rem)


def dispatch_yardstick():
    """The trace's own cost of an op that does nothing says whether its host is dispatching: per 1000-us step 20
    kernels of 16 us (5x the launch ceiling: not short) and, after them, 20 aten::view ops, the GPU idle in host
    code about 23 us per op (over the fixed 20 us). With views of 25 us each (a slow host, a costly profiler: HTA's
    DDP ResNet took 26.8 us) the host is dispatching: launch bound, the evidence gives the ratio; with views of
    1 us, it runs code of its own: CPU compute bound."""
    k16 = ("void at::native::vectorized_elementwise_kernel<4>", 16.0, "kernel", {})
    for view_us, want in ((25.0, "launch_bound"), (1.0, "cpu_compute_bound")):
        path = kernel_steps("dispatch-views-%g" % view_us, [k16] * 20, H100_PROPS)
        doc = json.load(open(path))
        for k in range(4):
            for i in range(20):
                doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "aten::view", "pid": 1, "tid": 1,
                                           "ts": 1000.0 * k + 480 + 25 * i, "dur": view_us})
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f)
        d = gap(path)
        f = d["diagnosis"]["findings"][0]
        ev_text = " ".join(f["evidence"])
        check("views of %g us: %s" % (view_us, want), f["pattern"] == want and
              (want != "launch_bound" or ("what dispatching them costs" in ev_text and
                                          "the 25 us its ops that do no work take here" in ev_text)),
              (f["pattern"], ev_text))


def attention_remedy():
    """Matrix math leads: a step of GEMMs alone (attention as matmul + softmax + matmul, or none) is told of
    scaled_dot_product_attention; one that runs a fused attention kernel already, or whose matrix math is
    convolutions, is not (a LoRA BERT on an A100, its SDPA on the memory-efficient kernels, was told to use it)."""
    gemm = ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 600.0, "kernel", {})
    flash = ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4> >", 200.0, "kernel", {})
    conv = ("sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc", 800.0, "kernel", {})
    for name, kernels, told in (("attention-gemms", [gemm], True), ("attention-flash", [gemm, flash], False),
                                ("attention-convs", [conv], False)):
        d = gap(kernel_steps(name, kernels, H100_PROPS))
        f = d["diagnosis"]["findings"][0]
        rem = " ".join(f["remedies"])
        check("%s: %s" % (name, "told SDPA" if told else "not told SDPA"),
              f["pattern"] == "gpu_compute_bound" and ("scaled_dot_product_attention" in rem) == told, rem)


def first_step_copy():
    """Loops whose host runs ahead, each step a DataLoader wait, a pinned copy of its batch enqueued after it (100 us
    on the GPU), then 10 kernels. The copy a step enqueues is its work (the kineto ResNet-50 sample left its first
    step's batch copy and DataLoader wait out: 166 ms a step, 175.5 for its later steps by hand). Nothing ran on the
    GPU before step 0: its host time before its first GPU event is a lead-in, of which it keeps what the later steps'
    GPU idles at their head (the median), no more (t4_matmulk: step 0's 11.6 ms of host preparation made a mean of
    14.6 ms beside later steps of 11.3 and 11.9).
    - GPU-bound: 1000-us ProfilerSteps, a 600-us wait, the copy at 610, kernels of 150 us. Each later step's work
      queues behind the last: 1600 us each, no head; step 0 runs from its copy at 615 to 2215: 1600 us too.
    - Data-bound: 2000-us ProfilerSteps, a 1500-us wait, the copy at 1510, kernels of 50 us. Later steps run from
      the last one's GPU end (+115) to their own (+2115), 2000 us, 1400 of it idle at their head; step 0 keeps
      1400 us of its 1515-us lead-in: 2000 us."""
    for name, period, wait, kernel, want, lead in (("GPU-bound", 1000.0, 600.0, 150.0, 1600e-6, 615e-6),
                                                   ("data-bound", 2000.0, 1500.0, 50.0, 2000e-6, 115e-6)):
        ev, corr, gpu_at = [], 0, 0.0
        for k in range(4):
            t0 = period * k
            ev += [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k, "pid": 1, "tid": 1,
                    "ts": t0, "dur": period},
                   {"ph": "X", "cat": "user_annotation", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter."
                    "__next__", "pid": 1, "tid": 1, "ts": t0 + 1, "dur": wait - 2}]
            corr += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1,
                       "ts": t0 + wait + 10, "dur": 5.0, "args": {"correlation": corr}})
            gpu_at = max(gpu_at, t0 + wait + 15)
            ev.append({"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7,
                       "ts": gpu_at, "dur": 100.0, "args": {"device": 0, "stream": 7, "correlation": corr,
                                                            "bytes": 1 << 20}})
            gpu_at += 100
            for i in range(10):
                corr += 1
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                           "ts": t0 + wait + 20 + 3 * i, "dur": 2.0, "args": {"correlation": corr}})
                ev.append({"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>",
                           "pid": 0, "tid": 7, "ts": gpu_at, "dur": kernel,
                           "args": {"device": 0, "stream": 7, "correlation": corr}})
                gpu_at += kernel
        path = os.path.join(WORK, "first-step-copy-%s.json" % name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
        d = gap(path)
        st, copy = d["step"], stage(d, "copy h2d pinned") or {}
        check("first step's copy, %s: the GPU's timeline, %.0f us a step, each of the 4 steps with its copy, "
              "%.0f us of step 0's lead-in left out and said" % (name, want * 1e6, lead * 1e6),
              st.get("timeline") == "gpu" and abs(st["seconds"] - want) < 1e-12 and copy.get("calls") == 4 and
              abs(st.get("lead_in_seconds", 0) - lead) < 1e-12 and "lead-in" in st.get("timeline_why", ""),
              (st.get("timeline"), st.get("seconds"), copy.get("calls"), st.get("lead_in_seconds")))


def prefetch_heads():
    """Loops that prefetch each batch on a side stream at the top of the step, while the step before still runs on
    the main stream (HTA's 16-rank A100 trace: each copy 159 ms before the step before ends; its step 0, nothing
    before it, read 368 ms beside 215, the mean 246 for 215). A step is 10 kernels of 150 us queued back to back,
    launched from 600 us into each ProfilerStep, its copy (50 us) at 15 us. Step 0 starts where the step before
    would have ended: its first event less the later steps' (negative) head, never shorter than the shortest.
    - steady: 1500-us ProfilerSteps, heads -600 us: step 0 from 615 to 2115, every step 1500 us.
    - ahead: 1000-us ProfilerSteps, the host further ahead each step (heads -1100, -1600, -2100): the head would
      leave 500 us; step 0 is the shortest later step's 1500 us."""
    for name, period in (("steady", 1500.0), ("ahead", 1000.0)):
        ev, corr, main = [], 0, 0.0
        for k in range(4):
            t0 = period * k
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k, "pid": 1, "tid": 1,
                       "ts": t0, "dur": period})
            corr += 1
            ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": t0 + 10,
                    "dur": 4.0, "args": {"correlation": corr}},
                   {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 25,
                    "ts": t0 + 15, "dur": 50.0, "args": {"device": 0, "stream": 25, "correlation": corr,
                                                         "bytes": 1 << 20}}]
            main = max(main, t0 + 615)
            for i in range(10):
                corr += 1
                ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                        "ts": t0 + 600 + 3 * i, "dur": 2.0, "args": {"correlation": corr}},
                       {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>",
                        "pid": 0, "tid": 7, "ts": main, "dur": 150.0,
                        "args": {"device": 0, "stream": 7, "correlation": corr}}]
                main += 150.0
        path = os.path.join(WORK, "prefetch-%s.json" % name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
        st = gap(path)["step"]
        check("prefetch, %s: the GPU's timeline, 1500 us a step, 615 us of step 0 left out" % name,
              st.get("timeline") == "gpu" and abs(st["seconds"] - 1500e-6) < 1e-12 and
              abs(st.get("lead_in_seconds", 0) - 615e-6) < 1e-12, (st.get("timeline"), st["seconds"],
                                                                  st.get("lead_in_seconds")))


def graph_capture():
    """A window that captures a CUDA graph (vLLM's decode capture): cudaStreamBeginCapture at 100 us, 200 launches
    recorded into the graph (no kernel runs), cudaStreamEndCapture at 50 ms, a kernel before and one after. The
    capture is one-time set-up, named, not CPU compute (it read "CPU compute bound, 95.9%", told to move its
    augmentation to the GPU)."""
    ev, corr = [], 0
    def launch(ts, run):
        nonlocal corr
        corr += 1
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": ts,
                   "dur": 5.0, "args": {"correlation": corr}})
        if run:
            ev.append({"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>",
                       "pid": 0, "tid": 7, "ts": ts + 10, "dur": 20.0,
                       "args": {"device": 0, "stream": 7, "correlation": corr}})
    launch(10, True)
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamBeginCapture", "pid": 1, "tid": 1, "ts": 100,
               "dur": 2.0, "args": {"correlation": 9990}})
    for i in range(200):
        launch(200 + 240 * i, False)
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamEndCapture", "pid": 1, "tid": 1, "ts": 50000,
               "dur": 5.0, "args": {"correlation": 9991}})
    launch(50100, True)
    path = os.path.join(WORK, "graph-capture.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
    d = gap(path)
    f = d["diagnosis"]["findings"]
    ev_text = " ".join(f[0]["evidence"])
    check("graph capture: one-time set-up, the capture named, no CPU compute",
          f[0]["pattern"] == "setup_once" and "graph capture (StreamBeginCapture ... EndCapture) 49.9 ms (1 call)"
          in ev_text and all(x["pattern"] != "cpu_compute_bound" for x in f), [(x["pattern"], x["evidence"]) for x in f])


def per_step_host_figures():
    """Per-step host figures count what the steps hold: 4 steps of 1000 us, each 20 launches of 2 us and 10 ops,
    after a set-up of 200 launches of 5 us and 100 ops before the first step. The launch calls are 4.0% of the
    step and 10 ops a step (the whole trace's read 29.0% and 35: an RTX 4090 laptop's set-up made its 8.3% read
    9.6%)."""
    ew = ("void at::native::vectorized_elementwise_kernel<4>", 2.0, "kernel", {})
    path = kernel_steps("per-step-host", [ew] * 20, H100_PROPS)
    doc = json.load(open(path))
    for i in range(200):
        doc["traceEvents"].append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                                   "ts": -5000.0 + 20 * i, "dur": 5.0, "args": {"correlation": 50000 + i}})
    for i in range(100):
        doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1,
                                   "ts": -5000.0 + 40 * i + 10, "dur": 1.0})
    for k in range(4):
        for i in range(10):
            doc["traceEvents"].append({"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1,
                                       "ts": 1000.0 * k + 100 + 10 * i, "dur": 1.0})
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    d = gap(path)
    ev_text = " ".join(" ".join(f["evidence"]) for f in d["diagnosis"]["findings"])
    check("per-step host figures: 4.0% of the step in launch calls, 10 ops a step",
          "host time in kernel launch calls: 4.0% of the step" in ev_text and "(10 per step)" in ev_text, ev_text)


def operator_steps():
    """torch 1.9 wrote ProfilerStep#N as an "Operator" event (the kineto ResNet-50 samples): `--target` cuts the
    same steps as the step table, its here-step the step's (it read "996 ms per step (mean of 1)", the trace's
    span, beside 178 ms a step)."""
    ew = ("void at::native::vectorized_elementwise_kernel<4>", 300.0, "kernel", {})
    path = kernel_steps("operator-steps", [ew] * 2, H100_PROPS)
    doc = json.load(open(path))
    for e in doc["traceEvents"]:
        if e["name"].startswith("ProfilerStep#"):
            e["cat"] = "Operator"
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)
    p, _ = projected(path, "h100-sxm")
    here = p["machines"]["here"]
    check("Operator ProfilerSteps: 4 steps, --target's here-step the step table's",
          p["run"]["steps"] == 4 and abs(here["step_seconds"] - p["step"]["seconds"]) < 1e-12,
          (p["run"]["steps"], here["step_seconds"], p["step"]["seconds"]))


def beyond_ceiling_share():
    """Matrix math partly faster than its nearest case (no ceiling for it) and partly slow: per 1000-us step an
    8192^3 bf16 aten::mm in 600 us (1.8 PFLOP/s, past any H100 case) and a 512^3 fp32 one in 50 us (5.4 TFLOP/s,
    held to the fp32 case). The efficiency line says it covers 7.7% of that time, and "Kernels run far below the
    measured ceiling" is not told on so small a part (an MI300X's FLUX.1: its attention, 1.8% of that time at 4%,
    read as all its GEMM/conv/attention work at 4%). With the two times swapped the slow GEMM is most of it: told."""
    def trace(name, big_us, small_us):
        ev, corr = [], 0
        for k in range(4):
            t0 = 1000.0 * k
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k, "pid": 1, "tid": 1,
                       "ts": t0, "dur": 1000.0})
            at = t0 + 20
            for n, dtype, dur, kname in ((8192, "c10::BFloat16", big_us, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n"),
                                         (512, "float", small_us, "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n")):
                corr += 1
                ev += [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t0 + 2 + 5 * corr % 20,
                        "dur": 4.0, "args": {"Input Dims": [[n, n], [n, n]], "Input type": [dtype, dtype]}},
                       {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                        "ts": t0 + 3 + 5 * corr % 20, "dur": 2.0, "args": {"correlation": corr}},
                       {"ph": "X", "cat": "kernel", "name": kname, "pid": 0, "tid": 7, "ts": at, "dur": dur,
                        "args": {"device": 0, "stream": 7, "correlation": corr}}]
                at += dur + 5
        path = os.path.join(WORK, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [dict(H100_PROPS, computeMajor=9, computeMinor=0)], "traceEvents": ev}, f)
        d = gap(path, REFERENCE)
        f = d["diagnosis"]["findings"][0]
        return " ".join(f["evidence"]), " ".join(f["remedies"])
    ev_text, rem = trace("beyond-most", 600.0, 50.0)
    check("most of the matrix math past its ceiling: the efficiency says the 7.7% it covers, no 'far below' remedy",
          "held to a ceiling, 7.7% of it by time" in ev_text and "far below the measured ceiling" not in rem,
          (ev_text, rem))
    ev_text, rem = trace("beyond-least", 50.0, 600.0)
    check("most of the matrix math slow: 'far below' told", "held to a ceiling, 92.3% of it by time" in ev_text and
          "far below the measured ceiling" in rem, (ev_text, rem))


def one_wait():
    """Five blocking copies, the GPU idle in them: one of 500 us and four of 20 us (SGLang's prefill trace: one
    493-ms copy at its start) is one stall, told so; five of 116 us each is a habit, told .item()/.cpu()."""
    for name, durs, one in (("one-wait", [500, 20, 20, 20, 20], True), ("many-waits", [116] * 5, False)):
        ev, t, corr = [], 0.0, 0
        for d_us in durs:
            corr += 1
            ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpy", "pid": 1, "tid": 1, "ts": t,
                    "dur": float(d_us), "args": {"correlation": corr}},
                   {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7,
                    "ts": t + d_us - 3, "dur": 2.0, "args": {"device": 0, "stream": 7, "correlation": corr,
                                                             "bytes": 64}}]
            t += d_us + 5
            corr += 1
            ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t,
                    "dur": 3.0, "args": {"correlation": corr}},
                   {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>",
                    "pid": 0, "tid": 7, "ts": t + 4, "dur": 30.0,
                    "args": {"device": 0, "stream": 7, "correlation": corr}}]
            t += 40
        path = os.path.join(WORK, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
        d = gap(path)
        f = d["diagnosis"]["findings"][0]
        ev_text, rem = " ".join(f["evidence"]), " ".join(f["remedies"])
        check("%s: sync bound, %s" % (name, "one stall, no .item() advice" if one else ".item()/.cpu() advice"),
              f["pattern"] == "sync_bound" and ("a single stall" in ev_text) == one and
              ("One long wait" in rem) == one and ("avoid .item()" in rem) == (not one), (ev_text, rem))
        # the calls counted are those the time is in, the sync stage's: a decode trace read "5 syncs, 68.7 us
        # each" for 345 us in 5 syncs and 4 blocking copies, its table 38.1 us a call
        check("%s: the evidence counts the blocking copies its time is in, as the sync stage does" % name,
              "5 syncs and blocking copies (5 of them copies)" in ev_text and stage(d, "sync")["calls"] == 5,
              (ev_text, stage(d, "sync")["calls"]))


def bf16_gradients():
    """A DDP step that all-reduces its gradients in bf16 (NCCL's kernel says so) for 600 us of its 1000 is not told
    "bf16 gradients" (8 MI300Xs' ResNet was); the same in fp32 is. The collective's rate is named: algbw beside
    busbw (the table's figure is the algbw)."""
    for dtype, told in (("BFloat16", False), ("Float", True)):
        nccl = ("ncclDevKernel_AllReduce_Sum_%s_RING_LL(ncclDevComm*, unsigned long, ncclWork*)" %
                ("bf16" if dtype == "BFloat16" else "f32"), 600.0, "kernel",
                {"Collective name": "allreduce", "dtype": dtype, "In msg nelems": 1 << 22, "Out msg nelems": 1 << 22,
                 "Group size": 8})
        d = gap(kernel_steps("allreduce-%s" % dtype, [nccl, ("void at::native::vectorized_elementwise_kernel<4>",
                                                            100.0, "kernel", {})], H100_PROPS))
        f = d["diagnosis"]["findings"][0]
        rem = " ".join(f["remedies"])
        ev_text = " ".join(f["evidence"])
        check("all-reduce in %s: %s; its algbw and busbw named" % (dtype, "told bf16 gradients" if told
                                                                    else "not told bf16 gradients"),
              f["pattern"] == "communication_bound" and ("bf16 gradients" in rem) == told and "algbw " in ev_text and
              "busbw " in ev_text, (f["pattern"], ev_text, rem))


def fp32_math():
    """A loop without recorded types whose matmuls run fp32 on the CUDA cores: per 1000-us step an sgemm (600 us),
    an elementwise kernel (300 us) and a memset (30 us, 1 MiB). The sgemm is named, 60% of the step, with the lower-precision
    remedy of the GPU's compute capability (TF32/bf16 on an 8.x, fp16 on a 7.x, fp8 from 8.9 only); a TF32 kernel is no
    fp32 math; the
    memset, the only stage held to a ceiling (the H100 reference's membw), no longer says "bigger or better-shaped
    matrices"."""
    def trace(name, gemm, major, minor=0):
        kernels = [(gemm, 600.0, "kernel", {}), ("void at::native::vectorized_elementwise_kernel<4>", 300.0, "kernel", {}),
                   ("Memset (Device)", 30.0, "gpu_memset", {"bytes": 1 << 20})]
        d = gap(kernel_steps(name, kernels, dict(H100_PROPS, computeMajor=major, computeMinor=minor)),
                REFERENCE)  # its membw case holds the memset
        f = d["diagnosis"]["findings"][0]
        return d, f, " ".join(f["evidence"]), " ".join(f["remedies"])
    d, f, ev_text, rem = trace("fp32-sgemm-sm90", "ampere_sgemm_128x64_nn", 9)
    common("fp32-sgemm-sm90", d)
    m = d["step"].get("fp32_math") or {}
    check("fp32 math: the sgemm's 600 us a step, 60% of it",
          m.get("kernels") == 1 and abs(m.get("seconds", 0) - 600e-6) < 1e-12 and abs(m.get("share", 0) - 0.6) < 1e-9,
          m)
    memset = stage(d, "memset") or {}
    check("fp32 math: named, and TF32/bf16 on a compute capability 9 GPU; no 'better-shaped matrices' from a memset",
          memset.get("bounded") and f["pattern"] == "gpu_compute_bound" and "on the CUDA cores, no tensor core (sgemm, scudnn in their names): "
          "1 a step, 600 µs, 60.0% of the step" in ev_text and 'set_float32_matmul_precision("high")' in rem and
          "better-shaped" not in rem and "fp8 matmuls" in rem, (ev_text, rem))
    # an A100 (8.0) and an A10G (8.6) have TF32 and bf16 but no fp8 tensor cores; an L4 (8.9) has them
    for minor, fp8 in ((0, False), (6, False), (9, True)):
        d, f, ev_text, rem = trace("fp32-sgemm-sm8%d" % minor, "ampere_sgemm_128x64_nn", 8, minor)
        check("fp32 math on a compute capability 8.%d GPU: TF32 and bf16, %s" % (minor, "and fp8" if fp8 else "no fp8"),
              'set_float32_matmul_precision("high")' in rem and "bf16" in rem and ("fp8" in rem) == fp8, rem)
    d, f, ev_text, rem = trace("fp32-sgemm-sm70", "volta_sgemm_128x64_nn", 7)
    check("fp32 math on a compute capability 7 GPU: fp16 autocast and fp16 tensor cores, no TF32, bf16 or fp8 remedy",
          "fp16 autocast" in rem and "fp16 on the tensor cores (compute capability 7" in rem and
          "set_float32_matmul_precision" not in rem and "bf16" not in rem.replace("no bf16", "") and
          "fp8" not in rem.replace("no fp8", ""), rem)
    # DeepSeek's DualPipe step on an H800: its GEMMs fp8 by their names, no types recorded; told neither bf16 nor fp8
    d, f, ev_text, rem = trace("fp8-gemm-sm90", "void deep_gemm::fp8_gemm_kernel<128u, 128u>", 9)
    check("fp8 GEMMs by their names: low precision already, not told bf16 or fp8",
          "in low precision already" in rem and "fp8 matmuls" not in rem and "bf16 on tensor cores" not in rem, rem)
    d, f, ev_text, rem = trace("tf32-gemm-sm90", "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32", 9)
    check("a TF32 GEMM is no fp32 math: nothing said, no fp32 remedy",
          (d["step"].get("fp32_math") or {}).get("kernels") == 0 and "CUDA cores" not in ev_text and
          "set_float32_matmul_precision" not in rem, (d["step"].get("fp32_math"), ev_text, rem))


def small_grids():
    """Kernels on fewer thread blocks than half the GPU's SMs: per 1000-us step LayerNorm's backward weight-gradient
    kernel on 32 blocks of an H200's 132 SMs (300 us, its name as torch 2.11 writes it), an elementwise kernel on
    4096 blocks (600 us) and an NCCL all-reduce on 8 (50 us: NCCL runs few blocks by design, not counted). The small
    grid is 30% of the step, named by its function; without deviceProperties' numSms nothing is said."""
    gamma = ("void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 32u, 32u, "
             "false>(long, long, float const*, float const*, float const*, float const*, float*, float*)")
    kernels = [(gamma, 300.0, [32, 1, 1]), ("void at::native::vectorized_elementwise_kernel<4, at::native::"
                                            "CUDAFunctor_add<float> >(int, at::native::CUDAFunctor_add<float>)", 600.0,
                                            [4096, 1, 1]),
               ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 50.0, [8, 1, 1])]

    def trace(name, props):
        d = gap(kernel_steps(name, [(k, us, "kernel", {"grid": grid, "block": [256, 1, 1]}) for k, us, grid in kernels],
                             props))
        f = d["diagnosis"]["findings"][0]
        return d, " ".join(f["evidence"]), " ".join(f["remedies"])
    d, ev_text, rem = trace("small-grids", dict(H100_PROPS, name="NVIDIA H200", numSms=132))
    common("small-grids", d)
    sg = d["step"].get("small_grids") or {}
    check("small grids: the 32-block kernel, 300 us a step, 30% of it, 132 SMs, named by its function; NCCL's not",
          sg.get("kernels") == 1 and abs(sg.get("seconds", 0) - 300e-6) < 1e-12 and abs(sg.get("share", 0) - 0.3) < 1e-9
          and sg.get("sms") == 132 and sg.get("largest") == "GammaBetaBackwardCUDAKernelTemplate" and
          abs(sg.get("largest_seconds", 0) - 1.2e-3) < 1e-12, sg)
    check("small grids: said in the diagnosis, with its remedy",
          "fewer thread blocks than half the GPU's 132 SMs, the other SMs idle while they run: 1 a step, 300 µs, "
          "30.0% of the step; the most time of them in the trace: GammaBetaBackwardCUDAKernelTemplate, 1.2 ms"
          in ev_text and "fill a fraction of the SMs" in rem, (ev_text, rem))
    props = dict(H100_PROPS)
    props.pop("numSms")
    d, ev_text, rem = trace("small-grids-no-sms", props)
    check("small grids: no SM count, nothing said",
          (d["step"].get("small_grids") or {}).get("sms") is None and "SMs" not in ev_text + rem,
          (d["step"].get("small_grids"), ev_text))


def concurrent_copies():
    """A 600-us pinned copy to the GPU and, from 80 us into it, a 300-us copy back on another stream, per 1000-us
    step: 300 us a step with both in flight, said with the longest kind's 600 us; the same copies one after the
    other: nothing said. Their stages share the copy time in proportion, but each one's Amdahl line counts only its
    time alone on the GPU: with 8 MiB to the GPU and 2 MiB back, below the pinned copy ceilings, the copy back
    (wholly inside the other) saves nothing at its ceiling (the pro-rata share read 1.17x), the copy to the GPU at
    most its 300 us alone."""
    def trace(name, back_at, size=64 << 20, back_size=64 << 20):
        ev, corr = [], 0
        for k in range(4):
            t0 = k * 1000.0
            ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % k, "pid": 1, "tid": 1,
                       "ts": t0, "dur": 1000.0})
            for name_, at, dur, stream, nbytes in (("Memcpy HtoD (Pinned -> Device)", 20, 600.0, 7, size),
                                                   ("Memcpy DtoH (Device -> Pinned)", back_at, 300.0, 8, back_size)):
                corr += 1
                ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1,
                           "ts": t0 + 2 + corr % 2, "dur": 2.0, "args": {"correlation": corr}})
                ev.append({"ph": "X", "cat": "gpu_memcpy", "name": name_, "pid": 0, "tid": stream, "ts": t0 + at,
                           "dur": dur, "args": {"device": 0, "stream": stream, "correlation": corr,
                                                "bytes": nbytes}})
        path = os.path.join(WORK, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
        return gap(path)
    w = " ".join(trace("copies-at-once", 100)["run"]["warnings"])
    check("copies at once: said, with the time both were in flight and the longest kind's",
          "copies of two kinds ran at once on GPU 0 (copy h2d pinned and copy d2h pinned" in w and
          "300 µs a step with both in flight" in w and "the longest kind's 600 µs" in w, w)
    w = " ".join(trace("copies-in-turn", 630)["run"]["warnings"])
    check("copies in turn: nothing said", "ran at once" not in w, w)
    d = trace("copies-at-once-small", 100, 8 << 20, 2 << 20)
    h2d, d2h = stage(d, "copy h2d pinned"), stage(d, "copy d2h pinned")
    check("copies at once, small: both lose time against their ceilings",
          h2d["seconds_lost"] > 0 and d2h["seconds_lost"] > 0, (h2d, d2h))
    check("copies at once, small: the copy back saves nothing alone, the copy to the GPU at most its 300 us alone",
          abs(d2h["amdahl"]["step_seconds"] - 1e-3) < 1e-12 and
          1e-3 - 300e-6 - 1e-12 <= h2d["amdahl"]["step_seconds"] < 1e-3, (h2d["amdahl"], d2h["amdahl"]))


def pre_window_work():
    """A trace without steps that opens with GPU work no recorded call launched, then a hole with nothing
    recorded (efficient-dl-systems' A4000 ViT trace: 224 events, 3.78 s, read "CPU compute bound, 97.3%"): the run
    starts at the host's first event, the GPU-bound part it records. A kernel still running then stays in."""
    for name, running in (("pre-window", False), ("pre-window-running", True)):
        ev = [{"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7,
               "ts": 10.0 * i, "dur": 9.0, "args": {"device": 0, "stream": 7, "correlation": 100 + i}}
              for i in range(20)]  # 200 us of drained GPU work, then nothing until 50000 us
        if running:  # one more on another stream, from 40000 us until the host's first call and past it
            ev.append({"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 8,
                       "ts": 40000.0, "dur": 10100.0, "args": {"device": 0, "stream": 8, "correlation": 150}})
        t, corr = 50000.0, 1000
        for i in range(50):
            corr += 1
            ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t,
                    "dur": 4.0, "args": {"correlation": corr}},
                   {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_128x64_nn", "pid": 0, "tid": 7,
                    "ts": 50100.0 + 100.0 * i, "dur": 98.0, "args": {"device": 0, "stream": 7, "correlation": corr}}]
            t += 10
        path = os.path.join(WORK, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
        d = gap(path)
        start = 40000.0 if running else 50000.0
        want = (50100.0 + 100.0 * 49 + 98.0 - start) / 1e6
        check("%s: the run starts %s" % (name, "at the kernel still running" if running else "at the host's first call"),
              abs(d["run"]["total_seconds"] - want) < 1e-9, (d["run"]["total_seconds"], want))
        check("%s: GPU compute bound, the drained work left out and said" % name,
              d["diagnosis"]["findings"][0]["pattern"] == "gpu_compute_bound" and
              any("20 GPU events" in n and "before the first host event" in n for n in d["run"]["warnings"]),
              (d["diagnosis"]["findings"][0]["pattern"], d["run"]["warnings"]))
        gemm = (50 * 98.0 + (10100.0 if running else 0)) / 1e6
        check("%s: the gemm stage holds the run's kernels only" % name,
              abs(stage(d, "gemm")["seconds"] - gemm) < 1e-9, (stage(d, "gemm")["seconds"], gemm))
        common(name, d)


def host_window_edges():
    """Where the run's window and its counts could disagree (a review of the pre-window cut and the sync count):
    a Python frame before the first op is the host's (with_stack traces), GPU work wholly before the host's first
    event leaves the trace whole, copies at once in a run without steps are said per run, and the copies counted
    beside the syncs are those in the steps."""
    def write(name, ev):
        path = os.path.join(WORK, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
        return gap(path)

    def kernel(ts, dur, corr, name="void at::native::vectorized_elementwise_kernel", stream=7):
        return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                "args": {"device": 0, "stream": stream, "correlation": corr}}

    def host(cat, name, ts, dur, corr=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur}
        if corr is not None:
            e["args"] = {"correlation": corr}
        return e
    # a stray kernel at 50 us under a recorded Python frame (0-2000 us); the first op at 1000 us
    d = write("edge-python-frame", [host("python_function", "train.py(10): main", 0, 2000),
                                    host("python_function", "train.py(20): preprocess", 10, 980), kernel(50, 40, 3),
                                    host("cpu_op", "aten::add", 1000, 100),
                                    host("cuda_runtime", "cudaLaunchKernel", 1010, 5, 7), kernel(1020, 500, 7),
                                    host("cuda_runtime", "cudaDeviceSynchronize", 1100, 430)])
    check("a Python frame before the first op: the run keeps it (2 ms), nothing left out",
          abs(d["run"]["total_seconds"] - 2e-3) < 1e-12 and
          not any("before the first host event" in w for w in d["run"]["warnings"]),
          (d["run"]["total_seconds"], d["run"]["warnings"]))
    # all of the GPU's record (800 us of GEMM, 100 us elementwise) before the host's one op at 1000 us
    d = write("edge-gpu-before-host", [kernel(0, 800, 5, "ampere_bf16_s16816gemm_bf16_128x64_nn"),
                                       kernel(800, 100, 6), host("cpu_op", "aten::add", 1000, 10)])
    fg = d["diagnosis"]["figures"]
    check("GPU work wholly before the host's first event: the run is the whole trace, shares within it",
          abs(d["run"]["total_seconds"] - 1010e-6) < 1e-12 and abs(fg["gpu_utilization"] - 900 / 1010) < 1e-6 and
          not any("before the first host event" in w for w in d["run"]["warnings"]),
          (d["run"]["total_seconds"], fg["gpu_utilization"], d["run"]["warnings"]))
    common("edge-gpu-before-host", d)
    # a gpu_user_annotation over the drained work, its lane in pid and tid only: a GPU lane's, no host event
    d = write("edge-gpu-annotation", [{"ph": "X", "cat": "gpu_user_annotation", "name": "warmup", "pid": 0,
                                       "tid": 7, "ts": 0, "dur": 100, "args": {"External id": 5}}, kernel(0, 100, 99),
                                      host("cpu_op", "aten::add", 1000, 100),
                                      host("cuda_runtime", "cudaLaunchKernel", 1010, 5, 7), kernel(1020, 500, 7)])
    check("a gpu_user_annotation before the host's first event is the GPU's: the drained work still left out",
          abs(d["run"]["total_seconds"] - 520e-6) < 1e-12 and
          any("before the first host event" in w for w in d["run"]["warnings"]),
          (d["run"]["total_seconds"], d["run"]["warnings"]))
    # no steps, one kernel before the host's first event (cut), then a copy each way at once: 190 us together
    d = write("edge-prewindow-copies", [
        kernel(0, 100, 99), host("cpu_op", "aten::copy_", 1000, 500),
        host("cuda_runtime", "cudaMemcpyAsync", 1010, 5, 1),
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pinned -> Device)", "pid": 0, "tid": 7, "ts": 1020,
         "dur": 200, "args": {"device": 0, "stream": 7, "correlation": 1, "bytes": 1 << 20}},
        host("cuda_runtime", "cudaMemcpyAsync", 1016, 5, 2),
        {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pinned)", "pid": 0, "tid": 8, "ts": 1030,
         "dur": 200, "args": {"device": 0, "stream": 8, "correlation": 2, "bytes": 1 << 20}}])
    w = " ".join(d["run"]["warnings"])
    check("copies at once in a run without steps, its first GPU work cut: said per run, in finite figures",
          "190 µs a run with both in flight" in w and "the longest kind's 200 µs" in w, w)
    # three blocking copies before the first step; in each of three steps one kernel and one long sync
    ev = []
    for i in range(3):
        ev += [host("cuda_runtime", "cudaMemcpy", 100 + 200 * i, 50, 1 + i),
               {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7,
                "ts": 110 + 200 * i, "dur": 20, "args": {"device": 0, "stream": 7, "correlation": 1 + i,
                                                         "bytes": 4096}}]
    for k in range(3):
        t = 1000.0 + 1000 * k
        ev += [host("user_annotation", "ProfilerStep#%d" % (k + 1), t, 1000), host("cpu_op", "aten::add", t + 5, 20),
               host("cuda_runtime", "cudaLaunchKernel", t + 10, 5, 10 + k), kernel(t + 20, 50, 10 + k),
               host("cuda_runtime", "cudaDeviceSynchronize", t + 100, 850)]
    d = write("edge-copies-before-steps", ev)
    ev_text = " ".join(" ".join(f["evidence"]) for f in d["diagnosis"]["findings"])
    check("blocking copies before the first step: the sync count names none of them as copies",
          "3 syncs, " in ev_text and "of them copies" not in ev_text, ev_text)


def memory_bound_products():
    """A decode step's skinny products, [2, 4096] x [4096, 4096] in bf16 (20 us each, back to back), read 33.6 MB of
    weights for 67 MFLOP: held to those bytes at the memory ceiling, not to the GEMM case's FLOP rate ("at 0.4%"
    of 196 TFLOP/s in a laptop's decode trace); the diagnosis says memory-bound products, with no tensor-core shapes
    or fp8 rate. The same products at 2048 rows are the FLOPs' (the compute side)."""
    for name, rows, kernel_us, side, out in (("skinny", 2, 20.0, "memory", False),
                                             ("square", 2048, 200.0, "compute", False),
                                             ("skinny-out", 2, 20.0, "memory", True),
                                             ("skinny-beside-conv", 2, 20.0, "memory", False),
                                             ("skinny-l2", 2, 4.0, "memory", False)):
        # out=: torch.compile's extern mm(a, b, out=buf) records its output as a third argument, counted once;
        # beside-conv: the products are 1 ms of 6 ms of matrix math (5 ms of convolutions without shapes), no remedy
        ev, corr, gpu_at = [], 0, 100.0
        for i in range(50):
            corr += 1
            t = 10.0 * i
            ev += [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": t, "dur": 8.0,
                    "args": {"Input Dims": [[rows, 4096], [4096, 4096]] + ([[rows, 4096]] if out else []),
                             "Input type": ["c10::BFloat16"] * (3 if out else 2)}},
                   {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 2,
                    "dur": 4.0, "args": {"correlation": corr}},
                   {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                    "pid": 0, "tid": 7, "ts": gpu_at, "dur": kernel_us,
                    "args": {"device": 0, "stream": 7, "correlation": corr}}]
            gpu_at += kernel_us
        for i in range(50 if name == "skinny-beside-conv" else 0):
            ev += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                    "ts": 500.0 + 10.0 * i, "dur": 4.0, "args": {"correlation": 1000 + i}},
                   {"ph": "X", "cat": "kernel", "name": "sm80_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc",
                    "pid": 0, "tid": 7, "ts": gpu_at, "dur": 100.0,
                    "args": {"device": 0, "stream": 7, "correlation": 1000 + i}}]
            gpu_at += 100.0
        path = os.path.join(WORK, "products-%s.json" % name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
        d = gap(path, REFERENCE)
        g = stage(d, "gemm")
        want_bytes = 50 * (rows * 4096 + 4096 * 4096 + rows * 4096) * 2
        flops = 50 * 2.0 * rows * 4096 * 4096
        check("products, %s: the gemm stage's bytes (operands and output once) and its roofline side" % name,
              g.get("min_bytes") == want_bytes and g.get("roofline") == side and g["work"] == flops,
              (g.get("min_bytes"), want_bytes, g.get("roofline"), g["work"]))
        f0 = d["diagnosis"]["findings"][0]
        rem, evid = " ".join(f0["remedies"]), " ".join(f0["evidence"])
        if name == "skinny-l2":
            # 4 us a product: 8.4 TB/s, past the memory ceiling it is held to (weights kept in L2), and a few
            # percent of the GEMM case: the words say the roofline, not "faster than its nearest case"
            check("products, skinny-l2: above the roofline its bytes set, said so",
                  g["above_ceiling"] and g.get("beyond", "").startswith("faster than the roofline its bytes set") and
                  "L2" in g["beyond"], g.get("beyond"))
        elif name == "skinny-beside-conv":
            check("products beside convolutions: a sixth of the matrix math, said so, no bytes remedy",
                  "of the matrix math, 16.7% by time is memory-bound products" in evid and
                  "bound by its bytes" not in rem, (evid, rem))
        elif side == "memory":
            # the ceiling it is held to: its bytes at a memory rate of the reference's, not its FLOPs at the GEMM's
            byte_rate = want_bytes / g["seconds_at_ceiling"]
            check("products, %s: held to its bytes at under 3.5 TB/s (an H100's HBM3), a 20-us kernel at "
                  "40-100%% of it" % name, 1e12 < byte_rate < 3.5e12 and 0.4 < g["efficiency"] <= 1.0,
                  (byte_rate, g["efficiency"]))
            check("products, %s: GPU compute bound, told memory-bound products, not tensor-core shapes or fp8" % name,
                  f0["pattern"] == "gpu_compute_bound" and "bound by its bytes" in rem and
                  "multiples of 16" not in rem and "fp8 matmuls" not in rem and "memory-bound products" in evid,
                  (f0["pattern"], rem, evid))
        else:
            check("products, square: held to its FLOPs; tensor-core remedies, no bytes remedy",
                  f0["pattern"] == "gpu_compute_bound" and "bound by its bytes" not in rem and
                  "multiples of 16" in rem and "memory-bound products" not in evid, (rem, evid))
    # shapes past a float's range (a fuzzer's [1e14]^3): bytes unknown, no roofline side drawn from an infinity
    ev = [{"ph": "X", "cat": "cpu_op", "name": "aten::bmm", "pid": 1, "tid": 1, "ts": 0.0, "dur": 8.0,
           "args": {"Input Dims": [[10 ** 14] * 3] * 2, "Input type": ["float", "float"]}},
          {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2.0, "dur": 4.0,
           "args": {"correlation": 1}},
          {"ph": "X", "cat": "kernel", "name": "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32", "pid": 0,
           "tid": 7, "ts": 10.0, "dur": 4.0, "args": {"device": 0, "stream": 7, "correlation": 1}}]
    path = os.path.join(WORK, "products-huge.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
    g = stage(gap(path, REFERENCE), "gemm")
    check("products past a float's range: bytes unknown, no roofline side",
          g is not None and g.get("min_bytes") is None and g.get("roofline") is None, g)


def graph_replay_launch():
    """A decode step replayed from one CUDA graph: its cudaGraphLaunch of 1387 kernels takes 1.59 ms every replay
    (TriForce's Llama-2-7B, after ten warm-up replays), its kernels' first in the trace. That launch is no kernel's
    first launch (module loading, set-up): it stays in the launch stage, and no set-up stage appears."""
    ev = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "pid": 1, "tid": 1, "ts": 100.0,
           "dur": 1590.0, "args": {"correlation": 7}}]
    t = 1700.0
    for i in range(200):
        ev.append({"ph": "X", "cat": "kernel", "name": "void gemvx::kernel<int, int, __half, %d>" % (i % 7),
                   "pid": 0, "tid": 7, "ts": t, "dur": 80.0, "args": {"device": 0, "stream": 7, "correlation": 7}})
        t += 81.0
    path = os.path.join(WORK, "graph-replay-launch.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
    d = gap(path)
    launch = stage(d, "launch") or {}
    check("graph replay: its 1.59-ms launch is the launch stage's, not a kernel's first launch (no set-up stage)",
          abs(launch.get("seconds", 0) - 1590e-6) < 1e-12 and stage(d, "allocation and set-up (GPU idle)") is None,
          (launch.get("seconds"), [x["name"] for x in d["stages"]]))


def unrecorded_kernels():
    """30 kernel launches: with 20 of their kernels missing from the trace (TriForce's L40 trace: 923 of 1556, read
    "GPU compute bound 85.7%" without a word) the run says so; with one missing (a kernel that ran after the trace
    ended), nothing."""
    for name, recorded, warned, synced in (("kernels-dropped", 10, True, False), ("kernels-one-late", 29, False, False),
                                           ("kernels-lost", 10, True, True)):
        # lost: a cudaDeviceSynchronize after them returns within the trace, so they ran in it: lost records only
        ev = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": 1, "tid": 1, "ts": 305.0,
               "dur": 20.0, "args": {"correlation": 99}}] if synced else []
        for i in range(30):
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": 10.0 * i, "dur": 4.0, "args": {"correlation": i + 1}})
            if i < recorded:
                ev.append({"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>",
                           "pid": 0, "tid": 7, "ts": 10.0 * i + 6, "dur": 3.0,
                           "args": {"device": 0, "stream": 7, "correlation": i + 1}})
        path = os.path.join(WORK, name + ".json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
        d = gap(path)
        said = [w for w in d["run"]["warnings"] if "have no GPU event" in w]
        check("%s: %s" % (name, "20 of 30 launches without a kernel said" if warned else "one late kernel: nothing said"),
              (said and said[0].startswith("20 of the trace's 30 kernel launches (67%)") and
               ("so they ran in it" in said[0]) == synced and ("ran after the trace ended" in said[0]) == (not synced))
              if warned else not said, said)


def bytes_past_bandwidth():
    """Memory-bound ops whose counted bytes move faster than the memory case itself (nano-vllm's compiled RoPE
    kernels: a 21-MB table recorded whole, 3 rows read, "4.27 TB/s, 222%" of an H100's): the words say cache or a
    partial read, not a floor that does not bound it, and the evidence does not call the bytes a lower bound."""
    ev, gpu_at = [], 100.0
    for i in range(40):
        t = 10.0 * i
        ev += [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": t, "dur": 8.0,
                "args": {"Input Dims": [[4096, 1024], [4096, 1024], []], "Input type": ["float", "float", "Scalar"]}},
               {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 2,
                "dur": 4.0, "args": {"correlation": i + 1}},
               {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "pid": 0,
                "tid": 7, "ts": gpu_at, "dur": 5.0, "args": {"device": 0, "stream": 7, "correlation": i + 1}}]
        gpu_at += 5.0  # 48 MiB in 5 us: 10 TB/s
    path = os.path.join(WORK, "bytes-past-bandwidth.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
    d = gap(path, REFERENCE)
    m = stage(d, "memory-bound ops") or {}
    evid = " ".join(d["diagnosis"]["findings"][0]["evidence"])
    check("bytes past the bandwidth: said of the count (cache, a partial read), not of a floor; no 'lower bound'",
          m.get("beyond", "").startswith("faster than the memory case itself") and
          "more than that bandwidth moves" in evid and "bytes are a lower bound" not in evid,
          (m.get("beyond"), evid))


def profiler_buffers():
    """A short window whose set-up is mostly the profiler's own buffers (CUPTI's Activity Buffer Request: nano-vllm's
    store_kvcache trace, 218 of 356 us, read "One-time set-up, 51.6%"): the table keeps the stage, the diagnosis
    weighs the loop's own set-up only, and says what it left out."""
    ev = [{"ph": "X", "cat": "overhead", "name": "Activity Buffer Request", "pid": 1, "tid": 9, "ts": 5.0,
           "dur": 1500.0}]
    t = 1510.0
    for i in range(20):
        ev += [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": t, "dur": 8.0},
               {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 2,
                "dur": 4.0, "args": {"correlation": i + 1}},
               {"ph": "X", "cat": "kernel", "name": "void at::native::vectorized_elementwise_kernel<4>", "pid": 0,
                "tid": 7, "ts": t + 7, "dur": 2.0, "args": {"device": 0, "stream": 7, "correlation": i + 1}}]
        t += 50.0
    ev.insert(0, {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 0.0, "dur": 2.0})
    path = os.path.join(WORK, "profiler-buffers.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"deviceProperties": [H100_PROPS], "traceEvents": ev}, f)
    d = gap(path)
    dg = d["diagnosis"]
    ids = [f["pattern"] for f in dg["findings"]]
    check("profiler's buffers: the set-up stage stays, no set-up finding, the bottleneck another",
          stage(d, "allocation and set-up (GPU idle)") is not None and "setup_once" not in ids and
          not d["bottleneck"].startswith("One-time set-up"), (ids, d["bottleneck"]))


for name, d in patterns():
    specific(name, d)
other_maker()
kernel_wait()
kernel_wait_ahead()
layout_conversions()
layout_launches()
remedies_already_done()
host_collectives()
pageable_async_copies()
graph_replays()
dispatch_yardstick()
attention_remedy()
first_step_copy()
prefetch_heads()
graph_capture()
per_step_host_figures()
operator_steps()
beyond_ceiling_share()
one_wait()
bf16_gradients()
fp32_math()
small_grids()
concurrent_copies()
pre_window_work()
host_window_edges()
memory_bound_products()
graph_replay_launch()
unrecorded_kernels()
bytes_past_bandwidth()
profiler_buffers()
memory_bytes()
h100()
fixtures()
print("%d failure(s)" % fails)
sys.exit(1 if fails else 0)
