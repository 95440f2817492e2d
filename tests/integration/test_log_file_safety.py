"""Log files where someone else can write (issue 27, items 2, 8 and 11):
corral writes DIR/GROUP/TASK.log as root, so a link planted at the file's
name (or on the way to the names a rotation uses) must never be followed,
a directory a task's user could write is refused unless the config says it
is shared, a rotation that cannot rename never spins, and every line a
full disk loses is counted and said, even when the task goes quiet.

The test itself plays the hostile task: it plants links and directories
as root, which is what a task that can write the directory could do."""

import os
import re
import signal
from pathlib import Path

from conftest import RUN_TIMEOUT, sh, wait_for

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z line (\d+) of the task$")


def print_lines(count, then=""):
    """Shell that prints "line N of the task" for N in 1..count, then runs
    `then`."""
    return (f'i=1; while [ $i -le {count} ]; do echo "line $i of the task"; i=$((i+1)); done; '
            f"{then}")


def task(script, **extra):
    return {"command": sh(script), "restart": {"policy": "never"}, **extra}


def task_lines(result, name):
    return [l for l in result.stdout_lines() if l.startswith(f"{name} | ")]


def private_dir(path):
    """A directory as an operator makes one for corral: root's, 0755."""
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o755)
    return path


def test_a_log_file_that_is_a_symlink_is_refused_and_its_target_stays_unchanged(
        corral, tmp_path):
    logs = tmp_path / "logs"
    private_dir(logs / "g")
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    (logs / "g" / "t.log").symlink_to(victim)
    config = {"groups": {"g": {"log": {"dir": str(logs)}, "tasks": {
        "t": task(print_lines(50)), "u": task(print_lines(30))}}}}

    result = corral.run(config)

    assert result.returncode == 0, result  # the task ran to its end
    assert victim.read_text() == "precious\n"
    refusals = [l for l in result.stderr.splitlines() if "refused" in l]
    assert refusals == [f"corral: g/t: log file {logs}/g/t.log refused: it is a symbolic link; "
                        "its lines go on to stdout and corral logs, not to a file"], result
    assert (logs / "g" / "t.log").is_symlink()
    # Its lines reach stdout; the other task's file is written as ever.
    assert len(task_lines(result, "g/t")) == 50
    assert len(task_lines(result, "g/u")) == 30
    assert len((logs / "g" / "u.log").read_text().splitlines()) == 30


def test_a_rotation_stays_in_the_directory_corral_opened(corral, tmp_path):
    """Once the task's file is open, the group directory is swapped for a
    link to another directory holding a t.log of its own. Rotating by
    path would rename that file and begin a new one there; corral renames
    and reopens inside the directory it holds."""
    logs = tmp_path / "logs"
    go = tmp_path / "go"
    script = f'echo first; while [ ! -e {go} ]; do sleep 0.05; done; ' + print_lines(400)
    config = {"groups": {"g": {"log": {"dir": str(logs), "max_size": "4K", "keep": 1},
                               "tasks": {"t": task(script)}}}}
    running = corral.start(config)
    first = logs / "g" / "t.log"
    wait_for(lambda: first.exists() and "first" in first.read_text(),
             timeout=RUN_TIMEOUT, what="the first line in t.log")

    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "t.log").write_text("precious\n")
    os.rename(logs / "g", logs / "g.real")
    (logs / "g").symlink_to(victim)
    # And the name the file rotates to is a link too: replaced, not
    # followed.
    other_victim = tmp_path / "other-victim"
    other_victim.write_text("precious\n")
    (logs / "g.real" / "t.log.1").symlink_to(other_victim)
    go.touch()
    result = running.wait()

    assert result.returncode == 0, result
    assert sorted(p.name for p in victim.iterdir()) == ["t.log"]
    assert (victim / "t.log").read_text() == "precious\n"
    assert other_victim.read_text() == "precious\n"
    real = logs / "g.real"
    assert not (real / "t.log.1").is_symlink()
    assert sorted(p.name for p in real.iterdir()) == ["t.log", "t.log.1"]
    lines = (real / "t.log.1").read_text().splitlines() + (real / "t.log").read_text().splitlines()
    numbers = [int(STAMP.match(l).group(1)) for l in lines]
    assert numbers == list(range(numbers[0], 401)), numbers[:5]


def test_a_log_dir_others_can_write_is_refused_unless_shared(corral, tmp_path):
    writable = tmp_path / "writable"
    writable.mkdir()
    writable.chmod(0o777)
    foreign = private_dir(tmp_path / "foreign")
    private_dir(foreign / "h")
    os.chown(foreign / "h", 65534, 65534)  # made by another user: not corral's to trust
    config = {"groups": {"g": {"log": {"dir": str(writable)}, "tasks": {"t": task(print_lines(20))}},
                         "h": {"log": {"dir": str(foreign)}, "tasks": {"t": task(print_lines(20))}}}}

    result = corral.run(config)

    assert result.returncode == 0, result
    assert (f"corral: g/t: log file {writable}/g/t.log refused: {writable} is writable by group "
            "or others (mode 0777)") in result.stderr, result
    assert (f"corral: h/t: log file {foreign}/h/t.log refused: {foreign}/h is owned by uid "
            "65534, not by corral (uid 0) or root") in result.stderr, result
    assert result.stderr.count("refused") == 2
    assert "log.shared_dir: true" in result.stderr
    assert not (writable / "g").exists()
    assert not (foreign / "h" / "t.log").exists()
    assert len(task_lines(result, "g/t")) == 20 and len(task_lines(result, "h/t")) == 20

    # The operator says the directories are shared: written, still without
    # following links.
    for group in config["groups"].values():
        group["log"]["shared_dir"] = True
    result = corral.run(config)
    assert result.returncode == 0, result
    assert "refused" not in result.stderr, result
    assert len((writable / "g" / "t.log").read_text().splitlines()) == 20
    assert len((foreign / "h" / "t.log").read_text().splitlines()) == 20


def test_a_rotation_that_cannot_rename_is_said_once_and_corral_stays_responsive(
        corral, tmp_path):
    """TASK.log.1 is a directory: rename(2) fails at every rotation. corral
    used to retry at once, forever (100% CPU, no status, no SIGTERM)."""
    logs = tmp_path / "logs"
    private_dir(logs / "g" / "t.log.1")
    done = tmp_path / "done"
    config = {"groups": {"g": {"log": {"dir": str(logs), "max_size": "4K", "keep": 1},
                               "tasks": {"t": task(print_lines(400, f"touch {done}; exec sleep 1000"))}}}}
    running = corral.start(config)
    log = logs / "g" / "t.log"
    # 400 lines are about 18K: four times max_size, all written on.
    wait_for(lambda: done.exists() and log.exists() and log.read_text().count("\n") == 400,
             timeout=RUN_TIMEOUT, what=lambda: f"400 lines in t.log\n{running.stderr_text()}")

    status = corral.cli("status")
    assert status.returncode == 0, status
    assert "running" in status.stdout, status.stdout
    said = [l for l in running.stderr_text().splitlines() if "cannot rotate" in l]
    assert said == [f"corral: g/t: log file {log}: cannot rotate it: Is a directory; it is "
                    "written on past log.max_size, and rotation is tried again once it has "
                    "grown by another 4096 bytes"], running.stderr_text()
    running.send(signal.SIGTERM)
    running.wait()
    assert (logs / "g" / "t.log.1").is_dir()
    numbers = [int(STAMP.match(l).group(1)) for l in log.read_text().splitlines()]
    assert numbers == list(range(1, 401))


def test_lines_lost_to_a_full_disk_are_counted_exactly_and_said_while_the_task_is_quiet(
        corral, small_tmpfs):
    logs = small_tmpfs("size=64k,mode=0755")
    config = {"groups": {"g": {"log": {"dir": str(logs)}, "tasks": {
        "t": task(print_lines(3000, "exec sleep 1000"))}}}}
    running = corral.start(config)
    stdout = running.directory / "corral.stdout"
    wait_for(lambda: stdout.read_text().count("g/t | line ") == 3000, timeout=RUN_TIMEOUT,
             what="3000 lines on stdout")

    log = logs / "g" / "t.log"

    def said_in_all():
        # The lines the file holds whole; read again each time, since its
        # last batch is written just after the lines reach stdout.
        lost = 3000 - log.read_text().count("\n")
        counts = re.findall(r"\((\d+) in all\)", running.stderr_text())
        return counts and int(counts[-1]) == lost

    # The task went quiet after its last line: the count comes all the
    # same, by the report timer.
    wait_for(said_in_all, timeout=RUN_TIMEOUT,
             what=lambda: f"'(lines lost in all)' on stderr:\n{running.stderr_text()}")
    text = log.read_text()
    lost = 3000 - text.count("\n")
    assert 0 < lost < 3000
    assert running.alive()
    assert "No space left on device" in running.stderr_text()
    assert text.endswith("\n")  # whole lines only: a cut line is taken back
    numbers = [int(STAMP.match(l).group(1)) for l in text.splitlines()]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    running.send(signal.SIGTERM)
    result = running.wait()
    counts = re.findall(r"\((\d+) in all\)", result.stderr)
    assert int(counts[-1]) == lost, result  # nothing counted twice at the end
    per_report = re.findall(r": (\d+) lines? not written to it", result.stderr)
    assert sum(map(int, per_report)) == lost, result
