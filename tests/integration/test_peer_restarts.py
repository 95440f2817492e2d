"""Restart settings translated from the peers, as the docs write them: a
translated config behaves as the peer does."""

import json
import re
import signal

from conftest import REPO_ROOT, mark, read_marks, sh, wait_for

QUICK_CRASHES = 5


def documented_supervisord_restart():
    """The `restart:` line of containers.md's supervisord example, the one
    marked `# autorestart=true`: the test runs what a reader copies."""
    text = (REPO_ROOT / "docs" / "containers.md").read_text()
    found = re.search(r"^\s*(restart: \{[^}]*\})\s*# autorestart=true$", text, re.M)
    assert found, "containers.md lost its autorestart=true example"
    return found.group(1)


def test_supervisord_autorestart_restarts_at_once_each_time(corral, tmp_path):
    # supervisord's autorestart=true starts a crashed program again at
    # once, every time. Before, the translation paused after the third
    # quick crash until its minute was over.
    runs = tmp_path / "runs"
    script = (f"{mark(runs, 'run')}; "
              f"[ $(wc -l < {runs}) -gt {QUICK_CRASHES} ] && exec sleep 60; exit 1")
    config = f"""
groups:
  app:
    on_failure: ignore
    {documented_supervisord_restart()}
    tasks:
      worker:
        command: {json.dumps(sh(script))}
"""
    running = corral.start(config)
    wait_for(lambda: len(read_marks(runs)) > QUICK_CRASHES, timeout=5,
             what=f"{QUICK_CRASHES} quick crashes and a run that stays")
    running.send(signal.SIGTERM)
    result = running.wait()
    times = [when for _, when in read_marks(runs)]
    gaps = [later - earlier for earlier, later in zip(times, times[1:])]
    assert len(gaps) == QUICK_CRASHES and max(gaps) < 0.5, (gaps, result)
    restarts = result.events.of_task("worker", "restarting")
    assert len(restarts) == QUICK_CRASHES, result.events
    assert all(event["message"].startswith("restarting in 0 (") for event in restarts), restarts
    assert not result.events.of_task("worker", "not_restarting"), result.events


def test_kubernetes_native_sidecar_is_restarted_for_as_long_as_the_pod_runs(corral, tmp_path):
    # A native sidecar as config.md translates it (a prestart sidecar, the
    # group sequential), with no restart settings: Kubernetes restarts it
    # with back-off and never takes the pod down for it. Before, the
    # fourth crash within a minute failed it for good and stopped the app.
    runs = tmp_path / "proxy-runs"
    config = {"groups": {"pod": {"order": "sequential", "tasks": {
        "proxy": {"command": sh(f"{mark(runs, 'run')}; sleep 0.2; exit 1"),
                  "lifecycle": {"hook": "prestart", "sidecar": True}},
        "app": {"command": ["sleep", "60"]},
    }}}}
    running = corral.start(config)

    def fourth_decision():
        events = running.events()
        decided = (events.of_task("proxy", "restarting")
                   + events.of_task("proxy", "not_restarting"))
        return decided[3:] or not running.alive()

    wait_for(fourth_decision, timeout=20, what="the proxy's fourth crash")
    assert running.alive(), running.result()
    events = running.events()
    assert not events.of_task("proxy", "not_restarting"), events
    fourth = events.of_task("proxy", "restarting")[3]["message"]
    # attempts spent: it waits out the minute (the back-off), then goes on
    assert re.match(r"restarting in [1-5]\d?s\S* \(restart 4 of 3\)$", fourth), fourth
    assert not events.of_task("app", "exited"), events
    running.send(signal.SIGTERM)
    result = running.wait()
    assert result.returncode == 0, result
