"""Helpers for tests of the control socket and its clients (test_control.py
and the modules beside it): task commands that record what happens to them
as markers, config builders, status checks, a client run as another user,
and a fake server that plants a socket (test_cli_socket_trust.py)."""

import array
import json
import os
import select
import signal
import socket
import subprocess

from conftest import RUN_TIMEOUT, mark, read_marks, sh, wait_for

# ---- tasks and their markers ----------------------------------------------


def trapped(marks, name, term_code=0):
    """A long-running task that appends NAME-up when it starts, NAME-term on
    SIGTERM (then exits with `term_code`) and NAME-usr1 on SIGUSR1."""
    return sh(
        f"trap '{mark(marks, name + '-term')}; exit {term_code}' TERM\n"
        f"trap '{mark(marks, name + '-usr1')}' USR1\n"
        f"{mark(marks, name + '-up')}; while :; do sleep 0.02; done"
    )


def one_shot(marks, name, code=0):
    """A task that appends NAME and exits with `code`."""
    return sh(f"{mark(marks, name)}; exit {code}")


def count(marks, name):
    return [n for n, _ in read_marks(marks)].count(name)


def times(marks, name):
    """Times of every NAME marker, in order."""
    return [when for n, when in read_marks(marks) if n == name]


def group(tasks, **extra):
    return {"groups": {"g": {"tasks": tasks, **extra}}}


def prestart(command, sidecar=False, **task):
    return {"command": command, "lifecycle": {"hook": "prestart", "sidecar": sidecar}, **task}


def poststart(command, sidecar=False, **task):
    return {"command": command, "lifecycle": {"hook": "poststart", "sidecar": sidecar}, **task}


def poststop(command, **task):
    return {"command": command, "lifecycle": {"hook": "poststop"}, **task}


def start_and_wait(corral, config, marks, *ups):
    """Starts corral, waits for its socket and for the markers `ups`."""
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: all(count(marks, up) >= 1 for up in ups), what=f"markers {ups}")
    return running


def stop_corral(running, expected_code=0):
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == expected_code, result
    return result


def new_pid(corral, task, old_pid):
    """Waits until `task` runs again under another pid; returns its status."""

    def changed():
        entry = corral.task_status(task)
        if entry["state"] == "running" and entry["pid"] not in (None, old_pid):
            return entry
        return None

    return wait_for(changed, what=f"{task} running under a new pid (was {old_pid})")


def assert_error(reply, *words):
    assert reply.get("ok") is False, reply
    assert isinstance(reply.get("error"), str) and reply["error"], reply
    for word in words:
        assert word in reply["error"], (word, reply)


def full_group(marks):
    return group({
        "pre": prestart(one_shot(marks, "pre")),
        "side": prestart(trapped(marks, "side"), sidecar=True),
        "app": {"command": trapped(marks, "app")},
        "post": poststart(one_shot(marks, "post")),
        "ps": poststart(trapped(marks, "ps"), sidecar=True),
        "cleanup": poststop(one_shot(marks, "cleanup")),
    })


# ---- status --------------------------------------------------------------------

GROUP_STATES = {"init", "prestart", "main", "poststart", "running", "poststop"}
TASK_STATES = {"pending", "starting", "running", "dead"}
STAGES = {"prestart-ephemeral", "prestart-sidecar", "main", "poststart-ephemeral",
          "poststart-sidecar", "poststop"}


def assert_status_shape(reply):
    assert reply["ok"] is True, reply
    assert isinstance(reply["groups"], list) and reply["groups"], reply
    for entry in reply["groups"]:
        assert isinstance(entry["name"], str)
        assert entry["state"] in GROUP_STATES, entry
        assert isinstance(entry["stopping"], bool) and isinstance(entry["finished"], bool)
        assert isinstance(entry["tasks"], list) and entry["tasks"], entry
        for task in entry["tasks"]:
            assert task["task"] == f"{entry['name']}/{task['name']}", task
            assert task["stage"] in STAGES, task
            assert task["state"] in TASK_STATES, task
            assert task["pid"] is None or (isinstance(task["pid"], int) and task["pid"] > 0)
            assert task["uptime_ms"] is None or task["uptime_ms"] >= 0, task
            assert (task["pid"] is None) == (task["uptime_ms"] is None), task
            assert isinstance(task["restarts"], int) and task["restarts"] >= 0, task
            assert task["next_restart_in_ms"] is None or task["next_restart_in_ms"] >= 0
            last = task["last_exit"]
            if last is not None:
                assert set(last) >= {"code", "signal", "failed", "description"}, last
                assert (last["code"] is None) != (last["signal"] is None), last
                assert isinstance(last["failed"], bool) and last["description"], last


def status_config(marks):
    return {
        "groups": {
            "web": {"tasks": {
                "setup": prestart(one_shot(marks, "setup")),
                "app": {"command": trapped(marks, "app")},
            }},
            # Killed by SIGKILL under policy never: fails for good, and its
            # group (alone) stops and finishes.
            "doomed": {"tasks": {
                "victim": {"command": sh(f"{mark(marks, 'victim')}; kill -KILL $$"),
                           "restart": {"policy": "never"}},
            }},
        }
    }


# ---- who may connect -----------------------------------------------------------

NOBODY = 65534

# Runs as another user: connects, optionally sends a request (status unless
# told another), reads until EOF, and prints what happened as JSON.
CLIENT_SCRIPT = r"""
import json, socket, sys
path, send = sys.argv[1], sys.argv[2] == "send"
request = sys.argv[3].encode() if len(sys.argv) > 3 else b'{"version": 1, "command": "status"}'

sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(10)
try:
    sock.connect(path)
except OSError as error:
    print(json.dumps({"connect_errno": error.errno}))
    sys.exit(0)
if send:
    try:
        sock.sendall(request + b"\n")
    except OSError:
        pass  # refused and closed already: its reply is still to be read
data, eof = b"", False
try:
    while True:
        if send and data.count(b"\n") >= 1:
            break
        chunk = sock.recv(65536)
        if not chunk:
            eof = True
            break
        data += chunk
except OSError as error:
    print(json.dumps({"lines": data.decode().splitlines(), "recv_errno": error.errno}))
    sys.exit(0)
print(json.dumps({"lines": data.decode().splitlines(), "eof": eof}))
"""


def client_as(path, uid, gid, groups=(), send=True, request=None):
    """Runs CLIENT_SCRIPT as uid:gid with the supplementary `groups`;
    `request` (a dict) instead of status."""

    def become():
        os.setgroups(list(groups))
        os.setgid(gid)
        os.setuid(uid)

    result = subprocess.run(
        # A python that other users may run (not one under /root).
        ["/usr/bin/python3", "-c", CLIENT_SCRIPT, str(path), "send" if send else "read",
         *([json.dumps(request)] if request else [])],
        preexec_fn=become, capture_output=True, text=True, cwd="/", timeout=RUN_TIMEOUT)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# ---- a socket planted by another user ------------------------------------------

OTHER = 65534  # the local user who plants the socket


class FakeServer:
    """A Unix socket server in a forked child, listening as `uid`; the
    socket file is made as root when `bind_as_root` (so that only the
    server's credentials give it away). `report()` stops it and returns
    what it received: connections, bytes, fds."""

    def __init__(self, path, uid, bind_as_root=False):
        ready_read, ready_write = os.pipe()
        self.report_read, report_write = os.pipe()
        stop_read, self.stop_write = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns into pytest
            status = 1
            try:
                os.close(ready_read)
                os.close(self.report_read)
                os.close(self.stop_write)
                self._serve(str(path), uid, bind_as_root, ready_write, report_write, stop_read)
                status = 0
            finally:
                os._exit(status)
        os.close(ready_write)
        os.close(report_write)
        os.close(stop_read)
        ready = os.read(ready_read, 1)
        os.close(ready_read)
        assert ready == b"r", "the fake server did not start"

    @staticmethod
    def _serve(path, uid, bind_as_root, ready_write, report_write, stop_read):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        if bind_as_root:
            listener.bind(path)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        if not bind_as_root:
            listener.bind(path)
            os.chmod(path, 0o777)  # anyone may connect: the planter wants them to
        listener.listen(16)  # SO_PEERCRED: the credentials at listen()
        os.write(ready_write, b"r")
        got = {"connections": 0, "bytes": 0, "fds": 0}
        connections = []

        def receive(connection):
            """Reads what is there (without waiting); False at the end."""
            fds = array.array("i")
            try:
                data, ancillary, _, _ = connection.recvmsg(
                    65536, socket.CMSG_SPACE(16 * fds.itemsize), socket.MSG_DONTWAIT)
            except BlockingIOError:
                return True
            except ConnectionError:
                return False
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
            for fd in fds:
                os.close(fd)
            got["bytes"] += len(data)
            got["fds"] += len(fds)
            return bool(data)

        def accept():
            connection, _ = listener.accept()
            got["connections"] += 1
            connections.append(connection)

        while True:
            readable, _, _ = select.select([listener, stop_read, *connections], [], [])
            if stop_read in readable:
                break
            if listener in readable:
                accept()
            for connection in [c for c in connections if c in readable]:
                # Whatever came in, the fake never answers: the CLI ends.
                receive(connection)
                connections.remove(connection)
                connection.close()
        # The CLI has exited: all it sent is queued. Take it, then say.
        listener.setblocking(False)
        while True:
            try:
                accept()
            except BlockingIOError:
                break
        for connection in connections:
            while receive(connection):
                if not select.select([connection], [], [], 0)[0]:
                    break
        os.write(report_write, json.dumps(got).encode())

    def report(self):
        os.close(self.stop_write)
        text = b""
        while chunk := os.read(self.report_read, 4096):
            text += chunk
        os.close(self.report_read)
        _, status = os.waitpid(self.pid, 0)
        assert status == 0, f"the fake server failed ({status})"
        return json.loads(text)
