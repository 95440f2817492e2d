"""log.streams: separate gives a task's stderr a pipe of its own: every
line keeps its stream, in order within each stream, on corral's stdout
(stderr marked), in `corral logs` (stderr to the CLI's stderr, "stream" in
--json), in the log file and in `--log-format json`. Without the key both
streams share one pipe and nothing changes."""

import json
import re
import signal
import subprocess

from conftest import sh, wait_for

IDLE = "exec sleep 1000"
# 300 lines on each stream, written alternately, so that both pipes are
# busy at once and a line put on the wrong stream or out of order shows.
ALTERNATE = ('i=1; while [ $i -le 300 ]; do echo "out $i"; echo "err $i" >&2; '
             'i=$((i+1)); done')


def streams_config(**log):
    return {"groups": {"g": {"tasks": {
        "t": {"command": sh(ALTERNATE), "restart": {"policy": "never"},
              "log": {"streams": "separate", **log}},
        "m": {"command": sh("echo m-out; echo m-err >&2"), "restart": {"policy": "never"}},
    }}}}


def numbers(lines, word):
    return [int(line.split()[-1]) for line in lines if line.split()[-2:-1] == [word]]


def test_stdout_shows_each_stream_in_order_with_stderr_marked(corral):
    result = corral.run(streams_config())
    assert result.returncode == 0, result
    lines = result.stdout_lines()
    out = [l for l in lines if l.startswith("g/t | ")]
    err = [l for l in lines if l.startswith("g/t stderr | ")]
    assert numbers(out, "out") == list(range(1, 301)), out[:3]
    assert numbers(err, "err") == list(range(1, 301)), err[:3]
    assert all(l.endswith(f"out {n}") for l, n in zip(out, range(1, 301)))
    assert all(" err " not in l for l in out) and all(" out " not in l for l in err)
    # The task without the key: one pipe, unmarked, as before.
    assert "g/m | m-out" in lines and "g/m | m-err" in lines


def test_logs_sends_stderr_to_the_clis_stderr_and_tags_json(corral):
    config = streams_config()
    config["groups"]["g"]["tasks"]["t"]["command"] = sh(ALTERNATE + "; " + IDLE)
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "err 300" in corral.cli("logs", "g/t").stderr, what="the last line kept")

    plain = corral.cli("logs", "g/t")
    assert plain.stdout.splitlines() == [f"out {n}" for n in range(1, 301)]
    assert plain.stderr.splitlines() == [f"err {n}" for n in range(1, 301)]

    objects = [json.loads(l) for l in corral.cli("logs", "--json", "g").stdout.splitlines()]
    t = [o for o in objects if o["task"] == "t"]
    assert [o["line"] for o in t if o["stream"] == "stdout"] == [f"out {n}" for n in range(1, 301)]
    assert [o["line"] for o in t if o["stream"] == "stderr"] == [f"err {n}" for n in range(1, 301)]
    merged = [o for o in objects if o["task"] == "m"]
    assert [o["line"] for o in merged] == ["m-out", "m-err"]
    assert all("stream" not in o for o in merged)  # one pipe: the stream is not known
    running.send(signal.SIGTERM)
    running.wait()


def test_the_log_file_and_json_stdout_carry_the_stream(corral, tmp_path):
    logs = tmp_path / "logs"
    path = corral.config(streams_config(dir=str(logs)))
    run = subprocess.run([str(corral.binary), "run", "--log-format", "json", str(path)],
                         capture_output=True, text=True, env=corral.env(), timeout=30)
    assert run.returncode == 0, run
    file_lines = (logs / "g" / "t.log").read_text().splitlines()
    stamp = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (stdout|stderr) (out|err) \d+$")
    assert all(stamp.match(l) for l in file_lines), file_lines[:3]
    assert [l.split(" ", 1)[1] for l in file_lines if " stderr " in l] == \
        [f"stderr err {n}" for n in range(1, 301)]

    objects = [json.loads(l) for l in run.stdout.splitlines()]
    t = [o for o in objects if o["task"] == "t"]
    assert len(t) == 600
    assert all(o["line"].startswith("err" if o["stream"] == "stderr" else "out") for o in t)
    assert [o["line"] for o in t if o["stream"] == "stderr"] == [f"err {n}" for n in range(1, 301)]
    assert all("stream" not in o for o in objects if o["task"] == "m")


def test_a_hooks_stderr_goes_to_the_tasks_stderr(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"t": {
        "command": sh("echo main"), "restart": {"policy": "never"},
        "log": {"streams": "separate"},
        "hooks": [{"name": "say", "stage": "poststart",
                   "exec": sh("echo from-hook >&2; echo '{}'")}],
    }}}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    assert "g/t stderr | from-hook" in result.stdout_lines(), result.stdout


def test_changing_streams_on_reload_replaces_the_task(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"t": {
        "command": sh("echo hello; echo oops >&2; " + IDLE)}}}}}
    running = corral.start(corral.config(config, name="reload.yaml"))
    corral.wait_control(running)
    wait_for(lambda: "oops" in corral.cli("logs", "g/t").stdout, what="the merged line")
    config["groups"]["g"]["tasks"]["t"]["log"] = {"streams": "separate"}
    corral.config(config, name="reload.yaml")
    reload = corral.cli("reload")
    assert reload.returncode == 0, reload
    assert "replace" in reload.stdout and "log" in reload.stdout, reload.stdout
    wait_for(lambda: corral.cli("logs", "g/t").stderr.splitlines() == ["oops"],
             what="the new run's stderr apart")
    running.send(signal.SIGTERM)
    running.wait()
