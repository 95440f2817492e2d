"""Variables in the config (`interpolate: true`, docs/config.md): compose's
forms replaced from corral's environment when the config loads, seen from
inside the task; errors with their place; and a config without the key
is read as before, `$` and all."""

from conftest import sh


def echo_task(*argv, **top):
    return {**top, "groups": {"g": {"tasks": {"t": {
        "command": ["/bin/echo", *argv], "env": {"FROM": "${WHO:-nobody}"},
        "restart": {"policy": "never"}}}}}}


def test_variables_come_from_corral_s_environment(corral):
    config = echo_task("$GREETING", "${PLACE}", "${UNSET:-default}", "cost: $$5",
                       interpolate=True)
    config["groups"]["g"]["tasks"]["t"]["command"] = sh(
        # The script's own $ are written $$: interpolation is on.
        'echo "$$0|$$1|$$2|$$3|$$4|$$FROM"', "${GREETING}", "${PLACE}", "${UNSET:-default}",
        "cost $$5", "$${LITERAL}")
    result = corral.run(config, env={"GREETING": "hello", "PLACE": "world", "WHO": "me"})
    assert result.returncode == 0, result
    assert result.stdout_lines() == ["g/t | hello|world|default|cost $5|${LITERAL}|me"]


def test_an_unset_variable_is_an_error_with_its_place(corral):
    text = ("interpolate: true\ngroups:\n  g:\n    tasks:\n"
            "      t: {command: [echo, \"x ${MISSING_ONE}\"], env: {A: '${TOKEN:?set the token}'}}\n")
    result = corral.check(text)
    assert result.returncode == 1, result
    assert ":5:30: variable MISSING_ONE is not set" in result.stderr, result.stderr
    assert ":5:58: variable TOKEN is not set: set the token" in result.stderr, result.stderr


def test_without_the_key_dollars_reach_the_task_as_written(corral):
    result = corral.run(echo_task("$HOME", "${NOT_SET_ANYWHERE}", "$(x)"),
                        env={"WHO": "me"})
    assert result.returncode == 0, result
    assert result.stdout_lines() == ["g/t | $HOME ${NOT_SET_ANYWHERE} $(x)"]


def test_env_files_relative_to_the_config_with_env_over_them(corral, tmp_path):
    (tmp_path / "base.env").write_text("# shared\nA=from base\nB='kept $as written'\n")
    (tmp_path / "local.env").write_text('export A="from local"\nC=3 # comment\n')
    config = {"groups": {"g": {"tasks": {"t": {
        "command": ["/bin/sh", "-c", 'echo "$A|$B|$C|$D"'],
        "env_file": ["base.env", str(tmp_path / "local.env")],
        "env": {"D": "from env", "C": "env wins"},
        "restart": {"policy": "never"}}}}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    assert result.stdout_lines() == ["g/t | from local|kept $as written|env wins|from env"]


def test_env_file_errors_name_the_file_and_line(corral, tmp_path):
    (tmp_path / "bad.env").write_text("GOOD=1\nBROKEN LINE\n")
    config = {"groups": {"g": {"tasks": {
        "a": {"command": ["true"], "env_file": "bad.env"},
        "b": {"command": ["true"], "env_file": ["missing.env"]}}}}}
    result = corral.check(config)
    assert result.returncode == 1, result
    assert f"g/a: env_file: {tmp_path}/bad.env:2: expected NAME=VALUE: no = after BROKEN" \
        in result.stderr, result.stderr
    assert f"g/b: env_file[0]: {tmp_path}/missing.env: No such file or directory" \
        in result.stderr, result.stderr


def test_a_group_s_env_files_come_before_its_tasks(corral, tmp_path):
    (tmp_path / "group.env").write_text("A=group\nB=group\n")
    (tmp_path / "task.env").write_text("B=task\n")
    config = {"groups": {"g": {"env_file": "group.env", "tasks": {
        "t": {"command": ["/bin/sh", "-c", 'echo "$A|$B"'], "env_file": "task.env",
              "restart": {"policy": "never"}},
        "u": {"command": ["/bin/sh", "-c", 'echo "$A|$B"'], "env": {"A": "env"},
              "restart": {"policy": "never"}}}}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    assert sorted(result.stdout_lines()) == ["g/t | group|task", "g/u | env|group"]
