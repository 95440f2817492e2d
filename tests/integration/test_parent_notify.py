"""sd_notify to corral's own parent (docs/systemd.md): with NOTIFY_SOCKET
in its environment, as systemd's Type=notify and podman's
--sdnotify=container give it, corral sends READY=1 once every task
`notify.ready` waits for is ready, STATUS= lines, RELOADING=1 and READY=1
around a reload, STOPPING=1 at shutdown and WATCHDOG=1 at half
WATCHDOG_USEC. A datagram socket of the test's own plays the parent.

The parent's variables are corral's, not its tasks': no task, hook or exec
session sees them. One-command mode passes NOTIFY_SOCKET through to its
command and says nothing itself."""

import json
import os
import shutil
import signal
import subprocess
import time
import uuid

import pytest

from conftest import RUN_TIMEOUT, sh, wait_for
from helpers_parent import Parent

PARENT_VARIABLES = ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "LISTEN_FDS", "LISTEN_PID",
                    "LISTEN_FDNAMES")


@pytest.fixture
def parent(tmp_path):
    listener = Parent(str(tmp_path / "notify.sock"))
    yield listener
    listener.close()


def stop(running):
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    return result


def test_ready_comes_once_the_last_task_is_ready_then_stopping(corral, parent, tmp_path):
    go = tmp_path / "go"
    running = corral.start({"shutdown_timeout": "7s", "groups": {"g": {"tasks": {
        "fast": {"command": sh("exec sleep 1000")},
        "slow": {"command": sh("exec sleep 1000"),
                 "readiness": {"exec": ["test", "-e", str(go)], "interval": "100ms"}},
        # Neither asked nor waited for: a one-shot that completes.
        "once": {"command": sh("true"), "lifecycle": {"hook": "poststart"}},
    }}}}, env=parent.env())
    # corral has seen g/fast ready and g/slow not: READY=1 must not be out.
    parent.wait_for("STATUS", "2 tasks: 1 ready, 1 starting (g/slow)")
    assert corral.task_status("g/fast")["ready"]
    assert not parent.with_field("READY"), parent.messages

    go.touch()
    ready = parent.wait_for("READY", "1")
    assert ready == [{"READY": "1", "STATUS": "2 tasks: 2 ready"}], parent.messages
    assert corral.task_status("g/slow")["ready"]

    result = stop(running)
    stopping = parent.with_field("STOPPING")
    # shutdown_timeout and 10 s for the kill and corral's exit.
    assert stopping[0] == {"STOPPING": "1", "EXTEND_TIMEOUT_USEC": "17000000",
                           "STATUS": "shutting down"}, parent.messages
    assert parent.messages[-1] == {"STATUS": "exiting with code 0"}, parent.messages
    assert len(parent.with_field("READY")) == 1, parent.messages
    assert "told the parent READY=1 (2 tasks: 2 ready)" in result.stderr


def test_a_reload_says_reloading_then_ready_and_why_it_was_refused(corral, parent, tmp_path):
    config = {"groups": {"g": {"tasks": {"app": {"command": sh("exec sleep 1000")}}}}}
    path = corral.config(config, "corral.yaml")
    running = corral.start(path, env=parent.env())
    parent.wait_for("READY", "1")
    corral.wait_control(running)

    before = time.monotonic_ns() // 1000
    assert corral.cli("reload").returncode == 0
    after = time.monotonic_ns() // 1000
    parent.wait_for("READY", "1", count=2)
    reloading = parent.with_field("RELOADING")
    assert len(reloading) == 1, parent.messages
    # Type=notify-reload: CLOCK_MONOTONIC when the reload began.
    assert before <= int(reloading[0]["MONOTONIC_USEC"]) <= after, reloading
    # Then READY=1 once it is applied.
    after_reload = parent.messages[parent.messages.index(reloading[0]) + 1]
    assert after_reload == {"READY": "1", "STATUS": "1 task: 1 ready"}, parent.messages

    # SIGHUP, of a config that no longer loads: READY=1 all the same (the
    # old one runs on), the refusal in its STATUS.
    path.write_text("groups: {\n")
    running.send(signal.SIGHUP)
    refused = parent.wait_for("READY", "1", count=3)[2]
    assert refused["STATUS"].startswith("reload of "), refused
    assert "refused: 1 error in the config" in refused["STATUS"], refused
    assert "YAML syntax error" in refused["STATUS"], refused
    assert len(parent.with_field("RELOADING")) == 2, parent.messages

    # A dry run changes nothing: the parent hears nothing of it.
    path.write_text(json.dumps(config))
    heard = len(parent.receive())
    assert corral.cli("reload", "--dry-run").returncode == 0
    assert corral.task_status("g/app")["state"] == "running"
    assert len(parent.with_field("RELOADING")) == 2, parent.messages[heard:]
    stop(running)


def test_ready_started_and_ready_of_listed_groups(corral, parent, tmp_path):
    never = {"command": sh("exec sleep 1000"),
             "readiness": {"exec": ["false"], "interval": "100ms"}}
    running = corral.start({"notify": {"ready": "started"},
                            "groups": {"g": {"tasks": {"app": never}}}}, env=parent.env())
    ready = parent.wait_for("READY", "1")
    assert ready[0]["STATUS"] == "1 task: 1 starting (g/app)", ready
    stop(running)

    parent.messages.clear()
    running = corral.start({"notify": {"ready": ["api"]}, "groups": {
        "api": {"tasks": {"app": {"command": sh("exec sleep 1000")}}},
        "extras": {"tasks": {"exporter": never}},
    }}, env=parent.env())
    ready = parent.wait_for("READY", "1")
    assert ready[0]["STATUS"] == "2 tasks: 1 ready, 1 starting (extras/exporter)", ready
    stop(running)


def test_watchdog_pings_at_half_its_timeout_when_it_is_corrals(corral, parent):
    running = corral.start({"groups": {"g": {"tasks": {"app": {"command": sh("exec sleep 1000")}}}}},
                           env=parent.env(WATCHDOG_USEC="400000"))
    started = time.monotonic()
    parent.wait_for("WATCHDOG", "1", count=5)
    elapsed = time.monotonic() - started
    pings = len(parent.with_field("WATCHDOG"))
    # Every 200 ms from corral's start: never more than that allows.
    assert pings <= elapsed / 0.2 + 2, (pings, elapsed)
    stop(running)

    # WATCHDOG_PID of another process: not corral's watchdog. Its first
    # ping would come before READY=1.
    parent.messages.clear()
    running = corral.start({"groups": {"g": {"tasks": {"app": {"command": sh("exec sleep 1000")}}}}},
                           env=parent.env(WATCHDOG_USEC="400000", WATCHDOG_PID="1"))
    parent.wait_for("READY", "1")
    stop(running)
    assert not parent.with_field("WATCHDOG"), parent.messages


def test_a_stopped_loop_stops_the_pings(corral, parent):
    running = corral.start({"groups": {"g": {"tasks": {"app": {"command": sh("exec sleep 1000")}}}}},
                           env=parent.env(WATCHDOG_USEC="200000"))
    parent.wait_for("WATCHDOG", "1", count=2)
    os.kill(running.pid, signal.SIGSTOP)
    try:
        time.sleep(0.3)  # a ping sent before the stop may still be on its way
        quiet_from = len(parent.receive())
        time.sleep(1)
        assert len(parent.receive()) == quiet_from, parent.messages[quiet_from:]
    finally:
        os.kill(running.pid, signal.SIGCONT)
    count = len(parent.with_field("WATCHDOG"))
    parent.wait_for("WATCHDOG", "1", count=count + 2)
    stop(running)


def test_an_abstract_socket(corral):
    parent = Parent(f"@corral-test-{uuid.uuid4().hex}")
    try:
        running = corral.start({"groups": {"g": {"tasks": {"app": {"command": sh("exec sleep 1000")}}}}},
                               env=parent.env())
        parent.wait_for("READY", "1")
        stop(running)
        assert parent.with_field("STOPPING"), parent.messages
    finally:
        parent.close()


def test_a_missing_socket_is_said_once_and_corral_runs_on(corral, tmp_path):
    missing = tmp_path / "no-such.sock"
    running = corral.start({"groups": {"g": {"tasks": {"app": {"command": sh("exec sleep 1000")}}}}},
                           env={"NOTIFY_SOCKET": str(missing), "WATCHDOG_USEC": "100000"})
    wait_for(lambda: "notify socket" in running.stderr_text(), what="the failure said")
    time.sleep(0.5)  # pings that fail meanwhile
    assert corral.task_status("g/app")["state"] == "running"
    result = stop(running)
    said = [line for line in result.stderr.splitlines() if "notify socket" in line]
    assert said == [f"corral: notify socket {missing} (NOTIFY_SOCKET): No such file or "
                    "directory; corral runs on without telling its parent (said once)"], said


def env_of(path):
    """NAME=VALUE lines of `env` written to `path`, as a dict."""
    return dict(line.split("=", 1) for line in path.read_text().splitlines() if "=" in line)


def test_no_task_hook_or_exec_session_sees_the_parents_variables(corral, parent, tmp_path):
    plain, notifying, hooked = (tmp_path / name for name in ("plain", "notifying", "hooked"))
    send_ready = ("import os, socket; a = os.environ['NOTIFY_SOCKET']; "
                  "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); "
                  "s.sendto(b'READY=1', '\\0' + a[1:] if a[0] == '@' else a)")
    running = corral.start({"groups": {"g": {"tasks": {
        "plain": {"command": sh(f"env > {plain}; exec sleep 1000"),
                  "hooks": [{"name": "env", "stage": "prestart",
                             "exec": sh(f"env > {hooked}; echo '{{}}'")}]},
        "notifying": {"command": sh(f"env > {notifying}; python3 -c \"{send_ready}\"; "
                                    "exec sleep 1000"),
                      "readiness": {"notify": "systemd", "watchdog": "1h"}},
    }}}}, env=parent.env(WATCHDOG_USEC="600000000", WATCHDOG_PID="1", LISTEN_FDS="1",
                         LISTEN_PID="1", LISTEN_FDNAMES="web"))
    # READY=1 needs g/notifying's own READY=1, on corral's socket for it.
    parent.wait_for("READY", "1")
    for path in (plain, hooked):
        seen = env_of(path)
        assert not [name for name in PARENT_VARIABLES if name in seen], (path, seen)
    seen = env_of(notifying)
    assert seen["NOTIFY_SOCKET"] != parent.address, seen
    assert seen["NOTIFY_SOCKET"].startswith("@"), seen
    assert seen["WATCHDOG_USEC"] == "3600000000", seen  # its own readiness.watchdog
    assert not [name for name in PARENT_VARIABLES[2:] if name in seen], seen

    session = corral.cli("exec", "g/plain", "--", "env")
    assert session.returncode == 0, session
    assert "NOTIFY_SOCKET" not in session.stdout and "LISTEN_" not in session.stdout, session
    stop(running)


def test_one_command_mode_passes_the_socket_through_and_says_nothing(corral_bin, parent,
                                                                     tmp_path):
    env = dict(os.environ, NOTIFY_SOCKET=parent.address, WATCHDOG_USEC="600000000",
               WATCHDOG_PID="1", LISTEN_FDS="1", LISTEN_PID="1")
    result = subprocess.run([str(corral_bin), "--", "env"], capture_output=True, text=True,
                            env=env, timeout=RUN_TIMEOUT)
    assert result.returncode == 0, result
    seen = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    # The command is the service: the socket and the watchdog are its own.
    assert seen["NOTIFY_SOCKET"] == parent.address, seen
    assert seen["WATCHDOG_USEC"] == "600000000", seen
    # WATCHDOG_PID names another process here: kept. LISTEN_* go (the
    # fds they speak of are not handed on).
    assert seen["WATCHDOG_PID"] == "1", seen
    assert "LISTEN_FDS" not in seen and "LISTEN_PID" not in seen, seen
    assert parent.receive() == [], parent.messages


def test_the_example_unit_passes_systemd_analyze_verify(corral_bin, tmp_path, repo_root):
    """examples/systemd/corral.service, with ExecStart's binary this
    build's: systemd's own check (systemd is installed here, not PID 1).
    Its stop timeout leaves room for the default shutdown_timeout."""
    verify = shutil.which("systemd-analyze")
    if not verify:
        pytest.fail("systemd-analyze is missing: run scripts/install-deps.sh (systemd)")
    text = (repo_root / "examples" / "systemd" / "corral.service").read_text()
    unit = tmp_path / "corral.service"
    unit.write_text(text.replace("/usr/local/bin/corral", str(corral_bin)))
    result = subprocess.run([verify, "verify", str(unit)], capture_output=True, text=True,
                            timeout=RUN_TIMEOUT)
    assert result.returncode == 0 and not result.stderr.strip(), result
    settings = dict(line.split("=", 1) for line in text.splitlines()
                    if "=" in line and not line.startswith("#"))
    assert settings["Type"] == "notify" and settings["NotifyAccess"] == "main", settings
    assert int(settings["TimeoutStopSec"].rstrip("s")) > 30, settings  # shutdown_timeout's default
