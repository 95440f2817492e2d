#!/usr/bin/env bash
# Fetches the Debian cloud kernel without installing it and prints the path
# of its vmlinuz. The package is downloaded with apt-get and unpacked with
# dpkg-deb into a cache directory (default: build-vm/ at the repository's
# root, which git ignores); when the kernel is already there, nothing is
# downloaded.
#
#   tests/system/vm/fetch-kernel.sh [CACHE_DIR]
#
# linux-image-cloud-amd64 is a metapackage: its dependency names the real
# package (linux-image-6.1.0-NN-cloud-amd64), which is what we download.
# Needs apt's package lists; runs `apt-get update` once if they are missing
# or stale (as root).
set -euo pipefail
repo_root=$(cd "$(dirname "$0")/../../.." && pwd)
cache=${1:-$repo_root/build-vm}
metapackage=linux-image-cloud-amd64

cached_kernel() { # prints the vmlinuz unpacked for package $1, if any
	local found
	found=$(find "$cache/kernel/$1/boot" -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | head -n1)
	[[ -n $found ]] && echo "$found"
}

resolve_package() {
	apt-cache depends "$metapackage" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[^ ]*-cloud-amd64\)$/\1/p' | head -n1
}

package=$(resolve_package || true)
if [[ -z $package ]]; then
	# No package lists (a fresh container): fetch them once.
	apt-get update -qq >&2 || true
	package=$(resolve_package || true)
fi
if [[ -z $package ]]; then
	# Offline, but a kernel from an earlier run will do.
	for dir in "$cache"/kernel/*/; do
		[[ $dir == *.tmp/ ]] && continue # an unpacking that did not finish
		if kernel=$(cached_kernel "$(basename "$dir")"); then
			echo "$kernel"
			exit 0
		fi
	done
	echo "fetch-kernel: cannot resolve $metapackage to a kernel package (apt-cache depends $metapackage)" >&2
	exit 1
fi

if kernel=$(cached_kernel "$package"); then
	echo "$kernel"
	exit 0
fi

mkdir -p "$cache/download"
# As root, apt would warn that its sandbox user cannot write here.
download() (cd "$cache/download" && apt-get download -q -o APT::Sandbox::User=root "$package" >&2)
if ! download; then
	# Stale package lists name a version the mirror no longer has.
	apt-get update -qq >&2
	package=$(resolve_package)
	download
fi
debs=("$cache/download/${package}"_*.deb) # one: each is removed once unpacked
deb=${debs[-1]}
rm -rf "$cache/kernel/$package.tmp"
mkdir -p "$cache/kernel/$package.tmp"
# Only boot/ (vmlinuz, config): the kernel has what the VM needs built in
# (serial console, devtmpfs, initramfs, cgroup v2 controllers), so no modules.
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$cache/kernel/$package.tmp" ./boot
rm -f "$deb"
rm -rf "$cache/kernel/$package"
mv "$cache/kernel/$package.tmp" "$cache/kernel/$package" # complete or absent
kernel=$(cached_kernel "$package") || {
	echo "fetch-kernel: no boot/vmlinuz-* in $deb" >&2
	exit 1
}
echo "$kernel"
