#!/usr/bin/env bash
# bench/trace_speed.sh: parse speed (MB/s of uncompressed trace JSON, one
# core) and peak RSS of the PyTorch trace reader on a generated trace.
#
#   bench/trace_speed.sh [--mb 1024] [--gz] [--runs 3] [--build DIR] [--keep]
#
# The trace comes from scripts/gen_large_trace.py (never committed) in
# $TMPDIR and is read by `mlbench trace` (DIR/mlbench with --build DIR,
# default ./build), pinned to one core; the RSS of the same command on an
# empty trace is shown for reference.
#
# This is a benchmark, not a test: it prints figures and checks nothing.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
MB=1024
GZ=0
RUNS=3
BUILD=""
KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
    --mb) MB=$2; shift 2 ;;
    --gz) GZ=1; shift ;;
    --runs) RUNS=$2; shift 2 ;;
    --build) BUILD=$2; shift 2 ;;
    --keep) KEEP=1; shift ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "trace_speed.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/mlbench-trace-speed.XXXXXX")
cleanup() { [ "$KEEP" = 1 ] && echo "kept $WORK" || rm -rf "$WORK"; }
trap cleanup EXIT

# 1. The binary under test: `mlbench trace` runs the reader and prints what
#    it found. (The GPU backends are dlopen'ed modules, so this process maps
#    no CUDA library: its RSS is the reader's.)
MLBENCH="${BUILD:-$SRC/build}/mlbench"
[ -x "$MLBENCH" ] || { echo "trace_speed.sh: build first ($MLBENCH missing; scripts/setup.sh)" >&2; exit 2; }

# 2. The trace.
TRACE="$WORK/trace.json"
python3 "$SRC/scripts/gen_large_trace.py" --out "$TRACE" --mb "$MB"
if [ "$GZ" = 1 ]; then
    gzip -6 "$TRACE"
    TRACE="$TRACE.gz"
fi

# 3. Wall time and peak RSS of each run (Python's resource module: no
#    dependency on GNU time). The reader runs pinned to one core.
measure() { # label json_bytes command...
    local label=$1 bytes=$2
    shift 2
    python3 - "$label" "$bytes" "$RUNS" "$@" <<'EOF'
import resource, subprocess, sys, time
label, nbytes, runs, cmd = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
walls, cpus, rss = [], [], 0
for _ in range(runs):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    walls.append(time.perf_counter() - t)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    rss = max(rss, after.ru_maxrss / 1024)
walls.sort()
cpus.sort()
wall, cpu = walls[len(walls) // 2], cpus[len(cpus) // 2]
# CPU seconds (user+sys) are what one core spends; wall time also counts
# waiting for a core on a busy machine.
print("%-30s wall %6.2f s (%6.1f MB/s)  cpu %6.2f s (%6.1f MB/s)  peak RSS %6.1f MB  [median of %d]"
      % (label, wall, nbytes / 1e6 / wall, cpu, nbytes / 1e6 / cpu, rss, runs))
EOF
}

BYTES=$("$MLBENCH" trace "$TRACE" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["evidence"]["trace"]["json_bytes"]))')
SIZE=$(stat -c %s "$TRACE")
echo "trace: $TRACE ($((SIZE / 1000000)) MB on disk, $((BYTES / 1000000)) MB of JSON), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
PIN=""
command -v taskset > /dev/null && PIN="taskset -c 0"
printf '{"traceEvents": []}\n' > "$WORK/empty.json"
measure "mlbench trace (empty trace)" 1 $PIN "$MLBENCH" trace "$WORK/empty.json"
measure "mlbench trace" "$BYTES" $PIN "$MLBENCH" trace "$TRACE"
