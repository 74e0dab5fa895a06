#!/usr/bin/env bash
# fault_concurrent.sh: two `mlbench --suite quick` started at once in the
# same directory with the same --disk-dir and the default results name
# (docs/reliability.md, "Faults during a run"). Both must complete (exit 0,
# status "complete", every case), in two different results files, having read
# two different test files; nothing is left behind. Started in the same
# second, both compute the same default name: the second must get "-2".
# FAULT_RUNS pairs (default 2; docs/reliability.md quotes 20).
# FAULT_NO_LINK=1 (ctest fault_concurrent_nolink): the same with link(2)
# refused by $MB_WRITE_FAIL_SHIM, as on vfat: the results writer claims its
# name with O_EXCL instead, and the shim's log shows it did.
# Needs $MLBENCH, $WORK (tests/CMakeLists.txt).
set -u

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

[ -x "${MLBENCH:-}" ] || fail "MLBENCH is not an executable: '${MLBENCH:-}'"
runs=${FAULT_RUNS:-2}
rm -rf "$WORK"
mkdir -p "$WORK" || fail "cannot create $WORK"
cd "$WORK" || exit 1
pre=() # what runs mlbench: nothing, or the shim refusing link()
if [ "${FAULT_NO_LINK:-0}" = 1 ]; then
    [ -f "${MB_WRITE_FAIL_SHIM:-}" ] || fail "FAULT_NO_LINK=1 needs MB_WRITE_FAIL_SHIM"
    MB_SHIM_NO_LINK="$WORK/links-refused.log"
    pre=(env LD_PRELOAD="$MB_WRITE_FAIL_SHIM" MB_SHIM_NO_LINK="$MB_SHIM_NO_LINK"
        ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}")
fi

same_second=0
for i in $(seq 1 "$runs"); do
    rm -rf results dd
    mkdir dd
    "${pre[@]}" "$MLBENCH" --suite quick --disk-dir dd >"a-$i.txt" 2>&1 &
    a=$!
    "${pre[@]}" "$MLBENCH" --suite quick --disk-dir dd >"b-$i.txt" 2>&1 &
    b=$!
    wait $a
    ra=$?
    wait $b
    rb=$?
    [ $ra -eq 0 ] || { cat "a-$i.txt"; fail "pair $i: run a exited $ra"; }
    [ $rb -eq 0 ] || { cat "b-$i.txt"; fail "pair $i: run b exited $rb"; }
    python3 - "$i" results/*.json <<'EOF' || fail "pair $i: see above"
import json, sys
pair, files = sys.argv[1], sys.argv[2:]
if len(files) != 2:
    sys.exit(f"pair {pair}: {len(files)} results file(s) for two runs: {files}")
disk_files = []
counts = []
for path in files:
    doc = json.load(open(path))
    cases = doc["cases"]
    # "complete" is written only after the last case: every case of the suite ran
    if doc["status"] != "complete" or not cases:
        sys.exit(f"{path}: status {doc['status']}, {len(cases)} cases")
    counts.append(len(cases))
    bad = [c["id"] for c in cases if c["status"] == "failed"]
    if bad:
        sys.exit(f"{path}: failed cases {bad}")
    disk_files += sorted({c["info"].get("file") for c in cases if c["component"] == "disk"})
if counts[0] != counts[1]:
    sys.exit(f"pair {pair}: the runs hold {counts[0]} and {counts[1]} cases")
if len(disk_files) != 2 or len(set(disk_files)) != 2:
    sys.exit(f"pair {pair}: the runs' test files: {disk_files}")
print(f"ok: pair {pair}: {files[0]} and {files[1]}, test files {disk_files[0]} and {disk_files[1]}")
EOF
    ls results | grep -q -- '-2\.json$' && same_second=$((same_second + 1))
    left=$(find . -name 'mlbench-disk-*' -o -name '*.tmp.*')
    [ -z "$left" ] || fail "pair $i: left behind: $left"
done
how=""
if [ "${FAULT_NO_LINK:-0}" = 1 ]; then
    refused=$(grep -c 'link refused: .*results/' "$MB_SHIM_NO_LINK" 2>/dev/null || echo 0)
    # every run claims its default name once: two per pair, all by O_EXCL
    [ "$refused" -ge $((2 * runs)) ] || fail "the shim refused $refused link() calls for results files; expected >= $((2 * runs))"
    how=", link() refused $refused times: names claimed with O_EXCL"
fi
echo "fault_concurrent: $runs/$runs pairs passed ($same_second started in the same second and got the -2 name$how)"
exit 0
