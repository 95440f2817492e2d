"""`corral check` on the built-in hooks' keys (cdi, task_dirs,
task_dirs_root): accepted when valid, refused with FILE:LINE:COLUMN when
not. CDI names are only checked for their syntax here: the spec files are
read when a task starts."""

import re

VALID = """\
task_dirs_root: /run/corral/test-tasks
groups:
  gpu:
    isolation: {namespaces: [pid, mount]}
    cdi: {devices: [vendor.example/fake=zero0], spec_dirs: [/etc/cdi, /var/run/cdi]}
    task_dirs: true
    tasks:
      train: {command: ["/bin/true"]}
      eval: {command: ["/bin/true"], cdi: {devices: [nvidia.com/gpu=0, nvidia.com/gpu=all]},
             task_dirs: false}
"""

BAD_NAME = """\
groups:
  gpu:
    tasks:
      train:
        command: ["/bin/true"]
        isolation: {namespaces: [mount]}
        cdi: {devices: [nvidia.com/gpu]}
"""


def test_check_accepts_cdi_and_task_dirs(corral):
    result = corral.check(corral.config(VALID))
    assert result.returncode == 0, result.stderr


def test_check_refuses_a_malformed_cdi_name_with_its_place(corral):
    path = corral.config(BAD_NAME, name="bad.yaml")
    result = corral.check(path)
    assert result.returncode == 1, result
    expected = (f"{path}:7:25: gpu/train: cdi.devices[0]: invalid CDI device name "
                "\"nvidia.com/gpu\": missing \"=NAME\" (write VENDOR/CLASS=NAME, as in "
                "vendor.com/gpu=0)")
    assert expected in result.stderr.splitlines(), result.stderr


def test_check_refuses_cdi_without_a_mount_namespace(corral):
    path = corral.config(BAD_NAME.replace("        isolation: {namespaces: [mount]}\n", "")
                         .replace("[nvidia.com/gpu]", "[nvidia.com/gpu=0]"), name="bad.yaml")
    result = corral.check(path)
    assert result.returncode == 1, result
    assert re.search(re.escape(str(path)) + r":6:24: gpu/train: cdi.devices: CDI devices need "
                     r"the mount namespace", result.stderr), result.stderr
