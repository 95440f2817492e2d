# Run by box/probe (isolation.yaml), in new pid, mount, uts, ipc, net and
# cgroup namespaces, with CAP_NET_BIND_SERVICE only and the default seccomp
# profile: prints what the task sees from inside, one fact a line.
echo "pid $$"
cmdline=$(tr '\0' ' ' </proc/1/cmdline)
echo "pid 1 cmdline ${cmdline% }"
# The fresh /proc of the pid namespace: only the reaper, this script and
# its children.
echo "ps"
ps -o pid,ppid,stat,args
echo "ps done"
echo "hostname $(hostname)"
echo "cgroup $(cat /proc/self/cgroup)"
grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status |
	awk '{ print "status " $1 " " $2 }'
echo "interfaces $(awk -F: 'NR > 2 { gsub(/ /, "", $1); printf "%s ", $1 }' /proc/net/dev)"
for ns in pid mnt uts ipc net cgroup; do echo "ns $(readlink /proc/self/ns/$ns)"; done
# /sys, and the cgroup file system with it, is read-only in the task's
# mount namespace: it cannot move itself out of its cgroup.
if error=$( { echo 0 >/sys/fs/cgroup/cgroup.procs; } 2>&1 ); then
	echo "cgroup.procs: written"
else
	echo "cgroup.procs: ${error##*: }"
fi
# Making a namespace of its own: seccomp (and the missing CAP_SYS_ADMIN)
# says no.
if error=$(unshare -u true 2>&1); then
	echo "unshare: allowed"
else
	echo "unshare: ${error##*: }"
fi
echo "report done"
