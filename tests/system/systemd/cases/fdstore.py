"""A service that keeps state in systemd's file descriptor store, as
corral's restore could: on its first start (no LISTEN_FDS) it puts a memfd
holding "written by PID" there (FDSTORE=1, FDNAME=state, the fd passed
with SCM_RIGHTS on NOTIFY_SOCKET: systemd 252's systemd-notify has no
--fd); on a later start it says what it got back. It forks a child that
stands for a task, says READY=1, and sleeps."""

import array
import os
import socket
import time

mine = os.environ.get("LISTEN_PID") == str(os.getpid())
count = int(os.environ.get("LISTEN_FDS", "0")) if mine else 0
names = os.environ.get("LISTEN_FDNAMES", "") if mine else ""
print(f"main {os.getpid()}: LISTEN_FDS={count} LISTEN_FDNAMES={names}", flush=True)
for fd in range(3, 3 + count):
    os.lseek(fd, 0, os.SEEK_SET)
    print(f"main {os.getpid()}: fd {fd} holds {os.read(fd, 100).decode()}", flush=True)

address = os.environ["NOTIFY_SOCKET"]
if address.startswith("@"):
    address = "\0" + address[1:]
notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
if count == 0:
    state = os.memfd_create("state")
    os.write(state, f"written by {os.getpid()}".encode())
    notify.sendmsg([b"FDSTORE=1\nFDNAME=state"],
                   [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [state]))],
                   0, address)
    os.close(state)
    print(f"main {os.getpid()}: stored", flush=True)
child = os.fork()
if child == 0:
    print(f"child {os.getpid()} of {os.getppid()}: running", flush=True)
    while True:
        time.sleep(1)
notify.sendto(b"READY=1", address)
while True:
    time.sleep(60)
