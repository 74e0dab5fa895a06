#!/usr/bin/env python3
"""Checks the results files of tests/test_dist.sh (stdlib only).

  check_coll_results.py collectives FILE N   MPI collective suite run on N ranks
  check_coll_results.py fleet FILE N RANK     fleet run: RANK is flagged
  check_coll_results.py inflate IN OUT K      writes IN with every rate times K
"""
import json
import sys

FACTOR = {
    "allreduce": lambda n: 2.0 * (n - 1) / n,
    "allgather": lambda n: (n - 1) / n,
    "reducescatter": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
}

problems = []


def bad(msg):
    problems.append(msg)
    print("FAIL:", msg)


def load(path):
    with open(path) as f:
        return json.load(f)


def metric(case, name):
    m = (case.get("metrics") or {}).get(name)
    return m["value"] if isinstance(m, dict) else None


def check_contexts(doc, n):
    if doc.get("status") != "complete":
        bad("status is %r, expected complete" % doc.get("status"))
    ranks = doc.get("fleet_ranks")
    if n == 1:  # one rank is not a fleet (mb_dist_active): no per-rank contexts
        if ranks is not None:
            bad("one rank, yet fleet_ranks: %r" % ranks)
        return
    if not isinstance(ranks, list) or len(ranks) != n:
        bad("fleet_ranks should list %d ranks' contexts: %r" % (n, type(ranks)))
        return
    for i, r in enumerate(ranks):
        dist = (r.get("context") or {}).get("dist") or {}
        if r.get("rank") != i or dist.get("rank") != i or dist.get("size") != n:
            bad("fleet_ranks[%d]: rank/size wrong: %r" % (i, dist))
        if not r.get("host") or not (r.get("context") or {}).get("host"):
            bad("fleet_ranks[%d]: no host" % i)


UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text):
    """A size as the suite writes it (4096, 4k, 1m, 1MiB): a case that never
    reached its backend (NCCL not built in) keeps the job file's spelling."""
    t = str(text).strip().lower()
    if t.endswith("b"):
        t = t[:-1]
    if t.endswith("i"):
        t = t[:-1]
    unit = t[-1:] if t[-1:] in UNITS else ""
    return int(float(t[:len(t) - len(unit)]) * UNITS[unit])


def expect_skip(case, n):
    p = case["params"]
    if case["backend"] == "nccl":
        return True  # no GPU here (the caller only runs this on GPU-less machines)
    size = parse_size(p["size"])
    per_rank = case["component"] in ("allgather", "reducescatter")
    es = 8 if p["dtype"] == "double" else 4
    if case["component"] == "broadcast" and p["inplace"] in ("0", "false"):
        return True
    return (size // (n * es) if per_rank else size // es) == 0


def collectives(path, n):
    doc = load(path)
    check_contexts(doc, n)
    rows = []
    for c in doc.get("cases", []):
        if c["component"] not in FACTOR:
            continue
        cid = c["id"]
        if expect_skip(c, n):
            if c["status"] != "skipped" or not c.get("reason"):
                bad("%s: expected skipped with a reason, got %s %r" % (cid, c["status"], c.get("reason")))
            continue
        if c["status"] != "ok":
            bad("%s: %s: %s" % (cid, c["status"], c.get("reason")))
            continue
        if (c.get("verification") or {}).get("status") != "passed":
            bad("%s: verification %r" % (cid, c.get("verification")))
        f = FACTOR[c["component"]](n)
        work_f = f if f > 0 else 1.0  # one rank: busbw 0, the rate is algbw
        algbw, busbw, nbytes = metric(c, "algbw"), metric(c, "busbw"), metric(c, "bytes")
        if None in (algbw, busbw, nbytes) or metric(c, "ranks") != n:
            bad("%s: metrics missing: %r" % (cid, c.get("metrics")))
            continue
        # busbw recomputed from algbw and n
        if abs(busbw - algbw * f) > 1e-9 * max(busbw, 1e-30):
            bad("%s: busbw %g != algbw %g x %g" % (cid, busbw, algbw, f))
        # the case's rate is busbw: work per iteration = bytes x factor
        if abs(c["work_per_iteration"] - nbytes * work_f) > 1e-6 * nbytes:
            bad("%s: work_per_iteration %g != bytes %g x %g" % (cid, c["work_per_iteration"], nbytes, work_f))
        if f == 0 and not any("one rank: no bus traffic" in x for x in c.get("notes") or []):
            bad("%s: one rank, busbw %g, but no note says why it is 0" % (cid, busbw))
        rate = (c.get("rate") or {}).get("median")
        if not rate or rate <= 0 or c.get("rate_unit") != "GB/s":
            bad("%s: rate %r %r" % (cid, rate, c.get("rate_unit")))
            continue
        # all ranks report one time: the fleet spread of a collective is nil
        fl = c.get("fleet") or {}
        if fl.get("min") != fl.get("max"):
            bad("%s: ranks report different rates %r..%r" % (cid, fl.get("min"), fl.get("max")))
        rows.append((c["component"], c["params"]["dtype"], c["params"]["inplace"], parse_size(c["params"]["size"]),
                     rate, algbw, metric(c, "latency")))
    print("%-14s %-6s %-7s %10s %12s %12s %12s" % ("collective", "dtype", "inplace", "bytes", "busbw GB/s",
                                                  "algbw GB/s", "latency us"))
    for r in rows:
        print("%-14s %-6s %-7s %10d %12.3f %12.3f %12.1f" % r)
    if not rows:
        bad("no collective case ran")


def fleet(path, n, slow):
    doc = load(path)
    check_contexts(doc, n)
    flagged_any = False
    for c in doc.get("cases", []):
        fl = c.get("fleet")
        if not isinstance(fl, dict) or len(c.get("ranks", [])) != n:
            bad("%s: no fleet summary over %d ranks" % (c.get("id"), n))
            continue
        print("%s: median %s min %s max %s flagged %s" % (c["id"], fl.get("median"), fl.get("min"),
                                                          fl.get("max"), fl.get("flagged")))
        ranks = [f["rank"] for f in fl.get("flagged", [])]
        if slow not in ranks:
            bad("%s: rank %d not flagged (flagged: %r)" % (c["id"], slow, ranks))
        flagged_any = True
    if not flagged_any:
        bad("no case with a fleet summary")


def inflate(src, dst, k):
    doc = load(src)
    for c in doc.get("cases", []):
        if isinstance(c.get("rate"), dict) and c["rate"].get("median"):
            c["rate"]["median"] *= k
        # schema 2: the one ceiling --baseline compares
        if isinstance(c.get("ceiling"), dict) and c["ceiling"].get("value"):
            c["ceiling"]["value"] *= k
        for r in c.get("ranks") or []:
            if isinstance(r.get("rate"), (int, float)):
                r["rate"] *= k
    with open(dst, "w") as f:
        json.dump(doc, f)


def main(argv):
    mode = argv[1]
    if mode == "collectives":
        collectives(argv[2], int(argv[3]))
    elif mode == "fleet":
        fleet(argv[2], int(argv[3]), int(argv[4]))
    elif mode == "inflate":
        inflate(argv[2], argv[3], float(argv[4]))
    else:
        print(__doc__)
        return 2
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
