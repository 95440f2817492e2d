"""propagation: bidirectional (docs/config.md, "Root file system and
mounts"): what a task mounts below such a bind reaches the host and the
other tasks that bind the same source, as CSI node plugins need, while its
other mounts stay private; once no run binds the source, what was mounted
below it goes, and so does what corral did to make it shared. Asserted
from the host's /proc/self/mountinfo and from inside a second task."""

import signal
import subprocess
from pathlib import Path

import pytest

from conftest import busybox_root, sh, wait_for

IDLE = "exec sleep 1000"
# A plugin needs to mount: sys_admin, and no filter on mount(2).
PRIVILEGED = {"capabilities": {"add": ["sys_admin"]}, "seccomp": "unconfined"}


def host_mounts():
    """(mount point, source) of each line of the host's mount table."""
    with open("/proc/self/mountinfo") as table:
        return [(fields[4], fields[fields.index("-") + 2])
                for fields in (line.split() for line in table)]


def mounts_below(path):
    return sorted(point for point, _ in host_mounts()
                  if point == str(path) or point.startswith(f"{path}/"))


def plugin(source, script, **isolation):
    return {"command": sh(script),
            "isolation": {"namespaces": ["mount"], **PRIVILEGED, **isolation,
                          "mounts": [{"source": str(source), "target": "/plugin",
                                      "propagation": "bidirectional"}]}}


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "csi"
    path.mkdir()
    yield path
    for point in reversed(mounts_below(path)):  # a failed test leaves nothing
        subprocess.run(["umount", "-l", point], check=False)


def test_a_plugins_mount_reaches_the_host_and_a_second_task(corral, source, tmp_path):
    config = {"groups": {"csi": {"tasks": {
        "plugin": plugin(source, "mkdir -p /plugin/vol && mount -t tmpfs -o size=1m vol "
                                 "/plugin/vol && echo hello > /plugin/vol/f && "
                                 f"mount -t tmpfs private /mnt && touch /plugin/done; {IDLE}"),
        "consumer": plugin(source, "while [ ! -e /plugin/vol/f ]; do sleep 0.05; done; "
                                   f"cat /plugin/vol/f; {IDLE}"),
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: "hello" in corral.cli("logs", "csi/consumer").stdout,
             what="the consumer reading the plugin's file")
    # The host sees the plugin's tmpfs (and corral's shared bind of the
    # source, which was no mount point), not the plugin's private /mnt.
    assert mounts_below(source) == [str(source), f"{source}/vol"], host_mounts()
    assert (source / "vol" / "f").read_text() == "hello\n"
    assert "private" not in [mounted for _, mounted in host_mounts()]

    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert mounts_below(source) == [], host_mounts()  # all gone, corral's bind too
    assert not (source / "vol" / "f").exists()


def test_the_hosts_mount_reaches_the_task_and_a_restart_starts_clean(corral, source):
    config = {"groups": {"csi": {"tasks": {
        "plugin": plugin(source, "mkdir -p /plugin/mine && mount -t tmpfs mine /plugin/mine; "
                                 "while [ ! -e /plugin/from-host/note ]; do sleep 0.05; done; "
                                 f"cat /plugin/from-host/note; {IDLE}"),
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: f"{source}/mine" in mounts_below(source), what="the plugin's mount")
    (source / "from-host").mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "from-host", str(source / "from-host")], check=True)
    (source / "from-host" / "note").write_text("mounted by the host\n")
    wait_for(lambda: "mounted by the host" in corral.cli("logs", "csi/plugin").stdout,
             what="the task reading the host's mount")
    pid = corral.task_status("csi/plugin")["pid"]
    assert corral.cli("restart", "csi/plugin").returncode == 0
    wait_for(lambda: corral.task_status("csi/plugin")["pid"] not in (None, pid),
             what="the new run")
    # The old run's mounts (and the host's, made while it ran) went with
    # it; the new run mounted its own again.
    wait_for(lambda: mounts_below(source) == [str(source), f"{source}/mine"],
             what=lambda: f"a clean start: {mounts_below(source)}")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert mounts_below(source) == []


def test_the_mounts_go_when_the_last_run_ends_not_before(corral, source):
    config = {"groups": {"csi": {"tasks": {
        "plugin": plugin(source, f"mkdir -p /plugin/v && mount -t tmpfs v /plugin/v; {IDLE}"),
        "other": plugin(source, IDLE),
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: f"{source}/v" in mounts_below(source), what="the plugin's mount")
    assert corral.cli("stop", "csi/plugin").returncode == 0
    wait_for(lambda: corral.task_status("csi/plugin")["state"] == "dead", what="plugin stopped")
    # csi/other still binds the source: nothing is taken from under it.
    assert f"{source}/v" in mounts_below(source)
    assert corral.cli("stop", "csi/other").returncode == 0
    wait_for(lambda: mounts_below(source) == [], what="everything unmounted")
    running.send(signal.SIGTERM)
    running.wait()


def test_a_source_that_was_a_mount_point_keeps_what_it_had(corral, source):
    """A source the host mounted itself (private, with a mount below it):
    corral makes it shared for the run, then private again, and takes away
    only what the task added."""
    subprocess.run(["mount", "-t", "tmpfs", "host-src", str(source)], check=True)
    subprocess.run(["mount", "--make-private", str(source)], check=True)
    (source / "before").mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "host-before", str(source / "before")], check=True)
    config = {"groups": {"csi": {"tasks": {
        "plugin": plugin(source, f"mkdir -p /plugin/v && mount -t tmpfs v /plugin/v; {IDLE}"),
    }}}}
    running = corral.start(config)
    wait_for(lambda: f"{source}/v" in mounts_below(source), what="the plugin's mount")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert mounts_below(source) == [str(source), f"{source}/before"], host_mounts()
    propagation = [line for line in open("/proc/self/mountinfo")
                   if line.split()[4] == str(source)]
    assert propagation and "shared:" not in propagation[-1], propagation


def test_with_a_root_file_system_of_its_own(corral, source, tmp_path):
    root = busybox_root(tmp_path / "rootfs", ["sh", "mkdir", "mount", "sleep", "touch"])
    config = {"groups": {"csi": {"tasks": {
        "plugin": plugin(source, f"mkdir -p /plugin/v && mount -t tmpfs v /plugin/v; {IDLE}",
                         rootfs=str(root)),
    }}}}
    running = corral.start(config)
    wait_for(lambda: f"{source}/v" in mounts_below(source), what="the plugin's mount")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert mounts_below(source) == []


def test_bidirectional_is_refused_where_it_cannot_work(corral, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    afile = tmp_path / "file"
    afile.write_text("")
    bind = {"source": str(src), "target": "/plugin", "propagation": "bidirectional"}
    cases = {
        "a user namespace": ({"namespaces": ["mount", "user"], "mounts": [bind]},
                             "isolation.mounts[0].propagation: bidirectional cannot work in a "
                             "user namespace"),
        "no mount namespace": ({"mounts": [bind]}, "isolation.mounts: needs the mount namespace"),
        "a tmpfs": ({"namespaces": ["mount"],
                     "mounts": [{"type": "tmpfs", "target": "/t",
                                 "propagation": "bidirectional"}]},
                    "isolation.mounts[0].propagation: bidirectional is for a bind mount"),
        "no sys_admin": ({"namespaces": ["mount"], "seccomp": "unconfined", "mounts": [bind]},
                         "bidirectional shares the mounts the task makes, but without the "
                         "sys_admin capability it can make none"),
        "the default seccomp profile": ({"namespaces": ["mount"],
                                         "capabilities": {"add": ["sys_admin"]},
                                         "mounts": [bind]},
                                        "the default seccomp profile refuses mount"),
        "a file as source": ({"namespaces": ["mount"], **PRIVILEGED,
                              "mounts": [{**bind, "source": str(afile)}]},
                             "bidirectional needs a directory as source"),
    }
    for name, (isolation, said) in cases.items():
        result = corral.check({"groups": {"g": {"tasks": {"t": {
            "command": ["true"], "isolation": isolation}}}}})
        assert result.returncode == 1 and said in result.stderr, (name, result.stderr)


def test_the_csi_plugin_example_runs_and_leaves_the_host_as_it_was(corral):
    example = Path(__file__).resolve().parents[2] / "examples" / "csi-plugin.yaml"
    before = mounts_below("/mnt")
    result = corral.run(example)
    assert result.returncode == 0, result
    assert "storage/workload | written by the node plugin" in result.stdout_lines(), result
    assert "storage/workload | workload: read the plugin's volume on the host" in \
        result.stdout_lines(), result
    assert "storage/node-plugin: healthy (its health probe passed)" in result.stderr, result
    assert mounts_below("/mnt") == before, host_mounts()


def propagation_of(path):
    """The optional fields (shared:N, master:N) of the topmost mount at
    `path`, or None when nothing is mounted there."""
    result = None
    with open("/proc/self/mountinfo") as table:
        for fields in (line.split() for line in table):
            if fields[4] == str(path):
                result = fields[6:fields.index("-")]
    return result


def test_a_source_on_a_shared_mount_is_used_as_it_is(corral, source, tmp_path):
    """A directory on a mount that is shared already gets no bind of
    corral's: a bind would join the same peer group, and every mount of the
    task would also be propagated, hidden, onto the mount below it."""
    shared = tmp_path / "shared"
    shared.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "sharedfs", str(shared)], check=True)
    try:
        subprocess.run(["mount", "--make-shared", str(shared)], check=True)
        (shared / "sub").mkdir()
        config = {"groups": {"csi": {"tasks": {"plugin": plugin(
            shared / "sub", f"mkdir -p /plugin/v && mount -t tmpfs v /plugin/v; {IDLE}")}}}}
        running = corral.start(config)
        wait_for(lambda: f"{shared}/sub/v" in mounts_below(shared), what="the plugin's mount")
        # The shared tmpfs and the task's mount, once: nothing hidden below.
        assert mounts_below(shared) == [str(shared), f"{shared}/sub/v"], host_mounts()
        running.send(signal.SIGTERM)
        assert running.wait().returncode == 0
        assert mounts_below(shared) == [str(shared)], host_mounts()
        assert propagation_of(shared)[0].startswith("shared:")
    finally:
        subprocess.run(["umount", "-R", "-l", str(shared)], check=False)


def test_a_slave_mount_point_stays_a_slave(corral, source, tmp_path):
    """A source that receives mounts from a master (as a container's rslave
    volume does) still receives them after the plugin: corral stacks a
    shared bind of its own and never changes the slave's propagation."""
    master = tmp_path / "master"
    master.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "masterfs", str(master)], check=True)
    try:
        subprocess.run(["mount", "--make-shared", str(master)], check=True)
        subprocess.run(["mount", "--bind", str(master), str(source)], check=True)
        subprocess.run(["mount", "--make-slave", str(source)], check=True)
        before = propagation_of(source)
        assert before[0].startswith("master:"), before
        config = {"groups": {"csi": {"tasks": {"plugin": plugin(
            source, f"mkdir -p /plugin/v && mount -t tmpfs v /plugin/v; {IDLE}")}}}}
        running = corral.start(config)
        wait_for(lambda: f"{source}/v" in mounts_below(source), what="the plugin's mount")
        running.send(signal.SIGTERM)
        assert running.wait().returncode == 0
        assert mounts_below(source) == [str(source)], host_mounts()
        assert propagation_of(source) == before
        (master / "late").mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "late", str(master / "late")], check=True)
        assert f"{source}/late" in mounts_below(source)  # still its master's slave
    finally:
        subprocess.run(["umount", "-R", "-l", str(source)], check=False)
        subprocess.run(["umount", "-R", "-l", str(master)], check=False)


def test_a_mount_over_the_target_itself_goes_too(corral, source):
    """The task covers its whole target: on the host that mount is stacked
    on corral's bind of the source, and both go."""
    config = {"groups": {"csi": {"tasks": {"plugin": plugin(
        source, f"mount -t tmpfs over /plugin && touch /plugin/covered; {IDLE}")}}}}
    running = corral.start(config)
    wait_for(lambda: (source / "covered").exists(), what="the plugin's mount")
    assert mounts_below(source) == [str(source)] * 2, host_mounts()
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    assert mounts_below(source) == [], host_mounts()
    assert not (source / "covered").exists()
