"""The container examples are checked, not only read.

- Every corral config under examples/ passes `corral check` (and
  examples/container/corral.yaml also runs as PID 1 under runc, in
  test_runc.py, from the same file); an overlay (a file of top-level keys
  that the image adds to its config) passes it together with that config.
- The Kubernetes Pod and the Nomad job parse, run the image's corral on the
  image's config, give corral more time to stop than the config's
  shutdown_timeout, and probe it: the Pod with httpGet on corral's HTTP
  endpoint, the Nomad job with `corral status --ready`.
- examples/Dockerfile builds with the commands the tests run:
  `scripts/install-deps.sh --build-only` and `scripts/build-static.sh`, which
  scripts/test.sh and this suite's fixture call too; it ships the binary that
  script produces and the config at the paths the runc tests use.
"""

import re
import shlex
from pathlib import Path

import pytest
import yaml

from conftest import CORRAL_IN_IMAGE, EXAMPLE_CONFIG, HERE, REPO_ROOT, run

from helpers_examples import CONTAINER_CONFIG, EXAMPLES, dockerfile_stages, only, parse_hcl, seconds

ORCHESTRATOR_FILES = {EXAMPLES / "kubernetes" / "pod.yaml",
                      EXAMPLES / "orchestrators" / "kubernetes.yaml"}
# Overlays: checked with the config they are added to, not alone.
DOORS = EXAMPLES / "orchestrators" / "doors.yaml"
DOORS_IN_IMAGE = "/etc/corral/doors.yaml"
OVERLAYS = {DOORS: CONTAINER_CONFIG}


def shutdown_timeout():
    return seconds(yaml.safe_load(CONTAINER_CONFIG.read_text())["shutdown_timeout"])


# ---- corral configs --------------------------------------------------------


def corral_configs():
    return sorted(path for path in EXAMPLES.rglob("*.yaml")
                  if path not in ORCHESTRATOR_FILES and path not in OVERLAYS)


def test_the_examples_hold_corral_configs():
    assert CONTAINER_CONFIG in corral_configs()


@pytest.mark.parametrize("config", corral_configs(), ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_config_passes_corral_check(static_corral, config):
    result = run([static_corral, "check", config], check=False)
    assert result.returncode == 0, result
    assert result.stdout.startswith(f"{config}: ok ("), result
    # Nor a warning: a shutdown fits in its shutdown_timeout.
    assert "warning" not in result.stderr, result


def test_the_pods_grace_period_holds_its_configs_longest_shutdown(static_corral):
    (pod,) = yaml.safe_load_all((EXAMPLES / "kubernetes" / "pod.yaml").read_text())
    grace = pod["spec"]["terminationGracePeriodSeconds"]
    result = run([static_corral, "check", "--shutdown-timeout", f"{grace}s", CONTAINER_CONFIG],
                 check=False)
    assert result.returncode == 0 and "warning" not in result.stderr, result


@pytest.mark.parametrize("overlay", sorted(OVERLAYS), ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_example_overlay_passes_corral_check_with_its_config(static_corral, overlay):
    base = OVERLAYS[overlay]
    result = run([static_corral, "check", base, overlay], check=False)
    assert result.returncode == 0, result
    assert result.stdout.startswith(f"{base}: ok ("), result


# ---- Kubernetes ------------------------------------------------------------


def test_kubernetes_pod_runs_corral_and_waits_longer_than_its_shutdown():
    documents = list(yaml.safe_load_all((EXAMPLES / "kubernetes" / "pod.yaml").read_text()))
    (pod,) = documents
    assert pod["apiVersion"] == "v1" and pod["kind"] == "Pod"
    (web,) = pod["spec"]["containers"]
    assert web["command"] == [CORRAL_IN_IMAGE, "run", EXAMPLE_CONFIG, DOORS_IN_IMAGE]
    assert pod["spec"]["terminationGracePeriodSeconds"] > shutdown_timeout()
    # The probes ask corral's HTTP endpoint, which doors.yaml opens on every
    # address (the kubelet probes the Pod's IP), on its port.
    assert yaml.safe_load(DOORS.read_text())["http"] == {"listen": "0.0.0.0:9090"}
    assert web["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "doors"}
    assert web["livenessProbe"]["httpGet"] == {"path": "/livez", "port": "doors"}
    assert {"containerPort": 8080, "name": "http"} in web["ports"]
    assert {"containerPort": 9090, "name": "doors"} in web["ports"]


# ---- Nomad (HCL) -----------------------------------------------------------


def test_nomad_job_runs_corral_with_the_docker_driver_and_waits_longer_than_its_shutdown():
    job = only(parse_hcl((EXAMPLES / "nomad" / "corral-web.nomad.hcl").read_text()), "job")
    assert job["labels"] == ["corral-web"]
    group = only(job["body"], "group")
    task = only(group["body"], "task")["body"]
    assert task["driver"] == "docker"
    config = only(task, "config")["body"]
    assert config["image"] == "corral-web:latest"
    assert [*config["entrypoint"], *config["args"]] == [CORRAL_IN_IMAGE, "run", EXAMPLE_CONFIG]
    assert task["kill_signal"] == "SIGTERM"
    assert seconds(task["kill_timeout"]) > shutdown_timeout()
    service = only(task, "service")["body"]
    check = only(service, "check")["body"]
    assert check["type"] == "script"
    assert [check["command"], *check["args"]] == [CORRAL_IN_IMAGE, "status", "--ready"]


def test_the_hcl_parser_refuses_what_it_does_not_understand():
    with pytest.raises(ValueError):
        parse_hcl('job "x" { a = }')
    with pytest.raises(ValueError):
        parse_hcl('job "x" { a = 1')
    assert parse_hcl('a "b" { c = ["d", 2, true] } # e') == {
        "a": [{"labels": ["b"], "body": {"c": ["d", 2, True]}}]}


# ---- the Dockerfile builds with the tests' commands ------------------------


def test_dockerfile_builds_the_static_binary_with_the_commands_the_tests_run():
    (builder_from, builder), (runtime_from, runtime) = dockerfile_stages(
        (EXAMPLES / "Dockerfile").read_text())
    assert builder_from == "debian:12 AS builder"
    assert runtime_from.startswith("busybox:")
    runs = [shlex.split(arguments) for instruction, arguments in builder if instruction == "RUN"]
    assert runs == [["scripts/install-deps.sh", "--build-only"],
                    ["scripts/build-static.sh", "/build"]], runs

    # The same script builds the binary for scripts/test.sh and for this
    # suite (when CORRAL_STATIC_BIN is not given).
    test_sh = (REPO_ROOT / "scripts" / "test.sh").read_text()
    assert re.search(r"^[^#\n]*scripts/build-static\.sh build-static\b", test_sh, re.M), \
        "scripts/test.sh does not build with scripts/build-static.sh"
    assert '"build-static.sh"' in (HERE / "conftest.py").read_text()

    # It ships what that script produces, where the runc tests put it.
    copies = [arguments.split() for instruction, arguments in runtime if instruction == "COPY"]
    assert ["--from=builder", "/build/corral.stripped", CORRAL_IN_IMAGE] in copies, copies
    assert ["examples/container/corral.yaml", EXAMPLE_CONFIG] in copies, copies
    entrypoint = [yaml.safe_load(arguments) for instruction, arguments in runtime
                  if instruction in ("ENTRYPOINT", "CMD")]
    assert [*entrypoint[0], *entrypoint[1]] == [CORRAL_IN_IMAGE, "run", EXAMPLE_CONFIG]


def test_build_static_sh_prints_the_stripped_static_binary_the_dockerfile_copies():
    # What the Dockerfile's COPY names is what the script makes: run it as
    # the Dockerfile does, into a build directory of its own (incremental
    # when scripts/test.sh already built build-static/: reuse that tree).
    build = REPO_ROOT / "build-static"
    built = run([REPO_ROOT / "scripts" / "build-static.sh", build], timeout=300)
    printed = Path(built.stdout.strip().splitlines()[-1])
    assert printed == build / "corral.stripped", built
    assert printed.exists() and (build / "corral").exists()
    sections = run(["readelf", "--sections", "--wide", printed]).stdout
    assert ".debug_info" not in sections and ".symtab" not in sections, sections
    assert run(["readelf", "--sections", "--wide", build / "corral"]).stdout.count(".symtab")
