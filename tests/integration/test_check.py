"""`corral check` and invalid configs: FILE:LINE:COLUMN: diagnostics, exit
code 1, and nothing started by `corral run`."""

import subprocess

import pytest

from conftest import sanitizer_report
from helpers_check import diagnostics


def test_check_accepts_the_shipped_example(corral, repo_root):
    result = corral.check(repo_root / "examples" / "lifecycle.yaml")
    assert result.returncode == 0, result.stderr


def test_the_readmes_config_is_valid(corral, repo_root, tmp_path):
    """The README shows a config; it must stay one corral accepts."""
    readme = (repo_root / "README.md").read_text()
    section = readme.split("## A config", 1)[1]
    block = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "readme.yaml"
    path.write_text(block)
    result = corral.check(path)
    assert result.returncode == 0, result
    assert "1 group, 5 tasks" in result.stdout, result


def test_check_accepts_a_config_using_every_documented_key(corral, tmp_path):
    config = """\
shutdown_timeout: 30s
termination_log: /run/corral/termination-log
groups:
  web:
    restart: {policy: on-failure, attempts: 3, interval: 1m, delay: 1s, max_delay: 30s, mode: fail}
    resources: {memory: 512M, cpu: 2, optional: true}
    isolation: {namespaces: [pid, mount], rlimits: {core: 0}, umask: "0022"}
    tasks:
      setup:   {command: ["/bin/sh", "-c", "true"], lifecycle: {hook: prestart}}
      proxy:   {command: ["/bin/sleep", "1"], lifecycle: {hook: prestart, sidecar: true},
                readiness: {notify: fd, fd: 3, timeout: 10s}}
      relay:   {command: ["/bin/sleep", "1"], lifecycle: {hook: poststart, sidecar: true},
                readiness: {notify: systemd}}
      app:
        command: ["/bin/sleep", "1"]
        env: {K: V}
        cwd: /tmp
        user: "1000:1000"
        groups: [video, 44]
        restart: {policy: always, delay: 500ms, mode: delay}
        kill: {signal: SIGTERM, timeout: 10s}
        resources: {memory: 256M, memory_high: 200M, memory_swap: 0, cpu: 0.5, cpu_weight: 100,
                    pids: 128, cpuset: "0-1", io_weight: 100, optional: false}
        readiness: {exec: ["/bin/true"], interval: 1s, timeout: 30s}
        health: {exec: ["/bin/true"], interval: 10s, timeout: 2s, failures: 3}
        isolation:
          namespaces: [pid, mount, uts, ipc, net, cgroup]
          hostname: app
          init: true
          capabilities: {drop: [all], add: [net_bind_service]}
          seccomp: {default_action: errno, allow: [read, write, exit_group], deny: [mount]}
          no_new_privileges: true
          rlimits: {nofile: 4096, nproc: [100, 200], core: 0, stack: unlimited, as: 1G}
          umask: "0027"
      worker:  {command: ["/bin/true"], lifecycle: {hook: prestart},
                isolation: {init: false, seccomp: unconfined, capabilities: {drop: [CAP_NET_RAW]}}}
      notice:  {command: ["/bin/true"], lifecycle: {hook: poststart}, isolation: {seccomp: default}}
      announce: {command: "echo shell string", lifecycle: {hook: poststart}}
      mapped:  {command: ["/bin/true"], lifecycle: {hook: poststart},
                isolation: {namespaces: [user], user: {uid_map: "0 100000 65536",
                                                       gid_map: ["0 100000 65536"]}}}
      cleanup:  {command: ["/bin/true"], lifecycle: {hook: poststop}}
"""
    result = corral.check(corral.config(config))
    assert result.returncode == 0, result.stderr


UNKNOWN_KEY = """\
groups:
  web:
    tasks:
      app:
        comand: ["/bin/true"]
"""


def test_check_refuses_an_unknown_key_with_its_location(corral, tmp_path):
    path = corral.config(UNKNOWN_KEY, name="bad.yaml")
    result = corral.check(path)
    assert result.returncode == 1, result
    found = diagnostics(result.stderr, path)
    assert found, result.stderr
    line, column, message = found[0]
    assert (line, column) == (5, 9), found
    assert "comand" in message and "web/app" in message, found


@pytest.mark.parametrize(
    "text, line, column, words",
    [
        ("shutdown_timeout: 10 parsecs\ngroups:\n  g:\n    tasks:\n"
         "      a: {command: [/bin/true]}\n", 1, 19, ["shutdown_timeout"]),
        ("groups:\n  g:\n    tasks:\n      a:\n        command: [/bin/true]\n"
         "        restart: {policy: sometimes}\n", 6, None, ["sometimes"]),
        ("groups:\n  g:\n    tasks:\n      a:\n        command: [/bin/true]\n"
         "        kill: {signal: SIGFOO}\n", 6, None, ["SIGFOO"]),
        ("groups:\n  g:\n    tasks:\n      a:\n        command: [/bin/true]\n"
         "        lifecycle: {hook: sometime}\n", 6, None, ["sometime"]),
        ("groups:\n  g:\n    tasks:\n      a:\n        command: [/bin/true]\n"
         "        resources: {memory: 10Q}\n", 6, 29, ["a: resources.memory", "10Q", "unknown unit"]),
        ("groups:\n  g:\n    resources: {memory: 256M, memory_high: 1G}\n    tasks:\n"
         "      a: {command: [/bin/true]}\n", 3, 44, ["group g: resources.memory_high",
                                                   "must not exceed"]),
        ("groups:\n  g:\n    tasks:\n      a:\n        command: [/bin/true]\n"
         "        isolation: {seccomp: {default_action: errno, deny: [mout]}}\n", 6, 61,
         ["a: isolation.seccomp.deny[0]", "unknown syscall \"mout\"", "did you mean \"mount\""]),
        ("groups:\n  g:\n    tasks:\n      a:\n        command: [/bin/true]\n"
         "        readiness: {notify: systemd}\n"
         "        isolation: {namespaces: [net, mount], rootfs: /tmp}\n",
         6, 20, ["a: readiness.notify", "NOTIFY_SOCKET", "its own rootfs", "notify: fd"]),
        ("groups:\n  g:\n    isolation: {no_new_privileges: false}\n    tasks:\n"
         "      a: {command: [/bin/true]}\n", 3, 36,
         ["a: isolation.no_new_privileges", "(set in group g)", "seccomp: unconfined"]),
        ("grups:\n  g: {}\n", 1, 1, ["grups"]),
        ("groups:\n  g:\n    tasks:\n      a:\n        command: [/bin/true]\n  bad: [\n",
         None, None, []),
    ],
    ids=["bad-duration", "bad-policy", "bad-signal", "bad-hook", "bad-memory-unit",
         "memory-high-above-memory", "unknown-syscall", "notify-in-own-netns-and-rootfs", "filter-without-no-new-privs", "top-level-typo", "yaml-syntax"],
)
def test_check_refuses_invalid_values_with_a_location(corral, text, line, column, words):
    path = corral.config(text, name="bad.yaml")
    result = corral.check(path)
    assert result.returncode == 1, result
    found = diagnostics(result.stderr, path)
    assert found, result.stderr
    if line is not None:
        assert found[0][0] == line, found
    if column is not None:
        assert found[0][1] == column, found
    for word in words:
        assert word in found[0][2], found


def test_check_reports_every_error(corral, tmp_path):
    text = UNKNOWN_KEY + "      db:\n        command: [/bin/true]\n        colour: blue\n"
    path = corral.config(text, name="bad.yaml")
    result = corral.check(path)
    assert result.returncode == 1
    lines = [line for line, _, _ in diagnostics(result.stderr, path)]
    assert 5 in lines and 8 in lines, result.stderr


def test_check_of_a_missing_file(corral, tmp_path):
    result = corral.check(tmp_path / "missing.yaml")
    assert result.returncode == 1
    assert "missing.yaml" in result.stderr


def test_run_refuses_an_invalid_config_and_starts_nothing(corral, tmp_path):
    marker = tmp_path / "ran"
    text = f"""\
groups:
  web:
    tasks:
      first:
        command: ["/bin/sh", "-c", "touch {marker}"]
        lifecycle: {{hook: prestart}}
      app:
        command: ["/bin/sh", "-c", "touch {marker}"]
        restart: {{policy: never, attemps: 2}}
"""
    path = corral.config(text, name="bad.yaml")
    result = corral.run(path)
    assert result.returncode == 1, result
    found = diagnostics(result.stderr, path)
    assert found and found[0][0] == 9 and "attemps" in found[0][2], result
    assert not marker.exists()
    assert result.events == [], result.events
    assert result.stdout == ""


# Once crashed (SIGSEGV): supervisor_close() cancelled a timer never initialised.
def test_run_with_an_unwritable_event_log_starts_nothing(corral, tmp_path):
    marker = tmp_path / "ran"
    config = corral.config({"groups": {"g": {"tasks": {"a": {
        "command": ["/bin/sh", "-c", f"touch {marker}"], "restart": {"policy": "never"}}}}}})
    result = subprocess.run(
        [str(corral.binary), "run", "--events", str(tmp_path / "no-dir" / "events"), str(config)],
        capture_output=True, text=True, timeout=30, env=corral.env(), cwd=tmp_path,
    )
    assert not sanitizer_report(result.stderr), result.stderr
    assert result.returncode == 1, result
    assert "no-dir" in result.stderr
    assert not marker.exists()


# (`run a.yaml b.yaml` is no usage error: several files are one config.)
@pytest.mark.parametrize("args", [["run"], ["check", "--print"], ["frobnicate"], [],
                                  ["check"], ["run", "--no-such-option", "a.yaml"]])
def test_usage_errors_exit_2(corral_bin, args):
    result = subprocess.run([str(corral_bin), *args], capture_output=True, text=True, timeout=30)
    assert not sanitizer_report(result.stderr), result.stderr
    assert result.returncode == 2, (args, result)
    if args == ["frobnicate"]:  # one line, and where the commands are
        assert 'unknown command "frobnicate"' in result.stderr, result.stderr
        assert "Run 'corral --help' for the commands." in result.stderr, result.stderr
    else:
        assert "usage" in result.stderr, result.stderr


def test_each_missing_file_of_several_is_named(corral, tmp_path):
    result = subprocess.run([str(corral.binary), "check", str(tmp_path / "a.yaml"),
                             str(tmp_path / "b.yaml")], capture_output=True, text=True,
                            timeout=30, env=corral.env())
    assert result.returncode == 1, result
    assert f"{tmp_path}/a.yaml: cannot read: No such file or directory" in result.stderr
    assert f"{tmp_path}/b.yaml: cannot read: No such file or directory" in result.stderr


def test_run_of_a_missing_config_exits_1(corral, tmp_path):
    result = corral.run(tmp_path / "missing.yaml")
    assert result.returncode == 1, result
    assert "missing.yaml" in result.stderr
