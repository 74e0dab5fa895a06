"""steady_compare.py A.json B.json: two runs of the same compute cases in a row
(scripts/gpu_session.sh steady): each case's state in both and how far its
ceiling moved between them. Exit 1 when a case is noisy in either run or moved
more than 2% (issue 33's bar for a ceiling an owner can quote), or when no
case is usable in both (nothing compared is no steadiness shown), 2 when a
file is not one mlbench reads. Stdlib only."""
import sys

from .. import results


def line(ca, cb):
    """(the case's line, whether it misses the bar) for one case usable in both runs."""
    moved = abs(cb.rate - ca.rate) / min(ca.rate, cb.rate)
    # a file from before the "noisy" key does not say: "?", which misses the bar (no steadiness claimed unread)
    states = [{True: "noisy", False: "ok"}.get(x.json.get("noisy"), "?") for x in (ca, cb)]
    sub = ["%.1f%%" % (100 * x.json["sustained"]["sub_cv"])
           if (x.json.get("sustained") or {}).get("sub_cv") is not None else "-" for x in (ca, cb)]
    text = "%-5s %-5s moved %5.2f%%  sub-window cv %s / %s  %s" % (states[0], states[1], 100 * moved, sub[0],
                                                                    sub[1], ca.id)
    return text, states != ["ok", "ok"] or moved > 0.02


def main(argv=None):
    argv = sys.argv if argv is None else argv
    if len(argv) != 3:
        sys.exit(__doc__)
    try:
        a, b = (results.load(p).by_id() for p in argv[1:])
    except results.ResultsError as e:
        print("steady_compare.py: %s" % e, file=sys.stderr)
        return 2
    bad = compared = 0
    for i in a:
        # a ceiling is compared only where both runs may serve as one (mlbench's usable case)
        if i not in b or not a[i].usable or not b[i].usable:
            print("not in both, or not ok: %s" % i)
            continue
        text, missed = line(a[i], b[i])
        bad += missed
        compared += 1
        print(text)
    if compared == 0:
        print("steady_compare.py: no case is usable (status ok, verified) in both files: nothing compared",
              file=sys.stderr)
        return 1
    print("%d case(s) noisy or moved more than 2%%" % bad)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
