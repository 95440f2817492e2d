"""corral's reaper (isolation/reaper/), the PID 1 of an isolated task's pid
namespace: it runs the command, forwards signals to it, reaps every orphan
of the namespace and exits with the command's status.

Run here as the build made it (corral-reaper beside CORRAL_BIN; corral
embeds these very bytes, test_isolation.py checks that), as PID 1 of
`unshare --pid --fork`; and from a memfd in a chroot that holds nothing but
busybox-static, where a program that needs a loader or libc cannot start."""

import os
import shutil
import signal
import stat
import struct
import subprocess
import sys

import pytest

from conftest import RUN_TIMEOUT, children_of, wait_for

UNSHARE = shutil.which("unshare")
pytestmark = pytest.mark.skipif(not UNSHARE, reason="needs unshare")


@pytest.fixture
def reaper_bin(corral_bin):
    binary = corral_bin.parent / "corral-reaper"
    if not os.access(binary, os.X_OK):
        pytest.fail(f"corral-reaper not found beside corral at {binary} (the build makes both)")
    return binary


def reaper(reaper_bin, *command, **options):
    return subprocess.Popen(
        [UNSHARE, "--pid", "--fork", "--mount-proc", str(reaper_bin), *command],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        **options)


def test_the_commands_exit_code_is_the_reapers(reaper_bin):
    process = reaper(reaper_bin, "/bin/sh", "sh", "-c", "echo pid $$; exit 7")
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 7, (out, err)
    # The reaper is PID 1; the command is its child.
    assert out == "pid 2\n", out


def test_a_signal_death_is_128_plus_the_signal(reaper_bin):
    process = reaper(reaper_bin, "/bin/sh", "sh", "-c", "kill -KILL $$")
    process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 128 + signal.SIGKILL


def test_orphans_are_reaped_and_signals_forwarded(reaper_bin, tmp_path):
    report = tmp_path / "report"
    # Orphans (their parent subshell exits at once) are reparented to the
    # reaper; once they exit, the command looks for zombies among its
    # namespace's processes, then waits for SIGTERM, which the reaper
    # forwards from outside.
    script = (
        "for i in 1 2 3; do (sleep 0.2 &); done; sleep 0.6; "
        f"ps -e -o stat= -o comm= > {report}.ps; "
        f"trap 'echo term > {report}; exit 0' TERM; echo ready > {report}; "
        "while :; do sleep 0.05; done")
    process = reaper(reaper_bin, "/bin/sh", "sh", "-c", script)
    wait_for(lambda: report.exists() and report.read_text() == "ready\n", timeout=RUN_TIMEOUT,
             what="the command")
    states = [line.split() for line in (tmp_path / "report.ps").read_text().splitlines()]
    # The namespace's processes: the reaper, sh and ps; no zombie sleep.
    assert sorted(comm for _, comm in states) == ["corral-reaper", "ps", "sh"], states
    assert not [state for state, _ in states if state.startswith("Z")], states
    # To the reaper itself, unshare's child (unshare forwards nothing).
    (reaper_pid,) = children_of(process.pid)
    os.kill(reaper_pid[0], signal.SIGTERM)
    process.communicate(timeout=RUN_TIMEOUT)
    assert report.read_text() == "term\n"
    assert process.returncode == 0


def test_exec_failure_says_so(reaper_bin, tmp_path):
    process = reaper(reaper_bin, "/nonexistent/prog", "prog")
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 127
    assert err == "corral reaper: exec /nonexistent/prog: No such file or directory\n", err

    not_executable = tmp_path / "data"
    not_executable.write_text("just data\n")
    process = reaper(reaper_bin, str(not_executable), "data")
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 126
    assert err == f"corral reaper: exec {not_executable}: Permission denied\n", err


def test_a_name_without_a_slash_is_looked_up_in_the_commands_path(reaper_bin, tmp_path):
    # The first directory has a `sh` that is not executable: passed over,
    # as execvp does; the second has the real one.
    (tmp_path / "sh").write_text("not a program\n")
    environment = {"PATH": f"/nonexistent:{tmp_path}:/bin"}
    process = reaper(reaper_bin, "sh", "sh", "-c", "exit 4", env=environment)
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 4, (out, err)

    process = reaper(reaper_bin, "no-such-command", "x", env=environment)
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 127
    assert err == "corral reaper: exec no-such-command: No such file or directory\n", err
    # Found only where it cannot run: that is what it says.
    process = reaper(reaper_bin, "sh", "sh", env={"PATH": str(tmp_path)})
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 126
    assert err == "corral reaper: exec sh: Permission denied\n", err


def needs_a_loader(path):
    """Whether the ELF file at `path` names a program interpreter (PT_INTERP,
    the dynamic loader). 64-bit little-endian ELF only."""
    with open(path, "rb") as binary:
        data = binary.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, path
    (program_headers,) = struct.unpack_from("<Q", data, 0x20)
    entry_size, count = struct.unpack_from("<HH", data, 0x36)
    PT_INTERP = 3
    return any(struct.unpack_from("<I", data, program_headers + i * entry_size)[0] == PT_INTERP
               for i in range(count))


def test_the_reaper_needs_no_loader(reaper_bin):
    assert not needs_a_loader(reaper_bin)


# The reaper from a memfd, as corral runs it, inside a root that is empty
# but for a static busybox (and a mount point for /proc): python makes the
# memfd, chroots, and execs the memfd as PID 1 of a new pid namespace.
CHROOT_AND_EXEC_MEMFD = """
import os, sys
root, reaper = sys.argv[1], sys.argv[2]
fd = os.memfd_create("corral-reaper")
with open(reaper, "rb") as image:
    os.write(fd, image.read())
os.chroot(root)
os.chdir("/")
os.execve(fd, ["corral-reaper", *sys.argv[3:]], {"PATH": "/bin"})
"""


def test_the_reaper_runs_from_a_memfd_in_a_root_without_libc(reaper_bin, tmp_path):
    busybox = shutil.which("busybox")
    if not busybox:
        pytest.skip("needs busybox-static (apt-get install busybox-static)")
    if needs_a_loader(busybox):
        pytest.skip(f"{busybox} is not static (apt-get install busybox-static)")
    root = tmp_path / "root"
    for directory in ("bin", "dev", "proc"):
        (root / directory).mkdir(parents=True)
    shutil.copy(busybox, root / "bin" / "busybox")
    for applet in ("sh", "sleep", "ps"):
        (root / "bin" / applet).symlink_to("busybox")
    # The shell opens /dev/null for a job in the background.
    os.mknod(root / "dev" / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    assert not [path for path in root.rglob("*") if path.name.startswith(("ld-", "lib"))]
    # Orphans for the reaper to reap; then what the namespace holds.
    script = "for i in 1 2 3; do (sleep 0.2 &); done; sleep 0.6; ps -o pid,stat,comm; exit 5"
    # "sh", without a '/': the reaper looks it up in PATH=/bin, inside the
    # root.
    process = subprocess.run(
        [UNSHARE, "--pid", "--mount", "--fork", f"--mount-proc={root}/proc", sys.executable,
         "-c", CHROOT_AND_EXEC_MEMFD, str(root), str(reaper_bin), "sh", "sh", "-c", script],
        capture_output=True, text=True, timeout=RUN_TIMEOUT)
    assert process.returncode == 5, process
    rows = [line.split() for line in process.stdout.splitlines()[1:]]
    # PID 1 is the reaper, then the command and its ps; no sleep is left,
    # zombie or not.
    assert [row[2] for row in rows] == ["corral-reaper", "sh", "ps"], process
    assert rows[0][0] == "1", process
    assert not [row for row in rows if row[1].startswith("Z")], process


# Where executable memfds are forbidden (vm.memfd_noexec = 2, a sysctl of
# each pid namespace, set here in a new one for corral alone), the reaper
# cannot be made: the tasks that need it fail to start and say why; the
# others run.
NO_EXECUTABLE_MEMFDS = ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c",
                        'echo 2 > /proc/sys/vm/memfd_noexec && exec "$@"', "sh"]


@pytest.mark.skipif(not os.path.exists("/proc/sys/vm/memfd_noexec"),
                    reason="vm.memfd_noexec is Linux 6.3 and later")
def test_without_executable_memfds_a_task_that_needs_the_reaper_says_why(corral, tmp_path):
    marks = tmp_path / "marks"
    config = {"groups": {
        "g": {"tasks": {"boxed": {"command": ["/bin/true"], "restart": {"policy": "never"},
                                  "isolation": {"namespaces": ["pid"]}}}},
        "h": {"tasks": {
            "alone": {"command": ["/bin/sh", "-c", f"echo alone > {marks}"],
                      "restart": {"policy": "never"},
                      "isolation": {"namespaces": ["pid"], "init": False}}}},
    }}
    result = corral.run(config, wrapper=NO_EXECUTABLE_MEMFDS)
    assert result.returncode == 126, result
    message = result.events.of_task("boxed", "start_failed")[0]["message"]
    assert message == ("make the memfd of corral's reaper: Permission denied (vm.memfd_noexec = 2 "
                       "forbids an executable memfd; with init: false no reaper is needed)"), message
    assert marks.read_text() == "alone\n"


def test_the_status_fd_tells_the_commands_pid_and_signal(reaper_bin, tmp_path):
    """With --status-fd=N the command's process says "pid" before its exec
    (its credentials carry its pid, as this namespace sees it), and the
    reaper says how the command ended, which its exit code cannot (137 is
    also `exit 137`). The command does not inherit fd N."""
    import socket
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    report = tmp_path / "report"
    script = (f"if [ -e /dev/fd/{theirs.fileno()} ]; then echo leaked > {report}; "
              f"else echo kept > {report}; fi; kill -KILL $$")
    process = reaper(reaper_bin, f"--status-fd={theirs.fileno()}", "/bin/sh", "sh", "-c",
                     script, pass_fds=[theirs.fileno()])
    theirs.close()
    process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 128 + signal.SIGKILL
    assert report.read_text() == "kept\n"
    ours.settimeout(RUN_TIMEOUT)
    credentials_size = struct.calcsize("3i")
    text, ancillary, _, _ = ours.recvmsg(64, socket.CMSG_SPACE(credentials_size))
    assert text == b"pid"
    (level, kind, data), = ancillary
    assert (level, kind) == (socket.SOL_SOCKET, socket.SCM_CREDENTIALS)
    pid, _, _ = struct.unpack("3i", data[:credentials_size])
    # Not 2, its pid inside: the one this namespace knows it by.
    assert pid > 2 and pid != process.pid, pid
    assert ours.recv(64) == b"signal 9"
    ours.close()
