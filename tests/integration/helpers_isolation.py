"""Helpers for tests of what prestart hooks, CDI and the device policy give
an isolated task (test_hook_mounts.py, test_devices.py): a hook script,
a rootfs isolation, a CDI spec directory, device nodes, and the device
programs BPF attached to a cgroup. The busybox `rootfs` fixture is in
conftest.py."""

import ctypes
import os
import stat
import textwrap

PYTHON = "/usr/bin/python3"


def hook_script(tmp_path, name, body):
    """A prestart hook in Python: `request` is the request, `response`
    (a dict) is printed."""
    path = tmp_path / f"{name}.hook"
    path.write_text(
        f"#!{PYTHON}\nimport json, os, shutil, sys\nrequest = json.load(sys.stdin)\n"
        "response = {}\n" + textwrap.dedent(body) + "\njson.dump(response, sys.stdout)\n")
    path.chmod(0o755)
    return str(path)


def in_root(rootfs, **extra):
    return {"namespaces": ["pid", "mount"], "init": False, "rootfs": str(rootfs), **extra}


# ---- CDI ----

FAKE_SPEC = """\
cdiVersion: 0.6.0
kind: vendor.example/fake
devices:
  - name: zero0
    containerEdits:
      env: [FAKE_DEVICE=zero0]
      deviceNodes:
        - {{path: /dev/fake0, hostPath: /dev/zero, permissions: rw}}
containerEdits:
  env: [FAKE_DRIVER=1.0]
  mounts:
    - {{hostPath: {share}, containerPath: /opt/fake, options: [ro, nosuid, rbind]}}
"""


def cdi_dir(tmp_path, text):
    specs = tmp_path / "cdi"
    specs.mkdir(exist_ok=True)
    (specs / "fake.yaml").write_text(text)
    return specs


# ---- devices -------------------------------------------------------------


def make_node(path, major, minor):
    os.mknod(path, 0o600 | stat.S_IFCHR, os.makedev(major, minor))


SYS_BPF = 321  # x86_64
BPF_PROG_QUERY = 16
BPF_CGROUP_DEVICE = 6


def attached_device_programs(cgroup_dir):
    """The ids of the device programs attached to the cgroup itself (not
    inherited), by bpf(BPF_PROG_QUERY)."""
    libc = ctypes.CDLL(None, use_errno=True)
    ids = (ctypes.c_uint32 * 64)()
    attr = (ctypes.c_uint8 * 128)()
    fd = os.open(cgroup_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        # union bpf_attr, query: target_fd, attach_type, query_flags,
        # attach_flags (u32 each), prog_ids (u64), prog_cnt (u32).
        ctypes.memmove(ctypes.addressof(attr), ctypes.byref(ctypes.c_uint32(fd)), 4)
        ctypes.memmove(ctypes.addressof(attr) + 4, ctypes.byref(ctypes.c_uint32(BPF_CGROUP_DEVICE)), 4)
        ctypes.memmove(ctypes.addressof(attr) + 16, ctypes.byref(ctypes.c_uint64(ctypes.addressof(ids))), 8)
        ctypes.memmove(ctypes.addressof(attr) + 24, ctypes.byref(ctypes.c_uint32(64)), 4)
        if libc.syscall(SYS_BPF, BPF_PROG_QUERY, attr, ctypes.sizeof(attr)) < 0:
            raise OSError(ctypes.get_errno(), "BPF_PROG_QUERY")
    finally:
        os.close(fd)
    count = ctypes.c_uint32.from_buffer(attr, 24).value
    return list(ids[:count])
