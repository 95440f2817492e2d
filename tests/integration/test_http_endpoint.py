"""corral's HTTP endpoint (config `http`): GET /livez, /readyz and /metrics,
read-only, from corral's own loop.

- /readyz says what `corral status --ready` says (exit code and the names
  with their reasons) in each state those tests know: starting, waiting for
  READY=1 or a probe, pending, ready, failed, stopping and stopped on
  request, a completed one-shot, a scheduled task between runs, a task never
  started; with the group and task filters; 404 with the control socket's
  error for what is not there.
- HTTP itself: 404, 405 with Allow, HEAD, 431/414, 413, 400, 505,
  keep-alive (HTTP/1.1, and 1.0 when asked), Connection: close, pipelining.
- Bounds: slow clients (slowloris) are closed, a flood of connections never
  keeps `corral status` or another client's /livez from an answer, and
  corral's fds come back down afterwards.
- A Unix socket, config errors at their place, and reloads that rebind."""

import json
import os
import resource
import signal
import socket
import stat
import time

import pytest

from conftest import mark, marks_by_name, sh, wait_for
from helpers_http import (
    assert_agree,
    connect,
    http_config,
    listen_text,
    livez_answers,
    raw_exchange,
    read_response,
    request,
    start,
    stop,
)
from helpers_net import free_port
from helpers_readiness import NOTIFY

IDLE = "exec sleep 1000"


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


# ---- /readyz and `corral status --ready` ----------------------------------------


def test_readyz_follows_a_task_from_waiting_to_ready_to_dead(corral, tmp_path):
    """Waiting for READY=1, then ready, then dead: each step as the CLI
    says it; a second group keeps corral up and answers its own filter."""
    marks = tmp_path / "marks"
    go = tmp_path / "go"
    app = sh(f"{mark(marks, 'main-start')}; while [ ! -e {go} ]; do sleep 0.02; done; "
             f"{NOTIFY} 'READY=1'; {IDLE}")
    config = {"groups": {
        "g": {"tasks": {"app": {"command": app, "readiness": {"notify": "systemd"},
                                "restart": {"policy": "never"}}}},
        "h": {"tasks": {"other": {"command": sh(IDLE)}}},
    }}
    running, address = start(corral, config)
    wait_for(lambda: "main-start" in marks_by_name(marks), what="main to start")
    assert assert_agree(corral, address) == [
        "g/app: not ready (running, has not said it is ready)"]
    assert assert_agree(corral, address, "g/app") == [
        "g/app: not ready (running, has not said it is ready)"]
    assert assert_agree(corral, address, "h") == ["ready"]
    go.touch()
    wait_for(lambda: request(address, "/readyz").status == 200, what="ready")
    assert assert_agree(corral, address) == ["ready"]
    assert request(address, "/readyz").json() == {"ready": True, "not_ready": []}
    # ?task=GROUP/TASK is the CLI's own spelling.
    assert assert_agree(corral, address, "g/app", query="?task=g/app") == ["ready"]
    assert assert_agree(corral, address, "g/app", query="?task=g%2Fapp") == ["ready"]
    pid = corral.task_status("g/app")["pid"]
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: corral.task_status("g/app")["state"] == "dead", what="app dead")
    assert assert_agree(corral, address) == ["g/app: not ready (dead)"]
    assert assert_agree(corral, address, "g") == ["g/app: not ready (dead)"]
    assert assert_agree(corral, address, "h") == ["ready"]
    body = request(address, "/readyz").json()
    assert body == {"ready": False, "not_ready": [
        {"task": "g/app", "state": "dead", "reason": "dead"}]}, body
    stop(running)


def test_readyz_while_starting_pending_and_waiting_for_a_probe(corral, tmp_path):
    """A task held in its prestart hook (starting), a sidecar whose probe
    fails (running, not ready), and the main task behind it (pending)."""
    go = tmp_path / "go"
    hook = ["/bin/sh", "-c", f"while [ ! -e {go} ]; do sleep 0.02; done"]
    config = {"groups": {
        "g": {"tasks": {
            "side": {"command": sh(IDLE), "lifecycle": {"hook": "prestart", "sidecar": True},
                     "readiness": {"exec": ["test", "-e", str(go)], "interval": "100ms"}},
            "app": {"command": sh(IDLE)},
        }},
        "s": {"tasks": {"held": {"command": sh(IDLE), "hooks": [
            {"name": "wait", "stage": "prestart", "exec": hook, "timeout": "60s"}]}}},
    }}
    running, address = start(corral, config)
    wait_for(lambda: corral.task_status("s/held")["state"] == "starting",
             what="s/held in its prestart hook")
    wait_for(lambda: corral.task_status("g/side")["state"] == "running", what="g/side running")
    lines = assert_agree(corral, address)
    assert lines == ["g/side: not ready (running, has not said it is ready)",
                     "g/app: not ready (pending)",
                     "s/held: not ready (starting)"], lines
    assert assert_agree(corral, address, "s") == ["s/held: not ready (starting)"]
    assert assert_agree(corral, address, "g/app") == ["g/app: not ready (pending)"]
    go.touch()
    wait_for(lambda: request(address, "/readyz").status == 200, what="everything ready")
    assert assert_agree(corral, address) == ["ready"]
    stop(running)


def test_readyz_ignores_tasks_at_rest_and_fails_for_a_failed_one(corral, tmp_path):
    """A completed one-shot, a scheduled task between runs, a task never
    started: neither ready nor not; a failed task: not ready."""
    config = {"groups": {"g": {"on_failure": "ignore", "tasks": {
        "server": {"command": sh(IDLE)},
        "migrate": {"command": sh("exit 0"), "restart": {"policy": "never"}},
        "nightly": {"command": sh("true"), "schedule": {"cron": "0 3 * * *"}},
        "manual": {"command": sh(IDLE), "autostart": False},
    }}, "b": {"on_failure": "ignore", "tasks": {
        "broken": {"command": sh("exit 3"), "restart": {"policy": "never"}},
    }}}}
    running, address = start(corral, config)
    wait_for(lambda: corral.task_status("g/migrate")["state"] == "dead", what="migrate done")
    wait_for(lambda: corral.task_status("b/broken")["state"] == "dead", what="broken dead")
    assert corral.task_status("g/nightly")["state"] == "waiting"
    assert assert_agree(corral, address, "g") == ["ready"]
    assert assert_agree(corral, address, "g/migrate") == ["ready"]
    assert assert_agree(corral, address) == ["b/broken: not ready (dead)"]
    assert assert_agree(corral, address, "b/broken") == ["b/broken: not ready (dead)"]
    stop(running)


def test_readyz_while_a_task_stops_and_once_stopped_on_request(corral, tmp_path):
    marks = tmp_path / "marks"
    config = {"groups": {"g": {"tasks": {
        "keeper": {"command": sh(IDLE)},
        "app": {"command": sh(f"trap '{mark(marks, 'term')}' TERM; {mark(marks, 'up')}; "
                              "while :; do sleep 0.1; done"),
                "kill": {"timeout": "3s"}, "restart": {"policy": "never"}},
    }}}}
    running, address = start(corral, config)
    wait_for(lambda: "up" in marks_by_name(marks), what="g/app up")
    wait_for(lambda: request(address, "/readyz").status == 200, what="ready")
    assert corral.cli("stop", "g/app").returncode == 0
    wait_for(lambda: "term" in marks_by_name(marks), what="SIGTERM in g/app")
    assert assert_agree(corral, address) == ["g/app: not ready (stopping)"]
    wait_for(lambda: corral.task_status("g/app")["state"] == "dead", what="the kill timeout")
    assert assert_agree(corral, address) == ["g/app: not ready (dead)"]
    assert assert_agree(corral, address, "g/keeper") == ["ready"]
    stop(running)


def test_readyz_of_what_is_not_there_is_404_with_the_control_sockets_words(corral, tmp_path):
    config = {"groups": {"web": {"tasks": {"app": {"command": sh(IDLE)}}}}}
    running, address = start(corral, config)
    for target, query in (("nope", "?group=nope"), ("web/nope", "?group=web&task=nope"),
                          ("web/nope", "?task=web/nope"), ("app", "?group=app")):
        cli = corral.cli("status", "--ready", target)
        response = request(address, "/readyz" + query)
        assert cli.returncode == 1 and response.status == 404, (cli, response)
        error = response.json()["error"]
        assert error and error in cli.stderr, (error, cli.stderr)
    assert "did you mean web/app?" in request(address, "/readyz?group=app").json()["error"]
    # What /readyz does not take is 400, never a silent "everything".
    for query, words in (("?grop=web", "unknown parameter \"grop\""),
                         ("?task=app", "task= names a task as GROUP/TASK"),
                         ("?group=web&task=web/app", "names its group"),
                         ("?group=web&group=web", "group= is given twice"),
                         ("?group=%zz", "group= must be a name"),
                         ("?group=", "group= is empty: name a group"),
                         ("?group=web&task=", "task= is empty: name a task"),
                         # Empty names (issue 35, item 13): a stray & or =.
                         ("?&", "a parameter without a name"),
                         ("?group=web&", "a parameter without a name"),
                         ("?&&group=web", "a parameter without a name"),
                         ("?=web", "a parameter without a name")):
        response = request(address, "/readyz" + query)
        assert response.status == 400 and words in response.json()["error"], (query, response)
    # No query, or a '?' with nothing after it: every task.
    for query in ("", "?"):
        assert request(address, "/readyz" + query).status == 200, query
    stop(running)


# ---- HTTP ------------------------------------------------------------------------


def test_livez_metrics_and_what_http_asks_of_an_endpoint(corral, tmp_path):
    running, address = start(corral, {"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}})
    livez = request(address, "/livez")
    assert (livez.status, livez.body) == (200, "ok\n"), livez
    assert livez.headers["content-type"] == "text/plain; charset=utf-8"
    assert livez.headers["cache-control"] == "no-store" and "date" in livez.headers

    # OpenMetrics for a scraper that asks for it, Prometheus' text format
    # for any other (docs/metrics.md).
    metrics = request(address, "/metrics", headers={
        "Accept": "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"})
    assert metrics.status == 200, metrics
    assert metrics.headers["content-type"] == \
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    assert metrics.body.endswith("# EOF\n"), metrics
    metrics = request(address, "/metrics")
    assert metrics.status == 200, metrics
    assert metrics.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    assert "\ncorral_up 1\n" in metrics.body and "# EOF" not in metrics.body, metrics

    # HEAD: the head GET would have, no body.
    head = request(address, "/metrics", method="HEAD")
    assert head.status == 200 and head.body == "", head
    assert int(head.headers["content-length"]) > 0

    missing = request(address, "/nope")
    assert missing.status == 404 and "/livez, /readyz and /metrics" in missing.json()["error"]
    for method in ("POST", "PUT", "DELETE", "OPTIONS"):
        refused = request(address, "/livez", method=method)
        assert refused.status == 405 and refused.headers["allow"] == "GET, HEAD", refused

    # HTTP/1.0, which closes unless asked to keep the connection.
    assert request(address, "/livez", version="HTTP/1.0", close=False).status == 200
    assert request(address, "/livez", version="HTTP/2.0").status == 505
    assert b" 400 Bad Request\r\n" in raw_exchange(address, b"hello there\r\n\r\n")
    assert b" 400 Bad Request\r\n" in raw_exchange(address, b"GET /livez HTTP/1.1\r\n\r\n")
    # No request takes a body.
    body = raw_exchange(address, b"GET /livez HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd")
    assert body.startswith(b"HTTP/1.1 413 Content Too Large\r\n"), body
    # Heads above 8 KiB: 431, or 414 for the request line alone.
    big = raw_exchange(address, b"GET /livez HTTP/1.1\r\nHost: x\r\nX: " + b"a" * 9000 + b"\r\n\r\n")
    assert big.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"), big[:200]
    long = raw_exchange(address, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\n\r\n")
    assert long.startswith(b"HTTP/1.1 414 URI Too Long\r\n"), long[:200]
    # Each refusal closed its own connection, and nothing else.
    assert request(address, "/livez").status == 200
    stop(running)


def test_keep_alive_pipelining_and_connection_close(corral, tmp_path):
    running, address = start(corral, {"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}})
    with connect(address) as sock:
        # Three requests on one connection, one at a time.
        rest = b""
        for target in ("/livez", "/readyz", "/metrics"):
            sock.sendall(f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
            response, rest = read_response(sock, rest)
            assert response.status == 200 and response.headers["connection"] == "keep-alive"
        # Pipelined: three sent at once, answered in order; the last asks
        # to close.
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n"
                     b"HEAD /readyz HTTP/1.1\r\nHost: x\r\n\r\n"
                     b"GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        first, rest = read_response(sock, rest)
        second, rest = read_response(sock, rest, head_only=True)
        third, rest = read_response(sock, rest)
        assert (first.status, first.body) == (200, "ok\n")
        assert second.status == 200 and second.headers["content-type"] == "application/json"
        assert third.status == 404 and third.headers["connection"] == "close"
        assert rest == b"" and sock.recv(100) == b"", "closed after Connection: close"
    # HTTP/1.0 with keep-alive asked for stays open.
    with connect(address) as sock:
        rest = b""
        for _ in range(2):
            sock.sendall(b"GET /livez HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            response, rest = read_response(sock, rest)
            assert response.headers["connection"] == "keep-alive", response
    stop(running)


def test_an_idle_kept_alive_connection_is_closed_after_idle_timeout(corral, tmp_path):
    address = ("127.0.0.1", free_port())
    config = {"http": {"listen": listen_text(address), "idle_timeout": "1s"},
              "groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: livez_answers(address), what="/livez")
    with connect(address, timeout=30) as sock:
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        response, rest = read_response(sock)
        assert response.status == 200 and rest == b""
        started = time.monotonic()
        assert sock.recv(100) == b"", "closed by corral"
        assert time.monotonic() - started >= 0.9
    stop(running)


# ---- bounds ----------------------------------------------------------------------


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


def others_answer(corral, address):
    """What must hold however the endpoint is attacked: the control socket
    and a fresh /livez answer."""
    status = corral.cli("status")
    assert status.returncode == 0 and "running" in status.stdout, status
    assert request(address, "/livez").status == 200


def test_a_slow_client_is_closed_at_its_requests_deadline(corral, tmp_path):
    running, address = start(corral, {"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}})
    with connect(address, timeout=60) as sock:
        sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n")  # and never the empty line
        received = b""
        while chunk := sock.recv(1000):
            received += chunk
        assert received.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), received
    with connect(address, timeout=60) as sock:  # a client that says nothing at all
        assert sock.recv(1000) == b""
    stop(running)


def all_closed_by_corral(sockets):
    """Whether corral closed each of `sockets` (ours still open): EOF or a
    reset, after whatever it said."""
    for sock in sockets:
        sock.setblocking(False)
        try:
            while chunk := sock.recv(65536):
                pass
        except BlockingIOError:
            return False
        except ConnectionResetError:
            pass
    return True


def test_slowloris_costs_corral_nothing_it_keeps(corral, tmp_path, many_fds):
    """Hundreds of connections each dribbling a byte at a time: corral keeps
    at most 64, answers others meanwhile, and closes every one of them (the
    request deadline), while this side keeps them open."""
    running, address = start(corral, {"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}})
    before = fd_count(running.pid)
    slow = []
    try:
        for _ in range(300):
            sock = connect(address)
            sock.setblocking(False)
            slow.append(sock)
        line = b"GET /livez HTTP/1.1\r\nHost: x\r\nX-Slow: "
        for round_number in range(12):
            for sock in slow:
                try:
                    sock.send(line[round_number:round_number + 1])
                except OSError:
                    pass  # closed by corral already: it may
            if round_number % 4 == 0:
                others_answer(corral, address)
            assert fd_count(running.pid) <= before + 64 + 8
            time.sleep(0.25)
        wait_for(lambda: fd_count(running.pid) <= before, timeout=30,
                 what="corral's fds back down")
        wait_for(lambda: all_closed_by_corral(slow), what="every slow connection closed")
    finally:
        for sock in slow:
            sock.close()
    others_answer(corral, address)
    stop(running)


def test_a_thousand_connections_never_lock_others_out(corral, tmp_path, many_fds):
    """1000 connections that send nothing: corral keeps at most 64 (the
    newest), closes the rest at once and those at their deadline; `corral
    status` and another client's /livez are answered throughout."""
    running, address = start(corral, {"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}})
    before = fd_count(running.pid)
    held = []
    try:
        for index in range(1000):
            held.append(connect(address))
            if index % 250 == 249:
                others_answer(corral, address)
                assert fd_count(running.pid) <= before + 64 + 8
        others_answer(corral, address)
        wait_for(lambda: fd_count(running.pid) <= before, timeout=30,
                 what="corral's fds back down")
        wait_for(lambda: all_closed_by_corral(held), what="every connection closed")
    finally:
        for sock in held:
            sock.close()
    others_answer(corral, address)
    stop(running)


# ---- a Unix socket ----------------------------------------------------------------


def test_listening_on_a_unix_socket_made_as_the_control_socket_is(corral, tmp_path):
    path = tmp_path / "run" / "http.sock"
    running, _ = start(corral, {"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}},
                       address=path)
    assert stat.S_ISSOCK(path.stat().st_mode)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert request(path, "/livez").body == "ok\n"
    assert assert_agree(corral, path) == ["ready"]
    stop(running)
    assert not path.exists(), "removed at exit"

    # A socket left behind is replaced; anything else at the path is not.
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()
    running, _ = start(corral, {"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}},
                       address=path)
    assert request(path, "/livez").status == 200
    stop(running)
    path.write_text("not a socket")
    result = corral.run(http_config({"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}},
                                    str(path)))
    assert result.returncode == 1, result
    assert f"corral: http.listen: {path} exists and is not a socket: refusing to replace it " \
        "(remove it, or set http.listen to another path)" in result.stderr, result.stderr
    assert path.read_text() == "not a socket"


def test_a_socket_directory_others_could_replace_the_socket_in_is_refused(corral, tmp_path):
    """As log.dir: a directory owned by another user, or that group or
    others can write and is not sticky, is refused: at its place by
    `corral check`, at the start, and at a reload. (corral looks again
    when it makes the socket, for a directory made or changed after the
    config was read.) A sticky one owned by root (/tmp) is fine."""
    tasks = {"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}}
    theirs, shared, sticky = tmp_path / "theirs", tmp_path / "shared", tmp_path / "sticky"
    for directory, mode in ((theirs, 0o755), (shared, 0o777), (sticky, 0o1777)):
        directory.mkdir()
        directory.chmod(mode)
    os.chown(theirs, 65534, 65534)
    why = {
        theirs: f"{theirs}/http.sock: refused: its directory {theirs} is owned by uid 65534, "
                "not by corral (uid 0) or root: its owner could replace the socket (put it "
                "in a directory of corral's own)",
        shared: f"{shared}/http.sock: refused: its directory {shared} is writable by group or "
                "others (mode 0777) and not sticky: they could replace the socket (make it "
                "writable by its owner only, or put the socket in a directory of corral's "
                "own)",
    }
    for directory, message in why.items():
        path = corral.config(json.dumps(http_config(tasks, str(directory / "http.sock"))))
        result = corral.check(path)
        assert result.returncode == 1, result
        assert f"{path}:1:" in result.stderr and f"http.listen: {message}" in result.stderr, \
            result.stderr
        result = corral.run(path)
        assert result.returncode == 1 and message in result.stderr, result
        assert not (directory / "http.sock").exists()

    # A directory not there yet is judged where corral would make it: it
    # would be corral's own, but their owner could move it aside.
    path = corral.config(json.dumps(http_config(tasks, str(theirs / "run" / "http.sock"))))
    message = (f"{theirs}/run/http.sock: refused: {theirs}, where corral would make its "
               f"directory {theirs}/run, is owned by uid 65534, not by corral (uid 0) or root")
    result = corral.check(path)
    assert result.returncode == 1 and f"http.listen: {message}" in result.stderr, result
    result = corral.run(path)
    assert result.returncode == 1 and message in result.stderr, result
    assert not (theirs / "run").exists()

    # A reload to such a directory is refused; the socket corral has
    # serves on. A sticky directory owned by root is fine.
    running, address = start(corral, tasks, address=sticky / "http.sock")
    result = reload(corral, running.config_path, http_config(tasks, str(shared / "http.sock")))
    assert result.returncode != 0 and why[shared] in result.stdout + result.stderr, result
    assert request(address, "/livez").status == 200
    stop(running)


# ---- config and reload ------------------------------------------------------------


def test_config_errors_are_at_their_place(corral, tmp_path):
    text = ("groups: {g: {tasks: {t: {command: [sleep, '1']}}}}\n"
            "http:\n"
            "  listen: localhost:9090\n"
            "  idle_timeout: 10ms\n")
    path = corral.config(text)
    result = corral.check(path)
    assert result.returncode != 0, result
    assert f"{path}:3:11: http.listen: \"localhost:9090\": names a host, not an address" \
        in result.stderr, result.stderr
    assert f"{path}:4:17: http.idle_timeout: must be at least 1s, not \"10ms\"" \
        in result.stderr, result.stderr
    result = corral.check(corral.config("groups: {g: {tasks: {t: {command: [x]}}}}\n"
                                        "http: {listn: '127.0.0.1:1'}\n"))
    assert "http: unknown key \"listn\"; did you mean \"listen\"?" in result.stderr, result


def test_a_config_without_http_listens_on_nothing(corral, tmp_path):
    running = corral.start({"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}})
    corral.wait_control(running)
    sockets = [os.readlink(f"/proc/{running.pid}/fd/{fd}")
               for fd in os.listdir(f"/proc/{running.pid}/fd")]
    inodes = {target[len("socket:["):-1] for target in sockets if target.startswith("socket:[")}
    listening = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as lines:
            next(lines)
            listening += [line.split()[9] for line in lines if line.split()[3] == "0A"]
    assert not inodes & set(listening), "corral listens on TCP without http:"
    stop(running)


def reload(corral, config_path, config):
    config_path.write_text(json.dumps(config))
    return corral.cli("reload")


def test_a_reload_rebinds_and_says_so(corral, tmp_path):
    base = {"groups": {"g": {"tasks": {"t": {"command": sh(IDLE)}}}}}
    first = ("127.0.0.1", free_port())
    running, _ = start(corral, base, address=first)
    config_path = running.config_path

    # Nothing of http changed: nothing said, the same socket.
    result = reload(corral, config_path, http_config(base, listen_text(first)))
    assert result.returncode == 0 and "http:" not in result.stdout, result
    # Only the idle timeout: the same socket too.
    config = http_config(base, listen_text(first))
    config["http"]["idle_timeout"] = "2s"
    result = reload(corral, config_path, config)
    assert result.returncode == 0, result
    assert "  http: idle_timeout 2s (was 1m)" in result.stdout, result.stdout
    assert request(first, "/livez").status == 200

    # Another port: the old one is let go.
    second = ("127.0.0.1", free_port())
    result = reload(corral, config_path, http_config(base, listen_text(second)))
    assert result.returncode == 0, result
    assert f"  http: listening on {listen_text(second)} (was listening on " \
        f"{listen_text(first)})" in result.stdout, result.stdout
    assert request(second, "/livez").status == 200
    with pytest.raises(ConnectionRefusedError):
        request(first, "/livez")

    # The same port on every address (the old socket held it).
    wide = ("0.0.0.0", second[1])
    result = reload(corral, config_path, http_config(base, listen_text(wide)))
    assert result.returncode == 0, result
    assert request(second, "/livez").status == 200

    # A port someone else holds: refused, the endpoint where it was.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()
        result = reload(corral, config_path, http_config(base, listen_text(busy)))
        assert result.returncode == 1, result
        assert f"http.listen {listen_text(busy)}: Address already in use; nothing was applied" \
            in result.stderr, result.stderr
    assert request(second, "/livez").status == 200

    # Off, then on again on a Unix socket.
    result = reload(corral, config_path, base)
    assert result.returncode == 0 and f"  http: off (was listening on {listen_text(wide)})" \
        in result.stdout, result
    with pytest.raises(ConnectionRefusedError):
        request(second, "/livez")
    path = tmp_path / "http.sock"
    result = reload(corral, config_path, http_config(base, str(path)))
    assert result.returncode == 0 and f"  http: listening on {path} (was off)" in result.stdout
    assert request(path, "/livez").status == 200
    # --dry-run says what would change, and changes nothing.
    third = ("127.0.0.1", free_port())
    config_path.write_text(json.dumps(http_config(base, listen_text(third))))
    result = corral.cli("reload", "--dry-run")
    assert f"  http: would be listening on {listen_text(third)} (was listening on {path})" \
        in result.stdout, result
    assert request(path, "/livez").status == 200
    stop(running)
    assert not path.exists()


def test_a_waiting_task_says_what_for_and_a_crashed_one_its_restart(corral, tmp_path):
    # What status says a pending task waits for, /readyz and status --ready
    # say too; a task between two runs says it restarts.
    port = free_port()
    config = {"groups": {"g": {"tasks": {
        "app": {"command": sh(IDLE), "wait_for": [{"tcp": f"127.0.0.1:{port}",
                                                   "interval": "100ms"}]},
        "crash": {"command": ["false"], "restart": {"delay": "1m"}},
    }}}}
    running, address = start(corral, config)
    wait_for(lambda: "Connection refused" in (corral.task_status("g/app")["waiting_for"] or ""),
             what="app's wait said")
    wait_for(lambda: corral.task_status("g/crash").get("next_restart_in_ms"),
             what="crash waiting out its delay")
    lines = assert_agree(corral, address)
    assert lines == [f"g/app: not ready (pending, waits for tcp 127.0.0.1:{port} (last: "
                     f"connect 127.0.0.1:{port}: Connection refused))",
                     "g/crash: not ready (pending, restarts after its delay)"], lines
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_refused_connections_are_said_once_per_peer_then_summed_up(corral, tmp_path):
    """Every one of the 64 connections busy answering a /metrics nobody
    reads (400 tasks, about 330 KB: more than a Unix socket's send buffer,
    net.core.wmem_default, 208 KiB by default, holds), each
    new connection is refused with a 503; corral's log says the first in
    full and sums up the rest in one line, not one line each (issue 36)."""
    config = {"groups": {"g": {"tasks": {"idle": {"command": sh(IDLE), "instances": 400}}}}}
    running, address = start(corral, config, tmp_path / "http.sock")
    holders = []
    for _ in range(64):
        sock = connect(address)
        sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: corral\r\n\r\n")
        holders.append(sock)
    # A response begun and never read stays being written.
    for sock in holders:
        wait_for(lambda: sock.recv(1, socket.MSG_PEEK), what="a /metrics response begun")
    statuses = []
    for _ in range(100):
        sock = connect(address)
        try:
            sock.sendall(b"GET /livez HTTP/1.1\r\nHost: corral\r\n\r\n")
        except OSError:
            pass  # refused before the request went out: the 503 is there
        statuses.append(sock.recv(12))
        sock.close()
    assert statuses == [b"HTTP/1.1 503"] * 100, statuses
    summary = "http: refused 99 more connections from uid 0 in the last 10 s: all 64 " \
              "connections were being answered (503)"
    wait_for(lambda: summary in running.stderr_text(), timeout=30, what="the summary line")
    lines = [l for l in running.stderr_text().splitlines() if "http: refused" in l]
    assert lines == ["corral: http: refused a connection from uid 0: all 64 connections "
                     "were being answered (503)", "corral: " + summary], lines
    for sock in holders:
        sock.close()
    stop(running)
