# Leaves three grandchildren behind and exits (see orphans.yaml).
# In our process group: corral kills it as a leftover when we exit.
(sh -c 'sleep 30' &)
# In sessions of their own: they outlive us and exit 3 once /tmp/release
# exists. Each writes its pid once it has left our process group; wait for
# that, so that corral's kill of our group at exit cannot catch one on its
# way out.
for n in 1 2; do
	(setsid sh -c "echo \$\$ > /tmp/orphan$n; while [ ! -e /tmp/release ]; do sleep 0.05; done; exit 3" &)
done
for n in 1 2; do
	while [ ! -s /tmp/orphan$n ]; do sleep 0.05; done
	echo "orphan $(cat /tmp/orphan$n)"
done
exit 0
