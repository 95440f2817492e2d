"""Usage (CPU, memory, pids) in status replies (docs/control-protocol.md):
a reply about one task reads the task's cgroup now, unless its last
reading is younger than the freshness window (250 ms), which it then
serves with its age; a reply about many
reads no cgroup file, however old the readings: it serves each task's
last reading with its age (`usage.age_ms`), or null figures and a null
age when there is none since the task's run began, and the readings it
found stale or missing are read once that reply is out.

A task that burns CPU shows which reading a reply carries: a fresh one
has grown since the last, a cached one has not."""

import signal
import time

import pytest

from conftest import sh, wait_for

UNIFIED_PROCS = "/sys/fs/cgroup/unified/cgroup.procs"
FRESH_MS = 250  # TASK_USAGE_FRESH_MS: the oldest reading a one-task reply serves
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
    # The list replies of start_running had the task read: that reading
    # may be served, if it is recent enough.
    first = usage_of(corral.status("g/burn"), "g/burn")
    assert 0 <= first["age_ms"] <= FRESH_MS and first["cpu_usec"] is not None, first
    # A one-task reply past the window is a new reading: the burning
    # task's CPU grows.
    grown = wait_for(lambda: (u := usage_of(corral.status("g/burn"), "g/burn"))
                     ["cpu_usec"] > first["cpu_usec"] and u, what="the CPU figure to grow")
    assert grown["age_ms"] == 0, grown
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def figures(usage):
    return {key: value for key, value in usage.items() if key != "age_ms"}


def test_one_task_status_serves_a_reading_younger_than_the_window(corral):
    running = start_running(corral, {"burn": BURN})
    time.sleep(2 * FRESH_MS / 1000)  # past the window of any reading so far
    reading = usage_of(corral.status("g/burn"), "g/burn")
    assert reading["age_ms"] == 0, reading  # read for this reply
    # One-task replies 10 ms apart for a second: each is the last reading,
    # served with a growing age no older than the window, or a new one
    # (age 0, the CPU burnt since) once the last is too old. No speed is
    # assumed: on a busy machine every reply may be a new reading, so the
    # loop only counts how many of each it saw.
    served, readings = 0, 1
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        time.sleep(0.01)
        usage = usage_of(corral.status("g/burn"), "g/burn")
        assert 0 <= usage["age_ms"] <= FRESH_MS, usage
        # 10 ms after the last reply, a served reading is at least 10 ms old.
        if usage["age_ms"] == 0:
            assert usage["cpu_usec"] >= reading["cpu_usec"], (reading, usage)
            reading, readings = usage, readings + 1
        else:
            # Served from the cache: the same figures, older than before.
            assert figures(usage) == figures(reading), (reading, usage)
            assert usage["age_ms"] > reading["age_ms"], (reading, usage)
            reading, served = usage, served + 1
    # A second of calls spans several windows: new readings were made.
    assert readings >= 2, (readings, served)
    assert served >= 1, (readings, served)  # some replies came within the window
    # Past the window, the next one-task reply reads again.
    time.sleep(2 * FRESH_MS / 1000)
    after = usage_of(corral.status("g/burn"), "g/burn")
    assert after["age_ms"] == 0 and after["cpu_usec"] > reading["cpu_usec"], (reading, after)
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def assert_served_or_unread(usage):
    """A list reply's usage: a reading with its age, or none at all."""
    if usage["age_ms"] is None:
        assert all(usage[key] is None for key in
                   ("cpu_usec", "memory_bytes", "memory_peak_bytes", "pids")), usage
    else:
        assert isinstance(usage["age_ms"], int) and usage["age_ms"] >= 0, usage


def test_a_status_of_many_tasks_serves_the_last_reading_with_its_age(corral):
    running = start_running(corral, {"burn": BURN, "idle": IDLE})
    # A one-task reply reads now and keeps the reading; the list reply
    # after it serves that reading (the same CPU figure, though the task
    # burns on) and says how old it is.
    fresh = usage_of(corral.status("g/burn"), "g/burn")
    listed = corral.status()
    served = usage_of(listed, "g/burn")
    assert served["cpu_usec"] == fresh["cpu_usec"], (fresh, served)
    assert isinstance(served["age_ms"], int) and served["age_ms"] >= 0, served
    # Every task of a list reply carries its age, with the other fields as
    # before.
    idle = usage_of(listed, "g/idle")
    assert set(idle) == {"cgroup", "cpu_usec", "memory_bytes", "memory_peak_bytes",
                         "memory_limit_bytes", "pids", "age_ms"}, idle
    assert idle["cgroup"].endswith("/g/idle"), idle
    assert_served_or_unread(idle)
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_stale_readings_are_read_again_after_the_reply(corral):
    running = start_running(corral, {"burn": BURN})
    fresh = usage_of(corral.status("g/burn"), "g/burn")
    time.sleep(1.2)  # past the refresh age (1 s): the next list reply finds it stale
    stale = usage_of(corral.status(), "g/burn")
    assert stale["cpu_usec"] == fresh["cpu_usec"] and stale["age_ms"] >= 1200, (fresh, stale)
    # That reply queued a new reading, made once it was out: later list
    # replies serve it, with the CPU burnt since.
    newer = wait_for(lambda: (u := usage_of(corral.status(), "g/burn"))
                     ["cpu_usec"] > stale["cpu_usec"] and u, what="a newer reading")
    assert newer["age_ms"] >= 0, newer
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_list_after_a_quiet_spell_serves_the_old_reading_then_a_new_one(corral):
    # Before, a reading over 5 s old was read during the reply: a list of
    # 1000 tasks after a quiet spell waited for 4000 file reads. Now the
    # reply serves the old reading and says how old, whatever its age.
    running = start_running(corral, {"burn": BURN})
    fresh = usage_of(corral.status("g/burn"), "g/burn")
    time.sleep(6)  # nobody asks: nothing is read
    old = usage_of(corral.status(), "g/burn")
    assert old["cpu_usec"] == fresh["cpu_usec"], (fresh, old)  # not read: the task burnt on
    assert old["age_ms"] >= 6000, old
    # The reply had it read once it was out: the next ones serve that.
    newer = wait_for(lambda: (u := usage_of(corral.status(), "g/burn"))
                     ["cpu_usec"] > old["cpu_usec"] and u, what="a newer reading")
    assert newer["age_ms"] < old["age_ms"], (old, newer)
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_many_tasks_are_read_in_batches_until_each_has_a_reading(corral):
    # 150 tasks: many batches (16 a turn of the loop). The list
    # replies meanwhile serve what there is; in the end every task has a
    # reading, though no request was about one task.
    tasks = {f"t{i:03}": IDLE for i in range(150)}
    running = corral.start({"groups": {"g": {"tasks": tasks}}})
    corral.wait_control(running)

    def every_task_read():
        reply = corral.status()
        usages = [entry["usage"] for entry in reply["groups"][0]["tasks"]]
        for usage in usages:
            if usage is not None:  # null: no cgroup yet (not started)
                assert_served_or_unread(usage)
        return all(u is not None and u["age_ms"] is not None and u["cpu_usec"] is not None
                   for u in usages)

    wait_for(every_task_read, what="a reading of every task")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
