#!/usr/bin/env bash
# `mlbench report` on real results files: every view (table, JSON, CSV,
# Markdown, HTML) shows each case's one ceiling and the same state (noisy
# included), and the table fits 120 columns. Files: the H100 reference in
# results/reference (the current schema, burst and sustained phases), the
# first H100 run (tests/data/h100_first_run.json: schema 1, read through the
# fallback) and a schema 1 CPU compute case whose median and sustained rates
# disagree.
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
PY=/usr/bin/python3
fails=0

R=$SRC/results/reference/h100-sxm
files=("$R/membw-peak-launch.json" "$R/all.json" "$R/gpu-verify.json" "$SRC/tests/data/h100_first_run.json")

# The issue's CPU GEMM: median 154.3, sustained 175.7 GFLOP/s, cv 1.2%.
$PY - "$WORK/cpu-v1.json" <<'EOF'
import json, sys
case = {"id": "gemm/openblas/dtype=fp32,k=2048,m=2048,n=2048", "component": "gemm", "backend": "openblas",
        "params": {"dtype": "fp32", "m": "2048", "n": "2048", "k": "2048"}, "status": "ok", "reason": None,
        "work_unit": "flop", "work_per_iteration": 17179869184, "rate_unit": "GFLOP/s", "rate_scale": 1e9,
        "latency_first": False, "repetitions": 5, "noisy": False, "max_cv": 0.1,
        "rate": {"median": 154.3, "best": 160.0, "mean": 155.0, "cv": 0.012},
        "burst": {"rate": 170.0}, "sustained": {"rate": 175.7}, "ceiling_phase": "sustained",
        "peak": {"value": 2817.0, "source": "computed"}, "efficiency": 154.3 / 2817,
        "verification": {"status": "passed", "detail": ""}, "notes": []}
quiet = dict(case, id="gemm/openblas/dtype=fp64,k=2048,m=2048,n=2048",
             params={"dtype": "fp64", "m": "2048", "n": "2048", "k": "2048"},
             rate={"median": 123.1, "best": 123.6, "mean": 123.0, "cv": 0.007},
             burst={"rate": 124.0}, sustained={"rate": 122.0})
doc = {"schema": "mlbench-results", "schema_version": 1, "status": "complete", "started_utc": "2026-01-01T00:00:00Z",
       "context": {"host": {"name": "cpu-box"}, "cpu": {"model": "x"}}, "cases": [case, quiet]}
json.dump(doc, open(sys.argv[1], "w"))
EOF
files+=("$WORK/cpu-v1.json")

for f in "${files[@]}"; do
  name=$(basename "$(dirname "$f")")/$(basename "$f")
  ok=1
  "$MLBENCH" report "$f" >"$WORK/t.txt" 2>"$WORK/err" || ok=0
  "$MLBENCH" report "$f" --format json >"$WORK/t.json" 2>>"$WORK/err" || ok=0
  "$MLBENCH" report "$f" --format csv >"$WORK/t.csv" 2>>"$WORK/err" || ok=0
  "$MLBENCH" report "$f" --format md >"$WORK/t.md" 2>>"$WORK/err" || ok=0
  "$MLBENCH" report "$f" --html "$WORK/t.html" >/dev/null 2>>"$WORK/err" || ok=0
  if [ $ok = 0 ]; then cat "$WORK/err"; echo "FAIL $name: report"; fails=$((fails + 1)); continue; fi
  # a run that did not finish is said so once per view on stderr, and in the page's machine card (the reference's
  # all.json stopped at a limit); never for a complete one
  unfinished=$($PY -c 'import json, sys; print(json.load(open(sys.argv[1]))["status"] != "complete")' "$f")
  said=$(grep -c "^mlbench report: .*: the run did not finish (status \"running\"): it holds the [0-9]* cases" "$WORK/err")
  paged=$(grep -c "<th>run</th><td>the run did not finish (status &quot;running&quot;): it holds the [0-9]* cases" \
    "$WORK/t.html")
  if { [ "$unfinished" = True ] && [ "$said$paged" = 51 ]; } || { [ "$unfinished" = False ] && [ "$said$paged" = 00 ]; }
  then :; else
    echo "FAIL $name: unfinished run $unfinished, said $said times on stderr, $paged in the page"; fails=$((fails + 1))
  fi
  if $PY - "$f" "$WORK" <<'EOF'; then echo "ok   $name: one ceiling and one state in every view, 120 columns"; else echo "FAIL $name"; fails=$((fails + 1)); fi
import csv, html, json, re, sys
src, work = sys.argv[1], sys.argv[2]
orig = json.load(open(src))
doc = json.load(open(work + "/t.json"))
cases = doc["cases"]
assert doc["schema_version"] == 2 and len(cases) == len(orig["cases"])

def state(c):
    if c["status"] != "ok":
        return c["status"]
    v = (c.get("verification") or {}).get("status")
    if v == "failed":
        return "failed"
    if v != "passed":
        return "not verified"
    return "noisy" if c["noisy"] else "ok"

def ceiling(c):
    ce = c.get("ceiling")
    return ce["value"] if ce else None

# the ceiling by the rule, from the original file's numbers
for o, c in zip(orig["cases"], cases):
    want = None
    if o["status"] == "ok":
        if o.get("ceiling"):
            want = o["ceiling"]["value"]
        elif (o.get("sustained") or {}).get("rate"):
            want = o["sustained"]["rate"]
        elif (o.get("rate") or {}).get("median"):
            want = o["rate"]["median"]
    assert ceiling(c) == want, (c["id"], ceiling(c), want)
    if want:
        assert c["ceiling"]["source"] == ("sustained" if (o.get("sustained") or {}).get("rate") else "median")

def close(shown, value, rel):
    assert abs(shown - value) <= rel * abs(value) + 0.5 * (value >= 1e4), (shown, value)

# text: rows in order, every line at most 120 columns
text = open(work + "/t.txt", encoding="utf-8").read().splitlines()
assert max(len(l) for l in text) <= 120, max(len(l) for l in text)
rows = [l for l in text[1:] if re.match(r"(ok|noisy|not verified|failed|skipped) ", l)]
# a run of skipped cases of one backend with one reason is one row: "skipped  copy/cuda: 28 cases ..."
expanded = []
for l in rows:
    g = re.match(r"skipped +(\S+)/(\S+): (\d+) cases ", l)
    if g:
        at = len(expanded)
        run = cases[at:at + int(g.group(3))]
        assert len(run) == int(g.group(3)) > 1, l
        assert all(c["status"] == "skipped" and (c["component"], c["backend"]) == g.group(1, 2)
                   and c["reason"] == run[0]["reason"] for c in run), l
        expanded += [l] * len(run)
    else:
        expanded.append(l)
assert len(expanded) == len(cases), (len(expanded), len(cases))
scale = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1}
for l, c in zip(expanded, cases):
    assert l.startswith(state(c) + " "), (l, state(c))
    m = re.search(r"  ([-0-9.]+) (\S+)  (sustained|median)(\s+\d+%)?$", l)
    if ceiling(c) is None:
        assert m is None, l
        continue
    assert m, l
    if c.get("latency_first"):
        t, per = m.group(2).split("/")
        assert per == c["work_unit"], l
        close(1 / (float(m.group(1)) * scale[t] * c["rate_scale"]), ceiling(c), 5e-3)
    else:
        assert m.group(2) == c["rate_unit"], l
        close(float(m.group(1)), ceiling(c), 5e-4)
    assert m.group(3) == c["ceiling"]["source"], l
    assert "e+" not in l

# CSV: the ceiling columns and the state
rows = list(csv.DictReader(open(work + "/t.csv")))
for r, c in zip(rows, cases):
    assert r["id"] == c["id"] and r["state"] == state(c), (r["id"], r["state"], state(c))
    if ceiling(c) is None:
        assert r["ceiling"] == ""
    else:
        close(float(r["ceiling"]), ceiling(c), 1e-8)
        assert r["ceiling_unit"] == c["rate_unit"] and r["ceiling_source"] == c["ceiling"]["source"]
        if c.get("peak"):
            close(float(r["efficiency"]), ceiling(c) / c["peak"]["value"], 1e-8)

# Markdown: state, label, ceiling, source
md = [l for l in open(work + "/t.md").read().splitlines() if l.startswith("| ") and not l.startswith("| state")]
assert len(md) == len(cases)
for l, c in zip(md, cases):
    cells = [x.strip() for x in l.strip("|").split(" | ")]
    assert cells[0] == state(c), (cells, state(c))
    if ceiling(c) is not None and not c.get("latency_first"):
        num, unit = cells[2].split(" ")
        close(float(num), ceiling(c), 5e-4)
        assert unit == c["rate_unit"] and cells[3] == c["ceiling"]["source"]

# HTML: the all-cases table
page = open(work + "/t.html").read()
table = page[page.index('<table class="cases">'):]
trs = re.findall(r'<tr><td title="([^"]*)">.*?</td><td>([^<]*)</td><td class="n"( data-ceiling="([^"]+)")?', table)
assert len(trs) == len(cases), (len(trs), len(cases))
for (cid, st, _, val), c in zip(trs, cases):
    assert html.unescape(cid) == c["id"] and html.unescape(st) == state(c), (cid, st, state(c))
    if ceiling(c) is None:
        assert val == ""
    else:
        close(float(val), ceiling(c), 1e-12)

# the H100's bf16 oneDNN conv: cv 33.4% is noisy, not ok
for c in cases:
    if c["id"].startswith("conv/onednn/") and c["params"].get("dtype") == "bf16" and c["rate"]["cv"] > 0.3:
        assert state(c) == "noisy"
# the CPU GEMM: sustained 175.7 is the ceiling, 13.9% from the median: noisy
if src.endswith("cpu-v1.json"):
    assert cases[0]["ceiling"] == {"value": 175.7, "unit": "GFLOP/s", "source": "sustained"}
    assert state(cases[0]) == "noisy" and state(cases[1]) == "ok"
EOF
done
# The text outputs the docs show fit 120 columns as well: every code block of README.md and docs/*.md
# but data a user writes or a schema (blocks tagged json, jsonc, ini, csv, python; docs/stage-format.md,
# whose blocks are stage files, not mlbench output).
before=$fails
for doc in "$SRC/README.md" "$SRC"/docs/*.md; do
  case "$doc" in */stage-format.md) continue ;; esac
  if $PY - "$doc" <<'EOF'; then :; else echo "FAIL $doc"; fails=$((fails + 1)); fi
import sys
inside, skip = False, False
for i, l in enumerate(open(sys.argv[1], encoding="utf-8"), 1):
    if l.startswith("```"):
        skip = not inside and l[3:].strip() in ("json", "jsonc", "ini", "csv", "python")
        inside = not inside
        continue
    if inside and not skip:
        assert len(l.rstrip("\n")) <= 120, "%s line %d: %d columns" % (sys.argv[1], i, len(l.rstrip("\n")))
EOF
done
[ $fails -eq $before ] && echo "ok   README.md, docs/*.md: text examples fit 120 columns"
# docs/report.md shows text examples at all (the check above is not vacuous there)
if grep -q '^```' "$SRC/docs/report.md"; then :; else echo "FAIL docs/report.md: no text example"; fails=$((fails + 1)); fi
# Disk IOPS and read latency percentiles (README's component table) in the table and the Markdown, one per case that
# measured them, with the JSON's figures
"$MLBENCH" report "$R/all.json" >"$WORK/disk.txt" 2>/dev/null
"$MLBENCH" report "$R/all.json" --format md >"$WORK/disk.md" 2>/dev/null
/usr/bin/python3 - "$R/all.json" "$WORK/disk.txt" "$WORK/disk.md" <<'EOF' || { echo "FAIL disk latency"; fails=$((fails + 1)); }
import json, sys
cases = [c for c in json.load(open(sys.argv[1]))["cases"] if (c.get("metrics") or {}).get("latency_p50")]
def fmt(us):  # mb_fmt_seconds: 3 significant digits
    for unit, k in (("s", 1e-6), ("ms", 1e-3), ("µs", 1), ("ns", 1e3)):
        if us * k >= 1 or unit == "ns":
            return "%.3g %s" % (us * k, unit)
assert cases, "the reference has disk latencies"
for path in sys.argv[2:]:
    text = open(path).read()
    assert text.count("; latency p50 ") == len(cases), (path, text.count("; latency p50 "), len(cases))
    for c in cases:
        want = "latency p50 %s; p99 %s; p99.9 %s" % tuple(fmt(c["metrics"][k]["value"]) for k in
                                                       ("latency_p50", "latency_p99", "latency_p99.9"))
        assert want in " ".join(text.split()), (path, c["id"], want)
print("ok   disk IOPS and latency in the table and the Markdown:", len(cases), "cases")
EOF
# The legend says only what the table shows: "@ = mean SM clock" where a case read an SM clock (a GPU), never on a
# CPU-only run
"$MLBENCH" report "$R/all.json" 2>/dev/null | grep -q "@ = mean SM clock" || {
    echo "FAIL legend: the H100's table does not explain @"; fails=$((fails + 1)); }
"$MLBENCH" report "$SRC/tests/data/cpu_quick.json" 2>/dev/null | grep -q "SM clock" && {
    echo "FAIL legend: a CPU-only table explains an SM clock it does not show"; fails=$((fails + 1)); }
[ $fails -eq 0 ] || { echo "report_views: $fails failed"; exit 1; }
echo "report_views: all passed"
