#!/bin/sh
# disk_overhead.sh [BUILD_DIR]: builds bench/disk_overhead.c against the
# library in BUILD_DIR (default: build) and prints the per-read cost of the
# stamp check and of the latency sample, in ns (docs/disk.md).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM
cc -O2 -std=c17 -D_GNU_SOURCE -I"$src/kernels" -I"$src/harness" "$src/bench/disk_overhead.c" \
    -L"$build" -Wl,-rpath,"$build" -lmlbench -o "$out/disk_overhead"
"$out/disk_overhead"
