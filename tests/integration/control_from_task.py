"""Run as a task's command by test_control_trust.py: tries corral's control
socket ($CORRAL_SOCKET, inherited from corral) from inside the task. Each
argument is one request (JSON); each gets a connection of its own. Prints
one JSON object: whether the socket is visible (and what the path is, as
the task sees it) and, per request, the reply lines up to the first, or
the error that kept the request from being sent."""

import array
import json
import os
import socket
import stat
import sys

path = os.environ["CORRAL_SOCKET"]
outcome = {"requests": []}
try:
    mode = os.stat(path).st_mode
    outcome["visible"] = stat.S_ISSOCK(mode)
    outcome["kind"] = "socket" if stat.S_ISSOCK(mode) else oct(stat.S_IFMT(mode))
except OSError as error:
    outcome["visible"] = False
    outcome["kind"] = f"stat: {error.strerror}"

for text in sys.argv[1:]:
    result = {"request": json.loads(text)}
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    try:
        sock.connect(path)
    except OSError as error:
        result["error"] = error.strerror or str(error)
        outcome["requests"].append(result)
        sock.close()
        continue
    # exec: the command's stdio is ours (an unconfined task's command
    # writes nowhere we care about).
    fds = [0, 1, 2] if result["request"]["command"] == "exec" else []
    data = (text + "\n").encode()
    try:
        if fds:
            sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                                   array.array("i", fds).tobytes())])
        else:
            sock.sendall(data)
    except OSError:
        pass  # refused at connect, and closed: the reason is there to read
    # One reply line; a started exec session's whole stream (its command
    # is killed if we close first).
    received = b""
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
            first = received.split(b"\n")[0]
            if b"\n" in received and not (fds and json.loads(first).get("ok")):
                break
    except OSError as error:
        result["error"] = error.strerror or str(error)
    sock.close()
    if received.strip():
        result["reply"] = json.loads(received.split(b"\n")[0])
    outcome["requests"].append(result)

print(json.dumps(outcome))
sys.stdout.flush()
