"""corral inspect (docs/cli.md): what a task's run really got, after group
defaults, prestart hooks and CDI, and where each variable, mount and device
came from; secrets masked unless asked, and only the owner may ask."""

import json
import os
import signal
import subprocess

from conftest import RUN_TIMEOUT, wait_for
from helpers_control import NOBODY
from helpers_isolation import FAKE_SPEC, cdi_dir, hook_script, in_root


def inspect(corral, task, *options, env=None):
    result = corral.cli("inspect", "--json", *options, task, env=env)
    assert result.returncode == 0, result
    return json.loads(result.stdout)


def start(corral, config, env=None):
    running = corral.start(config, env=env)
    corral.wait_control(running, path=(env or {}).get("CORRAL_SOCKET"))
    return running


def by(items, key, value):
    return [item for item in items if item[key] == value]


def test_hook_and_cdi_additions_say_where_they_came_from(corral, tmp_path, rootfs):
    specs = cdi_dir(tmp_path, FAKE_SPEC.format(share=tmp_path))
    hook = hook_script(tmp_path, "volumes", '''
response["env"] = {"DATA_DIR": "/data"}
response["mounts"] = [{"source": "/tmp", "target": "/data", "readonly": True}]
''')
    config = {"groups": {"g": {"tasks": {"app": {
        "command": ["/bin/sleep", "1000"], "restart": {"policy": "never"},
        "env": {"DB_PASSWORD": "hunter2", "MODE": "prod"},
        "isolation": in_root(rootfs, mounts=[{"type": "tmpfs", "target": "/scratch"}]),
        "cdi": {"devices": ["vendor.example/fake=zero0"], "spec_dirs": [str(specs)]},
        "hooks": [{"name": "volumes", "stage": "prestart", "exec": [hook]}]}}}}}
    running = start(corral, config)
    wait_for(lambda: inspect(corral, "g/app")["state"] == "running", what="running")
    shown = inspect(corral, "g/app")
    assert shown["prestart_ran"] is True
    env = shown["env"]
    assert by(env, "name", "MODE") == [{"name": "MODE", "value": "prod", "from": "config"}]
    assert by(env, "name", "DB_PASSWORD")[0]["value"] == "***"
    assert by(env, "name", "DATA_DIR")[0]["from"] == "hook volumes"
    assert by(env, "name", "FAKE_DEVICE")[0]["from"] == "cdi"
    assert by(env, "name", "CORRAL_TASK")[0]["from"] == "corral"
    mounts = [(m["target"], m["from"]) for m in shown["mounts"]]
    # In the order they are applied: the config's, then CDI's, then the hook's.
    assert mounts == [("/scratch", "config"), ("/opt/fake", "cdi"), ("/data", "hook volumes")]
    assert by(shown["mounts"], "target", "/data")[0]["readonly"] is True
    assert [(d["source"], d["target"], d["from"]) for d in shown["devices"]] == [
        ("/dev/zero", "/dev/fake0", "cdi")]
    assert shown["namespaces"] == ["pid", "mount"] and shown["rootfs"] == str(rootfs)
    assert "cap_chown" in shown["capabilities"] and "cap_sys_admin" not in shown["capabilities"]
    assert shown["seccomp"] == "default"
    revealed = inspect(corral, "g/app", "--show-secrets")
    assert by(revealed["env"], "name", "DB_PASSWORD")[0]["value"] == "hunter2"
    text = corral.cli("inspect", "g/app").stdout
    assert "bind   /tmp -> /data (ro)    from hook volumes" in text, text
    assert "DB_PASSWORD=***" in text and "hunter2" not in text
    running.send(signal.SIGTERM)
    running.wait()


def test_a_task_that_has_not_run_yet_and_errors(corral):
    config = {"groups": {"g": {"tasks": {
        "app": {"command": ["sleep", "1000"], "restart": {"policy": "never"}},
        "later": {"command": ["true"], "autostart": False}}}}}
    running = start(corral, config)
    shown = inspect(corral, "g/later")
    assert shown["prestart_ran"] is False and shown["state"] == "dead"
    assert "it has not run yet" in corral.cli("inspect", "g/later").stdout
    unknown = corral.cli("inspect", "g/nope")
    assert unknown.returncode == 1 and "g/nope" in unknown.stderr
    usage = corral.cli("inspect", "g")
    assert usage.returncode == 2
    running.send(signal.SIGTERM)
    running.wait()


def test_only_the_owner_may_see_secrets(corral, open_dir):
    path = open_dir / "control.sock"
    config = {"control": {"group": "nogroup"}, "groups": {"g": {"tasks": {
        "app": {"command": ["sleep", "1000"], "env": {"API_TOKEN": "t0k3n"}}}}}}
    running = start(corral, config, env={"CORRAL_SOCKET": str(path)})
    script = (f"import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect({str(path)!r});"
              "s.sendall(sys.argv[1].encode() + b'\\n'); print(s.makefile().readline())")

    def as_nobody(request):
        result = subprocess.run(["/usr/bin/python3", "-c", script, json.dumps(request)],
                                capture_output=True, text=True, timeout=RUN_TIMEOUT,
                                preexec_fn=lambda: (os.setgroups([]), os.setgid(NOBODY),
                                                    os.setuid(NOBODY)))
        return json.loads(result.stdout)

    masked = as_nobody({"version": 1, "command": "inspect", "target": "g/app"})
    assert by(masked["inspect"]["env"], "name", "API_TOKEN")[0]["value"] == "***"
    refused = as_nobody({"version": 1, "command": "inspect", "target": "g/app",
                         "show_secrets": True})
    assert refused["ok"] is False and "only root and corral's own user" in refused["error"]
    running.send(signal.SIGTERM)
    running.wait()
