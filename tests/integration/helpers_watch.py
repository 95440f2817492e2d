"""Helpers for tests of `watch:` (test_watch.py and the modules beside
it): corral with watching tasks, their pids, and a Kubernetes ConfigMap
volume."""

import os
import signal

from conftest import wait_for

SLEEP = ["sleep", "1000"]


def config(tasks, socket=None):
    return {"groups": {"g": {"tasks": tasks}}}


def start(corral, tasks, name="watch.yaml"):
    path = corral.config(config(tasks), name=name)
    running = corral.start(path)
    corral.wait_control(running)
    for task in tasks:
        wait_for(lambda task=task: corral.task_status(f"g/{task}")["state"] == "running",
                 what=f"g/{task} running")
    return running, path


def pid(corral, task):
    return corral.task_status(f"g/{task}").get("pid")


def wait_restarted(corral, task, old_pid):
    return wait_for(lambda: (pid(corral, task) or old_pid) != old_pid
                    and corral.task_status(f"g/{task}")["state"] == "running"
                    and pid(corral, task), what=f"g/{task} running with another pid")


def stop(running):
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    return result


def configmap(directory, version, files):
    """A Kubernetes ConfigMap volume as the kubelet's atomic writer makes
    it: the files in ..VERSION, `..data -> ..VERSION`, and each file a
    symlink through ..data. A later version is written beside, a new
    ..data renamed over the old one, and the old version removed."""
    directory.mkdir(exist_ok=True)
    old = os.readlink(directory / "..data") if (directory / "..data").is_symlink() else None
    version_dir = directory / f"..{version}"
    version_dir.mkdir()
    for name, text in files.items():
        (version_dir / name).write_text(text)
    (directory / "..data_tmp").symlink_to(version_dir.name)
    os.rename(directory / "..data_tmp", directory / "..data")
    for name in files:
        if not (directory / name).is_symlink():
            (directory / name).symlink_to(f"..data/{name}")
    if old:
        for entry in (directory / old).iterdir():
            entry.unlink()
        (directory / old).rmdir()
