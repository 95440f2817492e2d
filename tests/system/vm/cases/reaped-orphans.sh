# Runs once spawner is dead: its orphan3 was killed as a leftover of its
# run, and corral reaped it; no zombie is left. The reap may take a moment.
pid=$(cat /tmp/orphan3)
tries=0
while [ -d "/proc/$pid" ] && [ $tries -lt 400 ]; do
	sleep 0.05
	tries=$((tries + 1))
done
[ -d "/proc/$pid" ] && echo "orphan3 $pid: still there" || echo "orphan3 $pid: reaped"
echo "ps at the end"
ps -o pid,ppid,stat,comm | awk '$1 != 2 && $2 != 2'
echo "ps done"
