#!/usr/bin/env bash
# Builds the fuzzers with clang (libFuzzer + ASan + UBSan) and runs each for
# a bounded time, splitting the time between them: the config parser on a
# seed corpus of the configs we ship and test, the control request parser
# on one request of each command, the CDI spec parser on a few specs, the
# hook response parser on a few responses.
# Usage: tests/fuzz/run.sh [SECONDS]   (default 30, in all)
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
config_seconds=$(( (seconds + 1) / 2 ))
rest=$(( seconds - config_seconds ))
control_seconds=$(( rest / 3 > 0 ? rest / 3 : 1 ))
cdi_seconds=$(( rest / 3 > 0 ? rest / 3 : 1 ))
hook_seconds=$(( rest - control_seconds - cdi_seconds > 0 ? rest - control_seconds - cdi_seconds : 1 ))
out=build-fuzz
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -I.)
mkdir -p "$out/corpus" "$out/control-corpus" "$out/cdi-corpus" "$out/hook-corpus"

# hooks/cdi_name.c: the config checks CDI device names.
clang "${flags[@]}" tests/fuzz/fuzz_config.c config/*.c hooks/cdi_name.c \
	$(pkg-config --cflags --libs yaml-0.1 libseccomp libcap) -o "$out/fuzz_config"
cp examples/*.yaml tests/unit/configs/*.yaml "$out/corpus/" 2>/dev/null || true
"$out/fuzz_config" -max_total_time="$config_seconds" -max_len=4096 -print_final_stats=1 \
	"$out/corpus" 2>&1 | tail -n 12

# config/*.c for signal names and quoting; yaml, libseccomp (syscall names)
# and libcap only because they link it.
clang "${flags[@]}" tests/fuzz/fuzz_control_protocol.c supervisor/control_protocol.c supervisor/json_text.c config/*.c hooks/cdi_name.c \
	$(pkg-config --cflags --libs jansson yaml-0.1 libseccomp libcap) -o "$out/fuzz_control_protocol"
seed=0
for request in \
	'{"version":1,"command":"status"}' \
	'{"version":1,"command":"status","target":"web/app"}' \
	'{"version":1,"command":"restart","target":"web/app","mode":"force"}' \
	'{"version":1,"command":"restart","target":"web","mode":"all"}' \
	'{"version":1,"command":"stop","target":"web/app"}' \
	'{"version":1,"command":"start","target":"web/app"}' \
	'{"version":1,"command":"signal","target":"web/app","signal":"SIGHUP"}' \
	'{"version":1,"command":"logs","target":"web/app","follow":true,"tail":10}' \
	'{"version":1,"command":"events","follow":false,"tail":0}' \
	'{"version":1,"command":"shutdown"}'; do
	printf '%s' "$request" >"$out/control-corpus/seed-$seed.json"
	seed=$((seed + 1))
done
"$out/fuzz_control_protocol" -max_total_time="$control_seconds" -max_len=1024 \
	-print_final_stats=1 "$out/control-corpus" 2>&1 | tail -n 12

clang "${flags[@]}" tests/fuzz/fuzz_cdi_spec.c hooks/cdi_spec.c hooks/cdi_name.c config/*.c \
	$(pkg-config --cflags --libs yaml-0.1 libseccomp libcap) -o "$out/fuzz_cdi_spec"
printf '%s' '{"cdiVersion":"0.6.0","kind":"vendor.example/fake","devices":[{"name":"zero0","containerEdits":{"env":["A=1"],"deviceNodes":[{"path":"/dev/fake0","hostPath":"/dev/zero","permissions":"rw","major":1,"minor":5}]}}],"containerEdits":{"mounts":[{"hostPath":"/tmp","containerPath":"/opt","options":["ro","rbind","rslave"]}],"hooks":[{"hookName":"createContainer","path":"/bin/true"}],"additionalGids":[44]}}' \
	>"$out/cdi-corpus/seed-json.json"
printf 'cdiVersion: 0.8.0\nkind: a.b/c\ndevices:\n  - name: x\n    containerEdits:\n      deviceNodes: [{path: /dev/null, type: c}]\n' \
	>"$out/cdi-corpus/seed-yaml.yaml"
"$out/fuzz_cdi_spec" -max_total_time="$cdi_seconds" -max_len=2048 -print_final_stats=1 \
	"$out/cdi-corpus" 2>&1 | tail -n 12

clang "${flags[@]}" tests/fuzz/fuzz_hook_protocol.c hooks/hook_protocol.c hooks/start_additions.c supervisor/json_text.c \
	config/*.c hooks/cdi_name.c $(pkg-config --cflags --libs jansson yaml-0.1 libseccomp libcap) \
	-o "$out/fuzz_hook_protocol"
seed=0
for response in \
	'{"version":1,"env":{"A":"1"},"state":{"n":1},"done":true}' \
	'{"mounts":[{"source":"/tmp","target":"/data","readonly":true,"propagation":"rslave"}]}' \
	'{"mounts":[{"type":"tmpfs","target":"/scratch","options":["size=1m"]}]}' \
	'{"devices":[{"source":"/dev/fuse","target":"/dev/fuse","permissions":"rwm"}]}'; do
	printf '%s' "$response" >"$out/hook-corpus/seed-$seed.json"
	seed=$((seed + 1))
done
"$out/fuzz_hook_protocol" -max_total_time="$hook_seconds" -max_len=4096 \
	-print_final_stats=1 "$out/hook-corpus" 2>&1 | tail -n 12
