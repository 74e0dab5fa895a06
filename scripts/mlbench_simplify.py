#!/usr/bin/env python3
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
                (/proc/<pid>/io read_bytes; rchar for page-cache reads)
  step          the step alone on one real batch already on the device
  transfer      the host-to-device copy alone (GPU only)
  no_optimizer  the step with optimizer.step stubbed out
  no_collective the step with the collective stubbed out (when one is named)

and writes a stage file (format "mlbench-stages", version 2,
docs/stage-format.md) whose stages carry both their time in the full loop and
their time alone (`isolated_seconds_per_step`); `mlbench gap --run FILE` puts
the hardware ceiling next to both. It prints the overlap: the full step
against the sum and the maximum of the isolated parts.

As a module:

    from mlbench_simplify import simplify
    report = simplify(loader, step, optimizer=opt, device="cuda",
                      out="simplify.json", seconds=10)

As a command, on a file that defines the parts (`loader`, `step`, and
optionally `optimizer`, `device`, `transfer`, `collective`, `flops_per_step`,
`pattern`) or a function `parts()` returning them as a dict:

    python3 scripts/mlbench_simplify.py myloop.py --out simplify.json --seconds 10
    mlbench gap --run simplify.json

Standard library, plus torch when it is importable (it is needed only for
tensors, the GPU path and FLOP counting). docs/simplify.md says what each mode
stubs and what it cannot see.
"""

import argparse
import importlib.util
import json
import math
import os
import signal
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlbench_stages import FORMAT, write_json_atomic  # noqa: E402  (the sibling helper)

VERSION = 2
MODES = ("full", "loader", "step", "transfer", "no_optimizer", "no_collective")
# Fraction of the storage reads below which a loader counts as served from the
# page cache: its bytes are then held against host memory, not the disk.
PAGE_CACHE_SHARE = 0.5
# A loader that reads less than this share of the bytes it delivers is not
# bound by storage or memory: it generates or decodes its batches (CPU work),
# and its few incidental reads (a config, a label file) make no ceiling.
READ_SHARE_MIN = 0.01


class SimplifyError(RuntimeError):
    """An exception raised by the user's code, with the mode it happened in."""

    def __init__(self, mode, error, tb_text=""):
        self.mode = mode
        self.error = error  # "Type: message" of the user's exception
        self.tb_text = tb_text
        super().__init__("mode '%s': %s" % (mode, error))


class ModeTimeout(Exception):
    """A mode ran past its hard bound (one call of the user's code never returned)."""


# ---- batches ------------------------------------------------------------------------------


def _torch():
    try:
        import torch
        return torch
    except ImportError:
        return None


def _leaves(batch):
    """Tensors, arrays and byte strings inside a (nested) batch."""
    if isinstance(batch, dict):
        for v in batch.values():
            yield from _leaves(v)
    elif isinstance(batch, (list, tuple)):
        for v in batch:
            yield from _leaves(v)
    elif hasattr(batch, "nbytes") or isinstance(batch, (bytes, bytearray, memoryview)) or _is_tensor(batch):
        yield batch


def _is_tensor(x):
    t = sys.modules.get("torch")  # a batch holds tensors only when torch is loaded
    return t is not None and isinstance(x, t.Tensor)


def _nbytes(x):
    t = _torch()
    if t is not None and isinstance(x, t.Tensor):
        return x.element_size() * x.nelement()
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
            if x.nelement():
                total += int(x.reshape(-1)[:1].cpu().view(t.uint8)[0])
        elif isinstance(x, (bytes, bytearray, memoryview)):
            if len(x):
                total += bytes(x[:1])[0]
        else:  # numpy and other buffer objects
            flat = x.reshape(-1)[:1] if hasattr(x, "reshape") else x
            raw = flat.tobytes() if hasattr(flat, "tobytes") else b""
            total += raw[0] if raw else 0
    return total, n


def to_device(batch, device, non_blocking=False):
    """batch with every tensor moved to `device` (nested lists/tuples/dicts kept)."""
    if isinstance(batch, dict):
        return {k: to_device(v, device, non_blocking) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        moved = [to_device(v, device, non_blocking) for v in batch]
        return type(batch)(moved) if isinstance(batch, list) else tuple(moved)
    if hasattr(batch, "to") and hasattr(batch, "device"):
        return batch.to(device, non_blocking=non_blocking)
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


def _cpu_seconds(pid):
    """utime + stime of a process from /proc/<pid>/stat, in seconds (None if gone)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            rest = f.read().rpartition(")")[2].split()
    except OSError:
        return None, None
    # fields after the command: state(3) ... utime(14) stime(15) ... starttime(22)
    return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK"), rest[19]


def _descendants(pid):
    """Every live descendant pid (DataLoader workers are children of the
    process; their own children count too), read from
    /proc/<pid>/task/<tid>/children."""
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
                    kids = [int(k) for k in f.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(kids)
            todo.extend(kids)
    return found


class ProcSnapshot:
    """I/O and CPU counters of this process and of each live descendant.

    Linux adds a reaped child's I/O and CPU time to its parent's counters, so
    over a window: this process's delta (which holds workers that ended in the
    window) + each live descendant's delta - the start figures of descendants
    that ended in the window (the parent's delta holds their whole life)."""

    def __init__(self):
        self.pid = os.getpid()
        self.own_io = _read_io("self") or {}
        times = os.times()
        self.own_cpu = times.user + times.system
        self.reaped_cpu = times.children_user + times.children_system
        self.kids = {}
        for p in _descendants(self.pid):
            cpu, start = _cpu_seconds(p)
            io = _read_io(p)
            if cpu is not None and io is not None:
                self.kids[(p, start)] = (io, cpu)

    @property
    def available(self):
        return bool(self.own_io)


def proc_delta(a, b):
    """What was read and spent between snapshots a and b: read_bytes (storage),
    rchar (all reads, page cache included), main-process and worker CPU seconds."""
    out = {"read_bytes": 0, "rchar": 0, "main_cpu_seconds": b.own_cpu - a.own_cpu,
           "worker_cpu_seconds": b.reaped_cpu - a.reaped_cpu, "workers": len(b.kids)}
    for k in ("read_bytes", "rchar"):
        out[k] = b.own_io.get(k, 0) - a.own_io.get(k, 0)
    for key, (io, cpu) in b.kids.items():
        io0, cpu0 = a.kids.get(key, ({}, 0.0))
        for k in ("read_bytes", "rchar"):
            out[k] += io.get(k, 0) - io0.get(k, 0)
        out["worker_cpu_seconds"] += cpu - cpu0
    for key, (io0, cpu0) in a.kids.items():
        if key not in b.kids:  # ended in the window: its whole life is in the parent's delta
            for k in ("read_bytes", "rchar"):
                out[k] -= io0.get(k, 0)
            out["worker_cpu_seconds"] -= cpu0
    for k in ("read_bytes", "rchar", "worker_cpu_seconds"):
        out[k] = max(out[k], 0)
    return out


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


class _Timed:
    """Wraps obj.name to add up the time spent in it (the full loop's split of
    the step into optimizer / collective / the rest)."""

    def __init__(self, obj, name, sync):
        self.obj, self.name, self.sync = obj, name, sync
        self.seconds = 0.0
        self.calls = 0

    def __enter__(self):
        orig = getattr(self.obj, self.name)

        def timed(*args, **kwargs):
            self.sync()
            t0 = time.perf_counter()
            try:
                return orig(*args, **kwargs)
            finally:
                self.sync()
                self.seconds += time.perf_counter() - t0
                self.calls += 1
        self._patch = _Patched(self.obj, self.name, timed)
        self._patch.__enter__()
        return self

    def __exit__(self, *exc):
        return self._patch.__exit__(*exc)


# ---- the runner ------------------------------------------------------------------------------


class _Bound:
    """A hard bound on a mode: SIGALRM raises ModeTimeout in the main thread
    when one call of the user's code keeps the mode past it."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.armed = False

    def _fire(self, signum, frame):
        raise ModeTimeout("ran past its bound of %.1f s (one call never returned)" % self.seconds)

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
        return False


def _main_thread():
    import threading
    return threading.current_thread() is threading.main_thread()


class Simplifier:
    """Runs the modes and keeps their figures. See simplify() for the arguments."""

    def __init__(self, loader, step, transfer=None, optimizer=None, collective=None, device=None,
                 seconds=5.0, warmup=1.0, min_steps=3, flops_per_step=None, count_flops=True,
                 pattern=None, out=None, hard_bound=None, log=sys.stderr, clock=time.perf_counter):
        if not callable(step):
            raise TypeError("step must be callable: step(batch) runs forward, backward and the optimizer")
        self.loader = loader
        self.step = step
        self.device = device
        self.cuda = _is_cuda(device)
        self.transfer = transfer or ((lambda b: to_device(b, device, non_blocking=True))
                                     if device is not None else (lambda b: b))
        self.has_transfer = transfer is not None or (device is not None and str(device) != "cpu")
        self.optimizer = optimizer
        self.collective = _resolve_collective(collective)
        self.seconds = float(seconds)
        self.warmup = float(warmup)
        self.min_steps = max(1, int(min_steps))
        self.flops_per_step = flops_per_step
        self.math_dtype = None  # what the matmul/conv calls ran in (_count_flops), autocast included
        self.count_flops = count_flops
        self.pattern = pattern
        self.out = out
        self.hard_bound = hard_bound if hard_bound is not None else 4 * (self.seconds + self.warmup) + 30
        self.log = log
        self.clock = clock
        self.modes = {}
        self.measured = {}  # mode -> (start, end) of its measured window on `clock`
        self._current = None
        self.errors = []
        self.interrupted = None
        self.host_batch = None
        self.dev_batch = None

    # -- helpers ----------------------------------------------------------------------------
    def _say(self, fmt, *args):
        if self.log is not None:
            print("mlbench_simplify: " + (fmt % args if args else fmt), file=self.log, flush=True)

    def _sync(self):
        if self.cuda:
            _torch().cuda.synchronize()

    def _loop(self, body):
        """Runs body() for the warm-up, then for `seconds` (at least min_steps
        times); returns (iterations, seconds measured)."""
        t0 = self.clock()
        n = 0
        while n < 1 or self.clock() - t0 < self.warmup:
            body()
            n += 1
        self._sync()
        t0 = self.clock()
        n = 0
        while n < self.min_steps or self.clock() - t0 < self.seconds:
            body()
            n += 1
        self._sync()
        t1 = self.clock()
        self.measured[self._current] = (t0, t1)
        return n, t1 - t0

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
        """The step stubbed: every batch is touched, nothing else."""
        state = {"it": iter(self.loader), "epochs": 0}
        sink = [0, 0]
        m = {"batches": 0, "bytes_in_batches": 0}

        def body():
            b = self._next(state)
            s, n = touch(b)
            sink[0] += s
            sink[1] += n
            if self.host_batch is None:
                self.host_batch = b
            m["batches"] += 1
            m["bytes_in_batches"] += batch_bytes(b)

        # warm-up by hand: the I/O window must start after it, on the same iterator
        t0 = self.clock()
        n = 0
        while n < 1 or self.clock() - t0 < self.warmup:
            body()
            n += 1
        m.update(batches=0, bytes_in_batches=0)
        a = ProcSnapshot()
        t0 = self.clock()
        while m["batches"] < self.min_steps or self.clock() - t0 < self.seconds:
            body()
        t1 = self.clock()
        secs = t1 - t0
        self.measured["loader"] = (t0, t1)
        b = ProcSnapshot()  # before the iterator goes: its workers are still alive
        state["it"] = None
        io = proc_delta(a, b)
        m.update(seconds=secs, seconds_per_batch=secs / m["batches"], batches_per_second=m["batches"] / secs,
                 touched_leaves=sink[1], io_counted=a.available, epochs_started=state["epochs"], **io)
        return m

    def mode_full(self):
        """The whole loop; next(), transfer and step are timed apart (their exposed time)."""
        state = {"it": iter(self.loader), "epochs": 0}
        parts = {"data": 0.0, "transfer": 0.0, "step": 0.0}
        timers = []
        if self.optimizer is not None:
            timers.append(("optimizer", _Timed(self.optimizer, "step", self._sync)))
        if self.collective is not None:
            timers.append(("collective", _Timed(self.collective[0], self.collective[1], self._sync)))
        count = [0]

        def body():
            t0 = self.clock()
            b = self._next(state)
            t1 = self.clock()
            if self.host_batch is None:
                self.host_batch = b
            d = self.transfer(b)
            t2 = self.clock()
            self.step(d)
            self._sync()
            t3 = self.clock()
            parts["data"] += t1 - t0
            parts["transfer"] += t2 - t1
            parts["step"] += t3 - t2
            count[0] += 1

        for _, t in timers:
            t.__enter__()
        try:
            t0 = self.clock()
            while count[0] < 1 or self.clock() - t0 < self.warmup:
                body()
            for k in parts:
                parts[k] = 0.0
            for _, t in timers:
                t.seconds, t.calls = 0.0, 0
            count[0] = 0
            a = ProcSnapshot()
            t0 = self.clock()
            while count[0] < self.min_steps or self.clock() - t0 < self.seconds:
                body()
            t1 = self.clock()
            secs = t1 - t0
            self.measured["full"] = (t0, t1)
            b = ProcSnapshot()
        finally:
            for _, t in reversed(timers):
                t.__exit__(None, None, None)
        state["it"] = None
        n = count[0]
        m = {"steps": n, "seconds": secs, "step_seconds": secs / n, "batches_per_second": n / secs,
             "data_wait_per_step": parts["data"] / n, "transfer_per_step": parts["transfer"] / n,
             "step_per_step": parts["step"] / n}
        for name, t in timers:
            m[name + "_per_step"] = t.seconds / n
        m.update(proc_delta(a, b))
        return m

    def _device_batch(self):
        if self.host_batch is None:
            self.host_batch = next(iter(self.loader))
        if self.dev_batch is None:
            self.dev_batch = self.transfer(self.host_batch)
            self._sync()
        return self.dev_batch

    def _step_mode(self, patches=()):
        d = self._device_batch()
        sig = batch_signature(d)
        for p in patches:
            p.__enter__()
        try:
            n, secs = self._loop(lambda: self.step(d))
        finally:
            for p in reversed(patches):
                p.__exit__(None, None, None)
        return {"steps": n, "seconds": secs, "seconds_per_step": secs / n, "batch": [list(map(str, s)) for s in sig]}

    def mode_step(self):
        """The step alone on one real batch already on the device (data stubbed)."""
        return self._step_mode()

    def mode_no_optimizer(self):
        """The step with optimizer.step() stubbed out."""
        return self._step_mode([_Patched(self.optimizer, "step", _noop)])

    def mode_no_collective(self):
        """The step with the collective stubbed out (returns at once)."""
        return self._step_mode([_Patched(self.collective[0], self.collective[1], _noop)])

    def mode_transfer(self):
        """The host-to-device copy alone, on one real host batch."""
        if self.host_batch is None:
            self.host_batch = next(iter(self.loader))
        hb = self.host_batch
        n, secs = self._loop(lambda: self.transfer(hb))
        return {"copies": n, "seconds": secs, "seconds_per_copy": secs / n, "bytes_per_copy": batch_bytes(hb),
                "pinned": _pinned(hb), "tensors": sum(1 for _ in _leaves(hb))}

    def _count_flops(self):
        """FLOPs of one step as torch's profiler counts them (matmul and conv
        forward ops; a lower bound), or the user's figure."""
        if self.flops_per_step:
            return float(self.flops_per_step), "given"
        t = _torch()
        if not self.count_flops or t is None:
            return 0.0, None
        d = self._device_batch()
        watch = _MathDtypes()
        try:
            with t.autograd.profiler.profile(with_flops=True, record_shapes=True) as prof, watch:
                self.step(d)
                self._sync()
        except Exception as exc:  # a profiler that cannot count is no error of the user's code
            self._say("FLOPs not counted: %s", exc)
            return 0.0, None
        self.math_dtype = watch.dominant()
        flops = sum(getattr(e, "flops", 0) or 0 for e in prof.function_events)
        return float(flops), "torch profiler (with_flops: matmul/conv forward ops, a lower bound)" if flops else None

    # -- driving --------------------------------------------------------------------------------
    def plan(self):
        # the full loop first: the in-loop figures every stage needs
        modes = ["full", "loader"]
        if self.has_transfer:
            modes.append("transfer")
        modes.append("step")
        if self.optimizer is not None:
            modes.append("no_optimizer")
        if self.collective is not None:
            modes.append("no_collective")
        return modes

    def run(self):
        """Runs every mode; the stage file is rewritten after each one, so an
        interruption leaves the modes done so far in a valid file."""
        old = signal.getsignal(signal.SIGTERM) if _main_thread() else None
        if _main_thread():
            signal.signal(signal.SIGTERM, _raise_interrupt)
        try:
            for mode in self.plan():
                self._run_mode(mode)
                if self.errors or self.interrupted:
                    break
            if not self.errors and not self.interrupted:
                self.flops, self.flops_source = self._guarded("step", self._count_flops)
        finally:
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
            self.errors.append({"mode": mode, "error": "%s: %s" % (type(exc).__name__, exc),
                                "traceback": traceback.format_exc()})
            self._say("mode '%s' failed in your code: %s: %s", mode, type(exc).__name__, exc)
            return 0.0, None

    def _run_mode(self, mode):
        self._say("mode %s: %.1f s warm-up, %.1f s measured", mode, self.warmup, self.seconds)
        self._current = mode
        try:
            with _Bound(self.hard_bound):
                self.modes[mode] = getattr(self, "mode_" + mode)()
        except KeyboardInterrupt:
            self.interrupted = mode
            self._say("interrupted in mode '%s': writing the modes done so far", mode)
        except ModeTimeout as exc:
            self.errors.append({"mode": mode, "error": "ModeTimeout: %s" % exc, "traceback": ""})
            self._say("mode '%s' %s", mode, exc)
        except Exception as exc:
            self.errors.append({"mode": mode, "error": "%s: %s" % (type(exc).__name__, exc),
                                "traceback": traceback.format_exc()})
            self._say("mode '%s' failed in your code: %s: %s", mode, type(exc).__name__, exc)
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

    def __init__(self):
        self.work = {}
        self._mode = None
        t = _torch()
        try:
            from torch.utils._python_dispatch import TorchDispatchMode
        except Exception:
            return
        watch = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
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
    if s.errors:
        info["errors"] = s.errors
    if s.interrupted:
        info["interrupted_in"] = s.interrupted
    info["complete"] = not s.errors and not s.interrupted and all(m in modes for m in s.plan())
    full = modes.get("full")
    stages = []
    if full:
        n = full["steps"]
        doc["run"] = {"steps": n, "step_seconds": full["step_seconds"],
                      "batches_per_second": full["batches_per_second"]}
        stages = _stages(s, full)
    if stages:
        doc["stages"] = stages
    overlap = _overlap(s)
    if overlap:
        info["overlap"] = overlap
    doc["simplify"] = info
    return doc


def _loader_stage(s, full):
    ld = s.modes.get("loader")
    # The loader works beside the step (in its workers): in the loop it
    # delivers one batch per step, so its in-loop time is the step's, and the
    # step waits for it only while next() blocks (its exposed time).
    st = {"name": "data loading", "seconds_per_step": full["step_seconds"],
          "exposed_seconds_per_step": min(max(full["data_wait_per_step"], 0.0), full["step_seconds"])}
    if ld:
        st["isolated_seconds_per_step"] = ld["seconds_per_batch"]
    per_batch = (ld or {}).get("batches") or 0
    storage = ld["read_bytes"] / per_batch if per_batch and ld["io_counted"] else 0
    cached = ld["rchar"] / per_batch if per_batch and ld["io_counted"] else 0
    delivered = batch_bytes(s.host_batch) if s.host_batch is not None else 0
    if delivered and max(storage, cached) < READ_SHARE_MIN * delivered:
        # generated or decoded batches: CPU time, no storage/memory ceiling
        st.update(component="other", role="data", device="cpu")
        s._say("data loading reads %.0f B per batch, %.2g%% of the %.0f B it delivers: its time is CPU work "
               "(generating or decoding), held against no storage or memory ceiling",
               max(storage, cached), 100 * max(storage, cached) / delivered, delivered)
    elif storage > 0 and storage >= PAGE_CACHE_SHARE * cached:
        pattern = s.pattern or _guess_pattern(s.loader)
        st.update(component="disk", pattern=pattern, bytes_per_step=storage, device="cpu")
        size = _item_count(s.host_batch)
        if size:
            st["block_size"] = max(1, int(round(storage / size)))
    elif cached > 0:
        st.update(component="hostmem", bytes_per_step=cached, device="cpu")
    else:
        st.update(component="other", device="cpu")
    return st


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


def _stages(s, full):
    modes = s.modes
    stages = [_loader_stage(s, full)]
    tr = modes.get("transfer")
    if s.has_transfer:
        st = {"name": "host to device copy", "component": "copy", "direction": "h2d",
              "seconds_per_step": max(full["transfer_per_step"], 1e-9)}
        nbytes = batch_bytes(s.host_batch) if s.host_batch is not None else 0
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
    if step_iso and "no_optimizer" in modes:
        opt_iso = step_iso - modes["no_optimizer"]["seconds_per_step"]
    if step_iso and "no_collective" in modes:
        coll_iso = step_iso - modes["no_collective"]["seconds_per_step"]
    compute = {"name": "forward+backward",
               "seconds_per_step": max(full["step_per_step"] - opt_loop - coll_loop, 1e-9),
               "device": "gpu" if s.cuda else "cpu"}
    if step_iso:
        iso = step_iso - max(opt_iso or 0, 0) - max(coll_iso or 0, 0)
        if iso > 0:
            compute["isolated_seconds_per_step"] = iso
    flops = getattr(s, "flops", 0)
    if flops:
        compute.update(component="gemm", flops_per_step=flops,
                       dtype=s.math_dtype or _dtype_name(s.optimizer, s.host_batch))
    else:
        compute["component"] = "other"
    stages.append(compute)
    for name, loop, iso in (("optimizer", opt_loop, opt_iso), ("collective", coll_loop, coll_iso)):
        if (name == "optimizer" and s.optimizer is None) or (name == "collective" and s.collective is None):
            continue
        st = {"name": name, "component": "other", "device": "gpu" if s.cuda else "cpu",
              "seconds_per_step": max(loop, 1e-9)}
        if iso is not None and iso > 0:
            st["isolated_seconds_per_step"] = iso
        stages.append(st)
    return stages


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
    return out


def write_atomic(path, doc):
    write_json_atomic(path, doc, ".mlbench-simplify.")


def _ms(x):
    return "%.3f ms" % (x * 1e3)


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
    if "loader" in m:
        ld = m["loader"]
        lines.append("loader alone   %s/batch (%.2f batches/s; %.3g B/batch from storage, %.3g B/batch read "
                     "in all, workers' CPU %.2f s, main %.2f s)"
                     % (_ms(ld["seconds_per_batch"]), ld["batches_per_second"], ld["read_bytes"] / ld["batches"],
                        ld["rchar"] / ld["batches"], ld["worker_cpu_seconds"], ld["main_cpu_seconds"]))
        if ld["bytes_in_batches"] and ld["read_bytes"] > 1.5 * ld["bytes_in_batches"]:
            lines.append("               storage delivered %.1fx the bytes the batches hold: read amplification "
                         "(readahead around random reads, whole files for a part of each)"
                         % (ld["read_bytes"] / ld["bytes_in_batches"]))
    if "step" in m:
        lines.append("step alone     %s/step" % _ms(m["step"]["seconds_per_step"]))
    if "transfer" in m:
        lines.append("copy alone     %s/batch (%s)" % (_ms(m["transfer"]["seconds_per_copy"]),
                                                       "pinned" if m["transfer"]["pinned"] else "pageable"))
    if "no_optimizer" in m:
        lines.append("no optimizer   %s/step" % _ms(m["no_optimizer"]["seconds_per_step"]))
    if "no_collective" in m:
        lines.append("no collective  %s/step" % _ms(m["no_collective"]["seconds_per_step"]))
    ov = info.get("overlap")
    if ov and "full_step" in ov:
        lines.append("overlap        full step %s vs sum of isolated %s (x%.2f) and max %s (x%.2f): %s"
                     % (_ms(ov["full_step"]), _ms(ov["sum_isolated"]), ov["full_vs_sum"], _ms(ov["max_isolated"]),
                        ov["full_vs_max"], _overlap_words(ov)))
    if ov:
        lines.append("bottleneck     %s (the slowest part by itself: %s per step)"
                     % (ov["bottleneck"], _ms(ov["max_isolated"])))
    for e in info.get("errors", []):
        lines.append("error          in mode '%s': %s" % (e["mode"], e["error"]))
    if info.get("interrupted_in"):
        lines.append("interrupted    in mode '%s' (the file holds the modes done before it)" % info["interrupted_in"])
    return lines


def _overlap_words(ov):
    """Where the full step falls between the slowest isolated part (full
    overlap) and their sum (none), 10% either way. A full step faster than
    its slowest part alone cannot be: the isolated figures are off."""
    if ov["full_vs_max"] < 0.9:
        return ("the full step is faster than its slowest part alone: the isolated figures are not reliable "
                "(a busier machine while a part ran alone?): re-run, with more --seconds")
    if ov["full_vs_max"] <= 1.1:
        return "the parts overlap: the step runs at the pace of its slowest part"
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
    all_reduce" or (object, "name"): timed, and stubbed in no_collective);
    seconds (measured per mode), warmup (seconds per mode), min_steps;
    flops_per_step (else counted with torch's profiler); pattern of the
    loader's reads ("random"/"sequential"; default from its sampler); out (the
    stage file, rewritten after each mode); hard_bound (seconds after which a
    mode that never returns is stopped).

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
    a = ap.parse_args(argv)
    if not (a.seconds > 0 and math.isfinite(a.seconds)) or not (a.warmup >= 0 and math.isfinite(a.warmup)):
        ap.error("--seconds must be > 0 and --warmup >= 0")
    parts = _load_parts(a.loop)
    if a.pattern:
        parts["pattern"] = a.pattern
    try:
        simplify(out=a.out, seconds=a.seconds, warmup=a.warmup, **parts)
    except SimplifyError as e:
        print("mlbench_simplify: your code failed in %s; %s holds the modes done before it" % (e, a.out),
              file=sys.stderr)
        if e.tb_text:
            print(e.tb_text, file=sys.stderr, end="")
        return 1
    except KeyboardInterrupt:
        print("mlbench_simplify: interrupted; %s holds the modes done so far" % a.out, file=sys.stderr)
        return 130
    print("wrote %s: mlbench gap --run %s" % (a.out, a.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
