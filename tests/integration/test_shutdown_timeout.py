"""The shutdown timeout from the command line and the environment
(`--shutdown-timeout`, CORRAL_SHUTDOWN_TIMEOUT, over the config's
shutdown_timeout), and `corral check`'s warning when a config's stop chain
can take longer than it."""

import signal

import pytest

from conftest import sh, wait_for

# proxy stops first (it waits for app), then app, then db: 10s of prekill
# hook + 30s, then 20s, then 15s.
CHAIN = {
    "groups": {
        "web": {
            "tasks": {
                "proxy": {"command": sh("sleep 100"), "after": ["app"], "kill": {"timeout": "30s"},
                          "hooks": [{"name": "drain", "stage": "prekill", "exec": ["true"],
                                     "timeout": "10s"}]},
                "app": {"command": sh("sleep 100"), "after": ["db"], "kill": {"timeout": "20s"}},
                "db": {"command": sh("sleep 100"), "kill": {"timeout": "15s"}},
            }
        }
    }
}
CHAIN_WARNING = ("warning: shutdown: web/db <- web/app <- web/proxy can take 1m15s (web/proxy: "
                 "prekill hooks 10s + kill.timeout 30s; web/app: kill.timeout 20s; web/db: "
                 "kill.timeout 15s) > shutdown_timeout ")


def check(corral, config, *options, env=None):
    return corral.cli("check", *options, corral.config(config), env=env)


def test_check_warns_when_the_longest_stop_chain_exceeds_the_shutdown_timeout(corral):
    result = check(corral, CHAIN)
    assert result.returncode == 0, result
    assert result.stdout.endswith(": ok (1 group, 3 tasks)\n"), result
    assert result.stderr.endswith(CHAIN_WARNING + "30s\n"), result.stderr

    # Against a pod's grace period: long enough, no warning.
    result = check(corral, CHAIN, "--shutdown-timeout", "90s")
    assert result.returncode == 0 and result.stderr == "", result
    result = check(corral, {**CHAIN, "shutdown_timeout": "75s"})
    assert result.returncode == 0 and result.stderr == "", result
    # Too short: said with where the timeout came from.
    result = check(corral, {**CHAIN, "shutdown_timeout": "2m"}, "--shutdown-timeout", "1m")
    assert result.stderr.endswith(CHAIN_WARNING + "1m (from --shutdown-timeout)\n"), result
    result = check(corral, {**CHAIN, "shutdown_timeout": "2m"},
                   env={"CORRAL_SHUTDOWN_TIMEOUT": "45s"})
    assert result.stderr.endswith(CHAIN_WARNING + "45s (from CORRAL_SHUTDOWN_TIMEOUT)\n"), result
    # The flag over the environment.
    result = check(corral, CHAIN, "--shutdown-timeout", "90s",
                   env={"CORRAL_SHUTDOWN_TIMEOUT": "45s"})
    assert result.stderr == "", result


def test_check_warns_of_tasks_that_wait_for_each_other_to_stop(corral):
    # order: sequential stops b (written later) first; after: stops a (it
    # waits for b) first: at a shutdown neither is ever signalled.
    config = {"groups": {"g": {"order": "sequential", "tasks": {
        "a": {"command": sh("sleep 100"), "after": ["b"]},
        "b": {"command": sh("sleep 100")},
    }}}}
    result = check(corral, config)
    assert result.returncode == 0, result
    assert "wait for each other to stop" in result.stderr, result
    assert "until shutdown_timeout 30s kills them all" in result.stderr, result


@pytest.mark.parametrize("command", ["check", "run"])
def test_bad_values_name_their_source(corral, command):
    path = corral.config(CHAIN)
    result = corral.cli(command, "--shutdown-timeout", "25", path)
    assert result.returncode == 2, result
    assert result.stderr.startswith(f"corral {command}: --shutdown-timeout 25: invalid duration: "
                                    "a number needs a unit"), result
    result = corral.cli(command, path, env={"CORRAL_SHUTDOWN_TIMEOUT": "soon"})
    assert result.returncode == 1, result
    assert result.stderr.startswith(f"corral {command}: CORRAL_SHUTDOWN_TIMEOUT=soon (from the "
                                    "environment): invalid duration: "), result


def stubborn(up):
    """Ignores SIGTERM; its kill timeout is far longer than any test."""
    return {"command": sh(f"trap '' TERM; touch {up}; while :; do sleep 0.05; done"),
            "kill": {"timeout": "60s"}}


@pytest.mark.parametrize("source", ["flag", "environment", "flag over environment"])
def test_the_override_bounds_a_real_shutdown(corral, tmp_path, source):
    up = tmp_path / "up"
    config = {"shutdown_timeout": "60s", "groups": {"g": {"tasks": {"stubborn": stubborn(up)}}}}
    run_args, env, named = (), None, "--shutdown-timeout"
    if source == "flag":
        run_args = ("--shutdown-timeout", "300ms")
    elif source == "environment":
        env, named = {"CORRAL_SHUTDOWN_TIMEOUT": "300ms"}, "CORRAL_SHUTDOWN_TIMEOUT"
    else:
        run_args, env = ("--shutdown-timeout", "300ms"), {"CORRAL_SHUTDOWN_TIMEOUT": "60s"}
    running = corral.start(config, env=env, run_args=run_args)
    wait_for(up.exists, what="stubborn up")
    running.send(signal.SIGTERM)
    # Both the config's timeout and the task's kill timeout are 60s.
    result = running.wait(timeout=20)
    assert result.returncode == 0, result
    assert f"SIGTERM: shutting down gracefully (at most 300ms, from {named};" in result.stderr
    assert f"shutdown_timeout (300ms, from {named}) passed: killing what is left" in result.stderr
    killing = [e["message"] for e in result.events.of_task("stubborn", "killing")]
    assert killing == ["sending SIGTERM: shutdown requested",
                       "sending SIGKILL: shutdown_timeout passed"], result.events
    assert not result.events.of_task("stubborn", "kill_timeout"), result.events
    assert corral.leftovers() == []


def test_the_override_outlives_a_reload(corral, tmp_path):
    up = tmp_path / "up"
    path = corral.config({"shutdown_timeout": "60s",
                          "groups": {"g": {"tasks": {"stubborn": stubborn(up)}}}},
                         name="reload.yaml")
    running = corral.start(path, run_args=("--shutdown-timeout", "300ms"))
    wait_for(up.exists, what="stubborn up")
    corral.wait_control(running)
    corral.config({"shutdown_timeout": "50s",
                   "groups": {"g": {"tasks": {"stubborn": stubborn(up)}}}}, name="reload.yaml")
    reloaded = corral.cli("reload")
    assert reloaded.returncode == 0, reloaded
    running.send(signal.SIGTERM)
    result = running.wait(timeout=20)
    assert "shutdown_timeout (300ms, from --shutdown-timeout) passed" in result.stderr, result
