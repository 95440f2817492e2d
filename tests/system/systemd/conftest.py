"""A real systemd for corral to run under: a Debian 12 tree (make-tree.sh,
cached outside the clone) booted by `systemd-nspawn --boot`, systemd 252
as the container's PID 1, with

- the corral under test bind-mounted read-only at /usr/local/bin/corral,
- examples/systemd/corral.service (the unit docs/systemd.md gives) as
  /etc/systemd/system/corral.service, read-only,
- a directory of the session's as /etc/corral (tests write corral.yaml
  there from the host), and cases/ as /cases, read-only.

The tree is never written: `--volatile=overlay` puts a tmpfs over it. The
container has the unified cgroup hierarchy (SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1,
Debian 12's default) whatever the host has; on a hybrid host (v1
controllers, cgroup2 at /sys/fs/cgroup/unified) nspawn is put in cgroups of
its own in both the v2 hierarchy and the name=systemd one first, so that
its `payload` and `supervisor` cgroups do not land in the root and two
sessions do not meet. Commands run inside with `nsenter --all` into the
container's init: no machined, no host systemd needed (the host's PID 1
need not be systemd).

One machine for the session; each test gets it with corral.service
stopped, reset, without drop-ins, and a journal cursor from which its
lines are read. A test fails if corral.service leaves a process or a
cgroup behind, and the session if the machine does.
"""

import json
import os
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
UNIT = ROOT / "examples" / "systemd" / "corral.service"
CACHE = Path(os.environ.get("CORRAL_TEST_CACHE", "/var/cache/corral-tests"))
TIMEOUT = 60  # generous: the machine is shared; nothing here is a timing test
SERVICE_CGROUP = "/sys/fs/cgroup/system.slice/corral.service"
DROP_INS = "/run/systemd/system/corral.service.d"


def corral_binary():
    return Path(os.environ.get("CORRAL_BIN", ROOT / "build" / "corral")).resolve()


def wait_for(condition, what, timeout=TIMEOUT, interval=0.05):
    """Polls CONDITION until it returns something true, which is returned;
    fails the test naming WHAT (a string or a callable giving one) at the
    timeout."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            described = what() if callable(what) else what
            pytest.fail(f"timed out after {timeout}s waiting for {described}")
        time.sleep(interval)


def host_cgroup_roots():
    """The host's hierarchies nspawn needs a cgroup of its own in: the v2
    one, and on a hybrid host the name=systemd one too."""
    if Path("/sys/fs/cgroup/cgroup.controllers").exists():
        return [Path("/sys/fs/cgroup")]
    unified = Path("/sys/fs/cgroup/unified")
    if not (unified / "cgroup.controllers").exists():
        pytest.fail("the host has no cgroup v2 hierarchy (neither /sys/fs/cgroup nor "
                    "/sys/fs/cgroup/unified): systemd-nspawn cannot give the container one")
    roots = [unified]
    if Path("/sys/fs/cgroup/systemd/cgroup.procs").exists():
        roots.append(Path("/sys/fs/cgroup/systemd"))
    return roots


class Machine:
    """The booted container, seen from the host."""

    def __init__(self, tree, directory):
        self.tree = tree
        self.directory = directory
        self.name = f"corral-systemd-{uuid.uuid4().hex[:8]}"
        self.etc = directory / "etc-corral"
        self.etc.mkdir()
        self.log_path = directory / "nspawn.log"
        self.cgroups = [root / self.name for root in host_cgroup_roots()]
        self.process = None
        self.leader = None
        self.boot_seconds = None
        self.cursor = None
        self.state = None

    # ---- boot and halt ---------------------------------------------------

    def boot(self):
        for cgroup in self.cgroups:
            cgroup.mkdir()

        def join_cgroups():
            for cgroup in self.cgroups:
                (cgroup / "cgroup.procs").write_text(str(os.getpid()))

        command = [
            "systemd-nspawn", "--quiet", "--directory", str(self.tree), "--volatile=overlay",
            "--boot", "--register=no", "--keep-unit", "--private-network",
            "--console=pipe", "--machine", self.name,
            f"--bind-ro={corral_binary()}:/usr/local/bin/corral",
            f"--bind-ro={UNIT}:/etc/systemd/system/corral.service",
            f"--bind={self.etc}:/etc/corral",
            f"--bind-ro={HERE / 'cases'}:/cases",
        ]
        environment = dict(os.environ, SYSTEMD_NSPAWN_UNIFIED_HIERARCHY="1")
        started = time.monotonic()
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                            stderr=subprocess.STDOUT, env=environment,
                                            preexec_fn=join_cgroups)
        self.leader = wait_for(self._leader, what=lambda: f"the container's init\n{self.log()}")
        if self.leader == "exited":
            pytest.fail(f"systemd-nspawn exited with {self.process.returncode}\n{self.log()}")
        state = wait_for(self._system_state, what=lambda: f"systemd to boot (it says "
                         f"{self.state!r})\n{self.log()}")
        self.boot_seconds = time.monotonic() - started
        print(f"\nsystemd booted in {self.boot_seconds:.2f}s ({state}): "
              f"{self.run('systemd-analyze', check=False).stdout.strip()}")
        if state != "running":
            failed = self.run("systemctl", "--failed", "--no-pager", check=False).stdout
            pytest.fail(f"the machine booted {state}:\n{failed}")

    def _leader(self):
        """The container's init: the child of nspawn that runs systemd
        (nspawn forks helpers first, which exit)."""
        if self.process.poll() is not None:
            return "exited"
        try:
            pid = self.process.pid
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text()
        except FileNotFoundError:
            return None
        for child in children.split():
            try:
                if Path(f"/proc/{child}/comm").read_text().strip() == "systemd":
                    return int(child)
            except FileNotFoundError:
                continue
        return None

    def _system_state(self):
        """`systemctl is-system-running`: None while it is starting (or its
        bus is not up yet), else the state it settled in."""
        if self.process.poll() is not None:
            pytest.fail(f"systemd-nspawn exited with {self.process.returncode}\n{self.log()}")
        self.state = self.run("systemctl", "is-system-running", check=False).stdout.strip()
        return self.state if self.state in ("running", "degraded") else None

    def halt(self):
        """Halts the machine (SIGTERM to nspawn: a clean poweroff inside);
        returns what is left behind on the host."""
        leftovers = []
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                leftovers.append("the machine did not halt on SIGTERM")
                self.process.kill()
                self.process.wait()
        for cgroup in self.cgroups:
            if not cgroup.exists():
                continue
            for directory in sorted((p for p in cgroup.rglob("*") if p.is_dir()),
                                    key=lambda p: len(p.parts), reverse=True) + [cgroup]:
                try:
                    directory.rmdir()
                except OSError as error:
                    leftovers.append(f"cgroup {directory}: {error.strerror}")
        mountinfo = Path("/proc/self/mountinfo").read_text()
        leftovers += [f"mount {line}" for line in mountinfo.splitlines()
                      if str(self.tree) in line or str(self.directory) in line]
        return leftovers

    def log(self):
        return self.log_path.read_text(errors="replace")[-4000:]

    # ---- inside ----------------------------------------------------------

    def run(self, *command, check=True, timeout=TIMEOUT, input=None):
        """COMMAND inside the machine, in every namespace of its init."""
        result = subprocess.run(["nsenter", "--target", str(self.leader), "--all", *command],
                                capture_output=True, text=True, timeout=timeout, input=input)
        if check and result.returncode != 0:
            pytest.fail(f"{' '.join(command)} exited with {result.returncode} in the machine\n"
                        f"{result.stdout}{result.stderr}")
        return result

    def popen(self, *command):
        return subprocess.Popen(["nsenter", "--target", str(self.leader), "--all", *command],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def systemctl(self, *arguments, check=True):
        return self.run("systemctl", "--no-pager", *arguments, check=check)

    def show(self, unit="corral", *properties):
        """`systemctl show UNIT -p ...` as a dict of strings."""
        text = self.systemctl("show", unit, *(f"--property={p}" for p in properties)).stdout
        return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def prop(self, name, unit="corral"):
        return self.show(unit, name)[name]

    def write_file(self, path, text):
        """Writes PATH inside the machine (its tmpfs overlay)."""
        self.run("sh", "-c", 'mkdir -p "$(dirname "$1")" && cat > "$1"', "sh", path, input=text)

    def drop_in(self, text, name="test.conf", unit="corral.service"):
        """A runtime drop-in for UNIT (gone with the test), then daemon-reload."""
        self.write_file(f"/run/systemd/system/{unit}.d/{name}", text)
        self.systemctl("daemon-reload")

    # ---- corral.service ---------------------------------------------------

    def use_config(self, case=None, text=None):
        """/etc/corral/corral.yaml: cases/CASE.yaml, or TEXT."""
        if case is not None:
            text = (HERE / "cases" / f"{case}.yaml").read_text()
        (self.etc / "corral.yaml").write_text(text)

    def mark_journal(self):
        """Later journal() calls read only what comes after now."""
        self.run("journalctl", "--sync")
        text = self.run("journalctl", "--no-pager", "-n", "1", "--show-cursor", "-o", "cat").stdout
        cursors = [line for line in text.splitlines() if line.startswith("-- cursor: ")]
        self.cursor = cursors[-1].removeprefix("-- cursor: ") if cursors else None

    def journal(self, unit="corral", output="cat"):
        """The unit's journal lines since the test began."""
        self.run("journalctl", "--sync")
        after = [f"--after-cursor={self.cursor}"] if self.cursor else []
        return self.run("journalctl", "--no-pager", "-u", unit, "-o", output,
                        *after).stdout.splitlines()

    def output(self, task):
        """What TASK ("group/task") printed, line by line, as the journal
        has it (corral writes `group/task | line` to its stdout)."""
        prefix = f"{task} | "
        return [line[len(prefix):] for line in self.journal() if line.startswith(prefix)]

    def corral_log(self):
        """corral's own messages in the journal, without `corral: `."""
        return [line.removeprefix("corral: ") for line in self.journal()
                if line.startswith("corral: ")]

    def wait_for_journal(self, text, unit="corral"):
        return wait_for(lambda: any(text in line for line in self.journal(unit)),
                        what=lambda: f"{text!r} in the journal of {unit}\n" +
                        "\n".join(self.journal(unit)[-40:]))

    def status(self):
        """`corral status --json` inside, from the default control socket."""
        return json.loads(self.run("corral", "status", "--json").stdout)

    def status_if_up(self):
        """`corral status --json`, or None while corral does not answer yet
        (systemd shows MainPID as soon as it forked, before corral listens)."""
        result = self.run("corral", "status", "--json", check=False)
        return json.loads(result.stdout) if result.returncode == 0 else None

    def task(self, name):
        """The status of one task ("group/task"), or None."""
        group, task = name.split("/")
        for g in self.status()["groups"]:
            if g["name"] == group:
                for t in g["tasks"]:
                    if t["name"] == task:
                        return t
        return None

    def service_processes(self):
        """Pids in corral.service's cgroup tree, seen inside."""
        text = self.run("sh", "-c", f'[ -d {SERVICE_CGROUP} ] && find {SERVICE_CGROUP} '
                        '-name cgroup.procs -exec cat {} + || true').stdout
        return sorted(int(p) for p in text.split())

    def process_state(self, pid):
        """(command line, parent pid) of PID inside, or None once it is gone."""
        result = self.run("sh", "-c", f"tr '\\0' ' ' < /proc/{pid}/cmdline && echo && "
                          f"cut -d' ' -f4 /proc/{pid}/stat", check=False)
        if result.returncode != 0:
            return None
        command, parent = result.stdout.splitlines()[:2]
        return command.strip(), int(parent)


@pytest.fixture(scope="session")
def machine(tmp_path_factory):
    """The session's booted machine."""
    if os.geteuid() != 0:
        pytest.fail("the systemd tests boot a container with systemd-nspawn: run them as root")
    missing = [tool for tool in ("systemd-nspawn", "debootstrap", "nsenter")
               if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"missing: {', '.join(missing)}: run scripts/install-deps.sh "
                    "(systemd-container, debootstrap)")
    if not corral_binary().exists():
        pytest.fail(f"{corral_binary()}: no such binary: build corral or set CORRAL_BIN")
    made = subprocess.run([HERE / "make-tree.sh", CACHE], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.fail(f"make-tree.sh failed:\n{made.stderr}")
    box = Machine(Path(made.stdout.strip()), tmp_path_factory.mktemp("systemd"))
    try:
        box.boot()
        yield box
    finally:
        leftovers = box.halt()
        if leftovers:
            pytest.fail("left behind by the session:\n" + "\n".join(leftovers))


@pytest.fixture
def systemd(machine):
    """The machine, corral.service stopped and reset, the journal marked;
    afterwards corral.service is stopped again and must leave nothing."""
    machine.mark_journal()
    yield machine
    machine.systemctl("stop", "corral", check=False)
    machine.systemctl("reset-failed", "corral", check=False)
    machine.run("rm", "-rf", DROP_INS, check=False)
    machine.systemctl("daemon-reload")
    for path in machine.etc.iterdir():
        path.unlink()
    deadline = time.monotonic() + TIMEOUT
    while (left := machine.service_processes()) and time.monotonic() < deadline:
        time.sleep(0.05)
    if left:
        described = [f"{pid}: {machine.process_state(pid)}" for pid in left]
        pytest.fail("corral.service left processes after its stop:\n" + "\n".join(described))
