"""Readiness and health: a task that says it is ready (sd_notify, a notify
fd, an exec probe) gates the next stage; a readiness timeout fails the
start; a failing health probe restarts the task; `status --ready` answers
probes. Orders are asserted from timestamps the tasks write."""

import os
import signal
import socket

from conftest import mark, marks_by_name, read_marks, sh, wait_for
from helpers_readiness import IDLE, NOTIFY


def group(tasks):
    return {"groups": {"g": {"tasks": tasks}}}


def sidecar(command, readiness, **task):
    return {"command": command, "lifecycle": {"hook": "prestart", "sidecar": True},
            "readiness": readiness, **task}


def main_task(marks, **task):
    """Marks when it starts, then runs until stopped."""
    return {"command": sh(f"{mark(marks, 'main-start')}; {IDLE}"), **task}


def gates_main(corral, marks, side_command, readiness):
    """Runs a sidecar that says it is ready after a while, and a main task;
    returns the marks once main started, corral stopped."""
    config = group({"side": sidecar(side_command, readiness), "app": main_task(marks)})
    running = corral.start(config)
    # Generous: python3 starts slowly on a loaded machine.
    wait_for(lambda: "main-start" in marks_by_name(marks), timeout=30, what="main to start")
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    return marks_by_name(marks), result


def test_sd_notify_ready_gates_the_main_stage(corral, tmp_path):
    marks = tmp_path / "marks"
    side = sh(f"{mark(marks, 'side-start')}; sleep 0.4; {mark(marks, 'side-ready')}; "
              f"{NOTIFY} 'STATUS=warmed up\nREADY=1'; {IDLE}")
    m, result = gates_main(corral, marks, side, {"notify": "systemd"})
    # Started is not ready: main waited for READY=1, not for the start.
    assert m["side-start"] + 0.3 < m["side-ready"] < m["main-start"], m
    ready = result.events.of_task("side", "ready")
    assert ready and ready[0]["message"] == "ready (READY=1)", result.events


def test_notify_fd_ready_gates_the_main_stage(corral, tmp_path):
    marks = tmp_path / "marks"
    side = sh(f"{mark(marks, 'side-start')}; sleep 0.4; {mark(marks, 'side-ready')}; "
              f"echo >&4; exec 4>&-; {IDLE}")
    m, result = gates_main(corral, marks, side, {"notify": "fd", "fd": 4})
    assert m["side-start"] + 0.3 < m["side-ready"] < m["main-start"], m
    assert result.events.of_task("side", "ready")[0]["message"] == "ready (newline on fd 4)"


def test_exec_probe_ready_gates_the_main_stage(corral, tmp_path):
    marks = tmp_path / "marks"
    flag = tmp_path / "flag"
    side = sh(f"{mark(marks, 'side-start')}; sleep 0.4; {mark(marks, 'side-ready')}; "
              f"touch {flag}; {IDLE}")
    m, result = gates_main(corral, marks, side,
                           {"exec": ["test", "-e", str(flag)], "interval": "50ms"})
    assert m["side-start"] + 0.3 < m["side-ready"] < m["main-start"], m
    assert result.events.of_task("side", "ready")[0]["message"] == "ready (probe passed)"


def test_a_main_task_with_readiness_holds_poststart(corral, tmp_path):
    marks = tmp_path / "marks"
    app = sh(f"{mark(marks, 'main-start')}; sleep 0.4; {mark(marks, 'main-ready')}; "
             f"{NOTIFY} READY=1; {IDLE}")
    config = group({
        "app": {"command": app, "readiness": {"notify": "systemd"}},
        "after": {"command": sh(f"{mark(marks, 'poststart')}"),
                  "lifecycle": {"hook": "poststart"}},
    })
    running = corral.start(config)
    wait_for(lambda: "poststart" in marks_by_name(marks), what="the poststart task")
    m = marks_by_name(marks)
    assert m["main-start"] + 0.3 < m["main-ready"] < m["poststart"], m
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_readiness_timeout_fails_the_start(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "side": sidecar(sh(f"{mark(marks, 'side-start')}; {IDLE}"),
                        {"notify": "systemd", "timeout": "1s"},
                        # mode fail: a sidecar's default, delay, retries for ever
                        restart={"policy": "on-failure", "attempts": 1, "delay": "100ms",
                                 "mode": "fail"}),
        "app": main_task(marks),
    })
    result = corral.run(config)
    # Twice not ready in time (the first run and its one restart), each
    # time stopped with its kill signal: failed for good, and main never
    # started.
    assert result.returncode == 128 + signal.SIGTERM, result
    not_ready = result.events.of_task("side", "not_ready")
    assert [e["message"] for e in not_ready] == ["not ready within 1s: stopping it"] * 2
    assert [n for n, _ in read_marks(marks)] == ["side-start", "side-start"]


def test_notifications_from_other_processes_are_ignored(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({"side": sidecar(sh(f"{mark(marks, 'side-start')}; {IDLE}"),
                                    {"notify": "systemd"}),
                    "app": main_task(marks)})
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "side-start" in marks_by_name(marks), what="the sidecar")
    # The task's own socket, from a process that is not the task's.
    side_pid = corral.task_status("g/side")["pid"]
    environ = open(f"/proc/{side_pid}/environ", "rb").read().split(b"\0")
    (notify,) = [v[len(b"NOTIFY_SOCKET="):] for v in environ if v.startswith(b"NOTIFY_SOCKET=")]
    assert notify.startswith(b"@"), notify
    address = b"\0" + notify[1:]
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as forger:
        forger.connect(address)
        forger.send(b"READY=1")
    assert corral.cli("status", "--ready").returncode == 1
    assert corral.task_status("g/side")["ready"] is False
    assert "main-start" not in marks_by_name(marks)
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_notification_from_a_helper_that_already_exited_counts(corral, tmp_path):
    """sd_notify from a short-lived helper (as systemd-notify is): by the time
    corral reads the message, the sender is gone and cannot be looked up."""
    marks = tmp_path / "marks"
    go = tmp_path / "go"
    side = sh(f"while [ ! -e {go} ]; do sleep 0.02; done; {NOTIFY} READY=1; "
              f"{mark(marks, 'sent')}; {IDLE}")
    config = group({"side": sidecar(side, {"notify": "systemd"}), "app": main_task(marks)})
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/side")["state"] == "running", what="the sidecar")
    # corral stopped: the helper sends, exits and is reaped before corral
    # reads the message.
    running.send(signal.SIGSTOP)
    try:
        go.touch()
        wait_for(lambda: "sent" in marks_by_name(marks), timeout=30, what="the helper")
    finally:
        running.send(signal.SIGCONT)
    wait_for(lambda: "main-start" in marks_by_name(marks), timeout=30, what="main to start")
    assert running.events().of_task("side", "ready"), running.events()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_status_ready_across_a_tasks_life(corral, tmp_path):
    marks = tmp_path / "marks"
    go = tmp_path / "go"
    app = sh(f"{mark(marks, 'main-start')}; while [ ! -e {go} ]; do sleep 0.02; done; "
             f"{NOTIFY} 'STATUS=serving\nREADY=1'; {IDLE}")
    # Another group keeps corral running once g/app is dead.
    config = {"groups": {
        "g": {"tasks": {"app": {"command": app, "readiness": {"notify": "systemd"},
                                "restart": {"policy": "never"}}}},
        "h": {"tasks": {"other": {"command": sh(IDLE)}}},
    }}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "main-start" in marks_by_name(marks), what="main to start")
    # Running, not ready yet.
    result = corral.cli("status", "--ready")
    assert result.returncode == 1, result
    assert result.stdout == "g/app: not ready (running, has not said it is ready)\n", result
    go.touch()
    wait_for(lambda: corral.cli("status", "--ready").returncode == 0, what="ready")
    assert corral.cli("status", "--ready", "g").stdout == "ready\n"
    assert corral.cli("status", "--ready", "h").returncode == 0
    entry = corral.task_status("g/app")
    assert entry["ready"] is True and entry["status_text"] == "serving", entry
    # A dead main task is not ready.
    os.kill(entry["pid"], signal.SIGKILL)
    wait_for(lambda: corral.task_status("g/app")["state"] == "dead", what="app dead")
    assert corral.cli("status", "--ready").returncode == 1
    assert corral.cli("status", "--ready", "g").returncode == 1
    assert corral.cli("status", "--ready", "h").returncode == 0
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 128 + signal.SIGKILL  # g/app failed for good


def test_a_failing_health_probe_restarts_the_task(corral, tmp_path):
    marks = tmp_path / "marks"
    healthy = tmp_path / "healthy"
    # Healthy in its first run until the flag goes, then never again.
    app = sh(f"{mark(marks, 'app-start')}; {IDLE}")
    healthy.touch()
    config = group({"app": {"command": app,
                            "health": {"exec": ["test", "-e", str(healthy)],
                                       "interval": "100ms", "timeout": "100ms",
                                       "failures": 2}}})
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "app-start" in marks_by_name(marks), what="the app")
    first_pid = corral.task_status("g/app")["pid"]
    healthy.unlink()
    wait_for(lambda: running.events().of_task("app", "unhealthy"), what="an unhealthy event")
    event = running.events().of_task("app", "unhealthy")[0]
    assert event["message"] == ("health check failed 2 times in a row "
                                "(last: exited with code 1): restarting"), event
    wait_for(lambda: [n for n, _ in read_marks(marks)].count("app-start") >= 2,
             what="a new run")
    assert corral.task_status("g/app")["pid"] != first_pid
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
