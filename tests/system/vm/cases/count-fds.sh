# Waits for 20 idle sleeps and for the survivor to be done, then says
# how many fds corral (PID 1) holds, and how many of them are a cgroup's
# memory.events or cgroup.events; then stops the machine (SIGTERM to 1).
while [ "$(ps | grep -c '[s]leep 1000')" -lt 20 ] || [ ! -e /tmp/survivor-done ]; do
	sleep 0.1
done
total=0 memory_events=0 cgroup_events=0
for fd in /proc/1/fd/*; do
	total=$((total + 1))
	case $(readlink "$fd") in
	*/memory.events) memory_events=$((memory_events + 1)) ;;
	*/cgroup.events) cgroup_events=$((cgroup_events + 1)) ;;
	esac
done
echo "fds $total memory.events $memory_events cgroup.events $cgroup_events"
kill -TERM 1
