"""Hooks (docs/hooks.md): prestart hooks add env (and mounts and devices)
and keep state across starts, prekill hooks run before the kill signal,
exited hooks after every exit, stop hooks once after the final exit; a
hanging hook is killed with its process group and delays only its own
task; every malformed response is a failed start whose message names the
hook, the task and the field."""

import json
import os
import signal
import textwrap

import pytest

from conftest import corral_fds, count_lines, pid_alive, read_pids, sh, wait_for

PYTHON = "/usr/bin/python3"


def hook_script(tmp_path, name, body):
    """A hook written in Python: `request` is the parsed request; the
    script prints what `body` leaves in `response` (a dict)."""
    path = tmp_path / f"{name}.hook"
    path.write_text(
        f"#!{PYTHON}\nimport json, os, sys, time\nrequest = json.load(sys.stdin)\n"
        "response = {}\n" + textwrap.dedent(body) + "\njson.dump(response, sys.stdout)\n"
    )
    path.chmod(0o755)
    return str(path)


def logging_hook(tmp_path, name, log, extra=""):
    """Appends "NAME STAGE" (and the exit, for exited hooks) to `log`."""
    return hook_script(
        tmp_path,
        name,
        f"""
        line = "{name} " + request["stage"]
        if "exit" in request:
            line += " " + json.dumps(request["exit"], sort_keys=True)
        with open("{log}", "a") as f:
            f.write(line + "\\n")
        {extra}
        """,
    )


def one_task(command, hooks, **task):
    return {"groups": {"g": {"tasks": {"app": {"command": command, "hooks": hooks, **task}}}}}


def lines(path):
    return path.read_text().splitlines() if path.exists() else []


def test_prestart_env_reaches_the_task_later_hooks_win(corral, tmp_path):
    seen = tmp_path / "seen"
    first = hook_script(tmp_path, "first", 'response["env"] = {"A": "first", "B": "first"}')
    second = hook_script(tmp_path, "second", 'response["env"] = {"B": "second"}')
    hooks = [
        {"name": "first", "stage": "prestart", "exec": [first]},
        {"name": "second", "stage": "prestart", "exec": [second]},
    ]
    command = sh(f'echo "$A $B $C" > {seen}')
    result = corral.run(one_task(command, hooks, env={"B": "config", "C": "config"},
                                 restart={"policy": "never"}))
    assert result.returncode == 0, result
    # Hook env over config env; the later hook over the earlier one.
    assert seen.read_text().split() == ["first", "second", "config"], result


def test_state_comes_back_and_a_done_hook_is_not_run_again(corral, tmp_path):
    states = tmp_path / "states"
    runs_of_once = tmp_path / "once"
    seen = tmp_path / "seen"
    counting = hook_script(
        tmp_path,
        "counting",
        f"""
        with open("{states}", "a") as f:
            f.write(json.dumps([request["run"], request["state"]]) + "\\n")
        count = (request["state"] or {{"count": 0}})["count"]
        response["state"] = {{"count": count + 1}}
        response["env"] = {{"COUNT": str(count)}}
        """,
    )
    once = hook_script(
        tmp_path,
        "once",
        f"""
        with open("{runs_of_once}", "a") as f:
            f.write("run\\n")
        response["env"] = {{"ONCE": "kept"}}
        response["done"] = True
        """,
    )
    hooks = [
        {"name": "counting", "stage": "prestart", "exec": [counting]},
        {"name": "once", "stage": "prestart", "exec": [once]},
    ]
    restart = {"policy": "always", "attempts": 2, "delay": "10ms", "interval": "1m"}
    result = corral.run(one_task(sh(f'echo "$COUNT $ONCE" >> {seen}'), hooks, restart=restart))
    runs = [json.loads(line) for line in lines(states)]
    assert runs == [[0, None], [1, {"count": 1}], [2, {"count": 2}]], result
    assert count_lines(runs_of_once) == 1, result
    # The done hook's last result still applies to every start.
    assert lines(seen) == ["0 kept", "1 kept", "2 kept"], result


def test_restart_request_reruns_prestart_hooks(corral, tmp_path):
    runs = tmp_path / "runs"
    pids = tmp_path / "pids"
    counting = hook_script(tmp_path, "counting", f'open("{runs}", "a").write("run\\n")')
    hooks = [{"name": "counting", "stage": "prestart", "exec": [counting]}]
    running = corral.start(one_task(sh(f"echo $$ >> {pids}; exec sleep 1000"), hooks))
    corral.wait_control(running)
    wait_for(lambda: count_lines(pids) == 1)
    assert corral.cli("restart", "g/app").returncode == 0
    wait_for(lambda: count_lines(pids) == 2)
    assert corral.cli("restart", "--all", "g").returncode == 0
    wait_for(lambda: count_lines(pids) == 3)
    assert count_lines(runs) == 3
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_prekill_then_signal_then_exited_then_stop_once(corral, tmp_path):
    log = tmp_path / "log"
    started = tmp_path / "started"
    hooks = [
        {"name": stage, "stage": stage, "exec": [logging_hook(tmp_path, stage, log)]}
        for stage in ("prekill", "exited", "stop")
    ]
    command = sh(f"trap 'echo task-got-TERM >> {log}; exit 0' TERM; touch {started}; "
                 "while :; do sleep 0.05; done")
    running = corral.start(one_task(command, hooks))
    wait_for(started.exists)
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    assert lines(log) == [
        "prekill prekill",
        "task-got-TERM",
        'exited exited {"code": 0}',
        "stop stop",
    ], result


def test_exited_after_every_exit_and_stop_once_at_the_end(corral, tmp_path):
    log = tmp_path / "log"
    hooks = [
        {"name": stage, "stage": stage, "exec": [logging_hook(tmp_path, stage, log)]}
        for stage in ("poststart", "exited", "stop")
    ]
    restart = {"policy": "on-failure", "attempts": 2, "delay": "10ms", "interval": "1m"}
    result = corral.run(one_task(sh("exit 3"), hooks, restart=restart))
    assert result.returncode == 3, result
    got = lines(log)
    assert got.count('exited exited {"code": 3}') == 3, got
    assert got.count("poststart poststart") == 3, got
    assert got[-1] == "stop stop" and got.count("stop stop") == 1, got


def test_stop_runs_once_also_when_prestart_failed(corral, tmp_path):
    log = tmp_path / "log"
    failing = hook_script(tmp_path, "failing", "sys.exit(4)")
    hooks = [
        {"name": "failing", "stage": "prestart", "exec": [failing]},
        {"name": "exited", "stage": "exited", "exec": [logging_hook(tmp_path, "exited", log)]},
        {"name": "stop", "stage": "stop", "exec": [logging_hook(tmp_path, "stop", log)]},
    ]
    ran = tmp_path / "ran"
    restart = {"policy": "on-failure", "attempts": 1, "delay": "10ms", "interval": "1m"}
    result = corral.run(one_task(sh(f"touch {ran}"), hooks, restart=restart))
    assert result.returncode != 0, result
    assert not ran.exists()
    assert result.stderr.count("g/app: hook failing: exited with code 4") == 2, result
    # No process ever ran: no exited hook; the stop hook once.
    assert lines(log) == ["stop stop"], result


def test_a_pending_task_that_never_started_gets_its_stop_hook(corral, tmp_path):
    log = tmp_path / "log"
    stop = logging_hook(tmp_path, "stop", log)
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "setup": {"command": sh("exit 1"), "lifecycle": {"hook": "prestart"},
                              "restart": {"policy": "never"}},
                    "app": {"command": sh("sleep 1000"),
                            "hooks": [{"name": "stop", "stage": "stop", "exec": [stop]}]},
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 1, result
    assert lines(log) == ["stop stop"], result


def test_hanging_hook_is_killed_with_its_group_and_delays_only_its_task(corral, tmp_path):
    hook_pid = tmp_path / "hook.pid"
    child_pid = tmp_path / "child.pid"
    other = tmp_path / "other"
    hang = hook_script(
        tmp_path,
        "hang",
        f"""
        import subprocess
        child = subprocess.Popen(["sleep", "1000"])
        open("{child_pid}", "w").write(str(child.pid))
        open("{hook_pid}", "w").write(str(os.getpid()))
        time.sleep(1000)
        """,
    )
    config = {
        "groups": {
            "slow": {"tasks": {"app": {
                "command": sh("true"),
                "restart": {"policy": "never"},
                "hooks": [{"name": "hang", "stage": "prestart", "exec": [hang],
                           "timeout": "5s"}]}}},
            "fast": {"tasks": {"other": {"command": sh(f"touch {other}; exec sleep 1000")}}},
        }
    }
    running = corral.start(config)
    pids = wait_for(lambda: read_pids(hook_pid) and read_pids(child_pid)
                    and read_pids(hook_pid) + read_pids(child_pid))
    # Meanwhile: the other task runs, the control socket answers.
    wait_for(other.exists)
    status = corral.cli("status")
    rows = {line.split()[0]: line.split()[2] for line in status.stdout.splitlines()
            if line.startswith("  ") and not line.split()[0] == "TASK"}
    assert status.returncode == 0 and rows == {"app": "starting", "other": "running"}, status
    assert pid_alive(pids[0]), "the hook should still hang here"
    # At its timeout: the hook and what it started are killed.
    wait_for(lambda: not pid_alive(pids[0]) and not pid_alive(pids[1]), timeout=20)
    wait_for(lambda: "slow/app: hook hang: timed out after 5s; its process group was killed"
             in running.stderr_text(), timeout=10)
    running.send(signal.SIGTERM)
    running.wait()
    assert not corral.leftovers()


def test_hook_stderr_goes_to_the_task_log(corral, tmp_path):
    talking = hook_script(tmp_path, "talking", 'print("hello from the hook", file=sys.stderr)')
    hooks = [{"name": "talking", "stage": "prestart", "exec": [talking]}]
    result = corral.run(one_task(sh("true"), hooks, restart={"policy": "never"}))
    assert "g/app | hello from the hook" in result.stdout, result


MOUNT_NS = {"namespaces": ["mount"]}

MALFORMED = [
    ("non-zero exit", "sys.exit(3)", None, "exited with code 3"),
    ("invalid JSON", 'print("{not json"); sys.exit(0)', None, "invalid JSON on stdout: "),
    ("unknown field", 'response["mount"] = []', None, "mount: unknown field"),
    ("wrong type", 'response["env"] = {"A": 1}', None, "env.A: must be a string, not a number"),
    ("wrong type nested", 'response["mounts"] = [{"source": "/tmp", "target": "/x", '
     '"readonly": "yes"}]', MOUNT_NS, "mounts[0].readonly: must be a boolean, not a string"),
    ("relative target", 'response["mounts"] = [{"source": "/tmp", "target": "/a"}, '
     '{"source": "/tmp", "target": "../etc"}]', MOUNT_NS,
     'mounts[1].target "../etc": must be an absolute path inside the task'),
    ("dot-dot target", 'response["mounts"] = [{"source": "/tmp", "target": "/a/../../etc"}]',
     MOUNT_NS, 'mounts[0].target "/a/../../etc": must be an absolute path inside the task'),
    ("missing source", 'response["mounts"] = [{"source": "/nonexistent/x", "target": "/x"}]',
     MOUNT_NS, 'mounts[0].source "/nonexistent/x": No such file or directory'),
    ("device not a device", 'response["devices"] = [{"source": "/tmp"}]', MOUNT_NS,
     'devices[0].source "/tmp": not a device node'),
    ("mounts without a mount namespace",
     'response["mounts"] = [{"source": "/tmp", "target": "/x"}]', None,
     'mounts: the task has no mount namespace; add "mount" to its isolation.namespaces'),
    ("corral's variable", 'response["env"] = {"CORRAL_TASK": "x"}', None,
     "env.CORRAL_TASK: is set by corral"),
]


@pytest.mark.parametrize("body,isolation,message", [case[1:] for case in MALFORMED],
                         ids=[case[0] for case in MALFORMED])
def test_malformed_response_fails_the_start_with_a_precise_message(corral, tmp_path, body,
                                                                   isolation, message):
    ran = tmp_path / "ran"
    bad = hook_script(tmp_path, "bad", body)
    task = {"restart": {"policy": "never"}}
    if isolation:
        task["isolation"] = isolation
    result = corral.run(one_task(sh(f"touch {ran}"), [{"name": "bad", "stage": "prestart",
                                                       "exec": [bad]}], **task))
    assert result.returncode == 126, result
    assert not ran.exists()
    assert f"g/app: hook bad: {message}" in result.stderr, result
    failed = result.events.of_task("app", "start_failed")
    assert len(failed) == 1 and failed[0]["message"].startswith(f"hook bad: {message}"), failed


def test_valid_mounts_and_devices_with_a_mount_namespace_start_the_task(corral, tmp_path):
    ran = tmp_path / "ran"
    good = hook_script(tmp_path, "good", """
        response["mounts"] = [{"source": "/tmp", "target": "/mnt/x", "readonly": True,
                               "propagation": "rslave"},
                              {"type": "tmpfs", "target": "/scratch", "options": ["size=1m"]}]
        response["devices"] = [{"source": "/dev/null", "target": "/dev/hooked",
                                "permissions": "rw"}]
        """)
    hooks = [{"name": "good", "stage": "prestart", "exec": [good]}]
    result = corral.run(one_task(sh(f"touch {ran}"), hooks, restart={"policy": "never"},
                                 isolation={"namespaces": ["mount"]}))
    assert result.returncode == 0, result
    assert ran.exists()


def test_group_hooks_run_for_every_task(corral, tmp_path):
    log = tmp_path / "log"
    hook = hook_script(tmp_path, "who", f'open("{log}", "a").write(request["task"] + "\\n")')
    config = {
        "groups": {
            "g": {
                "hooks": [{"name": "who", "stage": "prestart", "exec": [hook]}],
                "tasks": {
                    "a": {"command": sh("true"), "restart": {"policy": "never"}},
                    "b": {"command": sh("true"), "restart": {"policy": "never"}},
                },
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    assert sorted(lines(log)) == ["a", "b"]


def test_missing_hook_program_fails_the_start(corral, tmp_path):
    hooks = [{"name": "gone", "stage": "prestart", "exec": [str(tmp_path / "nope")]}]
    result = corral.run(one_task(sh("true"), hooks, restart={"policy": "never"}))
    assert result.returncode == 126, result
    assert (f"g/app: hook gone: exec {tmp_path / 'nope'}: No such file or directory"
            in result.stderr), result
    assert not corral.leftovers()


def test_failed_hooks_of_other_stages_are_logged_and_change_nothing(corral, tmp_path):
    failing = hook_script(tmp_path, "failing", "sys.exit(2)")
    hooks = [{"name": "failing", "stage": stage, "exec": [failing]}
             for stage in ("poststart", "exited", "stop")]
    result = corral.run(one_task(sh("true"), hooks, restart={"policy": "never"}))
    assert result.returncode == 0, result
    failed = [e["message"] for e in result.events.of_task("app", "hook_failed")]
    assert failed == [f"hook failing: exited with code 2 ({stage})"
                      for stage in ("poststart", "exited", "stop")], result.events


def test_shutdown_during_a_hanging_prestart_hook_kills_it(corral, tmp_path):
    hook_pid = tmp_path / "hook.pid"
    log = tmp_path / "log"
    hang = hook_script(tmp_path, "hang",
                       f'open("{hook_pid}", "w").write(str(os.getpid()))\ntime.sleep(1000)')
    hooks = [
        # Longer than the test may take: the stop must not wait for it.
        {"name": "hang", "stage": "prestart", "exec": [hang], "timeout": "1h"},
        {"name": "stop", "stage": "stop", "exec": [logging_hook(tmp_path, "stop", log)]},
    ]
    running = corral.start(one_task(sh("true"), hooks))
    pid = wait_for(lambda: read_pids(hook_pid))[0]
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    assert not pid_alive(pid)
    assert lines(log) == ["stop stop"], result
    killing = result.events.of_task("app", "killing")
    assert killing and killing[0]["message"] == "prestart hooks cancelled: shutdown requested", \
        result.events


def test_the_example_volumes_hook(corral, tmp_path):
    from conftest import REPO_ROOT

    example = REPO_ROOT / "examples" / "hooks"
    # examples/hooks/corral.yaml as written, its hook found from here.
    config = (example / "corral.yaml").read_text().replace(
        "examples/hooks/volumes", str(example / "volumes"))
    base = tmp_path / "volumes"
    result = corral.run(config, env={"VOLUMES_DIR": str(base)})
    assert result.returncode == 0, result
    seen = [line[len("demo/app | "):] for line in result.stdout_lines()
            if line.startswith("demo/app | ")]
    assert seen[0] == f"volumes: {base}/demo/app on /data (start 0)", result
    assert seen[1] == "DATA_DIR=/data", result
    # The task's /data is a mount of its own, holding what the task wrote.
    assert seen[2].split()[1] == "/data", result
    assert seen[3:] == ["hello"], result
    # The stop run removed what the prestart run made, from its state.
    assert not (base / "demo" / "app").exists()


def test_hook_runs_leak_no_fds_and_no_processes(corral, tmp_path):
    pids = tmp_path / "pids"
    hooks = [{"name": stage, "stage": stage, "exec": [hook_script(tmp_path, stage,
                                                                  'response["state"] = {}')]}
             for stage in ("prestart", "poststart", "prekill", "exited")]
    running = corral.start(one_task(sh(f"echo $$ >> {pids}; exec sleep 1000"), hooks))
    corral.wait_control(running)
    wait_for(lambda: count_lines(pids) == 1)

    def fds():
        return corral_fds(running.pid)

    def settled(count):
        # The run is up, and nothing else of the test's runs: its poststart
        # hook is over.
        others = [pid for pid in corral.leftovers() if pid != running.pid]
        return count_lines(pids) == count and others == read_pids(pids)[-1:]

    wait_for(lambda: settled(1), what=lambda: (read_pids(pids), corral.leftovers()))
    before = fds()
    for run in range(2, 6):
        assert corral.cli("restart", "g/app").returncode == 0
        wait_for(lambda: settled(run), what=lambda: (read_pids(pids), corral.leftovers()))
    # A hook that has just exited may not have been read to its end by
    # corral yet: its pipes close when corral handles its exit, at either
    # snapshot. A leak grows with the 16 hook runs; those pipes do not.
    wait_for(lambda: len(fds()) <= len(before), what=lambda: (before, fds()))
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert not corral.leftovers()


def test_hook_processes_at_once_are_bounded_by_hook_concurrency(corral, tmp_path):
    """hook_concurrency: 3 and 24 tasks whose exited hook takes 0.3 s: all
    run, never more than 3 at a time."""
    log = tmp_path / "hooks.log"
    hook = ["/bin/sh", "-c", f'echo "+ $(date +%s.%N)" >> {log}; sleep 0.3; '
            f'echo "- $(date +%s.%N)" >> {log}; cat >/dev/null']
    tasks = {f"t{i:02d}": {"command": ["true"], "restart": {"policy": "never"},
                           "hooks": [{"name": "slow", "stage": "exited", "exec": hook}]}
             for i in range(24)}
    result = corral.run({"hook_concurrency": 3, "groups": {"g": {"tasks": tasks}}})
    assert result.returncode == 0, result
    events = sorted((float(line.split()[1]), line[0]) for line in log.read_text().splitlines())
    assert sum(1 for _, sign in events if sign == "+") == 24
    running = peak = 0
    for _, sign in events:
        running += 1 if sign == "+" else -1
        peak = max(peak, running)
    assert peak <= 3, peak
    assert peak == 3  # and the bound is used, not one at a time
