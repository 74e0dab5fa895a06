#!/usr/bin/env bash
# mlbench.gpu.required (scripts/gpu_required.py), which gpu_verify.sh uses to require the fp8 GEMM
# cases ok and verified (issue 9): the first H100 run's file fails it, a run
# where they pass passes, and an unverified, zero-rate or missing case fails (mlbench.results' usable case).
set -uo pipefail
: "${SRC:?} ${WORK:?}"
command -v python3 >/dev/null || { echo "python3 not found"; exit 77; }
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
export PYTHONPATH="$SRC/python" PYTHONDONTWRITEBYTECODE=1
failed=0
check() { # check NAME WANTED-EXIT ARGS...
    local name=$1 want=$2
    shift 2
    python3 -m mlbench.gpu.required "$@" >out 2>&1
    local rc=$?
    if [ "$rc" = "$want" ]; then echo "ok   $name"; else echo "FAIL $name (exit $rc, wanted $want)"; cat out; failed=$((failed + 1)); fi
}
case_json() { # ID DTYPE STATUS VERIFICATION [RATE]: a case as a results file holds it
    local rest=${1#*/}
    printf '{"id":"%s","component":"%s","backend":"%s","params":{"dtype":"%s"},"status":"%s",' \
        "$1" "${1%%/*}" "${rest%%/*}" "$2" "$3"
    printf '"verification":{"status":"%s"},"work_unit":"flop","rate_unit":"TFLOP/s","rate_scale":1e12,' "$4"
    printf '"rate":{"median":%s},"ceiling":{"value":%s,"unit":"TFLOP/s","source":"median"}}' "${5:-500}" "${5:-500}"
}
results() { # FILE CASE...
    local f=$1
    shift
    local IFS=,
    printf '{"schema":"mlbench-results","schema_version":2,"cases":[%s]}' "$*" >"$f"
}
fp8=gemm/cublaslt/dtype=fp8,shape=4096x4096x4096
bf16=gemm/cublaslt/dtype=bf16,shape=4096x4096x4096
results fixed.json "$(case_json $fp8 fp8 ok passed)" "$(case_json $bf16 bf16 ok passed)"
results unverified.json "$(case_json $fp8 fp8 ok not-run)" "$(case_json $bf16 bf16 ok passed)"
results failed.json "$(case_json $fp8 fp8 failed not-run)" "$(case_json $bf16 bf16 ok passed)"
results none.json "$(case_json $bf16 bf16 ok passed)"
results zero.json "$(case_json $fp8 fp8 ok passed 0)" "$(case_json $bf16 bf16 ok passed)"
printf '{"cases":[%s]}' "$(case_json $fp8 fp8 ok passed)" >noschema.json
check "fp8 ok and verified passes" 0 fixed.json gemm/cublaslt dtype=fp8
check "fp8 ok but not verified fails" 1 unverified.json gemm/cublaslt dtype=fp8
grep -q "not ok and verified: $fp8: ok, verification not-run" out || { echo "FAIL message"; failed=$((failed + 1)); }
check "fp8 failed fails" 1 failed.json gemm/cublaslt dtype=fp8
check "fp8 ok and verified at rate 0 fails" 1 zero.json gemm/cublaslt dtype=fp8
check "no fp8 case fails" 1 none.json gemm/cublaslt dtype=fp8
grep -q "0 of 0 ok and verified" out || { echo "FAIL count message"; failed=$((failed + 1)); }
check "another backend's prefix does not match" 1 fixed.json gemm/cublas dtype=fp8
check "unreadable file is a usage error" 2 missing.json gemm/cublaslt dtype=fp8
check "a file that is not a results file is a usage error" 2 noschema.json gemm/cublaslt dtype=fp8
grep -q 'schema: expected "mlbench-results"' out || { echo "FAIL schema message"; cat out; failed=$((failed + 1)); }
check "bad argument is a usage error" 2 fixed.json gemm/cublaslt dtype
# The first H100 run (../shared/h100): every fp8 case failed there.
h100="${MLBENCH_SHARED:-$SRC/../shared}/h100/gpu-verify.json"
if [ -f "$h100" ]; then
    check "the first H100 run fails the fp8 requirement" 1 "$h100" gemm/cublaslt dtype=fp8
    check "the first H100 run passes the bf16 one" 0 "$h100" gemm/cublaslt dtype=bf16
else
    echo "skip the H100 evidence checks: $h100 not here"
fi
echo "gpu_required: $failed failed"
[ "$failed" = 0 ]
