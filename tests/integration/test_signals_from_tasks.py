"""A signal to corral from a task is a request, judged as a control
connection is (issue 36): a root task without a pid namespace, every
capability dropped, seccomp on, a mount namespace of its own, sends corral
(its parent, $PPID) SIGHUP, SIGTERM and SIGUSR2 in a loop; corral neither
reloads, shuts down nor upgrades, and says so in one line for the task,
then one summary. Granted the matching right (reload, shutdown, upgrade),
the same signal is honoured and said with its sender. Signals from outside
(the test, corral's parent) are honoured as always. A task flooding the
control socket with 3000 connections gives a bounded number of lines."""

import json
import re
import signal
import sys
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, sh, wait_for
from helpers_control import count, group, trapped

# Root, capabilities dropped, the default seccomp filter, no_new_privs, a
# mount namespace; corral's pid namespace (the attack of issue 36).
NO_PID_NAMESPACE = {"namespaces": ["mount", "net", "uts", "ipc"]}
# The same without the mount namespace: the control socket is in sight.
SEES_THE_SOCKET = {"namespaces": ["net", "uts", "ipc"]}
FLOOD = str(Path(__file__).with_name("control_flood_from_task.py"))
PYTHON = "/usr/bin/python3"
# Longer than corral's refusal interval (10 s): long enough for a summary.
SUMMARY_TIMEOUT = RUN_TIMEOUT + 10


def sender(script, **task):
    return {"command": sh(script), "isolation": NO_PID_NAMESPACE,
            "restart": {"policy": "never"}, **task}


def full_refusals(stderr, task):
    return [line for line in stderr.splitlines()
            if f"(task {task}) refused:" in line]


def test_a_task_s_signals_without_a_grant_change_nothing(corral, tmp_path):
    marks = tmp_path / "marks"
    done = tmp_path / "sent"
    # kill is the shell's own: the sender lives on, and is looked at alive.
    config = group({
        "victim": {"command": trapped(marks, "victim")},
        "sender": sender("for i in $(seq 100); do kill -HUP $PPID; kill -TERM $PPID; "
                         f"kill -USR2 $PPID; done; touch {done}; exec sleep 1000"),
    })
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(done.exists, timeout=RUN_TIMEOUT, what="the task's 300 signals sent")
    # Every one refused: said once in full, the rest in one summary.
    summary = re.compile(r"refused (\d+) more signals? from task g/sender in the last 10 s: ")
    wait_for(lambda: summary.search(running.stderr_text()), timeout=SUMMARY_TIMEOUT,
             what="the summary of the refused signals")
    stderr = running.stderr_text()
    lines = full_refusals(stderr, "g/sender")
    assert len(lines) == 1, stderr
    assert "SIGHUP from pid " in lines[0] and "control: list must grant" in lines[0], lines
    assert "(g/sender grants none, not reload)" in lines[0], lines
    assert len(summary.findall(stderr)) == 1, stderr
    # Nothing was reloaded, stopped or upgraded.
    assert running.alive()
    assert "): a shutdown" not in stderr and "shutting down" not in stderr, stderr
    assert "reload of" not in stderr and "executing" not in stderr, stderr
    assert corral.task_status("g/victim")["state"] == "running"
    assert count(marks, "victim-up") == 1 and count(marks, "victim-term") == 0
    # From outside, the same signals are honoured, and say who sent them.
    running.send(signal.SIGHUP)
    wait_for(lambda: "reload of" in running.stderr_text(), what="the reload by SIGHUP")
    assert re.search(r"SIGHUP from pid \d+ \(corral's parent\): a reload",
                     running.stderr_text()), running.stderr_text()
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    assert re.search(r"SIGTERM from pid \d+ \(corral's parent\): a shutdown", result.stderr), result.stderr


@pytest.mark.parametrize("right, signal_name, honoured", [
    ("reload", "HUP", "reload of"),
    ("shutdown", "TERM", "shutting down gracefully"),
    ("upgrade", "USR2", "executing "),
])
def test_a_granted_task_s_signal_is_honoured_and_says_its_sender(corral, tmp_path, right,
                                                                 signal_name, honoured):
    go = tmp_path / "go"
    # Sent once corral answers: an upgrade waits for no task to be starting.
    config = group({
        "victim": {"command": sh("exec sleep 1000")},
        "sender": sender(f"while [ ! -e {go} ]; do sleep 0.05; done; "
                         f"kill -{signal_name} $PPID; exec sleep 1000", control=[right]),
    })
    running = corral.start(config)
    corral.wait_control(running)
    go.touch()
    wait_for(lambda: honoured in running.stderr_text(), timeout=RUN_TIMEOUT,
             what=f"SIG{signal_name} honoured")
    stderr = running.stderr_text()
    assert re.search(rf"SIG{signal_name} from pid \d+ \(task g/sender\): ", stderr), stderr
    assert "refused" not in stderr, stderr
    if right != "shutdown":
        corral.wait_control(running)
        running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_sigusr1_says_what_it_does(corral, tmp_path):
    running = corral.start(group({"app": {"command": sh("exec sleep 1000")}}))
    corral.wait_control(running)
    running.send(signal.SIGUSR1)
    wait_for(lambda: "SIGUSR1 from pid" in running.stderr_text(), what="SIGUSR1 said")
    assert "it asks corral for nothing (SIGHUP reloads, SIGUSR2 upgrades" in \
        running.stderr_text()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_3000_refused_connections_give_a_bounded_number_of_lines(corral, tmp_path):
    config = group({
        "flood": {"command": [PYTHON, FLOOD, "3000"], "restart": {"policy": "never"},
                  "isolation": SEES_THE_SOCKET},
    })
    running = corral.start(config)
    corral.wait_control(running)
    stdout = running.directory / "corral.stdout"
    wait_for(lambda: "g/flood | refused 3000" in stdout.read_text(errors="replace"),
             timeout=RUN_TIMEOUT * 4, what="3000 connections refused")
    summary = re.compile(
        r"control socket: refused (\d+) more connections? from task g/flood in the last 10 s")

    def summed():
        stderr = running.stderr_text()
        first = stderr.count("control socket: refused task g/flood")
        return first + sum(int(n) for n in summary.findall(stderr)) == 3000

    wait_for(summed, timeout=SUMMARY_TIMEOUT, what="every refusal counted in the summaries")
    lines = [l for l in running.stderr_text().splitlines() if "g/flood" in l
             and "refused" in l]
    # One in full, then at most one summary per 10 s of flooding.
    assert len(lines) <= 1 + 12, lines
    assert running.stderr_text().count("control socket: refused task g/flood") == 1
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_check_warns_of_tasks_that_can_stop_or_kill_corral(corral, tmp_path):
    exposed = corral.check(group({"app": {"command": ["/bin/true"],
                                          "isolation": NO_PID_NAMESPACE}}))
    assert exposed.returncode == 0, exposed
    assert "g/app" in exposed.stderr and "SIGSTOP" in exposed.stderr, exposed.stderr
    assert "isolation.namespaces: [pid]" in exposed.stderr, exposed.stderr
    for task in ({"isolation": {"namespaces": ["pid", "mount"]}}, {"user": "65534"}):
        safe = corral.check(group({"app": {"command": ["/bin/true"], **task}}))
        assert safe.returncode == 0, safe
        assert "SIGSTOP" not in safe.stderr, (task, safe.stderr)


def test_a_task_s_upgrade_right_never_names_the_binary(corral, tmp_path):
    """`upgrade` lets a task re-run corral's own binary (as its SIGUSR2
    would), never one it names over the socket."""
    request = {"version": 1, "command": "upgrade", "path": "/bin/true"}
    config = group({
        "keep": {"command": sh("exec sleep 1000")},
        "asker": {"command": [PYTHON, str(Path(__file__).with_name("control_from_task.py")),
                              json.dumps(request)],
                  "restart": {"policy": "never"}, "isolation": SEES_THE_SOCKET,
                  "control": ["upgrade"]},
    })
    running = corral.start(config)
    stdout = running.directory / "corral.stdout"
    line = wait_for(lambda: next((l for l in stdout.read_text(errors="replace").splitlines()
                                  if l.startswith("g/asker | {")), None),
                    timeout=RUN_TIMEOUT, what="the task's report")
    reply = json.loads(line.split(" | ", 1)[1])["requests"][0]["reply"]
    assert reply["ok"] is False, reply
    assert "re-runs corral's own binary only, not /bin/true" in reply["error"], reply
    assert "executing" not in running.stderr_text()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


@pytest.mark.parametrize("isolated", [True, False], ids=["isolated", "plain"])
def test_a_sender_gone_before_corral_looks_is_refused_where_an_isolated_task_could_be_it(
        corral, tmp_path, isolated):
    """corral is stopped while a task's /bin/kill sends SIGHUP and is
    reaped by the task's shell: when corral reads the signal, its sender's
    pid is gone. Refused where an isolated task could signal corral (it
    may have been that task); honoured where none can (a task without
    isolation keeps corral's capabilities: nothing is gained refusing)."""
    go, sent = tmp_path / "go", tmp_path / "sent"
    task = {"command": sh(f"while [ ! -e {go} ]; do sleep 0.05; done; "
                          f"/bin/kill -HUP $PPID; touch {sent}; exec sleep 1000")}
    if isolated:
        task["isolation"] = NO_PID_NAMESPACE
    running = corral.start(group({"sender": task}))
    corral.wait_control(running)
    running.send(signal.SIGSTOP)
    try:
        go.touch()
        wait_for(sent.exists, timeout=RUN_TIMEOUT, what="the task's /bin/kill done")
    finally:
        running.send(signal.SIGCONT)
    gone = re.compile(r"SIGHUP from pid \d+ \(exited before corral could look at it\)")
    wait_for(lambda: gone.search(running.stderr_text()), timeout=RUN_TIMEOUT,
             what="the signal of a gone sender said")
    stderr = running.stderr_text()
    if isolated:
        assert re.search(gone.pattern + " refused: .*could tell whether it was a task", stderr), \
            stderr
        assert "reload of" not in stderr, stderr
    else:
        assert re.search(gone.pattern + ": a reload", stderr), stderr
        wait_for(lambda: "reload of" in running.stderr_text(), what="the reload")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
