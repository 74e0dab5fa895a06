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

LINE = re.compile(r"^\[(\d+)/(\d+)\] (ok|noisy|skipped|failed) +(\S+):( |$)")  # after a long id, on the next line


def main():
    results, log = sys.argv[1], sys.argv[2]
    with open(log, errors="replace") as f:
        announced = [m.group(4) for m in map(LINE.match, f) if m]
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
    ids = [c.get("id") for c in doc["cases"]]
    if ids[:len(announced)] != announced:
        sys.exit(f"FAIL: {results} holds {ids} but the run announced {announced}")
    print(f"cases={len(ids)} announced={len(announced)} status={doc.get('status')}")


main()
