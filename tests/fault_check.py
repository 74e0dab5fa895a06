#!/usr/bin/env python3
"""fault_check.py RESULTS LOG: the results file a killed run left is valid and
holds every case the run announced as finished before it died.

RESULTS may be missing only when LOG announces no finished case. LOG is the
run's stderr: one "[i/n] status id: ..." line per finished case (printed after
the case is saved, harness/runner.c). Prints "cases=<in file> announced=<in
log>"; exit 1 with the reason otherwise. Stdlib only."""
import json
import os
import re
import sys

# "[3/8] ok      hostmem/stream kernel=copy: 12 GB/s ...": what follows a long label is on the next line
LINE = re.compile(r"^\[(\d+)/(\d+)\] (ok|noisy|skipped|failed) +(\S+)[^:]*:( |$)")


def main():
    results, log = sys.argv[1], sys.argv[2]
    with open(log, errors="replace") as f:
        announced = [(int(m.group(1)), m.group(4)) for m in map(LINE.match, f) if m]
    if not os.path.exists(results):
        if announced:
            sys.exit(f"FAIL: {results} missing but {len(announced)} case(s) announced")
        print("cases=none announced=0")
        return
    try:
        with open(results) as f:
            doc = json.load(f)
    except ValueError as e:
        sys.exit(f"FAIL: {results} is not valid JSON: {e}")
    if doc.get("schema") != "mlbench-results" or not isinstance(doc.get("cases"), list):
        sys.exit(f"FAIL: {results} is not an mlbench results document")
    held = [f"{c.get('component')}/{c.get('backend')}" for c in doc["cases"]]
    if [i for i, _ in announced] != list(range(1, len(announced) + 1)) or \
            held[:len(announced)] != [what for _, what in announced]:
        sys.exit(f"FAIL: {results} holds {held} but the run announced {announced}")
    print(f"cases={len(held)} announced={len(announced)} status={doc.get('status')}")


main()
