# Sourced by the cgroup cases' scripts: $cgroup is the directory of the
# caller's own cgroup, found as a task would, from /proc/self/cgroup
# ("0::/group/task" on pure cgroup v2). A read of `$(...)` forks, and the
# child sits in the same cgroup.
cgroup=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
