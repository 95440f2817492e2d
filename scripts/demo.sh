#!/usr/bin/env bash
# Fresh Debian 12, as root: install what is missing, build, and run corral on
# the shipped example, which walks through the whole lifecycle and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
exec build/corral run examples/lifecycle.yaml
