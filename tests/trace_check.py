#!/usr/bin/env python3
"""Independent figures for a PyTorch profiler trace, to check the C reader.

Usage: trace_check.py TRACE.json[.gz] CLASSES.ini > figures.json

Loads the whole trace with the standard json module (numbers as Decimal, so
microsecond timestamps convert to integer nanoseconds exactly) and computes,
with a boundary sweep rather than the reader's merge-and-intersect:

  per device: kernel/memcpy/memset counts, kernel counts per class (rules
  from the ini, first match wins), busy ns (union over streams), window ns
  (first start to last end), host-wait idle ns (idle while a sync call, a
  blocking copy, an asynchronous copy to or from pageable memory, or a
  DataLoader annotation is open), memcpy bytes by
  direction/memory;
  steps: ProfilerStep#N durations and busy ns per device inside each, or,
  when the host runs ahead of the GPU, the steps cut on the GPU's timeline
  (docs/traces.md "The step table"; written again here from that text:
  kernels to the step whose launch call they came from, by correlation id);
  the mean step; launch / sync call counts; collective kernel counts.

Standard library only (the project's Python helpers stay stdlib-only).
"""
import decimal
import gzip
import json
import re
import sys

D = decimal.Decimal


def to_ns(v):
    if isinstance(v, str):
        v = D(v)
    return int((D(v) * 1000).quantize(D(1), rounding=decimal.ROUND_HALF_UP))


def load_rules(path):
    rules = {}
    section = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("["):
                section = line.strip("[]")
                rules.setdefault(section, [])
                continue
            key, _, value = line.partition("=")
            rules[section].append((key.strip(), re.compile(value.strip(), re.I)))
    return rules


def classify(rules, section, name, default):
    for key, rx in rules.get(section, []):
        if rx.search(name):
            return key
    return default


def sweep(busy, wait, lo, hi):
    """Lengths inside [lo, hi) where some busy interval is open, and where
    no busy but some wait interval is open."""
    points = []
    for s, e in busy:
        points.append((s, 0, 1))
        points.append((e, 0, -1))
    for s, e in wait:
        points.append((s, 1, 1))
        points.append((e, 1, -1))
    points.sort()
    nb = nw = 0
    busy_ns = wait_ns = 0
    prev = None
    for t, kind, delta in points:
        if prev is not None:
            a, b = max(prev, lo), min(t, hi)
            if b > a:
                if nb > 0:
                    busy_ns += b - a
                elif nw > 0:
                    wait_ns += b - a
        if kind == 0:
            nb += delta
        else:
            nw += delta
        prev = t
    return busy_ns, wait_ns


def direction(name, args):
    for tag, d in (("HtoD", "h2d"), ("DtoH", "d2h"), ("DtoD", "d2d"), ("PtoP", "p2p")):
        if tag in name or tag in str(args.get("kind", "")):
            return d
    return "unknown"


def memory(name, d):
    inside = name[name.find("("):] if "(" in name else ""
    if "Pageable" in inside:
        return "pageable"
    if "Pinned" in inside:
        return "pinned"
    if "Device -> Device" in inside or d in ("d2d", "p2p"):
        return "device"
    return "unknown"


def gpu_windows(steps, calls, spans):
    """The steps cut on the GPU's timeline, or None when the host's
    ProfilerSteps stand. calls: correlation -> (ts, end) of launch calls;
    spans: (start, end, correlation) of the main device's GPU events."""
    n = len(steps)

    def step_of(ts):
        for k, (s, e) in enumerate(steps):
            if s <= ts < e:
                return k
        return None

    last = [None] * n
    owner = []
    for start, end, corr in spans:
        k = step_of(calls[corr][0]) if corr in calls else None
        owner.append(k)
        if k is not None and (last[k] is None or end > last[k]):
            last[k] = end
    if n == 0 or any(x is None for x in last):
        return None
    over = sum(1 for (s, e), x in zip(steps, last) if x > e + max(10000, (e - s) // 100))
    if 2 * over < n:
        return None
    first = min((sp for sp, k in zip(spans, owner) if k == 0), key=lambda sp: sp[0])
    queued = first[2] in calls and first[0] > calls[first[2]][1] + 50000
    free = steps[0][0]
    for start, end, _ in ([] if queued else spans):
        if start < first[0] and end > free:
            free = end
    # without the later steps: queued behind unrecorded work, the first event; else the end of the work before
    # it, or the step's start
    base = first[0] if queued else min(free, first[0]) if free > steps[0][0] else steps[0][0]
    # the later steps' head: each one's first GPU event less the end of the step before's GPU work (the median;
    # negative when a prefetch starts before that end)
    heads = sorted(min(sp[0] for sp, o in zip(spans, owner) if o == k) - last[k - 1] for k in range(1, n))
    m = len(heads)
    head = None if m == 0 else heads[m // 2] if m % 2 else int((heads[m // 2 - 1] + heads[m // 2]) / 2)  # C's
    at = base
    if head is not None and head < 0 and first[0] - head > at:
        at = first[0] - head
    elif head is not None and head >= 0 and not queued and free == steps[0][0] and first[0] - head > at:
        at = first[0] - head
    shortest = min((last[k] - last[k - 1] for k in range(1, n) if last[k] - last[k - 1] > 0), default=0)
    if at > base and shortest > 0 and last[0] - at < shortest:  # never shorter than the shortest later step
        at = max(last[0] - shortest, base)
    if at >= last[0]:
        at = base
    out = []
    for x in last:
        end = max(x, at)
        if end <= at:
            return None
        out.append((at, end))
        at = end
    return out


def main():
    trace_path, ini_path = sys.argv[1], sys.argv[2]
    rules = load_rules(ini_path)
    opener = gzip.open if trace_path.endswith(".gz") else open
    with opener(trace_path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=D)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    devices = {}
    wait = []
    calls = {}  # correlation -> (ts, end) of kernel launch calls
    steps = []
    launches = syncs = collectives = 0
    async_copies = {}  # correlation -> (ts, end) of cudaMemcpyAsync-style calls no [runtime] kind takes
    pageable = set()  # correlation ids of copies between the device and pageable memory
    for e in events:
        if e.get("ph") != "X" or "ts" not in e or "dur" not in e:
            continue
        cat, name, args = e.get("cat", ""), e.get("name", ""), e.get("args", {}) or {}
        ts, dur = to_ns(e["ts"]), to_ns(e["dur"])
        if cat in ("kernel", "gpu_memcpy", "gpu_memset"):
            dev = args.get("device", e.get("pid"))
            d = devices.setdefault(dev, {"kernels": 0, "memcpys": 0, "memsets": 0,
                                         "classes": {}, "copies": {}, "iv": []})
            d["iv"].append((ts, ts + dur))
            d.setdefault("spans", []).append((ts, ts + dur, args.get("correlation")))
            d["time"] = d.get("time", 0) + dur
            if cat == "kernel":
                d["kernels"] += 1
                c = classify(rules, "kernel", name, "other")
                c = "other" if c == "layout" else c  # counted apart, read as other (trace_classes.c)
                d["classes"][c] = d["classes"].get(c, 0) + 1
                collectives += c == "nccl"
            elif cat == "gpu_memcpy":
                d["memcpys"] += 1
                dr = direction(name, args)
                key = dr + " " + memory(name, dr)
                if memory(name, dr) == "pageable" and args.get("correlation"):
                    pageable.add(args["correlation"])
                d["copies"][key] = d["copies"].get(key, 0) + int(args.get("bytes", 0))
            else:
                d["memsets"] += 1
        elif cat in ("cuda_runtime", "cuda_driver"):
            kind = classify(rules, "runtime", name, None)
            launches += kind == "launch"
            if kind == "launch" and "correlation" in args:
                calls[args["correlation"]] = (ts, ts + dur)
            syncs += kind == "sync"
            if kind in ("sync", "blocking"):
                wait.append((ts, ts + dur))
            elif kind is None and ("Memcpy" in name or "Memset" in name) and args.get("correlation"):
                async_copies[args["correlation"]] = (ts, ts + dur)
        elif cat == "user_annotation":
            kind = classify(rules, "annotation", name, None)
            if kind == "step":
                steps.append((ts, ts + dur))
            elif kind == "dataloader":
                wait.append((ts, ts + dur))
    # an asynchronous copy to or from pageable memory waits as a blocking copy does (CUDA's API sync notes)
    wait += [iv for corr, iv in async_copies.items() if corr in pageable]
    # the copies and memsets a step's host code enqueued are its GPU work, as its kernels are
    for corr, iv in async_copies.items():
        calls.setdefault(corr, iv)
    steps.sort()
    out = {"devices": [], "steps": [], "launches": launches, "syncs": syncs,
           "collective_kernels": collectives, "timeline": "host"}
    if devices:  # the main device: the most GPU time (the first of equals, in the reader's order)
        main_dev = max(devices.values(), key=lambda d: d["time"])
        win = gpu_windows(steps, calls, main_dev["spans"])
        if win:
            steps, out["timeline"] = win, "gpu"
    for dev in sorted(devices, key=lambda x: (str(type(x)), x)):
        d = devices[dev]
        lo = min(s for s, _ in d["iv"])
        hi = max(e for _, e in d["iv"])
        busy, hw = sweep(d["iv"], wait, lo, hi)
        out["devices"].append({"id": dev, "kernels": d["kernels"], "memcpys": d["memcpys"],
                               "memsets": d["memsets"], "classes": d["classes"],
                               "copies": d["copies"], "busy_ns": busy, "window_ns": hi - lo,
                               "host_wait_idle_ns": hw})
    for s, e in steps:
        per = {}
        for dev, d in devices.items():
            busy, hw = sweep(d["iv"], wait, s, e)
            per[str(dev)] = {"busy_ns": busy, "host_wait_idle_ns": hw}
        out["steps"].append({"ns": e - s, "devices": per})
    durs = sorted(e - s for s, e in steps)
    n = len(durs)
    out["step_median_ns"] = (durs[n // 2] if n % 2 else (durs[n // 2 - 1] + durs[n // 2]) / 2) if n else None
    out["step_mean_ns"] = sum(durs) / n if n else None
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
