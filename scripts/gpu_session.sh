#!/bin/sh
# gpu_session.sh: the checks of one short GPU slot in one call, from a bundle
# (scripts/bundle; the device tool carries .bundle). Everything a step writes
# is brought back even when the call is stopped at its limit: each step's
# files go to OUTDIR as soon as it ends (the device tool returns at most 8
# files, 16 MiB each: checks.tar.gz, session.log and pair/'s five files).
#
#   scripts/gpu_session.sh OUTDIR STEP...
#
# Steps, each under its own time limit:
#   info      gpu_verify.sh info: nvidia-smi (summary, clocks/power), run.sh
#             --check, mlbench list                                              (130 s)
#   tests     gpu_verify.sh tests: run.sh --test, the GPU tests and the unit
#             tests with a GPU branch                                            (250 s)
#   pair      mlbench.gpu.pair collect OUTDIR/pair --quick-ceilings: three training
#             steps (times, traces), then the GPU ceilings (docs/gap.md)         (PAIR_BUDGET + 30 s)
#   torch     mlbench.gpu.pytorch_compare on the GEMM, d2d copy and triad rows,
#             or those TORCH_ONLY (a regex of its labels) names             (240 s)
#   simplify  mlbench.simplify on scripts/simplify_example.py (GPU path),
#             then mlbench gap on its stage file against the pair step's
#             ceilings (skipped without them)                                    (120 s)
#   simplify-ddp  the same loop with SIMPLIFY_DDP=1: its model in DDP over NCCL,
#             one rank: the runner's DDP modes (steps paired with no_sync(), the
#             buckets all-reduced alone) on a GPU                               (120 s)
#   simplify-disk  mlbench.simplify on scripts/simplify_disk_example.py: a
#             loader reading a 1 GiB file of records through a memory map at
#             shuffled offsets, cold (issue 32's random-read trap) on a GPU    (180 s)
#   nccl      nccl-smoke's 1 MiB cases (one rank: algbw, busbw 0)               (90 s)
#   fp8       gpu-verify's fp8 GEMM cases, required ok and verified             (90 s)
#   sustain   cuBLASLt bf16 8192^3 with settle_time = sustained_time = 1, 3,
#             10 s: how long a sustained window must be at the power limit,
#             from each window's rate and mean SM clock (docs/gpu-gemm-conv.md) (3 x 90 s)
#   steady    the GPU GEMM and conv cases of `all` twice in a row (steady-1,
#             steady-2.json), then their states and how far each ceiling moved
#             between the runs: issue 33's "ok two runs in a row, within 2%",
#             judged on the sustained sub-windows (docs/gpu-gemm-conv.md)     (2 x 200 s + 30 s);
#             with STEADY_BASE=FILE (a results file of the same machine, such
#             as reference-gpu's) only the second run, compared with it        (200 s + 30 s)
#   reference mlbench --suite all into OUTDIR/reference/all.json: a
#             reference machine's first file (results/reference/README.md;
#             about 6 min on an H100, 2026-11-26)                              (450 s)
#   reference-gpu  the GPU cases of `all` (GEMM, conv, copies, membw, peak,
#             launch, NCCL) into the checks as reference-gpu.json: a
#             reference's GPU part when a slot has no time for the host's
#             cases (disk, host memory, CPU GEMM; about 3 min on an H200)      (240 s)
#   reference-verify  mlbench --suite gpu-verify into
#             OUTDIR/reference/gpu-verify.json (about 4.5 min on an H100):
#             a call of its own                                                (330 s)
# PAIR_BUDGET (seconds, default 240), PAIR_PROCESSES (default 3), PAIR_FILTER
# (default: the GPU part of the default suite) and PAIR_WORKLOADS (default: its
# first three; at most four, for the 8 files a call brings back: more is a
# usage error) go to mlbench.gpu.pair collect. Issue 31's five loops (the host runs
# ahead of the GPU; tinymlp-item syncs through .item()) take two calls on one
# machine: docs/gap.md "Loops that never synchronise" gives both commands.
# SESSION_SECONDS (optional): the device call's own limit less a margin; each
# step's limit is cut to what is left of it and a step with under 10 s left is
# skipped, so the checks are packed before the call is stopped.
# Exit status: 0 when every step passed, 1 otherwise, 2 usage.
src=$(cd "$(dirname "$0")/.." && pwd)
run="$src/.bundle/run.sh"
[ $# -ge 2 ] || { sed -n '2,45p' "$0"; exit 2; }
out=$1
shift
case ${PAIR_WORKLOADS:-} in
*,*,*,*,*)
    echo "gpu_session.sh: PAIR_WORKLOADS names more than four workloads; a call brings back 8 files" \
        "(session.log, checks.tar.gz, pair/steps.json, pair/ceilings.json, one trace each): split it" >&2
    exit 2
    ;;
esac
for s in "$@"; do
    case $s in
    info | tests | pair | torch | simplify | simplify-ddp | simplify-disk | nccl | fp8 | sustain | steady | \
        reference | reference-gpu | reference-verify) ;;
    *) echo "gpu_session.sh: unknown step '$s'" >&2; exit 2 ;;
    esac
done
[ -x "$run" ] || { echo "gpu_session.sh: $run missing: run scripts/bundle and carry .bundle" >&2; exit 2; }
# The Python tools are the package in the carried working tree (python/mlbench), run as python3 -m.
export PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
work=$(mktemp -d) || exit 2
mkdir -p "$out" "$work/checks" || exit 2
log="$out/session.log"
rcfile="$work/rc"
status=0
started=$(date +%s)

# pack: the checks so far into OUTDIR/checks.tar.gz (replaced atomically).
pack() {
    cp "$log" "$work/checks/" 2>/dev/null
    tar -C "$work" -czf "$out/checks.tar.gz.part" checks && mv "$out/checks.tar.gz.part" "$out/checks.tar.gz"
}

# step NAME SECONDS COMMAND...: its output to the screen and the log.
step() {
    name=$1 limit=$2
    shift 2
    if [ -n "${SESSION_SECONDS:-}" ]; then
        left=$((started + SESSION_SECONDS - $(date +%s)))
        if [ "$left" -lt 10 ]; then
            echo "=== $name: SKIPPED: ${left}s left of SESSION_SECONDS=$SESSION_SECONDS" | tee -a "$log"
            status=1
            return
        fi
        [ "$left" -lt "$limit" ] && limit=$left
    fi
    echo "=== $name ($(date -u +%H:%M:%S), limit ${limit}s): $*" | tee -a "$log"
    { timeout -k 5 "$limit" "$@" 2>&1; echo $? >"$rcfile"; } | tee -a "$log"
    rc=$(cat "$rcfile")
    case $rc in
    0) echo "=== $name: ok ($(date -u +%H:%M:%S))" | tee -a "$log" ;;
    124) echo "=== $name: STOPPED at its ${limit}s limit" | tee -a "$log"; status=1 ;;
    *) echo "=== $name: exit $rc" | tee -a "$log"; status=1 ;;
    esac
    pack
}

c="$work/checks"
for s in "$@"; do
    case $s in
    # gpu_verify.sh's own steps (the bundle carries it), its log among the checks
    info) step info 130 "$src/.bundle/bin/gpu_verify.sh" "$c" info ;;
    tests) step tests 250 "$src/.bundle/bin/gpu_verify.sh" "$c" tests ;;
    pair)
        # Straight into OUTDIR/pair: the traces are gzip'ed already, and a
        # stopped call keeps every file written so far.
        step pair $((${PAIR_BUDGET:-240} + 30)) python3 -m mlbench.gpu.pair collect "$out/pair" \
            --mlbench "$run" --quick-ceilings --budget "${PAIR_BUDGET:-240}" --processes "${PAIR_PROCESSES:-3}" \
            ${PAIR_FILTER:+--ceilings-filter "$PAIR_FILTER"} ${PAIR_WORKLOADS:+--workloads "$PAIR_WORKLOADS"}
        ;;
    torch)
        step torch 240 python3 -m mlbench.gpu.pytorch_compare --mlbench "$run" \
            --only "${TORCH_ONLY:-gemm (bf16|tf32) 8192|d2d|triad}" --json "$c/pytorch.json"
        ;;
    simplify)
        step simplify 90 python3 -m mlbench.simplify "$src/scripts/simplify_example.py" \
            --out "$c/simplify.json" --seconds 3 --warmup 1
        # gap needs this machine's ceilings: the pair step's (a bare machine has no results/ of its own;
        # 2026-11-26 on an H200 this step failed for that)
        if [ -f "$out/pair/ceilings.json" ]; then
            step simplify-gap 30 "$run" gap --run "$c/simplify.json" --ceilings "$out/pair/ceilings.json"
        else
            echo "=== simplify-gap: skipped: no ceilings on this machine (put the pair step before simplify)" |
                tee -a "$log"
        fi
        ;;
    simplify-ddp)
        step simplify-ddp 120 env SIMPLIFY_DDP=1 python3 -m mlbench.simplify "$src/scripts/simplify_example.py" \
            --out "$c/simplify-ddp.json" --seconds 3 --warmup 1
        ;;
    simplify-disk)
        # the data file goes to the session's own folder (removed with it), not the carried tree
        step simplify-disk 180 env SIMPLIFY_DATA_DIR="$work" python3 -m mlbench.simplify \
            "$src/scripts/simplify_disk_example.py" --out "$c/simplify-disk.json" --seconds 3 --warmup 1
        ;;
    nccl)
        step nccl 90 "$run" --suite nccl-smoke --filter 'size=1048576' --out "$c/nccl.json"
        ;;
    fp8)
        step fp8 90 "$run" --suite gpu-verify --filter 'dtype=fp8' --out "$c/fp8.json"
        step fp8-required 30 python3 -m mlbench.gpu.required "$c/fp8.json" gemm/cublaslt dtype=fp8
        ;;
    sustain)
        for w in 1 3 10; do
            printf '[global]\nrepetitions = 3\nsettle_time = %s\nsustained_time = %s\n\n[sustain]\n%s\n' "$w" "$w" \
                'component = gemm
backend = cublaslt
dtype = bf16
shape = 8192x8192x8192' >"$work/sustain-$w.ini"
            step "sustain-$w" 90 "$run" --suite "$work/sustain-$w.ini" --out "$c/sustain-$w.json"
        done
        ;;
    steady)
        f='^(gemm/cublaslt/.*shape=8192x8192x8192|gemm/cublas/.*shape=8192x8192x8192|conv/cudnn/)'
        first=${STEADY_BASE:-$c/steady-1.json}
        [ -n "${STEADY_BASE:-}" ] || step steady-1 200 "$run" --suite all --filter "$f" --out "$first"
        step steady-2 200 "$run" --suite all --filter "$f" --out "$c/steady-2.json"
        # the second run first: its cases are the ones compared (a base file may hold more)
        step steady-compare 30 python3 -m mlbench.gpu.steady_compare "$c/steady-2.json" "$first"
        ;;
    reference-gpu)
        nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
            --format=csv 2>&1 | tee -a "$log"
        step reference-gpu 240 "$run" --suite all --out "$c/reference-gpu.json" \
            --filter '^(gemm/cublaslt|gemm/cublas|conv/cudnn|copy/cuda|membw/cuda|peak/cuda|launch/cuda|allreduce/nccl)/'
        ;;
    reference | reference-verify)
        # Straight into OUTDIR/reference (results files are rewritten after every case, so a step stopped at its
        # limit keeps what it measured); the GPU's state before the suite goes to the log.
        mkdir -p "$out/reference"
        nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu \
            --format=csv 2>&1 | tee -a "$log"
        if [ "$s" = reference ]; then
            step reference 450 "$run" --suite all --out "$out/reference/all.json"
        else
            step reference-verify 330 "$run" --suite gpu-verify --out "$out/reference/gpu-verify.json"
        fi
        ;;
    esac
done
rm -rf "$work"
exit $status
