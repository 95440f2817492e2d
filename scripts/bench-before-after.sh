#!/usr/bin/env bash
# Two corral binaries side by side, in one run, on the figures a change of
# structure must not make worse (issue 39 item 7): memory and fds at 1000
# idle tasks, output CPU per MB, an isolated start, status of 1000 tasks,
# corral exec. Each bench runs for BEFORE, then AFTER, then BEFORE and
# AFTER again (the machine's noise shows as the spread between the two
# runs of one binary). The benches are this build's; only corral differs.
#
#   scripts/bench-before-after.sh BEFORE_CORRAL AFTER_CORRAL [OUTPUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
before=$(realpath "$1") after=$(realpath "$2")
out=${3:-build/before-after}
mkdir -p "$out"
benches=(
	"bench_supervisor --memory-only"
	"bench_output --quick"
	"bench_isolation --quick"
	"bench_control --quick --tasks 1000"
	"bench_exec --quick"
)
for bench in "${benches[@]}"; do
	name=${bench%% *}
	for round in 1 2; do
		for side in before after; do
			corral=$before
			[[ $side == after ]] && corral=$after
			file="$out/$name.$side.$round.txt"
			echo "=== $bench, $side, round $round ($corral)"
			# shellcheck disable=SC2086
			build/tests/bench/$bench --corral "$corral" > "$file" 2>&1 || {
				echo "failed: see $file" >&2
				exit 1
			}
			cat "$file"
		done
	done
done
