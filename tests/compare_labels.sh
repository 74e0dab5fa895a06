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
fits() { # every line at most $1 characters (characters, not bytes: "µs" is one column)
  local long; long=$(python3 -c 'import sys
for l in open(sys.argv[2], encoding="utf-8"):
    if len(l.rstrip("\n")) > int(sys.argv[1]): print(l, end="")' "$1" "$2")
  [ -z "$long" ] || { echo "  lines over $1 columns:"; echo "$long" | head -5; return 1; }
}

"$MLBENCH" compare "$H100" "$D/cpu_quick.json" >"$WORK/t.txt" 2>"$WORK/err"
check "compare exits 0" test $? -eq 0
check "A is the GPU" has "A: NVIDIA H100 80GB HBM3$" "$WORK/t.txt"
check "B is the CPU" has "B: AMD EPYC" "$WORK/t.txt"
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
check "override shown" has "A: rented, " "$WORK/p.txt"
check "priced" has "2.5 USD/hour" "$WORK/p.txt"
check "priced rows fit" fits 120 "$WORK/p.txt"

"$MLBENCH" compare "$H100" "$H100" >"$WORK/same.txt" 2>"$WORK/err"
check "same file twice still told apart" has "B: NVIDIA H100 80GB HBM3 #2$" "$WORK/same.txt"

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

# unlike machines (issue 17 item 2): both views with their coverage, the
# machines priced by the letters the output shows, human numbers and units
"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --price A=3 --price B=0.2 >"$WORK/a.txt" 2>"$WORK/err"
check "--price by letter" test $? -eq 0
check "  A priced" has "A: NVIDIA H100 80GB HBM3, 3 USD/hour" "$WORK/a.txt"
# several in one --price, as people type them (it read as one name, "A=3,B")
"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --price A=3,B=0.2 >"$WORK/a2.txt" 2>"$WORK/err"
check "--price A=3,B=0.2" test $? -eq 0
check "  the same as two --price" cmp -s "$WORK/a.txt" "$WORK/a2.txt"
"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --price "NVIDIA H100 80GB HBM3=3" --price "AMD EPYC=0.2" \
  >"$WORK/u.txt" 2>"$WORK/err"
check "--price by label" test $? -eq 0
# device kinds apart (issue 34): the H100 box's host CPU against the CPU box, its GPU against nothing
check "best per kind: host CPU GEMM against host CPU GEMM" \
  has "gemm (host CPU)  *dtype=fp32  .* onednn noisy  .* openblas noisy  *0.020x" "$WORK/u.txt"
check "best per kind: the GPU's GEMM has nothing to face" \
  has "gemm (GPU)  *dtype=fp32  .* cublaslt  *-  *-$" "$WORK/u.txt"
check "  never a GPU against a CPU" hasnt "cublaslt .* openblas\|cudnn .* onednn" "$WORK/u.txt"
check "geomeans state their coverage" has "x ([0-9]* of [0-9]*)" "$WORK/u.txt"
check "no geomean without its coverage" hasnt "[0-9]x ([0-9]*)" "$WORK/u.txt"
check "work per dollar in FLOP/\$" has "PFLOP/\\$" "$WORK/u.txt"
check "no exponents" hasnt "[0-9]e[+-][0-9]" "$WORK/u.txt"
check "unlike rows fit 120 columns" fits 120 "$WORK/u.txt"
sed -n '/^cases on every machine/,/^cases not on every machine/p' "$WORK/u.txt" >"$WORK/every.txt"
check "cases on every machine: only cases that ran" hasnt "skipped\|failed\|absent\|not verified" "$WORK/every.txt"
check "  and it has the one both ran" has "hostmem/stream kernel=triad" "$WORK/every.txt"
"$MLBENCH" compare "$D/cpu_quick.json" --reference h100-sxm --price B=3 >"$WORK/ref.txt" 2>"$WORK/err"
check "--reference: priced by letter" has "B: .*(reference), 3 USD/hour" "$WORK/ref.txt"
check "--reference: rows fit 120 columns" fits 120 "$WORK/ref.txt"
check "--reference: datasheet figures marked" has "B 63 GB/s (datasheet)" "$WORK/ref.txt"
# the reference's own results say cuBLAS has no fp8: no datasheet figure for it (1.98 PFLOP/s, above
# the 1.48 its cuBLASLt fp8 measured), the reason instead
check "--reference: a path it lacks is not runnable here" \
  has "B not runnable here (fp8 is not available through cublasGemmEx: use backend cublaslt)" "$WORK/ref.txt"
check "  and has no datasheet figure" hasnt "1.98 PFLOP/s" "$WORK/ref.txt"
# the headline says which device a mean is of; the GPU's, with nothing on A to face, says so
sed -n '/^geometric means of the ratios/,/^work per dollar/p' "$WORK/ref.txt" >"$WORK/ref-geo.txt"
check "--reference: the host CPU's gemm mean named so" has "^  gemm (host CPU)  *best per kind  *48.8x (1 of 3)$" \
  "$WORK/ref-geo.txt"
check "  the GPU's apart" has "^  gemm (GPU)  *best per kind  *- (0 of 7)$" "$WORK/ref-geo.txt"
check "  no mean without its device" hasnt "^  [a-z]*  *best per kind" "$WORK/ref-geo.txt"
check "--reference: per dollar says what it divides" has "B is a GPU machine, whose price pays for its" "$WORK/ref.txt"
"$MLBENCH" compare "$H100" "$D/cpu_quick.json" "$D/gap_here.json" --price A=3 --price B=0.2 --price C=1 \
  >"$WORK/three.txt" 2>"$WORK/err"
check "three machines fit 120 columns" fits 120 "$WORK/three.txt"
# every case on both sides, the long disk labels too: they wrap in their column
"$MLBENCH" compare "$H100" "$H100" >"$WORK/same.txt" 2>"$WORK/err"
check "long case labels fit 120 columns" fits 120 "$WORK/same.txt"
check "  and wrap under their own column" has "^    qd=32 sqpoll=on submit=each$" "$WORK/same.txt"
check "  geomeans per view" has "like-for-like  *- (0 of 29)  *- (0 of 29)" "$WORK/three.txt"
"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --price vm=1 >"$WORK/o" 2>"$WORK/err"
check "--price of a host both machines share exits 2" test $? -eq 2
check "  and asks for the letter" has "names 2 machines" "$WORK/err"
"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --price C=1 >"$WORK/o" 2>"$WORK/err"
check "--price of no machine exits 2" test $? -eq 2
check "  and lists the names" has "A, 'NVIDIA H100 80GB HBM3', all.json" "$WORK/err"
"$MLBENCH" compare "$H100" "$D/cpu_quick.json" --price "NVIDIA H100 80GB HBM3=3" --price "AMD EPYC=0.2" \
  --html "$WORK/u.html" >/dev/null 2>&1
check "html: per-dollar unit" has "PFLOP/\\$" "$WORK/u.html"
check "html: no rate x h/\$ unit" hasnt "h/\\$" "$WORK/u.html"
# no exponents anywhere, axis ticks included (SI prefixes: 100u, not 1e-04)
check "html: no exponents" hasnt ">[^<]*[0-9]e[+-][0-9]" "$WORK/u.html"
# a geomean chart names A, so an image of it alone says what its ratios are to
check "html: the ratio axis names A" has "ratio to A, NVIDIA H100 80GB HBM3 (1x = as fast as A)" "$WORK/u.html"
check "html: best-per-kind geomeans" has 'data-chart="geomean-best"' "$WORK/u.html"
# geomean bars grow from 1x: every bar of the chart starts or ends at the x of the tick "1"
from_one() {
  python3 - "$1" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
bad = 0
for cid in ("geomean-best", "geomean", "geomean-usd"):
    i = s.index('data-chart="%s"' % cid)
    svg = s[i:s.index("</svg>", i)]
    one = float(re.search(r'<text class="tick" x="([0-9.]+)"[^>]*>1</text>', svg).group(1))
    bars = [(float(x), float(w)) for x, w in re.findall(r'<rect class="bar" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"', svg)]
    ends = [x for x, w in bars if abs(x - one) > 0.05 and abs(x + w - one) > 0.05]
    if not bars or ends:
        print("  %s: %d bars, %d not from 1x" % (cid, len(bars), len(ends)))
        bad += 1
sys.exit(bad)
PY
}
check "html: geomean bars from 1x" from_one "$WORK/u.html"

# one figure in every view: each mean of the JSON, as text, Markdown and the page show it (issue 34)
"$MLBENCH" compare "$D/cpu_quick.json" --reference h100-sxm --price A=0.2 --price B=3 --format json \
  --html "$WORK/ref.html" >"$WORK/ref.json" 2>"$WORK/err"
"$MLBENCH" compare "$D/cpu_quick.json" --reference h100-sxm --price A=0.2 --price B=3 --format md \
  >"$WORK/ref.md" 2>"$WORK/err"
"$MLBENCH" compare "$D/cpu_quick.json" --reference h100-sxm --price A=0.2 --price B=3 >"$WORK/ref2.txt" 2>"$WORK/err"
same_means() {
  python3 - "$WORK/ref.json" "$WORK/ref2.txt" "$WORK/ref.md" "$WORK/ref.html" <<'PY'
import html, json, math, re, sys
doc = json.load(open(sys.argv[1]))
text, md, page = (open(p, encoding="utf-8").read() for p in sys.argv[2:5])
page = html.unescape(page)
name = {"cpu": "host CPU", "gpu": "GPU"}
def ratio(r):  # mb_fmt_ratio
    d = 0 if r >= 100 else 1 if r >= 10 else 2
    if r < 0.1:
        d = 1 - math.floor(math.log10(r))
    return "%.*fx" % (d, r)
def geo(r, n, total):
    return "%s (%d of %d)" % (ratio(r), n, total) if r else "- (0 of %d)" % total
bad, seen = [], 0
for g in doc["geomean"]:
    what = "%s (%s)" % (g["component"], name[g["device"]])
    b = g["best_per_kind"]
    for view, r, n, total, unit, usd in (("best per kind", b["ratio"][1], b["kinds"][1], b["kinds_total"], "kinds", 0),
                                         ("like-for-like", g["ratio"][1], g["cases"][1], g["cases_total"], "cases", 0),
                                         ("best per kind", b["per_usd_ratio"][1], b["kinds"][1], b["kinds_total"],
                                          "kinds", 1)):
        if total == 0:
            continue
        cell = geo(r, n, total)
        want_md = "| %s | %s | %s |" % (what, view, cell)
        if usd:  # the per-dollar table: after its heading
            ok_md = want_md in md[md.index("per-dollar ratios"):]
        else:
            ok_md = want_md in md[:md.index("## Work per dollar")]
        # the terminal: the component's best-per-kind row, its like-for-like row under it
        part = (text[text.index("per-dollar ratios"):] if usd else text[:text.index("\nwork per dollar")]).split("\n")
        at = [i for i, l in enumerate(part) if re.match(r"  %s +best per kind " % re.escape(what), l)]
        line = part[at[0] + (view == "like-for-like")] if at and at[0] + 1 < len(part) else ""
        ok_text = re.match(r" +(%s +)?%s +%s$" % (re.escape(what), view, re.escape(cell)), line) is not None
        ok_page = not r or ("%s B/A: %s over %d of %d %s" % (what, ratio(r), n, total, unit)) in page
        ok_page = ok_page and ("%s: B %d of %d" % (what, n if r else 0, total)) in page
        if not (ok_md and ok_text and ok_page):
            bad.append("%s %s%s %s: md %s text %s page %s" % (what, view, " per $" if usd else "", cell, ok_md, ok_text,
                                                               ok_page))
        seen += 1
for d, note in doc.get("per_usd_notes", {}).items():
    if "- " + note not in md or "<li>%s</li>" % note not in page:
        bad.append("note of %s not in md or page" % d)
print("  %d means checked" % seen)
for b in bad[:8]:
    print("  " + b)
sys.exit(1 if bad or seen < 10 else 0)
PY
}
check "every mean the same in text, Markdown, JSON and the page" same_means

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all checks passed"
