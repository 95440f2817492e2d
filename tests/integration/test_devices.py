"""The device policy of isolated tasks (`isolation.devices`), seen from
inside the task: a node it makes itself (mknod is allowed) opens when a rule
allows it, and fails with EPERM, even for root, when none does. From
outside: one BPF program on the task's v2 cgroup, the v1 devices group's
list where that controller is mounted, and no program or fd left behind by
restarts."""

import signal
from pathlib import Path

import pytest

from conftest import corral_fds, sh, v2_cgroup, wait_for
from helpers_isolation import attached_device_programs, make_node

NEVER = {"policy": "never"}
ISOLATED = {"namespaces": ["mount"], "capabilities": {"add": ["mknod"]}}

# (name, major, minor) of character devices; none of them needs a
# capability to open, so that only the device policy can refuse them.
NULL = ("null", 1, 3)
ZERO = ("zero", 1, 5)
URANDOM = ("urandom", 1, 9)
LOOP = ("loop", 10, 237)   # /dev/loop-control: not in the default set
TUN = ("tun", 10, 200)     # /dev/net/tun: neither
FUSE = ("fuse", 10, 229)   # configured where a test says so

# Run inside the task: makes each node in a directory of its own and opens
# it, printing "NAME ok" or "NAME ERRNO" (or "NAME mknod ERRNO").
PROBE = r"""
import errno, os, sys, tempfile
directory = tempfile.mkdtemp(dir=sys.argv[1])
flags = {"r": os.O_RDONLY, "w": os.O_WRONLY, "rw": os.O_RDWR}[sys.argv[2]]
for spec in sys.argv[3:]:
    name, major, minor = spec.split(":")
    path = os.path.join(directory, name)
    try:
        os.mknod(path, 0o600 | 0o020000, os.makedev(int(major), int(minor)))
    except OSError as error:
        print(name, "mknod", errno.errorcode[error.errno], flush=True)
        continue
    try:
        os.close(os.open(path, flags))
        print(name, "ok", flush=True)
    except OSError as error:
        print(name, errno.errorcode[error.errno], flush=True)
    os.unlink(path)
os.rmdir(directory)
"""


def probe_command(tmp_path, devices, access="rw"):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    return ["/usr/bin/python3", str(script), str(tmp_path), access,
            *[f"{name}:{major}:{minor}" for name, major, minor in devices]]


def run_probe(corral, tmp_path, devices, isolation, access="rw"):
    """{name: "ok" | errno name} from one run of the probe as task g/app."""
    task = {"command": probe_command(tmp_path, devices, access), "restart": NEVER}
    if isolation is not None:
        task["isolation"] = isolation
    result = corral.run({"groups": {"g": {"tasks": {"app": task}}}})
    assert result.returncode == 0, result
    prefix = "g/app | "
    return dict(line[len(prefix):].split(" ", 1) for line in result.stdout_lines()
                if line.startswith(prefix))


# ---- what corral put on the task's cgroups, seen from outside -------------


def task_cgroup(running, task="g/app"):
    """The task's v2 cgroup directory, beside corral's own."""
    return v2_cgroup(running.pid) / ".." / task


def v1_devices_list(running, task="g/app"):
    """The task's v1 devices.list, or None without a v1 devices group. The
    group is where corral's own v1 cgroup is, below the same instance
    directory (corral-PID-...) as in v2, when corral made one."""
    root = Path("/sys/fs/cgroup/devices")
    if not (root / "devices.list").exists():
        return None
    lines = Path(f"/proc/{running.pid}/cgroup").read_text().splitlines()
    v2_root = Path(lines[-1].split("::")[1]).parent
    instance = v2_root.name if v2_root.name.startswith("corral-") else ""
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "devices" in controllers.split(","):
            devices_list = root / path.lstrip("/") / instance / task / "devices.list"
            return devices_list.read_text().splitlines() if devices_list.exists() else None
    return None


# ---- tests ---------------------------------------------------------------


def test_default_devices_open_and_others_are_denied_even_for_root(corral, tmp_path):
    seen = run_probe(corral, tmp_path, [NULL, ZERO, URANDOM, LOOP, TUN, FUSE], ISOLATED)
    # mknod is allowed for every node; opening only for the default set.
    assert seen == {"null": "ok", "zero": "ok", "urandom": "ok",
                    "loop": "EPERM", "tun": "EPERM", "fuse": "EPERM"}, seen


def test_a_task_without_isolation_is_unaffected(corral, tmp_path):
    seen = run_probe(corral, tmp_path, [NULL, LOOP, TUN, FUSE], None)
    assert seen == {"null": "ok", "loop": "ok", "tun": "ok", "fuse": "ok"}, seen


@pytest.mark.skipif(not Path("/dev/fuse").exists(), reason="no /dev/fuse here")
def test_a_configured_device_opens(corral, tmp_path):
    isolation = dict(ISOLATED, devices=[{"path": "/dev/fuse"}])
    seen = run_probe(corral, tmp_path, [FUSE, TUN, NULL], isolation)
    assert seen == {"fuse": "ok", "tun": "EPERM", "null": "ok"}, seen


def test_permissions_are_each_kind_of_access(corral, tmp_path):
    node = tmp_path / "node"
    make_node(node, *TUN[1:])
    isolation = dict(ISOLATED, devices=[{"path": str(node), "permissions": "r"}])
    seen = {access: run_probe(corral, tmp_path, [TUN], isolation, access)["tun"]
            for access in ("r", "w", "rw")}
    # Reading and writing at once needs both.
    assert seen == {"r": "ok", "w": "EPERM", "rw": "EPERM"}, seen


def test_group_devices_are_every_tasks(corral, tmp_path):
    node = tmp_path / "node"
    make_node(node, *TUN[1:])
    config = {"groups": {"g": {
        "isolation": dict(ISOLATED, devices=[str(node)]),
        "tasks": {
            "app": {"command": probe_command(tmp_path, [TUN, LOOP]), "restart": NEVER},
            "more": {"command": probe_command(tmp_path, [TUN, LOOP]), "restart": NEVER,
                     "isolation": {"devices": ["/dev/loop-control"]}},
        }}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    lines = result.stdout_lines()
    assert sorted(line for line in lines if line.startswith("g/app | ")) == [
        "g/app | loop EPERM", "g/app | tun ok"], result
    assert sorted(line for line in lines if line.startswith("g/more | ")) == [
        "g/more | loop ok", "g/more | tun ok"], result


def test_a_device_gone_before_the_start_fails_it_naming_the_task(corral, tmp_path):
    node = tmp_path / "node"
    make_node(node, *TUN[1:])
    # The node is there when the config is loaded; a prestart task removes
    # it before the main task starts.
    config = {"groups": {"g": {"tasks": {
        "remove": {"command": ["rm", str(node)], "lifecycle": {"hook": "prestart"}},
        "app": {"command": ["true"], "restart": NEVER,
                "isolation": dict(ISOLATED, devices=[str(node)])},
    }}}}
    result = corral.run(config)
    assert result.returncode == 126, result
    message = result.events.of_task("app", "start_failed")[0]["message"]
    assert message == f"device policy: {node}: No such file or directory", message
    assert f"corral: g/app: device policy: {node}: No such file or directory" in result.stderr


def test_without_the_privilege_to_load_bpf_the_start_fails_with_the_step(corral, tmp_path):
    # corral without CAP_SYS_ADMIN (21) and CAP_BPF (39): dropped from the
    # bounding set (PR_CAPBSET_DROP, 24), which root's exec then gives.
    drop = ("import ctypes, os, sys; prctl = ctypes.CDLL(None).prctl; "
            "[prctl(24, cap, 0, 0, 0) for cap in (21, 39)]; os.execv(sys.argv[1], sys.argv[1:])")
    wrapper = ["/usr/bin/python3", "-c", drop]
    config = {"groups": {"g": {"tasks": {"app": {
        "command": ["true"], "restart": NEVER, "isolation": {"namespaces": []}}}}}}
    running = corral.start(config, wrapper=wrapper)
    result = running.wait()
    assert result.returncode == 126, result
    message = result.events.of_task("app", "start_failed")[0]["message"]
    assert message == "device policy: load BPF program: Operation not permitted", message
    assert "corral: g/app: device policy: load BPF program: Operation not permitted" in \
        result.stderr, result


def test_the_policy_follows_the_node_across_restarts_and_nothing_leaks(corral, tmp_path):
    """Each run finds the configured node with other numbers (the run before
    swapped it), so each start replaces the program: one program stays on
    the cgroup, and corral's fds are those of the first run."""
    node = tmp_path / "node"
    make_node(node, *FUSE[1:])
    runs = 30
    count = tmp_path / "count"
    go = tmp_path / "go"
    # Run 1 waits for the test to look at corral; each run then swaps the
    # node (fuse <-> tun) for the next; the last one stays.
    script = (
        f"run=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $run > {count}; "
        f"echo \"run $run: $({' '.join(probe_command(tmp_path, [FUSE, TUN]))} | sort | tr '\\n' ' ')\"; "
        f"if [ $run = 1 ]; then while [ ! -e {go} ]; do sleep 0.01; done; fi; "
        f"if [ $(( run % 2 )) = 1 ]; then set -- 10 200; else set -- 10 229; fi; "
        f"rm {node} && mknod {node} c $1 $2 || exit 3; "
        f"if [ $run -lt {runs} ]; then exit 1; fi; exec sleep 1000")
    config = {"groups": {"g": {"tasks": {"app": {
        "command": sh(script),
        "restart": {"policy": "on-failure", "attempts": runs, "interval": "1h", "delay": "0s"},
        # Bound elsewhere in the task: a node bound over itself could not
        # be swapped from inside (rm of a mount point is EBUSY).
        "isolation": dict(ISOLATED, devices=[{"path": str(node),
                                              "target": str(tmp_path / "bound")}]),
    }}}}}
    running = corral.start(config)
    wait_for(lambda: count.exists(), what="the first run")

    def started(runs_seen):
        return len(running.result().events.of_task("app", "started")) == runs_seen

    # Both counts once corral has seen that run's exec through: before,
    # the start's own fds (its error pipe) may or may not be open yet.
    wait_for(lambda: started(1), what="the first run's start seen through")
    fds_first = corral_fds(running.pid)
    programs_first = attached_device_programs(task_cgroup(running))
    go.touch()
    wait_for(lambda: count.exists() and count.read_text().strip() == str(runs),
             timeout=60, what="the last run")
    wait_for(lambda: (running.directory / "corral.stdout").read_text().count("g/app | run ")
             == runs, what="every run's report")
    wait_for(lambda: started(runs), what="the last run's start seen through")
    fds_last = corral_fds(running.pid)
    programs_last = attached_device_programs(task_cgroup(running))
    devices_list = v1_devices_list(running)
    running.send(signal.SIGTERM)
    result = running.wait()

    reports = [line for line in result.stdout_lines() if line.startswith("g/app | run ")]
    for run in range(1, runs + 1):
        allowed = "fuse ok tun EPERM" if run % 2 else "fuse EPERM tun ok"
        assert f"g/app | run {run}: {allowed} " in reports, (run, reports)
    assert len(fds_last) == len(fds_first), (fds_first, fds_last)
    # One program at a time, a new one since the first run.
    assert len(programs_first) == 1 and len(programs_last) == 1, (programs_first, programs_last)
    assert programs_last != programs_first
    # The program alone decided, on a hybrid host too: the task has no v1
    # devices group of its own, which each start would have had to join.
    assert devices_list is None, devices_list


def test_one_program_per_isolated_task_none_without_isolation(corral, tmp_path):
    node = tmp_path / "node"
    make_node(node, *TUN[1:])
    config = {"groups": {"g": {"tasks": {
        "app": {"command": sh("exec sleep 1000")},
        "isolated": {"command": sh("exec sleep 1000"), "isolation": ISOLATED},
        "also": {"command": sh("exec sleep 1000"), "isolation": ISOLATED},
        "more": {"command": sh("exec sleep 1000"),
                 "isolation": dict(ISOLATED, devices=[str(node)])},
    }}}}
    running = corral.start(config)
    wait_for(lambda: all(running.events().of_task(task, "started")
                         for task in ("app", "isolated", "also", "more")), what="every start")
    programs = {task: attached_device_programs(task_cgroup(running, f"g/{task}"))
                for task in ("app", "isolated", "also", "more")}
    assert programs["app"] == [], programs
    assert all(len(programs[task]) == 1 for task in ("isolated", "also", "more")), programs
    # The default rules' program is loaded once, for every task that has
    # no other rule.
    assert programs["isolated"] == programs["also"] != programs["more"], programs
    assert all(v1_devices_list(running, f"g/{task}") is None
               for task in ("app", "isolated", "also", "more"))
    running.send(signal.SIGTERM)
    running.wait()


def test_a_fresh_cgroup_after_leftovers_were_killed_gets_the_policy_again(corral, tmp_path):
    # Each run leaves a process behind: corral kills it with cgroup.kill,
    # and the next run gets a new cgroup (see task_cgroup.killed).
    count = tmp_path / "count"
    script = (f"run=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )); echo $run > {count}; "
              f"echo \"run $run: $({' '.join(probe_command(tmp_path, [NULL, TUN]))} | sort | "
              f"tr '\\n' ' ')\"; sleep 1000 & exit $(( run < 3 ))")
    config = {"groups": {"g": {"tasks": {"app": {
        "command": sh(script),
        "restart": {"policy": "on-failure", "attempts": 3, "interval": "1h", "delay": "0s"},
        "isolation": ISOLATED,
    }}}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    reports = [line for line in result.stdout_lines() if line.startswith("g/app | run ")]
    assert reports == [f"g/app | run {run}: null ok tun EPERM " for run in (1, 2, 3)], result
    assert len(result.events.of_task("app", "leftovers_killed")) == 3, result


READONLY_CGROUPS = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                    "mount -o remount,bind,ro /sys/fs/cgroup/unified && exec \"$@\"", "sh"]


@pytest.mark.skipif(not Path("/sys/fs/cgroup/unified").is_dir(), reason="needs a hybrid host")
def test_without_cgroups_an_isolated_task_runs_without_a_policy_and_corral_says_so(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"app": {
        "command": probe_command(tmp_path, [NULL, TUN]), "restart": NEVER,
        "isolation": ISOLATED}}}}}
    result = corral.run(config, wrapper=READONLY_CGROUPS)
    assert result.returncode == 0, result
    assert sorted(line for line in result.stdout_lines() if line.startswith("g/app | ")) == [
        "g/app | null ok", "g/app | tun ok"], result
    said = [line for line in result.stderr.splitlines() if "device policy" in line]
    assert said == ["corral: g/app: warning: isolated without a device policy: it needs a "
                    "cgroup of the task's own (see above)"], result.stderr
