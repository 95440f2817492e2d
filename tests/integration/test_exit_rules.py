"""Exit-code rules (docs/config.md, "Exit codes and group failures"):
restart.success_exit and restart.no_restart_exit per task or group, and a
group's on_failure (stop, restart within a bound, ignore). What decided is
asserted from corral's events, `status --json` and the table; runs are
counted from marks the tasks write."""

import json
import signal

from conftest import count_lines, sh, wait_for

IDLE = "exec sleep 1000"


def group(tasks, **group_keys):
    return {"groups": {"g": {"tasks": tasks, **group_keys}}}


def counted(runs, script):
    """Appends a line to `runs` at each start, then runs `script`."""
    return sh(f"echo run >> {runs}; {script}")


def test_a_listed_code_is_a_success_and_completes_a_dependency(corral, tmp_path):
    runs = tmp_path / "runs"
    config = group({
        # A one-shot whose clean exit is 3: the main stage opens after it.
        "migrate": {"command": counted(runs, "exit 3"), "lifecycle": {"hook": "prestart"},
                    "restart": {"success_exit": [3]}},
        "app": {"command": sh("exit 0"), "restart": {"policy": "on-failure"},
                "after": {"migrate": "completed"}},
    })
    result = corral.run(config)
    assert result.returncode == 0, result
    assert count_lines(runs) == 1
    exited = result.events.of_task("migrate", "exited")
    assert [e["message"] for e in exited] == [
        "exited with code 3 (a success: listed in restart.success_exit)"]
    assert result.events.of_task("app", "started"), result.events


def test_a_listed_signal_is_a_success(corral, tmp_path):
    runs = tmp_path / "runs"
    config = group({
        "app": {"command": counted(runs, "kill -TERM $$; sleep 5"),
                "restart": {"policy": "on-failure", "success_exit": ["SIGTERM"]}},
    })
    result = corral.run(config)
    assert result.returncode == 0, result
    assert count_lines(runs) == 1
    assert result.events.of_task("app", "not_restarting")[0]["message"] == \
        "not restarting: exited successfully"


def test_without_the_list_the_same_exit_fails(corral, tmp_path):
    runs = tmp_path / "runs"
    config = group({"app": {"command": counted(runs, "exit 3"),
                            "restart": {"policy": "on-failure", "attempts": 1, "delay": "0s"}}})
    result = corral.run(config)
    assert result.returncode == 3, result
    assert count_lines(runs) == 2


def test_status_says_which_rule_decided(corral, tmp_path):
    config = group({
        "keeper": {"command": sh(IDLE)},
        "jvm": {"command": sh("exit 143"),
                "restart": {"policy": "on-failure", "success_exit": [143]}},
    }, on_failure="ignore")
    running = corral.start(config)
    corral.wait_control(running)
    entry = wait_for(lambda: (e := corral.task_status("g/jvm"))["state"] == "dead" and e,
                     what="jvm to end")
    assert entry["failed"] is False, entry
    assert entry["last_exit"]["failed"] is False, entry
    assert entry["last_exit"]["decided_by"] == "restart.success_exit", entry
    assert entry["last_exit"]["decision"] == "not restarting: exited successfully", entry
    table = corral.cli("status").stdout
    row = next(line for line in table.splitlines() if line.strip().startswith("jvm"))
    assert "code 143 (success_exit)" in row, table
    assert "on_failure: ignore" in table, table
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_listed_failure_is_never_restarted(corral, tmp_path):
    runs = tmp_path / "runs"
    config = group({
        "app": {"command": counted(runs, "exit 78"),
                "restart": {"policy": "always", "delay": "0s"}},
    }, restart={"no_restart_exit": [78]})
    result = corral.run(config)
    # Failed for good at once: corral exits with its code.
    assert result.returncode == 78, result
    assert count_lines(runs) == 1
    assert result.events.of_task("app", "not_restarting")[0]["message"] == (
        "not restarting: exited with code 78, listed in restart.no_restart_exit; "
        "failed for good")


def test_a_listed_success_ends_an_always_task(corral, tmp_path):
    runs = tmp_path / "runs"
    config = group({"app": {"command": counted(runs, "exit 0"),
                            "restart": {"policy": "always", "delay": "0s",
                                        "no_restart_exit": [0]}}})
    result = corral.run(config)
    assert result.returncode == 0, result
    assert count_lines(runs) == 1


def failing_main(runs, succeed_at=None):
    """Fails (exit 1) at each run, or succeeds from run `succeed_at` on."""
    script = "exit 1" if succeed_at is None else \
        f'[ "$(wc -l < {runs})" -ge {succeed_at} ] && exit 0 || exit 1'
    return {"command": counted(runs, script), "restart": {"policy": "never"}}


def test_on_failure_restart_runs_the_group_again_in_lifecycle_order(corral, tmp_path):
    runs, side_runs = tmp_path / "runs", tmp_path / "side-runs"
    config = group({
        "side": {"command": counted(side_runs, IDLE),
                 "lifecycle": {"hook": "prestart", "sidecar": True}},
        "app": failing_main(runs, succeed_at=3),
    }, on_failure="restart")
    result = corral.run(config)
    # Two failures, each restarting the whole group; the third run
    # succeeds and the group ends as usual.
    assert result.returncode == 0, result
    assert count_lines(runs) == 3 and count_lines(side_runs) == 3
    restarts = [e["message"] for e in result.events.of_group("g", "restarting")
                if "on_failure" in e["message"]]
    assert restarts == [
        f"restarting: g/app failed for good (exited with code 1); on_failure: restart "
        f"(restart {n} of 3 within 10m)" for n in (1, 2)], result.events
    # Each run in lifecycle order: the sidecar before the main task.
    starts = [e["task"] for e in result.events if e["event"] == "started"]
    assert starts == ["side", "app"] * 3, starts


def test_on_failure_restart_is_bounded(corral, tmp_path):
    runs = tmp_path / "runs"
    config = group({"app": failing_main(runs)},
                   on_failure={"action": "restart", "attempts": 2, "interval": "1m"})
    result = corral.run(config)
    # The first run and two restarts; then the group stops, and corral
    # exits with the failed task's code.
    assert result.returncode == 1, result
    assert count_lines(runs) == 3
    stopping = result.events.of_group("g", "stopping")
    assert [e["message"] for e in stopping] == [
        "stopping: g/app failed for good (exited with code 1); on_failure: restart: "
        "2 restarts within 1m spent"], result.events


def test_on_failure_ignore_keeps_the_group_running(corral, tmp_path):
    runs = tmp_path / "runs"
    config = group({"keeper": {"command": sh(IDLE)}, "bad": failing_main(runs)},
                   on_failure="ignore")
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/bad")["failed"], what="bad to fail for good")
    status = json.loads(corral.cli("status", "--json").stdout)
    g = status["groups"][0]
    assert g["on_failure"] == "ignore" and g["stopping"] is False, g
    assert g["failure_decision"] == (
        "g/bad failed for good (exited with code 1); on_failure: ignore: the other tasks go on")
    assert corral.task_status("g/keeper")["state"] == "running"
    running.send(signal.SIGTERM)
    result = running.wait()
    # An ignored failure does not make corral's exit code.
    assert result.returncode == 0, result
    ignored = result.events.of_group("g", "failure_ignored")
    assert len(ignored) == 1 and count_lines(runs) == 1, result.events


def test_on_failure_stop_is_the_default(corral, tmp_path):
    runs = tmp_path / "runs"
    config = group({"keeper": {"command": sh(IDLE)}, "bad": failing_main(runs)})
    result = corral.run(config)
    assert result.returncode == 1, result
    assert [e["message"] for e in result.events.of_group("g", "stopping")] == [
        "stopping: g/bad failed for good (exited with code 1)"]


def test_on_failure_exit_stops_every_group_with_the_task_code(corral, tmp_path):
    # A task of an instance set fails for good while another group runs
    # on: without `exit`, corral would stay up with that group (and
    # /livez 200), and nothing would restart the container.
    config = {
        "termination_log": str(tmp_path / "termination"),
        "groups": {
            "web": {"on_failure": "exit", "tasks": {
                "api": {"command": sh("[ $CORRAL_INSTANCE = 1 ] && exit 7; " + IDLE),
                        "instances": 2, "restart": {"policy": "never"}}}},
            "other": {"tasks": {"idle": {"command": sh(IDLE)}}},
        },
    }
    result = corral.run(config)
    assert result.returncode == 7, result
    # The healthy instance and the other group were stopped, not killed
    # by a failure of their own.
    assert result.events.of_group("other", "stopping"), result.events
    assert [e["message"] for e in result.events.of_task("idle", "exited", group="other")] \
        == ["killed by SIGTERM"], result.events
    message = (tmp_path / "termination").read_text()
    assert message.startswith("web/api@1 failed for good: exited with code 7; "
                              "corral exited with code 7\n"), message
    assert "group web: on_failure exit: every group stopped" in message, message
    # Nothing was sent that could be sent again: the hint names what kills now.
    assert "(at most 30s; SIGTERM or `corral shutdown` kills now)" in result.stderr, result.stderr
    assert "send it again" not in result.stderr, result.stderr


def test_on_failure_exit_takes_the_map_form_without_bounds(corral, tmp_path):
    config = group({"app": {"command": sh(IDLE)}},
                   on_failure={"action": "exit", "attempts": 2})
    checked = corral.check(config)
    assert checked.returncode != 0
    assert 'attempts and interval apply only to action "restart", not "exit"' in \
        checked.stderr, checked.stderr
