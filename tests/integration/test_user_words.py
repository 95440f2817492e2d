"""The words corral shows are a user's, not Nomad's internals (issue 35,
item 10): a group whose every stage started is `running` in the status
table, `status --json`, /metrics and the event log alike, and a task's
`received` event says what it waits for in its group's words."""

from conftest import sh, wait_for
from helpers_http import samples, scrape, start, stop, value


def stack():
    return {"groups": {"g": {"tasks": {
        "setup": {"command": ["true"], "lifecycle": {"hook": "prestart"}},
        "app": {"command": sh("exec sleep 1000")},
        "announce": {"command": ["true"], "lifecycle": {"hook": "poststart"}},
        "cleanup": {"command": ["true"], "lifecycle": {"hook": "poststop"}},
    }}}}


def test_a_group_up_is_running_everywhere_it_is_shown(corral):
    running, address = start(corral, stack())
    wait_for(lambda: corral.status()["groups"][0]["state"] == "running",
             what="the group to be running")
    table = corral.cli("status")
    assert table.returncode == 0, table
    assert any(line.split()[:3] == ["g", "state:", "running"]
               for line in table.stdout.splitlines()), table.stdout
    found = samples(scrape(address)[0])
    assert value(found, "corral_group_state", group="g", state="running") == 1
    states = {dict(labels)["state"] for name, labels in found if name == "corral_group_state"}
    assert states == {"init", "prestart", "main", "poststart", "running", "poststop"}, states
    events = running.events()
    assert ("poststart", "running") in events.lifecycle("g"), events.lifecycle("g")
    stop(running)
    assert running.events().lifecycle("g")[-1] == ("running", "poststop")
    # Neither the event log nor corral's own messages use Nomad's words.
    text = (corral.dir / "events.jsonl").read_text() + running.stderr_text()
    assert "wait_alloc" not in text and "gate" not in text, text


def test_received_says_what_each_stage_waits_for(corral):
    running, _ = start(corral, stack())
    wait_for(lambda: corral.status()["groups"][0]["state"] == "running",
             what="the group to be running")
    events = running.events()

    def received(task):
        [event] = events.of_task(task, "received", group="g")
        return event["message"]

    assert received("setup") == "received: starts with its group (a prestart task)"
    assert received("app") == ("received: starts once its group's prestart tasks are done, "
                               "if it has any")
    assert received("announce") == ("received: starts once its group's main tasks have "
                                    "started (a poststart task)")
    assert received("cleanup") == ("received: runs once its group's other tasks have ended "
                                   "(a poststop task)")
    stop(running)
