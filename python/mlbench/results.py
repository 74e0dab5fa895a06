"""mlbench.results: an mlbench results file (results/README.md, schema versions 1 and 2) as mlbench reads it.

Every tool of this package that reads a results file reads it here, so they all share mlbench's own rule for a
case that may serve as a ceiling (harness/analysis/gap/ceilings.c, read_case): status "ok" AND verification
"passed" AND a ceiling above zero. A fast wrong number is no ceiling.

    from mlbench import results
    run = results.load("results/host-2026-11-24T06:22:56Z.json")
    for case in run.cases:
        print(case.id, case.state, case.rate if case.usable else "-", case.rate_unit)

Each case's `rate` is its ceiling in `rate_unit`, chosen as the C reader chooses it: the file's "ceiling" (schema 2),
else, in a schema 1 file, the sustained phase's rate of a compute case (burst where the case's ceiling_phase says
so), else the repetitions' median. `json` is the case object itself, for everything else. A file or case the C
reader refuses raises ResultsError with the same message (the file and the JSON path of what is wrong).
Standard library only.
"""

import json
import math
import os

SCHEMA = "mlbench-results"
SCHEMA_VERSION_MIN, SCHEMA_VERSION = 1, 2   # harness/results.h
STATUSES = ("ok", "skipped", "failed")
PHASES = ("burst", "sustained")
MAX_BYTES = 256 << 20   # harness/results.c MB_RESULTS_MAX_BYTES: a bound on the file is a bound on memory


class ResultsError(ValueError):
    """A file that is not a results file mlbench would read, or a malformed case in one."""


class Case:
    """One case of a results file, its fields as mlbench's analysis reads them (harness/analysis/gap/ceilings.h,
    mb_case_ref). Absent numbers are 0, absent texts None."""

    def __init__(self, json_case):
        self.json = json_case
        self.id = self.component = self.backend = self.status = None
        self.params = {}
        self.verification = self.reason = self.work_unit = self.rate_unit = self.peak_source = None
        self.device = None          # the file's "device" (gpu | cpu); older files have none
        self.rate_scale = self.work_per_iteration = self.peak = 0.0
        self.rate_median = self.rate_burst = self.rate_sustained = 0.0
        self.rate = self.rate_abs = 0.0
        self.phase = "median"

    @property
    def usable(self):
        """A ceiling: status ok and verification passed, rate > 0 (the C reader's `usable`)."""
        return self.status == "ok" and self.verification == "passed" and self.rate_abs > 0

    @property
    def state(self):
        """One word for the case, as `mlbench compare` says it: ok (usable), skipped, failed, or not verified
        (status ok but not usable)."""
        if self.usable:
            return "ok"
        return self.status if self.status != "ok" else "not verified"

    def __repr__(self):
        return "Case(%r, %s)" % (self.id, self.state)


class Results:
    """A results file: its path, the whole document and its cases."""

    def __init__(self, path, doc, cases):
        self.path = path
        self.doc = doc
        self.cases = cases

    def usable(self):
        """The cases that may serve as ceilings, in file order."""
        return [c for c in self.cases if c.usable]

    def by_id(self):
        """{case id: Case}; a repeated id keeps its last case."""
        return {c.id: c for c in self.cases}


# ---- reading ---------------------------------------------------------------------------------------------------

def load(path):
    """Reads and checks a results file (harness/results.c mb_results_load, then every case); ResultsError on
    anything mlbench would refuse."""
    return from_document(_read_json(path), path)


def from_document(doc, path="<results>"):
    """The same from a document already parsed (json.load's dict); `path` names it in messages."""
    _check_document(doc, path)
    cases = doc["cases"]
    return Results(path, doc, [_read_case(c, i, path) for i, c in enumerate(cases)])


def _read_json(path):
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_BYTES:
                raise ResultsError("%s: larger than %d MiB: not a results file (a suite of thousands of cases is "
                                   "a few MB)" % (path, MAX_BYTES >> 20))
            text = f.read()
    except OSError as e:
        raise ResultsError("cannot open %s: %s" % (path, e.strerror or e)) from None
    try:
        # NaN and Infinity are no JSON: mlbench's parser refuses them, so this one does too
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as e:
        where = ":%d:%d" % (e.lineno, e.colno) if isinstance(e, json.JSONDecodeError) else ""
        raise ResultsError("%s%s: not valid JSON (truncated or malformed results file)" % (path, where)) from None
    except RecursionError:
        raise ResultsError("%s: JSON nested too deep (not a results file)" % path) from None


def _no_constant(name):
    raise ValueError("%s is not JSON" % name)


def _check_document(doc, path):
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ResultsError('%s: $.schema: expected "%s" (not an mlbench results file)' % (path, SCHEMA))
    ver = doc.get("schema_version")
    if not _is_number(ver) or ver != int(ver) or not SCHEMA_VERSION_MIN <= ver <= SCHEMA_VERSION:
        found = "%g" % ver if _is_number(ver) else "none"
        raise ResultsError("%s: $.schema_version: expected %d to %d, found %s"
                           % (path, SCHEMA_VERSION_MIN, SCHEMA_VERSION, found))
    if not isinstance(doc.get("cases"), list):
        raise ResultsError("%s: $.cases: expected an array" % path)


def _is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _text(o, key):
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, str) else None


def _int_unit(unit, dtype):
    """The rate unit of an integer dtype's case: "TFLOP/s" of int8 is "TOP/s" (harness/vocabulary.c
    mb_rate_unit_for_dtype); files written before that unit existed are read so."""
    if unit is None or "FLOP" not in unit or not (dtype or "").startswith(("int", "uint")):
        return unit
    return unit.replace("FLOP", "OP", 1)


def _retype_units(c):
    """Rewrites an old file's integer case's units in place, as mb_results_load does, so every reader shows OP/s."""
    dtype = _text(c.get("params"), "dtype")
    if dtype is None:
        return
    if isinstance(c.get("rate_unit"), str):
        c["rate_unit"] = _int_unit(c["rate_unit"], dtype)
    ce = c.get("ceiling")
    if isinstance(ce, dict) and isinstance(ce.get("unit"), str):
        ce["unit"] = _int_unit(ce["unit"], dtype)


def _required_text(c, key, path, i):
    v = _text(c, key)
    if v is None:
        raise ResultsError("%s: cases[%d].%s: expected a string" % (path, i, key))
    return v


def _number(c, key, sub, required, path, i):
    """A finite, non-negative number at c.key (or c.key.sub); absent or null is 0 unless required."""
    v = c.get(key)
    if sub is not None:
        v = v.get(sub) if isinstance(v, dict) else None
    name = key + ("." + sub if sub else "")
    if v is None:
        if required:
            raise ResultsError("%s: cases[%d].%s: missing (a case with status ok has it)" % (path, i, name))
        return 0.0
    if not _is_number(v):
        raise ResultsError("%s: cases[%d].%s: expected a number" % (path, i, name))
    if not math.isfinite(v) or v < 0:
        raise ResultsError("%s: cases[%d].%s: %g is not a finite non-negative number" % (path, i, name, v))
    return float(v)


def _set_phase(case, phase):
    """The rate of `phase` where the case measured it, else its repetitions' median (ceilings.c set_phase)."""
    v = case.rate_burst if phase == "burst" else case.rate_sustained
    case.rate = v if v > 0 else case.rate_median
    case.phase = phase if v > 0 else "median"
    case.rate_abs = case.rate * case.rate_scale


def _read_ceiling(c, i, path, case):
    """The case's one ceiling (schema 2: "ceiling" {value, unit, source}), the number every view shows."""
    ce = c.get("ceiling")
    if "ceiling" in c and ce is not None and not isinstance(ce, dict):
        raise ResultsError("%s: cases[%d].ceiling: expected an object or null" % (path, i))
    value = _number(c, "ceiling", "value", False, path, i)
    source = _text(ce, "source")
    if source is not None and source not in ("median",) + PHASES:
        raise ResultsError("%s: cases[%d].ceiling.source: '%s' is not median, burst or sustained"
                           % (path, i, source))
    unit = _text(ce, "unit")
    if unit is not None and case.rate_unit is not None and unit != case.rate_unit:
        raise ResultsError("%s: cases[%d].ceiling.unit: '%s', but the case's rate_unit is '%s'"
                           % (path, i, unit, case.rate_unit))
    if isinstance(ce, dict) and value > 0:
        case.rate = value
        case.phase = source if source in PHASES else "median"
        case.rate_abs = case.rate * case.rate_scale


def _read_case(c, i, path):
    """One case, checked as harness/analysis/gap/ceilings.c read_case checks it."""
    if not isinstance(c, dict):
        raise ResultsError("%s: cases[%d]: expected an object" % (path, i))
    _retype_units(c)
    case = Case(c)
    case.id = _required_text(c, "id", path, i)
    case.component = _required_text(c, "component", path, i)
    case.backend = _required_text(c, "backend", path, i)
    case.status = _required_text(c, "status", path, i)
    if case.status not in STATUSES:
        raise ResultsError("%s: cases[%d].status: '%s' is not ok, skipped or failed" % (path, i, case.status))
    params = c.get("params")
    if params is not None and not isinstance(params, dict):
        raise ResultsError("%s: cases[%d].params: expected an object" % (path, i))
    case.params = params or {}
    case.reason = _text(c, "reason")
    case.verification = _text(c.get("verification"), "status")
    case.work_unit, case.rate_unit = _text(c, "work_unit"), _text(c, "rate_unit")
    case.device = _text(c, "device")
    ok = case.status == "ok"
    case.rate_median = _number(c, "rate", "median", ok, path, i)
    case.rate_scale = _number(c, "rate_scale", None, ok, path, i)
    case.work_per_iteration = _number(c, "work_per_iteration", None, False, path, i)
    case.peak = _number(c, "peak", "value", False, path, i)
    for key in ("work_unit", "rate_unit"):
        if ok and getattr(case, key) is None:
            raise ResultsError("%s: cases[%d].%s: expected a string" % (path, i, key))
    if ok and case.rate_scale <= 0:
        raise ResultsError("%s: cases[%d].rate_scale: must be greater than zero" % (path, i))
    case.peak_source = _text(c.get("peak"), "source")
    case.rate_burst = _number(c, "burst", "rate", False, path, i)
    case.rate_sustained = _number(c, "sustained", "rate", False, path, i)
    phase = _text(c, "ceiling_phase")
    if phase is not None and phase not in PHASES:
        raise ResultsError("%s: cases[%d].ceiling_phase: '%s' is not burst or sustained" % (path, i, phase))
    # a schema 1 file has no "ceiling": the phase rule gives the one number, as mlbench's reader does
    _set_phase(case, phase or "sustained")
    _read_ceiling(c, i, path, case)
    return case
