"""System tests: corral as the true PID 1 of a VM.

qemu (TCG, no KVM needed) boots the Debian cloud kernel with an initramfs
whose init is corral itself (rdinit=/corral, `run /cases/CASE.yaml` passed
after "--" on the kernel command line): no shell in between, the initial pid
namespace, pure cgroup v2. Each case is a config in cases/; the assertions
read the serial console (task output as `group/task | line`, corral's
messages as `corral: ...`) and corral's exit code as the host sees it.

The kernel is downloaded once (fetch-kernel.sh, cached in build-vm/), the
initramfs built once per session from CORRAL_BIN (default build/corral), and
each case boots once, however many tests read its console.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.dont_write_bytecode = True

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[2]
# A case boots in about 3 s under TCG; a VM still running after this has hung.
BOOT_TIMEOUT = int(os.environ.get("CORRAL_VM_TIMEOUT", "60"))
SUMMARY = re.compile(
    r"^run-case: (?P<case>\S+): corral exited with code (?P<code>\d+); "
    r"the VM powered off after (?P<seconds>[\d.]+) s$"
)


def corral_binary_path():
    binary = Path(os.environ.get("CORRAL_BIN", "build/corral"))
    return binary if binary.is_absolute() else REPO_ROOT / binary


class Boot:
    """One VM run of a case: the console (\\r removed), corral's exit code."""

    def __init__(self, case, console_path, console, code, seconds):
        self.case = case
        self.console_path = console_path
        self.console = console
        self.lines = console.splitlines()
        self.code = code
        self.seconds = seconds

    def __repr__(self):
        return (
            f"<boot of {self.case}: exit code {self.code} after {self.seconds} s; "
            f"console ({self.console_path}):\n{self.console}>"
        )

    def output(self, task):
        """What TASK ("group/task") printed, line by line."""
        prefix = f"{task} | "
        return [line[len(prefix) :] for line in self.lines if line.startswith(prefix)]

    def index(self, start):
        """Index of the first console line that starts with START."""
        for number, line in enumerate(self.lines):
            if line.startswith(start):
                return number
        pytest.fail(f"no console line starts with {start!r}\n{self!r}")

    def assert_in_order(self, *starts):
        indexes = [self.index(start) for start in starts]
        assert indexes == sorted(indexes), (
            "console lines out of order: "
            + ", ".join(f"{start!r} at {index}" for start, index in zip(starts, indexes))
            + f"\n{self!r}"
        )


def run_script(*command):
    result = subprocess.run(command, capture_output=True, text=True, timeout=600)
    if result.returncode != 0:
        pytest.fail(f"{' '.join(map(str, command))} failed ({result.returncode}):\n"
                    f"{result.stdout}{result.stderr}")
    return result.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="session")
def vm_images(tmp_path_factory):
    """(vmlinuz, initramfs): the kernel from build-vm/, a fresh initramfs."""
    for tool in ("qemu-system-x86_64", "cpio", "busybox"):
        if not shutil.which(tool):
            pytest.fail(f"{tool} is missing: run scripts/install-deps.sh "
                        "(qemu-system-x86, cpio, busybox-static)")
    corral = corral_binary_path()
    if not os.access(corral, os.X_OK):
        pytest.fail(f"no corral binary at {corral}: build it, or set CORRAL_BIN")
    vmlinuz = run_script(HERE / "fetch-kernel.sh")
    initramfs = tmp_path_factory.mktemp("vm") / "initramfs.gz"
    run_script(HERE / "make-initramfs.sh", corral, initramfs)
    return vmlinuz, initramfs


@pytest.fixture(scope="session")
def boot(vm_images, tmp_path_factory):
    """boot(CASE) -> Boot: runs the case's VM once per session."""
    vmlinuz, initramfs = vm_images
    consoles = tmp_path_factory.mktemp("consoles")
    boots = {}

    def boot_case(case):
        if case in boots:
            return boots[case]
        console_path = consoles / f"{case}.txt"
        result = subprocess.run(
            [HERE / "run-case.sh", "-q", "-k", vmlinuz, "-i", initramfs,
             "-o", console_path, "-t", str(BOOT_TIMEOUT), case],
            capture_output=True, text=True, timeout=BOOT_TIMEOUT + 30,
        )
        console = console_path.read_text(errors="replace").replace("\r", "")
        summary = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
        match = SUMMARY.match(summary)
        if not match:
            pytest.fail(f"case {case}: {summary or 'run-case.sh said nothing'}\n"
                        f"{result.stderr}console ({console_path}):\n{console}")
        assert int(match["code"]) == result.returncode, summary
        boots[case] = Boot(case, console_path, console, result.returncode,
                           float(match["seconds"]))
        return boots[case]

    return boot_case


def ps_table(lines):
    """Rows of `ps -o pid,ppid,stat,comm` as dicts, header skipped."""
    rows = []
    for line in lines:
        fields = line.split(None, 3)
        if len(fields) == 4 and fields[0].isdigit():
            pid, ppid, stat, comm = fields
            rows.append({"pid": int(pid), "ppid": int(ppid), "stat": stat, "comm": comm})
    return rows


def section(lines, start, end):
    return lines[lines.index(start) + 1 : lines.index(end)]


# ---- a. the lifecycle, as the machine's init, on pure cgroup v2 ----------


def test_lifecycle_runs_in_order_as_the_machines_init(boot):
    run = boot("lifecycle")
    assert run.code == 0, run
    assert "corral: running 1 group from /cases/lifecycle.yaml as the machine's init" in run.lines, run
    run.assert_in_order(
        "corral: demo/setup: started",
        "corral: demo/app: started",
        "corral: demo/announce: started",
        "corral: demo/cleanup: started",
    )
    run.assert_in_order(
        "demo/setup | prestart setup",
        "demo/app | main started",
        "demo/app | main done",
        "demo/proxy | prestart sidecar stopping",
        "demo/cleanup | poststop cleanup",
        "corral: exiting with code 0",
    )
    run.assert_in_order("corral: demo/app: started", "demo/announce | poststart demo/announce",
                        "demo/cleanup | poststop cleanup")
    assert "hello from setup" in run.output("demo/app"), run


def test_the_vm_has_pure_cgroup_v2_with_every_controller(boot):
    run = boot("lifecycle")
    report = [line.removeprefix("cgroup: ") for line in run.output("demo/cgroup")]
    assert "mount failed" not in report, run
    assert any(line.startswith("mount: ") and " cgroup2 " in line for line in report), run
    assert "v1 hierarchies: 0" in report, run
    # Only the unified hierarchy: the one line of /proc/self/cgroup is 0::/.
    assert [line for line in report if line.startswith("self: ")] == ["self: 0::/"], run
    controllers = next(line for line in report if line.startswith("controllers: "))
    controllers = set(controllers.split()[1:])
    expected = {"cpuset", "cpu", "io", "memory", "hugetlb", "pids", "rdma", "misc"}
    assert expected <= controllers, f"missing {expected - controllers}\n{run!r}"


# ---- b. orphans are reaped by the true PID 1 ------------------------------


def test_orphans_are_reparented_to_corral_and_reaped(boot):
    run = boot("orphans")
    assert run.code == 0, run
    orphans = [int(line.split()[1]) for line in run.output("orphans/spawner")
               if line.startswith("orphan ")]
    assert len(orphans) == 2, run
    inspector = run.output("orphans/inspector")
    while_alive = ps_table(section(inspector, "ps while the orphans live", "ps after they exited"))
    after = ps_table(section(inspector, "ps after they exited", "ps done"))
    assert while_alive and after, run

    alive = {row["pid"]: row for row in while_alive}
    assert alive[1]["comm"] == "corral", run
    for pid in orphans:
        assert pid in alive, f"orphan {pid} not seen alive\n{run!r}"
        assert alive[pid]["ppid"] == 1, f"orphan {pid} not reparented to corral\n{run!r}"
        assert "Z" not in alive[pid]["stat"], run

    # Once they exited, corral reaped them: no zombie is left, theirs or any.
    assert not set(orphans) & {row["pid"] for row in after}, run
    zombies = [row for row in after if "Z" in row["stat"]]
    assert not zombies, f"zombies: {zombies}\n{run!r}"


# ---- c. SIGTERM sent to PID 1 by a task -----------------------------------


def test_sigterm_from_a_task_shuts_down_in_reverse_order_and_powers_off(boot):
    run = boot("sigterm")
    assert run.code == 0, run
    # The task's line and corral's reaction to its signal reach corral
    # through different fds, so their order is not fixed.
    assert "stack/app | app sends SIGTERM to 1" in run.lines, run
    run.assert_in_order(
        "corral: SIGTERM: shutting down gracefully",
        "stack/app | app stopping",
        "stack/watcher | watcher stopping",
        "stack/proxy | proxy stopping",
        "stack/cleanup | poststop ran",
        "corral: exiting with code 0",
    )
    # The VM powered off by itself (run-case.sh checked "reboot: Power down"
    # and that qemu exited before its timeout).
    assert any(line.endswith("reboot: Power down") for line in run.lines), run
    assert run.seconds < BOOT_TIMEOUT, run


# ---- d. the exit code of a failed task reaches the host -------------------


def test_failing_main_task_exit_code_reaches_the_host(boot):
    run = boot("failing")
    assert run.code == 7, run
    assert "job/work | working" in run.lines, run
    assert "corral: job/work: first task to fail for good; corral will exit with code 7" in run.lines, run


# ---- corral's own failure before it starts anything -----------------------


def test_invalid_config_exit_code_reaches_the_host(boot):
    run = boot("invalid")
    assert run.code == 1, run
    assert "corral: /cases/invalid.yaml is not valid: nothing was started" in run.lines, run
