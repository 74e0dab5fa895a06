#!/usr/bin/env python3
"""Known-answer tests of the cold page cache in mlbench.simplify (python/mlbench/simplify.py)
(issue 32: the random-read trap), with Debian's python3-torch on real files in
$WORK, run by tests/simplify.sh.

The loop is the issue's: a DataLoader over one large memory-mapped file of
fixed-size records (64 KiB where the device reads ahead 8 MiB), batch 32, a
tiny step. Its known answers are measured here, on the same machine and the
same file, by hand: the same DataLoader iterated by a plain timed loop over
the very batches the runner's loader mode produced (read back from a log the
dataset writes), the file evicted from the page cache first:

- at random offsets, the by-hand loop also evicts the file before every
  record (the state of a dataset larger than memory: nothing it read before
  is still cached), and each record's page fault reads a whole readahead
  window: the runner must time it within 25% and name it read-amplified
  (storage bytes >= 10x the bytes delivered);
- in order, every record is read once: evicting the file once is enough, the
  readahead is used, and the runner must time it within 25% and not call it
  amplified.

The shared 2-vCPU machine is noisy (other work, a shared virtio disk; a
single run of either varied by up to 2x under load): the runner and the
by-hand loop alternate nine times, in turns which goes first, and the median
of the nine ratios runner / by hand is held within 25% (a burst of load hits
both members of a pair alike, a drift favours neither), the runner's time
less the CPU its cache keeper took beside it (on two CPUs, CPU a busy
loader did not have). A decode-bound loader (open().read() of each file, then 3 ms of
CPU) must be named CPU-bound with its CPU time per item, and every message
must tell the same story as the stage file (issue 32, point 3).
"""
import copy
import io
import json
import mmap
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
import unittest
import unittest.mock

import torch
from torch.utils.data import DataLoader, Dataset

from mlbench import simplify as ms

MLBENCH = os.environ.get("MLBENCH")
WORK = os.environ.get("WORK") or tempfile.mkdtemp(prefix="simplify-cold-test.")
RUNS = 9            # runner / by-hand alternations (ABBA): the median of their ratios is compared
SECONDS, WARMUP = 1.5, 0.3


def device_readahead(path):
    """read_ahead_kb of the block device under path (its disk's, for a
    partition; 128, the kernel's default, where unknown)."""
    try:
        dev = os.stat(path).st_dev
        real = os.path.realpath("/sys/dev/block/%d:%d" % (os.major(dev), os.minor(dev)))
        disk = os.path.dirname(real) if os.path.exists(os.path.join(real, "partition")) else real
        with open(os.path.join(disk, "queue", "read_ahead_kb")) as f:
            return int(f.read())
    except (OSError, ValueError):
        return 128


def write_random(path, size):
    with open(path, "wb") as f:
        left = size
        while left:
            n = min(left, 4 << 20)
            f.write(random.randbytes(n))
            left -= n
        f.flush()
        os.fsync(f.fileno())   # on the device, and (still) in the page cache: the runner must evict it


def time_ratios(runs, hands):
    """Median runner / by hand time ratios of the pairs: as measured, and with
    the runner's time less its cache keeper's CPU per batch. The helper runs
    beside the loader and can delay it by at most its own CPU time (on this
    2-CPU VM, with a worker busy all the time and the main process, 0.25-0.3 s
    of a 1.5-s mode: the runner read x1.09-1.31 the hand's time): a runner
    slower than by hand by more than that measures the loader wrong."""
    return (statistics.median(r[0] / h[0] for r, h in zip(runs, hands)),
            statistics.median((r[0] - r[2]) / h[0] for r, h in zip(runs, hands)))


def evict(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def own_read_bytes():
    """read_bytes of this process (its reaped workers' included)."""
    with open("/proc/self/io") as f:
        for line in f:
            if line.startswith("read_bytes"):
                return int(line.split()[1])
    return 0


class Records(Dataset):
    """Fixed-size records of one memory-mapped file, mapped by each worker.
    Every record served is logged ("pid seq index monotonic-end
    seconds-evicting-before-it") to `log`.
    The by-hand reference drops what it has read, as memory pressure does
    for a dataset larger than memory: before every `batch`-th record (the
    first of each batch, with one worker), evict="all" drops the whole file
    from the page cache and from this mapping, evict="behind" what lies more
    than BEHIND bytes before the record (pages read ahead are kept)."""

    BEHIND = 16 << 20

    def __init__(self, path, rec, log=None, evict=None, batch=1):
        self.path, self.rec, self.log, self.evict, self.batch = path, rec, log, evict, batch
        self.size = os.path.getsize(path)
        self.mm = None
        self.seq = 0

    def __len__(self):
        return self.size // self.rec

    def __getitem__(self, i):
        if self.mm is None:   # in the worker
            self.fd = os.open(self.path, os.O_RDONLY)
            self.mm = mmap.mmap(self.fd, self.size, prot=mmap.PROT_READ)
            self.logfd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) if self.log else None
        evicting = 0.0
        if self.evict and self.seq % self.batch == 0:
            t0 = time.perf_counter()
            end = self.size if self.evict == "all" else (i * self.rec - self.BEHIND) // mmap.PAGESIZE * mmap.PAGESIZE
            if end > 0:
                self.mm.madvise(mmap.MADV_DONTNEED, 0, end)
                os.posix_fadvise(self.fd, 0, end, os.POSIX_FADV_DONTNEED)
            evicting = time.perf_counter() - t0
        x = torch.frombuffer(bytearray(self.mm[i * self.rec:(i + 1) * self.rec]), dtype=torch.uint8)
        if self.logfd is not None:
            os.write(self.logfd, b"%d %d %d %.9f %.9f\n" % (os.getpid(), self.seq, i, time.perf_counter(), evicting))
        self.seq += 1
        return x


class Permuted(Records):
    """Records in a fixed random order of its own: index i serves record order[i]."""

    def __init__(self, path, rec, order):
        super().__init__(path, rec)
        self.order = order

    def __getitem__(self, i):
        return super().__getitem__(self.order[i])


class PermutedRandom(Permuted):
    """Permuted, its mapping advised MADV_RANDOM: each record reads its own
    pages, no readahead around them (the remedy applied, or a pread loader)."""

    def __getitem__(self, i):
        fresh = self.mm is None
        x = super().__getitem__(i)
        if fresh:   # mapped by the first item: the rest read their own pages only
            self.mm.madvise(mmap.MADV_RANDOM)
        return x


def window_batches(log, window, batch):
    """The batches (index lists, in order) the loader's worker made inside the
    runner's measured window: one worker makes one batch after another, its
    items in order."""
    rows = []
    with open(log) as f:
        for line in f:
            pid, seq, idx, t = line.split()[:4]
            rows.append((int(pid), int(seq), int(idx), float(t)))
    groups = {}
    for pid, seq, idx, t in rows:
        groups.setdefault((pid, seq // batch), []).append((seq, idx, t))
    out = []
    for key in sorted(groups):
        g = sorted(groups[key])
        if len(g) == batch and all(window[0] <= t <= window[1] for _, _, t in g):
            out.append([idx for _, idx, _ in g])
    return out


class LoaderOnly(ms.Simplifier):
    """The runner with its loader mode only (the repeats of the comparison)."""

    def plan(self):
        return ["loader"]


def touch_step(b):
    b[:, :64].float().sum()


class RandomReadTrap(unittest.TestCase):
    """The issue's loader: one large memory-mapped file, records at random
    offsets or in order, measured cold by the runner and by hand."""

    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.dir = tempfile.mkdtemp(prefix="cold.", dir=WORK)
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        ra = device_readahead(cls.dir) * 1024
        # a record 1/128 of the readahead window (64 KiB under 8 MiB, 4 KiB under 128 KiB: the default),
        # a file 128 windows large (a batch of 32 touches a quarter of it at most), 256 MiB to 1 GiB
        cls.rec = max(4096, min(64 << 10, ra // 128))
        cls.size = max(256 << 20, min(1 << 30, 128 * ra))
        cls.ra_kb = ra // 1024
        cls.path = os.path.join(cls.dir, "records.bin")
        write_random(cls.path, cls.size)
        cls.batch = 32

    def loader(self, shuffle, log):
        return DataLoader(Records(self.path, self.rec, log=log), batch_size=self.batch, shuffle=shuffle,
                          num_workers=1)

    def seeking(self, dataset, seed):
        """A dataset that serves the records in a random order of its own, behind DataLoader(shuffle=False)."""
        n = self.size // self.rec
        order = random.Random(seed).sample(range(n), n)
        return DataLoader(dataset(self.path, self.rec, order), batch_size=self.batch, shuffle=False, num_workers=1)

    def loader_alone(self, loader, pattern=None):
        """The runner's loader mode alone: (simplifier, document)."""
        sim = LoaderOnly(loader, touch_step, seconds=SECONDS, warmup=WARMUP, log=None, pattern=pattern)
        doc = sim.run()
        self.assertFalse(sim.errors, sim.errors)
        return sim, doc

    def runner(self, shuffle, first, out=None):
        """One run of the runner (all its modes the first time, then the
        loader mode alone); returns (document, simplifier, the batches its
        loader mode made in its measured window)."""
        log = os.path.join(self.dir, "items.log")
        cls = ms.Simplifier if first else LoaderOnly
        # A window of fewer than three batches gives the by-hand loop nothing to compare: the shared disk's slow
        # moment left two in one CI run (the random reader, 200-300 ms a batch, 1.5 s; 2026-12-01). The run is
        # made again then, at most twice; its figures are the comparison's, not checked here.
        for _ in range(3):
            if os.path.exists(log):
                os.unlink(log)
            sim = cls(self.loader(shuffle, log), touch_step, seconds=SECONDS, warmup=WARMUP, out=out, log=None,
                      pattern=None)
            doc = sim.run()
            self.assertFalse(sim.errors, sim.errors)
            batches = window_batches(log, sim.measured["loader"], self.batch)
            if len(batches) >= 3:
                break
        self.assertGreaterEqual(len(batches), 3, "too few batches in the window to compare, three runs")
        return doc, sim, batches

    def by_hand(self, batches, how):
        """The same DataLoader (one worker) over the same batches, timed by a
        plain loop from its first batch to its last, the file evicted first
        and what it read dropped as it goes (Records, evict=how). With
        evict="all" the time the worker spent evicting is taken out: freeing
        the 256 MB a batch read ahead takes it a quarter of the batch, where
        the runner's helper frees them beside the loop on a CPU the waiting
        loader leaves idle ("behind" frees 2 MB a batch, and the CPU-bound
        loader pays for the helper's CPU as much). At most 3 x SECONDS of them
        (a runner that measured a warm cache hands over hundreds). Returns
        (seconds per batch, storage bytes per batch made)."""
        evict(self.path)
        log = os.path.join(self.dir, "by-hand.log")   # the same work per item as in the runner's loop
        if os.path.exists(log):
            os.unlink(log)
        dl = DataLoader(Records(self.path, self.rec, log=log, evict=how, batch=self.batch), batch_sampler=batches,
                        num_workers=1)
        r0 = own_read_bytes()
        arrived = []
        for b in dl:
            int(b[0, 0])
            arrived.append(time.perf_counter())
            if len(arrived) >= 3 and arrived[-1] - arrived[0] > 3 * SECONDS:
                break
        del b, dl
        storage = own_read_bytes() - r0          # the worker is reaped: its reads are ours now
        with open(log) as f:
            evicting = [float(line.split()[4]) for line in f]
        made = len(evicting) / self.batch           # with the batches it made ahead
        os.unlink(log)
        per = (arrived[-1] - arrived[0]) / (len(arrived) - 1)
        if how == "all":
            per -= sum(evicting) / made
        return per, storage / made

    def compare(self, shuffle, how):
        """RUNS pairs, in turns runner first and by hand first (ABBA: a machine
        that drifts faster or slower over the minutes the pairs take, as this
        one's shared disk does, favours neither; with the runner always first
        the by-hand loop, always later, read 2.4-4.1 ms where the runner read
        3.2-4.2 ms in one CI run). By hand first replays the batches of the
        run before: in order, the same records; at random, records as
        random."""
        out = os.path.join(self.dir, "simplify-%s.json" % ("random" if shuffle else "sequential"))
        runs, hands, docs = [], [], []
        batches = None
        for k in range(RUNS):
            hand_first = k % 2 == 1
            if hand_first:
                hands.append(self.by_hand(batches, how))
            doc, sim, batches = self.runner(shuffle, first=(k == 0), out=out if k == 0 else None)
            docs.append(doc)
            ld = doc["simplify"]["modes"]["loader"]     # the loader alone: its time, its bytes from storage,
            runs.append((ld["seconds_per_batch"], ld["read_bytes"] / ld["batches"],   # its cache keeper's CPU
                         ld["cache"]["keeper_cpu_seconds"] / ld["batches"]))
            if not hand_first:
                hands.append(self.by_hand(batches, how))
        ratio, less_helper = time_ratios(runs, hands)
        delivered = self.batch * self.rec
        print("\n  %s: runner %s ms/batch, by hand %s ms/batch (median ratio %.2f, %.2f less the runner's helper's CPU "
              "%s ms/batch); storage per batch: runner %s MB, by hand %s MB (%d KiB records, %d MiB file, "
              "read_ahead_kb %d)" % (
                  "random" if shuffle else "sequential", ["%.1f" % (r[0] * 1e3) for r in runs],
                  ["%.1f" % (h[0] * 1e3) for h in hands], ratio, less_helper,
                  ["%.1f" % (r[2] * 1e3) for r in runs], ["%.1f" % (r[1] / 1e6) for r in runs],
                  ["%.1f" % (h[1] / 1e6) for h in hands], self.rec >> 10, self.size >> 20, self.ra_kb),
              file=sys.stderr)
        return docs, runs, hands, ratio, delivered, out

    def assert_same_time(self, runs, hands):
        """The runner's loader alone within 25% of the hand's time, beyond what its helper took of the CPUs."""
        ratio, less_helper = time_ratios(runs, hands)
        self.assertGreaterEqual(ratio, 0.75, "runner / by hand: median ratio %.2f" % ratio)
        self.assertLessEqual(less_helper, 1.25, "runner less its helper's CPU / by hand: median ratio "
                             "%.2f (%.2f with it)" % (less_helper, ratio))

    def check_document(self, doc, out, pattern):
        """Every mode's page-cache state in the stage file, the stage held
        against the disk ceiling of its pattern and of the requests served."""
        with open(out) as f:
            written = json.load(f)
        self.assertEqual(written["simplify"]["data_loading"], doc["simplify"]["data_loading"])
        for mode in written["simplify"]["plan"]:
            self.assertIn("state", written["simplify"]["modes"][mode]["cache"], mode)
        modes = written["simplify"]["modes"]
        self.assertEqual(modes["full"]["cache"]["state"], "cold", modes["full"]["cache"])
        self.assertEqual(modes["loader"]["cache"]["state"], "cold", modes["loader"]["cache"])
        self.assertEqual(modes["step"]["cache"]["state"], "not read")
        self.assertEqual(written["simplify"]["dataset"]["files"], 1)
        self.assertEqual(written["simplify"]["dataset"]["bytes"], self.size)
        st = {s["name"]: s for s in written["stages"]}["data loading"]
        dl = written["simplify"]["data_loading"]
        if dl["bound"] == "cpu":   # CPU work: time only, as the verdict says
            self.assertEqual((st["component"], st["role"]), ("other", "data"))
            return
        self.assertEqual((st["component"], st["pattern"]), ("disk", pattern))
        # the bytes the loop read a step, its time's; the loader's alone beside them
        self.assertAlmostEqual(st["bytes_per_step"], modes["full"]["read_bytes"] / modes["full"]["steps"])
        self.assertAlmostEqual(st["isolated_bytes_per_step"], dl["storage_bytes_per_batch"])
        dev = modes["loader"]["device"]
        if dev and dev["ours"] >= ms.DEVICE_OURS:   # the block size is the mean request the device served
            self.assertEqual(st["block_size"], int(round(dev["read_bytes"] / dev["read_requests"])))
        if MLBENCH:
            suite = os.path.join(self.dir, "disk.ini")
            with open(suite, "w") as f:
                f.write("[global]\nrepetitions = 1\nmin_time = 0.2\nwarmup_time = 0\n\n"
                        "[rand]\ncomponent = disk\nbackend = pread\nmode = direct\npattern = random\n"
                        "block_size = 1m\nfile_size = 64m\n\n"
                        "[seq]\ncomponent = disk\nbackend = pread\nmode = direct\npattern = sequential\n"
                        "block_size = 1m\nfile_size = 64m\n")
            results = os.path.join(self.dir, "disk-results.json")
            r = subprocess.run([MLBENCH, "--suite", suite, "--disk-dir", self.dir, "--out", results, "-q"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            r = subprocess.run([MLBENCH, "gap", "--run", out, "--ceilings", results, "--format", "json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            gj = json.loads(r.stdout)
            g = {s["name"]: s for s in gj["stages"]}["data loading"]
            self.assertIn("pattern=%s" % pattern, g["ceiling"]["id"])
            self.assertIsNotNone(g["levels"])
            # gap tells the loader's story as the runner told it: its verdict, its remedies first
            found = [x for x in gj["diagnosis"]["findings"] if x["pattern"] == "data_loading_bound"]
            self.assertTrue(found, gj["diagnosis"])
            said = "read-amplified" if dl["amplified"] else {"storage": "storage-bound",
                                                             "cpu+storage": "CPU- and storage-bound",
                                                             "waiting": "neither CPU- nor storage-bound"}[dl["bound"]]
            self.assertTrue(any("the loader alone (simplify" in e and said in e for e in found[0]["evidence"]),
                            found[0]["evidence"])
            remedies = dl.get("remedies", [])
            self.assertEqual(found[0]["remedies"][:len(remedies)], remedies)

    def test_random_offsets_cold_and_amplified(self):
        # by hand, every batch starts from an empty page cache (the runner's holds about 1/20 of the dataset)
        docs, runs, hands, ratio, delivered, out = self.compare(True, "all")
        # the known answer: by hand, each record's fault reads a readahead window
        for t, storage in hands:
            self.assertGreaterEqual(storage, 10 * delivered, "by hand: the setup does not amplify")
        self.assert_same_time(runs, hands)
        # the runner's storage bytes: >= 10x the bytes delivered, and the by-hand ones within 25%
        for r in runs:
            self.assertGreaterEqual(r[1], 10 * delivered, "runner: %.3g B/batch from storage" % r[1])
        ratio_s = statistics.median(r[1] / h[1] for r, h in zip(runs, hands))
        self.assertLessEqual(abs(ratio_s - 1), 0.25, "storage bytes, runner / by hand: median ratio %.2f" % ratio_s)
        for doc in docs:   # named read-amplified, with the remedies of memory-mapped random reads
            dl = doc["simplify"]["data_loading"]
            self.assertTrue(dl["amplified"], dl)
            self.assertGreaterEqual(dl["amplification"], 10, dl)
            self.assertEqual(dl["delivered_bytes_per_batch"], delivered)
            self.assertIn("memory-mapped", dl["mechanism"])
            self.assertIn("random", dl["mechanism"])
            self.assertTrue(any("MADV_RANDOM" in r for r in dl["remedies"]), dl["remedies"])
            self.assertTrue(any("WebDataset" in r for r in dl["remedies"]), dl["remedies"])
            self.assertTrue(any("read_ahead_kb %d" % self.ra_kb in r for r in dl["remedies"]), dl["remedies"])
            self.assertGreater(dl["major_faults_per_batch"], 0)
        self.check_document(docs[0], out, "random")
        lines = "\n".join(ms.summary(docs[0]))
        self.assertIn("read-amplified", lines)
        self.assertIn("MADV_RANDOM", lines)

    def test_random_offsets_behind_a_sequential_sampler(self):
        # a dataset that seeks at random itself behind DataLoader(shuffle=False): the sampler says "sequential",
        # the readahead the reads waste says otherwise, and the disk ceiling is the random one
        loader = self.seeking(Permuted, 7)
        dl = self.loader_alone(loader)[1]["simplify"]["data_loading"]
        self.assertTrue(dl["amplified"], dl)
        self.assertEqual(dl["pattern"], "random", dl)
        self.assertIn("readahead", dl["pattern_source"])
        self.assertTrue(dl["mechanism"].endswith("read at random offsets"), dl)
        # told by the user, the pattern is the user's
        dl = self.loader_alone(loader, pattern="sequential")[1]["simplify"]["data_loading"]
        self.assertEqual(dl["pattern"], "sequential", dl)
        self.assertNotIn("pattern_source", dl)

    def test_random_offsets_unamplified_behind_a_sequential_sampler(self):
        # the same seeking dataset with MADV_RANDOM on its mapping: no readahead wasted to tell the pattern, the
        # device serves a page per record at random offsets, and the ceiling is still the random one (it was
        # held against the sequential ceiling at 4 kB blocks, a rate random 4 kB reads never reach)
        sim, doc = self.loader_alone(self.seeking(PermutedRandom, 11))
        dl = doc["simplify"]["data_loading"]
        self.assertEqual(dl["source"], "storage", dl)
        self.assertFalse(dl["amplified"], dl)
        self.assertEqual(dl["pattern"], "random", dl)
        self.assertIn("where its reads landed", dl["pattern_source"])
        sc = sim.modes["loader"]["cache"]["scatter"]
        self.assertGreaterEqual(sc["chunks"], ms.SCATTERED * sc["chunks_in_order"], sc)

    def test_an_lmdb_map_gets_lmdb_remedies(self):
        # LMDB maps its data.mdb itself: the madvise is lmdb.open's readahead flag, not the user's call (the
        # same records under LMDB's file name, a hard link: no second copy on disk)
        sub = os.path.join(self.dir, "lmdb")
        os.makedirs(sub, exist_ok=True)
        path = os.path.join(sub, "data.mdb")
        if not os.path.exists(path):
            os.link(self.path, path)
        doc = self.loader_alone(DataLoader(Records(path, self.rec), batch_size=self.batch, shuffle=True,
                                           num_workers=1))[1]
        self.assertTrue(doc["simplify"]["dataset"]["lmdb"])
        dl = doc["simplify"]["data_loading"]
        self.assertTrue(dl["amplified"], dl)
        self.assertIn("LMDB's memory map", dl["mechanism"])
        self.assertIn("lmdb.open(path, readahead=False)", dl["remedies"][0])
        self.assertFalse(any("numpy.memmap" in r for r in dl["remedies"]), dl["remedies"])

    def test_in_order_cold_not_amplified(self):
        # in order, each record is read once: the file evicted once is cold all through; what lies 16 MiB
        # behind is dropped as it goes (a loop that lets the page cache grow by the 600 MB it reads ran
        # 1.1 or 2.2 ms a batch by turns here: the kernel's cost of finding fresh pages, not the reads)
        docs, runs, hands, ratio, delivered, out = self.compare(False, "behind")
        self.assert_same_time(runs, hands)
        for r in runs:   # cold: the records come from storage, about once each
            self.assertGreaterEqual(r[1], 0.5 * delivered, "runner: %.3g B/batch from storage" % r[1])
            self.assertLess(r[1], 2 * delivered, "runner: %.3g B/batch from storage" % r[1])
        for doc in docs:
            dl = doc["simplify"]["data_loading"]
            self.assertFalse(dl["amplified"], dl)
            self.assertLess(dl["amplification"], ms.AMPLIFIED, dl)
            # where its pages landed says in order: as many chunks as the bytes fill, give or take one
            sc = doc["simplify"]["modes"]["loader"]["cache"]["scatter"]
            self.assertGreater(sc["ticks"], 0, sc)
            self.assertLess(sc["chunks"], ms.SCATTERED * sc["chunks_in_order"], sc)
            self.assertNotIn("pattern_source", dl)
        self.check_document(docs[0], out, "sequential")
        self.assertNotIn("read-amplified", "\n".join(ms.summary(docs[0])))


class Quarters(torch.utils.data.IterableDataset):
    """Each worker reads its own part of one file in order, record by record (read(), no map)."""

    def __init__(self, path, rec):
        self.path, self.rec = path, rec

    def __iter__(self):
        info = torch.utils.data.get_worker_info()
        n, k = (info.num_workers, info.id) if info else (1, 0)
        part = os.path.getsize(self.path) // n
        with open(self.path, "rb") as f:
            while True:
                f.seek(k * part)
                for _ in range(part // self.rec):
                    yield torch.frombuffer(bytearray(f.read(self.rec)), dtype=torch.uint8)


class StreamsInOrder(unittest.TestCase):
    """Four workers each reading a quarter of one file in order: four
    streams, each with its readahead windows in flight. A tick of four
    windows in all (8 MiB windows on this VM) evicted pages read ahead before
    their stream reached them: 3.14-3.28 MB from storage for the 2.1 MB a
    batch held, x1.5-1.57, where 1.00-1.01 with a tick of four windows per
    process reading (2026-11-30). The file is 64 windows (256 MiB at least)."""

    def test_each_stream_keeps_its_readahead(self):
        d = tempfile.mkdtemp(prefix="quarters.", dir=WORK)
        self.addCleanup(shutil.rmtree, d, True)
        ra = device_readahead(d) * 1024
        path = os.path.join(d, "records.bin")
        write_random(path, max(256 << 20, 64 * ra))
        rec = 64 << 10
        loader = DataLoader(Quarters(path, rec), batch_size=32, num_workers=4, persistent_workers=True)
        sim = LoaderOnly(loader, touch_step, seconds=SECONDS, warmup=WARMUP, log=None, pattern="sequential")
        doc = sim.run()
        self.assertFalse(sim.errors, sim.errors)
        ld = doc["simplify"]["modes"]["loader"]
        per_batch = ld["read_bytes"] / ld["batches"]
        self.assertEqual(ld["cache"]["state"], "cold", ld["cache"])
        self.assertGreaterEqual(per_batch, 0.9 * 32 * rec, "storage %.3g B/batch: not cold" % per_batch)
        self.assertLess(per_batch, 1.15 * 32 * rec, "storage %.3g B/batch: read-ahead pages evicted unused"
                        % per_batch)


class TickSize(unittest.TestCase):
    """The keeper's tick (bytes the device reads between two evictions): 1/40
    of the dataset, at least four readahead windows, and for a sequential
    loader four per process reading."""

    def keeper(self, pattern, readers, size, ra_kb=8192):
        k = ms._CacheKeeper.__new__(ms._CacheKeeper)
        k.pattern, k.devices = pattern, [{"name": "vda", "read_ahead_kb": ra_kb}]
        k.watch = types.SimpleNamespace(files={"/d/a": size}, readers=readers, total_bytes=size, max_bytes=size)
        k.scatter = {"ticks": 0, "bytes": 0, "chunks": 0, "chunks_in_order": 0}
        return k

    def test_known_answers(self):
        mib = 1 << 20
        self.assertEqual(self.keeper("sequential", 4, 537 * mib).tick_bytes(), 4 * 8 * 4 * mib)
        self.assertEqual(self.keeper("random", 4, 537 * mib).tick_bytes(), 4 * 8 * mib)
        self.assertEqual(self.keeper("sequential", 0, 537 * mib).tick_bytes(), 4 * 8 * mib)  # none seen: one
        self.assertEqual(self.keeper("sequential", 4, 40 * 1024 * mib).tick_bytes(), 1024 * mib)  # 1/40
        self.assertEqual(self.keeper("sequential", 2, 3 * mib, ra_kb=128).tick_bytes(), 1 * mib)  # at least 1 MiB
        self.assertEqual(self.keeper("sequential", 2, 100 * mib, ra_kb=16384).tick_bytes(), 2 * 4 * 16 * mib)
        # a sequential sampler whose reads land at random (the dataset seeks itself): one stream's tick
        k = self.keeper("sequential", 4, 537 * mib)
        k.scatter.update(ticks=2, chunks=ms.SCATTERED * 10, chunks_in_order=10)
        self.assertEqual(k.tick_bytes(), 4 * 8 * mib)
        k.scatter.update(chunks=ms.SCATTERED * 10 - 1)
        self.assertEqual(k.tick_bytes(), 4 * 8 * 4 * mib)


class TickOverManyFiles(unittest.TestCase):
    """A dataset of many small files (ImageFolder's layout): a tick looks at
    the files that can hold pages (opened since the last tick, cached at it,
    held open or mapped), not at every file the run found. Over every file,
    a 3000-file ImageFolder's ticks and looks took the keeper 0.8 of a CPU
    of this 2-CPU VM beside the loader it timed (2026-12-01)."""

    FILES = 400

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="ticks.", dir=WORK)
        self.paths = []
        for i in range(self.FILES):
            p = os.path.join(self.dir, "img%04d.jpg" % i)
            with open(p, "wb") as f:
                f.write(random.randbytes(16384))
                f.flush()
                os.fsync(f.fileno())   # clean pages: the keeper can drop them
            self.paths.append(p)
        self.watch = ms._FileWatch()
        for p in self.paths:
            self.assertTrue(self.watch._consider(p))
        self.keeper = ms._CacheKeeper(self.watch, ms._Kernel(), os.getpid(), cold=True, pattern="random").begin()
        self.looked = []
        opener = self.keeper._open
        self.keeper._open = lambda path: (self.looked.append(path), opener(path))[1]

    def tearDown(self):
        self.watch.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def cached(self, path):
        """Pages of the file in the page cache (None: the kernel tells nothing)."""
        fd = os.open(path, os.O_RDONLY)
        try:
            pages = self.keeper.kernel.cached_pages(fd, 16384, 16384)
            return None if pages is None else sum(pages.values())
        finally:
            os.close(fd)

    def read(self, paths):
        self.watch.install()
        try:
            for p in paths:
                with open(p, "rb") as f:
                    f.read()
        finally:
            self.watch.uninstall()

    def test_a_tick_looks_at_the_files_read(self):
        self.assertEqual(self.watch.total_bytes, self.FILES * 16384)
        self.assertEqual(self.keeper.dataset_bytes(), self.FILES * 16384)
        read = self.paths[7:10]
        self.read(read)
        if self.cached(read[0]) is None:
            self.skipTest("the kernel tells nothing of the page cache here (no cachestat, no mincore)")
        self.assertTrue(all(self.cached(p) for p in read), "the files just read are in the page cache")
        self.looked.clear()
        self.keeper._tick()
        self.assertEqual(sorted(self.looked), read)              # not the other 397
        self.assertEqual(sorted(self.keeper.young), read)        # cached at this tick: evicted at the next
        self.read(read[:1] + self.paths[20:21])                  # one of them again, one more
        self.looked.clear()
        self.keeper._tick()
        self.assertEqual(sorted(self.looked), sorted(read + self.paths[20:21]))
        self.assertEqual(sum(self.cached(p) for p in read[1:]), 0, "a tick-old file still cached")
        self.looked.clear()
        # read[0], cached at both ticks, went at the second (its pages a tick old); the file first read since
        self.keeper._tick()
        self.assertEqual(self.looked, self.paths[20:21])
        self.assertEqual(sum(self.cached(p) for p in self.paths), 0)
        self.looked.clear()
        self.keeper._tick()                                      # nothing read, nothing cached: nothing to look at
        self.assertEqual(self.looked, [])

    def test_a_file_held_open_is_looked_at(self):
        with open(self.paths[3], "rb") as held:                  # opened before the hooks: found by a scan
            self.keeper._scan()
            self.assertIn(self.paths[3], self.watch.held)
            held.read()
            self.looked.clear()
            self.keeper._tick()
            self.assertEqual(self.looked, [self.paths[3]])


class Head(Dataset):
    """Reads a whole file with open().read() and keeps its first `keep`
    bytes: the loader reads more than it delivers, by its own read() calls."""

    def __init__(self, files, keep):
        self.files, self.keep = files, keep

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        with open(self.files[i], "rb") as f:
            data = f.read()
        return torch.frombuffer(bytearray(data[:self.keep]), dtype=torch.uint8)


class WholeFilesForAPart(unittest.TestCase):
    """Files of 128 KiB read whole for their first 16 KiB, by workers that a
    DataLoader without persistent_workers starts anew each (short) epoch: the
    amplification is the loader's own read() calls, not readahead. The runner
    counted only the live workers' read() bytes, lost those of the workers
    that ended in the window, and said "readahead beyond the bytes read()
    asked for"."""

    FILES, FILE_BYTES, KEEP, BATCH = 48, 128 << 10, 16 << 10, 8

    def test_its_own_reads_not_readahead(self):
        d = tempfile.mkdtemp(prefix="head.", dir=WORK)
        self.addCleanup(shutil.rmtree, d, True)
        files = []
        for i in range(self.FILES):
            p = os.path.join(d, "%03d.bin" % i)
            write_random(p, self.FILE_BYTES)
            files.append(p)
        loader = DataLoader(Head(files, self.KEEP), batch_size=self.BATCH, shuffle=True, num_workers=2)
        sim = LoaderOnly(loader, touch_step, seconds=SECONDS, warmup=WARMUP, out=os.path.join(d, "head.json"),
                         log=io.StringIO())
        doc = sim.run()
        self.assertFalse(sim.errors, sim.errors)
        mode = doc["simplify"]["modes"]["loader"]
        dl = doc["simplify"]["data_loading"]
        self.assertGreater(mode["epochs_started"], 2, mode)   # workers replaced within the window
        self.assertTrue(mode["workers_replaced"], mode)
        # every file read whole, cold: about 8x what a batch holds, from storage and by read()
        self.assertGreater(dl["storage_bytes_per_batch"], 4 * dl["delivered_bytes_per_batch"], dl)
        self.assertGreater(dl["read_call_bytes_per_batch"], 0.5 * dl["storage_bytes_per_batch"], dl)
        self.assertTrue(dl["amplified"], dl)
        self.assertTrue(dl["mechanism"].startswith("the loader reads more than it delivers"), dl)


class Decode(Dataset):
    """Reads a whole file with open().read(), then decodes it: `cpu` seconds
    of CPU (thread time, so a busy machine does not shorten it). Logs, per
    item, the CPU its __getitem__ took and its worker's CPU time so far
    ("pid index getitem-cpu process-cpu monotonic-end")."""

    def __init__(self, files, cpu, log):
        self.files, self.cpu, self.log = files, cpu, log

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        c0 = time.thread_time()
        with open(self.files[i], "rb") as f:
            data = f.read()
        while time.thread_time() - c0 < self.cpu:
            pass
        x = torch.frombuffer(bytearray(data), dtype=torch.uint8)
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        os.write(fd, b"%d %d %.9f %.9f %.9f\n" % (os.getpid(), i, time.thread_time() - c0, time.process_time(),
                                                  time.perf_counter()))
        os.close(fd)
        return x


class FreshlyWritten(unittest.TestCase):
    """A small dataset written just before the run (dirty pages, as after a
    preprocessing step or a download) and read whole within the keeper's
    first look for files: the first mode, full, read it from the page cache,
    "partly warm", 0 B from storage in its window (an ImageFolder of 2400
    JPEGs written 14 s before: 205 MB from the cache). posix_fadvise drops
    clean pages only, and the keeper ticked on the device's reads alone, so a
    dataset the page cache served was never evicted again. The runner now
    writes dirty pages back before a cold mode and ticks on the loop's read()
    bytes as well."""

    FILES, FILE_BYTES, BATCH = 64, 192 << 10, 8

    def test_dirty_dataset_read_cold(self):
        d = tempfile.mkdtemp(prefix="fresh.", dir=WORK)
        self.addCleanup(shutil.rmtree, d, True)
        files = []
        for i in range(self.FILES):
            p = os.path.join(d, "%03d.bin" % i)
            with open(p, "wb") as f:      # no fsync: its pages stay dirty for the kernel's 30 s
                f.write(random.randbytes(self.FILE_BYTES))
            files.append(p)
        loader = DataLoader(Decode(files, 0.001, os.path.join(d, "items.log")), batch_size=self.BATCH,
                            shuffle=True, num_workers=0)
        sim = ms.Simplifier(loader, touch_step, seconds=SECONDS, warmup=WARMUP, out=os.path.join(d, "s.json"),
                            log=io.StringIO())
        doc = sim.run()
        self.assertFalse(sim.errors, sim.errors)
        for mode in ("full", "loader"):
            m = doc["simplify"]["modes"][mode]
            self.assertEqual(m["cache"]["state"], "cold", (mode, m["cache"]))
            self.assertNotIn("page_cache_read_bytes", m["cache"], mode)
            # what read() returned came from storage
            self.assertGreaterEqual(m["read_bytes"], 0.8 * ms._read_call_bytes(m), mode)


class InMemoryDataset(unittest.TestCase):
    """A dataset on /dev/shm (tmpfs, "staged for speed"): found and said to stay in memory, not hidden as a device
    file ("the loader opened no file the runner could see"), and not evicted tick after tick (43 tries in one mode
    cost the keeper up to 5 ms of CPU a 14-ms step on this 2-CPU VM, beside the loop)."""

    FILES, FILE_BYTES, BATCH = 32, 256 << 10, 4

    @unittest.skipUnless(os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK), "no writable /dev/shm")
    def test_tmpfs_dataset_said_not_evicted(self):
        d = tempfile.mkdtemp(prefix="mlbench-simplify-test.", dir="/dev/shm")
        self.addCleanup(shutil.rmtree, d, True)
        files = []
        for i in range(self.FILES):
            p = os.path.join(d, "%03d.bin" % i)
            with open(p, "wb") as f:
                f.write(random.randbytes(self.FILE_BYTES))
            files.append(p)
        loader = DataLoader(Decode(files, 0.0005, os.path.join(WORK, "shm_items.log")), batch_size=self.BATCH,
                            shuffle=True, num_workers=0)
        sim = LoaderOnly(loader, touch_step, seconds=SECONDS, warmup=WARMUP, out=os.path.join(WORK, "shm.json"),
                         log=io.StringIO())
        doc = sim.run()
        self.assertFalse(sim.errors, sim.errors)
        c = doc["simplify"]["modes"]["loader"]["cache"]
        self.assertEqual(c["files"], self.FILES, c)
        self.assertEqual(c["evictions"], 0, c)
        self.assertEqual(c["state"], "partly warm", c)
        self.assertTrue(any("held in memory" in n and n.startswith(d) for n in c.get("notes", [])), c)
        text = "\n".join(ms.summary(doc))
        self.assertNotIn("opened no file the runner could see", text)

    def test_runtime_segments_are_no_data(self):
        # torch's shared tensors live on /dev/shm a moment before they are unlinked (a worker's batch,
        # /dev/shm/torch_<pid>_<n>_<n>: counted once as a 97th file of a 96-file dataset), as do Python's semaphores
        # and shared_memory blocks: the runtime's, never a dataset's; a dataset staged there still is one
        watch = ms._FileWatch()
        try:
            for name in ("torch_9909_177360603_779", "sem.mp-7aq2lmv4", "psm_0a1b2c3d", "nccl-3Xz9"):
                self.assertFalse(watch._looks_like_data("/dev/shm/" + name), name)
            self.assertTrue(watch._looks_like_data("/dev/shm/imagenet/train-000.tar"))
            self.assertTrue(watch._looks_like_data("/dev/shm/torchvision_cache/x.bin"))
        finally:
            watch.close()


class NanoGptMemmap(unittest.TestCase):
    """nanoGPT's loader (karpathy/nanoGPT train.py, get_batch): a token file written by the script itself (dirty
    pages), an np.memmap opened anew for every batch, 12 windows of 1024 tokens at random offsets, no DataLoader.
    Its first np.memmap is opened during mode full: the hook evicts the file as it is opened, but before the
    keeper's first look the loop had read most of it again through the map (237 MB of 268 cached at the first
    tick), nothing then read from storage to tick on, and the full loop ran warm (12 ms a step, 2.5 ms waiting for
    data) while its loader alone, cold, took 49 ms a batch (2026-11-30, this VM). The keeper now evicts every file
    it learns of; and a map the loop closed since the keeper's look (ENOMEM from process_madvise) no longer stops
    the eviction of the others nor reads as a failure."""

    MB, BLOCK, BATCH = 128, 1024, 12

    def test_full_loop_as_cold_as_the_loader(self):
        import numpy as np
        d = tempfile.mkdtemp(prefix="nanogpt.", dir=WORK)
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "train.bin")
        np.random.default_rng(0).integers(0, 50257, size=(self.MB << 20) // 2, dtype=np.uint16).tofile(path)

        def get_batch():
            data = np.memmap(path, dtype=np.uint16, mode="r")
            ix = torch.randint(len(data) - self.BLOCK, (self.BATCH,))
            x = torch.stack([torch.from_numpy(data[i:i + self.BLOCK].astype(np.int64)) for i in ix])
            y = torch.stack([torch.from_numpy(data[i + 1:i + 1 + self.BLOCK].astype(np.int64)) for i in ix])
            return x, y

        class Batches:
            def __iter__(self):
                while True:
                    yield get_batch()

        def step(batch):   # a model's step: the loop is not always reading
            touch_step(batch[0])
            time.sleep(0.01)

        sim = ms.Simplifier(Batches(), step, seconds=SECONDS, warmup=WARMUP, out=os.path.join(d, "s.json"),
                            log=io.StringIO())
        doc = sim.run()
        self.assertFalse(sim.errors, sim.errors)
        full, loader = doc["simplify"]["modes"]["full"], doc["simplify"]["modes"]["loader"]
        for name, m in (("full", full), ("loader", loader)):
            self.assertEqual(m["cache"]["state"], "cold", (name, m["cache"]))
            self.assertFalse([n for n in m["cache"].get("notes", []) if "failed" in n], (name, m["cache"]))
        # per batch, the full loop reads from storage about what the loader alone does (0.03x before)
        per_step = full["read_bytes"] / full["steps"]
        per_batch = loader["read_bytes"] / loader["batches"]
        self.assertGreaterEqual(per_step, 0.5 * per_batch, (full, loader))


class DecodeBound(unittest.TestCase):
    """Files read whole and decoded for 3 ms each: CPU-bound, said with its
    CPU time per item, and the same story in every message and the stage."""

    FILES, FILE_BYTES, CPU, BATCH = 96, 128 << 10, 0.003, 8

    @classmethod
    def setUpClass(cls):
        torch.set_num_threads(1)
        cls.dir = tempfile.mkdtemp(prefix="decode.", dir=WORK)
        cls.addClassCleanup(shutil.rmtree, cls.dir, True)
        cls.files = []
        for i in range(cls.FILES):
            p = os.path.join(cls.dir, "%03d.bin" % i)
            write_random(p, cls.FILE_BYTES)
            cls.files.append(p)

    def run_decode(self, workers=2, **kw):
        log = os.path.join(self.dir, "items.log")
        if os.path.exists(log):
            os.unlink(log)
        loader = DataLoader(Decode(self.files, self.CPU, log), batch_size=self.BATCH, shuffle=True,
                            num_workers=workers)
        said = io.StringIO()
        out = os.path.join(self.dir, "decode.json")
        sim = ms.Simplifier(loader, touch_step, seconds=SECONDS, warmup=WARMUP, out=out, log=said, **kw)
        doc = sim.run()
        self.assertFalse(sim.errors, sim.errors)
        lines = ms.summary(doc)
        with open(log) as f:
            items = [tuple(map(float, line.split())) for line in f]
        window = sim.measured["loader"]
        inside = [it for it in items if window[0] <= it[4] <= window[1]]
        getitem = statistics.mean(it[2] for it in inside)
        # each worker's CPU from its first item in the window to its last, per item: everything it does for
        # an item (its __getitem__, collation, the hand-over)
        spent = count = 0
        total = 0.0  # the workers' CPU in the window: a worker forked in it (each epoch forks them again) from 0
        for pid in {it[0] for it in inside}:
            mine = sorted((it[4], it[3]) for it in inside if it[0] == pid)
            before = [it[3] for it in sorted(items, key=lambda it: it[4]) if it[0] == pid and it[4] < window[0]]
            total += mine[-1][1] - (before[-1] if before else 0.0)
            if len(mine) > 1:
                spent += mine[-1][1] - mine[0][1]
                count += len(mine) - 1
        self.workers_cpu = total
        with open(out) as f:
            self.assertEqual(json.load(f), doc)
        return doc, said.getvalue(), lines, (getitem, spent / count, len(inside))

    def test_decode_bound_is_cpu_bound(self):
        doc, said, lines, (getitem, worker, made) = self.run_decode()
        # one story: the stage is CPU work (time only), and so say the messages, once, at the end
        st = {s["name"]: s for s in doc["stages"]}["data loading"]
        self.assertEqual((st["component"], st.get("role")), ("other", "data"), st)
        self.assertNotIn("bytes_per_step", st)
        self.assertNotIn("reads 0 B", said)
        dl = doc["simplify"]["data_loading"]
        print("\n  decode: runner %.3f ms of CPU per item in the workers; they logged %.3f ms per item, %.3f ms of "
              "it in __getitem__ (designed %.1f ms)" % (dl["cpu_seconds_per_item"] * 1e3, worker * 1e3,
                                                          getitem * 1e3, self.CPU * 1e3), file=sys.stderr)
        self.assertEqual(dl["bound"], "cpu", dl)
        # its CPU time in the window: what the workers' processes logged they had spent by their last item
        # there, less what they had before it (a worker forked in the window from 0: 96 files make an epoch of
        # 12 batches, and each epoch forks its workers again, whose start-up the items' own times leave out:
        # 7.08 ms a item against 4.46 ms between items), within 20% (/proc counts CPU in clock ticks; a worker's
        # CPU after its last item in the window is the runner's alone)
        # ... and it says why it is more than between items: the workers forked again each epoch
        self.assertGreater(dl["worker_forks_in_window"], 0, dl)
        self.assertEqual(dl["worker_forks_in_window"] % 2, 0, dl)
        self.assertTrue(any("worker starts: each epoch forks them again, persistent_workers=True keeps them" in line
                            for line in lines), lines)
        received = dl["batches"] * dl["items_per_batch"]
        runner_cpu = dl["cpu_seconds_per_item"] * received
        self.assertLessEqual(abs(runner_cpu - self.workers_cpu), 0.20 * self.workers_cpu,
                             "runner %.3f s of worker CPU (%.3f ms for each of %d items received), the workers "
                             "logged %.3f s (%.3f ms between items, %d made)" % (
                                 runner_cpu, dl["cpu_seconds_per_item"] * 1e3, received, self.workers_cpu,
                                 worker * 1e3, made))
        self.assertGreaterEqual(getitem, self.CPU)
        self.assertGreaterEqual(dl["cpu_seconds_per_item"], self.CPU)
        # cold: every file read from storage, whole (as many bytes as it delivers)
        self.assertGreaterEqual(dl["amplification"], 0.8, dl)
        self.assertFalse(dl["amplified"], dl)
        self.assertEqual(doc["simplify"]["dataset"]["files"], self.FILES)
        verdicts = [x for x in lines if x.startswith("data loading")]
        self.assertEqual(len(verdicts), 1, lines)
        self.assertIn("CPU-bound: %s of CPU per item" % ms._ms(dl["cpu_seconds_per_item"]), verdicts[0])
        # and what the stage is held against is what the stage file says: no disk ceiling for CPU work (a
        # torchvision ImageFolder loader read "held against the random disk ceiling at 35.6 kB blocks" beside a
        # stage holding its time only)
        self.assertFalse([x for x in lines if "disk ceiling" in x], lines)
        self.assertTrue([x for x in lines if "held against no ceiling: CPU work" in x], lines)
        self.assertNotIn("data loading", said)   # Simplifier.run prints no verdict of its own mid-run
        self.assertNotIn("B per batch", said)
        # the runner's cache keeper beside it: its CPU over the mode, a share of all the CPUs
        ld = doc["simplify"]["modes"]["loader"]
        self.assertAlmostEqual(dl["helper_cpu_share"],
                               ld["cache"]["keeper_cpu_seconds"] / (ld["seconds"] * os.cpu_count()), dl)
        # held from the CPUs it wanted, the loader hears how much of them the keeper took (known figures)
        held = copy.deepcopy(doc)
        held["simplify"]["data_loading"].update(cpu_busy_share=0.4, cpu_wanted_share=0.7,
                                                machine_cpu_busy_share=0.99, helper_cpu_share=0.12)
        verdict = [x for x in ms.summary(held) if x.startswith("data loading")][0]
        self.assertIn("waiting for one 30% more (the machine's CPUs 99% busy, 12% of them the runner's cache "
                      "keeper: other work held them", verdict)
        held["simplify"]["data_loading"]["helper_cpu_share"] = None   # a warm mode: no keeper ran
        verdict = [x for x in ms.summary(held) if x.startswith("data loading")][0]
        self.assertIn("(the machine's CPUs 99% busy: other work held them", verdict)

    def test_decode_in_the_main_process(self):
        # no workers: the loop's own process decodes, and its CPU per item is the decode's (the runner divided
        # the per-batch CPU by the batches a second time: "0.000 ms of CPU per item")
        doc, _, lines, (getitem, _, _) = self.run_decode(workers=0)
        dl = doc["simplify"]["data_loading"]
        self.assertEqual((dl["bound"], dl["workers"]), ("cpu", 0), dl)
        self.assertGreaterEqual(dl["cpu_seconds_per_item"], self.CPU, dl)
        self.assertLess(dl["cpu_seconds_per_item"], 1.5 * getitem, dl)
        # what it wanted of a CPU holds what it got, and its time on a CPU
        self.assertGreaterEqual(dl["cpu_wanted_share"], dl["cpu_busy_share"], dl)
        verdict = [x for x in lines if x.startswith("data loading")][0]
        self.assertIn("CPU-bound: %s of CPU per item" % ms._ms(dl["cpu_seconds_per_item"]), verdict)

    def test_warm_keeps_the_page_cache(self):
        for p in self.files:          # all in the page cache
            with open(p, "rb") as f:
                f.read()
        doc, said, lines, _ = self.run_decode(cache="warm")
        modes = doc["simplify"]["modes"]
        self.assertEqual(modes["full"]["cache"]["state"], "warm")
        self.assertEqual(modes["loader"]["cache"]["state"], "warm")
        self.assertNotIn("evictions", modes["loader"]["cache"])
        # all of it cached when the loader mode starts (the kernel may have reclaimed a few pages for others)
        self.assertGreaterEqual(modes["loader"]["cache"]["resident_bytes_at_start"],
                                0.95 * self.FILES * self.FILE_BYTES)
        ds = doc["simplify"]["dataset"]
        self.assertEqual(ds["bytes"], self.FILES * self.FILE_BYTES)
        self.assertTrue(ds["fits_in_memory"])
        self.assertIn("it fits in memory: these warm figures (--warm)", "\n".join(lines))
        dl = doc["simplify"]["data_loading"]
        self.assertLess(dl["storage_bytes_per_batch"], 0.1 * dl["delivered_bytes_per_batch"], dl)


class DiskExample(unittest.TestCase):
    """scripts/simplify_disk_example.py, the loop a GPU slot runs for issue 32 (gpu_session.sh simplify-disk), here
    on the CPU at 64 MiB: it runs through the command line, the runner sees its file and the 64 KiB records it
    delivers, they come from storage, and the folder it made is gone when it ends."""

    def run_example(self, **env):
        """The example at 64 MiB through the command line, in a folder of its own: (its stage file, the folder)."""
        src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        data = tempfile.mkdtemp(prefix="disk-example.", dir=WORK)
        self.addCleanup(shutil.rmtree, data, True)
        out = os.path.join(data, "disk.json")
        env = dict(os.environ, SIMPLIFY_DISK_MB="64", SIMPLIFY_DATA_DIR=data,
                   PYTHONPATH=os.path.join(src, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""), **env)
        r = subprocess.run([sys.executable, "-m", "mlbench.simplify",
                            os.path.join(src, "scripts", "simplify_disk_example.py"), "--out", out,
                            "--seconds", "0.6", "--warmup", "0.2"], env=env, capture_output=True, text=True,
                           timeout=600)
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        with open(out) as f:
            return json.load(f), data

    def test_the_example_runs_cold_and_cleans_up(self):
        doc, data = self.run_example()
        self.assertEqual(os.listdir(data), ["disk.json"], "the example's folder outlived it")
        self.assertTrue(doc["simplify"]["complete"])
        dl = doc["simplify"]["data_loading"]
        self.assertEqual(dl["delivered_bytes_per_batch"], 32 * 65536 + 32 * 8, dl)   # the records and the labels
        self.assertEqual(doc["simplify"]["dataset"]["bytes"], 64 << 20, doc["simplify"]["dataset"])
        # cold: the records come from storage (1.7x and 3.7x what it delivers in two runs on this VM, whose 8 MiB
        # readahead windows overlap in 64 MiB)
        self.assertGreaterEqual(dl["storage_bytes_per_batch"], 0.5 * dl["delivered_bytes_per_batch"], dl)

    def test_persistent_workers_read_storage_or_say_warm(self):
        """Persistent workers keep the file mapped from mode to mode: reads of pages already cached make no device
        read and no read() call, and the keeper, which ticked on those alone, never evicted again: the loader mode
        said cold with 0 B from storage (2026-11-29). Now every dataset mode that says cold read from storage, and
        the loader mode reads from storage whatever it says."""
        doc = self.run_example(SIMPLIFY_PERSISTENT="1")[0]["simplify"]
        loader = doc["modes"]["loader"]
        self.assertEqual(loader["workers"], 2, loader)
        # 0 B before; x8.6-x12 of what it delivers in three runs on this VM
        self.assertGreaterEqual(loader["read_bytes"], 0.5 * loader["bytes_in_batches"], loader)
        for name in ("full", "loader"):
            m = doc["modes"][name]
            c = m["cache"]
            delivered = m.get("bytes_in_batches") or doc["data_loading"]["delivered_bytes_per_batch"] * m["steps"]
            if c["state"] == "cold":
                self.assertGreaterEqual(m["read_bytes"], 0.01 * delivered, (name, c))
            else:
                self.assertEqual(c["state"], "partly warm", (name, c))
                self.assertTrue(c.get("notes"), (name, c))   # and says why
            self.assertGreaterEqual(c["resident_bytes_max"], c["resident_bytes_at_end"] or 0, (name, c))


class LoaderVerdict(unittest.TestCase):
    """_data_loading's verdict on made-up loader-mode figures: what bounds the
    loader from its CPU and device shares, and the pattern from where its reads
    landed (the sampler says nothing: a plain list)."""

    def verdict(self, cpu_s, dev_busy, workers=0, scatter=None, read_bytes=70 << 10, pattern=None):
        n, per = 100, 0.01
        ld = {"batches": n, "seconds_per_batch": per, "bytes_in_batches": n * (192 << 10), "read_bytes": n * read_bytes,
              "rchar": 0, "major_faults": n * 17, "items_in_batches": n * 12, "workers": workers,
              "worker_cpu_seconds": cpu_s * n * per * workers,   # each worker on a CPU cpu_s of the time
              "main_cpu_seconds": 0.0 if workers else cpu_s * n * per,
              "device": {"busy_share": dev_busy, "ours": 1.0, "read_bytes": n * read_bytes, "devices": ["vda"],
                         "mean_request_bytes": 4096, "read_ahead_kb": {"vda": 128}},
              "cache": {"state": "cold", "scatter": scatter or {"ticks": 0, "bytes": 0, "chunks": 0,
                                                               "chunks_in_order": 0}}}
        sim = types.SimpleNamespace(modes={"loader": ld}, dataset={"mapped_files": 1}, pattern=pattern,
                                    loader=[], host_batch=None)
        return ms._data_loading(sim)

    def test_bound(self):
        # one process faulting pages and copying them (nanoGPT with MADV_RANDOM): both half its time or more
        self.assertEqual(self.verdict(0.63, 0.54)["bound"], "cpu+storage")
        self.assertEqual(self.verdict(0.55, 0.95, workers=2)["bound"], "cpu+storage")
        self.assertEqual(self.verdict(0.30, 0.97)["bound"], "storage")
        self.assertEqual(self.verdict(0.90, 0.20)["bound"], "cpu")
        self.assertEqual(self.verdict(0.20, 0.20)["bound"], "waiting")
        text = "\n".join(ms.summary({"simplify": {"data_loading": self.verdict(0.63, 0.54), "modes": {}}}))
        self.assertIn("CPU- and storage-bound: its processes on a CPU 63% of the time (0.525 ms of CPU per item", text)
        self.assertIn("one process reads and computes in turns (num_workers=0)", text)

    def test_cpu_alone_shares_the_cpus(self):
        # two workers (14 ms of CPU a batch between them) and the main process (5 ms) on 2 CPUs: 19 ms over 2 CPUs,
        # 9.5 ms a batch at the least, not 7 (the main process given a CPU of its own beside the workers)
        n = 100
        ld = {"batches": n, "seconds_per_batch": 0.012, "bytes_in_batches": n * (1 << 20), "read_bytes": 0,
              "rchar": n * (1 << 20), "major_faults": 0, "items_in_batches": n * 32, "workers": 2,
              "worker_cpu_seconds": n * 0.014, "main_cpu_seconds": n * 0.005, "cache": {"state": "cold"}}
        sim = types.SimpleNamespace(modes={"loader": ld}, dataset={}, pattern="sequential", loader=[],
                                    host_batch=None)
        with unittest.mock.patch.object(ms, "_cpus_allowed", return_value=2):
            self.assertAlmostEqual(ms._data_loading(sim)["cpu_alone_seconds_per_batch"], 0.0095)
        with unittest.mock.patch.object(ms, "_cpus_allowed", return_value=8):   # the workers' 7 ms lead
            self.assertAlmostEqual(ms._data_loading(sim)["cpu_alone_seconds_per_batch"], 0.007)

    def test_pattern_from_where_reads_landed(self):
        dl = self.verdict(0.2, 0.9, scatter={"ticks": 4, "bytes": 35 << 20, "chunks": 180, "chunks_in_order": 19})
        self.assertEqual(dl["pattern"], "random")
        self.assertIn("lay in 180 chunks of its files where reads in order fill 19 (4 looks", dl["pattern_source"])
        # in order: as many chunks as the bytes fill, give or take the boundaries; too few to tell: no word
        for sc in ({"ticks": 48, "bytes": 1 << 30, "chunks": 386, "chunks_in_order": 530},
                   {"ticks": 1, "bytes": 1 << 20, "chunks": 2, "chunks_in_order": 1}, None):
            dl = self.verdict(0.2, 0.9, scatter=sc)
            self.assertEqual(dl["pattern"], "sequential", sc)
            self.assertNotIn("pattern_source", dl)
        # told by the user, the user's word stands
        dl = self.verdict(0.2, 0.9, scatter={"ticks": 4, "bytes": 35 << 20, "chunks": 180, "chunks_in_order": 19},
                          pattern="sequential")
        self.assertEqual(dl["pattern"], "sequential")


class FullLoopReadLess(unittest.TestCase):
    """_overlap on made-up modes: a full step faster than the loader alone
    because the loop read less from storage (the page cache served it more:
    pages two workers mapped stayed cached; or readahead's hits) is said to
    be so, not blamed on a busier machine."""

    def modes(self, full_state, full_read, step=0.019):
        return {"full": {"step_seconds": step, "steps": 150, "read_bytes": 150 * full_read,
                         "cache": {"state": full_state}},
                "loader": {"seconds_per_batch": 0.213, "batches": 16, "read_bytes": 16 * (294 << 20),
                           "cache": {"state": "cold"}},
                "step": {"seconds_per_step": 5e-5}}

    def words(self, m):
        ov = ms._overlap(types.SimpleNamespace(modes=m))
        return ov, "\n".join(ms.summary({"simplify": {"overlap": ov, "modes": {}}}))

    def test_rule(self):
        ov, text = self.words(self.modes("partly warm", 22 << 20))
        self.assertEqual(ov["full_loop_read_less"]["full_cache"], "partly warm")
        self.assertIn("it read less from storage (below)", text)
        # 22 MiB at the loader's 294 MiB per 213 ms: 15.9 ms
        self.assertIn("the full loop read 23.1 MB from storage a step (page cache partly warm), the loader alone "
                      "308 MB a batch (cold): at the loader's rate alone the loop's bytes take 15.939 ms: the pages "
                      "that stayed cached", text)
        self.assertNotIn("a busier machine", text)
        # both cold, a seventh fewer bytes at the same rate (the LMDB's second run: 248 against 289 MB)
        ov, text = self.words(self.modes("cold", 250 << 20, step=0.185))
        self.assertIn("readahead's hits vary", text)
        # the loop reading as much, or its bytes taking longer at the loader's rate than its step: the machine's
        # noise stays the suspect
        for m in (self.modes("partly warm", 280 << 20, step=0.185), self.modes("cold", 200 << 20, step=0.1)):
            ov, text = self.words(m)
            self.assertNotIn("full_loop_read_less", ov)
            self.assertIn("a busier machine", text)


class CpusShared(unittest.TestCase):
    """_cpu_floor on made-up modes: the CPU the full loop's processes took a
    step over the CPUs they may use bounds the step; with the loader's
    workers a share of it, data loading and the step share the CPUs, and
    the summary names the CPUs, not one part, the bottleneck. The figures are
    an ImageFolder of JPEGs decoded by two workers beside a small CNN on this
    2-CPU VM (2026-12-01)."""

    def setUp(self):
        self.cpus = {"cpus_allowed": 2, "host_ranks": 1}
        self._threads = ms._cpu_threads
        ms._cpu_threads = lambda s: dict(self.cpus)

    def tearDown(self):
        ms._cpu_threads = self._threads

    def modes(self, main, workers, nworkers=2):
        return {"full": {"steps": 48, "step_seconds": 0.1055, "batches_per_second": 9.48, "data_wait_per_step": 0.0147,
                         "transfer_per_step": 1.6e-4, "step_per_step": 0.0875, "main_cpu_seconds": main,
                         "worker_cpu_seconds": workers, "workers": nworkers, "main_runqueue_seconds": 2.3,
                         "main_thread_runqueue_seconds": 1.489,
                         "worker_runqueue_seconds": 4.293, "cache": {"state": "cold", "keeper_cpu_seconds": 1.32}},
                "loader": {"seconds_per_batch": 0.0615, "batches": 80},
                "step": {"seconds_per_step": 0.0468}}

    def run_modes(self, m):
        s = types.SimpleNamespace(modes=m)
        info = {"overlap": ms._overlap(s), "cpu": ms._cpu_floor(s), "modes": {k: m[k] for k in ("full", "step")}}
        return info["cpu"], "\n".join(ms.summary({"simplify": info}))

    def test_known_answers(self):
        cpu, text = self.run_modes(self.modes(3.06, 5.51))
        self.assertAlmostEqual(cpu["cpu_seconds_per_step"], 8.57 / 48)
        self.assertAlmostEqual(cpu["floor_seconds_per_step"], 8.57 / 48 / 2)          # 89.3 ms on two CPUs
        self.assertAlmostEqual(cpu["busy_share"], 8.57 / 48 / 2 / 0.1055)             # 0.846
        self.assertAlmostEqual(cpu["main_wait_seconds_per_step"], 1.489 / 48)   # the step's thread, not the sum
        self.assertTrue(cpu["bound"] and cpu["shared"])
        self.assertIn("cpus           the full loop took 178.542 ms of CPU a step (its 2 loader workers 114.792 ms, "
                      "its step's process 63.750 ms) on the 2 CPUs it may use: 89.271 ms a step at the least", text)
        self.assertIn("the thread running the step waited for a CPU 31.021 ms a step (runnable, not running): data "
                      "loading and the step share the CPUs (the step 87.500 ms in the loop, 46.800 ms alone)", text)
        self.assertIn("the runner's cache keeper took at most 27.500 ms of CPU a step", text)
        self.assertIn("bottleneck     the CPUs, which data loading and the step share (above); the slowest part by "
                      "itself: data loading, 61.500 ms per step", text)

    def test_not_bound_or_not_shared(self):
        # the step's process alone on two CPUs, one thread: half of them at most, the CPUs do not bound it
        cpu, text = self.run_modes(self.modes(4.9, 0.0, nworkers=0))
        self.assertFalse(cpu["bound"])
        self.assertNotIn("cpus  ", text)
        self.assertIn("bottleneck     data loading (the slowest part by itself", text)
        # every CPU busy with the step's threads, the workers 5% of it: bound, not shared
        cpu, text = self.run_modes(self.modes(9.5, 0.5))
        self.assertTrue(cpu["bound"])
        self.assertFalse(cpu["shared"])
        self.assertIn("the CPUs bound the loop", text)
        self.assertNotIn("share the CPUs", text)
        # the same busy CPUs beside a step no slower than its slowest part alone (a GPU step whose process spins in
        # its synchronize, workers that keep up): the CPUs are busy, they do not bound the loop
        m = self.modes(3.06, 5.51)
        m["step"]["seconds_per_step"] = 0.1
        cpu, text = self.run_modes(m)
        self.assertAlmostEqual(cpu["busy_share"], 8.57 / 48 / 2 / 0.1055)
        self.assertFalse(cpu["bound"] or cpu["shared"])
        self.assertNotIn("the CPUs bound the loop", text)
        self.assertIn("bottleneck     step (the slowest part by itself", text)
        # a full step slower than its parts one after another, the CPUs not bound by the loop's own processes
        # (another tenant took them): the part that takes most of the loop's step (what gap weighs), and the
        # contention beside it, not the slowest part alone as if it set the pace
        m = self.modes(4.9, 0.0, nworkers=0)
        m["full"]["step_seconds"] = 0.2
        cpu, text = self.run_modes(m)
        self.assertFalse(cpu["bound"])
        self.assertIn("bottleneck     step: 87.500 ms of the 200.000 ms step in the loop (what mlbench gap weighs; "
                      "waiting for data 14.700 ms, copy 0.160 ms); the loop is slower than its parts one after another alone "
                      "(108.300 ms, x1.85): they slow each other down in it", text)
        self.assertIn("the slowest part by itself: data loading, 61.500 ms per step", text)
        # the loader takes the loop's step, slower there than alone: data loading, as gap says of the same file
        m["full"]["data_wait_per_step"], m["full"]["step_per_step"] = 0.19, 0.005
        cpu, text = self.run_modes(m)
        self.assertIn("bottleneck     data loading: 190.000 ms of the 200.000 ms step in the loop (what mlbench gap "
                      "weighs; copy 0.160 ms, step 5.000 ms); the loop is slower than its parts", text)
        # two ranks on the two CPUs: one CPU each, the same rank's CPU twice the share
        self.cpus["host_ranks"] = 2
        cpu, _ = self.run_modes(self.modes(1.5, 2.5))
        self.assertEqual(cpu["cpus"], 1)
        self.assertAlmostEqual(cpu["busy_share"], 4.0 / 48 / 0.1055)
        self.assertTrue(cpu["shared"])


class WarmMapped(unittest.TestCase):
    """_warm_mapped's rule on made-up mode figures: a cold mode that delivered batches from mapped files while storage
    read under 1% of them is partly warm and says so; not when storage read its share, nor without mapped files."""

    def mode(self, read_bytes, mapped=1, state="cold"):
        return {"read_bytes": read_bytes, "io_counted": True,
                "cache": {"kept_cold": True, "mapped_files": mapped, "state": state, "tick_bytes": 32 << 20}}

    def test_rule(self):
        from mlbench.simplify import Simplifier as Simplify
        m = self.mode(1000)
        Simplify._warm_mapped(m, 10 << 20)
        self.assertEqual(m["cache"]["state"], "partly warm")
        self.assertIn("memory-mapped", m["cache"]["notes"][0])
        self.assertIn("33.6 MB", m["cache"]["notes"][0])     # the tick it did not reach
        for m, delivered in ((self.mode(200 << 10), 10 << 20),    # 2%: a decoder's expansion, not cache hits
                             (self.mode(0, mapped=0), 10 << 20),  # read() files: _warm_reads' rule, not this one
                             (self.mode(0), 0)):                  # nothing delivered
            Simplify._warm_mapped(m, delivered)
            self.assertEqual(m["cache"]["state"], "cold", m)
            self.assertNotIn("notes", m["cache"])
        m = self.mode(0)
        m["cache"]["kept_cold"] = False   # --warm: said warm already
        m["cache"]["state"] = "warm"
        Simplify._warm_mapped(m, 10 << 20)
        self.assertEqual(m["cache"]["state"], "warm")

    def test_delivered_counter_crosses_fork(self):
        from mlbench.simplify import _Delivered
        d = _Delivered()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:   # the keeper's side reads what the loop adds after the fork
            os.close(w)
            os.read(r, 1)
            os._exit(0 if d.value == 3 << 30 else 1)
        os.close(r)
        d.add(1 << 30)
        d.add(2 << 30)
        os.write(w, b"x")
        os.close(w)
        self.assertEqual(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), 0)


if __name__ == "__main__":
    unittest.main()
