"""`instances: N` (supervisord's numprocs): N copies of a task, named
TASK@0 ... TASK@N-1, each with CORRAL_INSTANCE in its environment;
addressed one by one (group/task@1) or all together (group/task) by
status, restart, stop, start, signal and logs; `after:` naming the task
waits for every instance."""

import signal

from conftest import sh, wait_for

IDLE = "exec sleep 1000"


def pids(corral, names):
    return {name: corral.task_status(name)["pid"] for name in names}


def test_instances_run_with_their_number_and_are_addressed_together(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {
        "web": {"instances": 3,
                "command": sh(f'echo "I am $CORRAL_TASK, instance $CORRAL_INSTANCE"; {IDLE}')},
        # Keeps the group up while every instance is stopped.
        "keeper": {"command": sh(IDLE)}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    names = ["g/web@0", "g/web@1", "g/web@2"]
    wait_for(lambda: all(corral.task_status(n)["state"] == "running" for n in names),
             what="three instances running")
    wait_for(lambda: len(corral.cli("logs", "g/web").stdout.splitlines()) == 3,
             what="a line from each")
    lines = corral.cli("logs", "g/web").stdout.splitlines()
    assert sorted(lines) == [f"g/web@{i} | I am web@{i}, instance {i}" for i in range(3)], lines
    status = corral.cli("status", "g/web")
    assert status.returncode == 0 and all(f"web@{i}" in status.stdout for i in range(3))

    # One instance: only it restarts.
    before = pids(corral, names)
    assert corral.cli("restart", "g/web@1").returncode == 0
    wait_for(lambda: corral.task_status("g/web@1")["pid"] not in (None, before["g/web@1"]),
             what="web@1 restarted")
    assert pids(corral, ["g/web@0", "g/web@2"]) == {n: before[n] for n in ["g/web@0", "g/web@2"]}

    # All of them, with one reply naming each.
    before = pids(corral, names)
    restart = corral.cli("restart", "g/web")
    assert restart.returncode == 0, restart
    assert all(f"g/web@{i}" in restart.stdout for i in range(3)), restart.stdout
    wait_for(lambda: all(corral.task_status(n)["pid"] not in (None, before[n]) for n in names),
             what="every instance restarted")
    assert corral.cli("stop", "g/web").returncode == 0
    wait_for(lambda: all(corral.task_status(n)["state"] == "dead" for n in names),
             what="every instance stopped")
    assert corral.cli("start", "g/web").returncode == 0
    wait_for(lambda: all(corral.task_status(n)["state"] == "running" for n in names),
             what="every instance started again")
    follow = corral.cli("logs", "-f", "g/web")
    assert follow.returncode == 1 and "follow one (g/web@0) or the group (g)" in follow.stderr
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_after_a_task_with_instances_waits_for_every_one(corral, tmp_path):
    done = tmp_path / "done"
    done.mkdir()
    config = {"groups": {"g": {"tasks": {
        "shard": {"instances": 3, "lifecycle": {"hook": "prestart"},
                  "command": sh(f"sleep 0.$CORRAL_INSTANCE; touch {done}/$CORRAL_INSTANCE")},
        "merge": {"after": {"shard": "completed"}, "restart": {"policy": "never"},
                  "command": sh(f"ls {done} | tr '\\n' ' '")},
    }}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    assert "g/merge | 0 1 2 " in result.stdout_lines(), result.stdout


def test_instances_must_be_a_count(corral):
    for value, said in [(0, "must be a whole number from 1 to 1000, not \"0\""),
                        ("many", "must be a whole number from 1 to 1000, not \"many\"")]:
        result = corral.check({"groups": {"g": {"tasks": {"t": {
            "command": ["true"], "instances": value}}}}})
        assert result.returncode == 1 and f"g/t: instances: {said}" in result.stderr, result


def test_a_reload_changes_the_count(corral):
    config = {"groups": {"g": {"tasks": {"web": {"instances": 2, "command": sh(IDLE)}}}}}
    running = corral.start(corral.config(config, name="reload.yaml"))
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/web@1")["state"] == "running", what="two running")
    kept = corral.task_status("g/web@0")["pid"]
    config["groups"]["g"]["tasks"]["web"]["instances"] = 3
    corral.config(config, name="reload.yaml")
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: corral.task_status("g/web@2")["state"] == "running", what="a third")
    assert corral.task_status("g/web@0")["pid"] == kept  # the others untouched
    config["groups"]["g"]["tasks"]["web"]["instances"] = 1
    corral.config(config, name="reload.yaml")
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: [t["task"] for g in corral.status()["groups"] for t in g["tasks"]] ==
             ["g/web@0"], what="back to one")
    assert corral.task_status("g/web@0")["pid"] == kept
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
