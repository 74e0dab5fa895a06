#!/usr/bin/env bash
# golden_outputs.sh: every reading command's output on the shipped data, byte
# for byte against tests/golden/ — so a move of code (a file split, a room, a
# new formatter) that changes what a user reads fails here, and a change that
# means to is made on purpose with --update (and shows in the diff).
#
#   MLBENCH=build/mlbench tests/golden_outputs.sh           check (exit 1 on a difference)
#   MLBENCH=build/mlbench tests/golden_outputs.sh --update  write tests/golden/ anew
#
# Reads only files in the tree (results/reference, tests/data) and, for the
# trace cases, ../shared/fixtures/kineto in place ($MLBENCH_SHARED): without
# it those cases are skipped, and fail when CI is set. Measuring commands
# are not here: their numbers differ from run to run by nature.
set -euo pipefail
SRC="$(cd "$(dirname "$0")/.." && pwd)"
cd "$SRC"
MLBENCH="${MLBENCH:?MLBENCH=path to the mlbench binary}"
case "$MLBENCH" in /*) ;; *) MLBENCH="$SRC/$MLBENCH" ;; esac
GOLDEN="$SRC/tests/golden"
SHARED="${MLBENCH_SHARED:-$SRC/../shared}"
KINETO="$SHARED/fixtures/kineto"
update=0
[ "${1:-}" = "--update" ] && update=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Every command runs in $run, where the tree's data and the fixtures are
# links of fixed names: a path printed in the output (and wrapped to the
# terminal width) then reads the same from any checkout, under any TMPDIR.
run="$work/run"
mkdir "$run"
ln -s "$SRC/tests" "$run/tests"
ln -s "$SRC/results" "$run/results"
ln -s "$SRC/bench" "$run/bench"
[ -d "$KINETO" ] && ln -s "$KINETO" "$run/kineto"
[ -d "$SHARED" ] && ln -s "$SHARED" "$work/shared" # README's ../shared/h100

# name | arguments (the page of --html goes to $PAGE; fixture paths start
# $KINETO, read as kineto/ in $run)
CASES=$(cat <<'EOF'
report_ref.txt|report results/reference/h100-sxm/all.json
report_ref.md|report results/reference/h100-sxm/all.json --format md
report_cpu.csv|report tests/data/cpu_quick.json --format csv
report_cpu.json|report tests/data/cpu_quick.json --format json
report_cpu.html|report tests/data/cpu_quick.json --html $PAGE
compare.txt|compare tests/data/gap_here.json tests/data/gap_there.json
compare_ref.json|compare tests/data/gap_here.json results/reference/h100-sxm/all.json --format json
compare.html|compare tests/data/gap_here.json tests/data/gap_there.json --html $PAGE
gap.txt|gap --run tests/data/gap_run.json --ceilings tests/data/gap_here.json
gap_csv.json|gap --run tests/data/gap_run.csv --ceilings tests/data/gap_here.json --format json
gap.md|gap --run tests/data/gap_run.json --ceilings tests/data/gap_here.json --format md
gap_target.txt|gap --run tests/data/gap_run.json --ceilings tests/data/gap_here.json --target h200-sxm,b200
gap_target.html|gap --run tests/data/gap_run.json --ceilings tests/data/gap_here.json --target h200-sxm,b200 --html $PAGE
trace_ns.json|trace $KINETO/ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz
gap_trace_nccl.txt|gap --run $KINETO/nccl_parser_config__nccl_data.json.gz --ceilings h100-sxm
gap_trace_ns.txt|gap --run $KINETO/ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz --ceilings h100-sxm --target h200-sxm,b200
gap_trace_cpu.json|gap --run $KINETO/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz --ceilings tests/data/cpu_quick.json --format json
gap_trace_cpu.txt|gap --run $KINETO/cpu_only__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz --ceilings tests/data/cpu_quick.json
EOF
)

checked=0 skipped=0 differ=0
while IFS='|' read -r name args; do
  [ -n "$name" ] || continue
  if [[ "$args" == *'$KINETO'* ]] && [ ! -d "$KINETO" ]; then
    if [ -n "${CI:-}" ]; then
      echo "golden: $name: fixtures missing at $KINETO (CI is set: they must be there)" >&2
      exit 1
    fi
    echo "golden: $name: skipped, no fixtures at $KINETO"
    skipped=$((skipped + 1))
    continue
  fi
  page="$work/page.html"
  rm -f "$page"
  expanded=${args//\$PAGE/$page}
  expanded=${expanded//\$KINETO/kineto}
  # shellcheck disable=SC2086  # the arguments are words by design
  rc=0
  (cd "$run" && "$MLBENCH" $expanded) >"$work/out" 2>"$work/err" || rc=$?
  # What a user reads: the page where there is one, else stdout; stderr and the
  # exit status follow, so a new warning or a changed status shows too.
  { if [ -f "$page" ]; then cat "$page"; else cat "$work/out"; fi
    [ -s "$work/err" ] && { echo "--- stderr"; cat "$work/err"; }
    echo "--- exit $rc"; } >"$work/$name"
  if [ "$update" = 1 ]; then
    mkdir -p "$GOLDEN"
    cp "$work/$name" "$GOLDEN/$name"
  elif [ ! -f "$GOLDEN/$name" ]; then
    echo "golden: $name: no tests/golden/$name (write it with --update)" >&2
    differ=$((differ + 1))
  elif ! diff -u "$GOLDEN/$name" "$work/$name" >"$work/diff"; then
    echo "golden: $name differs from tests/golden/$name (mlbench $args):" >&2
    head -40 "$work/diff" >&2
    differ=$((differ + 1))
  fi
  checked=$((checked + 1))
done <<<"$CASES"

[ "$checked" -gt 0 ] || { echo "golden: no case ran" >&2; exit 1; }
# The outputs README.md shows (its <!-- output: ... --> blocks), the same way.
readme_args=()
[ "$update" = 1 ] && readme_args=(--update)
python3 "$SRC/tests/readme_outputs.py" "$MLBENCH" "$run" "$SRC/README.md" "${readme_args[@]}" || differ=$((differ + 1))
if [ "$update" = 1 ]; then
  echo "golden: wrote $checked outputs to tests/golden/ ($skipped skipped)"
  exit 0
fi
if [ "$differ" -gt 0 ]; then
  echo "golden: $differ of $checked outputs differ; if the change is meant, rerun with --update and commit tests/golden/" >&2
  exit 1
fi
echo "golden: $checked outputs identical ($skipped skipped)"
