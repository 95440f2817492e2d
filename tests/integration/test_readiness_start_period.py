"""A readiness probe's failures while the task starts (docs/config.md,
"Probe failures", readiness.start_period): a service that takes a moment
to listen is not news, so they are not said, as Kubernetes' startupProbe
and compose's start_period keep them quiet; if the start fails (no
readiness within readiness.timeout), they are said with the failure, and
without a timeout, once the start period is over. The probe's record in
`status --json` has them all along. Issue 28, item 20."""

import json
import signal
import socket
import sys

from conftest import wait_for

PYTHON = sys.executable
NEVER = {"policy": "never"}


def free_port():
    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        return probe_socket.getsockname()[1]


def task_status(corral, name):
    result = corral.cli("status", "--json")
    assert result.returncode == 0, result
    return next(task for group in json.loads(result.stdout)["groups"]
                for task in group["tasks"] if task["task"] == name)


def test_a_normal_boot_says_no_refused_connections(corral):
    port = free_port()
    config = {"groups": {"g": {"tasks": {
        # Listens after a second: ten refused probes, each 100ms apart.
        "web": {"command": ["/bin/sh", "-c", f"sleep 1; exec {PYTHON} -m http.server "
                            f"{port} --bind 127.0.0.1"],
                "readiness": {"tcp": port, "interval": "100ms"}},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: running.events().of_task("web", "ready"), timeout=30, what="ready")
    record = task_status(corral, "g/web")["probes"]["readiness"]
    assert record["passed"] is True, record
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    assert not result.events.of_task("web", "probe_failed"), result.events.of_task("web")
    assert "readiness probe failed" not in running.stderr_text()


def test_a_start_that_fails_says_the_probe_failures_with_the_failure(corral):
    port = free_port()  # nobody listens
    config = {"groups": {"g": {"tasks": {
        "web": {"command": ["sleep", "100"], "restart": NEVER,
                "readiness": {"tcp": port, "interval": "100ms", "timeout": "2s"}},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    # Inside the start period: quiet, and the record has the failures.
    wait_for(lambda: (task_status(corral, "g/web")["probes"]["readiness"]
                      ["consecutive_failures"]) >= 3, what="three failed probes")
    assert not running.events().of_task("web", "probe_failed")
    result = running.wait()
    assert result.returncode != 0, result  # the start failed, and corral with it
    events = result.events.of_task("web")
    names = [e["event"] for e in events]
    failed = names.index("probe_failed")
    assert names.count("probe_failed") == 1, events
    assert names[failed + 1] == "not_ready", events
    said = events[failed]["message"]
    assert said.startswith("readiness probe failed: "), said
    assert f"failures in a row while it started, last: connect 127.0.0.1:{port}: " \
           "Connection refused" in said, said
    assert "not ready within 2s" in events[failed + 1]["message"], events
    assert "g/web: readiness probe failed: " in result.stderr


def test_without_a_timeout_the_failures_are_said_once_the_start_period_ends(corral):
    port = free_port()
    config = {"groups": {"g": {"tasks": {
        "web": {"command": ["sleep", "100"],
                "readiness": {"tcp": port, "interval": "100ms", "start_period": "1s"}},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: running.events().of_task("web", "probe_failed"), what="probe_failed")
    said = running.events().of_task("web", "probe_failed")[0]["message"]
    assert "failures in a row while it started, last: connect" in said, said
    assert said.endswith("(trying again every 100ms)"), said
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
