#!/usr/bin/env bash
# fault_resultsdir.sh: the results directory fills up, or turns read-only, in
# the middle of a run (docs/reliability.md, "Faults during a run"). The run
# must exit non-zero with a message that names the results file, the cause
# and where the results so far are; that file must still be valid JSON
# holding every case announced before the fault, and no temporary file may be
# left in the directory.
# Where this process may mount (root, CI), the directory is a 2 MiB tmpfs
# that a filler file fills up, or that `mount -o remount,ro` turns read-only,
# once the first case is announced. Elsewhere the same faults come from
# $MB_WRITE_FAIL_SHIM (tests/write_fail_shim.c, LD_PRELOAD), which makes
# writes under the directory fail with ENOSPC/EROFS from that moment on.
# FAULT_RUNS runs per fault (default 1; docs/reliability.md quotes 10).
# Needs $MLBENCH, $SRC, $WORK; $MB_WRITE_FAIL_SHIM (tests/CMakeLists.txt).
set -u

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

[ -x "${MLBENCH:-}" ] || fail "MLBENCH is not an executable: '${MLBENCH:-}'"
runs=${FAULT_RUNS:-1}
[ -d "$WORK/mnt" ] && umount "$WORK/mnt" 2>/dev/null
rm -rf "$WORK"
mkdir -p "$WORK/mnt" || fail "cannot create $WORK"
cd "$WORK" || exit 1

use_mount=0
if [ "${FAULT_NO_MOUNT:-0}" != 1 ] && mount -t tmpfs -o size=2m tmpfs mnt 2>/dev/null; then
    umount mnt
    use_mount=1
    trap 'umount "$WORK/mnt" 2>/dev/null' EXIT
    echo "faults from a 2 MiB tmpfs (mount works here)"
else
    [ -f "${MB_WRITE_FAIL_SHIM:-}" ] || { echo "cannot mount and no write-failure shim: skipped"; exit 77; }
    echo "faults from the write-failure shim (cannot mount here)"
fi

# Waits until the run's log announces its first finished case (60 s at most).
wait_first_case() {
    for _ in $(seq 1 600); do
        grep -q '^\[1/' "$1" && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}

inject() { # $1 full|ro
    if [ $use_mount = 1 ]; then
        if [ "$1" = full ]; then
            dd if=/dev/zero of=mnt/filler bs=64k 2>/dev/null # stops at ENOSPC
        else
            # EBUSY while a results write is open: try again a moment later.
            for _ in $(seq 1 50); do
                mount -o remount,ro mnt 2>/dev/null && return 0
                sleep 0.02
            done
            fail "cannot remount mnt read-only"
        fi
    else
        touch trigger
    fi
}

one_run() { # $1 full|ro, $2 run number
    kind=$1 i=$2
    rm -f trigger
    if [ $use_mount = 1 ]; then
        mount -t tmpfs -o size=2m tmpfs mnt || fail "mount tmpfs"
        "$MLBENCH" --suite "$SRC/tests/data/fault_cpu_slow.ini" --out mnt/r.json >"log-$kind-$i.txt" 2>&1 &
    else
        # An ASan build (.ci/run) insists on its runtime first in the preload list.
        env LD_PRELOAD="$MB_WRITE_FAIL_SHIM" ASAN_OPTIONS="verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" MB_SHIM_DIR="$WORK/mnt" MB_SHIM_TRIGGER="$WORK/trigger" \
            MB_SHIM_ERRNO="$([ "$kind" = ro ] && echo EROFS || echo ENOSPC)" \
            "$MLBENCH" --suite "$SRC/tests/data/fault_cpu_slow.ini" --out mnt/r.json >"log-$kind-$i.txt" 2>&1 &
    fi
    pid=$!
    wait_first_case "log-$kind-$i.txt" $pid || { cat "log-$kind-$i.txt"; fail "$kind $i: no case finished"; }
    inject "$kind"
    wait $pid
    rc=$?
    log="log-$kind-$i.txt"
    what="$kind $i (exit $rc)"
    [ $rc -ne 0 ] || { cat "$log"; fail "$what: exit status 0 after the results directory broke"; }
    cause="No space left on device"
    [ "$kind" = ro ] && cause="Read-only file system"
    grep -q "^mlbench: .*mnt/r.json.*$cause.*; results so far are in mnt/r.json" "$log" ||
        { cat "$log"; fail "$what: no clear message (file, '$cause', where the results so far are)"; }
    # The case measured when the fault hit is shown, marked as not saved.
    grep -q '^\[[0-9]*/[0-9]*\] NOT SAVED: ' "$log" || { cat "$log"; fail "$what: the unsaved case is not shown as such"; }
    check=$(python3 "$SRC/tests/fault_check.py" mnt/r.json "$log") || { cat "$log"; fail "$what: $check"; }
    case $check in *announced=0*) fail "$what: $check" ;; esac
    left=$(find mnt -name '*.tmp.*')
    [ -z "$left" ] || fail "$what: left behind: $left"
    [ $use_mount = 1 ] && { umount mnt || fail "umount"; }
    echo "ok: $what: $check; $(grep '^mlbench: ' "$log" | head -n 1)"
}

for i in $(seq 1 "$runs"); do
    one_run full "$i"
    one_run ro "$i"
done
echo "fault_resultsdir: $((2 * runs))/$((2 * runs)) runs passed ($runs full, $runs read-only;" \
    "$([ $use_mount = 1 ] && echo tmpfs || echo write-failure shim))"
exit 0
