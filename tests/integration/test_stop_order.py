"""Stop order as compose and supervisord users expect it: a dependency in
another group is stopped after its dependent (compose removes services in
dependency order), and `order: sequential` stops every stage's tasks in
reverse file order (supervisord's priority, which containers.md maps to
it). Each task records its SIGTERM and its exit, in one shared file."""

import sys

from conftest import sh, wait_for


def recording(journal, name):
    """Runs until SIGTERM, then takes 0.3 s to exit; both are written down."""
    return sh(f"echo {name}-up >> {journal}; "
              f"trap 'echo {name}-term >> {journal}; sleep 0.3; "
              f"echo {name}-exit >> {journal}; exit 0' TERM; "
              "while :; do sleep 0.05; done")


def events(journal):
    return journal.read_text().split() if journal.exists() else []


def shut_down(corral, running, journal, names):
    wait_for(lambda: all(f"{n}-up" in events(journal) for n in names), what="every task up")
    running.send(15)
    assert running.wait().returncode == 0
    return [e for e in events(journal) if not e.endswith("-up")]


def test_a_dependency_in_another_group_stops_after_its_dependent(corral, tmp_path):
    journal = tmp_path / "journal"
    running = corral.start({"groups": {
        "data": {"tasks": {"db": {"command": recording(journal, "db")}}},
        "web": {"tasks": {"app": {"command": recording(journal, "app"),
                                  "after": {"data/db": "started"}}}},
    }})
    order = shut_down(corral, running, journal, ["db", "app"])
    assert order == ["app-term", "app-exit", "db-term", "db-exit"], order


def test_sequential_main_tasks_stop_in_reverse_file_order(corral, tmp_path):
    journal = tmp_path / "journal"
    running = corral.start({"groups": {"g": {"order": "sequential", "tasks": {
        "first": {"command": recording(journal, "first")},
        "second": {"command": recording(journal, "second")},
        "third": {"command": recording(journal, "third")},
    }}}})
    order = shut_down(corral, running, journal, ["first", "second", "third"])
    assert order == ["third-term", "third-exit", "second-term", "second-exit",
                     "first-term", "first-exit"], order


def test_sidecars_prekill_hooks_start_together_and_signals_still_go_in_order(
        corral, tmp_path):
    """Kubernetes starts every terminating container's PreStop hook at once
    and still stops sidecars in reverse: three sidecars with a 1 s prekill
    hook each take one hook's time, not three."""
    journal = tmp_path / "journal"
    hook = tmp_path / "prekill.hook"
    hook.write_text(f"#!{sys.executable}\nimport json, sys, time\n"
                    "name = json.load(sys.stdin)['task']\n"
                    f"def note(e): open('{journal}', 'a').write(f'{{name}}-{{e}}\\n')\n"
                    "note('prekill'); time.sleep(1); note('prekilled'); print('{}')\n")
    hook.chmod(0o755)
    sidecar = {"lifecycle": {"hook": "prestart", "sidecar": True},
               "hooks": [{"name": "drain", "stage": "prekill", "exec": [str(hook)]}]}
    running = corral.start({"groups": {"g": {"order": "sequential", "tasks": {
        "one": {"command": recording(journal, "one"), **sidecar},
        "two": {"command": recording(journal, "two"), **sidecar},
        "three": {"command": recording(journal, "three"), **sidecar},
        "app": {"command": recording(journal, "app")},
    }}}})
    order = shut_down(corral, running, journal, ["one", "two", "three", "app"])
    prekills = [e for e in order if e.endswith("-prekill")]
    first_done = next(i for i, e in enumerate(order) if e.endswith("-prekilled"))
    # Every hook began before the first one ended.
    assert sorted(prekills) == ["one-prekill", "three-prekill", "two-prekill"], order
    assert all(order.index(p) < first_done for p in prekills), order
    terms = [e for e in order if e.endswith("-term")]
    assert terms == ["app-term", "three-term", "two-term", "one-term"], order
