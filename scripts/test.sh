#!/usr/bin/env bash
# Builds (via scripts/setup.sh, idempotent) and runs every test with CTest.
# GPU tests (label gpu) report "skipped" without a CUDA device.
set -euo pipefail
cd "$(dirname "$0")/.."
TEST_DEPS="${TEST_DEPS:-ON}" scripts/setup.sh
BUILD_DIR="${BUILD_DIR:-build}"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j2 "$@"
