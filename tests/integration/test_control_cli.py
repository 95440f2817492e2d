"""The client commands (docs/cli.md): corral status, restart, stop, start,
signal, logs, events and shutdown against a running corral, their output,
messages and exit codes (0 done, 1 refused or failed, 2 usage error).

The behaviour behind each request is tested through the raw protocol in
test_control.py; here, what a person or a script sees."""

import json
import os
import select
import signal
import subprocess
import time

import pytest

from conftest import RUN_TIMEOUT, mark, pid_alive, read_marks, sh, wait_for
from helpers_control import (
    NOBODY,
    assert_status_shape,
    count,
    full_group,
    group,
    new_pid,
    one_shot,
    poststop,
    prestart,
    start_and_wait,
    status_config,
    stop_corral,
    times,
    trapped,
)


def json_status(corral, *target):
    result = corral.cli("status", "--json", *target)
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    assert len(lines) == 1, result.stdout  # one compact object
    return json.loads(lines[0])


def task_pid(corral, task):
    return json_status(corral, task)["groups"][0]["tasks"][0]["pid"]


def assert_refused(result, *words):
    """Exit 1, corral's reason on stderr, nothing on stdout."""
    assert result.returncode == 1, result
    assert result.stdout == "", result
    for word in words:
        assert word in result.stderr, (word, result.stderr)


def assert_done(result, *words):
    assert result.returncode == 0, result
    for word in words:
        assert word in result.stdout, (word, result.stdout)


class LineReader:
    """Reads lines from a background command's stdout, failing the test
    when none comes within the timeout."""

    def __init__(self, popen):
        self.popen = popen
        self.buffer = b""

    def line(self, timeout=RUN_TIMEOUT):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.popen.stdout], [], [], max(left, 0))
            if not ready:
                pytest.fail(f"no line from {self.popen.args} within {timeout}s")
            chunk = os.read(self.popen.stdout.fileno(), 65536)
            if not chunk:
                pytest.fail(f"{self.popen.args} ended its output: "
                            f"{self.popen.stderr.read().decode(errors='replace')}")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line.decode()


def stop_background(popen):
    """^C, as a person would (exit 0, silently)."""
    popen.send_signal(signal.SIGINT)
    try:
        popen.wait(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        popen.kill()
        popen.wait()
        pytest.fail(f"{popen.args} did not end on SIGINT")
    return popen.returncode


# ---- restart ---------------------------------------------------------------


def test_cli_restart_of_a_running_task(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "app": {"command": trapped(marks, "app", term_code=1),
                "restart": {"policy": "on-failure", "attempts": 0}},
    })
    running = start_and_wait(corral, config, marks, "app-up")
    pid = task_pid(corral, "g/app")
    assert_done(corral.cli("restart", "g/app"), "g/app")
    entry = new_pid(corral, "g/app", pid)
    wait_for(lambda: count(marks, "app-up") == 2, what="g/app up again")
    assert entry["restarts"] == 1 and entry["last_exit"]["failed"] is False, entry
    assert not pid_alive(pid)
    stop_corral(running)


def test_cli_restart_of_a_dead_task_is_refused(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "once": {"command": one_shot(marks, "once"), "restart": {"policy": "never"}},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "once")
    wait_for(lambda: corral.task_status("g/once")["state"] == "dead")
    result = corral.cli("restart", "g/once")
    assert_refused(result, "g/once", "dead", "--force")
    assert count(marks, "once") == 1
    stop_corral(running)


def test_cli_force_restart_and_start_run_a_dead_main_task_again(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "once": {"command": one_shot(marks, "once"), "restart": {"policy": "never"}},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "once")
    wait_for(lambda: corral.task_status("g/once")["state"] == "dead")
    assert_done(corral.cli("restart", "--force", "g/once"), "g/once")
    wait_for(lambda: count(marks, "once") == 2, what="g/once run again")
    wait_for(lambda: corral.task_status("g/once")["state"] == "dead")
    # Options may come after the arguments.
    assert_done(corral.cli("restart", "g/once", "--force"), "g/once")
    wait_for(lambda: count(marks, "once") == 3, what="g/once run a third time")
    wait_for(lambda: corral.task_status("g/once")["state"] == "dead")
    assert_done(corral.cli("start", "g/once"), "g/once")
    wait_for(lambda: count(marks, "once") == 4, what="g/once started")
    stop_corral(running)


def test_cli_force_restart_of_a_dead_prestart_task_is_refused(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "setup": prestart(one_shot(marks, "setup")),
        "app": {"command": trapped(marks, "app")},
    })
    running = start_and_wait(corral, config, marks, "setup", "app-up")
    wait_for(lambda: corral.task_status("g/setup")["state"] == "dead")
    state = json_status(corral, "g")["groups"][0]["state"]
    result = corral.cli("restart", "--force", "g/setup")
    assert_refused(result, "g/setup", "prestart-ephemeral", f"state {state}", "restart --all")
    assert count(marks, "setup") == 1
    stop_corral(running)


def test_cli_restart_all_reruns_the_group_in_order(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, full_group(marks), marks,
                             "pre", "side-up", "app-up", "post", "ps-up")
    assert_done(corral.cli("restart", "--all", "g"), "g")
    wait_for(lambda: all(count(marks, n) == 2 for n in
                         ("pre", "side-up", "app-up", "post", "ps-up")),
             what="every task run a second time")
    app_term, ps_term, side_term = (times(marks, n)[0] for n in ("app-term", "ps-term", "side-term"))
    assert app_term < ps_term < side_term < times(marks, "pre")[1] < times(marks, "app-up")[1], \
        read_marks(marks)
    assert count(marks, "cleanup") == 0
    result = stop_corral(running)
    assert count(marks, "cleanup") == 1, result


def test_cli_restart_running(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "setup": prestart(one_shot(marks, "setup")),
        "app": {"command": trapped(marks, "app")},
        "app2": {"command": trapped(marks, "app2")},
    })
    running = start_and_wait(corral, config, marks, "setup", "app-up", "app2-up")
    pids = {task: task_pid(corral, task) for task in ("g/app", "g/app2")}
    result = corral.cli("restart", "--running", "g")
    assert_done(result, "g")
    assert result.stderr == "", result
    for task, pid in pids.items():
        new_pid(corral, task, pid)
    wait_for(lambda: count(marks, "app-up") == 2 and count(marks, "app2-up") == 2)
    assert count(marks, "setup") == 1
    stop_corral(running)


def test_cli_usage_errors_exit_2_before_connecting(corral, tmp_path):
    # No corral at all: shapes are checked first.
    for args in (
        ["stop", "g"],
        ["start", "g"],
        ["restart", "g"],
        ["restart", "--all", "g/app"],
        ["restart", "--running", "g/app"],
        ["restart", "--force", "--all", "g/app"],
        ["signal", "g/app", "SIGFOO"],
        ["signal", "g/app"],
        ["logs", "g/app", "--tail", "x"],
        ["logs", "g/app", "g/other"],
        ["logs", "--since", "yesterday"],
        ["events", "--tail", "-1"],
        ["status", "a/b/c"],
        ["status", "--bogus"],
    ):
        result = corral.cli(*args)
        assert result.returncode == 2, (args, result)
        assert result.stderr and "cannot connect" not in result.stderr, (args, result)


def test_cli_without_a_corral_says_so(corral, tmp_path):
    result = corral.cli("status")
    assert_refused(result, str(corral.socket_path), "cannot connect", "corral running")
    other = tmp_path / "elsewhere.sock"
    result = corral.cli("restart", "--socket", other, "g/app")
    assert_refused(result, str(other))


def test_cli_socket_option_and_environment(corral, tmp_path):
    marks = tmp_path / "marks"
    path = tmp_path / "other" / "ctl.sock"
    running = corral.start(group({"app": {"command": trapped(marks, "app")}}),
                           env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    # --socket wins over CORRAL_SOCKET, and CORRAL_SOCKET over the default.
    result = corral.cli("status", "--socket", path, env={"CORRAL_SOCKET": "/nonexistent.sock"})
    assert_done(result, "app", "running")
    assert_done(corral.cli("status", env={"CORRAL_SOCKET": str(path)}), "app")
    assert_refused(corral.cli("status", env={"CORRAL_SOCKET": str(tmp_path / "no.sock")}),
                   "no.sock")
    assert_done(corral.cli("shutdown", "--socket", path))
    assert running.wait().returncode == 0


# ---- stop, start, signal ----------------------------------------------------


def test_cli_stop_start_and_signal(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "app": {"command": trapped(marks, "app"),
                "restart": {"policy": "always", "attempts": 5, "delay": "100ms"}},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "app-up")
    pid = task_pid(corral, "g/app")

    assert_done(corral.cli("stop", "g/app"), "g/app")
    wait_for(lambda: count(marks, "app-term") == 1, what="SIGTERM in g/app")
    wait_for(lambda: corral.task_status("g/app")["state"] == "dead")
    time.sleep(0.5)  # well past the restart delay
    assert count(marks, "app-up") == 1 and corral.task_status("g/app")["state"] == "dead"

    assert_done(corral.cli("start", "g/app"), "g/app")
    wait_for(lambda: count(marks, "app-up") == 2, what="g/app started again")
    new_pid(corral, "g/app", pid)

    assert_done(corral.cli("signal", "g/app", "SIGUSR1"), "g/app")
    wait_for(lambda: count(marks, "app-usr1") == 1, what="SIGUSR1 in g/app")
    assert_done(corral.cli("signal", "g/app", "usr1"))
    wait_for(lambda: count(marks, "app-usr1") == 2, what="a second SIGUSR1")
    assert_done(corral.cli("signal", "g/app", str(int(signal.SIGUSR1))))
    wait_for(lambda: count(marks, "app-usr1") == 3, what="SIGUSR1 given by number")
    assert count(marks, "keeper-usr1") == 0

    assert_refused(corral.cli("stop", "g/nope"), "g/nope", "g/keeper", "g/app")
    # A task's bare name, where a group is looked for: the task is named.
    assert_refused(corral.cli("logs", "app"), 'no group "app"; did you mean g/app?')
    stop_corral(running)


# ---- status ---------------------------------------------------------------------


def test_cli_status_says_stopping_while_a_task_outlives_its_stop_signal(corral, tmp_path):
    """A task that ignores SIGTERM runs on until its kill timeout: status
    shows it as stopping and not ready (as systemd's deactivating and
    Kubernetes' Terminating), so `status --ready` fails meanwhile."""
    marks = tmp_path / "marks"
    config = group({"keeper": {"command": ["sleep", "1000"]},
                    "app": {"command": sh(f"trap '{mark(marks, 'term')}' TERM; "
                                          f"{mark(marks, 'up')}; while :; do sleep 0.1; done"),
                            "kill": {"timeout": "3s"}, "restart": {"policy": "never"}}})
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: count(marks, "up") == 1, what="g/app up")
    wait_for(lambda: corral.cli("status", "--ready").returncode == 0, what="every task ready")

    assert_done(corral.cli("stop", "g/app"), "g/app")
    wait_for(lambda: count(marks, "term") == 1, what="SIGTERM in g/app")
    app = json_status(corral, "g/app")["groups"][0]["tasks"][0]
    assert app["state"] == "stopping" and app["ready"] is False, app
    assert app["pid"] is not None
    ready = corral.cli("status", "--ready")
    assert ready.returncode == 1 and "g/app: not ready (stopping)" in ready.stdout, ready
    table = corral.cli("status").stdout
    assert [line.split()[2] for line in table.splitlines() if line.split()[:1] == ["app"]] \
        == ["stopping"], table
    assert_refused(corral.cli("start", "g/app"), "g/app is being stopped: start it once it is dead")
    wait_for(lambda: corral.task_status("g/app")["state"] == "dead", what="the kill timeout")
    stop_corral(running)



def test_cli_status_json_and_table(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, status_config(marks), marks, "setup", "app-up", "victim")
    wait_for(lambda: json_status(corral, "doomed")["groups"][0]["finished"],
             what="group doomed finished")

    reply = json_status(corral)
    assert_status_shape(reply)
    assert [g["name"] for g in reply["groups"]] == ["web", "doomed"]
    app = json_status(corral, "web/app")["groups"][0]["tasks"]
    assert len(app) == 1 and app[0]["state"] == "running" and pid_alive(app[0]["pid"]), app

    result = corral.cli("status")
    assert result.returncode == 0, result
    text = result.stdout
    for word in ("web", "doomed", "setup", "app", "victim", "running", "dead",
                 "prestart-ephemeral", "main", "SIGKILL", str(app[0]["pid"])):
        assert word in text, (word, text)
    rows = {line.split()[0]: line.split() for line in text.splitlines() if line.startswith("  ")}
    assert rows["app"][1:3] == ["main", "running"], text
    assert rows["setup"][1:3] == ["prestart-ephemeral", "dead"], text
    assert rows["victim"][2] == "dead" and "(failed)" in " ".join(rows["victim"]), text
    assert "finished" in [line for line in text.splitlines() if line.startswith("doomed")][0]

    only = corral.cli("status", "web")
    assert only.returncode == 0 and "web" in only.stdout and "victim" not in only.stdout, only

    result = corral.cli("status", "web/nope")
    assert_refused(result, "web/nope", "web/setup", "web/app")
    result = corral.cli("status", "nope")
    assert_refused(result, "nope", "web", "doomed")
    running.send(signal.SIGTERM)
    running.wait()


# ---- logs and events ----------------------------------------------------------


def test_cli_logs_tail_and_follow(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "printer": {"command": sh(f"for i in $(seq 1 10); do echo line $i; done; "
                                  f"{mark(marks, 'printed')}; while :; do sleep 0.02; done")},
        "ticker": {"command": sh("i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.05; done")},
    })
    running = start_and_wait(corral, config, marks, "printed")
    wait_for(lambda: corral.cli("logs", "g/printer").stdout.count("\n") == 10,
             what="10 lines kept for g/printer")
    result = corral.cli("logs", "--tail", "3", "g/printer")
    assert result.returncode == 0, result
    assert result.stdout == "line 8\nline 9\nline 10\n", result.stdout
    assert corral.cli("logs", "-n", "1", "g/printer").stdout == "line 10\n"
    assert corral.cli("logs", "g/printer").stdout == "".join(f"line {i}\n" for i in range(1, 11))

    follower = corral.cli_popen("logs", "-f", "--tail", "1", "g/ticker")
    reader = LineReader(follower)
    lines = [reader.line() for _ in range(4)]
    numbers = [int(line.split()[1]) for line in lines]
    assert numbers == list(range(numbers[0], numbers[0] + 4)), lines
    assert stop_background(follower) == 0
    assert follower.stderr.read() == b""

    assert_refused(corral.cli("logs", "g/nope"), "g/nope")
    stop_corral(running)


def test_cli_events(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, group({"app": {"command": trapped(marks, "app")}}),
                             marks, "app-up")
    pid = task_pid(corral, "g/app")
    result = corral.cli("events", "--json")
    assert result.returncode == 0, result
    events = [json.loads(line) for line in result.stdout.splitlines()]
    started = [e for e in events if e["event"] == "started" and e.get("task") == "app"]
    assert len(started) == 1 and started[0]["pid"] == pid, events
    assert events == running.events()[: len(events)]
    assert len(corral.cli("events", "--json", "--tail", "2").stdout.splitlines()) == 2

    table = corral.cli("events")
    assert table.returncode == 0, table
    line = [line for line in table.stdout.splitlines() if " started " in line]
    assert line and "g/app" in line[0] and str(pid) in line[0], table.stdout

    follower = corral.cli_popen("events", "-f", "--json", "--tail", "1")
    reader = LineReader(follower)
    reader.line()  # the one kept
    assert_done(corral.cli("restart", "g/app"))
    seen = []
    while not any(e["event"] == "started" for e in seen):
        seen.append(json.loads(reader.line()))
    assert "restart_requested" in [e["event"] for e in seen], seen
    # corral closing the stream ends the command with 0.
    assert_done(corral.cli("shutdown"))
    follower.wait(timeout=RUN_TIMEOUT)
    assert follower.returncode == 0, follower.stderr.read()
    assert running.wait().returncode == 0


def test_cli_follow_ends_quietly_when_its_reader_goes(corral, tmp_path):
    # As `corral events -f | head -1` does.
    marks = tmp_path / "marks"
    running = start_and_wait(corral, group({"app": {"command": trapped(marks, "app")}}),
                             marks, "app-up")
    follower = corral.cli_popen("events", "-f", "--tail", "1")
    LineReader(follower).line()
    follower.stdout.close()
    # Something new to write, into a pipe nobody reads.
    assert_done(corral.cli("restart", "g/app"))
    follower.wait(timeout=RUN_TIMEOUT)
    assert follower.returncode == 0, follower.stderr.read()
    assert follower.stderr.read() == b""
    stop_corral(running)


def open_sockets(pid):
    """Sockets corral holds: the listener and one per client. Other fds
    (pipes of tasks being spawned) come and go and are not counted."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def test_cli_follower_that_falls_behind_is_told_it_was_cut(corral, tmp_path):
    marks = tmp_path / "marks"
    line = "x" * 990
    config = group({
        "chatty": {"command": sh(f"{mark(marks, 'chatty-up')}; "
                                 f"while [ ! -e {tmp_path}/go ]; do sleep 0.02; done; "
                                 f"yes {line} | head -n 16000; {mark(marks, 'chatty-done')}; "
                                 "while :; do sleep 0.05; done")},
    })
    running = start_and_wait(corral, config, marks, "chatty-up")
    # Only the listener once the connections made while starting are gone.
    idle = wait_for(lambda: open_sockets(running.pid) == 1, what="corral's clients to leave") and 1
    # A follower whose own reader (us) does not read.
    follower = corral.cli_popen("logs", "-f", "g/chatty")
    wait_for(lambda: open_sockets(running.pid) == idle + 1,
             what=lambda: f"the follower connected ({open_sockets(running.pid)} sockets, idle {idle})")
    (tmp_path / "go").touch()
    wait_for(lambda: count(marks, "chatty-done") == 1, what="the burst to end")
    # Cut by now (16 MB against an 8 MB bound), corral still answers others.
    assert corral.status()["ok"] is True
    # The follower reads again within the grace period: it gets what was
    # kept, then the notice, and exits 1.
    out, err = follower.communicate(timeout=RUN_TIMEOUT)
    assert 0 < out.count(b"\n") < 16000
    assert follower.returncode == 1 and b"stream cut" in err, (follower.returncode, err)
    wait_for(lambda: open_sockets(running.pid) == idle, what="corral to close the follower")
    stop_corral(running)


# ---- who may use it --------------------------------------------------------------


def cli_as(corral, uid, gid, *args, groups=()):
    def become():
        os.setgroups(list(groups))
        os.setgid(gid)
        os.setuid(uid)

    return subprocess.run([str(corral.binary), *map(str, args)], preexec_fn=become,
                          capture_output=True, text=True, cwd="/", env=corral.env(),
                          timeout=RUN_TIMEOUT)


def test_cli_as_another_user(corral, tmp_path, open_dir):
    marks = tmp_path / "marks"
    path = open_dir / "control.sock"
    running = corral.start(group({"app": {"command": trapped(marks, "app")}}),
                           env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    result = cli_as(corral, NOBODY, NOBODY, "status", "--socket", path)
    assert_refused(result, str(path), "Permission denied")
    path.chmod(0o666)
    result = cli_as(corral, NOBODY, NOBODY, "restart", "--socket", path, "g/app")
    assert_refused(result, "only root and corral's own user")
    assert count(marks, "app-up") == 1 and count(marks, "app-term") == 0
    stop_corral(running)

    config = group({"app": {"command": trapped(marks, "app")}})
    config["control"] = {"group": "nogroup"}
    running = corral.start(config, env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    result = cli_as(corral, NOBODY, NOBODY, "status", "--socket", path)
    assert_done(result, "app", "running")
    assert_done(cli_as(corral, NOBODY, 4242, "restart", "--socket", path, "g/app",
                       groups=[NOBODY]), "g/app")
    wait_for(lambda: count(marks, "app-up") == 3, what="g/app restarted by a group member")
    stop_corral(running)


# ---- shutdown ---------------------------------------------------------------------


def test_cli_shutdown_is_graceful(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "app": {"command": trapped(marks, "app")},
        "cleanup": poststop(one_shot(marks, "cleanup")),
    })
    running = start_and_wait(corral, config, marks, "app-up")
    result = corral.cli("shutdown")
    assert_done(result, "shutting down")
    finished = running.wait()
    assert finished.returncode == 0, finished
    assert count(marks, "app-term") == 1 and count(marks, "cleanup") == 1
    assert times(marks, "app-term")[0] < times(marks, "cleanup")[0]
    assert not corral.socket_path.exists()
    assert not corral.leftovers()
    # Nothing to talk to any more.
    assert_refused(corral.cli("status"), "cannot connect")
