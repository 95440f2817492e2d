"""corral exec at the task's boundary (issue 27, items 4, 5 and 7): no fd
of the operator's terminal or of the CLI enters the task, the command's
whole tree dies with the CLI, a task in a user namespace lends its rlimits
to exec'd commands and inside probes, and uids wider than 32 bits are
refused rather than cut to uid 0."""

import json
import os
import pty
import select
import signal
import subprocess
from pathlib import Path

from conftest import RUN_TIMEOUT, sh, wait_for
from helpers_check import diagnostics
from helpers_exec import exec_, start

NEVER = {"policy": "never"}


def fd_targets_of(pid):
    targets = {}
    for entry in Path(f"/proc/{pid}/fd").iterdir():
        try:
            targets[int(entry.name)] = os.readlink(entry)
        except OSError:
            pass
    return targets


def read_terminal(terminal, until, deadline_s=RUN_TIMEOUT):
    """What the operator's terminal shows until `until(output)` holds or
    it closes."""
    output = b""
    while not until(output):
        ready, _, _ = select.select([terminal], [], [], deadline_s)
        if not ready:
            break
        try:
            chunk = os.read(terminal, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    return output


def test_no_fd_of_the_operators_terminal_or_the_cli_enters_the_task(corral, tmp_path):
    """A process in a root task looked at /proc/<exec pid>/fd and reopened
    the operator's terminal. Seen from inside the exec'd command and from a
    sibling process of the task: none of the exec's fds is one of the
    CLI's, with or without -t."""
    share = tmp_path / "share"
    share.mkdir()
    # The sibling: for each exec pid it is given, the targets of its fds.
    sibling = (f"while :; do for go in {share}/go-*; do [ -e \"$go\" ] || continue; "
               f"p=$(cat \"$go\"); n=${{go##*/go-}}; "
               f"for f in /proc/$p/fd/*; do readlink \"$f\"; done > {share}/seen.tmp; "
               f"mv {share}/seen.tmp {share}/seen-$n; rm \"$go\"; done; sleep 0.02; done")
    running = start(corral, {"app": {"command": sh(sibling), "restart": NEVER}})

    for name, options in (("pipes", ["-i"]), ("tty", ["-t"])):
        inside = (f"for f in /proc/self/fd/*; do readlink $f; done > {share}/inside-{name}; "
                  f"echo $$ > {share}/go.tmp; mv {share}/go.tmp {share}/go-{name}; "
                  f"while [ ! -e {share}/release-{name} ]; do sleep 0.02; done; "
                  f"echo done-{name}")
        operator, terminal = os.openpty()  # the operator's terminal
        terminal_path = os.ttyname(terminal)
        client = subprocess.Popen([str(corral.binary), "exec", *options, "g/app", "--", "sh",
                                   "-c", inside], stdin=terminal, stdout=terminal,
                                  stderr=terminal, env=corral.env(), start_new_session=True)
        try:
            wait_for(lambda: (share / f"seen-{name}").exists(), timeout=RUN_TIMEOUT,
                     what=f"the sibling's look at the exec's fds ({name})")
            cli_fds = fd_targets_of(client.pid)  # the command waits for this
            (share / f"release-{name}").touch()
            shown = read_terminal(operator, lambda out: f"done-{name}".encode() in out)
            assert client.wait(timeout=RUN_TIMEOUT) == 0, shown
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
            os.close(operator)
        os.close(terminal)
        cli_stdio = {cli_fds[fd] for fd in (0, 1, 2)}
        assert cli_stdio == {terminal_path}, cli_fds
        from_inside = (share / f"inside-{name}").read_text().split()
        from_sibling = (share / f"seen-{name}").read_text().split()
        assert from_inside and from_sibling, (from_inside, from_sibling)
        # Not the operator's terminal nor any other stdio of the CLI (a
        # pipe would be named by its inode): the exec's own pipes, whose
        # other ends the CLI relays, or with -t a pty of corral's.
        for seen in (from_inside, from_sibling):
            assert terminal_path not in seen, (name, seen)
            assert not cli_stdio & set(seen), (name, seen, cli_fds)
            if name == "tty":
                assert any(t.startswith("/dev/pts/") for t in seen), seen
            else:
                assert any(t.startswith("pipe:") for t in seen), seen
        assert f"done-{name}".encode() in shown, shown
    running.send(signal.SIGTERM)
    running.wait()


def test_a_setsid_child_of_an_exec_dies_when_the_cli_is_killed(corral, tmp_path):
    """A child that left the command's session and process group is still
    the exec's: killing the CLI kills it too."""
    running = start(corral, {"app": {"command": ["sleep", "1000"], "restart": NEVER}})
    child_pid_file = tmp_path / "child"
    script = (f"setsid sh -c 'echo $$ > {child_pid_file}.tmp; mv {child_pid_file}.tmp "
              f"{child_pid_file}; exec sleep 1000' & wait")
    client = subprocess.Popen([str(corral.binary), "exec", "g/app", "--", "sh", "-c", script],
                              env=corral.env(), stdin=subprocess.DEVNULL)
    wait_for(child_pid_file.exists, timeout=RUN_TIMEOUT, what="the setsid child")
    child = int(child_pid_file.read_text())
    child_pidfd = os.pidfd_open(child)
    try:
        sessions = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        assert int(sessions[3]) == child, sessions  # a session of its own
        client.kill()
        client.wait()
        wait_for(lambda: select.select([child_pidfd], [], [], 0)[0], timeout=RUN_TIMEOUT,
                 what="the setsid child killed with the CLI")
    finally:
        os.close(child_pidfd)
    wait_for(lambda: not corral.task_status("g/app")["exec_sessions"], what="forgotten")
    assert corral.task_status("g/app")["state"] == "running"
    running.send(signal.SIGTERM)
    running.wait()


LIMITS = ("Max open files", "Max processes")


def limits_of(text):
    """{name: (soft, hard)} of /proc/PID/limits for LIMITS."""
    found = {}
    for line in text.splitlines():
        for name in LIMITS:
            if line.startswith(name):
                fields = line[len(name):].split()
                found[name] = (fields[0], fields[1])
    return found


def test_exec_and_inside_probes_get_the_rlimits_of_a_user_namespace_task(corral):
    """The limits of a task in a user namespace are set by corral, not by
    its spawn: exec copied the emptied list and ran with corral's."""
    probe = ["/bin/sh", "-c", "grep -q '^Max open files  *100  *100 ' /proc/self/limits && "
             "grep -q '^Max processes  *500  *500 ' /proc/self/limits"]
    task = {"command": ["sleep", "1000"], "restart": NEVER,
            "isolation": {"namespaces": ["user", "pid", "mount"],
                          "user": {"uid_map": "0 100000 65536", "gid_map": "0 100000 65536"},
                          "rlimits": {"nofile": 100, "nproc": 500}},
            "readiness": {"exec": probe, "interval": "100ms", "inside": True}}
    running = start(corral, {"app": task})
    task_limits = limits_of(Path(f"/proc/{corral.task_status('g/app')['pid']}/limits")
                            .read_text())
    assert task_limits == {"Max open files": ("100", "100"),
                           "Max processes": ("500", "500")}, task_limits
    inside = exec_(corral, "g/app", "--", "cat", "/proc/self/limits")
    assert inside.returncode == 0, inside
    assert limits_of(inside.stdout) == task_limits, inside.stdout
    wait_for(lambda: corral.task_status("g/app")["ready"], timeout=RUN_TIMEOUT,
             what="the inside probe passing with the task's limits")
    running.send(signal.SIGTERM)
    running.wait()


def test_exec_u_refuses_ids_that_do_not_fit_32_bits(corral):
    running = start(corral, {"app": {"command": ["sleep", "1000"], "restart": NEVER}})
    for user in ("4294967296", "4294967295", "0:4294967296", "99999999999999999999999"):
        refused = exec_(corral, "-u", user, "g/app", "--", "id", "-u")
        assert refused.returncode != 0 and refused.stdout == "", (user, refused)
        assert "out of range" in refused.stderr and "4294967294" in refused.stderr, refused
    # A client that skips the CLI's check meets the server's.
    with corral.control() as connection:
        reply = connection.request("exec", target="g/app", argv=["id", "-u"],
                                   user="4294967296")
    assert reply["ok"] is False and "out of range" in reply["error"], reply
    assert exec_(corral, "-u", "4294967294", "g/app", "--", "id", "-u").stdout == \
        "4294967294\n"
    running.send(signal.SIGTERM)
    running.wait()


def test_check_refuses_a_user_wider_than_32_bits_with_its_place(corral):
    text = ("groups:\n  g:\n    tasks:\n      a:\n        command: [/bin/true]\n"
            "        user: \"4294967296\"\n"
            "      b:\n        command: [/bin/true]\n"
            "        user: \"0:4294967296\"\n")
    path = corral.config(text, name="wide.yaml")
    result = corral.check(path)
    assert result.returncode == 1, result
    found = diagnostics(result.stderr, path)
    assert [(line, column) for line, column, _ in found] == [(6, 15), (9, 15)], result.stderr
    assert "a: user" in found[0][2] and "uid 4294967296 is out of range" in found[0][2], found
    assert "b: user" in found[1][2] and "gid 4294967296 is out of range" in found[1][2], found
