# Lists the processes while the orphans of spawn-orphans.sh live, lets two
# of them exit, and lists the processes again once corral reaped them
# (their /proc entries are gone; a zombie keeps its entry) or after 20 s.
# Kernel threads (children of kthreadd, pid 2) are left out.
list() { ps -o pid,ppid,stat,comm | awk '$1 != 2 && $2 != 2'; }
while [ ! -e /tmp/orphans-ready ]; do sleep 0.05; done
echo "ps while the orphans live"
list
touch /tmp/release
orphans="$(cat /tmp/orphan1) $(cat /tmp/orphan2)"
tries=0
while [ $tries -lt 400 ]; do
	left=
	for pid in $orphans; do [ -d "/proc/$pid" ] && left=1; done
	[ -z "$left" ] && break
	sleep 0.05
	tries=$((tries + 1))
done
echo "ps after they exited"
list
echo "ps done"
touch /tmp/inspected
