"""The loop process' side of corral's keeper (docs/architecture.md, "corral
outlives its own death"), with the test as the keeper: corral started with
$CORRAL_KEEPER_FD sends each task's output pipe's read end when the task is
made and its pidfd at each start (SCM_RIGHTS on a SOCK_SEQPACKET
socketpair), and drops the pidfd when the run ends. What comes is the
task's very pipe and process, seen from /proc."""

import array
import os
import signal
import socket
import struct

from conftest import sh, wait_for

MESSAGE = struct.Struct("<IIIIii")  # kind, slot, roles, drop, pid, status
HOLD = 1
PIDFD, OUTPUT = 1 << 0, 1 << 1


def receive(keeper):
    """(kind, slot, roles, drop), fds of the next message."""
    keeper.settimeout(60)
    data, ancillary, _, _ = keeper.recvmsg(MESSAGE.size, socket.CMSG_SPACE(8 * 4))
    fds = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.extend(array.array("i", payload[:len(payload) - len(payload) % 4]))
    assert len(data) == MESSAGE.size, data
    return MESSAGE.unpack(data)[:4], fds


def pid_behind(pidfd):
    with open(f"/proc/self/fdinfo/{pidfd}") as info:
        for line in info:
            if line.startswith("Pid:"):
                return int(line.split()[1])
    raise AssertionError(f"fd {pidfd} is not a pidfd")


def test_the_loop_tells_its_keeper_each_tasks_pipe_and_pidfd(corral):
    keeper, loop_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    config = {"groups": {"g": {"tasks": {"app": {
        "command": sh("while :; do echo tick; sleep 0.2; done"),
        "restart": {"policy": "always", "delay": "100ms"}}}}}}
    # The channel is corral's stdin (fd 0): the one fd a test can give.
    running = corral.start(config, stdin=loop_end.fileno(),
                           env={"CORRAL_KEEPER_FD": "0", "CORRAL_KEEPER_FDS": "",
                                "CORRAL_RESTORES": "0"})
    loop_end.close()
    held = []
    try:
        corral.wait_control(running)
        (kind, slot, roles, drop), fds = receive(keeper)
        held += fds
        assert (kind, roles, drop, len(fds)) == (HOLD, OUTPUT, 0, 1)
        assert slot >= 1
        (kind, pid_slot, roles, drop), fds = receive(keeper)
        held += fds
        assert (kind, pid_slot, roles, len(fds)) == (HOLD, slot, PIDFD, 1)
        wait_for(lambda: corral.task_status("g/app").get("pid"), what="app's pid")
        pid = corral.task_status("g/app")["pid"]
        assert pid_behind(fds[0]) == pid
        # The read end the keeper got is the task's stdout pipe.
        assert os.fstat(held[0]).st_ino == os.stat(f"/proc/{pid}/fd/1").st_ino
        # Killed: the run's pidfd is dropped, the next run's comes.
        os.kill(pid, signal.SIGKILL)
        (kind, drop_slot, roles, drop), fds = receive(keeper)
        assert (kind, drop_slot, roles, drop, fds) == (HOLD, slot, 0, PIDFD, [])
        (kind, pid_slot, roles, drop), fds = receive(keeper)
        held += fds
        assert (kind, pid_slot, roles, len(fds)) == (HOLD, slot, PIDFD, 1)
        wait_for(lambda: corral.task_status("g/app").get("pid") not in (None, pid),
                 what="the next run")
        assert pid_behind(fds[0]) == corral.task_status("g/app")["pid"]
        assert corral.status()["groups"][0]["tasks"][0]["restarts"] == 1
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
