"""A task starts with every signal at its default disposition and none
blocked, whatever corral itself catches, blocks (signalfd) or ignores, and
whatever corral inherited ignored (nohup, a shell, Python). The child resets
only the dispositions that are not the default in corral (isolation/spawn.c):
these tests pin that nothing is missed, for a plain task, for the command
under the reaper, and for an isolated command that is PID 1 itself."""

import subprocess
import sys

import pytest

from conftest import sh

# corral started with these ignored, as nohup, or a parent that ignores job
# control signals, would leave them (Python adds SIGPIPE).
IGNORE_THEN_EXEC = (
    "import os, signal, sys\n"
    "for s in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1,"
    " signal.SIGTTOU, signal.SIGRTMIN + 3):\n"
    "    signal.signal(s, signal.SIG_IGN)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n")

ISOLATIONS = {
    "plain": None,
    "reaper": {"namespaces": ["pid", "mount"]},
    "pid 1": {"namespaces": ["pid", "mount"], "init": False},
}


@pytest.mark.parametrize("kind", list(ISOLATIONS))
def test_a_task_starts_with_default_signals(corral, tmp_path, kind):
    report = tmp_path / "report"
    task = {"command": sh(f"exec cat /proc/self/status > {report}"),
            "restart": {"policy": "never"}}
    if ISOLATIONS[kind]:
        task["isolation"] = ISOLATIONS[kind]
    result = corral.run({"groups": {"g": {"tasks": {"app": task}}}},
                        wrapper=[sys.executable, "-c", IGNORE_THEN_EXEC])
    assert result.returncode == 0, result
    fields = dict(line.split(":", 1) for line in report.read_text().splitlines()
                  if line.startswith("Sig"))
    for name in ("SigBlk", "SigIgn", "SigCgt"):
        assert int(fields[name], 16) == 0, (name, fields[name], kind)


def test_the_wrapper_does_ignore_them(tmp_path):
    """The premise: what the wrapper ignores reaches what it execs."""
    report = tmp_path / "report"
    subprocess.run([sys.executable, "-c", IGNORE_THEN_EXEC, "/bin/sh", "-c",
                    f"exec grep ^SigIgn /proc/self/status > {report}"], check=True)
    ignored = int(report.read_text().split(":", 1)[1], 16)
    assert ignored & (1 << 0) and ignored & (1 << 9), hex(ignored)  # SIGHUP, SIGUSR1
