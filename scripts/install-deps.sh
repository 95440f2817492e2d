#!/usr/bin/env bash
# Installs what corral needs to build and test on Debian 12, as root.
# Only calls apt-get when something is missing, so it is cheap to re-run.
set -euo pipefail

packages=(
	build-essential cmake pkg-config
	libyaml-dev libjansson-dev libcmocka-dev libcgroup-dev  # libraries (see docs/dependencies.md)
	python3 python3-pytest                    # integration tests
	clang libclang-rt-dev                     # libFuzzer for tests/fuzz (the runtime is only a Recommends of clang)
	util-linux procps                         # unshare, ps: PID 1 tests
	qemu-system-x86 busybox-static cpio       # tests/system/vm: corral as a VM's init
)

missing=()
for package in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
		missing+=("$package")
done
if ((${#missing[@]})); then
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
