"""Starting a task: exec failures, PATH lookup, cwd, environment, user,
stdin, and how its output reaches corral's stdout."""

import os
import re
import subprocess
import threading
import time

import pytest

from conftest import Events, sanitizer_report, sh, wait_for

NEVER = {"policy": "never"}


def one_task(command, group="g", task="app", **options):
    options.setdefault("restart", NEVER)
    return {"groups": {group: {"tasks": {task: {"command": command, **options}}}}}


def task_lines(result, name="g/app"):
    """What the task printed, without the prefix, in order."""
    prefix = f"{name} | "
    return [line[len(prefix):] for line in result.stdout_lines() if line.startswith(prefix)]


# ---- exec failures ----------------------------------------------------------


def test_exec_failure_is_reported_with_task_and_path(corral, tmp_path):
    missing = "/usr/bin/nonexistent-corral-test"
    result = corral.run(one_task([missing, "arg"]))
    assert result.returncode == 127, result
    expected = f"corral: g/app: exec {missing}: No such file or directory"
    assert expected in result.stderr.splitlines(), result
    failed = result.events.of_task("app", "start_failed")
    assert len(failed) == 1, result.events
    assert missing in failed[0]["message"] and "No such file or directory" in failed[0]["message"]
    assert not result.events.of_task("app", "started"), result.events


def test_exec_failure_counts_as_a_failed_start_for_restarts(corral, tmp_path):
    restart = {"policy": "on-failure", "attempts": 1, "delay": "100ms"}
    result = corral.run(one_task(["/usr/bin/nonexistent-corral-test"], restart=restart))
    assert len(result.events.of_task("app", "start_failed")) == 2, result.events
    assert len(result.events.of_task("app", "restarting")) == 1, result.events
    assert result.returncode == 127, result


def test_exec_of_a_file_that_is_not_executable_gives_126(corral, tmp_path):
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho should not run\n")
    script.chmod(0o644)
    result = corral.run(one_task([str(script)]))
    assert result.returncode == 126, result
    assert f"g/app: exec {script}: Permission denied" in result.stderr, result
    assert "should not run" not in result.stdout


def test_missing_cwd_is_a_failed_start_naming_the_directory(corral, tmp_path):
    missing = tmp_path / "no-such-dir"
    result = corral.run(one_task(sh("echo ran"), cwd=str(missing)))
    assert result.returncode != 0, result
    failed = result.events.of_task("app", "start_failed")
    assert failed and str(missing) in failed[0]["message"], result.events
    assert "ran" not in task_lines(result)


# ---- what a task gets ------------------------------------------------------


def test_relative_command_is_found_through_path(corral, tmp_path):
    result = corral.run(one_task(["printenv", "CORRAL_TASK"]))
    assert result.returncode == 0, result
    assert task_lines(result) == ["app"], result


def test_relative_command_uses_the_path_of_the_task_env(corral, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "corral-test-tool"
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    result = corral.run(one_task(["corral-test-tool"], env={"PATH": f"{bin_dir}:/usr/bin:/bin"}))
    assert result.returncode == 0, result
    assert task_lines(result) == ["tool ran"], result


def test_cwd_is_honoured(corral, tmp_path):
    workdir = tmp_path / "work dir"
    workdir.mkdir()
    result = corral.run(one_task(sh("pwd; echo hi > here"), cwd=str(workdir)))
    assert result.returncode == 0, result
    assert task_lines(result) == [str(workdir)], result
    assert (workdir / "here").read_text() == "hi\n"


def test_environment_of_a_task(corral, tmp_path):
    script = (
        'for v in FOO EQ CORRAL_GROUP CORRAL_TASK CORRAL_TEST_INHERITED OVERRIDDEN; do '
        'eval "echo $v=\\${$v-unset}"; done'
    )
    config = one_task(sh(script), group="web", task="api",
                      env={"FOO": "bar baz", "OVERRIDDEN": "inner", "EQ": "a=b"})
    result = corral.run(config, env={"CORRAL_TEST_INHERITED": "from-corral",
                                     "OVERRIDDEN": "outer"})
    assert result.returncode == 0, result
    assert task_lines(result, "web/api") == [
        "FOO=bar baz",
        "EQ=a=b",
        "CORRAL_GROUP=web",
        "CORRAL_TASK=api",
        "CORRAL_TEST_INHERITED=from-corral",
        "OVERRIDDEN=inner",
    ], result


def test_corral_variables_cannot_be_spoofed_by_the_environment(corral, tmp_path):
    result = corral.run(one_task(["printenv", "CORRAL_TASK"]), env={"CORRAL_TASK": "wrong"})
    assert task_lines(result) == ["app"], result


def test_user_uid_and_gid(corral, tmp_path):
    result = corral.run(one_task(sh("id -u; id -g; id -G"), user="65534:65534"))
    assert result.returncode == 0, result
    # No supplementary group of root's may remain.
    assert task_lines(result) == ["65534", "65534", "65534"], result


@pytest.mark.parametrize("user", ["nobody", "nobody:nogroup", "nobody:65534"])
def test_user_by_name(corral, tmp_path, user):
    result = corral.run(one_task(sh("id -un; id -u; id -g"), user=user))
    assert result.returncode == 0, result
    assert task_lines(result) == ["nobody", "65534", "65534"], result


def test_unknown_user_is_refused_naming_the_task(corral, tmp_path):
    marker = tmp_path / "ran"
    config = {
        "groups": {
            "g": {
                "tasks": {
                    "other": {"command": sh(f"touch {marker}"), "restart": NEVER},
                    "app": {"command": ["id"], "user": "no-such-user-corral", "restart": NEVER},
                }
            }
        }
    }
    result = corral.run(config)
    assert result.returncode == 1, result
    message = [line for line in result.stderr.splitlines() if "no-such-user-corral" in line]
    assert message and "g/app" in message[0], result
    assert not marker.exists(), result


def test_stdin_is_dev_null(corral, tmp_path):
    # corral's own stdin is a pipe that stays open: a task that inherited it
    # would block in cat forever.
    running = corral.start(
        one_task(sh('cat; echo "cat exited $?"; readlink /proc/self/fd/0')),
        stdin=subprocess.PIPE,
    )
    try:
        result = running.wait(timeout=15)
    finally:
        running.popen.stdin.close()
    assert result.returncode == 0, result
    assert task_lines(result) == ["cat exited 0", "/dev/null"], result


# ---- output ----------------------------------------------------------------


@pytest.mark.parametrize("stdout_kind", ["file", "pipe"])
def test_output_lines_are_prefixed(corral, tmp_path, stdout_kind):
    config = {
        "groups": {
            "web": {
                "tasks": {
                    "app": {"command": sh("echo out line; echo err line >&2; echo 'a | b'"),
                            "restart": NEVER},
                    "db": {"command": sh("echo from db"), "restart": NEVER},
                }
            }
        }
    }
    result = corral.run(config) if stdout_kind == "file" else corral.run_piped(config)
    assert result.returncode == 0, result
    lines = result.stdout_lines()
    assert task_lines(result, "web/app") == ["out line", "err line", "a | b"], result
    assert "web/db | from db" in lines
    # Nothing but task output on stdout; none of it on stderr.
    assert all(line.startswith(("web/app | ", "web/db | ")) for line in lines), lines
    assert "out line" not in result.stderr and "err line" not in result.stderr


def test_partial_last_line_is_printed(corral, tmp_path):
    result = corral.run(one_task(sh("printf 'first\\nno newline'")))
    assert result.returncode == 0, result
    assert task_lines(result) == ["first", "no newline"], result


def test_partial_line_of_each_run_is_printed(corral, tmp_path):
    restart = {"policy": "on-failure", "attempts": 1, "delay": "100ms"}
    result = corral.run(one_task(sh("printf 'run without newline'; exit 1"), restart=restart))
    assert task_lines(result) == ["run without newline", "run without newline"], result


BIG_LINES = 50000
BIG_LINE = "x" * 100  # 50000 lines of 101 bytes: about 5 MB


def big_output_config(tmp_path):
    return {
        "groups": {
            "g": {
                "tasks": {
                    "big": {
                        "command": sh(f"yes {BIG_LINE} | head -n {BIG_LINES}"),
                        "lifecycle": {"hook": "prestart"},
                    },
                    "after": {"command": sh(f"touch {tmp_path / 'after-ran'}"),
                              "restart": NEVER},
                }
            }
        }
    }


def check_big_output(stdout, stderr):
    """Every line printed is whole, and none is missing."""
    assert not sanitizer_report(stderr, stdout.decode(errors="replace")), stderr[-3000:]
    lines = stdout.decode(errors="replace").splitlines()
    big = [line for line in lines if line.startswith("g/big | ")]
    assert all(line == f"g/big | {BIG_LINE}" for line in big), "a line was cut or mixed"
    assert all(line.startswith(("g/big | ", "g/after | ")) for line in lines)
    assert "dropped" not in stderr, stderr[-2000:]
    assert len(big) == BIG_LINES, (len(big), stderr[-2000:])


def start_with_pipe(corral, config):
    config_path = corral.config(config)
    stderr_path = corral.dir / "corral.stderr"
    with open(stderr_path, "wb") as stderr:
        popen = subprocess.Popen(
            [str(corral.binary), "run", str(config_path)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr,
            cwd=corral.dir, env=corral.env(), start_new_session=True,
        )
    corral.started.append(popen)
    return popen, stderr_path


def test_huge_output_to_an_unread_pipe_holds_the_writer_not_corral(corral, tmp_path):
    popen, stderr_path = start_with_pipe(corral, big_output_config(tmp_path))
    # Nobody reads corral's stdout yet: the big task is held in write()
    # (nothing is dropped), while corral itself keeps answering.
    wait_for(lambda: corral.cli("status", "g/big").returncode == 0, timeout=20,
             what="corral to answer while its stdout is not read")
    time.sleep(0.5)
    assert corral.task_status("g/big")["state"] == "running"
    assert not (tmp_path / "after-ran").exists()
    chunks = []
    reader = threading.Thread(target=lambda: chunks.append(popen.stdout.read()), daemon=True)
    reader.start()
    try:
        assert popen.wait(timeout=30) == 0, stderr_path.read_text()
    except subprocess.TimeoutExpired:
        pytest.fail("corral did not finish once its stdout was read")
    reader.join(timeout=10)
    assert (tmp_path / "after-ran").exists()
    check_big_output(b"".join(chunks), stderr_path.read_text())


def test_huge_output_to_a_slowly_read_pipe(corral, tmp_path):
    popen, stderr_path = start_with_pipe(corral, big_output_config(tmp_path))
    chunks = []

    def slow_reader():
        while True:
            chunk = popen.stdout.read1(65536)
            if not chunk:
                return
            chunks.append(chunk)
            time.sleep(0.005)

    reader = threading.Thread(target=slow_reader, daemon=True)
    reader.start()
    try:
        assert popen.wait(timeout=60) == 0, stderr_path.read_text()
    except subprocess.TimeoutExpired:
        pytest.fail("corral did not finish while its stdout was read slowly")
    reader.join(timeout=10)
    assert (tmp_path / "after-ran").exists()
    check_big_output(b"".join(chunks), stderr_path.read_text())


def test_command_as_a_shell_string(corral, tmp_path):
    result = corral.run(one_task("echo $CORRAL_GROUP/$CORRAL_TASK | tr a-z A-Z; exit 3"))
    assert task_lines(result) == ["G/APP"], result
    assert result.returncode == 3, result


def test_user_without_a_passwd_entry(corral, tmp_path):
    # A uid unknown to /etc/passwd: gid = uid, no supplementary groups.
    result = corral.run(one_task(sh("id -u; id -g; id -G"), user="54321"))
    assert result.returncode == 0, result
    assert task_lines(result) == ["54321", "54321", "54321"], result


def test_long_line_is_cut_into_whole_pieces(corral, tmp_path):
    result = corral.run(one_task(sh("head -c 10000 /dev/zero | tr '\\0' y; echo; echo next")))
    assert result.returncode == 0, result
    lines = task_lines(result)
    assert lines[-1] == "next", lines
    assert "".join(lines[:-1]) == "y" * 10000, [len(line) for line in lines]
    assert len(lines) > 2


def test_closed_stdout_does_not_kill_corral(corral, tmp_path):
    # corral's stdout is a pipe nobody reads any more: writes fail with
    # EPIPE (SIGPIPE must not kill it) and it goes on to the task's end.
    read_end, write_end = os.pipe()
    os.close(read_end)
    config = corral.config(one_task(sh(f"for i in $(seq 100); do echo line $i; done; "
                                       f"touch {tmp_path / 'done'}; exit 5")))
    try:
        popen = subprocess.Popen(
            [str(corral.binary), "run", "--events", str(tmp_path / "events.jsonl"), str(config)],
            stdin=subprocess.DEVNULL, stdout=write_end, stderr=subprocess.PIPE,
            cwd=tmp_path, env=corral.env(), start_new_session=True,
        )
    finally:
        os.close(write_end)
    corral.started.append(popen)
    _, stderr = popen.communicate(timeout=30)
    assert popen.returncode == 5, stderr.decode()
    assert not sanitizer_report(stderr.decode()), stderr.decode()
    assert (tmp_path / "done").exists()


def test_corral_started_with_standard_fds_closed(corral, tmp_path):
    marker = tmp_path / "ran"
    config = corral.config(one_task(sh(f"echo output; echo $(readlink /proc/self/fd/0) > {marker}")))
    events = tmp_path / "events.jsonl"
    popen = subprocess.Popen(
        ["/bin/sh", "-c", f'exec "$0" run --events {events} {config} <&- >&- 2>&-',
         str(corral.binary)],
        cwd=tmp_path, env=corral.env(), start_new_session=True,
    )
    corral.started.append(popen)
    assert popen.wait(timeout=30) == 0
    assert marker.read_text() == "/dev/null\n"
    assert Events.load(events).of_task("app", "exited"), events.read_text()


def test_no_fd_of_corral_leaks_into_a_task(corral, tmp_path):
    # corral inherits fds without CLOEXEC (3 and 9 here, as a careless
    # parent would leave them) and opens its own (event log, pipes,
    # signalfd, epoll): the task must see only 0, 1 and 2.
    config = corral.config(one_task(sh("ls /proc/$$/fd")))
    events = tmp_path / "events.jsonl"
    popen = subprocess.Popen(
        ["/bin/sh", "-c", f'exec "$0" run --events {events} {config} 3</etc/hostname 9</etc/hostname',
         str(corral.binary)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        cwd=tmp_path, env=corral.env(), start_new_session=True,
    )
    corral.started.append(popen)
    stdout, stderr = popen.communicate(timeout=30)
    assert popen.returncode == 0, stderr.decode()
    assert not sanitizer_report(stderr.decode(), stdout.decode()), stderr.decode()
    fds = [line.split(" | ")[1] for line in stdout.decode().splitlines()]
    assert sorted(fds) == ["0", "1", "2"], fds
