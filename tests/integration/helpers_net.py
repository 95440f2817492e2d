"""Helpers for tests of task networks and network probes (test_network.py,
test_net_probes.py): corral in a network namespace of its own, free ports
and servers on them."""

import socket
import sys

BRIDGE = {"bridge": "corral0", "subnet": "10.88.0.0/24"}


def in_own_netns(tmp_path, before=":"):
    """A wrapper: corral in a new network namespace (after the shell
    commands `before`), and the links and addresses left in it written to
    tmp_path/links-after and addresses-after once corral has exited."""
    after = tmp_path / "links-after"
    return ["unshare", "--net", "--", "/bin/sh", "-c",
            f'{before}; "$@"; status=$?; ip -o link > {after}; '
            f'ip -o -4 addr > {tmp_path}/addresses-after; exit $status', "sh"]


PYTHON = sys.executable


def free_port():
    with socket.socket() as probe_socket:
        probe_socket.bind(("127.0.0.1", 0))
        return probe_socket.getsockname()[1]


def http_server(port, bind="127.0.0.1"):
    return [PYTHON, "-m", "http.server", str(port), "--bind", bind]
