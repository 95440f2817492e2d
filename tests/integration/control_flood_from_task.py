"""Run as a task's command by test_signals_from_tasks.py: connects to
corral's control socket ($CORRAL_SOCKET) N times, each refused (the task
has no control: grant), then prints "refused N" and sleeps."""

import os
import socket
import sys
import time

path = os.environ["CORRAL_SOCKET"]
total = int(sys.argv[1])
refused = 0
for _ in range(total):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(20)
    try:
        sock.connect(path)
        if b"is a task" in sock.recv(4096):
            refused += 1
    except OSError:
        pass
    sock.close()
print(f"refused {refused}", flush=True)
time.sleep(1000)
