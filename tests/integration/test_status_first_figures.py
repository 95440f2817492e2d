"""The first `corral status` after a start shows CPU, MEM and PIDS (docs/
cli.md, "corral status"): a reply about many tasks reads, within a bound,
the tasks that have no reading yet, instead of showing `-` and asking to
run it again. MEM reads now/limit for a task with a memory limit (the
peak is in --json and under the table of one task), and now alone for
one without.

No request reaches corral before the status under test: the tasks are
known to run from the events file, so no earlier reply had their usage
read."""

import json
import signal

import pytest

from conftest import wait_for

UNIFIED_PROCS = "/sys/fs/cgroup/unified/cgroup.procs"
IDLE = {"command": ["sleep", "1000"], "restart": {"policy": "never"}}
LIMITED = {**IDLE, "resources": {"memory": "64M"}}
MIB = 1 << 20

pytestmark = pytest.mark.skipif(
    not __import__("os").path.exists(UNIFIED_PROCS),
    reason="needs the writable v2 tree of our hybrid hosts (cpu.stat in each leaf)",
)


def start_unasked(corral, tasks):
    """corral running `tasks` in group g, every one started, and its socket
    there, without a single request sent to it."""
    running = corral.start({"groups": {"g": {"tasks": tasks}}})
    wait_for(lambda: sum(e["event"] == "started" for e in running.events()) == len(tasks),
             what="every task started")
    wait_for(corral.socket_path.exists, what="the control socket")
    return running


def table_cells(text):
    """{task: {column: cell}} of the status table (columns by the header's
    positions: cells are left-aligned under their titles)."""
    lines = text.splitlines()
    header = next(line for line in lines if line.strip().startswith("TASK"))
    titles = ["TASK", "STAGE", "STATE", "READY", "HEALTH", "PID", "UPTIME", "CPU", "MEM",
              "PIDS", "RESTARTS", "LAST EXIT", "NEXT RESTART"]
    starts = [header.index(title) for title in titles]
    rows = {}
    for line in lines[lines.index(header) + 1:]:
        if not line.startswith("  ") or not line.strip():
            break
        cells = [line[start:end].strip() for start, end in
                 zip(starts, starts[1:] + [len(line) + 1])]
        rows[cells[0]] = dict(zip(titles, cells))
    return rows


def test_the_first_status_after_a_start_shows_figures(corral):
    running = start_unasked(corral, {"free": IDLE, "limited": LIMITED})
    result = corral.cli("status")
    assert result.returncode == 0, result
    rows = table_cells(result.stdout)
    assert set(rows) == {"free", "limited"}, result.stdout
    # On a hybrid host memory and pids need a limit of theirs (cli.md):
    # CPU is every task's figure.
    for name, row in rows.items():
        assert row["CPU"] != "-", (name, result.stdout)
    assert "run `corral status` again" not in result.stdout, result.stdout
    assert "not read yet" not in result.stdout, result.stdout
    # now/limit with a memory limit: the limit is the config's 64M.
    now, limit = rows["limited"]["MEM"].split("/")
    assert limit == "64.0M" and now[-1] in "BKM", rows["limited"]
    # Without a limit, no second figure that would read like one.
    assert "/" not in rows["free"]["MEM"], rows["free"]
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_json_gives_the_limit_and_the_peak_and_one_task_shows_them(corral):
    running = start_unasked(corral, {"free": IDLE, "limited": LIMITED})
    reply = json.loads(corral.cli("status", "--json").stdout)
    usage = {task["task"]: task["usage"] for task in reply["groups"][0]["tasks"]}
    limited = usage["g/limited"]
    assert limited["age_ms"] is not None and limited["cpu_usec"] is not None, limited
    assert limited["memory_limit_bytes"] == 64 * MIB, limited
    assert limited["memory_peak_bytes"] >= limited["memory_bytes"], limited
    assert usage["g/free"]["memory_limit_bytes"] is None, usage["g/free"]
    detail = corral.cli("status", "g/limited")
    assert detail.returncode == 0, detail
    line = next(line for line in detail.stdout.splitlines()
                if line.startswith("g/limited memory: "))
    assert line.endswith(" peak, 64.0M limit") and " now, " in line, line
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
