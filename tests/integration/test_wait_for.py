"""wait_for (docs/config.md, "Outside dependencies"): a task waits, before it
starts, for targets outside the config: a TCP port or an HTTP URL (by host
name or address) or a path, checked every interval from corral's loop; a
target's timeout fails the start with a message that names it, as compose's
`up --wait` does; status says what is waited for. The servers are real
(python's http.server, a listening socket); names go through the resolver
(c-ares) and /etc/hosts."""

import os
import re
import signal
import socket
import time

import pytest

from conftest import sh, wait_for
from helpers_net import free_port, http_server
from helpers_readiness import status_json

IDLE = "exec sleep 1000"


def started(tmp_path, name="started"):
    """The task's command: it marks that it ran, then idles."""
    return sh(f"touch {tmp_path / name}; {IDLE}")


def waiting_for(corral, task):
    return status_json(corral)[task].get("waiting_for") or ""


def test_a_task_starts_once_a_port_by_host_name_accepts(corral, tmp_path):
    port = free_port()
    config = {"groups": {"g": {"tasks": {"app": {
        "command": started(tmp_path),
        "wait_for": [{"tcp": f"localhost:{port}", "interval": "100ms"}]}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "Connection refused" in waiting_for(corral, "g/app"),
             what="status naming the target and its last failure")
    assert waiting_for(corral, "g/app").startswith(f"waits for tcp localhost:{port} (last: ")
    assert status_json(corral)["g/app"]["state"] == "pending"
    assert not (tmp_path / "started").exists()

    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(8)
    try:
        wait_for(lambda: (tmp_path / "started").exists(), what="the start once the port accepts")
        assert status_json(corral)["g/app"]["state"] == "running"
        assert f"g/app: wait_for tcp localhost:{port}: reached" in running.stderr_text()
    finally:
        listener.close()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_an_http_url_must_answer_200_to_399(corral, tmp_path):
    port = free_port()
    site = tmp_path / "site"
    site.mkdir()
    config = {"groups": {"g": {"tasks": {
        "auth": {"command": http_server(port) + ["--directory", str(site)]},
        "app": {"command": started(tmp_path),
                "wait_for": [{"http": f"http://localhost:{port}/healthz",
                              "interval": "100ms"}]}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "HTTP 404" in waiting_for(corral, "g/app"), what="a 404 said in status")
    assert not (tmp_path / "started").exists()
    (site / "healthz").write_text("ok")
    wait_for(lambda: (tmp_path / "started").exists(), what="the start once the URL answers 200")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_every_target_must_pass_and_a_path_must_exist(corral, tmp_path):
    port = free_port()
    token = tmp_path / "secrets" / "token"
    config = {"groups": {"g": {"tasks": {"app": {
        "command": started(tmp_path),
        "wait_for": [{"path": str(token), "interval": "100ms"},
                     {"tcp": f"127.0.0.1:{port}", "interval": "100ms"}]}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: waiting_for(corral, "g/app").startswith(f"waits for path {token}"),
             what="the path waited for")
    token.parent.mkdir()
    token.write_text("s3cret")
    wait_for(lambda: waiting_for(corral, "g/app").startswith(f"waits for tcp 127.0.0.1:{port}"),
             what="the port waited for, the path being there")
    assert not (tmp_path / "started").exists()
    listener = socket.create_server(("127.0.0.1", port))
    try:
        wait_for(lambda: (tmp_path / "started").exists(), what="the start")
    finally:
        listener.close()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_timeout_fails_the_start_and_names_the_target(corral, tmp_path):
    port = free_port()
    config = {"groups": {"g": {"tasks": {"app": {
        "command": started(tmp_path),
        "wait_for": [{"tcp": f"127.0.0.1:{port}", "timeout": "600ms", "interval": "100ms"}]}}}}}
    result = corral.run(config)
    assert result.returncode != 0, result
    assert not (tmp_path / "started").exists()
    failures = [e["message"] for e in result.events.of_task("app")
                if e["event"] in ("start_failed", "not_restarting")]
    text = " ".join(failures)
    assert re.search(rf"tcp 127\.0\.0\.1:{port} not reached within 600ms "
                     rf"\(g/app: wait_for\[0\]\.timeout; last: connect 127\.0\.0\.1:{port}: "
                     "Connection refused\\)", text), failures


def test_a_name_that_does_not_resolve_is_said(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"app": {
        "command": started(tmp_path),
        "wait_for": [{"tcp": "no-such-host.invalid:5432", "timeout": "3s"}]}}}}}
    result = corral.run(config)
    assert result.returncode != 0, result
    text = " ".join(e["message"] for e in result.events.of_task("app"))
    assert "tcp no-such-host.invalid:5432 not reached within 3s" in text, text
    assert "resolve no-such-host.invalid" in text or "timed out" in text, text


def test_each_start_waits_afresh(corral, tmp_path):
    flag = tmp_path / "db-up"
    flag.touch()
    runs = tmp_path / "runs"
    config = {"groups": {"g": {"tasks": {"app": {
        "command": sh(f"echo run >> {runs}; {IDLE}"),
        "wait_for": [{"path": str(flag), "interval": "100ms"}]}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/app"]["state"] == "running", what="first run")
    flag.unlink()
    assert corral.cli("restart", "g/app").returncode == 0
    wait_for(lambda: waiting_for(corral, "g/app").startswith(f"waits for path {flag}"),
             what="the restart waiting again")
    assert runs.read_text().count("run") == 1
    flag.touch()
    wait_for(lambda: runs.read_text().count("run") == 2, what="the second run")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_corral_leaks_no_fd_over_many_checks(corral, tmp_path):
    port = free_port()
    config = {"groups": {"g": {"tasks": {"app": {
        "command": started(tmp_path),
        "wait_for": [{"tcp": f"localhost:{port}", "interval": "20ms"}]}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "Connection refused" in waiting_for(corral, "g/app"), what="checks")
    fds = len(os.listdir(f"/proc/{running.popen.pid}/fd"))
    time.sleep(1.0)  # some 50 more checks, each a lookup and a connection
    assert len(os.listdir(f"/proc/{running.popen.pid}/fd")) <= fds + 2
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


@pytest.mark.parametrize("entry, words", [
    ({"tcp": "db"}, ["wait_for[0].tcp", "must be HOST:PORT"]),
    ({"tcp": "db:70000"}, ["wait_for[0].tcp", "must be HOST:PORT"]),
    ({"tcp": "bad host:5432"}, ["wait_for[0].tcp"]),
    ({"http": "https://auth/healthz"}, ["wait_for[0].http", "https is not spoken"]),
    ({"http": "auth:8080/healthz"}, ["wait_for[0].http", "must be a URL"]),
    ({"http": "http://auth:8080/healthz?full=1#top"}, ["wait_for[0].http", "fragment"]),
    ({"http": "http://auth#top"}, ["wait_for[0].http", "fragment"]),
    ({"path": "relative/file"}, ["wait_for[0].path", "absolute"]),
    ({"tcp": "db:5432", "path": "/x"}, ["\"tcp\" and \"path\" exclude each other"]),
    ({"timeout": "1s"}, ["wait_for[0]", "missing the target"]),
    ({"tcp": "db:5432", "timout": "1s"}, ["timout", "timeout"]),
    ({"tcp": "db:5432", "interval": "0s"}, ["wait_for[0].interval", "longer than 0"]),
])
def test_check_refuses_a_bad_target_at_its_place(corral, entry, words):
    config = {"groups": {"g": {"tasks": {"app": {"command": ["/bin/true"],
                                                 "wait_for": [entry]}}}}}
    result = corral.check(config)
    assert result.returncode == 1, result
    assert re.search(r"\.yaml:\d+:\d+: ", result.stderr), result.stderr
    for word in words:
        assert word in result.stderr, result.stderr


def test_check_accepts_each_kind_of_target(corral):
    config = {"groups": {"g": {"tasks": {"app": {"command": ["/bin/true"], "wait_for": [
        {"tcp": "db.example.internal:5432", "timeout": "2m"},
        {"tcp": "10.0.0.5:6379"},
        {"tcp": "[fd00::5]:6379", "interval": "500ms"},
        {"http": "http://auth:8080/healthz?full=1"},
        {"http": "http://10.0.0.7"},
        {"path": "/run/secrets/db-password"},
    ]}}}}}
    result = corral.check(config)
    assert result.returncode == 0, result
