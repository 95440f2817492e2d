"""`podman run --sdnotify=container` (quadlet's `Notify=true`): podman
hands the container a notify socket, and corral, PID 1 there, says
READY=1 on it once its tasks are ready (docs/systemd.md). podman passes
that READY=1 on to its own NOTIFY_SOCKET (systemd's, in a unit; a socket
of the test's here), after its MAINPID=, so that a unit of Type=notify
running podman becomes active only when corral's tasks are ready.

What podman 4.3 with runc does, as found here: `podman run -d` returns at
once (conmon relays the socket; it does not wait for READY=1), `podman
inspect` says "running" from the start, and only READY=1 is relayed:
corral's STATUS= lines and STOPPING=1 stay inside."""

import os
import socket
import subprocess

from conftest import IMAGE, unique, wait_for

CORRAL = "/usr/local/bin/corral"


def received(parent):
    messages = []
    while True:
        try:
            messages.append(parent.recv(4096).decode())
        except BlockingIOError:
            return messages


def test_podman_relays_ready_only_once_corrals_tasks_are_ready(podman, tmp_path):
    gate = tmp_path / "gate"
    gate.mkdir()
    parent = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    parent.bind(str(tmp_path / "notify.sock"))
    parent.setblocking(False)
    name = unique("sdnotify")
    env = dict(os.environ, CONTAINERS_CONF=str(podman.conf),
               NOTIFY_SOCKET=str(tmp_path / "notify.sock"))
    try:
        subprocess.run(podman.base + [
            "run", "-d", "--sdnotify=container", "--name", name, "--network", "none",
            "-v", f"{gate}:/gate", IMAGE, CORRAL, "run", "/cases/gated.yaml",
        ], env=env, check=True, capture_output=True, timeout=120)
        podman.started_pids.append(podman.host_pid(name))

        # corral runs its task, which is not ready: podman said MAINPID=
        # (conmon's), and no READY=1 came through.
        wait_for(lambda: (gate / "up").exists(), what="the task to start")
        messages = received(parent)
        assert any(m.startswith("MAINPID=") for m in messages), messages
        assert not any("READY=1" in m for m in messages), messages

        (gate / "go").touch()
        messages += wait_for(lambda: received(parent), what="READY=1 relayed by podman")
        assert "READY=1" in messages[-1], messages
    finally:
        parent.close()

    # podman gave corral NOTIFY_SOCKET (corral's environment as it was
    # exec'd); corral kept it to itself.
    given = podman("exec", name, "/bin/sh", "-c", "tr '\\0' '\\n' < /proc/1/environ").stdout
    assert "NOTIFY_SOCKET=" in given, given
    seen = dict(line.split("=", 1) for line in (gate / "env").read_text().splitlines()
                if "=" in line)
    assert "NOTIFY_SOCKET" not in seen, seen
    assert podman("exec", name, CORRAL, "status", "--ready").returncode == 0
    podman("stop", "--time", "30", name)
