"""mlbench.results, the package's one results reader (stdlib unittest), run by tests/python_package.sh against the
source tree and against the copy pip installed:

  KnownAnswers  the usable-case rule on made-up cases: a failed verification, a skipped case, rate 0, a schema 1
                file (no "ceiling": the phase rule), the errors a file mlbench refuses gets;
  AgainstC      mlbench's own reading of real files (`mlbench compare F F --format json`: status "ok" exactly where
                the C reader's case is usable, and its rate) against this reader, case by case; and, for malformed
                files, the same refusal with the same message.

Needs $MLBENCH (the binary) and $SRC (the source tree) for AgainstC.
"""
import copy
import json
import os
import subprocess
import tempfile
import unittest

from mlbench import results

SRC = os.environ.get("SRC", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Real files mlbench wrote: a CPU quick run (schema 1, skipped GPU cases), the H100 reference (schema 2), the first
# H100 run (schema 1: a failed case, an ok case whose verification did not run) and the gap fixture (a failed
# verification). Each must hold cases, and together usable and unusable ones: no comparison passes empty.
REAL_FILES = ("tests/data/cpu_quick.json", "results/reference/h100-sxm/all.json", "tests/data/h100_first_run.json",
              "tests/data/gap_here.json")


def case(**over):
    """An ok, verified compute case of a schema 2 file; `over` replaces keys (None removes one)."""
    c = {"id": "gemm/openblas/dtype=fp32,m=512", "component": "gemm", "backend": "openblas",
         "params": {"dtype": "fp32", "m": "512"}, "status": "ok", "reason": None, "work_unit": "flop",
         "rate_unit": "GFLOP/s", "rate_scale": 1e9, "rate": {"median": 80.0, "best": 90.0, "cv": 0.01},
         "verification": {"status": "passed"}, "burst": {"rate": 95.0}, "sustained": {"rate": 70.0},
         "ceiling": {"value": 70.0, "unit": "GFLOP/s", "source": "sustained"}}
    for k, v in over.items():
        if v is None:
            c.pop(k, None)
        else:
            c[k] = v
    return c


def doc(*cases, version=2):
    return {"schema": "mlbench-results", "schema_version": version, "cases": list(cases)}


def one(c, version=2):
    return results.from_document(doc(c, version=version)).cases[0]


class KnownAnswers(unittest.TestCase):
    def test_an_ok_verified_case_is_usable_at_its_ceiling(self):
        c = one(case())
        self.assertTrue(c.usable)
        self.assertEqual((c.state, c.rate, c.phase, c.rate_abs), ("ok", 70.0, "sustained", 70e9))

    def test_a_failed_verification_is_no_ceiling(self):
        c = one(case(verification={"status": "failed"}))
        self.assertFalse(c.usable)
        self.assertEqual(c.state, "not verified")
        self.assertEqual(c.rate, 70.0)   # fast and wrong: the number is read, and refused as a ceiling

    def test_verification_not_run_or_absent_is_no_ceiling(self):
        self.assertFalse(one(case(verification={"status": "not-run"})).usable)
        self.assertFalse(one(case(verification=None)).usable)

    def test_a_skipped_case_needs_no_rate(self):
        c = one(case(status="skipped", reason="no usable CUDA device", rate=None, rate_scale=None, ceiling=None,
                     burst=None, sustained=None, verification={"status": "not-run"}))
        self.assertEqual((c.usable, c.state, c.reason, c.rate), (False, "skipped", "no usable CUDA device", 0.0))

    def test_a_failed_case(self):
        self.assertEqual(one(case(status="failed", verification={"status": "not-run"})).state, "failed")

    def test_rate_zero_is_no_ceiling(self):
        c = one(case(rate={"median": 0}, burst=None, sustained=None, ceiling=None))
        self.assertEqual((c.usable, c.rate, c.state), (False, 0.0, "not verified"))

    def test_a_zero_ceiling_value_falls_back_to_the_phase_rule(self):
        # schema 2 with ceiling.value 0: the C reader keeps the phase rate (sustained, else the median)
        c = one(case(ceiling={"value": 0, "unit": "GFLOP/s", "source": "median"}))
        self.assertEqual((c.usable, c.rate, c.phase), (True, 70.0, "sustained"))

    def test_schema_1_sustained_then_median(self):
        # a schema 1 file has no "ceiling": the sustained rate of a compute case, else the repetitions' median
        c = one(case(ceiling=None), version=1)
        self.assertEqual((c.usable, c.rate, c.phase), (True, 70.0, "sustained"))
        c = one(case(ceiling=None, burst=None, sustained=None), version=1)
        self.assertEqual((c.usable, c.rate, c.phase), (True, 80.0, "median"))

    def test_schema_1_ceiling_phase_burst(self):
        c = one(case(ceiling=None, ceiling_phase="burst"), version=1)
        self.assertEqual((c.rate, c.phase), (95.0, "burst"))

    def test_old_integer_units_read_as_operations(self):
        c = one(case(params={"dtype": "int8"}, rate_unit="TFLOP/s", ceiling={"value": 70.0, "unit": "TFLOP/s"}),
                version=1)
        self.assertEqual((c.rate_unit, c.json["ceiling"]["unit"]), ("TOP/s", "TOP/s"))

    def test_usable_and_by_id(self):
        r = results.from_document(doc(case(), case(id="x/y/z", status="skipped", verification=None)))
        self.assertEqual([c.id for c in r.usable()], ["gemm/openblas/dtype=fp32,m=512"])
        self.assertEqual(sorted(r.by_id()), ["gemm/openblas/dtype=fp32,m=512", "x/y/z"])

    def refused(self, document, message):
        with self.assertRaises(results.ResultsError) as e:
            results.from_document(document, "F")
        self.assertEqual(str(e.exception), message)

    def test_what_mlbench_refuses(self):
        self.refused({"cases": []}, 'F: $.schema: expected "mlbench-results" (not an mlbench results file)')
        self.refused(doc(version=3), "F: $.schema_version: expected 1 to 2, found 3")
        self.refused(dict(doc(), schema_version=1.5), "F: $.schema_version: expected 1 to 2, found 1.5")
        self.refused(dict(doc(), cases={}), "F: $.cases: expected an array")
        self.refused(doc(7), "F: cases[0]: expected an object")
        self.refused(doc(case(id=None)), "F: cases[0].id: expected a string")
        self.refused(doc(case(status="fine")), "F: cases[0].status: 'fine' is not ok, skipped or failed")
        self.refused(doc(case(rate={})), "F: cases[0].rate.median: missing (a case with status ok has it)")
        self.refused(doc(case(rate={"median": "fast"})), "F: cases[0].rate.median: expected a number")
        self.refused(doc(case(rate={"median": -1})), "F: cases[0].rate.median: -1 is not a finite non-negative number")
        self.refused(doc(case(rate_scale=0)), "F: cases[0].rate_scale: must be greater than zero")
        self.refused(doc(case(ceiling=[1])), "F: cases[0].ceiling: expected an object or null")
        self.refused(doc(case(ceiling={"value": 1, "unit": "GB/s"})),
                     "F: cases[0].ceiling.unit: 'GB/s', but the case's rate_unit is 'GFLOP/s'")
        self.refused(doc(case(ceiling_phase="warm")), "F: cases[0].ceiling_phase: 'warm' is not burst or sustained")

    def test_unreadable_and_malformed_files(self):
        with tempfile.TemporaryDirectory() as d:
            with self.assertRaisesRegex(results.ResultsError, "^cannot open .*none.json: No such file"):
                results.load(os.path.join(d, "none.json"))
            for name, text in (("cut.json", '{"schema": "mlbench-results", "cases": ['),
                               ("nan.json", json.dumps(doc(case(rate={"median": float("nan")}))))):
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
                with self.assertRaisesRegex(results.ResultsError, "not valid JSON"):
                    results.load(os.path.join(d, name))


def c_reading(path):
    """{case id: (status word, rate)} as mlbench's C reader gives them (compare, one machine twice)."""
    p = subprocess.run([os.environ["MLBENCH"], "compare", path, path, "--format", "json"], capture_output=True,
                       text=True)
    if p.returncode != 0:
        raise AssertionError("mlbench compare %s: exit %d: %s" % (path, p.returncode, p.stderr))
    return {c["id"]: (c["status"][0], c["rate"][0]) for c in json.loads(p.stdout)["cases"]}


@unittest.skipUnless(os.environ.get("MLBENCH"), "needs $MLBENCH, the binary")
class AgainstC(unittest.TestCase):
    def test_real_files_classified_as_mlbench_does(self):
        usable = unusable = 0
        for rel in REAL_FILES:
            path = os.path.join(SRC, rel)
            mine, theirs = results.load(path).by_id(), c_reading(path)
            self.assertTrue(mine, rel)
            self.assertEqual(sorted(mine), sorted(theirs), rel)
            for cid, c in mine.items():
                status, rate = theirs[cid]
                self.assertEqual(c.usable, status == "ok", (rel, cid, status, c.state))
                if c.usable:
                    self.assertEqual(c.rate, rate, (rel, cid))
                elif status != "not runnable here":   # compare's word for a case this machine cannot run
                    self.assertEqual(c.state, status, (rel, cid))
                usable += c.usable
                unusable += not c.usable
        # both kinds, or the comparison said nothing about the rule
        self.assertGreater(usable, 0)
        self.assertGreater(unusable, 0)

    def test_malformed_files_refused_with_mlbench_s_message(self):
        base = results.load(os.path.join(SRC, "tests/data/cpu_quick.json")).doc
        good = copy.deepcopy(base["cases"][0])
        self.assertEqual(good["status"], "ok")
        bad = [dict(base, schema="other"), dict(base, schema_version=9), dict(base, cases={})]
        for k, v in (("status", "fine"), ("rate", {}), ("rate_scale", 0), ("ceiling", [1]), ("id", 3),
                     ("ceiling_phase", "warm"), ("rate", {"median": -2})):
            c = dict(copy.deepcopy(good), **{k: v})
            bad.append(dict(base, cases=[c]))
        with tempfile.TemporaryDirectory() as d:
            for i, document in enumerate(bad):
                path = os.path.join(d, "bad%d.json" % i)
                with open(path, "w") as f:
                    json.dump(document, f)
                p = subprocess.run([os.environ["MLBENCH"], "compare", path, path], capture_output=True, text=True)
                self.assertEqual(p.returncode, 2, (path, p.stdout, p.stderr))
                with self.assertRaises(results.ResultsError) as e:
                    results.load(path)
                self.assertEqual("mlbench compare: %s" % e.exception, p.stderr.strip(), document)


if __name__ == "__main__":
    unittest.main()
