"""readiness.log (docs/config.md, "Readiness"): process-compose's
ready_log_line. A task is ready when a line of its output (stdout or
stderr) matches an extended regular expression; until then the stages and
`after: ready` wait for it, and its readiness timeout fails the start. With
`continuous: true`, a line matching `not_ready` makes it not ready until the
next ready line. Against the real thing where it is cheap: redis-server
prints "Ready to accept connections" when it is."""

import os
import re
import shutil
import signal

import pytest

from conftest import sh, wait_for
from helpers_net import free_port
from helpers_readiness import status_json


def echo_from(fifo):
    """A task that prints what the test writes into its fifo, line by line."""
    return sh(f"exec 3<>{fifo}; while read -r line <&3; do echo \"$line\"; done")


def make_fifo(tmp_path, name="say"):
    path = tmp_path / name
    os.mkfifo(path)
    return path


def say(fifo, line):
    with open(fifo, "w") as out:
        out.write(line + "\n")


def readiness_events(running, task):
    return [(e["event"], e["message"]) for e in running.events()
            if e.get("task") == task and e["event"] in ("ready", "not_ready")]


def test_the_task_is_ready_at_the_first_matching_line_and_not_before(corral, tmp_path):
    fifo = make_fifo(tmp_path)
    config = {"groups": {"g": {"tasks": {
        "db": {"command": echo_from(fifo),
               "readiness": {"log": "ready to accept connections$"}},
        "app": {"command": sh(f"touch {tmp_path / 'app-started'}; exec sleep 1000"),
                "after": {"db": "ready"}},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/db"]["state"] == "running", what="db running")

    say(fifo, "loading the data set")
    say(fifo, "ready to accept connections: not yet")  # anchored: no match
    wait_for(lambda: "loading the data set" in corral.cli("logs", "g/db").stdout,
             what="the first lines read")
    assert status_json(corral)["g/db"]["ready"] is False
    assert corral.cli("status", "--ready").returncode == 1
    assert not (tmp_path / "app-started").exists()

    say(fifo, "* ready to accept connections")
    wait_for(lambda: (tmp_path / "app-started").exists(), what="app started once db is ready")
    assert status_json(corral)["g/db"]["ready"] is True
    assert readiness_events(running, "db") == [
        ("ready", 'ready (line "* ready to accept connections")')]
    assert corral.cli("status", "--ready").returncode == 0
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_line_on_stderr_counts_too(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"t": {
        "command": sh("sleep 0.2; echo 'listening on :8080' >&2; exec sleep 1000"),
        "readiness": {"log": "listening on :[0-9]+"}}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/t"]["ready"], what="ready from stderr")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_no_matching_line_within_the_timeout_fails_the_start(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"t": {
        "command": sh("echo starting; exec sleep 1000"),
        "readiness": {"log": "^ready$", "timeout": "500ms"},
        "restart": {"policy": "never"}}}}}}
    result = corral.run(config)
    assert result.returncode != 0
    messages = [e["message"] for e in result.events.of_task("t", "not_ready")]
    assert messages, result.stderr
    assert "ready" not in [e["event"] for e in result.events.of_task("t")]


def test_continuous_a_not_ready_line_takes_readiness_away_until_the_next_ready_line(
        corral, tmp_path):
    fifo = make_fifo(tmp_path)
    config = {"groups": {"g": {"tasks": {"replica": {
        "command": echo_from(fifo),
        "readiness": {"log": {"ready": "sync with primary succeeded",
                              "not_ready": "connection with primary lost"},
                      "continuous": True}}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/replica"]["state"] == "running", what="running")
    say(fifo, "connection with primary lost")  # not ready yet: nothing to lose
    say(fifo, "sync with primary succeeded")
    wait_for(lambda: status_json(corral)["g/replica"]["ready"], what="ready")
    pid = status_json(corral)["g/replica"]["pid"]

    say(fifo, "connection with primary lost")
    wait_for(lambda: status_json(corral)["g/replica"]["ready_lost"], what="not ready")
    status = corral.cli("status", "--ready")
    assert status.returncode == 1
    assert "g/replica: not ready (running, was ready" in status.stdout

    say(fifo, "sync with primary succeeded")
    wait_for(lambda: status_json(corral)["g/replica"]["ready"], what="ready again")
    assert readiness_events(running, "replica") == [
        ("ready", 'ready (line "sync with primary succeeded")'),
        ("not_ready", 'not ready: line "connection with primary lost"'),
        ("ready", 'ready again (line "sync with primary succeeded")'),
    ]
    assert status_json(corral)["g/replica"]["pid"] == pid  # readiness is not health
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_each_run_waits_for_its_own_line(corral, tmp_path):
    runs = tmp_path / "runs"
    config = {"groups": {"g": {"tasks": {"t": {
        # The second run never says it is ready.
        "command": sh(f"echo x >> {runs}; if [ $(wc -l < {runs}) -eq 1 ]; then "
                      "echo READY; fi; exec sleep 1000"),
        "readiness": {"log": "^READY$"}}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/t"]["ready"], what="first run ready")
    assert corral.cli("restart", "g/t").returncode == 0
    wait_for(lambda: runs.exists() and len(runs.read_text().split()) == 2, what="second run")
    wait_for(lambda: status_json(corral)["g/t"]["state"] == "running", what="running")
    assert status_json(corral)["g/t"]["ready"] is False
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_reload_changes_the_pattern_in_place(corral, tmp_path):
    fifo = make_fifo(tmp_path)
    config = {"groups": {"g": {"tasks": {"t": {
        "command": echo_from(fifo), "readiness": {"log": "^old$"}}}}}}
    running = corral.start(corral.config(config, name="reload.yaml"))
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/t"]["state"] == "running", what="running")
    pid = status_json(corral)["g/t"]["pid"]
    config["groups"]["g"]["tasks"]["t"]["readiness"] = {"log": "^new$"}
    corral.config(config, name="reload.yaml")
    reload = corral.cli("reload")
    assert reload.returncode == 0, reload
    assert "readiness" in reload.stdout, reload.stdout
    say(fifo, "old")
    say(fifo, "new")
    wait_for(lambda: status_json(corral)["g/t"]["ready"], what="ready by the new pattern")
    assert readiness_events(running, "t") == [("ready", 'ready (line "new")')]
    assert status_json(corral)["g/t"]["pid"] == pid
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


@pytest.mark.skipif(not shutil.which("redis-server"), reason="redis-server is not installed")
def test_redis_is_ready_when_it_says_so(corral, tmp_path):
    port = free_port()
    config = {"groups": {"g": {"tasks": {
        "redis": {"command": ["redis-server", "--port", str(port), "--save", "",
                              "--dir", str(tmp_path)],
                  "readiness": {"log": "Ready to accept connections", "timeout": "20s"}},
        "client": {"command": sh(f"redis-cli -p {port} ping > {tmp_path / 'pong'}; "
                                 "exec sleep 1000"),
                   "after": {"redis": "ready"}},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: (tmp_path / "pong").exists() and (tmp_path / "pong").read_text(),
             timeout=20, what="the client's PONG")
    assert (tmp_path / "pong").read_text().strip() == "PONG"
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


@pytest.mark.parametrize("readiness, words", [
    ({"log": "(unclosed"}, ["readiness.log", "not an extended regular expression"]),
    ({"log": ""}, ["readiness.log", "empty"]),
    ({"log": {"not_ready": "x"}}, ["readiness.log", "missing \"ready\""]),
    ({"log": {"ready": "x", "not_ready": "y"}}, ["\"not_ready\" only goes with"]),
    ({"log": "x", "continuous": True}, ["readiness.continuous", "not_ready: REGEX"]),
    ({"log": "x", "exec": ["true"]}, ["\"log\" and \"exec\" exclude each other"]),
    ({"log": "x", "interval": "1s"}, ["readiness.interval", "read as it comes"]),
    ({"log": {"ready": "x", "nt_ready": "y"}}, ["nt_ready"]),
])
def test_check_refuses_bad_log_readiness_at_its_place(corral, readiness, words):
    config = {"groups": {"g": {"tasks": {"t": {"command": ["/bin/true"],
                                               "readiness": readiness}}}}}
    result = corral.check(config)
    assert result.returncode == 1, result
    assert re.search(r"\.yaml:\d+:\d+: ", result.stderr), result.stderr
    for word in words:
        assert word in result.stderr, result.stderr
