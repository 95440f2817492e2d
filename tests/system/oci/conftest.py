"""Fixtures for the OCI tests: corral as PID 1 of a container run by runc.

The static binary comes from CORRAL_STATIC_BIN, or is built once per session
by scripts/build-static.sh (the recipe examples/Dockerfile uses too). A
rootfs template is built once by make-rootfs.sh (busybox-static, the static
corral, the example config as /etc/corral/corral.yaml, cases/ as /cases);
each container gets its own copy in a bundle under the test's tmp dir, with
the config.json of `runc spec`, changed only where a test says so.

runc keeps its state in a private --root for the session. Every container
has a unique id, and is deleted at teardown (`runc delete -f`) however the
test ended; teardown then fails the test if anything is left: the
container, a process of its pid namespace, one of its cgroup directories,
a mount of its bundle.
"""

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.dont_write_bytecode = True

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[2]
EXAMPLE_CONFIG = "/etc/corral/corral.yaml"
CORRAL_IN_IMAGE = "/usr/local/bin/corral"
# A container that has not done what a test waits for in this long has hung.
TIMEOUT = float(os.environ.get("CORRAL_OCI_TIMEOUT", "15"))


def wait_for(predicate, timeout=TIMEOUT, interval=0.02, what=None):
    """Polls predicate() until it returns something true; returns it."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            what = what() if callable(what) else what
            pytest.fail(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(interval)


def run(command, check=True, **kwargs):
    kwargs.setdefault("timeout", 120)
    result = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                            **kwargs)
    if check and result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} failed ({result.returncode}):\n"
                    f"{result.stdout}{result.stderr}")
    return result


# ---- processes and cgroups, as the host sees them ------------------------


def read_text(path):
    try:
        return Path(path).read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


class Process:
    """A host process: pid, state letter, parent, start time, NSpid list."""

    def __init__(self, pid):
        self.pid = pid
        status = read_text(f"/proc/{pid}/status")
        stat = read_text(f"/proc/{pid}/stat")
        if status is None or stat is None:
            raise ProcessLookupError(pid)
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        self.state = fields["State"].split()[0]
        self.ppid = int(fields["PPid"])
        self.nspids = [int(n) for n in fields["NSpid"].split()]
        self.name = fields["Name"].strip()
        # Field 22 of stat, after the ")" that ends the command name.
        self.start_time = int(stat.rsplit(")", 1)[1].split()[19])
        try:
            self.pid_namespace = os.readlink(f"/proc/{pid}/ns/pid")
        except OSError:
            self.pid_namespace = None  # a zombie has no namespaces left

    @property
    def identity(self):
        return (self.pid, self.start_time)

    def __repr__(self):
        return (f"<pid {self.pid} (in container {self.nspids[-1]}) {self.name} "
                f"state {self.state} ppid {self.ppid}>")


def all_processes():
    processes = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                processes.append(Process(int(entry)))
            except (ProcessLookupError, KeyError, IndexError, ValueError):
                pass  # gone while we read it
    return processes


def still_alive(identities):
    """The (pid, start time) pairs that still name a process."""
    alive = []
    for pid, start_time in identities:
        try:
            if Process(pid).start_time == start_time:
                alive.append((pid, start_time))
        except ProcessLookupError:
            pass
    return alive


def cgroup_mounts():
    """{hierarchy key: (mount root, host mount point)}: key "" for cgroup2,
    else the v1 hierarchy's controllers (or name=...) joined by commas, as
    in /proc/PID/cgroup."""
    mounts = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        before, after = line.split(" - ", 1)
        mount_root, mount_point = before.split()[3:5]
        fstype, _source, super_options = after.split()[:3]
        if fstype == "cgroup2":
            mounts.setdefault("", (mount_root, mount_point))
        elif fstype == "cgroup":
            names = [option for option in super_options.split(",")
                     if (option not in ("rw", "ro") and "=" not in option)
                     or option.startswith("name=")]
            mounts.setdefault(",".join(names), (mount_root, mount_point))
    return mounts


def cgroup_directory(mounts, key, path):
    """The host directory of cgroup PATH of hierarchy KEY, or None."""
    if key not in mounts:
        return None
    mount_root, mount_point = mounts[key]
    if mount_root != "/":
        if not (path + "/").startswith(mount_root + "/"):
            return None
        path = path[len(mount_root):]
    return Path(mount_point + path)


def cgroup_paths(pid):
    """{hierarchy key: path} from /proc/PID/cgroup (host view)."""
    text = read_text(f"/proc/{pid}/cgroup") or ""
    paths = {}
    for line in text.splitlines():
        _number, controllers, path = line.split(":", 2)
        paths[controllers] = path
    return paths


def cgroups_named(name, depth=4):
    """Directories called NAME in the host's cgroup hierarchies, at most
    DEPTH levels down (runc's default cgroupsPath is /ID below runc's own
    cgroup)."""
    found = []
    for _root, mount_point in set(cgroup_mounts().values()):
        base = len(Path(mount_point).parts)
        for directory, subdirectories, _files in os.walk(mount_point):
            if len(Path(directory).parts) - base >= depth:
                subdirectories.clear()
            if Path(directory).name == name:
                found.append(Path(directory))
    return found


# ---- containers ----------------------------------------------------------


class Container:
    """One bundle and one `runc run` in the foreground (so that its exit code
    is the container's), stdout and stderr in files."""

    def __init__(self, runc_root, bundle, container_id):
        self.runc_root = runc_root
        self.bundle = bundle
        self.rootfs = bundle / "rootfs"
        self.id = container_id
        self.stdout_path = bundle / "stdout.txt"
        self.stderr_path = bundle / "stderr.txt"
        self.process = None
        self.exit_code = None
        self.host_pid = None
        self.pid_namespace = None
        self.cgroup_directories = []

    # -- the spec --

    @property
    def spec_path(self):
        return self.bundle / "config.json"

    def spec(self):
        return json.loads(self.spec_path.read_text())

    def edit_spec(self, change):
        spec = self.spec()
        change(spec)
        self.spec_path.write_text(json.dumps(spec, indent=2))

    # -- runc --

    def runc(self, *arguments, check=True, timeout=TIMEOUT):
        return run(["runc", "--root", self.runc_root, *arguments], check=check, timeout=timeout)

    def start(self, *args):
        """`runc run` with process.args = ARGS; returns once corral runs and
        the host pid of the container's init is known, or once the
        container exited (host_pid stays None: a short-lived one)."""
        self.edit_spec(lambda spec: spec["process"].__setitem__("args", list(args)))
        with open(self.stdout_path, "wb") as stdout, open(self.stderr_path, "wb") as stderr:
            self.process = subprocess.Popen(
                ["runc", "--root", str(self.runc_root), "run", "--bundle", str(self.bundle),
                 self.id],
                stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
            )
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
        state = self.runc("state", self.id, check=False)
        if state.returncode != 0:
            return None
        state = json.loads(state.stdout)
        return state["pid"] if state["status"] == "running" and state["pid"] else None

    def _remember_cgroups(self):
        """The host directories of the container's cgroups (runc names them
        after the id), to check at teardown that they are gone."""
        mounts = cgroup_mounts()
        for key, path in cgroup_paths(self.host_pid).items():
            parts = path.split("/")
            if self.id in parts:
                container_path = "/".join(parts[: parts.index(self.id) + 1])
                directory = cgroup_directory(mounts, key, container_path)
                if directory:
                    self.cgroup_directories.append(directory)

    def wait(self, timeout=TIMEOUT):
        """The exit code of `runc run`, i.e. of corral."""
        try:
            self.exit_code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the container did not exit within {timeout}s\n{self}")
        return self.exit_code

    def kill(self, signal_name):
        self.runc("kill", self.id, signal_name)

    def exec(self, *command, check=True):
        return self.runc("exec", self.id, *command, check=check)

    # -- what it printed --

    def stdout(self):
        return self.stdout_path.read_text(errors="replace")

    def stderr(self):
        return self.stderr_path.read_text(errors="replace")

    def output(self, task):
        """What TASK ("group/task") printed, line by line."""
        prefix = f"{task} | "
        return [line[len(prefix):] for line in self.stdout().splitlines()
                if line.startswith(prefix)]

    def log(self):
        """corral's own messages (stderr), without the "corral: " prefix."""
        return [line.removeprefix("corral: ") for line in self.stderr().splitlines()
                if line.startswith("corral: ")]

    def wait_for_output(self, task, line):
        return wait_for(lambda: line in self.output(task),
                        what=lambda: f"{task} | {line}\n{self}")

    def log_index(self, start):
        """Index of corral's first log line that starts with START, or None."""
        for index, line in enumerate(self.log()):
            if line.startswith(start):
                return index
        return None

    def wait_for_log(self, start):
        """Waits for a line of corral's log that starts with START."""
        return wait_for(lambda: self.log_index(start) is not None,
                        what=lambda: f"corral: {start}...\n{self}")

    def assert_log_in_order(self, *starts):
        """corral's log has a line starting with each of STARTS, the first
        of each in this order."""
        indexes = [self.log_index(start) for start in starts]
        missing = [start for start, index in zip(starts, indexes) if index is None]
        assert not missing, f"not in corral's log: {missing}\n{self}"
        assert indexes == sorted(indexes), (
            "corral's log out of order: "
            + ", ".join(f"{start!r} at {index}" for start, index in zip(starts, indexes))
            + f"\n{self}")

    # -- its processes, from the host --

    def processes(self):
        """Host processes of the container's pid namespace, zombies
        included (a zombie has no /proc/PID/ns left: it counts when its
        parent is one of the container's processes)."""
        every = all_processes()
        members = {p.pid: p for p in every if p.pid_namespace == self.pid_namespace}
        grew = True
        while grew:
            grew = False
            for p in every:
                if p.pid not in members and p.pid_namespace is None and p.ppid in members:
                    members[p.pid] = p
                    grew = True
        return sorted(members.values(), key=lambda p: p.pid)

    def host_pid_of(self, container_pid):
        for p in self.processes():
            if p.nspids[-1] == container_pid:
                return p
        return None

    def __repr__(self):
        return (f"<container {self.id}, bundle {self.bundle}, exit code {self.exit_code}>\n"
                f"--- stdout ---\n{self.stdout()}--- stderr ---\n{self.stderr()}")

    # -- teardown --

    def delete(self):
        """Deletes the container whatever its state; returns what is left."""
        self.runc("delete", "--force", self.id, check=False)
        if self.process and self.process.poll() is None:
            try:
                self.process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        leftovers = []
        listed = self.runc("list", "--format", "json", check=False).stdout.strip()
        if listed and listed != "null" and any(c["id"] == self.id for c in json.loads(listed)):
            leftovers.append(f"runc still lists {self.id}")
        if self.pid_namespace:
            # The kernel tears the namespace down just after its init died.
            deadline = time.monotonic() + 5
            while (left := self.processes()) and time.monotonic() < deadline:
                time.sleep(0.02)
            leftovers += [f"process {p}" for p in left]
        leftovers += [f"cgroup {d}" for d in self.cgroup_directories if d.exists()]
        leftovers += [f"cgroup {d}" for d in cgroups_named(self.id)
                      if d not in self.cgroup_directories]
        mountinfo = Path("/proc/self/mountinfo").read_text()
        leftovers += [f"mount {line}" for line in mountinfo.splitlines()
                      if str(self.bundle) in line]
        return leftovers


@pytest.fixture(scope="session")
def static_corral():
    """Path of the static corral: CORRAL_STATIC_BIN, or built by
    scripts/build-static.sh into build-static/."""
    binary = os.environ.get("CORRAL_STATIC_BIN")
    if not binary:
        built = run([REPO_ROOT / "scripts" / "build-static.sh", REPO_ROOT / "build-static"])
        binary = built.stdout.strip().splitlines()[-1]
    binary = Path(binary)
    if not binary.is_absolute():
        binary = REPO_ROOT / binary
    if not os.access(binary, os.X_OK):
        pytest.fail(f"no static corral at {binary}: run scripts/build-static.sh, "
                    "or set CORRAL_STATIC_BIN")
    return binary


@pytest.fixture(scope="session")
def rootfs_template(static_corral, tmp_path_factory):
    for tool in ("runc", "busybox"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is missing: run scripts/install-deps.sh (runc, busybox-static)")
    root = tmp_path_factory.mktemp("rootfs-template") / "rootfs"
    run([HERE / "make-rootfs.sh", static_corral, root])
    return root


@pytest.fixture(scope="session")
def runc_root(tmp_path_factory):
    return tmp_path_factory.mktemp("runc-state")


@pytest.fixture
def make_rootfs(rootfs_template, tmp_path):
    """make_rootfs(PATH) -> a fresh copy of the template at PATH."""

    def copy(path):
        run(["cp", "-a", rootfs_template, path])
        return path

    return copy


@pytest.fixture
def container(make_rootfs, runc_root, tmp_path, request):
    """container(cgroupns=False, readonly_root=False) -> a Container whose
    bundle has runc's default spec with terminal false, and a writable
    rootfs unless readonly_root (Docker's and Kubernetes' default; runc's
    spec says read-only). cgroupns: a cgroup namespace of its own and
    /sys/fs/cgroup mounted read-write."""
    containers = []

    def make(cgroupns=False, readonly_root=False):
        bundle = tmp_path / f"bundle{len(containers)}"
        bundle.mkdir()
        make_rootfs(bundle / "rootfs")
        run(["runc", "spec", "--bundle", bundle])
        # Unique per run and per container; the test's name helps a human
        # who finds one in `runc list`.
        name = request.node.name.removeprefix("test_")[:24].strip("_-")
        made = Container(runc_root, bundle, f"corral-{name}-{uuid.uuid4().hex[:8]}")

        def change(spec):
            spec["process"]["terminal"] = False
            spec["root"]["readonly"] = readonly_root
            if cgroupns:
                spec["linux"]["namespaces"].append({"type": "cgroup"})
                for mount in spec["mounts"]:
                    if mount["destination"] == "/sys/fs/cgroup":
                        mount["options"] = [o for o in mount["options"] if o != "ro"] + ["rw"]
                # runc mounts only the v1 hierarchies of a hybrid host; the
                # v2 tree (the container's own part of it, thanks to the
                # namespace) is what corral's per-task cgroups need.
                if os.path.exists("/sys/fs/cgroup/unified/cgroup.procs"):
                    spec["mounts"].append({"destination": "/sys/fs/cgroup/unified",
                                           "type": "cgroup2", "source": "cgroup2",
                                           "options": ["nosuid", "noexec", "nodev", "rw"]})

        made.edit_spec(change)
        containers.append(made)
        return made

    yield make

    leftovers = []
    for made in containers:
        leftovers += made.delete()
    if leftovers:
        pytest.fail("left behind after the test:\n" + "\n".join(leftovers))
