"""Network mode `none` from spare namespaces (supervisor/tasks/network_spares.h):
corral makes a few network namespaces ahead and each start of a task of
mode none takes one. Seen from inside: every start still gets a namespace
of its own, fresh, holding only lo, up. Seen from outside: no namespace is
handed to two starts, none reaches a task as an fd, and restarts leave
corral holding the same fds and no mounts of namespaces."""

import os
import shutil
import subprocess

import pytest

from conftest import fd_targets, wait_for

NEVER = {"policy": "never"}


@pytest.fixture(autouse=True)
def need_ip():
    if not shutil.which("ip"):
        pytest.skip("ip is needed")


def corral_pid_of(running):
    """corral is started directly (no wrapper): the Popen's pid."""
    return running.pid


def namespace_fds(pid):
    """The network namespaces process `pid` holds as fds ("net:[4026...]")."""
    return sorted(target for target in fd_targets(pid) if target.startswith("net:["))


def nsfs_mounts(pid):
    """Namespaces bound onto paths (as `ip netns add` does), seen by `pid`."""
    with open(f"/proc/{pid}/mountinfo") as mountinfo:
        return sorted(line for line in mountinfo if " - nsfs " in line)


def ip_netns():
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout


def gated_run(tmp_path, name):
    """A shell script for task `name`: each run numbers itself (n), writes
    its namespace, its links, its fds' targets and its pid, says it is at
    run n and waits for the test's go-n; runs exit 1 until the test writes
    `last`."""
    d = tmp_path
    return (f"echo >> {d}/{name}.runs; n=$(wc -l < {d}/{name}.runs); "
            f"readlink /proc/self/ns/net > {d}/{name}.ns-$n; "
            f"ip -o link > {d}/{name}.links-$n; "
            f"for f in /proc/self/fd/*; do readlink $f; done > {d}/{name}.fds-$n; "
            f"echo $$ > {d}/{name}.pid-$n; touch {d}/{name}.at-$n; "
            f"while [ ! -e {d}/{name}.go-$n ]; do sleep 0.02; done; "
            f"[ -e {d}/{name}.last ] && exit 0; exit 1")


def none_task(script, **fields):
    return {"command": ["/bin/sh", "-c", script], "isolation": {"network": {"mode": "none"}},
            **fields}


def test_each_start_gets_a_fresh_namespace_of_its_own_with_lo_up(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {
        "a": none_task(gated_run(tmp_path, "a"),
                       restart={"policy": "on-failure", "attempts": 2, "interval": "1h",
                                "delay": "0", "max_delay": "0"}),
        "b": none_task(gated_run(tmp_path, "b"), restart=NEVER),
    }}}}
    (tmp_path / "b.last").touch()
    running = corral.start(config)
    corral_namespace = os.readlink(f"/proc/{corral_pid_of(running)}/ns/net")
    held = []  # each run's namespace, held open so that its inode is not reused
    try:
        wait_for(lambda: (tmp_path / "b.at-1").exists(), what="b's run")
        held.append(os.open(f"/proc/{(tmp_path / 'b.pid-1').read_text().strip()}/ns/net",
                            os.O_RDONLY))
        for n in (1, 2, 3):
            wait_for(lambda: (tmp_path / f"a.at-{n}").exists(), what=f"a's run {n}")
            pid = (tmp_path / f"a.pid-{n}").read_text().strip()
            held.append(os.open(f"/proc/{pid}/ns/net", os.O_RDONLY))
            # The namespace it runs in is not among corral's spares.
            inside = (tmp_path / f"a.ns-{n}").read_text().strip()
            assert inside not in namespace_fds(corral_pid_of(running))
            if n == 3:
                (tmp_path / "a.last").touch()
            (tmp_path / f"a.go-{n}").touch()
        (tmp_path / "b.go-1").touch()
        result = running.wait()
    finally:
        for fd in held:
            os.close(fd)
    assert result.returncode == 0, result
    runs_of_a = [(tmp_path / f"a.ns-{n}").read_text().strip() for n in (1, 2, 3)]
    namespace_of_b = (tmp_path / "b.ns-1").read_text().strip()
    every = runs_of_a + [namespace_of_b]
    assert all(ns.startswith("net:[") for ns in every), every
    assert len(set(every)) == 4, every  # a's three runs and b: all different
    assert corral_namespace not in every
    for name in ("a.links-1", "a.links-2", "a.links-3", "b.links-1"):
        links = (tmp_path / name).read_text().splitlines()
        assert len(links) == 1, (name, links)  # lo alone
        assert links[0].split(":")[1].strip() == "lo", (name, links)
        assert ",UP" in links[0], (name, links)
    # No task got an fd of a namespace (the spares are corral's alone).
    for name in ("a.fds-1", "a.fds-2", "a.fds-3", "b.fds-1"):
        assert "net:[" not in (tmp_path / name).read_text(), name


def test_fifty_restarts_leak_no_namespace_and_no_fd(corral, tmp_path):
    d = tmp_path
    # Runs 5 and 50 wait for the test to look; every run fails.
    script = (f"echo >> {d}/runs; n=$(wc -l < {d}/runs); "
              f"readlink /proc/self/ns/net > {d}/ns-$n; "
              f"if [ $n -eq 5 ] || [ $n -eq 50 ]; then touch {d}/at-$n; "
              f"while [ ! -e {d}/go-$n ]; do sleep 0.02; done; fi; exit 1")
    config = {"groups": {"g": {"tasks": {"app": none_task(
        script, restart={"policy": "on-failure", "attempts": 49, "interval": "1h",
                         "delay": "0", "max_delay": "0"})}}}}
    netns_before = ip_netns()
    running = corral.start(config)
    pid = corral_pid_of(running)
    own = os.readlink(f"/proc/{pid}/ns/net")
    seen = {}
    for n in (5, 50):
        wait_for(lambda: (d / f"at-{n}").exists(), timeout=60, what=f"run {n}")
        # corral's own namespace (to come back to) and two spares, once
        # the refill after this start has run.
        wait_for(lambda: len(namespace_fds(pid)) == 3, what="corral's spares refilled")
        held = namespace_fds(pid)
        inside = (d / f"ns-{n}").read_text().strip()
        assert own in held and inside not in held, (held, inside)
        seen[n] = (len(os.listdir(f"/proc/{pid}/fd")), nsfs_mounts(pid), len(held))
        (d / f"go-{n}").touch()
    result = running.wait(timeout=60)
    print("fds, nsfs mounts and namespaces held at runs 5 and 50:", seen)
    assert result.returncode != 0, result  # failed for good after 49 restarts
    assert len((d / "runs").read_text().splitlines()) == 50
    assert seen[5] == seen[50], seen
    assert seen[5][1] == [], seen  # corral binds no namespace onto a path
    assert ip_netns() == netns_before
    # Consecutive runs never share a namespace: the next one was made
    # while the previous still ran.
    runs = [(d / f"ns-{n}").read_text().strip() for n in range(1, 51)]
    assert all(a != b for a, b in zip(runs, runs[1:])), runs


def test_a_config_without_mode_none_holds_no_namespace(corral, tmp_path):
    d = tmp_path
    config = {"groups": {"g": {"tasks": {"app": {
        "command": ["/bin/sh", "-c", f"touch {d}/at; while [ ! -e {d}/go ]; do sleep 0.02; done"],
        "isolation": {"namespaces": ["pid", "mount", "uts", "ipc"]}, "restart": NEVER}}}}}
    running = corral.start(config)
    wait_for(lambda: (d / "at").exists(), what="the task")
    held = namespace_fds(corral_pid_of(running))
    (d / "go").touch()
    result = running.wait()
    assert result.returncode == 0, result
    assert held == [], held


def test_mode_none_in_a_user_namespace_still_clones_its_own(corral, tmp_path):
    """Such a namespace must belong to the task's user namespace: no spare."""
    config = {"groups": {"g": {"tasks": {"app": {
        "command": ["/bin/sh", "-c", "readlink /proc/self/ns/net; ip -o link"],
        "isolation": {"namespaces": ["user", "net"],
                      "user": {"uid_map": "0 100000 65536", "gid_map": "0 100000 65536"}},
        "restart": NEVER}}}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    lines = result.stdout.splitlines()
    namespaces = [line for line in lines if "net:[" in line]
    links = [line for line in lines if ": lo:" in line]
    assert len(namespaces) == 1 and os.readlink("/proc/self/ns/net") not in namespaces[0], lines
    assert len(links) == 1 and ",UP" in links[0], lines
    assert not any(": eth" in line for line in lines), lines
