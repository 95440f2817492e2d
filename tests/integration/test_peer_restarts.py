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
