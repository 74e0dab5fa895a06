#!/usr/bin/env bash
# scripts/mlbench_stages.py: its unit tests (no torch needed), then a file it
# writes read back by `mlbench gap`.
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
export PYTHONPATH="$SRC/scripts" PYTHONDONTWRITEBYTECODE=1
cd "$SRC/tests" && python3 -m unittest -v gap_stages_test 2>&1 || exit 1
cd "$WORK" || exit 1
python3 - "$WORK/stages.json" <<'PYEOF' || exit 1
import sys
import mlbench_stages as ms
now = [0.0]
t = ms.StageTimer(clock=lambda: now[0])
for _ in range(10):
    with t.stage("dataloading", component="disk", pattern="random", block_size=131072) as s:
        now[0] += 0.5
        s.add(bytes=5e8)            # 1 GB/s: half the 2 GB/s ceiling of gap_here.json
    with t.stage("forward", component="gemm", dtype="bf16") as s:
        now[0] += 1.0
        s.add(flops=3e14, calls=300)  # 300 TFLOP/s: half the 600 TFLOP/s ceiling
    t.step()
t.write(sys.argv[1], gpu_utilization=0.6)
PYEOF
"$MLBENCH" gap --run "$WORK/stages.json" --ceilings "$SRC/tests/data/gap_here.json" --format json \
  --out "$WORK/gap.json" || exit 1
python3 - "$WORK/gap.json" <<'PYEOF' || exit 1
import json, sys
d = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in d["stages"]}
assert abs(st["dataloading"]["efficiency"] - 0.5) < 1e-9, st["dataloading"]
assert abs(st["forward"]["efficiency"] - 0.5) < 1e-9, st["forward"]
assert d["run"]["steps"] == 10
assert abs(d["run"]["step_seconds"] - 1.5) < 1e-9
print("ok   a file from mlbench_stages.py read by mlbench gap")
PYEOF
