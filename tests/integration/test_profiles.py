"""Profiles (compose's): `profiles: [debug]` on a group or a task, active
with `corral run --profile debug` or CORRAL_PROFILES. Seen from outside:
which tasks status lists and runs, `corral check`'s count and errors, and
that a reload keeps the profiles corral was started with."""

import json
import signal

from conftest import wait_for

SLEEP = ["sleep", "1000"]

CONFIG = {
    "groups": {
        "app": {"tasks": {
            "web": {"command": SLEEP},
            "debugger": {"command": SLEEP, "profiles": ["debug"]},
            "seed": {"command": SLEEP, "profiles": ["tools", "debug"]},
        }},
        "tools": {"profiles": ["tools"], "tasks": {"shell": {"command": SLEEP}}},
    }
}


def running_tasks(corral):
    return sorted(task["task"] for group in corral.status()["groups"]
                  for task in group["tasks"] if task["state"] == "running")


def run_until_running(corral, expected, run_args=(), env=None, config=CONFIG):
    running = corral.start(corral.config(config, name="profiles.yaml"), run_args=run_args,
                           env=env)
    corral.wait_control(running)
    wait_for(lambda: running_tasks(corral) == expected,
             what=lambda: f"{expected}, not {running_tasks(corral)}")
    return running


def stop(running):
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_without_a_profile_only_what_has_none_runs(corral):
    running = run_until_running(corral, ["app/web"])
    assert [g["name"] for g in corral.status()["groups"]] == ["app"]
    stop(running)


def test_a_profile_adds_its_tasks_and_groups(corral):
    running = run_until_running(corral, ["app/debugger", "app/seed", "app/web"],
                                run_args=["--profile", "debug"])
    stop(running)
    assert "profiles active: debug" in running.stderr_text()


def test_profiles_repeat_and_come_from_corral_profiles_without_the_option(corral):
    everything = ["app/debugger", "app/seed", "app/web", "tools/shell"]
    running = run_until_running(corral, everything,
                                run_args=["--profile", "debug", "--profile", "tools"])
    stop(running)
    running = run_until_running(corral, everything, env={"CORRAL_PROFILES": "tools, debug"})
    stop(running)
    # --profile wins over the environment, as compose's over COMPOSE_PROFILES.
    running = run_until_running(corral, ["app/seed", "app/web", "tools/shell"],
                                run_args=["--profile", "tools"],
                                env={"CORRAL_PROFILES": "debug"})
    stop(running)


def test_a_reload_keeps_the_active_profiles(corral):
    running = run_until_running(corral, ["app/debugger", "app/seed", "app/web"],
                                run_args=["--profile", "debug"])
    before = corral.task_status("app/debugger")["pid"]
    config = json.loads(json.dumps(CONFIG))
    config["groups"]["app"]["tasks"]["extra"] = {"command": SLEEP, "profiles": ["debug"]}
    corral.config(config, name="profiles.yaml")
    result = corral.cli("reload", "--json")
    assert result.returncode == 0, result
    plan = json.loads(result.stdout)["plan"]
    assert plan["tasks"] == [{"task": "app/extra", "action": "added"}], plan
    wait_for(lambda: running_tasks(corral) == ["app/debugger", "app/extra", "app/seed",
                                               "app/web"], what="app/extra running")
    assert corral.task_status("app/debugger")["pid"] == before
    stop(running)


def check(corral, text, *args, env=None):
    path = corral.config(text, name="check.yaml")
    return corral.cli("check", *args, path, env=env), path


def test_check_counts_what_the_profiles_would_run(corral):
    text = json.dumps(CONFIG)
    result, path = check(corral, text)
    assert result.returncode == 0 and result.stdout == f"{path}: ok (1 group, 1 task)\n", result
    result, path = check(corral, text, "--profile", "tools")
    assert result.stdout == f"{path}: ok (2 groups, 3 tasks)\n", result
    result, path = check(corral, text, env={"CORRAL_PROFILES": "debug"})
    assert result.stdout == f"{path}: ok (1 group, 3 tasks)\n", result


def test_an_active_profile_no_one_lists_is_warned_of(corral):
    text = json.dumps(CONFIG)
    result, path = check(corral, text, "--profile", "degub", "--profile", "tools")
    assert result.returncode == 0, result
    assert result.stdout == f"{path}: ok (2 groups, 3 tasks)\n", result
    assert result.stderr == (f'{path}: warning: profile "degub" is active, but no group or '
                             "task lists it\n"), result
    # Listed by a task only, or by a group only: no warning.
    for profiles in (["--profile", "debug"], ["--profile", "tools"]):
        result, path = check(corral, text, *profiles)
        assert result.returncode == 0 and result.stderr == "", result


DEPENDS = """\
groups:
  app:
    tasks:
      web:
        command: [sleep, "1"]
        after: [debugger]
      optional:
        command: [sleep, "1"]
        after: {debugger: {required: false}, tools/shell: started}
      debugger: {command: [sleep, "1"], profiles: [debug, tools]}
  tools:
    profiles: [tools]
    tasks:
      shell: {command: [sleep, "1"]}
"""


def test_a_dependency_on_what_the_profiles_leave_out_is_an_error(corral):
    result, path = check(corral, DEPENDS)
    assert result.returncode == 1, result
    assert result.stderr.splitlines()[:2] == [
        f"{path}:6:17: app/web: after.debugger: app/debugger is left out: it is only in "
        "profiles [debug, tools], none of them active (activate one with --profile or "
        "CORRAL_PROFILES, or write required: false)",
        f"{path}:9:46: app/optional: after.tools/shell: tools/shell is left out: its group "
        "tools is only in profile [tools], which is not active (activate one with --profile "
        "or CORRAL_PROFILES, or write required: false)",
    ], result.stderr
    # Active, they are there; required: false lets the dependent go without.
    result, _ = check(corral, DEPENDS, "--profile", "tools")
    assert result.returncode == 0, result
    result, _ = check(corral, DEPENDS.replace("tools/shell: started", "web: started"),
                      "--profile", "debug")
    assert result.returncode == 0, result


def test_run_refuses_the_same_dependency_and_starts_nothing(corral):
    path = corral.config(DEPENDS, name="depends.yaml")
    result = corral.run(path)
    assert result.returncode == 1, result
    assert "app/debugger is left out" in result.stderr
    assert not result.events


NOTIFY_READY = """\
notify: {ready: [app, tools, extras]}
groups:
  app:
    tasks:
      web: {command: [sleep, "1"]}
  tools:
    profiles: [tools]
    tasks:
      shell: {command: [sleep, "1"]}
  extras:
    tasks:
      seed: {command: [sleep, "1"], profiles: [seed]}
"""


def test_notify_ready_on_a_group_left_out_says_so_not_unknown(corral):
    result, path = check(corral, NOTIFY_READY)
    assert result.returncode == 1, result
    assert result.stderr.splitlines()[:2] == [
        f"{path}:1:23: notify.ready[1]: group \"tools\" is left out: it is only in profile "
        "[tools], which is not active (activate one with --profile or CORRAL_PROFILES, or "
        "leave it out of the list)",
        f"{path}:1:30: notify.ready[2]: group \"extras\" is left out: each of its tasks is "
        "in a profile that is not active (activate one with --profile or CORRAL_PROFILES, "
        "or leave it out of the list)",
    ], result.stderr
    result, _ = check(corral, NOTIFY_READY, "--profile", "tools", "--profile", "seed")
    assert result.returncode == 0, result
    result, _ = check(corral, NOTIFY_READY.replace("extras]", "extra]"), "--profile", "tools",
                      "--profile", "seed")
    assert 'unknown group "extra"; did you mean "extras"?' in result.stderr, result.stderr


def test_nothing_to_run_and_bad_names_are_errors(corral):
    text = """\
groups:
  g:
    profiles: [debug]
    tasks:
      t: {command: [sleep, "1"]}
      u: {command: [sleep, "1"], profiles: ["-bad", "", ok]}
"""
    result, path = check(corral, text)
    assert result.returncode == 1, result
    assert result.stderr.splitlines()[:3] == [
        f"{path}:2:3: groups: nothing to run: every group and task is in a profile that is "
        "not active (active: none); activate one with --profile or CORRAL_PROFILES",
        f'{path}:6:45: g/u: profiles[0]: invalid profile name "-bad": must start with a '
        "letter or a digit",
        f'{path}:6:53: g/u: profiles[1]: invalid profile name "": must not be empty',
    ], result.stderr
    result = corral.cli("run", "--profile", "a/b", path)
    assert result.returncode == 2, result
    assert result.stderr.startswith("corral run: --profile: profile \"a/b\": may only use "
                                    "letters, digits, '_', '.' and '-'"), result.stderr
    result = corral.cli("check", path, env={"CORRAL_PROFILES": "x y"})
    assert result.returncode == 2 and "CORRAL_PROFILES: profile \"x y\"" in result.stderr


def test_the_example_is_valid_with_and_without_its_profiles(corral, repo_root):
    example = repo_root / "examples" / "profiles.yaml"
    result = corral.cli("check", example)
    assert result.returncode == 0 and "ok (1 group, 2 tasks)" in result.stdout, result
    result = corral.cli("check", "--profile", "debug", "--profile", "tools", example)
    assert result.returncode == 0 and "ok (2 groups, 4 tasks)" in result.stdout, result
