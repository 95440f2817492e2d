"""`watch:` on a path that is a symlink (docs/config.md, "Watching files"):
the file it leads to is watched where it lies, in another directory too,
and the watches follow the links when they move (re-pointed, a chain, a
dangling link that later resolves, relative targets). Seen from outside:
the task's pid in status and the `watch_triggered` events.

As in test_watch.py, a test that must show that something did NOT happen
makes a last change that does act (to another task's file), waits for it,
and then counts: one inotify fd, read in order."""

import os

from conftest import Events, wait_for
from helpers_watch import SLEEP, configmap, pid, start, stop, wait_restarted


def repoint(link, target):
    """As `ln -sfn`: a new link renamed over the old one."""
    fresh = link.with_name(link.name + ".new")
    fresh.symlink_to(target)
    os.rename(fresh, link)


def save(path, text):
    """As an editor saves: a new file renamed over the old one."""
    fresh = path.with_name(path.name + ".swp")
    fresh.write_text(text)
    os.rename(fresh, path)


def tasks_with(link, last):
    return {
        "app": {"command": SLEEP, "watch": [{"paths": str(link), "debounce": "100ms"}]},
        "other": {"command": SLEEP, "watch": [{"paths": str(last), "debounce": "100ms"}]},
    }


def last_change(corral, last):
    """A change that acts on the other task: once it did, every earlier
    event has been read."""
    before = pid(corral, "other")
    last.write_text(str(before))
    wait_restarted(corral, "other", before)


def changes_and_starts(running, task="app"):
    events = Events.load(running.events_path)
    return ([e["message"] for e in events.of_task(task, "watch_triggered")],
            len(events.of_task(task, "started")))


def test_an_edit_of_a_symlinks_target_in_another_directory_restarts_the_task_once(
        corral, tmp_path):
    etc, real = tmp_path / "etc", tmp_path / "real"
    etc.mkdir()
    real.mkdir()
    target, link, last = real / "target.conf", etc / "linked.conf", tmp_path / "last.conf"
    target.write_text("1")
    link.symlink_to(target)
    running, _ = start(corral, tasks_with(link, last))

    before = pid(corral, "app")
    target.write_text("2")  # in place
    before = wait_restarted(corral, "app", before)
    save(target, "3")  # replaced by a rename, as an editor does
    wait_restarted(corral, "app", before)
    last_change(corral, last)
    stop(running)
    assert changes_and_starts(running) == ([f"watch: {link} changed: restarting"] * 2, 3)


def test_a_repointed_link_watches_its_new_target_and_no_longer_the_old(corral, tmp_path):
    etc, old_dir, new_dir = tmp_path / "etc", tmp_path / "v1", tmp_path / "v2"
    for directory in (etc, old_dir, new_dir):
        directory.mkdir()
    old, new = old_dir / "app.conf", new_dir / "app.conf"
    link, last = etc / "app.conf", tmp_path / "last.conf"
    old.write_text("old")
    new.write_text("new")
    link.symlink_to(old)
    running, _ = start(corral, tasks_with(link, last))

    before = pid(corral, "app")
    repoint(link, new)  # it leads to another file now: a change
    before = wait_restarted(corral, "app", before)
    new.write_text("new 2")
    before = wait_restarted(corral, "app", before)
    old.write_text("old 2")  # no longer what the path leads to
    save(old, "old 3")
    last_change(corral, last)
    stop(running)
    assert changes_and_starts(running) == ([f"watch: {link} changed: restarting"] * 2, 3)


def test_a_relative_chain_and_a_dangling_link_that_later_resolves(corral, tmp_path):
    """etc/app.conf -> ../links/current.conf -> ../v1/app.conf, v1
    missing at the start: its appearing is a change; an edit of the end
    of the chain, and re-pointing the link in its middle, too."""
    etc, links = tmp_path / "etc", tmp_path / "links"
    etc.mkdir()
    links.mkdir()
    link, middle, last = etc / "app.conf", links / "current.conf", tmp_path / "last.conf"
    link.symlink_to("../links/current.conf")
    middle.symlink_to("../v1/app.conf")
    running, _ = start(corral, tasks_with(link, last))

    before = pid(corral, "app")
    (tmp_path / "v1").mkdir()
    (tmp_path / "v1" / "app.conf").write_text("1")
    before = wait_restarted(corral, "app", before)
    (tmp_path / "v1" / "app.conf").write_text("2")
    before = wait_restarted(corral, "app", before)
    (tmp_path / "v2").mkdir()
    (tmp_path / "v2" / "app.conf").write_text("3")
    repoint(middle, "../v2/app.conf")
    before = wait_restarted(corral, "app", before)
    (tmp_path / "v1" / "app.conf").write_text("old")
    last_change(corral, last)
    stop(running)
    assert changes_and_starts(running) == ([f"watch: {link} changed: restarting"] * 3, 4)


def test_a_symlink_loop_is_said_and_watched_until_it_is_mended(corral, tmp_path):
    first, second = tmp_path / "a.conf", tmp_path / "b.conf"
    first.symlink_to("b.conf")
    second.symlink_to("a.conf")
    last = tmp_path / "last" / "x.conf"
    last.parent.mkdir()
    running, _ = start(corral, tasks_with(first, last))
    [failed] = wait_for(lambda: Events.load(running.events_path).of_task("app", "watch_failed"),
                        what="watch_failed")
    assert failed["message"] == (
        f"watch: {first} goes through more than 40 symlinks (a loop?) or past PATH_MAX: the "
        "links up to there are watched, what they lead to is not; a link re-pointed or removed "
        "on the way is seen"), failed

    before = pid(corral, "app")
    second.unlink()
    second.write_text("a file at last")
    wait_restarted(corral, "app", before)
    stop(running)
    assert changes_and_starts(running)[0] == [f"watch: {first} changed: restarting"]


def test_a_symlink_loop_on_the_way_to_the_file_is_watched_until_it_is_mended(corral, tmp_path):
    # The loop is a directory of the path, not its last part: the path is
    # watched from the directory above, as a missing one is, not given up.
    first, second = tmp_path / "a", tmp_path / "b"
    first.symlink_to("b")
    second.symlink_to("a")
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "app.conf").write_text("v1")
    last = tmp_path / "last" / "x.conf"
    last.parent.mkdir()
    running, _ = start(corral, tasks_with(first / "app.conf", last))
    [failed] = wait_for(lambda: Events.load(running.events_path).of_task("app", "watch_failed"),
                        what="watch_failed")
    assert "goes through more than 40 symlinks (a loop?)" in failed["message"], failed

    before = pid(corral, "app")
    repoint(second, "real")
    before = wait_restarted(corral, "app", before)
    save(tmp_path / "real" / "app.conf", "v2")
    wait_restarted(corral, "app", before)
    stop(running)
    assert changes_and_starts(running)[0] == [f"watch: {first / 'app.conf'} changed: restarting"] * 2


def test_each_configmap_swap_is_still_one_restart(corral, tmp_path):
    """The ConfigMap's file goes through two links (app.yaml ->
    ..data/app.yaml, ..data -> ..VERSION), so the version directory is
    watched too now: its removal at the next swap is part of that swap,
    never a restart of its own."""
    volume, last = tmp_path / "config", tmp_path / "last.conf"
    configmap(volume, "2026_11_27_10_00_00.1", {"app.yaml": "v: 1\n"})
    running, _ = start(corral, tasks_with(volume / "app.yaml", last))
    before = pid(corral, "app")
    configmap(volume, "2026_11_27_10_05_00.2", {"app.yaml": "v: 2\n"})
    before = wait_restarted(corral, "app", before)
    configmap(volume, "2026_11_27_10_10_00.3", {"app.yaml": "v: 3\n"})
    wait_restarted(corral, "app", before)
    last_change(corral, last)
    stop(running)
    assert changes_and_starts(running) == (
        [f"watch: {volume}/app.yaml changed: restarting"] * 2, 3)
