#!/usr/bin/python3
"""Restore soak: kill -9 of corral's loop process, KILLS times at random
points of a busy life, under `corral run --keeper` (issue "corral outlives
its own death", docs/reliability.md).

    tests/soak/restore_soak.py [--corral PATH] [--kills N] [--seed N]

Defaults: build/corral, 200 kills. The busy life: tasks writing numbered
lines, tasks that exit at random and restart (starting all the time, so
that many kills land in a start), a task whose prestart hook runs at every
start, a long-lived quiet task, and a `corral restart` of a random task
now and then. Some kills come right after a restore, and some in the
middle of one: the next loop is killed as soon as it exists.

Checked after every restore and at the end:
- the new loop answers `status`, `corral.restores` counts each kill;
- the quiet task and the writers are the same processes all along (pid and
  start time): never started twice;
- no task has more than one process of its own alive (a start caught by a
  kill is killed, never left beside a new one);
- every line of every writer arrives in order and never twice; a line is
  lost only when a kill lands between corral's read of its pipe and its
  write to stdout (at most one run of lines a kill; counted and printed:
  the splice spool of docs/decisions.md would close that window);
- the keeper and the loop hold about as many fds as after the start;
- at the end corral exits 0 on SIGTERM and leaves no process and no cgroup
  behind.
Prints a summary; exits 1 on the first broken invariant, with the
processes under the keeper and the loop's status (SOAK_HOLD=SECONDS then
keeps them that long, to look at with gdb)."""

import argparse
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

WRITERS = 2


def config(directory):
    marks = directory / "marks"
    tasks = {
        "quiet": {"command": ["sleep", "1000000"]},
        "hooked": {
            "command": ["sh", "-c", "exec sleep $((RANDOM % 3 + 1))"],
            "restart": {"policy": "always", "delay": "10ms", "attempts": "unlimited"},
            "hooks": [{"name": "pre", "stage": "prestart",
                       "exec": ["sh", "-c", f"echo hook >> {marks}; sleep 0.05"]}]},
    }
    for n in range(WRITERS):
        tasks[f"writer{n}"] = {"command": [
            "sh", "-c", 'i=0; while :; do i=$((i+1)); echo "line $i"; sleep 0.005; done']}
    for n in range(4):
        tasks[f"flaky{n}"] = {
            "command": ["sh", "-c", "sleep 0.0$((RANDOM % 9 + 1)); exit 3"],
            "restart": {"policy": "always", "delay": "5ms", "attempts": "unlimited"}}
    return {"groups": {"g": {"tasks": tasks}}}


class Soak:
    def __init__(self, corral, kills, seed):
        self.corral = corral
        self.kills = kills
        self.random = random.Random(seed)
        self.dir = Path(tempfile.mkdtemp(prefix="corral-restore-soak."))
        self.socket = self.dir / "control.sock"
        self.test_id = uuid.uuid4().hex
        self.env = dict(os.environ, CORRAL_SOCKET=str(self.socket),
                        CORRAL_TEST_ID=self.test_id, CORRAL_TEST_KEEPER_WINDOW_MS="1")
        for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
            self.env.pop(name, None)

    def fail(self, why):
        print(f"restore soak: FAILED: {why}", file=sys.stderr)
        err = self.dir / "corral.stderr"
        if err.exists():
            print("--- corral's stderr (tail)", file=sys.stderr)
            print("\n".join(err.read_text(errors="replace").splitlines()[-40:]), file=sys.stderr)
        # What is alive under the keeper, and what the loop says of it:
        # enough to tell a lost exit from a stuck stop.
        if getattr(self, "keeper", None) and self.keeper.poll() is None:
            print("--- processes under the keeper", file=sys.stderr)
            subprocess.run(["ps", "-o", "pid,ppid,pgid,stat,wchan:20,args", "--ppid",
                            str(self.keeper.pid), "--pid", str(self.keeper.pid)],
                           stdout=sys.stderr, check=False)
            for pid in self.children(self.keeper.pid):
                subprocess.run(["ps", "-o", "pid,ppid,stat,args", "--ppid", str(pid)],
                               stdout=sys.stderr, check=False)
            status = self.status()
            if status:
                print("--- corral status --json", file=sys.stderr)
                print(json.dumps(status, indent=1)[:6000], file=sys.stderr)
            if os.environ.get("SOAK_HOLD"):
                print(f"--- held: keeper {self.keeper.pid}", file=sys.stderr, flush=True)
                time.sleep(int(os.environ["SOAK_HOLD"]))
        self.stop_all()
        sys.exit(1)

    def request(self, command, **fields):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(str(self.socket))
            sock.sendall((json.dumps({"version": 1, "command": command, **fields}) + "\n")
                         .encode())
            data = b""
            while not data.endswith(b"\n"):
                chunk = sock.recv(1 << 20)
                if not chunk:
                    break
                data += chunk
            return json.loads(data)

    def status(self):
        try:
            reply = self.request("status")
        except (OSError, ValueError):
            return None
        return reply if reply.get("ok") else None

    def wait_status(self, predicate, what, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.keeper.poll() is not None:
                self.fail(f"the keeper exited ({self.keeper.returncode}) waiting for {what}")
            status = self.status()
            if status and predicate(status):
                return status
            time.sleep(0.01)
        self.fail(f"no {what} within {timeout}s")

    @staticmethod
    def tasks(status):
        return {t["name"]: t for g in status["groups"] for t in g["tasks"]}

    @staticmethod
    def fd_count(pid):
        try:
            return len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            return 0

    @staticmethod
    def start_time(pid):
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        return int(text[text.rindex(")") + 2:].split()[19])

    def processes_of(self):
        """{CORRAL_TASK: [pid]} of the live processes this soak's tasks made."""
        found = {}
        marker = f"CORRAL_TEST_ID={self.test_id}".encode()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ = (entry / "environ").read_bytes().split(b"\0")
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if marker not in environ or state == "Z":
                continue
            for item in environ:
                if item.startswith(b"CORRAL_TASK="):
                    found.setdefault(item[12:].decode(), []).append(int(entry.name))
        return found

    def kill_next_loop(self, dead):
        """SIGKILL to the keeper's next loop as soon as it is there (its
        child that runs corral and is not `dead`); whether it was."""
        keeper = self.keeper.pid
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline:
            try:
                children = Path(f"/proc/{keeper}/task/{keeper}/children").read_text().split()
            except OSError:
                return False
            for child in map(int, children):
                if child == dead:
                    continue
                try:
                    if Path(f"/proc/{child}/exe").resolve() == Path(self.corral).resolve():
                        os.kill(child, signal.SIGKILL)
                        return True
                except OSError:
                    continue
            time.sleep(0.0005)
        return False

    @staticmethod
    def children(pid):
        try:
            return [int(child) for child in
                    Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except OSError:
            return []

    def stop_all(self):
        if getattr(self, "keeper", None) and self.keeper.poll() is None:
            self.keeper.kill()
            self.keeper.wait()
        for pids in self.processes_of().values():
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def run(self):
        path = self.dir / "corral.yaml"
        path.write_text(json.dumps(config(self.dir)))
        self.stdout = open(self.dir / "corral.stdout", "wb")
        stderr = open(self.dir / "corral.stderr", "wb")
        self.keeper = subprocess.Popen([self.corral, "run", "--keeper", str(path)],
                                       stdout=self.stdout, stderr=stderr, env=self.env,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        status = self.wait_status(lambda s: all(t["state"] == "running" for t in
                                                self.tasks(s).values()
                                                if not t["name"].startswith(("flaky", "hooked"))),
                                  "every task running")
        first_loop = status["corral"]["pid"]
        baseline_fds = self.fd_count(first_loop) + self.fd_count(self.keeper.pid)
        most_fds = baseline_fds
        lasting = {name: (t["pid"], self.start_time(t["pid"]))
                   for name, t in self.tasks(status).items()
                   if name == "quiet" or name.startswith("writer")}
        during_restore = mid_restore = 0
        restores = 0
        started = time.monotonic()
        for kill in range(1, self.kills + 1):
            loop = status["corral"]["pid"]
            # Most kills after a while of life; some right after a restore.
            if self.random.random() < 0.1:
                during_restore += 1
            else:
                time.sleep(self.random.uniform(0.005, 0.12))
            if self.random.random() < 0.05:
                target = f"g/{self.random.choice(['flaky0', 'hooked', 'flaky1'])}"
                try:
                    self.request("restart", target=target)
                except (OSError, ValueError):
                    pass
            try:
                os.kill(loop, signal.SIGKILL)
            except ProcessLookupError:
                self.fail(f"kill {kill}: the loop {loop} is gone already")
            restores += 1
            # Now and then the next loop too, as soon as it exists: a kill
            # in the middle of a restore.
            if self.random.random() < 0.05 and self.kill_next_loop(loop):
                mid_restore += 1
                restores += 1
            status = self.wait_status(
                lambda s, loop=loop, count=restores: s["corral"]["pid"] != loop and
                s["corral"]["restores"] == count, f"restore {restores}")
            # fds accounted: the new loop and the keeper hold what the
            # first pair did, give or take what is in flight.
            fds = self.fd_count(status["corral"]["pid"]) + self.fd_count(self.keeper.pid)
            most_fds = max(most_fds, fds)
            if fds > baseline_fds + 40:
                self.fail(f"kill {kill}: corral's two processes hold {fds} fds, "
                          f"{baseline_fds} after the start")
            tasks = self.tasks(status)
            for name, (pid, start) in lasting.items():
                if tasks[name]["pid"] != pid or self.start_time(pid) != start:
                    self.fail(f"kill {kill}: {name} is not the same process "
                              f"({pid} -> {tasks[name]['pid']})")
            # At most one run of a task at a time: sh and its sleep, or a
            # prestart hook's sh and sleep (processes killed by the restore
            # may take a moment to be gone).
            deadline = time.monotonic() + 2
            while True:
                crowded = {task: pids for task, pids in self.processes_of().items()
                           if len(pids) > 2}
                if not crowded:
                    break
                if time.monotonic() > deadline:
                    self.fail(f"kill {kill}: tasks with more than one run: {crowded}")
                time.sleep(0.01)
        elapsed = time.monotonic() - started
        time.sleep(0.2)
        self.keeper.send_signal(signal.SIGTERM)
        try:
            code = self.keeper.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.fail("corral did not exit within 60 s of SIGTERM")
        self.stdout.close()
        if code != 0:
            self.fail(f"corral exited {code} on SIGTERM")
        text = (self.dir / "corral.stdout").read_text(errors="replace")
        lost = gaps = 0
        for n in range(WRITERS):
            found = [int(m.group(1)) for m in
                     re.finditer(rf"^g/writer{n} \| line (\d+)$", text, re.M)]
            # Never doubled, never out of order.
            backwards = [(a, b) for a, b in zip(found, found[1:]) if b <= a][:5]
            if not found or found[0] != 1 or backwards:
                self.fail(f"writer{n}: lines doubled or out of order: {backwards}")
            # Lost: only what a kill caught between corral's read of a
            # pipe and its write to stdout (docs/decisions.md: the
            # splice spool is what would close that window), at most one
            # batch a kill.
            holes = [(a, b) for a, b in zip(found, found[1:]) if b != a + 1]
            gaps += len(holes)
            lost += sum(b - a - 1 for a, b in holes)
        if gaps > restores:
            self.fail(f"{gaps} runs of lost lines, more than the {restores} kills")
        time.sleep(0.2)
        left = self.processes_of()
        if left:
            self.fail(f"processes left behind: {left}")
        cgroups = [str(p) for root in (Path("/sys/fs/cgroup/unified"), Path("/sys/fs/cgroup"))
                   for p in root.glob(f"corral-{first_loop}-*")]
        if cgroups:
            self.fail(f"cgroups left behind: {cgroups}")
        lines = sum(1 for _ in re.finditer(r"^g/writer", text, re.M))
        print(f"restore soak: {self.kills} kill -9s of the loop in {elapsed:.1f}s "
              f"({during_restore} right after a restore, {mid_restore} in the middle of one), "
              f"every restore answered, "
              f"quiet and writers never restarted, {lines} numbered lines in order and none "
              f"twice ({lost} lost in {gaps} kills' read-to-write windows), "
              f"fds of keeper and loop {baseline_fds} at the start and {most_fds} at the most, "
              f"no process or cgroup left behind")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corral", default="build/corral")
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    options = parser.parse_args()
    seed = options.seed if options.seed is not None else random.randrange(1 << 30)
    print(f"restore soak: seed {seed}")
    Soak(os.path.abspath(options.corral), options.kills, seed).run()


if __name__ == "__main__":
    main()
