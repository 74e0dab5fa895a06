#!/usr/bin/env bash
# fault_signals.sh: SIGKILL, SIGTERM and SIGINT at random moments of
# `mlbench --suite quick` (docs/reliability.md, "Faults during a run").
# Every run, whatever the signal:
#   - the results file left behind (if any) is valid JSON and holds every
#     case the run announced as finished before the signal (fault_check.py);
# after SIGTERM/SIGINT:
#   - no test file, temporary directory or temporary results file is left;
# after SIGKILL (no handler runs):
#   - the next run in the same directories removes what the killed run left
#     (stale mlbench-disk-<pid>-* files and *.json.tmp.<pid>) and says so.
# Runs alternate between --disk-dir and the default temporary directory, and
# between --out and the default results/ name.
# FAULT_RUNS (default 6; docs/reliability.md quotes 51) runs in
# all, split evenly over the three signals. FAULT_SEED makes the moments
# repeatable. Needs $MLBENCH, $SRC, $WORK (tests/CMakeLists.txt).
set -u

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

[ -x "${MLBENCH:-}" ] || fail "MLBENCH is not an executable: '${MLBENCH:-}'"
runs=${FAULT_RUNS:-6}
seed=${FAULT_SEED:-$$}
RANDOM=$seed
rm -rf "$WORK"
mkdir -p "$WORK/dd" || fail "cannot create $WORK"
cd "$WORK" || exit 1
echo "runs: $runs, seed: $seed (FAULT_SEED=$seed repeats these moments)"

# How long a whole quick run takes here: the signals land in [0, 0.8 x that] (the GPU and MPI cases at the end are quick skips here).
start=$(date +%s%N)
"$MLBENCH" --suite quick --out full.json >full.log 2>&1 || { cat full.log; fail "an undisturbed quick run failed"; }
span_ms=$(( ($(date +%s%N) - start) / 1000000 * 8 / 10 ))
python3 "$SRC/tests/fault_check.py" full.json full.log >/dev/null || fail "the undisturbed run's file"
echo "an undisturbed quick run: $((span_ms * 10 / 8)) ms"

leftovers() { # what an mlbench run can leave behind in $WORK
    find "$WORK" \( -name 'mlbench-disk-*' -o -name '*.tmp.*' \) 2>/dev/null | sort
}

passed=0 early=0 swept=0 partial=0
declare -A per_sig=([KILL]=0 [TERM]=0 [INT]=0)
for i in $(seq 1 "$runs"); do
    sigs=(KILL TERM INT)
    sig=${sigs[$(( (i - 1) % 3 ))]}
    args=(--suite quick)
    [ $((i % 2)) -eq 0 ] && args+=(--disk-dir "$WORK/dd")
    if [ $((i % 4)) -lt 2 ]; then
        out="res-$i.json"
        args+=(--out "$out")
    else
        out=""
    fi
    before=$(ls results 2>/dev/null | sort)
    delay_ms=$(( (RANDOM * 32768 + RANDOM) % (span_ms > 0 ? span_ms : 1) ))
    "$MLBENCH" "${args[@]}" >"log-$i.txt" 2>&1 &
    pid=$!
    sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
    if kill "-$sig" $pid 2>/dev/null; then
        wait $pid
        rc=$?
    else
        wait $pid
        rc=$?
        early=$((early + 1))
    fi
    if [ -z "$out" ]; then # the file this run made under results/
        out=$(comm -13 <(echo "$before") <(ls results 2>/dev/null | sort) | grep -v '\.tmp\.' | head -n 1)
        [ -n "$out" ] && out="results/$out"
    fi
    what="run $i: SIG$sig after ${delay_ms} ms (exit $rc)"
    check=$(python3 "$SRC/tests/fault_check.py" "${out:-none.json}" "log-$i.txt") ||
        { cat "log-$i.txt"; fail "$what: $check"; }
    case $check in *status=running*) partial=$((partial + 1)) ;; esac
    left=$(leftovers)
    if [ "$sig" != KILL ] && [ -n "$left" ]; then
        cat "log-$i.txt"
        fail "$what: left behind: $left"
    fi
    if [ "$sig" = KILL ] && [ -n "$left" ]; then
        # The next run, in the same directories, must clean up and say so.
        next=(--suite "$SRC/tests/data/fault_disk_tiny.ini")
        [ $((i % 2)) -eq 0 ] && next+=(--disk-dir "$WORK/dd")
        [ $((i % 4)) -lt 2 ] && next+=(--out "next-$i.json")
        "$MLBENCH" "${next[@]}" >"next-$i.txt" 2>&1 || { cat "next-$i.txt"; fail "$what: the next run failed"; }
        still=$(leftovers)
        [ -z "$still" ] || fail "$what: the next run left the stale files: $still"
        for f in $left; do
            grep -qF "$(basename "$f")" "next-$i.txt" ||
                { cat "next-$i.txt"; fail "$what: the next run removed $f without saying so"; }
        done
        swept=$((swept + 1))
    fi
    passed=$((passed + 1))
    per_sig[$sig]=$((per_sig[$sig] + 1))
    echo "ok: $what: $check${left:+; stale files removed by the next run}"
done
echo "fault_signals: $passed/$runs runs passed (KILL ${per_sig[KILL]}, TERM ${per_sig[TERM]}, INT ${per_sig[INT]});" \
    "$partial left a partial file, $early finished before the signal, $swept SIGKILLs left files the next run removed"
exit 0
