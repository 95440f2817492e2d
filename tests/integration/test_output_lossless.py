"""Task output is never dropped: when corral's stdout is read slowly, the
tasks that write are held in write() (back pressure), every line arrives
whole and in order, corral keeps answering its control socket, and a
second task's lines keep flowing between the flood's. Counted and
checksummed from outside."""

import hashlib
import subprocess
import threading
import time

from conftest import sh, wait_for

LINES = 200000


def flood_and_ticker(tmp_path):
    # `seq` numbers every line: a gap, a repeat or a cut line shows.
    return {"groups": {"g": {"tasks": {
        "flood": {"command": sh(f"seq -f 'line %.0f of the flood' 1 {LINES}"),
                  "restart": {"policy": "never"}},
        "ticker": {"command": sh("i=0; while [ $i -lt 40 ]; do i=$((i+1)); echo tick $i; "
                                 "sleep 0.05; done"),
                   "restart": {"policy": "never"}},
    }}}}


def test_a_slow_reader_loses_nothing_and_corral_keeps_answering(corral, tmp_path):
    config_path = corral.config(flood_and_ticker(tmp_path))
    stderr_path = tmp_path / "corral.stderr"
    with open(stderr_path, "wb") as stderr:
        popen = subprocess.Popen([str(corral.binary), "run", str(config_path)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=stderr, cwd=tmp_path, env=corral.env(),
                                 start_new_session=True)
    corral.started.append(popen)
    chunks = []

    def slow_reader():
        # About 4 MB/s: far slower than seq writes.
        while chunk := popen.stdout.read1(16384):
            chunks.append(chunk)
            time.sleep(0.004)

    reader = threading.Thread(target=slow_reader, daemon=True)
    reader.start()
    # While the flood is held back, the control socket answers.
    wait_for(lambda: corral.cli("status", "g/flood").returncode == 0, timeout=20,
             what="status while stdout is slow")
    flood = corral.task_status("g/flood")
    assert popen.wait(timeout=120) == 0, stderr_path.read_text()
    reader.join(timeout=10)
    stderr_text = stderr_path.read_text()
    assert "dropped" not in stderr_text, stderr_text[-2000:]

    lines = b"".join(chunks).decode().splitlines()
    got = [line.removeprefix("g/flood | ") for line in lines if line.startswith("g/flood | ")]
    expected = [f"line {n} of the flood" for n in range(1, LINES + 1)]
    assert len(got) == LINES, (len(got), stderr_text[-2000:])
    assert hashlib.sha256("\n".join(got).encode()).hexdigest() == \
        hashlib.sha256("\n".join(expected).encode()).hexdigest()
    # The ticker was not starved until the flood was over: its lines are
    # spread through the flood's.
    ticks = [i for i, line in enumerate(lines) if line.startswith("g/ticker | ")]
    assert len(ticks) == 40, ticks
    last_flood = max(i for i, line in enumerate(lines) if line.startswith("g/flood | "))
    assert sum(1 for t in ticks if t < last_flood) >= 10, (ticks, last_flood)
    assert flood["state"] in ("running", "dead"), flood


def test_non_blocking_mode_drops_for_that_task_only_and_says_so(corral, tmp_path):
    done = tmp_path / "done"
    config_path = corral.config({"groups": {"g": {"tasks": {
        # Dropping is a task's explicit choice (Docker's mode: non-blocking).
        "noisy": {"command": sh(f"seq 1 {LINES}; touch {done}; exec sleep 1000"),
                  "log": {"mode": "non-blocking"}},
        # The default holds the writer instead.
        "careful": {"command": sh(f"seq 1 {LINES}; touch {done}-careful; exec sleep 1000")},
    }}}})
    stderr_path = tmp_path / "corral.stderr"
    with open(stderr_path, "wb") as stderr:
        popen = subprocess.Popen([str(corral.binary), "run", str(config_path)],
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=stderr, cwd=tmp_path, env=corral.env(),
                                 start_new_session=True)
    corral.started.append(popen)
    # Nobody reads corral's stdout: the non-blocking task still gets done.
    wait_for(done.exists, timeout=30, what="the non-blocking task to write everything")
    assert not (tmp_path / "done-careful").exists()
    assert corral.task_status("g/noisy")["output_dropped_lines"] > 0
    assert corral.task_status("g/careful")["output_dropped_lines"] == 0
    wait_for(lambda: "g/noisy: stdout cannot keep up: dropping its lines" in
             stderr_path.read_text(), what="the drops to be said")
    # Once stdout is read, the careful task finishes with nothing lost.
    chunks = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(
        lambda: popen.stdout.read1(65536), b"")), daemon=True)
    reader.start()
    wait_for((tmp_path / "done-careful").exists, timeout=60, what="the careful task")
    corral.cli("shutdown")
    assert popen.wait(timeout=60) == 0
    reader.join(timeout=10)
    lines = b"".join(chunks).decode().splitlines()
    careful = [line for line in lines if line.startswith("g/careful | ")]
    assert careful == [f"g/careful | {n}" for n in range(1, LINES + 1)]
    assert "dropped" in stderr_path.read_text() and "log.mode: non-blocking" in \
        stderr_path.read_text()
