"""corral exec (docs/cli.md): a command inside a running task, seen from
inside (hostname, pid namespace, its mounts, user, capabilities, seccomp,
cgroup, environment) and from outside (stdin and stdout passed through,
exit codes, a pseudo-terminal, refusals, nothing left behind)."""

import json
import os
import pty
import re
import select
import signal
import subprocess
import time
from pathlib import Path

from conftest import RUN_TIMEOUT, sh, wait_for
from helpers_control import NOBODY
from helpers_exec import exec_, start

NEVER = {"policy": "never"}
ISOLATED = {"namespaces": ["pid", "mount", "uts", "ipc", "net", "cgroup"],
            "hostname": "inside"}


def test_exec_runs_inside_an_isolated_task(corral, tmp_path):
    hidden = tmp_path / "hidden"
    # The task writes a file on a tmpfs only its mount namespace has.
    task = {"command": sh(f"echo secret > {hidden}/file; exec sleep 1000"),
            "isolation": {**ISOLATED, "mounts": [{"type": "tmpfs", "target": str(hidden)}]},
            "env": {"FROM_CONFIG": "yes"}, "user": "nobody", "restart": NEVER}
    running = start(corral, {"app": task})
    inside = exec_(corral, "g/app", "--", "/bin/sh", "-c",
                   f"hostname; echo pid=$$; cat {hidden}/file; id -u; echo $FROM_CONFIG; "
                   "grep -E '^(CapEff|Seccomp|NoNewPrivs):' /proc/self/status; "
                   "grep ^0:: /proc/self/cgroup")
    assert inside.returncode == 0, inside
    lines = inside.stdout.splitlines()
    assert lines[0] == "inside"
    assert int(lines[1].split("=")[1]) < 10  # a pid of the task's namespace
    assert lines[2] == "secret"  # its mount namespace
    assert lines[3] == str(NOBODY)
    assert lines[4] == "yes"
    task_pid = corral.task_status("g/app")["pid"]
    task_status = {line.split(":")[0]: line.split(":", 1)[1].strip() for line in
                   Path(f"/proc/{task_pid}/status").read_text().splitlines()}
    assert lines[5].split()[1] == task_status["CapEff"]
    assert lines[6].split()[1] == "1" and lines[7].split()[1] == "2"  # no_new_privs, filter
    # Its cgroup namespace's root is the task's cgroup; the session has its
    # own cgroup below it, so that its whole tree can be killed.
    assert re.fullmatch(r"0::/exec-\d+", lines[8]), lines[8]
    assert not hidden.joinpath("file").exists()  # nothing of it on the host
    running.send(signal.SIGTERM)
    running.wait()


def test_stdin_exit_codes_env_user_and_workdir(corral, tmp_path):
    running = start(corral, {"app": {"command": ["sleep", "1000"], "restart": NEVER}})
    piped = exec_(corral, "-i", "g/app", "--", "tr", "a-z", "A-Z", stdin=open(os.devnull))
    assert piped.returncode == 0 and piped.stdout == ""
    with open(tmp_path / "input", "w") as f:
        f.write("hello\n")
    piped = exec_(corral, "-i", "g/app", "--", "tr", "a-z", "A-Z",
                  stdin=open(tmp_path / "input"))
    assert piped.stdout == "HELLO\n", piped
    # Without -i the command reads /dev/null.
    assert exec_(corral, "g/app", "--", "cat", stdin=open(tmp_path / "input")).stdout == ""
    assert exec_(corral, "g/app", "--", "sh", "-c", "exit 7").returncode == 7
    assert exec_(corral, "g/app", "--", "sh", "-c", "kill -TERM $$").returncode == 143
    missing = exec_(corral, "g/app", "--", "/no/such/program")
    assert missing.returncode == 127
    assert "exec /no/such/program: No such file or directory" in missing.stderr
    shown = exec_(corral, "-e", "A=1", "-u", "nobody", "-w", "/tmp", "g/app", "--", "sh", "-c",
                  "echo $A $(id -u) $(pwd)")
    assert shown.stdout == f"1 {NOBODY} /tmp\n", shown
    running.send(signal.SIGTERM)
    running.wait()


def test_a_pseudo_terminal_with_its_window_size(corral):
    running = start(corral, {"app": {"command": ["sleep", "1000"], "restart": NEVER}})
    import fcntl
    import struct
    import termios
    pid, terminal = pty.fork()
    if pid == 0:
        # The size is set before corral exec starts (set from the parent, it
        # raced with the CLI reading it).
        fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 111, 0, 0))
        os.execve(str(corral.binary), [str(corral.binary), "exec", "-t", "g/app", "--", "sh",
                                      "-c", "test -t 0 && echo tty=yes; stty size; exit 5"],
                  corral.env())
    output = b""
    deadline = time.monotonic() + RUN_TIMEOUT
    while time.monotonic() < deadline:
        ready, _, _ = select.select([terminal], [], [], 1)
        if not ready:
            continue
        try:
            chunk = os.read(terminal, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 5, output
    assert b"tty=yes" in output and b"33 111" in output, output
    running.send(signal.SIGTERM)
    running.wait()


def test_refusals_say_why(corral, open_dir):
    path = open_dir / "control.sock"
    config = {"control": {"group": "nogroup"}, "groups": {"g": {"tasks": {
        "app": {"command": ["sleep", "1000"], "restart": NEVER},
        "done": {"command": ["true"], "restart": NEVER}}}}}
    running = corral.start(config, env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    env = {"CORRAL_SOCKET": str(path)}
    def done_state():
        status = json.loads(corral.cli("status", "--json", "g/done", env=env).stdout)
        return status["groups"][0]["tasks"][0]["state"]
    wait_for(lambda: done_state() == "dead", what="done")
    dead = corral.cli("exec", "g/done", "--", "true", env=env)
    assert dead.returncode == 1 and "exec needs a running task" in dead.stderr, dead
    unknown = corral.cli("exec", "g/nope", "--", "true", env=env)
    assert unknown.returncode == 1 and "g/nope" in unknown.stderr, unknown
    # A member of the control group may look, not exec.
    script = (f"import json, socket; s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r});"
              "s.sendall(b'{\"version\":1,\"command\":\"exec\",\"target\":\"g/app\","
              "\"argv\":[\"true\"]}\\n'); print(s.makefile().readline())")
    result = subprocess.run(["/usr/bin/python3", "-c", script], capture_output=True, text=True,
                            preexec_fn=lambda: (os.setgroups([]), os.setgid(NOBODY),
                                                os.setuid(NOBODY)), timeout=RUN_TIMEOUT)
    reply = json.loads(result.stdout)
    assert reply["ok"] is False and "only root and corral's own user" in reply["error"], reply
    running.send(signal.SIGTERM)
    running.wait()


def test_a_client_that_goes_away_takes_its_command_and_200_leave_nothing(corral):
    running = start(corral, {"app": {"command": ["sleep", "1000"], "restart": NEVER,
                                     "isolation": ISOLATED}})
    client = subprocess.Popen([str(corral.binary), "exec", "g/app", "--", "sleep", "777"],
                              env=corral.env())
    wait_for(lambda: corral.task_status("g/app")["exec_sessions"], what="the session")
    session_pid = corral.task_status("g/app")["exec_sessions"][0]["pid"]
    client.kill()
    client.wait()
    wait_for(lambda: not Path(f"/proc/{session_pid}").exists(), what="the command killed")
    wait_for(lambda: not corral.task_status("g/app")["exec_sessions"], what="forgotten")
    # Counted once a session has come and gone and status has been asked:
    # what those open for good the first time (the usage readings' files)
    # is not a leak of the 200.
    fds_before = len(os.listdir(f"/proc/{running.pid}/fd"))
    for _ in range(200):
        assert exec_(corral, "g/app", "--", "true").returncode == 0
    assert len(os.listdir(f"/proc/{running.pid}/fd")) <= fds_before
    status = corral.task_status("g/app")
    task_processes = {status["pid"], status["reaper_pid"]}
    children = [(p.name, _name(p)) for p in Path("/proc").iterdir() if p.name.isdigit() and
                _parent(p) == running.pid and int(p.name) not in task_processes]
    assert not children, children
    running.send(signal.SIGTERM)
    running.wait()


def _parent(entry):
    try:
        stat = (entry / "stat").read_text()
        return int(stat[stat.rindex(")") + 2:].split()[1])
    except (OSError, ValueError):
        return None


def _name(entry):
    try:
        return (entry / "comm").read_text().strip()
    except OSError:
        return None


def test_the_control_group_may_exec_with_control_exec_as_the_task_s_user_only(corral, open_dir):
    path = open_dir / "control.sock"
    config = {"control": {"group": "nogroup", "exec": True}, "groups": {"g": {"tasks": {
        "app": {"command": ["sleep", "1000"], "user": "nobody", "restart": NEVER}}}}}
    running = corral.start(config, env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)

    def as_nobody(*args):
        return subprocess.run([str(corral.binary), "exec", *args], capture_output=True,
                              text=True, env=corral.env({"CORRAL_SOCKET": str(path)}),
                              timeout=RUN_TIMEOUT, cwd="/",
                              preexec_fn=lambda: (os.setgroups([]), os.setgid(NOBODY),
                                                  os.setuid(NOBODY)))

    ran = as_nobody("g/app", "--", "id", "-u")
    assert ran.returncode == 0 and ran.stdout == f"{NOBODY}\n", ran
    refused = as_nobody("-u", "root", "g/app", "--", "id", "-u")
    assert refused.returncode == 1 and "-u: only root and corral's own user" in refused.stderr
    running.send(signal.SIGTERM)
    running.wait()
