#!/usr/bin/env python3
"""readme_outputs.py MLBENCH RUNDIR README [--update]: the outputs README.md
shows are what mlbench prints today.

A fenced block right after a line `<!-- output: ARGS -->` is an excerpt of
`mlbench ARGS` run in RUNDIR (golden_outputs.sh's folder of fixed-name
links): its lines must appear in the output one after another, from its
first line on. A line of "..." alone ends the excerpt (what follows is
left out on purpose; a line that merely ends in dots, as a step-split bar of
host time does, is compared like any other: taken for the mark, it left the
ranking of `--target all` unchecked until 2026-11-29). --update rewrites
each block from the output.

Why: a README that shows an older output than the code prints (it happened:
stop 37's README gave "514 µs" and "29 ms" where the gap command printed 513
and 28.9) is a headline that disagrees with the table. Stdlib only."""
import os
import re
import shlex
import subprocess
import sys

MARK = re.compile(r"^<!-- output: (.+) -->$")


def blocks(lines):
    """(ARGS, index of the block's first line, index past its last)."""
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m:
            continue
        if i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            sys.exit(f"readme: line {i + 1}: an output mark not followed by a fenced block")
        end = i + 2
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        if end == len(lines):
            sys.exit(f"readme: line {i + 2}: the block never closes")
        yield m.group(1), i + 2, end


def compared(block):
    """The block's lines up to the first elided one."""
    out = []
    for line in block:
        if line.strip() == "...":
            break
        out.append(line)
    return out


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    mlbench, rundir, readme = argv[1], argv[2], argv[3]
    update = "--update" in argv[4:]
    with open(readme, encoding="utf-8") as f:
        lines = f.read().split("\n")
    failures = checked = 0
    edits = []
    for args, lo, hi in blocks(lines):
        want = compared(lines[lo:hi])
        if not want:
            sys.exit(f"readme: line {lo + 1}: an output block with nothing to compare")
        if "../shared" in args and not os.path.isdir(os.path.join(rundir, "..", "shared")):
            if os.environ.get("CI"):
                sys.exit(f"readme: line {lo + 1}: ../shared is missing (CI is set: it must be there)")
            print(f"readme: line {lo + 1}: skipped, no ../shared")
            continue
        got = subprocess.run([mlbench] + shlex.split(args), cwd=rundir, capture_output=True, text=True,
                             timeout=120).stdout.split("\n")
        checked += 1
        at = [k for k, line in enumerate(got) if line == want[0]]
        start = at[0] if at else -1
        if update:
            if start < 0:
                sys.exit(f"readme: line {lo + 1}: '{want[0]}' not in the output of mlbench {args}")
            edits.append((lo, lo + len(want), got[start:start + len(want)]))
            continue
        if start < 0 or got[start:start + len(want)] != want:
            failures += 1
            print(f"readme: the block at README.md line {lo + 1} is not what mlbench {args} prints:", file=sys.stderr)
            have = got[start:start + len(want)] if start >= 0 else []
            for k, line in enumerate(want):
                now = have[k] if k < len(have) else "(missing)"
                if line != now:
                    print(f"  README: {line}\n  prints: {now}", file=sys.stderr)
                    break
    if checked == 0:
        sys.exit("readme: no output block marked in " + readme)
    if update:
        for lo, hi, new in reversed(edits):
            lines[lo:hi] = new
        with open(readme, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        print(f"readme: rewrote {checked} output block(s)")
        return 0
    if failures:
        print(f"readme: {failures} of {checked} output block(s) differ; if meant, rerun golden_outputs.sh --update",
              file=sys.stderr)
        return 1
    print(f"readme: {checked} output block(s) as printed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
