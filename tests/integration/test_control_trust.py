"""Who is an operator: a task, or any process corral started (a task's
children, a hook, a probe), is never one; an operator in other namespaces
than corral's (systemd's PrivateTmp=, an unshare -m shell) still is. A confined root task that
sees the socket is refused every request unless its config's control:
list grants that one kind; a task with its own mount namespace does not
see the socket at all. Every attempt leaves the running tasks and the
config as they were.

The tries come from inside the task (control_from_task.py, its command),
with corral's default isolation: root, every capability dropped, the
default seccomp filter, no_new_privs, but no root file system of its own."""

import json
import subprocess
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, sh, wait_for
from helpers_control import NOBODY, client_as, count, group, trapped

FROM_TASK = str(Path(__file__).with_name("control_from_task.py"))
PYTHON = "/usr/bin/python3"
# Own pid, net, uts, ipc and cgroup namespaces, the host's file system:
# the socket is in sight.
SEES_THE_HOST_TREE = {"namespaces": ["pid", "net", "uts", "ipc", "cgroup"]}
# The same with a mount namespace: the socket is hidden there.
OWN_MOUNT_NAMESPACE = {"namespaces": ["pid", "mount", "net", "uts", "ipc", "cgroup"]}


def attempts(tmp_path):
    """exec into an unconfined task, reload another file (run_intruder
    writes it: the running config and a task more), stop a task."""
    planted = tmp_path / "planted.yaml"
    return [
        {"version": 1, "command": "exec", "target": "g/victim",
         "argv": ["/bin/sh", "-c", f"touch {tmp_path}/escaped"]},
        {"version": 1, "command": "reload", "path": str(planted)},
        {"version": 1, "command": "stop", "target": "g/victim"},
    ]


def intruder(requests, isolation, **task):
    return {"command": [PYTHON, FROM_TASK, *map(json.dumps, requests)],
            "restart": {"policy": "never"}, "isolation": isolation, **task}


def run_intruder(corral, tmp_path, requests, isolation, **task):
    """Starts corral with g/victim (unconfined, recording its signals) and
    g/intruder; returns (running, what the intruder saw)."""
    marks = tmp_path / "marks"
    config = group({
        "victim": {"command": trapped(marks, "victim")},
        "intruder": intruder(requests, isolation, **task),
    })
    # What a reload of another file would add: one task, the rest as it is.
    planted = json.loads(json.dumps(config))
    planted["groups"]["g"]["tasks"]["planted"] = {
        "command": sh(f"touch {tmp_path}/planted-ran; sleep 1000")}
    (tmp_path / "planted.yaml").write_text(json.dumps(planted))
    running = corral.start(config)
    corral.wait_control(running)

    def outcome():
        lines = [l for l in running.result().stdout_lines() if l.startswith("g/intruder | {")]
        return lines and json.loads(lines[0].split(" | ", 1)[1])

    seen = wait_for(outcome, timeout=RUN_TIMEOUT, what="the intruder's report")
    return running, seen


def assert_nothing_changed(corral, tmp_path):
    marks = tmp_path / "marks"
    assert not (tmp_path / "escaped").exists(), "exec ran a command for the task"
    assert not (tmp_path / "planted-ran").exists(), "the planted config was loaded"
    tasks = [t["task"] for g in corral.status()["groups"] for t in g["tasks"]]
    assert "g/planted" not in tasks, tasks
    assert corral.task_status("g/victim")["state"] == "running"
    assert count(marks, "victim-up") == 1 and count(marks, "victim-term") == 0


def test_a_confined_root_task_that_sees_the_socket_is_refused_exec_reload_and_stop(corral,
                                                                                   tmp_path):
    running, seen = run_intruder(corral, tmp_path, attempts(tmp_path), SEES_THE_HOST_TREE)
    assert seen["visible"] is True, seen
    for attempt in seen["requests"]:
        reply = attempt.get("reply")
        assert reply and reply["ok"] is False, attempt
        assert "g/intruder is a task" in reply["error"], attempt
        assert "control:" in reply["error"], attempt
    assert_nothing_changed(corral, tmp_path)
    # corral's log names the task.
    wait_for(lambda: "refused task g/intruder" in running.stderr_text(),
             what="the refusal naming the task in corral's stderr")
    running.send(15)
    assert running.wait().returncode == 0


def test_a_task_with_its_own_mount_namespace_does_not_see_the_socket(corral, tmp_path):
    running, seen = run_intruder(corral, tmp_path, attempts(tmp_path), OWN_MOUNT_NAMESPACE)
    # Covered where the task looks (the host's tree, its own namespace).
    assert seen["visible"] is False, seen
    for attempt in seen["requests"]:
        assert "reply" not in attempt and attempt.get("error"), attempt
    assert_nothing_changed(corral, tmp_path)
    # corral, and the host, still have it.
    assert corral.request("status")["ok"] is True
    running.send(15)
    assert running.wait().returncode == 0


@pytest.mark.parametrize("isolation", [SEES_THE_HOST_TREE, OWN_MOUNT_NAMESPACE],
                         ids=["host-tree", "own-mount-namespace"])
def test_a_task_granted_one_request_may_make_that_one_only(corral, tmp_path, isolation):
    requests = [{"version": 1, "command": "status", "target": "g/victim"}] + attempts(tmp_path)
    running, seen = run_intruder(corral, tmp_path, requests, isolation, control=["status"])
    # Granted a right, it keeps the socket in sight.
    assert seen["visible"] is True, seen
    status, *refused = seen["requests"]
    assert status["reply"]["ok"] is True, status
    assert status["reply"]["groups"][0]["tasks"][0]["task"] == "g/victim", status
    for attempt, command in zip(refused, ["exec", "reload", "stop"]):
        reply = attempt.get("reply")
        assert reply and reply["ok"] is False, attempt
        assert "g/intruder is a task" in reply["error"], attempt
        assert f"grants (status), not {command}" in reply["error"], attempt
    assert_nothing_changed(corral, tmp_path)
    running.send(15)
    assert running.wait().returncode == 0


def test_an_operator_in_other_namespaces_is_still_an_operator(corral, tmp_path):
    marks = tmp_path / "marks"
    # keeper: the group (and corral) runs on once g/app is stopped.
    running = corral.start(group({"app": {"command": trapped(marks, "app")},
                                  "keeper": {"command": sh("sleep 1000")}}))
    corral.wait_control(running)
    # Root in a mount namespace of its own (as corral's operator is when
    # corral runs under systemd's PrivateTmp=): not a task, not corral's.
    result = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", str(corral.binary), "stop", "g/app"],
        capture_output=True, text=True, env=corral.env(), timeout=RUN_TIMEOUT)
    assert result.returncode == 0, result
    wait_for(lambda: count(marks, "app-term") == 1, what="g/app to get its SIGTERM")
    running.send(15)
    assert running.wait().returncode == 0


def test_a_probe_corral_started_is_refused_though_in_no_task_cgroup(corral, tmp_path):
    """An exec probe runs as corral's helper, outside every task's cgroup:
    descent from corral is what marks it."""
    marks = tmp_path / "marks"
    said = tmp_path / "probe-said"
    probe = sh(f"{corral.binary} stop g/victim 2>{said}; exit 0")
    running = corral.start(group({
        "victim": {"command": trapped(marks, "victim")},
        "prober": {"command": sh("sleep 1000"),
                   "readiness": {"exec": probe, "interval": "1s"}},
    }))
    corral.wait_control(running)
    wait_for(lambda: said.exists() and said.read_text(), what="the probe's refusal")
    assert "was started by corral" in said.read_text(), said.read_text()
    assert corral.task_status("g/victim")["state"] == "running"
    assert count(marks, "victim-term") == 0
    running.send(15)
    assert running.wait().returncode == 0


def test_a_control_group_member_may_reload_the_running_config_by_its_path(corral, tmp_path,
                                                                         open_dir):
    marks = tmp_path / "marks"
    path = open_dir / "control.sock"
    config = group({"app": {"command": trapped(marks, "app")}})
    config["control"] = {"group": "nogroup"}
    config_path = corral.config(config)
    running = corral.start(config_path, env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    # The running config by its absolute path: the same file, not another.
    request = {"version": 1, "command": "reload", "path": str(config_path.resolve())}
    outcome = client_as(path, NOBODY, 4242, groups=[NOBODY], request=request)
    reply = json.loads(outcome["lines"][0])
    assert reply["ok"] is True, reply
    # Any other file is still refused.
    other = corral.config(config)
    request["path"] = str(other)
    outcome = client_as(path, NOBODY, 4242, groups=[NOBODY], request=request)
    reply = json.loads(outcome["lines"][0])
    assert reply["ok"] is False and "another file" in reply["error"], reply
    running.send(15)
    assert running.wait().returncode == 0
