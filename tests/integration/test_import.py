"""corral import: configs written from other supervisors' files, checked by
`corral check` and run by `corral run`. The systemd units are those Debian
ships on this machine (scripts/install-deps.sh installs redis-server,
containerd and prometheus); the supervisord, Procfile and s6-overlay inputs
are the examples of their own documentation (tests/integration/import_fixtures/)."""

import os
import pwd
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import RUN_TIMEOUT, free_port_block, wait_for

SYSTEM_UNITS = Path("/lib/systemd/system")
FIXTURES = Path(__file__).parent / "import_fixtures"


def corral_import(corral, *arguments, cwd=None):
    return subprocess.run(
        [str(corral.binary), "import", *map(str, arguments)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=cwd or corral.dir,
        env=corral.env(),
        timeout=RUN_TIMEOUT,
    )


def imported(corral, *arguments, expect=0):
    """The config `corral import ARGUMENTS` writes, after asserting its
    exit code and that `corral check` accepts it; returns (path, result)."""
    result = corral_import(corral, *arguments)
    assert result.returncode == expect, result.stderr
    path = corral.config(result.stdout)
    check = corral.check(path)
    assert check.returncode == 0, f"{check.stderr}\n{result.stdout}"
    return path, result


def dropped_lines(stderr):
    return [line for line in stderr.splitlines() if ": not carried over: " in line]


def assert_drops_name_their_lines(stderr):
    """Each FILE:LINE: KEY=... names the line where KEY is written."""
    drops = dropped_lines(stderr)
    for line in drops:
        if ": DevicePolicy=auto (systemd's default: every device): " in line:
            continue  # what the unit leaves to systemd's default: no line of it
        match = re.match(r"^(.+?):(\d+): ([A-Za-z0-9]+)=", line)
        assert match, line
        file, number, key = match.group(1), int(match.group(2)), match.group(3)
        written = Path(file).read_text().splitlines()[number - 1]
        assert written.lstrip().startswith(key + "="), (line, written)
    return drops


def proc_status(pid):
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def need(path):
    if not Path(path).exists():
        pytest.skip(f"{path} is not installed (scripts/install-deps.sh installs it)")


# ---- systemd -------------------------------------------------------------


def test_redis_unit_runs_with_its_sandbox_ready_by_notify_as_redis_without_capabilities(
        corral, tmp_path):
    need(SYSTEM_UNITS / "redis-server.service")
    units = tmp_path / "units"
    units.mkdir()
    shutil.copy(SYSTEM_UNITS / "redis-server.service", units)
    # A drop-in, read as systemd reads it: a port of this test's own, the
    # log on stdout, and a file limit this machine's root may set (a
    # container's root may lack cap_sys_resource to raise it to 65535).
    port = free_port_block(1)
    hard_limit = int(subprocess.check_output(["sh", "-c", "ulimit -Hn"], text=True))
    dropins = units / "redis-server.service.d"
    dropins.mkdir()
    (dropins / "test.conf").write_text(
        "[Service]\n"
        "ExecStart=\n"
        f"ExecStart=/usr/bin/redis-server /etc/redis/redis.conf --supervised systemd "
        f"--daemonize no --port {port} --logfile \"\" --pidfile /run/redis/test-{port}.pid\n"
        f"LimitNOFILE={min(hard_limit, 65535)}\n")
    path, result = imported(corral, units / "redis-server.service", expect=2)
    drops = assert_drops_name_their_lines(result.stderr)
    # What corral's isolation cannot say is named, never lost.
    for key in ("RestrictAddressFamilies", "MemoryDenyWriteExecute", "PrivateUsers"):
        assert any(f": {key}=" in line for line in drops), result.stderr
    assert f"{len(drops)} settings not carried over" in result.stderr
    assert f"--port', '{port}" not in result.stdout  # a list, not a shell line
    assert f"--port, \"{port}\"" in result.stdout or f"\"--port\", \"{port}\"" in result.stdout

    running = corral.start(path)
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("redis-server/redis-server").get("ready"),
             timeout=RUN_TIMEOUT, what="redis ready")
    ready = running.events().of_task("redis-server", "ready")
    assert ready and "READY=1" in ready[0]["message"], ready
    pong = subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT)
    assert pong.stdout.strip() == "PONG", pong
    pid = corral.task_status("redis-server/redis-server")["pid"]
    status = proc_status(pid)
    assert int(status["Uid"].split()[0]) == pwd.getpwnam("redis").pw_uid
    for capabilities in ("CapEff", "CapPrm", "CapBnd", "CapAmb"):
        assert int(status[capabilities], 16) == 0, (capabilities, status[capabilities])
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2"
    # ProtectSystem=strict: / is read-only for it; ReadWritePaths= is not.
    root_line = next(line for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
                     if line.split()[4] == "/")
    assert "ro" in root_line.split()[5].split(","), root_line
    # RuntimeDirectory=redis with RuntimeDirectoryMode=2755, owned by redis.
    runtime = os.stat("/run/redis")
    assert runtime.st_uid == pwd.getpwnam("redis").pw_uid
    assert runtime.st_mode & 0o7777 == 0o2755
    running.send(15)
    assert running.wait().returncode == 0


@pytest.mark.parametrize("unit", ["containerd.service", "prometheus.service",
                                  "redis-server.service", "redis-server@main.service"])
def test_debian_units_import_to_configs_check_accepts(corral, unit):
    template = unit.replace("@main", "@")
    need(SYSTEM_UNITS / template)
    path, result = imported(corral, SYSTEM_UNITS / unit, expect=2)
    assert_drops_name_their_lines(result.stderr)
    text = path.read_text()
    if unit == "containerd.service":
        # ExecStartPre=-/sbin/modprobe overlay: a prestart one-shot whose
        # failure is ignored; KillMode=process and Delegate= are refused.
        assert "'/sbin/modprobe' 'overlay' || exit 0" in text
        assert "KillMode=process: not carried over" in result.stderr
        assert "Delegate=yes: not carried over" in result.stderr
        # isolation: for its Limit*= gives it corral's device policy: said.
        assert "DevicePolicy=auto (systemd's default: every device): not carried over" in \
            result.stderr
        assert "nofile: 1048576" in text
    if unit == "prometheus.service":
        # $ARGS from EnvironmentFile=, split as systemd splits it.
        assert "exec '/usr/bin/prometheus' $ARGS" in text
        assert "env_file: [/etc/default/prometheus]" in text
        assert "reload with `corral signal prometheus/prometheus SIGHUP`" in text
    if unit == "redis-server@main.service":
        # %i of the instance, in the command and the runtime directory.
        assert "/etc/redis/redis-main.conf" in text
        assert "'/run/redis-main'" in text


def test_every_unit_debian_ships_here_imports_to_a_config_check_accepts(corral):
    """The sweep: each .service of /lib/systemd/system (a template with an
    instance) gives a config `corral check` takes, or a clear error: masked,
    or nothing to run."""
    units = sorted(SYSTEM_UNITS.glob("*.service"))
    if len(units) < 20:
        pytest.skip("too few systemd units installed here")
    checked = []
    for unit in units:
        name = unit.name.replace("@.service", "@x.service")
        result = corral_import(corral, unit.parent / name)
        if result.returncode == 1:
            assert ("the unit is masked" in result.stderr or
                    "has no ExecStart=" in result.stderr), result.stderr
            continue
        assert result.returncode in (0, 2), (unit, result.stderr)
        assert_drops_name_their_lines(result.stderr)
        check = corral.check(corral.config(result.stdout))
        assert check.returncode == 0, (unit, check.stderr)
        checked.append(unit.parent / name)
    assert len(checked) >= len(units) * 3 // 4
    # All of them at once: their After=/Before=/Requires= among each other
    # make one graph that corral check accepts (no cycle, no unknown task).
    together = corral_import(corral, *checked)
    assert together.returncode == 2, together.stderr
    check = corral.check(corral.config(together.stdout))
    assert check.returncode == 0, check.stderr
    assert f"({len(checked)} groups," in check.stdout


def write_unit(directory, name, text):
    path = directory / name
    path.write_text(text)
    return path


def test_units_ordered_by_after_and_requires_run_in_that_order(corral, tmp_path):
    marks = tmp_path / "marks"
    first = write_unit(tmp_path, "migrate.service",
                       "[Service]\nType=oneshot\n"
                       f"ExecStart=/bin/sh -c 'sleep 0.3; echo migrate >> {marks}'\n")
    second = write_unit(tmp_path, "app.service",
                        "[Unit]\nAfter=migrate.service\nRequires=migrate.service\n"
                        "[Service]\nType=oneshot\n"
                        f"ExecStartPre=/bin/sh -c 'echo app-pre >> {marks}'\n"
                        f"ExecStart=/bin/sh -c 'echo app >> {marks}'\n")
    path, result = imported(corral, first, second)
    assert "migrate/migrate: {condition: completed}" in path.read_text()
    assert corral.run(path).returncode == 0
    # ExecStartPre= runs after migrate too, as systemd runs it.
    assert marks.read_text().split() == ["migrate", "app-pre", "app"]


def test_exec_prefixes_quoting_environment_and_specifiers(corral, tmp_path):
    out = tmp_path / "out"
    unit = write_unit(
        tmp_path, "greet@.service",
        "[Service]\n"
        "Type=oneshot\n"
        'Environment="GREETING=hello world" NAME=%i\n'
        "ExecStartPre=-/bin/false\n"
        # a one-shot task with the unit's environment, as systemd runs it
        f"ExecStartPre=/bin/sh -c 'echo \"pre $$GREETING\" >> {out}'\n"
        # a continued line, quotes, a C escape, ${VAR} and $VAR as systemd reads them
        f"ExecStart=-/bin/sh -c 'printf \"%%s|\" \"$$1\" \"$$2\" \"$$3\" %I \\\n"
        f"  >> {out}; exit 3' sh \"${{GREETING}}\" $NAME \"a\\tb\"\n")
    path, result = imported(corral, tmp_path / "greet@a-b.service")
    assert corral.run(path).returncode == 0  # ExecStart=-: exit 3 counts as success
    assert out.read_text() == "pre hello world\nhello world|a-b|a\tb|a/b|"


def test_environment_file_overrides_environment_as_in_systemd(corral, tmp_path):
    out = tmp_path / "out"
    env = tmp_path / "app.env"
    env.write_text("A=from-file\n")
    unit = write_unit(tmp_path, "envs.service",
                      "[Service]\nType=oneshot\nEnvironment=A=from-unit B=from-unit\n"
                      f"EnvironmentFile={env}\nEnvironmentFile=-{tmp_path}/missing.env\n"
                      f"ExecStart=/bin/sh -c 'echo \"$$A $$B\" > {out}'\n")
    path, result = imported(corral, unit)
    assert "missing.env: skipped" in path.read_text()
    assert corral.run(path).returncode == 0
    assert out.read_text() == "from-file from-unit\n"


def test_settings_corral_cannot_carry_make_exit_2_and_lossy_0(corral, tmp_path):
    unit = write_unit(tmp_path, "odd.service",
                      "[Service]\n"
                      "ExecStart=@/bin/sleep sleeper 1\n"
                      "Type=forking\n"
                      "KillMode=none\n"
                      "FancyNewSetting=yes\n")
    result = corral_import(corral, unit)
    assert result.returncode == 2
    drops = dropped_lines(result.stderr)
    assert f"{unit}:2: ExecStart=@/bin/sleep sleeper 1: not carried over: the @ prefix" in \
        result.stderr
    assert f"{unit}:3: Type=forking: not carried over: corral follows the process" in \
        result.stderr
    assert f"{unit}:4: KillMode=none" in result.stderr
    assert f"{unit}:5: FancyNewSetting=yes: not carried over: corral has no equivalent" in \
        result.stderr
    assert len(drops) == 4
    assert corral.check(corral.config(result.stdout)).returncode == 0
    lossy = corral_import(corral, "--lossy", unit)
    assert lossy.returncode == 0 and lossy.stdout == result.stdout
    assert len(dropped_lines(lossy.stderr)) == 4


def test_several_inputs_of_every_kind_make_one_config_without_overwriting(corral):
    path, result = imported(corral, FIXTURES / "s6-v3", FIXTURES / "s6-v2",
                            FIXTURES / "procfile", FIXTURES / "procfile" / "Procfile",
                            FIXTURES / "supervisord" / "sample.conf")
    groups = [line.strip().rstrip(":") for line in path.read_text().splitlines()
              if line.startswith("  ") and not line.startswith("   ") and
              not line.strip().startswith("#")]
    assert groups == ["s6", "s6-2", "procfile", "procfile-2", "theprogramname"], groups


def test_a_unit_carried_whole_exits_0(corral, tmp_path):
    unit = write_unit(tmp_path, "plain.service",
                      "[Unit]\nDescription=plain\n[Service]\nExecStart=/bin/true\n"
                      "Restart=on-failure\nUser=nobody\nSuccessExitStatus=DATAERR SIGUSR1 7\n"
                      "[Install]\nWantedBy=multi-user.target\n")
    path, result = imported(corral, unit)
    assert result.stderr == ""
    assert "user: nobody" in path.read_text()
    assert "success_exit: [65, SIGUSR1, 7]" in path.read_text()


def test_unreadable_or_unknown_input_exits_1_naming_it(corral, tmp_path):
    missing = corral_import(corral, tmp_path / "missing.service")
    assert missing.returncode == 1
    assert f"{tmp_path}/missing.service: cannot read" in missing.stderr
    assert missing.stdout == ""
    broken = write_unit(tmp_path, "broken.service", "[Service\nExecStart=/bin/true\n")
    result = corral_import(corral, broken)
    assert result.returncode == 1
    assert f"{broken}:1: a section header without ']'" in result.stderr
    other = write_unit(tmp_path, "notes.txt", "hello\n")
    result = corral_import(corral, other)
    assert result.returncode == 1 and "cannot tell what this is" in result.stderr
    template = corral_import(corral, SYSTEM_UNITS / "redis-server@.service")
    if (SYSTEM_UNITS / "redis-server@.service").exists():
        assert template.returncode == 1
        assert "a template: name an instance, redis-server@INSTANCE.service" in template.stderr
    usage = corral_import(corral, "--from", "upstart", other)
    assert usage.returncode == 2 and "--from upstart" in usage.stderr


# ---- supervisord ---------------------------------------------------------


def test_supervisord_sample_imports_every_documented_program_key(corral):
    sample = FIXTURES / "supervisord" / "sample.conf"
    path, result = imported(corral, sample)
    text = path.read_text()
    # [program:theprogramname] as echo_supervisord_conf documents it.
    for expected in ("command: [/bin/cat]", "cwd: /tmp", "user: chrism", 'A: "1"',
                     "kill: {signal: SIGQUIT, timeout: 10s, mode: mixed}",
                     "log: {dir: /a, max_size: 1048576, keep: 10}", 'umask: "0022"',
                     "policy: on-failure"):
        assert expected in text, (expected, text)
    assert result.stderr == ""


def test_supervisord_include_group_numprocs_and_expansions_run(corral, tmp_path):
    marks = tmp_path / "marks"
    marks.touch()
    conf = FIXTURES / "supervisord" / "debian-supervisord.conf"
    # %(ENV_MARKS)s is expanded from the environment corral import runs in.
    result = subprocess.run([str(corral.binary), "import", str(conf)], capture_output=True,
                            text=True, env=corral.env({"MARKS": str(marks)}),
                            timeout=RUN_TIMEOUT)
    assert result.returncode == 0, result.stderr
    path = corral.config(result.stdout)
    assert corral.check(path).returncode == 0
    running = corral.start(path, env={"MARKS": str(marks)})
    corral.wait_control(running)
    wait_for(lambda: len(marks.read_text().splitlines()) >= 4, timeout=RUN_TIMEOUT,
             what="every program started")
    lines = sorted(marks.read_text().splitlines())
    conf_d = conf.parent / "conf.d"
    assert lines == ["api hello, world|Paris|web|%s" % conf_d, "once",
                     "worker 01 of 2", "worker 02 of 2"], lines
    # [group:web] holds api and both worker processes; once is a group of its own.
    names = {entry["task"] for group in corral.status()["groups"] for entry in group["tasks"]}
    assert {"web/api", "web/worker_01", "web/worker_02", "once/once"} <= names, names
    # exitcodes=0,3: once's exit 3 is expected, so it is not restarted.
    assert corral.task_status("once/once")["restarts"] == 0
    assert corral.task_status("once/once")["state"] == "dead"
    running.send(15)
    assert running.wait().returncode == 0
    # stopsignal=INT
    assert any("SIGINT" in event.get("message", "")
               for event in running.events().of_task("worker_01")), running.events()


def test_supervisord_reports_what_it_cannot_carry_with_its_line(corral, tmp_path):
    conf = tmp_path / "supervisord.conf"
    conf.write_text("[supervisord]\nnodaemon=true\nminfds=65536\n\n"
                    "[program:app]\ncommand=/bin/true\nstdout_events_enabled=true\n"
                    "exitcodes=2\nautorestart=unexpected\nmystery=1\n\n"
                    "[eventlistener:watch]\ncommand=/bin/cat\nevents=PROCESS_STATE\n")
    result = corral_import(corral, conf)
    assert result.returncode == 2
    drops = dropped_lines(result.stderr)
    assert f"{conf}:3: minfds=65536: not carried over" in result.stderr
    assert f"{conf}:7: stdout_events_enabled=true: not carried over" in result.stderr
    assert f"{conf}:8: exitcodes=2: not carried over: exit code 0 is always a success" in \
        result.stderr
    assert f"{conf}:10: mystery=1: not carried over: corral has no equivalent" in result.stderr
    assert f"{conf}:12: [eventlistener:watch]: not carried over" in result.stderr
    assert len(drops) == 5
    assert corral.check(corral.config(result.stdout)).returncode == 0
    bad = tmp_path / "bad.conf"
    bad.write_text("[program:x]\ncommand=/bin/echo %(nope)s\n")
    result = corral_import(corral, bad)
    assert result.returncode == 1
    assert f"{bad}:2: command: %(nope)s cannot be expanded" in result.stderr


# ---- Procfile ------------------------------------------------------------


def test_procfile_from_foremans_documentation_checks(corral):
    path, result = imported(corral, FIXTURES / "procfile")
    text = path.read_text()
    assert 'command: "bundle exec thin start -p $PORT"' in text
    assert 'PORT: "5000"' in text and 'PORT: "5100"' in text
    assert str(FIXTURES / "procfile" / ".env") in text


def test_procfile_runs_with_env_file_and_foreman_ports(corral, tmp_path):
    app = tmp_path / "shop"
    app.mkdir()
    marks = tmp_path / "marks"
    (app / "Procfile").write_text(
        f"web: echo \"web $PORT $GREETING\" >> {marks}\n"
        "# a comment\n"
        f"worker: echo \"worker $PORT $GREETING\" >> {marks}\n")
    (app / ".env").write_text("GREETING='hi there'\n")
    path, result = imported(corral, app / "Procfile")
    assert "  shop:" in path.read_text()
    assert corral.run(path).returncode == 0
    assert sorted(marks.read_text().splitlines()) == ["web 5000 hi there",
                                                      "worker 5100 hi there"]


# ---- s6-overlay ----------------------------------------------------------


def test_s6_overlay_trees_laid_out_as_its_readme_import(corral):
    path, result = imported(corral, FIXTURES / "s6-v3")
    text = path.read_text()
    assert "readiness: {notify: fd, fd: 3}" in text
    assert "after: {myapp-init: completed}" in text
    assert "command: [/etc/s6-overlay/scripts/myapp-init]" in text
    path, result = imported(corral, FIXTURES / "s6-v2")
    text = path.read_text()
    assert "lifecycle: {hook: prestart}" in text
    assert "name: finish" in text and "stage: exited" in text


def executable(path, text):
    path.write_text(text)
    path.chmod(0o755)
    return path


def test_s6_rc_tree_runs_oneshot_before_longrun_ready_on_its_fd(corral, tmp_path):
    marks = tmp_path / "marks"
    rc = tmp_path / "etc" / "s6-overlay" / "s6-rc.d"
    for service in ("web/dependencies.d", "prepare/dependencies.d", "user/contents.d",
                    "spare", "legacy"):
        (rc / service).mkdir(parents=True)
    (rc / "web" / "type").write_text("longrun\n")
    executable(rc / "web" / "run",
               "#!/command/with-contenv sh\n"
               f"echo \"web $GREETING\" >> {marks}\n"
               "echo >&3\n"
               "exec sleep 300\n")
    (rc / "web" / "notification-fd").write_text("3\n")
    (rc / "web" / "timeout-down").write_text("2000\n")
    (rc / "web" / "down-signal").write_text("SIGINT\n")
    executable(rc / "web" / "finish", f"#!/bin/sh\necho \"finish $1 $2\" >> {marks}\n")
    (rc / "web" / "dependencies.d" / "base").touch()
    (rc / "web" / "dependencies.d" / "prepare").touch()
    (rc / "prepare" / "type").write_text("oneshot\n")
    script = executable(tmp_path / "prepare.sh", f"#!/bin/sh\nsleep 0.3\necho prepare >> {marks}\n")
    (rc / "prepare" / "up").write_text(f"{script}\n")
    (rc / "spare" / "type").write_text("longrun\n")
    executable(rc / "spare" / "run", f"#!/bin/sh\necho spare >> {marks}\n")
    (rc / "legacy" / "type").write_text("longrun\n")
    executable(rc / "legacy" / "run", "#!/bin/sh\nexec sleep 300\n")
    (rc / "legacy" / "producer-for").write_text("legacy-log\n")
    (rc / "user" / "type").write_text("bundle\n")
    (rc / "user" / "contents.d" / "web").touch()
    (rc / "user" / "contents.d" / "legacy").touch()
    result = corral_import(corral, tmp_path)
    assert result.returncode == 2
    assert f"{rc}/legacy/producer-for: producer-for: not carried over" in result.stderr
    path = corral.config(result.stdout)
    assert corral.check(path).returncode == 0
    running = corral.start(path, env={"GREETING": "hi"})
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("s6/web").get("ready"), timeout=RUN_TIMEOUT,
             what="web ready by its notification fd")
    # prepare (a dependency) completed first; spare, in no bundle, never started.
    assert marks.read_text().splitlines() == ["prepare", "web hi"]
    assert corral.task_status("s6/spare")["state"] != "running"
    running.send(15)
    assert running.wait().returncode == 0
    # down-signal SIGINT; finish got s6-supervise's arguments: 256 and the signal.
    assert marks.read_text().splitlines()[-1] == "finish 256 2"
