"""scripts/pytorch_compare.py without a GPU or torch: its mlbench side reads a
real results file (a CPU GEMM case through the real binary), failures come
back as text, and the done-means checks pass and miss where they should."""
import os
import tempfile
import unittest

import pytorch_compare as pc


class MlbenchSide(unittest.TestCase):
    def test_reads_rate_efficiency_and_peak_of_a_real_run(self):
        section = {"component": "gemm", "backend": "openblas", "dtype": "fp32", "m": 256, "n": 256, "k": 256}
        with tempfile.TemporaryDirectory() as work:
            rate, unit, status, eff, peak = pc.run_mlbench(os.environ["MLBENCH"] + " --min-time 0.02 --repetitions 2",
                                                           "cpu gemm", section, work)
        self.assertIsNotNone(rate, status)
        self.assertGreater(rate, 0)
        self.assertEqual(unit, "GFLOP/s")
        self.assertIn("verification passed", status)
        self.assertTrue(0 < eff < 2, eff)    # a computed CPU peak exists on x86 and Arm
        self.assertTrue(peak)

    def test_a_skipped_case_gives_no_rate_and_says_why(self):
        section = {"component": "copy", "backend": "cuda", "direction": "h2d", "size": "4k"}
        with tempfile.TemporaryDirectory() as work:
            rate, _, status, eff, _ = pc.run_mlbench(os.environ["MLBENCH"], "gpu copy", section, work)
        self.assertIsNone(rate)
        self.assertIsNone(eff)
        self.assertTrue(status.startswith("skipped: "), status)

    def test_a_broken_command_is_reported(self):
        with tempfile.TemporaryDirectory() as work:
            rate, _, status, _, _ = pc.run_mlbench("false", "x", {"component": "gemm"}, work)
        self.assertIsNone(rate)
        self.assertIn("mlbench failed (exit 1)", status)


def row(case, ratio, eff):
    return {"case": case, "ratio": ratio, "mlbench_efficiency": eff, "mlbench_peak": "datasheet"}


class DoneMeans(unittest.TestCase):
    def test_gemm_within_three_percent_either_way(self):
        for ratio, ok in ((1.0, True), (0.971, True), (1.029, True), (0.969, False), (1.031, False), (None, False)):
            (line,) = pc.done_means([row("gemm bf16 8192^3", ratio, 0.8)])
            self.assertEqual(line.startswith("ok"), ok, (ratio, line))

    def test_copies_need_85_percent_of_their_peak(self):
        for eff, ok in ((0.85, True), (0.93, True), (0.849, False), (None, False)):
            (line,) = pc.done_means([row("copy d2d 1 GiB (r+w)", 1.0, eff)])
            self.assertEqual(line.startswith("ok"), ok, (eff, line))

    def test_only_cases_that_ran_are_judged(self):
        self.assertEqual(pc.done_means([row("membw triad fp32 256 MiB", 1.0, 0.9)]), [])


def full_row(case, ratio, eff=0.9, check="passed"):
    r = row(case, ratio, eff)
    r["pytorch_check"] = check
    return r


class Summary(unittest.TestCase):
    """The end of the run: the low-ratio line (its text has a percent sign: the
    H100 run crashed there with "unsupported format character 'b'") and the
    verdict."""

    def test_low_ratio_line_with_its_percent_sign(self):
        lines, status = pc.summary([full_row("membw triad fp32 256 MiB", 0.90),
                                    full_row("copy h2d pageable 256 MiB", 0.94)])
        self.assertIn("mlbench is more than 5% below PyTorch on: membw triad fp32 256 MiB, "
                      "copy h2d pageable 256 MiB", lines)
        self.assertEqual(lines[-1], "verdict: FAIL")
        self.assertEqual(status, 1)

    def test_all_good_passes(self):
        lines, status = pc.summary([full_row("copy d2d 1 GiB (r+w)", 1.05, 0.9),
                                    full_row("membw triad fp32 256 MiB", 0.96)])
        self.assertEqual(status, 0)
        self.assertFalse(any("below PyTorch" in line for line in lines))
        self.assertIn("done-means (issue 3):", lines)
        self.assertEqual(lines[-1], "verdict: PASS")

    def test_a_failed_torch_check_fails(self):
        lines, status = pc.summary([full_row("membw triad fp32 256 MiB", 1.0, check="FAILED")])
        self.assertEqual(status, 1)
        self.assertIn("PyTorch's own output check failed on: membw triad fp32 256 MiB", lines)

    def test_a_missed_done_means_fails(self):
        _, status = pc.summary([full_row("copy d2d 1 GiB (r+w)", 1.0, 0.80)])
        self.assertEqual(status, 1)


class Tf32Setting(unittest.TestCase):
    """Without torch: stand-ins for the two PyTorch APIs."""

    @staticmethod
    def fake_torch(matmul):
        cuda = type("cuda", (), {"matmul": matmul})
        backends = type("backends", (), {"cuda": cuda})
        return type("torch", (), {"backends": backends})

    def test_new_api_from_pytorch_2_9(self):
        matmul = type("matmul", (), {"fp32_precision": "none"})()
        pc.set_tf32(self.fake_torch(matmul), True)
        self.assertEqual(matmul.fp32_precision, "tf32")
        pc.set_tf32(self.fake_torch(matmul), False)
        self.assertEqual(matmul.fp32_precision, "ieee")

    def test_old_api_before(self):
        matmul = type("matmul", (), {"allow_tf32": False})()
        pc.set_tf32(self.fake_torch(matmul), True)
        self.assertTrue(matmul.allow_tf32)
        self.assertFalse(hasattr(matmul, "fp32_precision"))


if __name__ == "__main__":
    unittest.main()
