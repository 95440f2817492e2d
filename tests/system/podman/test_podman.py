"""corral as PID 1 under a real container engine: podman (issue "Prove it
holds", section 5). The image is a local root file system imported with
`podman import`; see conftest.py for how podman is set up here.

- `podman run` of the shipped example, `podman exec ... corral status`,
  `podman stop` (SIGTERM: corral's graceful shutdown, exit 0) and a stop
  whose timeout runs out (podman's SIGKILL: 137, nothing left);
- `podman kill`: SIGKILL by default (137), or a signal given (TERM: a
  graceful shutdown);
- the exit code of a failed task is `podman run`'s;
- a podman healthcheck that calls `corral status --ready`, healthy and then
  unhealthy once a task stops;
- `podman kube play` of examples/kubernetes/pod.yaml, its liveness probe on
  corral's HTTP endpoint as podman's healthcheck, its readiness probe, and a
  pod stop that lets corral's poststop task run."""

import json

import yaml

from conftest import HERE, IMAGE, unique, wait_for

EXAMPLE_DONE = "web/archive | archive:"
WGET = "/usr/bin/wget"  # busybox's; an imported image has no PATH


def start(podman, *options, command=()):
    name = unique("corral")
    podman("run", "-d", "--name", name, "--network", "none", *options, IMAGE, *command)
    podman.started_pids.append(podman.host_pid(name))
    return name


def ready(podman, name):
    return podman("exec", name, "/usr/local/bin/corral", "status", "--ready",
                  check=False).returncode == 0


def exit_code(podman, name):
    wait_for(lambda: podman.inspect(name, "{{.State.Status}}") == "exited", what="the exit")
    return int(podman.inspect(name, "{{.State.ExitCode}}"))


def logs(podman, name):
    result = podman("logs", name)
    return result.stdout + result.stderr


def test_run_exec_status_and_a_graceful_stop(podman):
    name = start(podman)
    wait_for(lambda: ready(podman, name), what="the example ready")
    status = json.loads(podman("exec", name, "/usr/local/bin/corral", "status", "--json").stdout)
    tasks = {t["task"]: t for g in status["groups"] for t in g["tasks"]}
    assert tasks["web/httpd"]["state"] == "running" and tasks["web/httpd"]["ready"], tasks
    assert tasks["web/migrate"]["last_exit"]["code"] == 0, tasks

    podman("stop", "--time", "30", name)  # SIGTERM; SIGKILL only after 30 s
    assert exit_code(podman, name) == 0
    text = logs(podman, name)
    assert EXAMPLE_DONE in text, text  # the poststop task ran
    assert text.rstrip().endswith("corral: exiting with code 0"), text[-500:]


def test_a_stop_whose_timeout_runs_out_kills_everything(podman):
    name = start(podman, command=["/usr/local/bin/corral", "run", "/cases/stubborn.yaml"])
    wait_for(lambda: "stubborn/deaf | up" in logs(podman, name), what="the task up")
    pid = podman.host_pid(name)
    podman("stop", "--time", "1", name)
    assert exit_code(podman, name) == 137  # podman's SIGKILL to corral
    wait_for(lambda: not alive(pid), what="corral gone")
    assert "SIGTERM: shutting down gracefully" in logs(podman, name)


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_podman_kill_sigkill_and_sigterm(podman):
    killed = start(podman)
    wait_for(lambda: ready(podman, killed), what="ready")
    podman("kill", killed)
    assert exit_code(podman, killed) == 137

    termed = start(podman)
    wait_for(lambda: ready(podman, termed), what="ready")
    podman("kill", "--signal", "TERM", termed)
    assert exit_code(podman, termed) == 0
    assert EXAMPLE_DONE in logs(podman, termed)


def test_a_failed_tasks_exit_code_is_podman_runs(podman):
    name = unique("failing")
    result = podman("run", "--name", name, "--network", "none", IMAGE,
                    "/usr/local/bin/corral", "run", "/cases/failing.yaml", check=False)
    assert result.returncode == 7, result
    assert "job/report | poststop ran" in result.stdout, result.stdout


def test_a_healthcheck_on_corral_status_ready(podman):
    name = start(podman, "--health-cmd", "/usr/local/bin/corral status --ready",
                 "--health-interval", "0", "--health-retries", "1")
    wait_for(lambda: podman("healthcheck", "run", name, check=False).returncode == 0,
             what="healthy")
    assert podman.inspect(name, "{{.State.Health.Status}}") == "healthy"

    podman("exec", name, "/usr/local/bin/corral", "stop", "web/log-shipper")
    wait_for(lambda: podman("healthcheck", "run", name, check=False).returncode == 1,
             what="the healthcheck to fail")
    assert podman.inspect(name, "{{.State.Health.Status}}") == "unhealthy"


def test_kube_play_of_the_kubernetes_example(podman, tmp_path):
    pod = tmp_path / "pod.yaml"
    example = yaml.safe_load((HERE.parents[2] / "examples" / "kubernetes" / "pod.yaml").read_text())
    web = example["spec"]["containers"][0]
    assert web["image"] == "corral-web:latest", web
    web["image"] = IMAGE
    # --network none (nothing left behind on the host) takes no ports.
    ports = {port["name"]: port["containerPort"] for port in web.pop("ports")}
    # The probes are httpGet on corral's endpoint. podman makes an httpGet
    # liveness probe `curl -f http://localhost:PORT/PATH`, and the busybox
    # image has no curl: here they ask the same port and path with
    # busybox's wget, which exits 0 on a 2xx only.
    urls = {}
    for name in ("livenessProbe", "readinessProbe"):
        get = web[name].pop("httpGet")
        urls[name] = f"http://127.0.0.1:{ports[get['port']]}{get['path']}"
        web[name]["exec"] = {"command": [WGET, "-q", "-O", "/dev/null", urls[name]]}
    assert urls == {"livenessProbe": "http://127.0.0.1:9090/livez",
                    "readinessProbe": "http://127.0.0.1:9090/readyz"}, urls
    pod.write_text(yaml.safe_dump(example))
    podman("kube", "play", "--network", "none", pod)
    container = "corral-web-web"
    podman.started_pids.append(podman.host_pid(container))

    # The Pod's livenessProbe became podman's healthcheck; its readiness
    # probe asks /readyz, which says what `corral status --ready` says.
    check = json.loads(podman.inspect(container, "{{json .Config.Healthcheck}}"))
    assert urls["livenessProbe"] in check["Test"], check
    def readyz():
        return podman("exec", container, WGET, "-q", "-O", "-", urls["readinessProbe"],
                      check=False)

    wait_for(lambda: readyz().returncode == 0,
             what=lambda: f"the Pod's readiness probe to pass: {readyz()!r}\n"
                          f"{logs(podman, container)[-3000:]}")
    assert ready(podman, container)
    assert podman("healthcheck", "run", container, check=False).returncode == 0

    podman("pod", "stop", "--time", "30", "corral-web")
    assert exit_code(podman, container) == 0
    assert EXAMPLE_DONE in logs(podman, container)
    podman("kube", "down", pod)
