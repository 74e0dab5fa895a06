#!/bin/sh
# disk_sigint.sh: Ctrl-C (SIGINT), SIGTERM, SIGHUP or SIGPIPE in the middle of a disk suite
# leaves no test file and no temporary directory behind: while the file is
# being written, while a case is timed, in the default temporary directory and
# in a --disk-dir (which is the user's: it stays, empty). A run that finishes
# removes its file too.
# Environment (tests/CMakeLists.txt): $MLBENCH, $WORK.
set -u

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

[ -x "${MLBENCH:-}" ] || fail "MLBENCH is not an executable: '${MLBENCH:-}'"
rm -rf "$WORK"
mkdir -p "$WORK" || fail "cannot create $WORK"
cd "$WORK" || exit 1

# A case that runs for many seconds: 4 KiB cached reads, 50 repetitions.
write_job() { # $1 file size, $2 mode
    cat > job.ini <<EOF
[global]
repetitions = 50
min_time = 0.5
warmup_time = 0.1

[slow-disk]
component = disk
backend = pread
mode = $2
file_size = $1
block_size = 4k
pattern = random
EOF
}

# Waits until a test file exists under $1 (up to 60 s).
wait_for_file() {
    i=0
    while [ $i -lt 600 ]; do
        found=$(find "$1" -name 'mlbench-disk-*.dat' 2>/dev/null | head -n 1)
        [ -n "$found" ] && return 0
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

leftovers() { # what mlbench left under $1
    find "$1" -name 'mlbench-disk-*' 2>/dev/null
}

# $1 label, $2 signal, $3 file size, $4 seconds to wait after the file appears,
# $5 --disk-dir or "" for the default temporary directory
interrupt() {
    label=$1 sig=$2 size=$3 delay=$4 dir=$5
    write_job "$size" cached
    if [ -n "$dir" ]; then
        mkdir -p "$dir"
        "$MLBENCH" --suite job.ini --out "res-$label.json" -q --disk-dir "$dir" > "out-$label.txt" 2>&1 &
    else
        "$MLBENCH" --suite job.ini --out "res-$label.json" -q > "out-$label.txt" 2>&1 &
    fi
    pid=$!
    wait_for_file "$WORK" || { kill -KILL $pid 2>/dev/null; cat "out-$label.txt"; fail "$label: no test file appeared"; }
    sleep "$delay"
    kill -0 $pid 2>/dev/null || { cat "out-$label.txt"; fail "$label: mlbench ended before the signal"; }
    kill "-$sig" $pid
    wait $pid
    status=$?
    [ $status -ne 0 ] || fail "$label: exit status 0 after SIG$sig"
    left=$(leftovers "$WORK")
    [ -z "$left" ] || fail "$label: left behind after SIG$sig: $left"
    if [ -n "$dir" ]; then
        [ -d "$dir" ] || fail "$label: the user's --disk-dir $dir was removed"
        [ -z "$(ls -A "$dir")" ] || fail "$label: $dir is not empty: $(ls -A "$dir")"
    fi
    echo "ok: $label (SIG$sig, exit status $status)"
}

interrupt timed-default-dir INT 64m 2 ""
interrupt timed-disk-dir TERM 64m 2 "$WORK/userdir"
# A closed terminal, and a reader of its output gone (`mlbench 2>&1 | head`).
interrupt hangup HUP 64m 2 ""
interrupt broken-pipe PIPE 64m 2 ""
# 2 GiB take seconds to write: the signal lands while the file is filled.
free_kb=$(df -Pk "$WORK" | awk 'NR==2 {print $4}')
if [ "$free_kb" -gt 4194304 ]; then
    interrupt during-write INT 2g 0.2 ""
else
    echo "note: less than 4 GiB free, the during-write case is left out"
fi

# A run that ends normally removes its file as well.
write_job 16m cached
sed -i 's/repetitions = 50/repetitions = 1/; s/min_time = 0.5/min_time = 0.05/' job.ini
"$MLBENCH" --suite job.ini --out res-normal.json -q > out-normal.txt 2>&1 || { cat out-normal.txt; fail "normal run failed"; }
left=$(leftovers "$WORK")
[ -z "$left" ] || fail "normal run left behind: $left"
grep -q '"status":[[:space:]]*"ok"' res-normal.json || { cat res-normal.json; fail "normal run: case not ok"; }
echo "ok: normal end"
exit 0
