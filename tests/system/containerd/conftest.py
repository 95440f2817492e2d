"""Fixtures for the containerd tests: corral as PID 1 of a container that
containerd runs (Debian's package: containerd 1.6, its runc shim
containerd-shim-runc-v2, the `ctr` client).

The session starts a containerd of its own, which shares nothing with a
containerd the machine may run: its own --root, --state and --address
(a socket in the session's temp dir), a config.toml beside them that turns
off the CRI plugin (no CNI, no Kubernetes here), the /opt plugin and every
snapshotter but `native` (plain directories: it works on any file system,
as podman's vfs does), and a ctr namespace named after the session
(corral-test-RANDOM). runc's state goes under the temp dir too
(`ctr run --runc-root`), and so do the FIFOs of the containers' stdio
(`--fifo-dir`). One thing is the shim's to place: its socket, under
/run/containerd/s/ (named by a hash of our address, namespace and id, so
it never meets another containerd's); it goes with the shim.

The image is the root file system the runc and podman suites use
(tests/system/oci/make-rootfs.sh: busybox-static, the static corral,
examples/container/corral.yaml as /etc/corral/corral.yaml, the OCI cases
and this suite's cases/ under /cases), packed by make-oci-image.py as an
OCI image archive and imported with `ctr images import` (no registry).

Every container is run with `ctr run --rm` in the foreground, so that
ctr's exit code is corral's. At teardown each container is killed and
removed however the test ended, and the test fails if anything of it is
left: the container or its snapshot in containerd, a live shim, a process
of its pid namespace, a cgroup named after it, a mount of its rootfs. At
the end of the session containerd is stopped, the namespace's parent
cgroups (which runc leaves) are removed, and the session fails if a mount
under the temp dir or a process of ours is left.
"""

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.dont_write_bytecode = True

HERE = Path(__file__).resolve().parent
OCI = HERE.parent / "oci"
REPO_ROOT = HERE.parents[2]

# The OCI suite's static binary fixture and host-side helpers (processes of
# a pid namespace, cgroups), loaded under another name: both directories
# have a conftest.py.
_spec = importlib.util.spec_from_file_location("oci_conftest", OCI / "conftest.py")
oci = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(oci)
static_corral = oci.static_corral
wait_for = oci.wait_for
run = oci.run
TIMEOUT = oci.TIMEOUT
CORRAL_IN_IMAGE = oci.CORRAL_IN_IMAGE
EXAMPLE_CONFIG = oci.EXAMPLE_CONFIG

IMAGE = "localhost/corral-web:latest"
SNAPSHOTTER = "native"
SHIM_SOCKETS = Path("/run/containerd/s")
TOOLS = ("containerd", "ctr", "containerd-shim-runc-v2", "runc", "busybox")

CONFIG = """\
version = 2
disabled_plugins = [
  "io.containerd.grpc.v1.cri",
  "io.containerd.internal.v1.opt",
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.overlayfs",
  "io.containerd.snapshotter.v1.zfs",
]
[debug]
  address = ""
[metrics]
  address = ""
"""


def missing_tools():
    return [tool for tool in TOOLS if not shutil.which(tool)]


class Containerd:
    """A containerd daemon of the session's own, and `ctr` pointed at it."""

    def __init__(self, directory):
        self.directory = directory
        self.root = directory / "root"
        self.state = directory / "state"
        self.address = directory / "containerd.sock"
        self.runc_root = directory / "runc"
        self.fifo_dir = directory / "fifo"
        self.namespace = f"corral-test-{uuid.uuid4().hex[:8]}"
        self.config = directory / "config.toml"
        self.config.write_text(CONFIG)
        self.log_path = directory / "containerd.log"
        self.process = None
        self.made_shim_sockets = []  # the directories of /run/containerd/s we made

    def ctr(self, *arguments, check=True, timeout=TIMEOUT):
        return run(["ctr", "--address", self.address, "--namespace", self.namespace,
                    *arguments], check=check, timeout=timeout)

    def start(self):
        for directory in (SHIM_SOCKETS.parent, SHIM_SOCKETS):
            if not directory.exists():
                self.made_shim_sockets.insert(0, directory)
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                ["containerd", "--config", str(self.config), "--root", str(self.root),
                 "--state", str(self.state), "--address", str(self.address)],
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: self.process.poll() is not None
                 or self.ctr("version", check=False).returncode == 0,
                 what=lambda: f"containerd to answer\n{self.log()}")
        if self.process.poll() is not None:
            pytest.fail(f"containerd exited with {self.process.returncode}\n{self.log()}")

    def log(self):
        return self.log_path.read_text(errors="replace")[-4000:]

    def shims(self):
        """Live shim processes of this containerd: {pid: container id}."""
        found = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                arguments = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
                state = oci.Process(int(entry)).state
            except (OSError, ProcessLookupError, KeyError, ValueError):
                continue
            if state == "Z" or not arguments[0].endswith(b"containerd-shim-runc-v2"):
                continue
            text = [a.decode(errors="replace") for a in arguments]
            if "-address" in text and text[text.index("-address") + 1] == str(self.address):
                found[int(entry)] = text[text.index("-id") + 1] if "-id" in text else None
        return found

    def stop(self):
        """Stops containerd; returns what is left behind."""
        leftovers = []
        self.ctr("images", "rm", IMAGE, check=False)
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                leftovers.append("containerd did not stop on SIGTERM")
                self.process.kill()
                self.process.wait()
        leftovers += [f"shim {pid} of {id}" for pid, id in self.shims().items()]
        # runc removes a container's cgroups, not the parent it made for
        # the namespace (containerd's default cgroupsPath is /NAMESPACE/ID).
        for directory in oci.cgroups_named(self.namespace, depth=1):
            try:
                directory.rmdir()
            except OSError as error:
                leftovers.append(f"cgroup {directory}: {error.strerror}")
        mountinfo = Path("/proc/self/mountinfo").read_text()
        leftovers += [f"mount {line}" for line in mountinfo.splitlines()
                      if str(self.directory) in line]
        for directory in self.made_shim_sockets:
            try:
                directory.rmdir()
            except OSError:
                pass  # not empty: a containerd of the machine's came meanwhile
        return leftovers


class Container(oci.Container):
    """One `ctr run --rm` in the foreground (its exit code is the
    container's, i.e. corral's), stdout and stderr in files; the same
    helpers as the runc suite's containers (output, log, processes)."""

    def __init__(self, containerd, directory, container_id):
        super().__init__(None, directory, container_id)
        self.containerd = containerd
        self.pid_file = directory / "pid"
        self.execs = 0

    def start(self, *command, options=()):
        """`ctr run --rm [OPTIONS] IMAGE ID [COMMAND]`; returns once corral
        runs and its host pid is known, or once the container exited."""
        d = self.containerd
        with open(self.stdout_path, "wb") as stdout, open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                ["ctr", "--address", str(d.address), "--namespace", d.namespace, "run", "--rm",
                 "--snapshotter", SNAPSHOTTER, "--runc-root", str(d.runc_root),
                 "--fifo-dir", str(d.fifo_dir), "--pid-file", str(self.pid_file),
                 *options, IMAGE, self.id, *command],
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr)
        pid = wait_for(self._init_pid, what=lambda: f"container {self.id} to run\n{self}")
        if pid == "exited":
            return self
        try:
            self.pid_namespace = os.readlink(f"/proc/{pid}/ns/pid")
            self.host_pid = pid
            self._remember_cgroups()
        except FileNotFoundError:
            pass  # it was quick
        return self

    def _init_pid(self):
        if self.process.poll() is not None:
            return "exited"
        try:
            text = self.pid_file.read_text().strip()
        except FileNotFoundError:
            return None
        return int(text) if text else None

    def runc(self, *arguments, check=True, timeout=TIMEOUT):
        raise AssertionError("a containerd container is driven with ctr")

    def kill(self, signal_name="TERM"):
        """`ctr task kill -s SIGNAL ID`: to corral, the container's init."""
        self.containerd.ctr("task", "kill", "--signal", f"SIG{signal_name}", self.id)

    def exec(self, *command, check=True):
        """`ctr task exec`: COMMAND in the container's namespaces and cgroup."""
        self.execs += 1
        return self.containerd.ctr("task", "exec", "--fifo-dir", self.containerd.fifo_dir,
                                   "--exec-id", f"exec{self.execs}", self.id, *command,
                                   check=check)

    def delete(self):
        """Kills and removes the container whatever its state; returns what
        is left."""
        d = self.containerd
        if self.process and self.process.poll() is None:
            d.ctr("task", "kill", "--signal", "SIGKILL", self.id, check=False)
            try:
                self.process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # `ctr run --rm` removes the task, the container and its snapshot
        # when it returns; if it did not get that far, do it here.
        d.ctr("task", "rm", "--force", self.id, check=False)
        d.ctr("containers", "rm", self.id, check=False)
        leftovers = []
        if self.id in d.ctr("containers", "ls", "--quiet", check=False).stdout.split():
            leftovers.append(f"containerd still lists container {self.id}")
        snapshots = d.ctr("snapshots", "--snapshotter", SNAPSHOTTER, "ls", check=False).stdout
        if any(line.split()[:1] == [self.id] for line in snapshots.splitlines()):
            leftovers.append(f"snapshot {self.id}")
        deadline = time.monotonic() + 5  # the shim exits once its task is deleted
        while (shims := [pid for pid, id in d.shims().items() if id == self.id]) and \
                time.monotonic() < deadline:
            time.sleep(0.02)
        leftovers += [f"shim {pid}" for pid in shims]
        if self.pid_namespace:
            while (left := self.processes()) and time.monotonic() < deadline:
                time.sleep(0.02)
            leftovers += [f"process {p}" for p in left]
        leftovers += [f"cgroup {path}" for path in self.cgroup_directories if path.exists()]
        leftovers += [f"cgroup {path}" for path in oci.cgroups_named(self.id)
                      if path not in self.cgroup_directories]
        mountinfo = Path("/proc/self/mountinfo").read_text()
        leftovers += [f"mount {line}" for line in mountinfo.splitlines()
                      if f"/{self.id}/" in line or line.split()[4].endswith(f"/{self.id}")]
        return leftovers


@pytest.fixture(scope="session")
def containerd(static_corral, tmp_path_factory):
    """The session's containerd, with the image imported."""
    if missing_tools():
        pytest.fail(f"missing: {', '.join(missing_tools())}: run scripts/install-deps.sh "
                    "(containerd, runc, busybox-static)")
    directory = tmp_path_factory.mktemp("containerd")
    daemon = Containerd(directory)
    root = directory / "rootfs"
    run([OCI / "make-rootfs.sh", static_corral, root])
    run(["cp", "-r", f"{HERE / 'cases'}/.", root / "cases"])
    archive = directory / "image.tar"
    run([sys.executable, HERE / "make-oci-image.py", root, archive, IMAGE])
    daemon.start()
    try:
        daemon.ctr("images", "import", "--snapshotter", SNAPSHOTTER, archive)
        yield daemon
    finally:
        leftovers = daemon.stop()
        shutil.rmtree(directory, ignore_errors=True)
        if leftovers:
            pytest.fail("left behind by the session:\n" + "\n".join(leftovers))


@pytest.fixture
def container(containerd, tmp_path, request):
    """container() -> a Container not yet started; each is killed and
    removed after the test, which fails if anything of it is left."""
    made = []

    def make():
        directory = tmp_path / f"container{len(made)}"
        directory.mkdir()
        name = request.node.name.removeprefix("test_")[:24].strip("_-")
        box = Container(containerd, directory, f"corral-{name}-{uuid.uuid4().hex[:8]}")
        made.append(box)
        return box

    yield make

    leftovers = []
    for box in made:
        leftovers += box.delete()
    if leftovers:
        pytest.fail("left behind after the test:\n" + "\n".join(leftovers))
