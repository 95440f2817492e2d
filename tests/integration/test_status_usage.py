"""Usage (CPU, memory, pids) in status replies (docs/control-protocol.md):
a reply about one task reads the task's cgroup now; a reply about many
serves each task's last reading with its age (`usage.age_ms`), and
readings found stale are read again once that reply is out.

A task that burns CPU shows which reading a reply carries: a fresh one
has grown since the last, a cached one has not."""

import signal
import time

import pytest

from conftest import sh, wait_for

UNIFIED_PROCS = "/sys/fs/cgroup/unified/cgroup.procs"
BURN = {"command": sh("while :; do :; done"), "restart": {"policy": "never"}}
IDLE = {"command": ["sleep", "1000"], "restart": {"policy": "never"}}

pytestmark = pytest.mark.skipif(
    not __import__("os").path.exists(UNIFIED_PROCS),
    reason="needs the writable v2 tree of our hybrid hosts (cpu.stat in each leaf)",
)


def usage_of(reply, task):
    for group in reply["groups"]:
        for entry in group["tasks"]:
            if entry["task"] == task:
                return entry["usage"]
    raise AssertionError(f"no task {task} in {reply}")


def start_running(corral, tasks):
    running = corral.start({"groups": {"g": {"tasks": tasks}}})
    corral.wait_control(running)
    names = [f"g/{name}" for name in tasks]
    wait_for(lambda: all(corral.task_status(n)["state"] == "running" for n in names),
             what="the tasks running")
    return running


def test_one_task_status_reads_usage_now(corral):
    running = start_running(corral, {"burn": BURN})
    first = usage_of(corral.status("g/burn"), "g/burn")
    assert first["age_ms"] == 0 and first["cpu_usec"] is not None, first
    # Each one-task reply is a new reading: the burning task's CPU grows.
    grown = wait_for(lambda: (u := usage_of(corral.status("g/burn"), "g/burn"))
                     ["cpu_usec"] > first["cpu_usec"] and u, what="the CPU figure to grow")
    assert grown["age_ms"] == 0, grown
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_status_of_many_tasks_serves_the_last_reading_with_its_age(corral):
    running = start_running(corral, {"burn": BURN, "idle": IDLE})
    # A one-task reply reads now and keeps the reading; the list reply
    # after it serves that reading (the same CPU figure, though the task
    # burns on) and says how old it is. A reading older than 5 s would be
    # read anew (age 0): a machine that stalls that long between two
    # requests gets another try.
    for _ in range(5):
        fresh = usage_of(corral.status("g/burn"), "g/burn")
        listed = corral.status()
        served = usage_of(listed, "g/burn")
        if served["age_ms"] > 0 or served["cpu_usec"] == fresh["cpu_usec"]:
            break
    assert served["cpu_usec"] == fresh["cpu_usec"], (fresh, served)
    assert isinstance(served["age_ms"], int) and served["age_ms"] >= 0, served
    # Every task of a list reply carries its age, with the other fields as
    # before.
    idle = usage_of(listed, "g/idle")
    assert set(idle) == {"cgroup", "cpu_usec", "memory_bytes", "memory_peak_bytes", "pids",
                         "age_ms"}, idle
    assert idle["cgroup"].endswith("/g/idle") and idle["age_ms"] >= 0, idle
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_stale_readings_are_read_again_after_the_reply(corral):
    running = start_running(corral, {"burn": BURN})
    fresh = usage_of(corral.status("g/burn"), "g/burn")
    time.sleep(1.2)  # past the refresh age (1 s): the next list reply finds it stale
    stale = usage_of(corral.status(), "g/burn")
    assert stale["age_ms"] == 0 or stale["cpu_usec"] == fresh["cpu_usec"], (fresh, stale)
    # That reply queued a new reading, made once it was out: later list
    # replies serve it, with the CPU burnt since.
    newer = wait_for(lambda: (u := usage_of(corral.status(), "g/burn"))
                     ["cpu_usec"] > stale["cpu_usec"] and u, what="a newer reading")
    assert newer["age_ms"] >= 0, newer
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
