# Lists the orphans of spawn-orphans.sh while they live, lets them exit, and
# lists the processes again once corral reaped them (their /proc entries
# are gone; a zombie keeps its entry) or after 10 s.
echo "ps while the orphans live"
ps -o pid,ppid,stat,comm
touch /tmp/release
orphans="$(cat /tmp/orphan1) $(cat /tmp/orphan2)"
tries=0
while [ $tries -lt 200 ]; do
	left=
	for pid in $orphans; do [ -d "/proc/$pid" ] && left=1; done
	[ -z "$left" ] && break
	sleep 0.05
	tries=$((tries + 1))
done
echo "ps after they exited"
ps -o pid,ppid,stat,comm
echo "ps done"
