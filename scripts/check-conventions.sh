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
# One way to start a process: isolation/spawn.c. The keeper's start of
# the loop is the one other (docs/architecture.md, "Where the code departs
# from DESIGN.md": it puts held fds at exact numbers in the child).
while IFS= read -r hit; do
	echo "$hit: processes start through isolation/spawn.h (spawn_process)" >&2
	status=1
done < <(grep -rnE --include='*.c' '\b(posix_spawnp?|fork|vfork|clone3?)[[:space:]]*\(' \
	base config hooks supervisor cli | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(/?\*|//)' |
	grep -v '^supervisor/keeper/keeper_handoff.c:' || true)
[[ $status -eq 0 ]] && echo "conventions: error buffers and failure codes named as architecture.md says; one spawn path"
exit $status
