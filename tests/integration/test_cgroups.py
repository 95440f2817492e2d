"""Per-task cgroups on our hybrid hosts: v2 leaves under
/sys/fs/cgroup/unified (no controllers there), limits on the v1
hierarchies through libcgroup, cgroup.kill, OOM reports, stats, cleanup,
and corral without a writable cgroup tree. Pure cgroup v2 is proven in the
VM (tests/system/vm)."""

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, pid_exists, read_pids, sh, wait_for

UNIFIED = Path("/sys/fs/cgroup/unified")
V1_MEMORY = Path("/sys/fs/cgroup/memory")
NEVER = {"policy": "never"}
KEEPER = {"command": sh("while :; do sleep 0.05; done"), "kill": {"timeout": "2s"}}

pytestmark = pytest.mark.skipif(
    not (UNIFIED / "cgroup.procs").exists() or not V1_MEMORY.is_dir(),
    reason="these tests are for hybrid hosts (v1 controllers, v2 at /sys/fs/cgroup/unified)",
)


def group(tasks, **fields):
    return {"groups": {"g": {"tasks": tasks, **fields}}}


def cgroup_lines(pid):
    """{hierarchy: path} from /proc/PID/cgroup ("0" for v2, "memory", ...)."""
    lines = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        number, controllers, path = line.split(":", 2)
        lines["0" if number == "0" else controllers] = path
    return lines


def report_cgroup(path):
    """Shell: writes the task's own /proc/self/cgroup to `path`, then idles."""
    return sh(f"cat /proc/self/cgroup > {path}.tmp && mv {path}.tmp {path}; "
              "while :; do sleep 0.05; done")


def v2_path(report):
    for line in Path(report).read_text().splitlines():
        if line.startswith("0::"):
            return line[3:]
    raise AssertionError(f"no v2 line in {report}")


def test_each_task_runs_in_its_own_leaf_and_corral_in_supervisor(corral, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    running = corral.start(group({"a": {"command": report_cgroup(a)},
                                  "b": {"command": report_cgroup(b)}}))
    wait_for(lambda: a.exists() and b.exists(), what="both reports")
    # corral's own root: a corral-<pid>-<hex> of its own below the shared
    # root of the unified tree, corral itself in its supervisor leaf.
    own = cgroup_lines(running.pid)["0"]
    assert re.fullmatch(rf"/corral-{running.pid}-[0-9a-f]{{4}}/supervisor", own), own
    root = own.rsplit("/", 1)[0]
    assert v2_path(a) == f"{root}/g/a"
    assert v2_path(b) == f"{root}/g/b"
    # The tasks are cloned straight into their leaf: its cgroup.procs lists
    # the main process, and corral's leaf lists only corral.
    main_pid = corral.task_status("g/a")["pid"]
    assert str(main_pid) in (UNIFIED / root[1:] / "g/a/cgroup.procs").read_text().split()
    assert (UNIFIED / own[1:] / "cgroup.procs").read_text().split() == [str(running.pid)]
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    # Everything corral made is gone once it exits.
    assert not (UNIFIED / root[1:]).exists()


def test_a_root_given_up_at_the_start_is_removed_at_the_exit(corral, tmp_path):
    """A name corral tried at its start and gave up (it could not move its
    keeper in, say) is an empty root named for its pid beside its own:
    removed when it exits, however young (the restore soak found one left
    behind 13 s after the start)."""
    a = tmp_path / "a"
    running = corral.start(group({"a": {"command": report_cgroup(a)}}))
    wait_for(a.exists, what="the report")
    root = cgroup_lines(running.pid)["0"].rsplit("/", 1)[0]
    given_up = next(UNIFIED / f"corral-{running.pid}-{suffix:04x}" for suffix in range(65536)
                    if f"/corral-{running.pid}-{suffix:04x}" != root)
    given_up.mkdir()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert not given_up.exists()
    assert not (UNIFIED / root[1:]).exists()


def daemonizer(pid_file, then):
    """Shell: starts a daemon that escapes the task's process group and
    session (double fork, setsid), records its pid, then runs `then`."""
    return sh(f"(setsid sh -c 'echo $$ > {pid_file}; exec sleep 1000' &); "
              f"while [ ! -s {pid_file} ]; do sleep 0.01; done; {then}")


def test_stop_kills_daemonised_grandchildren_through_the_cgroup(corral, tmp_path):
    daemon = tmp_path / "daemon"
    trapped = tmp_path / "trapped"
    # The main process ignores SIGTERM: the kill timeout ends with cgroup.kill.
    # (It says when the trap is set: a stop before that would end it at once.)
    config = group({
        "app": {"command": daemonizer(daemon, f"trap '' TERM; : > {trapped}; "
                                              "while :; do sleep 0.05; done"),
                "kill": {"timeout": "300ms"}},
        "keeper": KEEPER,
    })
    running = corral.start(config)
    wait_for(lambda: daemon.exists() and daemon.read_text() and trapped.exists(),
             what="the daemon, and the main process's trap")
    daemon_pid = read_pids(daemon)[0]
    # Not in the task's process group: only the cgroup reaches it.
    assert os.getpgid(daemon_pid) != corral.task_status("g/app")["pid"]
    result = corral.cli("stop", "g/app")
    assert result.returncode == 0, result
    wait_for(lambda: corral.task_status("g/app")["state"] == "dead", what="g/app dead")
    assert not pid_exists(daemon_pid)
    events = running.events().of_task("app")
    assert [e for e in events if e["event"] == "kill_timeout"], events
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_leftovers_in_the_cgroup_are_killed_when_the_main_process_exits(corral, tmp_path):
    daemon = tmp_path / "daemon"
    runs = tmp_path / "runs"
    # Each run leaves a daemon behind and exits 0; the second run must
    # start (a cgroup that saw cgroup.kill is replaced, see
    # isolation/cgroup_task.h) and its daemon must die too.
    config = group({"app": {"command": daemonizer(daemon, f"echo run >> {runs}; exit 0"),
                             "restart": {"policy": "always", "attempts": 1, "delay": "100ms"}}})
    result = corral.run(config)
    assert result.returncode == 1, result  # app spent its one restart
    leftovers = result.events.of_task("app", "leftovers_killed")
    assert len(leftovers) == 2, result.events
    assert "/g/app were killed" in leftovers[0]["message"], leftovers
    assert Path(runs).read_text().splitlines() == ["run", "run"]
    assert not pid_exists(read_pids(daemon)[0])


def test_v1_memory_limit_holds_and_an_oom_kill_is_reported(corral, tmp_path):
    limit_file = tmp_path / "limit"
    hog = ("cat /sys/fs/cgroup/memory$(grep ':memory:' /proc/self/cgroup | cut -d: -f3)"
           f"/memory.limit_in_bytes > {limit_file}; "
           "exec /usr/bin/python3 -c 'a = bytearray(256 * 1024 * 1024); print(len(a))'")
    # A long restart delay keeps it pending, with its last exit to show.
    config = group({"hog": {"command": sh(hog), "resources": {"memory": "32M"},
                            "restart": {"policy": "on-failure", "delay": "1m"}},
                    "keeper": KEEPER})
    running = corral.start(config)
    wait_for(lambda: running.events().of_task("hog", "exited"), what="the hog's exit")
    assert limit_file.read_text().strip() == str(32 * 1024 * 1024)
    exited = running.events().of_task("hog", "exited")[0]
    assert exited["message"] == "OOM killed", exited
    oom = running.events().of_task("hog", "oom_killed")
    assert oom and "memory limit 32.0M" in oom[0]["message"], oom
    last_exit = corral.task_status("g/hog")["last_exit"]
    assert last_exit["oom_killed"] is True and last_exit["signal"] == "SIGKILL", last_exit
    table = corral.cli("status", "g/hog")
    assert "OOM killed (failed)" in table.stdout, table
    # The keeper lives on.
    assert corral.task_status("g/keeper")["state"] == "running"
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0  # the hog had restarts left


def test_limits_are_written_to_v1_groups_of_the_task(corral, tmp_path):
    report = tmp_path / "report"
    script = (
        "for c in cpu pids; do "
        "p=$(grep \":$c\\(,\\|:\\)\" /proc/self/cgroup | cut -d: -f3); "
        f"echo \"$c $p\" >> {report}; done; "
        f"cat /sys/fs/cgroup/cpu$(grep ':cpu:' /proc/self/cgroup | cut -d: -f3)/cpu.cfs_quota_us >> {report}; "
        f"cat /sys/fs/cgroup/cpu$(grep ':cpu:' /proc/self/cgroup | cut -d: -f3)/cpu.shares >> {report}; "
        f"cat /sys/fs/cgroup/pids$(grep ':pids:' /proc/self/cgroup | cut -d: -f3)/pids.max >> {report}; "
        f"echo done >> {report}; while :; do sleep 0.05; done"
    )
    config = group({"app": {"command": sh(script),
                            "resources": {"cpu": 0.5, "cpu_weight": 200, "pids": 64}}})
    running = corral.start(config)
    wait_for(lambda: report.exists() and "done" in report.read_text(), what="the report")
    lines = report.read_text().splitlines()
    assert lines[0].startswith("cpu /") and lines[0].endswith("/g/app"), lines
    assert lines[1].startswith("pids /") and lines[1].endswith("/g/app"), lines
    assert lines[2:5] == ["50000", str(200 * 1024 // 100), "64"], lines
    # A one-task status reads the cgroup now (a list serves cached figures).
    usage = corral.status("g/app")["groups"][0]["tasks"][0]["usage"]
    assert usage["cgroup"].endswith("/g/app") and usage["cpu_usec"] >= 0, usage
    assert usage["pids"] >= 1, usage  # from the v1 pids group
    assert usage["memory_bytes"] is None, usage  # no memory group: no figure
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    v1_dir = Path("/sys/fs/cgroup/pids") / lines[1].split(" ", 1)[1][1:]
    assert not v1_dir.exists(), v1_dir


def test_an_impossible_limit_fails_the_start_with_the_reason(corral, tmp_path):
    config = group({
        "cpus": {"command": ["true"], "resources": {"cpuset": "0-4095"}, "restart": NEVER},
        "io": {"command": ["true"], "resources": {"io_weight": 100}, "restart": NEVER},
    })
    result = corral.run(config)
    assert result.returncode == 126, result
    cpus = result.events.of_task("cpus", "start_failed")[0]["message"]
    assert cpus.startswith('resources: cpuset "0-4095": cpuset.cpus: '), cpus
    io = result.events.of_task("io", "start_failed")[0]["message"]
    # This host's block layer has no blkio.weight (BFQ calls it otherwise).
    assert io == "resources: io_weight: blkio.weight: this kernel does not offer it (no such file)", io


def test_stale_cgroups_of_a_dead_corral_are_killed_and_removed(corral, tmp_path):
    # A name no live corral has (pid 999999 and a random part).
    stale = UNIFIED / f"corral-999999-{os.urandom(2).hex()}"
    (stale / "supervisor").mkdir(parents=True)
    (stale / "g" / "app").mkdir(parents=True)
    sleeper = subprocess.Popen(["sleep", "1000"])
    try:
        (stale / "g" / "app" / "cgroup.procs").write_text(str(sleeper.pid))
        result = corral.run(group({"app": {"command": ["true"], "restart": NEVER}}))
        assert result.returncode == 0, result
        assert f"cgroup {stale} was left by an earlier corral" in result.stderr
        assert sleeper.wait(timeout=5) == -signal.SIGKILL
        assert not stale.exists()
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
        for path in [stale / "g" / "app", stale / "g", stale / "supervisor", stale]:
            if path.exists():
                path.rmdir()


def stale_instance_of(owner):
    """A dead corral's root (pid 999999), made by a corral of `owner`'s
    config, with a process left in it; returns (root, that process)."""
    stale = UNIFIED / f"corral-999999-{os.urandom(2).hex()}"
    (stale / "supervisor").mkdir(parents=True)
    (stale / "g" / "app").mkdir(parents=True)
    os.setxattr(stale, "user.corral.owner", str(owner).encode())
    sleeper = subprocess.Popen(["sleep", "1000"])
    (stale / "g" / "app" / "cgroup.procs").write_text(str(sleeper.pid))
    return stale, sleeper


def remove_stale_instance(stale, sleeper):
    if sleeper.poll() is None:
        sleeper.kill()
        sleeper.wait()
    for path in [stale / "g" / "app", stale / "g", stale / "supervisor", stale]:
        if path.exists():
            path.rmdir()


def test_another_configs_dead_corral_is_left_alone_and_one_command_mode_is_quiet(
        corral, tmp_path):
    """A corral cleans up only what an earlier corral of its own config
    left; a one-command corral cleans up nothing, and says nothing."""
    stale, sleeper = stale_instance_of("/etc/some/other/corral.yaml")
    try:
        result = corral.run(group({"app": {"command": ["true"], "restart": NEVER}}))
        assert result.returncode == 0, result
        assert "left by an earlier corral" not in result.stderr, result.stderr
        one = subprocess.run([str(corral.binary), "--", "echo", "hi"], capture_output=True,
                             text=True, env=corral.env(), timeout=RUN_TIMEOUT)
        assert one.returncode == 0 and one.stdout == "hi\n", one
        assert one.stderr == "", one.stderr
        assert sleeper.poll() is None and stale.exists()
    finally:
        remove_stale_instance(stale, sleeper)


def test_the_same_configs_dead_corral_is_cleaned_up(corral, tmp_path):
    config = corral.config(group({"app": {"command": ["true"], "restart": NEVER}}))
    stale, sleeper = stale_instance_of(config.resolve())
    try:
        result = corral.run(config)
        assert result.returncode == 0, result
        assert f"cgroup {stale} was left by an earlier corral" in result.stderr
        assert sleeper.wait(timeout=5) == -signal.SIGKILL
        assert not stale.exists()
    finally:
        remove_stale_instance(stale, sleeper)


READONLY_CGROUPS = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                    "mount -o remount,bind,ro /sys/fs/cgroup/unified && exec \"$@\"", "sh"]


def test_without_a_writable_cgroup_tree_tasks_run_and_limits_are_refused(corral, tmp_path):
    report = tmp_path / "report"
    # Two groups: the failure of one does not stop the other.
    config = {"groups": {
        "g": {"tasks": {"plain": {"command": sh(f"cat /proc/self/cgroup > {report}"),
                                  "restart": NEVER}}},
        "h": {"tasks": {"limited": {"command": ["true"], "resources": {"memory": "64M"},
                                    "restart": NEVER}}},
    }}
    result = corral.run(config, wrapper=READONLY_CGROUPS)
    assert result.returncode == 126, result
    said = [line for line in result.stderr.splitlines() if "without cgroups" in line]
    assert len(said) == 1, result.stderr
    assert "cannot write to /sys/fs/cgroup/unified: Read-only file system" in said[0]
    assert "writable cgroup v2 tree" in said[0]
    # The plain task ran, in corral's own cgroup: no leaf of its own.
    v2 = v2_path(report)
    assert "/g/plain" not in v2 and "corral-" not in v2, v2
    failed = result.events.of_task("limited", "start_failed")[0]["message"]
    assert failed.startswith("resources: cannot apply limits: cannot write to "
                             "/sys/fs/cgroup/unified"), failed
