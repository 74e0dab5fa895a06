"""gpu_required.py: cases a GPU check cannot do without (scripts/gpu_verify.sh).

    gpu_required.py RESULTS COMPONENT/BACKEND [PARAM=VALUE ...]
    python3 -m mlbench.gpu.required RESULTS COMPONENT/BACKEND [PARAM=VALUE ...]

Every case of RESULTS (an mlbench results file) whose id starts with
COMPONENT/BACKEND/ and whose params have every PARAM=VALUE must be ok AND
verified (verification.status "passed", a ceiling above zero: mlbench's
usable case, mlbench.results), and there must be at least one.
Prints one line per case that is not, then a count. Exit 0 when all are,
1 when not (or none matched), 2 on usage or a file mlbench cannot read.
Standard library only: it runs from the bundle on a bare GPU machine.
"""
import sys

from .. import results


def picked(cases, prefix, wanted):
    """The cases under COMPONENT/BACKEND/ whose params hold every (PARAM, VALUE) of wanted."""
    return [c for c in cases
            if c.id.startswith(prefix + "/") and all(str(c.params.get(k)) == v for k, v in wanted)]


def main(argv=None):
    argv = sys.argv if argv is None else argv
    if len(argv) < 3 or any("=" not in a for a in argv[3:]):
        sys.stderr.write(__doc__)
        return 2
    path, prefix, wanted = argv[1], argv[2], [a.split("=", 1) for a in argv[3:]]
    try:
        cases = picked(results.load(path).cases, prefix, wanted)
    except results.ResultsError as e:
        print("gpu_required.py: %s" % e, file=sys.stderr)
        return 2
    bad = [c for c in cases if not c.usable]
    for c in bad:
        print("    not ok and verified: %s: %s, verification %s: %s" % (
            c.id, c.status, c.verification, (c.reason or "")[:160]))
    print("    %s %s: %d of %d ok and verified" % (
        prefix, " ".join(argv[3:]), len(cases) - len(bad), len(cases)))
    return 0 if cases and not bad else 1


if __name__ == "__main__":
    sys.exit(main())
