#!/bin/sh
# gpu_verify.sh: issue 3's GPU checks in one call on a GPU machine, from a
# bundle (scripts/bundle copies this file to .bundle/bin/).
#
#   .bundle/bin/gpu_verify.sh OUTDIR [STEP ...]
#
# Steps (default: all, in this order), each under its own time limit so one
# that hangs cannot take the others with it:
#   info     nvidia-smi, run.sh --check, mlbench list            (60 s)
#   tests    the CTest label gpu: run.sh --test                  (300 s)
#   verify   mlbench --suite gpu-verify (GEMM every dtype, bf16 8192^3,
#            cuDNN every direction/layout/precision)             (420 s)
#   io       mlbench --suite copy,membw,peak,launch               (420 s)
#   pytorch  pytorch_compare.py: mlbench / PyTorch ratios          (420 s)
# All of them take about half an hour at worst; a device session gives one
# command 10 minutes, so split them: `... info tests verify`, then `... io`,
# then `... pytorch`. OUTDIR receives gpu_verify.log (everything printed),
# verify.json, io.json, pytorch.json: results files are rewritten after
# every case, so a step stopped at its limit keeps what it measured.
# Exit status: 0 when every step ran and passed, 1 otherwise.
bin=$(cd "$(dirname "$0")" && pwd)
run="$bin/../run.sh"
[ $# -ge 1 ] || { sed -n '2,20p' "$0"; exit 2; }
out=$1
shift
[ $# -gt 0 ] || set -- info tests verify io pytorch
for s in "$@"; do
    case $s in
    info | tests | verify | io | pytorch) ;;
    *) echo "gpu_verify.sh: unknown step '$s' (info, tests, verify, io, pytorch)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out" || exit 2
log="$out/gpu_verify.log"
rcfile=$(mktemp) || exit 2
trap 'rm -f "$rcfile"' EXIT
status=0

# step NAME SECONDS COMMAND...: runs it, its output to the screen and the log.
step() {
    name=$1 limit=$2
    shift 2
    echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*" | tee -a "$log"
    # sh has no pipefail: the command's own status goes through a file.
    { timeout "$limit" "$@" 2>&1; echo $? >"$rcfile"; } | tee -a "$log"
    rc=$(cat "$rcfile")
    case $rc in
    0) echo "=== $name: ok" | tee -a "$log" ;;
    77) echo "=== $name: SKIPPED (no usable GPU: nothing verified)" | tee -a "$log"; status=1 ;;
    124) echo "=== $name: STOPPED at its ${limit}s limit" | tee -a "$log"; status=1 ;;
    *) echo "=== $name: exit $rc" | tee -a "$log"; status=1 ;;
    esac
}

for s in "$@"; do
    case $s in
    info)
        step nvidia-smi 30 nvidia-smi
        step clocks 30 nvidia-smi -q -d CLOCK,POWER,PERFORMANCE
        step check 30 "$run" --check
        step list 30 "$run" list
        ;;
    tests) step tests 300 "$run" --test ;;
    verify) step verify 420 "$run" --suite gpu-verify --out "$out/verify.json" ;;
    io) step io 420 "$run" --suite copy,membw,peak,launch --out "$out/io.json" ;;
    pytorch) step pytorch 420 python3 "$bin/pytorch_compare.py" --mlbench "$run" --json "$out/pytorch.json" ;;
    esac
done
exit $status
