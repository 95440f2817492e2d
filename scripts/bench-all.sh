#!/usr/bin/env bash
# Runs every benchmark in full, one after the other, against one corral, and
# keeps what each printed: a "one full run" as docs/benchmarks.md's
# "Issue 16's aims, one full run" shows, from which its current figures
# are taken.
#
#   scripts/bench-all.sh [CORRAL] [OUTPUT_DIR]
#
# CORRAL defaults to build/corral, OUTPUT_DIR to build/bench-all; each bench
# writes OUTPUT_DIR/NAME.txt, and the run's machine load goes first in
# OUTPUT_DIR/machine.txt (the figures swing with it on a shared machine).
# Needs root (namespaces, cgroups, runc). Takes about 3 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
corral=${1:-build/corral}
out=${2:-build/bench-all}
mkdir -p "$out"
{
	date -u '+%Y-%m-%d %H:%M:%S UTC'
	git rev-parse --short HEAD 2>/dev/null || true
	uptime
} >"$out/machine.txt"
for bench in bench_supervisor bench_control bench_output bench_isolation bench_cgroup bench_probes bench_exec; do
	echo "=== $bench"
	build/tests/bench/$bench --corral "$corral" 2>&1 | tee "$out/$bench.txt"
done
echo "=== after"
uptime | tee -a "$out/machine.txt"
