"""Connections nobody can hoard (issue 27, item 10): root and corral's own
user always get in, however many idle connections others (or they) hold;
another user gets control.connections_per_user at most; a connection that
sends no request for control.idle_timeout is closed, one that follows a
stream is not."""

import json
import resource
import subprocess

import pytest

from conftest import RUN_TIMEOUT, mark, sh, wait_for
from helpers_control import NOBODY, assert_error, count, group, trapped


@pytest.fixture
def many_fds():
    """Room for ~1200 sockets in this process."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 4096 if hard == resource.RLIM_INFINITY else min(4096, hard)
    if wanted < 1300:
        pytest.skip(f"RLIMIT_NOFILE hard limit {hard} is too low")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def start(corral, tmp_path, **extra):
    marks = tmp_path / "marks"
    env = extra.pop("env", None)
    config = group({"app": {"command": trapped(marks, "app")}})
    config.update(extra)
    running = corral.start(config, env=env)
    corral.wait_control(running, path=env and env["CORRAL_SOCKET"])
    wait_for(lambda: count(marks, "app-up") == 1, what="g/app up")
    return running


def test_idle_connections_beyond_the_limit_do_not_lock_root_out(corral, tmp_path, many_fds):
    running = start(corral, tmp_path)
    held = []
    try:
        # More idle connections than corral takes in all (1024).
        for _ in range(1100):
            held.append(corral.control())
        # Root's status is served all the same, by the CLI too.
        result = corral.cli("status")
        assert result.returncode == 0, result.stderr
        assert "app" in result.stdout and "running" in result.stdout, result.stdout
        assert held[-1].request("status")["ok"] is True
        # Room was made by closing the connections idle the longest, each
        # told why.
        first = held[0]
        assert_error(first.reply(), "make room for root", "idle the longest")
        assert first.read_line() is None
        wait_for(lambda: "closing the one idle the longest" in running.stderr_text(),
                 what="the closing in corral's stderr")
    finally:
        for client in held:
            client.close()
    assert running.alive()
    running.send(15)
    assert running.wait().returncode == 0


# Runs as another user: opens COUNT connections, then sends status on each
# and prints the first line each got.
MANY_CLIENTS = r"""
import json, socket, sys
path, count = sys.argv[1], int(sys.argv[2])
socks = []
for _ in range(count):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    sock.connect(path)
    socks.append(sock)
lines = []
for sock in socks:
    try:
        sock.sendall(b'{"version": 1, "command": "status"}\n')
    except OSError:
        pass  # refused and closed: its reply is still there to read
    data = b""
    while b"\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    lines.append(json.loads(data.split(b"\n")[0]))
print(json.dumps(lines))
"""


def test_a_user_gets_connections_per_user_and_root_still_gets_in(corral, tmp_path, open_dir):
    path = open_dir / "control.sock"
    running = start(corral, tmp_path, control={"group": "nogroup", "connections_per_user": 3},
                    env={"CORRAL_SOCKET": str(path)})

    def become():
        import os
        os.setgroups([NOBODY])
        os.setgid(4242)
        os.setuid(NOBODY)

    result = subprocess.run(["/usr/bin/python3", "-c", MANY_CLIENTS, str(path), "5"],
                            preexec_fn=become, capture_output=True, text=True, cwd="/",
                            timeout=RUN_TIMEOUT)
    assert result.returncode == 0, result.stderr
    replies = json.loads(result.stdout)
    assert [r["ok"] for r in replies] == [True, True, True, False, False], replies
    assert_error(replies[3], f"uid {NOBODY} has 3 control connections open already",
                 "control.connections_per_user")
    # Root is another user: untouched by that cap.
    assert corral.request("status", path=path)["ok"] is True
    running.send(15)
    assert running.wait().returncode == 0


def test_an_idle_connection_is_closed_but_not_a_follower(corral, tmp_path):
    marks = tmp_path / "marks"
    go = tmp_path / "go"
    config = group({
        "app": {"command": trapped(marks, "app")},
        "talker": {"command": sh(f"while [ ! -e {go} ]; do sleep 0.02; done; "
                                 f"echo after-the-idle-one-left; {mark(marks, 'said')}; "
                                 "exec sleep 1000")},
    })
    config["control"] = {"idle_timeout": "1s"}
    running = corral.start(config)
    corral.wait_control(running)
    with corral.control() as follower, corral.control() as idle:
        assert follower.request("logs", target="g/talker", follow=True)["ok"] is True
        # Opened after the follower and never used: closed, and told why.
        assert_error(idle.reply(), "idle for 1s without a request", "control.idle_timeout")
        assert idle.read_line() is None
        # The follower, quiet for longer than that, still streams.
        go.touch()
        line = json.loads(follower.read_line())
        assert line["text"] == "after-the-idle-one-left", line
        # A connection in use is not idle: each request starts its time anew.
        with corral.control() as busy:
            for _ in range(3):
                assert busy.request("status")["ok"] is True
    running.send(15)
    assert running.wait().returncode == 0


KNOCKER = """
import os, socket
path, started = os.environ["CORRAL_SOCKET"], os.environ["STARTED"]
knocks = 0
while True:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        pass
    sock.close()
    knocks += 1
    if knocks == 200:
        open(started, "w").close()
"""


def test_a_task_connecting_as_fast_as_it_is_refused_does_not_hold_the_loop(corral, tmp_path):
    """A task has no control rights, so each of its connections is refused
    at once; it connects again at once. corral takes a bounded number of
    connections a turn, so it still answers others (before, it stayed in
    accept() for as long as the task went on)."""
    started = tmp_path / "started"
    config = group({
        "knocker": {"command": ["/usr/bin/python3", "-c", KNOCKER],
                    "env": {"STARTED": str(started)}},
    })
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: started.exists(), timeout=RUN_TIMEOUT, what="the knocking to start")
    # The CLI waits for room in the socket's backlog, which the knocker
    # keeps full most of the time (a non-blocking connect may get EAGAIN).
    for _ in range(3):
        result = corral.cli("status", "--json")
        assert result.returncode == 0, result.stderr
        knocker = [task for group in json.loads(result.stdout)["groups"]
                   for task in group["tasks"] if task["task"] == "g/knocker"]
        assert knocker and knocker[0]["state"] == "running", result.stdout
    running.send(15)
    assert running.wait().returncode == 0
