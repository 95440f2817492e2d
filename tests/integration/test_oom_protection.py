"""corral keeps itself out of the OOM killer's choice (docs/decisions.md,
"corral and the OOM killer"): it lowers its own oom_score_adj to -999 and
every process it starts goes back to the value corral started with. That
needs CAP_SYS_RESOURCE, which these machines do not give even to root: the
protection itself is tested in the VM, where corral is init with every
capability (tests/system/vm, case oom-score). Here: a corral without it
says so and changes nothing."""

import os
import signal

import pytest

from conftest import sh, wait_for


def score(pid):
    with open(f"/proc/{pid}/oom_score_adj") as f:
        return int(f.read())


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_a_corral_that_may_not_lower_its_score_changes_nothing_and_says_so_with_v(
        corral, tmp_path, verbose):
    """Every default container lacks cap_sys_resource: the line saying so
    would come on every start, so only `corral run -v` prints it."""
    seen = tmp_path / "seen"
    config = {"groups": {"g": {"tasks": {
        "app": {"command": sh(f"cat /proc/self/oom_score_adj > {seen}; exec sleep 100")},
    }}}}
    # Without cap_sys_resource (root otherwise), as in a default container.
    drop = ["setpriv", "--inh-caps=-sys_resource", "--bounding-set=-sys_resource", "--"]
    running = corral.start(config, wrapper=drop, run_args=["-v"] if verbose else [])
    corral.wait_control(running)
    wait_for(lambda: seen.exists() and seen.read_text().strip(), what="the task's score")
    assert score(running.pid) == int(seen.read_text()) == score(os.getpid())
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0
    said = "oom_score_adj: corral stays at" in result.stderr
    assert said == verbose, result.stderr
    if verbose:
        assert "lowering it to -999 needs cap_sys_resource" in result.stderr, result.stderr


def test_a_tasks_oom_score_adj_reaches_it_its_probes_and_exec_but_not_its_hooks(corral, tmp_path):
    """`oom_score_adj:` (compose's, systemd's OOMScoreAdjust=): raising it
    needs no privilege, so a corral that cannot protect itself can still
    make its tasks the OOM killer's first choice."""
    seen = {name: tmp_path / name for name in ("task", "probe", "hook", "other")}
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat >/dev/null\ncat /proc/self/oom_score_adj > {seen['hook']}\n"
                    "echo '{}'\n")
    hook.chmod(0o755)
    config = {"groups": {"g": {"tasks": {
        "app": {"command": sh(f"cat /proc/self/oom_score_adj > {seen['task']}; exec sleep 100"),
                "oom_score_adj": 500,
                "readiness": {"exec": sh(f"cat /proc/self/oom_score_adj > {seen['probe']}")},
                "hooks": [{"name": "look", "stage": "poststart", "exec": [str(hook)]}]},
        "other": {"command": sh(f"cat /proc/self/oom_score_adj > {seen['other']}; "
                                "exec sleep 100")},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: all(p.exists() and p.read_text().strip() for p in seen.values()),
             what="every process's score")
    own = score(running.pid)
    assert {name: int(path.read_text()) for name, path in seen.items()} == {
        "task": 500, "probe": 500, "hook": own, "other": own}
    executed = corral.cli("exec", "g/app", "--", "cat", "/proc/self/oom_score_adj")
    assert (executed.returncode, executed.stdout.strip()) == (0, "500"), executed
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_score_below_corrals_without_the_privilege_is_a_start_failure_saying_why(corral):
    config = {"groups": {"g": {"tasks": {
        "low": {"command": ["sleep", "100"], "oom_score_adj": -500,
                "restart": {"policy": "never"}},
    }}}}
    drop = ["setpriv", "--inh-caps=-sys_resource", "--bounding-set=-sys_resource", "--"]
    result = corral.start(config, wrapper=drop).wait()
    assert result.returncode == 126, result  # could not be started, as exec's 126
    assert ("g/low: write -500 to /proc/self/oom_score_adj: Permission denied "
            "(lowering it needs cap_sys_resource)") in result.stderr, result.stderr
