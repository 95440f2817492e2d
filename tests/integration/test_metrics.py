"""GET /metrics of a running corral (docs/metrics.md): the families of a
crash-looping task, a ready service, a one-shot and an OOM-killed task, in
both formats, each checked by a strict parser (promtool for Prometheus'
text format, prometheus_client's for OpenMetrics); counters that a reload
keeps; usage figures that move from scrape to scrape though a scrape reads
no cgroup."""

import json
import shutil
import subprocess
import time

import pytest

from conftest import RUN_TIMEOUT, sh, wait_for
from helpers_http import HOG, samples, scrape, start, started_again_after_replaced, value

OPENMETRICS = "application/openmetrics-text; version=1.0.0"


def promtool_check(text):
    if not shutil.which("promtool"):
        pytest.skip("promtool is not installed (Debian package prometheus)")
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                            text=True, timeout=RUN_TIMEOUT)
    assert result.returncode == 0, result


def openmetrics_check(text):
    parser = pytest.importorskip("prometheus_client.openmetrics.parser",
                                 reason="python3-prometheus-client is not installed")
    families = list(parser.text_string_to_metric_families(text))
    assert families


def tasks_of_every_kind():
    return {"groups": {"web": {"tasks": {
        "crash": {"command": sh("sleep 0.1; exit 3"),
                  "restart": {"policy": "always", "delay": "100ms", "max_delay": "100ms",
                              "attempts": "unlimited"}},
        "service": {"command": ["/bin/sleep", "1000"],
                    "readiness": {"exec": ["true"], "interval": "100ms"},
                    "health": {"exec": ["true"], "interval": "100ms"}},
        "once": {"command": ["true"], "lifecycle": {"hook": "prestart"}},
        "hog": {"command": HOG, "resources": {"memory": "32M"},
                "restart": {"policy": "on-failure", "delay": "1m"}},
        "worker": {"command": ["/bin/sleep", "1000"], "instances": 2},
    }}}}


def test_the_families_of_every_kind_of_task(corral):
    running, address = start(corral, tasks_of_every_kind())
    wait_for(lambda: corral.task_status("web/crash")["restarts"] >= 3, what="3 restarts")
    wait_for(lambda: (corral.task_status("web/hog")["last_exit"] or {}).get("oom_killed"),
             what="the hog's OOM kill")
    wait_for(lambda: corral.task_status("web/service")["ready"], what="the service ready")
    text, content_type = scrape(address)
    assert content_type.startswith("text/plain; version=0.0.4"), content_type
    promtool_check(text)
    found = samples(text)

    assert value(found, "corral_up") == 1
    assert value(found, "corral_task_restarts_total", group="web", task="crash") >= 3
    assert value(found, "corral_task_exits_total", group="web", task="crash", code="3") >= 3
    assert value(found, "corral_task_state", group="web", task="service", state="running") == 1
    assert value(found, "corral_task_state", group="web", task="service", state="dead") == 0
    assert value(found, "corral_task_ready", group="web", task="service") == 1
    assert value(found, "corral_task_healthy", group="web", task="service") == 1
    assert value(found, "corral_task_probe_failures_total", group="web", task="service",
                 probe="readiness") == 0
    assert value(found, "corral_task_exits_total", group="web", task="once", code="0") == 1
    assert value(found, "corral_task_state", group="web", task="once", state="dead") == 1
    assert value(found, "corral_task_oom_kills_total", group="web", task="hog") >= 1
    assert value(found, "corral_task_exits_total", group="web", task="hog",
                 signal="SIGKILL") == 1
    assert value(found, "corral_task_memory_limit_bytes", group="web", task="hog") == 32 << 20
    start_time = value(found, "corral_task_start_time_seconds", group="web", task="worker",
                       task_instance="1")
    assert abs(start_time - time.time()) < 60, start_time
    # Instances: task is the name written with `instances:`, task_instance
    # the number, so that a sum by task needs no label_replace; a task
    # without instances has no task_instance label.
    running_workers = [v for (name, labels), v in found.items()
                       if name == "corral_task_state" and dict(labels).get("task") == "worker"
                       and dict(labels)["state"] == "running"]
    assert sorted(running_workers) == [1, 1], running_workers
    assert {dict(labels).get("task_instance") for name, labels in found
            if name == "corral_task_state" and dict(labels)["task"] == "worker"} == {"0", "1"}
    assert not any("@" in dict(labels).get("task", "") for name, labels in found)
    assert all("task_instance" not in dict(labels) for name, labels in found
               if dict(labels).get("task") == "service")
    # As status says it.
    group_state = corral.status()["groups"][0]["state"]
    assert value(found, "corral_group_state", group="web", state=group_state) == 1
    assert sum(value for (name, labels), value in found.items()
               if name == "corral_group_state") == 1
    restarts = corral.task_status("web/service")["restarts"]
    assert value(found, "corral_task_restarts_total", group="web", task="service") == restarts

    text, content_type = scrape(address, OPENMETRICS)
    assert content_type.startswith("application/openmetrics-text; version=1.0.0"), content_type
    assert text.endswith("# EOF\n")
    openmetrics_check(text)
    running.send(15)
    running.wait()


def test_counters_outlive_a_reload_that_rebuilds_the_task(corral):
    config = {"groups": {"g": {"tasks": {
        "crash": {"command": sh("sleep 0.1; exit 3"), "env": {"ROUND": "1"},
                  "restart": {"policy": "always", "delay": "100ms", "max_delay": "100ms",
                              "attempts": "unlimited"}},
        # Never ready: its probe fails every 100ms.
        "probed": {"command": ["/bin/sleep", "1000"], "env": {"ROUND": "1"},
                   "readiness": {"exec": ["false"], "interval": "100ms"}},
        "keeper": {"command": ["/bin/sleep", "1000"]}}}}}
    running, address = start(corral, config)
    path = running.config_path

    def counts():
        """Exits and probe failures: 0 before the first exit (no series)."""
        found = samples(scrape(address)[0])
        exits = frozenset({"group": "g", "task": "crash", "code": "3"}.items())
        return (found.get(("corral_task_exits_total", exits), 0),
                value(found, "corral_task_probe_failures_total", group="g", task="probed",
                      probe="readiness"),
                found)

    # Well above what a task made anew would count by the next scrape.
    wait_for(lambda: counts()[0] >= 10 and counts()[1] >= 15, what="exits and probe failures")
    exits, probe_failures, _ = counts()

    config = json.loads(path.read_text())  # with its http key
    for task in ("crash", "probed"):  # a new definition: each task is made anew
        config["groups"]["g"]["tasks"][task]["env"]["ROUND"] = "2"
    corral.config(config, name=path.name)
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: all(started_again_after_replaced(running.events(), task)
                         for task in ("crash", "probed")), what="both tasks made anew")
    after_exits, after_probe_failures, found = counts()
    assert after_exits >= exits and after_probe_failures >= probe_failures, (
        exits, probe_failures, after_exits, after_probe_failures)
    assert value(found, "corral_task_restarts_total", group="g", task="crash") >= exits

    path.write_text("groups: [")  # refused
    assert corral.cli("reload").returncode != 0
    found = counts()[2]
    assert value(found, "corral_reloads_total", result="succeeded") == 1
    assert value(found, "corral_reloads_total", result="failed") == 1
    assert value(found, "corral_control_requests_total", command="reload") == 2
    assert value(found, "corral_control_requests_total", command="status") >= 1
    running.send(15)
    running.wait()


def test_usage_moves_from_scrape_to_scrape(corral):
    """A scrape serves the last reading and has the stale ones read after
    it: without that, every scrape would show the first reading."""
    config = {"groups": {"g": {"tasks": {
        "busy": {"command": sh("while :; do :; done")}}}}}
    running, address = start(corral, config)
    wait_for(lambda: corral.task_status("g/busy")["state"] == "running", what="busy running")

    def cpu():
        return value(samples(scrape(address)[0]), "corral_task_cpu_seconds_total", group="g",
                     task="busy")

    first = wait_for(cpu, what="a CPU figure")
    wait_for(lambda: cpu() > first + 0.2, timeout=RUN_TIMEOUT, what="the CPU figure to move")
    running.send(15)
    running.wait()
