#!/usr/bin/env python3
"""Known-answer tests of mlbench.simplify (python/mlbench/simplify.py) with real PyTorch (Debian's
python3-torch, CPU), run by tests/simplify.sh with $MLBENCH, $SRC and $WORK.

The pipelines are designed to a known cost: a Dataset item reads a real file
from disk (out of the page cache: posix_fadvise DONTNEED after each read) and
then sleeps until a fixed deadline from its start, so an item costs D whatever
the read took (as long as the read is shorter); a step runs a real model's
forward, backward and optimizer and likewise ends at a fixed deadline, with a
known extra cost inside optimizer.step. Sleeping rather than spinning keeps the
design true on a shared 2-core machine: DataLoader workers sleep in parallel.
"""
import collections
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import types
import unittest
from collections import UserDict

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from mlbench import simplify as ms

MLBENCH = os.environ.get("MLBENCH")
SRC = os.environ.get("SRC", os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.environ.get("WORK") or tempfile.mkdtemp(prefix="simplify-test.")
FILE_BYTES = 256 << 10
N_FILES = 512
ITEM_LOG = os.path.join(WORK, "items.log")


def sleep_until(deadline):
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            return
        time.sleep(left)


def flop_stage(doc):
    """The stage that carries the step's FLOPs: forward+backward, or on the CPU its "fwd+bwd: matmuls"
    (or "fwd+bwd: convolutions") part."""
    named = {s["name"]: s for s in doc["stages"]}
    return named.get("fwd+bwd: matmuls") or named.get("fwd+bwd: convolutions") or named.get("forward+backward")


def dataset_dir():
    """512 x 256 KiB of random bytes on the file system of $WORK (a real one,
    not tmpfs: the test checks that read_bytes comes from storage)."""
    d = os.path.join(WORK, "files")
    if not os.path.isdir(d) or len(os.listdir(d)) != N_FILES:
        os.makedirs(d, exist_ok=True)
        for i in range(N_FILES):
            with open(os.path.join(d, "%04d.bin" % i), "wb") as f:
                f.write(os.urandom(FILE_BYTES))
                f.flush()
                os.fsync(f.fileno())
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    return d


class FileDataset(Dataset):
    """Reads one whole file (out of the page cache), then 'decodes' until
    `cost` seconds after the item started: a fixed cost per item."""

    def __init__(self, directory, cost, cold=True):
        self.files = sorted(os.path.join(directory, f) for f in os.listdir(directory))
        self.cost = cost
        self.cold = cold  # drop each file from the page cache after reading it

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        start = time.perf_counter()  # CLOCK_MONOTONIC: comparable across the worker processes
        deadline = start + self.cost
        with open(self.files[i], "rb") as f:
            data = f.read()
            if self.cold:
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        sample = torch.frombuffer(bytearray(data[:4096]), dtype=torch.uint8).float()
        # a little CPU of its own (inside the item's fixed cost): the workers' CPU time is read from /proc in
        # clock ticks of 10 ms, and reading 256 KiB took less than one tick per item (a CI rehearsal read 0.0)
        c0 = time.thread_time()
        while time.thread_time() - c0 < 0.003:
            pass
        sleep_until(deadline)
        # what the item really took (one line, one write: atomic with O_APPEND)
        fd = os.open(ITEM_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, b"%.9f %.9f\n" % (start, time.perf_counter()))
        os.close(fd)
        return sample


class SlowSGD(torch.optim.SGD):
    """SGD whose step costs `extra` seconds more (a known optimizer cost)."""

    def __init__(self, params, extra, **kw):
        super().__init__(params, **kw)
        self.extra = extra

    def step(self, closure=None):
        deadline = time.perf_counter() + self.extra
        out = super().step(closure)
        sleep_until(deadline)
        return out


def make_step(model, opt, fb_cost, calls):
    """forward + backward end fb_cost after the step starts; then the optimizer.
    Appends (start, end) of every call to `calls`."""
    def step(x):
        start = time.perf_counter()
        deadline = start + fb_cost
        loss = model(x).square().mean()
        loss.backward()
        sleep_until(deadline)
        opt.step()
        opt.zero_grad()
        calls.append((start, time.perf_counter()))
    return step


def mean_within(intervals, window):
    """Mean duration of the intervals that started inside window (a mode's
    measured window: Simplifier.measured)."""
    d = [e - s for s, e in intervals if window[0] <= s < window[1]]
    return sum(d) / len(d)


def pace_within(intervals, window):
    """Seconds per completion of the intervals that ended inside window: the
    workers' own pace, every overhead between items included."""
    n = sum(1 for s, e in intervals if window[0] <= e < window[1])
    return (window[1] - window[0]) / n


def within(value, designed, rel=0.10):
    return abs(value - designed) <= rel * designed


def st_block(doc):
    """The data loading stage's block size rounded to KiB."""
    dl = {s["name"]: s for s in doc["stages"]}["data loading"]
    return int(round(dl["block_size"] / 1024.0)) * 1024


def run_mlbench(*args):
    r = subprocess.run([MLBENCH] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return r.returncode, r.stdout, r.stderr


class KnownPipelines(unittest.TestCase):
    """Loader-bound and step-bound pipelines of known cost: the isolated
    figures are the designed ones, and the bottleneck is named right.

    The parts also log what they really took (items in the workers: their
    pace of completion; step calls: their duration), on the same monotonic
    clock as the modes' measured windows. The runner must
    match that within 10% always; it must match the design within 10%
    whenever the parts themselves kept to it within 5% (on a shared 2-core
    machine under load, a sleep can wake tens of ms late: then the parts'
    own figures are the known answer, and the test says so)."""

    # s per item (read + decode): above a 256 KiB read from disk even on a
    # busy shared disk (up to ~100 ms seen on the 2-core CI machine)
    ITEM = 0.150
    BATCH = 2
    WORKERS = 2
    FB = 0.040        # forward + backward, s
    OPT = 0.020       # optimizer extra, s

    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        torch.set_num_threads(1)
        cls.dir = dataset_dir()

    def simplify(self, item_cost, fb, opt_extra, out, cold=True):
        if os.path.exists(ITEM_LOG):
            os.unlink(ITEM_LOG)
        for name in os.listdir(self.dir) if cold else ():  # all out of the page cache first
            with open(os.path.join(self.dir, name), "rb") as f:
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        loader = DataLoader(FileDataset(self.dir, item_cost, cold), batch_size=self.BATCH, num_workers=self.WORKERS,
                            shuffle=True)
        model = nn.Linear(4096, 64)
        opt = SlowSGD(model.parameters(), opt_extra, lr=0.01)
        calls = []
        # cold: the runner keeps the files out of the page cache too; warm: it leaves the cache alone
        sim = ms.Simplifier(loader, make_step(model, opt, fb, calls), optimizer=opt, out=out, seconds=2.0,
                            warmup=0.5, log=None, cache="cold" if cold else "warm")
        doc = sim.run()
        self.assertFalse(sim.errors, sim.errors)
        with open(ITEM_LOG) as f:
            items = [tuple(map(float, line.split())) for line in f]
        took = {"loader": pace_within(items, sim.measured["loader"]) * self.BATCH,
                "step": mean_within(calls, sim.measured["step"]),
                "no_optimizer": mean_within(calls, sim.measured["no_optimizer"])}
        return doc, took

    def check_known(self, measured, took, designed, what):
        """The runner's figure against what the part took (always) and
        against the design (when the part kept to it)."""
        self.assertTrue(within(measured, took), "%s: measured %.4f s, the part took %.4f s" % (what, measured, took))
        if within(took, designed, 0.05):
            self.assertTrue(within(measured, designed), "%s: measured %.4f s, designed %.4f s"
                            % (what, measured, designed))
        else:
            print("\n  note: %s took %.4f s instead of the designed %.4f s (a loaded machine): checked against "
                  "what it took" % (what, took, designed), file=sys.stderr)

    def test_loader_bound(self):
        out = os.path.join(WORK, "loader_bound.json")
        doc, took = self.simplify(self.ITEM, self.FB, self.OPT, out)
        m = doc["simplify"]["modes"]
        # 150 ms per batch: 2 items of 150 ms, the 2 workers in parallel
        self.check_known(m["loader"]["seconds_per_batch"], took["loader"], self.ITEM * self.BATCH / self.WORKERS,
                         "loader alone")
        self.check_known(m["step"]["seconds_per_step"], took["step"], self.FB + self.OPT, "step alone")
        self.check_known(m["no_optimizer"]["seconds_per_step"], took["no_optimizer"], self.FB, "step, no optimizer")
        self.assertGreater(took["loader"], took["step"])
        self.assertEqual(doc["simplify"]["overlap"]["bottleneck"], "data loading")
        # bytes from storage: 2 files of 256 KiB per batch, by the worker processes. The window's reads are
        # the workers' between two snapshots, its batches those delivered: the batch each worker is reading at
        # either end counts in one and not the other, so the figure is good to one batch a worker over the
        # window's (twice, in a fresh Debian root and here, 31 files read in a window of 14 batches, 28 files:
        # 580 kB a batch for 524, 10.7%)
        per_batch = m["loader"]["read_bytes"] / m["loader"]["batches"]
        slack = max(0.10, self.WORKERS / m["loader"]["batches"])
        self.assertTrue(within(per_batch, self.BATCH * FILE_BYTES, slack), (per_batch, m["loader"]["batches"]))
        # the block size: the mean read request the device served (issue 32), no larger than the one file a
        # sample reads (a fragmented file takes two); bytes per sample where others shared the device
        dev = m["loader"]["device"]
        block = {s["name"]: s for s in doc["stages"]}["data loading"]["block_size"]
        if dev and dev["ours"] >= ms.DEVICE_OURS:
            self.assertEqual(block, int(round(dev["read_bytes"] / dev["read_requests"])))
            self.assertLessEqual(block, 1.05 * FILE_BYTES)
        else:
            self.assertTrue(within(st_block(doc), FILE_BYTES), st_block(doc))   # bytes per sample: one file
        self.assertGreater(m["loader"]["worker_cpu_seconds"], 0)
        st = {s["name"]: s for s in doc["stages"]}
        self.assertEqual(st["data loading"]["component"], "disk")
        self.assertEqual(st["data loading"]["pattern"], "random")      # shuffle=True: a random sampler
        opt_took = took["step"] - took["no_optimizer"]
        self.assertTrue(abs(st["optimizer"]["isolated_seconds_per_step"] - opt_took) <= 0.1 * took["step"],
                        (st["optimizer"], opt_took))
        # the overlap's figures: the full step against the isolated parts' sum and maximum
        ov = doc["simplify"]["overlap"]
        self.assertEqual(ov["max_isolated"], m["loader"]["seconds_per_batch"])
        self.assertAlmostEqual(ov["sum_isolated"], m["loader"]["seconds_per_batch"] + m["step"]["seconds_per_step"])
        self.assertAlmostEqual(ov["full_vs_sum"], m["full"]["step_seconds"] / ov["sum_isolated"])
        with open(out) as f:
            self.assertEqual(json.load(f), doc)

    def test_step_bound(self):
        """The loader reads from the page cache here (the disk is the
        loader-bound test's): a shared disk's stalls must not make the
        loader the slower part of a step-bound design."""
        for name in os.listdir(self.dir):
            with open(os.path.join(self.dir, name), "rb") as f:
                f.read()
        doc, took = self.simplify(0.060, 0.200, 0.020, os.path.join(WORK, "step_bound.json"), cold=False)
        m = doc["simplify"]["modes"]
        self.check_known(m["loader"]["seconds_per_batch"], took["loader"], 0.060 * self.BATCH / self.WORKERS,
                         "loader alone")
        self.check_known(m["step"]["seconds_per_step"], took["step"], 0.220, "step alone")
        self.assertGreater(took["step"], took["loader"])
        self.assertEqual(doc["simplify"]["overlap"]["bottleneck"], "step")
        # the loader works beside the step: the loop runs at the step's pace
        self.assertTrue(within(m["full"]["step_seconds"], took["step"], 0.15), (m["full"], took))

    @unittest.skipUnless(MLBENCH, "needs $MLBENCH")
    def test_disk_ceiling_and_gap_levels(self):
        """The loader's measured bytes meet the disk ceiling mlbench measures
        on the same file system, and gap shows the three levels."""
        suite = os.path.join(WORK, "disk.ini")
        with open(suite, "w") as f:
            f.write("[global]\nrepetitions = 1\nmin_time = 0.3\nwarmup_time = 0\n\n"
                    "[rand]\ncomponent = disk\nbackend = pread\nmode = direct\npattern = random\n"
                    "block_size = 256k\nfile_size = 64m\n\n"
                    "[seq]\ncomponent = disk\nbackend = pread\nmode = direct\npattern = sequential\n"
                    "block_size = 256k\nfile_size = 64m\n")
        results = os.path.join(WORK, "disk-results.json")
        rc, out, err = run_mlbench("--suite", suite, "--disk-dir", WORK, "--out", results, "-q")
        self.assertEqual(rc, 0, err)
        run = os.path.join(WORK, "disk_ceiling.json")
        # The verdict "slower alone: re-measure" is the honest one when a busy
        # machine slowed the part while it ran alone (ctest -j beside other
        # tests): the test does as it says, up to three runs; any other
        # verdict is judged on the first.
        for attempt in range(3):
            self.simplify(self.ITEM, self.FB, self.OPT, run)  # the loader-bound design, its own run
            rc, out, err = run_mlbench("gap", "--run", run, "--ceilings", results, "--format", "json")
            self.assertEqual(rc, 0, err)
            g = json.loads(out)
            st = {s["name"]: s for s in g["stages"]}
            dl = st["data loading"]
            self.assertIsNotNone(dl["ceiling"], dl)
            self.assertIn("pattern=random", dl["ceiling"]["id"])
            lv = dl["levels"]
            if lv["verdict"] != "slower alone: re-measure":
                break
        self.assertIsNotNone(lv["ceiling_seconds_per_step"])
        # alone: 512 KiB in ~150 ms, far slower than any disk: the sleep is the decode
        self.assertEqual(lv["verdict"], "slow by itself")
        self.assertLess(lv["ceiling_seconds_per_step"], lv["isolated_seconds_per_step"])
        rc, text, err = run_mlbench("gap", "--run", run, "--ceilings", results)
        self.assertEqual(rc, 0, err)
        self.assertIn("three levels per stage", text)
        self.assertIn("slow by itself", text)


class HonestStubs(unittest.TestCase):
    """Stubs that do not cheat, bounds, Ctrl-C, errors with their mode."""

    def test_step_alone_gets_the_real_batch(self):
        seen = []
        batches = [(torch.randn(8, 3, 5), torch.randint(0, 10, (8,)))] * 4
        ms.simplify(batches, lambda b: seen.append(ms.batch_signature(b)), seconds=0.1, warmup=0.02, log=None)
        want = ms.batch_signature(batches[0])
        self.assertEqual(want, [((8, 3, 5), "torch.float32", "cpu"), ((8,), "torch.int64", "cpu")])
        self.assertTrue(seen)
        self.assertTrue(all(s == want for s in seen))

    def test_noop_consumer_touches_every_batch(self):
        touched = []

        class Lazy:
            """A batch whose work happens when it is read."""
            nbytes = 16

            def __init__(self, i):
                self.i = i

            def reshape(self, *a):
                return self

            def __getitem__(self, k):
                return self

            def tobytes(self):
                touched.append(self.i)
                return b"\x01"

        made = []

        def loader():
            for i in range(10 ** 9):
                made.append(i)
                yield [Lazy(i)]

        class Loader:
            def __iter__(self):
                return loader()

        s = ms.Simplifier(Loader(), lambda b: None, seconds=0.1, warmup=0.02, log=None)
        m = s.mode_loader()
        self.assertGreater(m["batches"], 0)
        self.assertEqual(sorted(touched), sorted(made))   # every batch made was touched, none skipped
        self.assertEqual(m["touched_leaves"], len(made))

    def test_every_mode_is_bounded(self):
        t0 = time.perf_counter()
        doc = ms.simplify([torch.zeros(4)] * 3, lambda b: time.sleep(0.001), seconds=0.2, warmup=0.05, log=None)
        self.assertLess(time.perf_counter() - t0, 0.25 * 3 + 1.5)   # three modes, not an unbounded run
        self.assertTrue(doc["simplify"]["complete"])

    def test_persistent_workers_let_the_run_end(self):
        # A DataLoader's persistent workers are forked after the runner's cache
        # keeper and hold its pipe: the run must still end (it hung in the keeper's
        # wait, scripts/simplify_example.py's loader). In a child, so a hang fails
        # this test by its timeout instead of stopping the suite.
        code = ("import sys, torch\n"
                "from mlbench import simplify as ms\n"
                "class D(torch.utils.data.Dataset):\n"
                "    def __len__(self): return 64\n"
                "    def __getitem__(self, i): return torch.rand(16)\n"
                "dl = torch.utils.data.DataLoader(D(), batch_size=8, num_workers=2, persistent_workers=True)\n"
                "doc = ms.simplify(dl, lambda b: None, seconds=0.3, warmup=0.1, log=None)\n"
                "sys.exit(0 if doc['simplify']['complete'] else 3)\n")
        env = dict(os.environ, PYTHONPATH=os.path.join(SRC, "python"))
        try:
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            self.fail("simplify did not end with a DataLoader's persistent workers alive")
        self.assertEqual(r.returncode, 0, r.stderr[-2000:])

    def test_generated_batches_have_no_storage_ceiling(self):
        # A loader that makes its batches (no file behind them) reads next to
        # nothing: its stage is CPU data work (role data), not disk or hostmem
        # held at a tiny fraction of a bandwidth ceiling.
        class Gen:
            def __iter__(self):
                while True:
                    yield torch.rand(64, 1024)   # 256 KiB made, 0 B read
        doc = ms.simplify(Gen(), lambda b: None, seconds=0.2, warmup=0.05, log=None)
        st = [x for x in doc["stages"] if x["name"] == "data loading"][0]
        self.assertEqual(st["component"], "other")
        self.assertEqual(st["role"], "data")
        self.assertNotIn("bytes_per_step", st)
        # no workers: it runs inside next(), so its time in the loop is the loop's wait for it, not the step
        full = doc["simplify"]["modes"]["full"]
        self.assertEqual(st["seconds_per_step"], st["exposed_seconds_per_step"])
        self.assertAlmostEqual(st["seconds_per_step"], min(full["data_wait_per_step"], full["step_seconds"]))
        self.assertLess(st["seconds_per_step"], full["step_seconds"])

    def test_a_call_that_never_returns_is_stopped(self):
        calls = [0]

        def step(b):
            calls[0] += 1
            if calls[0] > 3:
                time.sleep(60)

        t0 = time.perf_counter()
        with self.assertRaises(ms.SimplifyError) as cm:
            ms.simplify([torch.zeros(4)], step, seconds=0.2, warmup=0.0, hard_bound=1.0, log=None)
        self.assertLess(time.perf_counter() - t0, 5)
        self.assertEqual(cm.exception.mode, "full")
        self.assertIn("ModeTimeout", str(cm.exception))

    def test_a_slow_step_that_returns_is_no_hang(self):
        """Each call gets the whole bound: four 0.4-s steps in a mode bounded at 1 s per call run to the end (a
        bound on the whole mode stopped a 29-s LBFGS step as a call that never returned)."""
        doc = ms.simplify([torch.zeros(4)], lambda b: time.sleep(0.4), seconds=0.3, warmup=0.0, hard_bound=1.0,
                          log=None)
        self.assertTrue(doc["simplify"]["complete"], doc["simplify"].get("errors"))
        self.assertGreaterEqual(doc["simplify"]["modes"]["step"]["steps"], 3)

    def test_closure_optimizer(self):
        """LBFGS evaluates its closure (the forward and backward) several times in one step(closure), as
        pytorch/examples' time_sequence_prediction does: the optimizer's figure is its own work, the closure's
        evaluations (20 ms each, by design) are forward+backward's, and without the optimizer the closure runs
        once a step."""
        torch.manual_seed(0)
        model = nn.Linear(16, 1)
        opt = torch.optim.LBFGS(model.parameters(), lr=0.5, max_iter=4, tolerance_grad=0, tolerance_change=0)
        x, y = torch.randn(64, 16), torch.randn(64, 1)
        evals = [0]

        def step(batch):
            def closure():
                evals[0] += 1
                deadline = time.perf_counter() + 0.020
                opt.zero_grad()
                loss = nn.functional.mse_loss(model(x), y)
                loss.backward()
                sleep_until(deadline)
                return loss
            opt.step(closure)

        before = evals[0]
        real = opt.step
        doc = ms.simplify([(x, y)], step, optimizer=opt, seconds=0.4, warmup=0.05, count_flops=False, log=None)
        m = doc["simplify"]["modes"]
        calls = m["step"]["optimizer_closure_calls_per_step"]
        self.assertGreaterEqual(calls, 4)
        self.assertGreater(evals[0] - before, 0)
        self.assertLess(m["step"]["optimizer_per_step"], 0.010)       # its own math, not 4-5 x 20 ms
        self.assertLess(m["full"]["optimizer_per_step"], 0.010)
        self.assertGreater(m["no_optimizer"]["seconds_per_step"], 0.019)   # one evaluation
        self.assertLess(m["no_optimizer"]["seconds_per_step"], 0.035)
        st = {s["name"]: s for s in doc["stages"]}
        self.assertGreater(st["forward+backward"]["seconds_per_step"], 0.9 * 0.020 * calls)
        self.assertEqual(opt.step, real)
        self.assertTrue(any("evaluations of its closure" in line for line in ms.summary(doc)))

    def test_a_loop_file_that_raises_on_load(self):
        """The loop file's own error before any mode (a module it imports is missing, as pytorch/examples'
        time_sequence_prediction imports matplotlib): said as such, exit 1, no stage file."""
        loop, out = os.path.join(WORK, "raises_on_load.py"), os.path.join(WORK, "raises_on_load.json")
        with open(loop, "w") as f:
            f.write("import a_module_nobody_installed\n")
        p = subprocess.run([sys.executable, "-m", "mlbench.simplify", loop, "--out", out], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("raised while it was loaded, before any mode ran: ModuleNotFoundError", p.stderr)
        self.assertIn("a_module_nobody_installed", p.stderr)
        self.assertFalse(os.path.exists(out))

    def test_flop_count_stops_a_step_of_too_many_ops(self):
        """The FLOP count runs one step under the profiler, which keeps every op with its shapes: a step of more
        ops than FLOP_COUNT_MAX_OPS (here lowered to 200; an LBFGS step of a million ops took 23 GB) is stopped
        there and its FLOPs said not counted, the modes' figures kept; a step of fewer is counted."""
        model = nn.Linear(8, 8)
        x = torch.randn(4, 8)

        def many(b):
            y = model(x)
            for _ in range(300):
                y = y + 1
            y.sum().backward()

        real = ms.FLOP_COUNT_MAX_OPS
        ms.FLOP_COUNT_MAX_OPS = 200
        out = os.path.join(WORK, "too_many_ops.json")
        try:
            doc = ms.simplify([x], many, seconds=0.1, warmup=0.0, log=None, out=out)
            few = ms.simplify([x], lambda b: model(x).sum().backward(), seconds=0.1, warmup=0.0, log=None)
        finally:
            ms.FLOP_COUNT_MAX_OPS = real
        self.assertIn("more than 200 ops", doc["simplify"].get("flops_not_counted", ""))
        self.assertTrue(doc["simplify"]["complete"])
        st = {s["name"]: s for s in doc["stages"]}
        self.assertEqual(st["forward+backward"]["component"], "other")
        self.assertNotIn("flops_not_counted", few["simplify"])
        self.assertEqual(flop_stage(few)["flops_per_step"],
                         2 * (2 * 4 * 8 * 8))   # the forward addmm and the weight's gradient (x wants none)
        if MLBENCH:   # gap says why the stage has no ceiling, not "give the stage a component"
            rc, text, err = run_mlbench("gap", "--run", out, "--ceilings",
                                        os.path.join(SRC, "tests/data/cpu_quick.json"), "--format", "json")
            self.assertEqual(rc, 0, err)
            head = {s["name"]: s for s in json.loads(text)["headline"]["stages"]}
            self.assertIn("FLOPs not counted: one step dispatches more than 200 ops",
                          head["forward+backward"]["no_ceiling"])

    def test_exception_reports_its_mode(self):
        out = os.path.join(WORK, "error.json")
        iters = [0]

        class Loader:
            def __iter__(self):
                iters[0] += 1
                if iters[0] > 1:      # the full loop's iterator works; the loader mode's fails
                    raise OSError("disk gone")
                return iter([torch.ones(2)] * 1000000)

        with self.assertRaises(ms.SimplifyError) as cm:
            ms.simplify(Loader(), lambda b: None, out=out, seconds=0.1, warmup=0.01, log=None)
        self.assertEqual(cm.exception.mode, "loader")
        self.assertIn("OSError: disk gone", str(cm.exception))
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["simplify"]["errors"][0]["mode"], "loader")
        self.assertIn("full", doc["simplify"]["modes"])
        self.assertFalse(doc["simplify"]["complete"])
        if MLBENCH:
            rc, text, err = run_mlbench("gap", "--run", out, "--ceilings", os.path.join(SRC, "tests/data/cpu_quick.json"))
            self.assertEqual(rc, 0, err)
            self.assertIn("failed in mode 'loader': OSError: disk gone", text)

    def test_a_worker_error_said_once(self):
        # a DataLoader worker's error carries the worker's whole traceback in its message: one line each where
        # the runner says it (its first line and the worker's own error), the traceback printed once at the end
        loop = os.path.join(WORK, "loop_worker_error.py")
        with open(loop, "w") as f:
            f.write("import torch\nfrom torch.utils.data import Dataset, DataLoader\n"
                    "class D(Dataset):\n    def __len__(self):\n        return 64\n"
                    "    def __getitem__(self, i):\n        raise ValueError('record %d is corrupt' % i)\n"
                    "loader = DataLoader(D(), batch_size=4, num_workers=1)\n"
                    "def step(b):\n    pass\n")
        r = subprocess.run([sys.executable, "-m", "mlbench.simplify", loop, "--out", os.path.join(WORK, "we.json"),
                            "--seconds", "0.2", "--warmup", "0.05"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=dict(os.environ, PYTHONPATH=os.path.join(SRC, "python")), timeout=120)
        self.assertEqual(r.returncode, 1, r.stderr)
        said = [x for x in r.stderr.splitlines() if "mode 'full'" in x]
        self.assertEqual(len(said), 3, r.stderr)   # as it fails, in the summary, and the last word
        for line in said:
            self.assertIn("ValueError: Caught ValueError in DataLoader worker process 0. ... ValueError: record 0 "
                          "is corrupt", line)
        self.assertEqual(r.stderr.count("Original Traceback"), 1, r.stderr)

    def test_ctrl_c_leaves_a_valid_partial_file(self):
        loop = os.path.join(WORK, "loop_sigint.py")
        out = os.path.join(WORK, "sigint.json")
        with open(loop, "w") as f:
            f.write("import time, torch\nloader = [torch.ones(3)] * 5\n"
                    "def step(b):\n    time.sleep(0.002)\n")
        if os.path.exists(out):
            os.unlink(out)
        p = subprocess.Popen([sys.executable, "-m", "mlbench.simplify", loop, "--out", out,
                              "--seconds", "30", "--warmup", "0.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, env=dict(os.environ, PYTHONPATH=os.path.join(SRC, "python")))
        try:
            # the full loop runs 30 s: interrupt it once it has started
            first = p.stderr.readline()
            self.assertIn("mode full", first)
            time.sleep(0.5)
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("interrupted", err)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["simplify"]["interrupted_in"], "full")
        self.assertFalse(doc["simplify"]["complete"])
        if MLBENCH:  # valid, and gap says why it has no stages
            rc, text, e2 = run_mlbench("gap", "--run", out, "--ceilings", os.path.join(SRC, "tests/data/cpu_quick.json"))
            self.assertEqual(rc, 2)
            self.assertIn("interrupted in mode 'full'", e2)

    def test_ctrl_c_after_the_full_loop_keeps_its_stages(self):
        out = os.path.join(WORK, "sigint2.json")
        calls = [0]

        class Loader:
            def __iter__(self):
                calls[0] += 1
                if calls[0] > 1:   # in the loader mode: Ctrl-C
                    raise KeyboardInterrupt
                return iter([torch.ones(3)] * 1000000)

        with self.assertRaises(KeyboardInterrupt):
            ms.simplify(Loader(), lambda b: None, out=out, seconds=0.1, warmup=0.01, log=None)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["simplify"]["interrupted_in"], "loader")
        self.assertTrue(doc["stages"])
        if MLBENCH:
            rc, text, err = run_mlbench("gap", "--run", out, "--ceilings", os.path.join(SRC, "tests/data/cpu_quick.json"))
            self.assertEqual(rc, 0, err)
            self.assertIn("interrupted in mode 'loader'", text)

    def test_collective_timed_and_stubbed(self):
        """A 20 ms collective inside a 10 ms step: timed in the full loop,
        stubbed in no_collective, restored afterwards."""
        class Comm:
            def all_reduce(self, t, async_op=False):
                time.sleep(0.020)

        comm = Comm()
        original = comm.all_reduce

        def step(b):
            time.sleep(0.010)
            comm.all_reduce(b)

        doc = ms.simplify([torch.ones(4)] * 3, step, collective=(comm, "all_reduce"), seconds=0.4, warmup=0.05,
                          log=None)
        m = doc["simplify"]["modes"]
        self.assertGreater(m["full"]["collective_per_step"], 0.019)
        self.assertLess(m["no_collective"]["seconds_per_step"], m["step"]["seconds_per_step"] - 0.015)
        st = {s["name"]: s for s in doc["stages"]}
        self.assertGreater(st["collective"]["isolated_seconds_per_step"], 0.015)
        self.assertEqual(comm.all_reduce, original)
        self.assertNotIn("all_reduce", vars(comm))

    def test_two_optimizers(self):
        """A GAN's two optimizers (pytorch/examples' dcgan: optimizerD, optimizerG), given as a list: both timed in
        the full loop (one figure, their sum), both stubbed in no_optimizer, restored afterwards. Before, the
        runner called list.step and blamed the user's code."""
        d, g = nn.Linear(8, 1), nn.Linear(8, 8)
        opt_d, opt_g = SlowSGD(d.parameters(), 0.010, lr=0.1), SlowSGD(g.parameters(), 0.020, lr=0.1)

        def step(b):
            d(g(b)).sum().backward()
            opt_d.step()
            opt_g.step()

        doc = ms.simplify([torch.ones(4, 8)] * 3, step, optimizer=[opt_d, opt_g], seconds=0.4, warmup=0.05, log=None)
        m = doc["simplify"]["modes"]
        self.assertGreater(m["full"]["optimizer_per_step"], 0.029)
        self.assertLess(m["no_optimizer"]["seconds_per_step"], m["step"]["seconds_per_step"] - 0.025)
        self.assertNotIn("step", vars(opt_d))
        self.assertNotIn("step", vars(opt_g))
        # alone: both optimizers' steps timed in mode step (10 + 20 ms), not step minus no_optimizer, two windows
        # measured one after the other (dcgan on this VM: 151 ms for an optimizer of 16-20 ms)
        alone = m["step"]["optimizer_per_step"]
        self.assertTrue(0.029 < alone < 0.045, alone)
        st = {x["name"]: x for x in doc["stages"]}
        self.assertEqual(st["optimizer"]["isolated_seconds_per_step"], alone)
        with self.assertRaisesRegex(TypeError, "an object with a .step method"):
            ms.Simplifier([torch.ones(1)], step, optimizer=[opt_d, "adam"], log=None)

    def test_gpu_path_without_a_gpu(self):
        """device="cuda": the transfer mode runs and every measured window
        ends in torch.cuda.synchronize (counted here: no GPU on this machine;
        the real GPU run is listed as unverified in docs/simplify.md)."""
        syncs = [0]
        real = torch.cuda.synchronize
        torch.cuda.synchronize = lambda *a: syncs.__setitem__(0, syncs[0] + 1)
        try:
            moved = []
            doc = ms.simplify([torch.ones(16, 16)] * 4, lambda b: None, device="cuda",
                              transfer=lambda b: moved.append(1) or b.clone(), seconds=0.1, warmup=0.02, log=None)
        finally:
            torch.cuda.synchronize = real
        self.assertIn("transfer", doc["simplify"]["modes"])
        self.assertGreater(syncs[0], 0)
        st = {s["name"]: s for s in doc["stages"]}
        cp = st["host to device copy"]
        self.assertEqual((cp["component"], cp["direction"], cp["memory"]), ("copy", "h2d", "pageable"))
        self.assertEqual(cp["bytes_per_step"], 16 * 16 * 4)
        self.assertEqual(st["forward+backward"]["device"], "gpu")


class MathDtype(unittest.TestCase):
    """The compute stage's dtype is what its matmuls and convolutions ran in:
    under autocast that is the autocast dtype, not the fp32 of the parameters
    (seen on an H100, 2026-11-26: a bf16-autocast conv net was held against the
    fp32 GEMM ceiling, 51.8 TFLOP/s, instead of bf16's)."""

    def run_step(self, autocast):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.Flatten(), torch.nn.Linear(8 * 6 * 6, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        data = [(torch.randn(4, 3, 8, 8), torch.randint(0, 4, (4,)))] * 4

        def step(b):
            x, y = b
            opt.zero_grad()
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                loss = torch.nn.functional.cross_entropy(model(x).float(), y)
            loss.backward()
            opt.step()

        doc = ms.simplify(data, step, optimizer=opt, seconds=0.1, warmup=0.02, log=None)
        return flop_stage(doc)

    def test_autocast_bf16_is_bf16(self):
        st = self.run_step(True)
        # its convolution does most of its FLOPs (62208 of 71424): held against the conv cases, as its trace's
        # conv stage is, not the GEMM ceiling
        self.assertEqual(st["component"], "conv")
        self.assertEqual(st["dtype"], "bf16")

    def test_matmuls_against_gemm(self):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        data = [(torch.randn(16, 64), torch.randint(0, 4, (16,)))] * 4

        def step(b):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(model(b[0]), b[1]).backward()
            opt.step()

        doc = ms.simplify(data, step, optimizer=opt, seconds=0.1, warmup=0.02, log=None)
        self.assertEqual(flop_stage(doc)["component"], "gemm")

    def test_without_autocast_fp32(self):
        self.assertEqual(self.run_step(False)["dtype"], "fp32")

    def test_autocast_counts_the_same_flops(self):
        # autocast runs aten::conv2d inside aten::conv2d, both with its FLOPs: they were summed twice, a bf16 conv
        # net held at twice its rate against its ceiling
        bf16, fp32 = self.run_step(True), self.run_step(False)
        self.assertEqual(bf16["flops_per_step"], fp32["flops_per_step"])
        # the forward convolution (2*4*8*3*9*36) and its backward at twice that (grad input and grad weight: the
        # output mask is not recorded, so this first layer's input gradient counts though PyTorch skips it), the
        # forward linear and its two backward matmuls (2*4*288*4 each); torch's with_flops counts no backward
        # convolution (62208 + 3 * 9216 before)
        self.assertEqual(fp32["flops_per_step"], 3 * 62208 + 3 * 9216)

    def test_transposed_convolutions_counted(self):
        """A GAN's generator (pytorch/examples' dcgan): torch's with_flops counts no transposed convolution."""
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), torch.nn.Flatten())
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        data = [torch.randn(2, 8, 7, 7)] * 4

        def step(x):
            opt.zero_grad()
            model(x).sum().backward()
            opt.step()

        doc = ms.simplify(data, step, optimizer=opt, seconds=0.1, warmup=0.02, log=None)
        st = flop_stage(doc)
        # every input element meets Cout x 4 x 4 weights: 2*(2*8*7*7)*(4*4*4) forward, twice that backward
        self.assertEqual(st["flops_per_step"], 3 * 100352)
        self.assertEqual(st["component"], "conv")

    def test_the_watch_weighs_by_work(self):
        """One large bf16 product outweighs several small fp32 ones."""
        watch = ms._MathDtypes()
        with watch:
            for _ in range(3):
                torch.mm(torch.randn(4, 4), torch.randn(4, 4))
            torch.mm(torch.randn(64, 64, dtype=torch.bfloat16), torch.randn(64, 64, dtype=torch.bfloat16))
        self.assertEqual(watch.work["fp32"], 3 * 16 * 4)
        self.assertEqual(watch.work["bf16"], 64 * 64 * 64)
        self.assertEqual(watch.dominant(), "bf16")


class BatchContainers(unittest.TestCase):
    """A batch as real loops hold it: HuggingFace's BatchEncoding (a UserDict with .to and no .device: handed to
    the step unmoved, so the step failed on a CUDA model, and its bytes counted 0), a dataclass, a named tuple (moved
    into a plain tuple: batch.x failed), an OrderedDict. Moved to the "meta" device here (no GPU on this machine)."""

    class Encoding(UserDict):
        encodings = None   # a fast tokenizer's per-sample encodings, kept by a move

        def to(self, device):
            return type(self)({k: v.to(device) for k, v in self.data.items()})

    @dataclasses.dataclass
    class Pair:
        x: torch.Tensor
        y: torch.Tensor
        tag: str = "pair"

    Named = collections.namedtuple("Named", "x y")

    def batches(self):
        return [self.Encoding({"input_ids": torch.ones(4, 8, dtype=torch.long), "attention_mask": torch.ones(4, 8)}),
                self.Pair(torch.ones(3), torch.ones(2, dtype=torch.float64)),
                self.Named(torch.ones(3), {"z": torch.ones(5)}),
                collections.OrderedDict(a=torch.ones(2), b=[torch.ones(1)])]

    def test_bytes_and_leaves(self):
        want = [4 * 8 * 8 + 4 * 8 * 4, 3 * 4 + 2 * 8, 3 * 4 + 5 * 4, 2 * 4 + 4]
        self.assertEqual([ms.batch_bytes(b) for b in self.batches()], want)

    def test_moved_with_their_types(self):
        for b in self.batches():
            m = ms.to_device(b, "meta")
            self.assertIs(type(m), type(b))
            leaves = list(ms._leaves(m))
            self.assertEqual(len(leaves), len(list(ms._leaves(b))))
            self.assertTrue(all(x.device.type == "meta" for x in leaves), (type(b), leaves))
        enc = self.batches()[0]
        enc.encodings = ["tokens"]
        self.assertEqual(ms.to_device(enc, "meta").encodings, ["tokens"])
        self.assertTrue(all(x.device.type == "cpu" for x in ms._leaves(enc)))   # the loader's batch is not changed
        pair = ms.to_device(self.batches()[1], "meta")
        self.assertEqual(pair.tag, "pair")
        self.assertEqual(ms.to_device(self.batches()[2], "meta").y["z"].device.type, "meta")

    def test_a_loop_of_encodings(self):
        w = torch.randn(8, 2, requires_grad=True)
        doc = ms.simplify([self.batches()[0]] * 4, lambda b: (b["attention_mask"] @ w).sum().backward(),
                          seconds=0.1, warmup=0.02, log=None)
        loader = doc["simplify"]["modes"]["loader"]
        self.assertEqual(loader["bytes_in_batches"], loader["batches"] * (4 * 8 * 8 + 4 * 8 * 4))


class SparseOperands(unittest.TestCase):
    """pytorch/examples' gcn multiplies a sparse adjacency (torch.spmm) and sparse features: torch's with_flops
    counts such a product by its dense shape, and a Cora-sized graph's step read 1.85 GFLOP, "at 119.4% of its
    ceiling"; its loader's batch of sparse tensors crashed the loader mode ("reshape is not implemented for sparse
    tensors", blamed on the user's code) and counted a sparse tensor's bytes by its dense shape."""

    @staticmethod
    def graph(n=600, nnz=1800, seed=0):
        g = torch.Generator().manual_seed(seed)
        idx = torch.randint(0, n, (2, nnz), generator=g)
        return torch.sparse_coo_tensor(idx, torch.rand(nnz, generator=g), (n, n)).coalesce()

    def test_sparse_batch_bytes_and_loader(self):
        adj = self.graph()
        csr = adj.to_sparse_csr()
        nnz = adj._nnz()
        self.assertEqual(ms.batch_bytes([adj]), nnz * (2 * 8 + 4))            # indices [2, nnz] int64, values fp32
        self.assertEqual(ms.batch_bytes([csr]), (600 + 1) * 8 + nnz * (8 + 4))  # crow, col (int64), values
        total, n = ms.touch([adj, csr, torch.ones(3)])
        self.assertEqual(n, 3)
        x = torch.randn(600, 16)
        w = torch.randn(16, 8, requires_grad=True)
        doc = ms.simplify([(adj, x)], lambda b: torch.spmm(b[0], b[1] @ w).sum().backward(),
                          seconds=0.1, warmup=0.02, log=None)
        self.assertTrue(doc["simplify"]["complete"], doc["simplify"].get("errors"))
        loader = doc["simplify"]["modes"]["loader"]
        self.assertEqual(loader["bytes_in_batches"], loader["batches"] * (nnz * 20 + 600 * 16 * 4))

    def test_sparse_products_leave_the_dense_flops_on_the_cpu(self):
        adj = self.graph()
        x = torch.randn(600, 64)
        w = torch.randn(64, 16, requires_grad=True)

        def step(b):
            a, h = b
            torch.spmm(a, torch.spmm(a, h @ w)).sum().backward()

        doc = ms.simplify([(adj, x)], step, seconds=0.1, warmup=0.02, log=None)
        info = doc["simplify"]
        # forward: two spmm; backward: the gradients of h @ w through both (two more spmm with the transposed
        # adjacency); the dense products: h @ w and its weight gradient, 2*600*64*16 each
        self.assertEqual(info["sparse_matmuls"]["calls_per_step"], 4)
        self.assertEqual(info["sparse_matmuls"]["dense_flops_per_step"], 2 * (2 * 600 * 64 * 16))
        self.assertEqual(info["sparse_matmuls"]["flops_by_dense_shape"], 4 * (2 * 600 * 600 * 16))   # as dense
        self.assertNotIn("flops_not_counted", info)
        st = flop_stage(doc)
        self.assertEqual(st["flops_per_step"], 2 * (2 * 600 * 64 * 16))
        self.assertEqual(st["name"], "fwd+bwd: matmuls")   # the sparse products are the other ops' time
        self.assertIn("fwd+bwd: other ops", {s["name"] for s in doc["stages"]})

    def test_sparse_products_on_a_gpu_keep_time_only(self):
        """On a GPU the profiler here times the host, not the sparse kernels: the compute stage keeps its time
        only (the GPU faked: torch.cuda.synchronize counted, the tensors on the CPU)."""
        adj = self.graph()
        x = torch.randn(600, 64)
        w = torch.randn(64, 16, requires_grad=True)
        real = torch.cuda.synchronize
        torch.cuda.synchronize = lambda *a: None
        try:
            doc = ms.simplify([(adj, x)], lambda b: torch.spmm(b[0], b[1] @ w).sum().backward(), device="cuda",
                              transfer=lambda b: b, seconds=0.1, warmup=0.02, log=None)
        finally:
            torch.cuda.synchronize = real
        fb = {s["name"]: s for s in doc["stages"]}["forward+backward"]
        self.assertEqual(fb["component"], "other")
        self.assertNotIn("flops_per_step", fb)
        self.assertIn("2 sparse matmuls per step", doc["simplify"]["flops_not_counted"])
        self.assertIsNone(doc["simplify"]["sparse_matmuls"]["share_of_step_ops"])


class ComputeSplit(unittest.TestCase):
    """On the CPU the step's compute is its FLOP-counted ops (matmuls, convolutions) and the rest (elementwise,
    softmax, normalization, Python): pytorch/examples' gat, a 4.7-s step mostly attention over a 2708 x 2708 graph,
    read as one GEMM stage "at 5.5% of its ceiling: 17.99x" when the matmuls were not what took its time."""

    def test_a_step_mostly_elementwise_is_split(self):
        x = torch.randn(64, 64)
        w = torch.randn(64, 64, requires_grad=True)
        big = torch.randn(2048, 2048)

        def step(b):
            for _ in range(6):   # elementwise work over 16 MB, with no FLOPs counted
                torch.softmax(big * 1.5 + 0.5, dim=-1)
            (b @ w).sum().backward()

        doc = ms.simplify([x], step, seconds=0.3, warmup=0.05, log=None)
        st = {s["name"]: s for s in doc["stages"]}
        self.assertNotIn("forward+backward", st)
        mm, rest = st["fwd+bwd: matmuls"], st["fwd+bwd: other ops"]
        self.assertEqual(mm["flops_per_step"], 2 * (2 * 64 ** 3))
        self.assertNotIn("threads", mm)   # one rank: the machine's cores are its
        self.assertEqual((rest["component"], rest["role"]), ("other", "compute"))
        share = doc["simplify"]["compute_split"]["flop_ops_share"]
        self.assertLess(share, 0.2)
        whole = doc["simplify"]["modes"]["full"]["step_per_step"]
        self.assertAlmostEqual(mm["seconds_per_step"] + rest["seconds_per_step"], whole, delta=1e-6 * whole + 2e-9)
        self.assertAlmostEqual(mm["seconds_per_step"] / whole, share, places=6)
        iso = doc["simplify"]["modes"]["step"]["seconds_per_step"]
        self.assertAlmostEqual(mm["isolated_seconds_per_step"] / iso, share, places=6)

    def test_a_step_of_matmuls_is_mostly_its_matmuls(self):
        w = torch.randn(768, 768, requires_grad=True)

        def step(b):
            for _ in range(2):
                (b @ w).sum().backward()

        doc = ms.simplify([torch.randn(768, 768)], step, seconds=0.3, warmup=0.05, log=None)
        st = {s["name"]: s for s in doc["stages"]}
        mm = st["fwd+bwd: matmuls"]
        self.assertEqual(mm["flops_per_step"], 2 * 2 * (2 * 768 ** 3))
        self.assertGreater(doc["simplify"]["compute_split"]["flop_ops_share"], 0.7)   # 0.91 on this VM

    def test_the_profilers_own_cost_taken_out(self):
        """Known answer: a matmul of 1100 us (with one op inside it) and 1000 small ops of 10 us each, profiled at
        11100 us; the same step unprofiled takes 6100 us, so the profiler cost 5000 us over 1002 ops, 4.99 us each.
        The matmul's own time is 1100 - 2 x 4.99 us of a 6100 us step: 0.1787. The share of the profiled step read
        0.099, and on mnist_rnn's LSTM (3430 ops a step, 91 matmuls) put the matmuls at "95% of the GEMM ceiling"."""
        Span = collections.namedtuple("Span", "start end")
        Ev = collections.namedtuple("Ev", "name thread time_range")
        mm = Ev("aten::mm", 1, Span(0, 1100))
        events = [mm, Ev("aten::resolve_conj", 1, Span(10, 20))] + [
            Ev("aten::add", 1, Span(1100 + 10 * i, 1110 + 10 * i)) for i in range(1000)]
        share, cost = ms._flop_share(events, [mm], 11100, 6100)
        self.assertAlmostEqual(cost, 5000 / 1002)
        self.assertAlmostEqual(share, (1100 - 2 * 5000 / 1002) / 6100)
        self.assertAlmostEqual(ms._flop_share(events, [mm], 11100)[0], 1100 / 11100)   # without the plain step
        # ops as short as the profiler's cost per op keep at least their profiled time scaled to the unprofiled step
        # (a Linear(4, 1) read "512 GFLOP/s", its 5 us matmul taken down to nothing)
        tiny = Ev("aten::addmm", 1, Span(0, 5))
        few = [tiny] + [Ev("aten::view", 1, Span(1 + i, 2 + i)) for i in range(3)] + [
            Ev("aten::add", 1, Span(5 + 10 * i, 15 + 10 * i)) for i in range(100)]
        share, cost = ms._flop_share(few, [tiny], 1005, 605)
        self.assertLess(5 - 4 * cost, 0)   # the cost per op taken 4 times would leave less than nothing
        self.assertAlmostEqual(share, 5 * 605 / 1005 / 605)
        opt = Ev("Optimizer.step#SGD.step", 1, Span(11100, 11600))
        share, cost = ms._flop_share(events + [opt], [mm], 11600, 6600)   # the optimizer's own time left out
        self.assertAlmostEqual(share, (1100 - 2 * cost) / (6600 - (500 - cost)))

    def test_a_backward_convolution_counted_once(self):
        """Known answer: conv2d of a [8, 64, 16, 16] input with [128, 64, 3, 3] weights, 75497472 FLOPs forward;
        its backward (grad input and grad weight) is twice that, 150994944, once per call. Under torch 2.11 a
        dispatch mode's re-dispatch is recorded inside the call (same name, shapes, thread): the H200 run of
        simplify_example.py read 5x its forward for a step's 3x. A backward torch counted itself adds nothing."""
        Span = collections.namedtuple("Span", "start end")
        Ev = collections.namedtuple("Ev", "name thread time_range input_shapes flops")
        x, w, g = [8, 64, 16, 16], [128, 64, 3, 3], [8, 128, 8, 8]
        fwd = Ev("aten::conv2d", 1, Span(0, 100), [x, w, [128]], 75497472)
        outer = Ev("aten::convolution_backward", 2, Span(200, 400), [g, x, w], 0)
        inner = Ev("aten::convolution_backward", 2, Span(210, 390), [g, x, w], 0)
        self.assertEqual(ms._conv_flops_torch_leaves_out([fwd, outer]), 2 * 75497472)
        self.assertEqual(ms._conv_flops_torch_leaves_out([fwd, outer, inner]), 2 * 75497472)
        counted = outer._replace(flops=2 * 75497472)
        self.assertEqual(ms._conv_flops_torch_leaves_out([fwd, counted]), 0)
        later = Ev("aten::convolution_backward", 2, Span(500, 600), [g, x, w], 0)   # a second call: counted too
        self.assertEqual(ms._conv_flops_torch_leaves_out([fwd, outer, inner, later]), 4 * 75497472)

    def test_an_inner_copy_ending_after_its_call(self):
        """Known answer: autocast's aten::conv2d inside aten::conv2d, its 62208 FLOPs recorded by both, as the legacy
        profiler timed them in 3 of 1000 steps on a busy 2-vCPU VM (2026-11-30): the outer 839-1161 us, the inner
        996-1162 us, one microsecond past it. Counted once; a second call starting where the first ended is a call."""
        Span = collections.namedtuple("Span", "start end")
        Ev = collections.namedtuple("Ev", "name thread time_range input_shapes flops cpu_parent")
        shapes = [[4, 3, 8, 8], [8, 3, 3, 3], [8]]
        outer = Ev("aten::conv2d", 1, Span(839, 1161), shapes, 62208, None)
        inner = Ev("aten::conv2d", 1, Span(996, 1162), shapes, 62208, None)
        self.assertEqual(ms._outermost_flop_events([outer, inner]), [outer])
        again = Ev("aten::conv2d", 1, Span(1161, 1400), shapes, 62208, None)
        self.assertEqual(ms._outermost_flop_events([outer, again]), [outer, again])
        same_us = Ev("aten::conv2d", 1, Span(839, 839), shapes, 62208, None)   # both within one microsecond
        self.assertEqual(ms._outermost_flop_events([outer._replace(time_range=Span(839, 839)), same_us]),
                         [outer._replace(time_range=Span(839, 839))])

    def test_a_gpu_step_stays_one_stage(self):
        """On a GPU the profiler here times the host, not the kernels: one stage (the GPU faked)."""
        w = torch.randn(64, 64, requires_grad=True)
        real = torch.cuda.synchronize
        torch.cuda.synchronize = lambda *a: None
        try:
            doc = ms.simplify([torch.randn(64, 64)], lambda b: (b @ w).sum().backward(), device="cuda",
                              transfer=lambda b: b, seconds=0.1, warmup=0.02, log=None)
        finally:
            torch.cuda.synchronize = real
        st = {s["name"]: s for s in doc["stages"]}
        self.assertEqual(st["forward+backward"]["flops_per_step"], 2 * (2 * 64 ** 3))
        self.assertNotIn("fwd+bwd: other ops", st)


class BatchMix(unittest.TestCase):
    """The modes that stub the loader run the step on the full loop's batches in their mix of shapes:
    pytorch/examples' super_resolution (200 images, batch 64) ends every epoch on a batch of 8, its full loop's
    step averaged 2.6 s and the step alone, on one batch of 64, 3.3 s: "the isolated figures are not reliable"."""

    def test_a_short_last_batch(self):
        w = torch.randn(16, 16, requires_grad=True)
        batches = [torch.randn(8, 16)] * 3 + [torch.randn(2, 16)]   # an epoch: three of 8, one of 2

        def step(b):
            (b @ w).sum().backward()
            time.sleep(0.004 * len(b))   # 32 ms a batch of 8, 8 ms one of 2: 26 ms a step on average

        doc = ms.simplify(batches, step, seconds=0.6, warmup=0.05, log=None)
        m = doc["simplify"]["modes"]
        full, alone = m["full"]["step_per_step"], m["step"]["seconds_per_step"]
        self.assertTrue(within(alone, full, 0.10), (alone, full))   # one batch of 8 alone: 32 ms, +23%
        mix = doc["simplify"]["batch_mix"]
        counts = {h["batch"][0][0]: h["count"] for h in mix["held"]}
        self.assertEqual(set(counts), {"(8, 16)", "(2, 16)"})
        self.assertEqual(sum(counts.values()), m["full"]["steps"])
        self.assertEqual((mix["shapes"], mix["held_share"]), (2, 1.0))
        self.assertAlmostEqual(counts["(8, 16)"] / sum(counts.values()), 0.75, delta=0.1)
        # the FLOPs are the mix's: 2 x 2 x n x 16 x 16 a batch of n (forward, and w's gradient)
        mean_n = (8 * counts["(8, 16)"] + 2 * counts["(2, 16)"]) / sum(counts.values())
        self.assertAlmostEqual(flop_stage(doc)["flops_per_step"], 1024 * mean_n, places=6)
        self.assertEqual(len(m["step"]["batches"]), 2)
        self.assertIn("took 2 shapes", "\n".join(ms.summary(doc)))
        # the loader's items per batch are its batches' mean (6.5), not the first batch's 8
        self.assertTrue(within(doc["simplify"]["data_loading"]["items_per_batch"], 6.5, 0.05),
                        doc["simplify"]["data_loading"]["items_per_batch"])

    def test_one_shape_is_one_batch(self):
        doc = ms.simplify([torch.randn(4, 4)] * 3, lambda b: None, seconds=0.1, warmup=0.02, log=None)
        self.assertNotIn("batch_mix", doc["simplify"])
        self.assertNotIn("batches", doc["simplify"]["modes"]["step"])

    def test_shapes_held_and_their_order(self):
        mix = ms._BatchMix()
        for n in (1, 2, 3, 4, 5, 6, 1, 1):
            mix.add(torch.zeros(n, 2))
        self.assertEqual([len(b) for b, _ in mix.kept()], [1, 2, 3, 4])   # the first MIX_KEEP shapes
        self.assertEqual([k for _, k in mix.kept()], [0.5, 1 / 6, 1 / 6, 1 / 6])
        self.assertAlmostEqual(mix.covered(), 6 / 8)
        self.assertEqual(mix.mean_bytes(), 4 * 2 * (1 + 2 + 3 + 4 + 5 + 6 + 1 + 1) / 8)
        pick = ms._weighted_cycle([0.75, 0.25])
        self.assertEqual([pick() for _ in range(8)], [0, 0, 1, 0, 0, 0, 1, 0])


class OverlapWords(unittest.TestCase):
    def test_known_cases(self):
        """full ~ max: overlapped; full ~ sum: one after another; above the sum: contention."""
        def words(full, parts):
            ov = {"full_vs_sum": full / sum(parts), "full_vs_max": full / max(parts)}
            return ms._overlap_words(ov)
        self.assertIn("the parts overlap", words(0.105, [0.1, 0.06]))
        # a part of 16 us beside a 297 ms step (word_language_model): overlap or not, the step is the same
        self.assertIn("does not change the step", words(0.303, [0.297, 0.000016]))
        self.assertNotIn("the parts overlap", words(0.303, [0.297, 0.000016]))
        self.assertIn("one after another", words(0.16, [0.1, 0.06]))
        self.assertIn("contend", words(0.25, [0.1, 0.06]))
        # no loader workers: nothing runs beside the parts, so not "they contend in the pipeline"
        ov = {"full_vs_sum": 0.25 / 0.16, "full_vs_max": 0.25 / 0.1}
        self.assertIn("with no loader workers: each slows the next in one process", ms._overlap_words(ov, 0))
        self.assertNotIn("contend", ms._overlap_words(ov, 0))
        self.assertIn("contend", ms._overlap_words(ov, 2))
        self.assertIn("in part", words(0.13, [0.1, 0.06]))
        # faster than its slowest part alone: the isolated figures are off (a busy machine), not "overlap"
        self.assertIn("not reliable", words(0.063, [0.107, 0.005]))
        self.assertNotIn("overlap", words(0.063, [0.107, 0.005]))


class ProcAccounting(unittest.TestCase):
    def test_children_that_end_are_counted_once(self):
        """A child reading 8 MiB and exiting inside the window: once, via the
        parent's counters (Linux adds a reaped child's I/O to its parent)."""
        path = os.path.join(WORK, "child.bin")
        with open(path, "wb") as f:
            f.write(os.urandom(8 << 20))
        a = ms.ProcSnapshot()
        pid = os.fork()
        if pid == 0:
            with open(path, "rb") as f:
                f.read()
            os._exit(0)
        os.waitpid(pid, 0)
        b = ms.ProcSnapshot()
        d = ms.proc_delta(a, b)
        self.assertGreaterEqual(d["rchar"], 8 << 20)
        self.assertLess(d["rchar"], (8 << 20) + (1 << 20))


class CpuTraceThroughGap(unittest.TestCase):
    @unittest.skipUnless(MLBENCH, "needs $MLBENCH")
    def test_cpu_trace_of_this_torch(self):
        """A trace exported by Debian's torch (no Kineto: a bare JSON array)
        goes through `mlbench gap`: CPU gemm/conv, optimizer and Python
        stages adding up to the step, a CPU step table, a CPU diagnosis."""
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 30 * 30, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
        with torch.autograd.profiler.profile() as prof:
            for i in range(4):
                with torch.autograd.profiler.record_function("ProfilerStep#%d" % i):
                    nn.functional.cross_entropy(model(x), y).backward()
                    opt.step()
                    opt.zero_grad()
        path = os.path.join(WORK, "cpu_trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            self.assertTrue(f.read(1) == "[")   # the array form
        rc, out, err = run_mlbench("gap", "--run", path, "--ceilings", os.path.join(SRC, "tests/data/cpu_quick.json"),
                                   "--format", "json")
        self.assertEqual(rc, 0, err)
        g = json.loads(out)
        st = {s["name"]: s for s in g["stages"]}
        for name in ("gemm (cpu)", "conv (cpu)", "optimizer", "python (host code)"):
            self.assertIn(name, st)
            self.assertEqual(st[name]["device"], "cpu")
        self.assertIsNone(st["gemm (cpu)"]["work_unit"])   # this exporter records no shapes: time only
        # ... and its memory-bound ops by name (relu, the loss's softmax), no host code: their class, time only
        head = {s["name"]: s for s in g["headline"]["stages"]}
        self.assertIn("memory-bound ops (cpu)", st)
        self.assertIsNone(st["memory-bound ops (cpu)"]["work_unit"])
        self.assertIn("no op recorded its shapes", head["memory-bound ops (cpu)"]["no_ceiling"])
        self.assertEqual(g["run"]["steps"], 4)
        total = sum(s["seconds"] for s in g["stages"])
        self.assertAlmostEqual(total / g["run"]["total_seconds"], 1.0, places=6)
        self.assertEqual(g["step"]["where"], "cpu")
        self.assertIn("CPU", json.dumps(g["diagnosis"]))


    def test_cpu_trace_without_profiler_steps(self):
        """The same exporter around a loop that never marks its steps, after a 0.5-s set-up: the steps are cut at
        its five optimizer steps (four between them), the set-up left out and said."""
        torch.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 30 * 30, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
        with torch.autograd.profiler.profile() as prof:
            torch.randn(8).sum()   # the profile's first event, then the set-up
            time.sleep(0.5)
            for _ in range(5):
                nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
                opt.zero_grad()
        path = os.path.join(WORK, "cpu_trace_no_steps.json")
        prof.export_chrome_trace(path)
        rc, out, err = run_mlbench("gap", "--run", path, "--ceilings", os.path.join(SRC, "tests/data/cpu_quick.json"),
                                   "--format", "json")
        self.assertEqual(rc, 0, err)
        g = json.loads(out)
        self.assertEqual(g["run"]["steps"], 4)
        self.assertEqual(g["step"]["window"], "Optimizer.step")
        self.assertLess(g["run"]["step_seconds"], 0.5)   # the set-up is in no step
        total = sum(s["seconds"] for s in g["stages"])
        self.assertAlmostEqual(total / (4 * g["step"]["seconds"]), 1.0, places=6)
        said = [w for w in g["run"]["warnings"] if "Optimizer.step annotations" in w]
        self.assertEqual(len(said), 1, g["run"]["warnings"])
        self.assertIn("the steps are cut at the host's 5 Optimizer.step annotations", said[0])
        value, unit = re.search(r"; the ([0-9.]+) (ms|s) before the first", said[0]).groups()
        self.assertGreater(float(value) * (1e-3 if unit == "ms" else 1), 0.5)

    def test_cpu_trace_of_annotated_iterations(self):
        """A loop without torch.optim (its weights updated by hand) and without ProfilerSteps, each iteration in a
        record_function("train_step") with a "forward" inside, 20 ms of other work (the next batch, logging)
        between them, after a 0.5-s set-up: six iterations give five steps, start to start, holding that work."""
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
        x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
        with torch.autograd.profiler.profile() as prof:
            torch.randn(8).sum()
            time.sleep(0.5)
            for _ in range(6):
                with torch.autograd.profiler.record_function("train_step"):
                    with torch.autograd.profiler.record_function("forward"):
                        loss = nn.functional.cross_entropy(model(x), y)
                    loss.backward()
                    with torch.no_grad():
                        for p in model.parameters():
                            p.add_(p.grad, alpha=-0.1)
                            p.grad = None
                time.sleep(0.02)
        path = os.path.join(WORK, "cpu_trace_annotated.json")
        prof.export_chrome_trace(path)
        rc, out, err = run_mlbench("gap", "--run", path, "--ceilings", os.path.join(SRC, "tests/data/cpu_quick.json"),
                                   "--format", "json")
        self.assertEqual(rc, 0, err)
        g = json.loads(out)
        self.assertEqual(g["run"]["steps"], 5)
        self.assertEqual(g["step"]["window"], "train_step")
        self.assertGreater(g["run"]["step_seconds"], 0.02)   # the work between the annotations is the step's
        self.assertLess(g["run"]["step_seconds"], 0.5)       # the set-up is in no step
        total = sum(s["seconds"] for s in g["stages"])
        self.assertAlmostEqual(total / (5 * g["step"]["seconds"]), 1.0, places=6)
        said = [w for w in g["run"]["warnings"] if "'train_step' annotations" in w]
        self.assertEqual(len(said), 1, g["run"]["warnings"])
        self.assertIn("no ProfilerStep#N or Optimizer.step annotations: the steps are cut at the 6 'train_step' "
                      "annotations", said[0])
        # the diagnosis speaks of the step, as the headline does (its share read "of the run")
        evidence = " ".join(g["diagnosis"]["findings"][0]["evidence"])
        self.assertRegex(evidence, r"the CPU.s side \(its ops, and Python or waiting between them\) takes "
                                   r"[0-9.]+% of the step")

class DdpFigures(unittest.TestCase):
    """DDP's gradient all-reduce in the stage file and the summary, from known mode figures."""

    @staticmethod
    def runner(with_it, no_sync, alone, stderr=0.001):
        modes = {"no_collective": {"seconds_per_step": no_sync, "with_seconds_per_step": with_it, "pairs": 20,
                                   "cost_per_step": with_it - no_sync, "cost_stderr": stderr},
                 "collective": {"seconds_per_step": alone, "bytes_per_step": 14e6, "calls_per_step": 2,
                                "dtype": "fp32"}}
        return types.SimpleNamespace(modes=modes, cuda=False, world=types.SimpleNamespace(size=4))

    def lines(self, s):
        dist = {"world_size": 4, "collective": {"gradient_bytes_per_step": 14e6}}
        return "\n".join(ms._ddp_lines(dist, s.modes))

    def test_cost_below_its_time_in_flight(self):
        s = self.runner(0.500, 0.490, 0.020)
        st = ms._ddp_stage(s, 0.010)
        self.assertEqual((st["component"], st["ranks"], st["bytes_per_step"], st["block_size"]),
                         ("allreduce", 4, 14e6, 7e6))
        self.assertEqual((st["seconds_per_step"], st["exposed_seconds_per_step"]), (0.020, 0.010))
        text = self.lines(s)
        self.assertIn("alone: 20.000 ms/step in flight, 14 MB in 2 buckets (700 MB/s), over 4 ranks", text)
        self.assertIn("its cost to the step: 10.000 ms ± 1.000 ms/step (20 alternating pairs", text)

    def test_one_rank_is_time_only(self):
        """DDP on one rank (a one-GPU check of the path): nobody to reduce with, no all-reduce ceiling to hold."""
        s = self.runner(0.500, 0.490, 0.020)
        s.world.size = 1
        st = ms._ddp_stage(s, 0.010)
        self.assertEqual((st["component"], st["role"]), ("other", "communication"))
        self.assertNotIn("ranks", st)
        self.assertEqual((st["seconds_per_step"], st["exposed_seconds_per_step"]), (0.020, 0.010))

    def test_cost_above_its_time_in_flight_stays_in_no_stage(self):
        s = self.runner(0.530, 0.500, 0.020)
        st = ms._ddp_stage(s, 0.030)
        self.assertEqual((st["seconds_per_step"], st["exposed_seconds_per_step"]), (0.020, 0.020))
        self.assertIn("the rest (10.000 ms) is DDP's own work around it (its hooks, the gradients copied into and "
                      "out of its buckets), the wait for a slower rank, contention", self.lines(s))
        # one rank waits for nobody (the H200's one-GPU run read "the wait for a slower rank")
        one = "\n".join(ms._ddp_lines({"world_size": 1, "collective": {"gradient_bytes_per_step": 14e6}}, s.modes))
        self.assertIn("the rest (10.000 ms) is DDP's own work around it", one)
        self.assertNotIn("slower rank", one)

    def test_a_cost_within_its_noise_is_not_resolved(self):
        # pairs whose mean difference is within twice its standard error: said so, counted as its mean (>= 0)
        s = self.runner(1.006, 1.000, 0.012, stderr=0.004)
        self.assertIn("not resolved (within twice its standard error of 0; counted as 6.000 ms)", self.lines(s))
        s = self.runner(1.006, 1.150, 0.012, stderr=0.1)
        self.assertEqual(ms._ddp_stage(s, 0.0)["exposed_seconds_per_step"], 0.0)
        self.assertIn("counted as 0.000 ms", self.lines(s))
        # the steps inside no_sync() slower beyond their noise: no cost measurable, never a negative time
        s = self.runner(1.006, 1.150, 0.012, stderr=0.01)
        text = self.lines(s)
        self.assertIn("none measurable, counted as 0: the steps inside no_sync() took longer", text)
        self.assertNotIn("not resolved", text)

    def test_buckets_without_torch_internals(self):
        """DDP's logging data gone (an internal of torch): the gradients cut at its bucket cap, per dtype."""
        class Ddp:
            bucket_bytes_cap = 1000

            def __init__(self, params):
                self.params = params

            def parameters(self):
                return iter(self.params)

            def _get_ddp_logging_data(self):
                raise AttributeError("gone")
        p32 = [torch.zeros(300, requires_grad=True), torch.zeros(200, requires_grad=True)]   # 2000 bytes
        p16 = [torch.zeros(100, dtype=torch.bfloat16, requires_grad=True)]                   # 200 bytes
        got = ms._ddp_buckets(Ddp(p32 + p16 + [torch.zeros(7)]))
        self.assertEqual(sorted((n, str(dt)) for n, dt in got),
                         [(200, "torch.bfloat16"), (1000, "torch.float32"), (1000, "torch.float32")])


DDP_LOOP = r"""
import json, os, sys, time
import torch, torch.nn as nn, torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP
from mlbench import simplify as ms

dist.init_process_group("gloo")
torch.set_num_threads(1)
rank = dist.get_rank()
torch.manual_seed(0)
model = DDP(nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
s = None
reduced = {}   # the gradient all-reduces DDP started, by the runner's mode


def counted(state, bucket):
    mode = s._current if s is not None else "trace"
    reduced[mode] = reduced.get(mode, 0) + 1
    return default_hooks.allreduce_hook(None, bucket)


model.register_comm_hook(None, counted)
barriers = {}  # the barriers called, by the runner's mode
_barrier = dist.barrier


def counted_barrier(*args, **kwargs):
    mode = s._current if s is not None else "trace"
    barriers[mode] = barriers.get(mode, 0) + 1
    return _barrier(*args, **kwargs)


dist.barrier = counted_barrier


def step(x):
    opt.zero_grad()
    model(x).sum().backward()
    opt.step()


# a trace of four steps, as torch.profiler writes it without Kineto
with torch.autograd.profiler.profile() as prof:
    for i in range(4):
        with torch.autograd.profiler.record_function("ProfilerStep#%d" % i):
            step(torch.randn(32, 64))
    # torch 1.13's gloo completes an all-reduce's future (DDP's step returns) before its worker thread ends the
    # all-reduce's profiler event (AsyncWork::finishWorkGloo: returnFutureWithOutput, then Work::finish runs
    # recordFunctionEndCallback_): a profiler stopped then reads an event still being written, and 1 run in 30 to
    # 100 here aborted in its exit ("munmap_chunk(): invalid pointer", "malloc(): invalid size"). gloo's barrier
    # waits on every earlier work (Work::wait returns once finish, its end callback included, is done)
    dist.barrier()
if rank == 0:
    prof.export_chrome_trace(sys.argv[2])


class Batches:
    # rank 1's batches take 0.2 s each to make, rank 0's nothing: the ranks leave a mode whose steps meet in no
    # collective (the loader alone) 0.2 s apart, and each rank's clock starts the next one's windows then
    def __iter__(self):
        while True:
            if rank == 1:
                time.sleep(0.2)
            yield torch.randn(32, 64)


s = ms.Simplifier(Batches(), step, optimizer=opt, collective=model, seconds=1.0, warmup=0.5, out=sys.argv[1],
                  hard_bound=40, log=None)
doc = s.run()
doc["reduced"] = reduced
doc["barriers"] = barriers
with open(ms.rank_path(sys.argv[1]), "w") as f:
    json.dump(doc, f)
dist.destroy_process_group()
"""


def free_port():
    import socket
    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        return so.getsockname()[1]


class Distributed(unittest.TestCase):
    def test_ddp_on_two_ranks(self):
        """A DDP loop on two gloo ranks, each running the runner as torchrun would: every mode runs the same
        number of steps on both ranks (rank 1's slow batches start its windows 0.2 s after rank 0's: counted by
        time, rank 0's steps would meet rank 1's next mode's, and the last ones none), each rank writes its own
        file, the DDP model stands for the collective (its all-reduce stubbed by no_sync(): none started in mode
        no_collective) with its gradients' bytes; and its trace's all-reduce is one call per bucket, not two."""
        script = os.path.join(WORK, "ddp_loop.py")
        with open(script, "w") as f:
            f.write(DDP_LOOP)
        out, trace = os.path.join(WORK, "ddp.json"), os.path.join(WORK, "ddp_trace.json")
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE="2")
        procs = [subprocess.Popen([sys.executable, script, out, trace], env=dict(env, RANK=str(r)),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for r in (0, 1)]
        try:
            logs = [p.communicate(timeout=150)[0] for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        self.assertEqual([p.returncode for p in procs], [0, 0], logs)
        docs = []
        for path in (out, os.path.join(WORK, "ddp.rank1.json")):
            with open(path) as f:
                docs.append(json.load(f))
        for d in docs:
            self.assertTrue(d["simplify"]["complete"], d["simplify"].get("errors"))
        modes = [d["simplify"]["modes"] for d in docs]
        for mode in ("full", "step", "no_optimizer", "no_collective", "collective"):
            self.assertEqual(modes[0][mode]["steps"], modes[1][mode]["steps"], mode)
        # the loader alone meets in no collective: each rank measures its own for --seconds
        self.assertGreater(modes[0]["loader"]["batches"], 10 * modes[1]["loader"]["batches"])
        for d in docs:
            # mode no_collective alternates steps with the all-reduce and inside no_sync(): only the former start one
            nc = d["simplify"]["modes"]["no_collective"]
            self.assertEqual(d["reduced"].get("no_collective", 0), nc["with_steps_run"], d["reduced"])
            self.assertGreaterEqual(nc["with_steps_run"], nc["pairs"])
            self.assertGreater(d["reduced"].get("step", 0), 0, d["reduced"])
            # the step profiled for its FLOPs (one: the batches have one shape; the three before it, timed
            # without the profiler, all-reduce too) waits for gloo's workers to end their profiler events before
            # the profiler stops, as the trace above does: one barrier each, none elsewhere
            self.assertEqual(d["reduced"]["count_flops"], 4, d["reduced"])
            self.assertEqual(d["barriers"], {"trace": 1, "count_flops": 1}, d["barriers"])
            dist_info = d["simplify"]["distributed"]
            self.assertEqual((dist_info["world_size"], dist_info["backend"]), (2, "gloo"))
            # both ranks on this machine, one torch thread each: gap's "Use all cores" is for idle CPUs only
            self.assertEqual((d["simplify"]["host_ranks"], d["simplify"]["torch_threads"]), (2, 1))
            self.assertEqual(d["simplify"]["cpus_allowed"], len(os.sched_getaffinity(0)))
            self.assertEqual(dist_info["collective"]["gradient_bytes_per_step"], (64 * 256 + 256 + 256 * 64 + 64) * 4)
            st = {x["name"]: x for x in d["stages"]}
            c = st["gradient all-reduce (DDP)"]
            # its buckets all-reduced alone (one: the model is small) give its rate against the all-reduce ceiling;
            # what it costs the step (with and without no_sync()) is its exposed time, up to that
            grad_bytes = dist_info["collective"]["gradient_bytes_per_step"]
            alone = d["simplify"]["modes"]["collective"]
            self.assertEqual((alone["calls_per_step"], alone["bytes_per_step"]), (1, grad_bytes))
            self.assertEqual((c["component"], c["role"], c["ranks"], c["dtype"]), ("allreduce", "communication", 2,
                                                                                    "fp32"))
            self.assertEqual((c["bytes_per_step"], c["block_size"]), (grad_bytes, grad_bytes))
            self.assertAlmostEqual(c["seconds_per_step"], alone["seconds_per_step"])
            cost = max(nc["cost_per_step"], 0.0)
            self.assertAlmostEqual(nc["cost_per_step"], nc["with_seconds_per_step"] - nc["seconds_per_step"])
            self.assertAlmostEqual(c["exposed_seconds_per_step"], min(cost, alone["seconds_per_step"]))
            self.assertNotIn("isolated_seconds_per_step", c)
            # two ranks share this machine's CPUs: each rank's matmuls are held against its share of them
            mm = st["fwd+bwd: matmuls"]
            self.assertEqual(mm["threads"], max(1, len(os.sched_getaffinity(0)) // 2))
            self.assertNotIn("threads", st["fwd+bwd: other ops"])
        self.assertEqual([d["simplify"]["distributed"]["rank"] for d in docs], [0, 1])
        if not MLBENCH:
            return
        rc, text, err = run_mlbench("gap", "--run", trace, "--ceilings",
                                    os.path.join(SRC, "tests/data/cpu_quick.json"), "--format", "json")
        self.assertEqual(rc, 0, err)
        g = json.loads(text)
        ar = [x for x in g["stages"] if x["name"].startswith("allreduce (host")]
        self.assertEqual(len(ar), 1, [x["name"] for x in g["stages"]])
        # one bucket (the model is small): one all-reduce per step, gloo's run and the caller's request once
        self.assertEqual(ar[0]["calls"], 4)
        self.assertLessEqual(ar[0]["exposed_seconds"], ar[0]["seconds"] + 1e-12)
        exposed = sum(x["exposed_seconds"] for x in g["stages"])
        self.assertAlmostEqual(exposed / g["run"]["total_seconds"], 1.0, places=6)


if __name__ == "__main__":
    unittest.main()
