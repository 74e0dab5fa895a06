"""peers: every host-side ceiling of mlbench next to its peer, in one command.

Each comparison alternates mlbench and the peer on the same resource, at
least three pairs (--pairs, default 3), rotating which one runs first, and
prints per case the median of the pairs' ratios (mlbench / peer; > 1 means
mlbench's ceiling is higher). A ceiling is the best the hardware does, so a
ratio below 1.00 means mlbench's ceiling is too low.

  python3 -m mlbench.peers [--only disk,stream,gemm] [options]   the sections named (default: all)
  python3 -m mlbench.peers disk|stream|gemm [options]            one section
  python3 -m mlbench.peers disk-cases [options]                  every disk case of a job file against fio
                                                                 set up the same way (disk-cases --help)

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
import shutil
import signal
import statistics
import sys
import tempfile

from .common import die, load, set_nice
from .disk import compare_disk
from .gemm import compare_gemm
from .stream import STREAM_URL, compare_stream

SECTIONS = {"disk": compare_disk, "stream": compare_stream, "gemm": compare_gemm}


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


def main(argv=None, prog=None):
    """The command line; argv without the program's name (default sys.argv[1:]), prog as usage names it."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["disk-cases"]:
        from . import disk_cases
        return disk_cases.main(argv[1:], prog=prog and prog + " disk-cases")
    section = argv.pop(0) if argv[:1] and argv[0] in SECTIONS else None
    ap = argparse.ArgumentParser(prog=prog, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mlbench", default=os.environ.get("MLBENCH", "mlbench"), help="the mlbench binary")
    ap.add_argument("--baseline", help="disk: a second mlbench binary run in every pair (before/after)")
    ap.add_argument("--only",
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
    args = ap.parse_args(argv)

    if section and args.only:
        die(f"--only with the mode {section}: give one or the other")
    set_nice(args.nice)
    sections = [s.strip() for s in (section or args.only or ",".join(SECTIONS)).split(",") if s.strip()]
    for s in sections:
        if s not in SECTIONS:
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
                SECTIONS[s](args, work, report)
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

