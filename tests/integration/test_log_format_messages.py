"""With log_format json, everything a log shipper reads is JSON lines
with one way of writing the time (seconds since the epoch, exactly three
decimals): task lines on stdout, corral's own messages on stderr, `logs
--json` and the event log. Plain stays as it was."""

import json
import re
import signal

from conftest import sh, wait_for

TIME = re.compile(r'^\{"time":\d{10}\.\d{3}[,}]')

LONG_TASK = {"groups": {"web": {"tasks": {"app": {
    "command": sh('echo hello; exec sleep 60')}}}}}


def json_lines(text):
    lines = [line for line in text.splitlines() if line]
    for line in lines:
        assert TIME.match(line), line
    return [json.loads(line) for line in lines]


def run_briefly(corral, config, run_args=()):
    running = corral.start(config, run_args=run_args)
    corral.wait_control(running)
    wait_for(lambda: "hello" in (corral.dir / "corral.stdout").read_text(), what="hello")
    logs = corral.cli("logs", "--json", "web/app").stdout
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    return result, logs


def test_json_makes_corrals_own_messages_json_lines_too(corral):
    result, _ = run_briefly(corral, {**LONG_TASK, "log_format": "json"})
    messages = json_lines(result.stderr)
    assert messages, result.stderr
    for message in messages:
        assert message["source"] == "corral"
        assert message["level"] in ("info", "warning", "error", "debug")
    started = [m for m in messages if m.get("task") == "web/app" and
               m["message"].startswith("started (pid ")]
    assert len(started) == 1, messages
    assert list(started[0]) == ["time", "level", "source", "task", "message"]
    assert started[0]["level"] == "info"


def test_the_flag_does_the_same(corral):
    result, _ = run_briefly(corral, LONG_TASK, run_args=("--log-format", "json"))
    assert any(m.get("task") == "web/app" for m in json_lines(result.stderr))


def test_one_time_format_for_task_lines_logs_and_events(corral):
    result, logs = run_briefly(corral, {**LONG_TASK, "log_format": "json"})
    task_lines = json_lines(result.stdout)
    assert [o["line"] for o in task_lines] == ["hello"]
    replayed = json_lines(logs)
    assert [o["line"] for o in replayed] == ["hello"]
    # The same line, the same time, written the same way.
    assert re.match(r'\{"time":[0-9.]+', logs).group() == \
        re.match(r'\{"time":[0-9.]+', result.stdout).group()
    events = json_lines((corral.dir / "events.jsonl").read_text())
    assert any(e.get("event") == "started" for e in events), events


def test_plain_messages_stay_as_they_were(corral):
    result, logs = run_briefly(corral, LONG_TASK)
    assert re.search(r"^corral: web/app: started \(pid \d+\)$", result.stderr, re.M), result.stderr
    assert result.stdout.splitlines() == ["web/app | hello"]
