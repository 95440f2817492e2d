"""readiness.log patterns cost bounded time in corral's one loop
(docs/config.md, "Readiness"; docs/architecture.md, "Where the code departs
from DESIGN.md": TRE). A back-reference is refused by `check` and `run` at its
column, and a task flooding 4000-byte lines against the costliest pattern
corral takes leaves `corral status` answering, and still finds its line."""

import re
import signal

from conftest import wait_for
from helpers_readiness import status_json

# The (.*a){20}b (23 ms a 4000-byte line with glibc) at the limit (the
# costliest one corral takes is measured in docs/benchmarks.md, not here).
HEAVY = "(.*a){16}b"

FLOOD = r"""
import os
line = b"a" * 4000 + b"\n"
for _ in range(400):
    os.write(1, line * 16)
os.write(1, b"a" * 3999 + b"b\n")
while True:
    os.write(1, line * 16)
"""


def test_check_and_run_refuse_a_back_reference_at_its_column(corral):
    config = {"groups": {"g": {"tasks": {"t": {
        "command": ["/bin/true"], "readiness": {"log": "^(.*)(.*)\\2\\1x$"}}}}}}
    result = corral.check(config)
    assert result.returncode == 1, result
    # The YAML the harness writes quotes the pattern: the column is that of
    # the \2 when the scalar has no escapes, else the scalar's start.
    assert re.search(r"\.yaml:\d+:\d+: g/t: readiness\.log: \\2 is a back-reference, "
                     r"which corral refuses", result.stderr), result.stderr
    assert "corral's one loop" in result.stderr
    ran = corral.run(config, timeout=30)
    assert ran.returncode != 0
    assert "\\2 is a back-reference" in ran.stderr


def test_status_answers_while_a_task_floods_lines_against_a_heavy_pattern(corral):
    config = {"groups": {"g": {"tasks": {
        "flood": {"command": ["/usr/bin/python3", "-c", FLOOD],
                  "readiness": {"log": HEAVY, "timeout": "5m"}},
        "quiet": {"command": ["/bin/sleep", "1000"]},
    }}}}
    assert corral.check(config).returncode == 0
    running = corral.start(config)
    corral.wait_control(running)
    # Each answer within a generous bound: before the fix one line could
    # hold the loop for minutes.
    for _ in range(10):
        answered = corral.cli("status", timeout=5)
        assert answered.returncode in (0, 1), answered
        assert re.search(r"^  quiet +main +running", answered.stdout, re.M), answered.stdout
    # The matching line, behind 6400 lines that do not match, is found.
    wait_for(lambda: status_json(corral)["g/flood"]["ready"], timeout=120,
             what="the flood task ready from its one line ending in b")
    ready = [e for e in running.events() if e.get("task") == "flood" and e["event"] == "ready"]
    assert len(ready) == 1 and 'line "aaaa' in ready[0]["message"], ready
    assert corral.cli("status", timeout=5).returncode in (0, 1)
    running.send(signal.SIGTERM)
    result = running.wait(timeout=60)
    assert result.returncode == 0
    # The lines its budget left were matched at the next turns, and said
    # once, with the task.
    said = [line for line in result.stderr.splitlines()
            if "g/flood: readiness.log: its pattern takes more than" in line]
    assert len(said) == 1, result.stderr[-2000:]
    assert "the task waits" in said[0]
