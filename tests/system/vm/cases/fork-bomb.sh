# A fork bomb under pids.max. Once it runs, forks fail, so the watch below
# uses builtins only (read, test, echo with a redirection): it waits until
# the kernel has refused forks (pids.events "max N"), says what it saw, and
# fails. corral then kills what is left of the bomb through cgroup.kill.
. /cases/own-cgroup.sh
echo "pids.max $(cat "$cgroup/pids.max")"
bomb() { while :; do bomb & done; }
bomb 2>/dev/null &
refused=0
while [ "$refused" -eq 0 ]; do
	read -r _ refused <"$cgroup/pids.events"
done
read -r current <"$cgroup/pids.current"
echo "contained: pids.current $current, forks refused $refused"
echo >/tmp/bomb-contained
exit 1
