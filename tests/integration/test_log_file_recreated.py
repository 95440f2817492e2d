"""A log directory or file removed (or moved) while corral runs is made
again at the next batch of lines, with the checks of the start; lines that
could not be written meanwhile are counted, as any other loss."""

import re
import shutil
import signal

from conftest import sh, wait_for

# A line every 50 ms: "tick N".
TICKER = sh('i=0; while :; do i=$((i+1)); echo "tick $i"; sleep 0.05; done')


def ticker(logs):
    return {"groups": {"g": {"log": {"dir": str(logs)}, "tasks": {"t": {"command": TICKER}}}}}


def ticks(path):
    try:
        return [int(line.split()[-1]) for line in path.read_text().splitlines()]
    except FileNotFoundError:
        return []


def grows(path, after=0):
    return lambda: any(n > after for n in ticks(path))


def stop(running):
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    return result


def test_a_removed_log_directory_is_made_again(corral, tmp_path):
    logs = tmp_path / "logs"
    running = corral.start(ticker(logs))
    log = logs / "g" / "t.log"
    wait_for(grows(log), what="the first lines")
    shutil.rmtree(logs)
    wait_for(grows(log), timeout=5, what="the log directory made again")
    assert (logs / "g").stat().st_mode & 0o777 == 0o755
    result = stop(running)
    assert "g/t: log file" in result.stderr and "made again" in result.stderr, result.stderr


def test_a_deleted_or_moved_file_is_begun_again(corral, tmp_path):
    logs = tmp_path / "logs"
    running = corral.start(ticker(logs))
    log = logs / "g" / "t.log"
    wait_for(grows(log), what="the first lines")
    log.unlink()
    wait_for(grows(log), timeout=5, what="a new file after the delete")
    # Moved away (logrotate without copytruncate): the old file stops
    # growing, the new one takes the lines.
    moved = logs / "g" / "t.log.old"
    log.rename(moved)
    wait_for(grows(log), timeout=5, what="a new file after the move")
    last_moved = max(ticks(moved))
    wait_for(grows(log, after=last_moved + 3), timeout=5, what="more lines")
    assert max(ticks(moved)) == last_moved
    assert min(ticks(log)) > last_moved
    stop(running)


def test_lines_lost_while_it_cannot_be_made_are_counted(corral, tmp_path):
    logs = tmp_path / "logs"
    running = corral.start(ticker(logs))
    log = logs / "g" / "t.log"
    wait_for(grows(log), what="the first lines")
    shutil.rmtree(logs)
    logs.write_text("not a directory\n")  # mkdir cannot make it
    wait_for(lambda: "lines not written to it" in running.stderr_text()
             or "line not written to it" in running.stderr_text(), timeout=5,
             what="the loss said")
    logs.unlink()
    wait_for(grows(log), timeout=5, what="the directory made again")
    result = stop(running)
    said = re.findall(r"is written again \((\d+) lines were lost to it\)", result.stderr)
    assert said and int(said[0]) > 0, result.stderr
    # Every tick is on stdout; the file has what was not lost.
    assert "g/t | tick 1" in result.stdout


def test_made_again_with_the_checks_of_the_start(corral, tmp_path):
    logs = tmp_path / "logs"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    running = corral.start(ticker(logs))
    log = logs / "g" / "t.log"
    wait_for(grows(log), what="the first lines")
    # A link planted where DIR/GROUP was, before the old one is deleted
    # (so that corral sees the deletion only once the link is there).
    (tmp_path / "link").symlink_to(elsewhere)
    (logs / "g").rename(tmp_path / "gone")
    (tmp_path / "link").rename(logs / "g")
    shutil.rmtree(tmp_path / "gone")
    wait_for(lambda: "refused" in running.stderr_text(), timeout=5, what="the refusal")
    result = stop(running)
    assert re.search(r"logs/g is (a symbolic link|not a directory)", result.stderr), result.stderr
    assert list(elsewhere.iterdir()) == []
