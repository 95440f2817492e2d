# scale-measure.sh N LAST: the measuring task of the scale-N cases (issue 16
# section 4). A prestart sidecar of corral, the VM's init, beside N idle
# tasks (busybox sleep), LAST the one started last; it reads corral from the outside
# (/proc/1, the CLI), prints one block of figures, then sends
# corral SIGTERM. Times are the VM's: under TCG (qemu without KVM) 10-30x
# those of a real CPU. /proc/uptime counts in 10 ms steps.
n=$1 last=$2
everyone=$((n + 1)) # the idle tasks and this one
say() { echo "$*"; }
corral() { /corral "$@"; } # the VM's init, not on PATH

# Milliseconds since boot.
now_ms() {
	read -r up _ </proc/uptime
	echo $((${up%.*} * 1000 + (1${up#*.} - 100) * 10))
}
# corral's start, in ms since boot (/proc/1/stat field 22, in 1/100 s).
corral_start_ms() {
	set -- $(cat /proc/1/stat)
	echo $((${22} * 10))
}
# corral's CPU (utime + stime, 1/100 s) and context switches, on one line.
corral_activity() {
	set -- $(cat /proc/1/stat)
	cpu=$((${14} + ${15}))
	voluntary=$(sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' /proc/1/status)
	involuntary=$(sed -n 's/^nonvoluntary_ctxt_switches:[[:space:]]*//p' /proc/1/status)
	echo "$cpu $voluntary $involuntary"
}
running_count() {
	corral status --json | grep -o '"stage":"[a-z-]*","state":"running"' | wc -l
}

# 1. Every task running. The last task of the file starts last; a status
# of that one task is cheap, where polling all N would slow the starts.
until corral status "$last" | grep -q ' running '; do
	sleep 0.5
done
all_running_ms=$(now_ms)
running=$(running_count)
until [ "$running" -ge "$everyone" ]; do
	sleep 0.5
	all_running_ms=$(now_ms)
	running=$(running_count)
done
started_in=$((all_running_ms - $(corral_start_ms)))

# 2. Idle. A status of many tasks refreshes their usage readings once its
# reply is out (a timer, then the loop sleeps): wait until corral has
# used no CPU and switched no context for a whole second, then count over
# 10 s what corral does with nothing to do.
before=$(corral_activity)
settled=no
for _ in $(seq 1 120); do
	sleep 1
	after=$(corral_activity)
	[ "$after" = "$before" ] && { settled=yes; break; }
	before=$after
done
sleep 10
set -- $before
idle_cpu=$1 idle_voluntary=$2 idle_involuntary=$3
set -- $(corral_activity)
idle_cpu=$(($1 - idle_cpu))
idle_voluntary=$(($2 - idle_voluntary))
idle_involuntary=$(($3 - idle_involuntary))

# 3. Memory and fds.
rss=$(sed -n 's/^VmRSS:[[:space:]]*//p' /proc/1/status)
hwm=$(sed -n 's/^VmHWM:[[:space:]]*//p' /proc/1/status)
pss=$(sed -n 's/^Pss:[[:space:]]*//p' /proc/1/smaps_rollup)
fds=$(ls /proc/1/fd | wc -l)
limit=$(awk '/^Max open files/ { print $4 " soft, " $5 " hard" }' /proc/1/limits)
mem_total=$(sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\).*/\1/p' /proc/meminfo)
mem_available=$(sed -n 's/^MemAvailable:[[:space:]]*\([0-9]*\).*/\1/p' /proc/meminfo)
# Where the VM's memory went: the tasks' own pages are few (busybox is
# static); their cgroups and page tables are the kernel's.
kernel_parts=$(awk '/^(Slab|KernelStack|PageTables|Percpu):/ { printf "%s %d MiB, ", $1, $2 / 1024 }' /proc/meminfo)

# 4. A status of every task, 5 times (each reply also arms the usage
# refresh, which the next call may find under way).
times=''
for _ in 1 2 3 4 5; do
	t0=$(now_ms)
	corral status --json >/tmp/status.json
	t1=$(now_ms)
	times="$times $((t1 - t0))"
done
sorted=$(echo $times | tr ' ' '\n' | sort -n | tr '\n' ' ')
set -- $sorted
status_median=$3 status_min=$1 status_max=$5
status_bytes=$(wc -c </tmp/status.json)
# A task's "state" follows its "stage"; a group's "state" (running too, since
# 2026-12) has none before it.
in_status=$(grep -o '"stage":"[a-z-]*","state":"running"' /tmp/status.json | wc -l)

say "figures: $n idle tasks, corral as the VM's init (qemu TCG, 1 vCPU: times are TCG times)"
say "  tasks running (corral status)          $in_status of $everyone (the idle tasks and this one)"
say "  all running, from corral's start       $started_in ms (polled every 0.5 s)"
say "  idle for 10 s, once settled ($settled): context switches $idle_voluntary voluntary, $idle_involuntary involuntary; CPU $((idle_cpu * 10)) ms"
say "  corral VmRSS $rss, VmHWM $hwm, Pss $pss"
say "  corral fds                             $fds (RLIMIT_NOFILE $limit)"
say "  VM memory in use                       $(((mem_total - mem_available) / 1024)) MiB of $((mem_total / 1024)) MiB (${kernel_parts%, })"
say "  corral status --json of every task     median $status_median ms, min $status_min, max $status_max (5 calls; $status_bytes bytes)"

# 5. Shutdown: this task is a prestart sidecar, so corral stops it after
# every idle task is dead; the time to that is the time to stop them all.
# The kernel's timestamps then give SIGTERM -> power off on the console.
echo Y >/sys/module/printk/parameters/time
stopped() {
	say "  SIGTERM -> every idle task stopped     $(($(now_ms) - term_ms)) ms"
	kill "$waiter" 2>/dev/null
	wait "$waiter" 2>/dev/null # not left behind in the task's cgroup; no "Terminated"
	exit 0
}
trap stopped TERM
term_ms=$(now_ms)
echo "<2>scale: SIGTERM to corral" >/dev/kmsg
kill -TERM 1
while :; do
	sleep 1000 &
	waiter=$!
	wait $waiter
done
