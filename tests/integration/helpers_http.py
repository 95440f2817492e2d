"""Helpers for tests of corral's HTTP endpoint and its /metrics
(test_http_endpoint.py, test_metrics.py): a raw HTTP client, corral with
an endpoint, /readyz against `status --ready`, and the samples of a
scrape."""

import json
import signal
import socket

from conftest import wait_for
from helpers_net import free_port

# ---- a small HTTP client, raw so that every byte is the test's ----------------


def connect(address, timeout=10):
    """A connected socket to ("127.0.0.1", port) or a Unix socket path."""
    if isinstance(address, tuple):
        sock = socket.create_connection(address, timeout=timeout)
    else:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(str(address))
    return sock


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"Response({self.status}, {self.headers}, {self.body[:400]!r})"


def read_response(sock, buffer=b"", head_only=False):
    """One response from `sock`: (Response, the bytes read past it)."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(65536)
        assert chunk, f"connection closed before a whole head: {buffer!r}"
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    version, status, _ = lines[0].split(" ", 2)
    assert version == "HTTP/1.1", lines[0]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = 0 if head_only else int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "connection closed within a body"
        rest += chunk
    return Response(int(status), headers, rest[:length].decode()), rest[length:]


def request(address, target, method="GET", version="HTTP/1.1", headers=None, close=True):
    """One request on a connection of its own."""
    fields = {"Host": "corral"} if version == "HTTP/1.1" else {}
    if close:
        fields["Connection"] = "close"
    fields.update(headers or {})
    head = f"{method} {target} {version}\r\n" + "".join(
        f"{name}: {value}\r\n" for name, value in fields.items()) + "\r\n"
    with connect(address) as sock:
        sock.sendall(head.encode())
        response, _ = read_response(sock, head_only=method == "HEAD")
        return response


def raw_exchange(address, data):
    """Sends `data`, returns everything corral sends until it closes."""
    with connect(address) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


def http_config(config, listen):
    config = dict(config)
    config["http"] = {"listen": listen}
    return config


def listen_text(address):
    return f"{address[0]}:{address[1]}" if isinstance(address, tuple) else str(address)


def start(corral, config, address=None):
    """corral with `config` and an endpoint on `address` (a free port by
    default); returns (running, address) once both sockets answer."""
    address = address or ("127.0.0.1", free_port())
    running = corral.start(http_config(config, listen_text(address)))
    corral.wait_control(running)
    wait_for(lambda: livez_answers(address), what="/livez to answer")
    return running, address


def livez_answers(address):
    try:
        return request(address, "/livez").status == 200
    except OSError:
        return False


def stop(running):
    running.send(signal.SIGTERM)
    running.wait()


# ---- /readyz and `corral status --ready` ----------------------------------------


def readyz_lines(response):
    """/readyz's body as `status --ready` prints it."""
    body = response.json()
    assert body["ready"] == (not body["not_ready"]), body
    return [f"{entry['task']}: not ready ({entry['reason']})" for entry in body["not_ready"]] \
        or ["ready"]


def query_of(target):
    if not target:
        return ""
    group, _, task = target.partition("/")
    return f"?group={group}&task={task}" if task else f"?group={group}"


def assert_agree(corral, address, target=None, query=None):
    """/readyz and `corral status --ready [TARGET]` agree: 200 with exit 0,
    503 with exit 1, the same tasks with the same reasons. Returns the
    CLI's lines."""
    cli = corral.cli("status", "--ready", *([target] if target else []))
    response = request(address, "/readyz" + (query if query is not None else query_of(target)))
    assert response.status in (200, 503), response
    assert response.headers["content-type"] == "application/json", response
    assert (response.status == 200) == (cli.returncode == 0), (response, cli)
    assert readyz_lines(response) == cli.stdout.splitlines(), (response, cli)
    return cli.stdout.splitlines()


# ---- /metrics -----------------------------------------------------------------

HOG = ["/usr/bin/python3", "-c", "a = bytearray(256 * 1024 * 1024); print(len(a))"]


def scrape(address, accept=None):
    """GET /metrics: its text and content type."""
    response = request(address, "/metrics", headers={"Accept": accept} if accept else None)
    assert response.status == 200, response
    return response.body, response.headers["content-type"]


def samples(text):
    """{(name, frozenset(labels)): value} of the text's sample lines."""
    found = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        head, value = line.rsplit(" ", 1)
        name, _, labels = head.partition("{")
        pairs = frozenset(tuple(part.split("=", 1)) for part in labels.rstrip("}").split(",")
                          if part) if labels else frozenset()
        found[(name, frozenset((k, v.strip('"')) for k, v in pairs))] = float(value)
    return found


def value(found, name, **labels):
    key = (name, frozenset(labels.items()))
    assert key in found, f"no {name}{labels} in {sorted(k for k in found if k[0] == name)}"
    return found[key]


def started_again_after_replaced(events, task):
    kinds = events.kinds(task)
    return "replaced" in kinds and "started" in kinds[kinds.index("replaced"):]
