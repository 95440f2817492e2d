"""corral scale GROUP/TASK=N (issue 30, item 3; docker compose's --scale,
process-compose's `process scale`, kubectl scale): how many instances a
task written with `instances:` has, changed while corral runs; kept until
the next reload, which goes back to the config's count."""

import signal

from conftest import sh, wait_for

IDLE = "exec sleep 1000"


def live_tasks(corral, group="g"):
    return [t["task"] for g in corral.status()["groups"] if g["name"] == group
            for t in g["tasks"]]


def instance_set(corral, name="g/web"):
    for group in corral.status()["groups"]:
        for entry in group["instance_sets"]:
            if entry["task"] == name:
                return entry
    raise AssertionError(f"no instance set {name}")


def start(corral, config, name="scale.yaml"):
    running = corral.start(corral.config(config, name=name))
    corral.wait_control(running)
    return running


def web(count, **task):
    definition = {"instances": count, "command": sh(f'echo "instance $CORRAL_INSTANCE"; {IDLE}')}
    definition.update(task)
    return definition


def test_scale_up_then_down_then_a_reload_goes_back_to_the_config(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"web": web(2), "keep": {"command": sh(IDLE)}}}}}
    running = start(corral, config)
    wait_for(lambda: corral.task_status("g/web@1")["state"] == "running", what="two running")
    first = corral.task_status("g/web@0")["pid"]

    up = corral.cli("scale", "g/web=4")
    assert up.returncode == 0, up
    assert up.stdout == ("g/web: scaled from 2 to 4 instances (the config says 2): "
                         "g/web@2, g/web@3 start\n"), up.stdout
    wait_for(lambda: corral.task_status("g/web@3")["state"] == "running", what="four running")
    wait_for(lambda: len(corral.cli("logs", "g/web").stdout.splitlines()) == 4,
             what="a line from each")
    assert sorted(corral.cli("logs", "g/web").stdout.splitlines()) == \
        [f"g/web@{i} | instance {i}" for i in range(4)]
    assert corral.task_status("g/web@0")["pid"] == first  # the others untouched
    assert instance_set(corral) == {"task": "g/web", "configured": 2, "instances": 4,
                                    "scaled": True, "roll": None}
    table = corral.cli("status")
    assert "  web: 4 instances (corral scale); the config says 2\n" in table.stdout, table.stdout
    inspect = corral.cli("inspect", "g/web@3")
    assert "instance      3 of g/web: 4 now, the config says 2 (corral scale); update: " \
        "recreate\n" in inspect.stdout, inspect.stdout

    # Down: the highest go, gracefully, and are forgotten once dead.
    down = corral.cli("scale", "g/web=1")
    assert down.returncode == 0, down
    assert "g/web@3, g/web@2, g/web@1 stop" in down.stdout, down.stdout
    wait_for(lambda: live_tasks(corral) == ["g/web@0", "g/keep"], what="back to one")
    assert corral.task_status("g/web@0")["pid"] == first
    events = running.events()
    for i in (1, 2, 3):
        assert events.of_task(f"web@{i}", "removed", group="g")[0]["message"] == \
            "scaled down by corral scale: it stops"
        assert events.of_task(f"web@{i}", "killing", group="g")  # its kill signal
    scaled = events.of_task("web", "scaled", group="g")
    assert [e["message"] for e in scaled] == [
        "scaled from 2 to 4 instances (the config says 2): g/web@2, g/web@3 start",
        "scaled from 4 to 1 instance (the config says 2): g/web@3, g/web@2, g/web@1 stop"]

    # A reload goes back to the config's count, changed or not.
    reload = corral.cli("reload")
    assert reload.returncode == 0, reload
    assert "task g/web@1: added" in reload.stdout, reload.stdout
    wait_for(lambda: corral.task_status("g/web@1")["state"] == "running", what="two again")
    assert instance_set(corral)["scaled"] is False
    assert corral.task_status("g/web@0")["pid"] == first
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_new_instances_wait_for_what_the_task_waits_for(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {
        "db": {"command": sh(IDLE)},
        "web": web(1, after={"db": "started"})}}}}
    running = start(corral, config)
    wait_for(lambda: corral.task_status("g/web@0")["state"] == "running", what="web up")
    assert corral.cli("stop", "g/db").returncode == 0
    wait_for(lambda: corral.task_status("g/db")["state"] == "dead", what="db stopped")
    assert corral.cli("scale", "g/web=2").returncode == 0
    wait_for(lambda: corral.task_status("g/web@1")["waiting_for"] is not None, what="a wait")
    web1 = corral.task_status("g/web@1")
    assert web1["state"] == "pending" and "g/db" in web1["waiting_for"], web1
    assert corral.cli("start", "g/db").returncode == 0
    wait_for(lambda: corral.task_status("g/web@1")["state"] == "running", what="web@1 started")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_several_pairs_at_once_and_json(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"web": web(1), "worker": web(3)}}}}
    running = start(corral, config)
    result = corral.cli("scale", "--json", "g/web=2", "g/worker=3")
    assert result.returncode == 0, result
    assert '"tasks":[{"task":"g/web","from":1,"to":2,"configured":1},' \
        '{"task":"g/worker","from":3,"to":3,"configured":3}]' in result.stdout, result.stdout
    assert '"message":"g/web: scaled from 1 to 2 instances (the config says 1): g/web@1 ' \
        'start; g/worker: 3 instances, unchanged"' in result.stdout
    wait_for(lambda: corral.task_status("g/web@1")["state"] == "running", what="web@1")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_scale_mistakes_change_nothing(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {
        "web": web(2),
        # Ignores SIGTERM: a scale down leaves it stopping for its kill timeout.
        "slow": {"instances": 2, "kill": {"timeout": "4s"},
                 "command": sh(f"trap '' TERM; echo up; while :; do sleep 0.1; done")},
        "solo": {"command": sh(IDLE)}}}}}
    running = start(corral, config)
    wait_for(lambda: corral.task_status("g/slow@1")["state"] == "running", what="slow@1 up")
    before = live_tasks(corral)
    cases = [
        (["scale", "g/solo=2"], 1,
         "corral: g/solo has no instances: scale takes a task written with instances: N "
         "(instances: 1 makes it solo@0, one instance that can be scaled)"),
        (["scale", "g/nope=2"], 1, "corral: no task g/nope in group g"),
        (["scale", "x/web=2"], 1, "corral: x/web: no group \"x\""),
        (["scale", "g/web=1001"], 2, "expected GROUP/TASK=N (N from 0 to 1000), not "
         "\"g/web=1001\""),
        (["scale", "g/web"], 2, "expected GROUP/TASK=N (N from 0 to 1000), not \"g/web\""),
        (["scale", "g/web@1=3"], 2,
         "scale needs a task written with instances: (group/task), not \"g/web@1\""),
        (["scale", "g/web=3", "g/web=4"], 2, "g/web is named twice"),
        (["scale"], 2, "expected GROUP/TASK=N"),
        # All or nothing: the good pair is not applied either.
        (["scale", "g/web=3", "g/solo=2"], 1, "corral: g/solo has no instances"),
    ]
    for args, code, said in cases:
        result = corral.cli(*args)
        assert result.returncode == code and said in result.stderr, (args, result)
    assert live_tasks(corral) == before

    # An instance still stopping after a scale down holds its name.
    assert corral.cli("scale", "g/slow=1").returncode == 0
    wait_for(lambda: corral.task_status("g/slow@1")["state"] == "stopping", what="stopping")
    again = corral.cli("scale", "g/slow=2")
    assert again.returncode == 1 and "corral: g/slow@1 is still stopping after an earlier " \
        "scale down or reload: scale up again once it is gone" in again.stderr, again
    # The protocol says the same to a client that is not the CLI.
    reply = corral.request("scale", counts={"g/web": "3"})
    assert reply == {"ok": False, "error": "\"counts\": \"g/web\" must be a whole number of "
                     "instances"}, reply
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_roll_and_a_scale_do_not_overlap(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"web": web(
        2, readiness={"exec": ["/bin/sh", "-c", f"test ! -e {tmp_path}/hold"],
                      "interval": "100ms"})}}}}
    running = start(corral, config)
    wait_for(lambda: corral.task_status("g/web@1")["ready"], what="both ready")
    (tmp_path / "hold").touch()
    roll = corral.cli_popen("restart", "--rolling", "g/web")
    wait_for(lambda: instance_set(corral)["roll"] is not None, what="the roll begun")
    refused = corral.cli("scale", "g/web=3")
    assert refused.returncode == 1 and "corral: g/web: a rolling restart goes on: scale once " \
        "it is over" in refused.stderr, refused
    (tmp_path / "hold").unlink()
    assert roll.wait(30) == 0
    assert corral.cli("scale", "g/web=3").returncode == 0
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_scale_to_zero_keeps_the_task_and_its_group(corral, tmp_path):
    """Issue 35.8: `scale G/T=0`, as `kubectl scale --replicas=0`: no
    instance runs, the task stays defined (status shows it at 0, it keeps
    its group and corral up), it counts as ready as a Deployment at 0
    replicas is Available, and a scale up brings instances back from the
    same definition; a reload goes back to the config's count."""
    config = {"groups": {"g": {"tasks": {"web": web(2, env={"FLAVOUR": "kept"})}}}}
    running = start(corral, config)
    wait_for(lambda: corral.task_status("g/web@1")["state"] == "running", what="two running")
    down = corral.cli("scale", "g/web=0")
    assert down.returncode == 0, down
    assert down.stdout == ("g/web: scaled from 2 to 0 instances (the config says 2): "
                           "g/web@1, g/web@0 stop\n"), down.stdout
    wait_for(lambda: live_tasks(corral) == [], what="no instance left")
    assert instance_set(corral) == {"task": "g/web", "configured": 2, "instances": 0,
                                    "scaled": True, "roll": None}
    table = corral.cli("status", "g")
    assert "  web: 0 instances (corral scale); the config says 2\n" in table.stdout, \
        table.stdout
    # Its group (its only task was web) and corral stay up.
    group = corral.status()["groups"][0]
    assert group["finished"] is False and group["stopping"] is False, group
    assert running.alive()
    for target in ([], ["g"], ["g/web"]):
        ready = corral.cli("status", "--ready", *target)
        assert ready.returncode == 0 and ready.stdout == "ready\n", (target, ready)
    stop = corral.cli("stop", "g/web")
    assert stop.returncode == 1 and "corral: g/web has no instance: corral scale took it to " \
        "0 (`corral scale g/web=N` brings N back)" in stop.stderr, stop
    # An instance of the set, or another name, is told the set is at 0,
    # not given an empty list of the group's tasks.
    stop = corral.cli("stop", "g/web@0")
    assert stop.returncode == 1 and "corral: no task \"g/web@0\": g/web has no instance: " \
        "corral scale took it to 0 (`corral scale g/web=N` brings N back)" in stop.stderr, stop
    stop = corral.cli("stop", "g/wbe")
    assert stop.returncode == 1 and "corral: no task \"g/wbe\"; tasks of group g: " \
        "g/web (0 instances)\n" in stop.stderr, stop

    up = corral.cli("scale", "g/web=3")
    assert up.returncode == 0, up
    assert up.stdout == ("g/web: scaled from 0 to 3 instances (the config says 2): "
                         "g/web@0, g/web@1, g/web@2 start\n"), up.stdout
    wait_for(lambda: all(corral.task_status(f"g/web@{i}")["state"] == "running"
                         for i in range(3)), what="three running")
    # Made from the same definition, each with its number.
    inspected = corral.cli("inspect", "g/web@2", "--json")
    assert '"name":"FLAVOUR","value":"kept"' in inspected.stdout, inspected.stdout
    wait_for(lambda: "g/web@2 | instance 2" in corral.cli("logs", "g/web").stdout,
             what="web@2's line")

    assert corral.cli("scale", "g/web=0").returncode == 0
    wait_for(lambda: live_tasks(corral) == [], what="none again")
    reload = corral.cli("reload")
    assert reload.returncode == 0, reload
    wait_for(lambda: live_tasks(corral) == ["g/web@0", "g/web@1"], what="the config's two")
    assert instance_set(corral)["scaled"] is False
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_group_held_by_a_task_at_zero_stops_at_shutdown(corral, tmp_path):
    marks = tmp_path / "poststop"
    config = {"groups": {"g": {"tasks": {
        "web": web(1),
        "after": {"command": sh(f"echo ran >> {marks}"), "lifecycle": {"hook": "poststop"}}}}}}
    running = start(corral, config)
    wait_for(lambda: corral.task_status("g/web@0")["state"] == "running", what="web@0 up")
    assert corral.cli("scale", "g/web=0").returncode == 0
    wait_for(lambda: live_tasks(corral) == ["g/after"], what="web@0 gone")
    # Held up: the group goes on (settled with web@0's end), and its
    # poststop task waits for the group's end.
    group = corral.status()["groups"][0]
    assert group["state"] != "poststop" and not group["stopping"], group
    assert corral.task_status("g/after")["state"] == "pending"
    assert not marks.exists()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert marks.read_text() == "ran\n"
