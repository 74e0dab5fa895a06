#!/usr/bin/env bash
# python_package.sh: the Python package (python/mlbench) from the source tree and installed offline the README's
# way (pip --no-build-isolation --no-index --target DIR, Debian's setuptools and wheel): its entry points, its
# imports, and its one results reader against mlbench's own (tests/results_reader_test.py: known answers, and real
# files classified as the C reader classifies them); every wrapper in scripts/ runs. Needs Debian's python3-pip
# (scripts/setup.sh): without it the test skips (77), and fails when CI is set.
set -uo pipefail
: "${MLBENCH:?} ${SRC:?} ${WORK:?}"
PY=/usr/bin/python3   # Debian's Python: the one the README installs into
if ! "$PY" -m pip --version >/dev/null 2>&1; then
  echo "python3-pip is not installed (scripts/setup.sh installs it)"
  [ -n "${CI:-}" ] && exit 1
  exit 77
fi
rm -rf "$WORK" && mkdir -p "$WORK/run" && cd "$WORK/run" || exit 1
export PYTHONDONTWRITEBYTECODE=1 MLBENCH SRC
fails=0
check() { local name=$1; shift; if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi; }
# runs COMMAND... with its output in $WORK/out; wants exit status WANT
expect_exit() { local want=$1; shift; "$@" >"$WORK/out" 2>&1; local got=$?
  [ "$got" -eq "$want" ] || { echo "  exit $got, wanted $want: $*"; tail -5 "$WORK/out"; return 1; }; }
has() { grep -q -- "$1" "$WORK/out" || { echo "  no '$1' in the output of the last command"; return 1; }; }

# the checks on one copy of the package, on PYTHONPATH=$1 (tests/ is added for the unit tests' module)
package_checks() {
  local where=$1 path=$2
  check "$where: python3 -m mlbench.simplify --help" expect_exit 0 env PYTHONPATH="$path" "$PY" -m mlbench.simplify --help
  check "$where:   its usage" has "usage: simplify.py"
  check "$where: python3 -m mlbench.peers --help" expect_exit 0 env PYTHONPATH="$path" "$PY" -m mlbench.peers --help
  check "$where:   its modes" has "python3 -m mlbench.peers disk-cases"
  check "$where: python3 -m mlbench.peers disk-cases --help" expect_exit 0 env PYTHONPATH="$path" "$PY" \
      -m mlbench.peers disk-cases --help
  check "$where: python3 -m mlbench.stages --help" expect_exit 0 env PYTHONPATH="$path" "$PY" -m mlbench.stages --help
  check "$where: python3 -m mlbench.gpu.pair --help" expect_exit 0 env PYTHONPATH="$path" "$PY" -m mlbench.gpu.pair --help
  check "$where: imports, from this copy" env PYTHONPATH="$path" "$PY" - "$path" "$SRC/CMakeLists.txt" <<'PY'
import os, re, sys
before = set(sys.modules)
import mlbench
from mlbench import stages, simplify, results  # noqa: F401  (the README's import)
from mlbench.gpu import pair, required, steady_compare, pytorch_compare  # noqa: F401
from mlbench.peers import common, disk, disk_cases, gemm, stream  # noqa: F401
root = os.path.realpath(sys.argv[1])
for m in (mlbench, stages, simplify, results, pair, common):
    assert os.path.realpath(m.__file__).startswith(root + os.sep), (m.__name__, m.__file__, root)
# one version: the C project's
want = re.search(r"project\(mlbench VERSION ([0-9.]+)", open(sys.argv[2]).read()).group(1)
assert mlbench.__version__ == want, (mlbench.__version__, want)
# stdlib only: importing every module brought in nothing from an installed package (torch, numpy...)
new = [(n, getattr(sys.modules[n], "__file__", None) or "") for n in set(sys.modules) - before]
outside = [n for n, f in new if not n.startswith("mlbench") and ("site-packages" in f or "dist-packages" in f)]
assert not outside, outside
PY
  check "$where: results reader: known answers and mlbench's own reading" env PYTHONPATH="$path:$SRC/tests" \
      "$PY" -m unittest -v results_reader_test
}

package_checks "source tree" "$SRC/python"

# Every wrapper in scripts/ (tests, gpu_session.sh, the bundle and the docs call them by path) runs the package.
for w in peers fio_compare.py mlbench_stages.py mlbench_simplify.py gpu_pair.py pytorch_compare.py; do
  check "scripts/$w --help" expect_exit 0 "$PY" "$SRC/scripts/$w" --help
done
check "scripts/gpu_required.py: usage" expect_exit 2 "$PY" "$SRC/scripts/gpu_required.py"
check "scripts/steady_compare.py: usage" expect_exit 1 "$PY" "$SRC/scripts/steady_compare.py"
check "scripts/steady_compare.py: two reference files" expect_exit 1 "$PY" "$SRC/scripts/steady_compare.py" \
    "$SRC/results/reference/h100-sxm/all.json" "$SRC/results/reference/h100-sxm/gpu-verify.json"
check "  moved ceilings named" has "case(s) noisy or moved more than 2%"
check "scripts/steady_compare.py: no case usable in both" expect_exit 1 "$PY" "$SRC/scripts/steady_compare.py" \
    "$SRC/results/reference/h100-sxm/gpu-verify.json" "$SRC/tests/data/cpu_quick.json"
check "  says nothing was compared" has "nothing compared"
check "scripts/steady_compare.py: not a results file" expect_exit 2 "$PY" "$SRC/scripts/steady_compare.py" \
    "$SRC/tests/data/gap_run.json" "$SRC/tests/data/gap_run.json"
check "  says why" has 'schema: expected "mlbench-results"'
# code written before the package imports the old module names from scripts/: they are the package's modules
check "import mlbench_stages, mlbench_simplify from scripts/" env PYTHONPATH="$SRC/scripts" "$PY" -c '
import mlbench_stages, mlbench_simplify
from mlbench import stages, simplify
assert mlbench_stages is stages and mlbench_simplify is simplify
assert mlbench_stages.StageTimer and mlbench_simplify.simplify'

# Installed offline, the README's command, on a copy of python/ (pip builds in the folder it is given: the source
# tree stays as it is), without this machine's pip configuration (no index, no local wheels: Debian's setuptools
# and wheel build it).
readme_cmd="python3 -m pip install --no-build-isolation --no-index --target"
check "README gives the install command" grep -q -- "$readme_cmd" "$SRC/README.md"
mkdir -p "$WORK/src" && cp -r "$SRC/python" "$WORK/src/" && rm -rf "$WORK/src/python/build" "$WORK/src/python/"*.egg-info
check "pip install --no-build-isolation --no-index --target DIR ./python" expect_exit 0 env -u PIP_FIND_LINKS \
    -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE=/dev/null PIP_NO_INPUT=1 \
    sh -c "cd '$WORK/src' && '$PY' -m pip install --no-build-isolation --no-index --target '$WORK/site' ./python"
check "  the package is there" test -f "$WORK/site/mlbench/results.py" -a -f "$WORK/site/mlbench/gpu/pair.py" \
    -a -f "$WORK/site/mlbench/peers/__main__.py"
if [ -f "$WORK/site/mlbench/__init__.py" ]; then
  package_checks "installed" "$WORK/site"
fi

[ "$fails" -eq 0 ] || { echo "$fails check(s) failed"; exit 1; }
echo "all python_package checks passed"
