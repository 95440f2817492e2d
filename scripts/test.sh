#!/usr/bin/env bash
# Fresh Debian 12, as root: install what is missing, then build and run every
# test: unit (cmocka, via ctest) and integration (pytest, the real binary),
# once on a normal build with warnings as errors and once under ASan+UBSan;
# system tests (corral as the init of a qemu VM, then as PID 1 of an OCI
# container under runc, podman and containerd, statically linked, then as
# a service of a real systemd booted by systemd-nspawn); the
# fuzzers for a short while;
# a minute of the soak; and the benchmarks in their quick mode, as a smoke
# test.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

jobs=$(nproc)
python=/usr/bin/python3 # Debian's, which has pytest; not a pyenv shim

run_suites() {
	local build=$1
	echo "=== unit tests ($build)"
	ctest --test-dir "$build" --output-on-failure -j"$jobs"
	echo "=== integration tests ($build)"
	CORRAL_BIN="$PWD/$build/corral" "$python" -m pytest -q -p no:cacheprovider tests/integration
}

echo "=== layers: includes point down only (base <- config <- isolation, hooks <- supervisor <- cli; floors inside supervisor/ and config/)"
scripts/check-layers.sh
echo "=== format: every C file as .clang-format says"
scripts/check-format.sh
echo "=== conventions: error buffers and failure codes (docs/architecture.md, Errors)"
scripts/check-conventions.sh

echo "=== build (warnings are errors)"
cmake -S . -B build -DCORRAL_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
run_suites build

echo "=== system tests: corral as the init of a VM (qemu, TCG)"
CORRAL_BIN="$PWD/build/corral" "$python" -m pytest -q -p no:cacheprovider tests/system/vm

echo "=== system tests: corral as PID 1 under runc (static binary, busybox rootfs)"
# The same script examples/Dockerfile's builder stage runs.
static=$(scripts/build-static.sh build-static)
CORRAL_STATIC_BIN="$static" "$python" -m pytest -q -p no:cacheprovider tests/system/oci

echo "=== system tests: corral as PID 1 under podman (run, stop, kill, exec, healthcheck, kube play, sdnotify)"
CORRAL_STATIC_BIN="$static" "$python" -m pytest -q -p no:cacheprovider tests/system/podman

echo "=== system tests: corral as PID 1 under containerd (ctr run, task kill, task exec, cgroup limits; a containerd of its own)"
CORRAL_STATIC_BIN="$static" "$python" -m pytest -q -p no:cacheprovider tests/system/containerd

echo "=== system tests: corral as a systemd service (systemd 252 as init of a Debian 12 tree under systemd-nspawn; the tree is cached in /var/cache/corral-tests)"
CORRAL_BIN="$PWD/build/corral" "$python" -m pytest -q -p no:cacheprovider tests/system/systemd

echo "=== build with AddressSanitizer and UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -DCORRAL_WERROR=ON -DCORRAL_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:halt_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_suites build-asan

echo "=== fuzzing the parsers over their kept corpus, 20 s in all (libFuzzer, ASan, UBSan)"
tests/fuzz/run.sh 20

echo "=== soak smoke run: 60 s of load and faults, invariants checked (tests/soak)"
"$python" tests/soak/soak.py --corral build/corral --duration 60 --tasks 50

echo "=== restore soak: 200 kill -9s of corral's loop under --keeper, invariants checked (tests/soak)"
"$python" tests/soak/restore_soak.py --corral build/corral --kills 200

echo "=== benchmark smoke run (figures are not checked)"
for bench in bench_supervisor bench_control bench_cgroup bench_isolation bench_output bench_probes bench_exec bench_http bench_upgrade bench_log_patterns bench_loop bench_restore; do
	build/tests/bench/$bench --quick --corral build/corral || {
		echo "benchmark smoke run failed: $bench" >&2
		exit 1
	}
done
echo "all tests passed"
