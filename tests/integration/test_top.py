"""corral top driven in a real terminal: tmux runs a shell in an 80x24
window, the test types into it (send-keys) and reads the screen
(capture-pane). Asserted from what the screen shows, from `corral status`
(a restart pressed in top counts) and from the shell after top quit (its
terminal settings as before, its screen back)."""

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, processes_with_env, sh, wait_for

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None,
                                reason="tmux is not installed (scripts/install-deps.sh)")


def config():
    return {"groups": {
        "web": {"tasks": {
            # Prints a numbered line five times a second: the pane shows
            # them as they come.
            "app": {"command": sh("i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.2; done")},
            # Busy: first by CPU.
            "spin": {"command": sh("while :; do :; done")},
        }},
        "db": {"tasks": {
            "store": {"command": ["sleep", "100000"]},
        }},
    }}


class Terminal:
    """A tmux server of the test's own (its socket in tmp_path), one
    session running an interactive shell in an 80x24 window."""

    def __init__(self, corral, tmp_path):
        self.socket = tmp_path / "tmux.sock"
        self.env = corral.env({"PS1": "$ ", "TERM": "xterm"})
        self.run("new-session", "-d", "-x", "80", "-y", "24", "sh")
        self.run("set-option", "-g", "window-size", "manual")

    def run(self, *args):
        return subprocess.run(["tmux", "-S", str(self.socket), *args], env=self.env,
                              capture_output=True, text=True, check=True,
                              timeout=RUN_TIMEOUT)

    def type(self, text):
        self.run("send-keys", "-l", text)

    def keys(self, *keys):
        self.run("send-keys", *keys)

    def screen(self):
        return self.run("capture-pane", "-p").stdout

    def wait_screen(self, predicate, what):
        """The screen once `predicate` holds of it."""

        def holds():
            screen = self.screen()
            return screen if predicate(screen) else None

        return wait_for(holds, timeout=RUN_TIMEOUT,
                        what=lambda: f"{what}; the screen:\n{self.screen()}")

    def close(self):
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], env=self.env,
                       capture_output=True, timeout=RUN_TIMEOUT)


@pytest.fixture
def terminal(corral, tmp_path):
    instance = Terminal(corral, tmp_path)
    yield instance
    instance.close()


def start_top(corral, terminal, tmp_path):
    """Runs `corral top` from the shell, noting the terminal's settings
    before and after it and its exit code."""
    running = corral.start(config())
    corral.wait_control()
    terminal.type(f"stty -g > {tmp_path}/before; {corral.binary} top; echo top-exit=$?; "
                  f"stty -g > {tmp_path}/after\n")
    terminal.wait_screen(lambda s: "3 tasks, 3 running" in s and "sort config" in s,
                         "top's first screen")
    return running


def settings_after(tmp_path):
    """The terminal's settings (stty -g) once the shell wrote them after top."""
    after = tmp_path / "after"
    return wait_for(lambda: after.exists() and after.read_text(), what="the shell to run on")


def rows(screen):
    return screen.splitlines()


def status_line(screen):
    """The status line, over the rows above the keys line (up to 3)."""
    above = rows(screen)[-4:-1]
    return "".join(line.ljust(len(line) if line is above[-1] else 80) for line in above)


def row_of(screen, name):
    """The row that shows task `name`, split into cells."""
    for line in rows(screen):
        cells = line.split()
        if cells and cells[0] in (name, name.split("/")[-1]):
            return cells
    return None


def test_top_shows_sorts_filters_restarts_follows_and_quits(corral, terminal, tmp_path):
    start_top(corral, terminal, tmp_path)
    screen = terminal.screen()
    lines = rows(screen)
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines), screen
    assert re.match(r"TASK +STATE +READY +HEALTH +RESTARTS +CPU% +MEM +UPTIME +NEXT", lines[1])
    # Groups and their tasks, in the config's order, with their state.
    assert lines[2].startswith("web  group running"), screen
    for name in ("app", "spin", "store"):
        assert row_of(screen, name)[1] == "running", screen
    assert lines[5].startswith("db  group running"), screen

    # P: by CPU, the busy task first, its share of a CPU measured.
    terminal.type("P")
    screen = terminal.wait_screen(lambda s: rows(s)[2].startswith("web/spin"), "spin first by CPU")
    assert "sort cpu" in rows(screen)[0]
    terminal.wait_screen(lambda s: float(row_of(s, "web/spin")[5]) > 20, "spin's CPU %")

    # / filters as it is typed.
    terminal.type("/sto")
    screen = terminal.wait_screen(lambda s: "/sto_" in s, "the filter prompt")
    assert row_of(screen, "db/store") and not row_of(screen, "web/app"), screen
    terminal.keys("Enter")
    terminal.wait_screen(lambda s: "filter sto" in rows(s)[0], "the filter kept")

    # r restarts the selected task: its restart count goes up in corral.
    terminal.type("/app\n")  # a new filter
    terminal.wait_screen(lambda s: rows(s)[2].startswith("web/app"), "app selected")
    assert corral.task_status("web/app")["restarts"] == 0
    terminal.type("r")
    terminal.wait_screen(lambda s: "web/app: restarting" in s, "corral's answer")
    wait_for(lambda: corral.task_status("web/app")["restarts"] == 1, what="the restart")
    terminal.wait_screen(lambda s: row_of(s, "web/app")[4] == "1", "1 restart on the screen")

    # Enter follows its output: the lines the task prints come in.
    terminal.keys("Enter")
    screen = terminal.wait_screen(lambda s: "output of web/app" in s, "the pane")

    def ticks(text):
        return [int(n) for n in re.findall(r"^tick (\d+)$", text, re.M)]

    first = max(ticks(terminal.wait_screen(ticks, "a tick line in the pane")))
    terminal.wait_screen(lambda s: ticks(s) and max(ticks(s)) >= first + 3, "newer ticks")
    terminal.keys("Escape")
    terminal.wait_screen(lambda s: "output of" not in s, "the pane closed")

    # s stops it (spin keeps its group up); r is then refused, in corral's
    # own words in the status line; S starts it again.
    terminal.type("s")
    terminal.wait_screen(lambda s: row_of(s, "web/app")[1] == "dead", "app stopped")
    assert corral.task_status("web/app")["state"] == "dead"
    terminal.type("r")
    terminal.wait_screen(lambda s: "only a running task can be restarted" in status_line(s),
                         "the refusal")
    terminal.type("S")
    terminal.wait_screen(lambda s: row_of(s, "web/app")[1] == "running", "app running again")
    assert corral.task_status("web/app")["state"] == "running"

    # A resize redraws at the new size: wider, the last exit shows.
    terminal.run("resize-window", "-x", "120", "-y", "30")
    screen = terminal.wait_screen(lambda s: "LAST EXIT" in s and len(rows(s)) >= 28,
                                  "the screen at 120x30")
    assert rows(screen)[-1].startswith("q quit  j/k move"), screen
    terminal.run("resize-window", "-x", "80", "-y", "24")
    terminal.wait_screen(lambda s: "LAST EXIT" not in s, "the screen at 80x24")

    # q quits; the shell's screen and terminal settings are back.
    terminal.type("q")
    screen = terminal.wait_screen(lambda s: "top-exit=0" in s, "top to quit")
    assert "stty -g >" in screen, screen  # the shell's own screen, not top's
    assert settings_after(tmp_path) == (tmp_path / "before").read_text()


def top_pid(corral):
    def find():
        for pid in processes_with_env("CORRAL_TEST_ID", corral.test_id):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[1:2] == [b"top"]:
                return pid
        return None

    return wait_for(find, what="corral top's pid")


@pytest.mark.parametrize("signal_number", [signal.SIGTERM, signal.SIGHUP])
def test_top_puts_the_terminal_back_when_killed(corral, terminal, tmp_path, signal_number):
    start_top(corral, terminal, tmp_path)
    os.kill(top_pid(corral), signal_number)
    terminal.wait_screen(lambda s: f"top-exit={128 + signal_number}" in s, "top to end")
    assert settings_after(tmp_path) == (tmp_path / "before").read_text()


def test_top_without_a_terminal_points_at_status(corral):
    corral.start(config())
    corral.wait_control()
    result = corral.cli("top")
    assert result.returncode == 2, result
    assert "needs a terminal" in result.stderr and "corral status" in result.stderr, result
    assert result.stdout == ""


def test_top_without_corral_says_so_before_any_screen(corral, terminal):
    terminal.type(f"{corral.binary} top --socket {corral.dir}/nothing.sock; echo top-exit=$?\n")
    screen = terminal.wait_screen(lambda s: "top-exit=1" in s, "top to give up")
    assert "cannot connect to" in screen and "is corral running?" in screen, screen


def test_top_says_corrals_refusal_of_what_the_user_may_not_do(corral, terminal, tmp_path):
    """top run inside a task (corral exec -it) whose control: list grants
    status and logs only: it shows everything, and a restart is refused
    in corral's words."""
    watched = config()
    watched["groups"]["web"]["tasks"]["viewer"] = {"command": ["sleep", "100000"],
                                                   "control": ["status", "logs"]}
    corral.start(watched)
    corral.wait_control()
    terminal.type(f"{corral.binary} exec -it web/viewer -- env CORRAL_SOCKET={corral.socket_path}"
                  f" {corral.binary} top; echo top-exit=$?\n")
    terminal.wait_screen(lambda s: "4 tasks, 4 running" in s, "top's first screen")
    terminal.type("j")  # web/app
    terminal.wait_screen(lambda s: rows(s)[3].startswith("  app"), "app")
    terminal.type("r")
    screen = terminal.wait_screen(lambda s: "not restart" in status_line(s), "the refusal")
    assert "web/viewer is a task" in status_line(screen), screen
    assert corral.task_status("web/app")["restarts"] == 0
    # What it may do, it does: follow the output.
    terminal.keys("Enter")
    terminal.wait_screen(lambda s: re.search(r"^tick \d+$", s, re.M), "app's output")
    terminal.type("q")
    terminal.wait_screen(lambda s: "top-exit=0" in s, "top to quit")


def test_top_waits_for_corral_to_come_back(corral, terminal, tmp_path):
    """corral goes away under top: the last screen stays, the status line
    says why, and top shows the new corral once it answers."""
    running = start_top(corral, terminal, tmp_path)
    running.send(signal.SIGTERM)
    screen = terminal.wait_screen(lambda s: "cannot connect to" in status_line(s)
                                  or "closed the connection" in status_line(s),
                                  "the status line to say corral is gone")
    assert "3 tasks" in rows(screen)[0], screen  # the last screen stays
    running.wait()
    corral.start(config())
    corral.wait_control()
    new_pid = corral.status()["corral"]["pid"]
    screen = terminal.wait_screen(lambda s: f"pid {new_pid} " in rows(s)[0], "the new corral")
    assert "connected to" in status_line(screen) and "again" in status_line(screen), screen
    terminal.type("q")
    terminal.wait_screen(lambda s: "top-exit=0" in s, "top to quit")


def test_top_quits_while_corral_does_not_answer(corral, terminal, tmp_path):
    """corral stopped (SIGSTOP) leaves top's status request unanswered: q
    still quits at once and puts the terminal back."""
    running = start_top(corral, terminal, tmp_path)
    running.send(signal.SIGSTOP)
    try:
        time.sleep(2.5)  # a tick or two: a status request waits on corral
        terminal.type("q")
        terminal.wait_screen(lambda s: "top-exit=0" in s, "top to quit")
    finally:
        running.send(signal.SIGCONT)
    assert settings_after(tmp_path) == (tmp_path / "before").read_text()


def test_top_scrolls_through_many_tasks(corral, terminal, tmp_path):
    """300 tasks in 80x24: End shows the last, with where the selection is
    at the end of the keys line; PgUp a page back; Home the first."""
    many = {"groups": {"g": {"tasks": {f"t{i:03d}": {"command": ["sleep", "100000"]}
                                       for i in range(300)}}}}
    corral.start(many)
    corral.wait_control()
    terminal.type(f"{corral.binary} top; echo top-exit=$?\n")
    terminal.wait_screen(lambda s: "300 tasks, 300 running" in s, "top's first screen")
    terminal.keys("End")
    screen = terminal.wait_screen(lambda s: rows(s)[-1].endswith(" 301/301"), "the end")
    assert rows(screen)[21].startswith("  t299"), screen  # the last list row
    assert rows(screen)[2].startswith("  t280"), screen
    terminal.keys("PageUp")
    screen = terminal.wait_screen(lambda s: rows(s)[-1].endswith(" 282/301"), "a page up")
    terminal.keys("Home")
    screen = terminal.wait_screen(lambda s: rows(s)[-1].endswith(" 1/301"), "the start")
    assert rows(screen)[2].startswith("g  group"), screen
    terminal.type("q")
    terminal.wait_screen(lambda s: "top-exit=0" in s, "top to quit")
