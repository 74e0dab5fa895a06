#!/usr/bin/env python3
"""cpu_patterns: `mlbench gap` on CPU-only traces (no GPU events; docs/traces.md
"CPU-only traces") names the bottleneck the trace was built with, and holds
each stage against the CPU ceiling it belongs to: a step dominated by a host
(gloo) all-reduce is communication bound, with the all-reduce's bytes, ranks
and bus bandwidth against the MPI all-reduce ceiling, and one that DDP runs on
gloo's thread beside the backward counts only its exposed time in the step; one dominated by aten
matmuls with shapes is CPU compute bound, against the CPU GEMM ceiling; one
waiting for its DataLoader is data-loading bound; memory-bound aten ops
(log_softmax) with shapes carry their bytes against host memory (STREAM),
without an op inside a matmul or the optimizer counted twice.

The traces and the ceilings are written here with known figures (every
expected number below follows from them by hand), in both forms PyTorch
writes: Kineto's object with "cat" and distributedInfo, and the bare array of
torch.autograd.profiler without Kineto.

Environment (tests/CMakeLists.txt): MLBENCH (the binary), WORK (scratch).
"""
import json
import os
import re
import subprocess
import sys

MLBENCH, WORK = os.environ["MLBENCH"], os.environ["WORK"]
fails = 0

STEP_US = 10000  # every step lasts 10 ms
STEPS = 4
GEMM_GFLOPS = 100.0  # the CPU GEMM ceiling of the hand-made results
BUSBW_GBS = 2.0  # the MPI all-reduce ceiling (bus bandwidth, 2 ranks)
MSG = 1 << 20  # elements of each all-reduce (float): 4 MiB
HOSTMEM_GBS = 20.0  # the host memory ceiling, all cores (STREAM copy); one core 10


def check(name, cond, detail=""):
    global fails
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, "" if cond else ": %s" % (detail,)))
    fails += 0 if cond else 1


def case(cid, component, backend, params, work_unit, work, rate_unit, scale, rate, metrics=None):
    return {"id": cid, "section": component, "component": component, "backend": backend, "params": params,
            "status": "ok", "reason": None, "work_unit": work_unit, "work_per_iteration": work,
            "rate_unit": rate_unit, "rate_scale": scale, "repetitions": 5, "iterations": 10,
            "rate": {"median": rate, "best": rate, "mean": rate, "cv": 0.01},
            "verification": {"status": "passed", "detail": "hand-made"}, "metrics": metrics or {}, "info": {},
            "notes": []}


def ceilings():
    gemm = case("gemm/openblas/dtype=fp32,k=1024,m=1024,n=1024", "gemm", "openblas",
                {"dtype": "fp32", "m": "1024", "n": "1024", "k": "1024"}, "flop", 2 * 1024 ** 3, "GFLOP/s", 1e9,
                GEMM_GFLOPS)
    mpi = case("allreduce/mpi/dtype=float,size=4194304", "allreduce", "mpi", {"dtype": "float", "size": "4194304"},
               "byte", 4 * MSG, "GB/s", 1e9, BUSBW_GBS,
               {"ranks": {"value": 2, "unit": ""}, "busbw_factor": {"value": 1, "unit": ""}})
    stream = [case("hostmem/stream/array_size=0,kernel=copy,threads=%d" % t, "hostmem", "stream",
                   {"kernel": "copy", "threads": str(t), "array_size": "0"}, "byte", 1 << 28, "GB/s", 1e9, rate)
              for t, rate in ((0, HOSTMEM_GBS), (1, HOSTMEM_GBS / 2))]
    doc = {"schema": "mlbench-results", "schema_version": 1, "started_utc": "2026-01-01T00:00:00Z",
           "context": {"host": {"name": "cpubox"}, "cpu": {"model": "Test CPU 9000", "physical_cores": 8},
                       "gpus": []}, "cases": [gemm, mpi] + stream}
    path = os.path.join(WORK, "cpu_ceilings.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def ev(name, ts, dur, cat=None, args=None, tid=1):
    e = {"ph": "X", "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}
    if cat:
        e["cat"] = cat
    if args:
        e["args"] = args
    return e


def write(name, events, kineto, world_size=None, gpus=0):
    """Kineto's object form (with cat) or the bare array (without); `gpus`
    listed in deviceProperties (a GPU machine's trace recorded without
    ProfilerActivity.CUDA)."""
    if not kineto:
        for e in events:
            e.pop("cat", None)
        doc = events
    else:
        props = [{"id": i, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85045477376, "computeMajor": 9,
                  "computeMinor": 0, "numSms": 132} for i in range(gpus)]
        doc = {"schemaVersion": 1, "deviceProperties": props, "traceEvents": events}
        if world_size:
            doc["distributedInfo"] = {"backend": "gloo", "rank": 0, "world_size": world_size}
    path = os.path.join(WORK, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def steps(body):
    out = []
    for n in range(STEPS):
        t0 = n * (STEP_US + 1000)  # 1 ms between steps: outside every window
        out.append(ev("ProfilerStep#%d" % n, t0, STEP_US, "user_annotation"))
        out += body(t0)
    return out


def loader(t0, dur):
    return ev("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", t0, dur, "user_annotation")


def matmul(t0, dur):
    """linear -> addmm: 2 x 256 x 512 x 1024 FLOPs, counted once; the gemm stage is the addmm's dur - 20 us, the
    linear's own 20 us are other aten ops'."""
    shapes = {"Input Dims": [[256, 1024], [512, 1024], [512]], "Input type": ["float", "float", "float"]}
    inner = {"Input Dims": [[512], [256, 1024], [1024, 512]], "Input type": ["float", "float", "float"]}
    return [ev("aten::linear", t0, dur, "cpu_op", shapes), ev("aten::addmm", t0 + 10, dur - 20, "cpu_op", inner)]


def optimizer(t0, dur):
    return [ev("Optimizer.step#SGD.step", t0, dur, "user_annotation"), ev("aten::add_", t0 + 10, dur - 20, "cpu_op")]


def gap(path, ceil):
    r = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil, "--format", "json"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise SystemExit("mlbench gap %s failed: %s" % (path, r.stderr))
    return json.loads(r.stdout)


def stage(d, name):
    return next((s for s in d["stages"] if s["name"] == name), None)


def headline(d, name):
    return next((s for s in d["headline"]["stages"] if s["name"] == name), {})


def close(a, b, rel=1e-6):
    return a is not None and b is not None and abs(a - b) <= rel * abs(b)


def collective_bound(ceil):
    """Per step: data 0.5 ms, matmul 1 ms, an all-reduce of 4 MiB among 4 ranks
    7 ms (c10d::allreduce_ around record_param_comms around gloo:all_reduce:
    one call), optimizer 1 ms, Python the rest (0.5 ms)."""
    def body(t0):
        ar = t0 + 1500
        return ([loader(t0, 500)] + matmul(t0 + 500, 1000) + [
            ev("c10d::allreduce_", ar, 7000, "cpu_op", {"Input Dims": [[[MSG]], [], []],
                                                         "Input type": ["TensorList", "", "Scalar"]}),
            ev("record_param_comms", ar + 5, 6990, "cpu_op",
               {"Collective name": "allreduce", "In msg nelems": MSG, "Out msg nelems": MSG, "dtype": "Float",
                "Group size": 4}),
            ev("gloo:all_reduce", ar + 10, 6980, "user_annotation", {"Input Dims": [[MSG]], "Input type": ["float"]}),
        ] + optimizer(t0 + 8500, 1000))
    d = gap(write("cpu-collective", steps(body), kineto=True, world_size=4), ceil)
    dg = d["diagnosis"]
    check("collective-bound: primary communication_bound (not CPU compute)", dg["primary"] == "communication_bound",
          [(f["pattern"], f["weight"]) for f in dg["findings"]])
    f = dg["findings"][0]
    check("collective-bound: weight = the all-reduce's share, 70%", close(f["weight"], 0.7), f["weight"])
    s = stage(d, "allreduce (host)")
    check("collective-bound: an allreduce stage on the CPU", s is not None and s["component"] == "allreduce" and
          s["device"] == "cpu", s)
    # one call per step however deep the nest: 4 calls, 4 MiB each
    check("collective-bound: 4 calls of 4 MiB (the nest counted once)",
          s["calls"] == STEPS and s["work"] == STEPS * 4 * MSG and s["block_size"] == 4 * MSG, s)
    check("collective-bound: 4 ranks (Group size)", s["ranks"] == 4, s["ranks"])
    check("collective-bound: 7 ms per step", close(s["seconds_per_step"], 7e-3), s["seconds_per_step"])
    algbw = 4 * MSG / 7e-3
    check("collective-bound: measured = algorithm bandwidth 4 MiB / 7 ms", close(s["measured_rate"], algbw),
          (s["measured_rate"], algbw))
    factor = 2 * (4 - 1) / 4  # all-reduce busbw factor for 4 ranks
    ceiling = BUSBW_GBS * 1e9 / factor  # the MPI ceiling's busbw as this stage's algbw
    check("collective-bound: against the MPI all-reduce ceiling (busbw / factor for 4 ranks)",
          s["ceiling"] is not None and s["ceiling"]["id"].startswith("allreduce/mpi/") and
          close(s["ceiling_rate"], ceiling), (s["ceiling"], s["ceiling_rate"], ceiling))
    check("collective-bound: efficiency = busbw / the ceiling's busbw", close(s["efficiency"], algbw / ceiling),
          (s["efficiency"], algbw / ceiling))
    evid = " ".join(f["evidence"])
    busbw = "busbw %.3g MB/s" % (algbw * factor / 1e6)
    check("collective-bound: evidence with time, share, size, ranks and busbw against the ceiling",
          "allreduce (host): 1 call a step, 7 ms per step (70.0% of the step), 4 MiB per call, 4 ranks" in evid and
          busbw in evid and "%.0f%% of the measured allreduce ceiling" % (100 * algbw / ceiling) in evid, evid)
    check("collective-bound: the headline leads with the all-reduce",
          d["headline"]["stages"][0]["name"] == "allreduce (host)", d["headline"]["stages"][0])
    # ranked onto GPUs: the host's all-reduce is communication in every bar, not host code (a 300-rank gloo run's
    # was drawn as host code under "No GPU helps: the host ... CUDA Graphs")
    path = os.path.join(WORK, "cpu-collective.json")
    # (onto a measured machine's host CPU: a GPU datasheet refuses a run with compute on the CPU)
    p = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil, "--target", "h100-sxm", "--format",
                        "json"], capture_output=True, text=True)
    m = json.loads(p.stdout)["machines"] if p.returncode == 0 else {}
    here = m["here"]["split_seconds"] if m else {}
    rows = [r for r in m.get("ranking", []) if r["projected"]]
    check("collective-bound ranked: here, the all-reduce's 7 ms a step are communication, the other 3 ms host",
          here and close(here["communication"], 7e-3) and close(here["host"], 3e-3), (p.returncode, p.stderr, here))
    check("collective-bound ranked: there too, communication",
          len(rows) == 1 and rows[0]["split_seconds"]["communication"] >= 0.5 * rows[0]["step_seconds"], rows)
    check("collective-bound ranked: not 'the host bounds the step'",
          m and not m["host_bound"] and "the host (CPU, Python" not in m["verdict"], m.get("verdict"))
    # The all-reduce's 7 ms on every machine, the CPU's 3 ms faster there: communication bounds the step everywhere
    # and no machine is faster beyond the error, so no faster CPU helps (a run on the CPU ranks host CPUs); the remedy
    # is the path between the ranks, not CUDA Graphs; every machine rank 1
    share = "%.0f%%" % (100 * 7e-3 / rows[0]["step_seconds"]) if rows else "?"
    check("collective-bound ranked: communication bounds the step everywhere, said with what helps",
          m and m["communication_bound"] and m["verdict"].startswith(
              "No faster CPU helps: communication between the ranks bounds the step on every machine (%s of each "
              "projected step)" % share) and "a faster network between the nodes" in m["verdict"] and
          "NCCL" not in m["verdict"] and "CUDA Graphs" not in m["verdict"] and all(r["rank"] == 1 for r in rows),
          (m.get("verdict"), rows))

    # The same all-reduce as the fixture of a gloo run records it: only the
    # annotation with Input Dims, in the bare array (no distributedInfo, no
    # Group size): the bytes are known, the rank count is not.
    def bare(t0):
        return [ev("gloo:all_reduce", t0 + 1000, 8000, "user_annotation",
                   {"Input Dims": [[MSG]], "Input type": ["float"]})]
    d = gap(write("cpu-collective-bare", steps(bare), kineto=False), ceil)
    s = stage(d, "allreduce (host)")
    check("bare gloo all-reduce: communication bound", d["diagnosis"]["primary"] == "communication_bound",
          d["diagnosis"]["primary"])
    check("bare gloo all-reduce: bytes from Input Dims x Input type", s is not None and s["work"] == STEPS * 4 * MSG,
          s)
    check("bare gloo all-reduce: no ceiling, and says the rank count is unknown",
          s["ceiling"] is None and "rank count is unknown" in (s["no_ceiling"] or ""), s)
    check("bare gloo all-reduce: a warning says so",
          any("rank count unknown" in w for w in d["run"]["warnings"]), d["run"]["warnings"])
    # Ranked onto GPUs (no compute on the CPU): the all-reduce's 8 ms of every 10 on each, no GPU helps; it ran on
    # the host, so the sentence names NCCL on the GPUs first (the 300-rank gloo fixture read "Fastest: H100 SXM
    # 80GB ... 1.00x ... none is faster beyond it", without what helps)
    p = subprocess.run([MLBENCH, "gap", "--run", os.path.join(WORK, "cpu-collective-bare.json"), "--ceilings", ceil,
                        "--target", "h100-sxm,b200", "--format", "json"], capture_output=True, text=True)
    m = json.loads(p.stdout)["machines"] if p.returncode == 0 else {}
    rows = [r for r in m.get("ranking", []) if r["projected"]]
    check("bare gloo all-reduce onto two GPUs: 8 ms communication a step on each, rank 1 both",
          len(rows) == 2 and all(close(r["split_seconds"]["communication"], 8e-3) and r["rank"] == 1 for r in rows),
          (p.returncode, p.stderr, rows))
    check("bare gloo all-reduce onto two GPUs: no GPU helps, communication bounds, NCCL instead of the host's",
          m and m["communication_bound"] and not m["host_bound"] and m["verdict"].startswith(
              "No GPU helps: communication between the ranks bounds the step on every machine (80% of each "
              "projected step)") and 'the collective on the GPUs (NCCL, backend="nccl") instead of on the host '
          '(gloo, MPI)' in m["verdict"], m.get("verdict"))

    # A kind mlbench does not measure (a barrier) is still communication.
    def barrier(t0):
        return [ev("gloo:barrier", t0 + 1000, 8000, "user_annotation")]
    d = gap(write("cpu-barrier", steps(barrier), kineto=False), ceil)
    s = stage(d, "barrier (host, size unknown)")
    check("barrier: communication bound", d["diagnosis"]["primary"] == "communication_bound",
          d["diagnosis"]["primary"])
    check("barrier: a time-only stage that says why it has no ceiling",
          s is not None and s["ceiling"] is None and "does not measure" in (s["no_ceiling"] or ""), s)


def compute_bound(ceil, kineto):
    """Per step: data 0.5 ms, matmul 8 ms (its addmm 7.98), optimizer 1 ms, Python 0.5 ms."""
    def body(t0):
        return [loader(t0, 500)] + matmul(t0 + 500, 8000) + optimizer(t0 + 8500, 1000)
    form = "object" if kineto else "array"
    d = gap(write("cpu-compute-" + form, steps(body), kineto=kineto), ceil)
    dg = d["diagnosis"]
    check("compute-bound (%s): primary cpu_compute_bound" % form, dg["primary"] == "cpu_compute_bound",
          [(f["pattern"], f["weight"]) for f in dg["findings"]])
    f = dg["findings"][0]
    check("compute-bound (%s): weight = the CPU's share, 95%%" % form, close(f["weight"], 0.95), f["weight"])
    s = stage(d, "gemm (cpu)")
    flops = 2.0 * 256 * 512 * 1024
    check("compute-bound (%s): the innermost matmul's FLOPs, once per step" % form,
          s is not None and s["work"] == STEPS * flops and s["work_unit"] == "flop", s)
    rate = flops / 7.98e-3
    check("compute-bound (%s): against the CPU GEMM ceiling" % form,
          s["ceiling"] is not None and s["ceiling"]["id"].startswith("gemm/openblas/") and
          close(s["measured_rate"], rate) and close(s["efficiency"], rate / (GEMM_GFLOPS * 1e9)), s)
    evid = " ".join(f["evidence"])
    check("compute-bound (%s): evidence: the GEMM rate against its ceiling, no GPU launch figures" % form,
          "gemm (cpu): %.3g GFLOP/s, %.0f%% of the measured gemm ceiling" % (rate / 1e9, 100 * rate / 1e11) in evid
          and "kernel launches" not in evid, evid)
    notes = " ".join(d.get("notes") or [])
    check("compute-bound (%s): a trace does not name its CPU: whose CPU the ceilings are is said" % form,
          "held against the ceilings' CPU (Test CPU 9000, 8 cores, host cpubox)" in notes, notes)
    rem = " ".join(f["remedies"])
    check("compute-bound (%s): CPU remedies, none that assumes a GPU" % form,
          "the GPU" not in rem + evid and "CUDA" not in rem + evid and "matmuls and convolutions near the ceiling" in rem and
          "record_shapes" not in rem and dg["figures"]["cpu_only"], (rem, evid))


def data_bound(ceil):
    """Per step: waiting for the DataLoader 7 ms, matmul 2 ms, Python 1 ms. The
    user's own record_function around the loop's next() holds torch's
    DataLoader annotation (as the legacy profiler records it): 7 ms, once."""
    def body(t0):
        return [loader(t0, 7000), loader(t0 + 5, 6990)] + matmul(t0 + 7000, 2000)
    d = gap(write("cpu-data", steps(body), kineto=False), ceil)
    s = stage(d, "dataloading")
    check("data-bound: nested DataLoader annotations count once: 7 ms per step, the step table's figure",
          close(s["seconds_per_step"], 7e-3) and close(s["share"], sum(p["share"] for p in d["step"]["parts"]
                                                                       if p["id"] == "data")), s)
    check("data-bound: no 'stages add up to' note", not any("add up to" in n for n in d["notes"]), d["notes"])
    dg = d["diagnosis"]
    check("data-bound: primary data_loading_bound", dg["primary"] == "data_loading_bound",
          [(f["pattern"], f["weight"]) for f in dg["findings"]])
    check("data-bound: weight 70%", close(dg["findings"][0]["weight"], 0.7), dg["findings"][0]["weight"])
    head = d["headline"]["stages"][0]
    check("data-bound: the headline leads with data loading at 70%", close(head["share"], 0.7), head)
    ev_lines = dg["findings"][0]["evidence"]
    check("data-bound: worker processes (_MultiProcessingDataLoaderIter): nothing said of num_workers=0",
          not any("num_workers=0" in e for e in ev_lines), ev_lines)
    rem = " ".join(dg["findings"][0]["remedies"])
    check("data-bound: CPU remedies, none that assumes a GPU (pinned copies, decoding on it)",
          "GPU" not in rem and "pin_memory" not in rem and "Pre-process once offline" in rem and "workers" in rem, rem)
    # the same loop with num_workers=0: PyTorch names the iterator _SingleProcessDataLoaderIter
    def single(t0):
        return [ev("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", t0, 7000, "user_annotation")] + \
            matmul(t0 + 7000, 2000)
    d = gap(write("cpu-data-single", steps(single), kineto=False), ceil)
    ev_lines = d["diagnosis"]["findings"][0]["evidence"]
    check("data-bound, num_workers=0: the evidence says every batch is loaded in the training process",
          d["diagnosis"]["primary"] == "data_loading_bound" and
          any("every batch is loaded in the training process (_SingleProcessDataLoaderIter: num_workers=0)" in e
              for e in ev_lines), ev_lines)
    check("data-bound, num_workers=0, a CPU run: nothing said of a GPU", not any("GPU" in e for e in ev_lines) and
          any("none of it beside the step's compute" in e for e in ev_lines), ev_lines)


def legacy_no_shapes(ceil):
    """The array torch.autograd.profiler writes without Kineto has no shapes,
    even with record_shapes=True: the matmul stage says what would give it
    FLOPs there, and no warning blames record_shapes=False."""
    def body(t0):
        return [ev("aten::mm", t0 + 100, 9000, "cpu_op"), ev("aten::add_", t0 + 9200, 100, "cpu_op")]
    d = gap(write("cpu-legacy", steps(body), kineto=False), ceil)
    head = d["headline"]["stages"][0]
    check("legacy array: gemm (cpu) leads, time only, pointing to torch.profiler or mlbench.simplify",
          head["name"] == "gemm (cpu)" and "mlbench.simplify" in (head["no_ceiling"] or ""), head)
    w = " ".join(d["run"]["warnings"])
    check("legacy array: no 'record_shapes=False' and no memory-bound kernels on a CPU",
          "record_shapes=False" not in w and "memory-bound kernels" not in w and "even with record_shapes=True" in w, w)
    rem = " ".join(r for f in d["diagnosis"]["findings"] for r in f["remedies"])
    # a torch without Kineto records none even with record_shapes=True (Debian's 1.13): not told to record them
    check("legacy array: no shapes, the remedy says where shapes come from, not 'record shapes'",
          "a torch without Kineto records no shapes" in rem and "record shapes (torch.profiler" not in rem, rem)
    d = gap(write("cpu-kineto-noshapes", steps(body), kineto=True), ceil)
    rem = " ".join(r for f in d["diagnosis"]["findings"] for r in f["remedies"])
    check("Kineto trace without shapes: the remedy to record them", "record shapes (torch.profiler" in rem and
          "without Kineto" not in rem, rem)


def conv_no_stride(ceil):
    """A 2023 torch's Kineto trace of a CPU ResNet-18 (the DTU MLOps course's) records each convolution's Input
    Dims and not its stride or padding: the conv stage, time only, says so and what records them, not
    "profile with record_shapes=True", which it was."""
    dims = {"Input Dims": [[5, 3, 224, 224], [64, 3, 7, 7], [], [], [], [], []],
            "Input type": ["float", "float", "", "", "", "", "Scalar"]}
    def body(t0):
        return [ev("aten::conv2d", t0 + 100, 8000, "cpu_op", dims),
                ev("aten::mkldnn_convolution", t0 + 110, 7980, "cpu_op", dims)]
    d = gap(write("cpu-conv-no-stride", steps(body), kineto=True), ceil)
    h = headline(d, "conv (cpu)")
    check("conv without stride/padding: time only, the reason and what records them",
          h is not None and "convolution stride/padding not recorded" in (h["no_ceiling"] or "") and
          "PyTorch 2.1" in (h["no_ceiling"] or "") and "profile with record_shapes=True" not in (h["no_ceiling"] or ""),
          h)
    rem = " ".join(r for f in d["diagnosis"]["findings"] for r in f["remedies"])
    check("conv without stride/padding: the remedy names what is missing, not record_shapes, which it was",
          "Hold the convolutions against the CPU ceiling: PyTorch 2.1 on records their stride and padding" in rem and
          "record_shapes=True" not in rem, rem)
    # With stride and padding (3x3, stride 1, pad 1: both argument orders agree), one convolution a step in two
    # events (conv2d > mkldnn_convolution): its FLOPs once, and one call a step (the four events of a ResNet's
    # convolution made its size per call a quarter of its own, "8.32 GFLOP per call" for 24.9)
    dims = {"Input Dims": [[5, 3, 224, 224], [64, 3, 3, 3], [], [], [], [], []],
            "Input type": ["float", "float", "", "", "", "", "Scalar"],
            "Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]}
    d = gap(write("cpu-conv-counted", steps(body), kineto=True), ceil)
    s = stage(d, "conv (cpu)")
    flops = 2 * 5 * 64 * 3 * 9 * 224 * 224
    check("conv with stride/padding: its FLOPs and its calls once, not once per nested event",
          s is not None and close(s["work"], STEPS * flops) and s["calls"] == STEPS, s)


def memory_bound(ceil):
    """Per step: a matmul 2 ms (a copy_ with shapes inside its addmm: the
    matmul's time, not memory-bound bytes; gemm 1.98 ms), log_softmax -> _log_softmax over 700 x
    10000 floats 5 ms (28 MB read, 28 MB written: 56 MB, counted once),
    aten::index 1 ms (no byte model), the optimizer 1 ms (an add_ with shapes
    inside: the optimizer's), Python 1 ms."""
    logits = {"Input Dims": [[700, 10000], [], []], "Input type": ["float", "Scalar", "Scalar"]}
    big = {"Input Dims": [[4096, 4096], [4096, 4096], []], "Input type": ["float", "float", "Scalar"]}

    def body(t0):
        mm = t0 + 500
        return ([ev("aten::linear", mm, 2000, "cpu_op"),
                 ev("aten::addmm", mm + 10, 1980, "cpu_op",
                    {"Input Dims": [[512], [256, 1024], [1024, 512]], "Input type": ["float", "float", "float"]}),
                 ev("aten::copy_", mm + 12, 6, "cpu_op", big),
                 ev("aten::log_softmax", t0 + 2500, 5000, "cpu_op", logits),
                 ev("aten::_log_softmax", t0 + 2510, 4980, "cpu_op", logits),
                 ev("aten::index", t0 + 7500, 1000, "cpu_op"),
                 ev("Optimizer.step#SGD.step", t0 + 8500, 1000, "user_annotation"),
                 ev("aten::add_", t0 + 8510, 980, "cpu_op", big)])
    d = gap(write("cpu-memory-object", steps(body), kineto=True), ceil)
    s = stage(d, "memory-bound ops (cpu)")
    per_step = 2 * 700 * 10000 * 4
    check("memory-bound: a stage of the log_softmax's bytes, once per step, against host memory",
          s is not None and s["component"] == "hostmem" and s["device"] == "cpu" and s["work_unit"] == "byte" and
          close(s["work"], STEPS * per_step) and close(s["seconds_per_step"], 5e-3), s)
    rate = per_step / 5e-3
    check("memory-bound: held against the all-cores STREAM case (the faster of two)",
          s["ceiling"] is not None and "threads=0" in s["ceiling"]["id"] and close(s["measured_rate"], rate) and
          close(s["efficiency"], rate / (HOSTMEM_GBS * 1e9)), (s["ceiling"], s["measured_rate"], s["efficiency"]))
    o, h = stage(d, "other aten ops"), headline(d, "other aten ops")
    check("memory-bound: aten::index is other aten ops, 1 ms (and the linear's own 20 us), said to have no byte "
          "model (not 'host code')", o is not None and close(o["seconds_per_step"], 1.02e-3) and "without a byte model" in (h["no_ceiling"] or "")
          and "host code" not in (h["no_ceiling"] or ""), h)
    part = next((p for p in d["step"]["parts"] if p["id"] == "memory"), None)
    check("memory-bound: the step table's memory-bound part, 50% of the step",
          part is not None and part["class"] == "memory-bound" and close(part["share"], 0.5), d["step"]["parts"])
    page = os.path.join(WORK, "cpu-memory.html")
    subprocess.run([MLBENCH, "gap", "--run", os.path.join(WORK, "cpu-memory-object.json"), "--ceilings", ceil,
                    "--html", page], capture_output=True, check=True)
    with open(page, encoding="utf-8") as f:
        swatch = dict((name, colour) for colour, name in re.findall(
            r'<span style="display:inline-block;width:10px;height:10px;background:([^"]+)"></span></td><td>([^<]+)<',
            f.read()))
    check("memory-bound: on the page its part has the memory-bound colour, not the grey of other aten ops, and "
          "Python the host's",
          swatch.get("CPU: memory-bound ops (cpu)") not in (None, swatch.get("CPU: other aten ops")) and
          swatch.get("CPU: Python and other host code") not in (None, swatch.get("CPU: other aten ops")), swatch)
    g = stage(d, "gemm (cpu)")
    check("memory-bound: the copy_ inside the addmm is the matmul's time", close(g["seconds_per_step"], 1.98e-3), g)
    check("memory-bound: CPU compute bound, the memory-bound ops first",
          d["diagnosis"]["primary"] == "cpu_compute_bound" and
          d["headline"]["stages"][0]["name"] == "memory-bound ops (cpu)", (d["diagnosis"]["primary"], d["headline"]))
    bare = steps(body)
    for e in bare:  # the array torch.autograd.profiler writes without Kineto has no shapes
        e.pop("args", None)
    h = headline(d, "optimizer")
    check("memory-bound: the optimizer says no benchmark measures it, not that it is host code",
          "optimizer step" in (h.get("no_ceiling") or "") and "host code" not in (h.get("no_ceiling") or ""), h)
    f = d["diagnosis"]["findings"][0]
    evid, rem = " ".join(f["evidence"]), " ".join(f["remedies"])
    check("memory-bound: evidence: their rate against host memory",
          "memory-bound ops (cpu): 11.2 GB/s, 56% of the measured host memory ceiling (20 GB/s" in evid, evid)
    check("memory-bound: remedies fuse the memory-bound ops; none asks for shapes that were recorded",
          "fuse them (torch.compile, PyTorch 2)" in rem and "record_shapes" not in rem, rem)
    # Onto GPUs: no GPU datasheet takes a step that is CPU compute (each kept it: 1.00x); a measured machine takes
    # it onto its host CPU (the kernel-level model said "nothing to project kernel by kernel" and stopped). The
    # compute: the matmul 2 ms, the log_softmax 5 ms and aten::index 1 ms, the model's ops a GPU would run too.
    path = os.path.join(WORK, "cpu-memory-object.json")
    p = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil, "--target", "t4"], capture_output=True,
                       text=True)
    check("memory-bound onto a GPU datasheet: refused, saying what to run instead",
          p.returncode == 2 and "80% of the step is compute on the host CPU" in p.stderr, (p.returncode, p.stderr))
    p = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil, "--target", "all", "--format", "json"],
                       capture_output=True, text=True)
    m = json.loads(p.stdout)["machines"] if p.returncode == 0 else {}
    ranked = [r["machine"] for r in m.get("ranking", []) if r["projected"]]
    check("memory-bound, --target all: the per-stage model, measured machines' host CPUs only",
          m.get("model") == "per-stage" and ranked and all(x.endswith("'s host CPU") for x in ranked),
          (p.returncode, p.stderr, m.get("model"), ranked))
    # The same ops from a GPU machine recorded without ProfilerActivity.CUDA:
    # their times are the host's, whatever device they ran on.
    d = gap(write("cpu-memory-gpu-unrecorded", steps(body), kineto=True, gpus=1), ceil)
    held = [x["name"] for x in d["stages"] if x["ceiling"] is not None]
    h = headline(d, "memory-bound ops (host time)")
    check("GPU activity not recorded: no op held against a CPU ceiling, and the stage says why, named for the host's "
          "time (not 'memory-bound ops (cpu)': the ops ran on the GPU)",
          held == [] and "recorded no GPU activity" in (h.get("no_ceiling") or "") and
          not any("(cpu)" in x["name"] for x in d["stages"]), (held, h, [x["name"] for x in d["stages"]]))
    f = d["diagnosis"]["findings"][0]
    rem, w = " ".join(f["remedies"]), " ".join(d["run"]["warnings"])
    check("GPU activity not recorded: the remedy records it; no CPU-only remedy; a warning says so",
          "ProfilerActivity.CUDA" in rem and "fuse them" not in rem and "matmuls and convolutions near the ceiling" not in rem and
          "deviceProperties lists 1 GPU" in w and
          not any("a run without a GPU" in e for e in f["evidence"]), (rem, w, f["evidence"]))
    # The same with CUDA's runtime calls recorded (device queries, the profiler's closing cudaDeviceSynchronize: PyTorch
    # records them with ProfilerActivity.CPU alone), no launch and still no GPU event: the ops ran on the CPU (a particle transformer on an A100 machine,
    # aten::mkldnn_convolution, read "GPU activity not recorded"); the closing sync is host time, no stage of its own
    # (it read 100.0009% beside the host part that holds it).
    ran_on_cpu = steps(body)
    end = ran_on_cpu[-1]["ts"] + STEP_US
    ran_on_cpu += [ev("cudaGetDeviceCount", 5, 3, "cuda_runtime"), ev("cudaDeviceSynchronize", end - 60, 40,
                                                                       "cuda_runtime")]
    d = gap(write("cpu-memory-cuda-on", ran_on_cpu, kineto=True, gpus=1), ceil)
    held = [x["name"] for x in d["stages"] if x["ceiling"] is not None]
    shares = sum(s["share"] for s in d["headline"]["stages"])
    w = " ".join(d["run"]["warnings"])
    check("CUDA's runtime recorded, no GPU event: a CPU run, its memory-bound ops held against host memory, no sync "
          "stage, shares adding up to 100%",
          d["step"]["gpus_unrecorded"] == 0 and "memory-bound ops (cpu)" in held and stage(d, "sync") is None and
          abs(shares - 1) < 1e-9 and "the ops ran on the CPU" in w and
          d["diagnosis"]["findings"][0]["title"] == "CPU compute bound", (held, shares, w, d["step"]))
    # The same with an op only a CPU runs and no runtime call at all (a Colab ResNet-50 forward on a T4 machine's CPU:
    # aten::mkldnn_convolution, deviceProperties, read "GPU activity not recorded"): a CPU run.
    onednn = steps(lambda t0: body(t0) + [ev("aten::mkldnn_convolution", t0 + 8000, 500)])
    d = gap(write("cpu-memory-onednn", onednn, kineto=True, gpus=1), ceil)
    w = " ".join(d["run"]["warnings"])
    check("oneDNN's ops, a GPU listed, no runtime call: a CPU run held against the CPU's ceilings, saying why",
          d["step"]["gpus_unrecorded"] == 0 and "ops only a CPU runs (oneDNN's)" in w and
          d["diagnosis"]["findings"][0]["title"] == "CPU compute bound", (w, d["step"]))
    # No deviceProperties, but Kineto's lanes labelled "GPU 0".."GPU 7" (torch 1.8's "Operator" events, a loop of
    # square(randn(...).cuda()) with CUDA activity off, read "a run without a GPU: the step is the CPU's own work"):
    # GPU activity not recorded. With oneDNN's op beside them, a CPU run all the same.
    labels = [{"ph": "M", "name": "process_labels", "pid": i, "tid": 0, "ts": 0, "args": {"labels": "GPU %d" % i}}
              for i in range(8)] + [{"ph": "M", "name": "process_labels", "pid": 386, "tid": 0, "ts": 0,
                                     "args": {"labels": "CPU"}}]
    d = gap(write("cpu-memory-gpu-labels", labels + steps(body), kineto=True), ceil)
    w, f = " ".join(d["run"]["warnings"]), d["diagnosis"]["findings"][0]
    check("Kineto's 'GPU N' lanes, no GPU event, no deviceProperties: GPU activity not recorded, said with the lanes",
          d["step"]["gpus_unrecorded"] == 8 and f["title"].startswith("GPU activity not recorded") and
          "the trace labels 8 GPU lanes" in w and "ProfilerActivity.CUDA" in " ".join(f["remedies"]),
          (d["step"], f["title"], w))
    d = gap(write("cpu-memory-gpu-labels-onednn", labels + onednn, kineto=True), ceil)
    check("Kineto's 'GPU N' lanes beside oneDNN's op: a CPU run",
          d["step"]["gpus_unrecorded"] == 0 and d["diagnosis"]["findings"][0]["title"] == "CPU compute bound",
          (d["step"], d["diagnosis"]["findings"][0]["title"]))
    # ... but a copy call (cudaMemcpyAsync) or a launch says the ops ran on the GPU, whatever else
    for call in ("cudaMemcpyAsync", "cudaLaunchKernel"):
        gpu_call = onednn + [ev(call, 100, 5, "cuda_runtime")]
        path = write("cpu-memory-onednn-" + call, gpu_call, kineto=True, gpus=1)
        p = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil, "--format", "json"],
                           capture_output=True, text=True)
        if call == "cudaLaunchKernel":
            check("a launch call without a kernel: refused, naming ProfilerActivity.CUDA off (runtime calls are "
                  "recorded without it) before lost records",
                  p.returncode == 2 and "Either ProfilerActivity.CUDA was off" in p.stderr, (p.returncode, p.stderr))
        else:
            d = json.loads(p.stdout) if p.returncode == 0 else {"step": {}}
            check("a copy call and no GPU event: GPU activity not recorded, not a CPU run",
                  d["step"].get("gpus_unrecorded") == 1, (p.returncode, p.stderr, d["step"]))
    # CUDA's runtime calls alone, no op and no GPU activity: nothing to read, refused with why
    path = write("cuda-runtime-only", [ev("cudaGetDeviceCount", 5, 3, "cuda_runtime"),
                                       ev("cudaDeviceSynchronize", 77860000, 40, "cuda_runtime")], kineto=True, gpus=2)
    p = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil], capture_output=True, text=True)
    check("CUDA's runtime calls alone: refused (exit 2), saying nothing the run did is recorded",
          p.returncode == 2 and "no op (cpu_op events) and no GPU activity" in p.stderr and
          "only CUDA runtime calls" in p.stderr, (p.returncode, p.stderr))
    # an object-form file of layer timings without categories or op names (a homework's "Averaged Layer
    # Profiler"): no profiler trace, refused; the same events named as ops and in the bare array still read
    layers = [ev("to_patch_embedding.%d:forward" % i, 1000 * i, 1000) for i in range(20)]
    path = os.path.join(WORK, "layer-profiler.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": layers}, f)
    p = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil], capture_output=True, text=True)
    check("layer timings without categories or op names: refused (exit 2), not a profiler trace",
          p.returncode == 2 and "not a PyTorch profiler trace" in p.stderr, (p.returncode, p.stderr))
    d = gap(write("cpu-memory-array", bare, kineto=False), ceil)
    o, h = stage(d, "other aten ops"), headline(d, "other aten ops")
    m, hm = stage(d, "memory-bound ops (cpu)"), headline(d, "memory-bound ops (cpu)")
    check("memory-bound, bare array (no shapes): the log_softmax by name is the memory-bound stage, 5 ms, time only, "
          "saying no shapes were recorded; other aten ops 1.02 ms (the index, the linear's own)",
          m is not None and close(m["seconds_per_step"], 5e-3) and m["work"] is None and
          "no op recorded its shapes" in (hm.get("no_ceiling") or "") and o is not None and
          close(o["seconds_per_step"], 1.02e-3) and "no op recorded its shapes" in (h["no_ceiling"] or ""), (m, hm, h))
    rem = " ".join(d["diagnosis"]["findings"][0]["remedies"])
    check("memory-bound, bare array: the remedies say how to get the matmuls' FLOPs and fuse the memory-bound ops "
          "that lead by name", "record_shapes=True" in rem and "fuse them" in rem, rem)
    # The bare array of a GPU run (torch.autograd.profiler without use_cuda=True, as KeondoPark/luxmea's 2021 trace:
    # aten::cudnn_convolution, no GPU event, no deviceProperties): cuDNN's ops say a GPU ran them; no CPU bound.
    gpu_run = steps(lambda t0: body(t0) + [ev("aten::cudnn_convolution", t0 + 8000, 500)])
    for e in gpu_run:
        e.pop("args", None)
    d = gap(write("cpu-memory-array-cudnn", gpu_run, kineto=False), ceil)
    f = d["diagnosis"]["findings"][0]
    rem, w = " ".join(f["remedies"]), " ".join(d["run"]["warnings"])
    check("cuDNN's ops without GPU events: named unrecorded GPU activity, not CPU compute bound; its remedy records "
          "it, no CPU remedy",
          d["diagnosis"]["primary"] == "cpu_compute_bound" and
          f["title"] == "GPU activity not recorded: the host's timeline only" and
          "ProfilerActivity.CUDA" in rem and "If cores sit idle" not in rem and "record_shapes" not in rem and
          "though %d ops only a GPU runs (aten::cudnn_convolution) did" % STEPS in w and
          d["step"]["gpus_unrecorded"] == 1 and stage(d, "conv ops (host time)") is not None and
          any(e.startswith("on the host's timeline: ") and "conv ops (host time) 5.0%" in e for e in f["evidence"]), (f, w))
    for target in ("t4", "all"):
        p = subprocess.run([MLBENCH, "gap", "--run", os.path.join(WORK, "cpu-memory-array-cudnn.json"), "--ceilings",
                            ceil, "--target", target], capture_output=True, text=True)
        check("cuDNN's ops without GPU events, --target %s: no projection (not its host CPU's, not a GPU's kept "
              "stages), saying to record the GPU" % target,
              p.returncode == 2 and "the trace recorded no GPU activity, though it says a GPU was used" in p.stderr and
              "ProfilerActivity.CUDA" in p.stderr and p.stdout == "", (p.returncode, p.stderr))
    d = gap(write("cpu-memory-array-plain", bare, kineto=False), ceil)
    check("... and the same array without them is still a CPU run",
          d["diagnosis"]["findings"][0]["title"] == "CPU compute bound" and d["step"]["gpus_unrecorded"] == 0,
          d["diagnosis"]["findings"][0])


def ddp_overlap(ceil):
    """DDP on gloo, as torch 1.13 records it on this VM (pytorch/examples-style
    loop, 2 ranks): the caller's c10d::allreduce_ (the request, 0.2 ms, with
    record_param_comms' size) on the training thread, then gloo:all_reduce on a
    thread of gloo's for 6 ms, 4 ms of it beside the rest of the backward.
    Per step: data 0.5 ms, matmul 2 + 4 ms, the wait for the all-reduce 2 ms
    (no op on the training thread), optimizer 1 ms, Python 0.3 ms."""
    def body(t0):
        return ([loader(t0, 500)] + matmul(t0 + 500, 2000) + [
            ev("c10d::allreduce_", t0 + 2500, 200, "cpu_op"),
            ev("record_param_comms", t0 + 2505, 190, "cpu_op",
               {"Collective name": "allreduce", "In msg nelems": MSG, "Out msg nelems": MSG, "dtype": "Float",
                "Group size": 2}),
            ev("gloo:all_reduce", t0 + 2700, 6000, "user_annotation",
               {"Input Dims": [[MSG]], "Input type": ["float"]}, tid=2),
        ] + matmul(t0 + 2700, 4000) + optimizer(t0 + 8700, 1000))
    d = gap(write("cpu-ddp", steps(body), kineto=True, world_size=2), ceil)
    s, g = stage(d, "allreduce (host)"), stage(d, "gemm (cpu)")
    check("DDP overlap: one all-reduce per step (request and gloo's run counted once), 4 MiB each",
          s is not None and s["calls"] == STEPS and s["work"] == STEPS * 4 * MSG, s)
    check("DDP overlap: the all-reduce's time is its 6.2 ms in flight, 2.2 ms of it exposed",
          close(s["seconds_per_step"], 6.2e-3) and close(s["exposed_seconds"], STEPS * 2.2e-3), s)
    check("DDP overlap: measured = 4 MiB over the 6.2 ms in flight", close(s["measured_rate"], 4 * MSG / 6.2e-3),
          s["measured_rate"])
    check("DDP overlap: the matmuls beside it keep their 5.96 ms (6 less the linears' own)",
          g is not None and close(g["seconds_per_step"], 5.96e-3), g)
    parts = {p["id"]: p["seconds"] for p in d["step"]["parts"]}
    check("DDP overlap: the step table gives the collective its exposed 2.2 ms, the matmuls 5.96 ms",
          close(parts.get("collective"), 2.2e-3) and close(parts.get("gemm"), 5.96e-3), parts)
    check("DDP overlap: its headline share is the exposed 22%", close(headline(d, "allreduce (host)").get("share"),
                                                                     0.22), headline(d, "allreduce (host)"))
    check("DDP overlap: CPU compute bound, not communication bound",
          d["diagnosis"]["primary"] == "cpu_compute_bound", d["diagnosis"]["primary"])
    # the profiler can stop before gloo's thread records its last run (a real DDP trace of this VM): 4 requests, 3
    # runs are still 4 calls, the missing one of the mean size
    events = steps(body)
    last = max(i for i, e in enumerate(events) if e["name"] == "gloo:all_reduce")
    d2 = gap(write("cpu-ddp-lost-run", events[:last] + events[last + 1:], kineto=True, world_size=2), ceil)
    s2 = stage(d2, "allreduce (host)")
    check("DDP overlap, the last run not recorded: still 4 calls of 4 MiB",
          s2 is not None and s2["calls"] == STEPS and s2["work"] == STEPS * 4 * MSG, s2)
    evid = [e for f in d["diagnosis"]["findings"] for e in f["evidence"] if e.startswith("allreduce (host)")]
    check("DDP overlap: the collective's evidence gives its exposed time and its time in flight",
          any("1 call a step, 2.2 ms exposed of 6.2 ms in flight per step (22.0% of the step)" in e for e in evid), evid)


def closure_optimizer(ceil):
    """LBFGS's step(closure) evaluates the model inside the optimizer's span
    (pytorch/examples' time_sequence_prediction): per step Optimizer.step
    0.5-9.5 ms holding a forward matmul (1-3 ms), a forward sigmoid (3-4 ms)
    and a backward (autograd::engine::evaluate_function, 4.5-8.5 ms) whose mm
    takes 4.6-7.6 ms. The matmuls are gemm's 4.98 ms (the addmm and the mm); the
    optimizer keeps its span less them and the backward, 3.02 ms (the linear's
    own 20 us with it); Python the other 2 ms."""
    def body(t0):
        return [ev("Optimizer.step#LBFGS.step", t0 + 500, 9000, "user_annotation"),
                ev("aten::linear", t0 + 1000, 2000, "cpu_op"), ev("aten::addmm", t0 + 1010, 1980, "cpu_op"),
                ev("aten::sigmoid", t0 + 3000, 1000, "cpu_op"),
                ev("autograd::engine::evaluate_function: AddmmBackward0", t0 + 4500, 4000, "cpu_op"),
                ev("aten::mm", t0 + 4600, 3000, "cpu_op"),
                ev("aten::dot", t0 + 9000, 100, "cpu_op")]
    d = gap(write("cpu-closure-optimizer", steps(body), kineto=True), ceil)
    parts = {p["id"]: p["seconds"] for p in d["step"]["parts"]}
    check("closure optimizer: the matmuls inside LBFGS's step are gemm's 4.98 ms, the optimizer keeps 3.02 ms",
          close(parts.get("gemm"), 4.98e-3) and close(parts.get("optimizer"), 3.02e-3) and
          close(parts.get("python"), 2e-3),
          parts)
    check("closure optimizer: the backward inside it is said, 4 ms per step",
          close(d["step"].get("optimizer_backward_seconds"), 4e-3) and
          any("runs the model's backward (4 ms per step" in w for w in d["run"]["warnings"]),
          (d["step"].get("optimizer_backward_seconds"), d["run"]["warnings"]))


def sparse_matmul(ceil):
    """pytorch/examples' gcn: torch.spmm(adjacency, support) records the sparse
    adjacency's dense shape ([2708, 2708]: 8128 stored entries), and as torch
    1.13 runs it, aten::mm > aten::_sparse_addmm > aten::addmm > aten::sparse_dim.
    Per step: a dense matmul 2 ms (linear -> addmm, 2 x 256 x 512 x 1024 FLOPs),
    a sparse one 6 ms, optimizer 1 ms. Counted by its dense shape (2 x 2708^2 x
    16 = 235 MFLOP) the sparse one put the GEMM stage at 62.9 GFLOP/s over 8 ms
    (268 + 235 MFLOP); its time is the other aten ops' now (with the linear's
    own 20 us), and the gemm stage the dense addmm's 1.98 ms."""
    adj, support = [2708, 2708], [2708, 16]

    def sparse(t0, dur):
        dims = {"Input Dims": [adj, support], "Input type": ["float", "float"]}
        inner = {"Input Dims": [[2708, 16], adj, support, [], []], "Input type": ["float"] * 3 + ["Scalar"] * 2}
        return [ev("aten::mm", t0, dur, "cpu_op", dims), ev("aten::_sparse_addmm", t0 + 5, dur - 10, "cpu_op", inner),
                ev("aten::addmm", t0 + 10, dur - 20, "cpu_op", inner),
                ev("aten::sparse_dim", t0 + 15, 1, "cpu_op", {"Input Dims": [adj], "Input type": ["float"]})]

    def body(t0):
        return matmul(t0 + 500, 2000) + sparse(t0 + 2500, 6000) + optimizer(t0 + 8500, 1000)
    d = gap(write("cpu-sparse", steps(body), kineto=True), ceil)
    g = stage(d, "gemm (cpu)")
    flops = 2.0 * 256 * 512 * 1024
    check("sparse matmul: the gemm stage is the dense matmul alone, its FLOPs and time",
          g is not None and g["work"] == STEPS * flops and close(g["seconds"], STEPS * 1.98e-3) and
          close(g["measured_rate"], flops / 1.98e-3), g)
    o = stage(d, "other aten ops")
    check("sparse matmul: its time counts with the other aten ops (no ceiling)",
          o is not None and close(o["seconds"], STEPS * 6.02e-3) and o.get("ceiling") is None, o)
    warn = " ".join(d["run"]["warnings"])
    check("sparse matmul: a warning says why", "4 sparse matmuls in the trace" in warn and "dense shape" in warn, warn)


def rank_share():
    """Ranks sharing a host's CPUs (simplify under torchrun on one machine writes `threads`, each rank's share of
    the CPUs it may use): each rank's GEMMs are held against the case measured on that many cores, else the
    nearest case scaled to them; minGPT's two gloo ranks on this 2-vCPU VM were each held against both cores, its
    loss read about twice what it was. Here: 4 CPUs, 200 GFLOP/s on all of them, 60 on one."""
    def gemm_case(threads, used, rate):
        return case("gemm/openblas/dtype=fp32,k=2048,m=2048,n=2048,threads=%d" % threads, "gemm", "openblas",
                    {"dtype": "fp32", "m": "2048", "n": "2048", "k": "2048", "threads": str(threads)}, "flop",
                    2 * 2048 ** 3, "GFLOP/s", 1e9, rate, {"threads": {"value": used, "unit": ""}})

    def results(name, cpus, cases):
        path = os.path.join(WORK, name)
        with open(path, "w") as f:
            json.dump({"schema": "mlbench-results", "schema_version": 1, "started_utc": "2026-01-01T00:00:00Z",
                       "context": {"host": {"name": name}, "cpu": {"logical_cpus": cpus}, "gpus": []},
                       "cases": cases}, f)
        return path
    here = results("share_here.json", 4, [gemm_case(0, 4, 200.0), gemm_case(1, 1, 60.0)])
    there = results("share_there.json", 8, [gemm_case(0, 8, 400.0)])

    def run(threads, target=None, stage_extra=None):
        st = {"name": "fwd+bwd: matmuls", "component": "gemm", "device": "cpu", "dtype": "fp32",
              "flops_per_step": 6e9, "seconds_per_step": 0.2}
        if threads:
            st["threads"] = threads
        for k, v in (stage_extra or {}).items():
            if v is None:
                st.pop(k, None)
            else:
                st[k] = v
        path = os.path.join(WORK, "share-%s.json" % threads)
        with open(path, "w") as f:
            json.dump({"format": "mlbench-stages", "version": 2, "run": {"steps": 2}, "stages": [st]}, f)
        args = [MLBENCH, "gap", "--run", path, "--ceilings", here, "--format", "json"]
        p = subprocess.run(args + (["--target", target] if target else []), capture_output=True, text=True)
        return p.returncode, (json.loads(p.stdout) if p.returncode == 0 else p.stderr)
    def matched(threads):
        rc, d = run(threads)
        s = stage(d, "fwd+bwd: matmuls") if rc == 0 else None
        return (s["ceiling_rate"], s["ceiling"]["id"], s["ceiling"]["why"]) if s and s["ceiling"] else (None, "", d)
    rate, cid, why = matched(1)
    check("rank share: one core of four: the one-core case, 60 GFLOP/s",
          close(rate, 60e9) and "threads=1" in cid and "1 thread (its share of the host's CPUs)" in why, (rate, why))
    rate, cid, why = matched(0)
    check("rank share: not said: the whole machine's, 200 GFLOP/s", close(rate, 200e9), (rate, why))
    rate, cid, why = matched(2)
    check("rank share: two cores, not measured: the nearest case scaled to them (200 x 2/4)", close(rate, 100e9),
          (rate, why))
    rc, d = run(1, there)
    proj = d.get("projection", {}) if rc == 0 else {}
    ps = next((x for x in proj.get("stages", []) if x.get("name") == "fwd+bwd: matmuls"), {})
    # onto a host of 8 CPUs with as many ranks: its share there is 2 cores, 400 x 2/8 = 100 GFLOP/s against 60
    # here, at the same efficiency: 0.2 s x 60/100
    check("rank share, projected: its share of the target's CPUs (2 of 8)",
          rc == 0 and close(ps.get("seconds_per_step_there"), 0.2 * 60 / 100, 1e-6) and
          close(ps.get("rate_there"), 100e9), (rc, ps))
    rc, err = run(1, stage_extra={"component": "other", "dtype": None, "flops_per_step": None})
    check("rank share: threads on a stage with no CPU compute is an error", rc == 2 and "threads" in err, (rc, err))


def stage_file_cpu_run(ceil):
    """A stage file whose work all ran on the CPU (simplify on a CPU loop: forward+backward as CPU GEMM, the
    optimizer and the loader as CPU time) is a run without a GPU, as a CPU-only trace is; the same file with its
    forward+backward on a GPU keeps the GPU remedies."""
    def run(device, threads=None, cpu=None, data_s=0.002):
        doc = {"format": "mlbench-stages", "version": 2 if threads else 1, "run": {"steps": 10},
               "stages": [{"name": "forward+backward", "component": "gemm", "device": device, "dtype": "fp32",
                           "flops_per_step": 4e9, "seconds_per_step": 0.08},
                          {"name": "optimizer", "component": "other", "device": "cpu", "seconds_per_step": 0.01},
                          {"name": "data loading", "component": "other", "role": "data", "device": "cpu",
                           "seconds_per_step": data_s}]}
        if threads:  # simplify's: torch threads per rank, ranks on the machine, CPUs it may use
            doc["simplify"] = dict(zip(("torch_threads", "host_ranks", "cpus_allowed"), threads))
        if cpu:      # simplify's full loop against its CPUs (_cpu_floor)
            doc["simplify"]["cpu"] = cpu
        path = os.path.join(WORK, "stage-file-%s.json" % device)
        with open(path, "w") as f:
            json.dump(doc, f)
        return gap(path, ceil)["diagnosis"]
    dg = run("cpu")
    f = dg["findings"][0]
    text = " ".join(f["evidence"] + f["remedies"])
    check("stage file, CPU run: CPU compute bound, said as a run without a GPU, no remedy that assumes one",
          dg["primary"] == "cpu_compute_bound" and dg["figures"]["cpu_only"] and "a run without a GPU" in text and
          "the GPU" not in text and "matmuls and convolutions near the ceiling" in text, (dg["primary"], text))
    dg = run("gpu")
    check("stage file, GPU run: not a CPU-only run", not dg["figures"]["cpu_only"],
          [(f["pattern"], f["remedies"]) for f in dg["findings"]])
    # "If cores sit idle" only where a core has no thread: two ranks of one thread on two CPUs have one each
    for threads, idle in (((1, 2, 2), False), ((2, 1, 2), False), ((1, 1, 2), True), ((4, 2, 16), True)):
        f = run("cpu", threads)["findings"][0]
        text = " ".join(f["evidence"] + f["remedies"])
        check("stage file, CPU run, %d thread(s) x %d rank(s) on %d CPUs: 'If cores sit idle' %s" %
              (threads + ("said" if idle else "not said",)),
              ("If cores sit idle" in text) == idle and ("every CPU has a thread" in text) == (not idle) and
              ("torch threads: %d" % threads[0]) in text, text)
    # the loader's two workers and the step share the two CPUs (simplify's full loop: 0.1786 s of CPU a 0.1055-s
    # step): the CPUs are busy, not idle; a loop that keeps them neither busy nor shared changes nothing
    cpu = {"cpus": 2, "workers": 2, "cpu_seconds_per_step": 0.1786, "worker_cpu_seconds_per_step": 0.1148,
           "main_cpu_seconds_per_step": 0.0638, "floor_seconds_per_step": 0.0893, "busy_share": 0.8464,
           "main_wait_seconds_per_step": 0.0310, "busy": True, "bound": True, "shared": True}
    for shared in (True, False):
        f = run("cpu", (1, 1, 2), dict(cpu, shared=shared, busy=shared, bound=shared))["findings"][0]
        text = " ".join(f["evidence"] + f["remedies"])
        check("stage file, CPU run, the loader's workers %s the CPUs with the step: 'If cores sit idle' %s, the CPU "
              "floor %s" % (("share", "not said", "said") if shared else ("do not share", "said", "not said")),
              ("If cores sit idle" in text) != shared and
              ("the full loop took 179 ms of CPU a step (its 2 loader workers 115 ms, the step's process 63.8 ms) on "
               "the 2 CPUs it may use: 89.3 ms a step at the least, 84.6% of the step: data loading and the step "
               "share the CPUs (simplify, mode full)" in text) == shared and
              ("the thread running the step waited for a CPU 31 ms a step" in text) == shared and
              ("loading that takes less CPU" in text) == shared, text)
    # the loop's own processes keep the CPUs busy (torch at one thread, a second thread of its process as busy: a
    # byte-level LM's step took 57 ms of CPU a 33-ms step on this VM), its workers a sliver: no core for "Use all
    # cores" to fill
    f = run("cpu", (1, 1, 2), dict(cpu, busy=True, bound=True, shared=False, worker_cpu_seconds_per_step=0.0025,
                                   main_cpu_seconds_per_step=0.0574, cpu_seconds_per_step=0.0599,
                                   floor_seconds_per_step=0.02995, busy_share=0.918))["findings"][0]
    text = " ".join(f["evidence"] + f["remedies"])
    check("stage file, CPU run, its CPUs busy, not shared: 'If cores sit idle' not said, the floor said",
          "If cores sit idle" not in text and "share the CPUs" not in text and "loading that takes less CPU" not in text and
          "the full loop took 59.9 ms of CPU a step (its 2 loader workers 2.5 ms, the step's process 57.4 ms) on the 2 "
          "CPUs it may use: 30 ms a step at the least, 91.8% of the step: the loop keeps its CPUs busy" in text, text)
    # data-loading bound with its CPUs shared: more workers cannot help, and the remedy does not say they would
    for shared in (True, False):
        dg = run("cpu", (1, 1, 2), dict(cpu, shared=shared, busy=shared, bound=shared), data_s=0.2)
        f = next((x for x in dg["findings"] if x["pattern"] == "data_loading_bound"), None)
        text = " ".join(f["evidence"] + f["remedies"]) if f else ""
        check("stage file, data-loading bound, CPUs %s: 'More DataLoader workers' %s" %
              (("shared", "not said") if shared else ("free", "said")),
              f is not None and ("More DataLoader workers" in text) != shared and
              ("more DataLoader workers cannot help" in text) == shared and
              ("data loading and the step share the CPUs" in text) == shared, (dg["primary"], text))


def extension_ops(ceil):
    """An extension's own ops (vLLM's CPU backend: _C::weight_packed_linear around sgl-kernel's, an attention op, a
    shared-memory all-reduce) inside a compiled region and a user annotation, per step: the linear 4 ms, attention
    1 ms, all-reduce 1 ms; the rest (4 ms) is Python. The GEMM is the inner sgl-kernel op's 3.98 ms. They once read as Python, 99.7% of a gemma-3 prefill."""
    lin = {"Input Dims": [[256, 1024], [512, 1024], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "", "Scalar"]}
    ar = {"Input Dims": [[], [256, 1024]], "Input type": ["Scalar", "c10::BFloat16"]}

    def body(t0, mm="_C::weight_packed_linear"):
        return [ev("MyModel::forward", t0 + 50, 9000, "user_annotation"),
                ev("Torch-Compiled Region: 1/0", t0 + 100, 8800, "cpu_op"),
                ev(mm, t0 + 500, 4000, "cpu_op", lin if mm.endswith("linear") else None),
                ev("sgl-kernel::weight_packed_linear", t0 + 510, 3980, "cpu_op", lin),
                ev("vllm::unified_attention_with_output", t0 + 5000, 1000, "cpu_op"),
                ev("_C::shm_allreduce", t0 + 6500, 1000, "cpu_op", ar)]
    d = gap(write("cpu-extension-ops", steps(body), kineto=True), ceil)
    g, py, ops, coll = (stage(d, n) for n in ("gemm (cpu)", "python (host code)", "other aten ops",
                                              "allreduce (host, size unknown)"))
    flops = 2.0 * 256 * 512 * 1024
    check("extension ops: the custom linear is the GEMM stage, its innermost op's FLOPs (linear's operands), bf16",
          g is not None and close(g["seconds"], STEPS * 3.98e-3) and g["work"] == STEPS * flops and
          g["dtype"] == "bf16", g)
    check("extension ops: an extension's attention op is an op (1 ms a step, with the linear's own 20 us), not Python",
          ops is not None and close(ops["seconds"], STEPS * 1.02e-3), ops)
    check("extension ops: an op naming an all-reduce is the host collective (1 ms a step)",
          coll is not None and close(coll["seconds"], STEPS * 1e-3), [s["name"] for s in d["stages"]])
    check("extension ops: Python is the rest, 4 ms a step (the annotation and the compiled region are no ops)",
          py is not None and close(py["seconds"], STEPS * 4e-3), py)
    rem = " ".join(d["diagnosis"]["findings"][0]["remedies"])
    check("extension ops: a compiled run is not told torch.compile", "compiled already" in rem and
          "torch.compile (PyTorch 2) or oneDNN" not in rem, rem)
    # an extension's matmul whose operands are not linear's (_C::onednn_mm writes its first): time, no FLOPs
    d = gap(write("cpu-extension-mm", steps(lambda t0: body(t0, "_C::onednn_mm")[:3]), kineto=True), ceil)
    g = stage(d, "gemm (cpu)")
    check("extension ops: _C::onednn_mm is GEMM time, no FLOPs guessed",
          g is not None and close(g["seconds"], STEPS * 4e-3) and g["work"] is None, g)


def bf16_remedy(ceil):
    """A CPU compute-bound run is told bf16 only where the ceilings' CPU has it: an x86 CPU listing neither
    avx512_bf16 nor amx_bf16 gets the remedy without it (oneDNN emulates bf16 there, slower than fp32); one with
    either, and an Arm CPU (whose bf16 the SIMD list does not carry), keep "bf16 where the CPU has it"."""
    trace = write("cpu-bf16", steps(lambda t0: matmul(t0, 8000)), kineto=True)
    doc = json.load(open(ceil))
    for name, flags, said in (("x86, no bf16", ["sse4_2", "avx", "avx2", "fma", "avx512f"], "Not bf16"),
                              ("x86, avx512_bf16", ["sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16"],
                               "bf16 where the CPU has it"),
                              ("x86, amx_bf16", ["sse4_2", "avx", "avx2", "amx_bf16"], "bf16 where the CPU has it"),
                              ("Arm", ["asimd", "sve"], "bf16 where the CPU has it"),
                              ("no flags listed", None, "bf16 where the CPU has it")):
        doc["context"]["cpu"].pop("flags_simd", None)
        if flags is not None:
            doc["context"]["cpu"]["flags_simd"] = flags
        path = os.path.join(WORK, "cpu_ceilings_bf16.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        d = gap(trace, path)
        rem = " ".join(r for f in d["diagnosis"]["findings"] for r in f["remedies"])
        other = "bf16 where the CPU has it" if said == "Not bf16" else "Not bf16"
        check("bf16 remedy (%s): '%s' said, '%s' not" % (name, said, other),
              said in rem and other not in rem and "torch.compile (PyTorch 2) or oneDNN" in rem, rem)


def dense_embedding(ceil):
    """A recommender's EmbeddingBag with a dense gradient: _embedding_bag_backward -> _embedding_bag_dense_backward
    -> fill_ (the table-sized gradient zeroed) takes 7 ms of each 10-ms step. The step says 7 ms a step in the dense
    backward, the diagnosis names it (70.0%) and its remedy (sparse=True), and not "fuse them (torch.compile)".
    The same loop with 1 ms of it (10%, under the 20% threshold) is not told sparse=True."""
    def body(dense_us):
        def b(t0):
            return [ev("aten::embedding_bag", t0 + 100, 300, "cpu_op"),
                    ev("aten::_embedding_bag", t0 + 110, 280, "cpu_op"),
                    ev("aten::_embedding_bag_backward", t0 + 1000, dense_us + 200, "cpu_op"),
                    ev("aten::_embedding_bag_dense_backward", t0 + 1100, dense_us, "cpu_op"),
                    ev("aten::fill_", t0 + 1150, dense_us - 1000, "cpu_op"),
                    ev("aten::index_add_", t0 + 1150 + dense_us - 900, 800, "cpu_op")] + \
                optimizer(t0 + dense_us + 1500, 500)
        return b
    d = gap(write("cpu-dense-embedding", steps(body(7000)), kineto=True), ceil)
    step = d["step"]
    check("dense embedding: 7 ms a step in the dense backward, from the trace",
          close(step.get("dense_embedding_grad_seconds"), 7e-3), step.get("dense_embedding_grad_seconds"))
    f = d["diagnosis"]["findings"][0]
    rem, evid = " ".join(f["remedies"]), " ".join(f["evidence"])
    check("dense embedding: the evidence gives 7 ms a step, 70.0% of it",
          "an embedding's dense backward" in evid and "7 ms a step, 70.0% of it" in evid, evid)
    check("dense embedding: the first remedy is sparse=True, and nothing says fuse the memory-bound ops",
          f["remedies"][0].startswith("An embedding's dense gradient leads") and "sparse=True" in rem and
          "fuse them" not in rem, rem)
    d = gap(write("cpu-dense-embedding-small", steps(body(1000)), kineto=True), ceil)
    rem = " ".join(d["diagnosis"]["findings"][0]["remedies"])
    check("dense embedding: 10% of the step is not told sparse=True", "sparse=True" not in rem, rem)


def unequal_steps(ceil):
    """Four steps of 10, 10, 40 and 10 ms (an evaluation in the third): the warning names them in order, the
    longest 4.0x the 10-ms median, their mean 17.5 ms; four steps of 10 ms have no such warning."""
    def body(durs):
        out, t0 = [], 0
        for n, dur in enumerate(durs):
            out.append(ev("ProfilerStep#%d" % n, t0, dur, "user_annotation"))
            out += matmul(t0 + 100, dur - 200)
            t0 += dur + 1000
        return out
    d = gap(write("cpu-unequal-steps", body([10000, 10000, 40000, 10000]), kineto=True), ceil)
    said = [w for w in d["run"]["warnings"] if w.startswith("the steps are unequal")]
    check("unequal steps: said in order, the longest 4.0x the median, the mean 17.5 ms",
          len(said) == 1 and "10 ms, 10 ms, 40 ms, 10 ms (the longest 4.0x the median, 10 ms; their mean 17.5 ms)"
          in said[0], said or d["run"]["warnings"])
    d = gap(write("cpu-equal-steps", body([10000] * 4), kineto=True), ceil)
    check("equal steps: no unequal-steps warning",
          not any(w.startswith("the steps are unequal") for w in d["run"]["warnings"]), d["run"]["warnings"])


def gathers_lead_unshaped(ceil):
    """A GNN's message passing in the array of a torch without Kineto (no shapes): index_select 6 ms and index_add_
    2 ms a step, a matmul of 1 ms. The other ops lead, and their remedy is said first, shapes or not (it was held
    back for the matmuls' missing shapes: a real GNN's 82.6% of other ops was told only about its 12% of matmuls)."""
    def body(t0):
        return [ev("aten::index_select", t0 + 100, 6000), ev("aten::index_add_", t0 + 6200, 2000)] + \
            [dict(e, args={}) for e in matmul(t0 + 8300, 1000)]
    d = gap(write("cpu-gathers-unshaped", steps(body), kineto=False), ceil)
    rem = d["diagnosis"]["findings"][0]["remedies"]
    check("gathers lead, no shapes: the other ops' remedy first, and shapes asked for the matmuls",
          rem[0].startswith("Of the ops, those other than matmuls and convolutions take the most") and
          any("a torch without Kineto records no shapes" in r for r in rem), rem)


def python_in_user_range(ceil):
    """A step of 10 ms: the loop's own record_function("aug::mix") from 0.1 to 6.1 ms holds an add of 0.2 ms and
    5.8 ms of Python; a matmul from 6.5 to 8.5 ms. Long stretches with no op: 6.2 ms (0.3 to 6.5) and 1.5 ms
    (8.5 to 10), 7.7 ms; 5.8 of them in aug::mix: named, with its own remedy, in both trace forms. The same step
    without the range is told to find them (py-spy)."""
    def body(named):
        def b(t0):
            out = [ev("aug::mix", t0 + 100, 6000, "user_annotation")] if named else []
            return out + [ev("aten::add", t0 + 100, 200, "cpu_op")] + matmul(t0 + 6500, 2000)
        return b
    for kineto in (True, False):
        form = "object" if kineto else "array"
        d = gap(write("cpu-python-range-%s" % form, steps(body(True)), kineto=kineto), ceil)
        st, f = d["step"], d["diagnosis"]["findings"][0]
        check("python in a user range (%s): its name and 5.8 ms a step of the 7.7 ms of long stretches" % form,
              st.get("python_long_range") == "aug::mix" and close(st.get("python_long_range_seconds"), 5.8e-3) and
              close(st.get("python_long_seconds"), 7.7e-3), st)
        check("python in a user range (%s): said in the evidence, its remedy first" % form,
              any("5.8 ms a step of those stretches lie in the loop's own range 'aug::mix'" in e
                  for e in f["evidence"]) and f["remedies"][0].startswith("Most of that host code is long stretches "
                                                                          "with no op in a range of the loop's own"),
              (f["evidence"], f["remedies"]))
    d = gap(write("cpu-python-norange", steps(body(False)), kineto=True), ceil)
    rem = d["diagnosis"]["findings"][0]["remedies"]
    check("python, no user range: none named, told to find them",
          "python_long_range" not in d["step"] and any("find them (py-spy" in r for r in rem), (d["step"], rem))


def complex_matmul(ceil):
    """A complex128 matmul (a Gaussian-process solve's): each product of complex numbers is 4 real products, so a
    64^3 mm in c10::complex<double> counts 4 x 2 x 64^3 FLOPs, its stage in fp64 (it was a quarter of that, its
    type unknown, held to a bf16 GEMM case)."""
    dims = {"Input Dims": [[64, 64], [64, 64]], "Input type": ["c10::complex<double>"] * 2}
    d = gap(write("cpu-complex-mm", steps(lambda t0: [ev("aten::mm", t0 + 100, 2000, "cpu_op", dims)]),
                  kineto=True), ceil)
    s = stage(d, "gemm (cpu)")
    check("complex128 matmul: 4 x 2 x 64^3 FLOPs a call, in fp64",
          s is not None and close(s["work"], STEPS * 4 * 2 * 64 ** 3) and s["dtype"] == "fp64", s)


def wrapped_matmul(ceil):
    """torch 1.10 on a CPU (a grammar-correction transformer's inference trace): aten::linear > aten::t, aten::matmul >
    (a copy_ of its input, aten::mm, aten::_unsafe_view), the linears 167 ms of which mm ran 44 ms. The gemm stage
    took the linear's whole time, its rate against the GEMM ceiling a third of the product's. Per step: the linear
    3 ms, its transpose 0.4 ms, the copy 0.3 ms (2 MiB), the mm 1.5 ms, the view 0.1 ms: gemm 1.5 ms, memory-bound
    ops 0.3 ms, other aten ops the other 1.2 ms."""
    x, w = [256, 1024], [512, 1024]

    def body(t0):
        return [ev("aten::linear", t0 + 500, 3000, "cpu_op", {"Input Dims": [x, w, []], "Input type": ["float"] * 2}),
                ev("aten::t", t0 + 600, 400, "cpu_op", {"Input Dims": [w], "Input type": ["float"]}),
                ev("aten::matmul", t0 + 1100, 2200, "cpu_op", {"Input Dims": [x, [1024, 512]],
                                                               "Input type": ["float"] * 2}),
                ev("aten::copy_", t0 + 1200, 300, "cpu_op", {"Input Dims": [x, x, []],
                                                             "Input type": ["float", "float", "Scalar"]}),
                ev("aten::mm", t0 + 1600, 1500, "cpu_op", {"Input Dims": [x, [1024, 512]],
                                                           "Input type": ["float"] * 2}),
                ev("aten::_unsafe_view", t0 + 3150, 100, "cpu_op", {"Input Dims": [[256, 512], []],
                                                                    "Input type": ["float", ""]})]
    d = gap(write("cpu-wrapped-matmul", steps(body), kineto=True), ceil)
    g, m, o = (stage(d, n) for n in ("gemm (cpu)", "memory-bound ops (cpu)", "other aten ops"))
    flops = 2.0 * 256 * 1024 * 512
    check("wrapped matmul: the gemm stage is the mm's 1.5 ms and its FLOPs, not the linear's 3 ms",
          g is not None and close(g["seconds_per_step"], 1.5e-3) and g["work"] == STEPS * flops and
          close(g["measured_rate"], flops / 1.5e-3), g)
    check("wrapped matmul: the copy of its input is memory-bound, 0.3 ms",
          m is not None and close(m["seconds_per_step"], 0.3e-3) and m["work_unit"] == "byte", m)
    check("wrapped matmul: the linear's, matmul's, transpose's and view's own time is other aten ops', 1.2 ms",
          o is not None and close(o["seconds_per_step"], 1.2e-3), o)
    parts = {p["id"]: p["seconds"] for p in d["step"]["parts"]}
    check("wrapped matmul: the step table says the same",
          close(parts.get("gemm"), 1.5e-3) and close(parts.get("ops"), 1.2e-3) and close(parts.get("memory"), 0.3e-3),
          parts)


def embedding_bag(ceil):
    """A recommender's EmbeddingBag on the CPU (nn.EmbeddingBag(1000, 64, mode="sum"), 4096 bags of 20 indices):
    aten::embedding_bag > aten::_embedding_bag 1 ms, aten::_embedding_bag_backward > _embedding_bag_dense_backward
    2 ms, aten::index 1 ms; a fill_ of the 4096 bag sizes (32 kB) inside _embedding_bag. Before the bag model they
    were other aten ops. The forward (bag): per index one row of
    64 floats read and the index, 81920 x 8 + 81920 x 64 x 4 = 21626880 bytes (not the gather model's row written
    per index: the 4096 bags are fewer); the dense backward (reduce: no table-sized input) every tensor once,
    4096 x 64 x 4 + 2 x 81920 x 8 + 2 x 4096 x 8 = 2424832. The wrappers hold the same inputs and count neither
    bytes nor time twice; the fill_ inside _embedding_bag moves under half its bytes, which stay its own (taking the
    innermost ops alone counted the fill_'s 32 kB for the forward's 21.6 MB)."""
    fwd = {"Input Dims": [[1000, 64], [81920], [4096], [], [], [], [], [], []],
           "Input type": ["float", "long int", "long int", "Scalar", "Scalar", "Scalar", "", "Scalar", "Scalar"]}
    bwd = {"Input Dims": [[4096, 64], [81920], [4096], [81920], [4096], [4096], [], [], [], [], [], []],
           "Input type": ["float", "long int", "long int", "long int", "long int", "long int", "Scalar", "Scalar",
                          "Scalar", "Scalar", "", "Scalar"]}
    dense = {"Input Dims": [[4096, 64], [81920], [81920], [4096], [4096], [], [], [], [], []],
             "Input type": ["float", "long int", "long int", "long int", "long int", "Scalar", "Scalar", "Scalar", "",
                            "Scalar"]}

    def body(t0):
        return [ev("aten::embedding_bag", t0 + 500, 1000, "cpu_op", fwd),
                ev("aten::_embedding_bag", t0 + 510, 980, "cpu_op", fwd),
                ev("aten::fill_", t0 + 520, 50, "cpu_op", {"Input Dims": [[4096], []],
                                                           "Input type": ["long int", "Scalar"]}),
                ev("aten::index", t0 + 2000, 1000, "cpu_op"),
                ev("aten::_embedding_bag_backward", t0 + 4000, 2000, "cpu_op", bwd),
                ev("aten::_embedding_bag_dense_backward", t0 + 4050, 1900, "cpu_op", dense)]
    d = gap(write("cpu-embedding-bag", steps(body), kineto=True), ceil)
    m, o = stage(d, "memory-bound ops (cpu)"), stage(d, "other aten ops")
    per_step = 21626880 + 2424832
    check("embedding bag: forward and dense backward are memory-bound, 3 ms a step, each instant once",
          m is not None and close(m["seconds_per_step"], 3e-3) and m["work_unit"] == "byte", m)
    check("embedding bag: the bytes once each, the forward's its own beside a small fill_ (bag: a row read per "
          "index, not written)",
          m is not None and m["work"] == STEPS * per_step and m["calls"] == 2 * STEPS, m)
    check("embedding bag: other aten ops hold aten::index alone, 1 ms",
          o is not None and close(o["seconds_per_step"], 1e-3), o)


def unseen_loops(ceil):
    """What real CPU training loops on Debian's torch 1.13 (no Kineto, no shapes) showed (an LSTM, a ConvNet with a
    DataLoader of two workers, a loop that saves a checkpoint every step): each reading here is known by hand."""
    def rems(d):
        return " ".join(r for f in d["diagnosis"]["findings"] for r in f["remedies"])
    # nn.LSTM asks aten::cudnn_is_acceptable every forward, on a CPU too: a query, no GPU op
    def lstm(t0):
        return [ev("aten::lstm", t0 + 100, 8000, "cpu_op"), ev("aten::cudnn_is_acceptable", t0 + 110, 1, "cpu_op"),
                ev("aten::mm", t0 + 200, 7000, "cpu_op"), ev("aten::add_", t0 + 8200, 100, "cpu_op")]
    d = gap(write("cpu-lstm", steps(lstm), kineto=False), ceil)
    f0 = d["diagnosis"]["findings"][0]
    check("LSTM on a CPU: CPU compute bound, its matmuls the CPU's (no GPU activity unrecorded)",
          f0["pattern"] == "cpu_compute_bound" and "not recorded" not in f0["title"] and
          stage(d, "gemm (cpu)") is not None and d["step"].get("gpus_unrecorded", 0) == 0,
          (f0["title"], [s["name"] for s in d["stages"]]))
    # memory-bound ops by name ([memory_op]) without shapes: their class, time only, and the remedy that fuses them
    def convnet(t0):
        return [ev("aten::max_pool2d", t0 + 100, 4000, "cpu_op"), ev("aten::native_batch_norm", t0 + 4200, 2000,
                                                                       "cpu_op"),
                ev("aten::mm", t0 + 6300, 2000, "cpu_op"), ev("aten::view", t0 + 8400, 100, "cpu_op")]
    for kineto in (False, True):
        d = gap(write("cpu-convnet-%s" % kineto, steps(convnet), kineto=kineto), ceil)
        m, o = stage(d, "memory-bound ops (cpu)"), stage(d, "other aten ops")
        check("memory-bound ops by name, no shapes (%s): their stage, 6 ms a step, time only; the view other ops'"
              % ("Kineto" if kineto else "array"),
              m is not None and close(m["seconds_per_step"], 6e-3) and m["work"] is None and
              "bytes unknown" in (headline(d, m["name"]).get("no_ceiling") or "") and o is not None and
              close(o["seconds_per_step"], 0.1e-3), (m, o))
        check("memory-bound ops by name lead (%s): the remedy fuses them" % ("Kineto" if kineto else "array"),
              "Of the ops, memory-bound ones take the most" in rems(d), rems(d))
    # "use all cores" is no advice beside a DataLoader iterating in worker processes (they use the other cores)
    def computing(loader_name):
        return lambda t0: [ev(loader_name, t0, 300, "user_annotation")] + matmul(t0 + 400, 9000)
    d = gap(write("cpu-workers", steps(computing(
        "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__")), kineto=True), ceil)
    check("loader in worker processes: no 'cores sit idle' advice", "cores sit idle" not in rems(d), rems(d))
    d = gap(write("cpu-one-process", steps(computing(
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__")), kineto=True), ceil)
    check("loader in the step's process: the threads advice, said as a check to time", "If cores sit idle" in rems(d)
          and "time any change" in rems(d), rems(d))
    # Python leads: one 6-ms stretch with no op a step (a torch.save), or 60 gaps of 100 us between small ops
    def saving(t0):
        return [ev("aten::mm", t0 + 100, 3000, "cpu_op"), ev("aten::add_", t0 + 9800, 100, "cpu_op")]
    def dispatching(t0):
        return [ev("aten::mm", t0 + 100, 2000, "cpu_op")] + [ev("aten::add", t0 + 2200 + 110 * i, 10, "cpu_op")
                                                            for i in range(60)]
    d = gap(write("cpu-save", steps(saving), kineto=True), ceil)
    evid = " ".join(" ".join(f["evidence"]) for f in d["diagnosis"]["findings"])
    check("one block of Python a step: said with its time, found and moved, not 'fewer, larger ops'",
          "6.7 ms of it in one stretch with no op" in evid and "long stretches with no op (" in rems(d) and
          "fewer, larger ops" not in rems(d), (evid, rems(d)))
    d = gap(write("cpu-dispatch", steps(dispatching), kineto=True), ceil)
    check("Python spread between small ops: 'fewer, larger ops'",
          "fewer, larger ops" in rems(d) and "one stretch" not in rems(d), rems(d))
    # --step-ms cannot split a CPU trace's profiler time from its work: refused, saying why and what does
    path = write("cpu-stepms", steps(saving), kineto=True)
    r = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil, "--step-ms", "9"], capture_output=True,
                       text=True)
    check("--step-ms on a CPU-only trace: refused, why and the way out",
          r.returncode == 2 and "CPU-only trace" in r.stderr and "mlbench.simplify" in r.stderr, (r.returncode, r.stderr))
    path = write("cpu-stepms-gpu", steps(saving), kineto=True, gpus=1)
    r = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil, "--step-ms", "9"], capture_output=True,
                       text=True)
    check("--step-ms on a GPU machine's trace without GPU activity: refused, record the GPU",
          r.returncode == 2 and "ProfilerActivity.CUDA" in r.stderr and "CPU-only" not in r.stderr,
          (r.returncode, r.stderr))
    # no stage with a ceiling (no shapes): nothing to rank, not "Fastest ... 1.00x"
    r = subprocess.run([MLBENCH, "gap", "--run", write("cpu-norank", steps(lstm), kineto=False), "--ceilings", ceil,
                        "--target", ceil, "--format", "json"], capture_output=True, text=True)
    m = json.loads(r.stdout)["machines"] if r.returncode == 0 else {}
    check("a run with no stage holding a ceiling: 'Nothing to rank', every machine one rank",
          m.get("verdict", "").startswith("Nothing to rank") and m.get("nothing_to_rank") is True and
          {x.get("rank") for x in m.get("ranking", []) if x.get("rank")} <= {1}, (r.returncode, r.stderr, m))



def sweep3_loops(ceil):
    """New CPU loops on torch 1.13 (a recommender's SparseAdam, ...): each reading here is known by hand."""
    def rems(d):
        return " ".join(r for f in d["diagnosis"]["findings"] for r in f["remedies"])
    # SparseAdam: its ops (add_, sparse_mask, coalesce) 7.6 ms of an 8 ms optimizer step, 80% of the step, Python
    # 0.6 ms between them: the optimizer leads, not "Python and the framework"
    def sparse_adam(t0):
        ops = [ev("aten::mm", t0 + 100, 1000, "cpu_op"), ev("Optimizer.step#SparseAdam.step", t0 + 1200, 8000,
                                                              "user_annotation")]
        return ops + [ev(name, t0 + 1300 + 2000 * i, 1900, "cpu_op")
                      for i, name in enumerate(("aten::add_", "aten::sparse_mask", "aten::coalesce", "aten::mul"))]
    d = gap(write("cpu-sparse-adam", steps(sparse_adam), kineto=True), ceil)
    o = stage(d, "optimizer")
    check("SparseAdam's step, 80% of the step: the optimizer's remedy, not 'Python and the framework lead'",
          "The optimizer step leads" in rems(d) and "Python and the framework lead" not in rems(d) and
          o is not None and close(o["seconds_per_step"], 8e-3), (rems(d), o))
    # an RL loop: four 1.5-ms environment steps in Python (none half of its Python) between a policy's small ops
    def rl(t0):
        out = []
        for i in range(4):
            base = t0 + 100 + 2400 * i
            out += [ev("aten::linear", base, 300, "cpu_op"), ev("aten::relu", base + 320, 100, "cpu_op"),
                    ev("aten::add", base + 440, 100, "cpu_op")]
        return out
    d = gap(write("cpu-rl", steps(rl), kineto=False), ceil)
    evid = " ".join(" ".join(f["evidence"]) for f in d["diagnosis"]["findings"])
    check("RL loop, four 1.7-ms stretches of Python a step: the blocks' remedy and figures, not 'fewer, larger ops'",
          "long stretches with no op (" in rems(d) and "fewer, larger ops" not in rems(d) and
          "in stretches of 1 ms or more with no op (4 a step" in evid,
          (evid, rems(d)))
    # the same step with a foreach optimizer (its _foreach_ ops in the step): not told to use foreach
    def foreach_adam(t0):
        return [ev("aten::mm", t0 + 100, 1000, "cpu_op"), ev("Optimizer.step#Adam.step", t0 + 1200, 8000,
                                                              "user_annotation")] + \
            [ev("aten::_foreach_add_", t0 + 1300 + 2000 * i, 1900, "cpu_op") for i in range(4)]
    d = gap(write("cpu-foreach-adam", steps(foreach_adam), kineto=True), ceil)
    check("a foreach optimizer leads: its own remedy, not 'foreach=True'",
          "foreach or fused already" in rems(d) and "foreach=True" not in rems(d), rems(d))
    # a step blocked 8 ms on a producer's queue (no op, no CPU) beside 2 ms of ops: host bound, Python or a wait;
    # not "CPU compute bound" nor "the CPU's own work"
    def waiting(t0):
        return [ev("aten::mm", t0 + 100, 1500, "cpu_op"), ev("aten::add_", t0 + 9700, 200, "cpu_op")]
    d = gap(write("cpu-queue-wait", steps(waiting), kineto=False), ceil)
    f0 = d["diagnosis"]["findings"][0]
    check("a step that waits 8 ms a step with no op: host bound, 'Python, or a wait', not CPU compute",
          d["bottleneck"].startswith("Host bound") and "or a wait" in f0["title"] and
          "compute on the CPU" not in " ".join(f0["evidence"]), (d["bottleneck"], f0["title"], f0["evidence"]))
    # a GAN traced without prof.step(): two optimizer steps an iteration inside the user's train_step; the steps
    # stay the optimizer steps (an epoch's annotation holds several too), and the warning says a step is part of
    # the iteration train_step marks
    def gan(n, annotated, last=19000):
        out = []
        for i in range(n):
            t0 = i * 20000
            if annotated:
                out.append(ev("train_step", t0, 19000 if i < n - 1 else last, "user_annotation"))
            out.append(ev("detach", t0 + 50, 10, "user_annotation"))  # torch 1.13's, once an iteration, inside
            for h in (0, 9000):
                out += [ev("aten::mm", t0 + h + 100, 7000, "cpu_op"),
                        ev("Optimizer.step#Adam.step", t0 + h + 7200, 1500, "user_annotation"),
                        ev("aten::add_", t0 + h + 7300, 1300, "cpu_op")]
        return out
    for kineto in (False, True):
        # the last train_step cut short (the profiler stopped in it) holds one: the complete ones say it
        d = gap(write("cpu-gan-%s" % kineto, gan(6, True, last=8000), kineto=kineto), ceil)
        said = " ".join(d["run"]["warnings"])
        check("GAN, train_step around two optimizer steps (%s): 11 optimizer steps, said part of an iteration"
              % ("Kineto" if kineto else "array"),
              d["run"]["steps"] == 11 and "each of the 6 'train_step' annotations" in said and
              "holds 2 or more optimizer steps" in said and "a step here is part of one" in said,
              (d["run"]["steps"], said[:700]))
    d = gap(write("cpu-gan-bare", gan(6, False), kineto=False), ceil)
    check("GAN without train_step: its 12 optimizer steps, nothing said of an annotation (the inner 'detach' holds "
          "none)", d["run"]["steps"] == 11 and "annotations, once an iteration" not in " ".join(d["run"]["warnings"]),
          d["run"]["warnings"])
    # one optimizer, an 'epoch' annotation around five iterations: still cut at the optimizer steps (14 steps)
    def epochs():
        out = []
        for e in range(3):
            out.append(ev("epoch", e * 50000, 49000, "user_annotation"))
            for i in range(5):
                t0 = e * 50000 + i * 9500
                out += [ev("aten::mm", t0 + 100, 7000, "cpu_op"), ev("Optimizer.step#SGD.step", t0 + 7200, 1500,
                                                                     "user_annotation")]
        return out
    d = gap(write("cpu-epochs", epochs(), kineto=True), ceil)
    check("an epoch's annotation over five optimizer steps: the steps are still the 15 optimizer steps' 14",
          d["run"]["steps"] == 14 and d["step"]["window"] == "Optimizer.step", (d["run"]["steps"], d["step"]))
    # two ranks' arrays joined (torch 1.13: every process "CPU functions", thread 1; or their own pids): refused,
    # saying why, not 21.3 ms for two ranks' 41.7
    for same_pid in (True, False):
        rank0, rank1 = steps(waiting), steps(waiting)
        for e in rank1:
            e["ts"] += 3000
            e["pid"] = 1 if same_pid else 2
        path = write("cpu-merged-%s" % same_pid, rank0 + rank1, kineto=not same_pid)
        r = subprocess.run([MLBENCH, "gap", "--run", path, "--ceilings", ceil], capture_output=True, text=True)
        check("two ranks' traces joined (%s): refused, one rank's own trace asked for"
              % ("one pid" if same_pid else "two pids"),
              r.returncode == 2 and "recorded twice at once" in r.stderr and path in r.stderr and
              "one rank's own trace" in r.stderr, (r.returncode, r.stderr))
    # --run given twice (two ranks' traces): refused, not the last one silently
    a, b = write("cpu-rank0", steps(waiting), kineto=True), write("cpu-rank1", steps(waiting), kineto=True)
    r = subprocess.run([MLBENCH, "gap", "--run", a, "--run", b, "--ceilings", ceil], capture_output=True, text=True)
    check("--run twice: refused, saying gap reads one run", r.returncode == 2 and "--run given twice" in r.stderr and
          "each rank's own" in r.stderr, (r.returncode, r.stderr))
    r = subprocess.run([MLBENCH, "gap", "--run", a, "--ceilings", ceil, "--format", "json", "--format", "md"],
                       capture_output=True, text=True)
    check("--format twice: refused", r.returncode == 2 and "--format given twice" in r.stderr, (r.returncode, r.stderr))


os.makedirs(WORK, exist_ok=True)
ceil = ceilings()
extension_ops(ceil)
stage_file_cpu_run(ceil)
collective_bound(ceil)
ddp_overlap(ceil)
closure_optimizer(ceil)
compute_bound(ceil, kineto=True)
compute_bound(ceil, kineto=False)
data_bound(ceil)
legacy_no_shapes(ceil)
unseen_loops(ceil)
sweep3_loops(ceil)
conv_no_stride(ceil)
memory_bound(ceil)
sparse_matmul(ceil)
wrapped_matmul(ceil)
embedding_bag(ceil)
complex_matmul(ceil)
bf16_remedy(ceil)
dense_embedding(ceil)
unequal_steps(ceil)
gathers_lead_unshaped(ceil)
python_in_user_range(ceil)
rank_share()
print("%d failure(s)" % fails)
sys.exit(1 if fails else 0)
