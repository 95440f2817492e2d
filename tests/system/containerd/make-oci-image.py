#!/usr/bin/env python3
"""Packs a root file system into an OCI image archive that `ctr images
import` takes, with no registry and no image builder:

    tests/system/containerd/make-oci-image.py ROOTFS ARCHIVE NAME [-- CMD...]

ROOTFS is a directory (tests/system/oci/make-rootfs.sh makes the one the
system tests use), ARCHIVE the .tar to write, NAME the image's name
(`localhost/corral-web:latest`), CMD the image's default command (default:
corral on the example config). The archive is an OCI image layout
(image-spec's "oci-layout", index.json, blobs/sha256/) holding one
uncompressed layer (ROOTFS as a tar), the image config (linux/amd64, Cmd,
a PATH, the layer's diff_id) and the manifest, which index.json names with
the `io.containerd.image.name` annotation: `ctr images import ARCHIVE` then
stores it as NAME. Blobs are named after their sha256, as the layout wants.
"""

import hashlib
import io
import json
import platform
import sys
import tarfile
from pathlib import Path

DEFAULT_CMD = ["/usr/local/bin/corral", "run", "/etc/corral/corral.yaml"]
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
GO_ARCH = {"x86_64": "amd64", "aarch64": "arm64"}


def layer_of(root):
    """ROOTFS as an uncompressed tar: owners, modes and symlinks as they
    are (make-rootfs.sh runs as root), entries sorted, no mtime games."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w", format=tarfile.PAX_FORMAT) as layer:
        layer.add(root, arcname=".")
    return data.getvalue()


def descriptor(media_type, data):
    return {"mediaType": media_type, "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
            "size": len(data)}


def main(arguments):
    command = DEFAULT_CMD
    if "--" in arguments:
        split = arguments.index("--")
        arguments, command = arguments[:split], arguments[split + 1:]
    if len(arguments) != 3 or not command:
        sys.exit(f"usage: {sys.argv[0]} ROOTFS ARCHIVE NAME [-- CMD...]")
    root, archive, name = Path(arguments[0]), Path(arguments[1]), arguments[2]
    if not (root / "usr/local/bin/corral").exists():
        sys.exit(f"{root}: no usr/local/bin/corral (make it with tests/system/oci/make-rootfs.sh)")
    arch = GO_ARCH.get(platform.machine(), platform.machine())

    layer = layer_of(root)
    layer_descriptor = descriptor("application/vnd.oci.image.layer.v1.tar", layer)
    config = json.dumps({
        "architecture": arch, "os": "linux",
        "config": {"Cmd": command, "Env": [f"PATH={PATH}"], "WorkingDir": "/"},
        # Uncompressed: the layer's digest is its diff_id.
        "rootfs": {"type": "layers", "diff_ids": [layer_descriptor["digest"]]},
    }).encode()
    config_descriptor = descriptor("application/vnd.oci.image.config.v1+json", config)
    manifest = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config_descriptor, "layers": [layer_descriptor],
    }).encode()
    manifest_descriptor = descriptor("application/vnd.oci.image.manifest.v1+json", manifest)
    manifest_descriptor["platform"] = {"architecture": arch, "os": "linux"}
    manifest_descriptor["annotations"] = {
        "io.containerd.image.name": name,                       # what ctr names it
        "org.opencontainers.image.ref.name": name.rsplit(":", 1)[-1],  # the tag, for others
    }
    index = json.dumps({"schemaVersion": 2,
                        "mediaType": "application/vnd.oci.image.index.v1+json",
                        "manifests": [manifest_descriptor]}).encode()

    with tarfile.open(archive, "w") as out:
        def add(member, data):
            info = tarfile.TarInfo(member)
            info.size, info.mode = len(data), 0o644
            out.addfile(info, io.BytesIO(data))

        add("oci-layout", b'{"imageLayoutVersion": "1.0.0"}')
        add("index.json", index)
        for data, described in ((layer, layer_descriptor), (config, config_descriptor),
                                (manifest, manifest_descriptor)):
            add("blobs/sha256/" + described["digest"].removeprefix("sha256:"), data)
    print(archive)


if __name__ == "__main__":
    main(sys.argv[1:])
