"""tcp, http and unix probes (docs/config.md, "Probes"): connections corral
makes from its loop, against real servers (python's http.server, socket
listeners), on the host and inside a task's own network and mount
namespaces; what status and the events say when they fail."""

import os
import socket
import time

import pytest

from conftest import busybox_root, children_of, wait_for
from helpers_net import BRIDGE, PYTHON, free_port, http_server, in_own_netns
from helpers_readiness import status_json

NEVER = {"policy": "never"}


# Answers 200 when the request has "X-Probe: yes", 403 otherwise.
HEADER_SERVER = r"""
import http.server, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.headers.get("X-Probe") == "yes" else 403)
        self.end_headers()
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""

NOTIFIER = r"""
import os, socket, time
path = os.environ["NOTIFY_SOCKET"]
print(path, flush=True)
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"READY=1", path)
time.sleep(1000)
"""

UNIX_SERVER = r"""
import os, socket, sys, time
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen()
time.sleep(1000)
"""


def run_until(corral, config, predicate, what, wrapper=None):
    running = corral.start(config, wrapper=wrapper)
    corral.wait_control(running)
    wait_for(lambda: predicate(status_json(corral)), timeout=60, what=what)
    return running


def stop(running, wrapped=False):
    """SIGTERM to corral: under the in_own_netns wrapper, the shell's child."""
    children = [pid for pid, _ in children_of(running.pid)] if wrapped else []
    os.kill(children[0] if children else running.pid, 15)
    result = running.wait()
    assert result.returncode == 0, result
    return result


def test_a_tcp_readiness_probe_holds_a_dependent_until_the_server_listens(corral):
    port = free_port()
    config = {"groups": {"g": {"tasks": {
        "web": {"command": ["/bin/sh", "-c", f"sleep 0.5; exec {PYTHON} -m http.server "
                            f"{port} --bind 127.0.0.1"],
                # Refusals said from the first (no start period): their words.
                "readiness": {"tcp": port, "interval": "100ms", "start_period": 0}},
        # Connects (or fails, and the run with it), then stays up.
        "client": {"command": ["/bin/sh", "-c", f"{PYTHON} -c \"import socket; "
                               f"socket.create_connection(('127.0.0.1', {port}))\" && "
                               "exec sleep 1000"],
                   "after": {"web": "ready"}, "restart": NEVER},
    }}}}
    running = run_until(corral, config, lambda s: s["g/client"]["state"] == "running",
                        "client started")
    statuses = status_json(corral)
    assert statuses["g/web"]["readiness_kind"] == "tcp"
    assert statuses["g/client"]["restarts"] == 0  # it connected at its first start
    result = stop(running)
    refused = [e for e in result.events.of_task("web", "probe_failed")]
    assert refused and f"connect 127.0.0.1:{port}: Connection refused" in refused[0]["message"]


def test_an_http_probe_fails_on_a_4xx_and_passes_with_its_header(corral):
    port, other = free_port(), free_port()
    config = {"groups": {"g": {"tasks": {
        "server": {"command": [PYTHON, "-c", HEADER_SERVER, str(port)],
                   "readiness": {"http": {"port": port, "path": "/health",
                                          "headers": {"X-Probe": "yes"}},
                                 "interval": "100ms"}},
        "plain": {"command": http_server(other),
                  "health": {"http": {"port": other, "path": "/missing"},
                             "interval": "200ms", "failures": 100}},
    }}}}
    running = run_until(corral, config,
                        lambda s: s["g/server"]["ready"] and
                        (s["g/plain"]["probes"]["health"] or {}).get("last_result") ==
                        "HTTP 404", "the server ready, and plain's probe answered 404")
    health = status_json(corral)["g/plain"]["probes"]["health"]
    assert health["passed"] is False and health["last_result"] == "HTTP 404", health
    result = stop(running)
    assert not result.events.of_task("plain", "healthy")


def test_a_unix_probe_reaches_a_socket_only_the_task_s_mount_namespace_has(corral, tmp_path):
    hidden = tmp_path / "hidden"
    path = f"{hidden}/app.sock"
    config = {"groups": {"g": {"tasks": {"app": {
        "command": [PYTHON, "-c", UNIX_SERVER, path],
        "isolation": {"namespaces": ["mount"],
                      "mounts": [{"type": "tmpfs", "target": str(hidden)}]},
        "readiness": {"unix": path, "interval": "100ms"},
    }}}}}
    running = run_until(corral, config, lambda s: s["g/app"]["ready"], "app ready")
    assert not os.path.exists(path)  # only inside the task, on its tmpfs
    stop(running)


def test_a_tcp_probe_of_a_task_with_its_own_network_uses_its_loopback(corral):
    port = free_port()
    config = {"groups": {"g": {"tasks": {"app": {
        "command": http_server(port),
        "isolation": {"network": {"mode": "none"}},
        "readiness": {"tcp": port, "interval": "100ms"},
        "health": {"http": {"port": port}, "interval": "200ms"},
    }}}}}
    running = run_until(corral, config,
                        lambda s: s["g/app"]["ready"] and
                        (s["g/app"]["probes"]["health"] or {}).get("passed"),
                        "ready and healthy inside its own namespace")
    # corral's own loopback has nothing there.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    result = stop(running)
    assert len(result.events.of_task("app", "healthy")) == 1


def test_an_http_probe_of_a_bridge_task(corral, tmp_path):
    port = free_port()
    config = {"groups": {"g": {"network": BRIDGE, "tasks": {"app": {
        "command": http_server(port, "0.0.0.0"),
        "isolation": {"network": {"mode": "bridge"}},
        "readiness": {"http": {"port": port, "path": "/"}, "interval": "100ms"},
    }}}}}
    running = run_until(corral, config, lambda s: s["g/app"]["ready"], "app ready",
                        wrapper=in_own_netns(tmp_path))
    stop(running, wrapped=True)


def test_a_probe_that_never_answers_times_out(corral):
    # A listener that accepts (the kernel does) and never answers.
    silent = [PYTHON, "-c", "import socket, sys, time\n"
              "s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen()\n"
              "time.sleep(1000)", "0"]
    port = free_port()
    silent[-1] = str(port)
    config = {"groups": {"g": {"tasks": {"app": {
        "command": silent,
        "health": {"http": {"port": port}, "interval": "300ms", "timeout": "200ms",
                   "failures": 100},
    }}}}}
    running = run_until(corral, config,
                        lambda s: (s["g/app"]["probes"]["health"] or {}).get(
                            "last_result", "").startswith("timed out"), "a timeout")
    last = status_json(corral)["g/app"]["probes"]["health"]["last_result"]
    assert last == "timed out after 200ms waiting for the answer", last
    stop(running)


def test_redis_with_sd_notify_on_a_bridge_network_becomes_ready(corral, tmp_path):
    """Its own network namespace cannot reach an abstract NOTIFY_SOCKET:
    it gets a path, and READY=1 comes through."""
    import shutil
    if not shutil.which("redis-server"):
        pytest.skip("redis-server is needed (scripts/install-deps.sh installs it)")
    config = {"groups": {"g": {"network": BRIDGE, "tasks": {
        "redis": {"command": ["redis-server", "--port", "6390", "--supervised", "systemd",
                              "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                  "isolation": {"network": {"mode": "bridge"}},
                  "readiness": {"notify": "systemd", "timeout": "20s"}},
        "client": {"command": ["/bin/sh", "-c", "sleep 1000"], "after": {"redis": "ready"},
                   "restart": NEVER},
        # Says where NOTIFY_SOCKET is (redis rewrites its environment).
        "notifier": {"command": [PYTHON, "-c", NOTIFIER],
                     "isolation": {"network": {"mode": "bridge"}},
                     "readiness": {"notify": "systemd", "timeout": "20s"}},
    }}}}
    running = run_until(corral, config, lambda s: s["g/client"]["state"] == "running",
                        "the client, after redis said READY=1",
                        wrapper=in_own_netns(tmp_path))
    wait_for(lambda: status_json(corral)["g/notifier"]["ready"], what="the notifier")
    path = corral.cli("logs", "g/notifier").stdout.strip()
    assert path.startswith("/"), path  # a path, not @abstract
    result = stop(running, wrapped=True)
    assert result.events.of_task("redis", "ready")[0]["message"] == "ready (READY=1)"
    # The socket and its directory go with corral.
    assert not os.path.exists(path) and not os.path.exists(os.path.dirname(path))


# Says READY=1, then WATCHDOG=1 every 100 ms for `beats` times, then
# nothing; prints its WATCHDOG_USEC first.
WATCHDOG_TASK = r"""
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
path = os.environ["NOTIFY_SOCKET"]
path = "\0" + path[1:] if path.startswith("@") else path
print(os.environ.get("WATCHDOG_USEC"), flush=True)
s.sendto(b"READY=1", path)
for _ in range(int(sys.argv[1])):
    time.sleep(0.1)
    s.sendto(b"WATCHDOG=1", path)
if sys.argv[2] == "trigger":
    s.sendto(b"WATCHDOG=trigger", path)
time.sleep(1000)
"""


def watchdog_task(beats, then="silence"):
    return {"command": [PYTHON, "-c", WATCHDOG_TASK, str(beats), then],
            "readiness": {"notify": "systemd", "watchdog": "400ms"},
            "restart": {"policy": "always", "delay": "100ms"}}


def test_a_missed_watchdog_restarts_the_task_and_one_kept_does_not(corral):
    config = {"groups": {"g": {"tasks": {
        "kept": watchdog_task(1000),
        "missed": watchdog_task(5),
        "triggered": watchdog_task(1, "trigger"),
    }}}}
    running = run_until(corral, config,
                        lambda s: s["g/missed"]["restarts"] >= 1 and
                        s["g/triggered"]["restarts"] >= 1, "missed and triggered restarted")
    statuses = status_json(corral)
    assert statuses["g/kept"]["restarts"] == 0, statuses["g/kept"]
    assert corral.cli("logs", "g/kept").stdout.splitlines()[0] == "400000"  # WATCHDOG_USEC
    result = stop(running)
    missed = result.events.of_task("missed", "unhealthy")
    assert missed[0]["message"] == "watchdog: no WATCHDOG=1 within 400ms: restarting", missed
    triggered = result.events.of_task("triggered", "unhealthy")
    assert triggered[0]["message"] == "watchdog: WATCHDOG=trigger: restarting", triggered


def test_extend_timeout_usec_gives_a_slow_start_more_time(corral):
    slow = r"""
import os, socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
path = "\0" + os.environ["NOTIFY_SOCKET"][1:]
s.sendto(b"EXTEND_TIMEOUT_USEC=2000000", path)
time.sleep(1)
s.sendto(b"READY=1", path)
time.sleep(1000)
"""
    config = {"groups": {"g": {"tasks": {"slow": {
        "command": [PYTHON, "-c", slow],
        "readiness": {"notify": "systemd", "timeout": "500ms"}, "restart": NEVER}}}}}
    running = run_until(corral, config, lambda s: s["g/slow"]["ready"], "ready after 1s")
    result = stop(running)
    assert not result.events.of_task("slow", "not_ready")


def test_start_interval_until_the_first_pass_and_initial_delay(corral):
    port = free_port()
    late_server = ["/bin/sh", "-c", f"sleep 0.5; exec {PYTHON} -m http.server {port} "
                   "--bind 127.0.0.1"]
    failing = {"exec": ["false"], "interval": "200ms", "failures": 1}
    config = {"groups": {"g": {"tasks": {
        # Every 10s, but every 100ms until it first passes.
        "quick": {"command": late_server,
                  "readiness": {"http": {"port": port}, "interval": "10s",
                                "start_interval": "100ms"}},
        # The same failing probe, with and without an hour's initial delay.
        "delayed": {"command": ["sleep", "1000"],
                    "health": {**failing, "initial_delay": "1h"}},
        "undelayed": {"command": ["sleep", "1000"], "health": failing,
                      "restart": {"policy": "always", "delay": "100ms"}},
    }}}}
    running = run_until(corral, config,
                        lambda s: s["g/quick"]["ready"] and s["g/undelayed"]["restarts"] >= 2,
                        "quick ready within seconds, undelayed restarted twice")
    assert status_json(corral)["g/delayed"]["restarts"] == 0
    stop(running)


def test_an_exec_probe_inside_the_task_sees_what_the_task_sees(corral, tmp_path):
    """inside: true runs the probe in the task's namespaces: it finds a file
    on a tmpfs only the task has, which the same probe on the host does
    not."""
    hidden = tmp_path / "hidden"
    probe = ["/bin/sh", "-c", f"test -f {hidden}/ready"]
    task = {"command": ["/bin/sh", "-c", f"touch {hidden}/ready; exec sleep 1000"],
            "isolation": {"namespaces": ["pid", "mount", "net"],
                          "mounts": [{"type": "tmpfs", "target": str(hidden)}]}}
    config = {"groups": {"g": {"tasks": {
        "inside": {**task, "readiness": {"exec": probe, "interval": "100ms", "inside": True}},
        "host": {**task, "readiness": {"exec": probe, "interval": "100ms"}},
    }}}}
    running = run_until(corral, config, lambda s: s["g/inside"]["ready"], "inside ready")
    time.sleep(0.5)
    host = status_json(corral)["g/host"]
    assert not host["ready"], host
    assert host["probes"]["readiness"]["last_result"] == "exited with code 1"
    stop(running)


def test_inside_is_refused_for_a_task_without_namespaces(corral):
    result = corral.check({"groups": {"g": {"tasks": {"a": {
        "command": ["sleep", "1"], "health": {"exec": ["true"], "inside": True}}}}}})
    assert result.returncode == 1
    assert "inside: the task has no namespaces of its own" in result.stderr, result.stderr


def test_a_unix_probe_resolves_symlinks_inside_the_task_s_root(corral, tmp_path):
    """An absolute symlink in a task's rootfs means a path in that root, as
    it does for the task: /run/app.sock -> HOST_PATH must not reach a socket
    only the host has (the task would be marked ready by a server it never
    ran), and /run/inner.sock -> /srv/real.sock reaches ROOTFS/srv/real.sock."""
    root = busybox_root(tmp_path / "rootfs", ["sleep"], directories=("bin", "run", "srv"))
    host_only = tmp_path / "host-only.sock"
    (root / "run" / "app.sock").symlink_to(host_only)
    (root / "run" / "inner.sock").symlink_to("/srv/real.sock")
    listeners = []
    for path in (host_only, root / "srv" / "real.sock"):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen(16)
        listener.setblocking(False)
        listeners.append(listener)
    host_listener = listeners[0]
    isolation = {"rootfs": str(root), "namespaces": ["mount", "pid"]}
    config = {"groups": {"g": {"tasks": {
        "escape": {"command": ["/bin/sleep", "1000"], "isolation": isolation,
                   "readiness": {"unix": "/run/app.sock", "interval": "100ms"}},
        "inner": {"command": ["/bin/sleep", "1000"], "isolation": isolation,
                  "readiness": {"unix": "/run/inner.sock", "interval": "100ms"}},
    }}}}

    def settled(statuses):
        probe = statuses["g/escape"]["probes"]["readiness"] or {}
        return statuses["g/escape"]["ready"] or (
            probe.get("last_result") and statuses["g/inner"]["ready"])

    running = run_until(corral, config, settled, "both probes to have an answer")
    escape = status_json(corral)["g/escape"]
    assert not escape["ready"], escape
    assert escape["probes"]["readiness"]["last_result"] == \
        "/run/app.sock in the task's root: No such file or directory", escape
    with pytest.raises(BlockingIOError):
        host_listener.accept()  # never connected to
    stop(running)
    for listener in listeners:
        listener.close()
