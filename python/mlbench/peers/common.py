"""What every peer comparison shares: messages, the priority every tool runs at, the one way to run mlbench and
the one way to run fio, and the pair statistics. Standard library only."""

import collections
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys

from .. import runner
from ..results import ResultsError

# The tool's name in messages: "peers", or "fio_compare" when scripts/fio_compare.py runs the disk-cases mode
# (its messages have always said so).
PROG = ["peers"]
# Every tool at the same priority: --nice -15 (root) keeps other load on a shared machine from deciding the ratio.
NICE = []


def die(msg, code=2):
    print(f"{PROG[0]}: {msg}", file=sys.stderr)
    sys.exit(code)


def say(msg):
    print(f"  {msg}", file=sys.stderr, flush=True)


def set_nice(n):
    NICE[:] = ["nice", "-n", str(n)] if n else []


def niced(cmd):
    return NICE + cmd


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def rotate(items, k):
    k %= len(items)
    return items[k:] + items[:k]


def ratio(a, b):
    """Median of the pairs' ratios: each pair ran back to back."""
    return statistics.median(x / y for x, y in zip(a, b))


# ---- mlbench -----------------------------------------------------------------

def run_mlbench(binary, job, out, extra=(), env_add=None):
    """Runs one job file (a path) with mlbench; returns its cases (mlbench.results.Case). A crash is raised
    (RuntimeError: the crash is the finding, whatever the results file holds); a run that wrote no results file,
    or one mlbench itself would refuse, ends the tool (exit 1)."""
    env = dict(os.environ)
    env.update(env_add or {})
    try:
        run = runner.run_mlbench(niced([binary]), job, out, extra, env)
    except ResultsError as e:
        die(f"{binary} wrote a results file mlbench cannot read: {e}", 1)
    if run.returncode < 0:
        cmd = run.argv[len(NICE):]
        raise RuntimeError(f"{binary} killed by {signal.Signals(-run.returncode).name}: {shlex.join(cmd)}")
    if run.results is None:
        die(f"{binary} wrote no results (exit {run.returncode}): {run.output[-500:]}", 1)
    return run.results.cases


def run_job(binary, text, work, extra=(), env_add=None):
    """run_mlbench on a job file's text, written to WORK/job.ini (results in WORK/out.json)."""
    job = runner.write_job(os.path.join(work, "job.ini"), text)
    return run_mlbench(binary, job, os.path.join(work, "out.json"), extra, env_add)


def usable_case(cases, what):
    """The first case that may serve as a ceiling (mlbench.results' rule), else RuntimeError saying why not."""
    good = [c for c in cases if c.usable]
    if not good:
        c = cases[0] if cases else None
        raise RuntimeError(f"mlbench {what}: {c.state if c else 'no case'}: {(c.reason or '') if c else ''}")
    return good[0]


# ---- fio ---------------------------------------------------------------------

# MB/s read; bytes read; the block device's average read request during the run (KiB, None: unknown)
FioRun = collections.namedtuple("FioRun", "mbps io_bytes avg_request_kib")


def run_fio(cmd, dev_stat=None):
    """Runs one fio job (--output-format=json); returns (FioRun, None), or (None, why). dev_stat: the block
    device's stat file (stat_file), read around the run for its average request."""
    before = read_stat(dev_stat)
    p = subprocess.run(niced(cmd), capture_output=True, text=True)
    kib = avg_request_kib(before, read_stat(dev_stat))
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip()[-300:]
    try:
        job = json.loads(p.stdout[p.stdout.index("{"):])["jobs"][0]
        if job.get("error"):
            return None, f"fio job error {job['error']}"
        return FioRun(job["read"]["bw_bytes"] / 1e6, job["read"]["io_bytes"], kib), None
    except (ValueError, KeyError, IndexError) as e:
        return None, f"cannot read fio's output: {e}"


def stat_file(path):
    """/sys/block/DEV/stat of the disk holding path (a partition's parent, as
    harness/platform/blockdev.c finds it), or None (overlay, tmpfs: no device)."""
    st = os.stat(path)
    link = f"/sys/dev/block/{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    if not os.path.exists(link):
        return None
    d = os.path.realpath(link)
    if os.path.exists(os.path.join(d, "partition")):
        d = os.path.dirname(d)
    f = os.path.join(d, "stat")
    return f if os.path.exists(f) else None


def read_stat(f):
    """(read requests, read sectors) of a block device stat file."""
    if f is None:
        return None
    with open(f) as fh:
        v = fh.read().split()
    return int(v[0]), int(v[2])


def avg_request_kib(before, after):
    """The average read request the device saw between two read_stat()s."""
    if before is None or after is None or after[0] <= before[0]:
        return None
    return (after[1] - before[1]) * 512 / 1024 / (after[0] - before[0])
