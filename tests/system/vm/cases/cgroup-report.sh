# Prints the VM's cgroup setup as "cgroup: KEY: VALUE" lines. corral, as
# the machine's init, mounts cgroup2 on /sys/fs/cgroup; the report says
# whether it found it mounted, and mounts it if not (to report the rest).
if grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then
	echo "cgroup: mounted before the task: yes"
else
	echo "cgroup: mounted before the task: no"
	mount -t cgroup2 none /sys/fs/cgroup || echo "cgroup: mount failed"
fi
grep ' /sys/fs/cgroup ' /proc/mounts | sed 's/^/cgroup: mount: /'
echo "cgroup: v1 hierarchies: $(grep -c ' cgroup ' /proc/mounts)"
sed 's/^/cgroup: self: /' /proc/self/cgroup
sed 's/^/cgroup: corral: /' /proc/1/cgroup
echo "cgroup: controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
echo "cgroup: root subtree_control: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
self=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
echo "cgroup: own controllers: $(cat "$self/cgroup.controllers")"
