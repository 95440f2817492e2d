"""A config from a directory (its *.yaml and *.yml, in name order) or from
several files, merged into one, as s6-overlay's services.d and
supervisord's conf.d let each image layer add its own file; `corral check
--print` shows what corral reads. Asserted from what the tasks print, the
errors' places, and a reload that picks up a new file."""

import json
import signal
import subprocess
from pathlib import Path

import yaml

from conftest import sh, wait_for

IDLE = "exec sleep 1000"


def write(path, config):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(config if isinstance(config, str) else json.dumps(config, indent=2))
    return path


def cli(corral, *args):
    return subprocess.run([str(corral.binary), *map(str, args)], capture_output=True, text=True,
                          env=corral.env(), timeout=30)


def test_a_directory_is_merged_in_name_order(corral, tmp_path):
    conf = tmp_path / "conf.d"
    write(conf / "10-web.yaml", {"shutdown_timeout": "5s", "groups": {"web": {
        "restart": {"policy": "never"},
        "tasks": {"app": {"command": sh("echo app $GREETING"), "env_file": "app.env"}}}}})
    (conf / "app.env").write_text("GREETING=hello\n")  # relative to the file naming it
    write(conf / "20-more.yml", {"groups": {
        "web": {"tasks": {"second": {"command": sh("echo second")}}},
        "db": {"tasks": {"pg": {"command": sh("echo pg"), "restart": {"policy": "never"}}}}}})
    (conf / "README.md").write_text("not a config")
    (conf / ".hidden.yaml").write_text("not: [valid")

    check = cli(corral, "check", conf)
    assert check.returncode == 0 and "ok (2 groups, 3 tasks)" in check.stdout, check
    result = corral.run(conf)
    assert result.returncode == 0, result
    lines = result.stdout_lines()
    assert "web/app | app hello" in lines and "db/pg | pg" in lines, lines
    # The group's restart policy (from the first file) holds for the task
    # of the second: it ran once.
    assert lines.count("web/second | second") == 1, lines


def test_a_key_or_task_written_twice_names_both_places(corral, tmp_path):
    first = write(tmp_path / "a.yaml", "shutdown_timeout: 5s\ngroups:\n  web:\n    tasks:\n"
                                       "      app: {command: [sleep, '1']}\n")
    second = write(tmp_path / "b.yaml", "shutdown_timeout: 9s\ngroups:\n  web:\n    tasks:\n"
                                        "      app: {command: [sleep, '2']}\n")
    check = cli(corral, "check", first, second)
    assert check.returncode == 1, check
    assert check.stderr.splitlines() == [
        f'{second}:1:1: duplicate key "shutdown_timeout" (first defined at {first}:1)',
        f'{second}:5:7: group web: duplicate task "app" (first defined at {first}:5)',
        f"{first}: 2 errors",
    ], check.stderr


def test_errors_are_placed_in_their_own_file(corral, tmp_path):
    conf = tmp_path / "conf.d"
    write(conf / "a.yaml", {"groups": {"g": {"tasks": {"ok": {"command": ["true"]}}}}})
    bad = write(conf / "b.yaml", "groups:\n  g:\n    tasks:\n      bad: {comand: [true]}\n")
    check = cli(corral, "check", conf)
    assert check.returncode == 1
    assert f'{bad}:4:13: g/bad: unknown key "comand"; did you mean "command"?' in check.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    check = cli(corral, "check", empty)
    assert f"{empty}: no *.yaml or *.yml file in this directory" in check.stderr, check


def test_check_print_shows_the_merged_config_with_variables(corral, tmp_path):
    conf = tmp_path / "conf.d"
    write(conf / "a.yaml", "interpolate: true\ngroups:\n  g:\n    tasks:\n"
                           "      a: {command: [echo, '${WHO:-nobody}']}\n")
    write(conf / "b.yaml", "groups:\n  g:\n    tasks:\n      b: {command: [echo, b]}\n")
    printed = subprocess.run([str(corral.binary), "check", "--print", str(conf)],
                             capture_output=True, text=True, timeout=30,
                             env=corral.env({"WHO": "world"}))
    assert printed.returncode == 0, printed

    config = yaml.safe_load(printed.stdout)
    assert config["groups"]["g"]["tasks"] == {"a": {"command": ["echo", "world"]},
                                              "b": {"command": ["echo", "b"]}}
    # What it prints is a config corral reads as it is.
    again = write(tmp_path / "printed.yaml", printed.stdout)
    assert cli(corral, "check", again).returncode == 0


def test_a_reload_reads_the_directory_again(corral, tmp_path):
    conf = tmp_path / "conf.d"
    write(conf / "a.yaml", {"groups": {"g": {"tasks": {"a": {"command": sh(IDLE)}}}}})
    running = corral.start(conf)
    corral.wait_control(running)
    write(conf / "b.yaml", {"groups": {"g": {"tasks": {"b": {"command": sh(f"echo b; {IDLE}")}}}}})
    reload = corral.cli("reload")
    assert reload.returncode == 0, reload
    wait_for(lambda: "b" in corral.cli("logs", "g/b").stdout, what="the new file's task")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_the_conf_d_example(corral):
    example = Path(__file__).resolve().parents[2] / "examples" / "conf.d"
    result = corral.run(example)
    assert result.returncode == 0, result
    lines = result.stdout_lines()
    assert "web/server | server: done" in lines, lines
    assert sorted(l for l in lines if "worker" in l) == [
        f"web/worker@{i} | worker {i}: working" for i in range(3)], lines
