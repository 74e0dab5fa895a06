#!/bin/sh
# multinode_agent.sh: Open MPI's rsh agent for tests/multinode.sh's simulated
# nodes (--mca plm_rsh_agent): "agent HOST COMMAND..." runs COMMAND, as ssh
# would, inside HOST's network and UTS namespaces instead of on another
# machine. HOST is a node's address; $MBN_RUN/nodes maps it:
#   ADDRESS NETNS UTS_FILE MOUNT_NS_FILE
# When $MBN_RUN/cgroups names this address ("ADDRESS CGROUP" lines), the
# command first joins that cgroup (the node's CPU limit).
host=$1
shift
[ -n "${MBN_RUN:-}" ] || { echo "multinode_agent: MBN_RUN is not set" >&2; exit 1; }
line=$(grep -m1 "^$host " "$MBN_RUN/nodes") || { echo "multinode_agent: unknown node '$host'" >&2; exit 1; }
netns=$(echo "$line" | cut -d' ' -f2)
uts=$(echo "$line" | cut -d' ' -f3)
mnt=$(echo "$line" | cut -d' ' -f4)
if [ -f "$MBN_RUN/cgroups" ] && cg=$(grep -m1 "^$host " "$MBN_RUN/cgroups"); then
    echo $$ >"$(echo "$cg" | cut -d' ' -f2)/cgroup.procs" || exit 1
fi
# ssh hands the remote shell one string: the same here.
# $MBN_NICE: the priority of the node's daemon and ranks (tests/multinode.sh).
exec nice -n "${MBN_NICE:-0}" nsenter --net="/run/netns/$netns" --uts="$uts" --mount="$mnt" -- /bin/sh -c "$*"
