"""Log files (config `log.dir`): corral writes each task's lines, after
their UTC time, to DIR/GROUP/TASK.log and rotates it at max_size, keeping
`keep` old files; a read-only or full disk is reported and stops nothing."""

import os
import re
import subprocess
import time
from pathlib import Path

from conftest import sh

STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z ")


def lines_task(count, **log):
    script = f'i=1; while [ $i -le {count} ]; do echo "line $i of the task"; i=$((i+1)); done'
    return {"groups": {"g": {"log": log, "tasks": {"t": {
        "command": sh(script), "restart": {"policy": "never"}}}}}}


def test_lines_are_written_with_their_time_and_rotated_at_max_size(corral, tmp_path):
    logs = tmp_path / "logs"
    result = corral.run(lines_task(400, dir=str(logs), max_size="4K", keep=2))
    assert result.returncode == 0, result
    files = sorted(p.name for p in (logs / "g").iterdir())
    assert files == ["t.log", "t.log.1", "t.log.2"], files  # two kept, the rest deleted
    text = []
    for name in ["t.log.2", "t.log.1", "t.log"]:  # oldest first
        content = (logs / "g" / name).read_text().splitlines()
        assert len((logs / "g" / name).read_bytes()) <= 4096  # rotated between lines
        for line in content:
            assert STAMP.match(line), line
        text += [STAMP.sub("", line) for line in content]
    numbers = [int(line.split()[1]) for line in text]
    assert numbers == list(range(numbers[0], 401)), numbers[:5]  # in order, the newest kept
    assert numbers[0] > 1  # the oldest went with the rotations
    assert len(result.stdout_lines()) == 400  # stdout has every line, as before


def test_a_read_only_log_dir_is_reported_and_stops_nothing(corral, small_tmpfs):
    logs = small_tmpfs("ro,size=1m")
    result = corral.run(lines_task(50, dir=str(logs / "sub")))
    assert result.returncode == 0, result
    assert "g/t: log file" in result.stderr and "Read-only file system" in result.stderr
    assert len([l for l in result.stdout_lines() if l.startswith("g/t | ")]) == 50


def test_a_full_disk_loses_lines_to_the_file_only_and_says_how_many(corral, small_tmpfs):
    # 0755: a tmpfs is 1777 by default, and a log dir others can write is
    # refused (test_log_file_safety.py).
    logs = small_tmpfs("size=16k,mode=0755")
    result = corral.run(lines_task(3000, dir=str(logs)))
    assert result.returncode == 0, result
    assert "No space left on device" in result.stderr, result.stderr
    said = re.findall(r"\((\d+) in all\)", result.stderr)
    assert said and int(said[-1]) > 0, result.stderr
    written = (logs / "g" / "t.log").read_text().splitlines()
    assert int(said[-1]) + len(written) == 3000  # every lost line counted, once
    assert len([l for l in result.stdout_lines() if l.startswith("g/t | ")]) == 3000


def test_a_rate_limit_holds_a_flooding_task_to_its_rate(corral):
    """`yes` for 2 s: with log.rate_limit 64K, corral reads about a second's
    worth a second (plus what the pipe holds at the end), and says so; the
    task waits, nothing is lost."""
    def flood(seconds="2", **log):
        return {"groups": {"g": {"log": log, "tasks": {"yes": {
            "command": ["timeout", seconds, "yes"],
            "restart": {"policy": "never", "success_exit": [124]}}}}}}

    limited = corral.run_piped(flood(rate_limit="64K"))
    assert limited.returncode == 0, limited
    assert "output over log.rate_limit (65536 bytes/s)" in limited.stderr, limited.stderr
    limited_bytes = len(limited.stdout)
    unlimited = corral.run_piped(flood("1"))
    assert "output over log.rate_limit" not in unlimited.stderr
    # 2 s at 64K/s, a second's burst, a read past it and the 256K pipe
    # drained at the end, as "g/yes | y" lines (10 bytes for each 2 the
    # task wrote).
    assert limited_bytes < 5 * (4 * 64 * 1024 + 320 * 1024), limited_bytes
    # Unlimited, half the time gives several times as much.
    assert len(unlimited.stdout) > 3 * limited_bytes, (len(unlimited.stdout), limited_bytes)
    # Every line the task wrote is there: whole "g/yes | y" lines only.
    assert set(limited.stdout.splitlines()) == {"g/yes | y"}


def test_the_rate_limit_holds_when_stdout_is_slow_too(corral):
    """A read held for room on a full stdout was not charged to the rate
    limit, so a flood behind a slow reader went on at the reader's speed
    (18 MB instead of about 0.5 MB, seen under load). Now every read
    counts. The reader stalls 1 s (corral's buffer fills), then reads
    4 MB/s: far more than the limit lets through, so with every read
    charged corral's buffer empties and stays so."""
    config = {"groups": {"g": {"log": {"rate_limit": "64K"}, "tasks": {"yes": {
        "command": ["timeout", "3", "yes"],
        "restart": {"policy": "never", "success_exit": [124]}}}}}}
    path = corral.config(config)
    process = subprocess.Popen([str(corral.binary), "run", str(path)], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, env=corral.env())
    time.sleep(1)
    out = bytearray()
    while chunk := os.read(process.stdout.fileno(), 65536):
        out += chunk
        time.sleep(0.016)
    assert process.wait(timeout=60) == 0
    # 3 s at 64K/s, a second's burst, a read past it, the 256K pipe drained
    # at the end: at most 576K from the task, 5 bytes out for each.
    assert len(out) < 5 * (5 * 64 * 1024 + 256 * 1024), len(out)
    assert set(out.decode().splitlines()) == {"g/yes | y"}
