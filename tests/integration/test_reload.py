"""Reload (docs/cli.md, "corral reload"): the config loaded again while
everything runs. Seen from outside: which processes survive (their pids),
what new ones run (their argv), what the cgroup says, the events and the
CLI's output; and that a broken config, or a key that only takes effect at
start, changes nothing."""

import json
import signal
import time
from pathlib import Path

import pytest

from conftest import mark, read_marks, sh, wait_for
from helpers_control import count

SLEEP = ["sleep", "1000"]


def config(tasks, groups=None, **top):
    """One group "g" with `tasks`, plus `groups`; restart never unless a
    task says otherwise."""
    all_groups = {"g": {"tasks": tasks}, **(groups or {})}
    for group in all_groups.values():
        for task in group["tasks"].values():
            task.setdefault("restart", {"policy": "never"})
    return {**top, "groups": all_groups}


def status_json(corral):
    result = corral.cli("status", "--json")
    assert result.returncode == 0, result
    return {task["task"]: task for group in json.loads(result.stdout)["groups"]
            for task in group["tasks"]}


def pids(corral):
    return {name: task["pid"] for name, task in status_json(corral).items()}


def cmdline(pid):
    return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]


def memory_limit(pid):
    """The memory limit of the process's cgroup: v1 memory.limit_in_bytes
    on a hybrid host, v2 memory.max on a v2-only one."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return int(Path(f"/sys/fs/cgroup/memory{path}/memory.limit_in_bytes").read_text())
        if number == "0" and not Path("/sys/fs/cgroup/unified").is_dir():
            return int(Path(f"/sys/fs/cgroup{path}/memory.max").read_text())
    raise AssertionError(f"no memory cgroup for {pid}")


def start(corral, first):
    """corral running `first` (written to reload.yaml, which the test then
    rewrites), once every task runs."""
    path = corral.config(first, name="reload.yaml")
    running = corral.start(path)
    corral.wait_control(running)
    wanted = {f"{g}/{t}" for g, group in first["groups"].items() for t in group["tasks"]}
    wait_for(lambda: wanted <= {n for n, t in status_json(corral).items()
                                if t["state"] == "running"}, what="every task running")
    return running, path


def reload(corral, *args):
    result = corral.cli("reload", *args)
    return result


def stop(running):
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    return result


def test_reload_adds_removes_replaces_and_updates_in_place(corral):
    first = config({"same": {"command": SLEEP},
                    "changed": {"command": ["sleep", "1001"]},
                    "limited": {"command": SLEEP, "resources": {"memory": "64M"}},
                    "dropped": {"command": SLEEP}},
                   {"old": {"tasks": {"t": {"command": SLEEP}}}})
    running, path = start(corral, first)
    before = pids(corral)
    assert memory_limit(before["g/limited"]) == 64 << 20

    second = config({"same": {"command": SLEEP},
                     "changed": {"command": ["sleep", "2002"]},
                     "limited": {"command": SLEEP, "resources": {"memory": "128M"}},
                     "added": {"command": ["sleep", "1003"]}},
                    {"new": {"tasks": {"t": {"command": ["sleep", "1004"]}}}})
    corral.config(second, name="reload.yaml")
    result = reload(corral)
    assert result.returncode == 0, result
    for line in ["reload of", "applied", "group new: added", "group old: removed",
                 "task g/changed: replaced (command)",
                 "task g/limited: updated in place (resources)", "task g/added: added",
                 "task g/dropped: removed", "task new/t: added", "1 task unchanged"]:
        assert line in result.stdout, (line, result.stdout)

    wait_for(lambda: set(status_json(corral)) == {"g/same", "g/changed", "g/limited",
                                                   "g/added", "new/t"}
             and all(t["state"] == "running" for t in status_json(corral).values()),
             what="the new set of tasks, all running")
    after = pids(corral)
    # Unchanged and updated tasks keep their process; the replaced one runs
    # the new command.
    assert after["g/same"] == before["g/same"]
    assert after["g/limited"] == before["g/limited"]
    assert memory_limit(after["g/limited"]) == 128 << 20
    assert after["g/changed"] != before["g/changed"]
    assert cmdline(after["g/changed"]) == [b"sleep", b"2002"]
    assert cmdline(after["new/t"]) == [b"sleep", b"1004"]
    assert status_json(corral)["g/same"]["restarts"] == 0

    result = stop(running)
    events = result.events
    assert events.of_task("limited", "updated")
    assert events.of_task("changed", "replaced")
    assert events.of_task("dropped", "removed")
    assert any("removed from the config" in e["message"]
               for e in events.of_group("old", "stopping"))
    assert events.of_task("added", "received")
    assert [e["event"] for e in events if "group" not in e][:2] == ["reload_started",
                                                                  "reload_finished"]
    assert events.of_group("old", "finished")


def test_a_broken_config_changes_nothing_and_names_every_error(corral):
    running, path = start(corral, config({"a": {"command": SLEEP}}))
    before = pids(corral)
    path.write_text("groups:\n  g:\n    tasks:\n      a: {command: [sleep, '9'], restat: 1}\n"
                    "      b: {kill: {signal: SIGNOPE}}\n")
    result = reload(corral)
    assert result.returncode == 1, result
    assert "refused: 3 errors in the config" in result.stderr, result.stderr
    assert f"{path}:4:34: " in result.stderr and "restat" in result.stderr, result.stderr
    assert f"{path}:5:10: " in result.stderr, result.stderr
    assert pids(corral) == before
    stop_result = stop(running)
    assert stop_result.events.of_task("a", "killed")
    assert [e for e in stop_result.events if e["event"] == "reload_refused"]
    # corral's own log names each error too, as for a SIGHUP.
    assert f"{path}:4:34: " in stop_result.stderr and f"{path}:5:10: " in stop_result.stderr, \
        stop_result.stderr


def test_dry_run_applies_nothing_and_plans_what_reload_then_does(corral):
    running, path = start(corral, config({"a": {"command": SLEEP}, "b": {"command": SLEEP}}))
    before = pids(corral)
    corral.config(config({"a": {"command": ["sleep", "999"]},
                          "c": {"command": SLEEP, "kill": {"timeout": "3s"}}}),
                  name="reload.yaml")
    planned = reload(corral, "--dry-run", "--json")
    assert planned.returncode == 0, planned
    plan = json.loads(planned.stdout)
    assert plan["dry_run"] is True
    assert pids(corral) == before  # nothing applied

    applied = reload(corral, "--json")
    assert applied.returncode == 0, applied
    reply = json.loads(applied.stdout)
    assert reply["dry_run"] is False
    assert reply["plan"] == plan["plan"]
    assert {(t["task"], t["action"]) for t in reply["plan"]["tasks"]} == {
        ("g/a", "replaced"), ("g/b", "removed"), ("g/c", "added")}
    wait_for(lambda: set(status_json(corral)) == {"g/a", "g/c"}, what="b freed once dead")
    stop(running)


def test_sighup_reloads_as_the_command_does(corral):
    running, path = start(corral, config({"a": {"command": SLEEP}}))
    before = pids(corral)
    corral.config(config({"a": {"command": ["sleep", "1234"]}}), name="reload.yaml")
    running.send(signal.SIGHUP)
    wait_for(lambda: pids(corral)["g/a"] not in (None, before["g/a"]), what="a replaced")
    assert cmdline(pids(corral)["g/a"]) == [b"sleep", b"1234"]
    result = stop(running)
    assert "ignoring SIGHUP" not in result.stderr
    assert result.events.of_task("a", "replaced")


def test_a_key_that_only_takes_effect_at_start_refuses_the_whole_reload(corral, tmp_path):
    running, path = start(corral, config({"a": {"command": SLEEP}}))
    before = pids(corral)
    corral.config(config({"a": {"command": ["sleep", "5"]}, "b": {"command": SLEEP}},
                         socket=str(tmp_path / "other.sock")), name="reload.yaml")
    result = reload(corral)
    assert result.returncode == 1, result
    assert "socket changed: it takes effect only when corral starts" in result.stderr
    assert pids(corral) == before  # the command change was not applied either
    stop(running)


def test_a_user_that_does_not_exist_refuses_the_reload(corral):
    running, path = start(corral, config({"a": {"command": SLEEP}}))
    corral.config(config({"a": {"command": SLEEP, "user": "no-such-user-here"}}),
                  name="reload.yaml")
    result = reload(corral)
    assert result.returncode == 1, result
    assert "g/a" in result.stderr and "no-such-user-here" in result.stderr, result.stderr
    assert status_json(corral)["g/a"]["state"] == "running"
    stop(running)


def test_a_completed_one_shot_is_not_rerun_unless_asked(corral, tmp_path):
    marks = tmp_path / "marks"

    def with_job(name):
        return config({"job": {"command": sh(mark(marks, name))},
                       "main": {"command": SLEEP},
                       "setup": {"command": sh(mark(marks, "setup-" + name)),
                                 "lifecycle": {"hook": "prestart"}}})

    path = corral.config(with_job("first"), name="reload.yaml")
    running = corral.start(path)
    corral.wait_control(running)
    wait_for(lambda: count(marks, "first") == 1 and
             status_json(corral)["g/job"]["state"] == "dead", what="the job to complete")
    corral.config(with_job("second"), name="reload.yaml")
    result = reload(corral)
    assert "task g/job: replaced (command)" in result.stdout, result
    assert "task g/setup: replaced (command)" in result.stdout, result

    corral.config(with_job("third"), name="reload.yaml")
    result = reload(corral, "--rerun-completed")
    assert result.returncode == 0, result
    wait_for(lambda: count(marks, "third") == 1, what="the job to run again")
    # A prestart task cannot run again while the main stage runs: said.
    assert "task g/setup: replaced (command); not applied: not run again: its stage " \
           "gate cannot open again" in result.stdout, result.stdout
    assert sorted(name for name, _ in read_marks(marks)) == ["first", "setup-first", "third"]
    stop(running)


def test_in_place_changes_take_effect_without_a_new_process(corral, tmp_path):
    marks = tmp_path / "marks"
    trap = sh(f"trap '{mark(marks, 'INT')}; exit 0' INT; "
              f"trap '{mark(marks, 'TERM')}; exit 0' TERM; while :; do sleep 0.05; done")
    other = {"command": SLEEP}  # keeps corral up once a is stopped
    running, path = start(corral, config({"a": {"command": trap}, "other": other}))
    before = pids(corral)
    corral.config(config({"a": {"command": trap, "kill": {"signal": "SIGINT"}},
                          "other": other}), name="reload.yaml")
    result = reload(corral)
    assert "task g/a: updated in place (kill)" in result.stdout, result
    assert pids(corral) == before
    assert corral.cli("stop", "g/a").returncode == 0
    wait_for(lambda: read_marks(marks), what="the task's trap")
    assert [name for name, _ in read_marks(marks)] == ["INT"]
    stop(running)


def test_a_health_probe_changed_in_place_runs_the_new_command(corral):
    running, path = start(corral, config({"a": {
        "command": SLEEP, "restart": {"policy": "always", "delay": "100ms"},
        "health": {"exec": ["true"], "interval": "200ms"}}}))
    before = pids(corral)
    corral.config(config({"a": {
        "command": SLEEP, "restart": {"policy": "always", "delay": "100ms"},
        "health": {"exec": ["false"], "interval": "200ms", "failures": 1}}}),
        name="reload.yaml")
    result = reload(corral)
    assert "task g/a: updated in place (health)" in result.stdout, result
    wait_for(lambda: pids(corral)["g/a"] not in (None, before["g/a"]),
             what="the failing probe to restart the task")
    result = stop(running)
    assert result.events.of_task("a", "unhealthy")


def test_a_health_check_added_then_removed_in_place(corral):
    """A reload that adds `health:` watches the running task; one that
    takes it away leaves the task running, unwatched."""
    task = {"command": SLEEP, "restart": {"policy": "always", "delay": "100ms"}}
    failing = {"exec": ["false"], "interval": "200ms", "failures": 1}
    running, path = start(corral, config({"a": task}))
    first = pids(corral)["g/a"]
    corral.config(config({"a": {**task, "health": failing}}), name="reload.yaml")
    result = reload(corral)
    assert "task g/a: updated in place (health)" in result.stdout, result
    wait_for(lambda: pids(corral)["g/a"] not in (None, first),
             what="the added probe to restart the task")
    corral.config(config({"a": task}), name="reload.yaml")
    result = reload(corral)
    assert "task g/a: updated in place (health)" in result.stdout, result
    wait_for(lambda: status_json(corral)["g/a"]["state"] == "running", what="a running")
    unwatched = pids(corral)["g/a"]
    assert status_json(corral)["g/a"]["probes"]["health"] is None
    restarts = status_json(corral)["g/a"]["restarts"]
    time.sleep(1.0)  # five of the removed probe's intervals
    assert pids(corral)["g/a"] == unwatched
    assert status_json(corral)["g/a"]["restarts"] == restarts
    stop(running)


def test_a_follower_of_a_removed_task_sees_its_stream_end(corral):
    running, path = start(corral, config({"a": {"command": SLEEP},
                                          "b": {"command": sh("echo hi; exec sleep 1000")}}))
    follower = corral.cli_popen("logs", "-f", "g/b")
    wait_for(lambda: status_json(corral)["g/b"]["state"] == "running", what="b")
    corral.config(config({"a": {"command": SLEEP}}), name="reload.yaml")
    assert reload(corral).returncode == 0
    out, err = follower.communicate(timeout=10)
    assert follower.returncode == 0, err
    wait_for(lambda: set(status_json(corral)) == {"g/a"}, what="b forgotten")
    stop(running)


def test_update_hooks_hear_an_in_place_change_and_a_failure_is_only_reported(corral, tmp_path):
    requests = tmp_path / "requests"
    record = sh(f"cat >> {requests}; echo >> {requests}")
    hooks = [{"name": "record", "stage": "update", "exec": record},
             {"name": "broken", "stage": "update", "exec": ["/bin/false"]}]

    def with_memory(memory):
        return config({"a": {"command": SLEEP, "hooks": hooks,
                             "resources": {"memory": memory}}})

    running, path = start(corral, with_memory("64M"))
    before = pids(corral)
    assert not requests.exists()  # no update hook at a start
    corral.config(with_memory("96M"), name="reload.yaml")
    assert reload(corral).returncode == 0
    wait_for(lambda: requests.exists() and requests.read_text().strip(), what="the hook")
    request = json.loads(requests.read_text().splitlines()[0])
    assert request["stage"] == "update"
    assert request["changed"] == ["resources"]
    assert request["resources"] == {"memory": 96 << 20}
    assert request["pid"] == before["g/a"]
    wait_for(lambda: any(e["event"] == "hook_failed" for e in running.events()),
             what="the broken hook's failure")
    assert pids(corral) == before  # a failed update hook does not stop the task
    result = stop(running)
    failed = result.events.of_task("a", "hook_failed")
    assert failed and "(update)" in failed[0]["message"], failed


def no_swap():
    swap = [line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
            if line.startswith("SwapTotal:")]
    if swap != ["0"]:
        pytest.skip("with swap, the kernel may page the task out to meet the limit")


HOG = ["python3", "-c", "import time; b = bytearray(60 << 20)\n"
       "for i in range(0, len(b), 4096): b[i] = 1\n"
       "print('ready', flush=True); time.sleep(1000)"]


def start_hog(corral, memory="100M", **tasks):
    def with_memory(memory):
        return config({"hog": {"command": HOG, "resources": {"memory": memory}}, **tasks})

    running, path = start(corral, with_memory(memory))
    wait_for(lambda: "ready" in corral.cli("logs", "g/hog").stdout, what="60M touched")
    return running, with_memory


def test_a_limit_the_kernel_refuses_is_reported_and_the_old_one_stays(corral):
    no_swap()
    running, with_memory = start_hog(corral)
    before = pids(corral)
    corral.config(with_memory("20M"), name="reload.yaml")
    result = reload(corral)
    assert result.returncode == 3, result  # applied in part (docs/cli.md)
    assert "applied in part (1 change refused)" in result.stdout, result.stdout
    assert "task g/hog: updated in place (resources); not applied: resources: memory" \
        in result.stdout, result.stdout
    assert pids(corral) == before
    assert memory_limit(before["g/hog"]) == 100 << 20
    result = stop(running)
    assert "not updated: resources: memory" in result.events.of_task("hog", "updated")[0][
        "message"]


def test_a_reload_the_kernel_refused_in_part_exits_3_and_json_names_the_refusal(corral):
    """The rest of the plan is applied (a new task starts), the refused
    limit is named with the kernel's reason, and the exit status tells a
    script that not everything took."""
    no_swap()
    running, _ = start_hog(corral)
    changed = config({"hog": {"command": HOG, "resources": {"memory": "20M"}},
                      "new": {"command": SLEEP}})
    corral.config(changed, name="reload.yaml")
    result = reload(corral, "--json")
    assert result.returncode == 3, result
    reply = json.loads(result.stdout)
    assert reply["ok"] is True
    assert reply["refused"] == [{"task": "g/hog", "field": "resources.memory",
                                 "reason": reply["refused"][0]["reason"]}], reply
    reason = reply["refused"][0]["reason"]
    assert reason.startswith("memory") and "busy" in reason.lower(), reason
    wait_for(lambda: status_json(corral)["g/new"]["state"] == "running", what="the added task")
    # A reload the kernel takes whole exits 0 and names nothing refused.
    corral.config(config({"hog": {"command": HOG, "resources": {"memory": "200M"}},
                          "new": {"command": SLEEP}}), name="reload.yaml")
    result = reload(corral, "--json")
    assert result.returncode == 0, result
    assert "refused" not in json.loads(result.stdout)
    stop(running)


def test_autostart_false_waits_for_start_and_a_reload_can_turn_it_on(corral):
    first = config({"main": {"command": SLEEP},
                    "manual": {"command": SLEEP, "autostart": False},
                    "later": {"command": SLEEP, "autostart": False}})
    path = corral.config(first, name="reload.yaml")
    running = corral.start(path)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/main"]["state"] == "running", what="main")
    statuses = status_json(corral)
    assert statuses["g/manual"]["state"] == "dead" and not statuses["g/manual"]["failed"]
    assert statuses["g/manual"]["waiting_for"] == "corral start (autostart: false)"
    assert corral.cli("start", "g/manual").returncode == 0
    wait_for(lambda: status_json(corral)["g/manual"]["state"] == "running", what="started")
    # A restart of the group leaves the one never started alone; the one
    # started runs again with it.
    main_pid = status_json(corral)["g/main"]["pid"]
    assert corral.cli("restart", "--all", "g").returncode == 0
    wait_for(lambda: status_json(corral)["g/main"]["pid"] not in (None, main_pid) and
             status_json(corral)["g/manual"]["state"] == "running", what="the group again")
    assert status_json(corral)["g/later"]["state"] == "dead"
    # autostart turned on by a reload: it starts.
    second = config({"main": {"command": SLEEP},
                     "manual": {"command": SLEEP, "autostart": False},
                     "later": {"command": SLEEP}})
    corral.config(second, name="reload.yaml")
    result = reload(corral)
    assert "task g/later: updated in place (autostart)" in result.stdout, result
    wait_for(lambda: status_json(corral)["g/later"]["state"] == "running", what="later")
    stop(running)
