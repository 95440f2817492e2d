"""Rough edges of the CLI found in a user trial (issue 12, section 4): a
refused restart suggests only what works, `start` refuses a running task
and tells the truth about a pending one, `run --keep-running` keeps corral
up with its tasks stopped, `events -f | head -1` ends with head, and
`run --help` is only help. Asserted from the CLI's words and exit codes and
from `status --json`."""

import signal
import subprocess

from conftest import sh, wait_for

IDLE = "exec sleep 1000"
NEVER = {"policy": "never"}


def stack():
    """A one-shot that has completed by the time main runs, a main task, a
    main task that ends by itself, and a poststop task that waits."""
    return {"groups": {"g": {"tasks": {
        "migrate": {"command": sh("exit 0"), "lifecycle": {"hook": "prestart"}},
        "app": {"command": sh(IDLE)},
        "once": {"command": sh("exit 0"), "restart": NEVER},
        "cleanup": {"command": sh("exit 0"), "lifecycle": {"hook": "poststop"}},
    }}}}


def start_stack(corral):
    running = corral.start(stack())
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/once")["state"] == "dead"
             and corral.task_status("g/app")["state"] == "running", what="the stack to run")
    return running


def test_a_refused_restart_suggests_only_what_works(corral, tmp_path):
    running = start_stack(corral)
    # A completed prestart one-shot: its gate cannot open again, so
    # --force would be refused too; only a restart of the group works.
    refused = corral.cli("restart", "g/migrate")
    assert refused.returncode != 0
    assert "restart --all g" in refused.stderr and "--force" not in refused.stderr, \
        refused.stderr
    assert corral.cli("restart", "--force", "g/migrate").returncode != 0
    # A dead main task can run again: --force is the advice, and works.
    refused = corral.cli("restart", "g/once")
    assert refused.returncode != 0 and "restart --force g/once" in refused.stderr, \
        refused.stderr
    assert corral.cli("restart", "--force", "g/once").returncode == 0
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_start_refuses_a_running_task(corral, tmp_path):
    running = start_stack(corral)
    pid = corral.task_status("g/app")["pid"]
    result = corral.cli("start", "g/app")
    assert result.returncode != 0, result
    assert "g/app is already running; use `corral restart g/app`" in result.stderr
    assert corral.task_status("g/app")["pid"] == pid
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_start_of_a_pending_poststop_task_says_what_happens(corral, tmp_path):
    running = start_stack(corral)
    result = corral.cli("start", "g/cleanup")
    assert result.returncode == 0, result
    assert result.stdout.strip() == (
        "g/cleanup is pending: a poststop task runs once the rest of group g has stopped")
    assert corral.task_status("g/cleanup")["state"] == "pending"
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_stop_help_says_that_stopping_main_tasks_ends_corral(corral):
    help_text = corral.cli("stop", "--help").stdout
    assert "corral exits" in help_text and "--keep-running" in help_text, help_text


def test_keep_running_lets_stopped_tasks_start_again(corral, tmp_path):
    config = corral.config({"groups": {"g": {"tasks": {
        "side": {"command": sh(IDLE), "lifecycle": {"hook": "prestart", "sidecar": True}},
        "app": {"command": sh(IDLE)},
    }}}})
    # corral.start() knows no run options: started by hand.
    popen = subprocess.Popen([str(corral.binary), "run", "--keep-running", str(config)],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, cwd=tmp_path, env=corral.env(),
                             start_new_session=True)
    corral.started.append(popen)
    wait_for(lambda: corral.cli("status", "g/app").returncode == 0
             and corral.task_status("g/app")["state"] == "running", what="app to run")
    assert corral.cli("stop", "g/app").returncode == 0
    wait_for(lambda: corral.task_status("g/app")["state"] == "dead", what="app to stop")
    # The group goes on: its sidecar runs, and the main task starts again.
    assert corral.task_status("g/side")["state"] == "running"
    assert corral.cli("start", "g/app").returncode == 0
    wait_for(lambda: corral.task_status("g/app")["state"] == "running", what="app to run again")
    # Everything stopped: still up, until asked to go.
    assert corral.cli("stop", "g/app").returncode == 0
    assert corral.cli("stop", "g/side").returncode == 0
    wait_for(lambda: corral.status()["groups"][0]["finished"], what="the group to finish")
    assert popen.poll() is None
    assert corral.cli("restart", "--all", "g").returncode == 0
    wait_for(lambda: corral.task_status("g/app")["state"] == "running", what="a new run")
    assert corral.cli("shutdown").returncode == 0
    assert popen.wait(timeout=30) == 0


def test_without_keep_running_stopping_the_main_task_ends_corral(corral, tmp_path):
    running = corral.start({"groups": {"g": {"tasks": {"app": {"command": sh(IDLE)}}}}})
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/app")["state"] == "running", what="app to run")
    assert corral.cli("stop", "g/app").returncode == 0
    assert running.wait().returncode == 0


def test_events_follow_ends_when_its_reader_goes(corral, tmp_path):
    running = start_stack(corral)
    # Nothing happens any more: only the closed pipe can end the follower.
    pipeline = subprocess.run(
        f"'{corral.binary}' events -f | head -1", shell=True, capture_output=True, text=True,
        env=corral.env(), timeout=20)
    assert pipeline.returncode == 0, pipeline
    assert len(pipeline.stdout.splitlines()) == 1, pipeline.stdout
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_run_help_is_only_help(corral, tmp_path):
    result = subprocess.run([str(corral.binary), "run", "--help"], capture_output=True,
                            text=True, env=corral.env())
    assert result.returncode == 0
    assert result.stdout.startswith("usage: corral run")
    assert "exiting with code" not in result.stderr + result.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("groups: {}\n")
    result = subprocess.run([str(corral.binary), "run", str(bad)], capture_output=True,
                            text=True, env=corral.env())
    assert result.returncode == 1
    assert result.stderr.rstrip().endswith("corral: exiting with code 1"), result.stderr
