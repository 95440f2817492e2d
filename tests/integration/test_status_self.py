"""`corral status` names corral itself (issue 37, item 3): `--json` has a
top-level `corral` object with the pid of the process that runs the loop,
its version, when it started, and how often it was upgraded or restored;
the table shows it in one line above the groups. An upgrade keeps the pid
and the start and counts one upgrade."""

import json
import time

from conftest import sh, wait_for

IDLE = {"groups": {"g": {"tasks": {"app": {"command": sh("exec sleep 1000")}}}}}


def self_of(corral):
    result = corral.cli("status", "--json")
    assert result.returncode == 0, result
    reply = json.loads(result.stdout)
    assert reply["ok"] is True and [g["name"] for g in reply["groups"]] == ["g"], reply
    return reply["corral"]


def test_status_json_names_corral_and_the_table_shows_it(corral):
    before = time.time()
    running = corral.start(IDLE)
    corral.wait_control(running)
    version = corral.cli("--version").stdout.split()[1]
    me = self_of(corral)
    assert me["pid"] == running.popen.pid, me
    assert me["version"] == version, me
    assert before - 1 <= me["started_at"] <= time.time(), me
    assert me["uptime_ms"] >= 0 and me["restores"] == 0 and me["upgrades"] == 0, me
    table = corral.cli("status")
    assert table.returncode == 0, table
    first = table.stdout.splitlines()[0]
    assert first.startswith(f"corral {version}, pid {running.popen.pid}, up "), first
    assert first.endswith(", 0 restores, 0 upgrades"), first
    # Above the groups, apart from them.
    assert table.stdout.splitlines()[1] == "", table.stdout
    assert table.stdout.splitlines()[2].split()[0] == "g", table.stdout


def test_an_upgrade_keeps_the_pid_and_start_and_counts_itself(corral):
    running = corral.start(IDLE)
    corral.wait_control(running)
    first = self_of(corral)
    result = corral.cli("upgrade", timeout=60)
    assert result.returncode == 0, result
    wait_for(lambda: self_of(corral)["upgrades"] == 1, what="the upgraded corral to answer")
    after = self_of(corral)
    assert after["pid"] == first["pid"] == running.popen.pid, (first, after)
    assert after["started_at"] == first["started_at"], (first, after)
    assert after["restores"] == 0, after
    assert corral.cli("status").stdout.splitlines()[0].endswith(", 0 restores, 1 upgrade")
