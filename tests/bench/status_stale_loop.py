#!/usr/bin/env python3
"""corral status --json of 1000 tasks, calls 1.2 s apart (every reading
stale at each call: older than the 1 s refresh age), end to end: fork to
reap with stdout read through a pipe. usage: tests/bench/status_stale_loop.py CORRAL [CALLS]   (as root)"""
import os, statistics, subprocess, sys, tempfile, time

corral, calls = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20
tasks = 1000
with tempfile.TemporaryDirectory(prefix="corral-stale-") as d:
    sock = f"{d}/c.sock"
    lines = [f'socket: "{sock}"', "groups:", "  g:", "    tasks:"]
    lines += [f'      t{i:04}: {{command: ["sleep", "1000"], restart: {{policy: never}}}}'
              for i in range(1, tasks + 1)]
    open(f"{d}/c.yaml", "w").write("\n".join(lines) + "\n")
    log = open(f"{d}/log", "w")
    server = subprocess.Popen([corral, "run", f"{d}/c.yaml"], stdout=log, stderr=log)
    try:
        argv = [corral, "status", "--json", "--socket", sock]
        while True:
            r = subprocess.run(argv, capture_output=True)
            if r.returncode == 0 and r.stdout.count(b'"state":"running","pid"') == tasks:
                break
            time.sleep(0.05)
        times = []
        for _ in range(calls):
            time.sleep(1.2)
            start = time.perf_counter()
            r = subprocess.run(argv, stdout=subprocess.PIPE)
            times.append((time.perf_counter() - start) * 1000)
            assert r.returncode == 0
        times.sort()
        print(f"{os.path.basename(corral)}: {calls} calls 1.2 s apart: median {statistics.median(times):.2f} ms, "
              f"min {times[0]:.2f}, p90 {times[int(0.9 * len(times))]:.2f}, max {times[-1]:.2f}")
    finally:
        server.terminate()
        server.wait()
