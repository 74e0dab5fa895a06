#!/usr/bin/env bash
# mlbench.stages (python/mlbench/stages.py): its unit tests (no torch needed), then a file it
# writes read back by `mlbench gap`.
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
export PYTHONPATH="$SRC/python" PYTHONDONTWRITEBYTECODE=1
cd "$SRC/tests" && python3 -m unittest -v gap_stages_test 2>&1 || exit 1
cd "$WORK" || exit 1
python3 - "$WORK/stages.json" <<'PYEOF' || exit 1
import sys
from mlbench import stages as ms
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
print("ok   a file from mlbench.stages read by mlbench gap")
PYEOF
# The Python writer's components and work keys are mlbench's (harness/api/
# vocabulary.h): the names mlbench lists for an unknown component are the
# writer's, and a stage of each, with the writer's work key, reads back.
printf '{"format": "mlbench-stages", "version": 1, "stages": [{"name": "x", "component": "nonesuch", "seconds": 1}]}' \
  > "$WORK/bad.json"
"$MLBENCH" gap --run "$WORK/bad.json" --ceilings "$SRC/tests/data/gap_here.json" 2> "$WORK/bad.err" && exit 1
python3 - "$WORK/bad.err" "$WORK/every.json" <<'PYEOF' || exit 1
import re, sys
from mlbench import stages as ms
named = re.search(r"is not one of (\S+)", open(sys.argv[1]).read())
assert named, open(sys.argv[1]).read()
assert set(named.group(1).split("|")) == set(ms.WORK_KEYS), (named.group(1), sorted(ms.WORK_KEYS))
needs = {"gemm": {"dtype": "bf16"}, "conv": {"dtype": "bf16"}, "attention": {"dtype": "bf16"},
         "copy": {"direction": "h2d"},
         "disk": {"pattern": "random"}}
t = ms.StageTimer(clock=lambda: 0.0)
for comp, key in ms.WORK_KEYS.items():
    attrs = dict(needs.get(comp, {}))
    if comp in ("allreduce", "allgather", "reducescatter", "broadcast"):
        attrs["ranks"] = 8
    if key:
        attrs[key] = 1e9
    t.add(comp, component=comp, seconds=1.0, **attrs)
t.write(sys.argv[2])
PYEOF
"$MLBENCH" gap --run "$WORK/every.json" --ceilings "$SRC/tests/data/gap_here.json" --format json \
  --out "$WORK/every_gap.json" || exit 1
python3 - "$WORK/every_gap.json" <<'PYEOF' || exit 1
import json, sys
from mlbench import stages as ms
d = json.load(open(sys.argv[1]))
assert sorted(s["name"] for s in d["stages"]) == sorted(ms.WORK_KEYS), [s["name"] for s in d["stages"]]
print("ok   every component of mlbench.stages read by mlbench gap with its work key")
PYEOF
