"""`propagation: bidirectional` (a bind mount of a host directory): what a
task mounts under its target reaches the host and every other task that
binds the same source, both ways; the task's other mounts stay its own; when
the last run using the source ends (and when corral exits), corral unmounts
what appeared under it, and its own bind of the source onto itself, so that
the host's mount table is what it was. Seen from the host (mountinfo) and
from inside a second task. The three ways a source can be on the host:
- a plain directory on a mount that is not shared: corral binds it onto
  itself and makes that bind shared (the tests' machines have a private /);
- a directory on a shared mount: used as it is, no bind of corral's;
- a mount point that is not shared: corral stacks a shared bind of its own
  on it, and leaves the mount below as it was (private)."""

import signal
import subprocess
from pathlib import Path

import pytest

from conftest import REPO_ROOT, RUN_TIMEOUT, host_mountinfo, sh, wait_for

NEVER = {"policy": "never"}
# What a task that mounts needs (bidirectional is refused without it).
MOUNTER = {"capabilities": {"add": ["sys_admin"]}, "seccomp": "unconfined"}


def mounts_below(path):
    """[(mount point, fs type, source)] of the host's mounts at or below
    `path`, in mountinfo's order."""
    path = str(path)
    found = []
    for line in host_mountinfo().splitlines():
        fields = line.split()
        point = fields[4].replace("\\040", " ")
        if point == path or point.startswith(path + "/"):
            dash = fields.index("-")
            found.append((point, fields[dash + 1], fields[dash + 2]))
    return found


def propagation_of(path):
    """The optional fields (shared:N, master:N) of the topmost mount at
    `path`, or None when nothing is mounted there."""
    result = None
    for line in host_mountinfo().splitlines():
        fields = line.split()
        if fields[4] == str(path):
            result = fields[6:fields.index("-")]
    return result


def plugin(source, script, **extra):
    """A task with `source` bound at /csi, bidirectional, that runs
    `script`."""
    isolation = {"namespaces": ["mount", "pid"], **MOUNTER,
                 "mounts": [{"source": str(source), "target": "/csi",
                             "propagation": "bidirectional"}]}
    isolation.update(extra)
    return {"command": sh(script), "restart": NEVER, "isolation": isolation}


@pytest.fixture
def source(tmp_path):
    directory = tmp_path / "plugins"
    directory.mkdir()
    return directory


@pytest.fixture
def mount_table(tmp_path):
    """The host's mounts below the test's directory before the test (none);
    after it, nothing may be left there. Only that part of the table is
    looked at, and cleaned when a failed test left something: other tests
    of the machine mount and unmount elsewhere meanwhile."""
    before = mounts_below(tmp_path)
    yield before
    after = mounts_below(tmp_path)
    if after != before:
        for point, _, _ in reversed(after):
            subprocess.run(["umount", "-l", point], check=False)
        pytest.fail(f"mounts left on the host: {after}")


def stop(running):
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    return result


def test_a_tasks_mount_reaches_the_host_and_a_second_task(corral, tmp_path, source,
                                                          mount_table):
    seen = tmp_path / "seen"
    config = {"groups": {
        "csi": {"tasks": {"plugin": plugin(
            source,
            "mkdir -p /csi/vol /private && mount -t tmpfs -o size=1m plugvol /csi/vol && "
            "mount -t tmpfs -o size=1m mine /private && "
            "echo from-the-plugin > /csi/vol/file && touch /csi/mounted && sleep 1000")}},
        # Another group, another task: it binds the same source and sees
        # the plugin's mount from inside its own namespace.
        "app": {"tasks": {"consumer": plugin(
            source,
            "until [ -f /csi/vol/file ]; do sleep 0.05; done; "
            f"cat /csi/vol/file > {seen}.tmp; "
            f"grep ' /csi/vol ' /proc/self/mountinfo >> {seen}.tmp; mv {seen}.tmp {seen}; "
            "sleep 1000")}},
    }}
    running = corral.start(config)
    wait_for(lambda: (source / "mounted").exists(), what="the plugin's mount")
    # The host sees the plugin's tmpfs where the plugin mounted it, below
    # corral's shared bind of the source; nothing else of the plugin's.
    below = mounts_below(source)
    assert below[0][0] == str(source)  # corral's bind of the source onto itself
    assert below[1:] == [(f"{source}/vol", "tmpfs", "plugvol")]
    assert "shared:" in " ".join(propagation_of(source))
    assert (source / "vol" / "file").read_text() == "from-the-plugin\n"
    assert "mine" not in host_mountinfo() and "/private" not in host_mountinfo()
    # The second task, from inside.
    lines = wait_for(lambda: seen.exists() and seen.read_text().splitlines(),
                     what="the consumer's view")
    assert lines[0] == "from-the-plugin"
    assert " /csi/vol " in lines[1] and "plugvol" in lines[1]
    # And the host's mounts reach the tasks: one made now under the source
    # is seen by both (the consumer lists it).
    (source / "fromhost").mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "hostvol", str(source / "fromhost")],
                   check=True)
    stop(running)
    # Everything below the source is gone: the plugin's, the host's own
    # mount made while the tasks ran, corral's bind.
    assert mounts_below(source) == []
    assert mounts_below(tmp_path) == mount_table


def test_mounts_go_when_the_run_ends(corral, tmp_path, source, mount_table):
    # The plugin mounts and exits; corral runs on (another task).
    config = {"groups": {"g": {"tasks": {
        "plugin": plugin(source, "mkdir -p /csi/vol && mount -t tmpfs tmp /csi/vol && "
                                 "touch /csi/vol/x"),
        "other": {"command": sh("sleep 1000"), "restart": NEVER},
    }}}}
    running = corral.start(config)
    wait_for(lambda: running.events().of_task("plugin", "exited"), what="the plugin's exit")
    # The run is over: no mount of it stays, while corral is still there.
    wait_for(lambda: mounts_below(source) == [], what="the sweep")
    assert running.alive()
    assert not (source / "vol" / "x").exists()
    stop(running)
    assert mounts_below(tmp_path) == mount_table


def test_two_tasks_share_a_source_until_the_last_stops(corral, tmp_path, source, mount_table):
    config = {"groups": {"g": {"tasks": {
        "plugin": plugin(source, "mkdir -p /csi/vol && mount -t tmpfs tmp /csi/vol && "
                                 "touch /csi/vol/x"),
        "holder": plugin(source, "sleep 1000"),
    }}}}
    running = corral.start(config)
    wait_for(lambda: running.events().of_task("plugin", "exited"), what="the plugin's exit")
    # The holder still binds the source: the plugin's volume stays (a mount
    # below the source cannot be told to be one task's).
    assert (f"{source}/vol", "tmpfs", "tmp") in mounts_below(source)
    assert (source / "vol" / "x").exists()
    stop(running)
    assert mounts_below(source) == []
    assert mounts_below(tmp_path) == mount_table


def test_a_restarted_plugin_starts_clean(corral, tmp_path, source, mount_table):
    # Each run mounts a volume and exits; the next run finds none left.
    log = tmp_path / "log"
    task = plugin(source, f"grep -c ' {source}/vol ' /proc/self/mountinfo >> {log}; "
                          "mkdir -p /csi/vol && mount -t tmpfs tmp /csi/vol; exit 1")
    task["restart"] = {"policy": "on-failure", "attempts": 2, "delay": "10ms"}
    result = corral.run({"groups": {"g": {"tasks": {"plugin": task}}}})
    assert log.read_text().split() == ["0", "0", "0"]
    assert result.returncode != 0
    assert mounts_below(tmp_path) == mount_table


def test_a_source_on_a_shared_mount_is_used_as_it_is(corral, tmp_path, mount_table):
    shared = tmp_path / "shared"
    shared.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "sharedfs", str(shared)], check=True)
    try:
        subprocess.run(["mount", "--make-shared", str(shared)], check=True)
        source = shared / "sub"
        source.mkdir()
        with_fs = mounts_below(tmp_path)
        running = corral.start({"groups": {"g": {"tasks": {"plugin": plugin(
            source, "mkdir -p /csi/vol && mount -t tmpfs vol /csi/vol && "
                    "touch /csi/mounted && sleep 1000")}}}})
        wait_for(lambda: (source / "mounted").exists(), what="the plugin's mount")
        # No bind of corral's: the task's mount is on the shared tmpfs.
        assert mounts_below(source) == [(f"{source}/vol", "tmpfs", "vol")]
        stop(running)
        assert mounts_below(tmp_path) == with_fs
    finally:
        subprocess.run(["umount", "-l", str(shared)], check=False)
    assert mounts_below(tmp_path) == mount_table


def test_a_private_mount_point_keeps_its_propagation(corral, tmp_path, mount_table):
    source = tmp_path / "private"
    source.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "privfs", str(source)], check=True)
    try:
        subprocess.run(["mount", "--make-private", str(source)], check=True)
        with_fs = mounts_below(tmp_path)
        running = corral.start({"groups": {"g": {"tasks": {"plugin": plugin(
            source, "mkdir -p /csi/vol && mount -t tmpfs vol /csi/vol && "
                    "touch /csi/mounted && sleep 1000")}}}})
        wait_for(lambda: (source / "mounted").exists(), what="the plugin's mount")
        # The private tmpfs, corral's shared bind stacked on it, the volume.
        below = mounts_below(source)
        assert [entry[0] for entry in below] == [str(source)] * 2 + [f"{source}/vol"]
        assert below[2][1:] == ("tmpfs", "vol")
        stop(running)
        assert mounts_below(tmp_path) == with_fs
        assert propagation_of(source) == []  # still private
    finally:
        subprocess.run(["umount", "-l", str(source)], check=False)
    assert mounts_below(tmp_path) == mount_table


def test_a_slave_mount_point_stays_a_slave(corral, tmp_path, mount_table):
    # A mount point that receives the host's mounts from a master (as a
    # container's rslave volume does) must still receive them afterwards:
    # corral stacks its own shared bind and never changes the slave.
    master, source = tmp_path / "master", tmp_path / "slave"
    master.mkdir()
    source.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "masterfs", str(master)], check=True)
    try:
        subprocess.run(["mount", "--make-shared", str(master)], check=True)
        subprocess.run(["mount", "--bind", str(master), str(source)], check=True)
        subprocess.run(["mount", "--make-slave", str(source)], check=True)
        before = propagation_of(source)
        assert before[0].startswith("master:")
        running = corral.start({"groups": {"g": {"tasks": {"plugin": plugin(
            source, "mkdir -p /csi/vol && mount -t tmpfs vol /csi/vol && "
                    "touch /csi/mounted && sleep 1000")}}}})
        wait_for(lambda: (source / "mounted").exists(), what="the plugin's mount")
        assert (f"{source}/vol", "tmpfs", "vol") in mounts_below(source)
        stop(running)
        assert propagation_of(source) == before
        # Still a slave: what the master gets now reaches it.
        (master / "late").mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "late", str(master / "late")], check=True)
        assert (f"{source}/late", "tmpfs", "late") in mounts_below(source)
    finally:
        subprocess.run(["umount", "-R", "-l", str(source)], check=False)
        subprocess.run(["umount", "-R", "-l", str(master)], check=False)
    assert mounts_below(tmp_path) == mount_table


def test_a_mount_over_the_target_itself_goes_too(corral, tmp_path, source, mount_table):
    # The task covers its whole target: on the host that mount is stacked
    # on corral's bind of the source, and both go.
    running = corral.start({"groups": {"g": {"tasks": {"plugin": plugin(
        source, "mount -t tmpfs over /csi && touch /csi/covered && sleep 1000")}}}})
    wait_for(lambda: (source / "covered").exists(), what="the plugin's mount")
    assert [entry[0] for entry in mounts_below(source)] == [str(source)] * 2
    stop(running)
    assert mounts_below(tmp_path) == mount_table
    assert not (source / "covered").exists()


def test_a_rootfs_task_mounts_through_its_bind(corral, tmp_path, source, mount_table):
    from conftest import busybox_root
    root = busybox_root(tmp_path / "rootfs", ["sh", "mkdir", "mount", "touch", "sleep"])
    running = corral.start({"groups": {"g": {"tasks": {"plugin": plugin(
        source, "mkdir -p /csi/vol && mount -t tmpfs vol /csi/vol && touch /csi/mounted && "
                "sleep 1000", rootfs=str(root))}}}})
    wait_for(lambda: (source / "mounted").exists(), what="the plugin's mount")
    assert (f"{source}/vol", "tmpfs", "vol") in mounts_below(source)
    stop(running)
    assert mounts_below(tmp_path) == mount_table


def test_a_source_gone_since_the_load_fails_the_start(corral, tmp_path, source, mount_table):
    config = corral.config({"groups": {"g": {"tasks": {
        "plugin": plugin(source, "true"),
        "removes": {"command": sh(f"rmdir {source}"), "restart": NEVER,
                    "lifecycle": {"hook": "prestart"}},
    }}}})
    result = corral.run(config)
    assert result.returncode != 0
    assert (f"g/plugin: bind {source} on /csi (bidirectional): {source}: "
            "No such file or directory") in result.stderr
    assert mounts_below(tmp_path) == mount_table


def test_the_example_runs_and_leaves_nothing(corral, tmp_path, source, mount_table):
    example = REPO_ROOT / "examples" / "csi-plugin.yaml"
    assert corral.check(example).returncode == 0
    result = corral.start(example, env={"CSI_PLUGIN_DIR": str(source)}).wait()
    assert result.returncode == 0, result
    assert "csi/workload | workload: published by the plugin" in result.stdout
    assert f"csi/workload | {source}/volumes/demo tmpfs demo-volume" in result.stdout
    assert mounts_below(source) == []
    assert mounts_below(tmp_path) == mount_table
