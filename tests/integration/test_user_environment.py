"""`user:` sets HOME, USER and LOGNAME from the passwd entry, as systemd's
User= does (Docker sets HOME): otherwise the task keeps corral's
HOME=/root, and a shell as that user fails reading root's files. The
task's own `env:` still wins; a uid without a passwd entry gets HOME=/."""

from conftest import sh


def environment_of(corral, tmp_path, **task):
    """What the task sees, from its one line on corral's stdout."""
    running = corral.start({"groups": {"g": {"tasks": {"t": {
        "command": sh('echo "env: $HOME $USER $LOGNAME"'), "restart": {"policy": "never"},
        **task}}}}}, env={"HOME": "/root", "USER": "root", "LOGNAME": "root"})
    result = running.wait()
    lines = [line for line in result.stdout_lines() if line.startswith("g/t | env:")]
    assert lines, result
    return lines[0].split("env:", 1)[1].split()


def test_user_sets_home_user_and_logname_from_passwd(corral, tmp_path):
    assert environment_of(corral, tmp_path, user="daemon") == ["/usr/sbin", "daemon", "daemon"]


def test_the_tasks_own_env_wins(corral, tmp_path):
    assert environment_of(corral, tmp_path, user="daemon", env={"HOME": "/srv"}) == [
        "/srv", "daemon", "daemon"]


def test_a_uid_without_a_passwd_entry_gets_home_slash(corral, tmp_path):
    assert environment_of(corral, tmp_path, user="4242")[0] == "/"


def test_a_task_without_user_keeps_corrals(corral, tmp_path):
    assert environment_of(corral, tmp_path) == ["/root", "root", "root"]
