#!/usr/bin/env bash
# make-tree.sh [CACHE_DIR]: prints the path of a Debian 12 root file system
# with systemd as its init (systemd-nspawn --boot boots it), building it
# with debootstrap when it is missing. The tree is kept in CACHE_DIR
# (default /var/cache/corral-tests), outside the clone, under a name keyed
# by what goes into it (suite, mirror, packages, this script's version), so
# a rerun costs nothing and a change of the list builds a new one (older
# trees are removed). The tree is never written by the tests: they boot it
# with --volatile=overlay.
#
# The mirror is the one apt uses on this machine for the suite (apt-get
# indextargets): no other network access.
set -euo pipefail

cache=${1:-/var/cache/corral-tests}
suite=bookworm
# systemd as init (systemd-sysv: /sbin/init), dbus for systemctl's bus,
# python3-minimal for the tests' small services (socket.send_fds to
# NOTIFY_SOCKET: systemd 252's systemd-notify has no --fd), and the
# libraries corral loads (docs/dependencies.md): linked (yaml, jansson,
# cap, tre) and opened when first needed (cgroup, seccomp, nl-route, c-ares).
packages=(
	systemd systemd-sysv dbus python3-minimal
	libyaml-0-2 libjansson4 libcap2 libtre5 libcgroup2 libseccomp2 libnl-3-200 libnl-route-3-200
	libc-ares2
)
version=1 # bump when what the script does to the tree changes

mirror=$(apt-get indextargets --format '$(SITE) $(RELEASE) $(TARGET_OF)' |
	awk -v suite="$suite" '$2 == suite && $3 == "deb" && !found { print $1; found = 1 }')
if [[ -z $mirror ]]; then
	echo "make-tree.sh: apt has no source for Debian $suite (apt-get indextargets); add one or run on Debian 12" >&2
	exit 1
fi

key=$(printf '%s\n' "$version" "$suite" "$mirror" "${packages[@]}" | sha256sum | cut -c1-12)
tree=$cache/debian-systemd-$key
if [[ -e $tree/.complete ]]; then
	echo "$tree"
	exit 0
fi

for tool in debootstrap systemd-nspawn; do
	command -v "$tool" >/dev/null || {
		echo "make-tree.sh: $tool is missing: run scripts/install-deps.sh" >&2
		exit 1
	}
done

mkdir -p "$cache"
building=$(mktemp -d "$cache/.building-$key-XXXXXX")
trap 'rm -rf "$building"' EXIT
echo "make-tree.sh: debootstrap $suite from $mirror into $tree (once; about a minute)" >&2
# The .debs are kept too: a tree built again after a change of the list
# downloads only what is new.
mkdir -p "$cache/debs"
if ! debootstrap --variant=minbase --cache-dir="$cache/debs" --include="$(
	IFS=,
	echo "${packages[*]}"
)" "$suite" "$building" "$mirror" >"$building.log" 2>&1; then
	tail -20 "$building.log" >&2
	rm -f "$building.log"
	exit 1
fi
rm -f "$building.log"
# What the tests bind-mount onto must exist; an empty machine-id is filled
# in by systemd-nspawn at each boot.
mkdir -p "$building/usr/local/bin" "$building/etc/corral" "$building/cases"
touch "$building/usr/local/bin/corral"
: >"$building/etc/machine-id"
rm -rf "$building/var/cache/apt/archives/"*.deb
touch "$building/.complete"
for old in "$cache"/debian-systemd-*; do
	[[ $old == "$tree" ]] || rm -rf "$old"
done
# Another run may have built the same tree meanwhile, and be using it:
# keep that one. A half-made one (no .complete) is replaced.
if [[ -e $tree/.complete ]]; then
	echo "$tree"
	exit 0
fi
rm -rf "$tree"
mv "$building" "$tree"
trap - EXIT
echo "$tree"
