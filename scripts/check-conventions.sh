#!/usr/bin/env bash
# The error convention of docs/architecture.md ("Errors"), where grep can
# hold it: a message buffer is `char *error, size_t error_size`, never
# `why`/`why_size`; a local holding a code is `failure` (or `result`),
# never `int error`. Fails naming each place.
set -euo pipefail
cd "$(dirname "$0")/.."
folders=(base config isolation hooks supervisor cli)
status=0
while IFS= read -r hit; do
	echo "$hit: a local holding a code is 'failure' or 'result', not 'error'" >&2
	status=1
done < <(grep -rnE --include='*.c' '^[[:space:]]+int error\b' "${folders[@]}" || true)
while IFS= read -r hit; do
	echo "$hit: a message buffer is 'char *error, size_t error_size'" >&2
	status=1
done < <(grep -rnE --include='*.[ch]' '\bwhy_size\b' "${folders[@]}" || true)
[[ $status -eq 0 ]] && echo "conventions: error buffers and failure codes named as architecture.md says"
exit $status
