"""Simplify: run the parts of your own training loop one at a time.

mlbench measures the hardware's ceilings (GEMM, conv, copies, disk) and reads
a real run (a stage file or a profiler trace). Between them sits the question
a real run asks: is a part slow by itself, or only inside the pipeline? This
runner answers it on your own loop. It takes the loop's parts and runs, each
for a bounded time after a warm-up:

  full          the whole loop: next(batch) -> transfer -> step
  loader        the loader alone: the step is stubbed, every batch is still
                touched (one byte of every tensor read), bytes read from
                storage by the process and its worker processes are counted
                (/proc/<pid>/io read_bytes: read(), memory-mapped page faults
                and the readahead around both; rchar for read(); major
                faults), with the requests the block device served
                (/proc/diskstats) and the CPU the loader spent or waited for
  step          the step alone on one real batch already on the device
  transfer      the host-to-device copy alone (GPU only)
  no_optimizer  the step with optimizer.step stubbed out
  no_collective the step with the collective stubbed out (when one is named);
                for a DDP model, steps with its all-reduce and inside
                no_sync() in alternating pairs
  collective    a DDP model's gradient buckets all-reduced alone

The modes that read the dataset (full, loader) run it cold, as a dataset
larger than memory is read: the files the loader and its workers open or map
are evicted from the page cache before the mode and kept out of it while it
runs (a helper process: posix_fadvise, MADV_PAGEOUT), unless cache="warm"
(--warm). The loader's bytes from storage against the bytes it delivers name
read amplification (readahead on random offsets) and its remedies, and what
bounds it (the device, the CPU, or neither) is said once, for the messages
and the stage file alike.

It writes a stage file (format "mlbench-stages", version 2,
docs/stage-format.md) whose stages carry both their time in the full loop and
their time alone (`isolated_seconds_per_step`); `mlbench gap --run FILE` puts
the hardware ceiling next to both. It prints the overlap: the full step
against the sum and the maximum of the isolated parts.

As a module:

    from mlbench.simplify import simplify
    report = simplify(loader, step, optimizer=opt, device="cuda",
                      out="simplify.json", seconds=10)

As a command, on a file that defines the parts (`loader`, `step`, and
optionally `optimizer`, `device`, `transfer`, `collective`, `flops_per_step`,
`pattern`) or a function `parts()` returning them as a dict:

    python3 -m mlbench.simplify myloop.py --out simplify.json --seconds 10
    mlbench gap --run simplify.json

Standard library, plus torch when it is importable (it is needed only for
tensors, the GPU path and FLOP counting). docs/simplify.md says what each mode
stubs and what it cannot see.
"""

import argparse
import copy
import dataclasses
import errno
import importlib.util
import json
import math
import os
import re
import signal
import stat
import sys
import tempfile
import time
import traceback
from collections.abc import Mapping, MutableMapping

from .stages import FORMAT, write_json_atomic

VERSION = 2
MODES = ("full", "loader", "step", "transfer", "no_optimizer", "no_collective", "collective")
DATASET_MODES = ("full", "loader")   # the modes that read the dataset (and start with it cold)
# The batches of the full loop's measured window by shape (_BatchMix): the modes that stub the loader run the step on
# them in the same mix, holding one batch of each of the first MIX_KEEP shapes.
MIX_KEEP = 4
# Fraction of the storage reads below which a loader counts as served from the
# page cache: its bytes are then held against host memory, not the disk.
PAGE_CACHE_SHARE = 0.5
# A loader that reads less than this share of the bytes it delivers is not
# bound by storage or memory: it generates or decodes its batches (CPU work),
# and its few incidental reads (a config, a label file) make no ceiling.
READ_SHARE_MIN = 0.01
# Bytes per batch below which reads are incidental whatever the batch holds
# (rchar counts the pipes a DataLoader hands indices and batches over, /proc
# files): a loader that reads this little reads nothing.
READ_FLOOR = 4096
# Storage bytes per delivered byte from which a loader is named read-amplified
# (readahead around random reads, whole files read for a part of each).
AMPLIFIED = 2.0
# Share of the loader's time its processes were on a CPU, or its device busy,
# from which it is named CPU-bound or storage-bound.
BUSY = 0.5
# The machine's CPUs this busy (all work, ours and others') make a loader
# that wanted half that share of a CPU CPU-bound (contended).
CONTENDED = 0.9
# The full loop's processes (the step's and its loader's workers) busy this share of the CPUs they may use, over
# its step, and the step more than OVERLAP_TOLERANCE above its slowest part alone: the CPUs bound the loop, however
# its parts overlap (_cpu_floor).
CPUS_BOUND = 0.75
OVERLAP_TOLERANCE = 0.1
# ... and its loader's workers at least this share of that CPU: the loader and the step share the CPUs.
CPUS_SHARED = 0.2
# Chunks the pages read between two of the cache keeper's ticks newly fill,
# per chunk they fill when read in order, from which reads that did not ask
# for readahead are random ones (_CacheKeeper._count_scatter).
SCATTERED = 3
# Share of the device's bytes the loader must have read for the device's mean
# request size to be taken as the loader's block size (others read the rest).
DEVICE_OURS = 0.8


class SimplifyError(RuntimeError):
    """An exception raised by the user's code, with the mode it happened in."""

    def __init__(self, mode, error, tb_text=""):
        self.mode = mode
        self.error = error  # "Type: message" of the user's exception
        self.tb_text = tb_text
        super().__init__("mode '%s': %s" % (mode, error))


def _error_words(exc):
    """The user's exception in one line, "Type: message": a message of many
    lines (a DataLoader worker's error carries the worker's whole traceback)
    gives its first line and its last, the worker's own error; the traceback
    is kept apart and printed once (it was printed four times)."""
    lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
    if len(lines) > 1:
        return "%s: %s ... %s" % (type(exc).__name__, lines[0], lines[-1])
    return "%s: %s" % (type(exc).__name__, lines[0] if lines else "")


class ModeTimeout(Exception):
    """A mode ran past its hard bound (one call of the user's code never returned)."""


# ---- batches ------------------------------------------------------------------------------


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _is_dataclass_instance(x):
    return dataclasses.is_dataclass(x) and not isinstance(x, type)


def _leaves(batch):
    """Tensors, arrays and byte strings inside a (nested) batch: in lists,
    tuples (named ones too), mappings (a dict, or HuggingFace's
    BatchEncoding, a UserDict) and dataclasses, as PyTorch's own pin_memory
    walks a batch."""
    if _is_tensor(batch) or hasattr(batch, "nbytes") or isinstance(batch, (bytes, bytearray, memoryview)):
        yield batch
    elif isinstance(batch, Mapping):
        for v in batch.values():
            yield from _leaves(v)
    elif isinstance(batch, (list, tuple)):
        for v in batch:
            yield from _leaves(v)
    elif _is_dataclass_instance(batch):
        for f in dataclasses.fields(batch):
            yield from _leaves(getattr(batch, f.name))


def _is_tensor(x):
    t = sys.modules.get("torch")  # a batch holds tensors only when torch is loaded
    return t is not None and isinstance(x, t.Tensor)


def _dense_parts(x):
    """The strided tensors that hold a tensor's data: itself, or a sparse
    tensor's indices and values. A sparse tensor's nelement() is its dense
    shape's (a Cora-sized adjacency: 7.3 M elements for 8128 stored), so its
    bytes and its first byte are read from these."""
    t = _torch()
    layout = x.layout
    if layout == t.strided:
        return [x]
    if layout == t.sparse_coo:
        return [x._indices(), x._values()]
    if layout in (t.sparse_csr, getattr(t, "sparse_bsr", None)):
        return [x.crow_indices(), x.col_indices(), x.values()]
    if layout in (getattr(t, "sparse_csc", None), getattr(t, "sparse_bsc", None)):
        return [x.ccol_indices(), x.row_indices(), x.values()]
    return [x]


def _nbytes(x):
    t = _torch()
    if t is not None and isinstance(x, t.Tensor):
        return sum(p.element_size() * p.nelement() for p in _dense_parts(x))
    if isinstance(x, (bytes, bytearray)):
        return len(x)
    return int(getattr(x, "nbytes", 0))


def batch_bytes(batch):
    """Bytes of all tensors/arrays/byte strings in a batch."""
    return sum(_nbytes(x) for x in _leaves(batch))


def touch(batch):
    """The no-op consumer: reads the first byte of every tensor, array and
    byte string in the batch (so a lazy loader does its work, and a GPU
    tensor is waited for). Returns (sum of those bytes, number of leaves)."""
    t = _torch()
    total = n = 0
    for x in _leaves(batch):
        n += 1
        if t is not None and isinstance(x, t.Tensor):
            for part in _dense_parts(x):
                if part.nelement():
                    total += int(part.reshape(-1)[:1].cpu().view(t.uint8)[0])
        elif isinstance(x, (bytes, bytearray, memoryview)):
            if len(x):
                total += bytes(x[:1])[0]
        else:  # numpy and other buffer objects
            flat = x.reshape(-1)[:1] if hasattr(x, "reshape") else x
            raw = flat.tobytes() if hasattr(flat, "tobytes") else b""
            total += raw[0] if raw else 0
    return total, n


def to_device(batch, device, non_blocking=False):
    """batch with every tensor moved to `device`, its containers kept as
    their types (lists, tuples, named tuples, mappings such as
    HuggingFace's BatchEncoding, dataclasses), as PyTorch's pin_memory keeps
    them; another object with a .to method (a torch_geometric Data) moves
    itself. A BatchEncoding was handed to the step unmoved (it has .to but
    no .device) and the step failed on a CUDA model."""
    def move(x):
        return to_device(x, device, non_blocking)
    if _is_tensor(batch):
        return batch.to(device, non_blocking=non_blocking)
    if isinstance(batch, Mapping):
        moved = {k: move(v) for k, v in batch.items()}
        try:
            if isinstance(batch, MutableMapping):   # a copy keeps its other attributes (a BatchEncoding's encodings)
                clone = copy.copy(batch)
                clone.update(moved)
                return clone
            return type(batch)(moved)
        except TypeError:  # as PyTorch's pin_memory: a mapping it cannot rebuild becomes a dict
            return moved
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):   # a named tuple
        return type(batch)(*[move(v) for v in batch])
    if isinstance(batch, (list, tuple)):
        moved = [move(v) for v in batch]
        return type(batch)(moved) if isinstance(batch, list) else tuple(moved)
    if _is_dataclass_instance(batch):
        return dataclasses.replace(batch, **{f.name: move(getattr(batch, f.name))
                                             for f in dataclasses.fields(batch) if f.init})
    if callable(getattr(batch, "to", None)):
        try:
            return batch.to(device, non_blocking=non_blocking)
        except TypeError:   # a .to without non_blocking
            return batch.to(device)
    return batch


def batch_signature(batch):
    """[(shape, dtype, device)] of a batch's tensors: what a stand-in must keep."""
    out = []
    for x in _leaves(batch):
        out.append((tuple(getattr(x, "shape", (len(x),))), str(getattr(x, "dtype", "bytes")),
                    str(getattr(x, "device", "cpu"))))
    return out


def _is_cuda(device):
    return device is not None and str(device).startswith("cuda")


def _pinned(batch):
    leaves = [x for x in _leaves(batch) if hasattr(x, "is_pinned")]
    return bool(leaves) and all(x.is_pinned() for x in leaves)


# ---- what the process and its workers read and spent ------------------------------------


def _read_io(pid):
    out = {}
    try:
        with open("/proc/%s/io" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                out[k.strip()] = int(v)
    except (OSError, ValueError):
        return None
    return out


def _proc_stat(pid):
    """(utime + stime in seconds, start time, major faults) of a process from
    /proc/<pid>/stat; the major faults include its reaped children's
    (cmajflt). (None, None, 0) if it is gone."""
    try:
        with open("/proc/%s/stat" % pid) as f:
            rest = f.read().rpartition(")")[2].split()
    except OSError:
        return None, None, 0
    # fields after the command: state(3) ... majflt(12) cmajflt(13) utime(14) stime(15) ... starttime(22)
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK"), rest[19], int(rest[9]) + int(rest[10])


def _thread_runqueue_seconds():
    """Seconds the calling thread (the one that runs the loop's step) waited, runnable, for a CPU."""
    import threading
    try:
        with open("/proc/self/task/%d/schedstat" % threading.get_native_id()) as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def _runqueue_seconds(pid):
    """Seconds the threads of a process waited, runnable, for a CPU (the
    second field of /proc/<pid>/task/<tid>/schedstat): CPU it wanted and did
    not get because other work held the CPUs. 0 where the kernel keeps no
    scheduler statistics."""
    total = 0
    try:
        tids = os.listdir("/proc/%s/task" % pid)
    except OSError:
        return 0.0
    for tid in tids:
        try:
            with open("/proc/%s/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e9


# Processes of the runner's own (the cache keeper): not the loader's, not counted.
_HIDDEN_PIDS = set()


def _descendants(pid):
    """Every live descendant pid (DataLoader workers are children of the
    process; their own children count too), read from
    /proc/<pid>/task/<tid>/children; the runner's own helper left out."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("/proc/%d/task/%s/children" % (p, tid)) as f:
                    kids = [int(k) for k in f.read().split() if int(k) not in _HIDDEN_PIDS]
            except (OSError, ValueError):
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


class ProcSnapshot:
    """I/O, CPU and major-fault counters of this process and of each live
    descendant.

    Linux adds a reaped child's I/O and CPU time to its parent's counters, so
    over a window: this process's delta (which holds workers that ended in the
    window) + each live descendant's delta - the start figures of descendants
    that ended in the window (the parent's delta holds their whole life).
    The runner's cache keeper runs in a process of its own, left out."""

    def __init__(self):
        self.pid = os.getpid()
        self.own_io = _read_io("self") or {}
        times = os.times()
        self.own_cpu = times.user + times.system
        self.reaped_cpu = times.children_user + times.children_system
        self.own_majflt = _proc_stat("self")[2]
        self.own_wait = _runqueue_seconds(self.pid)
        self.thread_wait = _thread_runqueue_seconds()
        self.kids = {}
        for p in _descendants(self.pid):
            cpu, start, majflt = _proc_stat(p)
            io = _read_io(p)
            if cpu is not None and io is not None:
                self.kids[(p, start)] = (io, cpu, majflt, _runqueue_seconds(p))

    @property
    def available(self):
        return bool(self.own_io)


def proc_delta(a, b):
    """What was read and spent between snapshots a and b: read_bytes (bytes
    the block layer read for these processes: read(), page faults of
    memory-mapped files and the readahead around both), rchar (bytes read()
    returned, page cache included; memory-mapped reads are not in it; pipes
    too: worker_rchar is the live workers' part, without the batches the
    loop reads from them),
    major_faults (page faults that waited for storage), main-process and
    worker CPU seconds, and the seconds they waited runnable for a CPU other
    work held (*_runqueue_seconds)."""
    out = {"read_bytes": 0, "rchar": 0, "main_cpu_seconds": b.own_cpu - a.own_cpu,
           "worker_cpu_seconds": b.reaped_cpu - a.reaped_cpu, "workers": len(b.kids),
           "major_faults": b.own_majflt - a.own_majflt, "main_runqueue_seconds": b.own_wait - a.own_wait,
           "main_thread_runqueue_seconds": b.thread_wait - a.thread_wait,
           "worker_runqueue_seconds": 0.0, "worker_rchar": 0}
    for k in ("read_bytes", "rchar"):
        out[k] = b.own_io.get(k, 0) - a.own_io.get(k, 0)
    for key, (io, cpu, majflt, wait) in b.kids.items():
        io0, cpu0, majflt0, wait0 = a.kids.get(key, ({}, 0.0, 0, 0.0))
        for k in ("read_bytes", "rchar"):
            out[k] += io.get(k, 0) - io0.get(k, 0)
        out["worker_rchar"] += io.get("rchar", 0) - io0.get("rchar", 0)
        out["worker_cpu_seconds"] += cpu - cpu0
        out["major_faults"] += majflt - majflt0
        out["worker_runqueue_seconds"] += wait - wait0
    # workers that ended in the window (a DataLoader without persistent_workers starts new ones each epoch):
    # their reads went to the parent's counters, mixed with the batches it read from them, and worker_rchar
    # misses them
    out["workers_replaced"] = any(key not in b.kids for key in a.kids)
    for key, (io0, cpu0, majflt0, _) in a.kids.items():
        if key not in b.kids:  # ended in the window: its whole life is in the parent's delta
            for k in ("read_bytes", "rchar"):
                out[k] -= io0.get(k, 0)
            out["worker_cpu_seconds"] -= cpu0
            out["major_faults"] -= majflt0
    for k in ("read_bytes", "rchar", "worker_cpu_seconds", "main_cpu_seconds", "major_faults",
              "main_runqueue_seconds", "main_thread_runqueue_seconds", "worker_runqueue_seconds", "worker_rchar"):
        out[k] = max(out[k], 0)
    return out


def _read_call_bytes(m):
    """Bytes read() returned where the dataset is read over a mode's window: in
    the workers (the loop's own rchar holds the batches they hand over through
    a pipe), or in the loop without workers. When workers ended in the window
    (a new set each epoch) their reads are only in the loop's counters: the
    whole rchar then, an upper bound by the hand-over's bytes (small for
    tensors, which torch passes through shared memory)."""
    if m.get("workers") and not m.get("workers_replaced"):
        return m.get("worker_rchar", m["rchar"])
    return m["rchar"]


# ---- the dataset's files, the page cache and the device ----------------------------------
#
# A real run on a dataset larger than memory reads it from storage in every
# epoch. Measured on a machine whose page cache holds the dataset (it was just
# written, or the previous mode read it), the same loop measures memory
# instead. So the runner finds the files the loader reads, evicts them before
# every mode that reads the dataset and keeps them cold while the mode runs,
# and counts what the block device under them served.

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
MADV_PAGEOUT = 21  # Linux 5.4: reclaim these pages (clean file pages are dropped; nothing is lost)
# pidfd_open, process_madvise (5.10), cachestat (6.5): the same numbers on x86_64 and arm64
_NR_PIDFD_OPEN, _NR_PROCESS_MADVISE, _NR_CACHESTAT = 434, 440, 451
# Opened or mapped by the loader but not its dataset: devices, /proc, the system's files.
_SYSTEM_PREFIXES = ("/proc/", "/sys/", "/dev/", "/run/", "/usr/", "/lib/", "/lib32/", "/lib64/", "/bin/", "/sbin/",
                    "/etc/", "/snap/")
_CODE_SUFFIXES = (".py", ".pyc", ".so", ".pth", ".typed")
# Segments the runtime itself puts on /dev/shm: torch's shared tensors (a worker's batch, "torch_<pid>_<n>_<n>",
# mapped a moment before it is unlinked: one was counted as a 97th file of a 96-file dataset in a CI run), Python's
# semaphores (sem.mp-...) and shared_memory blocks (psm_...), NCCL's and OpenMP's. Not a dataset's.
_RUNTIME_SHM = ("torch_", "sem.", "psm_", "nccl-", "__KMP_REGISTERED_LIB")


class _Kernel:
    """The system calls the cold cache needs, through ctypes (standard
    library): cachestat (pages of a range in the page cache; mincore on a
    mapping of the file where the kernel has no cachestat), madvise and
    process_madvise (MADV_PAGEOUT: the pages the loader has mapped)."""

    def __init__(self):
        self.libc = None
        self.cachestat = None   # None: not tried yet; then True/False
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.syscall.restype = ctypes.c_long
            libc.mmap.restype = ctypes.c_void_p
            libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                  ctypes.c_long]
            libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
            libc.mincore.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p]
            libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

            class Range(ctypes.Structure):
                _fields_ = [("off", ctypes.c_uint64), ("len", ctypes.c_uint64)]

            class Stat(ctypes.Structure):
                _fields_ = [(n, ctypes.c_uint64) for n in ("nr_cache", "nr_dirty", "nr_writeback", "nr_evicted",
                                                           "nr_recently_evicted")]

            class IoVec(ctypes.Structure):
                _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]

            self.ct, self.libc, self.Range, self.Stat, self.IoVec = ctypes, libc, Range, Stat, IoVec
        except (ImportError, OSError, AttributeError):
            self.libc = None

    @property
    def available(self):
        return self.libc is not None

    def cached_pages(self, fd, size, chunk, which=None):
        """Pages of the file in the page cache, per chunk of `chunk` bytes
        (a dict chunk index -> pages; only the chunks in `which` if given),
        or None where the kernel tells nothing."""
        n = max(1, -(-size // chunk))
        which = range(n) if which is None else which
        if self.libc is None or size <= 0:
            return None
        if self.cachestat is not False:
            out = self._cachestat(fd, size, chunk, which)
            if out is not None:
                return out
        return self._mincore(fd, size, chunk, which)

    def _cachestat(self, fd, size, chunk, which):
        """Per chunk; a file with no page cached costs one call. (A call costs
        a walk of the range's cached pages: a chunk at a time is cheaper than
        bisecting, whose wide ranges walk the same pages again.)"""
        ct, rng, st = self.ct, self.Range(), self.Stat()
        out = {}

        def pages(lo, hi):
            rng.off, rng.len = lo * chunk, min(hi * chunk, size) - lo * chunk
            if self.libc.syscall(ct.c_long(_NR_CACHESTAT), ct.c_long(fd), ct.byref(rng), ct.byref(st),
                                 ct.c_long(0)) < 0:
                raise OSError(ct.get_errno(), "cachestat")
            return int(st.nr_cache)

        try:
            whole = isinstance(which, range) and which.step == 1 and len(which) > 1
            if not (whole and pages(which.start, which.stop) == 0):
                for i in which:
                    n = pages(i, i + 1)
                    if n:
                        out[i] = n
        except OSError:
            if self.cachestat is None:
                self.cachestat = False   # an older kernel: mincore from now on
            return None
        self.cachestat = True
        return out

    def _mincore(self, fd, size, chunk, which):
        import mmap as _mmap
        ct, out, window = self.ct, {}, 1 << 30
        wanted = sorted(which)
        pos = 0
        for lo in range(0, size, window):
            hi = min(size, lo + window)
            if pos >= len(wanted):
                break
            if wanted[pos] * chunk >= hi:
                continue
            addr = self.libc.mmap(None, hi - lo, _mmap.PROT_READ, _mmap.MAP_SHARED, fd, lo)
            if addr in (None, ct.c_void_p(-1).value):
                return None
            try:
                vec = ct.create_string_buffer((hi - lo + PAGE - 1) // PAGE)
                if self.libc.mincore(ct.c_void_p(addr), hi - lo, vec) != 0:
                    return None
                raw = vec.raw
            finally:
                self.libc.munmap(ct.c_void_p(addr), hi - lo)
            while pos < len(wanted) and wanted[pos] * chunk < hi:
                i = wanted[pos]
                a = (i * chunk - lo) // PAGE
                b = (min(size, (i + 1) * chunk) - lo + PAGE - 1) // PAGE
                seg = raw[max(a, 0):b]
                out[i] = len(seg) - seg.count(0)
                pos += 1
        return out

    def pageout(self, pid, ranges):
        """MADV_PAGEOUT on the address ranges [(address, bytes)] of process
        pid: 0 when done, else the errno (EPERM: another process's pages need
        CAP_SYS_NICE; ENOSYS/EINVAL: a kernel without it; ESRCH: it ended)."""
        if self.libc is None or not ranges:
            return 0
        ct = self.ct
        if pid == os.getpid():
            for addr, length in ranges:
                if self.libc.madvise(ct.c_void_p(addr), ct.c_size_t(length), MADV_PAGEOUT) != 0:
                    return ct.get_errno()
            return 0
        pidfd = self.libc.syscall(ct.c_long(_NR_PIDFD_OPEN), ct.c_long(pid), ct.c_long(0))
        if pidfd < 0:
            return ct.get_errno()
        def advise(part):
            iov = (self.IoVec * len(part))(*[self.IoVec(a, n) for a, n in part])
            if self.libc.syscall(ct.c_long(_NR_PROCESS_MADVISE), ct.c_long(pidfd), iov, ct.c_long(len(part)),
                                 ct.c_long(MADV_PAGEOUT), ct.c_long(0)) < 0:
                return ct.get_errno()
            return 0

        try:
            for k in range(0, len(ranges), 512):
                part = ranges[k:k + 512]
                err = advise(part)
                if err == errno.ENOMEM:
                    # a range no longer mapped (a map the loop closed since the keeper's look: nanoGPT opens an
                    # np.memmap per batch); the call stops there, so the others one by one, those skipped
                    err = next((e for e in map(advise, ([r] for r in part)) if e and e != errno.ENOMEM), 0)
                if err:
                    return err
            return 0
        finally:
            os.close(pidfd)


def _block_device(path):
    """{"name": the device in /proc/diskstats, "disk": the disk whose queue
    it uses (the partition's parent), "read_ahead_kb"} of the block device a
    file lives on, or None (tmpfs, overlay, NFS, FUSE: no block device)."""
    try:
        dev = os.stat(path).st_dev
        real = os.path.realpath("/sys/dev/block/%d:%d" % (os.major(dev), os.minor(dev)))
    except (OSError, ValueError):
        return None
    if not os.path.isdir(real):
        return None
    name = os.path.basename(real)
    disk = os.path.basename(os.path.dirname(real)) if os.path.exists(os.path.join(real, "partition")) else name
    out = {"name": name, "disk": disk}
    try:
        with open("/sys/block/%s/queue/read_ahead_kb" % disk) as f:
            out["read_ahead_kb"] = int(f.read())
    except (OSError, ValueError):
        pass
    return out


def _memory_mounts():
    """The mount points of file systems held in memory (tmpfs, ramfs), each
    ending in "/": their files' pages are memory, not a cache of storage."""
    out = []
    try:
        with open("/proc/self/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[2] in ("tmpfs", "ramfs"):
                    point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), parts[1])
                    out.append(point.rstrip("/") + "/")
    except OSError:
        pass
    return tuple(out)


def _diskstats(names):
    """name -> (reads completed, sectors read, ms spent reading, ms busy) from
    /proc/diskstats, for the devices named; and the bytes of the file read."""
    out, nbytes = {}, 0
    try:
        with open("/proc/diskstats", "rb") as f:
            raw = f.read()
    except OSError:
        return out, 0
    nbytes = len(raw)
    for line in raw.decode(errors="replace").splitlines():
        f = line.split()
        if len(f) >= 13 and f[2] in names:
            out[f[2]] = (int(f[3]), int(f[5]), int(f[6]), int(f[12]))
    return out, nbytes


def _device_delta(devices, a, b, seconds, tree_bytes):
    """What the dataset's block devices served over a window: read requests,
    bytes, their mean size (sectors x 512 / requests), the share of the window
    the device was busy (io_ticks), and the share of its bytes that this
    process tree read (below 1 the device served others too, and the mean
    request size is theirs as much as ours)."""
    if not devices:
        return None
    reads = sectors = ms_read = busy = 0
    for d in devices:
        if d["name"] in a and d["name"] in b:
            r0, s0, m0, t0 = a[d["name"]]
            r1, s1, m1, t1 = b[d["name"]]
            reads, sectors, ms_read, busy = reads + r1 - r0, sectors + s1 - s0, ms_read + m1 - m0, busy + t1 - t0
    nbytes = sectors * 512
    out = {"devices": [d["name"] for d in devices], "read_requests": reads, "read_bytes": nbytes,
           "mean_request_bytes": nbytes / reads if reads else None,
           "busy_share": min(busy / 1e3 / seconds, 1.0) if seconds > 0 else None,
           "read_ahead_kb": {d["disk"]: d["read_ahead_kb"] for d in devices if "read_ahead_kb" in d},
           "ours": min(tree_bytes / nbytes, 1.0) if nbytes else None,
           "how": "/proc/diskstats over the measured window: sectors read x 512 / read requests completed; busy: "
                  "the device's io_ticks / the window"}
    return out


def _machine_cpu():
    """(busy, total) jiffies of all the machine's CPUs from /proc/stat (idle
    and iowait are not busy)."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return sum(v) - v[3] - v[4], sum(v)


def _machine_busy(a, b):
    if a is None or b is None or b[1] <= a[1]:
        return None
    return (b[0] - a[0]) / (b[1] - a[1])


def _mem_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


# /proc/<pid>/maps: "start-end perms offset dev inode   path"; the regions that are not executable and map a file by
# its absolute path
_MAPS_LINE = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) [r-][w-]-[ps] ([0-9a-f]+) [^ ]+ [0-9]+ +(/[^\n]*)", re.MULTILINE)


class _FileWatch:
    """The files the loader reads: the regular files its process and its
    worker processes open for reading (builtins.open, io.open and os.open,
    recorded as they are called; workers, forked after the hooks went in,
    append what they open to a log file) or hold open or mapped
    (/proc/<pid>/fd and /proc/<pid>/maps, scanned). Files of the interpreter
    and its packages, system files, code and the runner's own files are left
    out. A file opened and closed again by C code (a decoder's own fopen)
    is not seen: its reads still count, but it is not evicted."""

    def __init__(self, own=()):
        self.pid = os.getpid()
        self.files = {}          # path -> bytes
        self.total_bytes = 0     # their sum and the largest (the keeper asks at every poll: kept, not summed)
        self.max_bytes = 0
        self.found = []          # the dataset's files in the order found (the keeper walks only the new ones)
        self.st_devs = {}        # st_dev -> the first file found on it (the block device is looked up once)
        self.touched = set()     # files of the dataset the hooks logged as opened since the keeper last took them
        self.held = set()        # ... held open or mapped by a process of the loop at the last scan
        self.unhooked = set()    # ... first found held open or mapped, not by a hook: C code may read them again
        self.maps = {}           # pid -> [(path, start, end, file offset)]
        self.readers = 0         # processes with a file of the dataset open or mapped at the last scan
        self.read_bytes = 0      # what the watch itself read (/proc files, the log): the helper's, not the loop's
        self.dir = tempfile.mkdtemp(prefix="mlbench-simplify.")
        self.log = os.path.join(self.dir, "opened")
        self._log_fd = self._log_pid = None
        self._log_pos = 0
        self._seen = set()
        self.evict_on_open = False   # set for the cold modes (_opened)
        self.ever_mapped = set()
        self._regions = {}       # pid -> (its /proc/<pid>/map_files listing, the regions its maps gave then)
        self._rejected = set()
        self._orig = None
        skip = set(_SYSTEM_PREFIXES)
        for p in [sys.prefix, sys.base_prefix, sys.exec_prefix] + [p for p in sys.path if p and (
                "site-packages" in p or "dist-packages" in p)]:
            if p and os.path.isabs(p) and p != "/":
                skip.add(os.path.join(os.path.realpath(p), ""))
        skip.add(os.path.join(self.dir, ""))
        self._skip = tuple(sorted(skip))
        self._own = {os.path.abspath(p) for p in own if p}

    # -- the hooks: what the process and its workers open --
    def install(self):
        import builtins
        import io
        if self._orig is not None:
            return
        o_open, o_io_open, o_os_open = builtins.open, io.open, os.open
        watch = self

        def open(file, *args, **kwargs):  # noqa: A001  (stands in for the builtin)
            f = o_open(file, *args, **kwargs)
            mode = args[0] if args else kwargs.get("mode", "r")
            if isinstance(mode, str) and not any(c in mode for c in "wax+"):
                watch._opened(file, f)
            return f

        def os_open(path, flags, *args, **kwargs):
            fd = o_os_open(path, flags, *args, **kwargs)
            if flags & os.O_ACCMODE == os.O_RDONLY and kwargs.get("dir_fd") is None:
                watch._opened(path, fd)
            return fd

        open.__doc__, os_open.__doc__ = o_open.__doc__, o_os_open.__doc__
        self._orig = (o_open, o_io_open, o_os_open)
        self._hooks = (open, os_open)
        builtins.open = io.open = open
        os.open = os_open

    def uninstall(self):
        import builtins
        import io
        if self._orig is None:
            return
        o_open, o_io_open, o_os_open = self._orig
        if builtins.open is self._hooks[0]:
            builtins.open = o_open
        if io.open is self._hooks[0]:
            io.open = o_io_open
        if os.open is self._hooks[1]:
            os.open = o_os_open
        self._orig = None

    def close(self):
        self.uninstall()
        if self._log_fd is not None and self._log_pid == os.getpid():
            os.close(self._log_fd)
            self._log_fd = None
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)

    def _opened(self, file, handle):
        """A file opened for reading (handle: its file object or descriptor).
        The first time the run sees it, it is evicted right there, before the
        caller reads it, when evict_on_open is set (the cold modes): a dataset
        of many files is opened a few files at a time, and each file's first
        read must be cold as well."""
        try:
            if isinstance(file, int):
                return
            p = os.fspath(file)
            if isinstance(p, bytes):
                p = os.fsdecode(p)
            p = os.path.abspath(p)
            if "\n" in p:
                return
            first = p not in self._seen
            # every open of a file that may be data is logged, not only the first: the keeper's ticks look only
            # at the files opened since the last one (a dataset of many files: ImageFolder's thousands of JPEGs)
            if not first and not self._looks_like_data(p):
                return
            self._seen.add(p)
            if first and self.evict_on_open and self._looks_like_data(p):
                try:
                    fd = handle if isinstance(handle, int) else handle.fileno()
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                except (OSError, AttributeError, ValueError):
                    pass
            # every process (the loop's, its workers) logs it: the keeper process reads the log
            if self._log_pid != os.getpid():
                raw_open = self._orig[2] if self._orig else os.open
                self._log_fd = raw_open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
                self._log_pid = os.getpid()
            os.write(self._log_fd, os.fsencode(p) + b"\n")
        except Exception:  # the watch never breaks the user's open()
            pass

    # -- what they hold open or mapped --
    def _read(self, path):
        raw_open = self._orig[0] if self._orig else open
        with raw_open(path, "rb") as f:
            data = f.read()
        self.read_bytes += len(data)
        return data

    def _looks_like_data(self, path):
        """Not a system file, code, or the runner's own (by its name alone). A
        dataset on /dev/shm (tmpfs) is one: it is counted and said to stay in
        memory, not hidden as a device file; the runtime's own segments there
        (_RUNTIME_SHM) are not."""
        shm = path.startswith("/dev/shm/")
        return path.startswith("/") and (not path.startswith(self._skip) or shm) and \
            not (shm and os.path.basename(path).startswith(_RUNTIME_SHM)) and path not in self._own and \
            not path.endswith(_CODE_SUFFIXES) and ".so." not in os.path.basename(path) and \
            "/__pycache__/" not in path and not os.path.basename(path).startswith(".mlbench-simplify.")

    def _consider(self, path):
        """Whether path is a file of the dataset (and note it)."""
        if path in self.files:
            return True
        if path in self._rejected:
            return False
        ok = self._looks_like_data(path)
        if ok:
            try:
                st = os.stat(path)
                ok = stat.S_ISREG(st.st_mode) and st.st_size > 0
            except OSError:
                ok = False
        if ok:
            self.files[path] = st.st_size
            self.total_bytes += st.st_size
            self.max_bytes = max(self.max_bytes, st.st_size)
            self.found.append(path)
            self.st_devs.setdefault(st.st_dev, path)
        else:
            self._rejected.add(path)
        return ok

    def scan(self, pids):
        """The files opened since the last scan, and those the processes hold
        open (read-only) or mapped (not executable) now. Returns the files
        first found held open or mapped (opened where the hooks do not see:
        before the run, or by C code), which the hooks did not evict."""
        fresh = []
        self.read_log()
        maps, readers, held = {}, set(), set()
        for pid in pids:
            fd_dir = "/proc/%d/fd" % pid
            try:
                fds = os.listdir(fd_dir)
            except OSError:
                continue
            for name in fds:
                try:
                    target = os.readlink(os.path.join(fd_dir, name))
                    if not target.startswith("/") or target.endswith(" (deleted)"):
                        continue
                    if target in self.files:
                        readers.add(pid)
                        held.add(target)
                    if target not in self.files and target not in self._rejected:
                        info = self._read("/proc/%d/fdinfo/%s" % (pid, name)).decode()
                        flags = int(info.split("flags:")[1].split()[0], 8)
                        if flags & os.O_ACCMODE != os.O_RDONLY:
                            continue
                        if self._consider(target) and target not in self._seen:
                            fresh.append(target)
                except (OSError, ValueError, IndexError):
                    continue
            listing = self._map_files(pid)   # before the maps: a change after it shows at the next look
            regions = self._unchanged_regions(pid, listing)
            if regions is None:
                try:
                    text = self._read("/proc/%d/maps" % pid).decode(errors="replace")
                except OSError:
                    continue
                # a torch process maps 1700 regions, nearly all of them its libraries: each path is weighed once
                regions = _MAPS_LINE.findall(text)
                for path in {r[3] for r in regions}:
                    if path not in self.files and not path.endswith(" (deleted)") and self._consider(path):
                        if path not in self._seen:
                            fresh.append(path)
                self._regions[pid] = (listing, regions)
            for lo, hi, off, path in regions:
                if path in self.files:
                    readers.add(pid)
                    held.add(path)
                    maps.setdefault(pid, []).append((path, int(lo, 16), int(hi, 16), int(off, 16)))
        for pid in set(self._regions) - set(pids):   # processes gone
            del self._regions[pid]
        self.maps, self.readers, self.held = maps, len(readers), held
        self.ever_mapped.update(m[0] for entries in maps.values() for m in entries)
        self._seen.update(fresh)
        self.unhooked.update(fresh)
        return fresh

    # /proc/<pid>/maps of a torch process is 200 kB of text, 1700 regions: reading and parsing it at every look
    # took an ImageFolder loop's keeper 2.5 s of CPU in 25 s, 2026-12-01. Its file-backed regions are listed,
    # by address range alone, in /proc/<pid>/map_files at half the cost of the text and none of the parsing:
    # while that listing and the files behind the dataset's own regions stay the same, so do the regions.
    def _map_files(self, pid):
        try:
            return tuple(os.listdir("/proc/%d/map_files" % pid))
        except OSError:   # not permitted here (before Linux 4.3, or a restricted /proc): maps every time
            return None

    def _unchanged_regions(self, pid, listing):
        """The regions of pid's last maps, when its file-backed mappings
        (listing, now) are those of then; None when they may have changed."""
        kept = self._regions.get(pid)
        if listing is None or kept is None or kept[0] != listing:
            return None
        for lo, hi, _, path in kept[1]:   # a dataset's file unmapped and another mapped at the same addresses
            if path in self.files:
                try:
                    if os.readlink("/proc/%d/map_files/%x-%x" % (pid, int(lo, 16), int(hi, 16))) != path:
                        return None
                except OSError:
                    return None
        return kept[1]

    def read_log(self):
        """The files the hooks logged since the last read; returns those of
        the dataset among them that were not known."""
        learnt = []
        try:
            if os.stat(self.log).st_size <= self._log_pos:
                return learnt
            fd = (self._orig[2] if self._orig else os.open)(self.log, os.O_RDONLY | os.O_CLOEXEC)
            try:
                data = os.pread(fd, 1 << 24, self._log_pos)
            finally:
                os.close(fd)
        except OSError:
            return learnt
        self.read_bytes += len(data)
        end = data.rfind(b"\n") + 1
        self._log_pos += end
        for line in data[:end].splitlines():
            path = os.fsdecode(line)
            self._seen.add(path)   # workers forked from now on know it
            if path in self.files:
                self.touched.add(path)
            elif self._consider(path):
                self.touched.add(path)
                learnt.append(path)
        return learnt

    def take_touched(self):
        """The dataset's files opened since the last call (the log read up to now)."""
        self.read_log()
        out, self.touched = self.touched, set()
        return out

    def mapped(self):
        """The dataset's files a process of the loader has mapped (memory-mapped reads)."""
        return sorted(self.ever_mapped)


def _chunk_bytes(size):
    """The unit the keeper ages pages in: 4 MiB, coarser for files above 4 GiB (at most 1024 chunks a file)."""
    chunk = max(4 << 20, -(-size // 1024))
    return -(-chunk // PAGE) * PAGE


def _runs(indices, chunk, size):
    """Consecutive chunk indices as byte ranges [(offset, length)]."""
    out = []
    for i in sorted(indices):
        off = i * chunk
        ln = min(chunk, size - off)
        if out and out[-1][0] + out[-1][1] == off:
            out[-1] = (out[-1][0], out[-1][1] + ln)
        else:
            out.append((off, ln))
    return out


class _CacheKeeper:
    """Keeps the dataset's files, while one mode runs, in the state a dataset
    larger than memory is in. It runs in a helper process of its own
    (_KeeperProcess), beside the loop it keeps cold: a thread of the loop's
    process would wait for the GIL while the loop holds it through a page
    fault of a memory-mapped read (tens of ms each), and fall behind.

    At the start: every file the loader reads (_FileWatch) is evicted from the
    page cache: the pages the process and its workers have mapped are paged
    out (process_madvise MADV_PAGEOUT: needs CAP_SYS_NICE), then
    posix_fadvise(POSIX_FADV_DONTNEED) drops the file's pages;
    /proc/sys/vm/drop_caches as well when asked (root). While the mode runs,
    it ticks each time the device has read 1/40 of the dataset's bytes (at
    least four readahead windows): every chunk (4 MiB) of a file already in
    the cache at the previous tick is evicted, so the cache holds what the
    last tick or two read (about a twentieth of the dataset, plus what is
    read while a tick runs: a dataset many times larger than the memory
    caching it), and pages read ahead live at least a tick, long enough for a
    sequential reader to use them. Pages that cannot be evicted (mapped,
    without CAP_SYS_NICE; mapped by two workers at once; tmpfs) are counted:
    the mode is then "partly warm", and says how much.

    With cold=False (--warm) nothing is evicted: the files are only found,
    and how much of them is in the page cache is reported."""

    TICK_SHARE = 1.0 / 40
    READAHEADS = 4         # a tick is at least this many readahead windows: read-ahead pages live long enough
    POLL = 0.005           # s between looks at the device's counters (at 10 ms the helper took 0.17 s of CPU in a
                           # 1.9-s mode instead of 0.23, but a random reader's ticks came later: at most 149-199 MB
                           # of a 268 MB file cached at once against 132-158; 2026-11-30)
    CALLS_POLL = 0.025     # s between looks at the loop's read() bytes (a /proc read per process)
    SCAN = 0.25            # s between looks for files newly opened or mapped, while looks find something new
    SCAN_MAX = 1.0         # ... doubling up to this while they find nothing new (a dataset file a hook logged: at once)
    MIN_TICK = 0.01        # s between two ticks at least
    SCATTER_CHUNKS = 4     # a file of at least this many chunks tells where in it the reads land

    def __init__(self, watch, kernel, root, cold=True, drop_caches=False, pattern="random", delivered=None):
        self.watch, self.kernel, self.root, self.cold = watch, kernel, root, cold
        self.delivered = delivered
        self.drop_caches, self.pattern = drop_caches, pattern
        self.notes = []
        self.ticks = 0
        self.evicted_bytes = 0
        self.stuck_max = 0
        self.resident_max = 0
        self.tick_seconds = 0.0
        self.young = {}
        self.devices = []
        self._stuck = {}
        self._mappers_max = 0   # processes that had a file of the dataset mapped at once, at an eviction
        # where in its large files the loader's reads land (_tick): chunks newly cached at the ticks, and the
        # fewest chunks the same bytes fill when read in order
        self.scatter = {"ticks": 0, "bytes": 0, "chunks": 0, "chunks_in_order": 0}
        self._devs_seen = set()
        self._found_pos = 0
        self._errors = set()
        self._known_pids = [root]
        self._scan_every = self.SCAN
        # files on tmpfs or ramfs stay in memory whatever is done: not evicted (a record file on /dev/shm had
        # 43 evictions tried in one mode, up to 5 ms of this helper's CPU a 14-ms step beside the loop)
        self._in_memory = _memory_mounts()
        self._memory_said = self._on_storage = False

    def _pids(self):
        """The loop's process and its descendants (this helper left out)."""
        return [self.root] + _descendants(self.root)

    def _note(self, text):
        if text not in self.notes:
            self.notes.append(text)

    def _refresh_devices(self):
        """The block device under each file system the dataset's files were found on (one look per st_dev:
        a look per file took this helper 1.4 s of CPU over a 3000-file ImageFolder's two modes)."""
        for dev, path in list(self.watch.st_devs.items()):
            if dev in self._devs_seen:
                continue
            self._devs_seen.add(dev)
            d = _block_device(path)
            if d is None:
                self._note("%s is on no block device (tmpfs, overlay, a network or FUSE file system): its reads "
                           "show in read_bytes only, and the device's request size and busy time are unknown" % path)
            elif d["name"] not in [x["name"] for x in self.devices]:
                self.devices.append(d)

    def _scan(self, learnt=()):
        """Looks for files newly opened or mapped, and evicts every file it
        learns of (cold): one held open or mapped that no hook saw, and one
        the hooks evicted as it was opened but that the loop has read since,
        before this helper knew it and could tick (nanoGPT's np.memmap read
        at random offsets, in its own freshly written file, had 237 MB of
        its 268 MB cached by the first tick: read from the cache after that,
        and its full loop ran at 12 ms a step, 2.5 ms of them waiting for
        data, against 90 and 74 when cold; 2026-11-30)."""
        pids, readers, mapped = self._known_pids, self.watch.readers, self.watch.maps
        self._known_pids = self._pids()
        fresh = self.watch.scan(self._known_pids)
        learnt = self._newly_found() + list(learnt)
        # A look reads every process's /proc/<pid>/maps (a thousand regions each under torch): while looks find
        # nothing new, they come at longer intervals. Files the hooks logged are no reason to look sooner: each
        # poll learns them from the log (an ImageFolder's workers log a file an item, and kept the looks at every
        # 0.25 s: 93 ms each, a fifth of a CPU of two, 2026-12-01)
        same = not fresh and pids == self._known_pids and readers == self.watch.readers and \
            mapped == self.watch.maps
        self._scan_every = min(2 * self._scan_every, self.SCAN_MAX) if same else self.SCAN
        self._learn(list(fresh) + learnt)

    def _newly_found(self):
        """The dataset's files found since the last call."""
        new = self.watch.found[self._found_pos:]
        self._found_pos = len(self.watch.found)
        return new

    def _learn(self, files):
        """Files of the dataset just found: their block devices, and (cold) out of the page cache."""
        known = len(self.devices)
        self._refresh_devices()
        if len(self.devices) != known and hasattr(self, "_base"):
            # the counter changed (the tree's read_bytes -> the devices' sectors): from here on, on the new one
            self._base = self._device_bytes()
        if self.cold and files:
            self.evict(sorted(set(files)))

    def dataset_bytes(self):
        return self.watch.total_bytes

    def tick_bytes(self):
        """Bytes read from the device between two ticks: 1/40 of the dataset,
        and at least four readahead windows (a sequential reader uses the
        pages read ahead before they are a tick old; a window is no larger
        than the largest file), for a sequential loader four per process
        reading: each is a stream of its own, and a tick of four windows in
        all evicted what four workers reading their quarters of a 537 MB
        file in order had read ahead (3.14 MB from storage for the 2.1 MB a
        batch held, x1.5, 8 MiB windows; 2026-11-30). Random readers keep the
        smaller tick: their read-ahead pages are the waste being measured,
        and a larger tick would let them re-read more of a small dataset; so
        does a sequential sampler over a dataset whose reads land at random
        (_count_scatter: it seeks itself)."""
        ra = max([d.get("read_ahead_kb", 128) for d in self.devices] or [128]) * 1024
        ra = min(ra, self.watch.max_bytes or ra)
        sc = self.scatter
        scattered = sc["ticks"] >= 2 and sc["chunks"] >= SCATTERED * sc["chunks_in_order"]
        streams = max(1, self.watch.readers) if self.pattern == "sequential" and not scattered else 1
        return int(max(self.TICK_SHARE * self.dataset_bytes(), self.READAHEADS * ra * streams, 1 << 20))

    def resident(self):
        """Bytes of the dataset's files in the page cache now (None: unknown)."""
        total, known = 0, False
        for path, size in list(self.watch.files.items()):
            fd = self._open(path)
            if fd is None:
                continue
            try:
                pages = self.kernel.cached_pages(fd, size, max(size, PAGE))
                if pages is not None:
                    total += sum(pages.values()) * PAGE
                    known = True
            finally:
                os.close(fd)
        return min(total, self.dataset_bytes()) if known else None

    def _open(self, path):
        try:
            return (self.watch._orig[2] if self.watch._orig else os.open)(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return None

    def _pageout(self, path, ranges):
        """Pages out the pages of these file ranges mapped by any process of the loop."""
        for pid, entries in list(self.watch.maps.items()):
            iov = []
            for p, start, end, off in entries:
                if p != path:
                    continue
                for f0, ln in ranges:
                    lo, hi = max(f0, off), min(f0 + ln, off + (end - start))
                    if lo < hi:
                        iov.append((start + lo - off, hi - lo))
            if not iov:
                continue
            err = self.kernel.pageout(pid, iov)
            self._mappers_max = max(self._mappers_max, sum(
                1 for entries in self.watch.maps.values() if any(e[0] == path for e in entries)))
            if err and err not in self._errors and err != 3:  # ESRCH: the worker ended
                self._errors.add(err)
                self._note("madvise(MADV_PAGEOUT) of the pages the loader mapped failed: %s%s" % (
                    os.strerror(err), " (paging out another process's pages needs CAP_SYS_NICE: run as root)"
                    if err == 1 else ""))

    def _all_in_memory(self):
        """Every file known is on a file system held in memory: no tick could evict a page. Every file found
        passes _memory_file when it is evicted (at the mode's start, or as it is learnt), which notes one on
        storage: no look over all the files at each addition (an ImageNet's million files)."""
        return bool(self.watch.files) and not self._on_storage

    def _memory_file(self, path):
        """Whether the file is on a file system held in memory (said once)."""
        if not path.startswith(self._in_memory):
            self._on_storage = True
            return False
        if not self._memory_said:  # once: a dataset of many files on one
            self._memory_said = True
            self._note("%s is on a file system held in memory (tmpfs, ramfs): its pages cannot leave memory, so "
                       "every mode reads it warm, as the real run does; the runner does not try to evict it" % path)
        return True

    def evict(self, paths=None):
        """These files (default: every file of the dataset) out of the page
        cache, their mapped pages too."""
        for path in list(self.watch.files) if paths is None else paths:
            if self._memory_file(path):
                continue
            size = self.watch.files.get(path, 0)
            self._pageout(path, [(0, size)])
            fd = self._open(path)
            if fd is None:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            except OSError as e:
                self._note("posix_fadvise(%s): %s" % (path, e))
            finally:
                os.close(fd)
            self.young.pop(path, None)

    def _candidates(self):
        """The files a tick looks at: those that may hold pages. A file evicted
        whole gains pages again only by a read, through a descriptor or a
        mapping: those with pages at the last tick (young, or stuck), those
        opened since (the hooks log every open), those held open or mapped
        at the last scan, and those only a scan found (C code opened them,
        and may again unseen). A tick over every file cost this helper 55 ms
        on a 3000-file ImageFolder, five ticks a second: half a CPU of two
        (2026-12-01); on ImageNet's 1.28 million files, seconds a tick."""
        w = self.watch
        return set(self.young) | w.take_touched() | w.held | w.unhooked

    def _tick(self):
        """Evicts every chunk that was in the cache at the previous tick."""
        self.ticks += 1
        t0 = time.perf_counter()
        cached_now = 0
        landed = []   # (chunks newly filled, their bytes, the chunk) per large file: where the reads landed
        for path in sorted(self._candidates()):
            size = self.watch.files.get(path)
            if size is None or self._memory_file(path):
                continue
            fd = self._open(path)
            if fd is None:
                continue
            try:
                chunk = _chunk_bytes(size)
                pages = self.kernel.cached_pages(fd, size, chunk)
                if pages is None:   # the kernel tells nothing: evict it whole
                    self._pageout(path, [(0, size)])
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
                    continue
                cached_now += sum(pages.values()) * PAGE
                prev = self.young.get(path, ())
                if size >= self.SCATTER_CHUNKS * chunk:
                    new = [n for i, n in pages.items() if n and i not in prev]
                    if new:
                        landed.append((len(new), sum(new) * PAGE, chunk))
                old = [i for i in prev if pages.get(i)]
                young = {i for i, n in pages.items() if n} - set(old)
                if old:
                    ranges = _runs(old, chunk, size)
                    self._pageout(path, ranges)
                    for off, ln in ranges:
                        os.posix_fadvise(fd, off, ln, os.POSIX_FADV_DONTNEED)
                    after = self.kernel.cached_pages(fd, size, chunk, old) or {}
                    stuck = {i for i in old if after.get(i)}
                    self.evicted_bytes += sum(pages[i] - after.get(i, 0) for i in old) * PAGE
                    young |= stuck
                    self._stuck[path] = sum(after.get(i, 0) for i in stuck) * PAGE
                if young:
                    self.young[path] = young
                else:
                    self.young.pop(path, None)
            except OSError as e:
                self._note("evicting %s: %s" % (path, e))
            finally:
                os.close(fd)
        self._count_scatter(landed)
        self.resident_max = max(self.resident_max, min(cached_now, self.dataset_bytes()))
        self.stuck_max = max(self.stuck_max, sum(self._stuck.values()))
        self.tick_seconds += time.perf_counter() - t0

    def _count_scatter(self, landed):
        """Where the pages read since the last tick lie in the large files (at
        least SCATTER_CHUNKS chunks): the chunks they newly fill, beside the
        fewest the same bytes fill when read in order (each file's bytes in
        whole chunks, and one chunk boundary more per process reading, each a
        stream of its own). Reads in order fill their chunks in turn; reads at
        random offsets spread over many, a few pages each, whatever the sampler
        (a plain iterable, a dataset that seeks itself) and without readahead
        to betray them (madvise(MADV_RANDOM), pread of records: the device
        serves the records' own size, at random offsets)."""
        if not landed:
            return
        self.scatter["ticks"] += 1
        self.scatter["bytes"] += sum(b for _, b, _ in landed)
        self.scatter["chunks"] += sum(n for n, _, _ in landed)
        self.scatter["chunks_in_order"] += sum(-(-b // c) for _, b, c in landed) + len(self._known_pids)

    def _stuck_why(self):
        """Why mapped pages stayed cached, from how many processes mapped the dataset at once."""
        if self._mappers_max > 1:
            return ("mapped by %d of the loader's processes at once, as workers that each map the file: the kernel "
                    "pages out no page two processes map" % self._mappers_max)
        return ("mapped by the loop when the keeper evicted them: a page in a mapping in use, or a range mapped "
                "again since the keeper's last look, is not paged out")

    def _loop_io(self, key):
        """A /proc/<pid>/io counter summed over the loop's process and workers
        as the last scan found them (walking the process tree at every 5 ms
        poll cost this helper about 0.15 s more CPU per 4-s mode, on CPUs the
        loop shares)."""
        return sum((_read_io(p) or {}).get(key, 0) for p in self._known_pids)

    def _loop_rchar(self):
        """Bytes the loop's read() calls have returned (page cache included)."""
        return self._loop_io("rchar")

    def _device_bytes(self):
        if self.devices:
            stats, _ = _diskstats({d["name"] for d in self.devices})
            return sum(v[1] for v in stats.values()) * 512
        return self._loop_io("read_bytes")

    # -- a mode --
    def begin(self):
        self._cpu0 = time.process_time()
        self._known_pids = self._pids()
        self.watch.scan(self._known_pids)
        self._refresh_devices()
        self.resident_before = self.resident()
        if self.cold:
            if self.drop_caches:
                try:
                    os.sync()
                    with open("/proc/sys/vm/drop_caches", "w") as f:
                        f.write("1\n")
                except OSError as e:
                    self._note("drop_caches: %s (it needs root and a writable /proc/sys)" % e)
            self.evict()
        self.watch.take_touched()   # opened before the mode: evicted above with the rest
        self._newly_found()
        self.resident_start = self.resident()
        self.resident_max = self.resident_start or 0
        self._last_scan = self._last_tick = self._last_calls = time.monotonic()
        self._base, self._base_calls = self._device_bytes(), self._loop_rchar()
        self._base_delivered = self._delivered()
        self.delivered_ticks = 0
        return self

    def _delivered(self):
        return self.delivered.value if self.delivered is not None else 0

    def poll(self):
        """One look: new files (at once when a hook logged one; else every
        SCAN s, up to SCAN_MAX while nothing changes), a tick when the device has read
        tick_bytes or the loop's read() calls have returned as much. The
        second: a small dataset read whole before the keeper first saw its
        files (an epoch shorter than SCAN) is then served by the page cache,
        the device reads nothing, and ticking on the device alone never
        evicted it again (the first mode "partly warm" with 0 B from storage).
        A third for memory-mapped files: the bytes of batches the loop took
        (_Delivered), which reads of mapped pages already cached make without
        a device read or a read() call."""
        now = time.monotonic()
        if now - self._last_scan >= self._scan_every:
            self._scan()
            self._last_scan = now
        else:
            # a worker logs every file it opens: one of the dataset's not known yet is evicted (the loop may have
            # read it before this helper knew it), with no look through /proc: a 3000-file ImageFolder's first
            # epoch logs a new file at nearly every poll, and the looks (each process's maps, a thousand regions
            # under torch) took this helper 6.5 s of CPU in two 9-s modes on a 2-CPU VM (2026-12-01)
            self.watch.read_log()
            self._learn(self._newly_found())
        # No file known: nothing a tick could evict, so no counters read every POLL (a minGPT loop that generates
        # its batches: the keeper's CPU in mode full went from 8.3% to 6% of a core on this 2-core VM, the rest
        # its scans for new files).
        if not self.cold or not self.watch.files or now - self._last_tick < self.MIN_TICK or self._all_in_memory():
            return
        read = self._device_bytes() - self._base
        if read < self.tick_bytes() and now - self._last_calls >= self.CALLS_POLL:
            self._last_calls = now
            calls = self._loop_rchar()
            if calls < self._base_calls:   # a worker ended: its counters went with it
                self._base_calls = calls
            read = calls - self._base_calls
        # A mapped file the workers keep mapped (persistent workers) is read from the cache with no device read
        # and no read() call: the bytes the loop took from the loader tick then. Only for mapped files: a loader
        # that decodes delivers more than it reads, and read() bytes already tick for the others.
        by_delivery = False
        if read < self.tick_bytes() and self.delivered is not None and self.watch.mapped():
            by_delivery = self._delivered() - self._base_delivered >= self.tick_bytes()
        if read >= self.tick_bytes() or by_delivery:
            self._tick()
            self.delivered_ticks += by_delivery
            self._last_tick = time.monotonic()
            self._base, self._base_calls = self._device_bytes(), self._loop_rchar()
            self._base_delivered = self._delivered()

    def end(self):
        self._scan()
        resident_end = self.resident()
        if resident_end is not None:   # ticks look at it; a mode with none saw it only here
            self.resident_max = max(self.resident_max, resident_end)
        total = self.dataset_bytes()
        out = {"kept_cold": self.cold, "files": len(self.watch.files), "dataset_bytes": total,
               "resident_bytes_before": self.resident_before, "resident_bytes_at_start": self.resident_start,
               "resident_bytes_max": self.resident_max, "resident_bytes_at_end": resident_end,
               "mapped_files": len(self.watch.mapped()), "keeper_cpu_seconds": time.process_time() - self._cpu0}
        if self.cold:
            out.update(evictions=self.ticks, evictions_by_delivery=self.delivered_ticks,
                       evicted_bytes=self.evicted_bytes, unevicted_bytes_max=self.stuck_max,
                       eviction_seconds=self.tick_seconds, tick_bytes=self.tick_bytes(),
                       scatter=dict(self.scatter),
                       method="posix_fadvise(POSIX_FADV_DONTNEED) + madvise(MADV_PAGEOUT) of mapped pages" +
                       (" + /proc/sys/vm/drop_caches" if self.drop_caches else "") +
                       "; during the mode, at every tick (tick_bytes read from the device or by read() calls, or, "
                       "for mapped files, delivered in batches), every chunk (4 MiB; 1/1024 of a file above 4 GiB) "
                       "already cached at the previous tick is evicted")
        if not self.watch.files:
            out["state"] = "no files"
            self._note("the loader opened no file the runner could see (generated data, a network source, a "
                       "dataset read into memory when it was built, as torchvision's MNIST, or files opened and "
                       "closed by C code): nothing was evicted")
        elif not self.cold:
            out["state"] = "warm"
        else:
            # Pages that stayed cached: at the start (nothing could evict them), and during the mode (mapped
            # by two workers at once, the kernel pages out no shared page). A random reader may read them
            # again; a sequential one has read them and does not come back to them in the epoch.
            stuck = self.stuck_max if self.pattern != "sequential" else 0
            warm = max(self.resident_start or 0, stuck)
            out["state"] = "partly warm" if warm > max(0.05 * total, 1 << 20) else "cold"
            if out["state"] == "partly warm":
                self._note("%s of the dataset's %s stayed in the page cache (it could not be evicted%s): reads of "
                           "it are warm" % (_size(warm), _size(total),
                                            ": " + self._stuck_why() if self.watch.mapped() else ""))
            elif self.stuck_max > max(0.05 * total, 1 << 20):
                self._note("%s of pages already read stayed cached (%s): the loader was taken as a sequential "
                           "reader (no shuffling sampler, or --pattern sequential), which does not read them again "
                           "in the epoch; a random one reads them warm, %.1f%% of the dataset at most (--pattern "
                           "random counts them)" % (_size(self.stuck_max), self._stuck_why(),
                                                    100.0 * self.stuck_max / total))
        if self.notes:
            out["notes"] = list(self.notes)
        return out


class _Delivered:
    """Bytes of batches the loop has taken from the loader, shared with the
    cache keeper's process (8 bytes of anonymous shared memory: the loop
    writes, the keeper reads; no system call per batch). A loader that reads
    a memory-mapped file already in the page cache makes neither device
    reads nor read() calls, so without it the keeper never ticked again:
    persistent workers, which keep their mapping from mode to mode, read the
    whole file from the cache in a mode said to be cold (0 B from storage,
    found 2026-11-29 on scripts/simplify_disk_example.py)."""

    def __init__(self):
        import mmap as _mmap
        self._mm = _mmap.mmap(-1, 8)
        self._v = memoryview(self._mm).cast("Q")

    def add(self, n):
        self._v[0] += int(n)

    @property
    def value(self):
        return int(self._v[0])


def _keeper_serve(watch, kernel, root, rfd, wfd, delivered=None):
    """The helper process: modes begin and end on the loop's word (one JSON
    line each way); in between, the keeper polls."""
    import select
    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C is the loop's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    keeper, buf = None, b""
    while True:
        ready = select.select([rfd], [], [], _CacheKeeper.POLL if keeper else None)[0]
        if ready:
            data = os.read(rfd, 65536)
            if not data:
                return                                 # the loop is gone
            buf += data
            while b"\n" in buf:
                line, _, buf = buf.partition(b"\n")
                cmd = json.loads(line)
                if cmd["op"] == "begin":
                    keeper = _CacheKeeper(watch, kernel, root, cold=cmd["cold"], drop_caches=cmd["drop_caches"],
                                          pattern=cmd["pattern"], delivered=delivered).begin()
                    reply = {"devices": keeper.devices}
                elif cmd["op"] == "devices":
                    keeper._scan()
                    reply = {"devices": keeper.devices}
                elif cmd["op"] == "end":
                    reply = {"cache": keeper.end(), "dataset": dataset_info(keeper, keeper.cold)}
                    keeper = None
                else:                                  # "quit": the run is over
                    return
                out = (json.dumps(reply) + "\n").encode()
                while out:
                    out = out[os.write(wfd, out):]
        elif keeper is not None:
            keeper.poll()


class _KeeperProcess:
    """The loop's side of the cache keeper: a helper process forked when the
    run starts (it then holds the file watch and the kernel handles it
    inherits), left out of the loader's processes and counters."""

    def __init__(self, watch, kernel, delivered=None):
        r1, w1 = os.pipe()
        r2, w2 = os.pipe()
        root = os.getpid()
        pid = os.fork()
        if pid == 0:   # the helper: it never returns into the caller's code
            code = 0
            try:
                os.close(w1)
                os.close(r2)
                _keeper_serve(watch, kernel, root, r1, w2, delivered)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(r1)
        os.close(w2)
        self.pid, self._w, self._r = pid, w1, r2
        self._buf = b""
        _HIDDEN_PIDS.add(pid)

    def _ask(self, cmd):
        out = (json.dumps(cmd) + "\n").encode()
        while out:
            out = out[os.write(self._w, out):]
        while b"\n" not in self._buf:
            data = os.read(self._r, 1 << 20)
            if not data:
                raise RuntimeError("the cache keeper process ended")
            self._buf += data
        line, _, self._buf = self._buf.partition(b"\n")
        return json.loads(line)

    def begin(self, cold, drop_caches, pattern):
        """Evicts the dataset's files (cold) and keeps them cold until end(); the devices under them."""
        return self._ask({"op": "begin", "cold": cold, "drop_caches": drop_caches, "pattern": pattern})["devices"]

    def devices(self):
        """The block devices under the files found so far (the warm-up found more)."""
        return self._ask({"op": "devices"})["devices"]

    def end(self):
        """(the mode's page-cache figures, the dataset against memory)."""
        r = self._ask({"op": "end"})
        return r["cache"], r["dataset"]

    def close(self):
        # Said, not left to EOF: processes forked after the keeper (the loader's
        # persistent workers) hold the pipe's write end too, so closing ours
        # alone would leave the keeper waiting, and this wait, for ever.
        try:
            os.write(self._w, b'{"op": "quit"}\n')
        except OSError:
            pass
        for fd in (self._w, self._r):
            try:
                os.close(fd)
            except OSError:
                pass
        deadline = time.monotonic() + 10
        try:
            while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                if time.monotonic() > deadline:    # a keeper that does not answer: ours, stopped by its id
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                    break
                time.sleep(0.01)
        except ChildProcessError:
            pass
        _HIDDEN_PIDS.discard(self.pid)


def _size(n, unit="B"):
    """Bytes (or another unit: FLOP) for a person: 1.07 GB, 512 KiB-sized things in kB."""
    if n is None:
        return "?"
    for prefix, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(n) >= scale:
            return "%.3g %s%s" % (n / scale, prefix, unit)
    return "%d %s" % (n, unit)



# ---- stubs ---------------------------------------------------------------------------------


class _NoWork:
    """What a stubbed async collective returns: a handle whose wait() is free."""

    def wait(self, *a, **k):
        return True

    def is_completed(self):
        return True


def _noop(*args, **kwargs):
    return _NoWork() if kwargs.get("async_op") else None


class _Patched:
    """Replaces obj.name by a stub for the duration of a with block."""

    def __init__(self, obj, name, stub):
        self.obj, self.name, self.stub = obj, name, stub

    def __enter__(self):
        self.had_own = self.name in getattr(self.obj, "__dict__", {})
        self.orig = getattr(self.obj, self.name)
        setattr(self.obj, self.name, self.stub)

    def __exit__(self, *exc):
        if self.had_own:
            setattr(self.obj, self.name, self.orig)
        else:
            delattr(self.obj, self.name)  # the class attribute shows again
        return False


def _optimizers(optimizer):
    """The optimizers whose .step the runner times and stubs: none, one, or a
    list or tuple of them (a GAN's generator and discriminator)."""
    if optimizer is None:
        return []
    many = list(optimizer) if isinstance(optimizer, (list, tuple)) else [optimizer]
    for o in many:
        if not callable(getattr(o, "step", None)):
            raise TypeError("optimizer must be an optimizer (an object with a .step method) or a list of them; got "
                            "%s" % type(o).__name__)
    return many


def _resolve_collective(collective):
    """(object, attribute) of the collective to time and stub: a pair, or a
    dotted name such as "torch.distributed.all_reduce"."""
    if collective is None:
        return None
    if isinstance(collective, str):
        mod, _, attr = collective.rpartition(".")
        return importlib.import_module(mod), attr
    obj, attr = collective
    return obj, attr


class _World:
    """The ranks of a distributed loop (torch.distributed initialised, more
    than one rank), each running the same runner under torchrun, mpirun or
    srun. Their steps meet in collectives, so every rank must run the same
    number of steps in every mode: a rank that ran one more would pair its
    all-reduce with the other ranks' first one of the next mode, and the last
    one with none (it waits forever). The counts are agreed by all-reducing a
    number, between windows, never inside one: over a gloo group of the
    runner's own when the loop's backend is another (NCCL reduces only GPU
    tensors)."""

    def __init__(self):
        self.size, self.rank, self.backend, self.group, self.device = 1, 0, None, None, "cpu"
        self.host_ranks = 1
        t = _torch()
        d = getattr(t, "distributed", None) if t is not None else None
        if d is None or not d.is_available() or not d.is_initialized() or d.get_world_size() < 2:
            return
        self.size, self.rank, self.backend = d.get_world_size(), d.get_rank(), str(d.get_backend())
        if self.backend != "gloo":
            try:
                self.group = d.new_group(backend="gloo")
            except Exception:  # no gloo: the loop's own group, on its device
                self.device = "cuda" if t.cuda.is_available() else "cpu"
        self.host_ranks = self._ranks_on_this_host(d)

    def _ranks_on_this_host(self, d):
        """How many ranks share this machine's CPUs (their host names
        gathered once; LOCAL_WORLD_SIZE, which torchrun sets, if that fails)."""
        import socket
        try:
            names = [None] * self.size
            d.all_gather_object(names, socket.gethostname(), group=self.group)
            return sum(1 for n in names if n == socket.gethostname())
        except Exception:
            try:
                return max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
            except ValueError:
                return 1

    def max(self, x):
        """The largest x of all ranks (every rank calls it at the same point)."""
        if self.size < 2:
            return x
        t = _torch()
        v = t.tensor([float(x)], dtype=t.float64, device=self.device)
        t.distributed.all_reduce(v, op=t.distributed.ReduceOp.MAX, group=self.group)
        return float(v.item())

    def info(self):
        return {"world_size": self.size, "rank": self.rank, "backend": self.backend}


def rank_path(path):
    """Where this process writes the stage file: `path` itself, or on rank N
    > 0 of a distributed loop `path` with ".rankN" before its extension, so
    ranks that share a machine or a file system keep a file each."""
    t = _torch()
    d = getattr(t, "distributed", None) if t is not None else None
    if not path or d is None or not d.is_available() or not d.is_initialized() or d.get_rank() == 0:
        return path
    stem, ext = os.path.splitext(path)
    return "%s.rank%d%s" % (stem, d.get_rank(), ext)


def _ddp_buckets(ddp):
    """DDP's gradient buckets as [(bytes, dtype)]: the sizes DDP rebuilt them
    to after its first step (its logging data; an internal of torch, read
    when it is there), else each dtype's gradients cut at its bucket cap
    (bucket_cap_mb)."""
    grads = [p for p in ddp.parameters() if p.requires_grad]
    dtypes = sorted({p.dtype for p in grads}, key=str)
    try:
        data = ddp._get_ddp_logging_data()
        sizes = data.get("rebuilt_bucket_sizes") or data.get("bucket_sizes")
        sizes = [int(x) for x in str(sizes).split(",") if x.strip()]
    except Exception:
        sizes = []
    total = sum(p.numel() * p.element_size() for p in grads)
    if len(dtypes) == 1 and sizes and sum(sizes) == total:
        return [(n, dtypes[0]) for n in sizes]
    cap = int(getattr(ddp, "bucket_bytes_cap", 25 * 1024 * 1024)) or total
    out = []
    for dt in dtypes:
        left = sum(p.numel() * p.element_size() for p in grads if p.dtype == dt)
        while left > 0:
            out.append((min(cap, left), dt))
            left -= cap
    return out


def _elem_size(dtype):
    return _torch().empty((), dtype=dtype).element_size()


def _is_ddp(collective):
    """A DistributedDataParallel model given as the collective: its gradient
    all-reduce runs inside backward, on the backend's threads, where no call
    can be wrapped; it is stubbed with its own no_sync()."""
    return collective is not None and not isinstance(collective, (str, tuple, list)) and \
        callable(getattr(collective, "no_sync", None))


class _Timed:
    """Wraps obj.name to add up the time spent in it (the full loop's split of
    the step into optimizer / collective / the rest). An optimizer whose step
    takes a closure (LBFGS: step(closure) evaluates your forward and backward
    up to max_iter times) counts only its own time: the closure's calls are
    timed apart and left to forward+backward (`closure_calls`)."""

    def __init__(self, obj, name, sync, closures=False):
        self.obj, self.name, self.sync, self.closures = obj, name, sync, closures
        self.seconds = 0.0
        self.calls = 0
        self.closure_calls = 0

    def reset(self):
        """Back to zero: the warm-up's calls do not count."""
        self.seconds, self.calls, self.closure_calls = 0.0, 0, 0

    def _wrap_closure(self, args, kwargs, inside):
        """args, kwargs with the closure (step(closure) or closure=) timed into inside[0]."""
        def wrap(closure):
            def timed_closure(*a, **k):
                t0 = time.perf_counter()
                try:
                    return closure(*a, **k)
                finally:
                    inside[0] += time.perf_counter() - t0
                    self.closure_calls += 1
            return timed_closure
        if args and callable(args[0]):
            return (wrap(args[0]),) + tuple(args[1:]), kwargs
        if callable(kwargs.get("closure")):
            return args, dict(kwargs, closure=wrap(kwargs["closure"]))
        return args, kwargs

    def __enter__(self):
        orig = getattr(self.obj, self.name)

        def timed(*args, **kwargs):
            inside = [0.0]
            if self.closures:
                args, kwargs = self._wrap_closure(args, kwargs, inside)
            self.sync()
            t0 = time.perf_counter()
            try:
                return orig(*args, **kwargs)
            finally:
                self.sync()
                self.seconds += time.perf_counter() - t0 - inside[0]
                self.calls += 1
        self._patch = _Patched(self.obj, self.name, timed)
        self._patch.__enter__()
        return self

    def __exit__(self, *exc):
        return self._patch.__exit__(*exc)


def _timer_figures(m, timers, n):
    """The timers' seconds per step into mode figures m, one figure per name (a
    GAN's two optimizers: both steps); an optimizer's closure evaluations per
    step (LBFGS: forward+backward, not the optimizer's)."""
    for name, t in timers:
        m[name + "_per_step"] = m.get(name + "_per_step", 0.0) + t.seconds / n
        if t.closure_calls:
            m[name + "_closure_calls_per_step"] = m.get(name + "_closure_calls_per_step", 0.0) + \
                t.closure_calls / n


def _closure_once(closure=None, *args, **kwargs):
    """The no-optimizer stub of optimizer.step: no update; a closure given to
    it (LBFGS) runs once, as the forward and backward of a step without the
    optimizer would."""
    return closure() if callable(closure) else None


# ---- the runner ------------------------------------------------------------------------------


class _Bound:
    """A hard bound on each call of the user's code in a mode: SIGALRM raises
    ModeTimeout in the main thread when one call (with the runner's own work
    before it) runs past it. Re-armed before every call (rearm), so a slow
    step that does return is no hang: pytorch/examples'
    time_sequence_prediction takes 29 s per LBFGS step on this VM, and a bound
    on the whole mode stopped it as "one call never returned"."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.armed = False

    def _fire(self, signum, frame):
        raise ModeTimeout("one call of your code ran past the bound of %.1f s: it never returned, or one step takes "
                          "longer than that (the bound is 4 x (--seconds + --warmup) + 30 s)" % self.seconds)

    def rearm(self):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, self.seconds)

    def __enter__(self):
        if self.seconds and hasattr(signal, "setitimer") and \
                signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None) and _main_thread():
            self.prev = signal.signal(signal.SIGALRM, self._fire)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    def __exit__(self, *exc):
        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.prev)
            self.armed = False
        return False


def _main_thread():
    import threading
    return threading.current_thread() is threading.main_thread()


class _BatchMix:
    """The full loop's measured batches by shape (batch_signature): how many
    of each, their bytes, and one batch of each of the first MIX_KEEP shapes,
    held for the modes that stub the loader. pytorch/examples'
    super_resolution (200 images, batch 64) ends each epoch on a batch of 8:
    its full loop averaged 3 steps of 64 and one of 8 (2.6 s a step) while
    the step alone repeated one of 64 (3.3 s), read as "the isolated figures
    are not reliable"."""

    def __init__(self):
        self.shapes = {}    # signature -> [a batch of it or None, how many]
        self.n = 0
        self.bytes = 0

    def add(self, batch):
        key = tuple(batch_signature(batch))
        e = self.shapes.get(key)
        if e is None:
            held = sum(1 for v in self.shapes.values() if v[0] is not None)
            e = self.shapes[key] = [batch if held < MIX_KEEP else None, 0]
        e[1] += 1
        self.n += 1
        self.bytes += batch_bytes(batch)

    def kept(self):
        """[(batch, share)] of the shapes held, their shares among them."""
        held = [(b, k) for b, k in self.shapes.values() if b is not None]
        total = sum(k for _, k in held)
        return [(b, k / total) for b, k in held]

    def covered(self):
        """The share of the measured batches whose shape is held."""
        return sum(k for b, k in self.shapes.values() if b is not None) / self.n if self.n else 1.0

    def mean_bytes(self):
        return self.bytes / self.n if self.n else None

    def describe(self):
        """{"shapes", "batches", "held": [{"batch", "count"}], "held_share"}: for the stage file."""
        return {"shapes": len(self.shapes), "batches": self.n,
                "held": [{"batch": [list(map(str, x)) for x in key], "count": k}
                         for key, (b, k) in self.shapes.items() if b is not None],
                "held_share": self.covered()}


def _weighted_cycle(shares):
    """A function giving indices into shares so that each comes up in its
    share, spread out (smooth weighted round robin): 0.75/0.25 gives
    0, 0, 1, 0, 0, 0, 1, 0, ..."""
    credit = [0.0] * len(shares)

    def pick():
        for i, w in enumerate(shares):
            credit[i] += w
        j = max(range(len(shares)), key=lambda i: credit[i])
        credit[j] -= sum(shares)
        return j
    return pick


class Simplifier:
    """Runs the modes and keeps their figures. See simplify() for the arguments."""

    def __init__(self, loader, step, transfer=None, optimizer=None, collective=None, device=None,
                 seconds=5.0, warmup=1.0, min_steps=3, flops_per_step=None, count_flops=True,
                 pattern=None, out=None, hard_bound=None, log=sys.stderr, clock=time.perf_counter,
                 cache="cold", drop_caches=False):
        if not callable(step):
            raise TypeError("step must be callable: step(batch) runs forward, backward and the optimizer")
        if cache not in ("cold", "warm"):
            raise ValueError("cache must be 'cold' (the dataset evicted from the page cache and kept out of it in "
                             "every mode that reads it) or 'warm' (the page cache left as it is)")
        self.loader = loader
        self.step = step
        self.device = device
        self.cuda = _is_cuda(device)
        self.transfer = transfer or ((lambda b: to_device(b, device, non_blocking=True))
                                     if device is not None else (lambda b: b))
        self.has_transfer = transfer is not None or (device is not None and str(device) != "cpu")
        self.optimizers = _optimizers(optimizer)
        self.optimizer = self.optimizers[0] if self.optimizers else None
        self.ddp = collective if _is_ddp(collective) else None
        self.collective = None if self.ddp is not None else _resolve_collective(collective)
        self.world = _World()
        self.seconds = float(seconds)
        self.warmup = float(warmup)
        self.min_steps = max(1, int(min_steps))
        self.flops_per_step = flops_per_step
        self.math_dtype = None  # what the matmul/conv calls ran in (_count_flops), autocast included
        self.conv_flops = 0.0   # of the FLOPs counted, the convolutions' (_count_flops)
        self.flop_share = None  # on the CPU: the share of the step's compute its FLOP-counted ops take (_flop_share)
        self.profiler_op_us = None  # ... and the profiler's own cost per op taken out of it
        self.count_flops = count_flops
        self.pattern = pattern
        self.out = rank_path(out)
        self.hard_bound = hard_bound if hard_bound is not None else 4 * (self.seconds + self.warmup) + 30
        self.log = log
        self.clock = clock
        self.modes = {}
        self.measured = {}  # mode -> (start, end) of its measured window on `clock`
        self._current = None
        self._bound = None      # the running mode's _Bound
        self.errors = []
        self.interrupted = None
        self.host_batch = None
        self.dev_batch = None
        self.mix = _BatchMix()  # the full loop's measured batches by shape
        self._dev_mix = None    # ... on the device (_device_mix)
        self.cold = cache == "cold"
        self.drop_caches = bool(drop_caches)
        self.kernel = _Kernel()
        self.watch = None       # _FileWatch while run() runs
        self.keeper = None      # _KeeperProcess while run() runs
        self.delivered = None   # _Delivered, shared with the keeper
        self._no_keeper = "the runner's modes were called one by one (not by run()): the page cache was not watched"
        self.dataset = None     # the dataset's files against memory (dataset_info)

    # -- helpers ----------------------------------------------------------------------------
    def _say(self, fmt, *args):
        if self.log is not None:
            who = "mlbench_simplify[rank %d]: " % self.world.rank if self.world.size > 1 else "mlbench_simplify: "
            print(who + (fmt % args if args else fmt), file=self.log, flush=True)

    def _sync(self):
        if self.cuda:
            _torch().cuda.synchronize()

    def _warm_up(self, body, agree=True):
        """Runs body() for the warm-up (at least once); returns how many times
        to run it measured: None = for `seconds`, at least min_steps times.
        In a distributed loop every rank gets the same counts (_World): the
        warm-up's from the slowest rank's first call, the measured one from
        the slowest rank's warm-up; agree=False (the loader alone, whose
        batches meet in no collective) keeps each rank's own, by time."""
        # the ranks leave the previous mode apart (the loader alone meets in no collective): they start together,
        # so that the first call's time is its own, not a wait for the slowest rank's previous mode
        self.world.max(0)
        t0 = self.clock()
        self._rearm()
        body()
        if self.world.size < 2 or not agree:
            while self.clock() - t0 < self.warmup:
                self._rearm()
                body()
            self._sync()
            return None
        self._sync()
        first = self.world.max(self.clock() - t0)
        more = max(0, math.ceil(self.warmup / first) - 1) if first > 0 else 0
        t1 = self.clock()
        for _ in range(more):
            self._rearm()
            body()
        self._sync()
        per = self.world.max((self.clock() - t1) / more if more else first)
        return max(self.min_steps, math.ceil(self.seconds / per)) if per > 0 else self.min_steps

    def _rearm(self):
        """The next call of the user's code gets the whole bound (_Bound)."""
        if self._bound is not None:
            self._bound.rearm()

    def _measuring(self, n, count, t0):
        """Whether the measured loop goes on after `count` runs since t0 (the
        next run's bound re-armed)."""
        self._rearm()
        if n is not None:
            return count < n
        return count < self.min_steps or self.clock() - t0 < self.seconds

    def _loop(self, body, after_warmup=None):
        """Runs body() for the warm-up, then (after_warmup() called) for
        `seconds` (at least min_steps times; in a distributed loop the count
        all ranks agreed); returns (iterations, seconds measured)."""
        target = self._warm_up(body)
        if after_warmup is not None:
            after_warmup()
        t0 = self.clock()
        n = 0
        while self._measuring(target, n, t0):
            body()
            n += 1
        self._sync()
        t1 = self.clock()
        self.measured[self._current] = (t0, t1)
        return n, t1 - t0

    def _took(self, n):
        """n bytes of batches taken from the loader: the cache keeper ticks on them for mapped files."""
        if self.delivered is not None:
            self.delivered.add(n)

    def _next(self, state):
        """The next batch of the loader, starting a new epoch when it runs out."""
        try:
            return next(state["it"])
        except StopIteration:
            state["epochs"] += 1
            state["it"] = iter(self.loader)
            try:
                return next(state["it"])
            except StopIteration:
                raise ValueError("the loader gives no batch (a generator runs once: pass a re-iterable "
                                 "such as a DataLoader or a list)") from None

    # -- modes --------------------------------------------------------------------------------
    def mode_loader(self):
        """The step stubbed: every batch is touched, nothing else. The
        dataset's files start cold and are kept cold (_CacheKeeper) unless
        cache="warm"; the block device's requests are counted."""
        devices = self._dataset_mode_begin()
        try:
            m = self._mode_loader(devices or [])
        finally:
            cache = self._dataset_mode_end(devices)
        m["cache"] = cache
        self._warm_reads(m, "loader")
        self._warm_mapped(m, m["bytes_in_batches"])
        return m

    def _mode_loader(self, devices):
        state = {"it": iter(self.loader), "epochs": 0}
        sink = [0, 0]
        m = {"batches": 0, "bytes_in_batches": 0, "items_in_batches": 0}

        def body():
            b = self._next(state)
            s, n = touch(b)
            sink[0] += s
            sink[1] += n
            if self.host_batch is None:
                self.host_batch = b
            m["batches"] += 1
            n = batch_bytes(b)
            m["bytes_in_batches"] += n
            self._took(n)
            m["items_in_batches"] += _item_count(b)

        # warm-up by hand: the I/O window must start after it, on the same iterator
        target = self._warm_up(body, agree=False)
        m.update(batches=0, bytes_in_batches=0, items_in_batches=0)
        devices = self._devices(devices)
        a = ProcSnapshot()
        da, ca = _diskstats({d["name"] for d in devices})[0], _machine_cpu()
        epochs0 = state["epochs"]
        t0 = self.clock()
        while self._measuring(target, m["batches"], t0):
            body()
        t1 = self.clock()
        secs = t1 - t0
        self.measured["loader"] = (t0, t1)
        db, cb = _diskstats({d["name"] for d in devices})[0], _machine_cpu()
        b = ProcSnapshot()  # before the iterator goes: its workers are still alive
        state["it"] = None
        io = proc_delta(a, b)
        m.update(seconds=secs, seconds_per_batch=secs / m["batches"], batches_per_second=m["batches"] / secs,
                 touched_leaves=sink[1], io_counted=a.available, epochs_started=state["epochs"],
                 # epochs begun in the window: each forks the workers again unless persistent_workers
                 epochs_in_window=state["epochs"] - epochs0,
                 persistent_workers=bool(getattr(self.loader, "persistent_workers", False)), **io)
        m["device"] = _device_delta(devices, da, db, secs, io["read_bytes"])
        m["machine_cpu_busy_share"] = _machine_busy(ca, cb)
        return m

    def mode_full(self):
        """The whole loop; next(), transfer and step are timed apart (their
        exposed time). The dataset is cold, as in mode loader."""
        devices = self._dataset_mode_begin()
        try:
            m = self._mode_full(devices or [])
        finally:
            cache = self._dataset_mode_end(devices)
        m["cache"] = cache
        self._warm_reads(m, "full")
        self._warm_mapped(m, self.mix.bytes if self.mix is not None else 0)
        return m

    def _mode_full(self, devices):
        state = {"it": iter(self.loader), "epochs": 0}
        parts = {"data": 0.0, "transfer": 0.0, "step": 0.0}
        timers = []
        timers += [("optimizer", _Timed(o, "step", self._sync, closures=True)) for o in self.optimizers]
        if self.collective is not None:
            timers.append(("collective", _Timed(self.collective[0], self.collective[1], self._sync)))
        count = [0]

        def body():
            t0 = self.clock()
            b = self._next(state)
            t1 = self.clock()
            if self.host_batch is None:
                self.host_batch = b
            if state.get("measuring"):
                self.mix.add(b)
            d = self.transfer(b)
            t2 = self.clock()
            self.step(d)
            self._sync()
            t3 = self.clock()
            parts["data"] += t1 - t0
            parts["transfer"] += t2 - t1
            parts["step"] += t3 - t2
            count[0] += 1
            if self.keeper is not None:   # after the timed parts: it costs a walk of the batch
                self._took(batch_bytes(b))

        for _, t in timers:
            t.__enter__()
        try:
            target = self._warm_up(body)
            for k in parts:
                parts[k] = 0.0
            for _, t in timers:
                t.reset()
            count[0] = 0
            devices = self._devices(devices)
            a = ProcSnapshot()
            da = _diskstats({d["name"] for d in devices})[0]
            self.mix = _BatchMix()
            state["measuring"] = True
            t0 = self.clock()
            while self._measuring(target, count[0], t0):
                body()
            t1 = self.clock()
            secs = t1 - t0
            self.measured["full"] = (t0, t1)
            db = _diskstats({d["name"] for d in devices})[0]
            b = ProcSnapshot()
        finally:
            for _, t in reversed(timers):
                t.__exit__(None, None, None)
        state["it"] = None
        n = count[0]
        m = {"steps": n, "seconds": secs, "step_seconds": secs / n, "batches_per_second": n / secs,
             "data_wait_per_step": parts["data"] / n, "transfer_per_step": parts["transfer"] / n,
             "step_per_step": parts["step"] / n}
        _timer_figures(m, timers, n)
        m.update(proc_delta(a, b))
        m["device"] = _device_delta(devices, da, db, secs, m["read_bytes"])
        return m

    def _dataset_mode_begin(self):
        """Before a mode that reads the dataset: the files found so far (held
        open or mapped now, or opened in an earlier mode) evicted, and the
        dataset kept cold while the mode runs (_CacheKeeper, in its process):
        a file first opened during it is evicted as it is opened
        (_FileWatch), before it is read. With cache="warm" the files are only
        watched. Returns the block devices under the dataset's files."""
        if self.keeper is None:
            return None
        if self.cold:
            # Dirty pages cannot be evicted (posix_fadvise drops clean pages
            # only): a dataset written just before the run (a preprocessing
            # step, a download) would be read from the page cache, the first
            # mode "partly warm". Written back first, before the mode's warm-up.
            os.sync()
        self.watch.evict_on_open = self.cold
        try:
            return self.keeper.begin(self.cold, self.drop_caches, self.pattern or _guess_pattern(self.loader))
        except (OSError, RuntimeError, ValueError) as e:
            self._keeper_lost(e)
            return None

    def _dataset_mode_end(self, devices):
        if self.watch is not None:
            self.watch.evict_on_open = False
        if self.keeper is None:
            return {"state": "unknown", "why": self._no_keeper}
        try:
            cache, self.dataset = self.keeper.end()
        except (OSError, RuntimeError, ValueError) as e:
            self._keeper_lost(e)
            return {"state": "unknown", "why": self._no_keeper}
        return cache

    def _devices(self, known):
        """The block devices under the files found so far (the warm-up opened more)."""
        if self.keeper is None:
            return known
        try:
            return self.keeper.devices()
        except (OSError, RuntimeError, ValueError) as e:
            self._keeper_lost(e)
            return known

    def _keeper_lost(self, e):
        """The cache keeper failed: the run goes on, each mode says its page cache is unknown."""
        self._no_keeper = "the cache keeper failed (%s: %s): the page cache was left as it was" % (
            type(e).__name__, e)
        self._say("%s", self._no_keeper)
        if self.keeper is not None:
            try:
                self.keeper.close()
            except OSError:
                pass
        self.keeper = None

    @staticmethod
    def _warm_reads(m, name):
        """A cold mode whose read() calls returned far more than storage read
        was served by the page cache: files the runner did not see or could
        not evict (opened and closed by C code, a tmpfs). Said in its cache
        state, naming the mode (the summary lists every mode's notes)."""
        c = m.get("cache")
        if not c or not c.get("kept_cold") or not m.get("io_counted", True):
            return
        reads = _read_call_bytes(m)
        hits = reads - m["read_bytes"]
        if hits > max(0.25 * reads, 1 << 20):
            c["page_cache_read_bytes"] = hits
            Simplifier._partly_warm(c, "mode %s: read() returned %s more than storage read: the page cache "
                                    "served them (files the runner did not see or could not evict, or a small part "
                                    "of the files read again and again between two evictions, as labels or an index "
                                    "beside the records: a real run keeps those cached too)" % (name, _size(hits)))

    @staticmethod
    def _partly_warm(c, why):
        """A cold mode's cache figures said partly warm, with why."""
        if c["state"] == "cold":
            c["state"] = "partly warm"
        c.setdefault("notes", []).append(why)

    @staticmethod
    def _warm_mapped(m, delivered):
        """A cold mode whose loader read memory-mapped files and delivered
        batches while storage read next to nothing (under 1% of them: no
        decoder expands its records a hundredfold) was served by the page
        cache: the pages read in the warm-up stayed, as fewer bytes than a
        tick were read after it (a file a few readahead windows long), or a
        worker kept them mapped. Said in its cache state: reads that cost
        nothing here cost storage reads in a dataset larger than memory."""
        c = m.get("cache")
        if not c or not c.get("kept_cold") or not c.get("mapped_files") or not m.get("io_counted", True):
            return
        if delivered <= 0 or m["read_bytes"] >= 0.01 * delivered:
            return
        c["mapped_cache_hits"] = True
        Simplifier._partly_warm(c, "the loader delivered %s from memory-mapped files while storage read %s: the "
                                "pages were in the page cache (read in the warm-up and not evicted after it: fewer "
                                "bytes than a tick, %s, were read, or kept mapped by workers); read its figures as "
                                "warm" % (_size(delivered), _size(m["read_bytes"]), _size(c.get("tick_bytes") or 0)))

    def _device_batch(self):
        if self.host_batch is None:
            self.host_batch = next(iter(self.loader))
        if self.dev_batch is None:
            self.dev_batch = self.transfer(self.host_batch)
            self._sync()
        return self.dev_batch

    def _device_mix(self):
        """[(batch on the device, share)]: the full loop's measured batches
        by shape, one of each of the first MIX_KEEP shapes, in their shares;
        one batch when they all had one shape (or mode full did not run)."""
        kept = self.mix.kept()
        if len(kept) < 2:
            return [(self._device_batch(), 1.0)]
        if self._dev_mix is None:
            self._dev_mix = [(self.transfer(b), share) for b, share in kept]
            self._sync()
        return self._dev_mix

    def _step_mode(self, patches=(), timers=()):
        mix = self._device_mix()
        d = mix[0][0]
        sig = batch_signature(d)
        pick = _weighted_cycle([share for _, share in mix])
        for p in patches:
            p.__enter__()
        for _, t in timers:
            t.__enter__()
        try:
            n, secs = self._loop(lambda: self.step(mix[pick()][0]), lambda: [t.reset() for _, t in timers])
        finally:
            for _, t in reversed(timers):
                t.__exit__(None, None, None)
            for p in reversed(patches):
                p.__exit__(None, None, None)
        m = {"steps": n, "seconds": secs, "seconds_per_step": secs / n, "batch": [list(map(str, s)) for s in sig]}
        if len(mix) > 1:
            m["batches"] = [{"batch": [list(map(str, s)) for s in batch_signature(b)], "share": share}
                            for b, share in mix]
        _timer_figures(m, timers, n)
        return m

    def mode_step(self):
        """The step alone on one real batch already on the device (data
        stubbed); its optimizers' steps timed as in the full loop: the
        optimizer alone. The difference with mode no_optimizer is not it: two
        windows of a 1.1 s step measured one after the other on a shared
        machine (pytorch/examples' dcgan) differed by 151 ms for an optimizer
        that takes 16-20 ms, timed directly or by alternating with and
        without it."""
        return self._step_mode(timers=[("optimizer", _Timed(o, "step", self._sync, closures=True)) for o in self.optimizers])

    def mode_no_optimizer(self):
        """The step with every optimizer's step() stubbed out."""
        return self._step_mode([_Patched(o, "step", _closure_once) for o in self.optimizers])

    def mode_no_collective(self):
        """The step with the collective stubbed out (returns at once); a DDP
        model's step inside its no_sync() (no gradient all-reduce: its
        gradients accumulate, as DDP's own gradient accumulation runs),
        alternating with steps that all-reduce (_ddp_pairs)."""
        if self.ddp is not None:
            return self._ddp_pairs()
        return self._step_mode([_Patched(self.collective[0], self.collective[1], _noop)])

    def _ddp_pairs(self):
        """A DDP step with its gradient all-reduce and one inside no_sync(),
        in alternating pairs (the order swapped every pair), each timed to its
        end: the all-reduce's cost to the step is the pairs' mean difference,
        with its standard error. Two windows measured one after the other
        cannot give it on a shared machine: on a 2-core VM, minGPT's step
        inside no_sync() measured 144 ms slower than with the all-reduce,
        and the step without its 8 ms optimizer 125 ms faster than with it."""
        d = self._device_batch()
        sig = batch_signature(d)
        times = {"with": [], "without": []}
        run = {"with": 0}

        def one(kind):
            t0 = self.clock()
            if kind == "with":
                self.step(d)
                run["with"] += 1
            else:
                with self.ddp.no_sync():
                    self.step(d)
            self._sync()
            times[kind].append(self.clock() - t0)

        def pair():
            first = len(times["with"]) % 2 == 0
            for kind in (("with", "without") if first else ("without", "with")):
                one(kind)
        n, secs = self._loop(pair, lambda: [v.clear() for v in times.values()])
        diffs = [a - b for a, b in zip(times["with"], times["without"])]
        mean = sum(diffs) / len(diffs)
        sd = math.sqrt(sum((x - mean) ** 2 for x in diffs) / (len(diffs) - 1)) if len(diffs) > 1 else float("inf")
        return {"steps": n, "pairs": n, "seconds": secs, "batch": [list(map(str, x)) for x in sig],
                "seconds_per_step": sum(times["without"]) / n, "with_seconds_per_step": sum(times["with"]) / n,
                "cost_per_step": mean, "cost_stderr": sd / math.sqrt(len(diffs)), "with_steps_run": run["with"]}

    def mode_collective(self):
        """A DDP model's gradient all-reduce alone: its buckets' bytes, in the
        gradients' dtype, on their device, over its process group, all
        launched as DDP launches them, then waited for. Its time in the loop
        cannot be taken apart from the backward it overlaps: the step's cost
        of it comes from mode no_collective's pairs; this is its time in
        flight, alone."""
        t = _torch()
        buckets = _ddp_buckets(self.ddp)
        dev = next((p.device for p in self.ddp.parameters() if p.requires_grad), None)
        flats = [t.rand(n // _elem_size(dt), dtype=dt, device=dev) for n, dt in buckets]
        group = getattr(self.ddp, "process_group", None)

        def reduce_all():
            works = [t.distributed.all_reduce(f, group=group, async_op=True) for f in flats]
            for w in works:
                w.wait()
        n, secs = self._loop(reduce_all)
        return {"steps": n, "seconds": secs, "seconds_per_step": secs / n, "calls_per_step": len(flats),
                "bytes_per_step": sum(f.numel() * f.element_size() for f in flats),
                "bucket_bytes": [f.numel() * f.element_size() for f in flats], "dtype": _DTYPE_NAMES.get(str(flats[0].dtype), "fp32")}

    def mode_transfer(self):
        """The host-to-device copy alone, on the full loop's host batches in
        their mix (_BatchMix), or one real host batch."""
        if self.host_batch is None:
            self.host_batch = next(iter(self.loader))
        mix = self.mix.kept()
        if len(mix) < 2:
            mix = [(self.host_batch, 1.0)]
        pick = _weighted_cycle([share for _, share in mix])
        n, secs = self._loop(lambda: self.transfer(mix[pick()][0]))
        hb = mix[0][0]
        return {"copies": n, "seconds": secs, "seconds_per_copy": secs / n,
                "bytes_per_copy": sum(batch_bytes(b) * share for b, share in mix),
                "pinned": _pinned(hb), "tensors": sum(1 for _ in _leaves(hb))}

    def _count_flops(self):
        """FLOPs of one step as torch's profiler counts them (matmuls forward
        and backward, forward convolutions) with the convolutions it leaves
        out (_conv_flops_torch_leaves_out), or the user's figure. A loop whose
        batches take several shapes (_BatchMix) counts one step of each, in
        their shares: the step alone runs them so, and the full loop's time
        is theirs."""
        if self.flops_per_step:
            return float(self.flops_per_step), "given"
        t = _torch()
        if not self.count_flops or t is None:
            return 0.0, None
        flops = conv = 0.0
        # the commonest shape first: its dtypes, sparse products and split are the step's
        for i, (d, share) in enumerate(sorted(self._device_mix(), key=lambda x: -x[1])):
            counted = self._profile_flops(t, d, i == 0)
            if counted is None:
                return 0.0, None
            flops += share * counted[0]
            conv += share * counted[1]
        self.conv_flops = conv
        return flops, ("torch profiler (with_flops: matmuls forward and backward, convolutions forward; "
                       "mlbench: transposed convolutions, and backward convolutions at twice their "
                       "forward's; no attention, normalization or elementwise op)" if flops else None)

    def _plain_step_us(self, d, n=3, budget_s=2.0):
        """The median of n steps on batch d without the profiler (us), fewer
        once they took budget_s (a 4.6-s step of gat's is timed once): what
        the profiled one costs beyond it is the profiler's (_flop_share)."""
        times = []
        while len(times) < n and sum(times) < budget_s * 1e6:
            start = time.perf_counter()
            self.step(d)
            times.append((time.perf_counter() - start) * 1e6)
        return sorted(times)[len(times) // 2]

    def _profile_flops(self, t, d, main):
        """(FLOPs, of them the convolutions') of one profiled step on batch d,
        or None when they cannot be counted (flops_why says why); the main
        batch also sets the math dtype and, on the CPU, the FLOP ops' share."""
        plain_us = self._plain_step_us(d) if main and not self.cuda else None
        watch = _MathDtypes(max_ops=FLOP_COUNT_MAX_OPS)
        try:
            with t.autograd.profiler.profile(with_flops=True, record_shapes=True) as prof, watch:
                start = time.perf_counter()
                self.step(d)
                self._sync()
                wall_us = (time.perf_counter() - start) * 1e6
                self._drain_gloo()
        except _TooManyOps:
            self.flops_why = ("one step dispatches more than %d ops, which the profiler would keep in memory with "
                              "their shapes (an LBFGS step of pytorch/examples' time_sequence_prediction, about a "
                              "million ops, held 23 GB before it was stopped): stopped there, not counted; give "
                              "flops_per_step (the step was left where it stopped)" % FLOP_COUNT_MAX_OPS)
            self._say("FLOPs not counted: %s", self.flops_why)
            return None
        except Exception as exc:  # a profiler that cannot count is no error of the user's code
            self.flops_why = "%s: %s" % (type(exc).__name__, exc)
            self._say("FLOPs not counted: %s", exc)
            return None
        if main:
            self.math_dtype = watch.dominant()
        counted = _outermost_flop_events(prof.function_events)
        sparse = _sparse_flop_events(prof.function_events, counted)
        if sparse:
            counted = [e for e in counted if id(e) not in sparse]
            said = getattr(self, "sparse_matmuls", None)
            hold = self._dense_flops_hold(prof.function_events, sparse, sum(e.flops for e in counted))
            if not main:   # the figures the stage file gives are the main batch's
                self.sparse_matmuls = said
            if not hold:
                return None
        flops = sum(e.flops for e in counted)
        conv_extra = _conv_flops_torch_leaves_out(prof.function_events)
        if main and not self.cuda and flops:
            self.flop_share, self.profiler_op_us = _flop_share(prof.function_events, counted, wall_us,
                                                               plain_us)
        return (float(flops + conv_extra),
                float(sum(e.flops for e in counted if "conv" in e.name.lower()) + conv_extra))

    def _drain_gloo(self):
        """Inside the profiler, after a step whose collectives ran on gloo:
        waits until gloo's worker threads have ended those collectives'
        profiler events. gloo completes a collective's future (DDP's step
        returns) before its worker thread ends the collective's event
        (ProcessGroupGloo::AsyncWork::finishWorkGloo: the future, then
        Work::finish and its end callback), and a profiler stopped in between
        reads an event being written: 1 run in 30 to 100 of a two-rank gloo DDP
        loop aborted in the profiler's exit on torch 1.13 ("munmap_chunk():
        invalid pointer"; tests/simplify_test.py's trace, which waits the same
        way). gloo's barrier waits on every earlier work of the group, end
        callbacks included. Only where the step meets the other ranks itself
        (a DDP model or a collective given): every rank is then at this point
        together, so the barrier is matched."""
        w = self.world
        if w.size > 1 and w.backend == "gloo" and (self.ddp is not None or self.collective is not None):
            _torch().distributed.barrier()

    def _dense_flops_hold(self, events, sparse, dense_flops):
        """Whether the step's dense FLOPs still describe its compute once its
        sparse matmuls are left out (_sparse_flop_events). On the CPU they do:
        the sparse products' time goes with the other ops when the compute is
        split by time (_split_compute). On a GPU their share is not timed here:
        the compute keeps its time only, and flops_not_counted says why."""
        share = _busy_us([e for e in events if id(e) in sparse]) / (_busy_us(events) or 1.0)
        self.sparse_matmuls = {"calls_per_step": len(sparse), "share_of_step_ops": None if self.cuda else share,
                               "dense_flops_per_step": dense_flops,
                               "flops_by_dense_shape": float(sum(e.flops for e in events if id(e) in sparse))}
        if not self.cuda:
            return True
        self.flops_why = ("%d sparse matmul%s per step (torch.spmm, a sparse operand in torch.mm), whose time on a "
                          "GPU is not timed here: a sparse product's work is its stored entries', not its dense "
                          "shape's (torch's profiler counts the shape's), and the dense GEMM ceiling does not bound "
                          "it; the step's dense FLOPs (%s) are in simplify.sparse_matmuls; give flops_per_step to "
                          "hold the step against the GEMM ceiling anyway"
                          % (len(sparse), "" if len(sparse) == 1 else "s", _size(dense_flops, "FLOP")))
        self._say("FLOPs not counted: %s", self.flops_why)
        return False

    # -- driving --------------------------------------------------------------------------------
    def plan(self):
        # the full loop first: the in-loop figures every stage needs
        modes = ["full", "loader"]
        if self.has_transfer:
            modes.append("transfer")
        modes.append("step")
        if self.optimizer is not None:
            modes.append("no_optimizer")
        if self.collective is not None or self.ddp is not None:
            modes.append("no_collective")
        if self.ddp is not None:
            modes.append("collective")
        return modes

    def run(self):
        """Runs every mode; the stage file is rewritten after each one, so an
        interruption leaves the modes done so far in a valid file."""
        old = signal.getsignal(signal.SIGTERM) if _main_thread() else None
        if _main_thread():
            signal.signal(signal.SIGTERM, _raise_interrupt)
        self.watch = _FileWatch(own=[self.out])
        try:
            self.watch.install()
            try:
                self.delivered = _Delivered()
                self.keeper = _KeeperProcess(self.watch, self.kernel, self.delivered)
            except OSError as e:
                self._keeper_lost(e)
            for mode in self.plan():
                self._run_mode(mode)
                if self.errors or self.interrupted:
                    break
            if not self.errors and not self.interrupted:
                self._current = "count_flops"   # one more step, under the profiler: no mode's
                self.flops, self.flops_source = self._guarded("step", self._count_flops)
        finally:
            if self.keeper is not None:
                self.keeper.close()
                self.keeper = None
            self.watch.close()
            self.watch = None
            if _main_thread() and old is not None:
                signal.signal(signal.SIGTERM, old)
        doc = self.document()
        if self.out:
            write_atomic(self.out, doc)
        return doc

    def _guarded(self, mode, fn):
        try:
            return fn()
        except (KeyboardInterrupt, ModeTimeout):
            raise
        except Exception as exc:
            self.errors.append({"mode": mode, "error": _error_words(exc), "traceback": traceback.format_exc()})
            self._say("mode '%s' failed in your code: %s", mode, _error_words(exc))
            return 0.0, None

    def _run_mode(self, mode):
        self._say("mode %s: %.1f s warm-up, %.1f s measured", mode, self.warmup, self.seconds)
        self._current = mode
        try:
            with _Bound(self.hard_bound) as self._bound:
                self.modes[mode] = getattr(self, "mode_" + mode)()
            if mode not in DATASET_MODES:
                self.modes[mode]["cache"] = {"state": "not read",
                                             "why": "this mode reuses one batch the loader made: it reads no data"}
        except KeyboardInterrupt:
            self.interrupted = mode
            self._say("interrupted in mode '%s': writing the modes done so far", mode)
        except ModeTimeout as exc:
            self.errors.append({"mode": mode, "error": "ModeTimeout: %s" % exc, "traceback": ""})
            self._say("mode '%s' %s", mode, exc)
        except Exception as exc:
            self.errors.append({"mode": mode, "error": _error_words(exc), "traceback": traceback.format_exc()})
            self._say("mode '%s' failed in your code: %s", mode, _error_words(exc))
        if self.out and not self.interrupted:
            try:
                write_atomic(self.out, self.document())
            except Exception as exc:
                self._say("cannot write %s: %s", self.out, exc)
                raise

    # -- the stage file -------------------------------------------------------------------------
    def document(self):
        return build_document(self)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)


_DTYPE_NAMES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16", "torch.float64": "fp64"}


class _TooManyOps(BaseException):
    """Stops the FLOP-counting step (_MathDtypes with max_ops): a
    BaseException, so that the user's `except Exception` lets it through."""


# The most ops the FLOP-counting step may dispatch under the profiler: it keeps every event with its shapes, about
# 20 kB each (23 GB for the million ops of one LBFGS step); a ResNet-50 step dispatches a few thousand.
FLOP_COUNT_MAX_OPS = 100000


class _MathDtypes:
    """The dtype the step's matrix math runs in, as the dispatcher sees it:
    after autocast has cast the inputs (a model of fp32 parameters under
    torch.autocast(dtype=torch.bfloat16) multiplies in bf16, and its ceiling
    is the bf16 one, not fp32's). A context manager around one step; records
    the matmul calls (forward and backward) and the forward convolutions,
    weighted by their multiply-adds (output elements x the inner dimension). dominant() is None when it saw
    none or this torch has no dispatch modes (the caller then falls back to
    the parameters' dtype)."""

    _INNER = {"mm": (0, -1), "bmm": (0, -1), "addmm": (1, -1), "baddbmm": (1, -1), "_scaled_mm": (0, -1)}

    def __init__(self, max_ops=None):
        self.work = {}
        self.ops = 0
        self.max_ops = max_ops   # more dispatched ops than this raise _TooManyOps
        self._mode = None
        t = _torch()
        try:
            from torch.utils._python_dispatch import TorchDispatchMode
        except Exception:
            return
        watch = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                watch.ops += 1
                if watch.max_ops is not None and watch.ops > watch.max_ops:
                    raise _TooManyOps()
                out = func(*args, **(kwargs or {}))
                try:
                    watch._record(t, func, args, out)
                except Exception:  # counting must never break the user's step
                    pass
                return out

        self._mode = Mode()

    def _record(self, t, func, args, out):
        name = func.__name__.split(".")[0] if hasattr(func, "__name__") else str(func)
        if name == "convolution":
            w = args[1]
            inner = w.numel() // max(w.shape[0], 1)
        elif name in self._INNER:
            arg, dim = self._INNER[name]
            inner = args[arg].shape[dim]
        else:
            return
        if not isinstance(out, t.Tensor):
            return
        operand = args[1] if name in ("addmm", "baddbmm") else args[0]  # addmm's first is the bias
        dt = _DTYPE_NAMES.get(str(operand.dtype))
        if dt:
            self.work[dt] = self.work.get(dt, 0) + out.numel() * inner

    def __enter__(self):
        if self._mode is not None:
            self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        if self._mode is not None:
            self._mode.__exit__(*exc)
        return False

    def dominant(self):
        return max(self.work, key=self.work.get) if self.work else None


def _dtype_name(optimizer, batch):
    t = _torch()
    names = _DTYPE_NAMES
    if optimizer is not None:
        for g in optimizer.param_groups:
            for p in g["params"]:
                return names.get(str(p.dtype), "fp32")
    if t is not None:
        for x in _leaves(batch):
            if isinstance(x, t.Tensor) and x.is_floating_point():
                return names.get(str(x.dtype), "fp32")
    return "fp32"


def build_document(s):
    """The stage file (version 2) from the modes run so far. Stages need the
    full loop (their in-loop time); without it the file holds the isolated
    figures under "simplify" and no stage, and says so."""
    modes = s.modes
    doc = {"format": FORMAT, "version": VERSION}
    info = {"modes": modes, "plan": s.plan(), "device": str(s.device) if s.device is not None else "cpu",
            "seconds_per_mode": s.seconds, "warmup_seconds": s.warmup}
    info.update(_cpu_threads(s))
    if s.errors:
        info["errors"] = s.errors
    if s.interrupted:
        info["interrupted_in"] = s.interrupted
    info["complete"] = not s.errors and not s.interrupted and all(m in modes for m in s.plan())
    if s.dataset is not None:
        info["dataset"] = s.dataset
    if s.world.size > 1 or s.ddp is not None:
        info["distributed"] = _distributed_info(s)
    if getattr(s, "flops_why", None):
        info["flops_not_counted"] = s.flops_why
    if getattr(s, "sparse_matmuls", None):
        info["sparse_matmuls"] = s.sparse_matmuls
    if len(s.mix.shapes) > 1:
        info["batch_mix"] = dict(s.mix.describe(), how=(
            "the full loop's measured batches took several shapes: the modes that stub the loader ran the step "
            "(and the copy) on one batch of each held shape in their shares, and the FLOPs counted are their "
            "mean"))
    if getattr(s, "flop_share", None) is not None and getattr(s, "flops", 0):
        info["compute_split"] = {"flop_ops_share": s.flop_share, "profiler_us_per_op": s.profiler_op_us,
                                 "how": "the share of the step's compute (less its optimizer) in the ops whose FLOPs "
                                        "are counted (matmuls, convolutions), each instant once, from one profiled "
                                        "step: each side's time less the profiler's own cost per op it holds "
                                        "(the profiled step's excess over the same step unprofiled, per op), "
                                        "against the unprofiled step; forward+backward's time in the loop and "
                                        "alone is split by it"}
    dl = _data_loading(s)
    if dl is not None:
        info["data_loading"] = dl
    full = modes.get("full")
    stages = []
    if full:
        n = full["steps"]
        doc["run"] = {"steps": n, "step_seconds": full["step_seconds"],
                      "batches_per_second": full["batches_per_second"]}
        stages = _stages(s, full, dl)
    if stages:
        doc["stages"] = stages
    overlap = _overlap(s)
    if overlap:
        info["overlap"] = overlap
    cpu = _cpu_floor(s)
    if cpu:
        info["cpu"] = cpu
    doc["simplify"] = info
    return doc


def _cpus_allowed():
    """The CPUs this process may run on (its affinity), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _cpu_threads(s):
    """The CPUs this process may run on and torch's threads per rank, with
    the ranks on this machine: whether a CPU step leaves cores idle (gap's
    "Use all cores" remedy is for those only)."""
    t = _torch()
    cpus = _cpus_allowed()
    out = {"cpus_allowed": cpus, "host_ranks": s.world.host_ranks}
    if t is not None:
        out["torch_threads"] = t.get_num_threads()
    return out


def _cpu_share(s):
    """The CPUs a rank's CPU compute may use when ranks share this machine:
    its share of the CPUs it may run on (each rank's BLAS takes every core it
    is given, and they take turns: minGPT's two gloo ranks on this 2-vCPU VM
    were each held against both cores, its loss read twice what it was);
    None for one rank or a GPU step."""
    if s.cuda:
        return None
    info = _cpu_threads(s)
    ranks, cpus = info.get("host_ranks") or 1, info.get("cpus_allowed")
    return max(1, cpus // ranks) if ranks > 1 and cpus else None


def _distributed_info(s):
    """The ranks, and for a DDP model its gradient all-reduce: the bytes of
    the gradients it reduces each step (every parameter that wants one)."""
    d = s.world.info()
    d["steps_agreed"] = s.world.size > 1
    if s.ddp is not None:
        grads = [p for p in s.ddp.parameters() if p.requires_grad]
        d["collective"] = {
            "kind": "DistributedDataParallel", "gradient_bytes_per_step": sum(p.numel() * p.element_size()
                                                                              for p in grads),
            "parameters": len(grads), "stub": "no_sync()",
            "how": "DDP all-reduces the gradients inside backward, in buckets, on the backend's threads: no call "
                   "to time in the loop. Its stage's time is its buckets all-reduced alone (mode collective: its "
                   "time in flight, for its rate); its exposed time, what it costs the step: the mean difference "
                   "of steps with it and inside no_sync() run in alternating pairs (mode no_collective), 0 when "
                   "negative"}
    return d


def dataset_info(keeper, cold):
    """The dataset's files against the memory available: whether a real run
    can hold it in the page cache (then only its first epoch is cold)."""
    total = keeper.dataset_bytes()
    avail = _mem_available()
    files = sorted(keeper.watch.files)
    return {"files": len(files), "bytes": total, "examples": files[:3], "mem_available_bytes": avail,
            "fits_in_memory": (total < avail) if (avail and files) else None, "cache": "cold" if cold else "warm",
            "mapped_files": len(keeper.watch.mapped()), "devices": keeper.devices,
            # LMDB's map (its data file's name): its readahead is a flag of lmdb.open, not the user's madvise
            "lmdb": any(os.path.basename(p) == "data.mdb" for p in keeper.watch.mapped())}


def _data_loading(s):
    """What the loader mode says about data loading, said once: where its
    bytes come from (storage, the page cache through read() or a mapping,
    nowhere), how many it reads for the bytes it delivers, and what bounds it
    (the device, the CPU, or neither). The stage, the summary and the evidence
    are all made from this."""
    ld = s.modes.get("loader")
    if not ld or not ld.get("batches") or not ld.get("io_counted", True):
        return None
    n = ld["batches"]
    per = ld["seconds_per_batch"]
    delivered = ld["bytes_in_batches"] / n
    storage = ld["read_bytes"] / n
    # what read() returned where the dataset is read: in the workers (the loop's own rchar holds the batches
    # they hand over through a pipe), or in the loop without workers
    reads = _read_call_bytes(ld) / n
    faults = ld.get("major_faults", 0) / n
    # the mean over the batches the loader made (an epoch's short last batch counts), or one batch's
    items = ld["items_in_batches"] / n if ld.get("items_in_batches") else _item_count(s.host_batch)
    workers = ld.get("workers", 0)
    cpu = (ld["worker_cpu_seconds"] + ld["main_cpu_seconds"]) / n
    # the busier side of the pipeline: the workers (on as many CPUs as they can use) or the main process
    # (it does all the work without workers); with the time they waited for a CPU others held, what they
    # wanted of it
    wwait, mwait = ld.get("worker_runqueue_seconds", 0.0), ld.get("main_runqueue_seconds", 0.0)
    if per <= 0:
        cpu_share = wanted = None
    elif workers:
        lanes = min(workers, _cpus_allowed()) * per * n
        cpu_share = min(max(ld["worker_cpu_seconds"] / lanes, ld["main_cpu_seconds"] / n / per), 1.0)
        wanted = min(max((ld["worker_cpu_seconds"] + wwait) / lanes,
                         (ld["main_cpu_seconds"] + mwait) / n / per), 1.0)
    else:  # cpu is per batch already; the waits are the window's
        cpu_share = min(cpu / per, 1.0)
        wanted = min((cpu + mwait / n) / per, 1.0)
    machine = ld.get("machine_cpu_busy_share")
    # the runner's own cache keeper beside the loader: its CPU is a share of the machine the loop did not have
    # (from the mode's start to its end, so at most what it took in the timed window)
    keeper = (ld.get("cache") or {}).get("keeper_cpu_seconds")
    helper = keeper / (ld["seconds"] * (os.cpu_count() or 1)) if keeper is not None and ld.get("seconds") else None
    dev = ld.get("device")
    dev_share = None
    if dev and dev.get("busy_share") is not None:
        dev_share = dev["busy_share"] * (dev["ours"] or 0) if dev["read_bytes"] else 0.0
    mapped = bool((s.dataset or {}).get("mapped_files"))
    out = {"batches": n, "seconds_per_batch": per, "delivered_bytes_per_batch": delivered,
           "storage_bytes_per_batch": storage, "read_call_bytes_per_batch": reads,
           "major_faults_per_batch": faults, "items_per_batch": items or None,
           "amplification": storage / delivered if delivered else None,
           "cpu_seconds_per_batch": cpu,
           # the loader's CPU per item: in its workers (the dataset's __getitem__, collation, the hand-over),
           # or in the main process when it has none
           "cpu_seconds_per_item": (ld["worker_cpu_seconds"] / n if workers else cpu) / items if items else None,
           "main_cpu_seconds_per_batch": ld["main_cpu_seconds"] / n,
           # per batch with the CPUs to itself: its CPU per batch spread over the processes that work at once,
           # and all of it over the CPUs it may use (two workers and the main process on two CPUs share them:
           # a tar-shard loader's 14 ms of CPU a batch read "about 5.5 ms" there, the main process given a CPU
           # of its own beside the workers)
           "cpu_alone_seconds_per_batch": (max(ld["worker_cpu_seconds"] / max(1, min(workers, _cpus_allowed())),
                                               ld["main_cpu_seconds"],
                                               (ld["worker_cpu_seconds"] + ld["main_cpu_seconds"]) / _cpus_allowed())
                                           if workers else cpu * n) / n,
           "cpu_busy_share": cpu_share, "cpu_wanted_share": wanted, "machine_cpu_busy_share": machine,
           "helper_cpu_share": helper,
           "device_busy_share": dev_share,
           "workers": workers,
           # workers forked again in the window: their start-up is in its CPU (96 files, 12 batches an epoch:
           # 26 epochs in 1.5 s, 7.1 ms of CPU an item against 4.5 between items)
           "worker_forks_in_window": (ld.get("epochs_in_window") or 0) * workers
           if workers and not ld.get("persistent_workers") else 0,
           "cache": (ld.get("cache") or {}).get("state"), "pattern": s.pattern or _guess_pattern(s.loader)}
    # where the bytes come from
    if storage >= max(READ_SHARE_MIN * delivered, READ_FLOOR) and storage >= PAGE_CACHE_SHARE * reads:
        source = "storage"
    elif reads >= max(READ_SHARE_MIN * delivered, READ_FLOOR):
        source = "page cache (read)"
    elif mapped:
        source = "page cache (mapped)"
    else:
        source = "none"
    out["source"] = source
    # what its CPU does, in the words every view uses (mlbench gap reads them from the stage file)
    out["cpu_work"] = {"page cache (mapped)": "copying pages of a memory-mapped file out of the page cache",
                       "page cache (read)": "reading from the page cache, decoding, augmenting",
                       "none": "generating its batches (it reads nothing)"}.get(source, "reading, decoding, augmenting")
    # what bounds it: the share of its time the device was busy for it, or its processes on a CPU; both at
    # once, both (one process reads and computes in turns: nanoGPT's remedied loader, CPU 63% and device 54% of
    # its time, was named CPU-bound, its reads held to no ceiling)
    if dev_share is not None and dev_share >= BUSY and cpu_share is not None and cpu_share >= BUSY:
        bound = "cpu+storage"
    elif dev_share is not None and dev_share >= BUSY and dev_share >= (cpu_share or 0):
        bound = "storage"
    elif cpu_share is not None and cpu_share >= BUSY:
        bound = "cpu"
    elif wanted is not None and wanted >= BUSY:
        bound = "cpu"           # on a CPU or waiting for one that other work held: CPU-bound all the same
    elif machine is not None and machine >= CONTENDED and wanted is not None and wanted >= BUSY / 2 and \
            cpu_share >= 2 * (dev_share or 0):
        # every CPU of the machine busy with other work: the loader's processes ran, or waited to, a good
        # part of the time, the rest lost to the hand-overs the scheduler delays; its CPU, not the device
        bound = "cpu"
        out["contended"] = True
    elif dev_share is None and source == "storage":
        bound = "storage"       # no device figures (no block device): the bytes say storage, the CPU idles
    else:
        bound = "waiting"
    out["bound"] = bound
    # the block size the device served
    if source == "storage":
        if dev and dev.get("mean_request_bytes") and (dev.get("ours") or 0) >= DEVICE_OURS:
            out["block_size"] = int(round(dev["mean_request_bytes"]))
            out["block_size_source"] = ("the mean read request %s served over the loader mode (/proc/diskstats: "
                                        "sectors read x 512 / reads completed)" % "+".join(dev["devices"]))
        elif items:
            out["block_size"] = max(1, int(round(storage / items)))
            out["block_size_source"] = "bytes from storage per sample (%s)" % (
                "the loader read only %s of the device's bytes: its mean request is others' as much" % _pct(
                    dev["ours"]) if dev and dev.get("read_bytes") else "no block device figures")
    # read amplification: storage bytes far above the bytes delivered
    amp = out["amplification"]
    out["amplified"] = bool(source == "storage" and amp is not None and amp >= AMPLIFIED)
    if out["amplified"]:
        ra = ", ".join("read_ahead_kb %d on %s" % (kb, d) for d, kb in sorted((dev or {}).get("read_ahead_kb",
                                                                                               {}).items()))
        disks = sorted((dev or {}).get("read_ahead_kb", {})) or ["<disk>"]
        smaller = ("a smaller readahead (%s now: /sys/block/%s/queue/read_ahead_kb, or blockdev --setra)"
                   % (ra, disks[0]) if ra else "a smaller readahead (/sys/block/<disk>/queue/read_ahead_kb)")
        shards = ("a sequential sharded format (WebDataset or tar shards, MosaicML streaming) with a shuffle buffer "
                  "over sequential reads")
        if faults > 0 and reads < storage / 2 and (s.dataset or {}).get("lmdb"):
            # LMDB maps its file itself and advises it MADV_RANDOM when opened without readahead (an LMDB of
            # 64 KiB records, two workers, cold, this VM: 213 -> 22 ms a batch, 294 MB -> 2.2 MB from storage)
            out["mechanism"] = "readahead around the page faults of LMDB's memory map"
            out["remedies"] = ["open the LMDB without readahead: lmdb.open(path, readahead=False) (MDB_NORDAHEAD in "
                               "C: LMDB then advises its map MADV_RANDOM)", smaller, shards]
        elif faults > 0 and reads < storage / 2:
            out["mechanism"] = "readahead around the page faults of a memory-mapped file"
            out["remedies"] = ["madvise(MADV_RANDOM) on the mapping (Python: m.madvise(mmap.MADV_RANDOM); "
                               "numpy.memmap: a._mmap.madvise(mmap.MADV_RANDOM))", smaller, shards]
        elif reads < storage / 2:
            out["mechanism"] = "readahead beyond the bytes read() asked for"
            out["remedies"] = ["posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM) on the files", smaller, shards]
        else:
            out["mechanism"] = "the loader reads more than it delivers (whole files or records for a part of each)"
            out["remedies"] = ["read only the bytes a sample uses (a crop, a field, a range), or store samples at "
                               "the size they are used", shards]
        if "readahead" in out["mechanism"] and out["pattern"] != "random" and not s.pattern:
            # readahead wasted on a pattern guessed sequential (no shuffling sampler: a plain iterable, or a
            # dataset that seeks itself): sequential reads use the readahead they cause, so these were not
            out["pattern"] = "random"
            out["pattern_source"] = ("the reads: readahead %s times what a batch holds is not used by reads in "
                                     "order (no shuffling sampler said so)" % _ratio(amp))
        if out["pattern"] == "random" and "readahead" in out["mechanism"]:
            out["mechanism"] += " read at random offsets"
    # reads at random offsets that no readahead amplified (madvise(MADV_RANDOM), pread of records) behind a
    # sampler that says nothing: where their pages landed says random (nanoGPT's memmap with MADV_RANDOM, a
    # plain iterable, was held against the sequential disk ceiling at its 4 kB page faults)
    sc = (ld.get("cache") or {}).get("scatter") or {}
    if source == "storage" and out["pattern"] != "random" and not s.pattern and \
            sc.get("chunks", 0) >= SCATTERED * max(sc.get("chunks_in_order", 0), 1):
        out["pattern"] = "random"
        out["pattern_source"] = ("where its reads landed: the pages read between two of the cache keeper's looks "
                                 "lay in %d chunks of its files where reads in order fill %d (%d looks, %s)"
                                 % (sc["chunks"], sc["chunks_in_order"], sc["ticks"], _size(sc["bytes"])))
    return out


def _loop_storage_per_step(full):
    """Bytes the full loop's processes read from storage per step over its
    measured window (None: not counted, or nothing: then the loader's own)."""
    if not full.get("steps") or not full.get("read_bytes") or not full.get("io_counted", True):
        return None
    return full["read_bytes"] / full["steps"]


def _loader_stage(s, full, dl):
    ld = s.modes.get("loader")
    # A loader with workers works beside the step: in the loop it delivers
    # one batch per step, so its in-loop time is the step's, and the step
    # waits for it only while next() blocks (its exposed time). Without
    # workers (num_workers=0, a plain iterable) it runs inside next(): its
    # time in the loop is that wait (word_language_model's batches, 72 us
    # of a 303 ms step, read 303 ms "in loop").
    exposed = min(max(full["data_wait_per_step"], 0.0), full["step_seconds"])
    in_process = bool(ld) and not ld.get("workers")
    st = {"name": "data loading", "seconds_per_step": exposed if in_process else full["step_seconds"],
          "exposed_seconds_per_step": exposed}
    if ld:
        st["isolated_seconds_per_step"] = ld["seconds_per_batch"]
    if dl is None or dl["bound"] == "cpu" or dl["source"] == "none":
        # CPU work (decoding, generating) or not measured alone: time only
        st.update(component="other", role="data", device="cpu")
    elif dl["source"] == "storage":
        # the bytes the loop itself read from storage a step, which its time is for; the loader's alone beside
        # them (an LMDB read by two workers: 229 MB a step in the loop, 305 MB a batch alone, whose bytes over
        # the loop's time read "faster than the disk's best case")
        loop = _loop_storage_per_step(full)
        st.update(component="disk", pattern=dl["pattern"], device="cpu",
                  bytes_per_step=loop if loop else dl["storage_bytes_per_batch"])
        if loop and ld:
            st["isolated_bytes_per_step"] = dl["storage_bytes_per_batch"]
        if dl.get("block_size"):
            st["block_size"] = dl["block_size"]
    elif dl["source"] == "page cache (read)":
        st.update(component="hostmem", bytes_per_step=dl["read_call_bytes_per_batch"], device="cpu")
    else:   # copied out of a mapping whose pages are cached: at least the bytes it delivers
        st.update(component="hostmem", bytes_per_step=max(dl["delivered_bytes_per_batch"], 1), device="cpu")
    return st


def _nested_copies(events):
    """The ids of events inside an event of the same name and input shapes on
    their thread (autocast re-dispatches aten::conv2d inside aten::conv2d):
    by their time ranges, which hold where cpu_parent does not (the legacy
    profiler nests by microsecond timestamps, and an op starting and ending in
    its parent's microseconds was left without a parent in 3 of 8 runs). One
    that starts inside the other is inside it, whatever its end says: the
    legacy profiler closed the inner conv2d 1 us after the outer one in 3 of
    1000 steps on a busy 2-vCPU VM (2026-11-30), and a second call on one
    thread starts only once the first has ended."""
    def key(e):
        return (e.name, e.thread, str(getattr(e, "input_shapes", None)))
    inner = set()
    outer = {}
    for e in sorted(events, key=lambda e: (e.time_range.start, -e.time_range.end)):
        o = outer.get(key(e))
        if o is not None and o.time_range.start <= e.time_range.start and (
                e.time_range.start < o.time_range.end or e.time_range.end <= o.time_range.end):
            inner.add(id(e))
        else:
            outer[key(e)] = e
    return inner


# Ops only a sparse tensor calls ("sparse" in the name: _sparse_addmm, sparse_dim, _sparse_mm; or these): a
# matmul with one of them inside it multiplies a sparse operand.
_SPARSE_ONLY_OPS = {"_nnz", "_indices", "_values", "indices", "values", "coalesce", "is_coalesced",
                    "crow_indices", "col_indices", "ccol_indices", "row_indices"}


def _sparse_marker(name):
    return name.startswith("aten::") and ("sparse" in name[6:] or name[6:] in _SPARSE_ONLY_OPS)


def _sparse_flop_events(events, counted):
    """ids of the counted events (_outermost_flop_events) that multiply a
    sparse operand: a sparse-only op runs inside them. torch's with_flops
    counts torch.spmm and torch.mm on a sparse tensor by their dense shapes:
    pytorch/examples' gcn on a Cora-sized graph (2708 nodes, 8128 stored
    adjacency entries) read 1.85 GFLOP per step, "119% of the GEMM ceiling",
    for about 11 MFLOP of work (8 of it sparse). Inside is by the parent chain, or by
    time on the same thread for an event the profiler left without a parent
    (_nested_copies says why)."""
    ids = {id(e): e for e in counted}
    out = set()
    for m in events:
        if not _sparse_marker(m.name):
            continue
        p = m.cpu_parent
        while p is not None and id(p) not in ids:
            p = p.cpu_parent
        if p is not None:
            out.add(id(p))
            continue
        if m.cpu_parent is None:
            for e in counted:
                if e.thread == m.thread and e.time_range.start <= m.time_range.start and \
                        m.time_range.end <= e.time_range.end and m.time_range.start < e.time_range.end:
                    out.add(id(e))
    return out


_MATMUL_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
               "aten::_scaled_mm"}


def _matmul_or_conv(name):
    """The ops whose FLOPs the compute stage holds against the GEMM or conv
    ceiling. torch's with_flops also counts aten::add and aten::mul (one FLOP
    an element): elementwise work, bound by memory, not by those ceilings
    (six x * 1.5 + 0.5 over a 2048 x 2048 input read 50 MFLOP of "matmul"
    work)."""
    return name in _MATMUL_OPS or ("conv" in name and "convert" not in name)   # not _convert_indices_from_*


def _busy_us(events):
    """Microseconds in which at least one of the events ran, per thread
    (nested and overlapping events once)."""
    by_thread = {}
    for e in events:
        by_thread.setdefault(e.thread, []).append((e.time_range.start, e.time_range.end))
    total = 0.0
    for spans in by_thread.values():
        spans.sort()
        end = None
        for a, b in spans:
            if end is None or a > end:
                total += b - a
                end = b
            elif b > end:
                total += b - end
                end = b
    return total


def _inside(events, spans):
    """How many of the events start inside one of the spans' events on the
    same thread (the spans themselves included)."""
    by_thread = {}
    for e in spans:
        by_thread.setdefault(e.thread, []).append((e.time_range.start, e.time_range.end))
    return sum(1 for e in events if any(a <= e.time_range.start < b for a, b in by_thread.get(e.thread, ())))


def _flop_share(events, counted, wall_us, plain_us=None):
    """(share, the profiler's cost per op in us): the share of a CPU step's
    compute (the step less its optimizer's steps) that its FLOP-counted ops
    take: the matmuls and convolutions torch counted (counted), its backward
    and transposed convolutions (whose FLOPs mlbench adds). The rest is
    elementwise, softmax, normalization, indexing and Python:
    pytorch/examples' gat (attention over a 2708 x 2708 graph, 8 heads) spent
    most of a 4.7 s step there, and read as one GEMM stage "at 5.5% of its
    ceiling, 17.99x" when its matmuls were at their ceiling.

    The profiler costs every op it records about the same: the profiled step
    (wall_us) is longer than the same step unprofiled (plain_us) by that cost
    times its ops, most of it on the many small ones. So each side keeps its
    own time less that cost per op it holds, against the unprofiled step:
    mnist_rnn's LSTM (3430 ops a step, 91 of them matmuls) read its matmuls
    as 17.5% of a 6.5 ms step, 198 GFLOP/s "at 95% of the GEMM ceiling",
    where the same products timed alone took about 4.3 ms. Each side keeps
    at least its profiled time scaled to the unprofiled step. Without
    plain_us, the share of the profiled step: an estimate, said as one."""
    work = list(counted) + [e for e in events if e.name == "aten::convolution_backward" or
                            e.name.startswith("aten::conv_transpose")]
    opt = [e for e in events if e.name.startswith("Optimizer.step#")]
    if plain_us and 0 < plain_us < wall_us and events:
        cost = (wall_us - plain_us) / len(events)

        def own_us(spans):
            # never below the profiled time scaled to the unprofiled step (the cost spread in proportion to time):
            # ops as short as the cost per op (pytorch/examples' regression: a Linear(4, 1)) would come out at
            # nothing, "512 GFLOP/s"
            busy = _busy_us(spans)
            return max(busy - cost * _inside(events, spans), busy * plain_us / wall_us)
        own = own_us(work)
        compute = plain_us - own_us(opt)
    else:
        cost, own, compute = 0.0, _busy_us(work), wall_us - _busy_us(opt)
    return (min(max(own / compute, 0.0), 1.0) if compute > 0 else None), cost


def _outermost_flop_events(events):
    """The profiler's events with a FLOP count that no enclosing event counts
    again: under autocast aten::conv2d runs inside aten::conv2d (the autocast
    wrapper re-dispatches), both with the convolution's FLOPs, and summing
    every event counted a bf16 conv net's convolutions twice."""
    flop_events = [e for e in events if (getattr(e, "flops", 0) or 0) and _matmul_or_conv(e.name)]
    copies = _nested_copies(flop_events)
    out = []
    for e in flop_events:
        p = getattr(e, "cpu_parent", None)
        while p is not None and not (getattr(p, "flops", 0) or 0):
            p = getattr(p, "cpu_parent", None)
        if p is None and id(e) not in copies:
            out.append(e)
    return out


def _conv_transpose_flops(e):
    """A transposed convolution's FLOPs from its shapes, which torch's
    with_flops does not count: input [N, Cin, spatial...], weight [Cin,
    Cout/groups, filter...]: every input element meets Cout/groups x filter
    weights (multiply and add)."""
    shapes = getattr(e, "input_shapes", None) or []
    if len(shapes) < 2 or len(shapes[0]) < 3 or len(shapes[1]) != len(shapes[0]):
        return 0
    return 2 * math.prod(shapes[0]) * math.prod(shapes[1][1:])


def _conv_flops_torch_leaves_out(events):
    """The convolution FLOPs torch's profiler (with_flops) leaves out of a
    training step: transposed convolutions (conv_transpose1d/2d/3d: a GAN's
    generator, a U-Net's decoder), and every backward convolution, counted as
    twice its forward's (grad input and grad weight: the output mask is not
    recorded, so a first layer's input gradient, which PyTorch skips, counts
    too; the trace reader's default alike). A backward op's forward is the one
    with its input and weight shapes, by the name the model called (parents
    and sequence numbers are not reliable here: _nested_copies, and the dtype
    watch's dispatch mode drops the latter): a normal one moves grad_output x
    weight[1:], a transposed one input x weight[1:]. pytorch/examples' dcgan:
    torch counted 19.9 GFLOP per step, its discriminator's forward alone."""
    def key(e):
        shapes = getattr(e, "input_shapes", None) or []
        return tuple(map(tuple, shapes[:2])) if len(shapes) >= 2 else None
    normal, transposed = set(), set()
    extra = 0
    calls = [e for e in events if e.name.startswith("aten::conv_transpose")]
    copies = _nested_copies(calls)
    for e in calls:
        transposed.add(key(e))
        if id(e) not in copies and not (getattr(e, "flops", 0) or 0):   # the outermost, uncounted by torch
            extra += _conv_transpose_flops(e)
    for e in events:
        if e.name in ("aten::conv1d", "aten::conv2d", "aten::conv3d"):
            normal.add(key(e))
    backward = [e for e in events if e.name == "aten::convolution_backward"]
    # once per call: a dispatch mode (the dtype watch, _MathDtypes) re-dispatches each op it sees, and torch 2.11
    # records the inner call too, on the GPU's backward thread as well; simplify_example.py's conv net read 5x its
    # forward's FLOPs on an H200 (2026-11-29) for the 3x a step does. One torch counted itself is in its count already.
    copies = _nested_copies(backward)
    for e in backward:
        shapes = getattr(e, "input_shapes", None) or []
        if id(e) in copies or (getattr(e, "flops", 0) or 0) or len(shapes) < 3 or len(shapes[2]) < 3:
            continue
        grad_out, inp, weight = shapes[0], shapes[1], shapes[2]
        k = (tuple(inp), tuple(weight))
        if k in normal:
            extra += 2 * 2 * math.prod(grad_out) * math.prod(weight[1:])
        elif k in transposed:
            extra += 2 * 2 * math.prod(inp) * math.prod(weight[1:])
    return extra


def _item_count(batch):
    """Samples in a batch: the first dimension of its first tensor."""
    for x in _leaves(batch):
        shape = getattr(x, "shape", None)
        if shape:
            return int(shape[0])
    return 0


def _guess_pattern(loader):
    """random when the DataLoader shuffles (a random sampler), else sequential."""
    sampler = getattr(loader, "sampler", None)
    return "random" if sampler is not None and "Random" in type(sampler).__name__ else "sequential"


def _stages(s, full, dl):
    modes = s.modes
    stages = [_loader_stage(s, full, dl)]
    tr = modes.get("transfer")
    if s.has_transfer:
        st = {"name": "host to device copy", "component": "copy", "direction": "h2d",
              "seconds_per_step": max(full["transfer_per_step"], 1e-9)}
        nbytes = s.mix.mean_bytes() or (batch_bytes(s.host_batch) if s.host_batch is not None else 0)
        if tr:
            st.update(memory="pinned" if tr["pinned"] else "pageable",
                      isolated_seconds_per_step=tr["seconds_per_copy"])
        if nbytes:
            st["bytes_per_step"] = nbytes
        else:
            st["component"] = "other"
            del st["direction"]
            st.pop("memory", None)
        stages.append(st)
    step_iso = modes.get("step", {}).get("seconds_per_step")
    opt_loop = full.get("optimizer_per_step", 0.0)
    coll_loop = full.get("collective_per_step", 0.0)
    opt_iso = coll_iso = None
    if step_iso and "optimizer_per_step" in modes["step"]:
        opt_iso = modes["step"]["optimizer_per_step"]    # timed in mode step (mode_step says why)
    elif step_iso and "no_optimizer" in modes:
        opt_iso = step_iso - modes["no_optimizer"]["seconds_per_step"]
    if "cost_per_step" in modes.get("no_collective", {}):
        coll_iso = modes["no_collective"]["cost_per_step"]     # DDP: alternating pairs (_ddp_pairs)
    elif step_iso and "no_collective" in modes:
        coll_iso = step_iso - modes["no_collective"]["seconds_per_step"]
    if s.ddp is not None:
        # DDP's all-reduce runs inside backward, on the backend's threads: no call to time in the loop. What the
        # step waits for is the step's time with and without it (no_sync), alone; the loop's figure is that one.
        coll_loop = max(coll_iso or 0.0, 0.0)
    compute = {"name": "forward+backward",   # mlbench gap's MB_SIMPLIFY_COMPUTE_STAGE
               "seconds_per_step": max(full["step_per_step"] - opt_loop - coll_loop, 1e-9),
               "device": "gpu" if s.cuda else "cpu"}
    if step_iso:
        iso = step_iso - max(opt_iso or 0, 0) - max(coll_iso or 0, 0)
        if iso > 0:
            compute["isolated_seconds_per_step"] = iso
    flops = getattr(s, "flops", 0)
    if flops:
        # held against the ceiling of the math that does most of its work: a conv net's convolutions against the
        # conv cases, as the same loop's trace holds them (the H100 reference's bf16 conv cases reach about half
        # its GEMM ceiling on the same tensor cores)
        conv = getattr(s, "conv_flops", 0.0) > flops / 2
        compute.update(component="conv" if conv else "gemm", flops_per_step=flops,
                       dtype=s.math_dtype or _dtype_name(s.optimizer, s.host_batch))
        share = _cpu_share(s)
        if share:
            compute["threads"] = share
    else:
        compute["component"] = "other"
    stages += _split_compute(compute, getattr(s, "flop_share", None))
    for name, loop, iso in (("optimizer", opt_loop, opt_iso), ("collective", coll_loop, coll_iso)):
        if (name == "optimizer" and s.optimizer is None) or \
                (name == "collective" and s.collective is None and s.ddp is None):
            continue
        if name == "collective" and s.ddp is not None:
            stages.append(_ddp_stage(s, loop))
            continue
        st = {"name": name, "component": "other", "device": "gpu" if s.cuda else "cpu",
              "seconds_per_step": max(loop, 1e-9)}
        if name == "collective":
            st["role"] = "communication"
        elif not s.cuda:
            st["role"] = "optimizer"  # its ops are the CPU's work, not host code between ops (gap)
        if iso is not None and iso > 0:
            st["isolated_seconds_per_step"] = iso
        stages.append(st)
    return stages


def _split_compute(compute, share):
    """forward+backward as one stage, or, on the CPU where the share of its
    time its FLOP-counted ops take is measured (_flop_share), as two: its
    matmuls/convolutions with the FLOPs, held against their ceiling, and its
    other ops, time only; each with its share of the step's time, in the
    loop and alone (gap's CPU trace reader splits a trace's step alike). A
    plain 768^3 matmul step, forward and backward, spent 9% of its time
    outside the products (sum, gradient accumulation, Python)."""
    if share is None or "flops_per_step" not in compute:
        return [compute]
    # short names: the stage tables' name column is 24 wide
    math = dict(compute, name="fwd+bwd: %s" % ("convolutions" if compute["component"] == "conv" else "matmuls"))
    rest = {"name": "fwd+bwd: other ops", "component": "other", "role": "compute",   # a GPU would run them too
            "device": compute["device"]}
    for key in ("seconds_per_step", "isolated_seconds_per_step"):
        if key in compute:
            math[key] = max(compute[key] * share, 1e-9)
            rest[key] = max(compute[key] * (1 - share), 1e-9)
    return [math, rest]


def _ddp_stage(s, cost):
    """DDP's gradient all-reduce: its time in flight alone (mode collective),
    with its bytes and ranks, so that gap holds it against the all-reduce
    ceiling; the step's cost of it (mode no_collective's pairs, clipped at 0) is
    its exposed time, up to its time in flight: a larger cost (DDP's hooks and
    bucket copies, waiting for a slower rank, contention, this machine's
    noise) is not the all-reduce's own work and
    stays in no stage. No isolated level: neither figure is its time in the
    loop, where it overlaps the backward and no call can be timed."""
    st = {"name": "gradient all-reduce (DDP)", "component": "other", "role": "communication",
          "device": "gpu" if s.cuda else "cpu"}
    alone = s.modes.get("collective")
    if not alone:
        st["seconds_per_step"] = max(cost, 1e-9)
        return st
    st.update(seconds_per_step=alone["seconds_per_step"], exposed_seconds_per_step=min(cost, alone["seconds_per_step"]))
    if s.world.size >= 2:  # one rank reduces with nobody: time only (an all-reduce's ceiling needs 2 ranks or more)
        st.update(component="allreduce", ranks=s.world.size, dtype=alone["dtype"],
                  bytes_per_step=alone["bytes_per_step"],
                  block_size=alone["bytes_per_step"] / alone["calls_per_step"])
    return st


def _overlap(s):
    """The full step against the sum and the maximum of the isolated parts."""
    m = s.modes
    parts = {}
    if "loader" in m:
        parts["data loading"] = m["loader"]["seconds_per_batch"]
    if "transfer" in m:
        parts["host to device copy"] = m["transfer"]["seconds_per_copy"]
    if "step" in m:
        parts["step"] = m["step"]["seconds_per_step"]
    if not parts:
        return None
    out = {"isolated_per_step": parts, "sum_isolated": sum(parts.values()), "max_isolated": max(parts.values()),
           "bottleneck": max(parts, key=parts.get)}
    if "full" in m:
        full = m["full"]["step_seconds"]
        out["full_step"] = full
        out["full_vs_sum"] = full / out["sum_isolated"]
        out["full_vs_max"] = full / out["max_isolated"]
        less = _full_loop_read_less(m)
        if less:
            out["full_loop_read_less"] = less
    return out


def _cpu_floor(s):
    """The CPU the full loop's processes took a step (the step's process and
    its loader's workers, from /proc/<pid>/stat) over the CPUs they may use:
    a step no shorter than that, however its parts overlap. Near the step
    (CPUS_BOUND), the CPUs bound the loop; with the workers' share of it
    (CPUS_SHARED), the loader and the step share them and slow each other
    down: an ImageFolder of JPEGs
    decoded by two workers beside a small CNN on this 2-CPU VM (2026-12-01)
    took 179 ms of CPU a 105-ms step, its step 87 ms in the loop against 47
    alone. None without a full mode or its CPU figures."""
    full = s.modes.get("full")
    if not full or not full.get("steps") or "main_cpu_seconds" not in full or not full.get("step_seconds"):
        return None
    threads = _cpu_threads(s)
    ranks, cpus = threads.get("host_ranks") or 1, threads.get("cpus_allowed")
    if not cpus:
        return None
    cpus = max(1, cpus // ranks)     # ranks on this machine take their turns on its CPUs (_cpu_share)
    n = full["steps"]
    main, workers = full["main_cpu_seconds"] / n, full.get("worker_cpu_seconds", 0.0) / n
    floor = (main + workers) / cpus
    out = {"cpus": cpus, "cpu_seconds_per_step": main + workers, "main_cpu_seconds_per_step": main,
           "worker_cpu_seconds_per_step": workers, "workers": full.get("workers") or 0,
           "floor_seconds_per_step": floor, "busy_share": floor / full["step_seconds"],
           # the thread that runs the step (the process's other threads' waits summed with it can pass the step)
           "main_wait_seconds_per_step": full.get("main_thread_runqueue_seconds",
                                                  full.get("main_runqueue_seconds", 0.0)) / n,
           "worker_wait_seconds_per_step": full.get("worker_runqueue_seconds", 0.0) / n}
    keeper = (full.get("cache") or {}).get("keeper_cpu_seconds")
    if keeper is not None:
        # from the mode's start (its warm-up too): at most this much in the measured window
        out["keeper_cpu_seconds_per_step_max"] = keeper / n
    # busy CPUs alone do not bound a loop its slowest part sets: a GPU step whose process spins in
    # torch.cuda.synchronize (CUDA's default wait) beside workers that keep up takes CPUs and loses nothing
    ov = _overlap(s)
    slowest = ov["max_isolated"] if ov else None
    out["slowest_part_seconds_per_step"] = slowest
    out["busy"] = out["busy_share"] >= CPUS_BOUND    # no core left idle for "Use all cores" to fill
    out["bound"] = out["busy"] and slowest is not None and \
        full["step_seconds"] > (1 + OVERLAP_TOLERANCE) * slowest
    out["shared"] = out["bound"] and workers >= CPUS_SHARED * (main + workers)
    out["how"] = ("the CPU time (user + system) of the full mode's process and its loader's workers per step, over the "
                  "CPUs they may use (this rank's share where ranks share the machine): no step of the loop can be "
                  "shorter; busy: at least %.0f%% of the step; bound: busy, and the step more than %.0f%% above its "
                  "slowest part alone; shared: bound, and the workers at least %.0f%% of that CPU; waits: seconds the "
                  "thread running the step and the workers' threads were runnable without a CPU (schedstat)"
                  % (100 * CPUS_BOUND, 100 * OVERLAP_TOLERANCE, 100 * CPUS_SHARED))
    return out


def _cpu_lines(cpu, full_step, modes):
    """The summary's words on the full loop's CPU (_cpu_floor), when it bounds the loop."""
    if not cpu or not cpu.get("bound"):
        return []
    parts = "its step's process %s" % _ms(cpu["main_cpu_seconds_per_step"])
    if cpu["workers"]:
        parts = "its %d loader worker%s %s, %s" % (cpu["workers"], "s" if cpu["workers"] != 1 else "",
                                                    _ms(cpu["worker_cpu_seconds_per_step"]), parts)
    keeper = cpu.get("keeper_cpu_seconds_per_step_max")
    lines = ["cpus           the full loop took %s of CPU a step (%s) on the %d CPU%s it may use: %s a step at the "
             "least however its parts overlap, %s of its %s step: the CPUs bound the loop"
             % (_ms(cpu["cpu_seconds_per_step"]), parts, cpu["cpus"], "s" if cpu["cpus"] != 1 else "",
                _ms(cpu["floor_seconds_per_step"]), _pct(cpu["busy_share"]), _ms(full_step))]
    said = "               the thread running the step waited for a CPU %s a step" % _ms(
        cpu["main_wait_seconds_per_step"])
    if cpu["shared"]:
        said += " (runnable, not running): data loading and the step share the CPUs"
        loop, alone = (modes.get("full") or {}).get("step_per_step"), (modes.get("step") or {}).get("seconds_per_step")
        if loop and alone and loop > alone:
            said += " (the step %s in the loop, %s alone)" % (_ms(loop), _ms(alone))
        said += (": loading that takes less CPU (samples stored decoded, read in batches, held in memory) frees it "
                 "for the step, more workers or torch threads cannot")
    if keeper:
        said += "; the runner's cache keeper took at most %s of CPU a step beside it" % _ms(keeper)
    return lines + [said]


def _full_loop_read_less(m):
    """The full loop read less from storage a step than the loader alone a
    batch, by more than a tenth, and at the loader's own rate its bytes take
    no longer than its step: a full step faster than the loader alone is then
    the bytes, not a busier machine. Pages the keeper could not evict (mapped
    by two workers at once) make one mode warmer than the other (an LMDB read
    by two workers: 479 of its 571 MB stayed cached in mode full, 19 ms a
    step, against 213 ms a batch cold alone); readahead's hits vary from run
    to run (the same LMDB, both modes cold: 248 MB a step in the loop, 289 MB
    a batch alone, at one rate: 1.44 and 1.46 GB/s)."""
    full, ld = m.get("full") or {}, m.get("loader") or {}
    per_step = _loop_storage_per_step(full)
    if not per_step or not ld.get("batches") or not ld.get("read_bytes") or not ld.get("seconds_per_batch"):
        return None
    per_batch = ld["read_bytes"] / ld["batches"]
    at_loader_rate = per_step / per_batch * ld["seconds_per_batch"]
    if per_step >= 0.9 * per_batch or at_loader_rate > 1.1 * full["step_seconds"]:
        return None
    return {"full_cache": (full.get("cache") or {}).get("state"), "loader_cache": (ld.get("cache") or {}).get("state"),
            "full_storage_bytes_per_step": per_step, "loader_storage_bytes_per_batch": per_batch,
            "loader_seconds_for_full_bytes": at_loader_rate}


def write_atomic(path, doc):
    write_json_atomic(path, doc, ".mlbench-simplify.")


def _ddp_lines(dist, m):
    """What was measured of DDP's gradient all-reduce: alone, and what it
    costs the step; a cost the machine's noise hides is said to be so."""
    lines = []
    alone = m.get("collective")
    if alone:
        lines.append("collective     DDP's gradient all-reduce alone: %s/step in flight, %s in %d bucket%s "
                     "(%s/s), over %d rank%s"
                     % (_ms(alone["seconds_per_step"]), _size(alone["bytes_per_step"]), alone["calls_per_step"],
                        "" if alone["calls_per_step"] == 1 else "s",
                        _size(alone["bytes_per_step"] / alone["seconds_per_step"]), dist["world_size"],
                        "" if dist["world_size"] == 1 else "s"))
    else:
        lines.append("collective     DDP's gradient all-reduce: %s of gradients per step"
                     % _size(dist["collective"]["gradient_bytes_per_step"]))
    nc = m.get("no_collective", {})
    if "cost_per_step" not in nc:
        return lines
    cost, se = nc["cost_per_step"], nc["cost_stderr"]
    figures = "%s ± %s/step (%d alternating pairs of steps: with it %s, inside no_sync() %s)" % (
        _ms(cost), _ms(se), nc["pairs"], _ms(nc["with_seconds_per_step"]), _ms(nc["seconds_per_step"]))
    if cost > 2 * se:
        lines.append("               its cost to the step: " + figures)
        if alone and cost > alone["seconds_per_step"]:
            # on one rank nobody is waited for: what DDP does around the all-reduce is (an H200, 2026-11-29:
            # 0.398 ms of a 0.450-ms cost on one rank, its 1.59 MB all-reduced in 52 us)
            lines.append("               more than its time in flight alone: the rest (%s) is DDP's own work around "
                         "it (its hooks, the gradients copied into and out of its buckets)%s, contention or this "
                         "machine's noise, and stays in no stage"
                         % (_ms(cost - alone["seconds_per_step"]),
                            ", the wait for a slower rank" if dist["world_size"] > 1 else ""))
    elif cost >= -2 * se:
        lines.append("               its cost to the step: not resolved (within twice its standard error of 0; "
                     "counted as %s): %s: it hides under the backward or costs less than this machine's noise "
                     "(more --seconds narrows it)" % (_ms(max(cost, 0.0)), figures))
    else:
        lines.append("               its cost to the step: none measurable, counted as 0: the steps inside "
                     "no_sync() took longer, beyond twice the standard error: %s" % figures)
    return lines


def _ms(x):
    """Milliseconds to three decimals; under 0.1 ms in microseconds, so a loader's CPU per item (a few µs for an
    in-memory dataset) does not print as 0.000 ms."""
    return "%.2f µs" % (x * 1e6) if 0 < x < 1e-4 else "%.3f ms" % (x * 1e3)


def _ratio(x):
    return "<0.01" if 0 < x < 0.01 else "%.3g" % x


def _pct(x):
    return "?" if x is None else "%.0f%%" % (100 * x)


def _loading_lines(info, stage=None):
    """The data-loading story, from the one verdict (_data_loading): bytes,
    amplification and its remedies, what bounds the loader, the dataset
    against memory, each mode's page-cache state; `stage`, the data-loading
    stage of the file written, says what it is held against."""
    lines = []
    m = info.get("modes", {})
    dl = info.get("data_loading")
    ld = m.get("loader")
    if ld and dl:
        dev = ld.get("device")
        lines.append("loader alone   %s/batch (%.2f batches/s; from storage %s/batch for the %s/batch it delivers%s; "
                     "read() %s/batch, %.1f major faults/batch; workers' CPU %.2f s, main %.2f s; page cache: %s)"
                     % (_ms(ld["seconds_per_batch"]), ld["batches_per_second"],
                        _size(dl["storage_bytes_per_batch"]), _size(dl["delivered_bytes_per_batch"]),
                        ", x%s" % _ratio(dl["amplification"]) if dl["amplification"] is not None else "",
                        _size(dl["read_call_bytes_per_batch"]), dl["major_faults_per_batch"],
                        ld["worker_cpu_seconds"], ld["main_cpu_seconds"], dl["cache"] or "not watched"))
        if dev and dev.get("read_requests"):
            ra = ", ".join("read_ahead_kb %d" % kb for kb in dev["read_ahead_kb"].values())
            lines.append("               %s served %d read requests of %s (mean) in the window, busy %s%s%s"
                         % ("+".join(dev["devices"]), dev["read_requests"], _size(dev["mean_request_bytes"]),
                            _pct(dev["busy_share"]), "; %s" % ra if ra else "",
                            "" if (dev["ours"] or 0) >= DEVICE_OURS else
                            "; the loader read only %s of its bytes: others used the device too" % _pct(dev["ours"])))
    elif ld:
        lines.append("loader alone   %s/batch (%.2f batches/s)" % (_ms(ld["seconds_per_batch"]),
                                                                   ld["batches_per_second"]))
    if dl:
        st, dv = dl["storage_bytes_per_batch"], dl["delivered_bytes_per_batch"]
        amp = ", x%s what it delivers" % _ratio(dl["amplification"]) if dl["amplification"] is not None else ""
        if dl["bound"] == "storage":
            text = "storage-bound: the device busy %s of the loader's time for %s/batch from storage%s" % (
                _pct(dl["device_busy_share"]), _size(st), amp)
        elif dl["bound"] == "cpu+storage":
            text = "CPU- and storage-bound: its processes on a CPU %s of the time (%s of CPU per item: %s), the " \
                   "device busy %s for %s/batch from storage%s; %s" % (
                       _pct(dl["cpu_busy_share"]),
                       _ms(dl["cpu_seconds_per_item"]) if dl["cpu_seconds_per_item"] is not None else "?",
                       dl["cpu_work"], _pct(dl["device_busy_share"]), _size(st), amp,
                       "one process reads and computes in turns (num_workers=0): workers overlap one batch's reads "
                       "with another's CPU work" if not dl["workers"] else "both near their limit: a faster one "
                       "alone moves it little")
        elif dl["bound"] == "cpu":
            what = dl["cpu_work"]
            forks = dl.get("worker_forks_in_window") or 0
            where = ("in its %d worker%s (the dataset's __getitem__: %s; collation; the hand-over%s), %s per batch "
                     "in the main process" % (dl["workers"], "" if dl["workers"] == 1 else "s", what,
                                              "; %d worker starts: each epoch forks them again, "
                                              "persistent_workers=True keeps them" % forks if forks else "",
                                              _ms(dl["main_cpu_seconds_per_batch"]))
                     if dl["workers"] else "(%s)" % what)
            # an item is the first dimension of the batch's first tensor: a sample, or a time step of a
            # language model's (sequence, batch) block: said, so the figure can be read either way
            items = dl.get("items_per_batch")
            text = "CPU-bound: %s of CPU per item%s %s; its processes on a CPU %s of the time%s%s " \
                   "(%s/batch from storage%s)" % (
                       _ms(dl["cpu_seconds_per_item"]) if dl["cpu_seconds_per_item"] is not None else "?",
                       " (%s a batch, its first tensor's first dimension)" % (
                           "%d" % items if float(items).is_integer() else "%.4g on average" % items)
                       if items else "", where,
                       _pct(dl["cpu_busy_share"]),
                       " and waiting for one %s more (the machine's CPUs %s busy%s: other work held them; with the "
                       "CPUs to itself about %s/batch)" % (
                           _pct(dl["cpu_wanted_share"] - dl["cpu_busy_share"]), _pct(dl["machine_cpu_busy_share"]),
                           ", %s of them the runner's cache keeper" % _pct(dl["helper_cpu_share"])
                           if dl.get("helper_cpu_share") else "",
                           _ms(dl["cpu_alone_seconds_per_batch"]))
                       if (dl["cpu_busy_share"] or 0) < BUSY else "",
                       # no block device watched (no file opened): nothing to say of one
                       "" if dl["device_busy_share"] is None
                       else ", the device busy %s" % _pct(dl["device_busy_share"]),
                       _size(st), amp)
        else:
            text = "neither CPU- nor storage-bound: its processes on a CPU %s of the time, the device busy %s: it " \
                   "waits (sleeps, locks, a network source, its workers' hand-over); %s/batch from storage%s" % (
                       _pct(dl["cpu_busy_share"]), _pct(dl["device_busy_share"]), _size(st), amp)
        lines.append("data loading   " + text)
        if dl["amplified"]:
            lines.append("               read-amplified x%.3g: storage served %s for every %s a batch holds: %s. "
                         "Remedies: %s" % (dl["amplification"], _size(st), _size(dv), dl["mechanism"],
                                            "; ".join(dl["remedies"])))
        held = (stage or {}).get("component")
        if dl.get("block_size") and held == "disk":
            lines.append("               held against the %s disk ceiling at %s blocks: %s%s"
                         % (dl["pattern"], _size(dl["block_size"]), dl["block_size_source"],
                            "; %s, told by %s" % (dl["pattern"], dl["pattern_source"])
                            if dl.get("pattern_source") else ""))
        elif held == "other" and dl["bound"] == "cpu":
            # a decode-bound loader's stage is CPU work: no disk ceiling holds it (it said "held against the
            # random disk ceiling" beside a stage file holding its time only)
            lines.append("               held against no ceiling: CPU work, time only (no benchmark measures "
                         "decoding or augmenting)")
    ds = info.get("dataset")
    if ds:
        if not ds["files"]:
            lines.append("dataset        the loader opened no file the runner could see: nothing to evict "
                         "(generated data, a network source, a dataset read into memory when it was built, as "
                         "torchvision's MNIST, or files opened and closed by C code)")
        else:
            what = "%d file%s, %s (memory available %s)" % (ds["files"], "" if ds["files"] == 1 else "s",
                                                           _size(ds["bytes"]), _size(ds["mem_available_bytes"]))
            fits = ds["fits_in_memory"]
            if ds["cache"] == "cold":
                tail = ("it fits in memory: a real run reads it from the page cache once its first epoch has read it "
                        "(--warm measures that); these figures are cold, as its first epoch and every epoch of a "
                        "dataset larger than memory" if fits else
                        "larger than the memory available: every epoch reads storage, as measured here")
            else:
                tail = ("it fits in memory: these warm figures (--warm) are the epochs after the first; without "
                        "--warm the runner measures it cold" if fits else
                        "larger than the memory available: a real run reads storage every epoch, so these warm "
                        "figures (--warm) are optimistic: run without --warm")
            lines.append("dataset        %s: %s" % (what, tail))
    states = []
    notes = []
    for name in info.get("plan", []):
        c = (m.get(name) or {}).get("cache")
        if not c:
            continue
        s = "%s: %s" % (name, c["state"])
        if c.get("kept_cold") and c.get("dataset_bytes"):
            s += " (%d evictions; at most %s of the %s in the cache at once)" % (
                c.get("evictions", 0), _size(c.get("resident_bytes_max")), _size(c["dataset_bytes"]))
        elif c["state"] == "warm" and c.get("dataset_bytes") and c.get("resident_bytes_at_start") is not None:
            s += " (%s of the %s in the cache at its start)" % (_size(c["resident_bytes_at_start"]),
                                                                 _size(c["dataset_bytes"]))
        states.append(s)
        notes.extend(n for n in c.get("notes", []) if n not in notes)
    if states:
        lines.append("page cache     " + ", ".join(states))
    for n in notes:
        lines.append("               " + n)
    return lines


def summary(doc):
    """Text lines: each mode's rate, the overlap and the bottleneck."""
    info = doc.get("simplify", {})
    m = info.get("modes", {})
    lines = []
    if "full" in m:
        f = m["full"]
        lines.append("full loop      %s/step  (%.2f batches/s; waiting for data %s, copy %s, step %s)"
                     % (_ms(f["step_seconds"]), f["batches_per_second"], _ms(f["data_wait_per_step"]),
                        _ms(f["transfer_per_step"]), _ms(f["step_per_step"])))
    stage = next((x for x in doc.get("stages", []) if x.get("role") == "data" or x.get("name") == "data loading"),
                 None)
    lines.extend(_loading_lines(info, stage))
    if "step" in m:
        lines.append("step alone     %s/step" % _ms(m["step"]["seconds_per_step"]))
    mix = info.get("batch_mix")
    if mix:
        held = ", ".join("%s (%d)" % ("x".join(d for d in mix_b["batch"][0][0].strip("()").replace(" ", "").split(",")
                                               if d) or "scalar", mix_b["count"]) for mix_b in mix["held"])
        lines.append("batches        the full loop's %d batches took %d shapes (first tensor, batches: %s): the step alone ran "
                     "on them in that mix%s" % (mix["batches"], mix["shapes"], held,
                                                "" if mix["held_share"] >= 1 else
                                                ", on the first %d shapes (%.0f%% of the batches)"
                                                % (len(mix["held"]), 100 * mix["held_share"])))
    if "transfer" in m:
        lines.append("copy alone     %s/batch (%s)" % (_ms(m["transfer"]["seconds_per_copy"]),
                                                       "pinned" if m["transfer"]["pinned"] else "pageable"))
    closure = m.get("step", {}).get("optimizer_closure_calls_per_step")
    if "step" in m and "optimizer_per_step" in m["step"]:
        lines.append("optimizer      %s/step alone (timed in mode step), %s/step in the full loop%s"
                     % (_ms(m["step"]["optimizer_per_step"]), _ms(m["full"]["optimizer_per_step"]) if "full" in m
                        else "?", "; its own work only: the %.3g evaluations of its closure per step (your forward "
                        "and backward) are forward+backward's" % closure if closure else ""))
    if "no_optimizer" in m:
        lines.append("no optimizer   %s/step%s" % (_ms(m["no_optimizer"]["seconds_per_step"]),
                                                   " (its closure evaluated once a step)" if closure else ""))
    if "no_collective" in m and "pairs" not in m["no_collective"]:   # DDP's pairs: in the collective's lines
        lines.append("no collective  %s/step" % _ms(m["no_collective"]["seconds_per_step"]))
    dist = info.get("distributed")
    if dist and dist["world_size"] > 1:
        lines.append("ranks          %d (%s), this one rank %d: every mode ran the same number of steps on every "
                     "rank" % (dist["world_size"], dist["backend"], dist["rank"]))
    ddp = (dist or {}).get("collective")
    if ddp:
        lines.extend(_ddp_lines(dist, m))
    ov = info.get("overlap")
    if ov and "full_step" in ov:
        lines.append("overlap        full step %s vs sum of isolated %s (x%.2f) and max %s (x%.2f): %s"
                     % (_ms(ov["full_step"]), _ms(ov["sum_isolated"]), ov["full_vs_sum"], _ms(ov["max_isolated"]),
                        ov["full_vs_max"], _overlap_words(ov, (info.get("data_loading") or {}).get("workers"))))
        less = ov.get("full_loop_read_less")
        if less:
            lines.append("               the full loop read %s from storage a step (page cache %s), the loader alone %s "
                         "a batch (%s): at the loader's rate alone the loop's bytes take %s%s"
                         % (_size(less["full_storage_bytes_per_step"]), less["full_cache"],
                            _size(less["loader_storage_bytes_per_batch"]), less["loader_cache"],
                            _ms(less["loader_seconds_for_full_bytes"]),
                            ": the pages that stayed cached (page cache, above)"
                            if less["full_cache"] != less["loader_cache"] else
                            ": readahead's hits vary from run to run"))
    cpu = info.get("cpu")
    if ov and "full_step" in ov:
        lines.extend(_cpu_lines(cpu, ov["full_step"], m))
    if ov and cpu and cpu.get("shared"):
        lines.append("bottleneck     the CPUs, which data loading and the step share (above); the slowest part by "
                     "itself: %s, %s per step" % (ov["bottleneck"], _ms(ov["max_isolated"])))
    elif ov and ov.get("full_vs_sum", 0) > 1 + OVERLAP_TOLERANCE and "full" in m:
        # no part alone explains a loop slower than all of them one after another: naming the slowest alone
        # disagreed with gap on the same file (a tar-shard loader beside a small CNN, another tenant on the
        # machine: "data loading" here, "CPU compute bound 71.9%" there, the step 24.3 ms in the loop, 10.5 alone)
        # The part that takes most of the loop's own step names it, as gap names the stage file's largest stage:
        # "contention" alone, beside gap's "Data-loading bound, 99.4%" on the same file (a memory-mapped loader read
        # at random, waiting for data 404.7 ms of a 407.1-ms step, 338.9 ms a batch alone on a shared disk), told
        # two stories
        f = m["full"]
        parts = [("data loading", f["data_wait_per_step"]), ("host to device copy", f.get("transfer_per_step") or 0),
                 ("step", f["step_per_step"])]
        name, t = max(parts, key=lambda x: x[1])
        said = {"data loading": "waiting for data", "host to device copy": "copy", "step": "step"}
        rest = ", ".join("%s %s" % (said[n], _ms(v)) for n, v in parts if n != name and v > 0)
        lines.append("bottleneck     %s: %s of the %s step in the loop (what mlbench gap weighs%s); the loop is slower "
                     "than its parts one after another alone (%s, x%.2f): they slow each other down in it (the CPUs, "
                     "memory bandwidth, other processes on the machine), or the machine's speed moved between the "
                     "modes; the slowest part by itself: %s, %s per step"
                     % (name, _ms(t), _ms(ov["full_step"]), "; " + rest if rest else "", _ms(ov["sum_isolated"]),
                        ov["full_vs_sum"], ov["bottleneck"], _ms(ov["max_isolated"])))
    elif ov:
        lines.append("bottleneck     %s (the slowest part by itself: %s per step)"
                     % (ov["bottleneck"], _ms(ov["max_isolated"])))
    for e in info.get("errors", []):
        lines.append("error          in mode '%s': %s" % (e["mode"], e["error"]))
    if info.get("interrupted_in"):
        lines.append("interrupted    in mode '%s' (the file holds the modes done before it)" % info["interrupted_in"])
    return lines


def _overlap_words(ov, workers=None):
    """Where the full step falls between the slowest isolated part (full
    overlap) and their sum (none), 10% either way. A full step faster than
    its slowest part alone cannot be: the isolated figures are off. With no
    loader workers (workers == 0) nothing runs beside the parts: slower than
    their sum is not contention between them at once."""
    if ov["full_vs_max"] < 0.9 and ov.get("full_loop_read_less"):
        return "the full step is faster than its slowest part alone: it read less from storage (below)"
    if ov["full_vs_max"] < 0.9:
        return ("the full step is faster than its slowest part alone: the isolated figures are not reliable "
                "(a busier machine while a part ran alone?): re-run, with more --seconds")
    others = ov["full_vs_max"] / ov["full_vs_sum"] - 1   # what the other parts add to the slowest, alone
    if ov["full_vs_max"] <= 1.1 and others <= 0.1:
        return ("the slowest part is nearly all of it (the others add %.0f%% to it): whether they overlap does not "
                "change the step" % (100 * others))
    if ov["full_vs_max"] <= 1.1:
        return "the parts overlap: the step runs at the pace of its slowest part"
    if ov["full_vs_sum"] > 1.1 and workers == 0:
        return ("the full step is slower than its parts one after another, with no loader workers: each slows the "
                "next in one process (caches left cold, a BLAS's or OpenMP's threads still spinning), not measured "
                "apart")
    if ov["full_vs_sum"] > 1.1:
        return "the full step is slower than its parts one after another: they contend in the pipeline"
    if ov["full_vs_sum"] >= 0.9:
        return "the parts run one after another (no overlap)"
    return "the parts overlap in part"


def simplify(loader, step, **kwargs):
    """Runs the modes on the loop's parts and returns the stage-file dict.

    loader: an iterable of batches (a DataLoader); step(batch): forward,
    backward, optimizer (and the collective, if any). Optional: transfer(batch)
    -> batch on the device (default: every tensor .to(device, non_blocking));
    device ("cuda", "cuda:0", "cpu"); optimizer (its .step is timed in the full
    loop and stubbed in mode no_optimizer); collective ("torch.distributed.
    all_reduce" or (object, "name"): timed, and stubbed in no_collective; or
    a DistributedDataParallel model: its gradient all-reduce stubbed with its
    no_sync()); under torchrun/mpirun every rank runs it, with the same step
    counts on every rank and a file each (rank_path);
    seconds (measured per mode), warmup (seconds per mode), min_steps;
    flops_per_step (else counted with torch's profiler); pattern of the
    loader's reads ("random"/"sequential"; default from its sampler); out (the
    stage file, rewritten after each mode); hard_bound (seconds after which a
    call of the user's code that has not returned stops its mode); cache ("cold", the default: the
    files the loader reads are evicted from the page cache before each mode
    that reads them and kept out of it while it runs, as for a dataset larger
    than memory; "warm": the page cache is left as it is); drop_caches (also
    write /proc/sys/vm/drop_caches before those modes: root).

    Raises SimplifyError (with .mode) when the user's code raised; the file
    then holds the modes done before it. KeyboardInterrupt is re-raised after
    the file is written."""
    s = Simplifier(loader, step, **kwargs)
    doc = s.run()
    for line in summary(doc):
        s._say("%s", line)
    if s.errors:
        e = s.errors[0]
        err = SimplifyError(e["mode"], e["error"], e["traceback"])
        err.document = doc
        raise err
    if s.interrupted:
        raise KeyboardInterrupt("mlbench_simplify: interrupted in mode '%s'" % s.interrupted)
    return doc


# ---- command line ----------------------------------------------------------------------------


def _load_parts(path):
    spec = importlib.util.spec_from_file_location("mlbench_user_loop", path)
    if spec is None:
        raise SystemExit("mlbench_simplify: %s: not a Python file" % path)
    mod = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(mod)
    if hasattr(mod, "parts"):
        parts = mod.parts()
    else:
        parts = {k: getattr(mod, k) for k in ("loader", "step", "optimizer", "device", "transfer", "collective",
                                               "flops_per_step", "pattern") if hasattr(mod, k)}
    for k in ("loader", "step"):
        if k not in parts:
            raise SystemExit("mlbench_simplify: %s defines no '%s' (and no parts() giving it)" % (path, k))
    return parts


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run the parts of a training loop one at a time "
                                 "(docs/simplify.md) and write an mlbench stage file.")
    ap.add_argument("loop", help="a Python file defining loader and step (optionally optimizer, device, "
                    "transfer, collective, flops_per_step, pattern) or parts() returning them")
    ap.add_argument("--out", default="simplify.json", help="stage file to write (default simplify.json)")
    ap.add_argument("--seconds", type=float, default=5.0, help="measured seconds per mode (default 5)")
    ap.add_argument("--warmup", type=float, default=1.0, help="warm-up seconds per mode (default 1)")
    ap.add_argument("--pattern", choices=("sequential", "random"), help="the loader's access pattern")
    ap.add_argument("--warm", action="store_true",
                    help="leave the page cache as it is (a dataset that fits in memory, read from it after its first "
                    "epoch); by default the files the loader reads are evicted before, and kept out of the cache "
                    "during, every mode that reads them, as for a dataset larger than memory")
    ap.add_argument("--drop-caches", action="store_true",
                    help="also write /proc/sys/vm/drop_caches before each such mode (root; the whole machine's page "
                    "cache)")
    a = ap.parse_args(argv)
    if not (a.seconds > 0 and math.isfinite(a.seconds)) or not (a.warmup >= 0 and math.isfinite(a.warmup)):
        ap.error("--seconds must be > 0 and --warmup >= 0")
    try:
        parts = _load_parts(a.loop)
    except Exception as e:   # the user's file, before any mode: its own error, said as such
        print("mlbench_simplify: %s raised while it was loaded, before any mode ran: %s: %s"
              % (a.loop, type(e).__name__, e), file=sys.stderr)
        print(traceback.format_exc(), file=sys.stderr, end="")
        return 1
    if a.pattern:
        parts["pattern"] = a.pattern
    try:
        simplify(out=a.out, seconds=a.seconds, warmup=a.warmup, cache="warm" if a.warm else "cold",
                 drop_caches=a.drop_caches, **parts)
    except SimplifyError as e:
        print("mlbench_simplify: your code failed in %s; %s holds the modes done before it" % (e, rank_path(a.out)),
              file=sys.stderr)
        if e.tb_text:
            print(e.tb_text, file=sys.stderr, end="")
        return 1
    except KeyboardInterrupt:
        print("mlbench_simplify: interrupted; %s holds the modes done so far" % rank_path(a.out), file=sys.stderr)
        return 130
    out = rank_path(a.out)
    print("wrote %s: mlbench gap --run %s" % (out, out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
