"""Time the stages of a training loop and write an mlbench stage-metrics file.

The file (format "mlbench-stages", version 1, docs/stage-format.md) is what
`mlbench gap --run FILE` compares with the ceilings mlbench measured on the
machine. Standard library only; torch is used when it is importable and you
ask for CUDA synchronisation.

    from mlbench.stages import StageTimer

    timer = StageTimer(cuda_sync=True)   # torch.cuda.synchronize() at each stage end
    for x, y in loader_batches():
        with timer.stage("dataloading", component="disk", pattern="random",
                         block_size=131072) as s:
            x, y = next(batches)
            s.add(bytes=x.nbytes + y.nbytes)
        with timer.stage("h2d", component="copy", direction="h2d", memory="pinned") as s:
            x = x.cuda(non_blocking=True)
            s.add(bytes=x.nbytes, calls=1)
        with timer.stage("forward", component="gemm", dtype="bf16") as s:
            loss = model(x, y)
            s.add(flops=2 * batch * params)          # your FLOP count
        with timer.stage("optimizer", component="other"):
            opt.step()
        timer.step()
    timer.write("stages.json", gpu_utilization=0.62)   # optional run figures

    # then: mlbench gap --run stages.json

Without cuda_sync, GPU work is asynchronous and its time lands in whichever
stage synchronises next: ask for cuda_sync=True when you time GPU stages.
"""

import json
import math
import os
import sys
import tempfile
import time

FORMAT = "mlbench-stages"
VERSION = 1

# component -> the key its work is counted in (None: time only)
WORK_KEYS = {
    "gemm": "flops", "conv": "flops", "attention": "flops",
    "copy": "bytes", "membw": "bytes", "disk": "bytes", "hostmem": "bytes",
    "allreduce": "bytes", "allgather": "bytes", "reducescatter": "bytes", "broadcast": "bytes",
    "launch": "launches", "sync": "syncs",
    "other": None,
}
ATTRIBUTES = ("device", "dtype", "direction", "memory", "pattern", "block_size", "ranks", "op", "role")
RUN_FIGURES = ("gpu_utilization", "cpu_utilization", "batches_per_second")


class StageError(ValueError):
    """A stage that cannot be written as a valid stage file."""


class _Stage:
    def __init__(self, name, component, attrs):
        self.name = name
        self.component = component
        self.attrs = attrs
        self.seconds = 0.0
        self.work = 0.0
        self.calls = 0
        self.entries = 0


class _Handle:
    """What `with timer.stage(...) as s` gives: s.add(...) counts work."""

    def __init__(self, stage):
        self._stage = stage

    def add(self, calls=0, **work):
        key = WORK_KEYS[self._stage.component]
        for k, v in work.items():
            if k != key:
                raise StageError("stage %r (%s) counts its work in %s, not %s"
                                 % (self._stage.name, self._stage.component, key or "nothing (time only)", k))
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                raise StageError("stage %r: %s must be a finite number >= 0, got %r" % (self._stage.name, k, v))
            self._stage.work += v
        if calls:
            self._stage.calls += int(calls)


def _torch_sync():
    """torch.cuda.synchronize when torch and a CUDA device are there, else None."""
    try:
        import torch  # noqa: F401  (optional)
    except ImportError:
        return None, "torch is not importable: stage ends are not synchronised"
    if not torch.cuda.is_available():
        return None, "torch.cuda is not available: stage ends are not synchronised"
    return torch.cuda.synchronize, None


class StageTimer:
    """Accumulates seconds and work per named stage over a run.

    cuda_sync: call torch.cuda.synchronize() at the end of every stage (when
    torch with CUDA is importable) so asynchronous GPU work is timed in the
    stage that launched it. clock and sync_fn replace time.perf_counter and
    the synchronisation (tests, other frameworks).
    """

    def __init__(self, cuda_sync=False, clock=time.perf_counter, sync_fn=None):
        self._clock = clock
        self._sync = sync_fn
        self.notes = []
        if sync_fn is None and cuda_sync:
            self._sync, note = _torch_sync()
            if note:
                self.notes.append(note)
        self._stages = {}
        self._order = []
        self._steps = 0
        self._first = None
        self._last = None
        self._open = None

    # -- timing ------------------------------------------------------------
    def _get(self, name, component, attrs):
        if component not in WORK_KEYS:
            raise StageError("stage %r: unknown component %r (one of %s)"
                             % (name, component, ", ".join(sorted(WORK_KEYS))))
        for k in attrs:
            if k not in ATTRIBUTES:
                raise StageError("stage %r: unknown attribute %r (one of %s)" % (name, k, ", ".join(ATTRIBUTES)))
        st = self._stages.get(name)
        if st is None:
            st = self._stages[name] = _Stage(name, component, dict(attrs))
            self._order.append(name)
        elif st.component != component or st.attrs != attrs:
            raise StageError("stage %r was %s %r before, now %s %r"
                             % (name, st.component, st.attrs, component, attrs))
        return st

    def stage(self, name, component="other", **attrs):
        """Context manager timing one entry of stage `name`. The attributes
        (dtype, pattern, block_size, ...) must be the same at every entry."""
        return _Timed(self, self._get(name, component, attrs))

    def add(self, name, component="other", seconds=0.0, calls=0, **work_and_attrs):
        """Adds time and work measured elsewhere to stage `name` (totals)."""
        attrs = {k: v for k, v in work_and_attrs.items() if k in ATTRIBUTES}
        work = {k: v for k, v in work_and_attrs.items() if k not in ATTRIBUTES}
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
                or seconds < 0:
            raise StageError("stage %r: seconds must be a finite number >= 0, got %r" % (name, seconds))
        st = self._get(name, component, attrs)
        _Handle(st).add(calls=calls, **work)
        st.seconds += seconds
        st.entries += 1

    def step(self):
        """Marks the end of one training step."""
        self._steps += 1
        self._last = self._clock()

    # -- output ------------------------------------------------------------
    def to_dict(self, **run_figures):
        """The stage file as a dict. run_figures: gpu_utilization, cpu_utilization
        (fractions 0..1), batches_per_second."""
        if self._open is not None:
            raise StageError("stage %r is still open" % self._open)
        if not self._order:
            raise StageError("no stage was timed")
        run = {}
        if self._steps:
            run["steps"] = self._steps
        if self._first is not None and self._last is not None and self._last > self._first:
            run["total_seconds"] = self._last - self._first
        for k, v in run_figures.items():
            if k not in RUN_FIGURES:
                raise StageError("unknown run figure %r (one of %s)" % (k, ", ".join(RUN_FIGURES)))
            if v is None:
                continue
            if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                raise StageError("run figure %s must be a finite number >= 0, got %r" % (k, v))
            if k.endswith("utilization") and v > 1:
                raise StageError("%s must be a fraction 0..1, got %r" % (k, v))
            run[k] = v
        stages = []
        for name in self._order:
            st = self._stages[name]
            key = WORK_KEYS[st.component]
            d = {"name": name, "component": st.component}
            d.update(st.attrs)
            if key is not None:
                if st.work <= 0:
                    raise StageError("stage %r (%s) needs its work: call s.add(%s=...) inside the stage"
                                     % (name, st.component, key))
                d[key] = st.work
            if st.calls:
                d["calls"] = st.calls
            if st.seconds <= 0:
                raise StageError("stage %r took no measurable time" % name)
            d["seconds"] = st.seconds
            stages.append(d)
        doc = {"format": FORMAT, "version": VERSION}
        if run:
            doc["run"] = run
        doc["stages"] = stages
        return doc

    def write(self, path, **run_figures):
        """Writes the stage file atomically (a temporary file, then rename)."""
        doc = self.to_dict(**run_figures)
        write_json_atomic(path, doc, ".mlbench-stages.")
        return doc


class _Timed:
    def __init__(self, timer, stage):
        self._timer = timer
        self._stage = stage

    def __enter__(self):
        t = self._timer
        if t._open is not None:
            raise StageError("stage %r opened inside stage %r: stages do not nest" % (self._stage.name, t._open))
        t._open = self._stage.name
        self._start = t._clock()
        if t._first is None:
            t._first = self._start
        return _Handle(self._stage)

    def __exit__(self, exc_type, exc, tb):
        t = self._timer
        if t._sync is not None:
            t._sync()
        end = t._clock()
        t._open = None
        self._stage.seconds += end - self._start
        self._stage.entries += 1
        t._last = end
        return False


def main(argv):
    """`python3 -m mlbench.stages --help`: prints the usage example."""
    print(__doc__)
    return 0 if argv[1:] in ([], ["--help"], ["-h"]) else 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))


def write_json_atomic(path, doc, prefix):
    """Writes doc as JSON to path atomically: a temporary file named
    prefix* in the same folder, synced, then renamed over path; on any
    error the temporary file is removed and path is left as it was."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=prefix, dir=directory)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
