#!/usr/bin/env bash
# `mlbench compare` as a buyer meets it: a real H100 results file next to a
# CPU machine's quick run (results/reference/h100-sxm/all.json, tests/data/cpu_quick.json), both
# from hosts named "vm". The machines must be told apart by their hardware,
# cases shown by the parameters their job files set (not the 150-character
# ids), and every line of the terminal table fit in 120 columns.
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
D=$SRC/tests/data
H100=$SRC/results/reference/h100-sxm/all.json
fails=0
check() { # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
has() { grep -q -- "$1" "$2" || { echo "  '$1' not in $2"; return 1; }; }
hasnt() { ! grep -q -- "$1" "$2" || { echo "  '$1' in $2:"; grep -- "$1" "$2" | head -3; return 1; }; }
fits() { # every line at most $1 characters
  local long; long=$(awk -v m="$1" 'length($0) > m' "$2")
  [ -z "$long" ] || { echo "  lines over $1 columns:"; echo "$long" | head -5; return 1; }
}

"$MLBENCH" compare "$H100" "$D/cpu_quick.json" >"$WORK/t.txt" 2>"$WORK/err"
check "compare exits 0" test $? -eq 0
check "A is the GPU" has "A: NVIDIA H100 80GB HBM3 " "$WORK/t.txt"
check "B is the CPU" has "B: AMD EPYC " "$WORK/t.txt"
check "host name alone is not the label" hasnt "A: vm " "$WORK/t.txt"
check "rows fit 120 columns" fits 120 "$WORK/t.txt"
check "cases by the parameters set" has "hostmem/stream kernel=triad threads=0" "$WORK/t.txt"
check "sizes humanised" has "block_size=4k" "$WORK/t.txt"
check "no full ids" hasnt "file_size=536870912" "$WORK/t.txt"

"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --format md >"$WORK/t.md" 2>"$WORK/err"
check "md: labels in heads" has "| A NVIDIA H100 80GB HBM3 " "$WORK/t.md"
check "md: no full ids" hasnt "file_size=536870912" "$WORK/t.md"

"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --format json >"$WORK/t.json" 2>"$WORK/err"
check "json keeps full ids" has "file_size=536870912" "$WORK/t.json"

"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --label "rented=all.json" \
  --price "rented=2.5" --price "AMD EPYC=0.1" >"$WORK/p.txt" 2>"$WORK/err"
check "--label and --price by label" test $? -eq 0
check "override shown" has "A: rented " "$WORK/p.txt"
check "priced" has "2.5 USD/hour" "$WORK/p.txt"
check "priced rows fit" fits 120 "$WORK/p.txt"

"$MLBENCH" compare "$H100" "$H100" >"$WORK/same.txt" 2>"$WORK/err"
check "same file twice still told apart" has "B: NVIDIA H100 80GB HBM3 #2 " "$WORK/same.txt"

"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --label "x=nope.json" >"$WORK/o" 2>"$WORK/err"
check "unknown --label file exits 2" test $? -eq 2
check "says which" has "nope.json" "$WORK/err"

# --html: a page for each command, no outside resources, the same bytes twice
"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --html "$WORK/c1.html" >/dev/null 2>&1
"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --html "$WORK/c2.html" >/dev/null 2>&1
check "compare --html written" has '<svg class="chart" data-chart="geomean"' "$WORK/c1.html"
check "compare --html deterministic" cmp -s "$WORK/c1.html" "$WORK/c2.html"
check "compare --html: no scripts" hasnt "<script" "$WORK/c1.html"
check "compare --html: no outside links" hasnt "http://\|https://" <(grep -v 'xmlns="http://www.w3.org/2000/svg"' "$WORK/c1.html")
"$MLBENCH" report "$H100" --html "$WORK/r.html" >/dev/null 2>&1
check "report --html: roofline" has 'data-chart="roofline-gpu"' "$WORK/r.html"
check "report --html: labels, not ids" has "gemm/cublaslt shape=8192x8192x8192 dtype=bf16" "$WORK/r.html"
"$MLBENCH" gap --run "$D/gap_run.json" --ceilings "$H100" --html "$WORK/g.html" >/dev/null 2>&1
check "gap --html: waterfall" has 'data-chart="waterfall"' "$WORK/g.html"
"$MLBENCH" report "$H100" --html "$WORK/no/such/dir/r.html" >/dev/null 2>"$WORK/err"
check "report --html to a bad path fails" test $? -ne 0
check "  and says where" has "no/such/dir" "$WORK/err"

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
