#!/usr/bin/env bash
# `mlbench compare` of the first H100 run's results file (mlbench 24d4a23, the
# H100 reference until 2026-11-26) against a copy of itself whose io_uring ids
# carry the parameters the backend gained after the file was written
# (registered, sqpoll, iopoll): at their defaults every case pairs with
# its copy; with sqpoll=on the io_uring cases are other measurements.
# (harness/analysis/compare/case_identity.h; --baseline: tests/test_case_identity.c)
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
H100=$SRC/tests/data/h100_first_run.json
if "$MLBENCH" list 2>/dev/null | grep -E '^disk +io_uring ' | grep -q 'not built in'; then
  echo "io_uring not built in: its parameter table is unknown here (exact ids only)"; exit 77
fi
fails=0
check() { # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
# copy NAME SQPOLL: the file with today's io_uring ids, as the harness writes them (all parameters, name order)
copy() {
  python3 - "$H100" "$WORK/$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for c in doc["cases"]:
    if c["backend"] == "io_uring":
        c["params"].update(registered="auto", sqpoll=sys.argv[3], iopoll="off")
        c["id"] = "disk/io_uring/" + ",".join("%s=%s" % kv for kv in sorted(c["params"].items()))
json.dump(doc, open(sys.argv[2], "w"))
PY
}
# paired FILE: "rows disk_rows disk_rows_on_both uring_cases" of compare's JSON
paired() {
  python3 - "$1" "$H100" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["cases"]
disk = [r for r in rows if r["component"] == "disk"]
uring = sum(c["backend"] == "io_uring" for c in json.load(open(sys.argv[2]))["cases"])
print(len(rows), len(disk), sum(1 for r in disk if r["on_every_machine"]), uring)
PY
}
n_cases=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["cases"]))' "$H100")
n_disk=$(python3 -c 'import json,sys; print(sum(c["component"]=="disk" for c in json.load(open(sys.argv[1]))["cases"]))' "$H100")

copy today.json off
"$MLBENCH" compare "$H100" today.json --format json >c.json 2>err
check "compare exits 0" test $? -eq 0
read -r rows disk both uring < <(paired c.json)
check "io_uring cases in the file" test "$uring" -gt 0
check "one row per case ($rows of $n_cases)" test "$rows" -eq "$n_cases"
check "every disk case paired ($both of $n_disk)" test "$both" -eq "$n_disk"
"$MLBENCH" compare today.json "$H100" --format json >r.json 2>err
read -r rows disk both uring < <(paired r.json)
check "the other way round too ($both of $n_disk)" test "$rows" -eq "$n_cases" -a "$both" -eq "$n_disk"

copy sqpoll.json on
"$MLBENCH" compare "$H100" sqpoll.json --format json >s.json 2>err
read -r rows disk both uring < <(paired s.json)
check "sqpoll=on: io_uring rows apart ($rows rows)" test "$rows" -eq $((n_cases + uring))
check "sqpoll=on: other disk cases paired" test "$both" -eq $((n_disk - uring))
exit $((fails > 0))
