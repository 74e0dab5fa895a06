#!/usr/bin/env python3
"""gpu_required.py: cases a GPU check cannot do without (scripts/gpu_verify.sh).

    gpu_required.py RESULTS COMPONENT/BACKEND [PARAM=VALUE ...]

Every case of RESULTS (an mlbench results file) whose id starts with
COMPONENT/BACKEND/ and whose params have every PARAM=VALUE must be ok AND
verified (verification.status "passed"), and there must be at least one.
Prints one line per case that is not, then a count. Exit 0 when all are,
1 when not (or none matched), 2 on usage or an unreadable file.
Standard library only: it runs from the bundle on a bare GPU machine.
"""
import json
import sys


def main(argv):
    if len(argv) < 3 or any("=" not in a for a in argv[3:]):
        sys.stderr.write(__doc__)
        return 2
    path, prefix, wanted = argv[1], argv[2], [a.split("=", 1) for a in argv[3:]]
    try:
        with open(path) as f:
            cases = json.load(f)["cases"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("gpu_required.py: %s: %s" % (path, e), file=sys.stderr)
        return 2
    picked = [c for c in cases
              if str(c.get("id", "")).startswith(prefix + "/")
              and all(str((c.get("params") or {}).get(k)) == v for k, v in wanted)]
    bad = [c for c in picked
           if c.get("status") != "ok" or (c.get("verification") or {}).get("status") != "passed"]
    for c in bad:
        print("    not ok and verified: %s: %s, verification %s: %s" % (
            c.get("id"), c.get("status"), (c.get("verification") or {}).get("status"),
            (c.get("reason") or "")[:160]))
    print("    %s %s: %d of %d ok and verified" % (
        prefix, " ".join(argv[3:]), len(picked) - len(bad), len(picked)))
    return 0 if picked and not bad else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
