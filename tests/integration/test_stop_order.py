"""Stop order as compose and supervisord users expect it: a dependency in
another group is stopped after its dependent (compose removes services in
dependency order), and `order: sequential` stops every stage's tasks in
reverse file order (supervisord's priority, which containers.md maps to
it). Each task records its SIGTERM and its exit, in one shared file."""

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
