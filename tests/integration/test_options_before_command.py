"""Options before the command (issue 35, item 3): `corral -c FILE status`
is `corral status -c FILE`, as git and kubectl read options before their
command; it never runs FILE in one-command mode. An option a command does
not take is a usage error naming it, wherever it was written. One-command
mode is what `--`, or no command at all, asks for. Asserted from the CLI's
output and exit codes, and from what the one-command program leaves."""

import json
import os

from conftest import sh

IDLE = {"groups": {"g": {"tasks": {"app": {"command": sh("exec sleep 1000")}}}}}


def start_with_socket_in_config(corral):
    """A corral whose socket only its config names (the CLI's environment
    does not say it)."""
    socket_path = corral.dir / "from-config.sock"
    config = corral.config({"socket": str(socket_path), **IDLE})
    running = corral.start(config, env={"CORRAL_SOCKET": str(socket_path)})
    corral.wait_control(running, path=socket_path)
    return config


def test_dash_c_before_status_names_the_config_whose_socket_it_asks(corral):
    config = start_with_socket_in_config(corral)
    # An executable config: one-command mode would have run it.
    config.chmod(0o755)
    result = corral.cli("-c", config, "status", "--json", env={"CORRAL_SOCKET": ""})
    assert result.returncode == 0, result
    reply = json.loads(result.stdout)
    assert [task["task"] for group in reply["groups"] for task in group["tasks"]] == ["g/app"]
    # The same as written after the command.
    after = corral.cli("status", "-c", config, "--json", "g/app", env={"CORRAL_SOCKET": ""})
    before = corral.cli("--config", config, "status", "--json", "g/app",
                        env={"CORRAL_SOCKET": ""})
    assert after.returncode == before.returncode == 0, (after, before)
    pids = [json.loads(r.stdout)["groups"][0]["tasks"][0]["pid"] for r in (before, after)]
    assert isinstance(pids[0], int) and pids[0] == pids[1], pids


def test_socket_before_a_command_with_options_after_it(corral):
    running = corral.start(IDLE)
    corral.wait_control(running)
    result = corral.cli("--socket", corral.socket_path, "status", "--json", "g",
                        env={"CORRAL_SOCKET": ""})
    assert result.returncode == 0, result
    assert json.loads(result.stdout)["groups"][0]["name"] == "g"


def test_an_option_the_command_does_not_take_is_a_usage_error_naming_it(corral, tmp_path):
    marker = tmp_path / "ran"
    # A program called `status` in PATH: one-command mode would run it.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "status").write_text(f"#!/bin/sh\ntouch {marker}\n")
    (bin_dir / "status").chmod(0o755)
    env = {"PATH": f"{bin_dir}:{os.environ['PATH']}"}
    result = corral.cli("-v", "status", env=env)
    assert result.returncode == 2, result
    assert "invalid option -- 'v'" in result.stderr, result
    assert "usage: corral status" in result.stderr, result
    assert not marker.exists()
    result = corral.cli("--bogus", "status", env=env)
    assert result.returncode == 2, result
    assert "unrecognized option '--bogus'" in result.stderr, result
    assert not marker.exists()
    # With `--`, that program is what runs.
    result = corral.cli("-v", "--", "status", env=env)
    assert result.returncode == 0, result
    assert marker.exists()


def test_one_command_mode_without_a_command_word_still_runs_the_program(corral, tmp_path):
    marker = tmp_path / "ran"
    # `-c` there is one-command mode's --single-child: touch is no command.
    result = corral.cli("-c", "touch", marker)
    assert result.returncode == 0, result
    assert marker.exists()
    marker.unlink()
    result = corral.cli("-c", "-g", "--", "touch", marker)
    assert result.returncode == 0, result
    assert marker.exists()


def test_a_usage_error_after_moved_options_shows_the_one_command_line(corral):
    # dumb-init's `dumb-init -c npm start`: corral reads `start -c npm`,
    # refuses it, and says how to run the program instead.
    result = corral.cli("-c", "npm", "start")
    assert result.returncode == 2, result
    assert "corral start: expected GROUP/TASK" in result.stderr, result
    assert ("to run a program under corral instead, write: corral -c -- npm start"
            in result.stderr), result


def test_dash_c_before_check_or_run_says_the_config_is_their_argument(corral):
    # `corral -c FILE status` works, so `corral -c FILE check` is tried
    # next: check and run take the config as their argument.
    config = corral.config(IDLE)
    for command in ("check", "run"):
        result = corral.cli("-c", config, command)
        assert result.returncode == 2, result
        assert (f"corral: {command} takes the config as its argument, not -c: write: "
                f"corral {command} {config}") in result.stderr, result
        assert "to run a program under corral instead" not in result.stderr, result
    # A command that takes -c, with a usage error of its own, is not told
    # that -c FILE could have run FILE as a program.
    result = corral.cli("-c", config, "scale", "g/app=1001")
    assert result.returncode == 2, result
    assert "N from 0 to 1000" in result.stderr, result
    assert "to run a program under corral instead" not in result.stderr, result
    # A program for one-command mode (no such file) is not taken for a config.
    result = corral.cli("-c", "npm", "run", "build")
    assert "takes the config as its argument" not in result.stderr, result
    assert "write: corral -c -- npm run build" in result.stderr, result


def test_a_config_where_a_command_or_program_goes_is_told_how_to_run_it(corral):
    config = corral.config(IDLE)
    config.chmod(0o644)
    # A command forgotten: one-command mode would exec the config (126).
    result = corral.cli("-c", config)
    assert result.returncode == 2, result
    assert (f"corral: {config} is a config, not a program: name a command (corral -c {config} "
            f"status), or write: corral run {config}") in result.stderr, result
    assert "main/command" not in result.stderr, result
    # `run` forgotten: not told to run it as a program.
    result = corral.cli(config)
    assert result.returncode == 2, result
    assert (f'corral: unknown command "{config}"; to run that config, write: corral run '
            f"{config}") in result.stderr, result
    # With `--` it is what runs, as tini would run it: exec refuses it.
    result = corral.cli("-c", "--", config)
    assert result.returncode == 126, result
