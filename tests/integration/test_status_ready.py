"""`corral status --ready` as a Kubernetes readiness probe or a podman
healthcheck asks it: a task that completed (a one-shot main task), a
scheduled task between its runs, and a task never started (`autostart:
false`) are neither ready nor not ready; a task that failed is not ready."""

from conftest import sh, wait_for


def test_completed_scheduled_and_dormant_tasks_do_not_hold_readiness(corral, tmp_path):
    running = corral.start({"groups": {"g": {"tasks": {
        "server": {"command": sh("sleep 1000")},
        "migrate": {"command": sh("exit 0"), "restart": {"policy": "never"}},
        "nightly": {"command": sh("true"), "schedule": {"cron": "0 3 * * *"}},
        "manual": {"command": sh("sleep 1000"), "autostart": False},
    }}}})
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/migrate")["state"] == "dead",
             what="g/migrate to complete")
    result = corral.cli("status", "--ready")
    assert result.returncode == 0, result
    assert result.stdout.strip() == "ready", result.stdout
    running.send(15)
    assert running.wait().returncode == 0


def test_a_failed_task_still_makes_status_ready_fail(corral, tmp_path):
    running = corral.start({"groups": {"g": {"on_failure": "ignore", "tasks": {
        "server": {"command": sh("sleep 1000")},
        "broken": {"command": sh("exit 3"), "restart": {"policy": "never"}},
    }}}})
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/broken")["state"] == "dead",
             what="g/broken to fail")
    result = corral.cli("status", "--ready")
    assert result.returncode == 1, result
    assert "g/broken: not ready (dead" in result.stdout, result.stdout
    running.send(15)
    running.wait()
