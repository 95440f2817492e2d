"""What systemd 252 (Debian 12's) does with a service's file descriptor
store and its processes when the main process dies, the ground the restore
of issue 37 builds on under systemd: a probe of systemd, not of corral.
cases/fdstore.py stores a memfd and the read end of its child's output
pipe on its first start, and says what it gets back on the next
(LISTEN_FDS, LISTEN_FDNAMES); its child stands for a task that writes
numbered lines. Found, and asserted here so that a systemd that behaves
otherwise shows:

- kill -9 of the main process, Restart=on-failure: the fd store is kept
  across the automatic restart (same memfd, same bytes; the same pipe),
  with KillMode=process and with KillMode=mixed alike;
- KillMode=process: the child survives, reparented to PID 1 (systemd), not
  to the next main process, which cannot wait() for it; the pipe's read
  end, held by the store, keeps it from SIGPIPE, and the next main
  process reads every line from the first, none lost, then the new ones;
- KillMode=mixed (the doc's unit): systemd SIGKILLs the child when the
  main process dies, before the restart. The pipe then hangs up (no
  writer left), and systemd drops a stored fd that hangs up: the lines in
  it are lost, unless it was stored with FDPOLL=0, and then the next main
  process reads them all, then the end of the file;
- a watchdog kill (SIGABRT, then the automatic restart) keeps the store;
- `systemctl restart` keeps it too; `systemctl stop` empties it (the
  child left by KillMode=process then dies at its next write, EPIPE).
"""

import re

import pytest

from conftest import wait_for

FDSTORE_CGROUP = "/sys/fs/cgroup/system.slice/fdstore.service"
UNIT = """[Service]
Type=notify
NotifyAccess=main
ExecStart=/usr/bin/python3 /cases/fdstore.py
Restart=on-failure
FileDescriptorStoreMax=4
LimitCORE=0
"""


@pytest.fixture
def fdstore(systemd):
    """fdstore.service, made with KILLMODE; stopped and its leftovers
    killed afterwards."""

    def make(kill_mode, extra=""):
        systemd.write_file("/run/systemd/system/fdstore.service",
                           UNIT + f"KillMode={kill_mode}\n{extra}")
        systemd.systemctl("daemon-reload")
        systemd.systemctl("start", "fdstore")
        return systemd

    yield make
    systemd.systemctl("stop", "fdstore", check=False)
    systemd.systemctl("kill", "--signal=KILL", "fdstore", check=False)
    systemd.systemctl("reset-failed", "fdstore", check=False)
    systemd.run("rm", "-f", "/run/systemd/system/fdstore.service")
    systemd.systemctl("daemon-reload")
    wait_for(lambda: systemd.run("test", "-e", FDSTORE_CGROUP, check=False).returncode != 0,
             what=lambda: "fdstore.service's processes to be gone: " +
             systemd.run("cat", f"{FDSTORE_CGROUP}/cgroup.procs", check=False).stdout)


def lines(systemd):
    return systemd.journal("fdstore")


def fd_names(systemd, main):
    """The names LISTEN_FDNAMES gave MAIN, sorted (systemd's order is its
    own), checked against LISTEN_FDS."""
    for line in lines(systemd):
        match = re.fullmatch(rf"main {main}: LISTEN_FDS=(\d+) LISTEN_FDNAMES=(.*)", line)
        if match:
            names = match[2].split(":") if match[2] else []
            assert len(names) == int(match[1]), line
            return sorted(names)
    return None


def reads_of(systemd, main):
    """[(first, last)] of each read of the pipe MAIN said it made."""
    found = []
    for line in lines(systemd):
        match = re.fullmatch(rf"main {main}: read lines (\d+) to (\d+)", line)
        if match:
            found.append((int(match[1]), int(match[2])))
    return found


def kill_main_and_wait_for_the_restart(systemd, restarts="1"):
    main = systemd.prop("MainPID", "fdstore")
    systemd.systemctl("kill", "--signal=KILL", "--kill-whom=main", "fdstore")
    wait_for(lambda: systemd.show("fdstore", "ActiveState", "NRestarts") ==
             {"ActiveState": "active", "NRestarts": restarts},
             what=lambda: f"the restart\n{lines(systemd)}")
    return int(main), int(systemd.prop("MainPID", "fdstore"))


def child_of(systemd, main):
    """The pid of MAIN's child, from its own line."""
    found = wait_for(lambda: [line.split()[1] for line in lines(systemd)
                              if line.startswith("child ") and
                              line.endswith(f"of {main}: running")],
                     what=lambda: f"the child of {main}\n{lines(systemd)}")
    return int(found[0])


def test_kill_9_keeps_the_fd_store_and_with_killmode_process_the_child(fdstore):
    systemd = fdstore("process")
    first = int(systemd.prop("MainPID", "fdstore"))
    child = child_of(systemd, first)
    assert systemd.prop("NFileDescriptorStore", "fdstore") == "2"
    old, new = kill_main_and_wait_for_the_restart(systemd)
    assert old == first and new != first
    wait_for(lambda: f"main {new}: state holds written by {first}" in lines(systemd),
             what=lambda: f"the stored memfd back\n{lines(systemd)}")
    assert fd_names(systemd, new) == ["output", "state"]
    assert systemd.prop("NFileDescriptorStore", "fdstore") == "2"
    # Every line the child wrote, from the first, none twice, and it
    # writes on: no SIGPIPE while the store holds the read end.
    reads = wait_for(lambda: len(r := reads_of(systemd, new)) >= 3 and r,
                     what=lambda: f"reads of the pipe\n{lines(systemd)}")
    assert reads[0][0] == 1, reads
    assert all(later[0] == earlier[1] + 1 for earlier, later in zip(reads, reads[1:])), reads
    # The child lives on, in the unit's cgroup, but its parent is PID 1.
    command, parent = systemd.process_state(child)
    assert command == "/usr/bin/python3 /cases/fdstore.py"
    assert parent == 1
    procs = systemd.run("cat", f"{FDSTORE_CGROUP}/cgroup.procs")
    assert str(child) in procs.stdout.split()
    assert any(f"Found left-over process {child} (python3) in control group while starting unit"
               in line for line in lines(systemd)), lines(systemd)


def test_kill_9_with_killmode_mixed_kills_the_child_and_a_pipe_that_hangs_up_is_dropped(fdstore):
    systemd = fdstore("mixed")
    first = int(systemd.prop("MainPID", "fdstore"))
    child = child_of(systemd, first)
    assert systemd.prop("NFileDescriptorStore", "fdstore") == "2"
    old, new = kill_main_and_wait_for_the_restart(systemd)
    assert f"fdstore.service: Killing process {child} (python3) with signal SIGKILL." in \
        lines(systemd)
    assert systemd.process_state(child) is None
    wait_for(lambda: f"main {new}: state holds written by {first}" in lines(systemd),
             what=lambda: f"the stored memfd back\n{lines(systemd)}")
    # The pipe hung up when the child died: systemd dropped it, and the
    # lines in it with it.
    assert fd_names(systemd, new) == ["state"]
    assert systemd.prop("NFileDescriptorStore", "fdstore") == "1"


def test_a_pipe_stored_with_fdpoll_0_keeps_a_dead_writers_lines(fdstore):
    systemd = fdstore("mixed", "Environment=FDPOLL=0\n")
    first = int(systemd.prop("MainPID", "fdstore"))
    child_of(systemd, first)  # it says so once its first line is in the pipe
    old, new = kill_main_and_wait_for_the_restart(systemd)
    assert fd_names(systemd, new) == ["output", "state"]
    systemd.wait_for_journal(f"main {new}: output ended", unit="fdstore")
    reads = reads_of(systemd, new)
    assert reads and reads[0][0] == 1, lines(systemd)
    assert all(later[0] == earlier[1] + 1 for earlier, later in zip(reads, reads[1:])), reads


def test_a_watchdog_kill_keeps_the_fd_store(fdstore):
    # fdstore.py never pings: each run is killed after WatchdogSec.
    systemd = fdstore("process", "WatchdogSec=2s\n")
    first = int(systemd.prop("MainPID", "fdstore"))
    systemd.wait_for_journal("fdstore.service: Watchdog timeout (limit 2s)!", unit="fdstore")
    wait_for(lambda: systemd.show("fdstore", "ActiveState", "NRestarts") ==
             {"ActiveState": "active", "NRestarts": "1"},
             what=lambda: f"the restart\n{lines(systemd)}")
    new = int(systemd.prop("MainPID", "fdstore"))
    wait_for(lambda: f"main {new}: state holds written by {first}" in lines(systemd),
             what=lambda: f"the stored memfd back\n{lines(systemd)}")


def test_systemctl_restart_keeps_the_fd_store_and_stop_empties_it(fdstore):
    systemd = fdstore("process")
    first = int(systemd.prop("MainPID", "fdstore"))
    child = child_of(systemd, first)
    systemd.systemctl("restart", "fdstore")
    second = int(systemd.prop("MainPID", "fdstore"))
    wait_for(lambda: f"main {second}: state holds written by {first}" in lines(systemd),
             what=lambda: f"the stored memfd back\n{lines(systemd)}")
    systemd.systemctl("stop", "fdstore")
    assert systemd.prop("NFileDescriptorStore", "fdstore") == "0"
    wait_for(lambda: systemd.process_state(child) is None,
             what="the child to die at its next write once the store let the pipe go")
    systemd.systemctl("start", "fdstore")
    third = int(systemd.prop("MainPID", "fdstore"))
    wait_for(lambda: f"main {third}: stored" in lines(systemd),
             what=lambda: f"a fresh store\n{lines(systemd)}")
    assert f"main {third}: LISTEN_FDS=0 LISTEN_FDNAMES=" in lines(systemd)
    assert systemd.prop("NFileDescriptorStore", "fdstore") == "2"
