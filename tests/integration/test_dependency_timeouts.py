"""An `after:` entry's `timeout` (a dependency that never gets there fails
its dependent's start, as compose's `up --wait` fails) and compose's
`required: false` (a dependency that is not there does not hold the
dependent back)."""

import signal

from conftest import mark, marks_by_name, sh, wait_for


def never_healthy():
    return {"command": ["sleep", "100"],
            "health": {"exec": ["false"], "interval": "100ms"}}


def test_a_dependency_not_healthy_in_time_fails_its_dependent(corral, tmp_path):
    marks = tmp_path / "marks"
    result = corral.run({"groups": {"g": {"tasks": {
        "db": never_healthy(),
        "app": {"command": sh(mark(marks, "app")),
                "after": {"db": {"condition": "healthy", "timeout": "1s"}}},
    }}}})
    assert not marks.exists(), result
    assert result.returncode != 0, result
    app = result.events.of_task("app", "not_restarting")
    assert app and app[0]["message"].startswith(
        "not started: g/db not healthy within 1s (g/app: after.db.timeout)"), result.events
    # The wait took the timeout, not longer: corral stopped soon after.
    assert 0.9 < result.elapsed < 10, result


def test_a_timeout_names_the_chain(corral, tmp_path):
    result = corral.run({"groups": {"g": {"tasks": {
        "db": never_healthy(),
        "api": {"command": ["sleep", "100"], "after": {"db": "healthy"}},
        "web": {"command": ["sleep", "100"],
                "after": {"api": {"condition": "ready", "timeout": "500ms"}}},
    }}}})
    web = result.events.of_task("web", "not_restarting")
    assert web and web[0]["message"].startswith(
        "not started: g/api not ready within 500ms (g/web: after.api.timeout); "
        "the chain: g/web -> g/api -> g/db"), result.events
    assert not result.events.of_task("api", "started"), result.events


def test_an_optional_dependency_missing_from_the_config_is_left_out(corral, tmp_path):
    marks = tmp_path / "marks"
    config = {"groups": {"g": {"tasks": {
        "app": {"command": sh(mark(marks, "app")), "restart": {"policy": "never"},
                "after": {"cache": {"required": False}, "h/metrics": {"required": False}}},
    }}}}
    assert corral.check(config).returncode == 0
    result = corral.run(config)
    assert result.returncode == 0, result
    assert "app" in marks_by_name(marks), result


def test_an_optional_dependency_that_failed_does_not_hold_the_dependent(corral, tmp_path):
    marks = tmp_path / "marks"
    result = corral.run({"groups": {"g": {"on_failure": "ignore", "tasks": {
        "db": {"command": sh("exit 3"), "restart": {"policy": "never"}},
        "app": {"command": sh(mark(marks, "app")), "restart": {"policy": "never"},
                "after": {"db": {"condition": "started", "required": False}}},
    }}}})
    assert "app" in marks_by_name(marks), result


def test_an_optional_dependency_not_there_in_time_is_started_without(corral, tmp_path):
    marks = tmp_path / "marks"
    running = corral.start({"groups": {"g": {"tasks": {
        "db": never_healthy(),
        "app": {"command": sh(f"{mark(marks, 'app')}; sleep 100"),
                "after": {"db": {"condition": "healthy", "timeout": "500ms",
                                 "required": False}}},
    }}}})
    wait_for(lambda: "app" in marks_by_name(marks), timeout=10, what="app, without db")
    waited = marks_by_name(marks)["app"]
    running.send(signal.SIGTERM)
    result = running.wait()
    assert not result.events.of_task("app", "not_restarting"), result.events
    started = [e for e in result.events if e.get("task") == "db" and e["event"] == "started"]
    assert started and 0.45 < waited - started[0]["time"] < 5, (waited, started)


def test_a_main_task_bounds_its_wait_for_a_prestart_sidecar(corral, tmp_path):
    # The sidecar never gets ready and, a sidecar, is retried for ever: the
    # main stage's gate stays closed. The main task's own timeout counts
    # through the gate and fails it, so corral does not hang.
    marks = tmp_path / "marks"
    result = corral.run({"groups": {"pod": {"tasks": {
        "proxy": {"command": ["sleep", "100"], "lifecycle": {"hook": "prestart", "sidecar": True},
                  "readiness": {"exec": ["false"], "interval": "100ms", "timeout": "10s"}},
        "app": {"command": sh(mark(marks, "app")),
                "after": {"proxy": {"timeout": "1s"}}},
    }}}})
    assert not marks.exists(), result
    app = result.events.of_task("app", "not_restarting")
    assert app and app[0]["message"].startswith(
        "not started: pod/proxy not ready within 1s (pod/app: after.proxy.timeout)"), result.events
    assert result.elapsed < 10, result
