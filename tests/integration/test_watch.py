"""`watch:` (docs/config.md, "Watching files"): a change to a task's
watched paths restarts it, signals it or reloads corral's config, once the
changes have settled. Seen from outside: the tasks' pids in status, what a
task writes when it gets a signal, the event log (`watch_triggered`) and
corral's stderr; corral's fds in /proc.

A test that must show that something did NOT happen makes a last change
that does act, waits for it, and then counts: every earlier event has been
read by then (one inotify fd, read in order), so no sleep is needed."""

import os
import signal
from pathlib import Path

from conftest import Events, fd_targets, sh, wait_for
from helpers_watch import SLEEP, config, configmap, pid, start, stop, wait_restarted


def state(corral, task):
    """A task's state, None while it is not in the config."""
    for group in corral.status()["groups"]:
        for entry in group["tasks"]:
            if entry["task"] == task:
                return entry["state"]
    return None


def triggered(running, task):
    return Events.load(running.events_path).of_task(task, "watch_triggered")


def wait_triggered(running, task, count):
    return wait_for(lambda: len(triggered(running, task)) >= count and triggered(running, task),
                    what=f"{count} watch_triggered of {task}")


def test_a_configmap_swap_restarts_exactly_the_task_that_watches_it(corral, tmp_path):
    volume, other = tmp_path / "config", tmp_path / "other"
    configmap(volume, "2026_11_27_10_00_00.1", {"app.yaml": "v: 1\n", "unused.yaml": "u\n"})
    other.mkdir()
    running, _ = start(corral, {
        "app": {"command": SLEEP,
                "watch": [{"paths": [str(volume / "app.yaml")], "debounce": "100ms"}]},
        "other": {"command": SLEEP,
                  "watch": [{"paths": [str(other)], "debounce": "100ms"}]},
    })
    app, other_pid = pid(corral, "app"), pid(corral, "other")

    configmap(volume, "2026_11_27_10_05_00.2", {"app.yaml": "v: 2\n", "unused.yaml": "u\n"})
    wait_restarted(corral, "app", app)
    # The last change, to the other task's directory: once it acted,
    # every event of the swap has been read.
    (other / "file").write_text("x")
    wait_restarted(corral, "other", other_pid)
    stop(running)

    events = Events.load(running.events_path)
    [app_change] = events.of_task("app", "watch_triggered")
    assert app_change["message"] == f"watch: {volume}/app.yaml changed: restarting", app_change
    [other_change] = events.of_task("other", "watch_triggered")
    assert str(other / "file") in other_change["message"], other_change
    # app restarted once; other only for its own change, never for the swap.
    assert len(events.of_task("app", "started")) == 2, events.kinds("app")
    assert len(events.of_task("other", "started")) == 2, events.kinds("other")
    assert events.of_task("other", "started")[0]["pid"] == other_pid
    assert f"g/app: watch: {volume}/app.yaml changed: restarting" in running.stderr_text()


def test_the_signal_action_sends_the_signal_and_keeps_the_process(corral, tmp_path):
    marks, watched = tmp_path / "marks", tmp_path / "app.conf"
    watched.write_text("1")
    script = (f"trap 'echo hup >> {marks}; kill $child' HUP; echo ready >> {marks}; "
              "while :; do sleep 1000 & child=$!; wait $child; done")
    running, _ = start(corral, {
        "app": {"command": sh(script),
                "watch": [{"paths": str(watched), "action": {"signal": "SIGHUP"},
                           "debounce": "100ms"}]},
    })
    wait_for(lambda: marks.exists() and "ready" in marks.read_text(), what="the trap set")
    before = pid(corral, "app")

    watched.write_text("2")
    wait_for(lambda: "hup" in marks.read_text(), what="SIGHUP in the task")
    assert pid(corral, "app") == before
    [change] = triggered(running, "app")
    assert change["message"] == f"watch: {watched} changed: sending SIGHUP to pid {before}"
    stop(running)
    assert len(Events.load(running.events_path).of_task("app", "started")) == 1


def test_the_reload_action_reloads_corrals_config(corral, tmp_path):
    tasks = {"app": {"command": SLEEP,
                     "watch": [{"paths": str(tmp_path / "watch.yaml"), "action": "reload",
                                "debounce": "200ms"}]}}
    running, path = start(corral, tasks)
    before = pid(corral, "app")

    tasks["added"] = {"command": SLEEP}
    path.write_text(corral.config(config(tasks), name="next.yaml").read_text())
    wait_for(lambda: state(corral, "g/added") == "running", what="g/added running")
    assert pid(corral, "app") == before
    events = Events.load(running.events_path)
    assert any(e["event"] == "reload_finished" for e in events), events
    [change] = events.of_task("app", "watch_triggered")
    assert change["message"].endswith("changed: reloading corral's config"), change
    stop(running)


def test_the_debounce_makes_a_burst_of_writes_one_restart(corral, tmp_path):
    watched, last = tmp_path / "app.conf", tmp_path / "last.conf"
    watched.write_text("0")
    running, _ = start(corral, {
        "app": {"command": SLEEP,
                "watch": [{"paths": [str(watched)], "debounce": "2s"},
                          {"paths": [str(last)], "debounce": "100ms"}]},
    })
    before = pid(corral, "app")
    for i in range(20):
        watched.write_text(str(i))
    after = wait_restarted(corral, "app", before)
    last.write_text("done")
    wait_triggered(running, "app", 2)
    wait_restarted(corral, "app", after)
    stop(running)
    events = Events.load(running.events_path)
    changes = [e["message"] for e in events.of_task("app", "watch_triggered")]
    assert changes == [f"watch: {watched} changed: restarting",
                       f"watch: {last} changed: restarting"], changes
    assert len(events.of_task("app", "started")) == 3, events.kinds("app")


def test_a_path_that_does_not_exist_yet_is_picked_up_when_it_appears(corral, tmp_path):
    watched = tmp_path / "later" / "deeper" / "app.conf"
    running, _ = start(corral, {
        "app": {"command": SLEEP, "watch": [{"paths": str(watched), "debounce": "100ms"}]},
    })
    before = pid(corral, "app")
    # On the way, nothing that is the path itself: no change yet.
    (tmp_path / "later").mkdir()
    (tmp_path / "later" / "unrelated").write_text("x")
    (tmp_path / "later" / "deeper").mkdir()
    watched.write_text("1")
    wait_restarted(corral, "app", before)
    stop(running)
    [change] = Events.load(running.events_path).of_task("app", "watch_triggered")
    assert change["message"] == f"watch: {watched} changed: restarting", change


def test_a_glob_matches_names_in_its_directory(corral, tmp_path):
    directory = tmp_path / "conf.d"
    directory.mkdir()
    running, _ = start(corral, {
        "app": {"command": SLEEP,
                "watch": [{"paths": str(directory / "*.conf"), "debounce": "100ms"}]},
    })
    before = pid(corral, "app")
    (directory / "notes.txt").write_text("not a .conf")
    (directory / ".hidden.conf").write_text("* does not match a leading dot")
    (directory / "b.conf").write_text("x")
    wait_restarted(corral, "app", before)
    stop(running)
    [change] = Events.load(running.events_path).of_task("app", "watch_triggered")
    assert change["message"] == f"watch: {directory}/b.conf changed: restarting", change


def test_a_directory_is_watched_for_its_entries(corral, tmp_path):
    directory = tmp_path / "certs"
    directory.mkdir()
    running, _ = start(corral, {
        "app": {"command": SLEEP, "watch": [{"paths": str(directory), "debounce": "100ms"}]},
    })
    before = pid(corral, "app")
    (directory / "tls.crt").write_text("new")
    wait_restarted(corral, "app", before)
    stop(running)
    [change] = Events.load(running.events_path).of_task("app", "watch_triggered")
    assert change["message"] == f"watch: {directory}/tls.crt changed: restarting", change


def test_a_restart_by_watch_restarts_the_dependents_that_restart_with_it(corral, tmp_path):
    watched = tmp_path / "db.conf"
    watched.write_text("1")
    running, _ = start(corral, {
        "db": {"command": SLEEP, "watch": [{"paths": str(watched), "debounce": "100ms"}]},
        "web": {"command": SLEEP, "after": {"db": {"condition": "started", "restart": True}}},
        "bystander": {"command": SLEEP, "after": {"db": "started"}},
    })
    db, web, bystander = pid(corral, "db"), pid(corral, "web"), pid(corral, "bystander")
    watched.write_text("2")
    wait_restarted(corral, "db", db)
    wait_restarted(corral, "web", web)
    assert pid(corral, "bystander") == bystander
    stop(running)
    events = Events.load(running.events_path)
    # As `corral restart g/db`: the dependent stops first.
    assert events.task_index("web", "killed") < events.task_index("db", "killed"), events


def test_a_stopped_task_is_left_alone(corral, tmp_path):
    watched = tmp_path / "app.conf"
    watched.write_text("1")
    running, _ = start(corral, {
        "app": {"command": SLEEP, "watch": [{"paths": str(watched), "debounce": "100ms"}]},
        "keep": {"command": SLEEP},
    })
    assert corral.cli("stop", "g/app").returncode == 0
    wait_for(lambda: corral.task_status("g/app")["state"] == "dead", what="g/app dead")
    watched.write_text("2")
    [change] = wait_triggered(running, "app", 1)
    assert change["message"].endswith("changed: not running: nothing done "
                                      "(it reads them when it starts)"), change
    assert corral.task_status("g/app")["state"] == "dead"
    stop(running)
    assert len(Events.load(running.events_path).of_task("app", "started")) == 1


def files(pid):
    """corral's fds but its sockets (the control connections come and go)
    and the tasks' records (a chunk taken at a task's first count, the
    restarts here, kept for the run: docs/decisions.md)."""
    return sorted(target for target in fd_targets(pid) if not target.startswith("socket:")
                  and not target.startswith("/memfd:corral-task-records"))


def inotify_fds(pid):
    return sum(1 for target in fd_targets(pid) if target == "anon_inode:inotify")


def test_reload_adds_changes_and_removes_watches_and_gives_the_fd_back(corral, tmp_path):
    first, second = tmp_path / "first.conf", tmp_path / "second.conf"
    tasks = {"app": {"command": SLEEP}}
    running, path = start(corral, tasks)
    fds_before = files(running.pid)
    assert inotify_fds(running.pid) == 0

    tasks["app"]["watch"] = [{"paths": str(first), "debounce": "100ms"}]
    path.write_text(corral.config(config(tasks), name="next.yaml").read_text())
    assert corral.cli("reload").returncode == 0
    assert inotify_fds(running.pid) == 1
    before = pid(corral, "app")
    first.write_text("1")
    before = wait_restarted(corral, "app", before)

    # Changed in place: the task keeps running; the new path counts.
    tasks["app"]["watch"] = [{"paths": str(second), "debounce": "100ms"}]
    path.write_text(corral.config(config(tasks), name="next.yaml").read_text())
    result = corral.cli("reload", "--json")
    assert result.returncode == 0 and '"watch"' in result.stdout, result
    assert pid(corral, "app") == before
    first.write_text("2")
    second.write_text("1")
    before = wait_restarted(corral, "app", before)

    del tasks["app"]["watch"]
    path.write_text(corral.config(config(tasks), name="next.yaml").read_text())
    assert corral.cli("reload").returncode == 0
    assert inotify_fds(running.pid) == 0
    assert files(running.pid) == fds_before
    second.write_text("2")
    stop(running)
    events = Events.load(running.events_path)
    changes = [e["message"] for e in events.of_task("app", "watch_triggered")]
    assert changes == [f"watch: {first} changed: restarting",
                       f"watch: {second} changed: restarting"], changes


def test_a_task_removed_by_a_reload_takes_its_watches_away(corral, tmp_path):
    watched = tmp_path / "app.conf"
    tasks = {"app": {"command": SLEEP, "watch": [{"paths": str(watched)}]},
             "keep": {"command": SLEEP}}
    running, path = start(corral, tasks)
    assert inotify_fds(running.pid) == 1
    del tasks["app"]
    path.write_text(corral.config(config(tasks), name="next.yaml").read_text())
    assert corral.cli("reload").returncode == 0
    assert inotify_fds(running.pid) == 0
    stop(running)


def test_the_inotify_watch_limit_is_said_and_the_rest_still_works(corral, tmp_path):
    """In a user namespace of its own, corral's watches count against that
    namespace's user.max_inotify_watches, set to 1 here: the first
    directory is watched, the second is refused, with the limit to raise."""
    first, second = tmp_path / "a" / "app.conf", tmp_path / "b" / "app.conf"
    first.parent.mkdir()
    second.parent.mkdir()
    wrapper = ["unshare", "--user", "--map-root-user", "sh", "-c",
               'echo 1 > /proc/sys/user/max_inotify_watches && exec "$@"', "sh"]
    path = corral.config(config({
        "app": {"command": SLEEP,
                "watch": [{"paths": [str(first), str(second)], "debounce": "100ms"}]}}))
    running = corral.start(path, wrapper=wrapper)
    [failed] = wait_for(lambda: Events.load(running.events_path).of_task("app", "watch_failed"),
                        what="watch_failed")
    assert failed["message"] == (
        f"watch: cannot watch {second.parent}: the inotify watch limit is reached (sysctl "
        "fs.inotify.max_user_watches, and user.max_inotify_watches of a user namespace): "
        "raise it; its changes are not seen (until a reload)"), failed
    wait_for(lambda: Events.load(running.events_path).of_task("app", "started"), what="start")
    first.write_text("1")
    wait_triggered(running, "app", 1)
    stop(running)


def diagnostics(result, path):
    return [line[len(f"{path}:"):] for line in result.stderr.splitlines()
            if line.startswith(f"{path}:") and line[len(f"{path}:")].isdigit()]


def test_check_names_each_wrong_watch_entry_at_its_place(corral, tmp_path):
    text = """\
groups:
  g:
    tasks:
      app:
        command: [sleep, "1"]
        watch:
          - paths: ["/etc/*/app.conf", "/etc/app/[ab.conf", /]
          - {paths: /etc/app.conf, action: restrat}
          - {paths: /etc/app.conf, action: SIGHUP}
          - {paths: /etc/app.conf, action: {signal: SIGNOPE}}
          - {paths: /etc/app.conf, debounce: soon}
          - {path: /etc/app.conf}
          - {paths: []}
"""
    path = corral.config(text, name="bad.yaml")
    result = corral.check(path)
    assert result.returncode == 1, result
    assert diagnostics(result, path) == [
        '7:21: g/app: watch[0].paths[0]: "/etc/*/app.conf": a glob may only be in the last '
        'part of the path ("*" is a directory on the way): list the directories one by one',
        '7:40: g/app: watch[0].paths[1]: "/etc/app/[ab.conf": bad glob: a "[" is not closed '
        'by "]"',
        '7:61: g/app: watch[0].paths[2]: "/" is the root directory: name the files or '
        'directories to watch',
        '8:44: g/app: watch[1].action: unknown action "restrat"; did you mean "restart"?',
        '9:44: g/app: watch[2].action: write a signal as a map: {signal: SIGHUP}',
        '10:53: g/app: watch[3].action.signal: unknown signal "SIGNOPE"',
        '11:46: g/app: watch[4].debounce: invalid duration "soon": expected a number before '
        'each unit (e.g. 500ms, 10s, 1m30s)',
        '12:14: g/app: watch[5]: unknown key "path"; did you mean "paths"?',
        '13:21: g/app: watch[6].paths: must not be empty: name a file, directory or glob',
    ], result.stderr


def test_a_relative_path_starts_from_the_config_files_directory(corral, tmp_path):
    (tmp_path / "conf").mkdir()
    watched = tmp_path / "conf" / "app.conf"
    watched.write_text("1")
    running, _ = start(corral, {
        "app": {"command": SLEEP,
                "watch": [{"paths": "./conf/../conf/app.conf", "debounce": "100ms"}]},
    })
    before = pid(corral, "app")
    watched.write_text("2")
    wait_restarted(corral, "app", before)
    stop(running)
    [change] = Events.load(running.events_path).of_task("app", "watch_triggered")
    assert change["message"] == f"watch: {watched} changed: restarting", change


def test_the_example_is_valid(corral, repo_root):
    result = corral.check(repo_root / "examples" / "watch.yaml")
    assert result.returncode == 0, result.stderr


def test_a_queue_overflow_counts_as_a_change_of_every_watched_path(corral, tmp_path):
    """inotify's queue holds fs.inotify.max_queued_events; past it, events
    are lost and IN_Q_OVERFLOW comes instead. corral is stopped while a
    flood of events about names nobody watches fills the queue: none of
    them would act, but the lost ones might have, so every path counts as
    changed."""
    busy, quiet = tmp_path / "busy", tmp_path / "quiet"
    busy.mkdir()
    quiet.mkdir()
    running, _ = start(corral, {
        "app": {"command": SLEEP,
                "watch": [{"paths": str(busy / "app.conf"), "debounce": "100ms"}]},
        "other": {"command": SLEEP,
                  "watch": [{"paths": str(quiet / "other.conf"), "debounce": "100ms"}]},
    })
    app, other = pid(corral, "app"), pid(corral, "other")
    limit = int(Path("/proc/sys/fs/inotify/max_queued_events").read_text())
    first, second = busy / "flood-a", busy / "flood-b"
    first.write_text("")
    second.write_text("")
    running.send(signal.SIGSTOP)
    try:
        # Alternating names: inotify merges an event equal to the last one.
        for i in range(limit + 100):
            os.utime(first if i % 2 else second)
    finally:
        running.send(signal.SIGCONT)
    wait_restarted(corral, "app", app)
    wait_restarted(corral, "other", other)
    stop(running)
    assert "inotify's queue overflowed" in running.stderr_text()
    [change] = Events.load(running.events_path).of_task("other", "watch_triggered")
    assert change["message"] == f"watch: {quiet}/other.conf changed: restarting", change


def test_a_directory_removed_and_made_again_is_followed(corral, tmp_path):
    directory = tmp_path / "conf"
    directory.mkdir()
    watched = directory / "app.conf"
    watched.write_text("1")
    running, _ = start(corral, {
        "app": {"command": SLEEP, "watch": [{"paths": str(watched), "debounce": "100ms"}]},
    })
    before = pid(corral, "app")
    watched.unlink()
    directory.rmdir()
    before = wait_restarted(corral, "app", before)
    directory.mkdir()
    watched.write_text("2")
    wait_restarted(corral, "app", before)
    stop(running)
    changes = Events.load(running.events_path).of_task("app", "watch_triggered")
    assert [c["message"] for c in changes] == [f"watch: {watched} changed: restarting"] * 2
