"""One-command mode, `corral [OPTIONS] -- COMMAND [ARG]...`: tini's and
dumb-init's job (issue 15, section 1). Each behaviour is checked from
outside: what the command records of the signals it gets, exit codes, /proc.
Where tini's or dumb-init's own functional tests check a behaviour, the same
check is here and says which; where it is cheap, the same scenario also runs
under /usr/bin/tini and /usr/bin/dumb-init and corral must agree with them
(skipped when they are not installed)."""

import os
import pty
import re
import shutil
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, children_of, pid_alive, pid_exists, proc_stat, wait_for

TINI = shutil.which("tini") or "/usr/bin/tini"
DUMB_INIT = shutil.which("dumb-init") or "/usr/bin/dumb-init"
PYTHON = sys.executable

# dumb-init's testing/__init__.py: every signal below 32 that can be caught,
# but SIGCHLD (the init's own) and the three job-control stops.
SUSPEND_SIGNALS = [signal.SIGTSTP, signal.SIGTTOU, signal.SIGTTIN]
NORMAL_SIGNALS = sorted(
    set(range(1, 32))
    - {signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD}
    - set(SUSPEND_SIGNALS)
)
# What tini passes on too (it leaves the synchronous ones, SIGSEGV and the
# like, to their default action, and keeps SIGTTIN and SIGTTOU).
COMMON_SIGNALS = [signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGUSR1,
                  signal.SIGUSR2, signal.SIGTERM, signal.SIGWINCH, signal.SIGALRM]

# The command of most tests: records every catchable signal it gets (one
# number per line) into FILE, and with `grandchild` forks a child that
# stays in its process group and records into FILE.grandchild. Writes
# FILE.ready (with its pid, and the grandchild's) once its handlers are set.
RECORDER = r"""
import os, signal, sys, time
out = sys.argv[1]
grandchild = len(sys.argv) > 2

def record(path):
    def handler(number, frame):
        with open(path, "a") as f:
            f.write(f"{number}\n")
    return handler

def catch_all(path):
    for number in range(1, 32):
        if number not in (signal.SIGKILL, signal.SIGSTOP, signal.SIGCHLD):
            signal.signal(number, record(path))

pids = [os.getpid()]
if grandchild:
    r, w = os.pipe()
    child = os.fork()
    if child == 0:
        catch_all(out + ".grandchild")
        os.write(w, b"x")
        while True:
            time.sleep(0.02)
    os.read(r, 1)
    pids.append(child)
catch_all(out)
with open(out + ".tmp", "w") as f:
    f.write(" ".join(map(str, pids)))
os.rename(out + ".tmp", out + ".ready")
while True:
    time.sleep(0.02)
"""

INITS = {
    "corral": None,  # the corral fixture's binary
    "tini": TINI,
    "dumb-init": DUMB_INIT,
}


def init_command(corral, init, options=()):
    """argv of `INIT [OPTIONS] --` for corral, tini or dumb-init."""
    if init == "corral":
        binary = str(corral.binary)
    else:
        binary = INITS[init]
        if not os.access(binary, os.X_OK):
            pytest.skip(f"{init} is not installed")
    return [binary, *options, "--"]


def default_signal_dispositions():
    """In the init's process, before its exec: signals as a login shell
    leaves them. A test run in the background of a non-interactive shell
    inherits SIGINT and SIGQUIT ignored, and under nohup SIGHUP: corral and
    dumb-init give their child default dispositions, tini passes ignored
    ones on, and a command that killed itself with one then exited 0."""
    for number in (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)


def start(corral, init, options, command, **popen):
    popen.setdefault("preexec_fn", default_signal_dispositions)
    popen.setdefault("stdin", subprocess.DEVNULL)
    popen.setdefault("stdout", subprocess.DEVNULL)
    popen.setdefault("stderr", subprocess.PIPE)
    process = subprocess.Popen(init_command(corral, init, options) + list(command),
                               env=corral.env(), cwd=corral.dir, start_new_session=True,
                               **popen)
    corral.started.append(process)
    return process


def run(corral, init, options, command, **popen):
    """Runs to the end: (exit code, stdout, stderr) as text."""
    popen.setdefault("stdout", subprocess.PIPE)
    process = start(corral, init, options, command, **popen)
    try:
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"{init} did not exit within {RUN_TIMEOUT}s")
    return process.returncode, (stdout or b"").decode(), (stderr or b"").decode()


class Recorder:
    """The recorder script under an init, started and ready."""

    def __init__(self, corral, init, options=(), grandchild=False):
        self.file = corral.dir / f"signals-{init}"
        command = [PYTHON, "-c", RECORDER, str(self.file)] + (["grandchild"] if grandchild
                                                                else [])
        self.process = start(corral, init, options, command)
        ready = Path(str(self.file) + ".ready")
        wait_for(ready.exists, what=f"the recorder under {init} to be ready")
        pids = [int(word) for word in ready.read_text().split()]
        self.pid = pids[0]
        self.grandchild_pid = pids[1] if grandchild else None

    def received(self, which=""):
        path = Path(str(self.file) + which)
        return [int(line) for line in path.read_text().split()] if path.exists() else []

    def send_and_wait(self, signal_number, count):
        """Sends a signal to the init and waits for the command to have
        recorded `count` signals in all."""
        self.process.send_signal(signal_number)
        return wait_for(lambda: len(self.received()) >= count and self.received(),
                        what=f"signal {signal_number} to be recorded")

    def stop(self):
        for pid in (self.grandchild_pid, self.pid, self.process.pid):
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.process.wait(timeout=RUN_TIMEOUT)


def process_state(pid):
    """One letter of /proc/PID/stat: S, R, T (stopped), Z..."""
    stat = proc_stat(pid)
    return stat[0] if stat else None


# ---- signals passed on ----------------------------------------------------


@pytest.mark.parametrize("init", ["corral", "dumb-init"])
def test_every_catchable_signal_reaches_the_command(corral, init):
    # dumb-init's proxies_signals_test.py test_proxies_signals: one by one,
    # each signal sent to the init is what the command records.
    recorder = Recorder(corral, init)
    try:
        for count, signal_number in enumerate(NORMAL_SIGNALS, start=1):
            assert recorder.send_and_wait(signal_number, count)[-1] == signal_number
        assert recorder.received() == NORMAL_SIGNALS
        assert recorder.process.poll() is None
    finally:
        recorder.stop()


@pytest.mark.parametrize("init", ["corral", "tini", "dumb-init"])
def test_the_signals_users_rely_on_reach_the_command_under_each_init(corral, init):
    # Side by side: SIGUSR1, SIGUSR2, SIGHUP, SIGWINCH... under the three.
    recorder = Recorder(corral, init)
    try:
        for count, signal_number in enumerate(COMMON_SIGNALS, start=1):
            recorder.send_and_wait(signal_number, count)
        assert recorder.received() == COMMON_SIGNALS
    finally:
        recorder.stop()


@pytest.mark.parametrize("init,options", [("corral", ["-r", "15:2", "-r", "2:0", "-r", "28:0"]),
                                          ("corral", ["-r", "TERM:INT", "-r", "SIGINT:0",
                                                      "-r", "WINCH:0"]),
                                          ("dumb-init", ["-r", "15:2", "-r", "2:0",
                                                         "-r", "28:0"])])
def test_rewrite_changes_one_signal_into_another_and_zero_drops_it(corral, init, options):
    # dumb-init's test_proxies_signals_with_rewrite and
    # test_ignored_signals_are_not_proxied: SIGTERM arrives as SIGINT,
    # SIGINT and SIGWINCH are dropped (what comes after them arrives first).
    recorder = Recorder(corral, init, options)
    try:
        recorder.send_and_wait(signal.SIGTERM, 1)
        recorder.process.send_signal(signal.SIGINT)
        recorder.process.send_signal(signal.SIGWINCH)
        recorder.send_and_wait(signal.SIGHUP, 2)
        time.sleep(0.2)
        assert recorder.received() == [signal.SIGINT, signal.SIGHUP]
    finally:
        recorder.stop()


@pytest.mark.parametrize("init,options", [("corral", []), ("corral", ["-g"]),
                                          ("tini", ["-g"]), ("dumb-init", [])])
def test_signals_reach_the_whole_process_group_by_default_and_with_g(corral, init, options):
    # tini's pgroup test (-g: SIGUSR1 reaches a grandchild in the command's
    # process group) and dumb-init's test_setsid_signals_entire_group.
    recorder = Recorder(corral, init, options, grandchild=True)
    try:
        recorder.send_and_wait(signal.SIGUSR1, 1)
        wait_for(lambda: recorder.received(".grandchild") == [signal.SIGUSR1],
                 what="the grandchild to get SIGUSR1")
    finally:
        recorder.stop()


@pytest.mark.parametrize("init,options", [("corral", ["-c"]), ("corral", ["--single-child"]),
                                          ("tini", []), ("dumb-init", ["-c"])])
def test_single_child_signals_reach_the_command_alone(corral, init, options):
    # dumb-init's test_no_setsid_doesnt_signal_entire_group; tini's default.
    recorder = Recorder(corral, init, options, grandchild=True)
    try:
        recorder.send_and_wait(signal.SIGUSR1, 1)
        recorder.send_and_wait(signal.SIGUSR2, 2)
        time.sleep(0.2)
        assert recorder.received(".grandchild") == []
    finally:
        recorder.stop()


@pytest.mark.parametrize("init", ["corral", "dumb-init"])
def test_job_control_signals_suspend_the_command_and_sigcont_resumes_it(corral, init):
    # dumb-init's shell_background_test.py test_shell_background_support_setsid:
    # SIGTSTP, SIGTTOU and SIGTTIN stop both the init and the command (the
    # shell that started the init sees its job stopped); SIGCONT resumes
    # both, and reaches the command.
    recorder = Recorder(corral, init)
    try:
        for count, signal_number in enumerate(SUSPEND_SIGNALS, start=1):
            assert process_state(recorder.pid) in ("S", "R")
            recorder.process.send_signal(signal_number)
            wait_for(lambda: process_state(recorder.pid) == "T"
                     and process_state(recorder.process.pid) == "T",
                     what="the command and the init to be stopped")
            recorder.send_and_wait(signal.SIGCONT, count)
            assert recorder.received()[-1] == signal.SIGCONT
            wait_for(lambda: process_state(recorder.pid) in ("S", "R")
                     and process_state(recorder.process.pid) in ("S", "R"),
                     what="both to run again")
    finally:
        recorder.stop()


def test_a_job_control_rewrite_is_passed_on_and_corral_still_stops(corral):
    # dumb-init's test_default_rewrites_can_be_overriden_with_setsid_enabled.
    recorder = Recorder(corral, "corral", ["-r", "TSTP:HUP"])
    try:
        recorder.send_and_wait(signal.SIGTSTP, 1)
        assert recorder.received() == [signal.SIGHUP]
        wait_for(lambda: process_state(recorder.process.pid) == "T", what="corral to stop")
        recorder.send_and_wait(signal.SIGCONT, 2)
        assert process_state(recorder.pid) in ("S", "R")
    finally:
        recorder.stop()


@pytest.mark.parametrize("init", ["corral", "dumb-init"])
def test_single_child_mode_passes_job_control_signals_on_as_they_are(corral, init):
    # dumb-init's test_shell_background_support_without_setsid: with -c the
    # command gets SIGTSTP, SIGTTOU and SIGTTIN themselves (it handles them
    # here), not SIGSTOP; the init still stops, and SIGCONT resumes it.
    recorder = Recorder(corral, init, ["-c"])
    try:
        for count, signal_number in enumerate(SUSPEND_SIGNALS):
            recorder.send_and_wait(signal_number, 2 * count + 1)
            assert recorder.received()[-1] == signal_number
            wait_for(lambda: process_state(recorder.process.pid) == "T",
                     what="the init to stop")
            recorder.send_and_wait(signal.SIGCONT, 2 * count + 2)
        assert process_state(recorder.pid) in ("S", "R")
    finally:
        recorder.stop()


# ---- exit codes -------------------------------------------------------------


@pytest.mark.parametrize("init", ["corral", "tini", "dumb-init"])
@pytest.mark.parametrize("code", [0, 1, 2, 3, 32, 64, 127, 254, 255])
def test_the_command_exit_code_is_the_init_exit_code(corral, init, code):
    # dumb-init's exit_status_test.py test_exit_status_regular_exit.
    returncode, _, _ = run(corral, init, [], ["sh", "-c", f"exit {code}"])
    assert returncode == code


@pytest.mark.parametrize("init", ["corral", "tini", "dumb-init"])
@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT,
                                           signal.SIGKILL, signal.SIGUSR1])
def test_a_command_killed_by_signal_n_gives_128_plus_n(corral, init, signal_number):
    # dumb-init's test_exit_status_terminated_by_signal.
    returncode, _, _ = run(corral, init, [],
                           [PYTHON, "-c", f"import os; os.kill(os.getpid(), {signal_number})"])
    assert returncode == 128 + signal_number


@pytest.mark.parametrize("init", ["corral", "tini", "dumb-init"])
@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGUSR1, signal.SIGUSR2])
def test_a_signal_sent_to_the_init_ends_the_command_and_gives_128_plus_n(corral, init,
                                                                         signal_number):
    # tini's signals test: the init gets the signal, the command dies of it,
    # the init exits 128+N (143 for SIGTERM, where corral run exits 0).
    marker = corral.dir / f"started-{init}"
    process = start(corral, init, [], [
        "sh", "-c", f"trap - TERM USR1 USR2; touch {marker}; sleep 100"])
    wait_for(marker.exists, what="the command to start")
    process.send_signal(signal_number)
    assert process.wait(timeout=RUN_TIMEOUT) == 128 + signal_number


@pytest.mark.parametrize("init", ["corral", "tini"])
def test_expected_exit_codes_map_to_0(corral, init):
    # tini's exit code test: -e CODE makes CODE a 0, others are kept.
    assert run(corral, init, ["-e", "3"], ["sh", "-c", "exit 3"])[0] == 0
    assert run(corral, init, ["-e", "4", "-e", "5"], ["sh", "-c", "exit 5"])[0] == 0
    assert run(corral, init, ["-e", "4"], ["sh", "-c", "exit 3"])[0] == 3
    # 128+N for a command killed by signal N is a code like any other.
    assert run(corral, init, ["-e", "143"],
               [PYTHON, "-c", "import os; os.kill(os.getpid(), 15)"])[0] == 0


def test_a_command_not_found_exits_127_and_says_so(corral):
    # dumb-init's test_fails_nonzero_with_bad_exec (which exits 2); corral
    # exits as a shell does.
    returncode, _, stderr = run(corral, "corral", [], ["/doesnotexist"])
    assert returncode == 127
    assert "/doesnotexist: No such file or directory" in stderr
    returncode, _, stderr = run(corral, "corral", [], ["no-such-program-anywhere"])
    assert returncode == 127
    assert "no-such-program-anywhere: No such file or directory" in stderr


def test_a_command_that_cannot_be_executed_exits_126_and_says_so(corral):
    not_executable = corral.dir / "script"
    not_executable.write_text("#!/bin/sh\nexit 0\n")
    not_executable.chmod(0o644)
    returncode, _, stderr = run(corral, "corral", [], [str(not_executable)])
    assert returncode == 126
    assert f"{not_executable}: Permission denied" in stderr


def test_a_missing_command_is_a_usage_error(corral):
    # Exit 1, as tini and dumb-init (next test).
    returncode, _, stderr = run(corral, "corral", [], [])
    assert returncode == 1
    assert "expected a COMMAND" in stderr
    returncode, _, stderr = run(corral, "corral", ["-r", "15"], ["true"])
    assert returncode == 1
    assert "-r 15" in stderr
    # One line that names itself "corral", not the whole usage after it.
    returncode, _, stderr = run(corral, "corral", ["--bogus"], ["true"])
    assert returncode == 1
    assert stderr.startswith("corral: unrecognized option '--bogus'\n"), stderr
    assert len(stderr.splitlines()) == 2, stderr


@pytest.mark.parametrize("init", ["corral", "tini", "dumb-init"])
def test_a_usage_error_exits_1_as_tini_and_dumb_init_do(corral, init):
    returncode, _, _ = run(corral, init, ["--bogus"], ["true"])
    assert returncode == 1


@pytest.mark.parametrize("init", ["corral", "dumb-init"])
def test_dash_capital_v_prints_the_version(corral, init):
    # dumb-init's -V, --version; exits 0 without running anything.
    process = subprocess.run([INITS[init] or str(corral.binary), "-V"], capture_output=True,
                             text=True, timeout=RUN_TIMEOUT)
    assert process.returncode == 0, process
    # dumb-init prints it on stderr, corral on stdout (as its --version).
    said = process.stdout + process.stderr
    assert said.startswith("dumb-init v" if init == "dumb-init" else "corral "), said


def test_a_program_named_without_the_dashes_gets_told_how(corral):
    # tini and dumb-init take `tini PROGRAM`; corral's PROGRAM follows --.
    result = corral.cli("sleep", "1")
    assert result.returncode == 2, result
    assert ('corral: unknown command "sleep"; to run a program under corral, write: '
            "corral -- sleep ...") in result.stderr, result
    result = corral.cli("statsu")  # a command misspelt
    assert result.returncode == 2, result
    assert 'corral: unknown command "statsu"; did you mean "status"?' in result.stderr, result


# ---- PID 1 duties -------------------------------------------------------------


def test_orphans_become_corral_children_and_are_reaped(corral):
    # tini's reaping test: the command starts processes that are orphaned at
    # once (their parent subshell exits); corral, a subreaper, adopts them,
    # and reaps each as it exits: no zombie is left while the command runs.
    pids = corral.dir / "orphans"
    done = corral.dir / "done"
    script = (f"for i in 1 2 3 4 5; do (sh -c 'echo $$ >> {pids}; exec sleep 0.3' &); done; "
              f"while [ \"$(wc -l < {pids} 2>/dev/null)\" != 5 ]; do sleep 0.01; done; "
              f"touch {done}; sleep 100")
    process = start(corral, "corral", [], ["sh", "-c", script])
    try:
        wait_for(done.exists, what="the orphans to start")
        orphans = [int(word) for word in pids.read_text().split()]
        adopted = [pid for pid in orphans if (proc_stat(pid) or (None, 0))[1] == process.pid]
        assert adopted, "no orphan was reparented to corral"
        wait_for(lambda: not any(pid_exists(pid) for pid in orphans),
                 what="every orphan to be reaped (no zombie left)")
        assert not [pid for pid, state in children_of(process.pid) if state == "Z"]
        assert process.poll() is None
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=RUN_TIMEOUT)


def test_what_the_command_leaves_behind_is_killed_when_it_exits(corral):
    # dumb-init's test_all_processes_receive_term_on_exit_if_setsid (it sends
    # SIGTERM; corral kills them): a process in the command's group, and one
    # that left it (setsid), are both gone once corral has exited.
    pids = corral.dir / "left"
    script = (f"sleep 100 & echo $! >> {pids}; "
              f"setsid sleep 100 & echo $! >> {pids}; sleep 0.2; exit 0")
    returncode, _, _ = run(corral, "corral", [], ["sh", "-c", script])
    assert returncode == 0
    left = [int(word) for word in pids.read_text().split()]
    assert len(left) == 2
    wait_for(lambda: not any(pid_alive(pid) for pid in left), timeout=2,
             what="the leftovers to be killed")


# ---- quiet, stdio, terminal -------------------------------------------------


def test_corral_says_nothing_of_its_own_unless_verbose(corral):
    # tini is silent: the command's output is all there is.
    returncode, stdout, stderr = run(corral, "corral", [],
                                     ["sh", "-c", "echo out; echo err >&2"])
    assert (returncode, stdout, stderr) == (0, "out\n", "err\n")
    returncode, stdout, stderr = run(corral, "corral", ["-v"], ["sh", "-c", "exit 4"])
    assert returncode == 4
    assert "main/command: started" in stderr
    assert stderr.rstrip().endswith("corral: exiting with code 4")


@pytest.mark.parametrize("init", ["corral", "tini", "dumb-init"])
def test_the_command_has_the_init_stdin_stdout_and_stderr(corral, init):
    # Untouched: read from the init's stdin, lines unprefixed on its stdout,
    # the same open files (not a pipe of the init's) in the command.
    script = ("import os, sys; data = sys.stdin.read(); print(data.strip()[::-1]); "
              "sys.stderr.write('to stderr\\n'); "
              "print(os.readlink('/proc/self/fd/1'), os.readlink(f'/proc/{os.getppid()}/fd/1'))")
    process = start(corral, init, [], [PYTHON, "-c", script], stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE)
    stdout, stderr = process.communicate(b"abc\n", timeout=RUN_TIMEOUT)
    assert process.returncode == 0
    lines = stdout.decode().splitlines()
    assert lines[0] == "cba"
    command_stdout, init_stdout = lines[1].split(" ")
    assert command_stdout == init_stdout
    assert stderr.decode().endswith("to stderr\n")


def read_until_eof(fd):
    output = b""
    while True:
        try:
            chunk = os.read(fd, 1024)
        except OSError:  # EIO: the pty's other side is closed
            return output
        if not chunk:
            return output
        output += chunk


@pytest.mark.parametrize("init", ["corral", "dumb-init"])
def test_under_a_terminal_the_command_has_it_as_controlling_terminal(corral, init):
    # dumb-init's tty_test.py: stdin and stdout are the terminal, and the
    # command's session holds it as its controlling terminal, its process
    # group in the foreground (what `docker run -it` needs for a shell's job
    # control).
    argv = init_command(corral, init) + [
        PYTHON, "-c",
        "import os; print('tty', os.isatty(0), os.isatty(1), "
        "os.tcgetpgrp(0) == os.getpgrp(), os.getsid(0) == os.getpid())"]
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(argv[0], argv, corral.env())
    output = read_until_eof(fd).decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0, output
    assert "tty True True True True" in output


def test_under_a_terminal_input_reaches_the_command(corral):
    # dumb-init's test_tty: `tac` reads what is typed and its output comes
    # back, with nothing of corral's.
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(str(corral.binary), [str(corral.binary), "--", "tac"], corral.env())
    attributes = termios.tcgetattr(fd)
    attributes[1] &= ~termios.OPOST
    attributes[3] &= ~termios.ECHO
    termios.tcsetattr(fd, termios.TCSANOW, attributes)
    os.write(fd, b"1\n2\n3\n")
    os.write(fd, b"\x04\x04")  # end of input
    output = read_until_eof(fd)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert output == b"3\n2\n1\n", output
