#!/usr/bin/env bash
# Every C file is as .clang-format says (Debian 12's clang-format 14; another
# version may lay some lines out differently). Fails naming the files that
# are not; `clang-format -i FILE` fixes one.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.c' '*.h')
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/corral-format.$$; then
	grep -o '^[^:]*\.[ch]:' /tmp/corral-format.$$ | sort -u | sed 's/:$//; s/^/not formatted: /' >&2
	rm -f /tmp/corral-format.$$
	exit 1
fi
rm -f /tmp/corral-format.$$
echo "format: every C file as .clang-format says"
