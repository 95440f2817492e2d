"""Lifecycle stages (Nomad semantics): prestart ephemeral and sidecar tasks,
main tasks, poststart and poststop tasks, in order."""

import pytest

from conftest import count_lines, mark, marks_by_name, sh

ALL_STATES = ["init", "prestart", "main", "poststart", "running", "poststop"]

# `alive NAME TAG` succeeds when some process has " NAME-TAG" in its
# command line (a task started as sh -c SCRIPT NAME-TAG). The pattern is
# joined at run time so that the checking shell never matches itself.
ALIVE = (
    'alive() { for f in /proc/[0-9]*/cmdline; do '
    'c=$(tr "\\0" " " < "$f" 2>/dev/null) || continue; '
    'case "$c" in *" $1-$2"*) return 0;; esac; done; return 1; }'
)


def full_group(d):
    """One task of every stage, each recording what it saw."""
    order = d / "order"
    return {
        "shutdown_timeout": "10s",
        "groups": {
            "web": {
                "tasks": {
                    "setup": {
                        "command": sh(
                            f"{mark(order, 'setup-start')}; sleep 0.2; {mark(order, 'setup-end')}"
                        ),
                        "lifecycle": {"hook": "prestart"},
                    },
                    "proxy": {
                        "command": sh(
                            f"{mark(order, 'proxy-start')}\n"
                            f"trap '{mark(order, 'proxy-term')}; exit 0' TERM\n"
                            "while :; do sleep 0.02; done",
                            "proxy-lifecycletest",
                        ),
                        "lifecycle": {"hook": "prestart", "sidecar": True},
                        "kill": {"timeout": "2s"},
                    },
                    "app": {
                        "command": sh(
                            f"{ALIVE}\n"
                            f"if alive proxy lifecycletest; then {mark(order, 'app-saw-proxy')}; fi\n"
                            f"{mark(order, 'app-start')}\n"
                            # Lives until the poststart task has looked (10s at most).
                            f"i=0; until grep -q announce-start {order} || [ $i -ge 500 ]; do "
                            "sleep 0.02; i=$((i+1)); done\n"
                            f"sleep 0.1; {mark(order, 'app-end')}",
                            "app-lifecycletest",
                        ),
                        "restart": {"policy": "never"},
                    },
                    "announce": {
                        "command": sh(
                            f"{ALIVE}\n"
                            f"if alive app lifecycletest; then {mark(order, 'announce-saw-app')}; fi\n"
                            f"{mark(order, 'announce-start')}"
                        ),
                        "lifecycle": {"hook": "poststart"},
                    },
                    "cleanup": {
                        "command": sh(
                            f"{ALIVE}\n"
                            f"{mark(order, 'cleanup-start')}\n"
                            f"if alive proxy lifecycletest; then {mark(order, 'cleanup-saw-proxy')}; fi\n"
                            f"if alive app lifecycletest; then {mark(order, 'cleanup-saw-app')}; fi"
                        ),
                        "lifecycle": {"hook": "poststop"},
                    },
                }
            }
        },
    }


def test_stages_run_in_lifecycle_order(corral, tmp_path):
    result = corral.run(full_group(tmp_path))
    assert result.returncode == 0, result
    m = marks_by_name(tmp_path / "order")
    for name in ["setup-start", "setup-end", "proxy-start", "app-start", "app-end",
                 "announce-start", "cleanup-start", "proxy-term"]:
        assert name in m, (name, m, result)

    # The prestart ephemeral task finished before the main task started.
    assert m["setup-end"] < m["app-start"], m
    # The prestart sidecar was running when the main task started.
    assert "app-saw-proxy" in m, m
    # The poststart task started once the main task had started.
    assert "announce-saw-app" in m, m
    assert m["app-start"] < m["app-end"]
    # Poststop ran after every other task was dead.
    assert m["cleanup-start"] > m["app-end"], m
    assert m["cleanup-start"] > m["proxy-term"], m
    assert "cleanup-saw-proxy" not in m and "cleanup-saw-app" not in m, m


def test_task_events_follow_the_stages(corral, tmp_path):
    result = corral.run(full_group(tmp_path))
    assert result.returncode == 0, result
    ev = result.events
    started = {name: ev.task_index(name, "started") for name in
               ["setup", "proxy", "app", "announce", "cleanup"]}
    assert started["proxy"] < started["app"]
    assert ev.task_index("setup", "exited") < started["app"]
    assert started["app"] < started["announce"]
    assert ev.task_index("app", "exited") < started["cleanup"]
    assert ev.task_index("proxy", "exited") < started["cleanup"]
    # started events carry the pid of the task.
    for name in started:
        assert isinstance(ev[started[name]].get("pid"), int) and ev[started[name]]["pid"] > 0
    assert ev.of_group("web", "finished"), ev


def test_lifecycle_events_in_order(corral, tmp_path):
    result = corral.run(full_group(tmp_path))
    assert result.returncode == 0, result
    transitions = result.events.lifecycle("web")
    assert transitions == list(zip(ALL_STATES, ALL_STATES[1:])), transitions
    # The group finishes after reaching poststop.
    ev = result.events
    assert ev.index(lambda e: e.get("event") == "finished" and "task" not in e) > ev.index(
        lambda e: e.get("message") == "lifecycle running -> poststop"
    )


def test_sidecar_stopped_with_sigterm_when_main_ends(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "side": {
                        "command": sh(
                            f"trap '{mark(order, 'side-term')}; exit 0' TERM\n"
                            f"{mark(order, 'side-up')}; while :; do sleep 0.02; done"
                        ),
                        "lifecycle": {"hook": "prestart", "sidecar": True},
                        "kill": {"timeout": "5s"},
                    },
                    "post": {
                        "command": sh(
                            f"trap '{mark(order, 'post-term')}; exit 0' TERM\n"
                            f"{mark(order, 'post-up')}; while :; do sleep 0.02; done"
                        ),
                        "lifecycle": {"hook": "poststart", "sidecar": True},
                        "kill": {"timeout": "5s"},
                    },
                    "app": {
                        "command": sh(f"sleep 0.3; {mark(order, 'app-end')}"),
                        "restart": {"policy": "never"},
                    },
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    m = marks_by_name(order)
    # Both sidecars got SIGTERM (their trap ran), after the main task ended.
    assert "side-term" in m and "post-term" in m, (m, result)
    assert m["side-term"] > m["app-end"] and m["post-term"] > m["app-end"], m
    # The poststart sidecar is stopped before the prestart one.
    assert m["post-term"] < m["side-term"], m
    for task in ["side", "post"]:
        killing = result.events.of_task(task, "killing")
        assert killing and "SIGTERM" in killing[0]["message"], result.events
        # Stopped, so not restarted although their policy is always.
        assert not result.events.of_task(task, "restarting"), result.events


def test_group_with_only_a_main_task_skips_empty_stages(corral, tmp_path):
    config = {
        "groups": {
            "solo": {
                "tasks": {
                    "app": {
                        "command": sh(f"echo ran >> {tmp_path / 'ran'}"),
                        "restart": {"policy": "never"},
                    }
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    assert count_lines(tmp_path / "ran") == 1
    transitions = result.events.lifecycle("solo")
    # A chain from init to poststop that never goes back and passes every
    # state at most once.
    assert transitions and transitions[0][0] == "init" and transitions[-1][1] == "poststop"
    for (_, to), (frm, _) in zip(transitions, transitions[1:]):
        assert to == frm, transitions
    visited = [transitions[0][0]] + [to for _, to in transitions]
    assert visited == sorted(visited, key=ALL_STATES.index), visited
    assert len(set(visited)) == len(visited), visited
    # The main task started once the main state was reached.
    ev = result.events
    main_reached = ev.index(lambda e: e.get("event") == "lifecycle"
                            and e["message"].endswith("-> main"))
    assert ev.task_index("app", "started") > main_reached
    assert ev.of_group("solo", "finished")


def test_group_with_only_poststop_tasks_runs_them(corral, tmp_path):
    config = {
        "groups": {
            "only": {
                "tasks": {
                    "bye": {
                        "command": sh(f"echo ran >> {tmp_path / 'ran'}"),
                        "lifecycle": {"hook": "poststop"},
                    }
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    assert count_lines(tmp_path / "ran") == 1


def failing_prestart_group(d, prestart_restart):
    return {
        "groups": {
            "g": {
                "tasks": {
                    "setup": {
                        "command": sh(f"echo run >> {d / 'setup-runs'}; exit 3"),
                        "lifecycle": {"hook": "prestart"},
                        "restart": prestart_restart,
                    },
                    "app": {"command": sh(f"touch {d / 'app-ran'}; sleep 5")},
                    "announce": {
                        "command": sh(f"touch {d / 'announce-ran'}"),
                        "lifecycle": {"hook": "poststart"},
                    },
                    "cleanup": {
                        "command": sh(f"touch {d / 'cleanup-ran'}"),
                        "lifecycle": {"hook": "poststop"},
                    },
                }
            }
        }
    }


def test_failed_prestart_with_policy_never_keeps_main_from_starting(corral, tmp_path):
    result = corral.run(failing_prestart_group(tmp_path, {"policy": "never"}))
    assert count_lines(tmp_path / "setup-runs") == 1
    assert not (tmp_path / "app-ran").exists(), result
    assert not (tmp_path / "announce-ran").exists(), result
    assert (tmp_path / "cleanup-ran").exists(), result
    assert result.returncode == 3, result
    assert not result.events.of_task("app", "started")
    assert result.events.lifecycle("g")[-1][1] == "poststop"


def test_failed_prestart_after_attempts_keeps_main_from_starting(corral, tmp_path):
    restart = {"policy": "on-failure", "attempts": 1, "delay": "100ms", "interval": "1m"}
    result = corral.run(failing_prestart_group(tmp_path, restart))
    assert count_lines(tmp_path / "setup-runs") == 2, result
    assert not (tmp_path / "app-ran").exists(), result
    assert (tmp_path / "cleanup-ran").exists(), result
    assert result.returncode == 3, result
    assert len(result.events.of_task("setup", "restarting")) == 1


def test_shipped_example_exits_0(corral, repo_root):
    result = corral.run(repo_root / "examples" / "lifecycle.yaml")
    assert result.returncode == 0, result
    out = result.stdout_lines()
    assert "demo/app | working 3" in out, result
    assert "demo/cleanup | cleaned up" in out, result
    assert "demo/proxy | proxy stopping" in out, result
    assert result.events.lifecycle("demo")[-1] == ("running", "poststop")


def test_groups_run_independently_and_corral_waits_for_all(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "quick": {"tasks": {"a": {"command": sh(mark(order, "quick")),
                                      "restart": {"policy": "never"}}}},
            "slow": {
                "tasks": {
                    "setup": {"command": sh(f"sleep 0.3; {mark(order, 'slow-setup')}"),
                              "lifecycle": {"hook": "prestart"}},
                    "b": {"command": sh(f"sleep 0.3; {mark(order, 'slow')}"),
                          "restart": {"policy": "never"}},
                }
            },
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    m = marks_by_name(order)
    # The quick group did not wait for the slow group's prestart task.
    assert m["quick"] < m["slow-setup"] < m["slow"], m
    ev = result.events
    finished = [e["group"] for e in ev if e.get("event") == "finished" and "task" not in e]
    assert finished == ["quick", "slow"], ev


def test_failed_poststart_task_stops_the_group(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    # Ready once its trap is set: poststart waits for that,
                    # so the stop's TERM never comes before the trap.
                    "app": {"command": sh(f"trap '{mark(order, 'app-term')}; exit 0' TERM; "
                                          "echo >&3; while :; do sleep 0.02; done"),
                            "readiness": {"notify": "fd", "fd": 3}},
                    "announce": {"command": sh("exit 2"), "lifecycle": {"hook": "poststart"},
                                 "restart": {"policy": "never"}},
                    "cleanup": {"command": sh(mark(order, "cleanup")),
                                "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 2, result
    m = marks_by_name(order)
    assert "app-term" in m and "cleanup" in m and m["app-term"] < m["cleanup"], m


def test_failed_poststop_task_gives_the_exit_code(corral, tmp_path):
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "app": {"command": ["true"], "restart": {"policy": "never"}},
                    "cleanup": {"command": sh("exit 4"), "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 4, result


def test_every_task_is_received_before_it_starts(corral, tmp_path):
    # Nomad's "Received" event: every task is known (and waits for its
    # stage gate) before anything happens to it.
    result = corral.run(full_group(tmp_path))
    assert result.returncode == 0, result
    for task in ["setup", "proxy", "app", "announce", "cleanup"]:
        kinds = result.events.kinds(task)
        assert kinds and kinds[0] == "received", (task, kinds)


def test_crashed_sidecar_is_restarted_while_main_runs(corral, tmp_path):
    runs = tmp_path / "side-runs"
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "side": {
                        # Crashes on its first run only.
                        "command": sh(f"echo run >> {runs}; "
                                      f"[ $(wc -l < {runs}) -ge 2 ] || exit 1; "
                                      "while :; do sleep 0.02; done"),
                        "lifecycle": {"hook": "prestart", "sidecar": True},
                        "restart": {"policy": "always", "delay": "100ms"},
                        "kill": {"timeout": "2s"},
                    },
                    "app": {
                        "command": sh(f"while [ $(wc -l < {runs}) -lt 2 ]; do sleep 0.02; done; "
                                      f"sleep 0.2; {mark(order, 'app-done')}"),
                        "restart": {"policy": "never"},
                    },
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    assert count_lines(runs) == 2, result
    assert "app-done" in marks_by_name(order)


def test_sidecar_ignoring_sigterm_is_killed_after_its_kill_timeout(corral, tmp_path):
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "side": {"command": sh(f"trap '' TERM; {mark(order, 'side-up')}; "
                                           "while :; do sleep 0.02; done"),
                             "lifecycle": {"hook": "prestart", "sidecar": True},
                             "kill": {"timeout": "300ms"}},
                    "app": {"command": sh("sleep 0.1"), "restart": {"policy": "never"}},
                    "cleanup": {"command": sh(mark(order, "cleanup")),
                                "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    assert result.events.of_task("side", "kill_timeout"), result.events
    assert "cleanup" in marks_by_name(order)


def test_many_tasks(corral, tmp_path):
    tasks = {f"t{i}": {"command": sh(f"echo {i} >> {tmp_path / 'ran'}"),
                       "restart": {"policy": "never"}} for i in range(200)}
    result = corral.run({"groups": {"big": {"tasks": tasks}}})
    assert result.returncode == 0, result
    assert sorted(int(x) for x in (tmp_path / "ran").read_text().split()) == list(range(200))


def test_prestart_task_that_succeeds_after_a_restart_lets_main_start(corral, tmp_path):
    runs = tmp_path / "setup-runs"
    order = tmp_path / "order"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "setup": {"command": sh(f"echo run >> {runs}; [ $(wc -l < {runs}) -ge 2 ]"),
                              "lifecycle": {"hook": "prestart"},
                              "restart": {"policy": "on-failure", "delay": "100ms"}},
                    "app": {"command": sh(mark(order, "app")), "restart": {"policy": "never"}},
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    assert count_lines(runs) == 2
    assert "app" in marks_by_name(order)


def test_poststop_task_restarts_on_failure_when_asked_to(corral, tmp_path):
    runs = tmp_path / "runs"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "app": {"command": ["true"], "restart": {"policy": "never"}},
                    "cleanup": {"command": sh(f"echo run >> {runs}; [ $(wc -l < {runs}) -ge 2 ]"),
                                "lifecycle": {"hook": "poststop"},
                                "restart": {"policy": "on-failure", "delay": "100ms"}},
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 0, result
    assert count_lines(runs) == 2


def test_event_log_and_stderr_format(corral, tmp_path):
    result = corral.run(full_group(tmp_path))
    assert result.returncode == 0, result
    kinds = {"received", "started", "start_failed", "exited", "restarting", "not_restarting",
             "killing", "kill_timeout", "killed", "restart_requested", "leftovers_killed",
             "oom_killed", "ready", "not_ready", "unhealthy"}
    for event in result.events:
        assert isinstance(event["time"], (int, float)) and event["time"] > 1e9, event
        assert isinstance(event["message"], str) and event["message"], event
        assert event["group"] == "web", event
        if "task" in event:
            assert event["event"] in kinds, event
        else:
            assert event["event"] in {"lifecycle", "stopping", "finished", "restarting"}, event
    times = [e["time"] for e in result.events]
    assert times == sorted(times)
    # corral's own messages name the task first.
    started = result.events.of_task("app", "started")[0]
    assert f"corral: web/app: started (pid {started['pid']})" in result.stderr.splitlines()
    assert "corral: web/app: exited with code 0" in result.stderr.splitlines()


def test_main_never_starts_while_a_prestart_sidecar_cannot_start(corral, tmp_path):
    # The sidecar never gets to running (exec fails, restarts, then fails
    # for good): the main task must not start in the meantime.
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "proxy": {"command": ["/nonexistent/corral-proxy"],
                              "lifecycle": {"hook": "prestart", "sidecar": True},
                              # mode fail: a sidecar's default, delay, would
                              # retry it for ever
                              "restart": {"policy": "on-failure", "attempts": 1,
                                          "delay": "300ms", "mode": "fail"}},
                    "app": {"command": sh(f"touch {tmp_path / 'app-ran'}")},
                    "cleanup": {"command": sh(f"touch {tmp_path / 'cleanup-ran'}"),
                                "lifecycle": {"hook": "poststop"}},
                }
            }
        }
    }
    result = corral.run(config)
    assert len(result.events.of_task("proxy", "start_failed")) == 2, result.events
    assert not (tmp_path / "app-ran").exists(), result
    assert (tmp_path / "cleanup-ran").exists(), result
    assert result.returncode == 127, result
