#!/usr/bin/env bash
# fuzz_regressions (ctest): replays tests/data/fuzz-regressions/<target>/ and
# fuzz/corpus/<target>/ through each <target>_replay binary.
#   replay.sh SOURCE_DIR REPLAY_BINARY...
set -euo pipefail
src=$1
shift
status=0
for bin in "$@"; do
  t=$(basename "$bin")
  t=${t%_replay}
  dirs=()
  for d in "$src/tests/data/fuzz-regressions/$t" "$src/fuzz/corpus/$t"; do
    [ -d "$d" ] && dirs+=("$d")
  done
  ((${#dirs[@]})) || continue
  if ! "$bin" "${dirs[@]}"; then
    echo "fuzz_regressions: $t FAILED on one of ${dirs[*]}" >&2
    status=1
  fi
done
exit $status
