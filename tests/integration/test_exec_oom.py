"""An OOM kill inside `corral exec` is the exec's: its exit (137) and reply
say so, and the task's own run is not marked (no oom_killed event, status
oom_kills unchanged, its exit clean). Tested on what the host gives: a
task memory limit (v1 memory on a hybrid host, v2 where it is enabled),
whose kills the exec's cgroup, below the task's, counts in."""

import signal

from conftest import wait_for

# A process that allocates nothing while the exec's hog is killed: one
# that forks (a shell loop) could need memory just then, and the kernel
# may take it as a second victim while the hog is still exiting.
KEEPER = ["/bin/sleep", "1000"]
HOG = ["/usr/bin/python3", "-c", "a = bytearray(256 * 1024 * 1024); print(len(a))"]


def limited_task():
    return {"groups": {"g": {"tasks": {"app": {
        "command": KEEPER, "resources": {"memory": "32M"}, "kill": {"timeout": "2s"},
        "restart": {"policy": "on-failure", "delay": "1m"}},
        # Keeps the group up once app is stopped.
        "other": {"command": KEEPER}}}}}


def test_an_oom_kill_in_exec_is_the_execs_not_the_tasks(corral):
    running = corral.start(limited_task())
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/app")["state"] == "running", what="g/app running")
    pid = corral.task_status("g/app")["pid"]

    result = corral.cli("exec", "g/app", "--", *HOG)
    assert result.returncode == 137, result
    assert "corral: exec: OOM killed" in result.stderr, result.stderr

    status = corral.task_status("g/app")
    assert status["state"] == "running" and status["pid"] == pid, status
    assert not running.events().of_task("app", "oom_killed"), running.events().of_task("app")

    # The exec that ends normally afterwards is not taken for one either.
    ok = corral.cli("exec", "g/app", "--", "true")
    assert ok.returncode == 0 and "OOM" not in ok.stderr, ok

    # The task's own run, when it ends, carries no OOM kill.
    assert corral.cli("stop", "g/app").returncode == 0
    wait_for(lambda: corral.task_status("g/app")["state"] == "dead", what="g/app stopped")
    last_exit = corral.task_status("g/app")["last_exit"]
    assert not last_exit.get("oom_killed") and not last_exit.get("oom_kills"), last_exit
    assert not running.events().of_task("app", "oom_killed"), running.events().of_task("app")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_the_tasks_own_oom_kill_is_still_its_own(corral):
    # The same limit, the hog as the task: reported as before.
    config = limited_task()
    config["groups"]["g"]["tasks"]["app"]["command"] = HOG
    running = corral.start(config)
    wait_for(lambda: running.events().of_task("app", "oom_killed"), what="the task's OOM kill")
    wait_for(lambda: corral.task_status("g/app").get("last_exit"), what="its exit")
    assert corral.task_status("g/app")["last_exit"]["oom_killed"] is True
    running.send(signal.SIGTERM)
    running.wait()
