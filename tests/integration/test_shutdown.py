"""Graceful shutdown on SIGTERM / SIGINT: reverse lifecycle order, kill
signals and timeouts, shutdown_timeout, and a second signal."""

import os
import signal
import time

import pytest

from conftest import mark, marks_by_name, pid_alive, sh, wait_for


def stoppable(order, name, linger=0.1):
    """A task that records when it is up, when it gets SIGTERM and when it
    exits (`linger` seconds after the signal)."""
    return sh(
        f"trap '{mark(order, name + '-term')}; sleep {linger}; {mark(order, name + '-exit')}; "
        "exit 0' TERM\n"
        f"{mark(order, name + '-up')}; while :; do sleep 0.02; done"
    )


def ignores_term(order, name):
    """A task (and its children) that ignores SIGTERM."""
    return sh(f"trap '' TERM; echo $$ > {order.parent / (name + '.pid')}; "
              f"{mark(order, name + '-up')}; while :; do sleep 0.02; done")


def wait_up(order, *names):
    wait_for(lambda: set(names) <= set(marks_by_name(order)),
             what=f"tasks up: {', '.join(names)}")


def full_group(order, **extra):
    return {
        **extra,
        "groups": {
            "g": {
                "tasks": {
                    "setup": {"command": sh(mark(order, "setup")),
                              "lifecycle": {"hook": "prestart"}},
                    "pre": {"command": stoppable(order, "pre"),
                            "lifecycle": {"hook": "prestart", "sidecar": True}},
                    "app": {"command": stoppable(order, "app", linger=0.3)},
                    "app2": {"command": stoppable(order, "app2", linger=0.3)},
                    "post": {"command": stoppable(order, "post"),
                             "lifecycle": {"hook": "poststart", "sidecar": True}},
                    "cleanup": {"command": sh(mark(order, "cleanup")),
                                "lifecycle": {"hook": "poststop"}},
                }
            }
        },
    }


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGINT],
                         ids=["SIGTERM", "SIGINT"])
def test_shutdown_in_reverse_lifecycle_order(corral, tmp_path, signal_number):
    order = tmp_path / "order"
    running = corral.start(full_group(order))
    wait_up(order, "pre-up", "app-up", "app2-up", "post-up")
    running.send(signal_number)
    result = running.wait()
    assert result.returncode == 0, result
    m = marks_by_name(order)
    for name in ["app-term", "app2-term", "post-term", "pre-term", "cleanup"]:
        assert name in m, (name, m, result)
    # Main tasks first (together), then the poststart sidecar once they are
    # dead, then the prestart sidecar; poststop last.
    assert max(m["app-exit"], m["app2-exit"]) <= m["post-term"], m
    assert m["post-exit"] <= m["pre-term"], m
    assert m["pre-exit"] <= m["cleanup"], m
    # Both main tasks got the signal before either had exited.
    assert m["app-term"] < m["app2-exit"] and m["app2-term"] < m["app-exit"], m
    # Each was sent its kill signal, SIGTERM; nothing was restarted.
    for task in ["app", "app2", "pre", "post"]:
        killing = result.events.of_task(task, "killing")
        assert killing and "SIGTERM" in killing[0]["message"], result.events
        assert not result.events.of_task(task, "restarting"), result.events
    assert result.events.of_group("g", "stopping"), result.events


def test_kill_timeout_escalates_to_sigkill(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "stubborn": {"command": ignores_term(order, "stubborn"),
                                 "kill": {"timeout": "300ms"}},
                    "cleanup": {"command": sh(mark(order, "cleanup")),
                                "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    running = corral.start(config)
    wait_up(order, "stubborn-up")
    pid = int((tmp_path / "stubborn.pid").read_text())
    sent = time.time()
    running.send(signal.SIGTERM)
    result = running.wait()
    assert not pid_alive(pid)
    timeouts = result.events.of_task("stubborn", "kill_timeout")
    assert len(timeouts) == 1, result.events
    assert "SIGKILL" in timeouts[0]["message"], timeouts
    # Not before its kill timeout (lower bound only).
    killing = result.events.of_task("stubborn", "killing")[0]
    assert timeouts[0]["time"] - killing["time"] >= 0.29, (killing, timeouts)
    assert timeouts[0]["time"] - sent >= 0.29
    # Then poststop runs, and the stop counts as an ending corral asked for.
    assert "cleanup" in marks_by_name(order), result
    assert result.returncode == 0, result
    assert corral.leftovers() == []


def test_custom_kill_signal(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "app": {
                        "command": sh(f"trap '{mark(order, 'usr1')}; exit 0' USR1; "
                                      f"trap '{mark(order, 'term')}; exit 0' TERM; "
                                      f"{mark(order, 'up')}; while :; do sleep 0.02; done"),
                        "kill": {"signal": "SIGUSR1", "timeout": "5s"},
                    }
                }
            }
        }
    }
    running = corral.start(config)
    wait_up(order, "up")
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    m = marks_by_name(order)
    assert "usr1" in m and "term" not in m, m


def test_shutdown_timeout_bounds_the_whole_shutdown(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "shutdown_timeout": "500ms",
        "groups": {
            "g": {
                "tasks": {
                    "stubborn": {"command": ignores_term(order, "stubborn"),
                                 "kill": {"timeout": "30s"}},
                }
            }
        },
    }
    running = corral.start(config)
    wait_up(order, "stubborn-up")
    pid = int((tmp_path / "stubborn.pid").read_text())
    running.send(signal.SIGTERM)
    # Far sooner than the 30s kill timeout.
    result = running.wait(timeout=15)
    assert not pid_alive(pid)
    assert not result.events.of_task("stubborn", "kill_timeout"), result.events
    assert "shutdown_timeout" in result.stderr, result
    assert corral.leftovers() == []


def test_second_sigterm_kills_at_once(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "shutdown_timeout": "60s",
        "groups": {
            "g": {
                "tasks": {
                    "stubborn": {"command": ignores_term(order, "stubborn"),
                                 "kill": {"timeout": "30s"}},
                    "calm": {"command": stoppable(order, "calm")},
                }
            }
        },
    }
    running = corral.start(config)
    wait_up(order, "stubborn-up", "calm-up")
    pid = int((tmp_path / "stubborn.pid").read_text())
    running.send(signal.SIGTERM)
    wait_for(lambda: running.events().of_task("stubborn", "killing"),
             what="the first SIGTERM to be handled")
    running.send(signal.SIGTERM)
    result = running.wait(timeout=15)
    assert not pid_alive(pid)
    killing = result.events.of_task("stubborn", "killing")
    assert any("SIGKILL" in e["message"] for e in killing), result.events
    assert corral.leftovers() == []


def test_shutdown_while_waiting_out_a_restart_delay(corral, tmp_path):
    runs = tmp_path / "runs"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "app": {"command": sh(f"echo run >> {runs}; exit 1"),
                            "restart": {"policy": "on-failure", "delay": "20s"}},
                }
            }
        }
    }
    running = corral.start(config)
    wait_for(lambda: running.events().of_task("app", "restarting"), what="a restart delay")
    running.send(signal.SIGTERM)
    result = running.wait(timeout=15)  # far less than the 20s delay
    assert result.returncode == 0, result
    assert runs.read_text().count("run") == 1


def test_shutdown_during_prestart_never_starts_main(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "setup": {"command": stoppable(order, "setup"),
                              "lifecycle": {"hook": "prestart"}},
                    "app": {"command": sh(mark(order, "app"))},
                    "cleanup": {"command": sh(mark(order, "cleanup")),
                                "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    running = corral.start(config)
    wait_up(order, "setup-up")
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    m = marks_by_name(order)
    assert "setup-term" in m and "cleanup" in m, m
    assert "app" not in m, m


@pytest.mark.parametrize("signal_number", [signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2],
                         ids=["SIGHUP", "SIGUSR1", "SIGUSR2"])
def test_other_signals_do_not_stop_corral(corral, tmp_path, signal_number):
    order = tmp_path / "order"
    config = {"groups": {"g": {"tasks": {"app": {"command": stoppable(order, "app")}}}}}
    running = corral.start(config)
    wait_up(order, "app-up")
    running.send(signal_number)
    # SIGHUP reloads the config, which has not changed; SIGUSR2 is an
    # upgrade (test_upgrade.py): nothing stops.
    logged = {signal.SIGHUP: "reload of", signal.SIGUSR2: "took over 1 task "}.get(
        signal_number, signal_number.name)
    wait_for(lambda: logged in running.stderr_text(), what="the signal logged")
    assert running.alive()
    assert "app-term" not in marks_by_name(order)
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    assert "app-term" in marks_by_name(order)


def test_shutdown_timeout_also_bounds_poststop_tasks(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "shutdown_timeout": "500ms",
        "groups": {
            "g": {
                "tasks": {
                    "app": {"command": stoppable(order, "app", linger=0)},
                    "cleanup": {"command": ignores_term(order, "cleanup"),
                                "lifecycle": {"hook": "poststop"},
                                "kill": {"timeout": "30s"}},
                }
            }
        },
    }
    running = corral.start(config)
    wait_up(order, "app-up")
    running.send(signal.SIGTERM)
    result = running.wait(timeout=15)
    assert "cleanup-up" in marks_by_name(order), result
    assert not pid_alive(int((tmp_path / "cleanup.pid").read_text()))
    assert corral.leftovers() == []


def test_tasks_dying_of_their_kill_signal_end_well(corral, tmp_path):
    # No trap: the shells die of SIGTERM (143 if it were a failure).
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "side": {"command": sh(f"{mark(order, 'side-up')}; while :; do sleep 0.02; done"),
                             "lifecycle": {"hook": "prestart", "sidecar": True}},
                    "app": {"command": sh(f"{mark(order, 'app-up')}; while :; do sleep 0.02; done")},
                }
            }
        }
    }
    running = corral.start(config)
    wait_up(order, "side-up", "app-up")
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    exited = result.events.of_task("app", "exited")
    assert exited and "SIGTERM" in exited[0]["message"], result.events


def test_exit_137_is_a_task_killed_by_sigkill_and_says_which(corral, tmp_path):
    """docs/orchestrators.md, "Exit code 137": a task that failed for good
    by SIGKILL gives 137, as under tini, and the termination message names
    it, where corral killed by the engine writes none; a task corral
    SIGKILLs itself while stopping on request is a stop and gives 0."""
    order = tmp_path / "order"
    config = {
        "termination_log": str(tmp_path / "termination"),
        "groups": {
            "victim": {"tasks": {"app": {
                "command": sh(f"echo $$ > {tmp_path / 'app.pid'}; exec sleep 1000"),
                "restart": {"policy": "never"}}}},
            "other": {"tasks": {"stubborn": {"command": ignores_term(order, "stubborn"),
                                             "kill": {"timeout": "200ms"}}}},
        },
    }
    running = corral.start(config)
    wait_up(order, "stubborn-up")
    wait_for(lambda: (tmp_path / "app.pid").exists(), what="app to start")
    os.kill(int((tmp_path / "app.pid").read_text()), signal.SIGKILL)
    wait_for(lambda: corral.task_status("victim/app")["failed"], what="app to fail for good")
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 137, result
    # The stubborn task was SIGKILLed by corral past its kill timeout: a
    # stop, not a second failure.
    assert result.events.of_task("stubborn", "kill_timeout"), result.events
    message = (tmp_path / "termination").read_text()
    assert message.startswith("victim/app failed for good: killed by SIGKILL; corral exited "
                              "with code 137\n"), message
    assert "then stopped by SIGTERM" in message, message


def test_a_task_sigkilled_by_its_stop_gives_no_failure(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "termination_log": str(tmp_path / "termination"),
        "groups": {"g": {"tasks": {"stubborn": {"command": ignores_term(order, "stubborn"),
                                                "kill": {"timeout": "200ms"}}}}},
    }
    running = corral.start(config)
    wait_up(order, "stubborn-up")
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    assert [e["message"] for e in result.events.of_task("stubborn", "exited")] == \
        ["killed by SIGKILL"], result.events
    assert (tmp_path / "termination").read_text().startswith("stopped by SIGTERM"), \
        (tmp_path / "termination").read_text()
