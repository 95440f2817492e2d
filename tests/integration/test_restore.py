"""corral outlives its own death (docs/reliability.md, "kill -9 of corral"):
with `corral run --keeper`, the process the parent started is the keeper and
the loop is its child. kill -9 of the loop costs no task, no line and no
count: the keeper starts a new loop, which takes every task back from the
records the keeper held (their state and the very fds: pidfds, output
pipes with the bytes in them, listening sockets)."""

import json
import os
import re
import signal
import socket
import struct
import time

from pathlib import Path

from conftest import children_of, sh, wait_for
from helpers_http import http_config, listen_text, request, samples, value
from helpers_net import free_port

UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc"]

WRITER = sh('i=0; while :; do i=$((i+1)); echo "line $i"; sleep 0.02; done')


def start_time(pid):
    """The process' start time (/proc/PID/stat field 22): the same process,
    not another one on a reused pid."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return int(text[text.rindex(")") + 2:].split()[19])


def child_pids(pid):
    return [child for child, _ in children_of(pid)]


def loop_pid(corral):
    return corral.status()["corral"]["pid"]


def restored(corral, before, count):
    """Waits until a new loop answers, restored `count` times."""

    def answered():
        try:
            own = corral.status()["corral"]
        except (OSError, AssertionError):
            return False
        return own["pid"] != before and own["restores"] == count

    wait_for(answered, timeout=30, what=f"the loop restored ({count})")


def numbers(text, task="g/writer"):
    return [int(m.group(1)) for m in re.finditer(rf"^{task} \| line (\d+)$", text, re.M)]


def assert_in_order_and_never_twice(found, kills=1):
    """Every numbered line once at most, in order; lines lost only in at
    most one run a kill: what a kill caught between corral's read of the
    pipe and its write to stdout (docs/decisions.md, what is lost for
    now)."""
    assert found and found[0] == 1, found[:5]
    assert all(b > a for a, b in zip(found, found[1:])), \
        f"lines doubled or out of order: {[(a, b) for a, b in zip(found, found[1:]) if b <= a][:5]}"
    holes = [(a, b) for a, b in zip(found, found[1:]) if b != a + 1]
    assert len(holes) <= kills, f"lines lost beyond the kills' windows: {holes}"


def test_kill_9_of_the_loop_costs_no_task_no_line_and_no_count(corral):
    config = {"groups": {"g": {"tasks": {
        "writer": {"command": WRITER},
        "quiet": {"command": "sleep 100000"},
        "flaky": {"command": sh("sleep 0.3; exit 3"),
                  "restart": {"policy": "always", "delay": "100ms",
                              "attempts": "unlimited"}}}}}}
    running = corral.start(config, run_args=["--keeper"])
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/flaky")["restarts"] >= 2, timeout=30,
             what="flaky restarted twice")
    keeper, loop = running.pid, loop_pid(corral)
    assert loop != keeper and loop in child_pids(keeper)
    before = {name: corral.task_status(f"g/{name}") for name in ("writer", "quiet")}
    started = {name: start_time(entry["pid"]) for name, entry in before.items()}
    flaky_restarts = corral.task_status("g/flaky")["restarts"]

    os.kill(loop, signal.SIGKILL)
    restored(corral, loop, 1)

    for name, entry in before.items():
        now = corral.task_status(f"g/{name}")
        # The same process (its pid and its start time), still running.
        assert now["pid"] == entry["pid"] and now["state"] == "running", now
        assert start_time(now["pid"]) == started[name]
        assert now["restarts"] == entry["restarts"]
    # Counts go on from where they were, and the restarts go on.
    assert corral.task_status("g/flaky")["restarts"] >= flaky_restarts
    wait_for(lambda: corral.task_status("g/flaky")["restarts"] >= flaky_restarts + 2,
             timeout=30, what="flaky restarted by the new loop")
    own = corral.status()["corral"]
    assert own["restores"] == 1 and own["upgrades"] == 0
    time.sleep(0.3)
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result.stderr
    # Every line the writer wrote, in order and never twice, across the kill.
    assert_in_order_and_never_twice(numbers(result.stdout))
    assert "took back 3 tasks as they were" in result.stderr, result.stderr
    assert "keeper: corral's loop process died by Killed" in result.stderr
    assert len([e for e in result.events if e.get("event") == "restored"]) == 1, result.events
    assert corral.leftovers() == []


def test_a_task_that_ends_after_the_kill_is_told_by_the_keeper(corral):
    """A task taken back is the keeper's child: the keeper reaps it and the
    loop learns its exit status from it."""
    config = {"groups": {"g": {"tasks": {
        "short": {"command": sh("sleep 1.5; exit 7"), "restart": {"policy": "never"}},
        "quiet": {"command": "sleep 100000"}}}}}
    running = corral.start(config, run_args=["--keeper"])
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/short")["state"] == "running", what="short runs")
    loop = loop_pid(corral)
    os.kill(loop, signal.SIGKILL)
    # short fails for good: the group stops, and corral exits with its
    # code, as without a kill. (Not waiting for a status in between: on a
    # loaded machine short may end, and corral with it, before one.)
    result = running.wait()
    assert result.returncode == 7, result.stderr
    assert "took back 2 tasks as they were" in result.stderr, result.stderr
    assert "g/short: exited with code 7" in result.stderr, result.stderr


def test_a_task_being_started_is_handled_as_a_crash(corral):
    """Killed while a task's prestart hook runs (a start corral cannot take
    back as it was): what its cgroup holds is killed and the task starts
    again, once."""
    marks = corral.dir / "marks"
    config = {"groups": {"g": {"tasks": {
        "slow": {"command": sh(f"echo run >> {marks}; exec sleep 100000"),
                 "hooks": [{"name": "slow", "stage": "prestart",
                            "exec": sh(f"echo hook >> {marks}; sleep 3")}]},
        "quiet": {"command": "sleep 100000"}}}}}
    running = corral.start(config, run_args=["--keeper"])
    corral.wait_control(running)
    wait_for(lambda: marks.exists() and "hook" in marks.read_text(), what="the hook runs")
    loop = loop_pid(corral)
    os.kill(loop, signal.SIGKILL)
    restored(corral, loop, 1)
    wait_for(lambda: corral.task_status("g/slow")["state"] == "running", timeout=30,
             what="slow running")
    time.sleep(3)  # the first hook's end, had anything waited for it
    assert marks.read_text().count("run") == 1, marks.read_text()
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result.stderr
    assert re.search(r"g/slow: restore: (not taken back as it was|the keeper holds no record "
                     r"of it)", result.stderr), result.stderr


def test_as_pid_1_the_keeper_stays_and_the_namespace_lives(corral):
    """As PID 1 of a pid namespace (a container), the keeper is PID 1: a
    kill -9 of the loop does not end the namespace."""
    config = {"groups": {"g": {"tasks": {
        "writer": {"command": WRITER},
        "quiet": {"command": "sleep 100000"}}}}}
    running = corral.start(config, wrapper=UNSHARE, run_args=["--keeper"])
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/writer")["state"] == "running", what="writer")
    keeper = child_pids(running.pid)[0]
    assert corral.status()["corral"]["pid"] == 2  # the loop, as the namespace sees it
    quiet = corral.task_status("g/quiet")["pid"]
    loop = child_pids(keeper)
    assert len(loop) == 1
    os.kill(loop[0], signal.SIGKILL)
    wait_for(lambda: corral.status()["corral"]["restores"] == 1, timeout=30,
             what="the restore")
    assert corral.task_status("g/quiet")["pid"] == quiet
    assert running.alive()
    time.sleep(0.3)
    os.kill(keeper, signal.SIGTERM)  # as an engine signals PID 1
    result = running.wait()
    assert result.returncode == 0, result.stderr
    assert_in_order_and_never_twice(numbers(result.stdout))


def test_without_the_option_nothing_changes(corral):
    running = corral.start({"groups": {"g": {"tasks": {"a": {"command": "sleep 1000"}}}}})
    corral.wait_control(running)
    assert corral.status()["corral"]["pid"] == running.pid
    assert child_pids(running.pid) == [corral.task_status("g/a")["pid"]]
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_counters_and_listeners_go_over_an_upgrade_and_a_restore(corral):
    """/metrics' counters and the HTTP listener go on across `corral
    upgrade` and a kill -9 after it: the upgrade hands the keeper's channel
    over, and the records go on under the same slots."""
    address = ("127.0.0.1", free_port())
    config = {"groups": {"g": {"tasks": {
        "quiet": {"command": "sleep 100000"},
        "flaky": {"command": sh("sleep 0.2; exit 3"),
                  "restart": {"policy": "always", "delay": "50ms",
                              "attempts": "unlimited"}}}}}}
    running = corral.start(http_config(config, listen_text(address)), run_args=["--keeper"])
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/flaky")["restarts"] >= 2, timeout=30,
             what="flaky restarted twice")
    quiet = corral.task_status("g/quiet")["pid"]
    upgraded = corral.cli("upgrade", timeout=60)
    assert upgraded.returncode == 0, upgraded.stderr
    loop = loop_pid(corral)
    exits = value(samples(request(address, "/metrics").body), "corral_task_exits_total",
                  group="g", task="flaky", code="3")
    assert exits >= 2
    os.kill(loop, signal.SIGKILL)
    restored(corral, loop, 1)
    assert corral.task_status("g/quiet")["pid"] == quiet
    own = corral.status()["corral"]
    assert (own["upgrades"], own["restores"]) == (1, 1)
    found = samples(request(address, "/metrics").body)
    assert value(found, "corral_task_exits_total", group="g", task="flaky", code="3") >= exits
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result.stderr
    # One record per task with the keeper: exactly the config's two taken back.
    assert "took back 2 tasks as they were" in result.stderr, result.stderr


class NotifyParent:
    """systemd's notify socket, as a test: each datagram with its sender's
    pid (SO_PASSCRED), as systemd's NotifyAccess=main judges it."""

    def __init__(self, path):
        self.path = str(path)
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.socket.bind(self.path)
        self.socket.setblocking(False)
        self.messages = []

    def receive(self):
        while True:
            try:
                data, ancillary, _, _ = self.socket.recvmsg(
                    65536, socket.CMSG_SPACE(struct.calcsize("3i")))
            except BlockingIOError:
                return self.messages
            pid = None
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                    pid = struct.unpack("3i", payload[:12])[0]
            self.messages.append((pid, data.decode()))

    def from_pid(self, pid, text):
        return [m for m in self.receive() if m[0] == pid and text in m[1]]


def test_under_systemd_the_keeper_relays_the_loops_notify_messages(corral, tmp_path):
    """With NotifyAccess=main only the keeper (the unit's MainPID) is heard:
    the loop's READY=1 and STATUS= reach the parent from the keeper's pid,
    again after a restore; what anyone else sends to the relay is dropped."""
    parent = NotifyParent(tmp_path / "notify.sock")
    config = {"groups": {"g": {"tasks": {"quiet": {"command": "sleep 100000"}}}}}
    running = corral.start(config, run_args=["--keeper"],
                           env={"NOTIFY_SOCKET": parent.path})
    corral.wait_control(running)
    keeper = running.pid
    wait_for(lambda: parent.from_pid(keeper, "READY=1"), what="READY=1 from the keeper")
    assert all(pid == keeper for pid, _ in parent.receive()), parent.messages
    # Someone else (this test) sends to the relay: not passed on.
    relay = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    relay.sendto(b"STATUS=forged", f"\0corral-keeper-{keeper}")
    relay.close()
    loop = loop_pid(corral)
    os.kill(loop, signal.SIGKILL)
    restored(corral, loop, 1)
    count = len(parent.from_pid(keeper, "READY=1"))
    wait_for(lambda: len(parent.from_pid(keeper, "READY=1")) > count or
             parent.from_pid(keeper, "STATUS="), what="the new loop's messages")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    wait_for(lambda: parent.from_pid(keeper, "STOPPING=1"), what="STOPPING=1")
    assert not [m for m in parent.receive() if "forged" in m[1]], parent.messages
    assert all(pid == keeper for pid, _ in parent.messages), parent.messages


def test_a_partial_line_is_whole_across_the_kill(corral):
    """A line written in two parts, with corral killed in between: the part
    corral had read went to the keeper with the task's record, and the
    line comes out whole, once."""
    config = {"groups": {"g": {"tasks": {
        "parts": {"command": sh("sleep 0.3; printf 'first half, '; sleep 4; echo 'second half'; "
                                "exec sleep 100000")},
        "quiet": {"command": "sleep 100000"}}}}}
    running = corral.start(config, run_args=["--keeper"])
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/parts")["state"] == "running", what="parts runs")
    time.sleep(0.8)  # its first half read by corral, in a turn of its own
    loop = loop_pid(corral)
    os.kill(loop, signal.SIGKILL)
    restored(corral, loop, 1)
    wait_for(lambda: "second half" in (corral.dir / "corral.stdout").read_text(), timeout=30,
             what="the second half")
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("g/parts | first half, second half\n") == 1, result.stdout


def test_a_big_config_and_many_tasks_are_taken_back(corral):
    """Past what one message to the keeper carries: 600 tasks (19 memfd
    chunks of counts, more fds than a record takes) and a config of over
    200 KB (its text goes to the keeper in a memfd)."""
    lines = ["# " + "x" * 98 for _ in range(2200)]  # 220 KB of comment
    lines += ["groups:", "  g:", "    tasks:"]
    lines += [f"      s{i:03d}: {{command: [sleep, '100000']}}" for i in range(600)]
    running = corral.start("\n".join(lines) + "\n", events=False, run_args=["--keeper"])
    corral.wait_control(running)

    def pids():
        return {t["name"]: t["pid"] for g in corral.status()["groups"] for t in g["tasks"]}

    wait_for(lambda: all(pids().values()), timeout=60, what="600 tasks running")
    before = pids()
    loop = loop_pid(corral)
    os.kill(loop, signal.SIGKILL)
    restored(corral, loop, 1)
    assert pids() == before
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result.stderr[-2000:]
    assert "took back 600 tasks as they were" in result.stderr, result.stderr[-2000:]


def test_followers_follow_again_after_a_restore_and_end_when_corral_stops(corral):
    """`corral logs -f` and `events -f` whose corral's loop is killed follow
    the new loop from after the last item they printed, and say so once
    per restore; when corral stops in order they end at once, exit 0."""
    config = {"groups": {"g": {"tasks": {"writer": {"command": WRITER}}}}}
    running = corral.start(config, run_args=["--keeper"])
    corral.wait_control(running)
    logs = corral.cli_popen("logs", "-f", "g/writer")
    events = corral.cli_popen("events", "-f", "--json")
    time.sleep(0.5)
    for count in (1, 2):
        loop = loop_pid(corral)
        os.kill(loop, signal.SIGKILL)
        restored(corral, loop, count)
        time.sleep(0.5)
    corral.cli("restart", "g/writer")
    time.sleep(0.5)
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    outputs = {}
    for name, follower in (("logs", logs), ("events", events)):
        out, err = follower.communicate(timeout=10)
        assert follower.returncode == 0, err
        assert err.count(b"following again") == 2, err
        outputs[name] = out.decode().splitlines()
    # Lines: each the follower printed once, in order, across both kills
    # and the restart (the writer starts again from 1).
    runs = [[]]
    for line in outputs["logs"]:
        number = int(line.split()[1])
        if runs[-1] and number <= runs[-1][-1]:
            runs.append([])
        runs[-1].append(number)
    assert len(runs) == 2, [run[:3] for run in runs]
    for run in runs:
        assert run == list(range(run[0], run[0] + len(run))), run
    # Events: the restart's once, and each restore's.
    kinds = [json.loads(line)["event"] for line in outputs["events"]]
    assert kinds.count("restart_requested") == 1, kinds
    assert kinds.count("restored") == 2, kinds
