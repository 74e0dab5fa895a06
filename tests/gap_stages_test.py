"""Unit tests of mlbench.stages (python/mlbench/stages.py; stdlib unittest, no torch needed).

Run: PYTHONPATH=python python3 -m unittest tests/gap_stages_test.py
(tests/gap_python.sh does that, then feeds a written file to `mlbench gap`).
"""

import builtins
import json
import os
import tempfile
import unittest

from mlbench import stages as ms


class FakeClock:
    """A clock that moves only when told: every reading is predictable."""

    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t

    def advance(self, dt):
        self.t += dt


class TimerTest(unittest.TestCase):
    def setUp(self):
        self.clock = FakeClock()
        self.syncs = 0

    def sync(self):
        self.syncs += 1
        self.clock.advance(0.5)  # the GPU work finishing: counted in the stage

    def run_two_steps(self, timer):
        for _ in range(2):
            with timer.stage("dataloading", component="disk", pattern="random", block_size=131072) as s:
                self.clock.advance(1.0)
                s.add(bytes=1e9)
            with timer.stage("forward", component="gemm", dtype="bf16") as s:
                self.clock.advance(2.0)
                s.add(flops=3e14, calls=10)
            with timer.stage("optimizer"):
                self.clock.advance(0.25)
            timer.step()

    def test_totals(self):
        t = ms.StageTimer(clock=self.clock)
        self.run_two_steps(t)
        doc = t.to_dict(gpu_utilization=0.5)
        self.assertEqual(doc["format"], "mlbench-stages")
        self.assertEqual(doc["version"], 1)
        self.assertEqual(doc["run"]["steps"], 2)
        self.assertAlmostEqual(doc["run"]["total_seconds"], 2 * (1.0 + 2.0 + 0.25))
        self.assertEqual(doc["run"]["gpu_utilization"], 0.5)
        dl, fw, opt = doc["stages"]
        self.assertEqual(dl, {"name": "dataloading", "component": "disk", "pattern": "random",
                              "block_size": 131072, "bytes": 2e9, "seconds": 2.0})
        self.assertEqual(fw["flops"], 6e14)
        self.assertEqual(fw["calls"], 20)
        self.assertEqual(fw["dtype"], "bf16")
        self.assertAlmostEqual(fw["seconds"], 4.0)
        self.assertEqual(opt, {"name": "optimizer", "component": "other", "seconds": 0.5})

    def test_sync_at_stage_end(self):
        t = ms.StageTimer(clock=self.clock, sync_fn=self.sync)
        self.run_two_steps(t)
        self.assertEqual(self.syncs, 6)  # 3 stages x 2 steps
        doc = t.to_dict()
        # each stage end waited 0.5 s for the device: inside the stage's time
        self.assertAlmostEqual(doc["stages"][1]["seconds"], 2 * (2.0 + 0.5))

    def test_cuda_sync_without_torch(self):
        real_import = builtins.__import__

        def no_torch(name, *args, **kwargs):
            if name == "torch":
                raise ImportError("no torch here")
            return real_import(name, *args, **kwargs)

        builtins.__import__ = no_torch
        try:
            t = ms.StageTimer(cuda_sync=True, clock=self.clock)
        finally:
            builtins.__import__ = real_import
        self.assertTrue(any("torch" in n for n in t.notes))
        self.run_two_steps(t)  # still times, just without synchronisation
        self.assertEqual(len(t.to_dict()["stages"]), 3)

    def test_add_measured_elsewhere(self):
        t = ms.StageTimer(clock=self.clock)
        t.add("allreduce", component="allreduce", seconds=3.0, bytes=4e9, calls=100, ranks=8, dtype="bf16")
        t.add("allreduce", component="allreduce", seconds=1.0, bytes=1e9, ranks=8, dtype="bf16")
        s = t.to_dict()["stages"][0]
        self.assertEqual((s["seconds"], s["bytes"], s["calls"], s["ranks"]), (4.0, 5e9, 100, 8))

    def test_errors(self):
        t = ms.StageTimer(clock=self.clock)
        with self.assertRaisesRegex(ms.StageError, "unknown component"):
            t.stage("x", component="gpu")
        with self.assertRaisesRegex(ms.StageError, "counts its work in flops, not bytes"):
            with t.stage("mm", component="gemm", dtype="bf16") as s:
                s.add(bytes=5)
        with self.assertRaisesRegex(ms.StageError, "finite"):
            with t.stage("d", component="disk", pattern="random") as s:
                s.add(bytes=float("nan"))
        with self.assertRaisesRegex(ms.StageError, "was disk"):
            t.stage("d", component="disk", pattern="sequential")
        with self.assertRaisesRegex(ms.StageError, "do not nest"):
            with t.stage("o1"):
                with t.stage("o2"):
                    pass
        t2 = ms.StageTimer(clock=self.clock)
        with t2.stage("mm", component="gemm", dtype="bf16"):
            self.clock.advance(1)
        with self.assertRaisesRegex(ms.StageError, r"needs its work: call s.add\(flops="):
            t2.to_dict()
        with self.assertRaisesRegex(ms.StageError, "no stage"):
            ms.StageTimer().to_dict()
        t3 = ms.StageTimer(clock=self.clock)
        self.run_two_steps(t3)
        with self.assertRaisesRegex(ms.StageError, "fraction"):
            t3.to_dict(gpu_utilization=45)

    def test_write_atomic(self):
        t = ms.StageTimer(clock=self.clock)
        self.run_two_steps(t)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "stages.json")
            t.write(path)
            with open(path) as f:
                self.assertEqual(json.load(f), t.to_dict())
            # a failing write leaves the old file and no temporary behind
            t2 = ms.StageTimer(clock=self.clock)
            with t2.stage("mm", component="gemm", dtype="bf16"):
                self.clock.advance(1)
            with self.assertRaises(ms.StageError):
                t2.write(path)
            self.assertEqual(os.listdir(d), ["stages.json"])
            with open(path) as f:
                self.assertEqual(json.load(f)["run"]["steps"], 2)


if __name__ == "__main__":
    unittest.main()
