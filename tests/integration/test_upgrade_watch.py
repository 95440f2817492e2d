"""`corral upgrade` hands `watch:`'s inotify fd over (docs/decisions.md,
"Upgrade: the state handed over across an exec"): the new corral needs no
inotify instance of its own, which a task may have taken (corral and root
tasks count against the same fs.inotify.max_user_instances), and keeps
the old corral's watches. Seen from outside: a change after the upgrade
restarts the task, no `watch_failed` event, and the kernel's list of the
fd's watches in /proc/PID/fdinfo."""

import os
import signal

from conftest import Events, wait_for
from helpers_watch import SLEEP, pid, wait_restarted


def inotify_watches(corral_pid):
    """The inotify fds of corral and, for each, the wd and inode of every
    watch on it, as the kernel lists them."""
    found = []
    for fd in os.listdir(f"/proc/{corral_pid}/fd"):
        try:
            if os.readlink(f"/proc/{corral_pid}/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/{corral_pid}/fdinfo/{fd}") as info:
                found.append(sorted(" ".join(line.split()[1:3]) for line in info
                                    if line.startswith("inotify wd:")))
        except FileNotFoundError:
            continue
    return found


def test_watches_go_on_after_an_upgrade_with_no_inotify_instance_left(corral, tmp_path):
    """corral runs in a user namespace of its own, where the namespace's
    user.max_inotify_instances is what fs.inotify.max_user_instances is on
    the host: lowering it there touches no other process of the machine,
    and it goes away with corral. A task lowers it to 0 once corral
    watches: no instance can be had any more, as when a task took the one
    the old corral let go at the exec."""
    watched, lowered = tmp_path / "conf" / "app.conf", tmp_path / "lowered"
    watched.parent.mkdir()
    watched.write_text("1")
    path = corral.config({"groups": {"g": {"tasks": {
        "app": {"command": SLEEP, "watch": [{"paths": str(watched), "debounce": "100ms"}]},
        "limit": {"command": ["sh", "-c",
                              "echo 0 > /proc/sys/user/max_inotify_instances && "
                              f"touch {lowered} && exec sleep 1000"]},
    }}}})
    running = corral.start(path, wrapper=["unshare", "--user", "--map-root-user"])
    corral.wait_control(running)
    wait_for(lowered.exists, what="the instance limit lowered to 0")
    wait_for(lambda: corral.task_status("g/app")["state"] == "running", what="g/app running")
    watches = inotify_watches(running.pid)
    assert len(watches) == 1 and len(watches[0]) == 1, watches

    result = corral.cli("upgrade", timeout=60)
    assert result.returncode == 0, result
    # The same watch, on one fd: nothing added twice, nothing left behind.
    assert inotify_watches(running.pid) == watches
    before = pid(corral, "app")
    watched.write_text("2")
    wait_restarted(corral, "app", before)
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0
    events = Events.load(running.events_path)
    assert not events.of_task("app", "watch_failed"), events.of_task("app", "watch_failed")
    [change] = events.of_task("app", "watch_triggered")
    assert change["message"] == f"watch: {watched} changed: restarting", change
