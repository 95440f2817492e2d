# check-daemon.sh NAME: runs once NAME's task is dead: is the daemon it left
# (pid in /tmp/daemon-NAME) gone? "Z" would be a dead process corral has not
# reaped yet; it may take a moment, so the reap is waited for.
read -r daemon <"/tmp/daemon-$1"
state=gone
[ -r "/proc/$daemon/stat" ] && read -r _ _ state _ <"/proc/$daemon/stat"
echo "daemon $daemon after the stop: $state"
# Without cgroups nothing reaches the daemon: do not wait for it.
[ -e /sys/fs/cgroup/cgroup.controllers ] || { echo "no cgroup2"; exit 1; }
tries=0
while [ -d "/proc/$daemon" ] && [ $tries -lt 400 ]; do
	sleep 0.05
	tries=$((tries + 1))
done
[ -d "/proc/$daemon" ] && echo "daemon $daemon: still there" || echo "daemon $daemon: reaped"
