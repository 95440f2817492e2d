"""corral as a non-root user without capabilities (a hardened image's USER):
where its control socket goes when /run is not its to write, how the CLI
finds it there, the isolation it can still give (a user namespace, seccomp,
no capabilities) and the isolation it says at start it cannot."""

import json
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import wait_for

NEVER = {"policy": "never"}


@pytest.fixture
def user_dir():
    """A uid no other test or process uses, and a directory it owns whose
    parents anyone may traverse (tmp_path's are root's, 0700)."""
    uid = random.randrange(61000, 64000)
    directory = Path(tempfile.mkdtemp(prefix="corral-non-root-"))
    directory.chmod(0o755)
    os.chown(directory, uid, uid)
    yield uid, directory
    shutil.rmtree(directory)
    shutil.rmtree(f"/tmp/corral-{uid}", ignore_errors=True)


def as_user(uid):
    """A wrapper that runs the command as uid:uid, no groups, no capabilities."""
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all"]


def environment(extra=None):
    """No CORRAL_SOCKET: the default places are what is tested."""
    return {"CORRAL_SOCKET": "", "XDG_RUNTIME_DIR": "", **(extra or {})}


def start(corral, uid, directory, config, extra_env=None):
    path = directory / "corral.yaml"
    path.write_text(json.dumps(config))
    path.chmod(0o644)
    return corral.start(path, events=False, wrapper=as_user(uid),
                        env=environment(extra_env))


def cli(corral, uid, *arguments, extra_env=None):
    return subprocess.run(
        as_user(uid) + [str(corral.binary), *arguments], capture_output=True, text=True,
        cwd="/", env=corral.env(environment(extra_env)), timeout=30)


def sleeper(**task):
    return {"command": ["sh", "-c", "echo up; exec sleep 1000"], "restart": NEVER, **task}


def log_lines(running, start):
    return [line for line in running.stderr_text().splitlines()
            if line.startswith(f"corral: {start}")]


def stop(running):
    running.send(15)
    assert running.wait().returncode == 0, running.result()


def test_socket_goes_to_xdg_runtime_dir_and_the_cli_finds_it_there(corral, user_dir):
    uid, directory = user_dir
    runtime = directory / "runtime"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, uid, uid)
    extra = {"XDG_RUNTIME_DIR": str(runtime)}
    running = start(corral, uid, directory, {"groups": {"app": {"tasks": {
        "web": sleeper()}}}}, extra)
    socket_path = runtime / "corral" / "control.sock"
    wait_for(socket_path.exists, what="the socket in XDG_RUNTIME_DIR")
    said = log_lines(running, "control socket")
    assert len(said) == 1 and said[0].startswith(
        f"corral: control socket: listening on {socket_path} (the CLI looks there too); "), said
    assert "/run/corral" in said[0], said
    # The socket opens before the task's start is seen through: wait for it.
    def tasks():
        status = cli(corral, uid, "status", "--json", extra_env=extra)
        assert status.returncode == 0, status
        listed = json.loads(status.stdout)["groups"][0]["tasks"]
        return [(t["task"], t["state"]) for t in listed] == [("app/web", "running")] and listed
    wait_for(tasks, what="app/web running, as the CLI sees it")
    assert not os.path.exists(f"/tmp/corral-{uid}"), "took /tmp although XDG_RUNTIME_DIR was there"
    stop(running)
    assert not socket_path.exists()


def test_without_xdg_runtime_dir_the_socket_goes_to_tmp_corral_uid(corral, user_dir):
    uid, directory = user_dir
    running = start(corral, uid, directory, {"groups": {"app": {"tasks": {"web": sleeper()}}}})
    socket_path = Path(f"/tmp/corral-{uid}/control.sock")
    wait_for(socket_path.exists, what="the socket in /tmp")
    owned = os.lstat(f"/tmp/corral-{uid}")
    assert (owned.st_uid, owned.st_mode & 0o777) == (uid, 0o700)
    def status():
        told = cli(corral, uid, "status", "app/web")
        assert told.returncode == 0, told
        return "running" in told.stdout
    wait_for(status, what="app/web running, as the CLI sees it")
    stop(running)


def test_a_tmp_directory_someone_else_made_is_not_used(corral, user_dir):
    # Another user made /tmp/corral-UID first: a CLI connecting there could
    # be talking to them. corral says so and runs without a socket.
    uid, directory = user_dir
    os.mkdir(f"/tmp/corral-{uid}", 0o755)
    running = start(corral, uid, directory, {"groups": {"app": {"tasks": {"web": sleeper()}}}})
    wait_for(lambda: log_lines(running, "control socket off"), what="the socket said off")
    said = log_lines(running, "control socket off")
    assert len(said) == 1, said
    assert (f"/tmp/corral-{uid} is not corral's own directory (owner uid 0, mode 0755): "
            "not used") in said[0], said
    assert not os.path.exists(f"/tmp/corral-{uid}/control.sock")
    stop(running)


def test_rootless_isolation_a_user_namespace_seccomp_and_no_capabilities(corral, user_dir):
    uid, directory = user_dir
    own_id = f"0 {uid} 1"
    running = start(corral, uid, directory, {"groups": {"app": {"tasks": {
        "boxed": {"command": ["sh", "-c", "id -u; cat /proc/self/uid_map; echo pid $$; "
                              "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; "
                              "exec sleep 1000"],
                  "restart": NEVER,
                  "isolation": {"namespaces": ["user", "pid", "mount"],
                                "user": {"uid_map": own_id, "gid_map": own_id}}},
        "confined": {"command": ["sh", "-c", "grep -E '^(CapEff|NoNewPrivs|Seccomp):' "
                                 "/proc/self/status; exec sleep 1000"],
                     "restart": NEVER, "isolation": {}}}}}})
    stdout = corral.dir / "corral.stdout"
    wait_for(lambda: stdout.read_text().count("Seccomp") == 2, what="both tasks to print")
    lines = stdout.read_text().splitlines()
    boxed = [line.removeprefix("app/boxed | ") for line in lines if line.startswith("app/boxed")]
    assert boxed[0] == "0", boxed                      # root of its namespace
    assert boxed[1].split() == ["0", str(uid), "1"], boxed
    assert boxed[2] == "pid 2", boxed                  # behind corral's reaper
    # Capabilities in its own namespace only (Docker's default set there).
    assert boxed[3].startswith("CapEff:\t") and boxed[3] != "CapEff:\t0000000000000000", boxed
    assert boxed[4:] == ["NoNewPrivs:\t1", "Seccomp:\t2"], boxed
    confined = [line.removeprefix("app/confined | ") for line in lines
                if line.startswith("app/confined")]
    assert confined == ["CapEff:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"], confined
    stop(running)


def test_a_namespace_corral_cannot_make_is_refused_at_start_naming_the_task(corral, user_dir):
    uid, directory = user_dir
    running = start(corral, uid, directory, {"groups": {"app": {"tasks": {
        "plain": sleeper(),
        "boxed": sleeper(isolation={"namespaces": ["pid", "uts"]})}}}})
    result = running.wait()
    assert result.returncode == 1, result
    assert (f"corral: app/boxed: isolation: namespaces pid, uts need cap_sys_admin, which "
            f"corral (uid {uid}) does not have: run corral with it, or add user to namespaces "
            "(with isolation.user maps)") in result.stderr, result
    assert "up" not in (corral.dir / "corral.stdout").read_text()


def test_exec_into_a_user_and_pid_namespace_of_a_rootless_corral(corral, user_dir):
    """corral without capabilities may not enter a task's pid namespace
    itself: the process it starts there enters it and clones the command
    once more, which still ends up in the task's namespaces and cgroup,
    its exit code and failures coming back as with root."""
    uid, directory = user_dir
    own_id = f"0 {uid} 1"
    running = start(corral, uid, directory, {"groups": {"app": {"tasks": {
        "boxed": {"command": ["sh", "-c", "echo up; exec sleep 1000"], "restart": NEVER,
                  "isolation": {"namespaces": ["user", "pid", "mount"],
                                "user": {"uid_map": own_id, "gid_map": own_id}}}}}}})
    stdout = corral.dir / "corral.stdout"
    wait_for(lambda: "app/boxed | up" in stdout.read_text(), what="the task to start")
    task_pid = json.loads(cli(corral, uid, "status", "--json").stdout)["groups"][0]["tasks"][0]["pid"]
    inside = cli(corral, uid, "exec", "app/boxed", "--", "sh", "-c",
                 "id -u; readlink /proc/self/ns/pid /proc/self/ns/user; exit 7")
    assert inside.returncode == 7, inside
    lines = inside.stdout.splitlines()
    assert lines[0] == "0", inside
    assert lines[1:] == [os.readlink(f"/proc/{task_pid}/ns/pid"),
                         os.readlink(f"/proc/{task_pid}/ns/user")], inside
    missing = cli(corral, uid, "exec", "app/boxed", "--", "/nonexistent/program")
    assert missing.returncode == 127, missing
    assert "exec /nonexistent/program: No such file or directory" in missing.stderr, missing
    # The first process of each exec exited at once; the loop reaped it.
    wait_for(lambda: not zombie_children(running.pid), what="no zombie left")
    stop(running)


def zombie_children(pid):
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [child for child in children
            if Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"]
