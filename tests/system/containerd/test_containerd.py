"""corral as PID 1 under containerd, the runtime under most Kubernetes
nodes: `ctr run` of an image imported from the suite's root file system,
through containerd's runc shim (containerd-shim-runc-v2). See conftest.py
for the daemon of the session's own.

- exit codes: a task's failure (exit 7) and a signal death (128+N) are
  `ctr run`'s exit code; a SIGKILL of corral gives 137 and leaves nothing;
- `ctr task kill` (SIGTERM): prekill hooks before each stop signal, the
  tiers in reverse order, stop hooks, the poststop task, exit code 0;
- `ctr task exec` of `corral status` and `status --ready`;
- per-task cgroups and their limits inside the container's cgroup, in a
  privileged container with the cgroup hierarchies mounted read-write (what
  Kubernetes gives a privileged container), and the OOM killer held to a
  task's limit;
- orphans reparented to corral and reaped.
"""

import json
import os

import pytest

from conftest import CORRAL_IN_IMAGE, EXAMPLE_CONFIG, oci, wait_for

RUN_EXAMPLE = (CORRAL_IN_IMAGE, "run", EXAMPLE_CONFIG)
NO_CGROUP_TREE = ("tasks run without cgroups of their own: no cgroup v2 hierarchy is mounted: "
                  "per-task limits")


def run_case(case):
    return (CORRAL_IN_IMAGE, "run", f"/cases/{case}.yaml")


def start_example(container):
    web = container().start(*RUN_EXAMPLE)
    web.wait_for_log("web/smoke-test: exited with code 0")
    return web


# ---- exit codes ----------------------------------------------------------


def test_a_failed_tasks_exit_code_is_ctr_runs(container):
    job = container().start(*run_case("failing"))
    assert job.wait() == 7, job
    assert job.output("job/work") == ["working"], job
    assert job.output("job/report") == ["poststop ran"], job
    assert job.log()[-1] == "exiting with code 7", job
    # ctr's default spec mounts no cgroup file system: corral says once
    # what that turns off.
    assert sum(line.startswith(NO_CGROUP_TREE) for line in job.log()) == 1, job


def test_success_is_exit_code_0(container):
    web = start_example(container)
    web.kill("TERM")
    assert web.wait() == 0, web
    assert web.log()[-1] == "exiting with code 0", web


def test_a_task_killed_by_a_signal_gives_128_plus_its_number(container):
    job = container().start(*run_case("killed-by-signal"))
    assert job.wait() == 128 + 12, job  # SIGUSR2
    assert job.output("job/crash") == ["crashing"], job
    assert "job/crash: killed by SIGUSR2" in job.log(), job
    assert "job/crash: first task to fail for good; corral will exit with code 140" in job.log()


def test_ctr_task_kill_sigkill_gives_137_and_leaves_nothing(container):
    web = start_example(container)
    before = web.processes()
    assert {"corral", "httpd", "sh"} <= {p.name for p in before}, before
    web.kill("KILL")
    assert web.wait() == 128 + 9, web
    assert not oci.still_alive([p.identity for p in before]), before
    assert web.processes() == []
    assert "archive" not in web.stdout(), web  # nothing ran after the SIGKILL


# ---- a graceful stop -------------------------------------------------------


def test_ctr_task_kill_runs_prekill_hooks_stops_in_reverse_order_then_stop_hooks(container):
    stack = container().start(*run_case("graceful"))
    stack.wait_for_output("stack/watcher", "watcher up")
    stack.kill("TERM")  # ctr task kill's default signal
    assert stack.wait() == 0, stack
    stack.assert_log_in_order(
        "SIGTERM: shutting down gracefully",
        "stack/app: prekill hooks first, then SIGTERM",
        "stack/app: prekill hooks done: sending SIGTERM",
        "stack/app: stopped",
        "stack/watcher: sending SIGTERM",
        "stack/watcher: stopped",
        "stack/proxy: sending SIGTERM",
        "stack/proxy: stopped",
        "stack/cleanup: started",
        "exiting with code 0",
    )
    lines = stack.stdout().splitlines()

    def at(line):
        assert line in lines, f"{line!r} not printed\n{stack}"
        return lines.index(line)

    # Each task's prekill hook ran before its stop signal reached it...
    for task in ("app", "watcher", "proxy"):
        assert at(f"stack/{task} | prekill {task}") < at(f"stack/{task} | {task} stopping")
    # ... the tiers stopped in reverse order, each once the one before was
    # dead, then the poststop task ran...
    assert (at("stack/app | app stopping") < at("stack/watcher | watcher stopping")
            < at("stack/proxy | proxy stopping") < at("stack/cleanup | poststop ran")), stack
    # ... and each task's stop hook ran once it was dead for good (corral
    # does not wait for stop hooks: their order among the tiers is free).
    for task, last_line in (("app", "app stopping"), ("watcher", "watcher stopping"),
                            ("proxy", "proxy stopping"), ("cleanup", "poststop ran")):
        assert at(f"stack/{task} | {last_line}") < at(f"stack/{task} | stop hook {task}")


# ---- ctr task exec ----------------------------------------------------------


def test_ctr_task_exec_corral_status_and_status_ready(container):
    web = start_example(container)
    table = web.exec(CORRAL_IN_IMAGE, "status")
    rows = {line.split()[0]: line.split() for line in table.stdout.splitlines()[2:]}
    assert rows["httpd"][1:3] == ["main", "running"], table.stdout
    assert rows["archive"][1:3] == ["poststop", "pending"], table.stdout
    wait_for(lambda: web.exec(CORRAL_IN_IMAGE, "status", "--ready", check=False).returncode == 0,
             what=web)
    assert web.exec(CORRAL_IN_IMAGE, "status", "--ready").stdout == "ready\n"

    # The pid corral reports is, seen from the host, the container's httpd.
    reply = json.loads(web.exec(CORRAL_IN_IMAGE, "status", "--json", "web/httpd").stdout)
    httpd = reply["groups"][0]["tasks"][0]
    process = web.host_pid_of(httpd["pid"])
    assert process and process.name == "httpd", (httpd, web.processes())

    # A sidecar stopped on request: what should be up is down, not ready.
    web.exec(CORRAL_IN_IMAGE, "stop", "web/log-shipper")
    wait_for(lambda: web.exec(CORRAL_IN_IMAGE, "status", "--ready",
                              check=False).returncode == 1, what=web)
    web.kill("TERM")
    assert web.wait() == 0, web


# ---- cgroups -----------------------------------------------------------------


def privileged_with_cgroups():
    """A privileged container with /sys/fs/cgroup mounted read-write, as
    Kubernetes gives a privileged container (containerd's CRI plugin: a
    `cgroup` mount, rw when privileged). On a hybrid host runc mounts only
    the v1 hierarchies there; the v2 tree corral places tasks in is mounted
    at /sys/fs/cgroup/unified beside them, as the runc suite does."""
    return ["--privileged",
            "--mount", "type=cgroup,src=cgroup,dst=/sys/fs/cgroup,options=rw:nosuid:nodev:noexec",
            "--mount", "type=cgroup2,src=cgroup2,dst=/sys/fs/cgroup/unified,"
                       "options=rw:nosuid:nodev:noexec"]


HYBRID = (os.path.exists("/sys/fs/cgroup/unified/cgroup.procs")
          and os.path.exists("/sys/fs/cgroup/memory/memory.limit_in_bytes"))


@pytest.mark.skipif(not HYBRID, reason="the mounts and the files read are a hybrid host's "
                    "(v1 controllers, a v2 tree at /sys/fs/cgroup/unified), as CI's machines are")
def test_task_limits_apply_in_per_task_cgroups_inside_the_containers_cgroup(container):
    box = container().start(*run_case("limits"), options=privileged_with_cgroups())
    box.wait_for_output("limited/app", "app up")
    assert not any(line.startswith(NO_CGROUP_TREE) for line in box.log()), box
    reply = json.loads(box.exec(CORRAL_IN_IMAGE, "status", "--json", "limited/app").stdout)
    app = box.host_pid_of(reply["groups"][0]["tasks"][0]["pid"])
    assert app, box.processes()

    # From the host: corral in a `supervisor` leaf and the task in
    # limited/app, both right below the container's own cgroup (containerd
    # names it /NAMESPACE/ID), in every hierarchy that holds them.
    corral_paths = oci.cgroup_paths(box.host_pid)
    app_paths = oci.cgroup_paths(app.pid)
    container_cgroup = corral_paths["memory"]
    assert container_cgroup.endswith(f"/{box.id}"), corral_paths
    expected = {"": f"{container_cgroup}/limited/app", "memory": f"{container_cgroup}/limited/app",
                "pids": f"{container_cgroup}/limited/app", "cpu": f"{container_cgroup}/limited/app"}
    assert {key: app_paths.get(key) for key in expected} == expected, app_paths
    assert corral_paths[""] == f"{container_cgroup}/supervisor", corral_paths

    # The limits, written to the task's cgroups (v1 controllers on this
    # hybrid host, config.md's table), as the host reads them...
    mounts = oci.cgroup_mounts()

    def host_value(key, file):
        return (oci.cgroup_directory(mounts, key, app_paths[key]) / file).read_text().strip()

    assert host_value("memory", "memory.limit_in_bytes") == str(64 << 20)
    assert host_value("pids", "pids.max") == "32"
    assert host_value("cpu", "cpu.cfs_quota_us") == "50000"
    # ... and as the container reads them, at the same place in its own view.
    inside = box.exec("cat", "/sys/fs/cgroup/memory/limited/app/memory.limit_in_bytes",
                      "/sys/fs/cgroup/pids/limited/app/pids.max", check=False)
    assert inside.returncode == 0 and inside.stdout.split() == [str(64 << 20), "32"], inside

    # The hog met its own limit: the kernel's OOM killer took it at 32M, not
    # the container, and its group stopped (exit code 137 once corral ends).
    box.wait_for_log("mem/hog: OOM killed")
    assert "mem/hog: the OOM killer killed 1 process of the task (memory limit 32.0M)" \
        in box.log(), box
    assert box.host_pid_of(1) and app.state != "Z"
    box.kill("TERM")
    assert box.wait() == 137, box
    box.assert_log_in_order("limited/app: stopped", "exiting with code 137")


# ---- PID 1 ---------------------------------------------------------------------


def test_orphans_are_reparented_to_corral_and_reaped(container):
    box = container().start(*run_case("orphans"))
    box.wait_for_output("orphans/app", "app up")
    box.wait_for_log("orphans/spawner: exited with code 0")
    orphans = [int(line.split()[1]) for line in box.output("orphans/spawner")
               if line.startswith("orphan ")]
    assert len(orphans) == 2, box
    seen = []
    for orphan in orphans:
        process = box.host_pid_of(orphan)
        assert process and process.ppid == box.host_pid and process.state != "Z", process
        seen.append(process.identity)
    box.exec("touch", "/tmp/release")  # they exit 3 by themselves
    wait_for(lambda: not oci.still_alive(seen), what=lambda: f"orphans reaped: {box.processes()}")
    wait_for(lambda: not [p for p in box.processes() if p.state == "Z"],
             what=lambda: f"no zombie in the container: {box.processes()}")
    box.kill("TERM")
    assert box.wait() == 0, box
