#!/usr/bin/env bash
# mpi_slow_rank.sh RANK CMD [ARGS...]: runs CMD; under mpirun, the process of
# world rank RANK is stopped for 90 ms of every 100 ms (SIGSTOP/SIGCONT), i.e.
# a node running at a fraction of its speed, so fleet mode must flag it. A
# test tool only: nothing inside mlbench knows about it.
slow=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-${PMI_RANK:-0}}}
[ "$rank" = "$slow" ] || exec "$@"
"$@" &
pid=$!
trap 'kill -CONT $pid 2>/dev/null' EXIT
# Sleep without forking (read times out on a pipe nobody writes), so the
# duty cycle holds on a loaded machine.
exec 9<> <(:)
nap() { read -r -t "$1" -u 9 _ || true; }
while kill -0 "$pid" 2>/dev/null; do
    nap 0.01
    kill -STOP "$pid" 2>/dev/null
    nap 0.09
    kill -CONT "$pid" 2>/dev/null
done
wait "$pid"
