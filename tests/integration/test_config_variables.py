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
