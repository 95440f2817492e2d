"""corral as a host service under a real systemd (252, Debian 12's), with
the unit docs/systemd.md gives (examples/systemd/corral.service) as
shipped. See conftest.py for the machine.

- the unit is the doc's, and systemd-analyze verify takes it;
- `systemctl start` returns only once corral says READY=1, which waits
  for the tasks' readiness (Type=notify); STATUS= shows meanwhile;
- `systemctl reload` (ExecReload=corral reload) applies a config and
  fails, naming the error, on a refused one, the old config running on;
- `systemctl stop` (KillMode=mixed) is corral's graceful shutdown: the
  tasks' TERM handlers and the poststop task run, nothing is SIGKILLed;
- the watchdog: pinged from corral's loop; a loop that stops is killed
  and restarted by systemd;
- `journalctl -u corral` has the tasks' lines;
- a task failing for good gives corral's exit code to the unit, which
  fails (after Restart=on-failure's restarts);
- kill -9 of corral's main process: systemd restarts the unit, the tasks
  run under the new corral (what the restore of issue 37 must keep: see
  test_systemd_restore.py for what it must add).
"""

import re

from conftest import ROOT, UNIT, wait_for

DOC = ROOT / "docs" / "systemd.md"


def directives(text):
    """KEY=VALUE lines of a unit text, comments and sections left out."""
    return [line.strip() for line in text.splitlines()
            if "=" in line and not line.lstrip().startswith(("#", ";", "["))]


def start_counter(systemd):
    systemd.use_config("counter")
    systemd.systemctl("start", "corral")
    wait_for(lambda: len(systemd.output("app/counter")) >= 3,
             what=lambda: f"counter's lines\n{systemd.journal()}")


# ---- the unit --------------------------------------------------------------


def test_the_unit_is_the_one_docs_systemd_md_gives(systemd):
    block = re.search(r"```ini\n(.*?)```", DOC.read_text(), re.S).group(1)
    shipped = UNIT.read_text()
    service = shipped[shipped.index("[Service]"):shipped.index("[Install]")]
    assert directives(block) == directives(service)
    verified = systemd.run("systemd-analyze", "verify", "/etc/systemd/system/corral.service",
                           check=False)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # systemd took them as written (those whose value it shows as is).
    written = dict(line.split("=", 1) for line in directives(block))
    for key in ("Type", "NotifyAccess", "Restart", "KillMode", "Delegate"):
        if key in written:
            assert systemd.prop(key) == written[key], key


# ---- start: Type=notify ------------------------------------------------------


def test_systemctl_start_returns_once_corral_says_ready(systemd):
    systemd.use_config("gated")
    start = systemd.popen("systemctl", "start", "corral")
    try:
        wait_for(lambda: systemd.status_if_up() and
                 (systemd.task("app/web") or {}).get("state") == "running",
                 what="web to run under corral")
        # web runs but is not ready: no READY=1 yet, so the start waits.
        assert systemd.output("app/web") == ["web up"]
        assert systemd.show("corral", "ActiveState", "SubState") == {
            "ActiveState": "activating", "SubState": "start"}
        assert start.poll() is None, start.stdout.read()
        wait_for(lambda: "starting (app/web)" in systemd.prop("StatusText"),
                 what=lambda: f"STATUS= naming web: {systemd.prop('StatusText')!r}")
        (systemd.etc / "gate").touch()
        assert start.wait(timeout=60) == 0, start.stdout.read()
    finally:
        if start.poll() is None:
            start.kill()
            start.wait()
    assert systemd.prop("ActiveState") == "active"
    assert systemd.prop("StatusText") == "1 task: 1 ready"
    assert "told the parent READY=1 (1 task: 1 ready)" in systemd.corral_log()
    assert systemd.task("app/web")["ready"] is True


def test_the_tasks_lines_are_in_the_units_journal(systemd):
    start_counter(systemd)
    lines = systemd.output("app/counter")
    assert lines[:3] == ["line 1", "line 2", "line 3"], lines
    assert systemd.output("app/quiet") == ["quiet up"]
    # Every line is corral's (its stdout), under the unit.
    verbose = systemd.journal(output="short")
    assert any(re.search(r" corral\[\d+\]: app/counter \| line 1$", line)
               for line in verbose), verbose


# ---- reload: ExecReload=corral reload ---------------------------------------


def test_systemctl_reload_applies_the_config(systemd):
    start_counter(systemd)
    before = {t: systemd.task(t)["pid"] for t in ("app/counter", "app/quiet")}
    systemd.use_config("reloaded")
    systemd.systemctl("reload", "corral")
    wait_for(lambda: systemd.output("app/added") == ["added by the reload"],
             what=lambda: f"the added task's line\n{systemd.journal()[-30:]}")
    assert systemd.task("app/added")["state"] == "running"
    assert {t: systemd.task(t)["pid"] for t in before} == before  # unchanged, untouched
    assert systemd.prop("ActiveState") == "active"


def test_systemctl_reload_of_a_refused_config_fails_and_says_why(systemd):
    start_counter(systemd)
    pid = systemd.task("app/counter")["pid"]
    systemd.use_config(text="groups:\n  app:\n    tasks:\n      counter: "
                       "{command: [/bin/true], restart: {policy: sometimes}}\n")
    reload = systemd.systemctl("reload", "corral", check=False)
    assert reload.returncode != 0
    # ExecReload's stderr is in the unit's journal: the error names the
    # file, line and column.
    systemd.wait_for_journal('/etc/corral/corral.yaml:4:57: app/counter: restart.policy: '
                             'unknown restart policy "sometimes"')
    systemd.wait_for_journal("Reload failed for corral.service")
    status = wait_for(lambda: (s := systemd.prop("StatusText")).startswith("reload of") and s,
                      what=lambda: f"STATUS= of the refusal: {systemd.prop('StatusText')!r}")
    assert status.startswith("reload of /etc/corral/corral.yaml refused: 1 error in the config "
                             "(/etc/corral/corral.yaml:4:57: "), status
    assert systemd.prop("ActiveState") == "active"
    assert systemd.task("app/counter")["pid"] == pid  # the old config runs on


# ---- stop: KillMode=mixed ----------------------------------------------------


def test_systemctl_stop_is_corrals_graceful_shutdown(systemd):
    start_counter(systemd)
    systemd.systemctl("stop", "corral")
    assert systemd.output("app/counter")[-1] == "counter stopping"
    assert systemd.output("app/quiet") == ["quiet up", "quiet stopping"]
    assert systemd.output("app/report") == ["poststop ran"]
    assert systemd.show("corral", "ActiveState", "Result", "ExecMainStatus") == {
        "ActiveState": "inactive", "Result": "success", "ExecMainStatus": "0"}
    journal = systemd.journal()
    assert "exiting with code 0" in systemd.corral_log()
    assert not [line for line in journal if "SIGKILL" in line or "Killing process" in line]
    assert systemd.service_processes() == []


# ---- the watchdog: WatchdogSec= ----------------------------------------------


def test_the_watchdog_is_pinged_and_a_stuck_loop_is_restarted(systemd):
    # The doc's 30s, shortened so that the test does not wait minutes; and
    # no core file of the SIGABRT systemd sends.
    systemd.drop_in("[Service]\nWatchdogSec=2s\nLimitCORE=0\n")
    start_counter(systemd)
    # The loop pings through its keeper, the unit's MainPID (--keeper).
    assert any(line.startswith("watchdog: WATCHDOG=1 to @corral-keeper-") and
               line.endswith(" every 1000ms") for line in systemd.corral_log()), \
        systemd.corral_log()
    first = systemd.prop("WatchdogTimestampMonotonic")
    wait_for(lambda: systemd.prop("WatchdogTimestampMonotonic") != first,
             what="a ping after the first")
    main = systemd.prop("MainPID")
    counter = systemd.task("app/counter")["pid"]
    # The loop stops: no more pings.
    systemd.systemctl("kill", "--signal=STOP", "--kill-whom=main", "corral")
    systemd.wait_for_journal("corral.service: Watchdog timeout (limit 2s)!")
    # systemd sends SIGABRT (WatchdogSignal=), then SIGCONT.
    systemd.wait_for_journal("corral.service: Failed with result 'watchdog'.")
    wait_for(lambda: systemd.show("corral", "ActiveState", "NRestarts") ==
             {"ActiveState": "active", "NRestarts": "1"},
             what=lambda: f"the restart: {systemd.show('corral', 'ActiveState', 'NRestarts')}")
    assert systemd.prop("MainPID") != main
    # KillMode=mixed: the tasks went with corral, the new one started them.
    assert systemd.task("app/counter")["pid"] != counter
    assert systemd.task("app/counter")["state"] == "running"


# ---- exit status --------------------------------------------------------------


def test_a_task_failing_for_good_fails_the_unit_with_its_exit_code(systemd):
    systemd.use_config("failing")
    # Not `systemctl start`: corral may exit before or after READY=1.
    systemd.systemctl("start", "--no-block", "corral")
    # Restart=on-failure starts corral again (each time, the task fails
    # again) until StartLimitBurst= (5 starts in 10 s by default): then
    # the unit stays failed.
    systemd.wait_for_journal("corral.service: Start request repeated too quickly.")
    wait_for(lambda: systemd.prop("ActiveState") == "failed",
             what=lambda: f"the unit to fail\n{systemd.journal()[-30:]}")
    shown = systemd.show("corral", "Result", "ExecMainCode", "ExecMainStatus", "NRestarts")
    assert shown["ExecMainCode"] == "1", shown  # CLD_EXITED
    assert shown["ExecMainStatus"] == "7", shown
    assert shown["Result"] == "exit-code", shown
    journal = systemd.journal()
    runs = [line for line in journal if line.startswith(
        "corral.service: Main process exited, code=exited, status=7/")]
    assert len(runs) == int(shown["NRestarts"]) >= 5, journal
    assert systemd.corral_log().count("exiting with code 7") == len(runs)
    assert systemd.output("job/work") == ["working"] * len(runs)
    assert systemd.output("job/report") == ["poststop ran"] * len(runs)


# ---- kill -9 of corral --------------------------------------------------------


def test_after_kill_9_of_corral_the_unit_comes_back_with_its_tasks(systemd):
    start_counter(systemd)
    main = systemd.prop("MainPID")
    systemd.systemctl("kill", "--signal=KILL", "--kill-whom=main", "corral")
    wait_for(lambda: systemd.show("corral", "ActiveState", "NRestarts") ==
             {"ActiveState": "active", "NRestarts": "1"},
             what=lambda: f"the restart: {systemd.show('corral', 'ActiveState', 'NRestarts')}")
    assert systemd.prop("MainPID") != main
    wait_for(lambda: all((systemd.task(t) or {}).get("state") == "running"
                         for t in ("app/counter", "app/quiet")),
             what=lambda: f"the tasks to run under the new corral\n{systemd.journal()[-30:]}")
    assert systemd.prop("StatusText") == "2 tasks: 2 ready"
    # Every process of the unit is the new corral or one of its tasks or
    # their children (a `sleep 0.1`): no stray of the old corral's.
    status = systemd.status()
    known = {int(systemd.prop("MainPID"))} | {
        t["pid"] for g in status["groups"] for t in g["tasks"] if t["pid"]}
    seen = {pid: systemd.process_state(pid) for pid in systemd.service_processes()}
    strays = {pid: state for pid, state in seen.items()
              if state and pid not in known and state[1] not in known}
    assert strays == {}, seen

