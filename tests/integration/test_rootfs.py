"""Root file systems and mounts (`isolation.rootfs`, `readonly_rootfs`,
`mounts`), seen from inside the task: its / is the rootfs, read-only when
asked, the configured mounts are there with their flags, /dev holds only
the minimal nodes, /proc and /sys are the task's; a symlink in the rootfs
pointing out of it stays inside; a mount that cannot be made is named in
the error; and the host's mount table never changes.

The rootfs is built from busybox-static (a static binary runs in any
root). Tasks with a pid namespace get corral's reaper as PID 1, a static
program corral carries in memory, so it runs in the rootfs too."""

import os
from pathlib import Path

import pytest

from conftest import busybox_root, host_mountinfo, sh

NEVER = {"policy": "never"}
APPLETS = ["sh", "cat", "ls", "touch", "echo", "stat", "grep", "wc", "mkdir", "ps", "sed",
           "readlink", "sleep", "tr", "sort", "head"]
# What /dev of a task with a rootfs (and an ipc namespace) holds, nothing else.
MINIMAL_DEV = ["fd", "full", "mqueue", "null", "ptmx", "pts", "random", "shm", "stderr",
               "stdin", "stdout", "tty", "urandom", "zero"]


@pytest.fixture
def rootfs(tmp_path):
    root = busybox_root(tmp_path / "rootfs", APPLETS)
    (root / "MARKER").write_text("the rootfs\n")
    # Symlinks that lead out of the rootfs if followed on the host.
    (root / "evil").symlink_to("/etc")
    (root / "up").symlink_to("../../../../../../../../etc")
    # rootfs' own tmp_path copy and /etc are those of the rootfs.
    return root


def task_lines(result, task="g/app"):
    """What the task printed (corral's stdout prefixes each line)."""
    prefix = f"{task} | "
    return [line[len(prefix):] for line in result.stdout_lines() if line.startswith(prefix)]


def run_in_root(corral, script, **isolation):
    """Runs `script` in the rootfs to its end; returns its output lines."""
    isolation.setdefault("namespaces", ["pid", "mount", "ipc"])
    config = {"groups": {"g": {"tasks": {"app": {
        "command": sh(script), "restart": NEVER, "isolation": isolation}}}}}
    before = host_mountinfo()
    result = corral.run(config)
    assert result.returncode == 0, result
    assert host_mountinfo() == before
    return task_lines(result)


def field(lines, name):
    for line in lines:
        if line.startswith(name + " "):
            return line[len(name) + 1:]
    raise AssertionError(f"no {name} in {lines}")


def test_the_root_is_the_rootfs_read_only_when_asked(corral, rootfs):
    script = ("echo marker $(cat /MARKER); touch /new 2>&1 | sed 's/^/root /'; "
              "touch /tmp/ok && echo tmp written; ls / | tr '\\n' ' ' | sed 's/^/ls /'")
    lines = run_in_root(corral, script, rootfs=str(rootfs), readonly_rootfs=True,
                        mounts=[{"type": "tmpfs", "target": "/tmp"}])
    assert field(lines, "marker") == "the rootfs"
    assert "Read-only file system" in field(lines, "root")
    assert "tmp written" in lines  # a mount below / keeps its own flags
    # The mount points the plan made, nothing of the host's /.
    assert field(lines, "ls").split() == ["MARKER", "bin", "dev", "etc", "evil", "proc", "sys",
                                          "tmp", "up"]
    assert not (rootfs / "new").exists()


def test_without_readonly_rootfs_the_root_is_writable(corral, rootfs):
    lines = run_in_root(corral, "touch /new && echo written", rootfs=str(rootfs))
    assert lines == ["written"]
    assert (rootfs / "new").exists()


def test_bind_mounts_read_only_and_writable(corral, rootfs, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "file").write_text("host data\n")
    shared = tmp_path / "shared"
    shared.mkdir()
    script = ("echo data $(cat /data/file); touch /data/new 2>&1 | sed 's/^/ro /'; "
              "echo from-task > /srv/shared/out && echo rw ok; "
              "grep -E ' /(data|srv/shared) ' /proc/self/mountinfo | sed 's/ - .*//' "
              "| sed 's/^/mount /'")
    lines = run_in_root(corral, script, rootfs=str(rootfs), mounts=[
                            {"source": str(data), "target": "/data", "readonly": True},
                            {"source": str(shared), "target": "/srv/shared"}])
    assert field(lines, "data") == "host data"
    assert "Read-only file system" in field(lines, "ro")
    assert "rw ok" in lines
    assert (shared / "out").read_text() == "from-task\n"
    assert not (data / "new").exists()
    mounts = {line.split()[5]: line.split()[6].split(",") for line in lines
              if line.startswith("mount ")}
    assert "ro" in mounts["/data"] and "rw" in mounts["/srv/shared"], lines


def test_tmpfs_gets_its_options(corral, rootfs):
    script = "grep ' /scratch ' /proc/mounts; stat -c 'mode %a' /scratch"
    lines = run_in_root(corral, script, rootfs=str(rootfs), mounts=[
        {"type": "tmpfs", "target": "/scratch", "options": ["size=8m", "mode=0750"]}])
    device, target, kind, options = lines[0].split()[:4]
    assert (target, kind) == ("/scratch", "tmpfs")
    assert {"size=8192k", "mode=750", "nosuid", "nodev"} <= set(options.split(",")), lines
    assert field(lines, "mode") == "750"


def test_dev_holds_only_the_minimal_nodes_and_pts_works(corral, rootfs):
    script = ("ls /dev | tr '\\n' ' ' | sed 's/^/dev /'; echo; "
              "echo ptmx $(readlink /dev/ptmx); echo fd $(readlink /dev/fd); "
              "echo null $(stat -c '%t:%T' /dev/null); echo hello > /dev/null && echo wrote; "
              "exec 3<>/dev/ptmx; ls /dev/pts | tr '\\n' ' ' | sed 's/^/pts /'; echo; "
              "echo shm $(stat -c %a /dev/shm)")
    lines = run_in_root(corral, script, rootfs=str(rootfs))
    assert field(lines, "dev").split() == MINIMAL_DEV
    assert field(lines, "ptmx") == "pts/ptmx"
    assert field(lines, "fd") == "/proc/self/fd"
    assert field(lines, "null") == "1:3"
    assert "wrote" in lines
    # A new devpts instance: the pty just opened is the first, and no
    # terminal of the host shows.
    assert field(lines, "pts").split() == ["0", "ptmx"]
    assert field(lines, "shm") == "1777"


def test_proc_is_the_tasks_and_sys_is_read_only(corral, rootfs):
    script = ("ls /proc | grep '^[0-9]*$' | sort -n | tr '\\n' ' ' | sed 's/^/pids /'; echo; "
              "echo self $$; "
              "grep -E ' /sys(/fs/cgroup)? ' /proc/self/mountinfo | sed 's/ - .*//' "
              "| sed 's/^/sys /'; "
              "mkdir /sys/fs/cgroup/pids/escape 2>&1 | sed 's/^/cgroup /'; "
              "echo keys $(wc -c < /proc/keys); ls /proc/acpi | wc -l | sed 's/^/acpi /'")
    lines = run_in_root(corral, script, rootfs=str(rootfs), init=False)
    assert field(lines, "self") == "1"
    pids = field(lines, "pids").split()
    # The shell (PID 1) and its pipeline, numbered from 1 in the task's
    # own namespace: nothing of the host's.
    assert pids == [str(n) for n in range(1, len(pids) + 1)] and len(pids) <= 6, lines
    sys_mounts = [line for line in lines if line.startswith("sys ")]
    assert sys_mounts and all(" ro," in line or line.split()[6].startswith("ro")
                              for line in sys_mounts), sys_mounts
    assert "Read-only file system" in field(lines, "cgroup")
    assert field(lines, "keys") == "0"  # masked by /dev/null
    assert field(lines, "acpi") == "0"  # an empty tmpfs


def test_a_symlink_out_of_the_rootfs_is_followed_inside_it(corral, rootfs, tmp_path):
    host_etc_before = sorted(os.listdir("/etc"))
    source = tmp_path / "payload"
    source.mkdir()
    (source / "secret").write_text("mounted\n")
    script = ("echo via-evil $(cat /etc/sub/secret); echo via-up $(ls /etc/upper | wc -l); "
              "grep -E ' /etc/(sub|upper) ' /proc/self/mountinfo | sed 's/ - .*//' "
              "| sed 's/^/mount /'")
    lines = run_in_root(corral, script, rootfs=str(rootfs), mounts=[
        {"source": str(source), "target": "/evil/sub"},
        {"type": "tmpfs", "target": "/up/upper"}])
    assert field(lines, "via-evil") == "mounted"
    assert field(lines, "via-up") == "0"
    targets = sorted(line.split()[5] for line in lines if line.startswith("mount "))
    assert targets == ["/etc/sub", "/etc/upper"], lines
    # Made inside the rootfs, never in the host's /etc.
    assert (rootfs / "etc" / "sub").is_dir() and (rootfs / "etc" / "upper").is_dir()
    assert sorted(os.listdir("/etc")) == host_etc_before


def test_mounts_without_a_rootfs_apply_to_the_hosts_tree_in_the_tasks_namespace(
        corral, tmp_path):
    place = tmp_path / "place"
    place.mkdir()
    report = tmp_path / "report"
    script = (f"grep ' {place} ' /proc/mounts > {report}; echo inside > {place}/file; "
              f"ls {place} >> {report}")
    config = {"groups": {"g": {"tasks": {"app": {
        "command": sh(script), "restart": NEVER,
        "isolation": {"namespaces": ["mount"], "mounts": [
            {"type": "tmpfs", "target": str(place), "options": ["size=1m"]}]}}}}}}
    before = host_mountinfo()
    result = corral.run(config)
    assert result.returncode == 0, result
    lines = report.read_text().splitlines()
    assert lines[0].split()[1:3] == [str(place), "tmpfs"], lines
    assert lines[1] == "file"
    # The file went to the task's tmpfs, gone with its namespace.
    assert list(place.iterdir()) == []
    assert host_mountinfo() == before


def start_failure(corral, task, **isolation):
    isolation.setdefault("namespaces", ["pid", "mount"])
    isolation.setdefault("init", False)
    config = {"groups": {"g": {"tasks": {"app": {
        "command": ["/bin/sh", "-c", "true"], "restart": NEVER, "isolation": isolation},
        **task}}}}
    before = host_mountinfo()
    result = corral.run(config)
    assert result.returncode == 126, result
    assert host_mountinfo() == before
    failures = result.events.of_task("app", "start_failed")
    assert len(failures) == 1, result
    assert f"g/app: {failures[0]['message']}" in result.stderr
    return failures[0]["message"]


def test_a_mount_the_kernel_refuses_is_named(corral, rootfs):
    message = start_failure(corral, {}, rootfs=str(rootfs), mounts=[
        {"type": "tmpfs", "target": "/tmp", "options": ["size=lots"]}])
    assert message == "mount tmpfs on /tmp: Invalid argument"
    message = start_failure(corral, {}, rootfs=str(rootfs), mounts=[
        {"type": "nosuchfs", "target": "/x"}])
    assert message == "mount nosuchfs on /x: No such device"


def test_a_mount_point_that_cannot_be_made_is_named(corral, rootfs):
    message = start_failure(corral, {}, rootfs=str(rootfs), mounts=[
        {"type": "tmpfs", "target": "/sys/newdir"}])
    assert message == "mount tmpfs on /sys/newdir: make the mount point: Read-only file system"


def test_a_bind_source_gone_since_load_is_named(corral, rootfs, tmp_path):
    source = tmp_path / "vanishing"
    source.mkdir()
    # Checked at load; a prestart task removes it before the main task.
    remover = {"remove": {"command": ["rmdir", str(source)], "restart": NEVER,
                          "lifecycle": {"hook": "prestart"}}}
    message = start_failure(corral, remover, rootfs=str(rootfs), mounts=[
        {"source": str(source), "target": "/data"}])
    assert message == f"bind {source} on /data: No such file or directory"


def test_a_rootfs_gone_since_load_is_named(corral, rootfs, tmp_path):
    gone = tmp_path / "gone"
    gone.mkdir()
    remover = {"remove": {"command": ["rmdir", str(gone)], "restart": NEVER,
                          "lifecycle": {"hook": "prestart"}}}
    message = start_failure(corral, remover, rootfs=str(gone))
    assert message == f"bind the rootfs {gone} onto itself: No such file or directory"


def test_check_reports_a_bad_rootfs_and_mount_with_their_place(corral, tmp_path):
    config = corral.config(
        "groups:\n"
        "  g:\n"
        "    tasks:\n"
        "      app:\n"
        "        command: [x]\n"
        "        isolation:\n"
        "          namespaces: [mount]\n"
        "          rootfs: /etc/hostname\n"
        "          mounts: [{source: /nonexistent-corral, target: /data}]\n")
    result = corral.check(config)
    assert result.returncode != 0
    assert f"{config}:8:19: g/app: isolation.rootfs: /etc/hostname is not a directory" \
        in result.stderr, result.stderr
    assert (f"{config}:9:29: g/app: isolation.mounts[0].source: /nonexistent-corral: "
            "No such file or directory") in result.stderr, result.stderr


def test_fifty_starts_leave_the_hosts_mounts_as_they_were(corral, rootfs, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    before = host_mountinfo()
    config = {"groups": {"g": {"tasks": {"app": {
        # Fails each time, so that it is started again: 50 starts.
        "command": ["/bin/sh", "-c", "echo run >> /data/runs; exit 1"],
        "restart": {"policy": "on-failure", "attempts": 49, "interval": "1h", "delay": "0s",
                    "max_delay": "0s"},
        "isolation": {"namespaces": ["pid", "mount", "ipc"], "init": False,
                      "rootfs": str(rootfs), "readonly_rootfs": True, "mounts": [
                          {"source": str(data), "target": "/data"},
                          {"type": "tmpfs", "target": "/tmp"}]}}}}}}
    result = corral.run(config, timeout=60)
    assert result.returncode == 1, result
    assert (data / "runs").read_text().splitlines() == ["run"] * 50
    assert host_mountinfo() == before
    # Nothing made in the rootfs but the mount points themselves.
    assert sorted(os.listdir(rootfs)) == ["MARKER", "bin", "data", "dev", "etc", "evil", "proc",
                                          "sys", "tmp", "up"]


def test_a_command_by_name_is_found_on_path_inside_the_rootfs(corral, rootfs):
    # The host has /usr/bin/sh, which PATH finds first; the rootfs has
    # only /bin/sh.
    assert Path("/usr/bin/sh").exists() and not (rootfs / "usr").exists()
    config = {"groups": {"g": {"tasks": {"app": {
        "command": ["sh", "-c", "echo found $0"], "restart": NEVER,
        "env": {"PATH": "/usr/local/bin:/usr/bin:/bin"},
        "isolation": {"namespaces": ["mount"], "rootfs": str(rootfs)}}}}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    assert task_lines(result) == ["found sh"]


def test_the_working_directory_is_inside_the_rootfs(corral, rootfs):
    def pwd(**task):
        config = {"groups": {"g": {"tasks": {"app": {
            "command": ["/bin/sh", "-c", "echo cwd $(pwd) $(ls | head -1)"], "restart": NEVER,
            "isolation": {"namespaces": ["mount"], "rootfs": str(rootfs)}, **task}}}}}
        result = corral.run(config)
        assert result.returncode == 0, result
        return task_lines(result)

    assert pwd() == ["cwd / MARKER"]
    assert pwd(cwd="/bin") == ["cwd /bin busybox"]


def test_readonly_rootfs_without_a_rootfs_makes_the_hosts_root_read_only_for_the_task(
        corral):
    probe = Path(f"/corral-test-{corral.test_id}")
    config = {"groups": {"g": {"tasks": {"app": {
        # tmp_path is on the same read-only root: the task reports on stdout.
        "command": sh(f"touch {probe} 2>&1; echo status $?"), "restart": NEVER,
        "isolation": {"namespaces": ["mount"], "readonly_rootfs": True}}}}}}
    before = host_mountinfo()
    try:
        result = corral.run(config)
        assert result.returncode == 0, result
        assert not probe.exists()
    finally:
        if probe.exists():
            probe.unlink()
    lines = task_lines(result)
    assert "Read-only file system" in lines[0] and lines[1] == "status 1", lines
    assert host_mountinfo() == before


def test_the_reaper_is_pid_1_in_the_rootfs_and_reaps_orphans(corral, rootfs):
    """The reaper needs no loader or library: PID 1 of a busybox rootfs,
    with the command under it and an orphan of the command reaped."""
    lines = run_in_root(corral, "(sleep 0.2 &) ; sleep 0.5; "
                        "echo pid1 $(cat /proc/1/comm); echo me $$; "
                        "echo zombies $(grep -l '^State:.*Z' /proc/[0-9]*/status | wc -l)")
    assert field(lines, "pid1") == "corral-reaper", lines
    assert field(lines, "me") == "2", lines
    assert field(lines, "zombies") == "0", lines
