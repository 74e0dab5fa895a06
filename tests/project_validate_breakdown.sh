#!/usr/bin/env bash
# bench/project_validate --breakdown, --only, --skip-gpu, --with-gpu, --expect, --per-target,
# --check-per-target, --step-form, --leave-one-out, the per-workload means and the per-operator overhead on a two-GPU
# data set worked out by hand:
#   h100-sxm: step 8.01 ms; size (other) 0.01 ms; add (memory, 13.4 GB) 4 ms x 2
#   v100-pcie: step 19.208 ms (0.8 of its 24.01 ms operator sum); add 12 ms x 2
# (13.4 GB take 4 ms at 3350 GB/s and 14.9 ms at 900: on both GPUs the bytes
# explain all of the add's time, so bandwidth alone scales it; test_project
# has the split of a slower kernel.)
# Overhead = the median "other" operator, 0.01 ms, kept. Bandwidths 3350 and
# 900 GB/s (configs/hardware), so the add H100 -> V100 is
# 0.01 + 3.99 x 3350/900 = 14.8617 ms (x 2 = 29.7233 vs 24: +23.8%), V100 -> H100
# 0.01 + 11.99 x 900/3350 = 3.2312 ms (x 2 = 6.4624 vs 8: -19.2%). The data's
# floor: |8.01 x 24.01/8.01 - 19.208| / 19.208 = 25.0% and
# |19.208 x 8.01/24.01 - 8.01| / 8.01 = 20.0%, mean 22.5%; the model's step
# H100 -> V100: 29.7333 vs 19.208 = 54.8%. Per operator (>= 1 ms on B):
# (23.85% + 19.22%) / 2 = 21.5%. Step mean: (54.8% + 35.4%) / 2 = 45.1%.
# The selections then add a third GPU (three ordered pairs each way: 6).
set -uo pipefail
PV=${1:?usage: project_validate_breakdown.sh PROJECT_VALIDATE WORKDIR}
WORK=${2:?}
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
cat >"$WORK/d.csv" <<'CSV'
workload,gpu,op,kind,weight,flops,bytes,ms
w,h100-sxm,(step),step,1,0,0,8.01
w,h100-sxm,size,other,1,0,0,0.01
w,h100-sxm,add,memory,2,0,1.34e10,4.0
w,v100-pcie,(step),step,1,0,0,19.208
w,v100-pcie,size,other,1,0,0,0.01
w,v100-pcie,add,memory,2,0,1.34e10,12.0
CSV
fails=0
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }
has() { grep -q -- "$1" "$2" || { echo "  '$1' not in $2"; cat "$2"; return 1; }; }
"$PV" "$WORK/d.csv" --breakdown >"$WORK/out" 2>&1 || { cat "$WORK/out"; exit 1; }
check "pair h100 -> v100: step, operator sum, floor, memory" \
    has "h100-sxm        -> v100-pcie         1    54.8%    23.8%    25.0%               -   +23.8% (100%)" "$WORK/out"
check "pair v100 -> h100: memory -19.2%" has "v100-pcie       -> h100-sxm          1    35.4%    19.2%    20.0%" "$WORK/out"
check "the data's floor" has "the data's floor 22.5%" "$WORK/out"
check "per operator by kind and size" has "memory   >= 1 ms          2     21.5%       100.0%" "$WORK/out"
"$PV" "$WORK/d.csv" --skip-gpu v100-pcie >"$WORK/skip" 2>&1
check "--skip-gpu leaves no pair" has "(0 projections)" "$WORK/skip"
"$PV" "$WORK/d.csv" --only nosuch >"$WORK/only" 2>&1
check "--only selects workloads" has "(0 projections)" "$WORK/only"
"$PV" "$WORK/d.csv" --max-mean 45 >"$WORK/bound" 2>&1
check "--max-mean below the mean fails" test $? -eq 1
"$PV" "$WORK/d.csv" --expect 45.1 >"$WORK/expect" 2>&1
check "--expect the mean passes" test $? -eq 0
"$PV" "$WORK/d.csv" --expect 45.2 >"$WORK/expect" 2>&1
check "--expect another figure fails" test $? -eq 1
check "--expect says what it measured" has "mean absolute error 45.1%, stated as 45.2%: restate it" "$WORK/expect"
"$PV" "$WORK/d.csv" --per-target >"$WORK/target" 2>&1
line() { grep -qxF -- "$1" "$2" || { echo "  no line '$1' in $2"; cat "$2"; return 1; }; }
check "--per-target: the mode's section" line "[datasheet]" "$WORK/target"
check "--per-target: onto the H100, the mean and the count" line "h100-sxm = 35.4 1" "$WORK/target"
check "--per-target: onto the V100" line "v100-pcie = 54.8 1" "$WORK/target"
printf '[datasheet]\nh100-sxm = 35.4 1\nv100-pcie = 54.8 1\n[measured]\nh100-sxm = 1 1\n' >"$WORK/t.ini"
"$PV" "$WORK/d.csv" --check-per-target "$WORK/t.ini" >"$WORK/check" 2>&1
check "--check-per-target: the mode's section agrees" test $? -eq 0
printf '[datasheet]\nh100-sxm = 35.4 2\nv100-pcie = 54.8 1\n' >"$WORK/t.ini"
"$PV" "$WORK/d.csv" --check-per-target "$WORK/t.ini" >"$WORK/check" 2>&1
check "--check-per-target: another count fails" test $? -eq 1
check "  and says what was measured" has "h100-sxm = 35.4 2, measured 35.4 1" "$WORK/check"
printf '[datasheet]\nv100-pcie = 54.8 1\n' >"$WORK/t.ini"
"$PV" "$WORK/d.csv" --check-per-target "$WORK/t.ini" >"$WORK/check" 2>&1
check "--check-per-target: a GPU left out fails" test $? -eq 1
{ cat "$WORK/d.csv"; printf 'w,a100-pcie-40gb,(step),step,1,0,0,10\nw,a100-pcie-40gb,size,other,1,0,0,0.01\n'
  printf 'w,a100-pcie-40gb,add,memory,2,0,1.34e10,5.0\n'; } >"$WORK/d3.csv"
projections() { local n=$1; shift; "$PV" "$WORK/d3.csv" "$@" >"$WORK/sel" 2>&1 && has "($n projections)" "$WORK/sel"; }
check "three GPUs: six projections" projections 6
check "--with-gpu: the pairs with it" projections 4 --with-gpu a100-pcie-40gb
check "--with-gpu twice: either" projections 6 --with-gpu a100-pcie-40gb --with-gpu v100-pcie
check "--skip-gpu: the pairs without it" projections 2 --skip-gpu a100-pcie-40gb
check "--skip-gpu twice: neither (one GPU left, no pair)" projections 0 --skip-gpu a100-pcie-40gb --skip-gpu v100-pcie
check "--with-gpu and --skip-gpu" projections 2 --with-gpu a100-pcie-40gb --skip-gpu h100-sxm
# per workload, each method's mean |e| over its projections: the model 45.1% (above), the bandwidth ratio
# (|8.01 x 3350/900 - 19.208| / 19.208 + |19.208 x 900/3350 - 8.01| / 8.01) / 2 = 45.4%: not worse. With the V100's
# step at 8.01 x 67/14 = 38.3336 ms, the FP32 peak ratio (67 / 14 TFLOP/s) is exact both ways and the model errs
# |29.7333 - 38.3336| / 38.3336 = 22.4% and |38.3336 x 6.4724/24.01 - 8.01| / 8.01 = 29.0%: 25.7%, worse.
"$PV" "$WORK/d.csv" >"$WORK/pw" 2>&1
per_workload="  per workload (the mean |e| of its projections): the model is worse than the best baseline for that"
check "per workload: the model not worse than the bandwidth ratio" line "$per_workload workload on 0 of 1" "$WORK/pw"
sed 's/^w,v100-pcie,(step),step,1,0,0,19.208$/w,v100-pcie,(step),step,1,0,0,38.3336/' "$WORK/d.csv" >"$WORK/fp32.csv"
"$PV" "$WORK/fp32.csv" >"$WORK/pw" 2>&1
check "per workload: worse than the FP32 peak ratio, named" \
    line "    w                            model  25.7%, fp32 peak ratio   0.0% (2 projections)" "$WORK/pw"
check "  and counted" has "for that workload on 1 of 1 (listed above)" "$WORK/pw"
# --step-form: the step on B from A's step (8.01 / 19.208 ms), A's operator sum (8.01 / 24.01) and its projection
# (29.7333 / 6.4724 ms); the work forms take out the per-operator overhead kept in each of A's two adds (2 x 0.01 ms):
#   scale       +54.8% (above), 19.208 x 6.4724 / 24.01 = 5.1779 (-35.4%): 45.1%
#   scale-work  8.01 x 29.7133 / 7.99 = 29.7877 (+55.1%), 19.208 x 6.4524 / 23.99 = 5.1663 (-35.5%): 45.3%
#   ops         29.7333 (+54.8%), 6.4724 (-19.2%): 37.0%
#   work        29.7133 (+54.7%), 6.4524 (-19.4%): 37.1%
#   outside     29.7333 + 8.01 - 8.01 (+54.8%), 6.4724 + 19.208 - 24.01 = 1.6704 (-79.1%): 67.0%
for fm in scale:45.1 scale-work:45.3 ops:37.0 work:37.1 outside:67.0; do
    "$PV" "$WORK/d.csv" --step-form "${fm%%:*}" --expect "${fm#*:}" >"$WORK/form" 2>&1
    check "--step-form ${fm%%:*}: ${fm#*:}%" test $? -eq 0
done
"$PV" "$WORK/d.csv" --step-form nosuch >"$WORK/form" 2>&1
check "--step-form: an unknown form, exit 2" test $? -eq 2
# B's own step against its operator sum (the floor of --step-form ops): |24.01 - 19.208| / 19.208 = 25.0% and 0
check "breakdown: B's own mismatch" has "B's own step against its operator sum: 12.5%" "$WORK/out"
# --leave-one-out --step-form fit on three GPUs: each GPU's projections by the form fitted on the other two's. Without
# the A100 the H100/V100 pair above chooses ops (37.0%, work 37.1%), and onto the A100 (1555 GB/s) ops gives
# 0.01 + 2 x (0.01 + 3.99 x 3350/1555) = 17.2216 ms (+72.2%) and 0.01 + 2 x (0.01 + 11.99 x 900/1555) = 13.9091
# (+39.1%): 55.7%. Without the H100 the A100/V100 pair chooses outside (-10.1%, -8.9%: 9.5%), which onto the H100
# errs -79.1% (above) and 4.6625 + 10 - 10.01 = 4.6525 ms (-41.9%): 60.5%; a rule that held elsewhere fails there.
"$PV" "$WORK/d3.csv" --step-form fit --leave-one-out --per-target >"$WORK/loo" 2>&1
check "--leave-one-out: the form fitted without the A100" \
    has "fitted without a100-pcie-40gb: ops (37.0% mean |e| over the 2 projections between the other GPUs)" "$WORK/loo"
check "--leave-one-out: without the H100, outside" has "fitted without h100-sxm: outside (9.5% mean" "$WORK/loo"
check "--leave-one-out: onto the A100" line "a100-pcie-40gb = 55.7 2" "$WORK/loo"
check "--leave-one-out: onto the H100" line "h100-sxm = 60.5 2" "$WORK/loo"
check "--leave-one-out: every projection once" has "(6 projections)" "$WORK/loo"
# nothing fitted (a fixed form): leave-one-out is the in-sample figure, and says so
"$PV" "$WORK/d.csv" --leave-one-out --expect 45.1 >"$WORK/loo" 2>&1
check "--leave-one-out, nothing fitted: the in-sample figure" test $? -eq 0
check "  says so" has "nothing is fitted to these data, each projection is the in-sample one" "$WORK/loo"
"$PV" >"$WORK/usage" 2>&1
check "no data: usage, exit 2" test $? -eq 2
exit $((fails > 0))
