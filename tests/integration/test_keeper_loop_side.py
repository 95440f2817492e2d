"""The loop process' side of corral's keeper (docs/decisions.md, "corral
outlives its own death"), with the test as the keeper: corral started with
$CORRAL_KEEPER_FD sends each task's record when its state changes: a small
hand-over document of its state and the fds it names (SCM_RIGHTS on a
SOCK_SEQPACKET socketpair), each with its number in corral. What comes is
the task's very pipe and process, seen from /proc."""

import array
import json
import os
import signal
import socket
import struct

from conftest import sh, wait_for

HEADER = struct.Struct("<IIIIii")  # kind, slot, fd count, length, pid, status
RECORD = 1


def receive(keeper):
    """(kind, slot), the numbers, the fds and the state of the next message."""
    keeper.settimeout(60)
    data, ancillary, _, _ = keeper.recvmsg(256 * 1024, socket.CMSG_SPACE(16 * 4))
    fds = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.extend(array.array("i", payload[:len(payload) - len(payload) % 4]))
    kind, slot, count, length, _, _ = HEADER.unpack(data[:HEADER.size])
    numbers = list(struct.unpack(f"<{count}i", data[HEADER.size:HEADER.size + 4 * count]))
    body = data[HEADER.size + 4 * count:]
    assert len(body) == length and len(fds) == count, (len(body), length, fds, count)
    state = None
    if length:
        text_length = int.from_bytes(body[:8], "little")
        state = json.loads(body[8:8 + text_length])
    return (kind, slot), numbers, fds, state


def task_record(keeper, name, held):
    """The next record of task `name` (corral's own ones are skipped)."""
    while True:
        (kind, slot), numbers, fds, state = receive(keeper)
        held += fds
        if kind == RECORD and state and state.get("name") == name:
            return slot, dict(zip(numbers, fds)), state


def pid_behind(pidfd):
    with open(f"/proc/self/fdinfo/{pidfd}") as info:
        for line in info:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    raise AssertionError(f"fd {pidfd} is not a pidfd")


def test_the_loop_sends_its_keeper_each_tasks_state_and_fds(corral):
    keeper, loop_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    config = {"groups": {"g": {"tasks": {"app": {
        "command": sh("while :; do echo tick; sleep 0.2; done"),
        "restart": {"policy": "always", "delay": "100ms"}}}}}}
    # The channel is corral's stdin (fd 0): the one fd a test can give.
    running = corral.start(config, stdin=loop_end.fileno(),
                           env={"CORRAL_KEEPER_FD": "0", "CORRAL_RESTORES": "0"})
    loop_end.close()
    held = []
    try:
        corral.wait_control(running)
        wait_for(lambda: corral.task_status("g/app").get("pid"), what="app's pid")
        pid = corral.task_status("g/app")["pid"]
        while True:
            slot, fds, state = task_record(keeper, "g/app", held)
            if state["pid"] == pid:
                break
        assert slot >= 2  # 0 and 1 are corral's own
        # The record names its pidfd and output pipe by corral's numbers;
        # what came under them is that very process and pipe.
        assert pid_behind(fds[state["pidfd"]]) == pid
        output = fds[state["output"]["fd"]]
        assert os.fstat(output).st_ino == os.stat(f"/proc/{pid}/fd/1").st_ino
        assert state["runner"]["restart_count"] == 0
        # Killed: the next run's record comes, under the same slot, with
        # its own pidfd and the count.
        os.kill(pid, signal.SIGKILL)
        wait_for(lambda: corral.task_status("g/app").get("pid") not in (None, pid),
                 what="the next run")
        new_pid = corral.task_status("g/app")["pid"]
        while True:
            next_slot, fds, state = task_record(keeper, "g/app", held)
            if state["pid"] == new_pid:
                break
        assert next_slot == slot
        assert pid_behind(fds[state["pidfd"]]) == new_pid
        assert state["runner"]["restart_count"] == 1
    finally:
        for fd in held:
            os.close(fd)
        running.send(signal.SIGTERM)
        running.wait()
        keeper.close()


def test_a_wrong_keeper_variable_is_said_and_corral_runs_without_one(corral):
    running = corral.start({"groups": {"g": {"tasks": {"app": {"command": "sleep 1000"}}}}},
                           env={"CORRAL_KEEPER_FD": "999", "CORRAL_RESTORES": "0"})
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/app")["state"] == "running", what="app running")
    # Not handed to the task either.
    pid = corral.task_status("g/app")["pid"]
    with open(f"/proc/{pid}/environ", "rb") as environ:
        assert b"CORRAL_KEEPER" not in environ.read()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    said = (corral.dir / "corral.stderr").read_text()
    assert 'no keeper: CORRAL_KEEPER_FD: "999" is not an open fd' in said, said
