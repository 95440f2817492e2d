"""Isolated tasks (`isolation:`), seen from inside the task: namespaces,
the reaper as PID 1, hostname, loopback, capabilities, seccomp,
no_new_privs, rlimits, umask; and from outside: exit codes and signals go
through the reaper, and repeated runs leave nothing behind."""

import os
import signal
from pathlib import Path

from conftest import fd_targets, host_mountinfo, marks_by_name, mark, sh, v2_cgroup, wait_for

NEVER = {"policy": "never"}
ALL_NAMESPACES = ["pid", "mount", "uts", "ipc", "net", "cgroup"]
# Docker's default capabilities: chown dac_override fowner fsetid kill setgid
# setuid setpcap net_bind_service net_raw sys_chroot mknod audit_write setfcap.
DOCKER_DEFAULT_CAPS = 0x00000000A80425FB
CAP_NET_BIND_SERVICE = 1 << 10


def run_isolated(corral, script, report, **isolation):
    """Runs `script` (shell) as an isolated task to its end; returns the
    lines it wrote to `report`."""
    config = {"groups": {"g": {"tasks": {"app": {
        "command": sh(script), "restart": NEVER, "isolation": isolation}}}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    return Path(report).read_text().splitlines()


def status_field(lines, name):
    for line in lines:
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"no {name} in {lines}")


def test_the_reaper_is_pid_1_and_proc_shows_only_the_task(corral, tmp_path):
    report = tmp_path / "report"
    lines = run_isolated(
        corral,
        f"echo self $$ > {report}; ps -e -o pid= -o comm= >> {report}",
        report, namespaces=["pid", "mount"])
    assert lines[0] == "self 2", lines
    processes = [line.split() for line in lines[1:]]
    # corral's reaper (PID 1), the shell and ps: nothing of the host.
    assert processes == [["1", "corral-reaper"], ["2", "sh"], [processes[2][0], "ps"]], processes


def test_the_reaper_is_corrals_embedded_program_run_from_a_memfd(corral, corral_bin, tmp_path):
    report, image = tmp_path / "report", tmp_path / "image"
    script = (f"readlink /proc/1/exe > {report}; tr '\\0' ' ' < /proc/1/cmdline >> {report}; "
              f"echo >> {report}; ls /proc/1/fd >> {report}; cat /proc/1/exe > {image}")
    lines = run_isolated(corral, script, report, namespaces=["pid", "mount"])
    # Not a file of the host: the sealed memfd corral made at start.
    assert lines[0] == "/memfd:corral-reaper (deleted)", lines
    assert lines[1] == f"corral-reaper --status-fd=3 /bin/sh /bin/sh -c {script} ", lines
    # The memfd stays in corral: the reaper has the task's stdio and its
    # status socket only (which the command does not inherit).
    assert lines[2:] == ["0", "1", "2", "3"], lines
    # The program the build made (a static one, see test_reaper.py).
    assert image.read_bytes() == (corral_bin.parent / "corral-reaper").read_bytes()


def test_orphans_inside_are_reaped_by_the_reaper(corral, tmp_path):
    report = tmp_path / "report"
    script = (f"for i in 1 2 3; do (sleep 0.2 &); done; sleep 0.6; "
              f"ps -e -o stat= -o comm= > {report}")
    lines = run_isolated(corral, script, report, namespaces=["pid", "mount"])
    states = [line.split() for line in lines]
    assert not [s for s in states if s[0].startswith("Z") or s[1] == "sleep"], states


def test_the_command_can_be_pid_1_itself(corral, tmp_path):
    report = tmp_path / "report"
    lines = run_isolated(corral, f"echo $$ > {report}", report,
                         namespaces=["pid", "mount"], init=False)
    assert lines == ["1"]


def test_exit_code_and_stop_signal_go_through_the_reaper(corral, tmp_path):
    marks = tmp_path / "marks"
    config = {"groups": {
        "g": {"tasks": {"exits": {"command": sh("exit 3"), "restart": NEVER,
                                  "isolation": {"namespaces": ["pid"]}}}},
        "h": {"tasks": {"trapper": {
            "command": sh(f"trap '{mark(marks, 'term')}; exit 0' TERM; {mark(marks, 'up')}; "
                          "while :; do sleep 0.02; done"),
            "isolation": {"namespaces": ["pid"]}}}},
    }}
    running = corral.start(config)
    wait_for(lambda: "up" in marks_by_name(marks), what="the trapper")
    wait_for(lambda: running.events().of_task("exits", "exited"), what="exits")
    assert running.events().of_task("exits", "exited")[0]["message"] == "exited with code 3"
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 3, result  # g/exits failed for good first
    # SIGTERM reached the command under the reaper, which trapped it.
    assert "term" in marks_by_name(marks)
    assert result.events.of_task("trapper", "exited")[0]["message"] == "exited with code 0"


def test_a_command_the_reaper_cannot_start_exits_127_or_126_and_says_why(corral, tmp_path):
    """The reaper starts the command: one it cannot exec is a run that exits
    127 or 126 (as a shell says it), which the restart policy sees, not a
    start that failed; the task's output says why."""
    data = tmp_path / "data"
    data.write_text("just data\n")
    commands = {"missing": ["/nonexistent/prog"], "data": [str(data)],
                "unknown": ["no-such-command"]}
    config = {"groups": {name: {"tasks": {name: {
        "command": command, "restart": NEVER,
        "isolation": {"namespaces": ["pid", "mount"]}}}} for name, command in commands.items()}}
    result = corral.run(config)
    exits = {name: result.events.of_task(name, "exited")[0]["message"] for name in commands}
    assert exits == {"missing": "exited with code 127", "data": "exited with code 126",
                     "unknown": "exited with code 127"}, (exits, result)
    for line in ("missing | corral reaper: exec /nonexistent/prog: No such file or directory",
                 f"data | corral reaper: exec {data}: Permission denied",
                 "unknown | corral reaper: exec no-such-command: No such file or directory"):
        assert line in result.stdout, result.stdout


def test_hostname_network_and_limits(corral, tmp_path):
    report = tmp_path / "report"
    # /proc/net/dev is the task's network namespace's (/sys, not remounted
    # without a rootfs, is still corral's).
    script = (f"hostname > {report}; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' "
              f">> {report}; ulimit -n >> {report}; ulimit -Hn >> {report}; umask >> {report}")
    lines = run_isolated(corral, script, report, namespaces=["uts", "net", "mount"],
                         hostname="inner", rlimits={"nofile": [256, 512]}, umask="0027")
    assert lines[0] == "inner"
    assert lines[1:] == ["lo", "256", "512", "0027"], lines  # nothing but loopback
    # corral's own hostname is untouched.
    assert os.uname().nodename != "inner"


def test_loopback_is_up_in_a_new_network_namespace(corral, tmp_path):
    report = tmp_path / "report"
    script = (f"/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); "
              f"s.listen(); c=socket.create_connection(s.getsockname()); print(\"connected\")' "
              f"> {report}")
    lines = run_isolated(corral, script, report, namespaces=["net"])
    assert lines == ["connected"]


def test_capabilities_default_drop_all_and_add(corral, tmp_path):
    report = tmp_path / "report"
    script = f"grep -E '^Cap(Eff|Bnd|Prm)|^NoNewPrivs|^Seccomp:' /proc/self/status > {report}"
    default = run_isolated(corral, script, report, namespaces=[])
    for field in ("CapEff", "CapBnd", "CapPrm"):
        assert int(status_field(default, field), 16) == DOCKER_DEFAULT_CAPS, default
    assert status_field(default, "NoNewPrivs") == "1"
    assert status_field(default, "Seccomp") == "2"

    only = run_isolated(corral, script, report,
                        capabilities={"drop": ["all"], "add": ["net_bind_service"]})
    for field in ("CapEff", "CapBnd", "CapPrm"):
        assert int(status_field(only, field), 16) == CAP_NET_BIND_SERVICE, only

    none = run_isolated(corral, script, report, capabilities={"drop": ["all"]},
                        seccomp="unconfined", no_new_privileges=False)
    assert int(status_field(none, "CapEff"), 16) == 0
    assert status_field(none, "Seccomp") == "0"
    assert status_field(none, "NoNewPrivs") == "0"


def test_a_non_root_task_keeps_its_capabilities_as_ambient(corral, open_dir):
    report = open_dir / "report"
    open_dir.chmod(0o777)
    config = {"groups": {"g": {"tasks": {"app": {
        "command": sh(f"grep -E '^Cap(Eff|Amb)' /proc/self/status > {report}"),
        "user": "65534:65534", "restart": NEVER,
        "isolation": {"capabilities": {"drop": ["all"], "add": ["net_bind_service"]}}}}}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    lines = report.read_text().splitlines()
    assert int(status_field(lines, "CapAmb"), 16) == CAP_NET_BIND_SERVICE, lines
    assert int(status_field(lines, "CapEff"), 16) == CAP_NET_BIND_SERVICE, lines


def test_the_default_seccomp_profile_denies_with_eperm(corral, tmp_path):
    report = tmp_path / "report"
    probe = ("import ctypes, errno, os\n"
             "libc = ctypes.CDLL(None, use_errno=True)\n"
             "def call(name, *args):\n"
             "    r = getattr(libc, name)(*args)\n"
             "    return 'ok' if r >= 0 else errno.errorcode[ctypes.get_errno()]\n"
             "print('unshare', call('unshare', 0x04000000))\n"  # CLONE_NEWUTS
             "print('keyctl', call('syscall', 250, 0, 0, 0))\n"  # keyctl(GET_KEYRING_ID)
             "print('getpid', 'ok' if os.getpid() > 0 else 'no')\n"
             "pid = os.fork()\n"
             "if pid == 0: os._exit(0)\n"
             "print('fork', 'ok' if os.waitpid(pid, 0)[1] == 0 else 'no')\n")
    (tmp_path / "probe.py").write_text(probe)
    lines = run_isolated(corral, f"/usr/bin/python3 {tmp_path}/probe.py > {report}", report,
                         namespaces=["pid", "mount"])
    assert lines == ["unshare EPERM", "keyctl EPERM", "getpid ok", "fork ok"], lines


def test_a_custom_seccomp_profile(corral, tmp_path):
    report = tmp_path / "report"
    script = (f"mkdir {tmp_path}/made 2> {report}.err; echo mkdir $? > {report}; "
              f"touch {tmp_path}/file && echo touch 0 >> {report}")
    lines = run_isolated(corral, script, report,
                         seccomp={"default_action": "allow", "deny": ["mkdir", "mkdirat"]})
    assert lines == ["mkdir 1", "touch 0"], lines
    assert "Operation not permitted" in (tmp_path / "report.err").read_text()
    assert not (tmp_path / "made").exists()


def test_escape_attempts_fail(corral, tmp_path):
    report = tmp_path / "report"
    outside = os.getpid()
    script = (f"mount -t tmpfs none /mnt 2>/dev/null; echo mount $? > {report}; "
              f"kill -0 {outside} 2>/dev/null; echo kill $? >> {report}; "
              f"unshare -U true 2>/dev/null; echo userns $? >> {report}")
    lines = run_isolated(corral, script, report, namespaces=["pid", "mount"])
    # mount: seccomp and no CAP_SYS_ADMIN; kill: the host's pid is not in
    # the namespace; a user namespace: seccomp (unshare).
    assert [line.split()[0] for line in lines] == ["mount", "kill", "userns"], lines
    assert all(not line.endswith(" 0") for line in lines), lines


def test_kernel_files_and_cgroups_are_read_only_with_a_mount_namespace(corral, tmp_path):
    """A root task without capabilities could still write files root owns:
    move itself out of its cgroup, or turn the kernel's knobs."""
    report = tmp_path / "report"
    unified = Path("/sys/fs/cgroup/unified/cgroup.procs")
    procs = unified if unified.exists() else Path("/sys/fs/cgroup/cgroup.procs")
    script = (f"(echo $$ > {procs}) 2>> {report}.err; echo cgroup $? > {report}; "
              # Its own value: harmless, were the write to go through.
              f"v=$(cat /proc/sys/vm/overcommit_memory); "
              f"(echo $v > /proc/sys/vm/overcommit_memory) 2>> {report}.err; "
              f"echo sysctl $? >> {report}; "
              f"wc -c < /proc/keys >> {report}; "
              f"touch {tmp_path}/written; echo tmp $? >> {report}")
    lines = run_isolated(corral, script, report, namespaces=["pid", "mount"])
    assert lines == ["cgroup 2", "sysctl 2", "0", "tmp 0"], lines
    errors = (tmp_path / "report.err").read_text()
    assert errors.count("Read-only file system") == 2, errors


def test_a_failed_isolation_step_names_the_task_and_the_step(corral, tmp_path):
    # RLIMIT_NOFILE above the kernel's nr_open cannot be set.
    config = {"groups": {"g": {"tasks": {"app": {
        "command": ["true"], "restart": NEVER,
        "isolation": {"rlimits": {"nofile": 2 ** 40}}}}}}}
    result = corral.run(config)
    assert result.returncode == 126, result
    message = result.events.of_task("app", "start_failed")[0]["message"]
    assert message == "rlimit #1: Operation not permitted", message


def test_many_isolated_runs_leave_nothing_behind(corral, tmp_path):
    count = tmp_path / "count"
    runs = 60
    config = {"groups": {
        "g": {"tasks": {"app": {
            "command": sh(f"echo x >> {count}"),
            "restart": {"policy": "always", "attempts": runs - 1, "interval": "1h",
                        "delay": "0s"},
            "isolation": {"namespaces": ALL_NAMESPACES, "hostname": "h"}}}},
        "keep": {"tasks": {"keeper": {"command": sh("while :; do sleep 0.05; done")}}},
    }}
    mounts_before = host_mountinfo()
    running = corral.start(config)
    wait_for(lambda: count.exists(), what="the first run")
    # Network namespaces are left out: the spares (refilled when the loop is
    # idle, so how many are ready at a given moment is timing) have their
    # own test, test_network_spares.py.
    def fds_but_spares():
        return sorted(t for t in fd_targets(running.pid) if not t.startswith("net:["))

    fds_first = fds_but_spares()
    wait_for(lambda: running.events().of_task("app", "not_restarting"), timeout=60,
             what="the last run")
    assert len(count.read_text().splitlines()) == runs
    # corral holds no more fds than during the first run (the task's own
    # cgroup fds are gone with it now), and no mount reached the host.
    fds_last = fds_but_spares()
    assert len(fds_last) <= len(fds_first), (fds_first, fds_last)
    assert host_mountinfo() == mounts_before
    group_dir = v2_cgroup(running.pid).parent / "g"
    assert not (group_dir / "app").exists(), list(group_dir.iterdir())
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 1  # app exited 0 too often for its policy


def test_a_task_with_a_reaper_is_announced_with_its_commands_pid(corral, tmp_path):
    """One pid everywhere, the command's: "started (pid N)", the event and
    status agree, and N is the command, not the reaper (a `kill -9 N` of
    the announced pid must hit the command)."""
    running = corral.start({"groups": {"g": {"tasks": {"app": {
        "command": ["sleep", "1000"], "isolation": {"namespaces": ["pid"]}}}}}})
    corral.wait_control(running)
    status_pid = wait_for(lambda: corral.task_status("g/app").get("pid"), what="a pid")
    started = wait_for(lambda: running.result().events.of_task("app", "started"),
                       what="the started event")
    assert started[0]["pid"] == status_pid, (started, status_pid)
    assert Path(f"/proc/{status_pid}/comm").read_text().strip() == "sleep"
    assert f"g/app: started (pid {status_pid})" in running.result().stderr
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
