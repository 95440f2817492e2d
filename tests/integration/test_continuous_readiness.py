"""readiness.continuous (docs/config.md, "Readiness"): Kubernetes' readiness
after the start. The probe goes on once the task is ready; `failures` in a
row make it not ready (a not_ready event, `status --ready` fails, dependents
waiting for `ready` wait) and a pass makes it ready again; with notify
systemd, RELOADING=1 and READY=1 do the same. The stage gates, opened once,
stay open. Against a real server: python's http.server, whose answer turns
404 when the file the probe asks for goes away."""

import signal
import time

from conftest import sh, wait_for
from helpers_net import free_port, http_server
from helpers_readiness import IDLE, NOTIFY, status_json


def events_of(running, task, kinds=("ready", "not_ready")):
    return [(e["event"], e["message"]) for e in running.events()
            if e.get("task") == task and e["event"] in kinds]


def ready_ok(corral):
    return corral.cli("status", "--ready").returncode == 0


def test_an_http_readiness_probe_follows_the_server_after_the_start(corral, tmp_path):
    port = free_port()
    site = tmp_path / "site"
    site.mkdir()
    (site / "ready").write_text("yes")
    config = {"groups": {"g": {"tasks": {
        "web": {"command": http_server(port) + ["--directory", str(site)],
                "readiness": {"http": {"port": port, "path": "/ready"}, "interval": "100ms",
                              "continuous": True, "failures": 2}},
        # Started by hand while web is not ready: it waits for web.
        "report": {"command": sh(f"touch {tmp_path / 'reported'}; {IDLE}"),
                   "autostart": False, "after": {"web": "ready"}},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/web"]["ready"], what="web ready")

    (site / "ready").unlink()  # the GET now answers 404
    wait_for(lambda: events_of(running, "web")[-1][0] == "not_ready", what="not_ready")
    web = status_json(corral)["g/web"]
    assert web["ready"] is False and web["ready_lost"] is True and web["state"] == "running"
    assert "HTTP 404" in events_of(running, "web")[-1][1]
    status = corral.cli("status", "--ready")
    assert status.returncode == 1
    assert "g/web: not ready (running, was ready; its readiness check fails now)" in status.stdout

    assert corral.cli("start", "g/report").returncode == 0
    wait_for(lambda: "web" in (status_json(corral)["g/report"]["waiting_for"] or ""),
             what="report waiting for web")
    assert not (tmp_path / "reported").exists()

    (site / "ready").write_text("yes")
    wait_for(lambda: (tmp_path / "reported").exists(), what="report started once web is ready")
    assert events_of(running, "web") == [
        ("ready", "ready (probe passed)"),
        ("not_ready", events_of(running, "web")[1][1]),
        ("ready", "ready again (probe passed)"),
    ]
    assert ready_ok(corral)
    # The same process all along: readiness is not health.
    assert status_json(corral)["g/web"]["restarts"] == 0
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_one_failure_below_the_threshold_changes_nothing(corral, tmp_path):
    flag = tmp_path / "up"
    flag.touch()
    config = {"groups": {"g": {"tasks": {"t": {
        "command": sh(IDLE),
        "readiness": {"exec": ["test", "-e", str(flag)], "interval": "100ms",
                      "continuous": True, "failures": 3}}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/t"]["ready"], what="ready")
    flag.unlink()
    wait_for(lambda: any(e["event"] == "probe_failed" for e in running.events()),
             what="a failed run")
    flag.touch()
    wait_for(lambda: any(e["event"] == "probe_passed" for e in running.events()),
             what="the probe passing again")
    assert [k for k, _ in events_of(running, "t")] == ["ready"]
    assert status_json(corral)["g/t"]["ready"] is True
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_without_continuous_readiness_is_checked_until_the_first_pass_only(corral, tmp_path):
    flag = tmp_path / "up"
    flag.touch()
    config = {"groups": {"g": {"tasks": {"t": {
        "command": sh(IDLE),
        "readiness": {"exec": ["test", "-e", str(flag)], "interval": "100ms"}}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/t"]["ready"], what="ready")
    flag.unlink()
    time.sleep(0.5)  # five intervals: a probe still running would have failed by now
    assert status_json(corral)["g/t"]["ready"] is True
    assert not any(e["event"] in ("probe_failed", "not_ready") for e in running.events())
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_sd_notify_reloading_makes_the_task_not_ready_until_ready(corral, tmp_path):
    go_reload, go_ready = tmp_path / "reload", tmp_path / "ready"
    wait = lambda path: f"while [ ! -e {path} ]; do sleep 0.02; done"  # noqa: E731
    config = {"groups": {"g": {"tasks": {"t": {
        "command": sh(f"{NOTIFY} READY=1; {wait(go_reload)}; {NOTIFY} RELOADING=1; "
                      f"{wait(go_ready)}; {NOTIFY} READY=1; {IDLE}"),
        "readiness": {"notify": "systemd", "continuous": True}}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/t"]["ready"], what="ready")
    go_reload.touch()
    wait_for(lambda: not status_json(corral)["g/t"]["ready"], what="not ready while reloading")
    assert status_json(corral)["g/t"]["status_text"] == "reloading"
    go_ready.touch()
    wait_for(lambda: status_json(corral)["g/t"]["ready"], what="ready again")
    assert events_of(running, "t") == [("ready", "ready (READY=1)"),
                                       ("not_ready", "not ready: RELOADING=1"),
                                       ("ready", "ready again (READY=1)")]
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_reload_turns_continuous_readiness_on_in_place(corral, tmp_path):
    flag = tmp_path / "up"
    flag.touch()
    task = {"command": sh(IDLE),
            "readiness": {"exec": ["test", "-e", str(flag)], "interval": "100ms"}}
    config = {"groups": {"g": {"tasks": {"t": task}}}}
    running = corral.start(corral.config(config, name="reload.yaml"))
    corral.wait_control(running)
    wait_for(lambda: status_json(corral)["g/t"]["ready"], what="ready")
    pid = status_json(corral)["g/t"]["pid"]
    task["readiness"]["continuous"] = True
    corral.config(config, name="reload.yaml")
    reload = corral.cli("reload")
    assert reload.returncode == 0, reload
    flag.unlink()
    wait_for(lambda: not status_json(corral)["g/t"]["ready"], what="not ready once it checks")
    assert status_json(corral)["g/t"]["pid"] == pid  # in place: the same process
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
