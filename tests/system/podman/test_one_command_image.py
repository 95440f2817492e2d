"""examples/Dockerfile.one-command, built by podman: corral in place of
tini or dumb-init (`ENTRYPOINT ["/usr/local/bin/corral", "--"]`).

No registry and no network here, so the build is the example's final stage
as shipped (its FROM, ENTRYPOINT and CMD lines), on a busybox image made
from the host's busybox-static and tagged with the name the example asks
for; the builder stage's binary is the static corral the suite builds
the same way (scripts/build-static.sh), copied in from the build context.
Then the image behaves as a tini image does: the command's exit code is the
container's, `podman stop` ends it with 143 (SIGTERM passed on), and the
default command is a shell."""

import shutil

import pytest

from conftest import HERE, run, unique

EXAMPLE = HERE.parents[2] / "examples" / "Dockerfile.one-command"
BUILDER_BINARY = "COPY --from=builder /build/corral.stripped"


def final_stage(dockerfile_text):
    lines = dockerfile_text.splitlines()
    last_from = max(i for i, line in enumerate(lines) if line.startswith("FROM "))
    return lines[last_from:]


@pytest.fixture(scope="module")
def one_command_image(podman_session, static_corral, tmp_path_factory):
    podman = podman_session
    stage = final_stage(EXAMPLE.read_text())
    base = stage[0].split()[1]
    assert base.startswith("busybox:"), stage  # what the base image below stands for
    assert any(line.startswith(BUILDER_BINARY) for line in stage), stage

    directory = tmp_path_factory.mktemp("one-command")
    root = directory / "busybox-root"
    (root / "bin").mkdir(parents=True)
    shutil.copy("/bin/busybox", root / "bin" / "busybox")
    applets = run(["/bin/busybox", "--list"]).stdout.split()
    for applet in applets:
        if applet != "busybox":
            (root / "bin" / applet).symlink_to("busybox")
    archive = directory / "busybox.tar"
    run(["tar", "-C", root, "-cf", archive, "."])
    podman("import", archive, f"docker.io/library/{base}")

    context = directory / "context"
    context.mkdir()
    shutil.copy(static_corral, context / "corral.stripped")
    dockerfile = context / "Dockerfile"
    dockerfile.write_text("\n".join(
        line.replace(BUILDER_BINARY, "COPY corral.stripped") for line in stage) + "\n")
    image = "localhost/corral-one:test"
    podman("build", "--pull=never", "-t", image, "-f", dockerfile, context, timeout=300)
    yield image
    podman("rmi", "--force", image, f"docker.io/library/{base}", check=False)


def test_the_commands_exit_code_is_the_containers(podman, one_command_image):
    result = podman("run", "--rm", "--network", "none", one_command_image,
                    "sh", "-c", "echo from the command; exit 3", check=False)
    assert (result.returncode, result.stdout) == (3, "from the command\n"), result
    assert result.stderr == "", result  # silent, as tini is
    killed = podman("run", "--rm", "--network", "none", one_command_image,
                    "sh", "-c", "kill -KILL $$", check=False)
    assert killed.returncode == 137, killed  # 128 + 9


def test_the_default_command_is_a_shell_reading_stdin(podman, one_command_image):
    result = podman("run", "--rm", "-i", "--network", "none", one_command_image,
                    input="echo $$; exit 5\n", check=False)
    # The shell is not PID 1: corral is, and the shell is its child.
    assert result.returncode == 5 and result.stdout.strip() != "1", result


def test_podman_stop_passes_sigterm_on_and_gives_143(podman, one_command_image):
    name = unique("one")
    podman("run", "-d", "--name", name, "--network", "none", one_command_image,
           "sleep", "1000")
    podman.started_pids.append(podman.host_pid(name))
    # sleep does not handle SIGTERM: killed by it, so 128 + 15, well before
    # podman's SIGKILL after 30 s (which would give 137).
    podman("stop", "--time", "30", name)
    assert podman.inspect(name, "{{.State.ExitCode}}") == "143"
