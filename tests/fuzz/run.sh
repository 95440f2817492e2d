#!/usr/bin/env bash
# Builds the config fuzzer with clang (libFuzzer + ASan + UBSan) and runs it
# for a bounded time on a seed corpus of the configs we ship and test.
# Usage: tests/fuzz/run.sh [SECONDS]   (default 30)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
out=build-fuzz
mkdir -p "$out/corpus"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-D_GNU_SOURCE -I. tests/fuzz/fuzz_config.c config/*.c \
	$(pkg-config --cflags --libs yaml-0.1) -o "$out/fuzz_config"
cp examples/*.yaml tests/unit/configs/*.yaml "$out/corpus/" 2>/dev/null || true
"$out/fuzz_config" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
	"$out/corpus" 2>&1 | tail -n 12
