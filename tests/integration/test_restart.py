"""Restart policies: attempts, delays, on-failure / never / always, mode
delay, and what a task that fails for good does to its group and to
corral's exit code."""

import signal

from conftest import count_lines, mark, marks_by_name, read_marks, sh, wait_for


def one_task(command, restart, **task):
    return {"groups": {"g": {"tasks": {"app": {"command": command, "restart": restart, **task}}}}}


def test_attempts_then_exit_with_the_task_code(corral, tmp_path):
    runs = tmp_path / "runs"
    restart = {"policy": "on-failure", "attempts": 2, "delay": "100ms", "interval": "1m"}
    result = corral.run(one_task(sh(f"echo run >> {runs}; exit 7"), restart))
    assert count_lines(runs) == 3, result
    assert result.returncode == 7, result
    ev = result.events
    assert len(ev.of_task("app", "restarting")) == 2, ev
    assert len(ev.of_task("app", "exited")) == 3, ev
    last = ev.of_task("app", "not_restarting")
    assert len(last) == 1 and "failed for good" in last[0]["message"], ev


def test_restart_delay_is_respected_and_doubles(corral, tmp_path):
    runs = tmp_path / "runs"
    restart = {"policy": "on-failure", "attempts": 2, "delay": "200ms", "interval": "1m",
               "max_delay": "10s"}
    result = corral.run(one_task(sh(f"{mark(runs, 'run')}; exit 1"), restart))
    times = [when for _, when in read_marks(runs)]
    assert len(times) == 3, result
    # Lower bounds only: the delay, then twice the delay.
    assert times[1] - times[0] >= 0.19, times
    assert times[2] - times[1] >= 0.38, times


def test_max_delay_caps_the_backoff_from_below(corral, tmp_path):
    # delay 100ms doubling but capped at 150ms: gaps of at least .1, .15, .15.
    runs = tmp_path / "runs"
    restart = {"policy": "on-failure", "attempts": 3, "delay": "100ms", "max_delay": "150ms",
               "interval": "1m"}
    result = corral.run(one_task(sh(f"{mark(runs, 'run')}; exit 1"), restart))
    times = [when for _, when in read_marks(runs)]
    assert len(times) == 4, result
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert gaps[0] >= 0.095 and gaps[1] >= 0.14 and gaps[2] >= 0.14, gaps
    assert "150ms" in result.events.of_task("app", "restarting")[2]["message"], result.events


def test_on_failure_does_not_restart_a_success(corral, tmp_path):
    runs = tmp_path / "runs"
    restart = {"policy": "on-failure", "attempts": 3, "delay": "100ms"}
    result = corral.run(one_task(sh(f"echo run >> {runs}; exit 0"), restart))
    assert result.returncode == 0, result
    assert count_lines(runs) == 1
    assert not result.events.of_task("app", "restarting")


def test_on_failure_restarts_a_failure_until_it_succeeds(corral, tmp_path):
    runs = tmp_path / "runs"
    restart = {"policy": "on-failure", "attempts": 3, "delay": "100ms"}
    # Fails the first time, succeeds the second.
    script = f"echo run >> {runs}; [ $(wc -l < {runs}) -ge 2 ]"
    result = corral.run(one_task(sh(script), restart))
    assert result.returncode == 0, result
    assert count_lines(runs) == 2


def test_never_does_not_restart_a_success(corral, tmp_path):
    runs = tmp_path / "runs"
    result = corral.run(one_task(sh(f"echo run >> {runs}"), {"policy": "never"}))
    assert result.returncode == 0, result
    assert count_lines(runs) == 1


def test_never_does_not_restart_a_failure(corral, tmp_path):
    runs = tmp_path / "runs"
    result = corral.run(one_task(sh(f"echo run >> {runs}; exit 5"), {"policy": "never"}))
    assert result.returncode == 5, result
    assert count_lines(runs) == 1
    assert not result.events.of_task("app", "restarting")


def test_always_restarts_a_success(corral, tmp_path):
    runs = tmp_path / "runs"
    restart = {"policy": "always", "attempts": 2, "delay": "100ms", "interval": "1m"}
    result = corral.run(one_task(sh(f"echo run >> {runs}; exit 0"), restart))
    assert count_lines(runs) == 3, result
    assert len(result.events.of_task("app", "restarting")) == 2
    # Exiting more often than the policy allows is a failure, even with
    # code 0 (documented: corral then exits 1).
    assert result.returncode == 1, result


def test_main_task_default_policy_is_always(corral, tmp_path):
    # No restart section: main tasks restart (always, delay 1s). Stop it
    # once it has run twice.
    runs = tmp_path / "runs"
    config = {"groups": {"g": {"tasks": {"app": {"command": sh(f"echo run >> {runs}")}}}}}
    running = corral.start(config)
    wait_for(lambda: count_lines(runs) >= 2, what="a second run")
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    assert result.events.of_task("app", "restarting"), result.events


def test_group_default_restart_applies_to_tasks(corral, tmp_path):
    runs = tmp_path / "runs"
    config = {
        "groups": {
            "g": {
                "restart": {"policy": "on-failure", "attempts": 1, "delay": "100ms"},
                "tasks": {"app": {"command": sh(f"echo run >> {runs}; exit 2")}},
            }
        }
    }
    result = corral.run(config)
    assert count_lines(runs) == 2, result
    assert result.returncode == 2, result


def test_mode_delay_waits_out_the_interval_then_continues(corral, tmp_path):
    runs = tmp_path / "runs"
    restart = {"policy": "on-failure", "attempts": 1, "interval": "1s", "delay": "100ms",
               "mode": "delay"}
    running = corral.start(one_task(sh(f"{mark(runs, 'run')}; exit 1"), restart))
    # Run 1, a restart after 100ms (the one attempt), then a wait for the 1s
    # window to end, then it goes on: run 3 and more.
    wait_for(lambda: count_lines(runs) >= 4, timeout=15, what="runs after the interval")
    running.send(signal.SIGTERM)
    result = running.wait()
    times = [when for _, when in read_marks(runs)]
    assert times[1] - times[0] >= 0.095, times
    # The third run waited for the window that opened at the first exit.
    assert times[2] - times[0] >= 0.95, times
    assert times[2] - times[1] >= 0.5, times
    not_restarting = result.events.of_task("app", "not_restarting")
    assert not any("failed for good" in e["message"] for e in not_restarting), result.events
    # Nothing failed for good: the shutdown ends well.
    assert result.returncode == 0, result


def test_failed_main_stops_its_group(corral, tmp_path):
    order = tmp_path / "order"

    def stoppable(name):
        return sh(
            f"trap '{mark(order, name + '-term')}; sleep 0.1; exit 0' TERM\n"
            f"{mark(order, name + '-up')}; while :; do sleep 0.02; done"
        )

    config = {
        "groups": {
            "g": {
                "tasks": {
                    "side": {"command": stoppable("side"),
                             "lifecycle": {"hook": "prestart", "sidecar": True}},
                    "post": {"command": stoppable("post"),
                             "lifecycle": {"hook": "poststart", "sidecar": True}},
                    "other": {"command": stoppable("other")},
                    "app": {
                        "command": sh(
                            # Fail once everything else is up.
                            f"while [ \"$(cat {order} 2>/dev/null | wc -l)\" -lt 3 ]; do sleep 0.02; done; "
                            f"{mark(order, 'app-fail')}; exit 4"
                        ),
                        "restart": {"policy": "never"},
                    },
                    "cleanup": {"command": sh(mark(order, "cleanup")),
                                "lifecycle": {"hook": "poststop"}},
                }
            },
            "bystander": {
                "tasks": {"calm": {"command": sh(f"sleep 1; {mark(order, 'calm-done')}"),
                                   "restart": {"policy": "never"}}}
            },
        }
    }
    result = corral.run(config)
    assert result.returncode == 4, result
    m = marks_by_name(order)
    for name in ["other-term", "post-term", "side-term", "cleanup"]:
        assert name in m, (name, m, result)
    # Reverse lifecycle order: main tasks, poststart sidecars, prestart
    # sidecars; then poststop.
    assert m["app-fail"] < m["other-term"] < m["post-term"] < m["side-term"] < m["cleanup"], m
    stopping = result.events.of_group("g", "stopping")
    assert stopping and "g/app" in stopping[0]["message"], result.events
    # Stopped tasks are not restarted although their policy is always.
    for task in ["side", "post", "other"]:
        assert not result.events.of_task(task, "restarting"), result.events
    # Another group is not stopped by it.
    assert "calm-done" in m, m


def test_exit_code_is_the_first_task_to_fail_for_good(corral, tmp_path):
    config = {
        "groups": {
            # Listed first, fails second.
            "late": {"tasks": {"a": {"command": sh("sleep 0.8; exit 3"),
                                     "restart": {"policy": "never"}}}},
            "early": {"tasks": {"b": {"command": sh("sleep 0.1; exit 5"),
                                      "restart": {"policy": "never"}}}},
        }
    }
    result = corral.run(config)
    assert result.returncode == 5, result
    # Both really failed.
    assert result.events.of_task("a", "exited")[0]["message"] == "exited with code 3"
    assert result.events.of_task("b", "exited")[0]["message"] == "exited with code 5"


def test_exit_code_ignores_tasks_stopped_by_the_failure(corral, tmp_path):
    # The sibling exits 9 when stopped: being stopped is not a failure.
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "app": {"command": sh("sleep 0.2; exit 6"), "restart": {"policy": "never"}},
                    "sibling": {"command": sh("trap 'exit 9' TERM; while :; do sleep 0.02; done")},
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 6, result


def test_signal_exit_gives_128_plus_signal(corral, tmp_path):
    result = corral.run(one_task(sh("kill -KILL $$"), {"policy": "never"}))
    assert result.returncode == 137, result
    exited = result.events.of_task("app", "exited")
    assert exited and "SIGKILL" in exited[0]["message"], result.events


def test_signal_exit_sigterm_gives_143(corral, tmp_path):
    result = corral.run(one_task(sh("kill -TERM $$"), {"policy": "never"}))
    assert result.returncode == 143, result


def test_attempts_0_means_no_restart(corral, tmp_path):
    runs = tmp_path / "runs"
    restart = {"policy": "on-failure", "attempts": 0, "delay": "100ms"}
    result = corral.run(one_task(sh(f"echo run >> {runs}; exit 3"), restart))
    assert count_lines(runs) == 1, result
    assert result.returncode == 3, result


def test_attempts_are_counted_within_the_interval_only(corral, tmp_path):
    # Each failure comes after the 300ms window of the previous restart has
    # closed, so one attempt per interval is never exhausted.
    runs = tmp_path / "runs"
    restart = {"policy": "on-failure", "attempts": 1, "interval": "300ms", "delay": "50ms",
               "mode": "fail"}
    running = corral.start(one_task(sh(f"echo run >> {runs}; sleep 0.4; exit 1"), restart))
    wait_for(lambda: count_lines(runs) >= 4, timeout=15, what="a fourth run")
    assert running.alive(), running.result()
    running.send(signal.SIGTERM)
    result = running.wait()
    assert not [e for e in result.events.of_task("app", "not_restarting")
                if "failed for good" in e["message"]], result.events
    assert result.returncode == 0, result


def test_sidecar_that_fails_for_good_stops_the_group(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "side": {"command": sh("sleep 0.3; exit 8"),
                             "lifecycle": {"hook": "prestart", "sidecar": True},
                             "restart": {"policy": "never"}},
                    "app": {"command": sh(f"trap '{mark(order, 'app-term')}; exit 0' TERM; "
                                          f"{mark(order, 'app-up')}; while :; do sleep 0.02; done")},
                    "cleanup": {"command": sh(mark(order, "cleanup")),
                                "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 8, result
    m = marks_by_name(order)
    assert "app-term" in m and "cleanup" in m, (m, result)


def test_zero_delay_restarts(corral, tmp_path):
    runs = tmp_path / "runs"
    restart = {"policy": "on-failure", "attempts": 4, "delay": "0s"}
    result = corral.run(one_task(sh(f"echo run >> {runs}; exit 1"), restart))
    assert count_lines(runs) == 5, result
    assert result.returncode == 1, result


def test_zero_delay_restarts_of_an_exec_failure(corral, tmp_path):
    restart = {"policy": "on-failure", "attempts": 3, "delay": "0s"}
    result = corral.run(one_task(["/nonexistent/corral-test"], restart))
    assert len(result.events.of_task("app", "start_failed")) == 4, result
    assert result.returncode == 127, result


def test_many_restart_timers_at_once(corral, tmp_path):
    # 30 tasks with different delays share one timer heap: each must run
    # exactly attempts + 1 times.
    tasks = {
        f"t{i}": {
            "command": sh(f"echo run >> {tmp_path / f't{i}'}; exit 1"),
            "restart": {"policy": "on-failure", "attempts": 2, "delay": f"{20 + 17 * i}ms",
                        "max_delay": f"{20 + 17 * i}ms"},
        }
        for i in range(30)
    }
    # One group each: a task failing for good stops only its own group.
    groups = {name: {"tasks": {name: task}} for name, task in tasks.items()}
    result = corral.run({"groups": groups})
    assert result.returncode == 1, result
    counts = {name: count_lines(tmp_path / name) for name in tasks}
    assert set(counts.values()) == {3}, counts
