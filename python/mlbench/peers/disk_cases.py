"""peers disk-cases (scripts/fio_compare.py): mlbench's disk numbers next to fio's, case by case.

  python3 -m mlbench.peers disk-cases [options]

Runs the disk cases of a job file with mlbench, keeping mlbench's own test file
(MLBENCH_DISK_KEEP=1 with --disk-dir; the path is each case's "file" info),
then, case by case, runs mlbench on that file (--disk-file) and fio right
after it (before it in every other round) with the same block size, queue depth, engine (pread -> psync,
io_uring -> io_uring, mmap -> mmap), direct flag, access pattern and
page-cache state, --rounds times (default 3), and prints for every case the
median of the rounds' mlbench / fio ratios (and best / best). The file is
removed at the end, also on Ctrl-C.

Same-conditions choices (docs/disk.md explains each):
  --iodepth_batch_submit=qd --iodepth_batch_complete_max=qd
                      io_uring: mlbench reaps what has completed and submits
                      the refills in one call; fio submits one read per call
                      by default, which halves 4 KiB page-cache IOPS
  --fixedbufs --registerfiles
                      io_uring: mlbench reads into registered buffers from a
                      registered file (registered = auto, its default)
  --iomem_align=4096  mlbench's buffers are page aligned; fio's default malloc
                      buffer is not, and copies into a misaligned buffer are
                      ~40% slower for 1 MiB page-cache reads on some CPUs
  --norandommap       mlbench draws offsets uniformly with replacement
                      (pread, io_uring); the mmap cases keep fio's random map,
                      since a repeated offset would hit a page already faulted
  --pre_read=1        cached mode: the whole file in the page cache first
  --invalidate=1      mmap mode: the page cache dropped first
  --readonly          fio never writes the file

Exit status: 0 every case within --tolerance (default 5%), 1 otherwise, 2 usage.
Standard library only.
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile

from .common import PROG, die, run_fio, run_mlbench, set_nice, stat_file

DEFAULT_JOB = """\
; written by mlbench.peers disk-cases (scripts/fio_compare.py)
[global]
repetitions = {reps}
min_time = {min_time}
warmup_time = 0.3
file_size = {size}

[pread-direct]
component = disk
backend = pread
mode = direct
pattern = random, sequential
block_size = 4k, 1m

[uring-direct]
component = disk
backend = io_uring
mode = direct
pattern = random
block_size = 4k, 64k, 1m
qd = 1, 32

[uring-direct-seq]
component = disk
backend = io_uring
mode = direct
pattern = sequential
block_size = 1m
qd = 32

[pread-cached]
component = disk
backend = pread
mode = cached
pattern = random
block_size = 4k, 1m

[uring-cached]
component = disk
backend = io_uring
mode = cached
pattern = random
block_size = 4k, 1m
qd = 32

[mmap-cold]
component = disk
backend = mmap
pattern = random
block_size = 4k
advice = random
"""

ENGINES = {"pread": "psync", "io_uring": "io_uring", "mmap": "mmap"}


def fio_command(case, path, runtime, ramp):
    """The fio command line equivalent to one mlbench case, or (None, why)."""
    p = case["params"]
    backend = case["backend"]
    if backend not in ENGINES:
        return None, f"no fio engine for backend {backend}"
    random = p["pattern"] == "random"
    cmd = [
        "fio", "--name=mlbench-compare", f"--filename={path}", "--readonly",
        f"--ioengine={ENGINES[backend]}", f"--rw={'randread' if random else 'read'}",
        f"--bs={p['block_size']}", f"--iodepth={p.get('qd', '1')}",
        "--time_based", f"--runtime={runtime}", f"--ramp_time={ramp}",
        "--iomem_align=4096", "--randrepeat=0", "--output-format=json",
    ]
    if backend == "io_uring":
        # mlbench reaps every completion that is there; with submit = batch
        # (its default) it submits all the refills with one io_uring_enter,
        # with submit = each one read per call, as fio's default.
        qd = p.get("qd", "1")
        if p.get("submit", "batch") == "batch":
            cmd.append(f"--iodepth_batch_submit={qd}")
        cmd.append(f"--iodepth_batch_complete_max={qd}")
        # mlbench registers its buffers and file unless told otherwise (or
        # refused: then its note says so): fio's equivalent.
        if p.get("registered", "auto") == "auto":
            cmd += ["--fixedbufs", "--registerfiles"]
        if p.get("sqpoll") == "on":
            cmd.append("--sqthread_poll=1")
        if p.get("iopoll") == "on":
            cmd.append("--hipri")
    if backend == "mmap":
        advice = p.get("advice", "normal")
        # fio's mmap engine madvises RANDOM/SEQUENTIAL after the pattern when
        # fadvise_hint is on, nothing when it is off.
        if advice == "normal":
            cmd.append("--fadvise_hint=0")
        elif (advice == "random") == random:
            cmd.append("--fadvise_hint=1")
        else:
            return None, f"fio cannot combine advice={advice} with pattern={p['pattern']}"
        cmd += ["--direct=0", "--invalidate=1"]
    else:
        cmd.append("--norandommap")
        if p["mode"] == "direct":
            cmd.append("--direct=1")
        else:
            cmd += ["--direct=0", "--pre_read=1"]
    return cmd, None


def disk_cases(binary, job, out, extra, keep=False):
    """The disk cases of one mlbench run of `job` (mlbench.results.Case); keep: mlbench keeps its test file."""
    cases = run_mlbench(binary, job, out, extra, {"MLBENCH_DISK_KEEP": "1"} if keep else None)
    return [c for c in cases if c.component == "disk"]


def exact(case_id):
    """A POSIX extended regex that matches exactly this case id."""
    return "^" + re.sub(r"([][.^$*+?(){}|\\])", r"\\\1", case_id) + "$"


def main(argv=None, prog=None, name="peers"):
    """The command line; argv without the program's name (default sys.argv[1:]), prog as usage names it, name as
    messages do (scripts/fio_compare.py: "fio_compare")."""
    PROG[0] = name
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mlbench", default=os.environ.get("MLBENCH", "mlbench"), help="the mlbench binary")
    ap.add_argument("--suite", help="job file with disk cases (default: a built-in comparison set)")
    ap.add_argument("--filter", help="passed to mlbench --filter")
    ap.add_argument("--dir", default=".", help="where the test file goes (default: the current directory)")
    ap.add_argument("--size", default="1g", help="file_size of the built-in job (default 1g)")
    ap.add_argument("--min-time", default="1", help="mlbench min_time of the built-in job (default 1 s)")
    ap.add_argument("--repetitions", default="5", help="mlbench repetitions of the built-in job")
    ap.add_argument("--runtime", type=float, default=5, help="fio seconds per case (default 5)")
    ap.add_argument("--ramp", type=float, default=1, help="fio ramp_time per case (default 1)")
    ap.add_argument("--rounds", type=int, default=3, help="alternate mlbench and fio N times per case, compare medians (default 3)")
    ap.add_argument("--stat", choices=("best", "median"), default="median",
                    help="ratio checked against --tolerance: the median of the rounds' ratios (default; each "
                         "round runs the two tools back to back, in alternating order) or best / best")
    ap.add_argument("--tolerance", type=float, default=0.05, help="allowed |ratio - 1| (default 0.05)")
    ap.add_argument("--nice", type=int, default=0, help="run mlbench and fio under nice -n N (e.g. -10 as root)")
    ap.add_argument("--json", help="also write the comparison as JSON to this file")
    args = ap.parse_args(argv)
    set_nice(args.nice)
    if shutil.which("fio") is None:
        die("fio is not installed (apt-get install fio)")
    if shutil.which(args.mlbench) is None and not os.access(args.mlbench, os.X_OK):
        die(f"mlbench binary not found: {args.mlbench} (use --mlbench)")
    if not os.path.isdir(args.dir):
        die(f"--dir {args.dir}: not a directory")

    work = tempfile.mkdtemp(prefix="mlbench-fio-", dir=os.path.abspath(args.dir))
    datadir = os.path.join(work, "data")
    os.mkdir(datadir)
    # Ctrl-C: fall through the finally below so the kept files go.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    job = args.suite
    if not job:
        job = os.path.join(work, "compare.ini")
        with open(job, "w") as f:
            f.write(DEFAULT_JOB.format(reps=args.repetitions, min_time=args.min_time, size=args.size))

    ml, fio, why, req = {}, {}, {}, {}
    try:
        # Pass 1: mlbench writes its pattern file (kept) and lists the cases;
        # the short timing of this pass is not used.
        listing = ["--disk-dir", datadir, "--repetitions", "1", "--min-time", "0.01"]
        if args.filter:
            listing += ["--filter", args.filter]
        cases = disk_cases(args.mlbench, job, os.path.join(work, "list.json"), listing, keep=True)
        order = [c.id for c in cases]
        for c in cases:
            ml[c.id], fio[c.id] = [], []
            req[c.id] = ([], [])
            if not c.usable:
                why[c.id] = f"mlbench {c.state}: {c.reason}"
        files = {c.json.get("info", {}).get("file") for c in cases if c.usable}
        # Then, case by case, mlbench on that file and fio right after it.
        # The file is passed as --disk-file: the same bytes, read the same
        # way; only the verification differs (reference reads instead of the
        # pattern), and all of it is outside mlbench's timed region.
        for rnd in range(args.rounds):
            for c in cases:
                cid = c.id
                if cid in why:
                    continue
                path = c.json["info"]["file"]
                dev_stat = stat_file(path)
                cmd, err = fio_command(c.json, path, args.runtime, args.ramp)
                if cmd is None:
                    why[cid] = err
                    continue
                # Odd rounds run fio first, so that whatever the device does
                # after a pause (burst credits, host caches) does not always
                # favour the same tool.
                fio_first = rnd % 2 == 1
                if fio_first:
                    got_fio, err = run_fio(cmd, dev_stat)
                got = disk_cases(args.mlbench, job, os.path.join(work, "case.json"),
                                 ["--disk-file", path, "--filter", exact(cid)])
                got = [g for g in got if g.id == cid]
                if not got or not got[0].usable:
                    why[cid] = f"mlbench: {got[0].reason if got else 'case not run'}"
                    continue
                if not fio_first:
                    got_fio, err = run_fio(cmd, dev_stat)
                if got_fio is None:
                    why[cid] = f"fio failed: {err}"
                    continue
                rate, io_bytes, fio_kib = got_fio
                if c.backend == "mmap" and io_bytes >= os.path.getsize(path):
                    # fio drops the cache only at the start: past one pass
                    # over the file its reads hit pages it faulted in itself.
                    why[cid] = (f"not comparable: fio read {io_bytes >> 20} MiB of a "
                                f"{os.path.getsize(path) >> 20} MiB file, so its later faults found "
                                "warm pages (use a larger file or a shorter --runtime)")
                    continue
                ml[cid].append(got[0].json["rate"]["median"])
                fio[cid].append(rate)
                # The average request the device saw (docs/disk.md): mlbench
                # reports it per case, fio's is read around its run here.
                m = (got[0].json.get("metrics") or {}).get("device_avg_request_kib")
                if isinstance(m, dict):
                    req[cid][0].append(m["value"])
                if fio_kib is not None:
                    req[cid][1].append(fio_kib)
                print(f"  round {rnd + 1}: {cid}: mlbench {ml[cid][-1]:.1f} MB/s, fio {rate:.1f} MB/s "
                      f"({ml[cid][-1] / rate:.3f})", file=sys.stderr)
        for f in files:
            if f:
                os.unlink(f)
    except RuntimeError as e:   # mlbench crashed
        die(str(e), 1)
    except KeyboardInterrupt:
        print(f"{PROG[0]}: interrupted", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(work, ignore_errors=True)

    bad = 0
    rows = []
    pick = max if args.stat == "best" else statistics.median
    print(f"{'case':<72} {'mlbench':>9} {'fio':>9} {'ratio':>6} {'ratio':>6} {'req KiB':>8} {'req KiB':>8}"
          f"  (MB/s: {args.stat} of the rounds;")
    print(f"{'':<72} {'MB/s':>9} {'MB/s':>9} {'best':>6} {'pairs':>6} {'mlbench':>8} {'fio':>8}"
          "   ratios: best/best, median of the rounds' ratios;")
    print(f"{'':<72} {'':>9} {'':>9} {'':>6} {'':>6} {'':>8} {'':>8}"
          "   req KiB: the device's average read request, median of the rounds, - = no device counters)")
    for cid in order:
        short = re.sub(r"^disk/", "", cid)
        if not ml[cid] or not fio[cid]:
            print(f"{short:<72} {'-':>9} {'-':>9} {'-':>6} {'-':>6}  {why.get(cid, 'no result')}")
            rows.append({"id": cid, "error": why.get(cid, "no result")})
            continue
        best = max(ml[cid]) / max(fio[cid])
        # Each round is a pair run back to back: the median of the pairs'
        # ratios cancels what drifts between rounds.
        med = statistics.median(a / b for a, b in zip(ml[cid], fio[cid]))
        ratio = best if args.stat == "best" else med
        flag = "" if abs(ratio - 1) <= args.tolerance else f"  outside {args.tolerance:.0%}"
        bad += bool(flag)
        kib = [f"{statistics.median(v):>8.0f}" if v else f"{'-':>8}" for v in req[cid]]
        print(f"{short:<72} {pick(ml[cid]):>9.1f} {pick(fio[cid]):>9.1f} {best:>6.3f} {med:>6.3f} "
              f"{kib[0]} {kib[1]}{flag}")
        rows.append({"id": cid, "mlbench_mbps": ml[cid], "fio_mbps": fio[cid], "ratio_best": best,
                     "ratio_median_of_rounds": med, "mlbench_avg_request_kib": req[cid][0],
                     "fio_avg_request_kib": req[cid][1]})
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"tolerance": args.tolerance, "cases": rows}, fh, indent=2)
    return 1 if bad else 0

