#!/usr/bin/env bash
# Includes point down only: base <- config <- {isolation, hooks} <-
# supervisor <- cli (docs/architecture.md, "Layers"). Fails naming every
# include that reaches a layer above (or beside) its file's own.
set -euo pipefail
cd "$(dirname "$0")/.."

# What each folder may include from, besides system headers.
declare -A allowed=(
	[base]="base"
	[config]="base config"
	[isolation]="base config isolation"
	[hooks]="base config hooks"
	[supervisor]="base config isolation hooks supervisor"
	[cli]="base config isolation hooks supervisor cli"
)

status=0
for layer in "${!allowed[@]}"; do
	while IFS=: read -r file line text; do
		target=$(sed -E 's/.*#include "([^/"]+)\/.*/\1/' <<<"$text")
		[[ " ${allowed[$layer]} " == *" $target "* ]] && continue
		echo "$file:$line: $layer/ includes from $target/, a layer above or beside it: $text" >&2
		status=1
	done < <(grep -rn --include='*.[ch]' -E '^#include "[a-z_]+/' "$layer" || true)
done
# Inside supervisor/, floors (docs/architecture.md, "Layers"): a room
# includes from its own and from rooms on lower floors only, never from
# another room on its floor; the top files (supervisor/*.c) from any.
declare -A floor=(
	[keeper]=0 [output]=0
	[lifecycle]=1
	[probes]=2
	[tasks]=3
	[control]=4
	[metrics]=5
	[http]=6 [parent]=6 [watch]=6
	[pid1]=7
	[upgrade]=8
	[top]=9
)
room_of() { # supervisor/ROOM/x.h -> ROOM; supervisor/x.h -> top
	local rest=${1#supervisor/}
	[[ $rest == */* ]] && echo "${rest%%/*}" || echo top
}
while IFS=: read -r file line text; do
	own=$(room_of "$file")
	target=$(room_of "$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"$text")")
	[[ -n ${floor[$own]:-} ]] || { echo "$file: supervisor/$own/ has no floor in $0" >&2; status=1; continue; }
	[[ -n ${floor[$target]:-} ]] || { echo "$file:$line: a room with no floor: $text" >&2; status=1; continue; }
	[[ $own == "$target" ]] && continue
	if ((floor[$target] < floor[$own])); then continue; fi
	echo "$file:$line: supervisor/$own/ (floor ${floor[$own]}) includes from $target (floor ${floor[$target]}), not below it: $text" >&2
	status=1
done < <(grep -rn --include='*.[ch]' -E '^#include "supervisor/' supervisor || true)

# Inside config/, the same: text/ (values with no YAML: cron, patterns,
# names, environment files) < yaml/ (the walk, its limits, the located
# messages) < model/ (the model and what compares it) < load/ (YAML into
# the model, and its checks). Every file is in a room.
declare -A config_floor=([text]=0 [yaml]=1 [model]=2 [load]=3)
for file in config/*.[ch]; do
	[[ -e $file ]] && { echo "$file: config/ keeps its files in rooms (text, yaml, model, load)" >&2; status=1; }
done
while IFS=: read -r file line text; do
	own=$(cut -d/ -f2 <<<"$file")
	target=$(sed -E 's/.*#include "config\/([a-z]+)\/.*/\1/' <<<"$text")
	[[ -n ${config_floor[$own]:-} && -n ${config_floor[$target]:-} ]] || { echo "$file:$line: a config room with no floor: $text" >&2; status=1; continue; }
	((config_floor[$target] <= config_floor[$own])) && continue
	echo "$file:$line: config/$own/ includes from config/$target/, a floor above it: $text" >&2
	status=1
done < <(grep -rn --include='*.[ch]' -E '^#include "config/' config || true)

# Tests point the same way: an integration test module imports helpers
# (conftest.py, helpers_*.py), never another test module.
while IFS= read -r hit; do
	echo "$hit: a test module imports another test module; move what it needs to a helpers_*.py" >&2
	status=1
done < <(grep -rnE '^[[:space:]]*(from|import)[[:space:]]+test_' tests/integration tests/system --include='*.py' || true)

[[ $status -eq 0 ]] && echo "layers: every include points down, and inside supervisor/ and config/ to a lower floor; tests import helpers, not tests"
exit $status
