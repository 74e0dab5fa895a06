#!/usr/bin/env python3
"""multinode_check.py: checks of a results file for tests/multinode.sh.

  contexts FILE HOST...        one context per rank in fleet_ranks, rank r on
                               HOST r (its own host name, in the context too)
  launcher FILE mpirun|srun    context.launcher names the launcher and the MPI
                               library; SLURM_* job facts under srun; the
                               nodes' veths recorded, virtual, with their speed
  env FILE NAME VALUE          context.environment[NAME] == VALUE on every rank
  busbw FILE LINK LO HI        every all-reduce case verified, busbw within
                               [LO, HI] x LINK (GB/s); prints busbw/link
  fleet FILE [HOST...]         every fleet case flags exactly these hosts
  info FILE KEY TEXT           every all-reduce case's info[KEY] contains TEXT
  core_sharing FILE HOST...    context.dist.core_sharing names these hosts'
                               ranks (one machine), and the cases note it
Exit 0 when the check holds, 1 with the reason when not. Stdlib only."""
import json
import sys


def fail(msg):
    print("multinode_check: " + msg)
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))


def rank_contexts(doc):
    ranks = doc.get("fleet_ranks")
    if not isinstance(ranks, list) or not ranks:
        fail("no fleet_ranks (every rank's context) in the results file")
    return [(r.get("rank"), r.get("host"), r.get("context") or {}) for r in ranks]


def check_contexts(doc, hosts):
    got = rank_contexts(doc)
    if len(got) != len(hosts):
        fail("%d rank contexts, expected %d" % (len(got), len(hosts)))
    for i, (rank, host, ctx) in enumerate(got):
        own = (ctx.get("host") or {}).get("name")
        dist = ctx.get("dist") or {}
        if rank != i or dist.get("rank") != i:
            fail("entry %d is rank %r (its context says %r)" % (i, rank, dist.get("rank")))
        if host != hosts[i] or own != hosts[i] or dist.get("host") != hosts[i]:
            fail("rank %d: host %r, its context's host %r/%r, expected %r"
                 % (i, host, own, dist.get("host"), hosts[i]))
        if dist.get("nodes") != len(hosts):
            fail("rank %d counts %r nodes, expected %d" % (i, dist.get("nodes"), len(hosts)))
    print("contexts: " + ", ".join("rank %d on %s" % (r, h) for r, h, _ in got))


def check_launcher(doc, name):
    for rank, host, ctx in rank_contexts(doc):
        la = ctx.get("launcher")
        if not isinstance(la, dict):
            fail("rank %d: no context.launcher" % rank)
        if la.get("name") != name:
            fail("rank %d: launcher %r, expected %r" % (rank, la.get("name"), name))
        lib = la.get("mpi_library") or ""
        if "Open MPI" not in lib:
            fail("rank %d: MPI library %r" % (rank, lib))
        env = ctx.get("environment") or {}
        if name == "mpirun":
            if not any(k.startswith("OMPI_MCA_btl") for k in env):
                fail("rank %d: the mpirun's --mca settings are not in context.environment: %s"
                     % (rank, sorted(env)))
            if "OMPI_MCA_orte_precondition_transports" in env:
                fail("rank %d: a launcher's secret key is recorded" % rank)
        if name == "srun":
            sl = la.get("slurm") or {}
            for k in ("job_id", "node_list", "tasks_per_node", "ntasks"):
                if not sl.get(k):
                    fail("rank %d: context.launcher.slurm.%s missing: %s" % (rank, k, sl))
        nics = (ctx.get("dist") or {}).get("nics") or []
        veth = [n for n in nics if n.get("name") == "eth0"]
        if not veth or veth[0].get("virtual") is not True or not veth[0].get("speed_mbps"):
            fail("rank %d: the node's veth eth0 is not recorded as virtual with its speed: %s" % (rank, nics))
    print("launcher %s: %s" % (name, la.get("mpi_library")))


def check_env(doc, name, value):
    for rank, host, ctx in rank_contexts(doc):
        got = (ctx.get("environment") or {}).get(name)
        if got != value:
            fail("rank %d: environment %s = %r, expected %r" % (rank, name, got, value))
    print("environment: %s=%s on every rank" % (name, value))


def allreduce_cases(doc):
    cases = [c for c in doc.get("cases") or [] if c.get("component") == "allreduce"]
    if not cases:
        fail("no all-reduce case")
    return cases


def check_busbw(doc, link, lo, hi):
    for c in allreduce_cases(doc):
        if c.get("status") != "ok" or (c.get("verification") or {}).get("status") != "passed":
            fail("%s: status %r, verification %r, reason %r"
                 % (c.get("id"), c.get("status"), c.get("verification"), c.get("reason")))
        busbw = ((c.get("metrics") or {}).get("busbw") or {}).get("value")
        ranks = ((c.get("metrics") or {}).get("ranks") or {}).get("value")
        if not isinstance(busbw, (int, float)):
            fail("%s: no busbw" % c.get("id"))
        ratio = busbw / link
        print("busbw %.4f GB/s, link %.4f GB/s: %.2f x the link (%s ranks, %s)"
              % (busbw, link, ratio, ranks, c.get("id")))
        if not lo <= ratio <= hi:
            fail("busbw/link %.2f outside [%.2f, %.2f]" % (ratio, lo, hi))


def check_fleet(doc, hosts):
    cases = [c for c in doc.get("cases") or [] if isinstance(c.get("fleet"), dict)]
    if not cases:
        fail("no fleet case in the results file")
    for c in cases:
        flagged = sorted(f.get("host") for f in c["fleet"].get("flagged") or [])
        ranks = c.get("ranks") or []
        rates = ", ".join("%s %.3g" % (r.get("host"), r.get("rate") or 0) for r in ranks)
        print("fleet %s: %s; flagged %s" % (c.get("id"), rates, flagged or "none"))
        if flagged != sorted(hosts):
            fail("flagged %s, expected %s" % (flagged, sorted(hosts)))


def check_info(doc, key, text):
    for c in allreduce_cases(doc):
        got = (c.get("info") or {}).get(key) or ""
        if text not in got:
            fail("%s: info %s = %r, expected it to contain %r" % (c.get("id"), key, got, text))
    print("info %s: %s" % (key, got))


def check_core_sharing(doc, hosts):
    found = ((doc.get("context") or {}).get("dist") or {}).get("core_sharing") or []
    if len(found) != 1:
        fail("context.dist.core_sharing: %r, expected one finding" % found)
    got = sorted(r.get("host") for r in found[0].get("ranks") or [])
    if got != sorted(hosts):
        fail("core sharing names %s, expected %s" % (got, sorted(hosts)))
    for c in allreduce_cases(doc):
        if not any("CPUs shared" in n for n in c.get("notes") or []):
            fail("%s: no note of the shared CPUs: %s" % (c.get("id"), c.get("notes")))
    print("core sharing: " + found[0].get("reason", ""))


def main(argv):
    if len(argv) < 3:
        fail(__doc__)
    what, doc = argv[1], load(argv[2])
    rest = argv[3:]
    if what == "contexts":
        check_contexts(doc, rest)
    elif what == "launcher" and len(rest) == 1:
        check_launcher(doc, rest[0])
    elif what == "env" and len(rest) == 2:
        check_env(doc, rest[0], rest[1])
    elif what == "busbw" and len(rest) == 3:
        check_busbw(doc, float(rest[0]), float(rest[1]), float(rest[2]))
    elif what == "info" and len(rest) == 2:
        check_info(doc, rest[0], rest[1])
    elif what == "core_sharing":
        check_core_sharing(doc, rest)
    elif what == "fleet":
        check_fleet(doc, rest)
    else:
        fail("usage: " + __doc__)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
