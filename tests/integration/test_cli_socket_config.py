"""The client commands find the socket as corral run chose it (docs/cli.md,
"Controlling a running corral"): --socket PATH, then $CORRAL_SOCKET, then
the socket: of -c CONFIG, then the default places; and every --help says
that order. Seen from outside: which corral answers, and what the CLI says
when it cannot."""

import json

from helpers_control import OTHER, FakeServer

SLEEP = ["sleep", "1000"]
NO_ENVIRONMENT = {"CORRAL_SOCKET": ""}  # empty: as if unset, for corral and the CLI


def with_socket(corral, socket, name="corral.yaml", **task):
    config = {"groups": {"g": {"tasks": {"app": {"command": SLEEP, **task}}}}}
    if socket:
        config["socket"] = str(socket)
    return corral.config(config, name=name)


def start_on(corral, socket):
    path = with_socket(corral, socket)
    running = corral.start(path, env=NO_ENVIRONMENT)
    corral.wait_control(running, path=socket)
    return running, path


def tasks_of(result):
    assert result.returncode == 0, result
    return [task["task"] for group in json.loads(result.stdout)["groups"]
            for task in group["tasks"]]


def test_dash_c_finds_the_socket_the_config_names(corral):
    socket = corral.dir / "from-config.sock"
    running, path = start_on(corral, socket)
    assert tasks_of(corral.cli("status", "--json", "-c", path, env=NO_ENVIRONMENT)) == ["g/app"]
    assert tasks_of(corral.cli("status", "--json", "--config", path,
                               env=NO_ENVIRONMENT)) == ["g/app"]
    assert corral.cli("logs", "-c", path, env=NO_ENVIRONMENT).returncode == 0
    assert corral.cli("shutdown", "-c", path, env=NO_ENVIRONMENT).returncode == 0
    assert running.wait().returncode == 0


def test_dash_c_reads_only_the_socket_key(corral):
    """A config with an error elsewhere (say, being edited) still names
    its socket: the CLI reads that key and nothing else."""
    socket = corral.dir / "from-config.sock"
    running, _ = start_on(corral, socket)
    broken = corral.config({"socket": str(socket),
                            "groups": {"g": {"tasks": {"app": {"comand": SLEEP}}}}},
                           name="broken.yaml")
    assert tasks_of(corral.cli("status", "--json", "-c", broken, env=NO_ENVIRONMENT)) == ["g/app"]
    directory = corral.dir / "conf.d"
    directory.mkdir()
    (directory / "10-socket.yaml").write_text(f"socket: {socket}\n")
    (directory / "20-groups.yaml").write_text("groups: {}\n")
    assert tasks_of(corral.cli("status", "--json", "-c", directory,
                               env=NO_ENVIRONMENT)) == ["g/app"]


def test_the_order_is_socket_option_environment_config_then_default_places(corral):
    socket = corral.dir / "from-config.sock"
    running, path = start_on(corral, socket)
    elsewhere = corral.dir / "nobody.sock"
    # $CORRAL_SOCKET before the config, as corral run takes it.
    result = corral.cli("status", "-c", path, env={"CORRAL_SOCKET": str(elsewhere)})
    assert result.returncode == 1 and f"cannot connect to {elsewhere}" in result.stderr, result
    # --socket before both.
    result = corral.cli("status", "-c", path, "--socket", elsewhere)
    assert result.returncode == 1 and f"cannot connect to {elsewhere}" in result.stderr, result
    # A config without socket: goes on to the default places.
    plain = with_socket(corral, None, name="plain.yaml")
    result = corral.cli("status", "-c", plain, env=NO_ENVIRONMENT)
    assert "cannot find the socket" not in result.stderr, result
    assert str(socket) not in result.stderr + result.stdout, result
    assert result.returncode == 0 or "control.sock" in result.stderr, result


def test_a_config_that_cannot_be_read_is_an_error_naming_it(corral):
    missing = corral.dir / "missing.yaml"
    result = corral.cli("status", "-c", missing, env=NO_ENVIRONMENT)
    assert result.returncode == 1, result
    assert f"cannot find the socket in {missing}: {missing}: No such file or directory" \
        in result.stderr, result.stderr


def test_a_socket_found_through_a_config_is_held_to_the_trust_rules(corral):
    """A socket: that points at another user's server is refused as a
    --socket of it would be, before a byte is sent."""
    planted = corral.dir / "planted.sock"
    fake = FakeServer(planted, OTHER, bind_as_root=True)
    path = with_socket(corral, planted)
    result = corral.cli("exec", "-c", path, "-e", "TOKEN=s3cret", "g/app", "--", "true",
                        env=NO_ENVIRONMENT)
    got = fake.report()
    assert result.returncode == 1, result
    assert f"refusing {planted}: the server runs as uid {OTHER}" in result.stderr, result
    assert got["bytes"] == 0 and got["fds"] == 0, got


def test_every_client_help_says_the_same_search(corral):
    for command in ["status", "restart", "stop", "start", "signal", "shutdown", "logs",
                    "events", "exec", "inspect", "reload", "top"]:
        result = corral.cli(command, "--help")
        assert result.returncode == 0, result
        text = " ".join(result.stdout.split())
        assert ("The socket: --socket PATH; else $CORRAL_SOCKET; else the socket: of -c CONFIG "
                "(a config without one: the default places); else the first of the default "
                "places that holds a socket: /run/corral/control.sock, "
                "$XDG_RUNTIME_DIR/corral/control.sock, /tmp/corral-UID/control.sock.") \
            in text, (command, result.stdout)
        assert "-c, --config CONFIG" in result.stdout, command
