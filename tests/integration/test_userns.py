"""User namespaces (`user` in isolation.namespaces, isolation.user's maps)
and supplementary groups (`groups`): what the task sees inside (root of its
namespace, the maps, its groups), what the host sees (the mapped ids on its
process and on the files it makes), what it cannot do outside, the errors,
and that repeated starts leave nothing behind."""

import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import children_of, host_mountinfo, processes_with_env, sh, v2_cgroup, wait_for

NEVER = {"policy": "never"}
BASE = 100000  # the host ids the tests map the namespace's 0..65535 to
MAPS = {"uid_map": f"0 {BASE} 65536", "gid_map": f"0 {BASE} 65536"}


@pytest.fixture
def mapped_dir():
    """A directory the namespace's root owns (host uid/gid BASE), under
    /tmp, whose parents anyone may traverse: where the tasks write."""
    directory = Path(tempfile.mkdtemp(prefix="corral-userns-"))
    directory.chmod(0o755)
    os.chown(directory, BASE, BASE)
    yield directory
    shutil.rmtree(directory)


def task_config(command, isolation, **task):
    return {"groups": {"g": {"tasks": {"app": {
        "command": command, "restart": NEVER, "isolation": isolation, **task}}}}}


def status_ids(pid):
    """The Uid, Gid and Groups lines of /proc/PID/status, as lists."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("Uid", "Gid", "Groups"):
            fields[name] = value.split()
    return fields


def test_root_inside_the_mapped_ids_outside(corral, mapped_dir):
    """Every isolation step runs inside the user namespace: a fresh /proc,
    read-only /sys, hostname, the default capabilities and seccomp, the
    cgroup namespace."""
    report = mapped_dir / "report"
    script = (f"id -u > {report}; id -g >> {report}; cat /proc/self/uid_map >> {report}; "
              f"cat /proc/self/gid_map >> {report}; grep -E '^(Groups|CapEff|Seccomp):' "
              f"/proc/self/status >> {report}; hostname >> {report}; echo pid $$ >> {report}; "
              f"(touch /sys/fs/x) 2>> {report}; touch {mapped_dir}/made; "
              f"echo END >> {report}; exec sleep 30")
    config = task_config(sh(script), {
        "namespaces": ["pid", "mount", "uts", "ipc", "net", "cgroup", "user"],
        "hostname": "inside", "user": MAPS})
    # A limit: on a hybrid host the child joins v1 cgroups itself, still
    # host root (not yet setresuid) in its new namespace.
    config["groups"]["g"]["tasks"]["app"]["resources"] = {"pids": 100}
    running = corral.start(config)
    wait_for(lambda: report.exists() and "END" in report.read_text().split(), what="the task")
    lines = report.read_text().splitlines()
    assert lines[0:2] == ["0", "0"], lines
    assert lines[2].split() == ["0", str(BASE), "65536"], lines
    assert lines[3].split() == ["0", str(BASE), "65536"], lines
    assert lines[4].split(":")[1].strip() == "", lines  # no supplementary groups
    assert int(lines[5].split(":")[1], 16) == 0x00000000A80425FB, lines  # Docker's set
    assert lines[6].split() == ["Seccomp:", "2"], lines
    assert lines[7] == "inside", lines
    assert lines[8] == "pid 2", lines  # under the reaper, in a fresh /proc
    assert "Read-only file system" in lines[9], lines

    # From the host: the reaper (the pid corral started) and the command
    # below it run as the mapped ids.
    # status names the reaper (reaper_pid) whatever the order in which
    # corral heard of the exec and of the command's pid, which the
    # "started" event's pid depends on.
    started = corral.task_status("g/app")["reaper_pid"]
    reaper = status_ids(started)
    assert reaper["Uid"] == [str(BASE)] * 4 and reaper["Gid"] == [str(BASE)] * 4, reaper
    command = [pid for pid in Path(f"/proc/{started}/task/{started}/children").read_text().split()]
    assert len(command) == 1, command
    assert status_ids(command[0])["Uid"] == [str(BASE)] * 4
    ps = subprocess.run(["ps", "-o", "uid=", "-p", command[0]], capture_output=True, text=True)
    assert ps.stdout.strip() == str(BASE), ps
    # The file it made belongs to the mapped root.
    made = os.stat(mapped_dir / "made")
    assert (made.st_uid, made.st_gid) == (BASE, BASE)
    running.send(signal.SIGTERM)
    running.wait()


def test_no_privilege_outside_its_namespace(corral, mapped_dir):
    """Root with every capability inside, nobody outside: a root-owned
    0644 file it could write as root stays closed, corral cannot be
    signalled."""
    victim = mapped_dir / "victim"
    victim.write_text("root's\n")
    os.chown(victim, 0, 0)
    victim.chmod(0o644)
    report = mapped_dir / "report"
    script = (f"(echo changed > {victim}) 2> {report}.err; echo write $? > {report}; "
              f"kill -0 $PPID 2>> {report}.err; echo kill $? >> {report}; "
              f"grep CapEff /proc/self/status >> {report}")
    # No pid namespace: its parent, corral, is there to aim at. Every
    # capability, no filter.
    config = task_config(sh(script), {
        "namespaces": ["mount", "user"], "user": MAPS, "seccomp": "unconfined",
        "capabilities": {"add": ["all"]}, "no_new_privileges": False})
    result = corral.run(config)
    assert result.returncode == 0, result
    lines = report.read_text().splitlines()
    assert lines[0] == "write 2", lines  # sh: a redirection that fails
    assert lines[1] == "kill 1", lines
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    assert int(lines[2].split(":")[1], 16) == (1 << (last + 1)) - 1, lines  # all, inside
    assert victim.read_text() == "root's\n"
    errors = (mapped_dir / "report.err").read_text()
    assert "Permission denied" in errors and "Operation not permitted" in errors, errors


def test_user_and_groups_are_ids_inside(corral, mapped_dir):
    report = mapped_dir / "report"
    script = (f"id -u > {report}; id -g >> {report}; grep Groups /proc/self/status >> {report};"
              f" ulimit -n >> {report}; ulimit -Hn >> {report}; echo END >> {report}; "
              "exec sleep 30")
    # rlimits too: corral sets them for a task in a user namespace.
    config = task_config(sh(script), {"namespaces": ["mount", "user"], "user": MAPS,
                                      "rlimits": {"nofile": [256, 512]}},
                         user="4321:4321", groups=[44, "2000"])
    # The task writes as 4321 inside (BASE + 4321 outside). A uid without a
    # passwd entry: no groups of its own.
    os.chown(mapped_dir, BASE + 4321, BASE + 4321)
    running = corral.start(config)
    wait_for(lambda: report.exists() and "END" in report.read_text().split(), what="the task")
    lines = report.read_text().splitlines()
    assert lines[0:2] == ["4321", "4321"], lines
    assert lines[2].split()[1:] == ["44", "2000"], lines
    assert lines[3:5] == ["256", "512"], lines
    started = running.events().of_task("app", "started")[0]["pid"]
    outside = status_ids(started)
    assert outside["Uid"] == [str(BASE + 4321)] * 4, outside
    assert outside["Gid"] == [str(BASE + 4321)] * 4, outside
    assert outside["Groups"] == [str(BASE + 44), str(BASE + 2000)], outside
    running.send(signal.SIGTERM)
    running.wait()


def test_groups_without_a_user_namespace(corral, mapped_dir):
    """By name or gid, added to those of the user's passwd entry; alone,
    with corral's ids."""
    mapped_dir.chmod(0o777)
    report = mapped_dir / "report"
    script = f"id -u >> {report}; id -g >> {report}; grep Groups /proc/self/status >> {report}"
    config = {"groups": {"g": {"tasks": {
        "named": {"command": sh(script), "restart": NEVER, "user": "nobody",
                  "groups": ["audio", 4000]},
        "alone": {"command": sh(script), "restart": NEVER, "groups": ["video"],
                  "lifecycle": {"hook": "poststop"}},
    }}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    lines = report.read_text().splitlines()
    nobody = (str(65534), str(65534))
    assert tuple(lines[0:2]) == nobody, lines
    # nobody's own group (nogroup), then the configured ones.
    assert sorted(lines[2].split()[1:]) == sorted(["65534", "29", "4000"]), lines
    assert lines[3:5] == ["0", "0"], lines
    assert lines[5].split()[1:] == ["44"], lines


def test_an_unknown_group_name_names_the_task(corral):
    config = task_config(["true"], {}, groups=["no-such-group-here"])
    result = corral.run(config)
    assert result.returncode != 0, result
    assert 'g/app: groups: group "no-such-group-here": no such group' in result.stderr, \
        result.stderr


def test_an_unmapped_user_names_the_task(corral):
    config = task_config(["true"], {"namespaces": ["user"], "user": MAPS}, user="70000")
    result = corral.run(config)
    assert result.returncode != 0, result
    assert "g/app: user: uid 70000 is not in isolation.user.uid_map" in result.stderr, \
        result.stderr


def test_an_invalid_map_is_refused_at_load_with_its_place(corral):
    wrong = '          user: {uid_map: "0 100000 65536", gid_map: "0 100000"}'
    text = ("groups:\n  g:\n    tasks:\n      app:\n        command: [\"true\"]\n"
            f"        isolation:\n          namespaces: [user]\n{wrong}\n")
    column = wrong.index('"0 100000"}') + 1
    path = corral.config(text, name="bad.yaml")
    result = corral.run(path)
    assert result.returncode == 1, result
    assert (f"{path}:8:{column}: g/app: isolation.user.gid_map: \"0 100000\" must be INSIDE OUTSIDE "
            "COUNT, three whole numbers such as \"0 100000 65536\"") in result.stderr, \
        result.stderr
    assert result.events == []


def test_a_map_the_kernel_refuses_names_the_task_and_leaves_nothing(corral, mapped_dir):
    """corral in a user namespace of its own where only root is mapped:
    the task's map names host ids corral does not have, and writing it
    fails. The child, waiting for the maps, is killed and reaped."""
    marker = mapped_dir / "ran"
    config = task_config(sh(f"touch {marker}"), {"namespaces": ["user"], "user": MAPS})
    result = corral.run(config, wrapper=["unshare", "--user", "--map-root-user", "--"])
    assert result.returncode == 126, result
    failed = result.events.of_task("app", "start_failed")
    assert [e["message"] for e in failed] == ["write uid_map: Operation not permitted"], failed
    assert "g/app: write uid_map: Operation not permitted" in result.stderr, result.stderr
    # No device policy can be set from a user namespace; corral says so.
    assert "g/app: warning: isolated without a device policy: corral runs in a user " \
        "namespace" in result.stderr, result.stderr
    assert not marker.exists()
    assert not result.events.of_task("app", "started")


def test_a_failed_step_of_the_child_and_a_readiness_fd(corral, mapped_dir):
    """After the window, the child's own failures come back as usual, and
    the readiness fd parked for it reaches the task."""
    config = task_config(["/nonexistent/program"], {"namespaces": ["pid", "user"], "init": False,
                                                    "user": MAPS})
    result = corral.run(config)
    assert result.returncode == 127, result
    failed = result.events.of_task("app", "start_failed")
    assert [e["message"] for e in failed] == [
        "exec /nonexistent/program: No such file or directory"], failed

    (corral.dir / "events.jsonl").unlink()
    config = task_config(sh("echo >&5; exec sleep 30"),
                         {"namespaces": ["pid", "mount", "user"], "user": MAPS},
                         readiness={"notify": "fd", "fd": 5})
    running = corral.start(config)
    wait_for(lambda: running.events().of_task("app", "ready"), what="readiness")
    running.send(signal.SIGTERM)
    running.wait()


def test_a_failed_step_of_corral_names_the_task_and_the_step(corral, mapped_dir):
    """The rlimits of a task in a user namespace are set by corral in the
    sync window: one the kernel refuses (above fs.nr_open) fails the start
    there, before the child ran a single step."""
    marker = mapped_dir / "ran"
    config = task_config(sh(f"touch {marker}"), {"namespaces": ["pid", "user"], "user": MAPS,
                                                 "rlimits": {"nofile": 2 ** 40}})
    result = corral.run(config)
    assert result.returncode == 126, result
    failed = result.events.of_task("app", "start_failed")
    assert [e["message"] for e in failed] == ["rlimit #1: Operation not permitted"], failed
    assert not marker.exists()


def test_failed_steps_of_corral_leave_nothing_behind(corral):
    """The killed children are reaped, their fds closed: corral holds as
    many fds after 20 failed starts as after 1."""
    def fds_after(failures):
        # mode delay: once the attempts are spent, the task waits for the
        # interval's end, and corral sits still.
        config = {"groups": {"g": {"tasks": {"app": {
            "command": ["true"],
            "restart": {"policy": "always", "attempts": failures - 1, "interval": "1h",
                        "delay": "0s", "mode": "delay"},
            "isolation": {"namespaces": ["pid", "user"], "user": MAPS,
                          "rlimits": {"nofile": 2 ** 40}}}}}}}
        (corral.dir / "events.jsonl").unlink(missing_ok=True)
        running = corral.start(config)

        def waiting():
            events = running.events().of_task("app")
            return (len([e for e in events if e["event"] == "start_failed"]) == failures
                    and events[-1]["event"] == "restarting")
        wait_for(waiting, what=f"{failures} failed starts")
        fds = os.listdir(f"/proc/{running.pid}/fd")
        children = children_of(running.pid)
        running.send(signal.SIGTERM)
        running.wait()
        assert not children, children  # every child reaped
        return len(fds)

    assert fds_after(20) == fds_after(1)


def task_mounts_on_the_host():
    """The host's mounts where a task mounts (/proc, /sys and below): other
    sessions on the machine may mount elsewhere meanwhile."""
    lines = host_mountinfo().splitlines()
    return sorted(line for line in lines if line.split()[4].startswith(("/proc", "/sys")))


def test_many_starts_leave_nothing_behind(corral, mapped_dir):
    count = mapped_dir / "count"
    runs = 50
    config = {"groups": {
        "g": {"tasks": {"app": {
            "command": sh(f"echo x >> {count}"),
            "restart": {"policy": "always", "attempts": runs - 1, "interval": "1h",
                        "delay": "0s"},
            "isolation": {"namespaces": ["pid", "mount", "uts", "ipc", "net", "cgroup",
                                         "user"], "user": MAPS}}}},
        "keep": {"tasks": {"keeper": {"command": sh("while :; do sleep 0.05; done")}}},
    }}
    mounts_before = task_mounts_on_the_host()
    running = corral.start(config)
    wait_for(lambda: count.exists(), what="the first run")
    fds_first = sorted(os.listdir(f"/proc/{running.pid}/fd"), key=int)
    wait_for(lambda: running.events().of_task("app", "not_restarting"), timeout=60,
             what="the last run")
    assert len(count.read_text().splitlines()) == runs
    fds_last = os.listdir(f"/proc/{running.pid}/fd")
    assert len(fds_last) <= len(fds_first), (fds_first, fds_last)
    assert task_mounts_on_the_host() == mounts_before
    group_dir = v2_cgroup(running.pid).parent / "g"
    # Removed once the kernel says it is empty, which may come just after
    # the last exit.
    wait_for(lambda: not (group_dir / "app").exists(), what=lambda: list(group_dir.iterdir()))
    # No process of the task's ids is left, only corral and the keeper.
    left = []
    for pid in processes_with_env("CORRAL_TEST_ID", corral.test_id):
        try:
            if status_ids(pid)["Uid"][0] == str(BASE):
                left.append(pid)
        except OSError:
            pass  # gone meanwhile
    assert not left, left
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 1
