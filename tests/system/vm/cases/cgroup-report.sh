# Prints the VM's cgroup setup as "cgroup: KEY: VALUE" lines. corral does not
# mount cgroup2 (yet), so this mounts it where it is missing.
if ! grep -q ' /sys/fs/cgroup cgroup2 ' /proc/mounts; then
	mount -t cgroup2 none /sys/fs/cgroup || echo "cgroup: mount failed"
fi
grep ' /sys/fs/cgroup ' /proc/mounts | sed 's/^/cgroup: mount: /'
echo "cgroup: v1 hierarchies: $(grep -c ' cgroup ' /proc/mounts)"
sed 's/^/cgroup: self: /' /proc/self/cgroup
echo "cgroup: controllers: $(cat /sys/fs/cgroup/cgroup.controllers)"
