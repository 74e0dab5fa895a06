#!/usr/bin/env python3
"""Hostile inputs for mlbench's readers: each one must give a clear error or a
correct answer within a time and memory bound, never a signal or a hang.

    scripts/hostile_inputs.py [--mlbench build/mlbench] [--big] [--keep] [--only NAME]

Every input is generated into a temporary directory, streamed (never held
whole in memory), then mlbench reads it under `prlimit --as` (address-space
cap) with its wall time and peak RSS measured (wait4's ru_maxrss). The table
printed has one line per input: name, what it checks, outcome, seconds, MB.

Default sizes are small enough for CI but still hostile (a 256 MiB string, a
1 GiB gzip bomb, 10^6 nesting levels); --big uses the sizes of the issue
(a 2 GiB trace holding one 1 GiB string, a 10 GiB gzip bomb). The bounds
checked are the ones docs/reliability.md ("Hostile inputs") promises.
Exit status: 0 when every input held, 1 otherwise. Standard library only.
"""
import argparse
import gzip
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import zlib

MiB = 1 << 20
GiB = 1 << 30

# The promises (docs/reliability.md). Memory is peak RSS of the mlbench
# process; the address-space cap is what makes an unbounded allocation fail
# fast instead of swapping the machine.
RSS_LIMIT_MB = 512
AS_LIMIT = 4 * GiB  # ASan-free build: mlbench maps ~1 GiB of shared libraries' address space
TIME_LIMIT_S = 60.0    # per input, on a loaded 2-core machine (each takes < 10 s here); --big: 600 s


def write_stream(path, *parts):
    """Writes bytes and iterables of bytes chunks to path, one chunk at a time."""
    with open(path, "wb") as f:
        for p in parts:
            for chunk in ([p] if isinstance(p, bytes) else p):
                f.write(chunk)


def gzip_member(data):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()


def write_gzip_bomb(path, head, block, total, tail):
    """A multi-member gzip file (RFC 1952 allows concatenated members; zlib's
    gzread reads them as one stream): `head`, `total` bytes of `block`
    repeated, `tail`. The 4 MiB member is compressed once and written again
    and again, so a 10 GiB bomb takes seconds to make."""
    piece = block * max(1, (4 * MiB) // len(block))
    member = gzip_member(piece)
    with open(path, "wb") as f:
        f.write(gzip_member(head))
        for _ in range(total // len(piece)):
            f.write(member)
        f.write(gzip_member(tail))


def repeat(chunk, total):
    """`total` bytes made of `chunk` repeated, yielded in ~4 MiB pieces."""
    block = chunk * max(1, (4 * MiB) // len(chunk))
    left = total
    while left > 0:
        piece = block[:left]
        yield piece
        left -= len(piece)


def kernel(ts, dur, name="ampere_sgemm_128x64_nn", stream=7, corr=1):
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts, "dur": dur,
            "args": {"device": 0, "stream": stream, "correlation": corr}}


def trace_bytes(events, extra=None):
    doc = {"schemaVersion": 1, "traceEvents": events}
    if extra:
        doc.update(extra)
    return json.dumps(doc).encode()


def steps_trace(n_steps=4, shuffle=False, duplicate=False, overlap=False):
    """A small trace whose answer is known: n_steps ProfilerSteps of 1000 us,
    each with one 600 us GEMM kernel at its start (60% busy). duplicate: every
    kernel recorded twice; overlap: a second kernel on another stream inside
    the first (busy time unchanged). shuffle: events in reverse order."""
    ev = []
    for s in range(n_steps):
        t0 = 1000 + s * 1000
        ev.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % s, "pid": 1, "tid": 1,
                   "ts": t0, "dur": 1000})
        ev.append(kernel(t0, 600, corr=s + 1))
        if duplicate:
            ev.append(kernel(t0, 600, corr=s + 1))
        if overlap:
            ev.append(kernel(t0 + 100, 300, name="ampere_sgemm_64x64_nn", stream=8, corr=100 + s))
    if shuffle:
        ev.reverse()
    return trace_bytes(ev)


def stage_file(value_text, key="flops"):
    """A stage file with one number given as raw JSON text (1e999 parses as inf)."""
    return ('{"format": "mlbench-stages", "version": 1, "run": {"steps": 1},\n'
            ' "stages": [{"name": "fwd", "component": "gemm", "dtype": "bf16", "%s": %s, "seconds": 1}]}\n'
            % (key, value_text)).encode() if key == "flops" else \
        ('{"format": "mlbench-stages", "version": 1, "run": {"steps": 1},\n'
         ' "stages": [{"name": "fwd", "component": "gemm", "dtype": "bf16", "flops": 1e12, "%s": %s}]}\n'
         % (key, value_text)).encode()


class Case:
    def __init__(self, name, what, make, argv, expect, check=None, time_limit=None):
        self.name, self.what, self.make, self.argv = name, what, make, argv
        self.expect = expect          # "error" (with `message` regex) or "ok"
        self.check = check            # (stdout, stderr) -> None or why it is wrong
        self.time_limit = time_limit  # None: TIME_LIMIT_S as set at run time


def run_limited(argv, as_limit, timeout):
    """Runs argv with an address-space cap; returns (rc, stdout, stderr,
    seconds, peak RSS in MB). rc None = killed at the timeout; rc < 0 = the
    signal that ended it. The child's own rusage comes from wait4."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (as_limit, as_limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=fo, stderr=fe, preexec_fn=limit)
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        _, status, ru = os.wait4(p.pid, 0)
        secs = time.monotonic() - t0
        killed = not timer.is_alive()
        timer.cancel()
        p.returncode = os.waitstatus_to_exitcode(status)
        fo.seek(0)
        fe.seek(0)
        out, err = fo.read(), fe.read()
    rc = None if killed and p.returncode < 0 else p.returncode
    return rc, out, err, secs, ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mlbench", default=os.environ.get("MLBENCH", "build/mlbench"))
    ap.add_argument("--big", action="store_true", help="the issue's sizes: 2 GiB trace with a 1 GiB string, 10 GiB bomb")
    ap.add_argument("--keep", action="store_true", help="keep the generated files (prints where)")
    ap.add_argument("--only", help="run only inputs whose name matches this regex")
    ap.add_argument("--workdir", help="where to generate the inputs (default: a temporary directory)")
    a = ap.parse_args()
    mlbench = os.path.abspath(a.mlbench)
    # Under AddressSanitizer (the CI's build-asan) the shadow memory needs
    # terabytes of address space and every allocation costs more: no address
    # space cap there, and three times the RSS bound.
    global RSS_LIMIT_MB, AS_LIMIT
    with open(mlbench, "rb") as f:
        asan = b"__asan_init" in f.read()
    global TIME_LIMIT_S
    if asan:
        RSS_LIMIT_MB *= 3
        TIME_LIMIT_S *= 3
        AS_LIMIT = resource.RLIM_INFINITY
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ceilings = os.path.join(src, "tests", "data", "gap_here.json")
    work = tempfile.mkdtemp(prefix="mlbench-hostile-", dir=a.workdir)
    P = lambda n: os.path.join(work, n)

    string_len = GiB if a.big else 256 * MiB
    bomb_len = 10 * GiB if a.big else GiB
    big_time = 600.0 if a.big else None
    depth = 1_000_000
    stage_len = 100 * MiB   # over the 64 MiB stage-file bound
    results_len = 300 * MiB # over the 256 MiB results-file bound

    def huge_string(path):
        head = b'{"schemaVersion": 1, "traceEvents": [' + json.dumps(kernel(1, 1)).encode() + \
            b', {"ph": "X", "cat": "kernel", "name": "'
        tail = b'", "pid": 0, "tid": 7, "ts": 5, "dur": 1, "args": {"device": 0}}'
        # --big: another 1 GiB of ordinary events after the string (a 2 GiB trace).
        rest = b''.join([b', ' + json.dumps(kernel(10 + i, 1, corr=i)).encode() for i in range(1000)])
        n_rest = (GiB // len(rest)) if a.big else 0
        write_stream(path, head, repeat(b"a", string_len), tail, (rest for _ in range(n_rest)), b"]}")

    def nested_trace(path):
        write_stream(path, b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"x": ',
                            repeat(b"[", depth), repeat(b"]", depth), b'}}]}')

    def nested_top(path):
        write_stream(path, b'{"deviceProperties": ', repeat(b"[", depth), repeat(b"]", depth),
                            b', "traceEvents": []}')

    def nested_stage(path):
        write_stream(path, b'{"format": "mlbench-stages", "version": 1, "stages": ', repeat(b"[", depth),
                            repeat(b"]", depth), b'}')

    def nested_results(path):
        write_stream(path, b'{"schema": "mlbench-results", "schema_version": 1, "cases": ',
                            repeat(b"[", depth), repeat(b"]", depth), b'}')

    def bomb(path):
        write_gzip_bomb(path, b'{"traceEvents": [', b" ", bomb_len, b"]}")

    def bomb_events(path):
        ev = b"".join(json.dumps(kernel(1, 1)).encode() + b", " for _ in range(64))
        write_gzip_bomb(path, b'{"traceEvents": [', ev, bomb_len, json.dumps(kernel(1, 1)).encode() + b"]}")

    def self_include(path):
        write_stream(path, b"[global]\ninclude = %s\n\n[h]\ncomponent = hostmem\nbackend = stream\n"
                            % os.path.basename(path).encode())

    def mutual_include(path):
        other = P("loop_b.ini")
        write_stream(other, b"[global]\ninclude = %s\n" % os.path.basename(path).encode())
        write_stream(path, b"[global]\ninclude = loop_b.ini\n\n[h]\ncomponent = hostmem\nbackend = stream\n")

    def diamond_include(path):
        # Seven levels, each including the next ten times: 10^7 loads if
        # followed naively, no cycle.
        for lvl in range(7):
            nxt = "d%d.ini" % (lvl + 1)
            body = b"[global]\ninclude = " + b", ".join([nxt.encode()] * 10) + b"\n"
            write_stream(P("d%d.ini" % lvl), body)
        write_stream(P("d7.ini"), b"[h]\ncomponent = hostmem\nbackend = stream\n")
        shutil.copy(P("d0.ini"), path)

    def stage_big(path):
        head = b"# mlbench-stages version 1\nname,component,seconds\n"
        write_stream(path, head, repeat(b"other,other,1\n", stage_len))

    def results_big(path):
        write_stream(path, b'{"schema": "mlbench-results", "schema_version": 1, "cases": [',
                            repeat(b" ", results_len), b"]}")

    def list_bomb(path):
        # Lines stay under the INI reader's 200 characters.
        vals = lambda f: ",".join(f(i) for i in range(1, 31)).encode()
        write_stream(path, b"[d]\ncomponent = disk\nbackend = pread\n",
                            b"block_size = " + vals(lambda i: "%dk" % i) + b"\n",
                            b"seed = " + vals(str) + b"\n",
                            b"ios_per_iter = " + vals(str) + b"\n",
                            b"file_size = " + vals(lambda i: "%dm" % i) + b"\n",
                            b"pattern = random, sequential\nmode = direct, cached\n")

    def long_line(path):
        write_stream(path, b"[h]\ncomponent = hostmem\nbackend = stream\ndescription = " + b"x" * 300 + b"\n")

    def writer(data):
        return lambda path: write_stream(path, data)

    def stage_csv(cell):
        return writer(("# mlbench-stages version 1\nname,component,dtype,flops,seconds\nfwd,gemm,bf16,%s,1\n"
                       % cell).encode())

    def answer(expect_util, expect_kernels=None, ignored=0):
        """The JSON of `mlbench trace`: GPU busy fraction, kernels kept, and
        the warning that counts the events left out."""
        def check(out, err):
            try:
                d = json.loads(out)
            except ValueError as e:
                return "output is not JSON: %s" % e
            u = d.get("gpu_utilization")
            if u is None or abs(u - expect_util) > 1e-6:
                return "gpu_utilization %r, expected %r" % (u, expect_util)
            if expect_kernels is not None:
                got = d.get("evidence", {}).get("devices", [{}])
                n = sum(x.get("kernels", 0) for x in got) if isinstance(got, list) else None
                if n is not None and n != expect_kernels:
                    return "kernels %r, expected %r" % (n, expect_kernels)
            said = [w for w in d.get("warnings", []) if "without a usable ts/dur were ignored" in w]
            if ignored and not any(w.startswith("%d " % ignored) for w in said):
                return "no warning that %d events were ignored: %r" % (ignored, said)
            if not ignored and said:
                return "unexpected warning: %r" % said
            return None
        return check

    def no_nonfinite(out, err):
        if re.search(rb"\b(nan|inf|infinity)\b", out, re.I):
            return "non-finite number in the output"
        return None

    trace = [mlbench, "trace"]
    gap = lambda f: [mlbench, "gap", "--run", f, "--ceilings", ceilings, "--format", "json"]
    cases = [
        Case("huge_string", "trace with one %d MiB string%s" % (string_len // MiB, " (2 GiB file)" if a.big else ""),
             huge_string, trace + [P("huge_string.json")], "error", time_limit=big_time),
        Case("deep_nesting_args", "10^6 nested arrays inside an event's args", nested_trace,
             trace + [P("deep_nesting_args.json")], "error"),
        Case("deep_nesting_top", "10^6 nested arrays as deviceProperties", nested_top,
             trace + [P("deep_nesting_top.json")], "error"),
        Case("deep_nesting_stage", "stage file with 10^6 nested arrays", nested_stage,
             gap(P("deep_nesting_stage.json")), "error"),
        Case("deep_nesting_results", "results file with 10^6 nested arrays (report)", nested_results,
             [mlbench, "report", P("deep_nesting_results.json")], "error"),
        Case("gzip_bomb", "gzip bomb: %d GiB of blanks" % (bomb_len // GiB), bomb, trace + [P("gzip_bomb.json.gz")],
             "error", time_limit=big_time),
        Case("gzip_bomb_events", "gzip bomb: %d GiB of repeated events" % (bomb_len // GiB), bomb_events,
             trace + [P("gzip_bomb_events.json.gz")], "error", time_limit=big_time),
        Case("stage_inf", "stage flops = 1e999 (inf)", writer(stage_file("1e999")), gap(P("stage_inf.json")), "error"),
        Case("stage_negative", "stage flops = -1", writer(stage_file("-1")), gap(P("stage_negative.json")), "error"),
        Case("stage_huge", "stage flops = 1e308", writer(stage_file("1e308")), gap(P("stage_huge.json")), "error"),
        Case("stage_big_ok", "stage flops = 1e24 (large but real: an answer)", writer(stage_file("1e24")),
             gap(P("stage_big_ok.json")), "ok", check=no_nonfinite),
        Case("stage_tiny_seconds", "stage seconds = 1e-308", writer(stage_file("1e-308", key="seconds")),
             gap(P("stage_tiny_seconds.json")), "error"),
        Case("stage_file_huge", "stage file of %d MiB" % (stage_len // MiB), stage_big, gap(P("stage_file_huge.csv")),
             "error"),
        Case("stage_csv_nan", "stage CSV flops = nan", stage_csv("nan"), gap(P("stage_csv_nan.csv")), "error"),
        Case("stage_csv_inf", "stage CSV flops = inf", stage_csv("inf"), gap(P("stage_csv_inf.csv")), "error"),
        Case("stage_csv_huge", "stage CSV flops = 1e308", stage_csv("1e308"), gap(P("stage_csv_huge.csv")), "error"),
        Case("results_huge", "results file of %d MiB (report)" % (results_len // MiB), results_big,
             [mlbench, "report", P("results_huge.json")], "error"),
        Case("trace_nan", "trace dur = NaN", writer(b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", '
                                                   b'"ts": 1, "dur": NaN, "args": {"device": 0}}]}'),
             trace + [P("trace_nan.json")], "error"),
        Case("trace_inf", "trace ts = 1e999, dur = 1e308", writer(trace_bytes([kernel(1e999, 5), kernel(1, 1e308),
                                                                              kernel(10, 10)]).replace(b"Infinity", b"1e999")),
             trace + [P("trace_inf.json")], "ok", check=answer(1.0, 1, ignored=2)),
        Case("trace_negative", "trace negative ts and dur", writer(trace_bytes([kernel(-5, 10), kernel(20, -3),
                                                                               kernel(100, 10)])),
             trace + [P("trace_negative.json")], "ok", check=answer(20 / 115, 2, ignored=1)),
        Case("trace_out_of_order", "timestamps in reverse order (same answer as sorted)",
             writer(steps_trace(shuffle=True)), trace + [P("trace_out_of_order.json")], "ok", check=answer(0.6)),
        Case("trace_duplicates", "every kernel recorded twice (busy time unchanged)",
             writer(steps_trace(duplicate=True)), trace + [P("trace_duplicates.json")], "ok", check=answer(0.6)),
        Case("trace_overlap", "overlapping kernels on two streams (busy time = union)",
             writer(steps_trace(overlap=True)), trace + [P("trace_overlap.json")], "ok", check=answer(0.6)),
        Case("include_self", "job file that includes itself", self_include,
             [mlbench, "--suite", P("include_self.ini"), "--filter", "^$", "-q"], "error", ),
        Case("include_loop", "two job files including each other", mutual_include,
             [mlbench, "--suite", P("include_loop.ini"), "--filter", "^$", "-q"], "error"),
        Case("suite_list_bomb", "suite whose value lists multiply to 3.2x10^6 cases", list_bomb,
             [mlbench, "--suite", P("suite_list_bomb.ini"), "--filter", "^$", "-q"], "error"),
        Case("suite_long_line", "job file line of 300 characters", long_line,
             [mlbench, "--suite", P("suite_long_line.ini"), "--filter", "^$", "-q"], "error"),
        Case("include_diamond", "7 levels x 10 includes of the next file (10^7 paths)", diamond_include,
             [mlbench, "--suite", P("include_diamond.ini"), "--filter", "^$", "-q"], "error"),
    ]
    # What the error must say (a regex on its last line).
    messages = {
        "huge_string": r"longer than 16 MiB",
        "deep_nesting_args": r"nested deeper than 1000",
        "deep_nesting_top": r"nested deeper than 1000",
        "deep_nesting_stage": r"nested deeper than 1000",
        "deep_nesting_results": r"nested deeper than 1000",
        "gzip_bomb": r"gzip expands more than",
        "gzip_bomb_events": r"gzip expands more than",
        "stage_inf": r"flops: not a finite number",
        "stage_negative": r"flops: negative value",
        "stage_huge": r"flops: .*beyond any real run",
        "stage_tiny_seconds": r"not a finite rate",
        "stage_file_huge": r"larger than 64 MiB",
        "stage_csv_nan": r"flops'?: not a finite number",
        "stage_csv_inf": r"flops'?: not a finite number",
        "stage_csv_huge": r"flops'?: .*beyond any real run",
        "results_huge": r"larger than 256 MiB",
        "trace_nan": r"byte \d+",
        "suite_list_bomb": r"cases; a suite holds at most",
        "suite_long_line": r":4: line longer than",
        "include_self": r"include cycle.*includes itself",
        "include_loop": r"include cycle",
        "include_diamond": r"more than \d+ job files",
    }

    rows, bad = [], 0
    for c in cases:
        if a.only and not re.search(a.only, c.name):
            continue
        target = next((x for x in c.argv[1:] if x.startswith(work)), None)
        t0 = time.monotonic()
        c.make(target)
        gen = time.monotonic() - t0
        size = os.path.getsize(target)
        c.time_limit = c.time_limit or TIME_LIMIT_S
        rc, out, err, secs, rss = run_limited(c.argv, AS_LIMIT, c.time_limit)
        msg = err.decode(errors="replace").strip().splitlines()
        msg = msg[-1] if msg else ""
        why = None
        if rc is None:
            outcome = "HANG (killed after %.0f s)" % c.time_limit
            why = outcome
        elif rc < 0:
            outcome = "SIGNAL %d" % -rc
            why = outcome
        elif c.expect == "error":
            outcome = "error %d" % rc
            if rc == 0:
                why = "accepted, expected a clear error"
            elif not re.search(messages.get(c.name, "."), msg, re.I):
                why = "message does not say what is wrong: %r" % msg
        else:
            outcome = "ok" if rc == 0 else "error %d" % rc
            if rc != 0:
                why = "expected an answer, got: %s" % msg
            elif c.check:
                why = c.check(out, err)
        if why is None and secs > c.time_limit:
            why = "took %.1f s (bound %.0f s)" % (secs, c.time_limit)
        if why is None and rss > RSS_LIMIT_MB:
            why = "peak RSS %.0f MB (bound %d MB)" % (rss, RSS_LIMIT_MB)
        bad += why is not None
        rows.append((c.name, "%.0f MB" % (size / 1e6) if size >= 1e6 else "%d B" % size, outcome,
                     "%.2f" % secs, "%.0f" % rss, "FAIL: " + why if why else "held",
                     msg[:110] if rc not in (0, None) else ""))
        print("%-22s %s -> %s in %.2f s (generated in %.1f s)" % (c.name, c.what, outcome, secs, gen),
              file=sys.stderr)
        if not a.keep:
            for f in os.listdir(work):
                os.unlink(os.path.join(work, f))

    w = [max(len(r[i]) for r in rows + [("input", "size", "outcome", "seconds", "max_rss_mb", "verdict", "")])
         for i in range(6)]
    hdr = ("input", "size", "outcome", "seconds", "max_rss_mb", "verdict")
    print("  ".join(h.ljust(w[i]) for i, h in enumerate(hdr)) + "  message")
    for r in rows:
        print("  ".join(r[i].ljust(w[i]) for i in range(6)) + "  " + r[6])
    print("bounds: %.0f s per input (%s), peak RSS %d MB, address space %s%s" %
          (TIME_LIMIT_S, "600 s for --big inputs" if a.big else "default sizes", RSS_LIMIT_MB,
           "%d GiB" % (AS_LIMIT // GiB) if not asan else "unlimited", " (ASan build)" if asan else ""))
    if a.keep:
        print("inputs kept in %s" % work)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
