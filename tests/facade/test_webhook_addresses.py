"""Where a webhook delivery may connect, with ``webhooks.private_networks`` false (background/webhooks.py):
only to an address its check saw. A DNS answer that turns from public to private between lookups
(rebinding: public when the webhook is created and checked, loopback when the delivery connects) never
leads a delivery to the private address; the receiver listening there, on 127.0.0.1, gets nothing."""

from __future__ import annotations

import socket
import time

import pytest

from memlane import Memory
from support.openai_server import OpenAIServer, Reply

HOST = "hooks.rebinding.test"
PUBLIC = "93.184.216.34"  # the public answer: no connection to it leaves this machine (``unreachable``)
DEADLINE = 60.0  # generous: nothing here asserts on time


class RebindingDNS:
    """The system resolver, but ``HOST`` resolves to ``PUBLIC`` for its first ``public_lookups`` lookups and
    to 127.0.0.1 for every later one (a DNS server answering with a time-to-live of 0)."""

    def __init__(self, real, public_lookups: int):
        self.real, self.public_lookups, self.lookups = real, public_lookups, 0

    def __call__(self, host, port, *args, **kwargs):
        if host != HOST:
            return self.real(host, port, *args, **kwargs)
        self.lookups += 1
        address = PUBLIC if self.lookups <= self.public_lookups else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, int(port)))]


def unreachable(real):
    """``socket.create_connection`` with ``PUBLIC`` refused at once (this machine has no route out)."""
    def connect(address, *args, **kwargs):
        if address[0] == PUBLIC:
            raise ConnectionRefusedError(f"no route to {PUBLIC} in the tests")
        return real(address, *args, **kwargs)
    return connect


def _ended(memory, webhook_id):
    deadline = time.monotonic() + DEADLINE
    while True:
        found = memory.webhook_deliveries(webhook_id)
        if found and all(d["status"] in ("SUCCEEDED", "FAILED") for d in found):
            return found
        assert time.monotonic() < deadline, "the delivery did not end"
        time.sleep(0.05)


# the lookup at which the answer turns private (the first, at creation, is always public: the check passes)
@pytest.mark.parametrize("public_lookups, error", [
    (1, f"not delivered: url's host {HOST!r} resolves to a non-public address (127.0.0.1)"),
    (2, "ConnectError: no route to 93.184.216.34"),  # the delivery connected to the public address it checked
    (3, "ConnectError: no route to 93.184.216.34"),
])
def test_a_dns_answer_that_turns_private_after_the_check_gets_no_delivery(tmp_path, hashing_embedder, monkeypatch,
                                                                          public_lookups, error):
    dns = RebindingDNS(socket.getaddrinfo, public_lookups)
    monkeypatch.setattr(socket, "getaddrinfo", dns)
    monkeypatch.setattr(socket, "create_connection", unreachable(socket.create_connection))
    config = {"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "m.db")}},
              "webhooks": {"private_networks": False},
              "background": {"poll_seconds": 0.05, "retry_seconds": 0.05, "max_attempts": 1}}
    with OpenAIServer() as receiver, Memory(config, embedder=hashing_embedder) as memory:
        receiver.route("/hook", Reply(json={}))
        hook = memory.create_webhook(f"http://{HOST}:{receiver.port}/hook", "rebinding", ["memory_add"])
        memory.add("I like green tea", user_id="alice", infer=False)
        memory.start_background()  # the workers that post deliveries (a server runs them)
        [delivery] = _ended(memory, hook["webhook_id"])
        assert receiver.requests("/hook") == []  # nothing reached the private address
    assert delivery["status"] == "FAILED" and error in delivery["error"], delivery["error"]
