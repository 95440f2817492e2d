"""`schedule:` (docs/config.md, "Scheduled tasks"): a one-shot run at the
times of a cron expression and/or every interval, driven by the loop's
timers; concurrency skip or replace, as Kubernetes CronJob's policy; the
group stays up between runs, a failed run fails nothing else, `status`
shows the next run and `corral start` runs one at once. (The cron
arithmetic, time zones included, is unit-tested on a fixed clock in
tests/unit/test_cron.c; here a cron schedule's next run is compared with
Python's, and a missed time is made by stopping corral for over a minute.)"""

import datetime
import re
import signal
import time

from conftest import sh, wait_for


def runs(path):
    return path.read_text().split() if path.exists() else []


def test_an_interval_runs_the_task_again_and_again_and_the_group_stays_up(corral, tmp_path):
    marks = tmp_path / "marks"
    config = {"groups": {"jobs": {"tasks": {
        "tick": {"schedule": {"every": "1s"}, "command": sh(f"echo run >> {marks}")},
        "fails": {"schedule": {"every": "1s"}, "restart": {"policy": "never"},
                  "command": sh("exit 3")},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: len(runs(marks)) >= 3, what="three runs")
    assert running.alive()  # a group of scheduled tasks waits for the next time
    tick = corral.task_status("jobs/tick")
    assert tick["next_run_in_ms"] is not None and tick["next_run_in_ms"] <= 1000, tick
    # A failed run is said, and the next one comes: nothing else fails.
    fails = [e for e in running.events().of_task("fails", "exited")]
    assert len(fails) >= 2 and all("code 3" in e["message"] for e in fails), fails
    # corral start: one run at once, besides the schedule.
    before = len(runs(marks))
    assert corral.cli("start", "jobs/tick").returncode == 0
    wait_for(lambda: len(runs(marks)) > before, what="a run on request")
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result  # the failed runs are not corral's failure
    assert all(e["message"].startswith("run")
               for e in result.events.of_task("tick", "scheduled"))


def test_skip_never_runs_two_at_once_and_replace_stops_the_previous(corral, tmp_path):
    log = tmp_path / "log"
    config = {"groups": {"jobs": {"tasks": {
        "slow": {"schedule": {"every": "1s"},
                 "command": sh(f"echo start >> {log}; sleep 2.5; echo end >> {log}")},
        "replaced": {"schedule": {"every": "1s", "concurrency": "replace"},
                     "command": sh("exec sleep 100")},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: runs(log).count("end") >= 2, timeout=20, what="two slow runs")
    words = runs(log)
    # Each run ended before the next began.
    assert words[:4] == ["start", "end", "start", "end"], words
    skipped = [e for e in running.events().of_task("slow", "scheduled")
               if "skipped: the previous one is still running" in e["message"]]
    assert skipped, running.events().of_task("slow")
    # replace: each time stops the run still going, for the next run.
    wait_for(lambda: len([e for e in running.events().of_task("replaced", "killed")
                          if "next run replaces it" in e["message"]]) >= 2,
             what="two replaced runs")
    assert corral.task_status("jobs/replaced")["restarts"] == 0
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_scheduled_run_is_a_run_not_a_restart_and_between_runs_the_task_waits(corral, tmp_path):
    # Issue 28, item 9: RESTARTS 34 after 3 minutes, `restart_requested
    # (forced)` at each run, and `dead` between runs.
    marks = tmp_path / "marks"
    config = {"groups": {"jobs": {"tasks": {
        "tick": {"schedule": {"every": "1s"}, "command": sh(f"echo run >> {marks}")},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: len(runs(marks)) >= 3, what="three runs")
    # Between its runs (each a few ms of its 1s), it waits for the next one.
    wait_for(lambda: corral.task_status("jobs/tick")["state"] == "waiting", what="waiting")
    tick = corral.task_status("jobs/tick")
    assert tick["restarts"] == 0, tick
    assert tick["runs"] >= 3, tick
    assert tick["waiting_for"].startswith("its schedule: next run in"), tick
    table = corral.cli("status").stdout
    assert re.search(r"tick\s+main\s+waiting", table), table
    assert re.search(r"tick: next run at \d\d:\d\d:\d\d \(in [^)]+\); \d+ runs so far", table), table
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
    assert not result.events.of_task("tick", "restart_requested")
    said = [e["message"] for e in result.events.of_task("tick", "scheduled")]
    assert said[:3] == [f"run {n} of its schedule: its time came" for n in (1, 2, 3)], said


def test_status_shows_a_cron_schedules_next_run_in_its_time_zone(corral):
    config = {"groups": {"jobs": {"tasks": {
        "nightly": {"schedule": {"cron": "30 3 * * *", "time_zone": "Asia/Tokyo"},
                    "command": ["true"]},
        "keeper": {"command": sh("exec sleep 100")},
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    status = corral.task_status("jobs/nightly")
    tokyo = datetime.timezone(datetime.timedelta(hours=9))  # no summer time there
    now = datetime.datetime.now(tokyo)
    expected = now.replace(hour=3, minute=30, second=0, microsecond=0)
    if expected <= now:
        expected += datetime.timedelta(days=1)
    assert abs(status["next_run"] - expected.timestamp()) < 1, (status["next_run"], expected)
    assert status["waiting_for"].startswith("its schedule: next run in "), status
    assert corral.cli("status", "jobs/nightly").returncode == 0
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_time_missed_while_corral_was_stopped_is_made_up_once_or_skipped(corral, tmp_path):
    """A timer that fires over a minute after its time (the machine slept,
    or corral was stopped, as here with SIGSTOP) finds it missed: `missed:
    run_once` (the default) runs once for all the times that passed, `skip`
    runs none; both go on at their next time."""
    marks = {name: tmp_path / name for name in ("once", "skipper")}
    config = {"groups": {"jobs": {"tasks": {
        name: {"schedule": {"every": "3s", "missed": rule},
               "command": sh(f"echo run >> {marks[name]}")}
        for name, rule in (("once", "run_once"), ("skipper", "skip"))
    }}}}
    running = corral.start(config)
    corral.wait_control(running)
    wait_for(lambda: all(runs(path) for path in marks.values()), what="a first run of each")
    running.send(signal.SIGSTOP)
    time.sleep(64)  # the next time of each is at most 3 s away: now over 60 s late
    before = {name: len(runs(path)) for name, path in marks.items()}
    running.send(signal.SIGCONT)

    def said(task, text):
        return [e for e in running.events().of_task(task, "scheduled") if text in e["message"]]

    # Seen once to time out under ASan in the whole suite (never alone):
    # the events then say what corral did instead.
    wait_for(lambda: said("once", "a missed time, made up for")
             and said("skipper", "(missed: skip)"),
             what=lambda: "the missed times seen; the tasks' last events: "
             f"{[e for e in running.events() if e.get('task') in marks][-12:]}")
    assert len(said("once", "a missed time, made up for")) == 1
    assert said("skipper", "its time passed 1m")  # how late it was, said
    # Both go back to their schedule: the next times are not missed ones.
    wait_for(lambda: len(runs(marks["skipper"])) > before["skipper"], timeout=10,
             what="the skipping task's next run")
    wait_for(lambda: len(runs(marks["once"])) >= before["once"] + 2, timeout=10,
             what="the made-up run and the next one")
    assert not said("skipper", "a missed time"), running.events().of_task("skipper")
    assert len(said("once", "a missed time, made up for")) == 1
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_schedule_mistakes_are_refused_with_their_place(corral):
    cases = [
        ({"schedule": {"cron": "0 25 * * *"}},
         "jobs/t: schedule.cron: field 2 (hour): 25 is out of 0-23"),
        ({"schedule": {"every": "1s", "concurrency": "allow"}},
         "schedule.concurrency: allow is not possible"),
        ({"schedule": {"every": "1s", "time_zone": "Mars/Olympus"}},
         "schedule.time_zone: unknown time zone \"Mars/Olympus\""),
        ({"schedule": {"concurrency": "skip"}}, "schedule: missing \"cron\""),
        ({"schedule": {"every": "1s"}, "restart": {"policy": "always"}},
         "restart.policy: always does not go with schedule"),
        ({"schedule": {"every": "1s"}, "lifecycle": {"hook": "prestart"}},
         "schedule: only for a task of the main stage"),
    ]
    for task, said in cases:
        result = corral.check({"groups": {"jobs": {"tasks": {"t": {
            "command": ["true"], **task}}}}})
        assert result.returncode == 1 and said in result.stderr, (task, result.stderr)
