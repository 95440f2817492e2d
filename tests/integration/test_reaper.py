"""`corral reaper`, the PID 1 of an isolated task's pid namespace: it runs
the command, forwards signals to it, reaps every orphan of the namespace and
exits with the command's status. Run here under `unshare --pid --fork`, as
the namespace's PID 1."""

import os
import shutil
import signal
import subprocess

import pytest

from conftest import RUN_TIMEOUT, children_of, wait_for

pytestmark = pytest.mark.skipif(not shutil.which("unshare"), reason="needs unshare")


def reaper(corral_bin, *command, **options):
    return subprocess.Popen(
        ["unshare", "--pid", "--fork", "--mount-proc", str(corral_bin), "reaper", "--",
         *command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True, **options)


def test_the_commands_exit_code_is_the_reapers(corral_bin):
    process = reaper(corral_bin, "/bin/sh", "sh", "-c", "echo pid $$; exit 7")
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 7, (out, err)
    # The reaper is PID 1; the command is its child.
    assert out == "pid 2\n", out


def test_a_signal_death_is_128_plus_the_signal(corral_bin):
    process = reaper(corral_bin, "/bin/sh", "sh", "-c", "kill -KILL $$")
    process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 128 + signal.SIGKILL


def test_orphans_are_reaped_and_signals_forwarded(corral_bin, tmp_path):
    report = tmp_path / "report"
    # Orphans (their parent subshell exits at once) are reparented to the
    # reaper; once they exit, the command looks for zombies among its
    # namespace's processes, then waits for SIGTERM, which the reaper
    # forwards from outside.
    script = (
        "for i in 1 2 3; do (sleep 0.2 &); done; sleep 0.6; "
        f"ps -e -o stat= -o comm= > {report}.ps; "
        f"trap 'echo term > {report}; exit 0' TERM; echo ready > {report}; "
        "while :; do sleep 0.05; done")
    process = reaper(corral_bin, "/bin/sh", "sh", "-c", script)
    wait_for(lambda: report.exists() and report.read_text() == "ready\n", timeout=RUN_TIMEOUT,
             what="the command")
    states = [line.split() for line in (tmp_path / "report.ps").read_text().splitlines()]
    # The namespace's processes: the reaper, sh and ps; no zombie sleep.
    assert sorted(comm for _, comm in states) == ["corral", "ps", "sh"], states
    assert not [state for state, _ in states if state.startswith("Z")], states
    # To the reaper itself, unshare's child (unshare forwards nothing).
    (reaper_pid,) = children_of(process.pid)
    os.kill(reaper_pid[0], signal.SIGTERM)
    process.communicate(timeout=RUN_TIMEOUT)
    assert report.read_text() == "term\n"
    assert process.returncode == 0


def test_exec_failure_says_so(corral_bin):
    process = reaper(corral_bin, "/nonexistent/prog", "prog")
    out, err = process.communicate(timeout=RUN_TIMEOUT)
    assert process.returncode == 127
    assert "exec /nonexistent/prog: No such file or directory" in err, err
