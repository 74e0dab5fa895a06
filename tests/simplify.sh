#!/usr/bin/env bash
# mlbench.simplify (python/mlbench/simplify.py) with real PyTorch (tests/simplify_test.py):
# designed pipelines, the disk ceiling on this file system, honest stubs, and
# a CPU trace of this torch through `mlbench gap`; and the cold page cache
# (tests/simplify_cold_test.py): the random-read trap on a large memory-mapped
# file, random and in order, against the same loop timed by hand, and a
# decode-bound loader. Needs Debian's python3-torch (scripts/setup.sh's test
# dependencies): without it the test skips (77), and fails when CI is set.
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
PY=/usr/bin/python3   # Debian's Python: the one that sees python3-torch
if ! "$PY" -c 'import torch' 2>/dev/null; then
  echo "python3-torch is not installed (scripts/setup.sh installs it)"
  [ -n "${CI:-}" ] && exit 1
  exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
# the cold tests write a file of up to 1 GiB under $WORK: gone on every way out
trap 'rm -rf "$WORK"/cold.* "$WORK"/decode.*' EXIT
export PYTHONPATH="$SRC/python:$SRC/tests" PYTHONDONTWRITEBYTECODE=1 MLBENCH SRC WORK
cd "$WORK" && "$PY" -m unittest -v simplify_test simplify_cold_test 2>&1
