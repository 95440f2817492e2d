"""How task lines look on corral's stdout: plain (the default, as before),
timestamped, or JSON lines for log shippers (`corral run --log-format`,
the config's `log_format`)."""

import json
import re
import subprocess
import time

from conftest import sh

LINES = sh(r'printf "plain line\nquote \" backslash \\ tab \t end\n\377\376 not utf-8\n"')


def one_task(**top):
    return {**top, "groups": {"web": {"tasks": {"app": {"command": LINES,
                                                        "restart": {"policy": "never"}}}}}}


def run(corral, config, *options):
    path = corral.config(config)
    started = time.time()
    result = subprocess.run([str(corral.binary), "run", *options, str(path)],
                            capture_output=True, env=corral.env(), timeout=30)
    assert result.returncode == 0, result
    return result.stdout.decode("utf-8", "replace").splitlines(), started, time.time()


def test_plain_is_the_default_and_unchanged(corral):
    lines, _, _ = run(corral, one_task())
    assert lines[:2] == ["web/app | plain line", 'web/app | quote " backslash \\ tab \t end']


def test_json_lines_carry_time_group_task_and_the_line_escaped(corral):
    lines, started, ended = run(corral, one_task(), "--log-format", "json")
    objects = [json.loads(line) for line in lines]
    assert [o["line"] for o in objects] == [
        "plain line", 'quote " backslash \\ tab \t end', "\ufffd\ufffd not utf-8"]
    for o in objects:
        assert list(o) == ["time", "group", "task", "line"]
        assert (o["group"], o["task"]) == ("web", "app")
        assert started - 1 <= o["time"] <= ended + 1


def test_the_config_key_and_the_flag_over_it(corral):
    lines, _, _ = run(corral, one_task(log_format="timestamped"))
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z web/app \| plain line",
                        lines[0]), lines[0]
    lines, _, _ = run(corral, one_task(log_format="timestamped"), "--log-format", "plain")
    assert lines[0] == "web/app | plain line"


def test_a_bad_format_is_refused_with_its_place(corral):
    result = corral.check(one_task(log_format="xml"))
    assert result.returncode == 1
    assert ':2:17: log_format: unknown log format "xml"' in result.stderr, result.stderr
    usage = corral.cli("run", "--log-format", "xml", "x.yaml")
    assert usage.returncode == 2
    assert "--log-format xml: expected plain, timestamped or json" in usage.stderr
