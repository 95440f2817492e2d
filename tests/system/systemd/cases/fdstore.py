"""A service that keeps what must outlive it in systemd's file descriptor
store, as corral's restore could. On its first start (no LISTEN_FDS) it
stores a memfd holding "written by PID" (FDNAME=state) and the read end of
a pipe (FDNAME=output, FDPOLL=0 when FDPOLL=0 is in its environment):
FDSTORE=1 with the fd passed by SCM_RIGHTS on NOTIFY_SOCKET (systemd
252's systemd-notify has no --fd). It forks a child
that stands for a task and writes "line N" to the pipe every 0.1 s; this
first main process never reads the pipe. A later start says what it got
back (names, the memfd's bytes), then reads the pipe and says which lines
each read held, and when it ended."""

import array
import os
import socket
import time


def store(notify, address, fd, name, extra=""):
    notify.sendmsg([f"FDSTORE=1\nFDNAME={name}{extra}".encode()],
                   [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))], 0, address)


def say(text):
    print(f"main {os.getpid()}: {text}", flush=True)


mine = os.environ.get("LISTEN_PID") == str(os.getpid())
count = int(os.environ.get("LISTEN_FDS", "0")) if mine else 0
names = os.environ.get("LISTEN_FDNAMES", "") if mine else ""
say(f"LISTEN_FDS={count} LISTEN_FDNAMES={names}")
fds = dict(zip(names.split(":"), range(3, 3 + count))) if count else {}
if "state" in fds:
    os.lseek(fds["state"], 0, os.SEEK_SET)
    say(f"state holds {os.read(fds['state'], 100).decode()}")

address = os.environ["NOTIFY_SOCKET"]
if address.startswith("@"):
    address = "\0" + address[1:]
notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
if not fds:
    state = os.memfd_create("state")
    os.write(state, f"written by {os.getpid()}".encode())
    store(notify, address, state, "state")
    output, writer = os.pipe()
    # FDPOLL=0 in the environment: systemd is not to drop the read end when
    # it hangs up (every writer gone).
    poll = os.environ.get("FDPOLL")
    store(notify, address, output, "output", f"\nFDPOLL={poll}" if poll else "")
    say("stored")
    if os.fork() == 0:
        os.close(output)  # the task holds the write end only, as corral's
        number = 1
        os.write(writer, b"line 1\n")
        print(f"child {os.getpid()} of {os.getppid()}: running", flush=True)
        while True:
            time.sleep(0.1)
            number += 1
            os.write(writer, f"line {number}\n".encode())
    os.close(writer)
notify.sendto(b"READY=1", address)
if "output" in fds:
    while chunk := os.read(fds["output"], 65536):
        numbers = [int(line.split()[1]) for line in chunk.decode().splitlines()]
        say(f"read lines {numbers[0]} to {numbers[-1]}"
            if numbers == list(range(numbers[0], numbers[-1] + 1))
            else f"read lines out of order: {numbers}")
    say("output ended")
while True:
    time.sleep(60)
