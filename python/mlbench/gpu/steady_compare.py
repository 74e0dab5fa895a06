#!/usr/bin/env python3
"""steady_compare.py A.json B.json: two runs of the same compute cases in a row
(scripts/gpu_session.sh steady): each case's state in both and how far its
ceiling moved between them. Exit 1 when a case is noisy in either run or moved
more than 2% (issue 33's bar for a ceiling an owner can quote). Stdlib only."""
import json
import sys


def cases(path):
    return {c["id"]: c for c in json.load(open(path))["cases"]}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = cases(sys.argv[1]), cases(sys.argv[2])
    bad = 0
    for i in a:
        if i not in b or a[i]["status"] != "ok" or b[i]["status"] != "ok":
            print("not in both, or not ok: %s" % i)
            continue
        ca, cb = a[i]["ceiling"]["value"], b[i]["ceiling"]["value"]
        moved = abs(cb - ca) / min(ca, cb)
        states = ["noisy" if x["noisy"] else "ok" for x in (a[i], b[i])]
        sub = ["%.1f%%" % (100 * x["sustained"]["sub_cv"]) if (x.get("sustained") or {}).get("sub_cv") is not None
               else "-" for x in (a[i], b[i])]
        bad += states != ["ok", "ok"] or moved > 0.02
        print("%-5s %-5s moved %5.2f%%  sub-window cv %s / %s  %s" % (states[0], states[1], 100 * moved, sub[0],
                                                                       sub[1], i))
    print("%d case(s) noisy or moved more than 2%%" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
