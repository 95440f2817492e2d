"""Task networks (`isolation.network`), seen from inside the tasks: what
interfaces, addresses and routes a task has, who it can reach over TCP,
which tasks share a namespace; and from outside: after corral exits, and
across restarts, no veth, bridge or namespace is left behind.

Every corral here runs in a network namespace of the test's own (unshare
--net), so nothing touches the machine's network. A shell around corral
lists that namespace's links with `ip -o link` once corral has exited."""

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import children_of, wait_for
from helpers_net import BRIDGE, in_own_netns

NEVER = {"policy": "never"}
PYTHON = "/usr/bin/python3"

# eth0's IPv4 address, as the task sees it (SIOCGIFADDR).
PRINT_ADDRESS = (
    "import fcntl, socket, struct; s = socket.socket(); "
    "a = fcntl.ioctl(s.fileno(), 0x8915, struct.pack('256s', b'eth0'))[20:24]; "
    "print(socket.inet_ntoa(a))"
)


@pytest.fixture(autouse=True)
def need_tools():
    import shutil
    for tool in ("unshare", "nsenter", "ip", PYTHON):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is needed")


def names_of_links(ip_o_link):
    """Link names of an `ip -o link` output, in its order ("eth0@if7" is eth0)."""
    return [line.split(":")[1].strip().split("@")[0] for line in ip_o_link.splitlines()]


def links_after(tmp_path):
    """Link names left in the test's namespace after corral exited."""
    return names_of_links((tmp_path / "links-after").read_text())


def run(corral, tmp_path, config):
    result = corral.run(config, wrapper=in_own_netns(tmp_path))
    assert links_after(tmp_path) == ["lo"], (links_after(tmp_path), result)
    return result


def task(script, mode=None, **fields):
    isolation = {"network": {"mode": mode}} if mode else {}
    isolation.update(fields.pop("isolation", {}))
    return {"command": ["/bin/sh", "-c", script], "restart": NEVER,
            "isolation": isolation, **fields}


def interfaces(report):
    """Interface names of a `cat /proc/net/dev` (the task's own namespace;
    /sys would be corral's, not remounted without a rootfs)."""
    return sorted(line.split(":")[0].strip()
                  for line in Path(report).read_text().splitlines()[2:])


def test_none_has_only_loopback_and_is_the_same_as_net(corral, tmp_path):
    config = {"groups": {"g": {"network": BRIDGE, "tasks": {
        "none": task(f"cat /proc/net/dev > {tmp_path}/none", "none"),
        "net": task(f"cat /proc/net/dev > {tmp_path}/net", isolation={"namespaces": ["net"]}),
        "host": task(f"cat /proc/net/dev > {tmp_path}/host", "host"),
        "bridged": task(f"cat /proc/net/dev > {tmp_path}/bridged", "bridge"),
    }}}}
    result = run(corral, tmp_path, config)
    assert result.returncode == 0, result
    assert interfaces(tmp_path / "none") == ["lo"]
    assert interfaces(tmp_path / "net") == ["lo"]
    # host: corral's namespace, where corral made the bridge and the
    # bridge task's host end.
    assert "corral0" in interfaces(tmp_path / "host")
    assert interfaces(tmp_path / "bridged") == ["eth0", "lo"]


def test_a_bridge_task_in_a_user_namespace_has_eth0_and_reaches_a_plain_one(corral, tmp_path):
    """Its network namespace is cloned with its user namespace (it may join
    none of corral's) and connected between clone and exec."""
    server = (f"{PYTHON} -c 'import socket; s = socket.socket(); "
              f"s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
              f"s.bind((\"0.0.0.0\", 8080)); s.listen(); "
              f"c, peer = s.accept(); "
              f"print(c.recv(64).decode() + \" from \" + peer[0])'")
    # The task's root is uid 100000 outside: it reports on stdout, and
    # tries until the server listens.
    client = (f"{PYTHON} -c \"{PRINT_ADDRESS}\"; cat /proc/self/uid_map; "
              f"{PYTHON} -c 'import socket, time\n"
              f"for attempt in range(500):\n"
              f"    try:\n"
              f"        socket.create_connection((\"10.88.0.2\", 8080), timeout=5).sendall(b\"hi\")\n"
              f"        print(\"connected\")\n"
              f"        break\n"
              f"    except ConnectionRefusedError:\n"
              f"        time.sleep(0.02)'")
    userns = {"namespaces": ["pid", "mount", "user"],
              "user": {"uid_map": "0 100000 65536", "gid_map": "0 100000 65536"}}
    config = {"groups": {"g": {"network": BRIDGE, "tasks": {
        "server": task(server, "bridge"),
        "client": task(client, "bridge", isolation=userns),
    }}}}
    result = run(corral, tmp_path, config)
    assert result.returncode == 0, result
    lines = [line.split(" | ", 1)[1].split() for line in result.stdout_lines() if " | " in line]
    assert ["10.88.0.3"] in lines, result
    assert ["0", "100000", "65536"] in lines, result
    assert ["connected"] in lines, result
    assert ["hi", "from", "10.88.0.3"] in lines, result


def test_bridge_tasks_reach_each_other_and_a_none_task_reaches_nobody(corral, tmp_path):
    server = (f"{PYTHON} -c 'import socket; s = socket.socket(); "
              f"s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); "
              f"s.bind((\"0.0.0.0\", 8080)); s.listen(); "
              f"open(\"{tmp_path}/listening\", \"w\").close(); "
              f"c, peer = s.accept(); "
              f"open(\"{tmp_path}/received\", \"w\").write(c.recv(64).decode() + \" from \" + peer[0])'")
    # Each client waits for the server's marker, then connects once.
    connect = (f"while [ ! -e {tmp_path}/listening ]; do sleep 0.02; done; "
               f"{PYTHON} -c 'import socket, sys\n"
               f"try:\n"
               f"    socket.create_connection((\"10.88.0.2\", 8080), timeout=5).sendall(b\"hello\")\n"
               f"    print(\"connected\")\n"
               f"except OSError as error:\n"
               f"    print(error.strerror)' > {tmp_path}/$0")
    config = {"groups": {"g": {"network": BRIDGE, "tasks": {
        "server": task(server, "bridge"),
        "client": {**task(connect, "bridge"), "command": ["/bin/sh", "-c", connect, "client"]},
        "loner": {**task(connect, "none"), "command": ["/bin/sh", "-c", connect, "loner"]},
    }}}}
    result = run(corral, tmp_path, config)
    assert result.returncode == 0, result
    assert (tmp_path / "client").read_text().strip() == "connected"
    assert (tmp_path / "received").read_text() == "hello from 10.88.0.3"
    assert (tmp_path / "loner").read_text().strip() == "Network is unreachable"


def routes(report):
    """[(iface, destination, gateway, flags)] of a /proc/net/route copy."""
    rows = []
    for line in Path(report).read_text().splitlines()[1:]:
        fields = line.split()
        rows.append((fields[0], fields[1], fields[2], fields[3]))
    return rows


def test_addresses_in_config_order_with_the_default_route_kept_across_restarts(
        corral, tmp_path):
    # `first` runs twice (exit 1, restarted once): both runs see one address.
    script = (f"{PYTHON} -c \"{PRINT_ADDRESS}\" >> {tmp_path}/$0; "
              f"cat /proc/net/route > {tmp_path}/$0.route; "
              f"[ $(wc -l < {tmp_path}/$0) -ge 2 ] || [ $0 != first ] || exit 1")
    restart_once = {"policy": "on-failure", "attempts": 1, "delay": "0"}
    config = {"groups": {"g": {"network": {"bridge": "corral1", "subnet": "10.99.4.0/22"},
                               "tasks": {
        "first": {**task(script, "bridge"), "command": ["/bin/sh", "-c", script, "first"],
                  "restart": restart_once},
        "plain": task("true", "none"),
        "second": {**task(script, "bridge"), "command": ["/bin/sh", "-c", script, "second"]},
    }}}}
    result = run(corral, tmp_path, config)
    assert result.returncode == 0, result
    assert (tmp_path / "first").read_text().split() == ["10.99.4.2", "10.99.4.2"]
    assert (tmp_path / "second").read_text().split() == ["10.99.4.3"]
    # The default route via the bridge (10.99.4.1, little-endian hex), and
    # the subnet on eth0.
    assert sorted(routes(tmp_path / "second.route")) == [
        ("eth0", "00000000", "0104630A", "0003"),
        ("eth0", "0004630A", "00000000", "0001"),
    ]


def test_group_tasks_share_one_namespace(corral, tmp_path):
    script = f"readlink /proc/self/ns/net > {tmp_path}/$0; cat /proc/net/dev > {tmp_path}/$0.dev"
    def named(name, mode):
        return {**task(script, mode), "command": ["/bin/sh", "-c", script, name]}
    config = {"groups": {
        "pod": {"tasks": {"a": named("a", "group"), "b": named("b", "group")}},
        "other": {"tasks": {"c": named("c", "group"), "d": named("d", "none")}},
    }}
    result = run(corral, tmp_path, config)
    assert result.returncode == 0, result
    namespace = {name: (tmp_path / name).read_text().strip() for name in "abcd"}
    assert namespace["a"] == namespace["b"]
    assert len({namespace["a"], namespace["c"], namespace["d"]}) == 3, namespace
    assert namespace["a"] != os.readlink("/proc/self/ns/net")
    assert interfaces(tmp_path / "a.dev") == ["lo"]


def test_a_group_namespace_on_a_bridge_is_reachable_at_the_last_address(corral, tmp_path):
    # A pod pair: one serves on eth0, the other sees the same eth0; a
    # bridge task of the group reaches the server at the subnet's last host.
    server = (f"exec {PYTHON} -c 'import socket; s = socket.socket(); "
              f"s.bind((\"0.0.0.0\", 8080)); s.listen(); "
              f"open(\"{tmp_path}/listening\", \"w\").close(); "
              f"c, peer = s.accept(); "
              f"open(\"{tmp_path}/received\", \"w\").write(c.recv(64).decode() + \" from \" + peer[0])'")
    client = (f"while [ ! -e {tmp_path}/listening ]; do sleep 0.02; done; "
              f"exec {PYTHON} -c 'import socket; "
              f"socket.create_connection((\"10.88.0.254\", 8080)).sendall(b\"hi pod\")'")
    looker = f"{PYTHON} -c \"{PRINT_ADDRESS}\" > {tmp_path}/pod-address"
    config = {"groups": {"g": {"network": BRIDGE, "tasks": {
        "server": task(server, "group"),
        "looker": task(looker, "group"),
        "client": task(client, "bridge"),
    }}}}
    result = run(corral, tmp_path, config)
    assert result.returncode == 0, result
    assert (tmp_path / "pod-address").read_text().strip() == "10.88.0.254"
    assert (tmp_path / "received").read_text() == "hi pod from 10.88.0.2"


def link_names(pid):
    """Links of the network namespace of process `pid`."""
    output = subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "ip", "-o", "link"],
                            capture_output=True, text=True, check=True).stdout
    return sorted(names_of_links(output))


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def test_fifty_restarts_of_a_bridge_task_leak_no_veth_and_no_fd(corral, tmp_path):
    runs = tmp_path / "runs"
    # Run 5 and run 50 wait for the test to look, then every run fails.
    script = (f"echo >> {runs}; n=$(wc -l < {runs}); "
              f"if [ $n -eq 5 ] || [ $n -eq 50 ]; then touch {tmp_path}/at-$n; "
              f"while [ ! -e {tmp_path}/go-$n ]; do sleep 0.02; done; fi; exit 1")
    config = {"groups": {"g": {"network": BRIDGE, "tasks": {"app": {
        **task(script, "bridge"),
        "restart": {"policy": "on-failure", "attempts": 49, "interval": "1h", "delay": "0",
                    "max_delay": "0"}}}}}}
    running = corral.start(config, wrapper=in_own_netns(tmp_path))
    shell = running.pid
    corral_pid = wait_for(lambda: [pid for pid, _ in children_of(shell)], what="corral")[0]

    seen = {}
    for n in (5, 50):
        wait_for(lambda: (tmp_path / f"at-{n}").exists(), timeout=60, what=f"run {n}")
        seen[n] = (fd_count(corral_pid), link_names(corral_pid))
        (tmp_path / f"go-{n}").touch()
    result = running.wait(timeout=60)
    print("fds and links at runs 5 and 50:", seen)
    assert result.returncode != 0, result  # failed for good after 49 restarts
    assert len(runs.read_text().splitlines()) == 50
    # One veth (the running task's) besides lo and the bridge, both times.
    bridge, veth, loopback = seen[5][1]
    assert (bridge, loopback) == ("corral0", "lo") and veth.startswith("cr"), seen
    assert seen[5][1] == seen[50][1], seen
    assert seen[5][0] == seen[50][0], seen
    assert links_after(tmp_path) == ["lo"]


def libnl_mapped(pid):
    return "libnl-route-3" in Path(f"/proc/{pid}/maps").read_text()


def test_libnl_is_loaded_only_once_a_bridge_needs_it(corral, tmp_path):
    """corral loads libnl when it first needs netlink (isolation/
    netlink_library.h): isolated tasks of mode none, which take spare
    namespaces made without netlink, leave it unloaded; a bridge task
    loads it, and the bridge works through it."""
    config = {"groups": {"plain": {"tasks": {"app": {
        **task(f"touch {tmp_path}/plain-up; sleep 1000", "none",
               isolation={"namespaces": ["pid", "mount", "net"]})}}}}}
    running = corral.start(config, wrapper=in_own_netns(tmp_path))
    corral_pid = wait_for(lambda: [pid for pid, _ in children_of(running.pid)],
                          what="corral")[0]
    wait_for(lambda: (tmp_path / "plain-up").exists(), what="the isolated task")
    if "ld-linux" not in Path(f"/proc/{corral_pid}/maps").read_text():
        os.kill(corral_pid, signal.SIGTERM)
        running.wait()
        pytest.skip("a static corral has libnl linked in")
    assert not libnl_mapped(corral_pid)
    os.kill(corral_pid, signal.SIGTERM)  # not the wrapper's shell
    assert running.wait().returncode == 0

    config = {"groups": {"g": {"network": BRIDGE, "tasks": {"app": task(
        f"{PYTHON} -c \"{PRINT_ADDRESS}\" > {tmp_path}/address; sleep 1000", "bridge")}}}}
    running = corral.start(config, wrapper=in_own_netns(tmp_path))
    corral_pid = wait_for(lambda: [pid for pid, _ in children_of(running.pid)],
                          what="corral")[0]
    wait_for(lambda: (tmp_path / "address").exists()
             and (tmp_path / "address").read_text().strip(),
             what=lambda: f"the bridge task: {running.stderr_text()}")
    assert (tmp_path / "address").read_text().startswith("10.88.0."), running.stderr_text()
    assert libnl_mapped(corral_pid)
    os.kill(corral_pid, signal.SIGTERM)
    assert running.wait().returncode == 0
    assert links_after(tmp_path) == ["lo"]


def test_a_bridge_that_is_not_one_stops_corral_naming_the_group(corral, tmp_path):
    config = {"groups": {"web": {"network": {"bridge": "lo", "subnet": "10.88.0.0/24"},
                                 "tasks": {"app": task("true", "bridge")}}}}
    result = run(corral, tmp_path, config)
    assert result.returncode == 1, result
    assert ("group web: network: use lo as the bridge (it is not one): File exists"
            in result.stderr), result


def test_a_bridge_that_was_there_stays_without_corral_s_address(corral, tmp_path):
    config = {"groups": {"g": {"network": BRIDGE, "tasks": {
        "app": task(f"{PYTHON} -c \"{PRINT_ADDRESS}\" > {tmp_path}/address", "bridge")}}}}
    result = corral.run(config, wrapper=in_own_netns(
        tmp_path, before="ip link add corral0 type bridge"))
    assert result.returncode == 0, result
    assert (tmp_path / "address").read_text().strip() == "10.88.0.2"
    # The bridge is the test's: it stays, without the address corral gave it.
    assert links_after(tmp_path) == ["lo", "corral0"]
    assert "10.88.0.1" not in (tmp_path / "addresses-after").read_text()


def test_a_veth_name_taken_fails_the_start_naming_task_and_step(corral, tmp_path):
    # A prestart task in corral's namespace (no isolation) takes the name
    # corral gives g/app's veth: "cr" and FNV-1a of "<corral's pid>/g/app".
    take_name = (
        f"exec {PYTHON} -c 'import os, subprocess\n"
        f"h = 2166136261\n"
        f"for byte in (str(os.getppid()) + \"/g/app\").encode():\n"
        f"    h = ((h ^ byte) * 16777619) & 0xffffffff\n"
        f"name = \"cr%08x\" % h\n"
        f"open(\"{tmp_path}/taken\", \"w\").write(name)\n"
        f"subprocess.run([\"ip\", \"link\", \"add\", name, \"type\", \"bridge\"], check=True)'")
    config = {"groups": {"g": {"network": BRIDGE, "tasks": {
        "taker": {"command": ["/bin/sh", "-c", take_name], "restart": NEVER,
                  "lifecycle": {"hook": "prestart"}},
        "app": task("true", "bridge"),
    }}}}
    result = corral.run(config, wrapper=in_own_netns(tmp_path))
    taken = (tmp_path / "taken").read_text()
    assert result.returncode != 0, result
    message = f"g/app: network: create veth {taken}: File exists"
    assert message in result.stderr, result
    # Only the test's link is left: corral removed its bridge.
    assert links_after(tmp_path) == ["lo", taken]


def test_the_network_example_runs_to_its_end(corral, tmp_path, repo_root):
    result = run(corral, tmp_path, repo_root / "examples" / "network.yaml")
    assert result.returncode == 0, result
    lines = result.stdout_lines()
    for expected in ("web/client | client got HTTP 200 from 10.88.0.2",
                     "web/offline | offline: Network is unreachable",
                     "pod/listener | listener got hello over the pod loopback"):
        assert expected in lines, result
