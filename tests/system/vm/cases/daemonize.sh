# daemonize.sh NAME [stay]: daemonises a child as daemons do, a double fork
# with setsid: the subshell forks the daemon and exits at once, so the
# daemon is reparented to PID 1 (corral), in a session and process group
# of its own, out of reach of a kill of the task's process group. Only the
# task's cgroup still holds it. The daemon writes its pid to
# /tmp/daemon-NAME. Then the task exits 0, or with "stay" ignores SIGTERM
# and runs until it is killed.
name=$1
[ "$2" = stay ] && trap '' TERM
(setsid sh -c 'echo $$ >/tmp/daemon-'"$name"'.new; mv /tmp/daemon-'"$name"'.new /tmp/daemon-'"$name"'; exec sleep 1000' </dev/null >/dev/null 2>&1 &)
tries=0
ppid=
while [ "$ppid" != 1 ] && [ $tries -lt 400 ]; do
	sleep 0.05
	tries=$((tries + 1))
	[ -s "/tmp/daemon-$name" ] || continue
	read -r daemon <"/tmp/daemon-$name"
	read -r _ _ _ ppid _ session _ <"/proc/$daemon/stat"
done
read -r _ _ _ _ _ own_session _ </proc/$$/stat
echo "task $$ session $own_session"
echo "daemon $daemon parent $ppid session $session $(cat /proc/$daemon/cgroup)"
[ "$2" = stay ] || exit 0
echo "staying, deaf to SIGTERM"
while :; do sleep 0.1; done
