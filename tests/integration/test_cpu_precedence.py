"""corral's loop goes before its tasks for the CPU (issue 36: nothing a
task does may stall the loop; base/cpu_precedence.h): corral lowers its own
nice by 5, and every process it starts (a task, a hook, an exec probe, a
`corral exec` command) goes back to the nice corral started with, also
after an upgrade's exec. One-command mode is tini's: nothing changes."""

import os
import subprocess

from conftest import sh, wait_for


def nice_of(pid):
    # /proc/PID/stat: the 19th field, after the command in parentheses.
    stat = open(f"/proc/{pid}/stat").read()
    return int(stat[stat.rindex(")") + 2:].split()[16])


def report_nice(path):
    """Shell: writes its own nice (ps reads /proc) to `path`."""
    return f"ps -o ni= -p $$ | tr -d ' ' > {path}.tmp && mv {path}.tmp {path}"


def config_with_every_kind_of_process(tmp_path):
    return {"groups": {"g": {"tasks": {"app": {
        "command": sh(f"{report_nice(tmp_path / 'task')}; exec sleep 1000"),
        "hooks": [{"name": "says", "stage": "prestart",
                   "exec": sh(report_nice(tmp_path / "hook"))}],
        "health": {"exec": sh(report_nice(tmp_path / "probe")), "interval": "100ms"},
    }}}}}


def test_corral_goes_before_its_tasks_and_what_it_starts_goes_back(corral, tmp_path):
    started_with = 3
    running = corral.start(config_with_every_kind_of_process(tmp_path),
                           wrapper=["nice", "-n", str(started_with)])
    corral.wait_control(running)
    for kind in ["task", "hook", "probe"]:
        wait_for((tmp_path / kind).exists, what=f"the {kind}'s nice")
        assert int((tmp_path / kind).read_text()) == started_with, kind
    assert nice_of(running.popen.pid) == started_with - 5
    exec_result = corral.cli("exec", "g/app", "--", "sh", "-c", "ps -o ni= -p $$")
    assert exec_result.returncode == 0, exec_result
    assert int(exec_result.stdout) == started_with

    # The corral an upgrade execs starts lowered: it goes on from the
    # nice the first one started with, not from its own.
    assert corral.cli("upgrade", timeout=60).returncode == 0
    os.remove(tmp_path / "task")
    assert corral.cli("restart", "g/app").returncode == 0
    wait_for((tmp_path / "task").exists, what="the restarted task's nice")
    assert int((tmp_path / "task").read_text()) == started_with
    assert nice_of(running.popen.pid) == started_with - 5
    running.send(15)
    assert running.wait().returncode == 0


def test_one_command_mode_changes_no_nice(corral, tmp_path):
    result = subprocess.run(
        [str(corral.binary), "--", "sh", "-c", "ps -o ni= -p $PPID; ps -o ni= -p $$"],
        capture_output=True, text=True, env=corral.env(), timeout=60)
    assert result.returncode == 0, result
    assert [int(word) for word in result.stdout.split()] == [0, 0], result
