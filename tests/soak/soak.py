#!/usr/bin/python3
"""Soak: corral under load and faults for a fixed time, its invariants
checked all along (issue "Prove it holds", docs/reliability.md).

    tests/soak/soak.py [--corral PATH] [--duration SECONDS] [--tasks N] [--seed N]

Defaults: build/corral, 1800 s, 200 tasks. CI runs a 60-second smoke of it.

Load, all at once:
- tasks that exit at random and restart; kill -9s of random task processes;
- concurrent CLI clients: status, restart, restart --force, stop/start,
  restart --all, signal, logs, events;
- hooks that hang (timeout), crash, print garbage or a megabyte;
- health probes that flap (exec and tcp); a task flooding its output;
- a fork bomb held by pids.max and a memory hog held by memory.max;
- hostile control clients: garbage, half-closed, never reading a follow
  stream, and many held connections;
- a reload every few seconds, between two configs that add, remove,
  replace and update tasks in place.
Faults to corral itself, in turn: RLIMIT_NOFILE lowered for a while (opens
fail); SIGSTOP for a few seconds then SIGCONT; pids.max of the cgroup corral
and its tasks run in lowered to what runs (every fork and clone fails with
EAGAIN: task starts, hooks, exec probes); the disk of the chatty task's log
file full (ENOSPC), after which the file must be written again; corral's
stdout not read for 5 s (status must answer meanwhile, and lines flow
again once it is read); the memory
cgroup of corral and its tasks limited to 24 MiB above what they use (the
memory hog then meets that limit before its own, and the OOM killer
chooses among them all: corral lowers its own oom_score_adj where it has
CAP_SYS_RESOURCE; where it has not, the tasks get `oom_score_adj: 300`, and
the summary says which it was).

Invariants, checked every few seconds and at the end:
- corral is alive, and `status` answers (within 10 s, stops aside);
- every task `status` says is running has that process in /proc;
- corral's fds, RSS and cgroups stay bounded, and come back near their
  starting level once the load stops;
- no zombie child of corral or of a task's reaper stays one for more than
  ZOMBIE_AGE_LIMIT seconds (the same pid and start time, seen at two
  checks; corral's SIGSTOPs aside);
- after SIGTERM corral exits, and leaves no process, cgroup or socket.
It prints what it did, the maxima and where the time went (a soak of N
seconds ends in about N plus a bounded shutdown), and exits 1 when an
invariant broke."""

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

MARK = "CORRAL_SOAK_ID"


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corral", default="build/corral")
    parser.add_argument("--duration", type=float, default=1800.0)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--seed", type=int, default=None)
    return parser.parse_args()


# ---- the configs ----------------------------------------------------------

def hook_script(kind):
    return {
        "hang": "sleep 30",
        "crash": "kill -SEGV $$",
        "garbage": "echo '{not json'",
        "huge": "head -c 1048576 /dev/zero | tr '\\0' x",
        "ok": "cat >/dev/null; echo '{}'",
    }[kind]


def config(variant, tasks, port, directory):
    """Config A (variant 0) or B (1): B replaces, removes, adds and updates
    tasks of A in place, so that reloading between them exercises every
    kind of change."""
    # Every task restarts without end (the default allows 3 restarts a
    # minute, which random kills and signals exceed now and then): a task
    # failing for good would stop its group for the rest of the run.
    forever = {"policy": "always", "delay": "200ms", "attempts": 1000000, "interval": "1s"}
    workers = {}
    for i in range(tasks):
        life = 1 + (i * 7919) % 23  # seconds before it exits, spread out
        task = {
            "command": ["/bin/sh", "-c", f"sleep {life}; exit {i % 3}", f"w{i}"],
            "restart": dict(forever),
            "kill": {"timeout": "2s"},
        }
        if i % 10 == 0:
            # Flaps: passes two seconds out of three.
            task["health"] = {"exec": ["/bin/sh", "-c", "test $(( $(date +%s) % 3 )) != 0"],
                              "interval": "1s", "failures": 2}
        elif i % 10 == 1:
            task["health"] = {"tcp": port, "interval": "1s", "failures": 1000000}
        if i % 25 == 2:
            kind = ["hang", "crash", "garbage", "huge", "ok"][(i // 25) % 5]
            task["hooks"] = [{"name": "h", "stage": "prestart", "timeout": "1s",
                              "exec": ["/bin/sh", "-c", hook_script(kind)]}]
            task["restart"]["delay"] = "1s"
        if variant == 1 and i % 17 == 0:
            task["command"][2] = f"sleep {life + 1}; exit 0"  # replaced
        if variant == 1 and i % 13 == 0:
            task["kill"] = {"timeout": "3s"}  # updated in place
        if variant == 1 and i % 29 == 5:
            continue  # removed
        workers[f"w{i:04d}"] = task
    if variant == 1:
        workers["added"] = {"command": ["sleep", "100000"], "restart": forever}
    limits = {
        "forkbomb": {"command": ["/bin/sh", "-c", "while :; do sleep 100 & done"],
                     "resources": {"pids": 20, "optional": True},
                     "restart": {"policy": "always", "delay": "2s", "attempts": 1000000,
                                 "interval": "1s"}},
        "hog": {"command": [sys.executable, "-c",
                            "b = []\nwhile True: b.append(bytearray(1 << 20))"],
                "resources": {"memory": "48M" if variant == 0 else "64M"},
                "restart": {"policy": "always", "delay": "2s", "attempts": 1000000,
                            "interval": "1s"}},
        "chatty": {"command": ["/bin/sh", "-c", "while :; do seq 1 2000; sleep 0.2; done"],
                   "restart": forever,
                   "log": {"dir": str(directory / "logs"), "max_size": "256K", "keep": 2}},
    }
    if not can_lower_oom_scores():
        # corral cannot protect itself from the OOM killer (memory fault):
        # its tasks are made the killer's choice instead, as a user would.
        for task in list(workers.values()) + list(limits.values()):
            task["oom_score_adj"] = TASK_OOM_SCORE_ADJ
    return {"socket": str(directory / "control.sock"), "shutdown_timeout": "20s",
            "groups": {"workers": {"tasks": workers}, "limits": {"tasks": limits}}}


TASK_OOM_SCORE_ADJ = 300

# Seconds a zombie child of corral may last (corral's SIGSTOPs aside). Not
# a measure of speed: corral reaps at once, but under a load of 15-30 on 2
# cores its loop may wait seconds for the CPU; a reaping bug leaves the
# zombie for good, which a generous bound still catches.
ZOMBIE_AGE_LIMIT = 10.0


def can_lower_oom_scores():
    """Whether corral, started by this root process, will have
    CAP_SYS_RESOURCE (some sandboxes keep it even from root)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return bool(int(line.split()[1], 16) & (1 << 24))
    return False


# ---- watching corral ------------------------------------------------------

class Soak:
    def __init__(self, arguments):
        self.arguments = arguments
        self.corral = str(Path(arguments.corral).resolve())
        self.random = random.Random(arguments.seed)
        self.directory = Path(tempfile.mkdtemp(prefix="corral-soak."))
        self.socket_path = self.directory / "control.sock"
        self.env = dict(os.environ, CORRAL_SOCKET=str(self.socket_path),
                        **{MARK: self.directory.name})
        self.stop_load = threading.Event()
        self.counts = {}
        self.lock = threading.Lock()
        self.failures = []
        self.maxima = {"fds": 0, "rss_kib": 0, "cgroups": 0, "zombies": 0,
                       "status_ms": 0.0}
        self.stopped_until = 0.0  # corral is SIGSTOPped until then
        # (begun, ended) of each SIGSTOP of corral: it reaps nothing then.
        self.stopped_windows = []
        # Each zombie child of corral or of a task's reaper, by (pid, start
        # time): when a check first saw it, and the oldest seen.
        self.zombies_seen = {}
        self.oldest_zombie = 0.0
        self.stdout_open = threading.Event()  # cleared: corral's stdout is not read
        self.stdout_open.set()
        self.stdout_bytes = 0
        self.fault_until = 0.0    # corral runs short of fds until then
        # Where the run's time went, phase by phase (a soak of N seconds
        # must end in about N plus a bounded shutdown), and the checks'.
        self.phases = []
        self.check_seconds = {"total": 0.0, "longest": 0.0}

    def phase(self, name, begun):
        self.phases.append((name, time.monotonic() - begun))
        return time.monotonic()

    def count(self, what, n=1):
        with self.lock:
            self.counts[what] = self.counts.get(what, 0) + n

    def fail(self, message):
        with self.lock:
            self.failures.append(f"{time.monotonic() - self.started:.0f}s: {message}")
        print(f"soak: INVARIANT BROKEN: {message}", file=sys.stderr, flush=True)

    def cli(self, *args, timeout=30):
        return subprocess.run([self.corral, *args], capture_output=True, text=True,
                              env=self.env, timeout=timeout)

    def read_stdout(self):
        """corral's stdout, the tasks' lines: read and counted, except while
        the stdout fault holds it (then the pipe fills and corral must push
        back on the writers, nothing else)."""
        while True:
            self.stdout_open.wait()
            chunk = self.process.stdout.read1(1 << 16)
            if not chunk:
                return
            self.stdout_bytes += len(chunk)

    def status(self):
        result = self.cli("status", "--json", timeout=60)
        if result.returncode != 0:
            return None
        return json.loads(result.stdout)

    def tasks(self, status):
        return [task for group in status["groups"] for task in group["tasks"]]

    def write_config(self, variant):
        text = json.dumps(config(variant, self.arguments.tasks, self.port, self.directory))
        (self.directory / "soak.yaml").write_text(text)

    # ---- resources of corral ----

    def corral_fds(self):
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def corral_rss_kib(self):
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        return 0

    def corral_cgroups(self):
        own = Path(f"/proc/{self.process.pid}/cgroup").read_text().splitlines()[-1]
        path = own.split("::")[1]
        unified = Path("/sys/fs/cgroup/unified")
        mount = unified if unified.is_dir() else Path("/sys/fs/cgroup")
        root = (mount / path.lstrip("/")).parent  # corral sits in root/supervisor
        # Cgroups come and go while this walks: what vanished is not counted.
        return sum(1 for _, _, files in os.walk(root, onerror=lambda error: None)
                   if "cgroup.procs" in files)

    def zombie_children(self, reapers):
        """The zombies whose parent is corral or a task's reaper (the PID 1
        of a task's pid namespace, which reaps what is orphaned there), as
        {(pid, start time): parent}. The start time (field 22 of
        /proc/PID/stat) tells a pid used again from the one seen before.
        A zombie of a task's own process is that task's business."""
        parents = {self.process.pid} | reapers
        zombies = {}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # After the command's name, which may hold spaces and ")".
            fields = stat[stat.rindex(")") + 2:].split()
            state, parent, start_time = fields[0], int(fields[1]), int(fields[19])
            if state == "Z" and parent in parents:
                zombies[(int(entry.name), start_time)] = parent
        return zombies

    def stopped_during(self, begun, ended):
        """Seconds of [begun, ended] during which corral was SIGSTOPped."""
        return sum(max(0.0, min(ended, stop_end) - max(begun, stop_begun))
                   for stop_begun, stop_end in self.stopped_windows)

    def check_zombies(self, status, final):
        """A zombie is corral's failure only when the same process (same pid,
        same start time) stays a zombie for longer than ZOMBIE_AGE_LIMIT,
        not counting the time corral was SIGSTOPped: corral reaps as soon
        as its loop sees SIGCHLD, so a zombie that lasts is one it forgot,
        and one forgotten stays for good; a count of zombies compared
        between two looks is not that (under load, new zombies replace the
        reaped ones). The first look at a zombie is at a check, every 5 s,
        so one is seen again at the next check; at the end, it is looked
        at again until it is gone or too old."""
        reapers = {task["reaper_pid"] for task in self.tasks(status) if task.get("reaper_pid")}
        while True:
            now = time.monotonic()
            zombies = self.zombie_children(reapers)
            self.maxima["zombies"] = max(self.maxima["zombies"], len(zombies))
            # Those gone are forgotten: their pids may come back as others.
            self.zombies_seen = {key: self.zombies_seen.get(key, now) for key in zombies}
            ages = {key: now - seen - self.stopped_during(seen, now)
                    for key, seen in self.zombies_seen.items()}
            self.oldest_zombie = max([self.oldest_zombie, *ages.values()])
            too_old = [key for key, age in ages.items() if age > ZOMBIE_AGE_LIMIT]
            if too_old:
                self.fail(f"{len(too_old)} zombie children not reaped for more than "
                          f"{ZOMBIE_AGE_LIMIT:.0f}s: " + ", ".join(
                              f"pid {pid} (child of {zombies[(pid, start)]}, "
                              f"{ages[(pid, start)]:.1f}s)" for pid, start in too_old[:5]))
                for key in too_old:  # said once
                    self.zombies_seen[key] = float("inf")
                return len(zombies)
            if not final or not zombies:
                return len(zombies)
            time.sleep(0.5)

    # ---- load ----

    def loop(self, name, action, pause):
        while not self.stop_load.is_set():
            try:
                action()
                self.count(name)
            except Exception as error:  # a load thread never stops the soak
                self.count(f"{name} (error: {type(error).__name__})")
            self.stop_load.wait(pause)

    def load_thread(self, name, action, pause):
        return threading.Thread(target=self.loop, name=name, args=(name, action, pause),
                                daemon=True)

    def random_worker(self):
        return f"workers/w{self.random.randrange(self.arguments.tasks):04d}"

    def cli_client(self):
        choice = self.random.random()
        if choice < 0.3:
            self.cli("status")
        elif choice < 0.45:
            self.cli("restart", self.random_worker())
        elif choice < 0.55:
            self.cli("restart", "--force", self.random_worker())
        elif choice < 0.65:
            task = self.random_worker()
            self.cli("stop", task)
            self.cli("start", task)
        elif choice < 0.7:
            self.cli("restart", "--all", "limits")
        elif choice < 0.8:
            self.cli("signal", self.random_worker(), "HUP")
        elif choice < 0.9:
            self.cli("logs", "--tail", "50", "limits/chatty")
        else:
            self.cli("events", "--tail", "100")

    def kill_random_task_process(self):
        status = self.status()
        if not status:
            return
        running = [t for t in self.tasks(status) if t["state"] == "running" and t["pid"]]
        if running:
            try:
                os.kill(self.random.choice(running)["pid"], signal.SIGKILL)
            except ProcessLookupError:
                pass

    def hostile_client(self):
        kind = self.random.randrange(3)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(5)
            client.connect(str(self.socket_path))
            if kind == 0:
                client.sendall(os.urandom(self.random.randrange(1, 4096)) + b"\n")
            elif kind == 1:
                client.sendall(b'{"version": 1, "command": "status"')
                client.shutdown(socket.SHUT_WR)
            else:
                # Follows the chatty task's logs and never reads.
                client.sendall(b'{"version":1,"command":"logs","target":"limits/chatty",'
                               b'"follow":true}\n')
                self.stop_load.wait(3)

    def held_connections(self):
        held = []
        try:
            for _ in range(300):
                client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                client.connect(str(self.socket_path))
                held.append(client)
            self.stop_load.wait(5)
        finally:
            for client in held:
                client.close()

    def reload(self):
        self.variant = 1 - self.variant
        self.write_config(self.variant)
        result = self.cli("reload", timeout=60)
        if result.returncode == 0:
            return
        # Applied in part (docs/cli.md, exit 3): the kernel refused to lower a
        # v1 memory limit below what the hog uses (EBUSY); that limit stays
        # and the rest of the config was applied, so the variant did change.
        if result.returncode == 3 and "applied in part" in result.stdout:
            self.count("reload applied in part (a memory limit the kernel kept)")
            return
        # Out of fds on purpose: refused whole, with the reason, is right.
        if time.monotonic() < self.fault_until and "Too many open files" in result.stderr:
            self.count("reload refused for want of fds (fault)")
            self.variant = 1 - self.variant  # nothing changed
            return
        # A task the last reload removed is still being stopped (its kill
        # timeout, or corral was SIGSTOPped): refused whole until it is.
        if "is still stopping: reload again once" in result.stderr:
            self.count("reload refused: a removed task still stopping")
            self.variant = 1 - self.variant
            return
        self.fail(f"reload failed (exit {result.returncode}): "
                  f"{(result.stderr.strip() or result.stdout.strip())[:300]}")

    def listener(self):
        """The tcp health probes' server: up 2 s, down 1 s."""
        while not self.stop_load.is_set():
            with socket.socket() as server:
                server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                server.bind(("127.0.0.1", self.port))
                server.listen(1024)
                server.settimeout(0.1)
                end = time.monotonic() + 2
                while time.monotonic() < end and not self.stop_load.is_set():
                    try:
                        server.accept()[0].close()
                    except OSError:
                        pass
            self.stop_load.wait(1)

    # ---- faults to corral ----

    def fault(self):
        self.faults = getattr(self, "faults", 0) + 1
        kind = ["nofile", "sigstop", "pids", "disk", "memory", "stdout"][self.faults % 6]
        pid = self.process.pid
        if kind == "pids" and self.pids_cgroup:
            # Nothing more may be forked below corral (nor by it) for 5 s.
            current = (self.pids_cgroup / "pids.current").read_text().strip()
            (self.pids_cgroup / "pids.max").write_text(current)
            self.stop_load.wait(5)
            (self.pids_cgroup / "pids.max").write_text("max")
        elif kind == "memory" and self.memory_cgroup:
            # corral and its tasks in a cgroup with 24 MiB to spare for 5 s:
            # the memory hog, held by its own memory.max, now meets this
            # limit first, and the OOM killer chooses among every process
            # here, corral included (unless it could protect itself).
            usage, limit, unlimited = memory_files(self.memory_cgroup)
            limit.write_text(str(int(usage.read_text()) + (24 << 20)))
            self.stop_load.wait(5)
            limit.write_text(unlimited)
        elif kind == "stdout":
            # Nobody reads corral's stdout for 5 s: the pipe fills, the
            # tasks with lines to write wait, and corral itself must not.
            self.stdout_open.clear()
            self.stop_load.wait(3)
            begun = time.monotonic()
            answered = self.status() is not None
            took = time.monotonic() - begun
            self.maxima["status_ms_stdout_stalled"] = max(
                self.maxima.get("status_ms_stdout_stalled", 0), took * 1000)
            if not answered or took > 10:
                self.fail(f"status did not answer within 10 s while stdout was stalled ({took:.1f}s)")
            self.stop_load.wait(2)
            before = self.stdout_bytes
            self.stdout_open.set()
            self.stop_load.wait(3)
            if not self.stop_load.is_set() and self.stdout_bytes == before:
                self.fail("no output on stdout within 3 s of it being read again")
        elif kind == "disk":
            filler = self.directory / "logs" / "filler"
            subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=64k"],
                           capture_output=True)
            self.stop_load.wait(5)
            filler.unlink()
            room_again = time.time()
            self.stop_load.wait(3)
            chatty = self.directory / "logs" / "limits" / "chatty.log"
            if not self.stop_load.is_set() and chatty.stat().st_mtime < room_again:
                self.fail("the log file was not written again once the disk had room")
        elif kind == "nofile":
            import resource
            soft, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
            low = min(soft, max(64, self.corral_fds() + 8))
            self.fault_until = time.monotonic() + 7  # 5 s, and the requests under way
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (low, hard))
            self.stop_load.wait(5)
            resource.prlimit(pid, resource.RLIMIT_NOFILE, (soft, hard))
        else:
            self.stopped_until = time.monotonic() + 4
            stopped = time.monotonic()
            os.kill(pid, signal.SIGSTOP)
            time.sleep(3)
            os.kill(pid, signal.SIGCONT)
            # And a second for corral to catch up with what piled up.
            self.stopped_windows.append((stopped, time.monotonic() + 1))
        self.count(f"fault {kind}")

    # ---- invariants ----

    def check(self, final=False):
        begun = time.monotonic()
        try:
            return self.check_invariants(final)
        finally:
            took = time.monotonic() - begun
            self.check_seconds["total"] += took
            self.check_seconds["longest"] = max(self.check_seconds["longest"], took)

    def check_invariants(self, final=False):
        if self.process.poll() is not None:
            self.fail(f"corral exited with {self.process.returncode}")
            return
        begun = time.monotonic()
        status = self.status()
        took = time.monotonic() - begun
        if status is None:
            self.fail("status did not answer")
            return
        if begun > self.stopped_until:
            self.maxima["status_ms"] = max(self.maxima["status_ms"], took * 1000)
            if took > 10:
                self.fail(f"status took {took:.1f}s")
        missing = [task for task in self.tasks(status)
                   if task["state"] == "running" and task["pid"]
                   and not Path(f"/proc/{task['pid']}").exists()]
        if missing:
            # They may have exited since status answered: ask again, once
            # for them all. Once for each, against a snapshot that ages
            # meanwhile, made a check grow with the tasks: 174 s for one
            # check of 200 tasks, the time a 1200 s soak overran by.
            time.sleep(1)
            again = {t["task"]: t for t in self.tasks(self.status() or status)}
            for task in missing:
                now = again.get(task["task"], {})
                if now.get("state") == "running" and now.get("pid") == task["pid"]:
                    self.fail(f"{task['task']} said running as pid {task['pid']}, "
                              f"which does not exist")
        figures = {"fds": self.corral_fds(), "rss_kib": self.corral_rss_kib(),
                   "cgroups": self.corral_cgroups(),
                   "zombies": self.check_zombies(status, final)}
        for key, value in figures.items():
            self.maxima[key] = max(self.maxima[key], value)
        return figures

    # ---- the run ----

    def run(self):
        arguments = self.arguments
        with socket.socket() as probe_port:
            probe_port.bind(("127.0.0.1", 0))
            self.port = probe_port.getsockname()[1]
        self.variant = 0
        self.write_config(0)
        # The log directory: a small disk of its own, to fill.
        (self.directory / "logs").mkdir()
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "soak-logs",
                        str(self.directory / "logs")], check=True)
        self.pids_cgroup = make_cgroup("pids", self.directory.name)
        self.memory_cgroup = make_cgroup("memory", self.directory.name)
        log = open(self.directory / "corral.log", "wb")
        procs = {cgroup / "cgroup.procs" for cgroup in (self.pids_cgroup, self.memory_cgroup)
                 if cgroup}

        def join_cgroups():
            for path in procs:
                path.write_text(str(os.getpid()))

        self.process = subprocess.Popen([self.corral, "run", str(self.directory / "soak.yaml")],
                                        stdout=subprocess.PIPE, stderr=log, env=self.env,
                                        start_new_session=True, preexec_fn=join_cgroups)
        threading.Thread(target=self.read_stdout, daemon=True).start()
        self.started = time.monotonic()
        print(f"soak: corral {self.corral}, {arguments.tasks} tasks, {arguments.duration:.0f}s,"
              f" seed {arguments.seed}, in {self.directory}", flush=True)
        mark = self.started
        deadline = time.monotonic() + 120
        while not self.status():
            if time.monotonic() > deadline or self.process.poll() is not None:
                print("soak: corral did not come up", file=sys.stderr)
                return 1
            time.sleep(0.2)
        time.sleep(3)
        baseline = self.check()
        self.oom_score = Path(f"/proc/{self.process.pid}/oom_score_adj").read_text().strip()
        mark = self.phase("start", mark)

        quick = arguments.duration < 300
        threads = [
            threading.Thread(target=self.listener, name="tcp listener", daemon=True),
            self.load_thread("kill -9 a task", self.kill_random_task_process, 0.5),
            self.load_thread("hostile client", self.hostile_client, 0.3),
            self.load_thread("300 held connections", self.held_connections, 20),
            self.load_thread("reload", self.reload, 5),
            self.load_thread("fault to corral", self.fault, 15 if quick else 60),
        ] + [self.load_thread("CLI command", self.cli_client, 0.05)
             for _ in range(4)]
        for thread in threads:
            thread.start()
        end = self.started + arguments.duration
        while time.monotonic() < end and not self.failures:
            time.sleep(5)
            self.check()
        mark = self.phase("load", mark)
        self.stop_load.set()
        self.stdout_open.set()  # a stdout fault under way ends with the load
        # Each finishes what it is doing (a CLI command has a timeout of
        # its own): one deadline for them all, not a wait per thread.
        deadline = time.monotonic() + 60
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        late = [thread.name for thread in threads if thread.is_alive()]
        if late:
            print(f"soak: still busy 60s after the load stopped: {', '.join(late)}", flush=True)
        mark = self.phase("load threads stopping", mark)

        # Back to config A, the load gone: resources come back down.
        if self.variant == 1:
            self.reload()
        time.sleep(8)
        final = self.check(final=True) or {}
        if baseline and final:
            if final["fds"] > baseline["fds"] * 1.2 + 20:
                self.fail(f"fds grew from {baseline['fds']} to {final['fds']}")
            if final["cgroups"] > baseline["cgroups"] + 5:
                self.fail(f"cgroups grew from {baseline['cgroups']} to {final['cgroups']}")
        mark = self.phase("final reload and check", mark)

        self.process.send_signal(signal.SIGTERM)
        try:
            code = self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.fail("corral did not exit within 60s of SIGTERM")
            self.process.kill()
            code = self.process.wait()
        leftovers = [entry.name for entry in Path("/proc").iterdir() if entry.name.isdigit()
                     and self.marked(entry)]
        if leftovers:
            self.fail(f"{len(leftovers)} processes left after corral exited")
        if self.socket_path.exists():
            self.fail("the control socket was left behind")
        mark = self.phase("shutdown", mark)

        print(f"soak: {time.monotonic() - self.started:.0f}s, corral exited with {code}")
        said = (self.directory / "corral.log").read_text(errors="replace")
        if code != 0:
            # Every task here restarts without end, so nothing may fail for
            # good: a SIGTERM shutdown must end with 0.
            why = [line for line in said.splitlines()
                   if "for good" in line or "will exit with code" in line]
            self.fail(f"corral exited with {code} after SIGTERM: " + " | ".join(why[:5]))
        print(f"soak: corral's log: {said.count('Too many open files')} lines on running out "
              f"of fds, {said.count('OOM killed')} OOM kills, "
              f"{said.count('hook_failed') + said.count('hook h')} on failed hooks, "
              f"{said.count('refused')} on refused requests")
        protected = can_lower_oom_scores()
        print(f"soak: corral's oom_score_adj: {getattr(self, 'oom_score', '?')} ("
              + ("-999: it protected itself from the OOM killer" if protected else
                 f"no cap_sys_resource here to protect itself: its tasks had oom_score_adj "
                 f"{TASK_OOM_SCORE_ADJ}") + ")")
        print("soak: done:")
        for what, n in sorted(self.counts.items()):
            print(f"  {n:8d}  {what}")
        print("soak: time: " + ", ".join(f"{name} {seconds:.1f}s" for name, seconds in self.phases)
              + f"; checks {self.check_seconds['total']:.1f}s in all, "
              f"{self.check_seconds['longest']:.1f}s the longest")
        print("soak: corral's maxima: " + ", ".join(
            f"{key} {value:.0f}" for key, value in self.maxima.items())
              + f"; the oldest zombie child {self.oldest_zombie:.1f}s (SIGSTOPs aside)")
        if baseline and final:
            print(f"soak: at start / at end: fds {baseline['fds']}/{final['fds']}, "
                  f"RSS {baseline['rss_kib']}/{final['rss_kib']} KiB, "
                  f"cgroups {baseline['cgroups']}/{final['cgroups']}")
        if self.failures:
            print("soak: FAILED:\n  " + "\n  ".join(self.failures), file=sys.stderr)
            print(f"soak: corral's log: {self.directory}/corral.log", file=sys.stderr)
            return 1
        print("soak: every invariant held")
        self.release()
        subprocess.run(["rm", "-rf", str(self.directory)])
        return 0

    def release(self):
        """The log disk and the pids and memory cgroups, once corral is gone."""
        subprocess.run(["umount", str(self.directory / "logs")], capture_output=True)
        for name in ("pids_cgroup", "memory_cgroup"):
            cgroup = getattr(self, name, None)
            if not cgroup or not cgroup.exists():
                continue
            for root, _, _ in sorted(os.walk(cgroup), key=lambda e: -len(e[0])):
                try:
                    os.rmdir(root)
                except OSError as error:
                    print(f"soak: cannot remove cgroup {root}: {error}", file=sys.stderr)

    def marked(self, entry):
        try:
            return f"{MARK}={self.directory.name}".encode() in (entry / "environ").read_bytes()
        except OSError:
            return False


def make_cgroup(controller, name):
    """A v1 cgroup of CONTROLLER (hybrid hosts) or a v2 one where the root
    hands CONTROLLER down, for corral and its tasks; None where neither
    exists (that fault is then skipped). On v2 the pids and memory faults
    share one cgroup."""
    v1 = Path("/sys/fs/cgroup") / controller
    if (v1 / "cgroup.procs").exists():
        path = v1 / name
    elif controller in Path("/sys/fs/cgroup/cgroup.subtree_control").read_text(errors="replace"):
        path = Path("/sys/fs/cgroup") / name
    else:
        return None
    path.mkdir(exist_ok=True)
    return path


def memory_files(cgroup):
    """(usage, limit, no limit) of a v1 or v2 memory cgroup."""
    if (cgroup / "memory.limit_in_bytes").exists():
        return cgroup / "memory.usage_in_bytes", cgroup / "memory.limit_in_bytes", "-1"
    return cgroup / "memory.current", cgroup / "memory.max", "max"


def main():
    if os.geteuid() != 0:
        print("soak: run as root (cgroups, limits)", file=sys.stderr)
        return 2
    soak = Soak(parse_arguments())
    try:
        return soak.run()
    finally:
        # Whatever happened to the soak itself, corral and its tasks go.
        process = getattr(soak, "process", None)
        soak.stdout_open.set()
        if process and process.poll() is None:
            process.send_signal(signal.SIGCONT)
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        soak.release()


if __name__ == "__main__":
    sys.exit(main())
