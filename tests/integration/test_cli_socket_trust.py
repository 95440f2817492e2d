"""The CLI trusts a control socket only where the server would have put it
(docs/cli.md, "Which socket the CLI trusts"): a default place's directory
is owned by root or the caller and writable by no one else, the socket is
owned by root or the caller, and the server runs as root or as the caller.
Otherwise another local user who made /tmp/corral-UID first would receive
the operator's requests: exec's -e values and its stdin, stdout and stderr.

Each planted socket is served by a fake server in a forked child that
counts what it receives; the CLI must be refused and the fake must get
nothing, neither a byte nor an fd."""

import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, sanitizer_report, sh
from helpers_control import OTHER, FakeServer

EXEC = ["exec", "-e", "TOKEN=s3cret", "g/app", "--", "true"]


def cli_as(corral, uid, *args, env=None):
    def become():
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)

    result = subprocess.run([str(corral.binary), *map(str, args)], preexec_fn=become,
                            capture_output=True, text=True, cwd="/", stdin=subprocess.DEVNULL,
                            env=corral.env(env), timeout=RUN_TIMEOUT)
    assert not sanitizer_report(result.stderr), result.stderr
    return result


@pytest.fixture
def caller():
    """A uid no other test uses, whose /tmp/corral-UID is the default place
    its CLI looks in (after /run/corral, which must not be there)."""
    if os.path.exists("/run/corral/control.sock"):
        pytest.skip("a corral listens on /run/corral/control.sock: the CLI would go there")
    uid = random.randrange(64000, 65000)
    yield uid
    shutil.rmtree(f"/tmp/corral-{uid}", ignore_errors=True)


def default_places():
    """The CLI without --socket, CORRAL_SOCKET or XDG_RUNTIME_DIR."""
    return {"CORRAL_SOCKET": "", "XDG_RUNTIME_DIR": ""}


def assert_refused_and_nothing_sent(result, fake, message, connected):
    got = fake.report()
    assert (got["bytes"], got["fds"]) == (0, 0), (got, result)
    assert result.returncode == 1, result
    assert result.stdout == "", result
    assert result.stderr == f"corral: {message}\n", result.stderr
    # A place refused before connecting: the fake does not even hear of it.
    assert got["connections"] == (1 if connected else 0), got


@pytest.mark.parametrize("command", [["status"], EXEC], ids=["status", "exec"])
def test_a_tmp_directory_another_user_made_is_refused(corral, caller, command):
    directory = Path(f"/tmp/corral-{caller}")
    directory.mkdir(mode=0o755)
    os.chown(directory, OTHER, OTHER)
    path = directory / "control.sock"
    fake = FakeServer(path, OTHER)
    result = cli_as(corral, caller, *command, env=default_places())
    assert_refused_and_nothing_sent(
        result, fake,
        f"refusing {path}: its directory {directory} belongs to uid {OTHER} (mode 0755), "
        f"not to root or to you (uid {caller})", connected=False)


def test_a_tmp_directory_others_may_write_is_refused(corral, caller):
    # The caller's own directory and server, but anyone could have swapped
    # the socket: the directory's mode alone is wrong.
    directory = Path(f"/tmp/corral-{caller}")
    directory.mkdir()
    directory.chmod(0o777)
    os.chown(directory, caller, caller)
    path = directory / "control.sock"
    fake = FakeServer(path, caller)
    result = cli_as(corral, caller, *EXEC, env=default_places())
    assert_refused_and_nothing_sent(
        result, fake,
        f"refusing {path}: its directory {directory} may be written by others "
        f"(owner uid {caller}, mode 0777)", connected=False)


@pytest.fixture
def shared_dir():
    """A directory like a container's /tmp: root's, 1777."""
    directory = Path(tempfile.mkdtemp(prefix="corral-shared-"))
    directory.chmod(0o1777)
    yield directory
    shutil.rmtree(directory)


def test_a_named_socket_whose_server_runs_as_another_user_is_refused(corral, shared_dir):
    # The socket file is root's: only SO_PEERCRED tells who listens.
    path = shared_dir / "control.sock"
    fake = FakeServer(path, OTHER, bind_as_root=True)
    result = corral.cli(*EXEC[:3], "--socket", path, *EXEC[3:])
    assert_refused_and_nothing_sent(
        result, fake,
        f"refusing {path}: the server runs as uid {OTHER} (pid {fake.pid}), "
        f"not as root or as you (uid 0)", connected=True)


def test_a_named_socket_another_user_owns_is_refused_and_root_s_is_used(corral, shared_dir):
    path = shared_dir / "control.sock"
    fake = FakeServer(path, OTHER)
    result = corral.cli("status", env={"CORRAL_SOCKET": str(path)})
    assert_refused_and_nothing_sent(
        result, fake,
        f"refusing {path}: the socket belongs to uid {OTHER} (mode 0777), "
        f"not to root or to you (uid 0)", connected=False)
    # A path named on purpose may sit in a shared directory: root's corral
    # there is used (the directory rule is for the default places).
    path.unlink()
    config = {"groups": {"g": {"tasks": {"app": {"command": sh("exec sleep 1000")}}}}}
    running = corral.start(config, env={"CORRAL_SOCKET": str(path)})
    corral.wait_control(running, path=path)
    status = corral.cli("status", env={"CORRAL_SOCKET": str(path)})
    assert status.returncode == 0 and "app" in status.stdout, status
    running.send(15)
    assert running.wait().returncode == 0
