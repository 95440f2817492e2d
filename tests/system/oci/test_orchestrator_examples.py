"""The examples of docs/orchestrators.md are checked, not only read.

Each orchestrator's file parses, runs the image's corral on the image's
config and doors.yaml (the overlay examples/Dockerfile ships beside it),
sets corral's shutdown timeout below the orchestrator's wait before its
SIGKILL (and the image's config stops within it, as `corral check
--shutdown-timeout` counts), and points its probes at the endpoints doors.yaml opens: the
Kubernetes Deployment, the Nomad job, the ECS task definition, the systemd
unit and the podman quadlet. Every YAML block of the page that is a corral
config (or an overlay of one) passes `corral check`, and the page links
every file of examples/orchestrators/. The corral configs among the files
are checked by test_examples.py with the others.
"""

import configparser
import json
import re
import shlex

import pytest
import yaml

from conftest import CORRAL_IN_IMAGE, EXAMPLE_CONFIG, REPO_ROOT, run
from helpers_examples import (CONTAINER_CONFIG, EXAMPLES, dockerfile_stages, only, parse_hcl,
                              seconds)

ORCHESTRATORS = EXAMPLES / "orchestrators"
DOORS = ORCHESTRATORS / "doors.yaml"
DOORS_IN_IMAGE = "/etc/corral/doors.yaml"
PAGE = REPO_ROOT / "docs" / "orchestrators.md"
IMAGE_COMMAND = [CORRAL_IN_IMAGE, "run", EXAMPLE_CONFIG, DOORS_IN_IMAGE]


def doors_port():
    """The port doors.yaml's HTTP endpoint listens on, on every address."""
    listen = yaml.safe_load(DOORS.read_text())["http"]["listen"]
    host, port = listen.rsplit(":", 1)
    assert host == "0.0.0.0", f"{listen}: probes and scrapes come from outside the container"
    return int(port)


def assert_shutdown_fits(static_corral, timeout):
    """The image's config stops within TIMEOUT seconds at worst, as `corral
    check --shutdown-timeout` counts it (doors.yaml adds no task)."""
    result = run([static_corral, "check", "--shutdown-timeout", f"{timeout}s", CONTAINER_CONFIG],
                 check=False)
    assert result.returncode == 0 and "warning" not in result.stderr, result


def environment_timeout(pairs):
    """CORRAL_SHUTDOWN_TIMEOUT in seconds, from (name, value) pairs."""
    values = [value for name, value in pairs if name == "CORRAL_SHUTDOWN_TIMEOUT"]
    assert len(values) == 1, pairs
    return seconds(values[0])


# ---- the image ---------------------------------------------------------------


def test_the_image_ships_doors_yaml_where_the_examples_name_it(rootfs_template):
    (_, _), (_, runtime) = dockerfile_stages((EXAMPLES / "Dockerfile").read_text())
    copies = [arguments.split() for instruction, arguments in runtime if instruction == "COPY"]
    assert ["examples/orchestrators/doors.yaml", DOORS_IN_IMAGE] in copies, copies
    exposed = [arguments.split() for instruction, arguments in runtime if instruction == "EXPOSE"]
    assert [str(doors_port())] in [[port] for ports in exposed for port in ports], exposed
    # The test containers' root file system is laid out the same way.
    assert (rootfs_template / DOORS_IN_IMAGE.lstrip("/")).read_text() == DOORS.read_text()


# ---- Kubernetes ----------------------------------------------------------------


def test_kubernetes_deployment_probes_the_doors_and_fits_its_grace_period(static_corral):
    (deployment,) = yaml.safe_load_all((ORCHESTRATORS / "kubernetes.yaml").read_text())
    assert deployment["apiVersion"] == "apps/v1" and deployment["kind"] == "Deployment"
    pod = deployment["spec"]["template"]
    (web,) = pod["spec"]["containers"]
    assert web["command"] == IMAGE_COMMAND
    timeout = environment_timeout((e["name"], e["value"]) for e in web["env"])
    assert timeout < pod["spec"]["terminationGracePeriodSeconds"]
    assert_shutdown_fits(static_corral, timeout)
    ports = {port["name"]: port["containerPort"] for port in web["ports"]}
    assert ports["doors"] == doors_port()
    paths = {probe: (web[probe]["httpGet"]["path"], web[probe]["httpGet"]["port"])
             for probe in ("startupProbe", "readinessProbe", "livenessProbe")}
    assert paths == {"startupProbe": ("/readyz", "doors"), "readinessProbe": ("/readyz", "doors"),
                     "livenessProbe": ("/livez", "doors")}
    assert web["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert "terminationMessagePath" not in web  # the default, /dev/termination-log
    annotations = pod["metadata"]["annotations"]
    assert annotations["prometheus.io/port"] == str(doors_port())
    assert annotations["prometheus.io/path"] == "/metrics"


# ---- Nomad -----------------------------------------------------------------------


def test_nomad_job_checks_the_doors_and_fits_its_kill_timeout(static_corral):
    job = only(parse_hcl((ORCHESTRATORS / "nomad.nomad.hcl").read_text()), "job")
    group = only(job["body"], "group")["body"]
    ports = {block["labels"][0]: block["body"]["to"]
             for block in only(group, "network")["body"]["port"]}
    assert ports["doors"] == doors_port()
    task = only(group, "task")["body"]
    assert task["driver"] == "docker"
    config = only(task, "config")["body"]
    assert [*config["entrypoint"], *config["args"]] == IMAGE_COMMAND
    env = only(task, "env")["body"]
    kill_timeout = seconds(task["kill_timeout"])
    assert environment_timeout(env.items()) < kill_timeout <= 30  # max_kill_timeout's default
    assert_shutdown_fits(static_corral, environment_timeout(env.items()))
    assert task["kill_signal"] == "SIGTERM"
    checks = {}
    for service in task["service"]:
        assert service["body"]["provider"] == "nomad"  # no Consul needed
        for check in service["body"].get("check", []):
            body = check["body"]
            checks[body["path"]] = body
            assert body["type"] == "http" and body["port"] == "doors", body
    assert set(checks) == {"/readyz", "/livez"}
    assert only(checks["/livez"], "check_restart")["body"]["limit"] >= 1
    assert "check_restart" not in checks["/readyz"]  # not ready is no reason to restart


# ---- ECS ---------------------------------------------------------------------------


def test_ecs_task_definition_runs_the_doors_and_fits_its_stop_timeout(static_corral):
    definition = json.loads((ORCHESTRATORS / "ecs-task-definition.json").read_text())
    (web,) = definition["containerDefinitions"]
    # The image's entrypoint is `corral run`; `command` replaces its CMD.
    (_, _), (_, runtime) = dockerfile_stages((EXAMPLES / "Dockerfile").read_text())
    (entrypoint,) = [yaml.safe_load(arguments) for instruction, arguments in runtime
                     if instruction == "ENTRYPOINT"]
    assert [*entrypoint, *web["command"]] == IMAGE_COMMAND
    timeout = environment_timeout((e["name"], e["value"]) for e in web["environment"])
    assert timeout < web["stopTimeout"] <= 120  # Fargate's maximum
    assert_shutdown_fits(static_corral, timeout)
    assert web["healthCheck"]["command"] == ["CMD", CORRAL_IN_IMAGE, "status", "--ready"]
    assert doors_port() in [mapping["containerPort"] for mapping in web["portMappings"]]
    assert web["essential"] is True


# ---- systemd and podman (unit files) ---------------------------------------------


def unit_file(path):
    """A systemd unit as {section: {key: value}}; a repeated key keeps its
    last value, as systemd does for the keys used here."""
    parser = configparser.ConfigParser(strict=False, interpolation=None,
                                       comment_prefixes=("#", ";"))
    parser.optionxform = str
    parser.read_string(path.read_text())
    return {section: dict(parser[section]) for section in parser.sections()}


def test_systemd_unit_is_notify_mixed_delegated_and_waits_longer_than_the_shutdown():
    unit = unit_file(ORCHESTRATORS / "systemd" / "corral.service")
    service = unit["Service"]
    config = ORCHESTRATORS / "systemd" / "corral.yaml"
    assert shlex.split(service["ExecStart"]) == [CORRAL_IN_IMAGE, "run", "/etc/corral/corral.yaml"]
    assert service["Type"] == "notify" and service["NotifyAccess"] == "main"
    assert service["KillMode"] == "mixed"  # corral stops its tasks in order
    assert service["Delegate"] == "yes"
    # Through the control socket: a short-lived kill's SIGHUP may be
    # refused once its sender is gone (config.md, "Signals from tasks").
    assert shlex.split(service["ExecReload"]) == [CORRAL_IN_IMAGE, "reload"]
    assert seconds(service["TimeoutStopSec"]) > seconds(
        yaml.safe_load(config.read_text())["shutdown_timeout"])
    assert seconds(service["WatchdogSec"]) > 0


def test_podman_quadlet_notifies_checks_readiness_and_fits_its_stop_timeout(static_corral):
    unit = unit_file(ORCHESTRATORS / "podman" / "corral-web.container")
    container = unit["Container"]
    assert container["Image"] == "localhost/corral-web:latest"
    assert shlex.split(container["Exec"]) == IMAGE_COMMAND[2:]
    assert container["Notify"] == "true"
    assert shlex.split(container["HealthCmd"]) == [CORRAL_IN_IMAGE, "status", "--ready"]
    name, _, value = container["Environment"].partition("=")
    stop_timeout = int(container["StopTimeout"])
    assert environment_timeout([(name, value)]) < stop_timeout
    assert_shutdown_fits(static_corral, environment_timeout([(name, value)]))
    assert int(unit["Service"]["TimeoutStopSec"]) > stop_timeout


# ---- the page -----------------------------------------------------------------------


def page_yaml_blocks():
    return re.findall(r"^ *```yaml\n(.*?)^ *```", PAGE.read_text(), re.M | re.S)


def test_the_page_has_yaml_blocks():
    assert page_yaml_blocks()


@pytest.mark.parametrize("index", range(len(page_yaml_blocks())))
def test_every_corral_config_of_the_page_passes_corral_check(static_corral, tmp_path, index):
    block = page_yaml_blocks()[index]
    document = yaml.safe_load(block)
    if "apiVersion" in document:
        pytest.skip("a Kubernetes manifest")
    path = tmp_path / "block.yaml"
    path.write_text(block)
    # A block of top-level keys alone is added to the image's config.
    files = [path] if "groups" in document else [CONTAINER_CONFIG, path]
    result = run([static_corral, "check", *files], check=False)
    assert result.returncode == 0, (block, result)


def test_the_page_links_every_example_of_its_folder_and_the_readme_links_the_page():
    text = PAGE.read_text()
    for path in sorted(ORCHESTRATORS.rglob("*")):
        if path.is_file():
            link = f"../examples/{path.relative_to(EXAMPLES)}"
            assert f"]({link})" in text, f"docs/orchestrators.md does not link {link}"
    assert "(docs/orchestrators.md)" in (REPO_ROOT / "README.md").read_text()
