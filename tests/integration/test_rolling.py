"""Rolling restarts of a task's instances (issue 30, item 2; pm2 reload,
Kubernetes' RollingUpdate with maxSurge 0, Nomad's update stanza):
`corral restart --rolling GROUP/TASK [--max-unavailable N]`, and a reload
of a task with `update: {strategy: rolling}`. The instances are small
servers, each on BASE + CORRAL_INSTANCE, that say they are ready on fd 3
once they listen; a client calls every one of them in a loop while the
roll goes on."""

import json
import signal
import socket
import threading

from conftest import free_port_block, sh, wait_for
from helpers_http import assert_agree, request
from helpers_parent import Parent

SERVER = r"""
import os, socket, sys, time
directory, base = sys.argv[1], int(sys.argv[2])
number = os.environ["CORRAL_INSTANCE"]
if os.path.exists(os.path.join(directory, "never-" + number)):
    time.sleep(3600)  # never listens, never says it is ready
if os.path.exists(os.path.join(directory, "crash-" + number)):
    sys.exit(3)
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", base + int(number)))
listener.listen(64)
os.write(3, b"\n")
while True:
    connection, _ = listener.accept()
    connection.sendall(b"%d %s\n" % (os.getpid(), os.environ.get("VERSION", "1").encode()))
    connection.close()
"""


def servers(tmp_path, count, base, readiness_timeout="5s", **task):
    (tmp_path / "server.py").write_text(SERVER)
    definition = {
        "instances": count,
        "command": ["/usr/bin/python3", str(tmp_path / "server.py"), str(tmp_path), str(base)],
        "readiness": {"notify": "fd", "fd": 3, "timeout": readiness_timeout},
        "kill": {"timeout": "5s"},
    }
    definition.update(task)
    return definition


def ask(port):
    """(pid, version) of the server on `port`, or None when it is down."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
            connection.settimeout(2)
            words = connection.recv(64).split()
            return (int(words[0]), words[1].decode()) if len(words) == 2 else None
    except OSError:
        return None


class Client(threading.Thread):
    """Calls every server in turn, round after round, until stopped: what
    a load balancer in front of them would see."""

    def __init__(self, base, count):
        super().__init__(daemon=True)
        self.ports = [base + i for i in range(count)]
        self.rounds = []
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.rounds.append([ask(port) for port in self.ports])

    def stop(self):
        self.done.set()
        self.join(10)


def last(events, task, event):
    """Where the task's last event of this kind is in the log."""
    found = [k for k, e in enumerate(events) if e.get("task") == task and e["event"] == event]
    assert found, (task, event)
    return found[-1]


def pids(corral, names):
    return [corral.task_status(name)["pid"] for name in names]


def instance_names(count):
    return [f"g/web@{i}" for i in range(count)]


def start(corral, config, count, name="roll.yaml"):
    running = corral.start(corral.config(config, name=name))
    corral.wait_control(running)
    wait_for(lambda: all(corral.task_status(n)["ready"] for n in instance_names(count)),
             what="every instance ready")
    return running


def instance_sets(corral):
    return {s["task"]: s for g in corral.status()["groups"] for s in g["instance_sets"]}


def test_a_rolling_restart_never_takes_every_instance_down(corral, tmp_path):
    base = free_port_block(4)
    config = {"groups": {"g": {"tasks": {"web": servers(tmp_path, 4, base)}}}}
    running = start(corral, config, 4)
    before = pids(corral, instance_names(4))
    client = Client(base, 4)
    client.start()
    wait_for(lambda: len(client.rounds) >= 3, what="the client's first rounds")
    roll = corral.cli("restart", "--rolling", "g/web")
    client.stop()
    assert roll.returncode == 0, roll
    after = pids(corral, instance_names(4))
    assert all(new != old for new, old in zip(after, before)), (before, after)
    lines = roll.stdout.splitlines()
    assert lines[0] == "g/web: rolling restart of 4 instances, 1 at a time", lines
    # In instance order, each old pid and its new one.
    assert lines[1:5] == [f"g/web@{i} replaced: pid {before[i]} -> {after[i]}, ready"
                          for i in range(4)], lines
    assert lines[5] == "g/web: rolling restart done: 4 of 4 instances replaced, 1 at a time"
    # The client always reached one at least, and saw each old and new one.
    assert client.rounds and min(sum(seen is not None for seen in r) for r in client.rounds) >= 1
    for i in range(4):
        answered = {seen[0] for r in client.rounds for seen in [r[i]] if seen}
        assert {before[i], after[i]} <= answered, (i, answered)
    events = running.events()
    assert [e["message"] for e in events.of_task("web", "rolling", group="g")][0] == \
        "rolling restart of 4 instances, 1 at a time (requested)"
    # One at a time: an instance is stopped only once the one before is
    # ready (its new run's, the last).
    for i in range(1, 4):
        assert last(events, f"web@{i}", "killing") > last(events, f"web@{i - 1}", "ready"), i
    status = instance_sets(corral)["g/web"]
    assert status["roll"]["state"] == "done" and status["roll"]["replaced"] == 4, status
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_an_instance_that_is_never_ready_stops_the_roll(corral, tmp_path):
    base = free_port_block(4)
    config = {"groups": {"g": {"tasks": {"web": servers(tmp_path, 4, base, "2s")}}}}
    running = start(corral, config, 4)
    before = pids(corral, instance_names(4))
    (tmp_path / "never-2").touch()
    roll = corral.cli("restart", "--rolling", "g/web")
    assert roll.returncode == 1, roll
    said = ("corral: g/web: rolling restart stopped at g/web@2: not ready within 2s; "
            "replaced: g/web@0, g/web@1; left on their old process: g/web@3")
    assert said in roll.stderr, roll.stderr
    after = pids(corral, instance_names(4))
    assert after[0] != before[0] and after[1] != before[1]
    assert after[3] == before[3], (before, after)  # its old process runs on
    assert ask(base + 3)[0] == before[3]
    roll_status = instance_sets(corral)["g/web"]["roll"]
    assert roll_status["state"] == "stopped", roll_status
    assert [i["phase"] for i in roll_status["instances"]] == \
        ["replaced", "replaced", "failed", "left"]
    table = corral.cli("status", "g")
    assert "web: rolling restart stopped at g/web@2: not ready within 2s" in table.stdout
    stopped = running.events().of_task("web", "roll_stopped", group="g")
    assert len(stopped) == 1 and stopped[0]["message"] == said.split("g/web: ", 1)[1], stopped
    # The failed one goes on by its restart policy; once it can be ready,
    # a new roll replaces every instance again.
    (tmp_path / "never-2").unlink()
    wait_for(lambda: corral.task_status("g/web@2")["ready"], timeout=20, what="web@2 ready")
    # The set recovered (every instance running and ready): the stopped
    # roll is said no more (issue 35, item 13).
    wait_for(lambda: instance_sets(corral)["g/web"]["roll"] is None, what="the roll cleared")
    assert "rolling restart stopped" not in corral.cli("status", "g").stdout
    cleared = [e["message"] for e in running.events().of_task("web", "rolling", group="g")]
    assert cleared[-1] == ("every instance runs and is ready again: the stopped rolling "
                           "restart is cleared from status"), cleared
    again = corral.cli("restart", "--rolling", "g/web")
    assert again.returncode == 0, again
    assert pids(corral, instance_names(4))[3] != before[3]
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_new_instance_that_exits_stops_the_roll(corral, tmp_path):
    """A new run that ends before it is ready (here: exits 3 at once) is a
    failed start: the roll stops there, without waiting for a timeout."""
    base = free_port_block(3)
    config = {"groups": {"g": {"tasks": {"web": servers(
        tmp_path, 3, base, "30s", restart={"delay": "10s"})}}}}
    running = start(corral, config, 3)
    before = pids(corral, instance_names(3))
    (tmp_path / "crash-1").touch()
    roll = corral.cli("restart", "--rolling", "g/web")
    assert roll.returncode == 1, roll
    assert ("corral: g/web: rolling restart stopped at g/web@1: exited with code 3; "
            "restarting in 10s (restart 1 of 3); replaced: g/web@0; left on their old "
            "process: g/web@2") in roll.stderr, roll.stderr
    assert pids(corral, instance_names(3))[2] == before[2]
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_max_unavailable_replaces_two_at_a_time(corral, tmp_path):
    base = free_port_block(4)
    config = {"groups": {"g": {"tasks": {"web": servers(tmp_path, 4, base)}}}}
    running = start(corral, config, 4)
    client = Client(base, 4)
    client.start()
    roll = corral.cli("restart", "--rolling", "--max-unavailable", "2", "g/web")
    client.stop()
    assert roll.returncode == 0, roll
    assert roll.stdout.splitlines()[0] == "g/web: rolling restart of 4 instances, 2 at a time"
    events = running.events()

    # web@1 is stopped before web@0's new run is ready, web@2 only after
    # one of the first two is.
    first_ready = min(last(events, "web@0", "ready"), last(events, "web@1", "ready"))
    assert last(events, "web@1", "killing") < last(events, "web@0", "ready")
    assert last(events, "web@2", "killing") > first_ready
    assert min(sum(seen is not None for seen in r) for r in client.rounds) >= 1
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_reload_with_update_rolling_rolls_the_new_definition(corral, tmp_path):
    base = free_port_block(3)
    web = servers(tmp_path, 3, base, "2s", update={"strategy": "rolling"}, env={"VERSION": "1"})
    config = {"groups": {"g": {"tasks": {"web": web}}}}
    running = start(corral, config, 3)
    before = pids(corral, instance_names(3))
    web["env"]["VERSION"] = "2"
    corral.config(config, name="roll.yaml")
    client = Client(base, 3)
    client.start()
    reload = corral.cli("reload")
    assert reload.returncode == 0, reload
    assert "  task g/web@1: replaced (env), by a rolling restart\n" in reload.stdout, reload.stdout
    wait_for(lambda: instance_sets(corral)["g/web"]["roll"] is not None and
             instance_sets(corral)["g/web"]["roll"]["state"] == "done", what="the roll done")
    client.stop()
    assert [ask(base + i)[1] for i in range(3)] == ["2", "2", "2"]
    assert all(new != old for new, old in zip(pids(corral, instance_names(3)), before))
    assert min(sum(seen is not None for seen in r) for r in client.rounds) >= 1
    events = running.events()
    assert events.of_task("web", "rolling", group="g")[0]["message"] == \
        "rolling restart of 3 instances, 1 at a time (a reload replaced them)"
    # One at a time, as asked.
    for i in range(1, 3):
        assert last(events, f"web@{i}", "killing") > last(events, f"web@{i - 1}", "ready"), i

    # A new definition that never becomes ready: the roll stops at the
    # first, and the others keep the old process and definition.
    (tmp_path / "never-0").touch()
    middle = pids(corral, instance_names(3))
    web["env"]["VERSION"] = "3"
    corral.config(config, name="roll.yaml")
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: instance_sets(corral)["g/web"]["roll"]["state"] == "stopped",
             what="the roll stopped")
    assert pids(corral, instance_names(3))[1:] == middle[1:]
    assert [ask(base + i)[1] for i in (1, 2)] == ["2", "2"]
    message = instance_sets(corral)["g/web"]["roll"]["message"]
    assert message == ("rolling restart stopped at g/web@0: not ready within 2s; "
                       "left on their old process: g/web@1, g/web@2"), message
    # ... across their own restarts too, until a reload replaces them again.
    assert corral.cli("restart", "g/web@2").returncode == 0
    wait_for(lambda: (ask(base + 2) or (middle[2], ""))[0] != middle[2], what="web@2 again")
    assert ask(base + 2)[1] == "2"
    (tmp_path / "never-0").unlink()
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: instance_sets(corral)["g/web"]["roll"]["state"] == "done",
             what="the roll done at last")
    # web@0 had taken it already, and comes back by its restart policy.
    wait_for(lambda: [(ask(base + i) or (0, ""))[1] for i in range(3)] == ["3", "3", "3"],
             timeout=20, what="every instance on the last definition")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_without_update_a_reload_replaces_every_instance_at_once(corral, tmp_path):
    """Configs without the key behave as before: every replaced instance
    restarts together, with no roll."""
    base = free_port_block(3)
    web = servers(tmp_path, 3, base, env={"VERSION": "1"})
    config = {"groups": {"g": {"tasks": {"web": web}}}}
    running = start(corral, config, 3)
    web["env"]["VERSION"] = "2"
    corral.config(config, name="roll.yaml")
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: [(ask(base + i) or (0, ""))[1] for i in range(3)] == ["2", "2", "2"],
             what="every instance on the new definition")
    events = running.events()
    assert not events.of_task("web", "rolling", group="g")
    # All three were stopped before any new one was ready.
    first_ready = min(k for k, e in enumerate(events) if e["event"] == "ready" and
                      e.get("task", "").startswith("web@") and
                      k > events.task_index("web@0", "replaced"))
    assert all(events.task_index(f"web@{i}", "killing") < first_ready for i in range(3))
    assert instance_sets(corral)["g/web"]["roll"] is None
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_restart_true_dependents_stay_up_through_a_roll(corral, tmp_path):
    """A roll keeps the service up: a task that waits for the instances with
    `restart: true` is not restarted for it (a plain restart does)."""
    base = free_port_block(2)
    config = {"groups": {"g": {"tasks": {
        "web": servers(tmp_path, 2, base),
        "front": {"command": sh("exec sleep 1000"),
                  "after": {"web": {"condition": "ready", "restart": True}}}}}}}
    running = start(corral, config, 2)
    wait_for(lambda: corral.task_status("g/front")["state"] == "running", what="front up")
    front = corral.task_status("g/front")["pid"]
    assert corral.cli("restart", "--rolling", "g/web").returncode == 0
    assert corral.task_status("g/front")["pid"] == front
    # A plain restart of one instance does restart it.
    assert corral.cli("restart", "g/web@0").returncode == 0
    wait_for(lambda: corral.task_status("g/front")["pid"] not in (None, front),
             what="front restarted with web@0")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_rolling_restart_mistakes(corral, tmp_path):
    base = free_port_block(2)
    config = {"groups": {"g": {"tasks": {
        "web": servers(tmp_path, 2, base),
        "solo": {"command": sh("exec sleep 1000")}}}}}
    running = start(corral, config, 2)
    cases = [
        (["restart", "--rolling", "g/solo"], 1,
         "corral: g/solo has no instances: restart --rolling replaces the instances of a task "
         "written with instances: N; `corral restart g/solo` restarts it"),
        (["restart", "--rolling", "g/web@1"], 2,
         "restart --rolling replaces every instance of a task written with instances: name the "
         "task (group/task), not one instance: \"g/web@1\""),
        (["restart", "--rolling", "g/nope"], 1, "corral: no task \"g/nope\""),
        (["restart", "--rolling", "--max-unavailable", "0", "g/web"], 2,
         "--max-unavailable takes a whole number from 1 to 1000, not \"0\""),
        (["restart", "--max-unavailable", "2", "g/web"], 2,
         "\"max_unavailable\" is only for restart --rolling"),
        (["restart", "--rolling", "--all", "g"], 2, "--rolling and --all cannot be used together"),
    ]
    for args, code, said in cases:
        result = corral.cli(*args)
        assert result.returncode == code and said in result.stderr, (args, result)
    # A second roll while one goes on is refused, and the first goes on.
    (tmp_path / "never-1").touch()
    first = corral.cli_popen("restart", "--rolling", "g/web")
    wait_for(lambda: instance_sets(corral)["g/web"]["roll"] is not None and
             instance_sets(corral)["g/web"]["roll"]["replaced"] == 1, what="the first replaced")
    second = corral.cli("restart", "--rolling", "g/web")
    assert second.returncode == 1 and \
        "g/web: a rolling restart goes on (1 of 2 replaced)" in second.stderr, second
    assert first.wait(30) == 1
    # The protocol says the same to a client that is not the CLI.
    reply = corral.request("restart", target="g/web", mode="rolling", max_unavailable=0)
    assert reply == {"ok": False, "error": "\"max_unavailable\" must be an integer from 1 to "
                     "1000"}, reply
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_client_that_goes_away_leaves_the_roll_going(corral, tmp_path):
    """As kubectl rollout restart: the roll is corral's, not the CLI's."""
    base = free_port_block(3)
    config = {"groups": {"g": {"tasks": {"web": servers(tmp_path, 3, base)}}}}
    running = start(corral, config, 3)
    before = pids(corral, instance_names(3))
    with corral.control() as client:
        reply = client.request("restart", target="g/web", mode="rolling")
        assert reply["ok"] is True and reply["message"].startswith("g/web: rolling restart")
    wait_for(lambda: instance_sets(corral)["g/web"]["roll"]["state"] == "done",
             what="the roll done without its client")
    after = pids(corral, instance_names(3))
    assert all(new != old for new, old in zip(after, before))
    # The lines a client follows: one an instance, then the end.
    with corral.control() as client:
        first = client.request("restart", target="g/web", mode="rolling")
        assert first["ok"] is True, first
        # The stream ends with the roll: corral closes the connection.
        lines = [json.loads(line) for line in client.read_until_eof()]
    assert [line.get("instance") for line in lines[:3]] == instance_names(3), lines
    assert len(lines) == 4 and lines[3]["done"] is True and lines[3]["ok"] is True and \
        lines[3]["replaced"] == 3, lines
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def roll_reaches(corral, phases):
    """The roll under way has its instances in `phases`."""
    roll = instance_sets(corral)["g/web"].get("roll")
    return roll and roll["state"] == "rolling" and \
        [i["phase"] for i in roll["instances"]] == phases


def test_readiness_holds_during_a_roll_while_enough_instances_are_ready(corral, tmp_path):
    """Issue 35.5: during a roll the set counts as ready while N -
    max_unavailable of its instances are (a Deployment's minimum
    availability), so /readyz does not take the pod out of its Service
    for the whole roll; status --ready and /readyz agree."""
    base = free_port_block(3)
    address = ("127.0.0.1", free_port_block(1))
    config = {"http": {"listen": f"{address[0]}:{address[1]}"},
              "groups": {"g": {"tasks": {"web": servers(tmp_path, 3, base, "60s")}}}}
    parent = Parent(str(tmp_path / "notify.sock"))
    running = corral.start(corral.config(config, name="roll.yaml"), env=parent.env())
    corral.wait_control(running)
    parent.wait_for("READY", "1")
    assert assert_agree(corral, address) == ["ready"]
    # web@1's new run never becomes ready: the roll waits at it, with
    # web@0 replaced and ready and web@2 on its old process, ready.
    (tmp_path / "never-1").touch()
    roll = corral.cli_popen("restart", "--rolling", "g/web")
    wait_for(lambda: roll_reaches(corral, ["replaced", "replacing", "waiting"]) and
             corral.task_status("g/web@1")["state"] == "running",
             what="the roll to wait at web@1's new run")
    assert instance_sets(corral)["g/web"]["roll"]["min_ready"] == 2
    assert corral.task_status("g/web@1")["roll_covered"] is True
    assert assert_agree(corral, address) == ["ready"]
    assert request(address, "/readyz?group=g&task=web@1").status == 200
    # The parent hears the same: web@1 is being replaced, not starting.
    parent.wait_for("STATUS", "3 tasks: 2 ready, 1 being replaced (g/web@1)")
    # One more instance down (web@2 stopped): 1 ready of the 2 needed.
    assert corral.cli("stop", "g/web@2").returncode == 0
    wait_for(lambda: corral.task_status("g/web@2")["state"] == "dead", what="web@2 stopped")
    lines = assert_agree(corral, address)
    assert sorted(lines) == [
        "g/web@1: not ready (running, has not said it is ready)",
        "g/web@2: not ready (dead)"], lines
    assert corral.task_status("g/web@1")["roll_covered"] is False
    roll.kill()
    roll.wait()
    running.send(signal.SIGTERM)
    running.wait()
    parent.close()


def test_min_ready_raises_what_a_roll_must_keep_ready(corral, tmp_path):
    base = free_port_block(3)
    address = ("127.0.0.1", free_port_block(1))
    config = {"http": {"listen": f"{address[0]}:{address[1]}"},
              "groups": {"g": {"tasks": {"web": servers(
                  tmp_path, 3, base, "60s", update={"strategy": "rolling", "min_ready": 3})}}}}
    running = start(corral, config, 3)
    (tmp_path / "never-0").touch()
    roll = corral.cli_popen("restart", "--rolling", "g/web")
    wait_for(lambda: roll_reaches(corral, ["replacing", "waiting", "waiting"]) and
             corral.task_status("g/web@0")["state"] == "running",
             what="the roll to wait at web@0's new run")
    assert instance_sets(corral)["g/web"]["roll"]["min_ready"] == 3
    inspected = json.loads(corral.cli("inspect", "--json", "g/web@1").stdout)
    assert inspected["instances"]["update"] == {
        "strategy": "rolling", "max_unavailable": 1, "min_ready": 3}, inspected["instances"]
    assert assert_agree(corral, address) == [
        "g/web@0: not ready (running, has not said it is ready)"]
    roll.kill()
    roll.wait()
    running.send(signal.SIGTERM)
    running.wait()
