#!/usr/bin/env bash
# scripts/gpu_pair.py compare on the pair this project measured itself
# (bench/data/pair-h100-h200: three training steps on an H100 and an H200,
# 2026-11-26, docs/gap.md "Measured error"), and the like-with-like rule of
# the measured projection: each figure from the kinds of case both machines
# measured (harness/analysis/project_rank.c, overlay_measured).
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
P=$SRC/bench/data/pair-h100-h200
fails=0
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }
expect_exit() { local want=$1; shift; "$@" >"$WORK/out" 2>"$WORK/err"; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want: $*"; cat "$WORK/err"; return 1; }; }

check "compare" expect_exit 0 python3 "$SRC/scripts/gpu_pair.py" compare "$P/h100" "$P/h200" --mlbench "$MLBENCH"
cp "$WORK/out" "$WORK/compare.txt"
check "compare: 120 columns" awk 'length($0) > 120 { print "  too wide: " $0; bad = 1 } END { exit bad }' "$WORK/compare.txt"
check "compare: both directions, both modes, the spread" python3 - "$WORK/compare.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
modes = re.split(r"^(measured|datasheet) figures on both sides \((\d+) projections\):$", text, flags=re.M)
assert (modes[1], modes[4]) == ("measured", "datasheet") and modes[2] == modes[5] == "6", modes[:6]
for block in (modes[3], modes[6]):
    rows = re.findall(r"^  (\S+)\s+(.+?) -> (.+?)\s+measured\s+([0-9.]+) ms \(([0-9.]+)-([0-9.]+)\)\s+"
                      r"projected\s+([0-9.]+) ms \(([+-][0-9.]+)%\)$", block, re.M)
    assert len(rows) == 6, block
    for name, src, dst, t, lo, hi, p, e in rows:
        t, lo, hi, p, e = map(float, (t, lo, hi, p, e))
        assert lo <= t <= hi and abs(100 * (p - t) / t - e) < 0.06, (name, t, lo, hi, p, e)
    # the fp32 MLP is GEMM-bound and steady (its processes agree within 1.2%): H100 and H200 have the same
    # FP32 math, so the model must give back the other's step within 5% both ways
    mlp = [float(r[7]) for r in rows if r[0] == "mlp-fp32"]
    assert len(mlp) == 2 and all(abs(x) < 5 for x in mlp), mlp
    assert "the model's error beyond that spread" in block, block
print("ok")
PY

# a workload run at another batch is not paired (the first pair recorded no batch: the sizes of that time)
mkdir -p B && cp "$P"/h200/* B/ && python3 - B/steps.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["workloads"]["transformer-bf16"]["batch"] = 32
json.dump(d, open(sys.argv[1], "w"))
PY
check "another batch" expect_exit 0 python3 "$SRC/scripts/gpu_pair.py" compare "$P/h100" B --mlbench "$MLBENCH"
check "another batch: not paired" grep -q "transformer-bf16 ran at batch 8 in .* and 32 in B: not paired" "$WORK/err"
check "another batch: the others are" grep -q "measured figures on both sides (4 projections)" "$WORK/out"

# like with like: the H200 run's ceilings stopped before the CUDA cores' fp32 peak case; the H100 reference
# machine has one (above its fp32 GEMM). A GEMM-bound fp32 step must then be held against fp32 GEMM on both
# sides (51.6 vs 51.7 TFLOP/s: about the same time), not H200's GEMM against H100's peak (18% faster).
TRACE=$P/h200/mlp-fp32.pt.trace.json.gz
for target in h100-sxm "$P/h100/ceilings.json"; do
    check "like with like: $target" expect_exit 0 "$MLBENCH" gap --run "$TRACE" --ceilings "$P/h200/ceilings.json" \
        --target "$target" --format json
    check "like with like: $target: the tensor-core time" python3 - "$WORK/out" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["machines"]
here, there = m["here"], m["ranking"][0]
assert here["figures"] == "measured" and there["figures"] == "measured", m
ratio = there["split_seconds"]["tensor"] / here["split_seconds"]["tensor"]
assert 0.97 < ratio < 1.03, ratio
PY
done
# a datasheet by its path is the datasheet, even where a reference machine has the same name (gpu_pair's
# 'datasheet' rows)
check "datasheet by path" expect_exit 0 "$MLBENCH" gap --run "$TRACE" --ceilings "$P/h200/ceilings.json" \
    --target "$SRC/configs/hardware/h100-sxm.ini" --format json
check "datasheet by path: datasheet figures" python3 -c "
import json, sys
m = json.load(open('$WORK/out'))['machines']
assert m['ranking'][0]['figures'] == 'datasheet', m['ranking'][0]"
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all gpu_pair checks passed"
