"""Helpers for tests of sd_notify to corral's own parent
(test_parent_notify.py): a socket that plays the parent."""

import os
import socket

from conftest import wait_for


class Parent:
    """A datagram socket, as systemd's notify socket: what arrived, in
    order, each datagram as {NAME: VALUE}."""

    def __init__(self, address):
        self.address = address
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.socket.bind("\0" + address[1:] if address.startswith("@") else address)
        self.socket.setblocking(False)
        self.messages = []

    def receive(self):
        while True:
            try:
                data = self.socket.recv(65536)
            except BlockingIOError:
                return self.messages
            fields = dict(line.split("=", 1) for line in data.decode().split("\n"))
            self.messages.append(fields)

    def with_field(self, name, value=None):
        return [m for m in self.receive() if name in m and (value is None or m[name] == value)]

    def wait_for(self, name, value=None, count=1, what=None):
        return wait_for(lambda: len(self.with_field(name, value)) >= count and
                        self.with_field(name, value),
                        what=what or f"{name}={value or '...'} from corral "
                                     f"(so far: {self.messages})")

    def env(self, **extra):
        return {"NOTIFY_SOCKET": self.address, **extra}

    def close(self):
        self.socket.close()
        if not self.address.startswith("@"):
            os.unlink(self.address)
