"""PID 1 duties: orphans reaped (as a child subreaper, and as a real PID 1
in a PID namespace), processes left behind by a task killed, nothing left
when corral exits."""

import os
import shutil
import signal

import pytest

from conftest import (children_of, count_lines, mark, marks_by_name, pid_alive, pid_exists,
                      proc_stat, read_pids, sh, wait_for)

NEVER = {"policy": "never"}
KEEPER = {"command": sh("while :; do sleep 0.05; done"), "kill": {"timeout": "2s"}}
UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"]


def spawn_orphans(pid_file, seconds, count=3):
    """Shell: starts `count` processes that are orphans at once (the
    subshell that forks each one exits), each recording its pid and living
    `seconds`. Then it writes its own pid to PID_FILE.spawner and lives a
    second longer than they do: every process of a task dies with its main
    process (its cgroup is killed), so orphans live only while it does."""
    return sh(
        f"for i in $(seq {count}); do "
        f"(setsid sh -c 'echo $$ >> {pid_file}; exec sleep {seconds}' &); done; "
        f"while [ \"$(cat {pid_file} 2>/dev/null | wc -l)\" -lt {count} ]; do sleep 0.01; done; "
        f"echo $$ > {pid_file}.spawner; sleep {seconds + 1}; exit 0"
    )


def test_orphans_are_reparented_to_corral_and_reaped(corral, tmp_path):
    orphans = tmp_path / "orphans"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "spawner": {"command": spawn_orphans(orphans, 1.5), "restart": NEVER},
                    "keeper": KEEPER,
                }
            }
        }
    }
    running = corral.start(config)
    spawned = orphans.with_name("orphans.spawner")
    wait_for(lambda: spawned.exists() and spawned.read_text(), what="the orphans")
    pids = read_pids(orphans)
    assert len(pids) == 3
    # While they live, corral (a child subreaper) is their parent.
    for pid in pids:
        stat = proc_stat(pid)
        assert stat is not None and stat[1] == running.pid, (pid, stat, running.pid)
    # Once they exit, corral reaps them: no zombie is left.
    wait_for(lambda: not any(pid_exists(pid) for pid in pids), timeout=10,
             what="the orphans to exit and be reaped")
    wait_for(lambda: not [c for c in children_of(running.pid) if c[1] == "Z"], timeout=5,
             what="no zombie child of corral")
    assert running.alive()
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result


def test_many_short_orphans_leave_no_zombie(corral, tmp_path):
    orphans = tmp_path / "orphans"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "spawner": {"command": spawn_orphans(orphans, 0.1, count=20),
                                "restart": NEVER},
                    "keeper": KEEPER,
                }
            }
        }
    }
    running = corral.start(config)
    wait_for(lambda: count_lines(orphans) == 20, what="the orphans")
    pids = read_pids(orphans)
    wait_for(lambda: not any(pid_exists(pid) for pid in pids), timeout=10,
             what="every orphan reaped")
    wait_for(lambda: not [c for c in children_of(running.pid) if c[1] == "Z"], timeout=5,
             what="no zombie child of corral")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_leftovers_of_a_task_are_killed_when_it_exits(corral, tmp_path):
    pid_file = tmp_path / "sleep.pid"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "leaver": {
                        "command": sh(f"sleep 1000 & echo $! > {pid_file}; exit 0"),
                        "restart": NEVER,
                    },
                    "keeper": KEEPER,
                }
            }
        }
    }
    running = corral.start(config)
    wait_for(lambda: running.events().of_task("leaver", "leftovers_killed"),
             what="a leftovers_killed event")
    sleeper = read_pids(pid_file)[0]
    # Killed (and reaped) while corral goes on running.
    wait_for(lambda: not pid_exists(sleeper), timeout=5, what="the sleep to be gone")
    assert running.alive()
    event = running.events().of_task("leaver", "leftovers_killed")[0]
    assert "leaver" == event["task"] and event["group"] == "g"
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_no_leftovers_event_when_nothing_is_left(corral, tmp_path):
    result = corral.run({"groups": {"g": {"tasks": {"app": {"command": ["true"],
                                                            "restart": NEVER}}}}})
    assert result.returncode == 0, result
    assert not result.events.of_task("app", "leftovers_killed"), result.events


def test_processes_reparented_to_corral_are_killed_at_exit(corral, tmp_path):
    pid_file = tmp_path / "escapee.pid"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "app": {
                        # setsid: out of the task's process group, so the
                        # leftovers kill does not reach it; only corral's
                        # exit does.
                        "command": sh(f"setsid sleep 1000 & echo $! > {pid_file}; "
                                      # and one that has a child of its own
                                      "setsid sh -c 'sleep 1000 & wait' & "
                                      "sleep 0.2; exit 0"),
                        "restart": NEVER,
                    }
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    escapee = read_pids(pid_file)[0]
    wait_for(lambda: not pid_alive(escapee), timeout=5, what="the escaped sleep to be killed")
    assert corral.leftovers() == []


@pytest.mark.parametrize("ending", ["natural", "sigterm"])
def test_no_process_left_after_corral_exits(corral, tmp_path, ending):
    started = tmp_path / "started"
    busy = "sleep 1000 & setsid sleep 1000 & (sleep 1000 &) ; "
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "side": {"command": sh(busy + f"{mark(started, 'side')}; "
                                           "while :; do sleep 0.05; done"),
                             "lifecycle": {"hook": "prestart", "sidecar": True},
                             "kill": {"timeout": "500ms"}},
                    "app": {"command": sh(busy + f"{mark(started, 'app')}; sleep "
                                          + ("0.3" if ending == "natural" else "1000")),
                            "restart": NEVER, "kill": {"timeout": "500ms"}},
                    "post": {"command": sh(busy + f"{mark(started, 'post')}; sleep 0.1"),
                             "lifecycle": {"hook": "poststart"}},
                    "bye": {"command": sh(busy + "exit 0"), "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    running = corral.start(config)
    if ending == "sigterm":
        wait_for(lambda: {"side", "app", "post"} <= set(marks_by_name(started)),
                 what="every task up")
        assert len(corral.leftovers()) > 6
        running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    assert corral.leftovers() == [], result


# ---- as a real PID 1 ------------------------------------------------------

needs_unshare = pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare")


@needs_unshare
def test_as_pid1_lifecycle_and_exit_code(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "setup": {"command": sh(mark(order, "setup")), "lifecycle": {"hook": "prestart"}},
                    "app": {
                        "command": sh(
                            f"{mark(order, 'app')}; "
                            f"grep -q corral /proc/1/cmdline && {mark(order, 'corral-is-pid1')}; "
                            "exit 3"
                        ),
                        "restart": NEVER,
                    },
                    "cleanup": {"command": sh(mark(order, "cleanup")),
                                "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    result = corral.run(config, wrapper=UNSHARE)
    assert result.returncode == 3, result
    m = marks_by_name(order)
    assert "corral-is-pid1" in m, (m, result)
    assert m["setup"] < m["app"] < m["cleanup"], m
    assert "as PID 1" in result.stderr


@needs_unshare
def test_as_pid1_orphans_are_reaped(corral, tmp_path):
    orphans = tmp_path / "orphans"
    report = tmp_path / "report"
    # The checker, inside the namespace, records the parent of each orphan
    # while it lives, then waits (up to ~10s) for all of them to vanish
    # from /proc, i.e. to be reaped, and reports any zombie.
    checker = (
        f"while [ \"$(cat {orphans} 2>/dev/null | wc -l)\" -lt 3 ]; do sleep 0.01; done\n"
        f"until [ -s {orphans}.spawner ]; do sleep 0.01; done\n"
        f"for p in $(cat {orphans}); do\n"
        f"  if read -r line < /proc/$p/stat; then set -- ${{line##*) }}; "
        f"echo \"ppid $2\" >> {report}; fi\n"
        "done\n"
        "i=0\n"
        "while [ $i -lt 500 ]; do\n"
        f"  left=0; for p in $(cat {orphans}); do [ -e /proc/$p ] && left=1; done\n"
        "  [ $left = 0 ] && break\n"
        "  i=$((i+1)); sleep 0.02\n"
        "done\n"
        f"for p in $(cat {orphans}); do [ -e /proc/$p ] && "
        f"echo \"left $p $(cut -d' ' -f3 /proc/$p/stat)\" >> {report}; done\n"
        f"echo done >> {report}\n"
    )
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "spawner": {"command": spawn_orphans(orphans, 1), "restart": NEVER},
                    "checker": {"command": sh(checker), "restart": NEVER},
                }
            }
        }
    }
    result = corral.run(config, wrapper=UNSHARE)
    assert result.returncode == 0, result
    lines = report.read_text().splitlines()
    assert lines[-1] == "done", lines
    ppids = [line for line in lines if line.startswith("ppid ")]
    assert ppids and all(line == "ppid 1" for line in ppids), lines
    assert not [line for line in lines if line.startswith("left ")], lines


@needs_unshare
def test_as_pid1_sigterm_shuts_down_gracefully(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "app": {"command": sh(f"trap '{mark(order, 'app-term')}; exit 0' TERM; "
                                          f"{mark(order, 'app-up')}; while :; do sleep 0.02; done")},
                    "cleanup": {"command": sh(mark(order, "cleanup")),
                                "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    running = corral.start(config, wrapper=UNSHARE)
    wait_for(lambda: "app-up" in marks_by_name(order), what="the task to start")
    children = children_of(running.pid)  # unshare's child: corral, PID 1 inside
    assert len(children) == 1, children
    os.kill(children[0][0], signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    m = marks_by_name(order)
    assert "app-term" in m and m["app-term"] < m["cleanup"], m


def test_leftovers_of_each_run_are_killed_before_the_next(corral, tmp_path):
    last = tmp_path / "last.pid"
    report = tmp_path / "report"
    runs = tmp_path / "runs"
    script = (f"echo run >> {runs}; "
              f"if [ -f {last} ] && kill -0 $(cat {last}) 2>/dev/null; then "
              f"echo alive >> {report}; fi; "
              f"sleep 1000 & echo $! > {last}; exit 1")
    restart = {"policy": "on-failure", "attempts": 3, "delay": "100ms"}
    result = corral.run({"groups": {"g": {"tasks": {"app": {"command": sh(script),
                                                            "restart": restart}}}}})
    assert result.returncode == 1, result
    assert count_lines(runs) == 4
    assert not report.exists(), report.read_text()
    assert len(result.events.of_task("app", "leftovers_killed")) == 4, result.events
