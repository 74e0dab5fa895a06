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
import struct
import tempfile
import zlib

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
                tick_texts: Array.prototype.map.call(svg.querySelectorAll('text.tick'),
                                                     function (t) { return t.textContent; }),
                values: svg.querySelectorAll('text.value').length,
                bar_widths: Array.prototype.map.call(svg.querySelectorAll('rect.bar'),
                                                     function (r) { return r.getBoundingClientRect().width; }),
                series_points: Array.prototype.map.call(svg.querySelectorAll('g.series'), function (g) { return g.querySelectorAll('circle.pt').length; }),
                lines: Array.prototype.filter.call(svg.querySelectorAll('polyline'), function (l) { return (l.getAttribute('points') || '').trim().length > 0; }).length,
                // category labels in full (a cut label keeps its whole text in its <title>)
                cats: Array.prototype.map.call(svg.querySelectorAll('text.cat'), function (t) {
                  var title = t.querySelector('title');
                  return title ? title.textContent : t.textContent; }),
                overlaps: [] };
      c.data = c.points + c.bars + c.lines;
      // roofs, slopes and curves stay inside the plot area (the axes' lines bound it)
      var xa = svg.querySelector('g.axis.x line'), ya = svg.querySelector('g.axis.y line');
      c.outside = [];
      if (xa && ya) {
        var xr = xa.getBoundingClientRect(), yr = ya.getBoundingClientRect();
        svg.querySelectorAll('line.roof, polyline').forEach(function (l) {
          var r = l.getBoundingClientRect();
          if (r.left < xr.left - 2 || r.right > xr.right + 2 || r.top < yr.top - 2 || r.bottom > yr.bottom + 2)
            c.outside.push(l.tagName + ' ' + Math.round(r.left) + ',' + Math.round(r.top) + '..' +
                           Math.round(r.right) + ',' + Math.round(r.bottom));
        });
      }
      // no two drawn labels of a chart overlap (their laid-out boxes, 1 px of slack)
      var texts = Array.prototype.filter.call(svg.querySelectorAll('text'), function (t) { var r = t.getBoundingClientRect(); return r.width > 0 && r.height > 0; });
      var rects = texts.map(function (t) { return t.getBoundingClientRect(); });
      for (var i = 0; i < texts.length; i++)
        for (var j = i + 1; j < texts.length; j++) {
          var a = rects[i], b = rects[j];
          if (a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1 && b.top < a.bottom - 1)
            c.overlaps.push('"' + texts[i].firstChild.textContent + '" and "' + texts[j].firstChild.textContent + '"');
        }
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
    out.usd_notes = Array.prototype.map.call(document.querySelectorAll('ul.usd li'),
                                             function (li) { return li.textContent; });
    out.roofline_heading = Array.prototype.some.call(document.querySelectorAll('h2'), function (h) { return h.textContent === 'Roofline'; });
    document.querySelectorAll('table').forEach(function (t) {
      if (t.className) out.tables[t.className] = t.querySelectorAll('tr').length - 1;
    });
    if (out.width > 1280) out.overflow.push('page is ' + out.width + ' px wide at a 1280 px window');
    // the figures the page shows for a case (bars, dots, table cells marked with data-case)
    out.figures = Array.prototype.map.call(document.querySelectorAll('[data-case]'), function (e) {
      var svg = e.closest('svg.chart');
      return { id: e.getAttribute('data-case'), value: parseFloat(e.getAttribute('data-value')),
               where: svg ? svg.getAttribute('data-chart') : e.tagName.toLowerCase(),
               text: e.tagName.toLowerCase() === 'td' ? e.textContent : null };
    });
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
    copies = [c for c in cases if usable(c) and c["component"] == "copy" and c["params"]["direction"] != "d2d"]
    exp["copy-bw"] = (len({(c["params"]["direction"], c["params"]["memory"]) for c in copies}), len(copies))
    d2d = [c for c in cases if usable(c) and c["component"] == "copy" and c["params"]["direction"] == "d2d"]
    exp["copy-d2d"] = (1 if d2d else 0, len(d2d))
    disks = [c for c in cases if usable(c) and c["component"] == "disk"]
    # a curve per backend, pattern, mode and queue depth, and per io_uring option a case turns on (the page's
    # series key: harness/results_page.c)
    exp["disk"] = (len({(c["backend"], c["params"].get("pattern"), c["params"].get("mode", c["params"].get("advice")),
                         c["params"].get("qd"), c["params"].get("sqpoll") == "on", c["params"].get("iopoll") == "on",
                         c["params"].get("submit") == "each") for c in disks}), len(disks))
    exp["not_run"] = sum(1 for c in cases if not (c.get("status") == "ok" and
                                                  (c.get("verification") or {}).get("status") == "passed"))
    exp["cases"] = len(cases)
    return exp


def ceiling_of(case):
    """The one figure of a case: its `ceiling` (results schema with one ceiling per case), else the
    repetitions' median rate (the files before it)."""
    ceil = case.get("ceiling")
    if isinstance(ceil, dict) and isinstance(ceil.get("value"), (int, float)):
        return ceil["value"]
    return (case.get("rate") or {}).get("median")


def close(a, b, rel=1e-6):
    return a is not None and b is not None and abs(a - b) <= rel * max(abs(a), abs(b))


def rounded(value, shown):
    """value rounded to as many significant digits as the text `shown` has (\"154.3\" -> 4)."""
    mant = re.split(r"[eE]", shown)[0].lstrip("+-").replace(".", "").lstrip("0")
    return float("%.*g" % (max(len(mant), 1), value))


def check_headline_figures(ck, kind, res, doc):
    """Every figure the page shows for a case (ceiling bar, roofline dot, the table's headline cell) is the
    results file's ceiling of that case; the table's visible text too, to its 4 significant digits."""
    by_id = {c["id"]: c for c in doc["cases"]}
    figs = res.get("figures") or []
    wrong = []
    for f in figs:
        c = by_id.get(f["id"])
        want = ceiling_of(c) if c else None
        if not close(f["value"], want):
            wrong.append("%s in %s: %s, the file's ceiling %s" % (f["id"], f["where"], f["value"], want))
        if f["text"] is not None and want:
            m = re.match(r"\s*([-+]?[0-9.]+(?:[eE][-+]?[0-9]+)?)", f["text"])
            shown = float(m.group(1)) if m else None
            if m is None or not close(shown, rounded(want, m.group(1)), 1e-9):
                wrong.append("%s: the table shows %r, the file's ceiling %s" % (f["id"], f["text"], want))
    shown_cases = {f["id"] for f in figs if f["where"] == "td"}
    want_cases = {c["id"] for c in doc["cases"] if usable(c)}
    ck.ok(kind + ": every usable case's headline figure is marked in the table", want_cases <= shown_cases,
          sorted(want_cases - shown_cases)[:3])
    ck.ok(kind + ": each figure shown for a case is the results file's ceiling (%d figures)" % len(figs),
          figs and not wrong, wrong[:5])


def check_results_page(ck, kind, res, doc):
    exp = expect_results(doc)
    ids = {c["id"] for c in res["charts"]}
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
    for cid in ("copy-bw", "copy-d2d", "disk"):
        series, points = exp[cid]
        rc = chart(res, cid)
        if points:
            ck.ok("%s: %s has %d series, %d points" % (kind, cid, series, points),
                  rc is not None and rc["series"] == series and rc["points"] == points,
                  rc and (rc["series"], rc["points"]))
    ck.ok(kind + ": a Roofline heading only with a roofline",
          ("roofline-gpu" in ids or "roofline-cpu" in ids) == res["roofline_heading"], res["roofline_heading"])
    check_headline_figures(ck, kind, res, doc)
    ck.ok(kind + ": skipped/failed listed", res["tables"].get("not-run", 0) == exp["not_run"],
          (res["tables"].get("not-run"), exp["not_run"]))
    ck.ok(kind + ": all cases listed", res["tables"].get("cases") == exp["cases"])


TIME_AXIS = re.compile(r"^time per (step|run) \((s|ms|µs|ns)\)$")


def time_axes_plain(res):
    """The charts whose axis names a time unit and has a tick that is not a plain number ("200µ" over
    "milliseconds": an SI prefix on a prefixed unit)."""
    bad = []
    for c in res["charts"]:
        if any(re.search(r"seconds|\((s|ms|µs|ns)\)", a) for a in c["axis_labels"]):
            bad += ["%s: %r" % (c["id"], t) for t in c["tick_texts"] if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", t)]
    return bad


def headline_bars(gj):
    """The bars of the chart of what the step is made of: per stage its lost part and its part at the ceiling, or
    all of it without a ceiling (harness/analysis/gap/gap_page.c draws a part more than 1e-9 of its row)."""
    n = 0
    for s in gj["headline"]["stages"]:
        ex = s["exposed_seconds_per_step"]
        if s["has_ceiling"]:
            lost = min(ex, s["seconds_lost_per_step"] or 0)
            n += (lost > 1e-9 * ex) + (ex - lost > 1e-9 * ex)
        else:
            n += ex > 0
    return n + (1 if gj["run"]["unaccounted_seconds"] > 0 else 0)


def check_gap_page(ck, kind, res, gj):
    step = gj.get("step") or {}
    if step.get("parts"):  # a trace: the step table's parts
        n_parts = sum(1 for p in step["parts"] if p["seconds"] > 0)
    else:  # a stage file: exposed time per stage
        n_parts = sum(1 for s in gj["stages"] if s.get("exposed_seconds", s["seconds"]) > 0) + \
            (1 if gj["run"]["unaccounted_seconds"] > 0 else 0)
    c = chart(res, "step")
    ck.ok(kind + ": stacked step bar has %d parts" % n_parts, c is not None and c["bars"] == n_parts, c and c["bars"])
    ck.ok(kind + ": step axis in one time unit", c is not None and len(c["axis_labels"]) == 1
          and TIME_AXIS.match(c["axis_labels"][0]), c and c["axis_labels"])
    bad = time_axes_plain(res)
    ck.ok(kind + ": every time axis has plain-number ticks", not bad, bad[:5])
    rows = len(gj["headline"]["stages"]) + (1 if gj["run"]["unaccounted_seconds"] > 0 else 0)
    c = chart(res, "headline")
    ck.ok(kind + ": what the step is made of: %d stages, each with its figure, %d bars" % (rows, headline_bars(gj)),
          c is not None and c["values"] == rows and c["bars"] == headline_bars(gj), c and (c["values"], c["bars"]))
    n_rank = len(gj["ranking"])
    c = chart(res, "waterfall")
    if n_rank:
        ck.ok(kind + ": waterfall has %d bars, each visible" % (n_rank + 1), c is not None and c["bars"] == n_rank + 1
              and min(c["bar_widths"]) >= 1.5, c and (c["bars"], c["bar_widths"]))
    else:
        ck.ok(kind + ": no waterfall when nothing is lost", c is None)
    ck.ok(kind + ": stage table", res["tables"].get("stages") == len(gj["stages"]))
    ck.ok(kind + ": headline lists every stage, with or without a ceiling",
          res["tables"].get("headline") ==
          len(gj["headline"]["stages"]) + (1 if gj["run"]["unaccounted_seconds"] > 0 else 0),
          res["tables"].get("headline"))
    ck.ok(kind + ": the step's parts with their shares under the bar", res["tables"].get("step-parts") == n_parts,
          res["tables"].get("step-parts"))
    if gj.get("projection"):
        c = chart(res, "projection")
        want = 2 * (len(gj["stages"]) + 1)
        ck.ok(kind + ": projection has %d bars" % want, c is not None and c["bars"] == want, c and c["bars"])
    if gj.get("machines"):  # --target LIST|all, or a trace: one stacked bar per machine
        m = gj["machines"]
        splits = [m["here"]["split_seconds"]] + [r["split_seconds"] for r in m["ranking"] if r.get("projected")]
        want = sum(1 for s in splits for v in s.values() if v > 0)
        c = chart(res, "machines")
        ck.ok(kind + ": machines chart has %d bars" % want, c is not None and c["bars"] == want, c and c["bars"])


DEVICE_NAME = {"cpu": "host CPU", "gpu": "GPU"}


def geo_cats(cj, view):
    """The categories a geomean chart should have, from the JSON: one per component and device kind with a case
    (like) or kind (best, usd) that ran, "gemm (GPU): B 2 of 7" ("0 of m" where B has no mean)."""
    cats = []
    for g in cj["geomean"]:
        b = g["best_per_kind"]
        ratio, n, total = ((g["ratio"], g["cases"], g["cases_total"]) if view == "like" else
                           (b["ratio"] if view == "best" else b["per_usd_ratio"], b["kinds"], b["kinds_total"]))
        if total == 0:
            continue
        cover = ", ".join("%s %d of %d" % (chr(ord("A") + i), n[i] if ratio[i] else 0, total)
                          for i in range(1, len(ratio)))
        cats.append("%s (%s): %s" % (g["component"], DEVICE_NAME[g["device"]], cover))
    return cats


def check_compare_page(ck, res, cj):
    n_m = len(cj["machines"])
    # version 2: a mean per component and device kind, never one over a GPU box's host CPU and its GPU together
    devices = isinstance(cj["geomean"], list) and all(g.get("device") in DEVICE_NAME for g in cj["geomean"])
    ck.ok("compare: every geomean names its device kind", devices, cj.get("version"))
    if not devices:
        return
    rates = sum(1 for c in cj["cases"] for r in c["rate"] if r is not None and r > 0)
    per = [c for c in res["charts"] if c["id"].startswith("compare-")]
    ck.ok("compare: per-component bars = usable rates (%d)" % rates, sum(c["bars"] for c in per) == rates,
          sum(c["bars"] for c in per))
    geo = sum(1 for g in cj["geomean"] for r in g["ratio"][1:] if r is not None and r > 0)
    c = chart(res, "geomean")
    ck.ok("compare: like-for-like geomean bars (%d)" % geo, (c["bars"] if c else 0) == geo, c and c["bars"])
    ck.ok("compare: like-for-like categories name their device kind", c and c["cats"] == geo_cats(cj, "like"),
          c and (c["cats"], geo_cats(cj, "like")))
    best = sum(1 for g in cj["geomean"] for r in g["best_per_kind"]["ratio"][1:] if r is not None and r > 0)
    c = chart(res, "geomean-best")
    ck.ok("compare: best-per-kind geomean bars (%d)" % best, (c["bars"] if c else 0) == best, c and c["bars"])
    ck.ok("compare: best-per-kind categories name their device kind", c and c["cats"] == geo_cats(cj, "best"),
          c and (c["cats"], geo_cats(cj, "best")))
    priced = any(m.get("usd_per_hour") for m in cj["machines"])
    if priced:
        geo_usd = sum(1 for g in cj["geomean"] for r in g["best_per_kind"]["per_usd_ratio"][1:]
                      if r is not None and r > 0)
        c = chart(res, "geomean-usd")
        ck.ok("compare: price-performance bars (%d)" % geo_usd, (c["bars"] if c else 0) == geo_usd, c and c["bars"])
        ck.ok("compare: price-performance categories name their device kind",
              c and c["cats"] == geo_cats(cj, "usd"), c and (c["cats"], geo_cats(cj, "usd")))
        # what a dollar's work divides, a note per device kind: the page's are the JSON's
        notes = [cj["per_usd_notes"][d] for d in ("cpu", "gpu") if d in cj["per_usd_notes"]]
        ck.ok("compare: a per-dollar note per device kind (%d)" % len(notes), res["usd_notes"] == notes,
              res["usd_notes"])
    ck.ok("compare: machines table", res["tables"].get("machines") == n_m)
    # the rate compare shows for a case on a machine is that machine's results file's ceiling
    files = [json.load(open(m["path"])) for m in cj["machines"]]
    by_id = [{c["id"]: c for c in f["cases"]} for f in files]
    wrong = []
    for c in cj["cases"]:
        for i, r in enumerate(c["rate"]):
            src = by_id[i].get(c["id"]) if r is not None else None
            if src is not None and not close(r, ceiling_of(src)):
                wrong.append("%s on %s: %s, its file's ceiling %s" % (c["id"], cj["machines"][i]["label"], r,
                                                                       ceiling_of(src)))
    ck.ok("compare: each machine's rate is its results file's ceiling", not wrong, wrong[:5])
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
    shared = os.environ.get("MLBENCH_SHARED", os.path.join(a.src, "..", "shared"))
    if trace is None:
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
    # the H100 reference's memory, peak and launch file (its all.json stopped before them: results/reference)
    membw_json = os.path.join(a.src, "results", "reference", "h100-sxm", "membw-peak-launch.json")
    pages["report-membw"] = os.path.join(work, "report-membw.html")
    run([m, "report", membw_json, "--html", pages["report-membw"]])
    # the H100's copy sweep (4 KiB .. 1 GiB): the copy charts drawn from a measured curve
    copy_json = os.path.join(shared, "h100", "copy-membw-peak-launch.json")
    if not os.path.exists(copy_json) and os.environ.get("CI"):
        sys.exit("fixture missing (CI is set): " + copy_json)
    if os.path.exists(copy_json):
        pages["report-copy"] = os.path.join(work, "report-copy.html")
        run([m, "report", copy_json, "--html", pages["report-copy"]])
    pages["gap"] = os.path.join(work, "gap.html")
    gap_json = os.path.join(work, "gap.json")
    run([m, "gap", "--run", trace, "--ceilings", h100, "--target", "h100-sxm,b200,l4", "--format", "json", "--out",
         gap_json, "--html", pages["gap"]])
    # a GPU-bound trace of our own pairs (bench/data): attention, the tensor-core and memory stages, and a
    # diagnosis whose evidence quotes a 150-character case id (it must wrap, not widen the page)
    pair = os.path.join(a.src, "bench", "data", "pair-h100-h200-gpubound2", "h200")
    pages["gap-gpu"] = os.path.join(work, "gap-gpu.html")
    gap_gpu_json = os.path.join(work, "gap-gpu.json")
    run([m, "gap", "--run", os.path.join(pair, "gpt-bf16.pt.trace.json.gz"), "--ceilings",
         os.path.join(pair, "ceilings.json"), "--target", "h100-sxm,b200", "--step-ms", "37.007", "--format", "json",
         "--out", gap_gpu_json, "--html", pages["gap-gpu"]])
    pages["compare"] = os.path.join(work, "compare.html")
    cmp_json = os.path.join(work, "compare.json")
    # A the CPU machine, B the H100: ratios read "how many times the CPU box" (docs/report.md)
    run([m, "compare", cpu, h100, "--price", "A=0.2", "--price", "B=3",
         "--format", "json", "--out", cmp_json, "--html", pages["compare"]])
    docs = {"run": json.load(open(run_json)), "report": json.load(open(h100)), "gap": json.load(open(gap_json)),
            "gap-gpu": json.load(open(gap_gpu_json)), "compare": json.load(open(cmp_json)),
            "report-membw": json.load(open(membw_json))}
    if "report-copy" in pages:
        docs["report-copy"] = json.load(open(copy_json))
    # same input, same bytes
    again = os.path.join(work, "report-again.html")
    run([m, "report", h100, "--html", again])
    docs["deterministic"] = open(again, "rb").read() == open(pages["report"], "rb").read()
    return pages, docs


# One image per chart kind for docs/report.md: (page, chart id, file name).
DOC_CHARTS = [
    ("report-membw", "ceiling-membw", "ceiling-vs-peak.png"),
    ("report", "roofline-gpu", "roofline.png"),
    ("report-copy", "copy-bw", "copy-bandwidth.png"),
    ("report-copy", "copy-d2d", "copy-d2d.png"),
    ("report", "disk", "disk.png"),
    ("gap", "step", "gap-step.png"),
    ("gap", "headline", "gap-headline.png"),
    ("gap", "waterfall", "gap-waterfall.png"),
    ("gap", "machines", "gap-projection.png"),
    ("compare", "geomean-best", "compare-best.png"),
    ("compare", "geomean", "compare-geomean.png"),
    ("compare", "compare-0", "compare-component.png"),
    ("compare", "geomean-usd", "compare-price.png"),
]


def png_crop_bottom(png, margin=8):
    """Cuts the white rows under a chart's image (headless chromium paints a window taller than a small
    chart): an image of a chart, not a chart over an empty half. Stdlib only: 8-bit RGB/RGBA, not interlaced."""
    data = open(png, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    pos, chunks = 8, []
    while pos < len(data):
        n = struct.unpack(">I", data[pos:pos + 4])[0]
        chunks.append((data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]))
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    if depth != 8 or ctype not in (2, 6) or interlace:
        return False
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(b"".join(d for t, d in chunks if t == b"IDAT"))
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if f == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 255
        elif f == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif f == 3:
            for i in range(stride):
                line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
        elif f == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    white = bytes([255]) * stride
    last = max((y for y in range(h) if rows[y] != white), default=h - 1)
    keep = min(h, last + 1 + margin)
    if keep >= h:
        return True
    ihdr = struct.pack(">IIBBBBB", w, keep, 8, ctype, 0, 0, 0)
    body = zlib.compress(b"".join(b"\x00" + r for r in rows[:keep]), 9)

    def chunk(t, d):
        return struct.pack(">I", len(d)) + t + d + struct.pack(">I", zlib.crc32(t + d) & 0xFFFFFFFF)

    with open(png, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b""))
    return True


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
    return p.returncode == 0 and os.path.exists(png) and png_crop_bottom(png)


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
    for kind in ("run", "report", "report-membw", "report-copy", "gap", "gap-gpu", "compare"):
        if kind not in pages:
            continue
        res, errs = check_page(chromium, profile, pages[kind], work)
        ck.ok(kind + ": page loads and is checked", res is not None, errs)
        if res is None:
            continue
        ck.ok(kind + ": no console or script errors", not res["errors"] and not res["console"],
              res["errors"] + res["console"])
        ck.ok(kind + ": no text overflows its box", not res["overflow"], res["overflow"][:5])
        empty = [c["id"] for c in res["charts"] if c["data"] == 0]
        ck.ok(kind + ": every chart has data (%d charts)" % len(res["charts"]), res["charts"] and not empty, empty)
        outside = ["%s: %s" % (c["id"], o) for c in res["charts"] for o in c["outside"]]
        ck.ok(kind + ": lines stay inside their plot", not outside, outside[:5])
        overlaps = ["%s: %s" % (c["id"], o) for c in res["charts"] for o in c["overlaps"]]
        ck.ok(kind + ": no two labels of a chart overlap", not overlaps, overlaps[:5])
        if kind in ("run", "report", "report-membw", "report-copy"):
            check_results_page(ck, kind, res, docs[kind])
        elif kind in ("gap", "gap-gpu"):
            check_gap_page(ck, kind, res, docs[kind])
        else:
            check_compare_page(ck, res, docs["compare"])
        png = os.path.join(a.out, kind + ".png")
        ck.ok(kind + ": screenshot " + png, screenshot(chromium, profile, pages[kind], png, res["height"]))
    if a.docs_img:
        os.makedirs(a.docs_img, exist_ok=True)
        for kind, cid, name in DOC_CHARTS:
            if kind not in pages:
                kind = "report"  # without ../shared: the reference's two-size copies
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
