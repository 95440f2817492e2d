#!/usr/bin/env bash
# Builds the fully static corral that goes into container images:
#
#   scripts/build-static.sh [BUILD_DIR]      (default: build-static)
#
# BUILD_DIR/corral           static, with debug info (for gdb)
# BUILD_DIR/corral.stripped  the same, stripped: what images ship
#
# The last line printed is the stripped binary's absolute path. One recipe
# for every user: examples/Dockerfile's builder stage, scripts/test.sh and
# tests/system/oci (which builds with it when CORRAL_STATIC_BIN is not set),
# so the tests run the binary an image gets. Needs the packages of
# `scripts/install-deps.sh --build-only`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(realpath -m "${1:-$root/build-static}")

cmake -S "$root" -B "$build" -DCORRAL_STATIC=ON -DCORRAL_WERROR=ON -DCORRAL_TESTS=OFF \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# glibc's link-time note about getpwnam & co. in a static binary is expected
# (docs/containers.md says what works); anything else the linker says shows.
# Build output goes to stderr: stdout is the binary's path alone.
cmake --build "$build" --target corral -j"$(nproc)" 2>&1 |
	{ grep -v -e "in statically linked applications requires at runtime" -e "in function \`" || true; } >&2
strip -o "$build/corral.stripped" "$build/corral"
echo "$build/corral.stripped"
