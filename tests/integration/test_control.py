"""The control socket, spoken raw (docs/control-protocol.md): restart modes,
stop / start / signal, status, logs and events, protocol robustness, who may
connect, and the safety of the socket file.

Tasks record what happens to them (start, SIGTERM, SIGUSR1) as timestamped
markers in tmp_path; the CLI over the same protocol is tested in
test_control_cli.py."""

import errno
import json
import os
import select
import signal
import socket
import stat
import subprocess
import threading
import time

import pytest

from conftest import (
    RUN_TIMEOUT,
    mark,
    pid_alive,
    read_marks,
    sh,
    wait_for,
)
from helpers_control import (
    NOBODY,
    assert_error,
    assert_status_shape,
    client_as,
    count,
    full_group,
    group,
    new_pid,
    one_shot,
    poststart,
    poststop,
    prestart,
    start_and_wait,
    status_config,
    stop_corral,
    times,
    trapped,
)


# ---- restart (task) --------------------------------------------------------


def test_restart_of_a_running_task_gives_a_new_pid_not_charged_to_its_policy(corral, tmp_path):
    marks = tmp_path / "marks"
    # Exits 1 on SIGTERM: were a requested restart charged to the policy
    # (on-failure, no attempts), the task would fail for good at the first.
    config = group({
        "app": {"command": trapped(marks, "app", term_code=1),
                "restart": {"policy": "on-failure", "attempts": 0, "delay": "100ms"}},
    })
    running = start_and_wait(corral, config, marks, "app-up")
    before = corral.task_status("g/app")
    assert before["state"] == "running" and before["restarts"] == 0, before
    assert before["last_exit"] is None, before

    pid = before["pid"]
    for round_number in (1, 2):
        reply = corral.request("restart", target="g/app")
        assert reply["ok"] is True and "g/app" in reply["message"], reply
        after = new_pid(corral, "g/app", pid)
        wait_for(lambda: count(marks, "app-up") == round_number + 1, what="the task up again")
        assert count(marks, "app-term") == round_number
        assert after["restarts"] == round_number, after
        # It exited 1 because corral asked: not a failure that counts.
        assert after["last_exit"]["code"] == 1 and after["last_exit"]["failed"] is False, after
        assert not pid_alive(pid)
        pid = after["pid"]

    assert corral.status()["groups"][0]["stopping"] is False
    result = stop_corral(running)
    assert len(result.events.of_task("app", "restart_requested")) == 2, result.events
    assert not [e for e in result.events.of_task("app") if "for good" in e["message"]], \
        result.events


def test_restart_of_a_dead_task_is_refused(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "once": {"command": one_shot(marks, "once", code=0), "restart": {"policy": "never"}},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "once")
    wait_for(lambda: corral.task_status("g/once")["state"] == "dead")
    reply = corral.request("restart", target="g/once")
    assert_error(reply, "g/once", "dead", "--force")
    assert count(marks, "once") == 1
    assert running.alive()
    stop_corral(running)


# ---- restart --force and start -----------------------------------------------


def test_force_restart_of_a_dead_main_task_runs_it_again(corral, tmp_path):
    marks = tmp_path / "marks"
    # Two main tasks: the group stays in its main stage while `once` is
    # dead. It exits 0 under policy never: dead, but not failed for good
    # (which would stop the whole group).
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "once": {"command": one_shot(marks, "once", code=0), "restart": {"policy": "never"}},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "once")
    wait_for(lambda: corral.task_status("g/once")["state"] == "dead")

    reply = corral.request("restart", target="g/once", mode="force")
    assert reply["ok"] is True and "g/once" in reply["message"], reply
    wait_for(lambda: count(marks, "once") == 2, what="a second run of g/once")

    # start is a ForceRestart too.
    wait_for(lambda: corral.task_status("g/once")["state"] == "dead")
    reply = corral.request("start", target="g/once")
    assert reply["ok"] is True, reply
    wait_for(lambda: count(marks, "once") == 3, what="a third run of g/once")
    assert count(marks, "keeper-up") == 1 and count(marks, "keeper-term") == 0
    stop_corral(running)


def test_force_restart_of_a_dead_prestart_task_while_main_runs_is_refused(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "pre": prestart(one_shot(marks, "pre")),
        "app": {"command": trapped(marks, "app")},
    })
    running = start_and_wait(corral, config, marks, "pre", "app-up")
    wait_for(lambda: corral.task_status("g/pre")["state"] == "dead")
    group_state = corral.status()["groups"][0]["state"]
    reply = corral.request("restart", target="g/pre", mode="force")
    assert_error(reply, "g/pre", "prestart-ephemeral", group_state, "restart --all")
    reply = corral.request("start", target="g/pre")
    assert_error(reply, "g/pre", "prestart-ephemeral", "restart --all")
    assert count(marks, "pre") == 1
    assert corral.task_status("g/app")["state"] == "running"
    stop_corral(running)


# ---- restart --all and --running ------------------------------------------


def test_restart_all_reruns_the_group_in_lifecycle_order(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, full_group(marks), marks,
                             "pre", "side-up", "app-up", "post", "ps-up")
    started_before = len(running.events().of_task("app", "started"))

    reply = corral.request("restart", target="g", mode="all")
    assert reply["ok"] is True, reply
    wait_for(lambda: all(count(marks, name) == 2 for name in
                         ("pre", "side-up", "app-up", "post", "ps-up")),
             what="every task run a second time")

    # Stopped in reverse lifecycle order: main, poststart sidecar, prestart
    # sidecar; each gets SIGTERM only once the one before has exited.
    app_term, ps_term, side_term = (times(marks, n) for n in ("app-term", "ps-term", "side-term"))
    assert len(app_term) == len(ps_term) == len(side_term) == 1, read_marks(marks)
    assert app_term[0] < ps_term[0] < side_term[0], read_marks(marks)
    # Then everything runs again, in lifecycle order.
    pre_again = times(marks, "pre")[1]
    assert side_term[0] < pre_again, read_marks(marks)
    assert pre_again < times(marks, "app-up")[1], read_marks(marks)
    assert pre_again < times(marks, "post")[1], read_marks(marks)
    # Poststop did not run in between.
    assert count(marks, "cleanup") == 0, read_marks(marks)

    ev = running.events()
    assert len(ev.of_task("app", "started")) == started_before + 1, ev
    second = {name: ev.of_task(name, "started")[-1] for name in ("pre", "side", "app", "post", "ps")}
    order = [ev.index(lambda e, s=second[name]: e is s) for name in ("side", "app", "post")]
    assert order == sorted(order), ev
    assert ev.index(lambda e: e is second["app"]) < ev.index(lambda e: e is second["ps"]), ev
    assert ("init", "prestart") in ev.lifecycle("g")[1:], ev.lifecycle("g")
    # Each task ran again once, and counts it, as Nomad counts an alloc
    # restart (the running ones and the one-shots alike).
    for name in ("pre", "side", "app", "post", "ps"):
        assert corral.task_status(f"g/{name}")["restarts"] == 1, name

    result = stop_corral(running)
    assert count(marks, "cleanup") == 1, result


def test_restart_running_restarts_running_tasks_and_leaves_dead_ones(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "pre": prestart(one_shot(marks, "pre")),
        "side": prestart(trapped(marks, "side"), sidecar=True),
        "app": {"command": trapped(marks, "app")},
        "app2": {"command": trapped(marks, "app2")},
    })
    running = start_and_wait(corral, config, marks, "pre", "side-up", "app-up", "app2-up")
    before = {task: corral.task_status(task)["pid"] for task in ("g/side", "g/app", "g/app2")}

    reply = corral.request("restart", target="g", mode="running")
    assert reply["ok"] is True, reply
    for task, pid in before.items():
        new_pid(corral, task, pid)
    wait_for(lambda: all(count(marks, n) == 2 for n in ("side-up", "app-up", "app2-up")),
             what="the running tasks up again")
    assert all(count(marks, n) == 1 for n in ("side-term", "app-term", "app2-term"))
    # The dead prestart task was left alone.
    assert count(marks, "pre") == 1, read_marks(marks)
    pre = corral.task_status("g/pre")
    assert pre["state"] == "dead" and pre["restarts"] == 0, pre
    assert all(corral.task_status(t)["restarts"] == 1 for t in before), \
        [corral.task_status(t) for t in before]
    assert all(not pid_alive(pid) for pid in before.values())
    stop_corral(running)


# ---- stop, start, signal -------------------------------------------------------


def test_stop_start_and_signal_a_task(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "app": {"command": trapped(marks, "app"),
                "restart": {"policy": "always", "attempts": 5, "delay": "100ms"}},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "app-up")
    pid = corral.task_status("g/app")["pid"]

    reply = corral.request("stop", target="g/app")
    assert reply["ok"] is True and "g/app" in reply["message"], reply
    wait_for(lambda: count(marks, "app-term") == 1, what="g/app to get SIGTERM")
    entry = wait_for(lambda: (e := corral.task_status("g/app"))["state"] == "dead" and e)
    assert entry["pid"] is None and entry["next_restart_in_ms"] is None, entry
    assert entry["last_exit"]["failed"] is False, entry
    assert not pid_alive(pid)
    # Not restarted by its policy (delay 100ms): still down a while later.
    time.sleep(0.5)
    assert count(marks, "app-up") == 1
    assert corral.task_status("g/app")["state"] == "dead"
    # Stopping a dead task again is harmless.
    assert corral.request("stop", target="g/app")["ok"] is True

    reply = corral.request("start", target="g/app")
    assert reply["ok"] is True, reply
    wait_for(lambda: count(marks, "app-up") == 2, what="g/app started again")
    new_pid(corral, "g/app", pid)

    reply = corral.request("signal", target="g/app", signal="SIGUSR1")
    assert reply["ok"] is True, reply
    wait_for(lambda: count(marks, "app-usr1") == 1, what="SIGUSR1 in g/app")
    reply = corral.request("signal", target="g/app", signal="USR1")
    assert reply["ok"] is True, reply
    wait_for(lambda: count(marks, "app-usr1") == 2, what="a second SIGUSR1 in g/app")
    assert count(marks, "keeper-usr1") == 0 and count(marks, "keeper-term") == 0
    assert count(marks, "app-term") == 1

    assert_error(corral.request("signal", target="g/app", signal="SIGFOO"), "SIGFOO")
    stop_corral(running)


def test_signal_to_a_dead_task_is_refused(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "once": {"command": one_shot(marks, "once"), "restart": {"policy": "never"}},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "once")
    wait_for(lambda: corral.task_status("g/once")["state"] == "dead")
    assert_error(corral.request("signal", target="g/once", signal="HUP"), "g/once", "dead")
    stop_corral(running)


def test_stop_cancels_a_pending_restart_and_force_skips_the_delay(corral, tmp_path):
    marks = tmp_path / "marks"
    flaky = {"policy": "on-failure", "attempts": 5, "delay": "20s"}
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "stopped": {"command": one_shot(marks, "stopped", code=1), "restart": flaky},
        "forced": {"command": one_shot(marks, "forced", code=1), "restart": flaky},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "stopped", "forced")
    for task in ("g/stopped", "g/forced"):
        wait_for(lambda t=task: corral.task_status(t)["next_restart_in_ms"],
                 what=f"{task} waiting out its restart delay")
    # A task waiting out its delay is not running: Restart refuses it.
    assert_error(corral.request("restart", target="g/forced"), "g/forced", "--force")

    assert corral.request("stop", target="g/stopped")["ok"] is True
    entry = corral.task_status("g/stopped")
    assert entry["state"] == "dead" and entry["next_restart_in_ms"] is None, entry

    assert corral.request("restart", target="g/forced", mode="force")["ok"] is True
    wait_for(lambda: count(marks, "forced") == 2, what="g/forced run now, not in 20s")
    assert count(marks, "stopped") == 1
    stop_corral(running)


def test_stopping_the_only_main_task_ends_the_group(corral, tmp_path):
    # A stopped main task counts as dead: sidecars stop, poststop runs, and
    # corral, with nothing left, exits 0.
    marks = tmp_path / "marks"
    config = group({
        "side": prestart(trapped(marks, "side"), sidecar=True),
        "app": {"command": trapped(marks, "app")},
        "cleanup": poststop(one_shot(marks, "cleanup")),
    })
    running = start_and_wait(corral, config, marks, "side-up", "app-up")
    assert corral.request("stop", target="g/app")["ok"] is True
    result = running.wait()
    assert result.returncode == 0, result
    order = [name for name, _ in read_marks(marks)]
    assert order.index("app-term") < order.index("side-term") < order.index("cleanup"), order
    assert count(marks, "app-up") == 1


def test_restart_and_force_restart_of_running_sidecars_and_mains(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "side": prestart(trapped(marks, "side"), sidecar=True),
        "app": {"command": trapped(marks, "app")},
        "ps": poststart(trapped(marks, "ps"), sidecar=True),
    })
    running = start_and_wait(corral, config, marks, "side-up", "app-up", "ps-up")
    for task, name, mode in (("g/side", "side", "task"), ("g/ps", "ps", "force"),
                             ("g/app", "app", "force")):
        pid = corral.task_status(task)["pid"]
        assert corral.request("restart", target=task, mode=mode)["ok"] is True
        entry = new_pid(corral, task, pid)
        wait_for(lambda n=name: count(marks, n + "-up") == 2, what=f"{task} up again")
        assert count(marks, name + "-term") == 1 and entry["restarts"] == 1, entry
    # Each restart touched its own task only.
    assert [count(marks, n + "-up") for n in ("side", "app", "ps")] == [2, 2, 2]
    stop_corral(running)


def test_a_signal_that_kills_a_task_is_a_failure_for_its_policy(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "app": {"command": trapped(marks, "app"),
                "restart": {"policy": "on-failure", "attempts": 3, "delay": "50ms"}},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "app-up")
    pid = corral.task_status("g/app")["pid"]
    reply = corral.request("signal", target="g/app", signal="SIGKILL")
    assert reply["ok"] is True and str(pid) in reply["message"], reply
    entry = new_pid(corral, "g/app", pid)
    assert entry["last_exit"]["signal"] == "SIGKILL" and entry["last_exit"]["failed"] is True
    assert entry["restarts"] == 1, entry
    stop_corral(running)


def test_restart_all_while_the_group_is_still_stopping(corral, tmp_path):
    # The main task fails for good; its sidecar takes a while to stop. A
    # restart of the whole group asked for meanwhile brings everything back
    # (the stop for good under way becomes part of the restart), and the
    # poststop task does not run in between.
    marks = tmp_path / "marks"
    slow_side = sh(f"trap '{mark(marks, 'side-term')}; sleep 0.5; exit 0' TERM\n"
                   f"{mark(marks, 'side-up')}; while :; do sleep 0.02; done")
    config = group({
        "side": prestart(slow_side, sidecar=True),
        "app": {"command": sh(f"{mark(marks, 'app-up')}; "
                              f"[ -e {tmp_path}/second ] && exec sleep 1000; "
                              f"while [ ! -e {tmp_path}/fail ]; do sleep 0.02; done; exit 3"),
                "restart": {"policy": "never"}},
        "cleanup": poststop(one_shot(marks, "cleanup")),
    })
    running = start_and_wait(corral, config, marks, "side-up", "app-up")
    (tmp_path / "second").touch()
    (tmp_path / "fail").touch()
    wait_for(lambda: count(marks, "side-term") == 1, what="the sidecar to be stopping")
    assert corral.request("restart", target="g", mode="all")["ok"] is True
    wait_for(lambda: count(marks, "side-up") == 2 and count(marks, "app-up") == 2,
             what="the whole group running again")
    g = corral.status("g")["groups"][0]
    assert g["state"] == "running" and g["stopping"] is False, g
    assert {t["name"]: t["state"] for t in g["tasks"]} == {
        "side": "running", "app": "running", "cleanup": "pending"}, g
    assert count(marks, "cleanup") == 0, read_marks(marks)
    # The first failure for good is still corral's exit code (README).
    stop_corral(running, expected_code=3)


def test_restart_all_brings_back_a_group_that_failed_for_good(corral, tmp_path):
    marks = tmp_path / "marks"
    config = {"groups": {
        "keep": {"tasks": {"keeper": {"command": trapped(marks, "keeper")}}},
        "g": {"tasks": {
            "worker": {"command": trapped(marks, "worker")},
            "fails": {"command": sh(f"{mark(marks, 'fails')}; "
                                   f"while [ ! -e {tmp_path}/fail ]; do sleep 0.02; done; exit 3"),
                      "restart": {"policy": "never"}},
            "cleanup": poststop(one_shot(marks, "cleanup")),
        }},
    }}
    running = start_and_wait(corral, config, marks, "keeper-up", "worker-up", "fails")
    (tmp_path / "fail").touch()
    wait_for(lambda: count(marks, "cleanup") == 1, what="group g to stop and run poststop")
    g = corral.status("g")["groups"][0]
    assert g["stopping"] is True and g["finished"] is True, g
    assert count(marks, "worker-term") == 1
    # Only the whole group can come back; the refusal says so.
    assert_error(corral.request("restart", target="g/fails", mode="force"),
                 "g", "restart --all g")
    (tmp_path / "fail").unlink()
    assert corral.request("restart", target="g", mode="all")["ok"] is True
    wait_for(lambda: count(marks, "worker-up") == 2 and count(marks, "fails") == 2,
             what="group g running again")
    g = corral.status("g")["groups"][0]
    assert g["stopping"] is False and g["finished"] is False, g
    assert count(marks, "cleanup") == 1 and count(marks, "keeper-term") == 0
    running.send(signal.SIGTERM)
    # The exit code still tells of g/fails' failure (README: the first task
    # that failed for good); not asserted here.
    result = running.wait()
    assert count(marks, "cleanup") == 2, result


def test_requests_during_a_shutdown(corral, tmp_path):
    marks = tmp_path / "marks"
    # app takes its time to stop: the shutdown is under way meanwhile.
    config = group({
        "app": {"command": sh(f"trap '{mark(marks, 'app-term')}; "
                              f"while [ ! -e {tmp_path}/release ]; do sleep 0.02; done; exit 0' TERM; "
                              f"{mark(marks, 'app-up')}; while :; do sleep 0.02; done")},
        # other too, so that it is still running when `start` asks for it:
        # a task waiting for its turn to stop is not "already running".
        "other": {"command": sh(f"trap 'while [ ! -e {tmp_path}/release ]; do sleep 0.02; "
                                f"done; exit 0' TERM; {mark(marks, 'other-up')}; "
                                "while :; do sleep 0.02; done")},
    })
    running = start_and_wait(corral, config, marks, "app-up", "other-up")
    assert corral.request("shutdown")["ok"] is True
    wait_for(lambda: count(marks, "app-term") == 1, what="the shutdown to reach g/app")
    status = corral.status()
    assert status["groups"][0]["stopping"] is True, status
    for fields in ({"target": "g/app"}, {"target": "g/app", "mode": "force"},
                   {"target": "g", "mode": "all"}, {"target": "g", "mode": "running"}):
        assert_error(corral.request("restart", **fields), "shutting down")
    assert_error(corral.request("start", target="g/other"), "shutting down")
    (tmp_path / "release").touch()
    assert running.wait().returncode == 0
    assert count(marks, "app-up") == 1


# ---- status --------------------------------------------------------------------


def test_status_reports_groups_and_tasks_as_documented(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, status_config(marks), marks, "setup", "app-up", "victim")
    wait_for(lambda: any(g["name"] == "doomed" and g["finished"]
                         for g in corral.status()["groups"]), what="group doomed finished")
    reply = corral.status()
    assert_status_shape(reply)
    groups = {g["name"]: g for g in reply["groups"]}
    assert list(groups) == ["web", "doomed"], reply
    web = groups["web"]
    assert web["state"] in ("main", "poststart", "running") and not web["finished"], web
    tasks = {t["name"]: t for t in web["tasks"]}
    assert list(tasks) == ["setup", "app"]
    assert tasks["setup"]["stage"] == "prestart-ephemeral" and tasks["setup"]["state"] == "dead"
    assert tasks["setup"]["pid"] is None
    assert tasks["setup"]["last_exit"]["code"] == 0
    assert tasks["setup"]["last_exit"]["signal"] is None
    assert tasks["setup"]["last_exit"]["failed"] is False
    app = tasks["app"]
    assert app["stage"] == "main" and app["state"] == "running", app
    assert pid_alive(app["pid"]) and app["last_exit"] is None and app["restarts"] == 0, app
    victim = groups["doomed"]["tasks"][0]
    assert groups["doomed"]["state"] == "poststop", groups["doomed"]
    assert victim["state"] == "dead" and victim["pid"] is None, victim
    assert victim["last_exit"]["code"] is None and victim["last_exit"]["signal"] == "SIGKILL"
    assert victim["last_exit"]["failed"] is True, victim

    # Narrowed to a group, and to a task.
    only_web = corral.status("web")
    assert [g["name"] for g in only_web["groups"]] == ["web"], only_web
    assert len(only_web["groups"][0]["tasks"]) == 2
    only_app = corral.status("web/app")
    assert [g["name"] for g in only_app["groups"]] == ["web"], only_app
    assert [t["task"] for t in only_app["groups"][0]["tasks"]] == ["web/app"], only_app

    assert_error(corral.request("status", target="web/nope"), "web/nope", "web/setup", "web/app")
    assert_error(corral.request("status", target="nope"), "nope", "web", "doomed")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 128 + signal.SIGKILL  # doomed/victim failed for good


def test_uptime_grows_and_a_restart_delay_shows(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "flaky": {"command": one_shot(marks, "flaky", code=1),
                  "restart": {"policy": "on-failure", "attempts": 5, "delay": "5s"}},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "flaky")
    entry = wait_for(lambda: (e := corral.task_status("g/flaky"))["next_restart_in_ms"] and e,
                     what="a restart delay in status")
    assert 0 < entry["next_restart_in_ms"] <= 5000, entry
    assert entry["last_exit"] == {"code": 1, "signal": None, "failed": True, "requested": False,
                                  "oom_killed": False, "oom_kills": 0,
                                  "description": entry["last_exit"]["description"],
                                  "decided_by": "restart.policy",
                                  "decision": "restarting in 5s (restart 1 of 5)"}, entry
    first = corral.task_status("g/keeper")["uptime_ms"]
    wait_for(lambda: corral.task_status("g/keeper")["uptime_ms"] > first, what="uptime to grow")
    stop_corral(running)


# ---- logs and events -------------------------------------------------------------


def test_logs_tail_and_follow(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "printer": {"command": sh(f"for i in $(seq 1 10); do echo line $i; done; "
                                  f"{mark(marks, 'printed')}; while :; do sleep 0.02; done")},
        "ticker": {"command": sh("i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.05; done")},
    })
    running = start_and_wait(corral, config, marks, "printed")
    wait_for(lambda: len(corral.request("logs", target="g/printer")["lines"]) == 10,
             what="10 lines in the log of g/printer")

    reply = corral.request("logs", target="g/printer", tail=3)
    assert reply["ok"] is True and reply["task"] == "g/printer", reply
    assert [line["text"] for line in reply["lines"]] == ["line 8", "line 9", "line 10"], reply
    assert all(abs(line["time"] - time.time()) < 600 for line in reply["lines"]), reply
    reply = corral.request("logs", target="g/printer", tail=0)
    assert [line["text"] for line in reply["lines"]] == [f"line {i}" for i in range(1, 11)]

    with corral.control() as client:
        reply = client.request("logs", target="g/ticker", tail=1, follow=True)
        assert reply["ok"] is True and len(reply["lines"]) <= 1, reply
        streamed = [client.reply() for _ in range(5)]
    numbers = [int(item["text"].split()[1]) for item in streamed]
    assert numbers == list(range(numbers[0], numbers[0] + 5)), streamed
    if reply["lines"]:
        assert numbers[0] == int(reply["lines"][0]["text"].split()[1]) + 1, (reply, streamed)
    assert all(set(item) == {"time", "task", "text"} for item in streamed), streamed

    assert_error(corral.request("logs", target="g/nope"), "g/nope", "g/printer")
    stop_corral(running)


def test_events_recent_and_follow(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({"app": {"command": trapped(marks, "app")}})
    running = start_and_wait(corral, config, marks, "app-up")
    reply = corral.request("events")
    assert reply["ok"] is True, reply
    events = reply["events"]
    started = [e for e in events if e.get("task") == "app" and e["event"] == "started"]
    assert len(started) == 1 and started[0]["pid"] == corral.task_status("g/app")["pid"], events
    assert all(e["group"] == "g" and isinstance(e["time"], float) for e in events), events
    # The same objects as the --events log.
    assert events == running.events()[: len(events)], (events, running.events())
    assert len(corral.request("events", tail=2)["events"]) == 2

    with corral.control() as client:
        assert client.request("events", tail=1, follow=True)["ok"] is True
        assert corral.request("restart", target="g/app")["ok"] is True
        seen = []
        while not any(e.get("event") == "started" for e in seen):
            seen.append(client.reply())
    kinds = [e["event"] for e in seen]
    assert "restart_requested" in kinds and kinds[-1] == "started", seen
    stop_corral(running)


def test_logs_keep_lines_that_are_not_utf8(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({"app": {"command": sh(f"echo before; printf 'caf\\351\\n'; echo after; "
                                          f"{mark(marks, 'printed')}; "
                                          "while :; do sleep 0.02; done")}})
    running = start_and_wait(corral, config, marks, "printed")
    wait_for(lambda: len(corral.request("logs", target="g/app")["lines"]) == 3,
             what="three lines kept")
    lines = corral.request("logs", target="g/app")["lines"]
    stop_corral(running)
    assert all("text" in line for line in lines), lines
    assert lines[1]["text"].startswith("caf"), lines


# ---- protocol robustness -----------------------------------------------------


def test_bad_requests_get_errors_and_the_connection_stays_usable(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, group({"app": {"command": trapped(marks, "app")}}),
                             marks, "app-up")
    bad = [
        (b'{"version": 1, "command": "status"', ["JSON"]),
        (b"not json at all", ["JSON"]),
        (b'{"version": 1, "command": "frobnicate"}', ["frobnicate"]),
        (b'{"version": 1, "command": "status", "colour": "blue"}', ["colour"]),
        (b'{"version": 1, "command": "logs", "target": "g/app", "tail": "3"}', ["tail"]),
        (b'{"version": 1, "command": "logs", "target": "g/app", "tail": -1}', ["tail"]),
        (b'{"version": "1", "command": "status"}', ["version"]),
        (b'{"command": "status"}', ["version"]),
        (b'{"version": 1}', ["command"]),
        (b'{"version": 2, "command": "status"}', ["version"]),
        (b'[1, 2]', []),
        (b'{"version": 1, "command": "restart", "target": "g"}', ["g"]),
        (b'{"version": 1, "command": "restart", "target": "g/app", "mode": "sideways"}',
         ["sideways"]),
        (b'{"version": 1, "command": "signal", "target": "g/app", "signal": 9}', ["signal"]),
        (b'{"version": 1, "command": "status", "target": "a/b/c"}', []),
        (b'{"version": 1, "command": "status"}\x00', []),
    ]
    with corral.control() as client:
        for line, words in bad:
            client.send_raw(line + b"\n")
            assert_error(client.reply(), *words)
            assert client.request("status")["ok"] is True, line
        # Several requests in one write: one reply each, in order.
        client.send_raw(b'{"version": 1, "command": "nope"}\n'
                        b'{"version": 1, "command": "status", "target": "g"}\n')
        assert client.reply()["ok"] is False
        assert client.reply()["groups"][0]["name"] == "g"
    assert count(marks, "app-up") == 1 and count(marks, "app-term") == 0
    stop_corral(running)


def test_a_request_over_64_kib_is_refused_and_the_connection_stays_usable(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, group({"app": {"command": trapped(marks, "app")}}),
                             marks, "app-up")
    huge = json.dumps({"version": 1, "command": "status", "target": "x" * (100 * 1024)})
    with corral.control() as client:
        client.send_raw(huge.encode() + b"\n")
        assert_error(client.reply(), "64 KiB")
        assert client.request("status")["ok"] is True
        # Over the limit in small pieces, then a valid request: one error,
        # then the answer.
        for _ in range(70):
            client.send_raw(b" " * 1024)
        client.send_raw(b'{"version": 1, "command": "status"}\n')
        assert_error(client.reply(), "64 KiB")
        client.send_raw(b'{"version": 1, "command": "status", "target": "g/app"}\n')
        assert client.reply()["ok"] is True
        # Just under the limit is a normal (if odd) request.
        padded = b'{"version": 1, "command": "status"' + b" " * (60 * 1024) + b"}\n"
        client.send_raw(padded)
        assert client.reply()["ok"] is True
    assert running.alive()
    stop_corral(running)


def test_200_clients_at_once_all_get_answers(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, group({"app": {"command": trapped(marks, "app")}}),
                             marks, "app-up")
    count_clients = 200
    barrier = threading.Barrier(count_clients)
    replies = [None] * count_clients

    def client(index):
        try:
            with corral.control(timeout=20) as connection:
                barrier.wait(timeout=20)
                connection.send({"version": 1, "command": "status"})
                line = connection.read_line()
                replies[index] = json.loads(line) if line else "EOF"
        except Exception as error:  # reported below
            replies[index] = repr(error)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(count_clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    failures = [r for r in replies if not (isinstance(r, dict) and r.get("ok") is True)]
    assert not failures, failures[:5]
    assert all(r["groups"][0]["tasks"][0]["state"] == "running" for r in replies)
    assert running.alive()
    stop_corral(running)


def peer_closed(sock):
    """True when the server has closed its end (buffered data may remain)."""
    poller = select.poll()
    poller.register(sock, select.POLLRDHUP | select.POLLHUP)
    return any(events & (select.POLLRDHUP | select.POLLHUP) for _, events in poller.poll(0))


def test_a_client_that_does_not_read_is_cut_and_holds_up_nobody(corral, tmp_path):
    marks = tmp_path / "marks"
    # A burst of ~16 MB of output (more than a follower may fall behind),
    # then quiet.
    line = "x" * 990
    config = group({
        "keeper": {"command": trapped(marks, "keeper")},
        "chatty": {"command": sh(f"{mark(marks, 'chatty-up')}; while [ ! -e {tmp_path}/go ]; do "
                                 f"sleep 0.02; done; yes {line} | head -n 16000; "
                                 f"{mark(marks, 'chatty-done')}; while :; do sleep 0.05; done")},
    })
    running = start_and_wait(corral, config, marks, "keeper-up", "chatty-up")
    slow_logs = corral.control()
    slow_events = corral.control()
    try:
        slow_logs.send({"version": 1, "command": "logs", "target": "g/chatty", "follow": True})
        slow_events.send({"version": 1, "command": "events", "follow": True})
        # Both have their first reply queued before the burst begins.
        assert corral.request("status")["ok"] is True
        (tmp_path / "go").touch()

        # Others are served all along.
        def served():
            started = time.monotonic()
            reply = corral.request("status")
            assert reply["ok"] is True, reply
            assert time.monotonic() - started < 10, "status took more than 10s"
            return count(marks, "chatty-done") == 1

        wait_for(served, timeout=RUN_TIMEOUT, interval=0.05, what="the burst to end")
        wait_for(lambda: peer_closed(slow_logs.sock), what="the slow log follower to be cut")
        assert running.alive()
        # Once it reads, it finds the end of its stream.
        lines = slow_logs.read_until_eof()
        assert json.loads(lines[0])["ok"] is True
        tail = json.loads(lines[-1])
        assert "text" in tail or "stream cut" in tail.get("error", ""), tail
        assert len(lines) < 16000, "the slow follower got the whole stream"
        # The events follower (little traffic) is still fine.
        assert not peer_closed(slow_events.sock)
        assert slow_events.reply()["ok"] is True
    finally:
        slow_logs.close()
        slow_events.close()
    assert corral.request("restart", target="g/keeper")["ok"] is True
    wait_for(lambda: count(marks, "keeper-up") == 2)
    stop_corral(running)


def test_a_client_sending_garbage_does_not_disturb_another(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, group({"app": {"command": trapped(marks, "app")}}),
                             marks, "app-up")
    noise = os.urandom(256 * 1024)
    with corral.control() as garbage, corral.control() as good, corral.control() as partial:
        # One that sends half a request and stalls.
        partial.send_raw(b'{"version": 1, "comm')
        for offset in range(0, len(noise), 16 * 1024):
            garbage.send_raw(noise[offset:offset + 16 * 1024])
            assert good.request("status")["ok"] is True
        garbage.send_raw(b"\n")
        # The garbage client itself is still answered after a newline.
        garbage.send_raw(b'{"version": 1, "command": "status"}\n')
        replies = []
        while not (replies and replies[-1].get("ok") is True):
            replies.append(garbage.reply())
        assert all(r["ok"] is False for r in replies[:-1]) and replies, replies
        # The stalled one finishes its request.
        partial.send_raw(b'and": "status"}\n')
        assert partial.reply()["ok"] is True
        assert good.request("status")["ok"] is True
    assert running.alive() and count(marks, "app-up") == 1
    stop_corral(running)


def test_a_client_that_disconnects_mid_stream_leaves_corral_running(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "ticker": {"command": sh(f"{mark(marks, 'ticker-up')}; "
                                 "while :; do echo tick; sleep 0.01; done")},
    })
    running = start_and_wait(corral, config, marks, "ticker-up")
    for _ in range(20):
        client = corral.control()
        client.send({"version": 1, "command": "logs", "target": "g/ticker", "follow": True})
        client.send({"version": 1, "command": "events", "follow": True})
        client.close()
    with corral.control() as client:
        assert client.request("logs", target="g/ticker", follow=True)["ok"] is True
        assert client.reply()["text"] == "tick"
    assert corral.status()["ok"] is True and running.alive()
    stop_corral(running)


def test_followers_see_the_end_when_corral_exits(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({"app": {"command": trapped(marks, "app")}})
    running = start_and_wait(corral, config, marks, "app-up")
    with corral.control() as logs, corral.control() as events:
        assert logs.request("logs", target="g/app", follow=True)["ok"] is True
        assert events.request("events", follow=True)["ok"] is True
        assert corral.request("shutdown")["ok"] is True
        assert running.wait().returncode == 0
        # The events of the shutdown, then EOF; no hang.
        streamed = [json.loads(line) for line in events.read_until_eof()]
        assert any(e.get("event") == "finished" for e in streamed), streamed
        assert logs.read_until_eof() is not None


SIOCOUTQ = 0x5411


def unread_by_server(sock):
    """Bytes this client sent that the server has not read yet."""
    import array
    import fcntl

    value = array.array("i", [0])
    fcntl.ioctl(sock.fileno(), SIOCOUTQ, value, True)
    return value[0]


def test_a_client_that_half_closes_still_gets_every_reply(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, group({"app": {"command": trapped(marks, "app")}}),
                             marks, "app-up")
    requests = 1000  # ~270 KB of replies: more than the socket buffer holds
    with corral.control() as client:
        client.send_raw(b'{"version": 1, "command": "status"}\n' * requests)
        client.sock.shutdown(socket.SHUT_WR)
        # Let corral read it all and see the EOF before we read anything.
        wait_for(lambda: unread_by_server(client.sock) == 0, what="corral to read the requests")
        poller = select.poll()
        poller.register(client.sock, select.POLLRDHUP | select.POLLHUP)
        poller.poll(2000)  # returns at once when corral closes its end
        lines = client.read_until_eof()
    assert running.alive()
    stop_corral(running)
    assert len(lines) == requests, f"{len(lines)} replies of {requests}"
    assert all(json.loads(line)["ok"] is True for line in lines)


def test_a_request_of_exactly_64_kib_is_accepted_however_it_arrives(corral, tmp_path):
    marks = tmp_path / "marks"
    running = start_and_wait(corral, group({"app": {"command": trapped(marks, "app")}}),
                             marks, "app-up")
    head = b'{"version": 1, "command": "status"'
    body = head + b" " * (64 * 1024 - len(head) - 1) + b"}"
    assert len(body) == 64 * 1024
    with corral.control() as client:
        client.send_raw(body)
        wait_for(lambda: unread_by_server(client.sock) == 0, what="corral to read the request")
        client.send_raw(b"\n")
        reply = client.reply()
    stop_corral(running)
    assert reply["ok"] is True, reply


# ---- who may connect -----------------------------------------------------------


def test_other_users_are_refused(corral, tmp_path, open_dir):
    marks = tmp_path / "marks"
    path = open_dir / "control.sock"
    running = corral.start(group({"app": {"command": trapped(marks, "app")}}),
                           env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # The file mode already keeps them out.
    assert client_as(path, NOBODY, NOBODY) == {"connect_errno": errno.EACCES}

    # Past the file mode, SO_PEERCRED: one error naming the rule, then EOF.
    path.chmod(0o666)
    outcome = client_as(path, NOBODY, NOBODY, send=False)
    assert outcome.get("eof") is True, outcome
    assert len(outcome["lines"]) == 1, outcome
    reply = json.loads(outcome["lines"][0])
    assert_error(reply, "only root and corral's own user", "control: {group")
    wait_for(lambda: "refused" in running.stderr_text() and f"uid {NOBODY}" in
             running.stderr_text(), what="the refusal in corral's stderr")
    # Sending first makes no difference.
    outcome = client_as(path, NOBODY, NOBODY, send=True)
    assert all(json.loads(line)["ok"] is False for line in outcome["lines"]), outcome
    assert not outcome["lines"] or "only root" in outcome["lines"][0], outcome
    # Root still is served, and nothing was done for the refused ones.
    assert corral.request("status", path=path)["ok"] is True
    assert count(marks, "app-up") == 1 and running.alive()
    stop_corral(running)
    assert not path.exists()


def test_members_of_the_control_group_are_served(corral, tmp_path, open_dir):
    marks = tmp_path / "marks"
    path = open_dir / "control.sock"
    config = group({"app": {"command": trapped(marks, "app")}})
    config["control"] = {"group": "nogroup"}
    running = corral.start(config, env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    status = path.stat()
    assert stat.S_IMODE(status.st_mode) == 0o660 and status.st_gid == NOBODY, status
    assert stat.S_IMODE(open_dir.stat().st_mode) == 0o755  # left alone

    # Primary group.
    outcome = client_as(path, NOBODY, NOBODY)
    reply = json.loads(outcome["lines"][0])
    assert reply["ok"] is True and reply["groups"][0]["tasks"][0]["state"] == "running", outcome
    # Supplementary group.
    outcome = client_as(path, NOBODY, 4242, groups=[NOBODY])
    assert json.loads(outcome["lines"][0])["ok"] is True, outcome
    # Neither: the file mode refuses, and past it SO_PEERCRED does.
    assert client_as(path, NOBODY, 4242) == {"connect_errno": errno.EACCES}
    path.chmod(0o666)
    outcome = client_as(path, NOBODY, 4242, send=False)
    assert outcome.get("eof") is True and len(outcome["lines"]) == 1, outcome
    assert_error(json.loads(outcome["lines"][0]), "control group")
    stop_corral(running)


def test_a_member_with_many_supplementary_groups_is_served(corral, tmp_path, open_dir):
    marks = tmp_path / "marks"
    path = open_dir / "control.sock"
    config = group({"app": {"command": trapped(marks, "app")}})
    config["control"] = {"group": "nogroup"}
    running = corral.start(config, env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    # The control group last of 300 supplementary groups; primary: another.
    groups = list(range(20000, 20299)) + [NOBODY]
    outcome = client_as(path, NOBODY, 4242, groups=groups)
    stop_corral(running)
    assert "lines" in outcome and outcome["lines"], outcome
    assert json.loads(outcome["lines"][0])["ok"] is True, outcome


def test_the_directory_corral_creates_is_private(corral, tmp_path):
    marks = tmp_path / "marks"
    path = tmp_path / "run" / "corral" / "control.sock"
    running = corral.start(group({"app": {"command": trapped(marks, "app")}}),
                           env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "run").stat().st_mode) == 0o700
    assert stat.S_ISSOCK(path.stat().st_mode) and stat.S_IMODE(path.stat().st_mode) == 0o600
    stop_corral(running)
    assert not path.exists()

    path = tmp_path / "grouprun" / "control.sock"
    config = group({"app": {"command": trapped(marks, "app")}})
    config["control"] = {"group": "nogroup"}
    running = corral.start(config, env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    status = path.parent.stat()
    assert stat.S_IMODE(status.st_mode) == 0o750 and status.st_gid == NOBODY, status
    stop_corral(running)


# ---- the socket file -----------------------------------------------------------


def test_a_stale_socket_is_replaced(corral, tmp_path):
    marks = tmp_path / "marks"
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(corral.socket_path))
    stale.close()
    assert stat.S_ISSOCK(corral.socket_path.stat().st_mode)
    running = start_and_wait(corral, group({"app": {"command": trapped(marks, "app")}}),
                             marks, "app-up")
    assert stat.S_IMODE(corral.socket_path.stat().st_mode) == 0o600
    stop_corral(running)
    assert not corral.socket_path.exists()


def assert_refuses_to_start(corral, marks, *words, env=None):
    result = corral.run(group({"app": {"command": trapped(marks, "app")}}), env=env)
    assert result.returncode == 1, result
    for word in words:
        assert word in result.stderr, (word, result)
    assert not result.events.of_task("app", "started"), result.events
    assert count(marks, "app-up") == 0
    assert not corral.leftovers()


def test_a_live_socket_makes_corral_refuse_to_start(corral, tmp_path):
    marks = tmp_path / "marks"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(str(corral.socket_path))
        listener.listen(16)
        assert_refuses_to_start(corral, marks, str(corral.socket_path), "listening")
        # Its socket is left alone.
        assert stat.S_ISSOCK(corral.socket_path.stat().st_mode)
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.connect(str(corral.socket_path))
        probe.close()
    finally:
        listener.close()


def test_a_second_corral_on_a_socket_in_use_stops_before_making_anything(corral, tmp_path):
    """It says so first and only: no "running 1 group", no cgroup tree of
    its own (made and torn down), no task started."""
    marks = tmp_path / "marks"
    first = corral.start(group({"app": {"command": trapped(marks, "app")}}))
    corral.wait_control(first)
    config = corral.config(group({"other": {"command": sh(f"touch {tmp_path}/other-ran")}}))
    second = subprocess.run([str(corral.binary), "run", "-v", str(config)], capture_output=True,
                            text=True, env=corral.env(), timeout=RUN_TIMEOUT)
    assert second.returncode == 1, second
    lines = second.stderr.splitlines()
    assert lines and "another corral is already listening on" in lines[0], second.stderr
    assert not any("running 1 group" in line or "cgroup" in line for line in lines), lines
    assert not (tmp_path / "other-ran").exists()
    assert corral.task_status("g/app")["state"] == "running"
    first.send(15)
    assert first.wait().returncode == 0


def test_a_regular_file_at_the_socket_path_is_refused(corral, tmp_path):
    marks = tmp_path / "marks"
    corral.socket_path.write_text("precious\n")
    assert_refuses_to_start(corral, marks, str(corral.socket_path), "not a socket")
    assert corral.socket_path.read_text() == "precious\n"


def test_a_configured_socket_path_that_cannot_work_stops_corral_from_starting(corral, tmp_path):
    marks = tmp_path / "marks"
    (tmp_path / "file").write_text("")
    unusable = tmp_path / "file" / "control.sock"
    assert_refuses_to_start(corral, marks, str(unusable), env={"CORRAL_SOCKET": str(unusable)})
    too_long = tmp_path / ("d" * 120) / "control.sock"
    assert_refuses_to_start(corral, marks, "too long", env={"CORRAL_SOCKET": str(too_long)})


def test_the_socket_is_removed_when_corral_exits(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({"app": {"command": sh(f"{mark(marks, 'app-up')}; "
                                          f"while [ ! -e {tmp_path}/done ]; do sleep 0.02; done"),
                            "restart": {"policy": "never"}}})
    running = start_and_wait(corral, config, marks, "app-up")
    status = corral.socket_path.stat()
    assert stat.S_ISSOCK(status.st_mode) and stat.S_IMODE(status.st_mode) == 0o600, status
    assert status.st_uid == os.geteuid()
    # Exits on its own (the only task ends): the socket goes too.
    (tmp_path / "done").touch()
    result = running.wait()
    assert result.returncode == 0, result
    assert not corral.socket_path.exists()


def test_shutdown_request_is_graceful(corral, tmp_path):
    marks = tmp_path / "marks"
    config = group({
        "app": {"command": trapped(marks, "app")},
        "cleanup": poststop(one_shot(marks, "cleanup")),
    })
    running = start_and_wait(corral, config, marks, "app-up")
    reply = corral.request("shutdown")
    assert reply["ok"] is True and reply["message"], reply
    result = running.wait()
    assert result.returncode == 0, result
    assert count(marks, "app-term") == 1 and count(marks, "cleanup") == 1, read_marks(marks)
    assert times(marks, "app-term")[0] < times(marks, "cleanup")[0]
    assert not corral.socket_path.exists()
