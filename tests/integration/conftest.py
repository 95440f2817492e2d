"""Fixtures and helpers for corral's integration tests.

The tests run the real binary (CORRAL_BIN, default build-dev/corral) as root
on the host, on configs written into each test's tmp_path. Assertions come
from inside the tasks (markers and timestamps they write into tmp_path, what
they print), from corral's event log (--events, JSON lines) and from outside
(/proc).

Configs are written as JSON, which is YAML too; tests that need exact lines
and columns (diagnostics) write YAML text.

Every corral started here gets CORRAL_TEST_ID in its environment; its tasks
inherit it, so whatever a test leaves behind is found in /proc and killed at
teardown (and "no process left" can be asserted).

With a sanitizer build (CORRAL_BIN=build-asan/corral), any sanitizer report
in corral's stderr or in task output fails the test; stderr is otherwise
never required to be empty.
"""

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

sys.dont_write_bytecode = True

REPO_ROOT = Path(__file__).resolve().parents[2]
# Generous: the suite also runs under ASan/UBSan on loaded machines. A test
# that needs this long has hung.
RUN_TIMEOUT = float(os.environ.get("CORRAL_TEST_TIMEOUT", "30"))
# A static binary, so it runs in any root file system.
BUSYBOX = Path("/bin/busybox")


def corral_binary_path():
    binary = Path(os.environ.get("CORRAL_BIN", "build-dev/corral"))
    return binary if binary.is_absolute() else REPO_ROOT / binary


# What a sanitizer prints when it finds something (in corral's stderr, or in
# a task's output when it fires in a child before exec).
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def sanitizer_report(*texts):
    for text in texts:
        for line in text.splitlines():
            if any(marker in line for marker in SANITIZER_REPORTS):
                return line
    return None


def fail_on_sanitizer_report(result):
    line = sanitizer_report(result.stderr, result.stdout)
    if line:
        pytest.fail(f"sanitizer report: {line}\n{result!r}")


# ---- small helpers -------------------------------------------------------


def wait_for(predicate, timeout=10.0, interval=0.02, what=None):
    """Polls predicate() until it returns something true; returns it.
    Fails the test after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            what = what() if callable(what) else what
            pytest.fail(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(interval)


def busybox_root(root, applets, directories=("bin", "etc")):
    """A root file system at `root` from busybox-static: `directories`
    made (bin among them), busybox in /bin and each of `applets` a link to
    it."""
    if not BUSYBOX.exists():
        pytest.fail("busybox-static is needed (scripts/install-deps.sh)")
    for directory in directories:
        (root / directory).mkdir(parents=True)
    shutil.copy(BUSYBOX, root / "bin" / "busybox")
    for applet in applets:
        (root / "bin" / applet).symlink_to("busybox")
    return root


def sh(script, *args):
    """A task command: /bin/sh -c SCRIPT [ARG0 ...]. An extra first arg
    becomes $0, which shows in /proc/PID/cmdline (a tag to find it by)."""
    return ["/bin/sh", "-c", script, *args]


def mark(path, name):
    """Shell that appends "NAME <realtime seconds>" to the file `path`."""
    return f'echo "{name} $(date +%s.%N)" >> {path}'


def read_marks(path):
    """[(name, time)] in file order; [] when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return []
    marks = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 2:
            marks.append((parts[0], float(parts[1])))
    return marks


def marks_by_name(path):
    """{name: time of its first mark}."""
    result = {}
    for name, when in read_marks(path):
        result.setdefault(name, when)
    return result


def count_lines(path):
    path = Path(path)
    return len(path.read_text().splitlines()) if path.exists() else 0


def read_pids(path):
    path = Path(path)
    if not path.exists():
        return []
    return [int(word) for word in path.read_text().split()]


def free_port_block(count):
    """The first of `count` consecutive TCP ports on 127.0.0.1 that are
    free now (instances that listen on BASE + CORRAL_INSTANCE).

    Taken outside the kernel's ephemeral range: there every client
    connection of the machine takes a port, and leaves it in TIME_WAIT for
    a minute after, so that a flood of connections (a benchmark beside the
    tests, say) left no block of 13 free there (a CI run failed so)."""
    low, high = (int(word) for word in
                 Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    ranges = [(first, last) for first, last in ((1024, low - 1), (high + 1, 65535))
              if last - first + 1 >= count]
    chooser = random.Random()
    for _ in range(200):
        first, last = chooser.choice(ranges)
        base = chooser.randint(first, last - count + 1)
        taken = []
        try:
            for port in range(base, base + count):
                held = socket.socket()
                taken.append(held)
                held.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for held in taken:
                held.close()
    raise AssertionError(f"no {count} consecutive free ports")


def proc_stat(pid):
    """(state, ppid) of a process, or None when it does not exist (any
    more). A zombie still has an entry, in state Z."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # The command name is in parentheses and may hold spaces.
    fields = text[text.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])


def fd_targets(pid):
    """What process `pid`'s fds point at (readlink of /proc/PID/fd/N): "pipe:[..]",
    "anon_inode:[pidfd]", "net:[..]", paths. An fd closed meanwhile is skipped."""
    targets = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            targets.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except FileNotFoundError:
            continue
    return targets


def corral_fds(pid):
    """corral's fd numbers, for leak checks, but its tasks' records: a chunk
    of 32 tasks' counts taken at a task's first count (an exit, a probe
    failure) and kept for the run, so that the first restart adds one that
    is no leak (supervisor/tasks/task_records.c)."""
    numbers = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("/memfd:corral-task-records"):
                continue
        except FileNotFoundError:
            pass
        numbers.append(fd)
    return sorted(numbers, key=int)


def pid_exists(pid):
    return proc_stat(pid) is not None


def pid_alive(pid):
    """Running (not a zombie, not gone)."""
    stat = proc_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")


def children_of(pid):
    """[(child pid, state)] of every process whose parent is `pid`."""
    result = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        stat = proc_stat(entry.name)
        if stat and stat[1] == pid:
            result.append((int(entry.name), stat[0]))
    return result


def host_mountinfo():
    """The mount table of the tests' (the host's) namespace, to compare
    before and after a run: a task's mount must not reach it."""
    return Path("/proc/self/mountinfo").read_text()


def v2_cgroup(pid):
    """The directory of process `pid`'s cgroup in the v2 hierarchy
    (/sys/fs/cgroup/unified on a hybrid host, /sys/fs/cgroup on a v2-only
    one); for corral, its `supervisor` leaf, beside its groups' cgroups."""
    own = Path(f"/proc/{pid}/cgroup").read_text().splitlines()[-1].split("::")[1]
    unified = Path("/sys/fs/cgroup/unified")
    mount = unified if unified.is_dir() else Path("/sys/fs/cgroup")
    return mount / own.lstrip("/")


def processes_with_env(name, value):
    """Pids of live processes whose environment holds NAME=VALUE."""
    needle = f"{name}={value}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and pid_alive(entry.name):
            found.append(int(entry.name))
    return found


# ---- the event log -------------------------------------------------------


class Events(list):
    """The JSON lines of `corral run --events FILE`, in order."""

    @classmethod
    def load(cls, path):
        path = Path(path)
        events = cls()
        if path.exists():
            for line in path.read_text().splitlines():
                if line.strip():
                    events.append(json.loads(line))
        return events

    def of_task(self, task, event=None, group=None):
        return [
            e
            for e in self
            if e.get("task") == task
            and (event is None or e["event"] == event)
            and (group is None or e["group"] == group)
        ]

    def of_group(self, group, event=None):
        return [
            e
            for e in self
            if "task" not in e and e.get("group") == group and (event is None or e["event"] == event)
        ]

    def lifecycle(self, group):
        """[(from, to)] of the group's lifecycle events, in order."""
        transitions = []
        for e in self.of_group(group, "lifecycle"):
            words = e["message"].split()
            assert words[0] == "lifecycle" and words[2] == "->", e
            transitions.append((words[1], words[3]))
        return transitions

    def index(self, predicate):
        for i, e in enumerate(self):
            if predicate(e):
                return i
        raise AssertionError("no such event")

    def task_index(self, task, event, group=None):
        return self.index(
            lambda e: e.get("task") == task
            and e["event"] == event
            and (group is None or e["group"] == group)
        )

    def kinds(self, task):
        return [e["event"] for e in self.of_task(task)]


# ---- small file systems ---------------------------------------------------


@pytest.fixture
def small_tmpfs(tmp_path):
    """small_tmpfs("size=16k,mode=0755") mounts a tmpfs of those options in
    tmp_path and returns its path (a full or read-only disk for a log
    directory); unmounted at teardown, lazily, so that a file corral still
    holds open never leaves the mount behind."""
    mounts = []

    def make(options):
        path = tmp_path / f"fs{len(mounts)}"
        path.mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)
        mounts.append(path)
        return path
    yield make
    for path in mounts:
        subprocess.run(["umount", "--lazy", str(path)], check=False)


# ---- a busybox root file system -----------------------------------------

# For test_hook_mounts.py and test_inspect.py; test_rootfs.py has a rootfs
# fixture of its own, which overrides this one there.
APPLETS = ["sh", "cat", "ls", "touch", "echo", "grep", "wc", "mkdir", "head", "tr", "mknod",
           "sleep", "stat", "env"]


@pytest.fixture
def rootfs(tmp_path):
    root = busybox_root(tmp_path / "rootfs", APPLETS)
    # Leads to the host's /etc if followed outside the rootfs.
    (root / "evil").symlink_to("/etc")
    return root


# ---- the control socket --------------------------------------------------


class ControlClient:
    """A raw client of corral's control socket (docs/control-protocol.md):
    requests are JSON objects sent as one line each, replies JSON lines.
    Every read fails the test after `timeout` seconds."""

    def __init__(self, path, timeout=RUN_TIMEOUT):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(self.path)
        except BaseException:
            self.sock.close()
            raise
        self.buffer = b""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, request):
        """Sends a dict as one JSON line."""
        self.send_raw(json.dumps(request).encode() + b"\n")

    def read_line(self):
        """The next line (bytes, without its newline), or None at EOF."""
        while b"\n" not in self.buffer:
            try:
                chunk = self.sock.recv(65536)
            except socket.timeout:
                pytest.fail(f"no reply line from {self.path} within {self.sock.gettimeout()}s")
            if not chunk:
                if self.buffer:
                    line, self.buffer = self.buffer, b""
                    return line
                return None
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def reply(self):
        """The next reply line, parsed; fails the test at EOF."""
        line = self.read_line()
        if line is None:
            pytest.fail(f"{self.path}: connection closed instead of a reply")
        return json.loads(line)

    def request(self, command, version=1, **fields):
        """Sends {"version": 1, "command": COMMAND, **fields}; returns the
        reply."""
        self.send({"version": version, "command": command, **fields})
        return self.reply()

    def read_until_eof(self):
        """Every remaining line, until the server closes the connection."""
        lines = []
        while (line := self.read_line()) is not None:
            lines.append(line)
        return lines


# ---- running corral ------------------------------------------------------


class Result:
    def __init__(self, returncode, stdout, stderr, events, elapsed, config_path):
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.events = events
        self.elapsed = elapsed
        self.config_path = config_path

    def stdout_lines(self):
        return self.stdout.splitlines()

    def __repr__(self):
        return (
            f"<corral exit {self.returncode} after {self.elapsed:.2f}s\n"
            f"--- stdout (tail)\n{self.stdout[-3000:]}\n--- stderr (tail)\n{self.stderr[-6000:]}>"
        )


class Running:
    """A corral started in the background (its own session), stdout and
    stderr into files, so that it never blocks on them."""

    def __init__(self, popen, directory, events_path, config_path, started):
        self.popen = popen
        self.pid = popen.pid
        self.directory = directory
        self.events_path = events_path
        self.config_path = config_path
        self.started = started

    def send(self, signal_number):
        self.popen.send_signal(signal_number)

    def alive(self):
        return self.popen.poll() is None

    def events(self):
        return Events.load(self.events_path) if self.events_path else Events()

    def stderr_text(self):
        return (self.directory / "corral.stderr").read_text(errors="replace")

    def wait(self, timeout=RUN_TIMEOUT):
        try:
            self.popen.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
            pytest.fail(f"corral did not exit within {timeout}s:\n{self.result()!r}")
        result = self.result()
        fail_on_sanitizer_report(result)
        return result

    def result(self):
        return Result(
            self.popen.returncode,
            (self.directory / "corral.stdout").read_text(errors="replace"),
            (self.directory / "corral.stderr").read_text(errors="replace"),
            self.events(),
            time.monotonic() - self.started,
            self.config_path,
        )


class Corral:
    def __init__(self, binary, tmp_path):
        self.binary = binary
        self.dir = tmp_path
        self.test_id = uuid.uuid4().hex
        self.started = []
        self._configs = 0
        # The control socket of every corral (and CLI) this test starts.
        self.socket_path = tmp_path / "control.sock"

    def env(self, extra=None):
        env = dict(os.environ)
        # A test runner under systemd has these: corral would talk to its
        # unit (test_parent_notify.py gives its own).
        for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
            env.pop(name, None)
        env["CORRAL_TEST_ID"] = self.test_id
        # Each test its own control socket: corrals of other tests (or a
        # developer's) never collide on the default path.
        env["CORRAL_SOCKET"] = str(self.socket_path)
        # For a sanitizer build, unless the caller set its own options.
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1:halt_on_error=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
        if extra:
            env.update(extra)
        return env

    def config(self, config, name=None):
        """Writes a config (a dict, dumped as JSON, or YAML text) and
        returns its path."""
        if name is None:
            self._configs += 1
            name = f"corral{self._configs}.yaml"
        path = self.dir / name
        text = config if isinstance(config, str) else json.dumps(config, indent=2)
        path.write_text(text)
        return path

    def _command(self, config_path, events_path, wrapper, run_args=()):
        command = list(wrapper or []) + [str(self.binary), "run", *run_args]
        if events_path:
            command += ["--events", str(events_path)]
        return command + [str(config_path)]

    def start(self, config, events=True, env=None, wrapper=None, stdin=subprocess.DEVNULL,
              run_args=()):
        """Starts corral in the background (`run_args`: options of `corral
        run`, such as -v); returns a Running."""
        config_path = config if isinstance(config, Path) else self.config(config)
        events_path = self.dir / "events.jsonl" if events else None
        stdout = open(self.dir / "corral.stdout", "wb")
        stderr = open(self.dir / "corral.stderr", "wb")
        try:
            popen = subprocess.Popen(
                self._command(config_path, events_path, wrapper, run_args),
                stdin=stdin,
                stdout=stdout,
                stderr=stderr,
                cwd=self.dir,
                env=self.env(env),
                start_new_session=True,
            )
        finally:
            stdout.close()
            stderr.close()
        self.started.append(popen)
        return Running(popen, self.dir, events_path, config_path, time.monotonic())

    def run(self, config, timeout=RUN_TIMEOUT, **options):
        """Runs corral to its end (failing the test after `timeout`)."""
        return self.start(config, **options).wait(timeout)

    def run_piped(self, config, timeout=RUN_TIMEOUT, events=True, env=None):
        """Runs corral with stdout and stderr as pipes (read as fast as
        they come)."""
        config_path = config if isinstance(config, Path) else self.config(config)
        events_path = self.dir / "events.jsonl" if events else None
        started = time.monotonic()
        popen = subprocess.Popen(
            self._command(config_path, events_path, None),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.dir,
            env=self.env(env),
            start_new_session=True,
        )
        self.started.append(popen)
        try:
            stdout, stderr = popen.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            popen.kill()
            stdout, stderr = popen.communicate()
            pytest.fail(f"corral did not exit within {timeout}s:\n{stderr.decode()[-4000:]}")
        result = Result(
            popen.returncode,
            stdout.decode(errors="replace"),
            stderr.decode(errors="replace"),
            Events.load(events_path) if events_path else Events(),
            time.monotonic() - started,
            config_path,
        )
        fail_on_sanitizer_report(result)
        return result

    def check(self, config):
        config_path = config if isinstance(config, Path) else self.config(config)
        result = subprocess.run(
            [str(self.binary), "check", str(config_path)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            cwd=self.dir,
            env=self.env(),
            timeout=RUN_TIMEOUT,
        )
        line = sanitizer_report(result.stderr, result.stdout)
        if line:
            pytest.fail(f"sanitizer report: {line}\n{result.stderr}")
        return result

    # ---- the control socket and the client commands ----

    def control(self, timeout=RUN_TIMEOUT, path=None):
        """A raw protocol connection to this test's control socket."""
        return ControlClient(path or self.socket_path, timeout)

    def request(self, command, path=None, **fields):
        """One request on a fresh connection; returns its first reply."""
        with self.control(path=path) as client:
            return client.request(command, **fields)

    def status(self, target=None):
        """The status reply, which must be ok."""
        fields = {"target": target} if target else {}
        reply = self.request("status", **fields)
        assert reply.get("ok") is True, reply
        return reply

    def task_status(self, task):
        """The status object of one task, "group/task"."""
        for group in self.status()["groups"]:
            for entry in group["tasks"]:
                if entry["task"] == task:
                    return entry
        raise AssertionError(f"no task {task} in status")

    def wait_control(self, running=None, path=None, timeout=RUN_TIMEOUT):
        """Waits until the control socket answers a status request."""

        def answers():
            if running is not None and not running.alive():
                pytest.fail(f"corral exited before its control socket answered:\n"
                            f"{running.result()!r}")
            try:
                return self.request("status", path=path).get("ok")
            except OSError:
                return False

        wait_for(answers, timeout=timeout, what="the control socket to answer")

    def cli(self, *args, env=None, timeout=RUN_TIMEOUT):
        """Runs a client command (`corral status ...`) to its end; returns
        the CompletedProcess (text)."""
        result = subprocess.run(
            [str(self.binary), *map(str, args)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            cwd=self.dir,
            env=self.env(env),
            timeout=timeout,
        )
        line = sanitizer_report(result.stderr, result.stdout)
        if line:
            pytest.fail(f"sanitizer report from corral {' '.join(map(str, args))}: {line}\n"
                        f"{result.stderr}")
        return result

    def cli_popen(self, *args, env=None):
        """Starts a client command in the background, stdout a pipe (for
        `logs -f`, `events -f`); killed at teardown."""
        popen = subprocess.Popen(
            [str(self.binary), *map(str, args)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=self.dir,
            env=self.env(env),
            start_new_session=True,
        )
        self.started.append(popen)
        return popen

    def leftovers(self):
        """Live processes started by this test's corral (any depth)."""
        return processes_with_env("CORRAL_TEST_ID", self.test_id)

    def cleanup(self):
        # A corral the test left running stops as it would be stopped:
        # killed, it would leave its cgroup root behind (dozens a run did).
        running = [popen for popen in self.started if popen.poll() is None]
        for popen in running:
            popen.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + 5
        for popen in running:
            try:
                popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait()
                remove_cgroup_roots_of(popen.pid)
        for _ in range(3):
            pids = self.leftovers()
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)


def remove_cgroup_roots_of(pid):
    """The cgroup roots a corral killed with SIGKILL left (corral-PID-XXXX
    below the unified tree's root, where the tests run): what runs there is
    killed and they are removed, deepest first."""
    unified = Path("/sys/fs/cgroup/unified")
    for root in unified.glob(f"corral-{pid}-*"):
        try:
            (root / "cgroup.kill").write_text("1")
        except OSError:
            pass
        for directory in sorted((path for path in root.rglob("*") if path.is_dir()),
                                key=lambda path: len(path.parts), reverse=True) + [root]:
            for _ in range(50):
                try:
                    directory.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


@pytest.fixture(scope="session")
def corral_bin():
    binary = corral_binary_path()
    if not os.access(binary, os.X_OK):
        pytest.fail(f"corral binary not found at {binary} (build it, or set CORRAL_BIN)")
    return binary


@pytest.fixture(scope="session", autouse=True)
def need_root():
    if os.geteuid() != 0:
        pytest.skip("the integration tests run as root")


@pytest.fixture
def corral(corral_bin, tmp_path):
    instance = Corral(corral_bin, tmp_path)
    yield instance
    instance.cleanup()


@pytest.fixture
def open_dir():
    """A directory others may traverse (tmp_path's parents are 0700), for a
    socket that other users must reach."""
    directory = Path(tempfile.mkdtemp(prefix="corral-control-"))
    directory.chmod(0o755)
    yield directory
    for entry in directory.iterdir():
        entry.unlink()
    directory.rmdir()


@pytest.fixture
def repo_root():
    return REPO_ROOT

