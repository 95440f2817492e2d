#!/usr/bin/env bash
# N idle tasks with corral as a VM's init (issue 16 section 4): every one
# starts, corral stays idle, answers status, and stops them all.
#
#   tests/system/vm/scale.sh [-m MEMORY] [-t SECONDS] N     (N: a multiple of 1000)
#
# Writes the case scale-N.yaml (one group: N `sleep 100000` tasks as
# `instances: 1000` each, and cases/scale-measure.sh as a prestart sidecar,
# which measures from inside the VM), boots it with run-case.sh, and prints
# the figures the VM printed, then SIGTERM -> power off from the kernel's
# timestamps. Under TCG the times are 10-30x a real CPU's. Not part of the
# default run (minutes); docs/benchmarks.md has its figures.
# Uses $CORRAL_BIN (default build/corral), like run-case.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo_root=$(cd "$here/../../.." && pwd)

memory='' timeout_s=''
while getopts m:t: option; do
	case $option in
	m) memory=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	*) echo "usage: $0 [-m MEMORY] [-t SECONDS] N" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if (($# != 1)) || ! [[ $1 =~ ^[1-9][0-9]*000$ ]]; then
	echo "usage: $0 [-m MEMORY] [-t SECONDS] N   (N: a multiple of 1000)" >&2
	exit 2
fi
n=$1 thousands=$(($1 / 1000))
# About 250 KiB of the VM's memory per idle task under TCG (its process
# and its cgroup: 279 MiB in use with 1000), with room to spare.
memory=${memory:-$((1024 + thousands * 300))M}
timeout_s=${timeout_s:-$((300 + thousands * 120))}
name=scale-$n

work=$(mktemp -d "${TMPDIR:-/tmp}/corral-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r "$here/cases" "$work/cases"
{
	echo "# $n idle tasks and their measure (written by tests/system/vm/scale.sh)."
	echo "shutdown_timeout: 1h # stopping them all takes minutes under TCG"
	echo "groups:"
	echo "  scale:"
	echo "    restart: {policy: never}"
	echo "    tasks:"
	echo "      measure:"
	echo "        command: [\"/bin/sh\", \"/cases/scale-measure.sh\", \"$n\", \"scale/idle$((thousands - 1))@999\"]"
	echo "        lifecycle: {hook: prestart, sidecar: true}"
	echo "        control: [status, shutdown] # a task is never an operator unless granted"
	for ((i = 0; i < thousands; i++)); do
		echo "      idle$i: {command: [\"/bin/sleep\", \"100000\"], instances: 1000}"
	done
} >"$work/cases/$name.yaml"

corral=${CORRAL_BIN:-$repo_root/build/corral}
[[ $corral == /* ]] || corral=$repo_root/$corral
initramfs=$("$here/make-initramfs.sh" "$corral" "$work/initramfs.gz" "$work/cases")
console=$repo_root/build-vm/console/$name.txt
status=0
"$here/run-case.sh" -q -m "$memory" -t "$timeout_s" -i "$initramfs" -o "$console" "$name" ||
	status=$?

text=$(tr -d '\r' <"$console")
sed -n 's/^scale\/measure | //p' <<<"$text"
# "[  123.456789] scale: SIGTERM to corral" ... "[  130.000000] reboot: Power down"
kernel_time() { sed -n "s/^\[ *\([0-9.]*\)\] $1\$/\1/p" <<<"$text" | tail -n1; }
term=$(kernel_time 'scale: SIGTERM to corral')
off=$(kernel_time 'reboot: Power down')
if [[ -n $term && -n $off ]]; then
	awk -v a="$term" -v b="$off" \
		'BEGIN { printf "  SIGTERM -> corral exited, VM off       %.0f ms\n", (b - a) * 1000 }'
fi
echo "  VM: $memory, console in $console"
exit "$status"
