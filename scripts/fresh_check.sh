#!/usr/bin/env bash
# Fresh-machine check: runs the README's two commands, exactly as written
# there, in a clean Debian 12 root that has only what `--variant=apt` gives
# (no compiler, no CUDA toolkit: what most users start from), then
# `mlbench --suite quick`, one `gap`, and the README's offline install of the
# Python package. Prints each step and its time; exits non-zero when a step
# fails.
#
#   scripts/fresh_check.sh [--keep] [--root DIR]
#
# ../shared (real traces, the H100 run), when present, is copied beside the
# checkout in the root, so the tests that read it run there too.
#
# Needs root (mmdebstrap, chroot, mount) and network access to a Debian mirror.
# Exits 77 (skip) with the reason when this machine cannot chroot.
# Run it before every change to dependencies: a development machine keeps what
# earlier sessions installed, so only a clean root notices a missing package.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC_DIR="$PWD"

KEEP=0
ROOT=""
while (($#)); do
  case "$1" in
    --keep) KEEP=1 ;;
    --root) ROOT="$2"; shift ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fresh_check: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done

skip() { echo "fresh_check: SKIPPED: $*" >&2; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (mmdebstrap, chroot and mount)"
command -v mmdebstrap >/dev/null || skip "mmdebstrap is not installed (apt-get install mmdebstrap)"
command -v chroot >/dev/null || skip "chroot is not available"

# The README's commands are read from the README itself, so this checks what a
# new user is told to type, not a copy that can drift: the first two ```sh blocks.
readme_commands() {
  awk '/^```sh$/ { inblock = 1; next }
       /^```$/ && inblock { inblock = 0; if (++n == 2) exit; next }
       inblock && NF { print }' README.md
}
mapfile -t README_CMDS < <(readme_commands)
if ((${#README_CMDS[@]} != 2)); then
  echo "fresh_check: expected two one-line commands in README's first two sh blocks, found ${#README_CMDS[@]}" >&2
  exit 1
fi

[ -n "$ROOT" ] || ROOT="$(mktemp -d /tmp/mlbench-fresh.XXXXXX)"
MOUNTS=()
cleanup() {
  local m
  for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
    m="${MOUNTS[i]}"
    umount -l "$m" 2>/dev/null || true
  done
  # Mounts the tests made inside the root (ip netns bind-mounts /run/netns
  # there): they are under this root only, deepest first.
  if ((!KEEP)); then
    awk -v r="$ROOT/" 'index($2, r) == 1 { print length($2), $2 }' /proc/mounts | sort -rn | cut -d' ' -f2- |
      while read -r m; do umount -l "$m" 2>/dev/null || true; done
  fi
  if ((KEEP)); then
    echo "fresh_check: root kept at $ROOT" >&2
  else
    # Only ever remove the directory this script made or was given, and only
    # after every mount under it is gone (never delete through a bind mount).
    if ! grep -q " $ROOT/" /proc/mounts; then rm -rf --one-file-system "$ROOT"; fi
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

SUMMARY=()
FAILED=0
step() {  # step NAME COMMAND...: runs, times and records one step
  local name="$1" t0 t1 rc
  shift
  echo "== fresh_check: $name" >&2
  echo "   \$ $*" >&2
  t0=$(date +%s.%N)
  set +e
  "$@"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  SUMMARY+=("$(printf '%-34s %-6s %8.1f s' "$name" "$([ $rc -eq 0 ] && echo ok || echo FAIL:$rc)" \
    "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")")
  if ((rc != 0)); then FAILED=1; fi
  return $rc
}
in_root() {  # runs a command line inside the root, in the copied checkout
  chroot "$ROOT" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb ${CI:+CI=$CI} /bin/bash -c "cd /src/mlbench && $1"
}
report() {
  echo "== fresh_check summary (root: $ROOT)"
  printf '%s\n' "${SUMMARY[@]}"
  ((FAILED == 0)) && echo "fresh_check: all steps passed" || echo "fresh_check: FAILED"
}

make_root() {
  if [ -x "$ROOT/usr/bin/apt-get" ]; then echo "reusing $ROOT" >&2; return 0; fi
  mmdebstrap --quiet --variant=apt bookworm "$ROOT"
}
copy_checkout() {
  # Tracked files plus untracked ones git does not ignore: what a clone of
  # this working tree would hold, without build trees or results.
  mkdir -p "$ROOT/src/mlbench"
  git -C "$SRC_DIR" ls-files -z --cached --others --exclude-standard |
    (cd "$SRC_DIR" && tar --null --no-recursion --ignore-failed-read -T - -cf -) |
    tar -xf - -C "$ROOT/src/mlbench"
  # The project's shared data (real traces, the H100 run: a few MB) beside
  # the checkout, as in a development clone: the tests read it in place and,
  # with CI set, fail without it. Copied into the root, never into the repository.
  local shared="$SRC_DIR/../shared"
  if [ -d "$shared" ]; then
    mkdir -p "$ROOT/src/shared"
    cp -rL "$shared/." "$ROOT/src/shared/"
  fi
}
mount_filesystems() {
  mkdir -p "$ROOT/proc" "$ROOT/sys" "$ROOT/dev" "$ROOT/dev/pts" "$ROOT/dev/shm"
  mount -t proc proc "$ROOT/proc" && MOUNTS+=("$ROOT/proc")
  mount -t sysfs sysfs "$ROOT/sys" && MOUNTS+=("$ROOT/sys")
  mount --bind /dev "$ROOT/dev" && MOUNTS+=("$ROOT/dev")
  mount -t devpts devpts "$ROOT/dev/pts" -o newinstance,ptmxmode=0666 && MOUNTS+=("$ROOT/dev/pts")
  mount -t tmpfs tmpfs "$ROOT/dev/shm" && MOUNTS+=("$ROOT/dev/shm")
  cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf"
}
# The README's Python package block ("## The Python package"), but for the line that needs the user's own loop:
# the offline pip install, PYTHONPATH, the imports; then one entry point.
readme_package_commands() {
  awk '/^## The Python package/ { sec = 1 }
       sec && /^```sh$/ { inblock = 1; next }
       inblock && /^```$/ { exit }
       inblock && NF && !/myloop/ { print }' README.md
}
python_package() {
  local cmds
  cmds=$(readme_package_commands)
  [ -n "$cmds" ] || { echo "fresh_check: README has no sh block under '## The Python package'" >&2; return 1; }
  in_root "set -e
$cmds
python3 -m mlbench.simplify --help >/dev/null"
}
gap_on_fixture() {
  if [ -f "$ROOT/src/shared/h100/resnet18-dataloader-bound.pt.trace.json.gz" ]; then
    in_root "./build/mlbench gap --run ../shared/h100/resnet18-dataloader-bound.pt.trace.json.gz \
             --ceilings ../shared/h100/all.json"
  else
    in_root "./build/mlbench gap --run tests/data/gap_run.json --ceilings results/fresh-quick.json"
  fi
}

# mmdebstrap may fail for want of a mirror; without a root nothing else can run.
step "make a clean Debian 12 root" make_root || { report; exit 1; }
step "copy the checkout in" copy_checkout || { report; exit 1; }
step "mount /proc, /sys, /dev" mount_filesystems || { report; exit 1; }
step "README command 1" in_root "${README_CMDS[0]}" || true
step "README command 2" in_root "${README_CMDS[1]}" || true
step "mlbench --suite quick" in_root "./build/mlbench --suite quick --out results/fresh-quick.json" || true
step "mlbench gap on a fixture" gap_on_fixture || true
step "the Python package (README)" python_package || true
report
exit "$FAILED"
