#!/usr/bin/env bash
# bench/trace_speed.sh: parse speed (MB/s of uncompressed trace JSON, one
# core) and peak RSS of the PyTorch trace reader on a generated trace.
#
#   bench/trace_speed.sh [--mb 1024] [--gz] [--runs 3] [--build DIR] [--keep]
#
# The trace comes from scripts/gen_large_trace.py (never committed) in
# $TMPDIR. The reader is compiled standalone from harness/trace*.c so the
# process holds only what the reader needs: mlbench itself links cuBLASLt,
# whose loading alone takes ~200 MB of RSS before main() runs. With --build,
# the same file is also read through DIR/tests/test_trace dump (the code path
# of `mlbench trace`) and that process's peak RSS is shown next to its RSS
# on an empty trace.
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

# 1. A standalone reader (same sources as the library).
cat > "$WORK/reader.c" <<'EOF'
#include <stdio.h>
#include "trace.h"
/* stages.c dispatches to the stage-file reader, which this bench does not need. */
int mb_stagefile_read(const char *path, mb_run *out, mb_err *err)
{
    (void)out;
    return mb_errf(err, MB_EUSAGE, "%s: stage files are not read here", path);
}
int main(int argc, char **argv)
{
    mb_run run;
    mb_err err = {0};
    if (argc != 2 || mb_trace_read(argv[1], &run, &err) != MB_OK) {
        fprintf(stderr, "reader: %s\n", err.msg);
        return 2;
    }
    cJSON *b = cJSON_GetObjectItem(cJSON_GetObjectItem(run.evidence, "trace"), "json_bytes");
    printf("%.0f bytes, %d stages, %d steps\n", b ? b->valuedouble : -1, run.n_stages, run.steps);
    mb_run_free(&run);
    return 0;
}
EOF
H="$SRC/harness"
LIBS=$(pkg-config --libs yajl libcjson inih zlib 2>/dev/null || echo "-lyajl -lcjson -linih -lz")
CFLAGS=$(pkg-config --cflags yajl libcjson inih zlib 2>/dev/null || true)
cc -std=gnu17 -O2 -D_GNU_SOURCE -DMB_SOURCE_CONFIG_DIR="\"$SRC/configs\"" $CFLAGS -I"$H" \
    -o "$WORK/reader" "$WORK/reader.c" "$H"/trace.c "$H"/trace_classes.c "$H"/trace_flops.c \
    "$H"/trace_analysis.c "$H"/stages.c "$H"/mb.c "$H"/formulas.c "$H"/paths.c $LIBS -lm

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

BYTES=$("$WORK/reader" "$TRACE" | cut -d' ' -f1)
SIZE=$(stat -c %s "$TRACE")
echo "trace: $TRACE ($((SIZE / 1000000)) MB on disk, $((BYTES / 1000000)) MB of JSON), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
PIN=""
command -v taskset > /dev/null && PIN="taskset -c 0"
measure "standalone reader" "$BYTES" $PIN "$WORK/reader" "$TRACE"
if [ -n "$BUILD" ] && [ -x "$BUILD/tests/test_trace" ]; then
    printf '{"traceEvents": []}\n' > "$WORK/empty.json"
    measure "test_trace dump (empty trace)" 1 $PIN "$BUILD/tests/test_trace" dump "$WORK/empty.json"
    measure "test_trace dump" "$BYTES" $PIN "$BUILD/tests/test_trace" dump "$TRACE"
fi
