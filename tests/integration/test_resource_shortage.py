"""A start that finds corral short of a resource (clone fails with EAGAIN
under pids.max, EMFILE, ENFILE, ENOMEM) is the machine's state, not the
task's failure: it is tried again with back-off, said once per task and
then summed up at most every 5 s, and it is never counted against the
restart policy (issue "Speed where users feel
it", section 4). Asserted with corral in a pids cgroup of the test's own
whose pids.max is lowered to what runs."""

import os
import resource
import subprocess
import signal
import uuid
from pathlib import Path

import pytest

from conftest import sh, wait_for

PIDS = Path("/sys/fs/cgroup/pids")


@pytest.fixture
def pids_cgroup():
    if not (PIDS / "cgroup.procs").exists():
        pytest.skip("no v1 pids hierarchy (the VM tests cover pure cgroup v2)")
    path = PIDS / f"corral-test-{uuid.uuid4().hex[:8]}"
    path.mkdir()
    yield path
    (path / "pids.max").write_text("max")
    for root, _, _ in sorted(os.walk(path), key=lambda entry: -len(entry[0])):
        try:
            os.rmdir(root)
        except OSError:
            pass


def test_a_start_short_of_processes_is_retried_not_failed(corral, pids_cgroup, tmp_path):
    config = {"groups": {"g": {"tasks": {
        "keeper": {"command": sh("exec sleep 1000")},
        # restart: never, so one counted failure would be final.
        "late": {"command": sh(f"touch {tmp_path / 'ran'}; exec sleep 1000"),
                 "autostart": False, "restart": {"policy": "never"}},
    }}}}
    join = ["/bin/sh", "-c", f'echo $$ > {pids_cgroup}/cgroup.procs && exec "$@"', "join"]
    running = corral.start(config, wrapper=join)
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/keeper")["state"] == "running", what="keeper")

    # Nothing more may be forked in corral's cgroup: the start's clone fails.
    (pids_cgroup / "pids.max").write_text((pids_cgroup / "pids.current").read_text())
    # The CLI runs outside the cgroup, so it still can.
    assert corral.cli("start", "g/late").returncode == 0
    # The first put-off is the task's own event, saying what and that it
    # is retried; the retries after it are summed up in one line at most
    # every 5 s, not said each (a line per retry was 13,915 lines in 45 s
    # with 10,000 tasks).
    summary = "corral: 1 task waits for a resource (last: "
    wait_for(lambda: summary in running.stderr_text(), timeout=30,
             what="the summary of the retries")
    said = [e["message"] for e in running.events().of_task("late", "start_failed")]
    assert len(said) == 1, said
    assert "Resource temporarily unavailable" in said[0], said
    assert "trying again in 100ms, then up to every 5s until it starts" in said[0], said
    line = next(line for line in running.stderr_text().splitlines() if summary in line)
    assert "Resource temporarily unavailable); " in line and " failed in the last " in line \
        and "; the next in " in line, line
    # No line of its own for the task's later retries: one per event.
    assert running.stderr_text().count("g/late: ") == \
        len(list(running.events().of_task("late"))), running.stderr_text()
    late = corral.task_status("g/late")
    assert late["state"] == "pending" and not late["failed"], late
    assert late["next_restart_in_ms"] is not None, late

    (pids_cgroup / "pids.max").write_text("max")
    wait_for(lambda: (tmp_path / "ran").exists(), timeout=30,
             what="the start once processes are there")
    wait_for(lambda: "corral: no task waits for a resource any more: 1 started after waiting"
             in running.stderr_text(), what="the line that the wait is over")
    late = corral.task_status("g/late")
    assert late["state"] == "running" and late["restarts"] == 0, late
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_check_and_run_say_when_the_config_needs_more_fds_than_allowed(corral):
    """100 tasks need about 3 fds each, and their group 2; under RLIMIT_NOFILE 256 both
    commands say so up front, with the figures and what to do; `check`
    still passes the config (it is valid), and 30 tasks raise nothing."""
    def tasks(count):
        return {"groups": {"g": {"tasks": {f"t{i}": {"command": sh("exit 0"),
                                                     "restart": {"policy": "never"}}
                                           for i in range(count)}}}}

    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    big = corral.config(tasks(100))
    check = subprocess.run([str(corral.binary), "check", str(big)], capture_output=True,
                           text=True, env=corral.env(), preexec_fn=low_limit, timeout=30)
    assert check.returncode == 0, check
    assert "ok (1 group, 100 tasks)" in check.stdout
    assert ("warning: 100 tasks need about 366 fds, and RLIMIT_NOFILE allows 256 "
            "(its hard limit): some would fail to start; raise the limit") in check.stderr, \
        check.stderr
    run = subprocess.run([str(corral.binary), "run", str(big)], capture_output=True, text=True,
                         env=corral.env(), preexec_fn=low_limit, timeout=60)
    assert "corral: warning: 100 tasks need about 366 fds" in run.stderr, run.stderr

    small = corral.config(tasks(30))
    check = subprocess.run([str(corral.binary), "check", str(small)], capture_output=True,
                           text=True, env=corral.env(), preexec_fn=low_limit, timeout=30)
    assert check.returncode == 0 and "warning" not in check.stderr, check
