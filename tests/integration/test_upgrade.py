"""corral upgrade [BINARY] and SIGUSR2: corral execs a new binary in its
own process and every task runs on (systemd's daemon-reexec, s6-svscan's
exec). Seen from outside (status: the same pids, restart counts and
uptimes; corral's pid), from inside the tasks (a start marker each task
writes once), and from the output: every numbered line once, in order, on
corral's stdout and at a `corral logs -f` follower that stays connected."""

import json
import os
import re
import signal
import stat
import subprocess
import time

import pytest

from conftest import children_of, pid_exists, proc_stat, read_pids, sh, wait_for

UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"]


def counting_task(marks, name, pause="0.02"):
    """Prints "NAME n=K end" for K = 1, 2, ...; each line written in two
    parts, so that corral often holds half a line when it execs. Writes
    its pid to MARKS/NAME once, when it starts."""
    return sh(
        f"echo $$ >> {marks}/{name}; i=0; while :; do i=$((i+1)); "
        f"printf '{name} n=%d' $i; sleep {pause}; echo ' end'; done"
    )


def counting_config(marks, count, pause="0.02"):
    tasks = {f"t{i}": {"command": counting_task(marks, f"t{i}", pause)} for i in range(count)}
    return {"groups": {"g": {"tasks": tasks}}}


def snapshot(corral):
    """task -> (pid, restarts, uptime_ms) of every task."""
    seen = {}
    for group in corral.status()["groups"]:
        for task in group["tasks"]:
            seen[task["task"]] = (task.get("pid"), task.get("restarts"), task.get("uptime_ms"))
    return seen


def assert_same_tasks(before, after):
    assert set(before) == set(after)
    for name, (pid, restarts, uptime) in before.items():
        assert after[name][0] == pid, (name, before[name], after[name])
        assert after[name][1] == restarts, (name, before[name], after[name])
        assert after[name][2] >= uptime, (name, before[name], after[name])


def numbered_lines(text, pattern=r"(t\d+) n=(\d+)(.*)$"):
    """task -> the numbers of its lines, in the order they came. Every line
    is whole ("... end") but a task's last, which corral's shutdown may
    have cut (the task killed between its two writes)."""
    numbers, cut = {}, {}
    for line in text.splitlines():
        match = re.search(pattern, line)
        if not match:
            continue
        name = match.group(1)
        assert name not in cut, f"a line cut before another of {name}: {cut[name]!r}"
        if match.group(3) != " end":
            assert match.group(3) == "", f"a line joined: {line!r}"
            cut[name] = line
        numbers.setdefault(name, []).append(int(match.group(2)))
    return numbers


def assert_every_line_once(numbers, tasks):
    assert set(numbers) == set(tasks), sorted(set(tasks) - set(numbers))
    for name, seen in numbers.items():
        assert seen == list(range(1, len(seen) + 1)), (name, seen[:5], len(seen))


def last_numbers(corral):
    """task -> the highest line number in the last 256 KiB of corral's
    stdout (a few seconds of output)."""
    with open(corral.dir / "corral.stdout", "rb") as stdout:
        stdout.seek(max(0, stdout.seek(0, os.SEEK_END) - 256 * 1024))
        text = stdout.read().decode(errors="replace")
    last = {}
    for name, number in re.findall(r"(t\d+) n=(\d+) end", text):
        last[name] = max(last.get(name, 0), int(number))
    return last


def wait_for_lines_after(corral, tasks):
    """Until every task printed two more lines than it had now: output
    flows after the upgrade (however slow the machine)."""
    seen = last_numbers(corral)
    wait_for(lambda: all(last_numbers(corral).get(name, 0) >= seen.get(name, 0) + 2
                         for name in tasks), timeout=60, interval=0.2,
             what="lines after the upgrade")


def starts(marks):
    return {path.name: path.read_text().split() for path in marks.iterdir()}


def upgrade(corral, *args):
    return corral.cli("upgrade", *args, timeout=60)


def test_upgrade_keeps_100_tasks_and_every_line(corral, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    # 5 lines a second each: 100 tasks fork 500 sleeps a second.
    running = corral.start(counting_config(marks, 100, pause="0.2"))
    corral.wait_control(running)
    follower = corral.cli_popen("logs", "-f")
    wait_for(lambda: len(list(marks.iterdir())) == 100, what="every task to start")
    wait_for_lines_after(corral, {f"t{i}" for i in range(100)})  # lines before, too
    before = snapshot(corral)
    first_starts = starts(marks)

    result = upgrade(corral)
    assert result.returncode == 0, result.stderr
    assert "took over 100 tasks" in result.stdout, result.stdout

    after = snapshot(corral)
    assert_same_tasks(before, after)
    assert running.alive()
    wait_for_lines_after(corral, {f"t{i}" for i in range(100)})
    # No task started again: each wrote its marker once.
    assert starts(marks) == first_starts
    assert all(len(pids) == 1 for pids in first_starts.values())

    running.send(signal.SIGTERM)
    outcome = running.wait()
    follower_output, _ = follower.communicate(timeout=30)
    tasks = {f"t{i}" for i in range(100)}
    # Written before and after the exec: corral's stdout and the follower
    # have each line once, whole and in order.
    assert_every_line_once(numbered_lines(outcome.stdout), tasks)
    assert_every_line_once(numbered_lines(follower_output.decode(errors="replace")), tasks)
    events = [event.get("event") for event in outcome.events]
    assert "upgrade_started" in events and "upgraded" in events
    # Announced once: the new corral did not say "received" again.
    assert sum(1 for event in outcome.events if event.get("event") == "received") == 100


def test_restart_counts_timers_and_a_later_crash_survive(corral, tmp_path):
    """A task that crashed twice keeps its count; one waiting out a restart
    delay restarts when it was due; a task killed afterwards restarts
    under the new corral, with the count going on."""
    runs = tmp_path / "runs"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    # Fails its first two runs, then runs on.
                    "flaky": {
                        "command": sh(f"echo x >> {runs}; "
                                      f"[ $(wc -l < {runs}) -gt 2 ] || exit 1; "
                                      "exec sleep 1000"),
                        "restart": {"policy": "on-failure", "attempts": 5, "delay": "0s"},
                    },
                    "slow": {
                        "command": sh(f"date +%s.%N >> {tmp_path}/slow; exit 1"),
                        "restart": {"policy": "on-failure", "attempts": 5, "delay": "3s"},
                    },
                    "steady": {"command": "sleep 1000"},
                }
            }
        }
    }
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/flaky").get("restarts") == 2
             and corral.task_status("g/flaky")["state"] == "running",
             what="flaky to run after two restarts")
    wait_for(lambda: corral.task_status("g/slow")["state"] == "pending",
             what="slow to wait out its delay")
    before = snapshot(corral)
    result = upgrade(corral)
    assert result.returncode == 0, result.stderr
    after = snapshot(corral)
    assert after["g/flaky"][:2] == before["g/flaky"][:2]
    assert after["g/steady"][:2] == before["g/steady"][:2]
    # Its delay goes on: it runs again, once, when it was due.
    wait_for(lambda: len((tmp_path / "slow").read_text().split()) == 2, timeout=10,
             what="slow's second run")
    first, second = map(float, (tmp_path / "slow").read_text().split())
    assert second - first >= 3.0, "the restart delay was cut short"
    wait_for(lambda: corral.task_status("g/slow")["restarts"] == before["g/slow"][1] + 1,
             what="slow's restart counted on from the old count")
    # A crash after the upgrade is heard, and restarts the task.
    os.kill(before["g/steady"][0], signal.SIGKILL)
    wait_for(lambda: corral.task_status("g/steady").get("restarts") == 1
             and corral.task_status("g/steady")["state"] == "running",
             what="steady to restart under the new corral")
    running.send(signal.SIGTERM)
    running.wait()


def proc_state(pid):
    stat = proc_stat(pid)
    return stat[0] if stat else None


def outer_pid(corral, inner):
    """The host's pid of a process of this test whose pid is `inner` in
    its own pid namespace."""
    for pid in corral.leftovers():
        try:
            with open(f"/proc/{pid}/status") as status:
                for line in status:
                    if line.startswith("NSpid:") and int(line.split()[-1]) == inner:
                        return pid
        except OSError:
            continue
    return None


def write_script(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_a_binary_that_cannot_take_over_leaves_corral_running(corral, corral_bin, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    running = corral.start(counting_config(marks, 3))
    corral.wait_control(running)
    wait_for(lambda: len(list(marks.iterdir())) == 3, what="every task to start")
    before = snapshot(corral)

    exits_1 = write_script(tmp_path / "exits-1", "#!/bin/sh\nexit 1\n")
    not_executable = tmp_path / "not-executable"
    not_executable.write_bytes(corral_bin.read_bytes()[:4096])
    not_executable.chmod(0o644)
    other_format = write_script(
        tmp_path / "other-format",
        f"#!/bin/sh\nexport CORRAL_TEST_HANDOVER_FORMAT=99\nexec {corral_bin} \"$@\"\n")
    refuses = write_script(
        tmp_path / "refuses",
        f"#!/bin/sh\n[ \"$1\" = --handover-format ] && exec {corral_bin} \"$@\"\n"
        f"export CORRAL_TEST_HANDOVER_REFUSE=1\nexec {corral_bin} \"$@\"\n")
    cases = [
        (exits_1, "exited with code 1"),
        (not_executable, "Permission denied"),
        (tmp_path / "missing", "No such file or directory"),
        # Relative, from the CLI's directory (corral.dir), as the others.
        ("missing-here", f"{corral.dir}/missing-here cannot be run: No such file or directory"),
        (other_format, "reads hand-over format 99, this corral writes format 1"),
        # Passes the check, then cannot take over: back to the old binary.
        (refuses, "could not take over: it refused the state"),
    ]
    for binary, reason in cases:
        result = upgrade(corral, binary)
        assert result.returncode == 1, (binary, result.stdout, result.stderr)
        assert reason in result.stderr, (binary, result.stderr)
        assert running.alive()
        assert_same_tasks(before, snapshot(corral))
    # A start after a failed exec gets the environment as before.
    assert corral.cli("restart", "g/t0").returncode == 0
    wait_for(lambda: len(starts(marks)["t0"]) == 2, what="t0's second start")
    before = snapshot(corral)
    # And it still upgrades to a good one.
    assert upgrade(corral, corral_bin).returncode == 0
    assert_same_tasks(before, snapshot(corral))
    wait_for_lines_after(corral, {"t1", "t2"})
    running.send(signal.SIGTERM)
    outcome = running.wait()
    # t0 was restarted on purpose: its lines start again.
    others = "\n".join(line for line in outcome.stdout.splitlines() if "g/t0 " not in line)
    assert_every_line_once(numbered_lines(others), {"t1", "t2"})
    assert "upgrade_failed" in [event.get("event") for event in outcome.events]


def test_refused_while_a_task_is_between_states(corral, tmp_path):
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "stubborn": {"command": sh("trap '' TERM; while :; do sleep 0.1; done"),
                                 "kill": {"timeout": "20s"}},
                }
            }
        }
    }
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/stubborn")["state"] == "running",
             what="the task to run")
    stop = corral.cli_popen("stop", "g/stubborn")
    wait_for(lambda: corral.task_status("g/stubborn")["state"] == "stopping",
             what="the stop to begin")
    result = upgrade(corral)
    assert result.returncode == 1
    assert "g/stubborn: it is being stopped" in result.stderr
    stop.kill()
    # A second SIGTERM kills what is left at once.
    running.send(signal.SIGTERM)
    wait_for(lambda: "shutting down gracefully" in running.stderr_text(), what="the shutdown")
    running.send(signal.SIGTERM)
    running.wait()


def signal_masks(pid):
    with open(f"/proc/{pid}/status") as status:
        return [line for line in status if line.startswith(("SigBlk", "SigIgn", "SigCgt"))]


def test_sigusr2_upgrades_with_corral_own_binary(corral, tmp_path):
    """SIGUSR2 is `corral upgrade`; the signal mask is the same after it, an
    `events -f` follower stays connected and sees the upgrade and what
    follows it once each."""
    marks = tmp_path / "marks"
    marks.mkdir()
    running = corral.start(counting_config(marks, 2))
    corral.wait_control(running)
    wait_for(lambda: len(list(marks.iterdir())) == 2, what="every task to start")
    follower = corral.cli_popen("events", "-f", "--json")
    first = follower.stdout.readline()  # the history came: it follows
    masks = signal_masks(running.pid)
    before = snapshot(corral)
    running.send(signal.SIGUSR2)
    wait_for(lambda: "upgraded" in [event.get("event") for event in running.events()],
             what="the upgrade")
    assert_same_tasks(before, snapshot(corral))
    assert signal_masks(running.pid) == masks
    # SIGHUP is still a reload, SIGTERM a shutdown.
    running.send(signal.SIGHUP)
    wait_for(lambda: "reload_finished" in [event.get("event") for event in running.events()]
             or "reload_refused" in [event.get("event") for event in running.events()],
             what="the reload")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    followed, _ = follower.communicate(timeout=30)
    kinds = [json.loads(line).get("event") for line in (first + followed).decode().splitlines()]
    for kind in ("upgrade_started", "upgraded", "finished"):
        assert kinds.count(kind) == 1, (kind, kinds)


def test_as_pid1_a_task_exiting_and_orphans_during_the_exec_are_seen(corral, corral_bin,
                                                                     tmp_path):
    """As PID 1 of a pid namespace. The new binary takes a second to start
    (a wrapper that sleeps, then execs corral): meanwhile a task is
    killed, and orphans reparented to PID 1 exit. The new corral hears the
    task's exit through its pidfd (and restarts it), and reaps the
    orphans."""
    orphans = tmp_path / "orphans"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "victim": {"command": "sleep 1000"},
                    "spawner": {
                        "command": sh(
                            f"for i in 1 2 3; do (setsid sh -c 'echo $$ >> {orphans}; "
                            f"while [ ! -e {tmp_path}/go ]; do sleep 0.05; done' &); done; "
                            "exec sleep 1000"),
                    },
                }
            }
        }
    }
    slow = write_script(
        tmp_path / "slow-start",
        "#!/usr/bin/python3\nimport os, sys, time\n"
        f"corral = {str(corral_bin)!r}\n"
        "if sys.argv[1:2] != ['--handover-format']:\n"
        f"    open({str(tmp_path / 'window')!r}, 'w').close()\n"
        f"    while not os.path.exists({str(tmp_path / 'window-over')!r}):\n"
        "        time.sleep(0.02)\n"
        "os.execv(corral, [corral] + sys.argv[1:])\n")
    running = corral.start(config, wrapper=UNSHARE)
    corral.wait_control(running)
    wait_for(lambda: orphans.exists() and len(read_pids(orphans)) == 3, what="the orphans")
    victim = outer_pid(corral, corral.task_status("g/victim")["pid"])
    pids = [outer_pid(corral, pid) for pid in read_pids(orphans)]
    assert victim and all(pids), (victim, pids)
    pid1 = children_of(running.pid)[0][0]
    upgrade_call = corral.cli_popen("upgrade", slow)
    wait_for(lambda: (tmp_path / "window").exists(), what="the exec")
    # corral's process is the wrapper now: a task dies, the orphans exit.
    os.kill(victim, signal.SIGKILL)
    (tmp_path / "go").touch()
    wait_for(lambda: all(proc_state(pid) in (None, "Z") for pid in pids + [victim]),
             what="the orphans and the victim to exit during the exec")
    (tmp_path / "window-over").touch()
    output, errors = upgrade_call.communicate(timeout=60)
    assert upgrade_call.returncode == 0, errors
    wait_for(lambda: corral.task_status("g/victim").get("restarts") == 1
             and corral.task_status("g/victim")["state"] == "running",
             what="the victim to restart")
    assert corral.task_status("g/victim")["last_exit"]["signal"] == "SIGKILL"
    wait_for(lambda: not any(pid_exists(pid) for pid in pids), what="the orphans reaped")
    assert not [child for child in children_of(pid1) if child[1] == "Z"]
    assert running.alive()
    os.kill(pid1, signal.SIGTERM)  # unshare does not pass it on
    assert running.wait().returncode == 0


def test_the_running_definitions_go_over_not_the_files_changed_since(corral, tmp_path):
    """A conf.d directory and an env_file changed on disk after the start:
    the new corral runs the definitions the old one ran; a reload, later,
    applies the change."""
    confd = tmp_path / "conf.d"
    confd.mkdir()
    env_file = tmp_path / "app.env"
    env_file.write_text("GREETING=old\n")
    app = {"command": sh(f"echo $GREETING >> {tmp_path}/greetings; exec sleep 1000"),
           "env_file": str(env_file)}
    (confd / "10-app.yaml").write_text(json.dumps({"groups": {"g": {"tasks": {"app": app}}}}))
    running = corral.start(confd)
    corral.wait_control(running)
    wait_for(lambda: (tmp_path / "greetings").exists(), what="app to start")
    before = snapshot(corral)

    env_file.write_text("GREETING=new\n")
    (confd / "20-more.yaml").write_text(
        json.dumps({"groups": {"g": {"tasks": {"extra": {"command": "sleep 1000"}}}}}))
    assert upgrade(corral).returncode == 0
    assert snapshot(corral).keys() == before.keys()
    # Restarted under the new corral: the definition it ran, not the file's.
    corral.cli("restart", "g/app")
    wait_for(lambda: len((tmp_path / "greetings").read_text().split()) == 2,
             what="app's second run")
    assert (tmp_path / "greetings").read_text().split() == ["old", "old"]
    # A reload reads the files again.
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: "g/extra" in snapshot(corral), what="the reload to add extra")
    running.send(signal.SIGTERM)
    running.wait()


NOTIFIER = """
import os, socket, sys, time
address = os.environ["NOTIFY_SOCKET"]
address = "\\0" + address[1:] if address.startswith("@") else address
sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.05)
sender.sendto(b"READY=1", address)
while True:
    sender.sendto(b"WATCHDOG=1", address)
    time.sleep(0.2)
"""


def test_readiness_watchdog_probes_schedules_and_log_files_go_on(corral, tmp_path):
    """A notify: systemd task made ready after the upgrade through the
    NOTIFY_SOCKET it was started with, and its watchdog fed there; a
    notify: fd task made ready through the pipe it was given; a health
    probe and a schedule that go on; a log file with every line once."""
    logs = tmp_path / "logs"
    marks = tmp_path / "marks"
    marks.mkdir()
    notifier = tmp_path / "notifier.py"
    notifier.write_text(NOTIFIER)
    config = {
        "groups": {
            "g": {
                "log": {"dir": str(logs), "streams": "separate"},
                "tasks": {
                    "notified": {
                        "command": ["/usr/bin/python3", str(notifier), str(tmp_path / "go")],
                        "readiness": {"notify": "systemd", "watchdog": "1s"},
                    },
                    "piped": {
                        "command": sh(f"while [ ! -e {tmp_path}/go ]; do sleep 0.05; done; "
                                      "echo >&3; exec sleep 1000"),
                        "readiness": {"notify": "fd", "fd": 3},
                    },
                    "logged": {
                        "command": sh(f"while [ ! -e {tmp_path}/go ]; do sleep 0.05; done; "
                                      "echo up and ready; exec sleep 1000"),
                        "readiness": {"log": "ready$"},
                    },
                    "checked": {
                        "command": "sleep 1000",
                        "health": {"exec": ["/bin/sh", "-c", f"echo x >> {tmp_path}/checks"],
                                   "interval": "200ms"},
                    },
                    "every": {
                        "command": sh(f"echo x >> {tmp_path}/runs"),
                        "schedule": {"every": "1s"},
                    },
                    "t0": {"command": counting_task(marks, "t0")},
                    # Its lines on its stderr pipe.
                    "t1": {"command": ["/bin/sh", "-c", "exec 1>&2; "
                                       + counting_task(marks, "t1")[-1]]},
                },
            }
        }
    }
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: (tmp_path / "runs").exists() and (tmp_path / "checks").exists(),
             what="a scheduled run and a health check")
    assert corral.task_status("g/notified")["ready"] is False
    assert corral.task_status("g/piped")["ready"] is False
    assert corral.task_status("g/logged")["ready"] is False
    before = snapshot(corral)
    assert upgrade(corral).returncode == 0
    assert_same_tasks(
        {name: state for name, state in before.items() if name != "g/every"},
        {name: state for name, state in snapshot(corral).items() if name != "g/every"})

    (tmp_path / "go").touch()
    wait_for(lambda: corral.task_status("g/notified")["ready"] is True,
             what="READY=1 on the socket the task was given")
    wait_for(lambda: corral.task_status("g/piped")["ready"] is True,
             what="the newline on the notify fd the task was given")
    wait_for(lambda: corral.task_status("g/logged")["ready"] is True,
             what="the readiness.log line")
    runs = len((tmp_path / "runs").read_text().split())
    checks = len((tmp_path / "checks").read_text().split())
    wait_for(lambda: len((tmp_path / "runs").read_text().split()) >= runs + 2,
             what="the schedule to go on")
    wait_for(lambda: len((tmp_path / "checks").read_text().split()) >= checks + 3,
             what="the health probe to go on")
    # Three watchdog periods fed on the handed-over socket: no restart.
    time.sleep(3)
    notified = corral.task_status("g/notified")
    assert notified["restarts"] == 0 and notified["pid"] == before["g/notified"][0], notified
    assert corral.task_status("g/every")["restarts"] == 0
    running.send(signal.SIGTERM)
    running.wait()
    for name in ("t0", "t1"):
        log_text = "\n".join(path.read_text(errors="replace")
                             for path in sorted(logs.rglob(f"*{name}*")))
        assert_every_line_once(numbered_lines(log_text), {name})


def test_isolated_tasks_go_over(corral, tmp_path):
    """Tasks with pid, mount, uts and ipc namespaces (corral's reaper as
    their PID 1, its status socket handed over), capabilities, seccomp and
    the default device policy: the same command pids after the upgrade, an
    exec enters them, and a command killed afterwards is reported as the
    reaper says (SIGKILL) and restarted."""
    isolation = {"namespaces": ["pid", "mount", "uts", "ipc"],
                 "capabilities": {"drop": ["all"]}}
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "boxed": {"command": sh(f"echo $$ >> {tmp_path}/boxed; exec sleep 1000"),
                              "isolation": isolation},
                    "none": {"command": "sleep 1000",
                             "isolation": {"namespaces": ["pid"], "network": {"mode": "none"}}},
                }
            }
        }
    }
    running = corral.start(config)
    corral.wait_control(running)
    # "started" is said once the reaper told the command's pid.
    wait_for(lambda: len([event for event in running.events()
                          if event.get("event") == "started"]) == 2,
             what="the tasks to start")
    before = snapshot(corral)
    assert upgrade(corral).returncode == 0
    assert_same_tasks(before, snapshot(corral))
    assert len((tmp_path / "boxed").read_text().split()) == 1  # started once
    exec_result = corral.cli("exec", "g/boxed", "--", "/bin/sh", "-c", "echo $$; hostname")
    assert exec_result.returncode == 0, exec_result.stderr
    os.kill(before["g/boxed"][0], signal.SIGKILL)
    wait_for(lambda: corral.task_status("g/boxed").get("restarts") == 1
             and corral.task_status("g/boxed")["state"] == "running",
             what="boxed to restart under the new corral")
    assert corral.task_status("g/boxed")["last_exit"]["signal"] == "SIGKILL"
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def hook_script(tmp_path, name, body):
    path = tmp_path / f"{name}.hook"
    path.write_text("#!/usr/bin/python3\nimport json, sys\nrequest = json.load(sys.stdin)\n"
                    "response = {}\n" + body + "\njson.dump(response, sys.stdout)\n")
    path.chmod(0o755)
    return str(path)


def test_hook_states_and_the_hooks_env_go_over(corral, tmp_path):
    """A prestart hook's state comes back to it at the next start, and the
    env it added reaches `corral exec`, after an upgrade; a hook that said
    done (whose result is not asked for again) refuses the upgrade."""
    states = tmp_path / "states"
    counting = hook_script(tmp_path, "counting", (
        f"open({str(states)!r}, 'a').write(json.dumps(request['state']) + '\\n')\n"
        "count = (request['state'] or {'count': 0})['count']\n"
        "response['state'] = {'count': count + 1}\n"
        "response['env'] = {'COUNT': str(count)}\n"))
    hooks = [{"name": "counting", "stage": "prestart", "exec": [counting]}]
    config = {"groups": {"g": {"tasks": {"app": {"command": "sleep 1000", "hooks": hooks}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/app")["state"] == "running", what="app to run")
    assert upgrade(corral).returncode == 0
    seen = corral.cli("exec", "g/app", "--", "/bin/sh", "-c", "echo $COUNT")
    assert seen.stdout.split() == ["0"], seen
    corral.cli("restart", "g/app")
    wait_for(lambda: len(states.read_text().split("\n")) >= 3, what="the hook's second run")
    assert [json.loads(line) for line in states.read_text().splitlines()] == [
        None, {"count": 1}]
    running.send(signal.SIGTERM)
    running.wait()


def test_a_prestart_hook_that_said_done_refuses_the_upgrade(corral, tmp_path):
    once = hook_script(tmp_path, "once", "response['done'] = True\n")
    hooks = [{"name": "once", "stage": "prestart", "exec": [once]}]
    config = {"groups": {"g": {"tasks": {"app": {"command": "sleep 1000", "hooks": hooks}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/app")["state"] == "running", what="app to run")
    result = upgrade(corral)
    assert result.returncode == 1
    assert "g/app: its prestart hooks added devices, or said done" in result.stderr
    running.send(signal.SIGTERM)
    running.wait()


def socket_inodes(pid):
    """The sockets corral holds; an fd closed while they are listed (a
    probe's, a client's) is not one of the listening sockets."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:
            continue
        if target.startswith("socket:"):
            found.add(target)
    return found


def test_the_http_endpoint_listens_on_through_the_upgrade(corral, tmp_path):
    """The HTTP endpoint's listening socket goes over: the same socket
    (a connection made while corral execs waits in its backlog), and
    /readyz answers after it."""
    from helpers_http import request
    from helpers_net import free_port
    port = free_port()
    config = {"http": {"listen": f"127.0.0.1:{port}"},
              "groups": {"g": {"tasks": {"app": {"command": "sleep 1000"}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: request(("127.0.0.1", port), "/readyz").status == 200,
             what="/readyz to answer 200")
    listening = socket_inodes(running.pid)
    assert upgrade(corral).returncode == 0
    assert request(("127.0.0.1", port), "/readyz").status == 200
    assert request(("127.0.0.1", port), "/livez").status == 200
    # The control and HTTP listening sockets are the ones from before.
    assert len(listening & socket_inodes(running.pid)) == 2, (listening,
                                                               socket_inodes(running.pid))
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_corral_own_parent_is_still_told_after_the_upgrade(corral, tmp_path):
    """Under systemd's Type=notify with a watchdog: the new corral goes on
    with WATCHDOG=1 to the parent's socket (whose variables the start took
    out of the environment), and tells it STOPPING=1 at the end."""
    from helpers_parent import Parent
    parent = Parent(str(tmp_path / "notify.sock"))
    try:
        config = {"groups": {"g": {"tasks": {"app": {"command": "sleep 1000"}}}}}
        running = corral.start(config, env=parent.env(WATCHDOG_USEC="400000"))
        corral.wait_control(running)
        parent.wait_for("READY", "1")
        assert upgrade(corral).returncode == 0
        pings = len(parent.with_field("WATCHDOG", "1"))
        parent.wait_for("WATCHDOG", "1", count=pings + 3, what="pings after the upgrade")
        running.send(signal.SIGTERM)
        assert running.wait().returncode == 0
        parent.wait_for("STOPPING", "1")
    finally:
        parent.close()


def test_a_scaled_count_goes_over_and_a_reload_still_goes_back(corral, tmp_path):
    """corral scale runs a config its files do not give: the upgrade hands
    the scaled counts over with the files' bytes, so the new corral runs
    the same instances on (same pids), scales on from there, and a reload
    still goes back to the files' counts, as without an upgrade."""
    config = {"groups": {"g": {"tasks": {
        "web": {"command": "sleep 1000", "instances": 2},
        "api": {"command": "sleep 1000", "instances": 3}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    assert corral.cli("scale", "g/web=4", "g/api=1").returncode == 0
    wait_for(lambda: len(snapshot(corral)) == 5, what="web@2, web@3 started, api@1, api@2 gone")
    before = snapshot(corral)
    assert upgrade(corral).returncode == 0
    assert_same_tasks(before, snapshot(corral))
    assert sorted(snapshot(corral)) == ["g/api@0", "g/web@0", "g/web@1", "g/web@2", "g/web@3"]
    # Scaled on from the running counts, not the files'.
    assert corral.cli("scale", "g/web=5").returncode == 0
    wait_for(lambda: len(snapshot(corral)) == 6, what="web@4")
    assert snapshot(corral)["g/web@3"][0] == before["g/web@3"][0]
    # A second upgrade carries the counts of both scales.
    before = snapshot(corral)
    assert upgrade(corral).returncode == 0
    assert_same_tasks(before, snapshot(corral))
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: sorted(snapshot(corral)) == ["g/api@0", "g/api@1", "g/api@2", "g/web@0",
                                                  "g/web@1"], what="the files' counts again")
    assert snapshot(corral)["g/web@0"][0] == before["g/web@0"][0]
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_set_scaled_to_zero_goes_over_and_scales_up_again(corral, tmp_path):
    """A set at 0 has no task in the config corral runs: the new corral
    keeps it from the files' definition, so that it still shows, scales up
    again, and the task beside it is taken over rather than the whole
    hand-over refused (it once failed the match of tasks, and the fall-back
    with it, leaving the other task orphaned)."""
    config = {"groups": {"g": {"tasks": {
        "web": {"command": "sleep 1000", "instances": 2},
        "keep": {"command": "sleep 1000"}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    assert corral.cli("scale", "g/web=0").returncode == 0
    wait_for(lambda: sorted(snapshot(corral)) == ["g/keep"], what="web@0 and web@1 gone")
    before = snapshot(corral)
    assert upgrade(corral).returncode == 0
    assert_same_tasks(before, snapshot(corral))
    shown = corral.cli("status")
    assert "web: 0 instances (corral scale); the config says 2" in shown.stdout, shown.stdout
    assert corral.cli("scale", "g/web=1").returncode == 0
    wait_for(lambda: sorted(snapshot(corral)) == ["g/keep", "g/web@0"], what="web@0 again")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def counters(address):
    """Every counter of GET /metrics but CPU time, which moves on its own."""
    from helpers_http import samples, scrape
    return {key: value for key, value in samples(scrape(address)[0]).items()
            if key[0].endswith("_total") and key[0] != "corral_task_cpu_seconds_total"}


def test_every_metrics_counter_goes_over(corral, tmp_path):
    """GET /metrics' counters go on from where they were (issue 35's alert
    on corral_task_exits_total and the probe failures broke when they
    went back to 0): exits by code and by signal, probe failures, OOM
    kills, restarts, reloads and control requests, each the same number
    after the upgrade, but the upgrade request itself."""
    from helpers_http import HOG, start, value
    runs, probes = tmp_path / "runs", tmp_path / "probes"
    config = {"groups": {"web": {"tasks": {
        # Killed by SIGKILL in its second run, exits 3 in its others up to
        # the fifth, then runs on.
        "crash": {"command": sh(f"n=$(cat {runs} 2>/dev/null || echo 0); n=$((n+1)); "
                                f"echo $n > {runs}; [ $n -eq 2 ] && kill -9 $$; "
                                f"[ $n -le 5 ] && exit 3; exec sleep 1000"),
                  "restart": {"policy": "always", "delay": "50ms", "max_delay": "50ms",
                              "attempts": "unlimited"}},
        # Its readiness probe fails 4 times, then passes (and, not
        # continuous, is not run again).
        "probed": {"command": ["/bin/sleep", "1000"],
                   "readiness": {"exec": ["/bin/sh", "-c",
                                          f"n=$(cat {probes} 2>/dev/null || echo 0); "
                                          f"echo $((n+1)) > {probes}; [ $n -ge 4 ]"],
                                 "interval": "50ms"}},
        "hog": {"command": HOG, "resources": {"memory": "32M"},
                "restart": {"policy": "on-failure", "delay": "1h"}},
    }}}}
    running, address = start(corral, config)
    wait_for(lambda: corral.task_status("web/crash")["restarts"] == 5
             and corral.task_status("web/crash")["state"] == "running", what="5 restarts")
    wait_for(lambda: corral.task_status("web/probed")["ready"], what="the probe passing")
    wait_for(lambda: (corral.task_status("web/hog")["last_exit"] or {}).get("oom_killed"),
             what="the hog's OOM kill")
    # A reload that rebuilds the crash task for a new definition: its
    # record goes to the task made anew, and over the upgrade from there.
    from helpers_http import started_again_after_replaced
    rebuilt = json.loads(running.config_path.read_text())  # with its http key
    rebuilt["groups"]["web"]["tasks"]["crash"]["env"] = {"ROUND": "2"}
    corral.config(rebuilt, name=running.config_path.name)
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: started_again_after_replaced(running.events(), "crash")
             and corral.task_status("web/crash")["state"] == "running", what="crash made anew")
    before = counters(address)
    assert value(before, "corral_reloads_total", result="succeeded") == 1
    # Series of each kind, not exact counts (a busy machine can make a
    # run or a probe run fail once more); the test is that each is the
    # same after the upgrade.
    assert value(before, "corral_task_exits_total", group="web", task="crash", code="3") >= 3
    assert value(before, "corral_task_exits_total", group="web", task="crash",
                 signal="SIGKILL") >= 1
    assert value(before, "corral_task_exits_total", group="web", task="crash",
                 signal="SIGTERM") >= 1  # the run the reload replaced
    assert value(before, "corral_task_probe_failures_total", group="web", task="probed",
                 probe="readiness") >= 4
    assert value(before, "corral_task_oom_kills_total", group="web", task="hog") >= 1

    assert upgrade(corral).returncode == 0
    after = counters(address)
    upgrade_requests = ("corral_control_requests_total", frozenset({("command", "upgrade")}))
    assert after.pop(upgrade_requests) == before.pop(upgrade_requests) + 1
    assert after == before, {key: (before.get(key), after.get(key))
                             for key in set(before) | set(after)
                             if before.get(key) != after.get(key)}
    running.send(signal.SIGTERM)
    running.wait()


def test_corral_answers_while_the_new_binary_is_checked(corral, corral_bin, tmp_path):
    """The check (BINARY --handover-format) runs in the loop, not in a
    blocking wait: while the new binary holds its answer back, status is
    served and a second upgrade is refused; once it answers, the upgrade
    that waited completes. A binary that never answers is refused after
    the check's 5 s, and corral served requests the whole time."""
    marks = tmp_path / "marks"
    marks.mkdir()
    running = corral.start(counting_config(marks, 2))
    corral.wait_control(running)
    wait_for(lambda: len(list(marks.iterdir())) == 2, what="every task to start")
    before = snapshot(corral)
    held = tmp_path / "held"
    release = tmp_path / "release"
    slow = write_script(
        tmp_path / "slow-check",
        "#!/bin/sh\nif [ \"$1\" = --handover-format ]; then\n"
        f"  touch {held}; i=0\n"
        f"  while [ ! -e {release} ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done\n"
        "fi\n"
        f"exec {corral_bin} \"$@\"\n")
    waiting = corral.cli_popen("upgrade", slow)
    wait_for(lambda: held.exists(), timeout=30, what="the check to start")
    # The check is held: corral answers anyway.
    status = corral.cli("status", "--json")
    assert status.returncode == 0, status.stderr
    assert waiting.poll() is None and not release.exists()
    second = upgrade(corral, corral_bin)
    assert second.returncode == 1
    assert f"an upgrade to {slow} is being checked already" in second.stderr, second.stderr
    release.touch()
    output, errors = waiting.communicate(timeout=60)
    assert waiting.returncode == 0, errors
    assert b"took over 2 tasks" in output, output
    assert_same_tasks(before, snapshot(corral))

    silent = write_script(
        tmp_path / "silent",
        "#!/bin/sh\nif [ \"$1\" = --handover-format ]; then\n"
        f"  touch {tmp_path / 'silent-held'}; exec sleep 600\nfi\nexit 1\n")
    waiting = corral.cli_popen("upgrade", silent)
    wait_for(lambda: (tmp_path / "silent-held").exists(), timeout=30, what="the check")
    assert corral.cli("status", "g/t0").returncode == 0
    output, errors = waiting.communicate(timeout=60)
    assert waiting.returncode == 1
    assert b"--handover-format did not answer within 5 s" in errors, errors
    assert running.alive()
    assert_same_tasks(before, snapshot(corral))
    running.send(signal.SIGTERM)
    running.wait()


def test_the_file_checked_is_the_file_executed(corral, corral_bin, tmp_path):
    """A binary replaced at its path after the check (a rename over it)
    is not what runs: corral execs the file it opened and checked."""
    marks = tmp_path / "marks"
    marks.mkdir()
    running = corral.start(counting_config(marks, 1))
    corral.wait_control(running)
    wait_for(lambda: len(list(marks.iterdir())) == 1, what="the task to start")
    path = tmp_path / "corral-new"
    impostor = write_script(
        tmp_path / "impostor",
        f"#!/bin/sh\ntouch {tmp_path / 'impostor-ran'}\nexec {corral_bin} \"$@\"\n")
    write_script(
        path,
        "#!/bin/sh\nif [ \"$1\" = --handover-format ]; then\n"
        f"  mv -f {impostor} {path}\nelse\n  touch {tmp_path / 'checked-ran'}\nfi\n"
        f"exec {corral_bin} \"$@\"\n")
    result = upgrade(corral, path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "checked-ran").exists()
    assert not (tmp_path / "impostor-ran").exists()
    # The swap did happen: the path now holds the impostor.
    assert "impostor-ran" in path.read_text()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_binary_others_could_replace_is_refused(corral, corral_bin, tmp_path):
    """A binary, or a directory on its way, that someone other than root
    or corral's user may write, is never run: refused before any check,
    with what is wrong, and corral runs on."""
    marks = tmp_path / "marks"
    marks.mkdir()
    running = corral.start(counting_config(marks, 1))
    corral.wait_control(running)
    wait_for(lambda: len(list(marks.iterdir())) == 1, what="the task to start")
    before = snapshot(corral)
    ran = tmp_path / "ran"
    script = f"#!/bin/sh\ntouch {ran}\nexec {corral_bin} \"$@\"\n"

    writable = write_script(tmp_path / "writable", script)
    writable.chmod(0o777)
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    in_open_dir = write_script(open_dir / "corral", script)
    sticky_dir = tmp_path / "sticky"
    sticky_dir.mkdir()
    sticky_dir.chmod(0o1777)
    foreign = write_script(tmp_path / "foreign", script)
    os.chown(foreign, 65534, 65534)
    linked_dir = tmp_path / "linked"
    os.symlink(open_dir, linked_dir)

    cases = [
        (writable, f"{writable} may be written by others (owner uid 0, mode 0777)"),
        (in_open_dir, f"its directory {open_dir} may be written by others"),
        (linked_dir / "corral", f"its directory {open_dir} may be written by others"),
        (foreign, f"{foreign} belongs to uid 65534"),
    ]
    for binary, reason in cases:
        result = upgrade(corral, binary)
        assert result.returncode == 1, (binary, result.stdout)
        assert reason in result.stderr, (binary, result.stderr)
        assert not ran.exists(), binary
        assert running.alive()
        assert_same_tasks(before, snapshot(corral))
    # A sticky directory is enough: nobody else may replace root's file there.
    in_sticky = write_script(sticky_dir / "corral", script)
    assert upgrade(corral, in_sticky).returncode == 0
    assert ran.exists()
    running.send(signal.SIGTERM)
    outcome = running.wait()
    assert "upgrade_failed" in [event.get("event") for event in outcome.events]


def test_a_client_that_goes_away_during_the_check_stops_the_upgrade(corral, corral_bin,
                                                                     tmp_path):
    """Ctrl-C on `corral upgrade` while the new binary is checked: the check
    is killed and nothing is executed; corral says so and runs on."""
    marks = tmp_path / "marks"
    marks.mkdir()
    running = corral.start(counting_config(marks, 1))
    corral.wait_control(running)
    wait_for(lambda: len(list(marks.iterdir())) == 1, what="the task to start")
    before = snapshot(corral)
    held = tmp_path / "held"
    held_script = write_script(
        tmp_path / "held-check",
        "#!/bin/sh\nif [ \"$1\" = --handover-format ]; then\n"
        f"  echo $$ > {held}.tmp; mv {held}.tmp {held}; exec sleep 600\nfi\n"
        f"touch {tmp_path / 'executed'}\nexec {corral_bin} \"$@\"\n")
    waiting = corral.cli_popen("upgrade", held_script)
    wait_for(lambda: held.exists(), timeout=30, what="the check to start")
    waiting.kill()
    waiting.wait()
    wait_for(lambda: any("went away" in (event.get("message") or "")
                         for event in running.events() if event.get("event") == "upgrade_failed"),
             timeout=30, what="the upgrade to be given up")
    assert not (tmp_path / "executed").exists()
    # The check's process is gone too.
    wait_for(lambda: not pid_exists(int(held.read_text())), timeout=30,
             what="the check's process to end")
    # And a new upgrade may start.
    assert upgrade(corral, corral_bin).returncode == 0
    assert_same_tasks(before, snapshot(corral))
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
