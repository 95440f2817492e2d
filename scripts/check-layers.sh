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
[[ $status -eq 0 ]] && echo "layers: every include points down"
exit $status
