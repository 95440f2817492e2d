# Runs beside the fork bomb, in another group: once the bomb was contained
# and its task is dead (corral removed its cgroup), it forks as usual.
echo "bystander up"
# Without cgroups (corral refuses the bomb's limits) there is no bomb to
# wait for.
[ -e /sys/fs/cgroup/cgroup.controllers ] || { echo "bystander: no cgroup2"; exit 1; }
tries=0
while [ ! -e /tmp/bomb-contained ] || [ -d /sys/fs/cgroup/bomb/bomb ]; do
	tries=$((tries + 1))
	[ $tries -gt 400 ] && { echo "bystander: the bomb never ended"; exit 1; }
	sleep 0.05
done
echo "bystander after the bomb: $(echo forks work) ($(ps -o pid | wc -l) processes)"
