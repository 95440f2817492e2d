"""Dependencies between tasks (`after:`, with conditions and `restart:
true`) and `order: sequential`, seen from the tasks: every ordering claim
is checked on marks the tasks write, never on timing."""

import signal

from conftest import count_lines, mark, marks_by_name, read_marks, sh, wait_for

IDLE = "while :; do sleep 0.02; done"


def service(marks, name, before_idle=""):
    """A long-running task that marks its start, and its TERM."""
    return sh(
        f"{mark(marks, name + '-start')}\n"
        f"trap '{mark(marks, name + '-term')}; exit 0' TERM\n"
        f"{before_idle}\n{IDLE}"
    )


def one_shot(marks, name, body="sleep 0.3", code=0):
    return sh(f"{mark(marks, name + '-start')}; {body}; {mark(marks, name + '-end')}; exit {code}")


def stop(running):
    running.send(signal.SIGTERM)
    return running.wait()


def names(marks):
    return [name for name, _ in read_marks(marks)]


def test_a_sidecar_after_a_one_shot_reads_what_it_wrote(corral, tmp_path):
    """The trial's race: the one-shot writes a config slowly; the sidecar
    that reads it starts only once the one-shot completed."""
    marks, conf = tmp_path / "marks", tmp_path / "redis.conf"
    config = {
        "groups": {
            "stack": {
                "tasks": {
                    "migrate": {
                        "command": sh(f"{mark(marks, 'migrate-start')}; echo 'port' > {conf}.tmp; "
                                      f"sleep 0.4; echo 'port 7001' > {conf}; "
                                      f"{mark(marks, 'migrate-end')}"),
                        "lifecycle": {"hook": "prestart"},
                    },
                    "redis": {
                        "command": service(marks, "redis",
                                           f"echo \"redis-saw-$(cat {conf} | tr ' ' _) 0\" >> {marks}; "
                                           f"touch {conf}.ready"),
                        "lifecycle": {"hook": "prestart", "sidecar": True},
                        "readiness": {"exec": ["test", "-e", f"{conf}.ready"], "interval": "50ms"},
                        "after": ["migrate"],
                    },
                    "app": {"command": service(marks, "app"), "after": {"redis": "ready"}},
                }
            }
        }
    }
    running = corral.start(config)
    wait_for(lambda: "app-start" in marks_by_name(marks), what="app to start")
    result = stop(running)
    assert result.returncode == 0, result
    order = names(marks)
    assert "redis-saw-port_7001" in order, order
    assert order.index("migrate-end") < order.index("redis-start") < order.index("app-start"), order
    # Stopped in the reverse order: app before the redis it waits for.
    assert order.index("app-term") < order.index("redis-term"), order


def test_status_says_what_a_pending_task_waits_for(corral, tmp_path):
    flag = tmp_path / "go"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "slow": {"command": sh(f"until [ -e {flag} ]; do sleep 0.02; done"),
                             "restart": {"policy": "on-failure"}},
                    "app": {"command": sh(IDLE), "after": {"slow": "completed"}},
                }
            }
        }
    }
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: corral.status()["groups"][0]["tasks"][0]["state"] == "running")
    app = corral.status("g/app")["groups"][0]["tasks"][0]
    assert app["state"] == "pending", app
    assert app["waiting_for"] == "waits for g/slow to complete", app
    table = corral.cli("status")
    assert "  app: waits for g/slow to complete" in table.stdout, table.stdout
    flag.touch()
    wait_for(lambda: corral.status("g/app")["groups"][0]["tasks"][0]["state"] == "running")
    assert corral.status("g/app")["groups"][0]["tasks"][0]["waiting_for"] is None
    assert stop(running).returncode == 0


def test_dependents_stop_first_also_across_groups(corral, tmp_path):
    """web/nginx waits for web/app (both main tasks) which waits for
    db/postgres: at shutdown nginx goes first, then app, then postgres,
    though the three would otherwise be stopped together."""
    marks = tmp_path / "marks"
    config = {
        "shutdown_timeout": "20s",
        "groups": {
            "web": {
                "tasks": {
                    "nginx": {"command": service(marks, "nginx", "sleep 0.2"),
                              "after": ["app"]},
                    "app": {"command": service(marks, "app"), "after": ["db/postgres"],
                            "kill": {"timeout": "5s"}},
                }
            },
            "db": {"tasks": {"postgres": {"command": service(marks, "postgres")}}},
        },
    }
    running = corral.start(config)
    wait_for(lambda: "nginx-start" in marks_by_name(marks), what="nginx to start")
    result = stop(running)
    assert result.returncode == 0, result
    order = names(marks)
    assert order.index("nginx-term") < order.index("app-term") < order.index("postgres-term"), order
    # app got its signal only once nginx was dead.
    killing_app = result.events.task_index("app", "killing")
    nginx_dead = result.events.index(lambda e: e.get("task") == "nginx" and e["event"] == "killed")
    assert nginx_dead < killing_app, result.events


def test_restart_true_stops_the_dependent_first_and_starts_it_again(corral, tmp_path):
    marks = tmp_path / "marks"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "redis": {"command": service(marks, "redis"),
                              "lifecycle": {"hook": "prestart", "sidecar": True}},
                    "app": {"command": service(marks, "app"),
                            "after": {"redis": {"condition": "ready", "restart": True}}},
                    "other": {"command": service(marks, "other"), "after": ["redis"]},
                }
            }
        }
    }
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "app-start" in marks_by_name(marks) and "other-start" in marks_by_name(marks))
    reply = corral.request("restart", target="g/redis")
    assert reply["ok"], reply
    wait_for(lambda: names(marks).count("app-start") == 2, what="app to start again")
    result = stop(running)
    assert result.returncode == 0, result
    order = names(marks)
    first_redis_term = order.index("redis-term")
    assert order.index("app-term") < first_redis_term, order
    # Started again only after redis was (its exec: it has no readiness, so
    # the events say it, not the shells' marks, which race).
    started = [e["task"] for e in result.events if e["event"] == "started"]
    assert started.count("redis") == 2 and started.count("app") == 2, started
    second_redis = [i for i, t in enumerate(started) if t == "redis"][1]
    second_app = [i for i, t in enumerate(started) if t == "app"][1]
    assert second_redis < second_app, started
    # Without restart: true, a dependent is left alone.
    assert order.count("other-start") == 1, order
    app_status = [e for e in result.events.of_task("app", "killed")]
    assert "starts again once what it waits for holds again" in app_status[0]["message"]


def test_restart_true_follows_a_crash_of_the_dependency(corral, tmp_path):
    marks, crash = tmp_path / "marks", tmp_path / "crash"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "seed": {
                        "command": sh(f"{mark(marks, 'seed-start')}\n"
                                      f"while [ ! -e {crash} ]; do sleep 0.02; done\n"
                                      f"rm {crash}; exit 1"),
                        "lifecycle": {"hook": "prestart", "sidecar": True},
                        "restart": {"delay": "100ms"},
                    },
                    "app": {"command": service(marks, "app"),
                            "after": {"seed": {"condition": "started", "restart": True}}},
                }
            }
        }
    }
    running = corral.start(config)
    wait_for(lambda: "app-start" in marks_by_name(marks))
    crash.touch()
    wait_for(lambda: names(marks).count("app-start") == 2, what="app to start again")
    result = stop(running)
    order = names(marks)
    assert order.index("app-term") < order.index("seed-start", order.index("seed-start") + 1)
    assert result.returncode == 0, result


def test_a_dependency_that_fails_for_good_names_the_chain(corral, tmp_path):
    marks = tmp_path / "marks"
    config = {
        "groups": {
            "stack": {"tasks": {"redis": {"command": sh("exit 3"),
                                          "lifecycle": {"hook": "prestart"},
                                          "restart": {"policy": "never"}}}},
            "web": {
                "tasks": {
                    "app": {"command": one_shot(marks, "app"), "after": ["stack/redis"]},
                    "proxy": {"command": one_shot(marks, "proxy"), "after": ["app"]},
                }
            },
        },
    }
    result = corral.run(config)
    # corral's code is the failed dependency's, whatever group saw it first.
    assert result.returncode == 3, result
    assert not marks.exists()
    app = result.events.of_task("app", "not_restarting")
    assert app[0]["message"] == (
        "not started: stack/redis failed for good (exited with code 3); failed for good"), app
    proxy = result.events.of_task("proxy", "not_restarting")
    # Named at the root, with the way there (not nested in web/app's).
    assert proxy[0]["message"].startswith(
        "not started: stack/redis failed for good (exited with code 3); "
        "the chain: web/proxy -> web/app -> stack/redis"), proxy


def test_the_example_stack_never_races(corral, repo_root):
    """examples/stack.yaml: a one-shot writes redis.conf, redis (sd_notify)
    reads it after the one-shot completed, app starts after redis is ready,
    and a poststart smoke test finds redis on the port the file names."""
    result = corral.run_piped(repo_root / "examples" / "stack.yaml", timeout=60)
    assert result.returncode == 0, result
    assert "stack/smoke | smoke: redis answers PONG on port 6391" in result.stdout, result
    events = result.events
    assert events.task_index("migrate", "exited") < events.task_index("redis", "started")
    assert events.task_index("redis", "ready") < events.task_index("app", "started")
    assert events.task_index("app", "ready") < events.task_index("smoke", "started")


def test_check_prints_a_cycle_whole(corral):
    result = corral.check(
        "groups:\n"
        "  g:\n"
        "    tasks:\n"
        "      a: {command: x, after: [b]}\n"
        "      b: {command: x, after: [c]}\n"
        "      c: {command: x, after: [a]}\n")
    assert result.returncode != 0
    assert ":6:31: g/c: after.a: dependency cycle: g/a -> g/b -> g/c -> g/a" in result.stderr, result


# ---- order: sequential, against Kubernetes' native sidecar e2e cases ----
# (test/e2e_node/container_lifecycle_test.go)


def sequential(tasks, **group):
    return {"shutdown_timeout": "20s",
            "groups": {"pod": {"order": "sequential", "tasks": tasks, **group}}}


def init(marks, name, **task):
    return {"command": one_shot(marks, name, "sleep 0.2"), "lifecycle": {"hook": "prestart"},
            **task}


def sidecar(marks, name, **task):
    """Ready once it wrote its start mark (a Kubernetes startup probe), so
    that what starts after it is seen after that mark."""
    flag = f"{marks}.{name}-up"
    return {"command": service(marks, name, f"touch {flag}"),
            "lifecycle": {"hook": "prestart", "sidecar": True},
            "readiness": {"exec": ["test", "-e", flag], "interval": "20ms"}, **task}


def test_k8s_inits_and_sidecars_start_one_after_another(corral, tmp_path):
    m = tmp_path / "marks"
    config = sequential({
        "init1": init(m, "init1"), "side1": sidecar(m, "side1"), "init2": init(m, "init2"),
        "side2": sidecar(m, "side2"), "init3": init(m, "init3"),
        "main": {"command": one_shot(m, "main", "sleep 0.3"), "restart": {"policy": "on-failure"}},
    })
    result = corral.run(config)
    assert result.returncode == 0, result
    order = names(m)
    starts = [n for n in order if n.endswith("-start")]
    assert starts == ["init1-start", "side1-start", "init2-start", "side2-start", "init3-start",
                      "main-start"], order
    # Each init ends before the next item starts; side1 runs with init2,
    # both sidecars with init3 and main.
    for before, after in [("init1-end", "side1-start"), ("init2-end", "side2-start"),
                          ("init3-end", "main-start")]:
        assert order.index(before) < order.index(after), order
    assert order.index("side1-term") > order.index("main-end")
    # Sidecars stop in the reverse of their start order, after main.
    assert order.index("main-end") < order.index("side2-term") < order.index("side1-term"), order


def test_k8s_a_sidecar_that_keeps_exiting_is_restarted_and_the_pod_ends_well(corral, tmp_path):
    for code in (0, 1):
        m = tmp_path / f"marks{code}"
        flag = tmp_path / f"main-ran{code}"
        config = sequential({
            "side": {"command": sh(f"{mark(m, 'side-start')}; sleep 0.3; exit {code}"),
                     "lifecycle": {"hook": "prestart", "sidecar": True},
                     "restart": {"delay": "50ms", "attempts": 100}},
            "init": init(m, "init"),
            "main": {"command": sh(f"{mark(m, 'main-start')}; sleep 1.2; touch {flag}"),
                     "restart": {"policy": "never"}},
        })
        result = corral.run(config)
        assert result.returncode == 0, result
        order = names(m)
        main_start = order.index("main-start")
        assert "side-start" in order[:main_start] and "side-start" in order[main_start + 1:], order
        assert order[:main_start].count("side-start") >= 1 and flag.exists()


def test_k8s_an_init_that_fails_keeps_the_sidecar_after_it_from_starting(corral, tmp_path):
    m = tmp_path / "marks"
    config = sequential({
        "init": {"command": one_shot(m, "init", "true", code=7), "lifecycle": {"hook": "prestart"},
                 "restart": {"policy": "never"}},
        "side": sidecar(m, "side"),
        "main": {"command": one_shot(m, "main")},
    })
    result = corral.run(config)
    assert result.returncode == 7, result
    assert names(m) == ["init-start", "init-end"], names(m)


def test_k8s_an_init_that_fails_is_retried_and_main_stays_pending(corral, tmp_path):
    m = tmp_path / "marks"
    config = sequential({
        "init": {"command": one_shot(m, "init", "true", code=1), "lifecycle": {"hook": "prestart"},
                 "restart": {"delay": "50ms", "max_delay": "50ms", "attempts": 1000}},
        "side": sidecar(m, "side"),
        "main": {"command": one_shot(m, "main")},
    })
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: names(m).count("init-start") >= 3, what="init to be retried")
    tasks = {t["name"]: t for t in corral.status()["groups"][0]["tasks"]}
    assert tasks["side"]["state"] == "pending", tasks
    assert tasks["main"]["state"] == "pending", tasks
    stop(running)
    assert "side-start" not in names(m) and "main-start" not in names(m)


def test_k8s_sidecars_with_readiness_gate_the_next_one(corral, tmp_path):
    m = tmp_path / "marks"

    def ready_sidecar(name):
        flag = tmp_path / f"{name}-ready"
        command = sh(f"{mark(m, name + '-start')}; sleep 0.3; {mark(m, name + '-ready')}; "
                     f"touch {flag}; trap 'exit 0' TERM; {IDLE}")
        return {"command": command, "lifecycle": {"hook": "prestart", "sidecar": True},
                "readiness": {"exec": ["test", "-e", str(flag)], "interval": "50ms"}}

    config = sequential({"side1": ready_sidecar("side1"), "side2": ready_sidecar("side2"),
                         "main": {"command": one_shot(m, "main", "true"),
                                  "restart": {"policy": "on-failure"}}})
    result = corral.run(config)
    assert result.returncode == 0, result
    order = names(m)
    assert order.index("side1-ready") < order.index("side2-start"), order
    assert order.index("side2-ready") < order.index("main-start"), order


def test_k8s_three_sidecars_stop_in_reverse_after_main(corral, tmp_path):
    m = tmp_path / "marks"
    config = sequential({
        "side1": sidecar(m, "side1"), "side2": sidecar(m, "side2"), "side3": sidecar(m, "side3"),
        "main": {"command": one_shot(m, "main", "sleep 0.2"), "restart": {"policy": "on-failure"}},
    })
    result = corral.run(config)
    assert result.returncode == 0, result
    terms = [n for n in names(m) if n.endswith("-term") or n == "main-end"]
    assert terms == ["main-end", "side3-term", "side2-term", "side1-term"], names(m)
    assert count_lines(m) == 8


def test_a_task_that_waits_through_others_names_the_chain(corral, tmp_path):
    """g/web waits for g/api, which waits for g/db; g/db fails for good:
    g/web's message names g/db and the way there, not g/db alone."""
    result = corral.run({"groups": {"g": {"tasks": {
        "db": {"command": ["sleep", "100"], "restart": {"policy": "never"},
               "readiness": {"exec": ["false"], "interval": "100ms", "timeout": "1s"}},
        "api": {"command": ["sleep", "100"], "after": {"db": "ready"}},
        "web": {"command": ["sleep", "100"], "after": {"api": "ready"}},
    }}}})
    lines = [line for line in result.stderr.splitlines() if "g/web: not started" in line]
    assert lines, result.stderr
    assert lines[0].endswith("g/db failed for good (not ready within 1s); "
                             "the chain: g/web -> g/api -> g/db"), lines


def test_one_restart_is_said_in_the_singular(corral, tmp_path):
    result = corral.run({"groups": {"g": {"tasks": {"t": {
        "command": ["sh", "-c", "exit 1"],
        "restart": {"policy": "on-failure", "attempts": 1, "delay": "10ms"}}}}}})
    assert "(1 restart allowed within 1m)" in result.stderr, result.stderr
    assert "1 restart within 1m spent" in result.stderr, result.stderr
