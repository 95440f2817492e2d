#!/usr/bin/env bash
# Builds the VM's initramfs (a gzipped newc cpio archive):
#
#   tests/system/vm/make-initramfs.sh CORRAL_BINARY OUTPUT [CASES_DIR]
#
#   /corral            the binary given, the VM's init (rdinit=/corral)
#   /lib*/...          every shared library it needs (ldd), at the same paths,
#                      with the dynamic loader, and those it loads when first
#                      needed (libseccomp, libcgroup, libnl)
#   /bin/busybox       busybox-static, with a link for each applet (sh, sleep,
#                      ps, cat, mount, kill, ...)
#   /cases/            the test configs and scripts (default: cases/ here)
#   /dev/console       so that the kernel can give init its stdin/out/err
#   /proc /sys /tmp /run
#
# Nothing else: corral mounts /proc, /sys and /dev itself as the machine's
# init, and there is no shell between the kernel and corral.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if (($# < 2 || $# > 3)); then
	echo "usage: $0 CORRAL_BINARY OUTPUT [CASES_DIR]" >&2
	exit 2
fi
corral=$(realpath "$1")
output=$(realpath -m "$2")
cases=${3:-$here/cases}
busybox=/bin/busybox

[[ -x $corral ]] || { echo "make-initramfs: $corral is not an executable" >&2; exit 1; }
if ! "$busybox" --list >/dev/null 2>&1 || ldd "$busybox" >/dev/null 2>&1; then
	echo "make-initramfs: $busybox is missing or not static (apt-get install busybox-static)" >&2
	exit 1
fi
command -v cpio >/dev/null || { echo "make-initramfs: cpio is missing (apt-get install cpio)" >&2; exit 1; }

root=$(mktemp -d "${TMPDIR:-/tmp}/corral-initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,cases,etc}
chmod 1777 "$root/tmp"
# The kernel's built-in initramfs has /dev/console too; ours does not rely
# on that, but does without it where mknod is not allowed.
mknod -m 600 "$root/dev/console" c 5 1 2>/dev/null || true

install -m 755 "$corral" "$root/corral"

# Copied through symlinks, at the same path.
copy_file() {
	mkdir -p "$root$(dirname "$1")"
	cp -L "$1" "$root$1"
}

# The shared libraries FILE needs, each at the path ldd names (the loader's
# default search path then finds them without an ld.so.cache).
copy_libraries_of() {
	ldd "$1" | while read -r first second third _; do
		if [[ $second == "=>" && $third == /* ]]; then
			copy_file "$third" # libfoo.so.1 => /lib/x86_64-linux-gnu/libfoo.so.1 (0x...)
		elif [[ $first == /* ]]; then
			copy_file "$first" # /lib64/ld-linux-x86-64.so.2 (0x...)
		fi
	done
}

copy_libraries_of "$corral"
# What a dynamic corral loads the first time it needs it
# (isolation/library_loader.h), which ldd does not list; none for a static one.
if ldd "$corral" >/dev/null 2>&1; then
	for soname in libseccomp.so.2 libcgroup.so.2 libnl-route-3.so.200; do
		# awk reads to the end: an early exit would leave ldconfig to die of
		# SIGPIPE, which pipefail makes the script's (exit 141, now and then).
		library=$(ldconfig -p | awk -v name="$soname" '$1 == name && /x86-64/ && !found { print $NF; found = 1 }')
		[[ -n $library ]] || { echo "make-initramfs: $soname is not installed" >&2; exit 1; }
		copy_file "$library"
		copy_libraries_of "$library"
	done
fi

install -m 755 "$busybox" "$root/bin/busybox"
"$busybox" --list-full | while read -r applet; do
	[[ -e $root/$applet || -L $root/$applet ]] && continue
	mkdir -p "$root/$(dirname "$applet")"
	ln -s /bin/busybox "$root/$applet"
done

echo 'root:x:0:0:root:/:/bin/sh' >"$root/etc/passwd"
echo 'root:x:0:' >"$root/etc/group"

if [[ -d $cases ]]; then
	cp -r "$cases/." "$root/cases/"
fi

mkdir -p "$(dirname "$output")"
(cd "$root" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0) |
	gzip -1 >"$output.tmp"
mv "$output.tmp" "$output"
echo "$output"
