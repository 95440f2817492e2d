"""corral logs of a task, of a group's tasks and of every task, interleaved
by time; --timestamps, --since and --json; -f across tasks. Asserted from
the CLI's output of lines the tasks printed in a known order (each task
waits for the previous one's marker file)."""

import json
import os
import re
import signal
import subprocess
import time

from conftest import sh, wait_for

IDLE = "exec sleep 1000"


def sockets(pid):
    """How many sockets corral holds: its listener and its clients (and,
    once their replies are sent, the followers)."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass
    return count


def relay(tmp_path):
    """a prints 1, b prints 2 once a did, then a prints 3 once b did, and
    c (another group) prints 4 last: a known order across tasks. Lines are
    timed when corral reads them, to the millisecond: each step waits a
    little after the previous one, so that two lines never share a time."""
    flag = lambda name: tmp_path / name  # noqa: E731
    wait = lambda name: (f"while [ ! -e {flag(name)} ]; do sleep 0.01; done; "  # noqa: E731
                         "sleep 0.2")
    return {"groups": {
        "g": {"tasks": {
            "a": {"command": sh(f"echo one; touch {flag('1')}; {wait('2')}; echo three; "
                                f"touch {flag('3')}; {IDLE}")},
            "b": {"command": sh(f"{wait('1')}; echo two; touch {flag('2')}; {IDLE}")},
        }},
        "h": {"tasks": {
            "c": {"command": sh(f"{wait('3')}; echo four; touch {flag('4')}; "
                                f"{IDLE}")},
        }},
    }}


def start_relay(corral, tmp_path):
    running = corral.start(relay(tmp_path))
    corral.wait_control(running)
    wait_for(lambda: (tmp_path / "4").exists(), what="the relay to end")
    wait_for(lambda: "four" in corral.cli("logs", "h/c").stdout, what="c's line kept")
    return running


def test_logs_of_every_task_and_of_a_group_are_interleaved_by_time(corral, tmp_path):
    running = start_relay(corral, tmp_path)
    assert corral.cli("logs").stdout.splitlines() == [
        "g/a | one", "g/b | two", "g/a | three", "h/c | four"]
    assert corral.cli("logs", "g").stdout.splitlines() == ["g/a | one", "g/b | two",
                                                          "g/a | three"]
    # One task: its lines alone, as before, without a prefix.
    assert corral.cli("logs", "g/a").stdout.splitlines() == ["one", "three"]
    assert corral.cli("logs", "--tail", "2").stdout.splitlines() == [
        "g/a | three", "h/c | four"]
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_timestamps_json_and_since(corral, tmp_path):
    running = start_relay(corral, tmp_path)
    stamped = corral.cli("logs", "-t", "g/a").stdout.splitlines()
    assert len(stamped) == 2
    for line in stamped:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (one|three)", line), line
    objects = [json.loads(line) for line in corral.cli("logs", "--json", "h").stdout.splitlines()]
    assert [(o["group"], o["task"], o["line"]) for o in objects] == [("h", "c", "four")]
    assert abs(objects[0]["time"] - time.time()) < 600
    # Nothing is that recent once a second has passed; everything is
    # newer than an hour ago.
    time.sleep(1.1)
    assert corral.cli("logs", "--since", "1s").stdout == ""
    assert len(corral.cli("logs", "--since", "1h").stdout.splitlines()) == 4
    assert corral.cli("logs", "--since", "2000-01-01T00:00:00Z").stdout.count("\n") == 4
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_follow_a_group_gets_every_task_of_it_and_only_it(corral, tmp_path):
    go = tmp_path / "go"
    config = {"groups": {
        "g": {"tasks": {
            "a": {"command": sh(f"while [ ! -e {go} ]; do sleep 0.01; done; echo from-a; "
                                f"{IDLE}")},
            "b": {"command": sh(f"while [ ! -e {go} ]; do sleep 0.01; done; echo from-b; "
                                f"{IDLE}")},
        }},
        "h": {"tasks": {
            "c": {"command": sh(f"while [ ! -e {go} ]; do sleep 0.01; done; echo from-c; "
                                f"{IDLE}")},
        }},
    }}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: sockets(running.pid) == 1, what="corral's clients to leave")
    follower = corral.cli_popen("logs", "-f", "g")
    everything = corral.cli_popen("logs", "-f")
    # Both followers connected: the listener and their two connections.
    wait_for(lambda: sockets(running.pid) == 3, what="the followers to connect")
    go.touch()
    wait_for(lambda: "from-c" in corral.cli("logs", "h/c").stdout, what="c's line")
    wait_for(lambda: "from-a" in corral.cli("logs", "g/a").stdout
             and "from-b" in corral.cli("logs", "g/b").stdout, what="a's and b's lines")
    running.send(signal.SIGTERM)
    running.wait()
    group_lines = follower.communicate(timeout=20)[0].decode().splitlines()
    all_lines = everything.communicate(timeout=20)[0].decode().splitlines()
    assert sorted(group_lines) == ["g/a | from-a", "g/b | from-b"], group_lines
    assert sorted(all_lines) == ["g/a | from-a", "g/b | from-b", "h/c | from-c"], all_lines


def test_history_sets_how_much_output_is_kept(corral, tmp_path):
    done = tmp_path / "done"
    lines = " ".join(f"{n:04d}-{'x' * 40}" for n in range(1, 201))
    print_all = sh(f"for l in {lines}; do echo $l; done; touch {done}; {IDLE}")
    config = {"groups": {"g": {"tasks": {
        "small": {"command": print_all, "log": {"history": "1K"}},
        "large": {"command": print_all, "log": {"history": "64K"}},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: done.exists() and len(corral.cli("logs", "g/large").stdout.splitlines())
             == 200, what="every line kept by the large history")
    small = corral.cli("logs", "g/small").stdout.splitlines()
    # 1K holds about twenty 45-byte lines: the last ones, whole.
    assert 5 < len(small) < 30, small
    assert small[-1] == f"0200-{'x' * 40}"
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_nul_byte_in_a_line_is_kept_and_breaks_nothing(corral):
    """A NUL byte travels as \\u0000 in the protocol: the CLI takes it (it
    once refused the whole reply, and every later one until the line left
    the ring) and prints the line's bytes as the task wrote them."""
    config = {"groups": {"g": {"tasks": {"t": {
        "command": sh(r"printf 'nul: a\000b\n'; echo after; " + IDLE)}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "after" in corral.cli("logs", "g/t").stdout, what="both lines kept")
    plain = subprocess.run([str(corral.binary), "logs", "g/t"], capture_output=True,
                           env=corral.env(), timeout=10)
    assert plain.returncode == 0, plain
    assert plain.stdout == b"nul: a\x00b\nafter\n"
    lines = [json.loads(l) for l in corral.cli("logs", "--json").stdout.splitlines()]
    assert [l["line"] for l in lines] == ["nul: a\x00b", "after"]
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
