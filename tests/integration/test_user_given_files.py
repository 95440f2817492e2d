"""Files corral reads from paths a user gives (the config, a conf.d
directory's entries, env_file): only a regular file within its cap is read
(docs/config.md, "Files corral reads"). A FIFO would block `corral check`,
`run` or a reload in open() for ever, and /dev/zero would be read until
memory runs out; each is refused with its place and the reason."""

import os
import resource
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, sanitizer_report, wait_for
from helpers_check import diagnostics

ENV_FILE_CONFIG = """\
groups:
  g:
    tasks:
      a:
        command: ["true"]
        env_file: {env_file}
"""
ENV_FILE_LINE, ENV_FILE_COLUMN = 6, 19  # where the env_file value starts


def limits_for(binary):
    """Caps corral's address space at 4 GiB so that a corral which reads
    /dev/zero without bound dies of ENOMEM instead of taking the machine's
    memory (the baseline did: 300 MB and growing). Not under ASan, which
    reserves terabytes of shadow memory up front."""
    if b"__asan_init" in Path(binary).read_bytes():
        return None

    def cap():
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
    return cap


def check(corral, *paths):
    """`corral check PATH...`, failing the test (not hanging it) when corral
    blocks."""
    try:
        result = subprocess.run(
            [str(corral.binary), "check", *map(str, paths)], stdin=subprocess.DEVNULL,
            capture_output=True, text=True, cwd=corral.dir, env=corral.env(),
            timeout=RUN_TIMEOUT, preexec_fn=limits_for(corral.binary))
    except subprocess.TimeoutExpired:
        pytest.fail(f"corral check {' '.join(map(str, paths))} hung")
    assert not sanitizer_report(result.stderr), result.stderr
    return result


def env_file_config(corral, env_file):
    return corral.config(ENV_FILE_CONFIG.format(env_file=env_file), name="env.yaml")


@pytest.mark.parametrize("kind, reason", [
    ("fifo", "is a FIFO, not a regular file"),
    ("dev-zero", "is a character device, not a regular file"),
])
def test_an_env_file_that_is_not_a_regular_file_is_refused_at_its_place(
        corral, tmp_path, kind, reason):
    env_file = tmp_path / "app.env"
    if kind == "fifo":
        os.mkfifo(env_file)
    else:
        env_file.symlink_to("/dev/zero")  # a symlink is followed; what it leads to is checked
    path = env_file_config(corral, "app.env")
    result = check(corral, path)
    assert result.returncode == 1, result
    assert diagnostics(result.stderr, path) == [
        (ENV_FILE_LINE, ENV_FILE_COLUMN, f"g/a: env_file: {env_file}: {reason}")], result.stderr


def test_an_env_file_larger_than_1_mib_is_refused(corral, tmp_path):
    env_file = tmp_path / "app.env"
    line = b"NAME=" + b"x" * 1018 + b"\n"  # 1 KiB a line
    env_file.write_bytes(line * 1024 + b"ONE=more\n")
    path = env_file_config(corral, "app.env")
    result = check(corral, path)
    assert result.returncode == 1, result
    assert diagnostics(result.stderr, path) == [
        (ENV_FILE_LINE, ENV_FILE_COLUMN, f"g/a: env_file: {env_file}: is larger than 1 MiB")
    ], result.stderr
    env_file.write_bytes(line * 1024)  # exactly 1 MiB: read
    assert check(corral, path).returncode == 0


def test_a_config_that_is_a_fifo_is_refused(corral, tmp_path):
    path = tmp_path / "corral.yaml"
    os.mkfifo(path)
    result = check(corral, path)
    assert result.returncode == 1, result
    assert f"{path}: cannot read: is a FIFO, not a regular file" in result.stderr, result.stderr


def test_a_client_commands_config_that_is_a_fifo_is_refused(corral, tmp_path):
    """`corral status -c CONFIG` reads the config for its socket: read as
    the config is, a FIFO is refused rather than waited on."""
    path = tmp_path / "corral.yaml"
    os.mkfifo(path)
    result = subprocess.run([str(corral.binary), "status", "-c", str(path)], capture_output=True,
                            text=True, timeout=RUN_TIMEOUT)
    assert result.returncode == 1, result
    assert f"{path}: cannot read: is a FIFO, not a regular file" in result.stderr, result.stderr


def test_a_conf_d_entry_that_is_a_fifo_is_refused(corral, tmp_path):
    conf_d = tmp_path / "conf.d"
    conf_d.mkdir()
    (conf_d / "10-app.yaml").write_text(
        'groups: {g: {tasks: {a: {command: ["true"]}}}}\n')
    os.mkfifo(conf_d / "20-pipe.yaml")
    result = check(corral, conf_d)
    assert result.returncode == 1, result
    assert (f"{conf_d}/20-pipe.yaml: cannot read: is a FIFO, not a regular file"
            in result.stderr), result.stderr


def test_a_reload_whose_env_file_is_a_fifo_is_refused_and_corral_answers_on(corral, tmp_path):
    (tmp_path / "app.env").write_text("GREETING=hello\n")
    config = ENV_FILE_CONFIG.replace('["true"]', '["sleep", "1000"]')
    path = corral.config(config.format(env_file="app.env"), name="env.yaml")
    running = corral.start(path)
    corral.wait_control(running)
    (tmp_path / "app.env").unlink()
    os.mkfifo(tmp_path / "app.env")
    result = corral.cli("reload")  # fails the test on a timeout: corral blocked
    assert result.returncode == 1, result
    assert f"{tmp_path}/app.env: is a FIFO, not a regular file" in result.stderr, result
    assert corral.cli("status").returncode == 0
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
