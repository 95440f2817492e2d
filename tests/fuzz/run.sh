#!/usr/bin/env bash
# Builds the fuzzers with clang (libFuzzer + ASan + UBSan) and runs them:
# the config parser, the control request parser, the CDI spec parser, the
# hook response parser, the http probe's status line reader, the HTTP
# endpoint's request parser, the env file parser, the cron expression
# parser, the status table's JSON view and corral import's readers. Each starts from a few seeds written here, the
# configs we ship and test, and the corpus kept in tests/fuzz/corpus/NAME
# (inputs earlier long runs found interesting, and the regression inputs of
# what they found): replaying it is part of every run.
#
# Usage:
#   tests/fuzz/run.sh [SECONDS]       every fuzzer, SECONDS in all (default 30;
#                                     the CI's smoke run)
#   tests/fuzz/run.sh --long [RUNS]   each fuzzer until RUNS executions (default
#                                     10000000), then the new inputs are merged,
#                                     minimised, into tests/fuzz/corpus/NAME
#                                     (docs/reliability.md has the last figures)
# A crash stops the run; its input is in build-fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/../.."

long=false
if [[ ${1:-} == --long ]]; then
	long=true
	runs=${2:-10000000}
else
	seconds=${1:-30}
fi

out=build-fuzz
kept=tests/fuzz/corpus
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE -I.)
libs_config="yaml-0.1 libseccomp libcap tre"
mkdir -p "$out/artifacts"

# NAME SOURCES... PKG-CONFIG-MODULES: builds $out/NAME.
build() {
	local name=$1 modules=$2
	shift 2
	local libraries=""
	[[ -z $modules ]] || libraries=$(pkg-config --cflags --libs $modules)
	# shellcheck disable=SC2086 # pkg-config prints several words on purpose
	clang "${flags[@]}" "tests/fuzz/$name.c" "$@" $libraries -o "$out/$name"
}

# The config and the base files it uses (allocation, units and signal names,
# suggestions, names, paths, reading a file); libseccomp's syscall table,
# which the fuzzer hands the config (config/text/syscall_names.h) to check syscall
# names (loading libseccomp when a list has some). config/*/*.c also
# gives signal names and quoting to the others, which link yaml, libseccomp
# and libcap only because of it.
base_sources=(base/xmalloc.c base/units.c base/signal_names.c base/suggest.c base/names.c base/paths.c
	base/regular_file.c base/file_kind.c base/unix_listener.c base/dir_trust.c)
config_sources=(config/*/*.c "${base_sources[@]}" isolation/seccomp_library.c isolation/library_loader.c
	isolation/seccomp_syscall_names.c)
build fuzz_config "$libs_config" "${config_sources[@]}"
build fuzz_control_protocol "jansson $libs_config" supervisor/control/control_protocol.c \
	base/json_text.c "${config_sources[@]}"
build fuzz_cdi_spec "$libs_config" hooks/cdi_spec.c "${config_sources[@]}"
build fuzz_hook_protocol "jansson $libs_config" hooks/hook_protocol.c hooks/start_additions.c \
	base/json_text.c "${config_sources[@]}"
build fuzz_http_status "" supervisor/probes/http_status.c
build fuzz_http_request "" supervisor/http/http_request.c
build fuzz_env_file "" config/text/env_file.c base/xmalloc.c
build fuzz_cron "" config/text/cron.c
build fuzz_json_view "" cli/json_view.c base/xmalloc.c
build fuzz_import_text "libcap" cli/import/unit_file.c cli/import/ini_file.c \
	cli/import/systemd_words.c cli/import/python_text.c cli/import/shell_words.c \
	cli/import/systemd_values.c cli/import/import_report.c base/xmalloc.c base/text_buffer.c \
	base/regular_file.c base/file_kind.c base/units.c base/signal_names.c

# ---- seeds: build-fuzz/seeds/NAME ----
seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{fuzz_config,fuzz_control_protocol,fuzz_cdi_spec,fuzz_hook_protocol,fuzz_http_status,fuzz_http_request,fuzz_env_file,fuzz_cron,fuzz_json_view,fuzz_import_text}
cp examples/*.yaml tests/unit/configs/*.yaml "$seeds/fuzz_config/" 2>/dev/null || true
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
	'{"version":1,"command":"shutdown"}' \
	'{"version":1,"command":"reload","path":"/etc/corral.yaml","dry_run":true}' \
	'{"version":1,"command":"restart","target":"web/app","mode":"rolling","max_unavailable":2}' \
	'{"version":1,"command":"scale","counts":{"web/app":3,"web/worker":1}}' \
	'{"version":1,"command":"upgrade"}' \
	'{"version":1,"command":"upgrade","path":"/usr/local/bin/corral"}'; do
	printf '%s' "$request" >"$seeds/fuzz_control_protocol/seed-$seed.json"
	seed=$((seed + 1))
done
printf '%s' '{"cdiVersion":"0.6.0","kind":"vendor.example/fake","devices":[{"name":"zero0","containerEdits":{"env":["A=1"],"deviceNodes":[{"path":"/dev/fake0","hostPath":"/dev/zero","permissions":"rw","major":1,"minor":5}]}}],"containerEdits":{"mounts":[{"hostPath":"/tmp","containerPath":"/opt","options":["ro","rbind","rslave"]}],"hooks":[{"hookName":"createContainer","path":"/bin/true"}],"additionalGids":[44]}}' \
	>"$seeds/fuzz_cdi_spec/seed-json.json"
printf 'cdiVersion: 0.8.0\nkind: a.b/c\ndevices:\n  - name: x\n    containerEdits:\n      deviceNodes: [{path: /dev/null, type: c}]\n' \
	>"$seeds/fuzz_cdi_spec/seed-yaml.yaml"
seed=0
for response in \
	'{"version":1,"env":{"A":"1"},"state":{"n":1},"done":true}' \
	'{"mounts":[{"source":"/tmp","target":"/data","readonly":true,"propagation":"rslave"}]}' \
	'{"mounts":[{"type":"tmpfs","target":"/scratch","options":["size=1m"]}]}' \
	'{"devices":[{"source":"/dev/fuse","target":"/dev/fuse","permissions":"rwm"}]}'; do
	printf '%s' "$response" >"$seeds/fuzz_hook_protocol/seed-$seed.json"
	seed=$((seed + 1))
done

printf 'interpolate: true\ngroups:\n  g:\n    tasks:\n      t: {command: [echo, "${HOME:-x} $$ ${A:?m}"]}\n' \
	>"$seeds/fuzz_config/seed-interpolate.yaml"
printf '# c\nA=1\nexport B="x\\ty" # c\nC=\x27lit\x27\nD=plain # c\n' >"$seeds/fuzz_env_file/seed.env"
printf 'HTTP/1.1 200 OK\r\nServer: x\r\n\r\n' >"$seeds/fuzz_http_status/seed-ok.txt"
printf '*/15 1-10/3 1,15 jan-jun mon-fri' >"$seeds/fuzz_cron/seed-fields.txt"
printf '@hourly' >"$seeds/fuzz_cron/seed-name.txt"
cp tests/integration/import_fixtures/supervisord/*.conf "$seeds/fuzz_import_text/"
[[ ! -r /lib/systemd/system/redis-server.service ]] ||
	cp /lib/systemd/system/redis-server.service "$seeds/fuzz_import_text/"
printf 'ExecStart=-/bin/sh -c "a \\"b\\" \\x41" $X ${Y}z \\\n  more\n' >"$seeds/fuzz_import_text/seed-exec.txt"
printf 'A="1, 2",B=x %%(program_name)s_%%(process_num)02d 1min 30s' >"$seeds/fuzz_import_text/seed-mixed.txt"
printf '{"ok":true,"corral":{"pid":1,"started_at":1.5},"groups":[{"name":"g","tasks":[{"name":"a\\u00e9\\"","pid":null,"usage":{"cpu_usec":-3}}],"x":[[],{}]}]}' \
	>"$seeds/fuzz_json_view/seed-status.json"
printf 'HTTP/1.0 404 File not found\r\n' >"$seeds/fuzz_http_status/seed-404.txt"
printf 'GET /readyz?group=web&task=a%%2Fb HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n' \
	>"$seeds/fuzz_http_request/seed-readyz.txt"
printf '\r\nHEAD http://h:1/metrics HTTP/1.0\nConnection: keep-alive\nContent-Length: 0\n\n' \
	>"$seeds/fuzz_http_request/seed-head.txt"

# NAME MAX_LEN LIMIT...: runs NAME over a scratch corpus made of the seeds
# and the kept corpus, with libFuzzer's LIMIT options (-max_total_time=,
# -runs=); prints its final figures.
fuzz() {
	local name=$1 max_len=$2
	shift 2
	local work=$out/corpus/$name
	rm -rf "$work"
	mkdir -p "$work" "$kept/$name"
	cp "$seeds/$name"/* "$work/"
	cp "$kept/$name"/* "$work/" 2>/dev/null || true
	echo "--- $name"
	"$out/$name" "$@" -max_len="$max_len" -print_final_stats=1 \
		-artifact_prefix="$out/artifacts/$name-" "$work" 2>&1 |
		grep -E '^(#[0-9]+[[:space:]]+DONE|stat::|Done|INFO: (seed|-max_len))' || true
	# A crash ends libFuzzer with its input saved: fail the run.
	if compgen -G "$out/artifacts/$name-*" >/dev/null; then
		echo "$name: crash or leak, input in $out/artifacts/" >&2
		exit 1
	fi
	if $long; then
		# Keep what is new, minimised: the inputs that add coverage.
		"$out/$name" -merge=1 -max_len="$max_len" "$kept/$name" "$work" >/dev/null 2>&1
		echo "$name: kept corpus now $(find "$kept/$name" -type f | wc -l) inputs"
	fi
}

if $long; then
	fuzz fuzz_config 4096 -runs="$runs"
	fuzz fuzz_control_protocol 1024 -runs="$runs"
	fuzz fuzz_cdi_spec 2048 -runs="$runs"
	fuzz fuzz_hook_protocol 4096 -runs="$runs"
	fuzz fuzz_http_status 512 -runs="$runs"
	fuzz fuzz_http_request 2048 -runs="$runs"
	fuzz fuzz_env_file 2048 -runs="$runs"
	fuzz fuzz_cron 256 -runs="$runs"
	fuzz fuzz_json_view 4096 -runs="$runs"
	fuzz fuzz_import_text 4096 -runs="$runs"
else
	config_seconds=$(((seconds + 1) / 2))
	rest=$((seconds - config_seconds))
	each=$((rest / 9 > 0 ? rest / 9 : 1))
	fuzz fuzz_config 4096 -max_total_time="$config_seconds"
	fuzz fuzz_control_protocol 1024 -max_total_time="$each"
	fuzz fuzz_cdi_spec 2048 -max_total_time="$each"
	fuzz fuzz_hook_protocol 4096 -max_total_time="$each"
	fuzz fuzz_http_status 512 -max_total_time="$each"
	fuzz fuzz_http_request 2048 -max_total_time="$each"
	fuzz fuzz_env_file 2048 -max_total_time="$each"
	fuzz fuzz_cron 256 -max_total_time="$each"
	fuzz fuzz_json_view 4096 -max_total_time="$each"
	fuzz fuzz_import_text 4096 -max_total_time="$each"
fi
