"""Helpers for tests of corral exec (test_exec_session.py and its
boundaries): corral with every task running, and the CLI's exec."""

import subprocess

from conftest import RUN_TIMEOUT, wait_for


def start(corral, tasks, **top):
    config = {**top, "groups": {"g": {"tasks": tasks}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: all(t["state"] == "running" for g in corral.status()["groups"]
                         for t in g["tasks"]), what="every task running")
    return running


def exec_(corral, *args, stdin=subprocess.DEVNULL):
    result = subprocess.run([str(corral.binary), "exec", *args], stdin=stdin,
                            capture_output=True, text=True, env=corral.env(),
                            timeout=RUN_TIMEOUT)
    return result
