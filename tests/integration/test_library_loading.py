"""Libraries loaded when first needed (isolation/library_loader.h): seen
from outside, in /proc/PID/maps of a running corral, and through the
errors when one cannot be loaded. libnl's own case is in test_network.py."""

import signal
import struct
from pathlib import Path

import pytest

from conftest import wait_for

SLEEP = ["sleep", "1000"]
ISOLATED = {"command": SLEEP, "isolation": {"namespaces": ["pid", "mount"]}}


def mapped(pid, soname):
    return soname in Path(f"/proc/{pid}/maps").read_text()


def is_static(binary):
    """Whether an x86-64 ELF has no program interpreter (PT_INTERP)."""
    data = Path(binary).read_bytes()
    offset, = struct.unpack_from("<Q", data, 0x20)
    size, count = struct.unpack_from("<HH", data, 0x36)
    return all(struct.unpack_from("<I", data, offset + i * size)[0] != 3 for i in range(count))


@pytest.fixture(autouse=True)
def dynamic_corral(corral):
    if is_static(corral.binary):
        pytest.skip("a static corral has its libraries linked in")


def running_corral(corral, config):
    """corral running `config`, once every task runs."""
    running = corral.start(config)
    corral.wait_control(running)
    tasks = [t for g in config["groups"].values() for t in g["tasks"]]
    wait_for(lambda: all(corral.task_status(f"g/{t}")["state"] == "running" for t in tasks),
             what="every task running")
    return running


def test_libseccomp_is_loaded_only_once_a_filter_is_built(corral):
    running = running_corral(corral, {"groups": {"g": {"tasks": {"plain": {"command": SLEEP}}}}})
    assert not mapped(running.pid, "libseccomp.so")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0

    running = running_corral(corral, {"groups": {"g": {"tasks": {"iso": ISOLATED}}}})
    assert mapped(running.pid, "libseccomp.so")
    # The task runs under the filter built with it (Seccomp: 2, filter mode).
    result = corral.cli("exec", "g/iso", "--", "grep", "^Seccomp:", "/proc/self/status")
    assert result.returncode == 0 and result.stdout.split() == ["Seccomp:", "2"], result
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_library_that_cannot_be_loaded_is_named_where_it_is_needed(corral, tmp_path):
    """A broken libseccomp.so.2 found first (LD_LIBRARY_PATH): `corral
    check` names the list it could not check, `corral run` the task whose
    filter it could not build; a corral that needs no filter runs."""
    broken = tmp_path / "lib"
    broken.mkdir()
    (broken / "libseccomp.so.2").write_bytes(b"")
    env = {"LD_LIBRARY_PATH": str(broken)}
    denying = {"groups": {"g": {"tasks": {"iso": {
        **ISOLATED, "isolation": {"namespaces": ["pid", "mount"],
                                  "seccomp": {"default_action": "allow",
                                              "deny": ["mount"]}}}}}}}
    path = corral.config(denying)
    result = corral.cli("check", path, env=env)
    assert result.returncode == 1, result
    assert (f"g/iso: isolation.seccomp.deny: cannot check syscall names: load "
            f"{broken}/libseccomp.so.2: file too short") in result.stderr, result
    assert f"{path}:" in result.stderr, result

    result = corral.start({"groups": {"g": {"tasks": {"iso": ISOLATED}}}}, env=env).wait()
    assert result.returncode == 1, result
    assert f"g/iso: seccomp: load {broken}/libseccomp.so.2: file too short" in result.stderr

    result = corral.start({"groups": {"g": {"tasks": {"plain": {
        "command": ["true"], "restart": {"policy": "never"}}}}}}, env=env).wait()
    assert result.returncode == 0, result


def test_a_limit_without_libcgroup_names_the_library_and_the_rest_runs(corral, tmp_path):
    """A memory limit needs libcgroup here (a v1 group on a hybrid host,
    or the value written on cgroup v2): a broken one is named in the
    task's error, and the task without limits runs on."""
    broken = tmp_path / "lib"
    broken.mkdir()
    (broken / "libcgroup.so.2").write_bytes(b"")
    config = {"groups": {"g": {"on_failure": "ignore", "tasks": {
        "plain": {"command": SLEEP},
        "limited": {"command": SLEEP, "resources": {"memory": "64M"},
                    "restart": {"policy": "never"}}}}}}
    running = corral.start(config, env={"LD_LIBRARY_PATH": str(broken)})
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/limited")["state"] == "dead", what="limited dead")
    assert corral.task_status("g/plain")["state"] == "running"
    running.send(signal.SIGTERM)
    result = running.wait()
    assert f"load {broken}/libcgroup.so.2: file too short" in result.stderr, result
    assert "g/limited: " in result.stderr, result
