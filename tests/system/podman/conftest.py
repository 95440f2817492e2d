"""Fixtures for the podman tests: corral as PID 1 of a container run by
podman (Debian's package), from an image imported from a local root file
system (`podman import`: no registry).

The image's root is tests/system/oci's (make-rootfs.sh: busybox-static, the
static corral, examples/container/corral.yaml as /etc/corral/corral.yaml,
the OCI cases and this suite's cases/ under /cases). Podman keeps its
images and containers in a store of the session's own (--root, --runroot,
the vfs driver, which works on any file system), and reads a
containers.conf of the session's own: runc (crun refuses these machines'
hybrid cgroups), cgroupfs (no systemd here), the file events logger, and
ulimits within the machine's hard limits (podman's defaults are above them
and runc would refuse to set them). Every container runs with
`--network none`, so that no bridge or veth is left behind. Each test
removes its containers and pods at teardown, and fails if one of their
processes is left.
"""

import importlib.util
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
OCI = HERE.parent / "oci"

# The OCI suite's static binary fixture and helpers, loaded under another
# name: both directories have a conftest.py.
_spec = importlib.util.spec_from_file_location("oci_conftest", OCI / "conftest.py")
oci = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oci)
static_corral = oci.static_corral
wait_for = oci.wait_for
run = oci.run

CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
log_driver = "k8s-file"
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
"""
IMAGE = "localhost/corral-web:latest"  # the name examples/kubernetes/pod.yaml uses, under localhost/


class Podman:
    def __init__(self, directory):
        self.directory = directory
        self.conf = directory / "containers.conf"
        self.conf.write_text(CONTAINERS_CONF)
        self.base = ["podman", "--root", directory / "store", "--runroot", directory / "run",
                     "--storage-driver", "vfs"]

    def __call__(self, *args, check=True, timeout=120, **kwargs):
        env = dict(os.environ, CONTAINERS_CONF=str(self.conf))
        return run(self.base + list(args), check=check, timeout=timeout, env=env, **kwargs)

    def inspect(self, name, template):
        return self("inspect", name, "--format", template).stdout.strip()

    def host_pid(self, name):
        return int(self.inspect(name, "{{.State.Pid}}"))


@pytest.fixture(scope="session")
def podman_session(static_corral, tmp_path_factory):
    for tool in ("podman", "runc", "busybox", "catatonit"):
        if not shutil.which(tool) and not Path(f"/usr/libexec/podman/{tool}").exists():
            pytest.fail(f"{tool} is missing: run scripts/install-deps.sh "
                        "(podman, catatonit, runc, busybox-static)")
    directory = tmp_path_factory.mktemp("podman")
    podman = Podman(directory)
    root = directory / "rootfs"
    run([OCI / "make-rootfs.sh", static_corral, root])
    run(["cp", "-r", f"{HERE / 'cases'}/.", root / "cases"])
    archive = directory / "rootfs.tar"
    run(["tar", "-C", root, "-cf", archive, "."])
    podman("import", "--change",
           'CMD=["/usr/local/bin/corral","run","/etc/corral/corral.yaml"]', archive, IMAGE)
    yield podman
    podman("system", "reset", "--force", check=False)
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def podman(podman_session):
    """The session's podman; what a test starts is removed after it, and
    the test fails if a process of it outlives the removal."""
    pids = []
    podman_session.started_pids = pids
    yield podman_session
    podman_session("pod", "rm", "--all", "--force", "--time", "0", check=False)
    podman_session("rm", "--all", "--force", "--time", "0", check=False)
    left = [pid for pid in pids if Path(f"/proc/{pid}").exists()]
    assert not left, f"container processes left behind: {left}"


def unique(name):
    return f"{name}-{uuid.uuid4().hex[:8]}"
