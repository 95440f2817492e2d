"""`instances: N` (supervisord's numprocs): N copies of a task, named
TASK@0 ... TASK@N-1, each with CORRAL_INSTANCE in its environment;
addressed one by one (group/task@1) or all together (group/task) by
status, restart, stop, start, signal and logs; `after:` naming the task
waits for every instance."""

import signal

from conftest import free_port_block, sh, wait_for

IDLE = "exec sleep 1000"


def pids(corral, names):
    return {name: corral.task_status(name)["pid"] for name in names}


def test_instances_run_with_their_number_and_are_addressed_together(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {
        "web": {"instances": 3,
                "command": sh(f'echo "I am $CORRAL_TASK, instance $CORRAL_INSTANCE"; {IDLE}')},
        # Keeps the group up while every instance is stopped.
        "keeper": {"command": sh(IDLE)}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    names = ["g/web@0", "g/web@1", "g/web@2"]
    wait_for(lambda: all(corral.task_status(n)["state"] == "running" for n in names),
             what="three instances running")
    wait_for(lambda: len(corral.cli("logs", "g/web").stdout.splitlines()) == 3,
             what="a line from each")
    lines = corral.cli("logs", "g/web").stdout.splitlines()
    assert sorted(lines) == [f"g/web@{i} | I am web@{i}, instance {i}" for i in range(3)], lines
    status = corral.cli("status", "g/web")
    assert status.returncode == 0 and all(f"web@{i}" in status.stdout for i in range(3))

    # One instance: only it restarts.
    before = pids(corral, names)
    assert corral.cli("restart", "g/web@1").returncode == 0
    wait_for(lambda: corral.task_status("g/web@1")["pid"] not in (None, before["g/web@1"]),
             what="web@1 restarted")
    assert pids(corral, ["g/web@0", "g/web@2"]) == {n: before[n] for n in ["g/web@0", "g/web@2"]}

    # All of them, with one reply naming each.
    before = pids(corral, names)
    restart = corral.cli("restart", "g/web")
    assert restart.returncode == 0, restart
    assert all(f"g/web@{i}" in restart.stdout for i in range(3)), restart.stdout
    wait_for(lambda: all(corral.task_status(n)["pid"] not in (None, before[n]) for n in names),
             what="every instance restarted")
    assert corral.cli("stop", "g/web").returncode == 0
    wait_for(lambda: all(corral.task_status(n)["state"] == "dead" for n in names),
             what="every instance stopped")
    assert corral.cli("start", "g/web").returncode == 0
    wait_for(lambda: all(corral.task_status(n)["state"] == "running" for n in names),
             what="every instance started again")
    follow = corral.cli("logs", "-f", "g/web")
    assert follow.returncode == 1 and "follow one (g/web@0) or the group (g)" in follow.stderr
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_after_a_task_with_instances_waits_for_every_one(corral, tmp_path):
    done = tmp_path / "done"
    done.mkdir()
    config = {"groups": {"g": {"tasks": {
        "shard": {"instances": 3, "lifecycle": {"hook": "prestart"},
                  "command": sh(f"sleep 0.$CORRAL_INSTANCE; touch {done}/$CORRAL_INSTANCE")},
        "merge": {"after": {"shard": "completed"}, "restart": {"policy": "never"},
                  "command": sh(f"ls {done} | tr '\\n' ' '")},
    }}}}
    result = corral.run(config)
    assert result.returncode == 0, result
    assert "g/merge | 0 1 2 " in result.stdout_lines(), result.stdout


def test_instances_must_be_a_count(corral):
    for value, said in [(0, "must be a whole number from 1 to 1000, not \"0\""),
                        ("many", "must be a whole number from 1 to 1000, not \"many\"")]:
        result = corral.check({"groups": {"g": {"tasks": {"t": {
            "command": ["true"], "instances": value}}}}})
        assert result.returncode == 1 and f"g/t: instances: {said}" in result.stderr, result


def test_a_reload_changes_the_count(corral):
    config = {"groups": {"g": {"tasks": {"web": {"instances": 2, "command": sh(IDLE)}}}}}
    running = corral.start(corral.config(config, name="reload.yaml"))
    corral.wait_control(running)
    wait_for(lambda: corral.task_status("g/web@1")["state"] == "running", what="two running")
    kept = corral.task_status("g/web@0")["pid"]
    config["groups"]["g"]["tasks"]["web"]["instances"] = 3
    corral.config(config, name="reload.yaml")
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: corral.task_status("g/web@2")["state"] == "running", what="a third")
    assert corral.task_status("g/web@0")["pid"] == kept  # the others untouched
    config["groups"]["g"]["tasks"]["web"]["instances"] = 1
    corral.config(config, name="reload.yaml")
    assert corral.cli("reload").returncode == 0
    wait_for(lambda: [t["task"] for g in corral.status()["groups"] for t in g["tasks"]] ==
             ["g/web@0"], what="back to one")
    assert corral.task_status("g/web@0")["pid"] == kept
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


# A server for probes of instances: once DIRECTORY/go-N exists, listens
# on BASE + CORRAL_INSTANCE and answers 200 on /health/N only, N its own
# number.
PROBED_SERVER = r"""
import http.server, os, sys, time
directory, base = sys.argv[1], int(sys.argv[2])
number = os.environ["CORRAL_INSTANCE"]
while not os.path.exists(os.path.join(directory, "go-" + number)):
    time.sleep(0.05)
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health/" + number else 404)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", base + int(number)), Handler).serve_forever()
"""


def probe_result(corral, task, kind):
    probe = corral.task_status(task)["probes"][kind]
    return probe and probe["last_result"]


def test_probe_targets_name_the_instance(corral, tmp_path):
    """Issue 35.6: each instance is probed on its own port and path, from
    the same expressions its command uses, and so is one `corral scale`
    adds; a probe's failure names the port it tried."""
    base = free_port_block(13)
    (tmp_path / "server.py").write_text(PROBED_SERVER)
    config = {"groups": {"g": {"tasks": {"web": {
        "instances": 2,
        "command": ["/usr/bin/python3", str(tmp_path / "server.py"), str(tmp_path), str(base)],
        "readiness": {"http": {"port": f"$(({base} + CORRAL_INSTANCE))",
                               "path": "/health/${CORRAL_INSTANCE}"},
                      "interval": "100ms", "timeout": "60s"},
        # Nothing listens there: its failures name the port, and never
        # restart the instance within the test.
        "health": {"tcp": f"127.0.0.1:$(({base} + 10 + CORRAL_INSTANCE))",
                   "interval": "100ms", "failures": 100000},
    }}}}}
    running = corral.start(config)
    corral.wait_control(running)
    refused = "connect 127.0.0.1:{}: Connection refused"
    (tmp_path / "go-0").touch()
    wait_for(lambda: corral.task_status("g/web@0")["ready"], timeout=20, what="web@0 ready")
    # web@1 is probed on its own port, where nothing listens yet.
    wait_for(lambda: probe_result(corral, "g/web@1", "readiness") == refused.format(base + 1),
             what="web@1 probed on its port")
    assert not corral.task_status("g/web@1")["ready"]
    (tmp_path / "go-1").touch()
    wait_for(lambda: corral.task_status("g/web@1")["ready"], timeout=20, what="web@1 ready")
    for i in range(2):
        wait_for(lambda: probe_result(corral, f"g/web@{i}", "health") ==
                 refused.format(base + 10 + i), what=f"web@{i}'s health probe on its port")
    # An instance added by scale gets its own targets too.
    assert corral.cli("scale", "g/web=3").returncode == 0
    wait_for(lambda: probe_result(corral, "g/web@2", "readiness") == refused.format(base + 2),
             what="web@2 probed on its port")
    (tmp_path / "go-2").touch()
    wait_for(lambda: corral.task_status("g/web@2")["ready"], timeout=20, what="web@2 ready")
    running.send(signal.SIGTERM)
    assert running.wait().returncode == 0


def test_a_scale_refuses_an_instance_whose_probe_port_cannot_be(corral, tmp_path):
    config = {"groups": {"g": {"tasks": {"web": {
        "instances": 1, "command": sh(IDLE),
        "readiness": {"tcp": "$((65535 + CORRAL_INSTANCE))"}}}}}}
    running = corral.start(config)
    corral.wait_control(running)
    refused = corral.cli("scale", "g/web=2")
    assert refused.returncode == 1, refused
    assert ("g/web@1 cannot be made: g/web: readiness.tcp: must be PORT or ADDRESS:PORT with "
            'a port from 1 to 65535, not "65536" (instance 1 of "$((65535 + CORRAL_INSTANCE))")'
            ) in refused.stderr, refused.stderr
    assert corral.task_status("g/web@0")["state"] == "running"
    running.send(signal.SIGTERM)
    running.wait()


def test_a_malformed_probe_template_is_an_error_at_its_place(corral, tmp_path):
    config_path = corral.config({"groups": {"g": {"tasks": {"web": {
        "instances": 2, "command": sh(IDLE),
        "readiness": {"unix": "/run/web-${CORRAL_INSTANSE}.sock"}}}}}})
    checked = corral.cli("check", str(config_path))
    assert checked.returncode != 0
    line = next(l for l in checked.stderr.splitlines() if "CORRAL_INSTANSE" in l)
    # FILE:LINE:COLUMN, the column of its `$`.
    place, message = line.split(": ", 1)
    path, line_number, column = place.rsplit(":", 2)
    assert path == str(config_path), line
    written = config_path.read_text().splitlines()[int(line_number) - 1]
    assert written[int(column) - 1:].startswith("${CORRAL_INSTANSE}"), (line, written)
    assert message.startswith("g/web: readiness.unix: ${CORRAL_INSTANSE}: a probe target "
                              "takes $CORRAL_INSTANCE"), line
