"""System tests: corral as PID 1 of an OCI container run by runc.

The bundle is what a user would make: a busybox-static rootfs, the static
corral, and the config.json of `runc spec` with terminal false (and, unless
a test says otherwise, a writable rootfs, as Docker and Kubernetes give).
So: default capabilities (no CAP_SETUID, no CAP_SYS_ADMIN), a read-only
/sys/fs/cgroup, the host's cgroup namespace, new pid, mount, network, ipc and
uts namespaces. corral is the container's process: PID 1 of its pid
namespace.

Most tests run examples/container/corral.yaml, the config examples/Dockerfile
ships, exactly as shipped (/etc/corral/corral.yaml): a migration, a
log-shipper sidecar, busybox httpd, a smoke test and an archive step.
Assertions come from corral's log (stderr), the tasks' output (stdout,
`group/task | line`), runc's exit code, and the host's /proc.
"""

import json
import os
import shutil

import pytest
import yaml

from conftest import (CORRAL_IN_IMAGE, EXAMPLE_CONFIG, REPO_ROOT, cgroup_paths, run,
                      still_alive, wait_for)

RUN_EXAMPLE = (CORRAL_IN_IMAGE, "run", EXAMPLE_CONFIG)


def run_case(case):
    return (CORRAL_IN_IMAGE, "run", f"/cases/{case}.yaml")


def start_example(container, **spec_changes):
    """The example container, once its smoke test fetched the front page:
    every stage has run but poststop."""
    web = container(**spec_changes).start(*RUN_EXAMPLE)
    web.wait_for_log("web/smoke-test: exited with code 0")
    return web


# ---- the static binary ---------------------------------------------------


def test_static_binary_needs_no_loader_and_no_shared_library(static_corral):
    headers = run(["readelf", "--program-headers", "--wide", static_corral]).stdout
    assert "INTERP" not in headers, headers
    dynamic = run(["readelf", "--dynamic", static_corral]).stdout
    assert "NEEDED" not in dynamic, dynamic
    ldd = run(["ldd", static_corral], check=False)
    assert ldd.returncode != 0 and "not a dynamic executable" in ldd.stdout + ldd.stderr, ldd


def test_static_binary_runs_in_a_busybox_chroot_and_resolves_user_names(make_rootfs, tmp_path):
    # Nothing but busybox and corral: no loader, no libc.so, no NSS module,
    # no nsswitch.conf. Names still resolve: static glibc has the "files"
    # source built in. (A chroot, not runc: corral may switch ids here.)
    root = make_rootfs(tmp_path / "root")
    elf_files = [path.relative_to(root) for path in root.rglob("*")
                 if path.is_file() and not path.is_symlink()
                 and path.read_bytes()[:4] == b"\x7fELF"]
    assert sorted(map(str, elf_files)) == ["bin/busybox", "usr/local/bin/corral"]
    assert not (root / "etc/nsswitch.conf").exists()
    (root / "dev").mkdir(exist_ok=True)
    run(["mknod", "-m", "666", root / "dev/null", "c", "1", "3"])
    environment = {"PATH": "/usr/local/bin:/bin:/usr/bin"}

    names = run([shutil.which("chroot"), root, CORRAL_IN_IMAGE, "run", "--socket", "/tmp/corral.sock",
                 "/cases/names.yaml"], check=False, env=environment, timeout=30)
    assert names.returncode == 0, names
    lines = names.stdout.splitlines()
    assert "names/by-name | uid=33(www-data) gid=33(www-data) groups=33(www-data)" in lines, names
    assert any(line.startswith("names/by-name-and-group | uid=33(www-data) gid=65534(nogroup)")
               for line in lines), names
    assert "names/numeric | uid=1234 gid=5678" in lines, names

    unknown = run([shutil.which("chroot"), root, CORRAL_IN_IMAGE, "run", "--socket", "/tmp/corral.sock",
                   "/cases/unknown-user.yaml"], check=False, env=environment, timeout=30)
    assert unknown.returncode == 1, unknown
    assert 'user "nosuchuser": no such user' in unknown.stderr, unknown
    assert "names/ghost" not in unknown.stdout, unknown


# ---- the lifecycle, as the container's PID 1 -----------------------------


def test_example_runs_in_lifecycle_order_as_the_containers_pid_1(container):
    web = start_example(container)
    assert f"running 1 group from {EXAMPLE_CONFIG} as PID 1" in web.log(), web
    # PID 1 of the container's pid namespace, as the host sees it.
    corral = web.host_pid_of(1)
    assert corral and corral.pid == web.host_pid and corral.name == "corral", web.processes()
    # In the container's own cgroup (runc names it after the id), in every
    # hierarchy: below it once per-task cgroups move corral to a leaf.
    paths = cgroup_paths(web.host_pid)
    assert paths and all(web.id in path.split("/") for path in paths.values()), paths
    web.assert_log_in_order(
        "web: lifecycle init -> prestart",
        "web/migrate: started",
        "web/migrate: exited with code 0",
        "web: lifecycle prestart -> main",
        "web/httpd: started",
        "web: lifecycle main -> poststart",
        "web/smoke-test: started",
        "web/smoke-test: exited with code 0",
    )
    # The sidecar was up before the main task started.
    web.assert_log_in_order("web/log-shipper: started", "web/httpd: started")
    assert "archive" not in web.stdout(), "poststop ran while the main task runs\n" + repr(web)
    # What migrate wrote is what httpd serves to the smoke test.
    assert web.output("web/migrate") == ["migrate: schema version 0 -> 2"], web
    assert web.output("web/smoke-test") == [
        "smoke-test: GET / -> <h1>served by busybox httpd under corral</h1>"], web
    # The sidecar ships the server's access log.
    wait_for(lambda: any(line.startswith("shipped: ") and line.endswith(": response:200")
                         for line in web.output("web/log-shipper")), what=web)


def test_runc_exec_corral_status_works_through_the_control_socket(container):
    web = start_example(container)
    table = web.exec("corral", "status")
    rows = {line.split()[0]: line.split() for line in table.stdout.splitlines()[2:]}
    assert rows["httpd"][1:3] == ["main", "running"], table.stdout
    assert rows["migrate"][1:3] == ["prestart-ephemeral", "dead"], table.stdout
    assert rows["archive"][1:3] == ["poststop", "pending"], table.stdout
    # The Kubernetes readiness probe of examples/kubernetes: httpd answered
    # its readiness probe and the log shipper wrote its newline.
    wait_for(lambda: web.exec("corral", "status", "--ready", check=False).returncode == 0,
             what=web)
    assert web.exec("corral", "status", "--ready").stdout == "ready\n"

    reply = json.loads(web.exec("corral", "status", "--json", "web/httpd").stdout)
    (group,) = reply["groups"]
    (httpd,) = group["tasks"]
    assert httpd["state"] == "running", reply
    # The pid corral reports is, seen from the host, the container's httpd.
    process = web.host_pid_of(httpd["pid"])
    assert process and process.name == "httpd", (httpd, web.processes())

    # Control beyond status: a Restart gives httpd a new process.
    restarted = web.exec("corral", "restart", "web/httpd")
    assert restarted.stdout.strip() == "web/httpd: restarting", restarted

    def new_pid():
        task = json.loads(web.exec("corral", "status", "--json", "web/httpd").stdout)
        task = task["groups"][0]["tasks"][0]
        return task["state"] == "running" and task["pid"] != httpd["pid"] and task["pid"]

    pid = wait_for(new_pid, what=web)
    assert web.host_pid_of(pid).name == "httpd", web.processes()


def test_orphans_of_tasks_are_reaped_no_zombie_in_the_containers_pid_namespace(container):
    box = container().start(*run_case("orphans"))
    box.wait_for_output("orphans/app", "app up")
    orphans = [int(line.split()[1]) for line in box.output("orphans/spawner")
               if line.startswith("orphan ")]
    assert len(orphans) == 2, box
    box.wait_for_log("orphans/spawner: exited with code 0")

    seen = {}
    for orphan in orphans:
        process = box.host_pid_of(orphan)
        assert process, f"orphan {orphan} not found from the host\n{box.processes()}"
        # Reparented to corral, the container's PID 1.
        assert process.ppid == box.host_pid, process
        assert process.state != "Z", process
        seen[orphan] = process.identity

    # The spawner's own leftover (a sleep in its process group) was killed.
    box.wait_for_log("orphans/spawner: processes left behind in process group")

    (box.rootfs / "tmp" / "release").touch()
    # They exit 3 by themselves, and corral reaps them: a zombie keeps its
    # /proc entry until its parent waits for it.
    wait_for(lambda: not still_alive(seen.values()),
             what=lambda: f"orphans to be reaped: {box.processes()}")
    wait_for(lambda: not [p for p in box.processes() if p.state == "Z"],
             what=lambda: f"no zombie in the container: {box.processes()}")
    # Orphans are no tasks: their exit does not disturb the group.
    assert box.output("orphans/app") == ["app up"], box
    box.kill("TERM")
    assert box.wait() == 0, box


def test_runc_kill_term_shuts_down_in_reverse_lifecycle_order_and_exits_0(container):
    web = start_example(container)
    web.kill("TERM")
    assert web.wait() == 0, web
    web.assert_log_in_order(
        "SIGTERM: shutting down gracefully",
        "web/httpd: sending SIGTERM",
        "web/httpd: stopped",
        "web/log-shipper: sending SIGTERM",
        "web/log-shipper: stopped",
        "web: lifecycle running -> poststop",
        "web/archive: started",
        "web/archive: exited with code 0",
        "web: finished: every task is dead",
        "exiting with code 0",
    )
    # The sidecar shipped the last lines before it stopped, and the poststop
    # task ran with the log complete.
    shipper = web.output("web/log-shipper")
    shipped = [line for line in shipper if line.startswith("shipped: ")]
    assert shipper[-1] == f"log-shipper: stopping after {len(shipped)} lines", web
    assert len(shipped) >= 1, web
    assert web.output("web/archive") == [f"archive: {len(shipped)} requests served"], web


def test_runc_kill_term_stops_each_tier_after_the_one_before(container):
    stack = container().start(*run_case("tiers"))
    stack.wait_for_output("stack/watcher", "watcher up")
    stack.kill("TERM")
    assert stack.wait() == 0, stack
    stack.assert_log_in_order(
        "SIGTERM: shutting down gracefully",
        "stack/app: sending SIGTERM",
        "stack/app: stopped",
        "stack/watcher: sending SIGTERM",
        "stack/watcher: stopped",
        "stack/proxy: sending SIGTERM",
        "stack/proxy: stopped",
        "stack/cleanup: started",
        "exiting with code 0",
    )
    # Each tier's signal went out only once the tier before it was dead.
    lines = [line for line in stack.stdout().splitlines()
             if line.endswith(" stopping") or line.endswith("poststop ran")]
    assert lines == ["stack/app | app stopping", "stack/watcher | watcher stopping",
                     "stack/proxy | proxy stopping", "stack/cleanup | poststop ran"], stack


def test_runc_kill_kill_leaves_no_process_behind(container):
    web = start_example(container)
    before = web.processes()
    names = {p.name for p in before}
    assert {"corral", "httpd", "sh"} <= names, before
    web.kill("KILL")
    code = web.wait()
    assert code == 128 + 9, web  # runc reports its init's death by SIGKILL
    assert not still_alive([p.identity for p in before]), before
    assert web.processes() == []
    # No graceful shutdown: nothing ran after the SIGKILL.
    assert "archive" not in web.stdout(), web


def test_failing_main_task_exit_code_is_runc_runs_exit_code(container):
    job = container().start(*run_case("failing"))
    assert job.wait() == 7, job
    assert job.output("job/work") == ["working"], job
    assert job.output("job/report") == ["poststop ran"], job
    assert "job/work: first task to fail for good; corral will exit with code 7" in job.log(), job
    assert job.log()[-1] == "exiting with code 7", job


def test_the_termination_message_goes_to_the_file_the_kubelet_mounts(container, tmp_path):
    # The kubelet bind-mounts a file of its own at the container's
    # terminationMessagePath, /dev/termination-log by default, and reads it
    # once the container exited; corral finds it without a config key.
    message = tmp_path / "termination-log"
    message.write_text("")
    job = container()
    job.edit_spec(lambda spec: spec["mounts"].append(
        {"destination": "/dev/termination-log", "type": "bind", "source": str(message),
         "options": ["rbind", "rw"]}))
    job.start(*run_case("failing"))
    assert job.wait() == 7, job
    assert message.read_text() == (
        "job/work failed for good: exited with code 7; corral exited with code 7\n"
        "last exit: exited with code 7\n"
        "rule: restart.policy: not restarting: policy never\n"
        "group job: on_failure stop: the group stopped\n"
        "last 1 line of job/work:\n"
        "working\n"), job


# ---- what runc's default spec does not give, and what corral says --------


def test_the_kubernetes_pods_probes_answer_as_status_ready_does(container):
    """examples/kubernetes/pod.yaml's command (the config and doors.yaml)
    and its httpGet probes, asked from inside the container with busybox's
    wget (which exits 0 on a 2xx only)."""
    pod = yaml.safe_load((REPO_ROOT / "examples" / "kubernetes" / "pod.yaml").read_text())
    (spec,) = pod["spec"]["containers"]
    ports = {port["name"]: port["containerPort"] for port in spec["ports"]}
    web = container().start(*spec["command"])
    web.wait_for_log("web/smoke-test: exited with code 0")

    def get(probe):
        target = spec[probe]["httpGet"]
        url = f"http://127.0.0.1:{ports[target['port']]}{target['path']}"
        return web.exec("wget", "-q", "-O", "-", url, check=False)

    wait_for(lambda: get("readinessProbe").returncode == 0, what=web)
    assert json.loads(get("readinessProbe").stdout) == {"ready": True, "not_ready": []}
    assert web.exec("corral", "status", "--ready").stdout == "ready\n"
    assert get("livenessProbe").stdout == "ok\n"
    # A task stopped on request: both say so, /readyz with a 503 (busybox
    # wget fails and prints no body).
    web.exec("corral", "stop", "web/log-shipper")
    wait_for(lambda: web.exec("corral", "status", "--ready", check=False).stdout ==
             "web/log-shipper: not ready (dead)\n", what=web)
    assert get("readinessProbe").returncode != 0
    assert get("livenessProbe").returncode == 0


def test_without_cap_setuid_a_task_with_a_user_fails_to_start_and_says_why(container):
    # runc's default capabilities: no CAP_SETUID, no CAP_SETGID.
    box = container().start(*run_case("user"))
    assert box.wait() == 126, box
    assert "users/whoami: setgroups: Operation not permitted" in box.log(), box
    assert box.output("users/whoami") == [], box


def test_read_only_rootfs_corral_runs_without_control_socket_and_says_so(container):
    # runc's spec as it comes: root.readonly true, and nothing on /run.
    box = container(readonly_root=True).start(*run_case("idle"))
    box.wait_for_output("idle/wait", "up")
    assert any(line.startswith("control socket off: ") and "/run/corral/control.sock" in line
               and line.endswith("Read-only file system (set --socket, CORRAL_SOCKET or socket: "
                                 "to a writable path)") for line in box.log()), box
    status = box.exec("corral", "status", check=False)
    assert status.returncode == 1, status
    assert "cannot connect to /run/corral/control.sock" in status.stderr, status
    box.kill("TERM")
    assert box.wait() == 0, box
    assert box.output("idle/wait") == ["up", "stopping"], box


def test_read_only_rootfs_with_corral_socket_on_a_tmpfs(container):
    # The remedy docs/containers.md gives: CORRAL_SOCKET on a tmpfs (runc's
    # spec has /dev/shm); `runc exec` inherits the process's environment.
    box = container(readonly_root=True)
    box.edit_spec(lambda spec: spec["process"]["env"].append(
        "CORRAL_SOCKET=/dev/shm/corral/control.sock"))
    box.start(*run_case("idle"))
    box.wait_for_output("idle/wait", "up")
    status = box.exec("corral", "status", "--json")
    tasks = json.loads(status.stdout)["groups"][0]["tasks"]
    assert [(t["task"], t["state"]) for t in tasks] == [("idle/wait", "running")], status
    assert not any(line.startswith("control socket off") for line in box.log()), box


# ---- a writable cgroup namespace -----------------------------------------


def test_example_runs_in_a_writable_cgroup_namespace(container):
    web = start_example(container, cgroupns=True)
    # The variant is what it says: a cgroup namespace of its own, rooted at
    # the container's cgroup, with /sys/fs/cgroup writable inside.
    assert os.readlink(f"/proc/{web.host_pid}/ns/cgroup") != os.readlink("/proc/self/ns/cgroup")
    inside = web.exec("cat", "/proc/self/cgroup").stdout.splitlines()
    assert inside and all(line.endswith(":/") for line in inside), inside
    web.exec("sh", "-c", "mkdir /sys/fs/cgroup/pids/probe && rmdir /sys/fs/cgroup/pids/probe")

    table = web.exec("corral", "status").stdout
    assert any(line.split()[:3] == ["httpd", "main", "running"] for line in table.splitlines()), table
    web.kill("TERM")
    assert web.wait() == 0, web
    web.assert_log_in_order("web/httpd: stopped", "web/log-shipper: stopped",
                            "web/archive: exited with code 0", "exiting with code 0")


def test_per_task_cgroups_appear_inside_the_containers_cgroup(container):
    # corral puts each task in <group>/<task> below its own cgroup and
    # itself in a `supervisor` leaf. Checked from the host: the container's
    # cgroup (runc names it after the id) holds them. On hybrid hosts like
    # ours runc mounts no v2 tree inside; the fixture mounts the container's
    # part of it at /sys/fs/cgroup/unified. `runc exec` must still work.
    web = start_example(container, cgroupns=True)
    reply = json.loads(web.exec("corral", "status", "--json", "web/httpd").stdout)
    httpd = web.host_pid_of(reply["groups"][0]["tasks"][0]["pid"])
    assert httpd and httpd.name == "httpd", web.processes()
    corral_paths = cgroup_paths(web.host_pid)
    httpd_paths = cgroup_paths(httpd.pid)
    placed = [key for key, path in httpd_paths.items()
              if path.endswith(f"/{web.id}/web/httpd")
              and corral_paths.get(key, "").endswith(f"/{web.id}/supervisor")]
    assert placed, f"corral {corral_paths}\nhttpd {httpd_paths}"
    inside = web.exec("sh", "-c", "ls -d /sys/fs/cgroup/*/web/httpd /sys/fs/cgroup/web/httpd "
                      "2>/dev/null", check=False).stdout.split()
    assert inside, "no web/httpd cgroup visible inside the container"
    web.kill("TERM")
    assert web.wait() == 0, web



# ---- a non-root USER, no capabilities, a read-only root --------------------


def non_root(container, tmp_on_tmpfs=True):
    """runc's spec as a hardened image runs it (Kubernetes' runAsNonRoot,
    readOnlyRootFilesystem, capabilities drop ALL): uid and gid 1000, no
    capability in any set, a read-only root, and a tmpfs on /tmp unless not
    wanted."""
    box = container(readonly_root=True)

    def change(spec):
        spec["process"]["user"] = {"uid": 1000, "gid": 1000}
        spec["process"]["capabilities"] = {key: [] for key in
                                           ("bounding", "effective", "permitted", "inheritable",
                                            "ambient")}
        if tmp_on_tmpfs:
            spec["mounts"].append({"destination": "/tmp", "type": "tmpfs", "source": "tmpfs",
                                   "options": ["nosuid", "nodev", "mode=1777"]})
    box.edit_spec(change)
    return box


def test_non_root_read_only_corral_supervises_and_is_reachable_through_tmp(container):
    box = non_root(container).start(*run_case("non-root"))
    box.wait_for_output("app/web", "up")
    assert box.output("app/prepare") == ["1000"], box
    assert box.output("app/web")[:1] == ["prepared"], box
    # What needs privileges is said once; where the socket went, once.
    log = box.log()
    assert sum("tasks run without cgroups of their own" in line for line in log) == 1, box
    socket_lines = [line for line in log if line.startswith("control socket: listening on ")]
    assert len(socket_lines) == 1, box
    assert socket_lines[0].startswith(
        "control socket: listening on /tmp/corral-1000/control.sock"), box
    assert "/run/corral/control.sock" in socket_lines[0], box
    # `runc exec` runs as the spec's user: the CLI finds the socket itself.
    wait_for(lambda: json.loads(box.exec("corral", "status", "--json").stdout)
             ["groups"][0]["tasks"][1]["ready"], what=lambda: f"app/web ready\n{box}")
    tasks = json.loads(box.exec("corral", "status", "--json").stdout)["groups"][0]["tasks"]
    assert {t["task"]: t["state"] for t in tasks} == {
        "app/prepare": "dead", "app/web": "running", "app/confined": "running"}, tasks
    # The default isolation works without privileges: nothing to drop, and
    # no_new_privs and the filter need none.
    assert box.output("app/confined") == [
        "CapEff:\t0000000000000000", "NoNewPrivs:\t1", "Seccomp:\t2"], box
    box.exec("corral", "restart", "app/web")
    wait_for(lambda: box.output("app/web").count("up") == 2, what=lambda: f"restarted\n{box}")
    box.kill("TERM")
    assert box.wait() == 0, box
    assert not any("Permission denied" in line and "socket" in line
                   and not line.startswith("control socket: listening") for line in log), box


def test_non_root_fully_read_only_corral_runs_without_socket_and_names_each_place(container):
    box = non_root(container, tmp_on_tmpfs=False).start(*run_case("idle"))
    box.wait_for_output("idle/wait", "up")
    off = [line for line in box.log() if line.startswith("control socket off: ")]
    assert len(off) == 1, box
    for place in ("/run/corral/control.sock", "/tmp/corral-1000/control.sock"):
        assert place in off[0], off
    status = box.exec("corral", "status", check=False)
    assert status.returncode == 1, status
    assert "cannot connect to /run/corral/control.sock" in status.stderr, status
    box.kill("TERM")
    assert box.wait() == 0, box


def test_non_root_corral_refuses_a_namespace_it_cannot_make_at_start_naming_the_task(container):
    box = non_root(container).start(*run_case("non-root-namespaces"))
    assert box.wait() == 1, box
    assert ("app/boxed: isolation: namespaces pid need cap_sys_admin, which corral (uid 1000) "
            "does not have: run corral with it, or add user to namespaces (with "
            "isolation.user maps)") in box.log(), box
    assert box.output("app/plain") == [] and box.output("app/boxed") == [], box
