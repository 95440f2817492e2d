"""corral's termination message (Kubernetes' terminationMessagePath): when
it exits, the file `termination_log:` names, else /dev/termination-log when
it is there, says why: the task whose failure gave the exit code, how it
ended, the rule that decided, its last lines; or that every task completed,
or that a shutdown stopped them.

/dev/termination-log is made only in a mount namespace of the test's own (an
overlay over /dev, the file bind-mounted as the kubelet does), never on the
host."""

import os
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, sh, wait_for

V1_MEMORY = Path("/sys/fs/cgroup/memory")
KUBERNETES_LIMIT = 4096
NEVER = {"policy": "never"}


def group(tasks, **top):
    return {**top, "groups": {"g": {"tasks": tasks}}}


def logged(path, tasks, **top):
    return group(tasks, termination_log=str(path), **top)


def test_a_task_that_failed_for_good_is_named_with_its_code_rule_and_last_lines(corral,
                                                                               tmp_path):
    message = tmp_path / "termination"
    result = corral.run(logged(message, {
        "app": {"command": sh("echo connecting to db; echo 'fatal: connection refused'; exit 3"),
                "restart": {"attempts": 1, "delay": "50ms"}},
        "side": {"command": sh("while :; do sleep 0.05; done"),
                 "lifecycle": {"hook": "prestart", "sidecar": True}},
    }))
    assert result.returncode == 3, result
    lines = message.read_text().splitlines()
    assert lines[0] == ("g/app failed for good: exited with code 3, 1 restart within 1m spent; "
                        "corral exited with code 3"), lines
    assert lines[1] == "last exit: exited with code 3", lines
    assert lines[2].startswith("rule: restart.attempts: not restarting: attempts spent"), lines
    assert lines[3] == "group g: on_failure stop: the group stopped", lines
    # Both runs' lines: the ring keeps the task's output across restarts.
    assert lines[4:] == ["last 4 lines of g/app:", "connecting to db",
                         "fatal: connection refused", "connecting to db",
                         "fatal: connection refused"], lines


def test_exit_rules_a_signal_and_a_dependency_are_told(corral, tmp_path):
    message = tmp_path / "termination"
    result = corral.run(logged(message, {
        "app": {"command": sh("echo bad config; exit 78"),
                "restart": {"no_restart_exit": [78]}},
    }))
    assert result.returncode == 78, result
    text = message.read_text()
    assert text.startswith("g/app failed for good: exited with code 78; "
                           "corral exited with code 78\n"), text
    assert ("\nrule: restart.no_restart_exit: not restarting: exited with code 78, listed in "
            "restart.no_restart_exit; failed for good\n") in text, text

    result = corral.run(logged(message, {
        "crash": {"command": sh("kill -USR1 $$"), "restart": {"policy": "never"}},
    }))
    assert result.returncode == 128 + signal.SIGUSR1, result
    text = message.read_text()
    assert "\nlast exit: killed by SIGUSR1\n" in text, text
    assert "\nrule: restart.policy: not restarting: policy never\n" in text, text

    # A task that never started because what it waited for failed: the
    # one that failed gives the code, not its dependent.
    result = corral.run(logged(message, {
        "db": {"command": sh("exit 5"), "restart": {"policy": "never"}},
        "api": {"command": sh("sleep 10"), "after": ["db"]},
    }))
    assert result.returncode == 5, result
    assert message.read_text().startswith("g/db failed for good: exited with code 5;"), result


def test_a_group_that_gives_up_restarting_says_so(corral, tmp_path):
    message = tmp_path / "termination"
    config = logged(message, {"app": {"command": sh("exit 4"), "restart": {"policy": "never"}}})
    config["groups"]["g"]["on_failure"] = {"action": "restart", "attempts": 1}
    result = corral.run(config)
    assert result.returncode == 4, result
    assert ("\ngroup g: g/app failed for good (exited with code 4); on_failure: restart: "
            "1 restart within 10m spent\n") in message.read_text()


@pytest.mark.skipif(not V1_MEMORY.is_dir(), reason="needs the v1 memory controller (hybrid host)")
def test_an_oom_kill_is_told(corral, tmp_path):
    message = tmp_path / "termination"
    hog = "exec /usr/bin/python3 -c 'a = bytearray(256 * 1024 * 1024); print(len(a))'"
    result = corral.run(logged(message, {
        "hog": {"command": sh(hog), "resources": {"memory": "32M"},
                "restart": {"policy": "never"}},
    }))
    assert result.returncode == 128 + signal.SIGKILL, result
    text = message.read_text()
    assert text.startswith("g/hog failed for good: OOM killed; corral exited with code 137\n"), text
    assert "\nlast exit: OOM killed (SIGKILL from the kernel's OOM killer)\n" in text, text


def test_clean_exits_are_told_too(corral, tmp_path):
    message = tmp_path / "termination"
    result = corral.run(logged(message, {"job": {"command": sh("exit 0"), "restart": NEVER}}))
    assert result.returncode == 0, result
    assert message.read_text() == "all tasks completed; corral exited with code 0\n"

    up = tmp_path / "up"
    running = corral.start(logged(message, {
        "web": {"command": sh(f"touch {up}; while :; do sleep 0.05; done")}}))
    wait_for(up.exists, what="web up")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert message.read_text() == ("stopped by SIGTERM: every task stopped; "
                                   "corral exited with code 0\n")


def test_a_shutdown_that_had_to_kill_names_what_it_killed(corral, tmp_path):
    message = tmp_path / "termination"
    up = tmp_path / "up"
    running = corral.start(logged(message, {
        "stubborn": {"command": sh(f"trap '' TERM; touch {up}; while :; do sleep 0.05; done"),
                     "kill": {"timeout": "60s"}}}, shutdown_timeout="300ms"))
    wait_for(up.exists, what="stubborn up")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert message.read_text() == (
        "stopped by SIGTERM: what was left was killed; corral exited with code 0\n"
        "shutdown_timeout (300ms) passed: killed (SIGKILL): g/stubborn\n")


def test_long_lines_are_cut_to_what_the_kubelet_reads_keeping_the_head(corral, tmp_path):
    message = tmp_path / "termination"
    # 40 lines of 508 characters, 1008 bytes (an é is two): 40 KB of output.
    script = ("i=0; while [ $i -lt 40 ]; do printf 'line %02d ' $i; "
              "head -c 500 /dev/zero | tr '\\0' 'x' | sed 's/x/\u00e9/g'; echo; "
              "i=$((i+1)); done; exit 1")
    result = corral.run(logged(message, {"chatty": {"command": sh(script),
                                                    "restart": {"policy": "never"}}}))
    assert result.returncode == 1, result
    data = message.read_bytes()
    assert len(data) <= KUBERNETES_LIMIT, len(data)
    text = data.decode("utf-8")  # valid UTF-8, or this raises
    assert text.startswith("g/chatty failed for good: exited with code 1;"), text[:200]
    lines = text.splitlines()
    # The newest lines that fit, whole; the older ones left out.
    assert lines[-1] == "line 39 " + "\u00e9" * 500, lines[-1][:40]
    heading = [line for line in lines if line.endswith(" lines of g/chatty:")]
    assert heading, lines[:6]
    assert not any(line.startswith("line 00 ") for line in lines)


def test_a_symbolic_link_at_the_path_is_refused_and_the_exit_code_stays(corral, tmp_path):
    target = tmp_path / "target"
    target.write_text("precious\n")
    link = tmp_path / "termination"
    link.symlink_to(target)
    result = corral.run(logged(link, {"app": {"command": sh("exit 3"),
                                              "restart": {"policy": "never"}}}))
    assert result.returncode == 3, result
    assert (f"corral: termination_log {link} is a symbolic link: refused, it could lead corral "
            "to write over another file; no termination message is written") in result.stderr
    assert target.read_text() == "precious\n"
    assert link.is_symlink()


def test_a_hard_link_and_a_fifo_are_refused_untouched(corral, tmp_path):
    target = tmp_path / "target"
    target.write_text("precious\n")
    hard = tmp_path / "hard"
    os.link(target, hard)
    result = corral.run(logged(hard, {"app": {"command": sh("exit 0"), "restart": NEVER}}))
    assert result.returncode == 0, result
    assert f"termination_log {hard} has 2 hard links: refused" in result.stderr, result
    assert target.read_text() == "precious\n"

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    result = corral.run(logged(fifo, {"app": {"command": sh("exit 0"), "restart": NEVER}}))
    assert result.returncode == 0, result
    assert f"termination_log {fifo} is a FIFO, not a regular file: refused" in result.stderr


def test_what_a_task_wrote_there_itself_is_kept(corral, tmp_path):
    message = tmp_path / "termination"
    message.write_text("left by an earlier run\n")
    result = corral.run(logged(message, {
        "app": {"command": sh(f"echo 'panic: out of cheese' > {message}; echo bye; exit 2"),
                "restart": {"policy": "never"}}}))
    assert result.returncode == 2, result
    text = message.read_text()
    assert "earlier run" not in text, text
    assert "\na task wrote:\npanic: out of cheese\nlast 1 line of g/app:\nbye\n" in text, text


# ---- /dev/termination-log ---------------------------------------------------

# Runs "$@" in a mount namespace of its own whose /dev is an overlay of the
# host's with /dev/termination-log in it, bind-mounted from $1 as the
# kubelet mounts the file of the pod's container; ends with the namespace.
IN_A_POD = r"""
set -e
file=$1; scratch=$2; shift 2
mkdir -p "$scratch/upper" "$scratch/work"
mount -t overlay overlay -o "lowerdir=/dev,upperdir=$scratch/upper,workdir=$scratch/work" /dev
touch /dev/termination-log
mount --bind "$file" /dev/termination-log
exec "$@"
"""


@pytest.fixture
def in_a_pod(tmp_path):
    """[wrapper argv], path of the file the pod's /dev/termination-log is."""
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespaces here")
    script = tmp_path / "in-a-pod.sh"
    script.write_text(IN_A_POD)
    message = tmp_path / "pod-termination-log"
    message.write_text("")
    return (["unshare", "-m", "--propagation", "private", "/bin/sh", str(script), str(message),
             str(tmp_path / "overlay")], message)


def test_the_default_path_is_written_when_a_pod_mounts_it(corral, in_a_pod):
    wrapper, message = in_a_pod
    result = corral.run(group({"app": {"command": sh("echo bye; exit 6"),
                                       "restart": {"policy": "never"}}}), wrapper=wrapper)
    assert result.returncode == 6, result
    text = message.read_text()
    assert text.startswith("g/app failed for good: exited with code 6; corral exited with "
                           "code 6\n"), text
    assert text.endswith("\nlast 1 line of g/app:\nbye\n"), text
    # Not on the host.
    assert not Path("/dev/termination-log").exists()


def test_one_command_mode_writes_the_commands_end(corral, in_a_pod):
    wrapper, message = in_a_pod
    process = subprocess.run(wrapper + [str(corral.binary), "--", "/bin/sh", "-c", "exit 4"],
                             env=corral.env(), cwd=corral.dir, timeout=RUN_TIMEOUT,
                             capture_output=True, text=True)
    assert process.returncode == 4, process
    assert message.read_text() == "command /bin/sh exited with code 4; corral exited with code 4\n"

    process = subprocess.run(wrapper + [str(corral.binary), "--", "/nonexistent/app"],
                             env=corral.env(), cwd=corral.dir, timeout=RUN_TIMEOUT,
                             capture_output=True, text=True)
    assert process.returncode == 127, process
    assert message.read_text().startswith("command /nonexistent/app failed to start: "), (
        message.read_text())


def test_an_empty_termination_log_writes_none_even_in_a_pod(corral, in_a_pod):
    wrapper, message = in_a_pod
    result = corral.run(group({"app": {"command": sh("exit 0"), "restart": NEVER}},
                              termination_log=""), wrapper=wrapper)
    assert result.returncode == 0, result
    assert message.read_text() == ""


def test_no_file_is_made_at_the_default_path(corral, tmp_path):
    result = corral.run(group({"app": {"command": sh("exit 0"), "restart": NEVER}}))
    assert result.returncode == 0, result
    assert not Path("/dev/termination-log").exists()
    assert "corral: termination_log" not in result.stderr, result
