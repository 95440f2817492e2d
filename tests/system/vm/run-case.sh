#!/usr/bin/env bash
# Boots a VM whose init is corral, running one case, and reports corral's
# exit code as the host sees it.
#
#   tests/system/vm/run-case.sh [-k VMLINUZ] [-i INITRAMFS] [-o CONSOLE] [-t SECONDS]
#                               [-m MEMORY] [-q] CASE
#
# CASE names tests/system/vm/cases/CASE.yaml, which the initramfs holds as
# /cases/CASE.yaml. The kernel starts /corral as PID 1 (rdinit=/corral) with
# the arguments after "--" on its command line: `run /cases/CASE.yaml`.
#
# Without -k, the Debian cloud kernel is fetched (fetch-kernel.sh, cached in
# build-vm/). Without -i, an initramfs is built from $CORRAL_BIN (default
# build/corral) into build-vm/initramfs.gz. The serial console (kernel
# messages, corral's stdout and stderr) is written to CONSOLE (default
# build-vm/console/CASE.txt) and, unless -q, shown as it comes. -m gives the
# VM's memory as qemu's -m takes it (default 512M; the scale cases need GiBs).
#
# Exit status: corral's exit code, read from its last line on the console
# ("corral: exiting with code N"), when the VM then powered off by itself.
# 255 when it did not: the VM hung (killed after -t SECONDS, default 60),
# the kernel panicked, or corral never said how it exited. The last line on
# stderr always says which:
#   run-case: CASE: corral exited with code N; the VM powered off after S s
#   run-case: CASE: FAILED: ...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo_root=$(cd "$here/../../.." && pwd)

vmlinuz='' initramfs='' console='' timeout_s=60 memory=512M quiet=''
usage() {
	echo "usage: $0 [-k VMLINUZ] [-i INITRAMFS] [-o CONSOLE] [-t SECONDS] [-m MEMORY] [-q] CASE" >&2
	exit 2
}
while getopts k:i:o:t:m:q option; do
	case $option in
	k) vmlinuz=$OPTARG ;;
	i) initramfs=$OPTARG ;;
	o) console=$OPTARG ;;
	t) timeout_s=$OPTARG ;;
	m) memory=$OPTARG ;;
	q) quiet=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
(($# == 1)) || usage
name=$1

if [[ -z $vmlinuz ]]; then
	vmlinuz=$("$here/fetch-kernel.sh")
fi
if [[ -z $initramfs ]]; then
	corral=${CORRAL_BIN:-$repo_root/build/corral}
	[[ $corral == /* ]] || corral=$repo_root/$corral
	initramfs=$("$here/make-initramfs.sh" "$corral" "$repo_root/build-vm/initramfs.gz")
fi
console=${console:-$repo_root/build-vm/console/$name.txt}
mkdir -p "$(dirname "$console")"

# -cpu max gives the guest RDRAND, so the kernel's random pool is ready at
# once; with qemu's default CPU, corral's first read of /dev/urandom (jansson
# seeding its hash tables) waits about 1 s for it.
# panic=-1 reboots at once on a panic, and -no-reboot turns a reboot into
# qemu's exit; the console then shows the panic.
# No VGA: SeaBIOS then writes nothing (no terminal resets) to the console.
# quiet keeps kernel messages off the console but for errors, a panic, and
# "reboot: Power down".
append="console=ttyS0 panic=-1 quiet rdinit=/corral -- run /cases/$name.yaml"
qemu=(
	qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m "$memory"
	-display none -vga none -no-reboot -nic none -monitor none -serial stdio
	-kernel "$vmlinuz" -initrd "$initramfs" -append "$append"
)

started=$EPOCHREALTIME
set +e
if [[ -n $quiet ]]; then
	timeout --kill-after=5 "$timeout_s" "${qemu[@]}" </dev/null >"$console" 2>&1
	qemu_status=$?
else
	timeout --kill-after=5 "$timeout_s" "${qemu[@]}" </dev/null 2>&1 | tee "$console"
	qemu_status=${PIPESTATUS[0]}
fi
set -e
elapsed=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')

fail() {
	echo "run-case: $name: FAILED: $*; console in $console" >&2
	exit 255
}
# The serial console ends lines with \r\n.
text=$(tr -d '\r' <"$console")
if ((qemu_status == 124 || qemu_status == 137)); then
	fail "the VM did not power off within ${timeout_s} s (qemu killed)"
elif ((qemu_status != 0)); then
	fail "qemu failed with status $qemu_status"
elif grep -q 'Kernel panic' <<<"$text"; then
	fail "the kernel panicked: $(grep -m1 'Kernel panic' <<<"$text")"
fi
code=$(sed -n 's/^corral: exiting with code \([0-9]\{1,\}\)$/\1/p' <<<"$text" | tail -n1)
if [[ -z $code ]]; then
	fail "no \"corral: exiting with code N\" line on the console"
elif ! grep -q 'reboot: Power down' <<<"$text"; then
	fail "corral exited with code $code, but the VM did not power off"
fi
echo "run-case: $name: corral exited with code $code; the VM powered off after $elapsed s" >&2
exit "$code"
