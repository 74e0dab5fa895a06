#!/usr/bin/env bash
# mlbench.gpu.pytorch_compare's own logic, here without a GPU or torch.
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
export PYTHONPATH="$SRC/python:$SRC/tests" PYTHONDONTWRITEBYTECODE=1 MLBENCH
python3 -m unittest -v pytorch_compare_test 2>&1
