#!/usr/bin/env bash
# Installs what mlbench needs from Debian (idempotent), configures and builds.
#   scripts/setup.sh                 build into ./build
#   BUILD_DIR=b WERROR=ON SANITIZE=ON scripts/setup.sh
#   BUILD_DIR=build-nocuda CUDA=OFF scripts/setup.sh   (no GPU components,
#                                    as on a machine without a CUDA toolkit)
#   TEST_DEPS=ON scripts/setup.sh    with the tests' packages too (python3-torch, numpy, Slurm,
#                                    iperf3); scripts/test.sh sets it. A machine that only
#                                    measures gets no daemons (slurmd, munge) and no torch.
# CUDA is optional: with /usr/local/cuda (or nvcc on PATH) the GPU components
# are built, otherwise they list as "not built in".
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake pkg-config git
  libbenchmark-dev    # Google Benchmark: the timing engine
  libcjson-dev        # results files, stage files
  libinih-dev         # suite job files and datasheets (INI)
  liburing-dev        # io_uring disk reads
  libcmocka-dev       # unit tests
  libopenblas-dev     # CPU GEMM
  libdnnl-dev         # CPU convolution (oneDNN)
  libopenmpi-dev openmpi-bin   # MPI backend and multi-node runs
  libhwloc-dev        # NUMA placement of pinned buffers
  zlib1g-dev          # streaming PyTorch trace reader (.json, .json.gz)
  fio                 # the disk peer (python3 -m mlbench.peers disk, disk-cases)
  python3             # the stdlib-only Python package (python/mlbench) and test checks
  python3-pip         # pip install ./python offline: brings Debian's setuptools and wheel (README)
)

# The tests' dependencies (TEST_DEPS=ON adds them; scripts/test.sh does):
# they are also what the GEMM peers (python3 -m mlbench.peers gemm) need. Debian's CPU
# PyTorch runs the simplify known-answer tests (tests/simplify.sh) and
# writes the CPU-only trace that `mlbench gap` reads there. tests/multinode.sh
# builds simulated nodes and launches mlbench on them the way users do.
TEST_PACKAGES=(
  python3-torch       # tests/simplify_test.py: real DataLoader, model, profiler trace;
                      # mlbench.peers gemm: the oneDNN GEMM peer (torch mkldnn_linear)
  python3-numpy       # mlbench.peers gemm: the OpenBLAS GEMM peer (numpy a @ b, /usr/bin/python3)
  iproute2            # tests/multinode.sh: network namespaces, veths, a bridge, tc tbf
  iperf3              # tests/multinode.sh: the link busbw is compared with
  slurm-wlm slurmctld slurmd munge   # tests/multinode.sh: srun across the simulated nodes
  libpmix-dev         # srun --mpi=pmix: Slurm's PMIx plugin loads libpmix.so (only in -dev)
)
if [ "${TEST_DEPS:-OFF}" = ON ]; then
  PACKAGES+=("${TEST_PACKAGES[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# nvcc is usually not on PATH in a plain shell.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" \
  -DMLBENCH_WERROR="${WERROR:-OFF}" \
  -DMLBENCH_SANITIZE="${SANITIZE:-OFF}" \
  -DMLBENCH_CUDA="${CUDA:-ON}" >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
echo "setup: built $BUILD_DIR/mlbench" >&2
