#!/usr/bin/env bash
# fault_load.sh: `mlbench --suite quick` beside a CPU hog (docs/reliability.md,
# "Faults during a run"). The hog (one process per core) burns the CPU in
# bursts of random length (50-300 ms on, 50-300 ms off), so the repetitions
# of a CPU case run at different speeds. Asserted:
#   - under the hog, at least one ok case is flagged: "noisy": true in the
#     results, "noisy" as the state of its progress line, "noisy" in the table of
#     `mlbench report`, never a plain "ok" ceiling;
#   - in every run, with or without the hog, an ok case is flagged exactly
#     when the noise rule says so (results.h mb_noise_judge): its cv exceeds
#     its max_cv (2 or more repetitions), or its median, burst and sustained
#     rates are further apart than max(3 x cv, 5%); a compute case with
#     sustained sub-windows on them instead (results/README.md).
# How many cases are flagged without the hog is printed, not asserted: on a
# shared machine other work can make any case noisy.
# FAULT_RUNS runs with and without the hog (default 1; docs/reliability.md
# quotes 5). Needs $MLBENCH, $WORK (tests/CMakeLists.txt).
set -u

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

[ -x "${MLBENCH:-}" ] || fail "MLBENCH is not an executable: '${MLBENCH:-}'"
runs=${FAULT_RUNS:-1}
rm -rf "$WORK"
mkdir -p "$WORK" || fail "cannot create $WORK"
cd "$WORK" || exit 1

hogs=()
start_hog() {
    for _ in $(seq 1 "$(nproc)"); do
        python3 -c '
import random, time
while True:
    end = time.monotonic() + random.uniform(0.05, 0.3)
    while time.monotonic() < end:
        pass
    time.sleep(random.uniform(0.05, 0.3))
' &
        hogs+=($!)
    done
}
stop_hog() {
    for p in "${hogs[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    hogs=()
}
trap stop_hog EXIT

# $1 results file, $2 log: prints "<ok cases> <noisy>"; fails on any case
# whose flag disagrees with its cv, or a noisy case not shown as such.
check() {
    "$MLBENCH" report "$1" >"$1.table" 2>&1 || { cat "$1.table"; fail "report $1"; }
    python3 - "$1" "$2" "$1.table" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
table = open(sys.argv[3]).read().splitlines()
ok = noisy = 0
for index, c in enumerate(doc["cases"], 1):
    if c["status"] != "ok":
        continue
    ok += 1
    cv, max_cv = c["rate"]["cv"], c["max_cv"]
    tol = max(3 * cv, 0.05)
    med = c["rate"]["median"]
    bu, su = (c.get("burst") or {}).get("rate"), (c.get("sustained") or {}).get("rate")
    sub_n, sub_cv = (c.get("sustained") or {}).get("sub_windows") or 0, (c.get("sustained") or {}).get("sub_cv")
    if sub_n >= 3 and sub_cv is not None:  # judged on the steady state too (results/README.md)
        tol = max(3 * sub_cv, 0.05)
        expect = (c["repetitions"] >= 2 and cv > max_cv) or sub_cv > max_cv or bool(bu and su > bu * (1 + tol))
    else:
        expect = (c["repetitions"] >= 2 and cv > max_cv) or bool(
            su and (abs(su - med) / min(su, med) > tol or (bu and su > bu * (1 + tol))))
    if c["noisy"] != expect:
        sys.exit(f"FAIL: {c['id']}: cv {cv:.3f}, max_cv {max_cv}, noisy {c['noisy']}")
    line = [l for l in log.splitlines() if l.startswith(f"[{index}/")]  # the case's progress line, by its number
    if len(line) != 1 or bool(re.match(r"^\[\d+/\d+\] noisy ", line[0])) != expect:
        sys.exit(f"FAIL: {c['id']}: progress line {line} (noisy {expect})")
    if expect:
        noisy += 1
        if not any(n.startswith("noisy:") for n in c["notes"]):
            sys.exit(f"FAIL: {c['id']}: no 'noisy:' note")
statuses = [l.split()[0] for l in table[1:] if l and not l.startswith(("ceiling", " "))]
if statuses.count("noisy") != noisy or statuses.count("ok") != ok - noisy:
    sys.exit(f"FAIL: the report table shows {statuses}, expected {noisy} noisy of {ok} ok")
print(ok, noisy)
EOF
}

total_hog=0 total_quiet=0 ok_hog=0 ok_quiet=0
for i in $(seq 1 "$runs"); do
    start_hog
    "$MLBENCH" --suite quick --out "hog-$i.json" >"hog-$i.txt" 2>&1
    rc=$?
    stop_hog
    [ $rc -le 1 ] || { cat "hog-$i.txt"; fail "run $i under the hog exited $rc"; }
    read -r ok n <<<"$(check "hog-$i.json" "hog-$i.txt")" || exit 1
    [ -n "$n" ] || fail "run $i under the hog: check failed"
    [ "$n" -ge 1 ] || { cat "hog-$i.txt"; fail "run $i under the hog: no case flagged noisy"; }
    total_hog=$((total_hog + n)) ok_hog=$((ok_hog + ok))

    "$MLBENCH" --suite quick --out "quiet-$i.json" >"quiet-$i.txt" 2>&1
    rc=$?
    [ $rc -le 1 ] || { cat "quiet-$i.txt"; fail "run $i without the hog exited $rc"; }
    read -r ok n <<<"$(check "quiet-$i.json" "quiet-$i.txt")" || exit 1
    [ -n "$n" ] || fail "run $i without the hog: check failed"
    total_quiet=$((total_quiet + n)) ok_quiet=$((ok_quiet + ok))
    echo "ok: run $i: noisy under the hog $(grep -c '^\[[0-9]*/[0-9]*\] noisy ' "hog-$i.txt"), without $n"
done
echo "fault_load: $runs/$runs runs passed; noisy cases: $total_hog of $ok_hog ok under the hog," \
    "$total_quiet of $ok_quiet ok without it"
exit 0
