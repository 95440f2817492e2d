# Leaves three grandchildren to PID 1 while this task runs (see orphans.yaml):
# each is forked by a subshell that exits at once, so the kernel reparents
# it to corral. A task's processes all die with its main process (its cgroup
# is killed), so this script stays until inspect-orphans.sh is done.
# In our process group: lives until we exit, then is killed as a leftover.
(sh -c 'echo $$ >/tmp/orphan3; exec sleep 1000' &)
# In sessions of their own: they exit by themselves once inspect-orphans.sh
# creates /tmp/release.
for n in 1 2; do
	(setsid sh -c "echo \$\$ > /tmp/orphan$n; while [ ! -e /tmp/release ]; do sleep 0.05; done" &)
done
for n in 1 2 3; do
	while [ ! -s /tmp/orphan$n ]; do sleep 0.05; done
	echo "orphan$n $(cat /tmp/orphan$n)"
done
touch /tmp/orphans-ready
while [ ! -e /tmp/inspected ]; do sleep 0.05; done
echo "spawner exits"
