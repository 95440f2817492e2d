"""A real Prometheus scrapes corral's GET /metrics (docs/metrics.md): the
restart count of a crash-looping task rises in what Prometheus stored, and
`promtool check metrics` passes on a live scrape. Prometheus runs in its own
temporary directory, listening on a free port of 127.0.0.1, scraping every
second, and is killed at the end. Skipped when prometheus is not installed
(Debian package prometheus; scripts/install-deps.sh installs it)."""

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

from conftest import RUN_TIMEOUT, sh, wait_for

pytestmark = pytest.mark.skipif(
    not shutil.which("prometheus") or not shutil.which("promtool"),
    reason="prometheus and promtool are not installed (Debian package prometheus)",
)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def http_get(url, accept=None, timeout=5):
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read().decode(), response.headers.get("Content-Type")


class Prometheus:
    def __init__(self, directory, target):
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = directory / "prometheus.yml"
        config.write_text(json.dumps({
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s"},
            "scrape_configs": [{"job_name": "corral",
                                "static_configs": [{"targets": [target]}]}],
        }))
        self.log = open(directory / "prometheus.log", "wb")
        self.popen = subprocess.Popen(
            ["prometheus", f"--config.file={config}",
             f"--storage.tsdb.path={directory / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            cwd=directory, start_new_session=True)

    def ready(self):
        if self.popen.poll() is not None:
            pytest.fail(f"prometheus exited:\n{self.log_text()}")
        try:
            return http_get(f"{self.url}/-/ready")[0]
        except OSError:
            return None

    def api(self, path, **parameters):
        text, _ = http_get(f"{self.url}/api/v1/{path}?{urllib.parse.urlencode(parameters)}")
        reply = json.loads(text)
        assert reply["status"] == "success", reply
        return reply["data"]

    def query(self, expression):
        """{frozenset(labels): value} of an instant query."""
        return {frozenset(series["metric"].items()): float(series["value"][1])
                for series in self.api("query", query=expression)["result"]}

    def log_text(self):
        self.log.flush()
        return (self.directory / "prometheus.log").read_text(errors="replace")[-4000:]

    def stop(self):
        if self.popen.poll() is None:
            self.popen.kill()
            self.popen.wait()
        self.log.close()


@pytest.fixture
def prometheus_for(tmp_path):
    started = []

    def start(target):
        directory = tmp_path / "prometheus"
        directory.mkdir()
        server = Prometheus(directory, target)
        started.append(server)
        wait_for(server.ready, timeout=RUN_TIMEOUT, what="prometheus ready")
        return server

    yield start
    for server in started:
        server.stop()


def test_prometheus_stores_a_crash_loops_rising_restarts(corral, prometheus_for):
    port = free_port()
    config = {"http": {"listen": f"127.0.0.1:{port}"}, "groups": {"g": {"tasks": {
        "crash": {"command": sh("sleep 0.2; exit 3"),
                  "restart": {"policy": "always", "delay": "200ms", "max_delay": "200ms",
                              "attempts": "unlimited"}},
        "service": {"command": ["/bin/sleep", "1000"]}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    prometheus = prometheus_for(f"127.0.0.1:{port}")

    def target_up():
        targets = prometheus.api("targets")["activeTargets"]
        return targets and targets[0]["health"] == "up" and targets[0]
    target = wait_for(target_up, timeout=RUN_TIMEOUT, what="prometheus to scrape corral")
    assert target["lastError"] == "", target

    series = 'corral_task_restarts_total{job="corral",group="g",task="crash"}'

    def restarts():
        found = prometheus.query(series)
        return next(iter(found.values())) if found else None
    first = wait_for(restarts, timeout=RUN_TIMEOUT, what="a stored restart count")
    wait_for(lambda: restarts() >= first + 2, timeout=RUN_TIMEOUT,
             what="the stored restart count to rise")
    # What the crash-loop alert of docs/metrics.md computes.
    rate = prometheus.query(f"rate({series}[15m]) * 60 * 5")
    assert rate and next(iter(rate.values())) > 0, rate
    # The text format of a live scrape passes promtool.
    text, content_type = http_get(f"http://127.0.0.1:{port}/metrics")
    assert content_type.startswith("text/plain; version=0.0.4"), content_type
    result = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                            text=True, timeout=RUN_TIMEOUT)
    assert result.returncode == 0, result
    running.send(15)
    running.wait()
