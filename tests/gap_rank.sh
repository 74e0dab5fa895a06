#!/usr/bin/env bash
# `mlbench gap --target LIST|all` (harness/analysis/project/project_rank.c) on the
# real H100 trace in $MLBENCH_SHARED/h100 and on a stage file: ranking,
# prices, widths, errors; and mlbench.gpu.pair compare on two copies of
# one run (a projection onto the same GPU must give back the measured step).
# Known answers of the model itself are in tests/test_project.c.
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
H=${MLBENCH_SHARED:-$SRC/../shared}/h100
if [ ! -f "$H/resnet18-dataloader-bound.pt.trace.json.gz" ]; then
    [ -n "${CI:-}" ] && { echo "FAIL: $H missing and CI is set"; exit 1; }
    echo "skip: no $H"; exit 77
fi
TRACE=$H/resnet18-dataloader-bound.pt.trace.json.gz
D=$SRC/tests/data
fails=0
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }
expect_exit() { local want=$1; shift; "$@" >"$WORK/out" 2>"$WORK/err"; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want: $*"; cat "$WORK/err"; return 1; }; }
has() { grep -q -- "$1" "$2" || { echo "  '$1' not in $2"; cat "$2"; return 1; }; }
narrow() { # the ranking section fits 120 columns
  sed -n '/machines ranked/,/^warnings/p' "$1" | awk 'length($0) > 120 { print "  too wide: " $0; bad = 1 } END { exit bad }'; }

check "all" expect_exit 0 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" --target all \
  --price h100-sxm=3 --price b200=6 --epoch-steps 1000
check "all: kernel-level" has "kernel-level model" "$WORK/out"
check "all: every datasheet" has "NVIDIA L4" "$WORK/out"
check "all: B200" has "NVIDIA B200" "$WORK/out"
# (words only: a long checkout path wraps the note at another place)
check "all: a datasheet without [gpu] says so" bash -c "tr -s '\n ' '  ' < '$WORK/out' | grep -q 'needs \[gpu\]'"
# ... naming only what it lacks (the A10G's has its bandwidth and FP32 peak, not its SM count)
check "all: only what a datasheet lacks" bash -c "tr -s '\n ' '  ' < '$WORK/out' |
  grep -q 'a10g.ini: the kernel-level projection needs \[gpu\] sms, which it lacks'"
# a GPU faster than here on what its datasheet gives, without a peak for some kernels' math (the RTX PRO 6000
# Blackwell: FP32 only): keeping their time bounds nothing, so it is not ranked (it was ranked after a P100)
check "all: a faster GPU without the math's peak: not projected" bash -c "grep -qE \
  '^  - +NVIDIA RTX PRO 6000 Blackwell +not projected' '$WORK/out'"
check "all: prices" has "\$/1k steps" "$WORK/out"
check "all: expected error" has "expected error of a projected step" "$WORK/out"
check "all: 120 columns" narrow "$WORK/out"
check "all: checked column" has "vs here checked" "$WORK/out"
check "all: a GPU of the public data shows its error" bash -c "grep -E '^  [0-9]+ +NVIDIA L4 ' '$WORK/out' |
  grep -qE 'datasheet +[0-9.]+ ms +[0-9.]+x +[0-9]+% '"
check "all: one never checked shows -" bash -c "grep -E '^  [0-9]+ +NVIDIA B200 ' '$WORK/out' |
  grep -qE 'datasheet +[0-9.]+ ms +[0-9.]+x +- '"
# a GPU whose datasheet has no peak for some kernels' math keeps their time: its step is a lower bound, shown with
# '>' and ranked after every machine projected whole (the T4 has no bf16 figure; the L4 has one)
check "all: a lower bound is marked" bash -c "grep -E '^  [0-9]+ +NVIDIA T4 ' '$WORK/out' |
  grep -qE 'datasheet +>[0-9.]+ ms +<[0-9.]+x'"
check "all: lower bounds ranked after whole projections" python3 - "$WORK/out" <<'PY'
import re, sys
rows = re.findall(r"^  (\d+) +(.+?) +(?:datasheet|measured) +(>?)[0-9.]+ m?s ", open(sys.argv[1]).read(), re.M)
flags = [bool(lb) for _, _, lb in rows]
assert any(flags) and not all(flags) and flags == sorted(flags), rows
PY
# JSON: one number per figure; the data-loader-bound step barely moves
check "json" expect_exit 0 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" --target b200,l4 --format json
check "json: ranking" python3 - "$WORK/out" "$SRC/configs/gap/projection_error.ini" <<'PY'
import configparser, json, sys
m = json.load(open(sys.argv[1]))["machines"]
checked = configparser.ConfigParser(inline_comment_prefixes=(";",))
checked.read(sys.argv[2])
here = m["here"]["step_seconds"]
rows = {r["target"]: r for r in m["ranking"]}
assert m["model"] == "kernel" and len(rows) == 2, m
b, l = rows["b200"], rows["l4"]
# dataloader-bound: the GPU is busy about 4 ms of a 150 ms step, so no GPU makes it much faster
assert 0.99 * here <= b["step_seconds"] <= here * 1.001, (b, here)
assert l["step_seconds"] > b["step_seconds"], (l, b)
for r in (b, l):
    s = r["split_seconds"]
    assert abs(sum(s.values()) - r["step_seconds"]) < 1e-9 * r["step_seconds"], r
    assert abs(r["speedup"] - here / r["step_seconds"]) < 1e-9, r
assert [r["target"] for r in m["ranking"]] == ["b200", "l4"]  # fastest first
e = m["expected_error_pct"]
assert e["datasheet"] > 0 and e["measured"] > 0, m
assert e["held_out"]["datasheet"] > 0 and e["held_out"]["measured"] > 0, m  # values: ctest project_validate_held_out
# checked: the L4's datasheet line of projection_error.ini (mean %, count); the B200 was never checked
pct, n = checked["datasheet"]["l4"].split()
assert l["figures"] == "datasheet" and (l["checked_error_pct"], l["checked_projections"]) == (float(pct), int(n)), l
assert b["checked_error_pct"] is None and b["checked_projections"] == 0, b
assert l["checked_basis"] == "public" and "checked_from" not in l, l  # leave-one-GPU-out on the public data
# never checked: the nearest checked class is its architecture's (project_checked.h); no Blackwell was checked, so
# none stands for it (Hopper's figure says nothing of Blackwell): a note says so, with the error its rank uses
assert "checked_nearest" not in b, b
assert any("NVIDIA B200" in x and "no Blackwell GPU was checked" in x and "expected error, 22%" in x
           for x in m["assumptions"]), m["assumptions"]
PY
# the reference machine is the trace's own GPU: measured on both sides, the same step
check "self" expect_exit 0 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" --target h100-sxm --format json
check "self: unchanged" python3 -c "
import json; m = json.load(open('$WORK/out'))['machines']; r = m['ranking'][0]
assert r['figures'] == 'measured' and abs(r['step_seconds'] - m['here']['step_seconds']) < 1e-12, m"
check "html" expect_exit 0 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" --target b200,h100-pcie \
  --html "$WORK/gap.html"
check "html: machines chart" has 'data-chart="machines"' "$WORK/gap.html"
# a malformed line of configs/gap/projection_error.ini: an error naming the file and the line's GPU
cp -r "${MLBENCH_CONFIG_DIR:-$SRC/configs}" "$WORK/configs" &&
  sed -i 's/^l4 = .*/l4 = many/' "$WORK/configs/gap/projection_error.ini"
check "bad checked line" env MLBENCH_CONFIG_DIR="$WORK/configs" bash -c \
  "'$MLBENCH' gap --run '$TRACE' --ceilings '$H/all.json' --target b200,l4 >'$WORK/out' 2>'$WORK/err'; test \$? -eq 2"
check "bad checked line: says which" has "projection_error.ini: \[datasheet\] l4 = many" "$WORK/err"
# errors: unknown machine, a price naming no ranked machine, prices without targets
check "unknown target" expect_exit 2 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" --target b200,nosuch
check "unknown target: says what a target is" has "comma-separated list" "$WORK/err"
check "price for no machine" expect_exit 2 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" \
  --target b200,l4 --price h100-sxm=3
check "price error lists the machines" has "machines: b200, l4" "$WORK/err"
check "price for a near name" expect_exit 2 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" \
  --target b200,a100-sxm-80gb --price a100-sxm4-80gb=2
check "price error names the near one" has "did you mean 'a100-sxm-80gb'?" "$WORK/err"
check "bad price" expect_exit 2 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" --target b200,l4 --price b200=x
check "price without target" expect_exit 2 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" --price b200=3
printf '# prices I pay\nb200 = 5.5\nNVIDIA L4 = 0.8\n' > prices.txt
check "prices file" expect_exit 0 "$MLBENCH" gap --run "$TRACE" --ceilings "$H/all.json" --target b200,l4 \
  --prices prices.txt --format json
check "prices file: read" python3 -c "
import json; rows = json.load(open('$WORK/out'))['machines']['ranking']
assert sorted(r['usd_per_hour'] for r in rows) == [0.8, 5.5], rows"
# a stage file: the per-stage model, stated
check "stage file" expect_exit 0 "$MLBENCH" gap --run "$D/gap_run.json" --ceilings "$D/gap_here.json" \
  --target h100-sxm,l4
check "stage file: per-stage model" has "per-stage model" "$WORK/out"
check "stage file: json" expect_exit 0 "$MLBENCH" gap --run "$D/gap_run.json" --ceilings "$D/gap_here.json" \
  --target h100-sxm,l4 --format json
check "stage file: no kernel time (it has no kernels)" python3 -c "
import json; m = json.load(open('$WORK/out'))['machines']
assert m['model'] == 'per-stage' and 'kernel_seconds' not in m['here'], m['here']
assert all('kernel_seconds' not in r for r in m['ranking']), m['ranking']"
# one target, a stage file (issue 17): one time basis, 120 columns, the bottleneck named once when unchanged
check "one target" expect_exit 0 "$MLBENCH" gap --run "$D/gap_run.json" --ceilings "$D/gap_here.json" --target h100-sxm
check "one target: exposed here and there" has "here (exposed)  there (exposed)" "$WORK/out"
check "one target: 120 columns" bash -c "sed -n '/projection onto/,\$p' '$WORK/out' | awk 'length(\$0) > 120 { bad = 1 } END { exit bad }'"
check "one target: no 'new bottleneck' when it stays" bash -c "! grep -q 'new bottleneck' '$WORK/out'"
check "one target: bottleneck unchanged" has "bottleneck unchanged: dataloading" "$WORK/out"
check "one target: the rows add up" python3 - "$WORK/out" <<'PY'
import re, sys
text = open(sys.argv[1]).read().split("projection onto", 1)[1]
def sec(v, u): return float(v) * {"s": 1, "ms": 1e-3, "us": 1e-6}[u]
rows = re.findall(r"^  (\S.*?)\s+([0-9.]+) (s|ms|us)\s+([0-9.]+) (s|ms|us)\s", text, re.M)
here = sum(sec(r[1], r[2]) for r in rows if r[0] != "step")
step = [sec(r[1], r[2]) for r in rows if r[0] == "step"][0]
assert abs(here - step) <= 0.01 * step, (here, step, rows)
PY
# mlbench.gpu.pair compare: two copies of one run on one GPU
for d in A B; do mkdir -p $d; ln -s "$TRACE" $d/convnet-bf16.pt.trace.json.gz; ln -s "$H/all.json" $d/ceilings.json; done
echo '{"gpu": "NVIDIA H100 80GB HBM3", "workloads": {"convnet-bf16": {"step_ms": 150.0}}}' > A/steps.json
echo '{"gpu": "NVIDIA H100 80GB HBM3", "workloads": {"convnet-bf16": {"step_ms": 160.0}}}' > B/steps.json
check "gpu_pair compare" expect_exit 0 env PYTHONPATH="$SRC/python" python3 -m mlbench.gpu.pair compare A B --mlbench "$MLBENCH"
check "gpu_pair: same GPU, the source's step" has "measured 160.000 ms (160.000-160.000)  projected 150.000 ms (-6.2%)" "$WORK/out"
check "gpu_pair: datasheet mode" has "datasheet figures on both sides" "$WORK/out"
[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all gap_rank checks passed"
