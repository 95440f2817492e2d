#!/usr/bin/env bash
# Installs what corral needs to build and test on Debian 12, as root.
# Only calls apt-get when something is missing, so it is cheap to re-run.
#
#   scripts/install-deps.sh               everything: build, tests, fuzzers
#   scripts/install-deps.sh --build-only  what building the binary needs, no
#                                         more (examples/Dockerfile's builder)
set -euo pipefail

build_packages=(
	build-essential cmake pkg-config
	libyaml-dev libjansson-dev libcgroup-dev libseccomp-dev libcap-dev libnl-3-dev libnl-route-3-dev libc-ares-dev libtre-dev  # libraries (see docs/dependencies.md); the -dev packages hold the .a files for -DCORRAL_STATIC=ON
)
test_packages=(
	libcmocka-dev                             # unit tests
	python3 python3-pytest python3-yaml       # integration tests; python3-yaml: tests/system/oci reads the example manifests
	clang-format                              # scripts/check-format.sh (CI)
	clang libclang-rt-dev                     # libFuzzer for tests/fuzz (the runtime is only a Recommends of clang)
	util-linux procps                         # unshare, ps: PID 1 tests; unshare --net around corral in test_network
	iproute2                                  # test_network only: `ip -o link` inspects the test's own namespace (corral never runs ip)
	qemu-system-x86 busybox-static cpio       # tests/system/vm: corral as a VM's init; busybox-static: test_rootfs.py's rootfs
	runc                                      # tests/system/oci: corral as PID 1 of an OCI container (busybox-static rootfs)
	podman catatonit                          # tests/system/podman: corral as PID 1 under podman (catatonit: kube play's local pause image)
	containerd                                # tests/system/containerd: corral as PID 1 under containerd (ctr, the runc shim); the suite starts a daemon of its own
	bubblewrap                                # bench_isolation: the bwrap row (skipped with a note without it)
	redis-server                              # examples/stack.yaml's sidecar (sd_notify), run by test_dependencies
	s6 supervisor                             # bench_output and bench_control: the s6-log, s6-svscan and supervisord rows
	tini dumb-init                            # test_one_command.py runs each case under them too, side by side with corral
	tmux                                      # test_top.py drives `corral top` in a real terminal (send-keys, capture-pane, resize-window)
	systemd                                   # systemd-analyze verify of examples/systemd/corral.service (test_parent_notify.py; never run as init on the host)
	systemd-container debootstrap             # tests/system/systemd: a Debian 12 tree (debootstrap) booted by systemd-nspawn, systemd as its init, runs corral.service
	prometheus python3-prometheus-client      # test_metrics_prometheus.py: a real Prometheus scrapes GET /metrics, promtool checks the text format, the client's parser OpenMetrics
)

case ${1:-} in
--build-only) packages=("${build_packages[@]}") ;;
"") packages=("${build_packages[@]}" "${test_packages[@]}") ;;
*)
	echo "usage: $0 [--build-only]" >&2
	exit 2
	;;
esac

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
