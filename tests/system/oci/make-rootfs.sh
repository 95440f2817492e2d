#!/usr/bin/env bash
# Builds the root filesystem of the test containers, laid out like
# examples/Dockerfile's runtime image:
#
#   tests/system/oci/make-rootfs.sh CORRAL_BINARY ROOTFS
#
#   /usr/local/bin/corral      the (static) binary given: nothing else of the
#                              host goes in, no loader, no shared library
#   /bin/busybox               busybox-static, with a link per applet (sh,
#                              httpd, wget, ps, sleep, ...)
#   /etc/passwd, /etc/group    the accounts of the busybox image
#   /etc/corral/corral.yaml    examples/container/corral.yaml: the example
#                              config, run as it is shipped
#   /etc/corral/doors.yaml     examples/orchestrators/doors.yaml, as shipped
#   /cases/                    the test configs and scripts (cases/ here)
#
# With `runc spec` beside it (rootfs/ next to config.json), it is a bundle:
# see tests/system/README.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
if (($# != 2)); then
	echo "usage: $0 CORRAL_BINARY ROOTFS" >&2
	exit 2
fi
corral=$(realpath "$1")
root=$(realpath -m "$2")
busybox=/bin/busybox

[[ -x $corral ]] || { echo "make-rootfs: $corral is not an executable" >&2; exit 1; }
if ldd "$corral" >/dev/null 2>&1; then
	echo "make-rootfs: $corral is not static (build it with scripts/build-static.sh)" >&2
	exit 1
fi
if ! "$busybox" --list >/dev/null 2>&1 || ldd "$busybox" >/dev/null 2>&1; then
	echo "make-rootfs: $busybox is missing or not static (apt-get install busybox-static)" >&2
	exit 1
fi
if [[ -e $root ]] && [[ -n $(ls -A "$root") ]]; then
	echo "make-rootfs: $root exists and is not empty" >&2
	exit 1
fi

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,usr/local/bin,etc/corral,proc,sys,dev,tmp,run,var,cases}
chmod 1777 "$root/tmp"
install -m 755 "$busybox" "$root/bin/busybox"
"$busybox" --list-full | while read -r applet; do
	[[ -e $root/$applet || -L $root/$applet ]] && continue
	mkdir -p "$root/$(dirname "$applet")"
	ln -s /bin/busybox "$root/$applet"
done
install -m 755 "$corral" "$root/usr/local/bin/corral"

# The busybox image's accounts (docker.io/library/busybox).
cat >"$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
daemon:x:1:1:daemon:/usr/sbin:/bin/false
www-data:x:33:33:www-data:/var/www:/bin/false
nobody:x:65534:65534:nobody:/home:/bin/false
PASSWD
cat >"$root/etc/group" <<'GROUP'
root:x:0:
daemon:x:1:
www-data:x:33:
nogroup:x:65534:
GROUP

install -m 644 "$repo/examples/container/corral.yaml" "$root/etc/corral/corral.yaml"
install -m 644 "$repo/examples/orchestrators/doors.yaml" "$root/etc/corral/doors.yaml"
cp -r "$here/cases/." "$root/cases/"
echo "$root"
