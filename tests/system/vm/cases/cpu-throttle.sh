# Reads its own cgroup's cpu.max, and cpu.stat's nr_throttled before and
# after a busy loop of 1 s in the same cgroup: the quota (0.1 core) runs out
# in each 100 ms period, so the loop is throttled again and again.
. /cases/own-cgroup.sh
throttled() { sed -n 's/^nr_throttled //p' "$cgroup/cpu.stat"; }
echo "cgroup $cgroup"
echo "cpu.max $(cat "$cgroup/cpu.max")"
echo "nr_throttled before $(throttled)"
sh -c 'while :; do :; done' &
spinner=$!
sleep 1
echo "nr_throttled after $(throttled)"
kill $spinner
