"""What an idle task costs corral in fds (issue 16 section 3): its pidfd and
its output pipe's read end. The pipe's write end is opened again for each
spawn and hook and closed once the process has it, the cgroup's directory
only for a spawn or a kill, cgroup.events only while what a run left
behind is killed. Counted as the difference between a corral with 1 idle
task and one with 21, so that corral's own fds cancel out. And the pipe
still carries what every run and hook writes."""

import signal

import pytest

from conftest import fd_targets, sh, wait_for


def idle_tasks(count, extra=None):
    task = {"command": ["sleep", "1000"], "restart": {"policy": "never"}, **(extra or {})}
    return {"groups": {"g": {"tasks": {f"t{i:02d}": dict(task) for i in range(count)}}}}


def fds_of(pid):
    """corral's fds by what they point at."""
    kinds = {"pipe": 0, "pidfd": 0, "cgroup": 0, "other": 0}
    for target in fd_targets(pid):
        if target.startswith("pipe:"):
            kinds["pipe"] += 1
        elif target == "anon_inode:[pidfd]":
            kinds["pidfd"] += 1
        elif target.startswith("/sys/fs/cgroup"):
            kinds["cgroup"] += 1
        else:
            kinds["other"] += 1
    return kinds


def fds_with_idle_tasks(corral, count, extra=None):
    running = corral.start(idle_tasks(count, extra))
    try:
        wait_for(lambda: len([e for e in running.events() if e["event"] == "started"]) == count,
                 timeout=30, what=lambda: running.stderr_text())
        return fds_of(running.pid)
    finally:
        running.send(signal.SIGTERM)
        assert running.wait().returncode == 0


@pytest.mark.parametrize("streams,most", [("merged", 2), ("separate", 3)])
def test_an_idle_task_holds_its_pidfd_and_the_read_ends_of_its_pipes(corral, streams, most):
    extra = {"log": {"streams": "separate"}} if streams == "separate" else None
    one = fds_with_idle_tasks(corral, 1, extra)
    many = fds_with_idle_tasks(corral, 21, extra)
    per_task = {kind: (many[kind] - one[kind]) / 20 for kind in one}
    assert sum(per_task.values()) <= most, (one, many)
    assert per_task["pidfd"] == 1 and per_task["pipe"] == most - 1, (one, many)
    assert per_task["cgroup"] == 0, (one, many)


def test_each_run_and_hook_still_writes_to_the_task_pipe(corral, tmp_path):
    """corral holds no write end between runs: three runs, and a prestart
    hook's stderr before each, all come out, in order, and nothing is left
    waiting on a pipe without a writer."""
    hook = tmp_path / "hook.sh"
    hook.write_text("#!/bin/sh\ncat >/dev/null\necho hook-said >&2\necho '{}'\n")
    hook.chmod(0o755)
    result = corral.run({"groups": {"g": {"tasks": {"t": {
        "command": sh("echo run-out; echo run-err >&2; exit 1"),
        "restart": {"policy": "on-failure", "delay": "10ms", "attempts": 2, "interval": "1h"},
        "hooks": [{"name": "says", "stage": "prestart", "exec": [str(hook)]}],
    }}}}})
    lines = [line.split("| ", 1)[-1] for line in result.stdout_lines()
             if line.startswith("g/t")]
    assert lines == ["hook-said", "run-out", "run-err"] * 3, result
