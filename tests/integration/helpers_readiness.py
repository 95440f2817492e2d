"""Helpers for tests of readiness (test_readiness.py and the tests of
probes, status and the HTTP endpoint): a command that sends sd_notify
datagrams, an idle task, and status --json by task."""

import json

NOTIFY = "/usr/bin/python3 -c 'import os,socket,sys; s=socket.socket(socket.AF_UNIX, " \
    "socket.SOCK_DGRAM); a=os.environ[\"NOTIFY_SOCKET\"]; " \
    "s.connect(\"\\0\" + a[1:] if a[0] == \"@\" else a); s.send(sys.argv[1].encode())'"
IDLE = "exec sleep 1000"


def status_json(corral):
    result = corral.cli("status", "--json")
    assert result.returncode == 0, result
    return {task["task"]: task for group in json.loads(result.stdout)["groups"]
            for task in group["tasks"]}
