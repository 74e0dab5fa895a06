"""peers disk: direct reads of one file against fio's default and fio's best configuration (the mode's description
is in mlbench.peers' docstring). Standard library only."""

import os
import re
import shlex
import shutil
import statistics

from .common import die, ratio, rotate, run_fio, run_job, say, usable_case

# name, backend, block size, qd, pattern
DISK_CASES = [
    ("pread 4k random qd1", "pread", "4k", 1, "random"),
    ("io_uring 4k random qd1", "io_uring", "4k", 1, "random"),
    ("io_uring 4k random qd32", "io_uring", "4k", 32, "random"),
    ("io_uring 128k random qd32", "io_uring", "128k", 32, "random"),
    ("io_uring 1m random qd32", "io_uring", "1m", 32, "random"),   # a loader's readahead-sized requests
    ("io_uring 1m sequential qd32", "io_uring", "1m", 32, "sequential"),
]


def disk_job(case, reps, min_time, size, extra=""):
    name, backend, bs, qd, pattern = case
    text = (f"[global]\nrepetitions = {reps}\nmin_time = {min_time}\nwarmup_time = 0.3\nfile_size = {size}\n\n"
            f"[c]\ncomponent = disk\nbackend = {backend}\nmode = direct\npattern = {pattern}\nblock_size = {bs}\n")
    if backend == "io_uring":
        text += f"qd = {qd}\n"
    return text + extra


def mlbench_variants(case):
    """(label, job-file lines): mlbench's default first, then its own options
    that a ceiling may take (the suites run `sqpoll = off, on` for the queued
    cases, and `submit = batch, each` at depth 32; gap and compare keep the
    fastest), as fio_variants are fio's."""
    if case[1] != "io_uring":
        return [("mlbench", "")]
    variants = [("mlbench", ""), ("mlbench sqpoll", "sqpoll = on\n"), ("mlbench iopoll", "iopoll = on\n")]
    if case[3] > 1:  # at depth 1 the two ways of submitting are one
        variants += [("mlbench submit each", "submit = each\n"),
                     ("mlbench sqpoll submit each", "sqpoll = on\nsubmit = each\n")]
    return variants


def fio_base(case, path, runtime, ramp):
    _, backend, bs, qd, pattern = case
    return ["fio", "--name=peers", f"--filename={path}", "--readonly", "--direct=1",
            f"--rw={'randread' if pattern == 'random' else 'read'}", f"--bs={bs}", f"--iodepth={qd}",
            "--time_based", f"--runtime={runtime}", f"--ramp_time={ramp}", "--randrepeat=0",
            "--norandommap", "--iomem_align=4096", "--output-format=json"]


def fio_variants(case):
    """(label, extra options): the default first, then the candidates for
    fio's best configuration."""
    _, backend, _, qd, _ = case
    if backend == "pread":
        return [("psync (default)", ["--ioengine=psync"]),
                ("pvsync2", ["--ioengine=pvsync2"]),
                ("pvsync2 --hipri", ["--ioengine=pvsync2", "--hipri"])]
    fixed = ["--ioengine=io_uring", "--fixedbufs", "--registerfiles"]
    batch = [f"--iodepth_batch_submit={qd}", f"--iodepth_batch_complete_max={qd}"]
    return [("io_uring (default)", ["--ioengine=io_uring"]),
            ("fixedbufs registerfiles", fixed),
            ("fixedbufs registerfiles batch", fixed + batch),
            ("fixedbufs registerfiles sqthread_poll", fixed + ["--sqthread_poll=1"]),
            ("fixedbufs registerfiles hipri", fixed + ["--hipri"])]


def keep_candidates(cal, default):
    """The calibrated candidates ({label: rate}) that run in every pair: the
    default always, the others at least half the fastest."""
    top = max(cal.values())
    return {k for k, v in cal.items() if k == default or v >= top / 2}


def fio_rate(cmd):
    """fio's MB/s, or (None, why)."""
    got, err = run_fio(cmd)
    return (got.mbps, None) if got else (None, err)


def make_disk_file(args, work):
    """mlbench's own pattern file, kept for the comparison (removed with work)."""
    datadir = os.path.join(work, "data")
    os.mkdir(datadir)
    cases = run_job(args.mlbench, disk_job(DISK_CASES[0], 1, 0.01, args.size), work,
                    ["--disk-dir", datadir], {"MLBENCH_DISK_KEEP": "1"})
    c = usable_case(cases, "creating the test file")
    return c.json["info"]["file"]


def compare_disk(args, work, report):
    if shutil.which("fio") is None:
        die("fio is not installed (apt-get install fio)")
    path = args.disk_file or make_disk_file(args, work)
    say(f"disk: file {path} ({os.path.getsize(path) >> 20} MiB)")
    for case in DISK_CASES:
        name = case[0]
        if args.filter and not re.search(args.filter, name):
            continue
        jobs = {label: disk_job(case, args.reps, args.min_time, args.size, extra)
                for label, extra in mlbench_variants(case)}
        job = jobs["mlbench"]
        base = fio_base(case, path, args.runtime, args.ramp)
        variants = fio_variants(case)
        # Calibration: each fio candidate once. Refused ones (e.g. --hipri
        # without poll queues) and ones under half the fastest (e.g.
        # --sqthread_poll competing for 2 vCPUs) leave; the others run in
        # every pair, and fio's best is the one with the highest median.
        cal, why = {}, {}
        for label, extra in variants:
            rate, err = fio_rate(base + extra)
            if rate is None:
                why[label] = err
            else:
                cal[label] = rate
        if variants[0][0] not in cal:
            report.append({"section": "disk", "case": name, "error": f"fio default failed: {why}"})
            continue
        kept = [(label, extra) for label, extra in variants if label in keep_candidates(cal, variants[0][0])]
        # mlbench's own options, calibrated the same way: a skipped one (iopoll
        # without poll queues, sqpoll refused) and one under half the fastest
        # leave; the default always stays.
        ml_cal, ml_why = {}, {}
        for label in jobs:
            cases = run_job(args.mlbench, jobs[label], work, ["--disk-file", path])
            good = [c for c in cases if c.usable]
            if good:
                ml_cal[label] = good[0].json["rate"]["median"]
            else:
                ml_why[label] = (cases[0].reason or cases[0].state) if cases else "no case"
        if "mlbench" not in ml_cal:
            report.append({"section": "disk", "case": name, "error": f"mlbench failed: {ml_why.get('mlbench')}"})
            continue
        ml_kept = [k for k in jobs if k in keep_candidates(ml_cal, "mlbench")]
        say(f"disk {name}: calibration " + ", ".join(f"{k} {v:.0f}" for k, v in {**ml_cal, **cal}.items())
            + (f"; refused: {', '.join(list(ml_why) + list(why))}" if why or ml_why else ""))
        tools = ml_kept + [label for label, _ in kept] + (["baseline"] if args.baseline else [])
        opts = dict(kept)
        rates = {k: [] for k in tools}
        for pair in range(args.pairs):
            for tool in rotate(tools, pair):
                if tool in jobs or tool == "baseline":
                    binary = args.baseline if tool == "baseline" else args.mlbench
                    c = usable_case(run_job(binary, jobs.get(tool, job), work, ["--disk-file", path]), name)
                    rates[tool].append(c.json["rate"]["median"])
                else:
                    rate, err = fio_rate(base + opts[tool])
                    if rate is None:
                        raise RuntimeError(f"fio ({tool}) failed: {err}")
                    rates[tool].append(rate)
            say(f"disk {name}: pair {pair + 1}: " + ", ".join(f"{k} {v[-1]:.1f}" for k, v in rates.items()))
        default = variants[0][0]
        best = max(opts, key=lambda k: statistics.median(rates[k]))
        ml_best = max(ml_kept, key=lambda k: statistics.median(rates[k]))
        row = {"section": "disk", "case": name, "unit": "MB/s",
               "rates": {"mlbench": rates["mlbench"], "mlbench best": rates[ml_best], "fio default": rates[default],
                         "fio best": rates[best]},
               "all_rates": rates, "fio_calibration": cal, "fio_refused": why, "fio_best": best,
               "mlbench_calibration": ml_cal, "mlbench_refused": ml_why, "mlbench_best": ml_best,
               "peer_commands": {"fio default": shlex.join(base + opts[default]),
                                 "fio best": shlex.join(base + opts[best])},
               "mlbench_job": job, "mlbench_best_job": jobs[ml_best]}
        if args.baseline:
            row["rates"]["baseline"] = rates["baseline"]
        # mlbench's default against fio's default; the best of each tool's options against each other
        # (the ceiling: the suites run mlbench's options and keep the faster)
        row["ratios"] = {
            "vs fio default": ratio(rates["mlbench"], rates[default]),
            "vs fio best": ratio(rates["mlbench"], rates[best]),
            "best vs fio best": ratio(rates[ml_best], rates[best]),
        }
        if args.baseline:
            row["ratios"]["vs baseline"] = ratio(rates["mlbench"], rates["baseline"])
        report.append(row)
