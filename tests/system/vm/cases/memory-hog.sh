# Reads its own cgroup's memory limits, then becomes a memory hog: awk
# doubles a string up to 128M, far above memory.max. exec, so that the hog
# is the task's main process: the OOM killer must kill it.
. /cases/own-cgroup.sh
echo "cgroup $cgroup"
echo "memory.max $(cat "$cgroup/memory.max")"
echo "memory.swap.max $(cat "$cgroup/memory.swap.max")"
echo "allocating 128M"
exec awk 'BEGIN { s = "x"; for (i = 0; i < 27; i++) s = s s; print "survived holding " length(s) " bytes" }'
