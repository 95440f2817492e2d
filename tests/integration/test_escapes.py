"""Named escapes (issue "Prove it holds", section 4): known ways out of a
container, each tried from inside a task with corral's default isolation
(escape_attempts.py), must all be blocked. The same attempts in a task
that keeps every capability and no filter (in a mount namespace of its
own, so that what works harms nothing) show that they are real: most of
them work there."""

import json
import sys
from pathlib import Path

ATTEMPTS = str(Path(__file__).with_name("escape_attempts.py"))
DEFAULT_ISOLATION = {"namespaces": ["pid", "mount", "uts", "ipc", "net", "cgroup"]}
WIDE_OPEN = {"namespaces": ["mount"],
             "capabilities": {"add": ["sys_admin", "dac_read_search", "net_admin"]},
             "seccomp": "unconfined"}


def attempts(corral, isolation):
    config = {"groups": {"g": {"tasks": {"try": {
        "command": [sys.executable, ATTEMPTS], "restart": {"policy": "never"},
        "isolation": isolation}}}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    line = [l for l in result.stdout_lines() if l.startswith("g/try | {")][0]
    return json.loads(line.split(" | ", 1)[1])


def test_every_named_escape_is_blocked_by_the_default_isolation(corral):
    results = attempts(corral, DEFAULT_ISOLATION)
    assert len(results) >= 14, results
    escaped = {name: outcome for name, outcome in results.items()
               if not outcome.startswith("blocked")}
    assert not escaped, json.dumps(escaped, indent=2)


def test_the_attempts_are_real_they_work_without_isolation(corral):
    results = attempts(corral, WIDE_OPEN)
    worked = [name for name, outcome in results.items() if outcome.startswith("escaped")]
    for name in ["shocker", "CVE-2022-0492", "mount a file system", "keyctl"]:
        assert any(w.startswith(name) for w in worked), (name, results)
