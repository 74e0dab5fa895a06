#!/usr/bin/env bash
# Burst and sustained phases end to end on the CPU compute cases (OpenBLAS
# GEMM, oneDNN conv): both objects in the results with the lengths asked for
# in the job file, ceiling_phase and the ceiling, the table's figures, and none on a
# non-compute case. The bookkeeping itself: tests/test_phases.c.
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
fails=0
check() {
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
S=$SRC/tests/data/suites/phases.ini
run_suite() { "$MLBENCH" --suite "$S" -q --out "$WORK/r.json" >"$WORK/table" 2>"$WORK/err" || { cat "$WORK/err"; return 1; }; }
check "suite runs" run_suite
check "results: both phases on compute cases" python3 - "$WORK/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
seen = 0
for c in d["cases"]:
    if c["component"] == "hostmem":
        assert "burst" not in c and "sustained" not in c and "ceiling_phase" not in c, c
        continue
    if c["status"] != "ok":
        assert c["backend"] == "onednn" and "not built in" in (c["reason"] or ""), c
        continue
    seen += 1
    assert c["ceiling_phase"] == "sustained", c
    b, s = c["burst"], c["sustained"]
    assert b["windows"] == 3 and b["window_seconds"] == 0.02 and b["idle_seconds"] == 0.05, b
    assert b["wall_seconds"] >= 3 * 0.02 and b["iterations"] >= 3, b
    assert 0 < b["rate"] <= b["rate_best"], b
    assert s["windows"] == 1 and s["window_seconds"] == 0.1 and s["settle_seconds"] == 0.05, s
    assert s["wall_seconds"] >= 0.1 and s["iterations"] >= 1 and s["rate"] > 0, s
    # rate = work / timed seconds, in the rate unit
    want = c["work_per_iteration"] * s["iterations"] / s["seconds"] / c["rate_scale"]
    assert abs(s["rate"] - want) <= 1e-9 * want, (s["rate"], want)
    # no GPU: no readings, said as null
    assert s["sm_clock_mhz"] is None and s["power_w"] is None and s["throttle_reasons"] is None, s
    assert c["verification"]["status"] == "passed", c
assert seen >= 1, "no compute case ran"
PY
check "table: burst and sustained figures" grep -Eq "; burst [0-9.]+ GFLOP/s; sustained [0-9.]+ GFLOP/s" "$WORK/table"
check "table: the sustained rate is the ceiling" grep -Eq "[0-9.]+ GFLOP/s  sustained" "$WORK/table"
check "results: the sustained rate is the ceiling" python3 - "$WORK/r.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["cases"]:
    if c["status"] == "ok" and c.get("sustained"):
        assert c["ceiling"] == {"value": c["sustained"]["rate"], "unit": c["rate_unit"], "source": "sustained"}, c
PY
check "table: says which is the ceiling" grep -q "sustained = back-to-back" "$WORK/table"
check "csv: phase columns" sh -c "'$MLBENCH' report '$WORK/r.json' --format csv | head -1 | grep -q 'burst_rate,sustained_rate,ceiling_phase'"
printf '[global]\nsustained_time = 0\n[g]\ncomponent = gemm\nbackend = openblas\n' >"$WORK/bad.ini"
"$MLBENCH" --suite "$WORK/bad.ini" -q --out "$WORK/bad.json" >/dev/null 2>"$WORK/bad.err"
check "bad phase length exits 2" test $? -eq 2
check "  names the key and line" grep -q "bad.ini:2: sustained_time" "$WORK/bad.err"
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
