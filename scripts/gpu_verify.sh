#!/bin/sh
# gpu_verify.sh: issue 3's GPU checks in one call on a GPU machine, from a
# bundle (scripts/bundle copies this file to .bundle/bin/).
#
#   .bundle/bin/gpu_verify.sh OUTDIR [STEP ...]
#
# Steps (default: all, in this order), each under its own time limit so one
# that hangs cannot take the others with it:
#   info     nvidia-smi, run.sh --check, mlbench list          (4 x 30 s)
#   tests    the CTest label gpu: run.sh --test                   (240 s)
#   verify   mlbench --suite gpu-verify (GEMM every dtype, bf16 8192^3,
#            cuDNN every direction/layout/precision)              (420 s);
#            the cuBLASLt fp8 cases must be ok and verified
#   io       mlbench --suite copy,membw,peak,launch, every ok case
#            verified (launch stream_sync included)                (360 s)
#   pytorch  pytorch_compare.py: mlbench / PyTorch ratios; GEMM rows
#            burst/burst and sustained/sustained >= 0.97          (540 s)
#   nccl     mlbench --suite nccl-smoke: the NCCL path on one GPU, every
#            case ok and verified (one rank: algbw, busbw 0)  (240 s)
# Every ok compute case (gemm, conv, peak) must report both its burst and
# its sustained phase (rate, SM clock, power, throttle reasons).
# The limits are worst cases. A device call may run 600 s, so call it in
# groups whose limits add up to less: `OUTDIR info tests`, `OUTDIR verify`,
# `OUTDIR io`, `OUTDIR pytorch`, `OUTDIR nccl`. OUTDIR receives
# gpu_verify.log (all output, appended), verify.json, io.json, pytorch.json
# and nccl.json; results files are rewritten after every case, so a step
# stopped at its limit keeps what it measured.
# Exit status: 0 when every step ran and passed, 1 otherwise, 2 usage.
bin=$(cd "$(dirname "$0")" && pwd)
run="$bin/../run.sh"
# The Python package the bundle carries beside bin/ (python/mlbench, scripts/bundle): the results reader and the
# GPU tools, run as python3 -m mlbench.gpu.<tool>.
export PYTHONPATH="$bin/../python${PYTHONPATH:+:$PYTHONPATH}"
[ $# -ge 1 ] || { sed -n '2,25p' "$0"; exit 2; }
out=$1
shift
[ $# -gt 0 ] || set -- info tests verify io pytorch nccl
for s in "$@"; do
    case $s in
    info | tests | verify | io | pytorch | nccl) ;;
    *) echo "gpu_verify.sh: unknown step '$s' (info, tests, verify, io, pytorch, nccl)" >&2; exit 2 ;;
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

# suite NAME SECONDS RESULTS SUITE [all|verified]: an mlbench step, then what
# its results file holds: a step whose cases were all skipped verified nothing
# (exit 1); skipped cases are listed with their reasons either way. With
# `all`, every case must be ok with its output verified (passed); with
# `verified`, every ok case must be verified (launch stream_sync was not). The file is read by
# mlbench.results: verified means usable there (ok, verification passed, a ceiling above zero).
suite() {
    step "$1" "$2" "$run" --suite "$4" --out "$3"
    [ -f "$3" ] || return
    { python3 - "$3" "${5:-any}" <<'PY' 2>&1; echo $? >"$rcfile"; } | tee -a "$log"
import collections, sys
from mlbench import results
try:
    cases = results.load(sys.argv[1]).cases
except results.ResultsError as e:
    print("    %s" % e)
    sys.exit(5)
count = collections.Counter(c.status for c in cases)
print("    %d ok, %d skipped, %d failed of %d" % (count["ok"], count["skipped"], count["failed"], len(cases)))
unverified = 0
for c in cases:
    if c.status != "ok":
        print("    %s %s: %s" % (c.status, c.id, (c.reason or "")[:160]))
    elif not c.usable:
        unverified += 1
        print("    ok but verification %s, ceiling %g %s: %s" % (c.verification, c.rate, c.rate_unit, c.id))
# Compute cases: both phases, each with its rate and what NVML saw.
missing = []
for c in cases:
    if c.status != "ok" or c.component not in ("gemm", "conv", "peak"):
        continue
    for ph in ("burst", "sustained"):
        p = c.json.get(ph)
        if not isinstance(p, dict) or not (p.get("rate") or 0) > 0:
            missing.append("%s: no %s rate" % (c.id, ph))
        elif c.backend not in ("openblas", "onednn") and p.get("sm_clock_mhz") is None:
            missing.append("%s: %s without an SM clock reading" % (c.id, ph))
        else:
            print("    %-9s %.4g %s @%s MHz, %s W, reasons %s: %s" % (
                ph, p["rate"], c.rate_unit, (p.get("sm_clock_mhz") or {}).get("mean"),
                (p.get("power_w") or {}).get("mean"), p.get("throttle_reasons"), c.id[:90]))
for m in missing:
    print("    PHASES MISSING " + m)
if missing:
    sys.exit(4)
if sys.argv[2] == "all":
    sys.exit(0 if cases and count["ok"] == len(cases) and not unverified else 2)
if sys.argv[2] == "verified" and unverified:
    sys.exit(3)
sys.exit(0 if count["ok"] else 1)
PY
    case $(cat "$rcfile") in
    0) ;;
    2) echo "=== $1: NOT ALL OK (every case must be ok and verified)" | tee -a "$log"; status=1 ;;
    3) echo "=== $1: AN OK CASE WAS NOT VERIFIED" | tee -a "$log"; status=1 ;;
    4) echo "=== $1: BURST/SUSTAINED MISSING on compute cases" | tee -a "$log"; status=1 ;;
    5) echo "=== $1: NOT A RESULTS FILE mlbench reads" | tee -a "$log"; status=1 ;;
    *) echo "=== $1: NOTHING RAN (no case ok)" | tee -a "$log"; status=1 ;;
    esac
}

# require NAME RESULTS COMPONENT/BACKEND PARAM=VALUE...: every such case in
# the results file must be ok and verified, and there must be one
# (mlbench.gpu.required, the bundle's bin/gpu_required.py).
require() {
    name=$1
    shift
    { python3 -m mlbench.gpu.required "$@" 2>&1; echo $? >"$rcfile"; } | tee -a "$log"
    if [ "$(cat "$rcfile")" != 0 ]; then
        echo "=== $name: REQUIRED CASES NOT OK: $2 $3" | tee -a "$log"
        status=1
    fi
}

for s in "$@"; do
    case $s in
    info)
        step nvidia-smi 30 nvidia-smi
        step clocks 30 nvidia-smi -q -d CLOCK,POWER,PERFORMANCE
        step check 30 "$run" --check
        step list 30 "$run" list
        ;;
    tests) step tests 240 "$run" --test ;;
    verify)
        suite verify 420 "$out/verify.json" gpu-verify
        # Issue 9: fp8 failed on the first H100 (misaligned B scale pointer).
        [ -f "$out/verify.json" ] && require verify "$out/verify.json" gemm/cublaslt dtype=fp8
        ;;
    io) suite io 360 "$out/io.json" copy,membw,peak,launch verified ;;
    pytorch) step pytorch 540 python3 -m mlbench.gpu.pytorch_compare --mlbench "$run" --json "$out/pytorch.json" ;;
    nccl) suite nccl 240 "$out/nccl.json" nccl-smoke all ;;
    esac
done
exit $status
