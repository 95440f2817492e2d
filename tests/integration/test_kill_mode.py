"""kill.mode (systemd's KillMode=): `mixed`, the default, signals the main
process alone, as Docker and Kubernetes signal PID 1; `control-group`
signals every process of the task's cgroup, so that the program behind an
`sh -c` wrapper gets its graceful stop (supervisord's stopasgroup)."""

from conftest import sh, wait_for

# sh runs the program as its child (not exec: a command follows it); the
# program writes down its SIGTERM before it exits.
PROGRAM = ("import signal, sys, time\n"
           "def term(*_):\n"
           "    open(sys.argv[1], 'w').write('term'); sys.exit(0)\n"
           "signal.signal(signal.SIGTERM, term)\n"
           "open(sys.argv[1] + '.up', 'w').close()\n"
           "while True: time.sleep(0.05)\n")


def stop_a_wrapper(corral, tmp_path, **kill):
    marker = tmp_path / "program"
    script = tmp_path / "program.py"
    script.write_text(PROGRAM)
    command = sh(f"/usr/bin/python3 {script} {marker}; echo wrapper-done")
    task = {"command": command, **({"kill": kill} if kill else {})}
    running = corral.start({"groups": {"g": {"tasks": {"wrapped": task}}}})
    wait_for(lambda: (tmp_path / "program.up").exists(), what="the program to start")
    running.send(15)
    assert running.wait().returncode == 0
    return marker.exists()


def test_control_group_gives_the_program_behind_sh_its_sigterm(corral, tmp_path):
    assert stop_a_wrapper(corral, tmp_path, mode="control-group")


def test_mixed_the_default_signals_the_main_process_alone(corral, tmp_path):
    assert not stop_a_wrapper(corral, tmp_path)


def test_check_names_a_wrong_kill_mode_where_it_is(corral, tmp_path):
    path = tmp_path / "corral.yaml"
    path.write_text("groups:\n  g:\n    tasks:\n      t:\n        command: [sleep, '1']\n"
                    "        kill: {mode: process}\n")
    result = corral.cli("check", str(path))
    assert result.returncode != 0, result
    assert f"{path}:6:22: g/t: kill.mode: \"process\" is not a corral kill mode" in \
        result.stderr, result.stderr
    path.write_text(path.read_text().replace("process", "group"))
    result = corral.cli("check", str(path))
    assert "kill.mode: unknown kill mode \"group\"" in result.stderr, result.stderr
