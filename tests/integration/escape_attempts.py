"""Known container escapes, each tried from inside a task (run by
test_escapes.py as the task's command). Prints one JSON object: attempt
name -> "blocked: <why>" or "escaped: <what worked>".

Every attempt is harmless if it works: it writes back what it read, opens
without writing, or acts on a scratch directory. Run as root in the task."""

import ctypes
import ctypes.util
import errno
import json
import os
import socket
import struct
import subprocess
import sys

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.syscall.restype = ctypes.c_long
results = {}

# x86_64 syscall numbers.
SYS_OPEN_BY_HANDLE_AT = 304
SYS_NAME_TO_HANDLE_AT = 303
SYS_INIT_MODULE = 175
SYS_FINIT_MODULE = 313
SYS_KEYCTL = 250
SYS_BPF = 321
SYS_PERF_EVENT_OPEN = 298
SYS_UNSHARE = 272
SYS_MOUNT = 165
CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000


def attempt(name):
    def run(function):
        try:
            outcome = function()
        except OSError as error:
            outcome = f"blocked: {errno.errorcode.get(error.errno, error.errno)}"
        except Exception as error:  # any other refusal is a block too
            outcome = f"blocked: {type(error).__name__}: {error}"
        results[name] = outcome
        return function
    return run


def syscall(number, *args):
    result = libc.syscall(number, *args)
    if result < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return result


@attempt("shocker: open_by_handle_at on the host's root (Docker, 2014)")
def _():
    # A handle of inode 2 (a file system's root) on the file system of /.
    handle = struct.pack("II", 8, 1) + struct.pack("Q", 2)
    root = os.open("/", os.O_RDONLY)
    try:
        fd = syscall(SYS_OPEN_BY_HANDLE_AT, root, handle, os.O_RDONLY)
    finally:
        os.close(root)
    os.close(fd)
    return "escaped: open_by_handle_at opened inode 2"


@attempt("CVE-2022-0492: a user namespace to mount cgroup v1 and set release_agent")
def _():
    syscall(SYS_UNSHARE, CLONE_NEWUSER | CLONE_NEWNS)
    return "escaped: unshare(CLONE_NEWUSER) worked"


@attempt("mount a file system (no CAP_SYS_ADMIN)")
def _():
    os.makedirs("/tmp/escape-mount", exist_ok=True)
    syscall(SYS_MOUNT, b"none", b"/tmp/escape-mount", b"tmpfs", 0, None)
    return "escaped: mount worked"


@attempt("CVE-2019-5736: open the runtime's binary (/proc/1/exe) for writing")
def _():
    fd = os.open("/proc/1/exe", os.O_WRONLY)
    os.close(fd)
    return "escaped: /proc/1/exe opened for writing"


@attempt("core_pattern: set the host's core dump handler")
def _():
    with open("/proc/sys/kernel/core_pattern") as current:
        value = current.read()
    with open("/proc/sys/kernel/core_pattern", "w") as pattern:
        pattern.write(value)  # the same value: harmless if it works
    return "escaped: core_pattern written"


@attempt("sysrq-trigger: open the host's magic SysRq for writing")
def _():
    fd = os.open("/proc/sysrq-trigger", os.O_WRONLY)
    os.close(fd)  # nothing written
    return "escaped: /proc/sysrq-trigger opened for writing"


@attempt("load a kernel module")
def _():
    syscall(SYS_FINIT_MODULE, -1, b"", 0)
    return "escaped: finit_module accepted"


@attempt("keyctl: the kernel keyring (not namespaced)")
def _():
    KEYCTL_GET_KEYRING_ID = 0
    syscall(SYS_KEYCTL, KEYCTL_GET_KEYRING_ID, -4, 0)  # the user keyring
    return "escaped: keyctl worked"


@attempt("bpf: load a program (kernel code)")
def _():
    BPF_MAP_CREATE = 0
    attributes = struct.pack("IIII", 2, 4, 4, 1) + bytes(48)  # an array map
    fd = syscall(SYS_BPF, BPF_MAP_CREATE, attributes, len(attributes))
    os.close(fd)
    return "escaped: bpf() worked"


@attempt("perf_event_open: host-wide observation")
def _():
    attributes = struct.pack("IIQ", 1, 112, 0) + bytes(96)  # software clock
    fd = syscall(SYS_PERF_EVENT_OPEN, attributes, -1, 0, -1, 0)
    os.close(fd)
    return "escaped: perf_event_open worked"


@attempt("mknod a block device and read it (device policy)")
def _():
    path = "/tmp/escape-sda"
    if os.path.exists(path):
        os.unlink(path)
    import stat
    os.mknod(path, 0o600 | stat.S_IFBLK, os.makedev(8, 0))
    try:
        fd = os.open(path, os.O_RDONLY)
        os.close(fd)
        return "escaped: /dev/sda's node opened"
    finally:
        os.unlink(path)


@attempt("network admin: take the loopback down")
def _():
    # SIOCSIFFLAGS on lo, the flags it has: harmless if it works.
    with socket.socket() as s:
        import fcntl
        request = struct.pack("16sH", b"lo", 0) + bytes(22)
        flags = fcntl.ioctl(s.fileno(), 0x8913, request)  # SIOCGIFFLAGS
        fcntl.ioctl(s.fileno(), 0x8914, flags)  # SIOCSIFFLAGS, unchanged
    return "escaped: SIOCSIFFLAGS worked"


@attempt("CVE-2024-21626: an fd left open to a host directory")
def _():
    extra = [fd for fd in os.listdir("/proc/self/fd") if int(fd) > 2]
    leaked = []
    for fd in extra:
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target != f"/proc/{os.getpid()}/fd":
            leaked.append(target)
    if leaked:
        return f"escaped: open fds {leaked}"
    raise OSError(errno.EBADF, "no fd but 0, 1 and 2")


@attempt("move itself out of its cgroup")
def _():
    with open("/sys/fs/cgroup/cgroup.procs", "w") as procs:
        procs.write(str(os.getpid()))
    return "escaped: wrote to the root cgroup's cgroup.procs"


print(json.dumps(results))
sys.stdout.flush()
