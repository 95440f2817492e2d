"""What prestart hooks and corral's built-in hooks (CDI devices, task
directories) add to a start, seen from inside the task: a returned bind
mount (read-only, or with nosuid/nodev/noexec, when asked), a tmpfs, a
device (and no other), environment; a done hook's mounts on the next
start; targets resolved inside the rootfs; a source gone before the start
named in the error. The host's mount table is the same before and after,
and the task directories are gone when corral exits.

Rootfs cases use a busybox-static root as test_rootfs.py does, with
`init: false` (corral's reaper is a dynamic binary)."""

from pathlib import Path

from conftest import host_mountinfo, sh
from helpers_isolation import FAKE_SPEC, cdi_dir, hook_script, in_root

NEVER = {"policy": "never"}


def task_lines(result, task="g/app"):
    prefix = f"{task} | "
    return [line[len(prefix):] for line in result.stdout_lines() if line.startswith(prefix)]


def one_task(command, hooks=None, **task):
    task.setdefault("restart", NEVER)
    return {"groups": {"g": {"tasks": {"app": {"command": command, "hooks": hooks or [],
                                               **task}}}}}


def mount_options(lines, target):
    """The options of `target` in the /proc/mounts lines the task printed."""
    for line in lines:
        fields = line.split()
        if len(fields) >= 4 and fields[1] == target:
            return fields[3].split(",")
    raise AssertionError(f"{target} not mounted: {lines}")


def test_returned_mounts_device_and_env_are_seen_inside(corral, tmp_path, rootfs):
    data = tmp_path / "data"
    data.mkdir()
    (data / "file").write_text("from the host\n")
    flags = tmp_path / "flags"
    flags.mkdir()
    hook = hook_script(tmp_path, "give", f"""
        response["mounts"] = [
            {{"source": "{data}", "target": "/data", "readonly": True}},
            {{"source": "{flags}", "target": "/flags", "options": ["nosuid", "nodev", "noexec"]}},
            {{"type": "tmpfs", "target": "/scratch", "options": ["size=1m", "noexec"]}}]
        response["devices"] = [{{"source": "/dev/zero", "target": "/dev/fake0",
                                 "permissions": "rw"}}]
        response["env"] = {{"GIVEN": "by the hook"}}
        """)
    script = """
        cat /data/file
        touch /data/new 2>&1 || true
        touch /flags/ok && echo flags writable
        grep -E ' /(data|flags|scratch) ' /proc/mounts
        echo "zeros $(head -c 4 /dev/fake0 | wc -c) nonzero $(head -c 4 /dev/fake0 | tr -d '\\0' | wc -c)"
        mknod /dev/other c 1 1 && cat /dev/other 2>&1 | head -n 1
        echo "GIVEN=$GIVEN"
    """
    hooks = [{"name": "give", "stage": "prestart", "exec": [hook]}]
    before = host_mountinfo()
    result = corral.run(one_task(sh(script), hooks, isolation=in_root(
        rootfs, capabilities={"add": ["mknod"]})))
    assert result.returncode == 0, result
    assert host_mountinfo() == before
    lines = task_lines(result)
    assert "from the host" in lines, result
    assert any("Read-only file system" in line for line in lines), lines
    assert not (data / "new").exists()
    assert "flags writable" in lines and (flags / "ok").exists(), lines
    assert "ro" in mount_options(lines, "/data")
    assert {"nosuid", "nodev", "noexec", "rw"} <= set(mount_options(lines, "/flags")), lines
    scratch = mount_options(lines, "/scratch")
    assert "noexec" in scratch and "size=1024k" in scratch, lines
    assert "zeros 4 nonzero 0" in lines, lines
    assert any("/dev/other" in line and "Operation not permitted" in line
               for line in lines), lines
    assert "GIVEN=by the hook" in lines, lines


def test_a_done_hooks_mounts_stay_on_the_next_start(corral, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "file").write_text("kept\n")
    runs = tmp_path / "runs"
    seen = tmp_path / "seen"
    first = tmp_path / "first"
    hook = hook_script(tmp_path, "once", f"""
        open("{runs}", "a").write("run\\n")
        response["mounts"] = [{{"source": "{data}", "target": "/mnt/once"}}]
        response["done"] = True
        """)
    # Exits 1 on its first run only; on-failure restarts it once.
    command = sh(f"cat /mnt/once/file >> {seen}; [ -e {first} ] && exit 0; "
                 f"touch {first}; exit 1")
    result = corral.run(one_task(command, [{"name": "once", "stage": "prestart",
                                            "exec": [hook]}],
                                 restart={"policy": "on-failure", "delay": "10ms"},
                                 isolation={"namespaces": ["mount"]}))
    assert result.returncode == 0, result
    assert runs.read_text() == "run\n"
    assert seen.read_text() == "kept\nkept\n", result


def test_a_target_through_a_symlink_stays_in_the_rootfs(corral, tmp_path, rootfs):
    data = tmp_path / "data"
    data.mkdir()
    (data / "file").write_text("inside\n")
    hook = hook_script(tmp_path, "evil", f"""
        response["mounts"] = [{{"source": "{data}", "target": "/evil/x"}}]
        """)
    result = corral.run(one_task(sh("cat /etc/x/file"), [{"name": "evil", "stage": "prestart",
                                                          "exec": [hook]}],
                                 isolation=in_root(rootfs)))
    assert result.returncode == 0, result
    assert task_lines(result) == ["inside"], result
    assert (rootfs / "etc" / "x").is_dir()
    assert not Path("/etc/x").exists()


def test_a_source_gone_before_the_start_names_the_mount(corral, tmp_path):
    gone = tmp_path / "gone"
    give = hook_script(tmp_path, "give", f"""
        os.makedirs("{gone}", exist_ok=True)
        response["mounts"] = [{{"source": "{gone}", "target": "/data"}}]
        """)
    # The next hook runs after the answer was checked, before the start.
    take = hook_script(tmp_path, "take", f'os.rmdir("{gone}")')
    hooks = [{"name": "give", "stage": "prestart", "exec": [give]},
             {"name": "take", "stage": "prestart", "exec": [take]}]
    ran = tmp_path / "ran"
    result = corral.run(one_task(sh(f"touch {ran}"), hooks,
                                 isolation={"namespaces": ["mount"]}))
    assert result.returncode == 126, result
    assert not ran.exists()
    assert f"g/app: bind {gone} on /data: No such file or directory" in result.stderr, result


def test_an_unknown_bind_option_fails_the_start(corral, tmp_path):
    hook = hook_script(tmp_path, "odd", """
        response["mounts"] = [{"source": "/tmp", "target": "/data", "options": ["size=1m"]}]
        """)
    result = corral.run(one_task(sh("true"), [{"name": "odd", "stage": "prestart",
                                               "exec": [hook]}],
                                 isolation={"namespaces": ["mount"]}))
    assert result.returncode == 126, result
    assert ('g/app: bind /tmp on /data: unknown option "size=1m" (a bind takes nosuid, nodev, '
            'noexec, suid, dev, exec, ro and rw)') in result.stderr, result


# ---- CDI ----


def cdi_task(command, specs, device, isolation):
    return one_task(command, cdi={"devices": [device], "spec_dirs": [str(specs)]},
                    isolation=isolation)


def test_cdi_device_mount_and_env_inside(corral, tmp_path, rootfs):
    share = tmp_path / "share"
    share.mkdir()
    (share / "lib").write_text("vendor library\n")
    specs = cdi_dir(tmp_path, FAKE_SPEC.format(share=share))
    script = """
        echo "zeros $(head -c 4 /dev/fake0 | wc -c) nonzero $(head -c 4 /dev/fake0 | tr -d '\\0' | wc -c)"
        cat /opt/fake/lib
        grep ' /opt/fake ' /proc/mounts
        echo "$FAKE_DEVICE $FAKE_DRIVER"
    """
    before = host_mountinfo()
    result = corral.run(cdi_task(sh(script), specs, "vendor.example/fake=zero0",
                                 in_root(rootfs)))
    assert result.returncode == 0, result
    assert host_mountinfo() == before
    lines = task_lines(result)
    assert "zeros 4 nonzero 0" in lines, result
    assert "vendor library" in lines, lines
    assert {"ro", "nosuid"} <= set(mount_options(lines, "/opt/fake")), lines
    assert "zero0 1.0" in lines, lines


def test_exec_hooks_run_after_the_built_ins_and_win(corral, tmp_path, rootfs):
    specs = cdi_dir(tmp_path, FAKE_SPEC.format(share=tmp_path))
    hook = hook_script(tmp_path, "later", 'response["env"] = {"FAKE_DRIVER": "from the hook"}')
    config = cdi_task(sh('echo "$FAKE_DEVICE/$FAKE_DRIVER"'), specs,
                      "vendor.example/fake=zero0", in_root(rootfs))
    config["groups"]["g"]["tasks"]["app"]["hooks"] = [
        {"name": "later", "stage": "prestart", "exec": [hook]}]
    result = corral.run(config)
    assert result.returncode == 0, result
    assert task_lines(result) == ["zero0/from the hook"], result


def test_cdi_unknown_device_fails_the_start(corral, tmp_path, rootfs):
    specs = cdi_dir(tmp_path, FAKE_SPEC.format(share=tmp_path))
    result = corral.run(cdi_task(sh("true"), specs, "vendor.example/fake=zero9",
                                 in_root(rootfs)))
    assert result.returncode == 126, result
    assert ('g/app: hook cdi: unknown device "vendor.example/fake=zero9" '
            '(known: vendor.example/fake=zero0)') in result.stderr, result


def test_cdi_malformed_spec_fails_the_start(corral, tmp_path, rootfs):
    specs = cdi_dir(tmp_path, "cdiVersion: 0.2.0\nkind: vendor.example/fake\ndevices: []\n")
    result = corral.run(cdi_task(sh("true"), specs, "vendor.example/fake=zero0",
                                 in_root(rootfs)))
    assert result.returncode == 126, result
    assert (f'g/app: hook cdi: {specs}/fake.yaml:1:13: cdiVersion: unsupported CDI version '
            '"0.2.0" (corral reads 0.3.0 to 0.8.0)') in result.stderr, result


# ---- task directories ----

def test_task_dirs_shared_alloc_own_local_tmpfs_secrets_removed_at_exit(corral, tmp_path,
                                                                        rootfs):
    root = tmp_path / "dirs"
    writer = """
        echo from-writer > /alloc/shared
        echo mine > /local/mine
    """
    # Waits for the writer's file: the tasks start together.
    reader = """
        while [ ! -e /alloc/shared ]; do sleep 0.05; done
        cat /alloc/shared
        echo "local: $(ls /local)"
        grep ' /secrets ' /proc/mounts
        echo "dirs $CORRAL_ALLOC_DIR $CORRAL_TASK_DIR $CORRAL_SECRETS_DIR"
    """
    isolation = in_root(rootfs)
    config = {
        "task_dirs_root": str(root),
        "groups": {"g": {"task_dirs": True, "tasks": {
            "writer": {"command": sh(writer), "restart": NEVER, "isolation": isolation},
            "reader": {"command": sh(reader), "restart": NEVER, "isolation": isolation},
        }}},
    }
    before = host_mountinfo()
    result = corral.run(config)
    assert result.returncode == 0, result
    lines = task_lines(result, "g/reader")
    assert "from-writer" in lines, result
    assert "local: " in lines, lines  # the writer's /local is its own
    secrets = mount_options(lines, "/secrets")
    assert lines[[line.split()[1:2] for line in lines].index(["/secrets"])].split()[2] == \
        "tmpfs", lines
    assert {"noexec", "nosuid", "nodev", "mode=700"} <= set(secrets), lines
    assert "dirs /alloc /local /secrets" in lines, lines
    # Nothing left: no mount under the root, no directory.
    assert host_mountinfo() == before
    assert str(root) not in host_mountinfo()
    assert not root.exists() or not any(root.iterdir())

