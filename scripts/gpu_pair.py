#!/usr/bin/env python3
"""gpu_pair.py: paired data for the projection's measured error (docs/gap.md,
"Measured error"), collected in one 10-minute GPU slot per GPU kind.

  gpu_pair.py collect OUTDIR [--mlbench PATH] [--processes 3] [--steps 30]
      on a GPU machine (python3 with torch and CUDA): for each workload
      below, ground-truth step times (median of --steps timed steps, in
      --processes separate processes) and one PyTorch profiler trace with
      record_shapes=True; then the machine's mlbench ceilings (membw, peak,
      gemm-gpu suites, as long as the budget allows). Writes OUTDIR/steps.json,
      OUTDIR/<workload>.pt.trace.json.gz and OUTDIR/ceilings.json. The
      ceilings are the GPU part of the default suite (`--suite all --filter
      CEILINGS_FILTER`: GEMM every dtype, conv, copies, membw, peak, launch);
      --quick-ceilings runs them with 3 repetitions of 0.1 s (for a short slot).
  gpu_pair.py kernels A_DIR B_DIR
      anywhere: the kernels both traces of a workload ran, matched by name
      and order, summed per class (configs/gap/kernel_classes.ini: GEMM,
      conv, attention; the rest memory-bound) on A and on B, and their
      ratio: what each class gained between the GPUs.
  gpu_pair.py compare A_DIR B_DIR [--mlbench PATH]
      anywhere: projects each workload's trace from A onto B and from B onto
      A with `mlbench gap --target` (B's measured ceilings; B's datasheet),
      and prints mean/max absolute % error, signed bias and the error of the
      predicted speed-up, next to the no-change, FLOPs-ratio and
      bandwidth-ratio baselines. Each projection is given the source's
      measured step (`gap --step-ms`): the profiler lengthens a trace's host
      time, and a loop that keeps its GPU busy can look host-bound in its
      trace; --uncalibrated projects the traces as recorded. Exit 1 when a
      file is missing.

Workloads (synthetic data, standard training steps: forward, loss, backward,
optimizer step): an fp32 MLP, a bf16 transformer encoder, a bf16 conv net, at
the batches in BATCH.
Every timed step ends with a CUDA synchronize; warm-up steps are not timed.
stdlib + torch only."""
import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

# The GPU sections of configs/suites/all.ini (and every case id of those components).
CEILINGS_FILTER = "^(gemm-gpu|conv-gpu|copy|membw|peak|launch)"
WORKLOADS = ("mlp-fp32", "transformer-bf16", "convnet-bf16")
DTYPE = {"mlp-fp32": "fp32", "transformer-bf16": "bf16", "convnet-bf16": "bf16"}
# Batch per step (sequences for the transformer, 512 tokens each). Large enough that the GPU, not the host's
# launches, sets the step: the first pair (bench/data/pair-h100-h200, which recorded no batch) ran the
# transformer at 8 and the conv net at 64, host-bound, and separate processes of one step disagreed by up to
# 43%. compare pairs only workloads run at the same batch.
BATCH = {"mlp-fp32": 512, "transformer-bf16": 32, "convnet-bf16": 256}
FIRST_BATCH = {"mlp-fp32": 512, "transformer-bf16": 8, "convnet-bf16": 64}  # steps.json without "batch"


# ---- collect (GPU side) ---------------------------------------------------------------

def build(name, torch):
    """(model, optimizer, make_batch, autocast dtype or None) of a workload."""
    nn = torch.nn
    dev = "cuda"
    torch.manual_seed(1)
    if name == "mlp-fp32":
        torch.backends.cuda.matmul.allow_tf32 = False
        model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(4096, 4096), nn.ReLU())],
                              nn.Linear(4096, 1000)).to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
        b = BATCH[name]
        x, y = torch.randn(b, 4096, device=dev), torch.randint(0, 1000, (b,), device=dev)
        return model, opt, lambda: (x, y), None
    if name == "transformer-bf16":
        layer = nn.TransformerEncoderLayer(1024, 16, 4096, batch_first=True, dropout=0.0)
        model = nn.Sequential(nn.TransformerEncoder(layer, 6), nn.Linear(1024, 1000)).to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
        b = BATCH[name]
        x, y = torch.randn(b, 512, 1024, device=dev), torch.randint(0, 1000, (b * 512,), device=dev)
        return model, opt, lambda: (x, y), torch.bfloat16
    if name == "convnet-bf16":
        def block(cin, cout, stride):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
        model = nn.Sequential(block(3, 64, 2), block(64, 64, 1), block(64, 128, 2), block(128, 128, 1),
                              block(128, 256, 2), block(256, 256, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                              nn.Linear(256, 1000)).to(dev).to(memory_format=torch.channels_last)
        opt = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
        b = BATCH[name]
        x = torch.randn(b, 3, 128, 128, device=dev).to(memory_format=torch.channels_last)
        y = torch.randint(0, 1000, (b,), device=dev)
        return model, opt, lambda: (x, y), torch.bfloat16
    raise ValueError(name)


def step_fn(model, opt, batch, amp, torch):
    def step():
        x, y = batch()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp, enabled=amp is not None):
            out = model(x)
            out = out.reshape(-1, out.shape[-1])
            loss = torch.nn.functional.cross_entropy(out.float(), y)
        loss.backward()
        opt.step()
    return step


def child(name, steps, trace):
    """One process: warm up, then time `steps` steps (or record a trace)."""
    import torch
    model, opt, batch, amp = build(name, torch)
    step = step_fn(model, opt, batch, amp, torch)
    for _ in range(10):  # warm-up: cuDNN/cuBLAS choices, allocator, clocks
        step()
    torch.cuda.synchronize()
    if trace:
        from torch.profiler import ProfilerActivity, profile, schedule
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], record_shapes=True,
                     schedule=schedule(wait=1, warmup=2, active=5)) as prof:
            for _ in range(8):
                step()
                torch.cuda.synchronize()
                prof.step()
        prof.export_chrome_trace(trace)
        return {}
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return {"step_ms": 1e3 * statistics.median(times), "steps": steps}


def run_child(args, name, trace=None, timeout=240):
    cmd = [sys.executable, os.path.abspath(__file__), "_child", name, str(args.steps)] + ([trace] if trace else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{name}: {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def collect(args):
    import torch
    if not torch.cuda.is_available():
        sys.exit("gpu_pair.py collect: no CUDA device")
    os.makedirs(args.outdir, exist_ok=True)
    started = time.time()
    doc = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, "processes": args.processes,
           "steps_per_process": args.steps, "workloads": {}}
    for name in WORKLOADS:
        per = [run_child(args, name)["step_ms"] for _ in range(args.processes)]
        doc["workloads"][name] = {"dtype": DTYPE[name], "batch": BATCH[name], "step_ms_per_process": per,
                                  "step_ms": statistics.median(per)}
        raw = os.path.join(args.outdir, f"{name}.pt.trace.json")
        run_child(args, name, trace=raw)
        with open(raw, "rb") as f, gzip.open(raw + ".gz", "wb") as g:
            shutil.copyfileobj(f, g)
        os.remove(raw)
        with open(os.path.join(args.outdir, "steps.json"), "w") as f:
            json.dump(doc, f, indent=1)
        print(f"{name}: {doc['workloads'][name]['step_ms']:.3f} ms per step ({per})", flush=True)
    left = args.budget - (time.time() - started)
    if args.mlbench and left > 60:
        out = os.path.join(args.outdir, "ceilings.json")
        try:  # results are rewritten after every case: a timeout keeps what was measured
            quick = ["--repetitions", "3", "--min-time", "0.1", "--warmup-time", "0.05"] if args.quick_ceilings else []
            subprocess.run([args.mlbench, "--suite", "all", "--filter", args.ceilings_filter, "--out", out] + quick,
                           timeout=left - 10)
        except subprocess.TimeoutExpired:
            print("gpu_pair.py: the ceilings ran out of budget; keeping what was measured", file=sys.stderr)
    return 0


# ---- compare (anywhere) -------------------------------------------------------------

def gap_json(mlbench, trace, ceilings, target, step_ms=None):
    """`mlbench gap --target`'s ranking; step_ms: the source's step without the profiler (--step-ms)."""
    r = subprocess.run([mlbench, "gap", "--run", trace, "--ceilings", ceilings, "--target", target,
                        "--format", "json"] + (["--step-ms", f"{step_ms:.6g}"] if step_ms else []),
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip())
    return json.loads(r.stdout)["machines"]


def datasheets(config_dir):
    """{stem: (match patterns, {key: value})} of configs/hardware/*.ini."""
    import configparser
    out = {}
    hw = os.path.join(config_dir, "hardware")
    for f in sorted(os.listdir(hw)):
        if not f.endswith(".ini"):
            continue
        cp = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
        cp.read(os.path.join(hw, f))
        pats = [cp["product"].get("name", "")] + [m.strip() for m in cp["product"].get("match", "").split(",")]
        vals = {f"{s}.{k}": v for s in cp.sections() for k, v in cp[s].items()}
        out[f[:-4]] = ([p for p in pats if p], vals)
    return out


def match_sheet(sheets, gpu):
    """The stem whose longest pattern occurs in the CUDA device name (as mlbench matches)."""
    best, best_len = None, 0
    for stem, (pats, _) in sheets.items():
        for p in pats:
            if p.lower() in gpu.lower() and len(p) > best_len:
                best, best_len = stem, len(p)
    return best


def figure(sheets, stem, key):
    try:
        return float(sheets[stem][1][key])
    except (KeyError, ValueError):
        return None


def spread_of(workload):
    """(fastest, slowest) of a workload's per-process step times (ms)."""
    per = workload.get("step_ms_per_process") or [workload["step_ms"]]
    return min(per), max(per)


def beyond_spread(projected, measured, spread):
    """How far a projection lies outside the target's per-process range, as a fraction of the measured step:
    0 inside it. Separate processes of the same step disagree on a shared machine; an error inside that
    range is not one the model can be blamed for."""
    lo, hi = spread
    return max(lo - projected, projected - hi, 0.0) / measured


def stats_line(label, errs):
    return (f"  {label:16s} mean |e| {100 * statistics.mean(abs(e) for e in errs):6.1f}%  max |e| "
            f"{100 * max(abs(e) for e in errs):6.1f}%  bias {100 * statistics.mean(errs):+6.1f}%")


def compare(args):
    a, b = args.a_dir, args.b_dir
    steps = {}
    for d in (a, b):
        p = os.path.join(d, "steps.json")
        if not os.path.exists(p):
            print(f"gpu_pair.py: {p} missing (run `gpu_pair.py collect` there)", file=sys.stderr)
            return 1
        steps[d] = json.load(open(p))
    sheets = datasheets(args.config_dir)
    stems = {d: match_sheet(sheets, steps[d]["gpu"]) for d in (a, b)}
    rows = {"measured": [], "datasheet": []}
    for src, dst in ((a, b), (b, a)):
        for name in WORKLOADS:
            trace = os.path.join(src, f"{name}.pt.trace.json.gz")
            if name not in steps[src]["workloads"] or name not in steps[dst]["workloads"] or not os.path.exists(trace):
                continue
            batches = [steps[x]["workloads"][name].get("batch", FIRST_BATCH[name]) for x in (src, dst)]
            if batches[0] != batches[1]:
                print(f"gpu_pair.py: {name} ran at batch {batches[0]} in {src} and {batches[1]} in {dst}: not paired",
                      file=sys.stderr)
                continue
            here_ms = steps[src]["workloads"][name]["step_ms"]
            there_ms = steps[dst]["workloads"][name]["step_ms"]
            dt = DTYPE[name]
            flops = [figure(sheets, stems[x], f"peak.{dt}") for x in (src, dst)]
            bw = [figure(sheets, stems[x], "memory.bandwidth_gbps") for x in (src, dst)]
            base = {"no change": here_ms,
                    "flops ratio": here_ms * flops[0] / flops[1] if None not in flops else None,
                    "bandwidth ratio": here_ms * bw[0] / bw[1] if None not in bw else None}
            # The datasheet by its file: a bare name may be a reference machine's measured figures.
            sheet = os.path.join(args.config_dir, "hardware", stems[dst] + ".ini") if stems[dst] else None
            spread = spread_of(steps[dst]["workloads"][name])
            for mode, target in (("measured", os.path.join(dst, "ceilings.json")), ("datasheet", sheet)):
                if target is None or (mode == "measured" and not os.path.exists(target)):
                    continue
                m = gap_json(args.mlbench, trace, os.path.join(src, "ceilings.json"), target,
                             None if args.uncalibrated else here_ms)
                pick = [r for r in m["ranking"] if r.get("projected")]
                if not pick:
                    continue
                ratio = pick[0]["step_seconds"] / m["here"]["step_seconds"]
                rows[mode].append((name, steps[src]["gpu"], steps[dst]["gpu"], here_ms, there_ms, here_ms * ratio, base,
                                   spread))
    for mode, rs in rows.items():
        if not rs:
            continue
        print(f"{mode} figures on both sides ({len(rs)} projections):")
        for n, s, d, h, t, p, _, (lo, hi) in rs:
            print(f"  {n:16s} {s[:14]:14s} -> {d[:14]:14s} measured {t:7.3f} ms ({lo:.3f}-{hi:.3f})  "
                  f"projected {p:7.3f} ms ({100 * (p - t) / t:+.1f}%)")
        print(stats_line("model", [(p - t) / t for (_, _, _, h, t, p, _, _) in rs]) +
              f"  speed-up |e| {100 * statistics.mean(abs(t / p - 1) for (_, _, _, h, t, p, _, _) in rs):.1f}%")
        for k in ("no change", "flops ratio", "bandwidth ratio"):
            errs = [(bs[k] - t) / t for (_, _, _, h, t, p, bs, _) in rs if bs[k] is not None]
            if errs:
                print(stats_line(k, errs))
        beyond = [beyond_spread(p, t, sp) for (_, _, _, h, t, p, _, sp) in rs]
        print(f"  the target's own processes spread {100 * statistics.mean((hi - lo) / t for (*_, t, _, _, (lo, hi)) in rs):.1f}% "
              f"of its step on average (fastest to slowest);")
        print(f"  the model's error beyond that spread: mean {100 * statistics.mean(beyond):.1f}%, "
              f"max {100 * max(beyond):.1f}% ({sum(1 for b in beyond if b == 0)} of {len(rs)} projections inside it)")
    return 0


# ---- kernels (anywhere) -------------------------------------------------------------

def kernel_rules(config_dir):
    """[(class, compiled regex)] of configs/gap/kernel_classes.ini's [kernel] section, in file order (first match
    wins, case-insensitive, as mlbench's trace reader applies them)."""
    rules, section = [], None
    with open(os.path.join(config_dir, "gap", "kernel_classes.ini")) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
            elif section == "kernel" and "=" in line:
                key, pattern = (x.strip() for x in line.split("=", 1))
                rules.append((key, re.compile(pattern, re.I)))
    return rules


def step_kernels(path):
    """[[(name, µs)] per profiler step]: each kernel in the step whose host range launched it."""
    ev = json.load(gzip.open(path))["traceEvents"]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev
                   if e.get("cat") == "user_annotation" and e.get("name", "").startswith("ProfilerStep#"))
    launch = {e["args"]["correlation"]: e["ts"] for e in ev
              if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    out = [[] for _ in steps]
    for e in sorted((e for e in ev if e.get("cat") == "kernel"), key=lambda e: e["ts"]):
        t = launch.get(e.get("args", {}).get("correlation"), e["ts"])
        for i, (a, b) in enumerate(steps):
            if a <= t < b:
                out[i].append((e["name"], e["dur"]))
                break
    return [s for s in out if s]


def kernel_class(rules, name):
    """gemm, conv, attention, nccl; the rest (normalization, softmax, elementwise) memory-bound, as gap's step
    table counts them."""
    for cls, pat in rules:
        if pat.search(name):
            return cls if cls in ("gemm", "conv", "attention", "nccl") else "memory-bound"
    return "memory-bound"


def kernels(args):
    """Per class, the time of the kernels both traces ran (matched by name and order, per-step medians) on A and
    on B: what each class gained from one GPU to the other, the ground truth of the kernel model."""
    import difflib
    rules = kernel_rules(args.config_dir)
    for name in WORKLOADS:
        pa, pb = (os.path.join(d, f"{name}.pt.trace.json.gz") for d in (args.a_dir, args.b_dir))
        if not (os.path.exists(pa) and os.path.exists(pb)):
            continue
        sa, sb = step_kernels(pa), step_kernels(pb)
        if not sa or not sb:
            print(f"{name}: no profiler steps with kernels", file=sys.stderr)
            continue
        na, nb = [k for k, _ in sa[0]], [k for k, _ in sb[0]]
        per = {}
        matched = 0
        for i, j, size in difflib.SequenceMatcher(None, na, nb, autojunk=False).get_matching_blocks():
            for k in range(size):
                ta = statistics.median(s[i + k][1] for s in sa if len(s) > i + k)
                tb = statistics.median(s[j + k][1] for s in sb if len(s) > j + k)
                c = per.setdefault(kernel_class(rules, na[i + k]), [0.0, 0.0, 0])
                c[0], c[1], c[2] = c[0] + ta, c[1] + tb, c[2] + 1
                matched += 1
        print(f"{name}: {matched} of {len(na)} / {len(nb)} kernels per step matched")
        for cls, (ta, tb, n) in sorted(per.items()):
            print(f"  {cls:13s} {n:4d} kernels  A {ta / 1e3:8.3f} ms  B {tb / 1e3:8.3f} ms  A/B {ta / tb:.3f}")
    return 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "_child":
        trace = sys.argv[4] if len(sys.argv) > 4 else None
        print(json.dumps(child(sys.argv[2], int(sys.argv[3]), trace)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect")
    c.add_argument("outdir")
    c.add_argument("--mlbench", default=shutil.which("mlbench"))
    c.add_argument("--processes", type=int, default=3)
    c.add_argument("--steps", type=int, default=30)
    c.add_argument("--budget", type=float, default=540, help="seconds for the whole collection")
    c.add_argument("--quick-ceilings", action="store_true", help="3 repetitions of 0.1 s per ceiling case")
    c.add_argument("--ceilings-filter", default=CEILINGS_FILTER,
                   help="which cases of the default suite to run (mlbench --filter; default: its GPU part)")
    p = sub.add_parser("compare")
    p.add_argument("a_dir")
    p.add_argument("b_dir")
    p.add_argument("--mlbench", default=shutil.which("mlbench") or "mlbench")
    p.add_argument("--config-dir", default=os.environ.get("MLBENCH_CONFIG_DIR",
                                                         os.path.join(os.path.dirname(__file__), "..", "configs")))
    p.add_argument("--uncalibrated", action="store_true",
                   help="project the traces' steps as recorded (no --step-ms: the profiler's host time kept)")
    k = sub.add_parser("kernels", help="per kernel class, the time both traces' matched kernels took on A and B")
    k.add_argument("a_dir")
    k.add_argument("b_dir")
    k.add_argument("--config-dir", default=p.get_default("config_dir"))
    args = ap.parse_args()
    return {"collect": collect, "compare": compare, "kernels": kernels}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
