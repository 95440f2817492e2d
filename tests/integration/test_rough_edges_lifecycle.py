"""Rough edges of the lifecycle found in a user trial (issue 12, section 4):
a readiness timeout stops the task as any stop does, and `restart
--running` waits for readiness gates as `restart --all` does. Asserted
from corral's events and from marks the tasks and hooks write."""

import os
import signal
import stat

from conftest import sh, wait_for

IDLE = "exec sleep 1000"


def hook(tmp_path, name, log):
    """A hook that appends NAME to `log`."""
    path = tmp_path / f"{name}.hook"
    path.write_text(f"#!/bin/sh\necho {name} >> {log}\necho '{{}}'\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def lines(path):
    return path.read_text().splitlines() if path.exists() else []


def never_ready_sidecar(command, **task):
    return {"command": command, "lifecycle": {"hook": "prestart", "sidecar": True},
            "readiness": {"notify": "systemd", "timeout": "1s"},
            "restart": {"policy": "never"}, **task}


def test_a_readiness_timeout_runs_prekill_hooks_then_the_kill_signal(corral, tmp_path):
    log = tmp_path / "log"
    # The task cleans up on its kill signal (SIGINT here), as a daemon
    # does on SIGTERM: the timeout must give it the chance.
    side = never_ready_sidecar(
        sh(f"trap 'echo task-got-INT >> {log}; exit 0' INT; "
           "while :; do sleep 0.05; done"),
        kill={"signal": "SIGINT", "timeout": "5s"},
        hooks=[{"name": "prekill", "stage": "prekill",
                "exec": [hook(tmp_path, "prekill", log)]}])
    config = {"groups": {"g": {"tasks": {"side": side, "app": {"command": sh(IDLE)}}}}}
    result = corral.run(config)
    assert lines(log) == ["prekill", "task-got-INT"], result
    assert not result.events.of_task("side", "kill_timeout"), result.events
    # Its clean exit does not hide the failed start: failed for good.
    assert result.returncode == 1, result
    assert result.events.of_task("side", "not_ready")[0]["message"] == \
        "not ready within 1s: stopping it"
    assert [e["message"] for e in result.events.of_task("side", "exited")] == \
        ["exited with code 0"]
    assert not result.events.of_task("app", "started"), result.events


def test_a_readiness_timeout_escalates_after_the_kill_timeout(corral, tmp_path):
    side = never_ready_sidecar(sh("trap '' TERM; while :; do sleep 0.05; done"),
                               kill={"timeout": "300ms"})
    config = {"groups": {"g": {"tasks": {"side": side, "app": {"command": sh(IDLE)}}}}}
    result = corral.run(config)
    events = result.events
    assert events.task_index("side", "not_ready") < events.task_index("side", "killing") \
        < events.task_index("side", "kill_timeout") < events.task_index("side", "exited")
    assert events.of_task("side", "exited")[0]["message"] == "killed by SIGKILL"
    assert result.returncode == 128 + signal.SIGKILL, result


def test_restart_running_waits_for_the_readiness_gate(corral, tmp_path):
    ready = tmp_path / "ready"
    # The sidecar is ready 0.5 s after each start (its probe sees the
    # file); main must not start again before that.
    side = {"command": sh(f"rm -f {ready}; sleep 0.5; touch {ready}; {IDLE}"),
            "lifecycle": {"hook": "prestart", "sidecar": True},
            "readiness": {"exec": ["test", "-e", str(ready)], "interval": "100ms"}}
    config = {"groups": {"g": {"tasks": {"side": side, "app": {"command": sh(IDLE)}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/app")["state"] == "running", what="app to run")
    before = len(running.events())
    assert corral.cli("restart", "--running", "g").returncode == 0
    wait_for(lambda: len(running.events().of_task("app", "started")) == 2,
             timeout=20, what="app to start again")
    events = type(running.events())(running.events()[before:])
    assert events.task_index("side", "started") < events.task_index("side", "ready") \
        < events.task_index("app", "started"), events
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
