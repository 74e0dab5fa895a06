#!/usr/bin/env python3
"""The HTML pages of mlbench in a real browser (Debian's headless chromium).

Makes each kind of page from real results (a run: `mlbench --suite quick --html`
made here;
report: the H100 results in tests/data; gap: the H100 ResNet-18 trace, or
its stage file, against those results, projected onto the h100-sxm
datasheet; compare: the H100 against a CPU machine's quick run, with prices),
loads each in chromium with a small check script added to a copy, and checks
what the browser laid out:

  - every chart the page should have is there, with the expected number of
    series, points and bars (counted from the same results the page came
    from) and its axis labels and ticks;
  - no text overflows its box: every SVG text inside its SVG, category labels
    left of their bars, no table cell wider than its box, the page no wider
    than a 1280 px window;
  - no console errors and no script errors;

then saves a screenshot of each page under the build tree. With --docs-img
DIR it also writes one image per chart kind there (docs/img, for
docs/report.md), each chart rendered alone by the same browser.

Exit status: 0 all passed, 1 a check failed, 77 (ctest's skip) when
chromium is absent. Stdlib only.
"""
import argparse
import glob
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

CHECK_JS = r"""
<script>
(function () {
  var errors = [];
  window.addEventListener('error', function (e) { errors.push('error: ' + e.message); });
  var origError = console.error;
  console.error = function () { errors.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); origError.apply(console, arguments); };
  function run() {
    var out = { charts: [], overflow: [], errors: errors,
                width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight,
                tables: {} };
    document.querySelectorAll('svg.chart').forEach(function (svg) {
      var box = svg.getBoundingClientRect();
      var c = { id: svg.getAttribute('data-chart'),
                series: svg.querySelectorAll('g.series').length,
                points: svg.querySelectorAll('circle.pt').length,
                bars: svg.querySelectorAll('rect.bar').length,
                axis_labels: Array.prototype.map.call(svg.querySelectorAll('text.axis-label'), function (t) { return t.textContent; }),
                ticks: svg.querySelectorAll('text.tick').length,
                series_points: Array.prototype.map.call(svg.querySelectorAll('g.series'), function (g) { return g.querySelectorAll('circle.pt').length; }) };
      out.charts.push(c);
      var barLeft = Infinity;
      svg.querySelectorAll('rect.bar').forEach(function (r) { barLeft = Math.min(barLeft, r.getBoundingClientRect().left); });
      svg.querySelectorAll('text').forEach(function (t) {
        var r = t.getBoundingClientRect();
        if (r.width === 0) return;
        if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
          out.overflow.push(c.id + ': text "' + t.textContent + '" outside its chart');
        if (t.classList.contains('cat') && r.right > barLeft + 1)
          out.overflow.push(c.id + ': label "' + t.textContent + '" runs into the bars');
      });
    });
    document.querySelectorAll('td, th').forEach(function (td) {
      if (td.scrollWidth > td.clientWidth + 1)
        out.overflow.push('table cell "' + td.textContent.slice(0, 60) + '" overflows');
    });
    document.querySelectorAll('table').forEach(function (t) {
      if (t.className) out.tables[t.className] = t.querySelectorAll('tr').length - 1;
    });
    if (out.width > 1280) out.overflow.push('page is ' + out.width + ' px wide at a 1280 px window');
    var pre = document.createElement('pre');
    pre.id = 'mb-check';
    pre.textContent = JSON.stringify(out);
    document.body.appendChild(pre);
  }
  if (document.readyState === 'complete') run(); else window.addEventListener('load', run);
})();
</script>
"""


def find_chromium():
    for name in (os.environ.get("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def chromium_args(chromium, profile):
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--disable-extensions", "--disable-background-networking", "--user-data-dir=" + profile,
            "--enable-logging=stderr", "--v=0", "--force-device-scale-factor=1"]


def browse(chromium, profile, page, extra, timeout=120):
    cmd = chromium_args(chromium, profile) + extra + ["file://" + os.path.abspath(page)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, text=True,
                       errors="replace")
    return p


def console_errors(stderr):
    """Console and script errors chromium logged for the page (not its own start-up noise)."""
    bad = []
    for line in stderr.splitlines():
        if "CONSOLE" in line and ("Uncaught" in line or "error" in line.lower()):
            bad.append(line.strip())
        elif "Uncaught" in line:
            bad.append(line.strip())
    return bad


def check_page(chromium, profile, page, work):
    text = open(page, encoding="utf-8").read()
    if re.search(r"<script[^>]*\bsrc=|<link[^>]*\bhref=\"?https?:|@import|url\(\s*['\"]?https?:", text):
        return None, ["the page loads something from outside"]
    probe = os.path.join(work, os.path.basename(page) + ".probe.html")
    with open(probe, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", CHECK_JS + "</body>"))
    p = browse(chromium, profile, probe, ["--window-size=1280,1000", "--virtual-time-budget=3000", "--dump-dom"])
    m = re.search(r'<pre id="mb-check">(.*?)</pre>', p.stdout, re.S)
    if not m:
        return None, ["chromium produced no check result (exit %d): %s" % (p.returncode, p.stderr[-400:])]
    res = json.loads(html.unescape(m.group(1)))
    res["console"] = console_errors(p.stderr)
    return res, []


def screenshot(chromium, profile, page, png, height):
    h = max(600, min(int(height) + 40, 16000))
    p = browse(chromium, profile, page, ["--window-size=1280,%d" % h, "--screenshot=" + png])
    return p.returncode == 0 and os.path.exists(png)


def chart(res, cid):
    for c in res["charts"]:
        if c["id"] == cid:
            return c
    return None


class Checker:
    def __init__(self):
        self.fails = 0

    def ok(self, name, cond, detail=""):
        print(("ok   " if cond else "FAIL ") + name + ("" if cond else ("  " + str(detail))))
        if not cond:
            self.fails += 1


# ---- expected figures, from the same documents the pages come from -----------------------

def usable(c):
    return (c.get("status") == "ok" and (c.get("verification") or {}).get("status") == "passed"
            and ((c.get("rate") or {}).get("median") or 0) > 0)


def expect_results(doc):
    cases = doc["cases"]
    exp = {"ceiling_bars": 0, "charts": set()}
    for c in cases:
        if usable(c):
            exp["ceiling_bars"] += 1 + (1 if (c.get("peak") or {}).get("value") else 0)
    gpu_pts = sum(1 for c in cases if usable(c) and c["component"] in ("gemm", "conv")
                  and (c["backend"].startswith("cu")))
    cpu_pts = sum(1 for c in cases if usable(c) and c["component"] in ("gemm", "conv")
                  and not c["backend"].startswith("cu"))
    exp["roofline-gpu"] = gpu_pts
    exp["roofline-cpu"] = cpu_pts
    copies = [c for c in cases if usable(c) and c["component"] == "copy"]
    exp["copy-bw"] = (len({(c["params"]["direction"], c["params"]["memory"]) for c in copies}), len(copies))
    disks = [c for c in cases if usable(c) and c["component"] == "disk"]
    exp["disk"] = (len({(c["backend"], c["params"].get("pattern"), c["params"].get("mode", c["params"].get("advice")),
                         c["params"].get("qd")) for c in disks}), len(disks))
    exp["not_run"] = sum(1 for c in cases if not (c.get("status") == "ok" and
                                                  (c.get("verification") or {}).get("status") == "passed"))
    exp["cases"] = len(cases)
    return exp


def check_results_page(ck, kind, res, doc):
    exp = expect_results(doc)
    ceil = [c for c in res["charts"] if c["id"].startswith("ceiling-")]
    ck.ok(kind + ": ceiling charts", len(ceil) > 0)
    ck.ok(kind + ": ceiling + peak bars", sum(c["bars"] for c in ceil) == exp["ceiling_bars"],
          "%d bars, want %d" % (sum(c["bars"] for c in ceil), exp["ceiling_bars"]))
    ck.ok(kind + ": ceiling charts have ticks and a unit", all(c["ticks"] >= 2 and c["axis_labels"] for c in ceil))
    for dev in ("gpu", "cpu"):
        want = exp["roofline-" + dev]
        rc = chart(res, "roofline-" + dev)
        if want:
            ck.ok("%s: roofline %s has its %d cases" % (kind, dev, want), rc is not None and rc["points"] == want,
                  rc and rc["points"])
            ck.ok("%s: roofline %s axes" % (kind, dev), rc is not None and len(rc["axis_labels"]) == 2
                  and rc["ticks"] >= 4, rc and rc["axis_labels"])
    for cid in ("copy-bw", "disk"):
        series, points = exp[cid]
        rc = chart(res, cid)
        if points:
            ck.ok("%s: %s has %d series, %d points" % (kind, cid, series, points),
                  rc is not None and rc["series"] == series and rc["points"] == points,
                  rc and (rc["series"], rc["points"]))
    ck.ok(kind + ": skipped/failed listed", res["tables"].get("not-run", 0) == exp["not_run"],
          (res["tables"].get("not-run"), exp["not_run"]))
    ck.ok(kind + ": all cases listed", res["tables"].get("cases") == exp["cases"])


def check_gap_page(ck, res, gj):
    step = gj.get("step") or {}
    if step.get("parts"):  # a trace: the step table's parts
        n_parts = sum(1 for p in step["parts"] if p["seconds"] > 0)
    else:  # a stage file: exposed time per stage
        n_parts = sum(1 for s in gj["stages"] if s.get("exposed_seconds", s["seconds"]) > 0) + \
            (1 if gj["run"]["unaccounted_seconds"] > 0 else 0)
    c = chart(res, "step")
    ck.ok("gap: stacked step bar has %d parts" % n_parts, c is not None and c["bars"] == n_parts, c and c["bars"])
    ck.ok("gap: step axis", c is not None and c["axis_labels"] == ["milliseconds"])
    n_rank = len(gj["ranking"])
    c = chart(res, "ranking")
    ck.ok("gap: ranking has %d bars" % n_rank, c is not None and c["bars"] == n_rank, c and c["bars"])
    c = chart(res, "waterfall")
    ck.ok("gap: waterfall has %d bars" % (n_rank + 2), c is not None and c["bars"] == n_rank + 2, c and c["bars"])
    ck.ok("gap: stage table", res["tables"].get("stages") == len(gj["stages"]))
    ck.ok("gap: headline lists every stage, with or without a ceiling",
          res["tables"].get("headline") ==
          len(gj["headline"]["stages"]) + (1 if gj["run"]["unaccounted_seconds"] > 0 else 0),
          res["tables"].get("headline"))
    ck.ok("gap: the step's parts with their shares under the bar", res["tables"].get("step-parts") == n_parts,
          res["tables"].get("step-parts"))
    if gj.get("projection"):
        c = chart(res, "projection")
        want = 2 * (len(gj["stages"]) + 1)
        ck.ok("gap: projection has %d bars" % want, c is not None and c["bars"] == want, c and c["bars"])


def check_compare_page(ck, res, cj):
    n_m = len(cj["machines"])
    rates = sum(1 for c in cj["cases"] for r in c["rate"] if r is not None and r > 0)
    per = [c for c in res["charts"] if c["id"].startswith("compare-")]
    ck.ok("compare: per-component bars = usable rates (%d)" % rates, sum(c["bars"] for c in per) == rates,
          sum(c["bars"] for c in per))
    geo = sum(1 for g in cj["geomean"].values() for r in g["ratio"][1:] if r is not None and r > 0)
    c = chart(res, "geomean")
    ck.ok("compare: geomean bars (%d)" % geo, (c["bars"] if c else 0) == geo, c and c["bars"])
    priced = any(m.get("usd_per_hour") for m in cj["machines"])
    if priced:
        geo_usd = sum(1 for g in cj["geomean"].values() for r in g["per_usd_ratio"][1:] if r is not None and r > 0)
        c = chart(res, "geomean-usd")
        ck.ok("compare: price-performance bars (%d)" % geo_usd, (c["bars"] if c else 0) == geo_usd, c and c["bars"])
    ck.ok("compare: machines table", res["tables"].get("machines") == n_m)
    ck.ok("compare: log axes labelled", all(c["axis_labels"] and c["ticks"] >= 2 for c in per))


# ---- making the pages ---------------------------------------------------------------------

def run(cmd, **kw):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    return p.stdout


def make_pages(a, work):
    data = os.path.join(a.src, "tests", "data")
    h100 = a.h100 or os.path.join(a.src, "results", "reference", "h100-sxm", "all.json")
    cpu = a.cpu or os.path.join(data, "cpu_quick.json")
    trace = a.trace
    if trace is None:
        shared = os.environ.get("MLBENCH_SHARED", os.path.join(a.src, "..", "shared"))
        cand = os.path.join(shared, "h100", "resnet18-dataloader-bound.pt.trace.json.gz")
        if not os.path.exists(cand) and os.environ.get("CI"):
            sys.exit("fixture missing (CI is set): " + cand)
        # without ../shared: a hand-made stage file of ours against the H100's ceilings
        trace = cand if os.path.exists(cand) else os.path.join(data, "gap_run.json")
    m = os.path.abspath(a.mlbench)
    pages = {}
    # a run: a short CPU run made here (the page a run writes, from its own results)
    run_json = os.path.join(work, "run.json")
    pages["run"] = os.path.join(work, "run.html")
    if a.run_page:
        # a run made elsewhere (e.g. `mlbench --suite quick --out q.json --html q.html`)
        run_json, pages["run"] = os.path.abspath(a.run_json), os.path.abspath(a.run_page)
    else:
        cmd = [m, "--suite", "quick", "-q", "--out", run_json, "--html", pages["run"]]
        if a.run_filter:
            cmd += ["--filter", a.run_filter]
        run(cmd, cwd=work)
    pages["report"] = os.path.join(work, "report.html")
    run([m, "report", h100, "--html", pages["report"]])
    pages["gap"] = os.path.join(work, "gap.html")
    gap_json = os.path.join(work, "gap.json")
    run([m, "gap", "--run", trace, "--ceilings", h100, "--target", "h100-sxm", "--format", "json", "--out",
         gap_json, "--html", pages["gap"]])
    pages["compare"] = os.path.join(work, "compare.html")
    cmp_json = os.path.join(work, "compare.json")
    run([m, "compare", h100, cpu, "--price", "NVIDIA H100 80GB HBM3=3", "--price", "AMD EPYC=0.2",
         "--format", "json", "--out", cmp_json, "--html", pages["compare"]])
    docs = {"run": json.load(open(run_json)), "report": json.load(open(h100)), "gap": json.load(open(gap_json)),
            "compare": json.load(open(cmp_json))}
    # same input, same bytes
    again = os.path.join(work, "report-again.html")
    run([m, "report", h100, "--html", again])
    docs["deterministic"] = open(again, "rb").read() == open(pages["report"], "rb").read()
    return pages, docs


# One image per chart kind for docs/report.md: (page, chart id, file name).
DOC_CHARTS = [
    ("report", "ceiling-membw", "ceiling-vs-peak.png"),
    ("report", "roofline-gpu", "roofline.png"),
    ("report", "copy-bw", "copy-bandwidth.png"),
    ("report", "disk", "disk.png"),
    ("gap", "step", "gap-step.png"),
    ("gap", "ranking", "gap-ranking.png"),
    ("gap", "waterfall", "gap-waterfall.png"),
    ("gap", "projection", "gap-projection.png"),
    ("compare", "geomean", "compare-geomean.png"),
    ("compare", "compare-0", "compare-component.png"),
    ("compare", "geomean-usd", "compare-price.png"),
]


def chart_alone(chromium, profile, page, cid, png, work):
    text = open(page, encoding="utf-8").read()
    m = re.search(r'<svg class="chart" data-chart="%s".*?</svg>' % re.escape(cid), text, re.S)
    if not m:
        return False
    svg = m.group(0)
    w, h = re.search(r'width="(\d+)" height="(\d+)"', svg).groups()
    alone = os.path.join(work, "alone-" + cid + ".html")
    with open(alone, "w", encoding="utf-8") as f:
        f.write('<!DOCTYPE html><html><head><meta charset="utf-8"><style>body{margin:0;background:#fff}'
                '</style></head><body>%s</body></html>' % svg)
    # headless chromium paints less than a small window's height: give it room (the rest is white)
    p = browse(chromium, profile, alone, ["--window-size=%s,%d" % (w, max(int(h) + 100, 300)), "--screenshot=" + png])
    return p.returncode == 0 and os.path.exists(png)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mlbench", required=True)
    ap.add_argument("--src", required=True, help="the source tree (tests/data)")
    ap.add_argument("--out", required=True, help="where pages and screenshots go (under the build tree)")
    ap.add_argument("--h100", help="H100 results (default results/reference/h100-sxm/all.json)")
    ap.add_argument("--cpu", help="CPU results for compare (default tests/data/cpu_quick.json)")
    ap.add_argument("--trace", help="run for gap (default: the shared H100 trace, else its stage file)")
    ap.add_argument("--run-filter", help="--filter of the run (default: the whole quick suite)")
    ap.add_argument("--run-page", help="check this run page instead of making one (with --run-json)")
    ap.add_argument("--run-json", help="the results file of --run-page")
    ap.add_argument("--docs-img", help="also write one image per chart kind here")
    a = ap.parse_args()
    if bool(a.run_page) != bool(a.run_json):
        ap.error("--run-page and --run-json go together")
    chromium = find_chromium()
    if chromium is None:
        print("SKIP: chromium is not installed (apt-get install chromium); the pages were not checked in a browser")
        return SKIP
    a.out = os.path.abspath(a.out)
    os.makedirs(a.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="mb-browser-", dir=a.out)
    profile = os.path.join(work, "profile")
    pages, docs = make_pages(a, work)
    ck = Checker()
    ck.ok("HTML is deterministic (same input, same bytes)", docs["deterministic"])
    for kind in ("run", "report", "gap", "compare"):
        res, errs = check_page(chromium, profile, pages[kind], work)
        ck.ok(kind + ": page loads and is checked", res is not None, errs)
        if res is None:
            continue
        ck.ok(kind + ": no console or script errors", not res["errors"] and not res["console"],
              res["errors"] + res["console"])
        ck.ok(kind + ": no text overflows its box", not res["overflow"], res["overflow"][:5])
        if kind in ("run", "report"):
            check_results_page(ck, kind, res, docs[kind])
        elif kind == "gap":
            check_gap_page(ck, res, docs["gap"])
        else:
            check_compare_page(ck, res, docs["compare"])
        png = os.path.join(a.out, kind + ".png")
        ck.ok(kind + ": screenshot " + png, screenshot(chromium, profile, pages[kind], png, res["height"]))
    if a.docs_img:
        os.makedirs(a.docs_img, exist_ok=True)
        for kind, cid, name in DOC_CHARTS:
            ck.ok("docs image " + name, chart_alone(chromium, profile, pages[kind], cid,
                                                    os.path.join(a.docs_img, name), work))
    shutil.rmtree(profile, ignore_errors=True)
    if ck.fails:
        print("%d check(s) failed; pages kept in %s" % (ck.fails, work))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
