#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/, clang + ASan + UBSan) into build-fuzz
# and runs each one for SECONDS (default 60) on its corpus, then prints per
# target: executions, executions per second, coverage (libFuzzer's final
# cov/ft), corpus size, peak RSS and crashes.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      e.g. scripts/fuzz.sh 30 fuzz_trace
#   FUZZ_RUNS=10000000 scripts/fuzz.sh 7200 fuzz_trace
#                      stops each target after FUZZ_RUNS executions (or
#                      SECONDS, whichever comes first): a campaign
#
# Exits non-zero when any target crashed, leaked, tripped a sanitizer, ran
# over 1 s on one input (-timeout=1), over 2 GB of memory (-rss_limit_mb), or
# did not run at all. The input that did it is kept under
# build-fuzz/artifacts/<target>/; fix the parser and copy it into
# tests/data/fuzz-regressions/<target>/ (ctest fuzz_regressions replays it).
#
# Seeds are read in place: fuzz/corpus/<target>/ (small hand-written inputs),
# configs/, tests/data/, the regressions, and the shared Kineto fixtures
# (../shared/fixtures/kineto, copied or gunzipped into build-fuzz/seeds, never
# into the repository). What libFuzzer finds goes to build-fuzz/corpus/<target>
# and is kept between runs, so a later run starts where this one stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD

SECONDS_PER_TARGET="${1:-60}"
shift || true
ALL_TARGETS=(fuzz_trace fuzz_stagefile fuzz_suite fuzz_datasheet fuzz_gapconfig fuzz_results)
if (($#)); then TARGETS=("$@"); else TARGETS=("${ALL_TARGETS[@]}"); fi
BUILD="${FUZZ_BUILD_DIR:-build-fuzz}"
SHARED="${MLBENCH_SHARED:-$SRC/../shared}"
CLANG="${CC_FUZZ:-clang-14}"
CLANGXX="${CXX_FUZZ:-clang++-14}"

if ! command -v "$CLANG" >/dev/null; then
  echo "fuzz: $CLANG not found (apt-get install clang-14 libfuzzer-14-dev)" >&2
  exit 2
fi

echo "== fuzz: building $BUILD ($CLANG, libFuzzer + ASan + UBSan) =="
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  CC="$CLANG" CXX="$CLANGXX" cmake -S . -B "$BUILD" -DMLBENCH_FUZZ=ON -DMLBENCH_CUDA=OFF -DMLBENCH_MPI=OFF \
    -DBUILD_TESTING=OFF -DMLBENCH_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$BUILD" -j"$(nproc)" --target "${TARGETS[@]}" >/dev/null

# Per target: dictionary, largest input, seed directories.
dict_of() { case "$1" in
  fuzz_trace) echo trace ;; fuzz_stagefile) echo stagefile ;; fuzz_suite) echo suite ;;
  fuzz_datasheet) echo datasheet ;; fuzz_gapconfig) echo gapconfig ;; fuzz_results) echo results ;;
  *) echo "fuzz: unknown target $1" >&2; exit 2 ;; esac; }
# fuzz_trace's 16 KiB hold ~50 events, enough for every path of the reader
# (steps, launches, syncs, overlaps, deviceProperties); at 64 KiB it ran
# 1.5k executions/s here, at 16 KiB 3.3k.
max_len_of() { case "$1" in fuzz_trace | fuzz_results) echo 16384 ;; *) echo 8192 ;; esac; }

# Seeds that live outside fuzz/corpus, gathered into $BUILD/seeds/<target>
# (libFuzzer takes directories). Small files only: a seed larger than
# max_len is cut, and big seeds slow every execution.
gather_seeds() {
  local t=$1 dir="$BUILD/seeds/$1"
  rm -rf "$dir"
  mkdir -p "$dir"
  case "$t" in
  fuzz_trace)
    for f in "$SHARED"/fixtures/kineto/*.json.gz; do
      [ -f "$f" ] || continue
      local base size
      base=$(basename "$f")
      size=$(stat -c %s "$f")
      if [ "$size" -le 16384 ]; then cp "$f" "$dir/$base"; fi
      # The same trace uncompressed (its first 16 KiB: max_len cuts it anyway).
      gzip -dc "$f" | head -c 16384 >"$dir/${base%.gz}" || true
    done ;;
  fuzz_stagefile)
    cp tests/data/gap_run.json tests/data/gap_run.csv "$dir/"
    [ -f "$SHARED/h100/resnet18-dataloader-bound.stages.json" ] && cp "$SHARED/h100/resnet18-dataloader-bound.stages.json" "$dir/"
    ;;
  fuzz_suite) cp configs/suites/*.ini tests/data/*.ini tests/data/suites/*.ini "$dir/" ;;
  fuzz_datasheet) cp configs/hardware/*.ini "$dir/" ;;
  fuzz_gapconfig) cp configs/gap/*.ini "$dir/" ;;
  fuzz_results) cp tests/data/gap_here.json tests/data/gap_there.json "$dir/" ;;
  esac
}

export MLBENCH_CONFIG_DIR="$SRC/configs"
# malloc_context_size=0: ASan records no stack per allocation (1.7x more
# executions a second on the regex-heavy targets). Reports lose the
# allocation's stack, not the finding: for the full report, rerun the target
# on the kept input with FUZZ_ASAN_OPTIONS=malloc_context_size=30
# ($BUILD/fuzz/<target> FILE), or keep it and run ctest -R fuzz_regressions.
# The caller's ASAN_OPTIONS are not used (CI exports detect_leaks=0 for its
# sanitizer tests; the fuzzers must look for leaks): FUZZ_ASAN_OPTIONS is
# appended, and a later option wins.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=1:malloc_context_size=0${FUZZ_ASAN_OPTIONS:+:$FUZZ_ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"

failed=0
failed_targets=()
rows=()
for t in "${TARGETS[@]}"; do
  d=$(dict_of "$t")
  gather_seeds "$t"
  work="$BUILD/corpus/$t"
  art="$BUILD/artifacts/$t"
  log="$BUILD/logs/$t.log"
  mkdir -p "$work" "$art" "$(dirname "$log")" "fuzz/corpus/$t"
  seeds=("fuzz/corpus/$t" "$BUILD/seeds/$t")
  [ -d "tests/data/fuzz-regressions/$t" ] && seeds+=("tests/data/fuzz-regressions/$t")
  echo "== fuzz: $t for ${SECONDS_PER_TARGET} s =="
  before=$(find "$art" -type f | wc -l)
  rc=0
  runs=()
  [ -n "${FUZZ_RUNS:-}" ] && runs=(-runs="$FUZZ_RUNS")
  "$BUILD/fuzz/$t" -max_total_time="$SECONDS_PER_TARGET" "${runs[@]}" -timeout=1 -rss_limit_mb=2048 \
    -malloc_limit_mb=2048 -max_len="$(max_len_of "$t")" -dict="fuzz/dict/$d.dict" \
    -print_final_stats=1 -artifact_prefix="$art/" -close_fd_mask=1 \
    "$work" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -1)
  # The last status line ("#N DONE cov: X ft: Y corp: Z/..."), else the last one printed.
  last=$(grep -E '^#[0-9]+' "$log" | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  crashes=$(($(find "$art" -type f | wc -l) - before))
  verdict=ok
  if [ "$rc" -ne 0 ] || [ -z "$execs" ] || grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: ' "$log"; then
    verdict="FAILED (rc $rc; see $log)"
    failed=1
    failed_targets+=("$t")
    [ "$crashes" -gt 0 ] || crashes=1
  fi
  rows+=("$(printf '%-16s %12s %9s %7s %7s %6s %7s %7s  %s' "$t" "${execs:--}" "${rate:--}" "${cov:--}" \
    "${ft:--}" "${corp:--}" "${rss:--}" "$crashes" "$verdict")")
done

echo
echo "== fuzz: ${SECONDS_PER_TARGET} s per target${FUZZ_RUNS:+, at most $FUZZ_RUNS executions} =="
printf '%-16s %12s %9s %7s %7s %6s %7s %7s  %s\n' target executions exec/s cov ft corpus rss_mb crashes verdict
for r in "${rows[@]}"; do echo "$r"; done
# What a failed target found, printed here: CI keeps only this output, not
# build-fuzz (the stop of 2026-12-01 failed on fuzz_trace with nothing to
# read). The finding's lines, its first frames, and the input in base64
# (16 KiB at most) so that it can be replayed from the log alone.
for t in "${failed_targets[@]}"; do
  log="$BUILD/logs/$t.log"
  echo
  echo "== fuzz: $t: what it found ($log) =="
  grep -E -m 12 -A 14 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|==[0-9]+== ?ERROR' "$log" |
    grep -vE '^(INFO|#[0-9]+\s+(NEW|REDUCE|pulse|INITED))' | head -40 || true
  grep -E '^SUMMARY: |^artifact_prefix|Test unit written to' "$log" | head -4 || true
  for f in $(find "$BUILD/artifacts/$t" -type f -newer "$BUILD/seeds/$t" 2>/dev/null | head -2); do
    echo "-- $f ($(stat -c %s "$f") bytes), base64 (base64 -d > input; $BUILD/fuzz/$t input):"
    head -c 16384 "$f" | base64 -w 120
  done
done
if [ "$failed" -ne 0 ]; then
  echo "fuzz: FAILED: inputs kept under $BUILD/artifacts/<target>/" >&2
  exit 1
fi
