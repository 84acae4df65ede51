"""A first run as a new user makes it: ``memlane serve`` in a fresh home (a real process), the key it
prints once, its ready curl line, the CLI going through the running server, MCP over HTTP with the same
default user as stdio, and the API docs without a CDN."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
import threading
import time

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memlane.hosting import local_server
from memlane.hosting.keys import digest
from memlane.server.first_run import first_start_key
from support.live_server import free_port

TIMEOUT = 180.0  # the shared machine is slow to load the model; nothing here asserts on time


def memlane(home, *args, env=None, check=True):
    """The memlane command in a process of its own, as a user types it."""
    result = subprocess.run([sys.executable, "-m", "memlane.cli", "--home", str(home), *args], capture_output=True,
                            text=True, timeout=TIMEOUT, env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})})
    if check:
        assert result.returncode == 0, result.stdout + result.stderr
    return result


class Served:
    """``memlane serve`` in a subprocess; its stdout collected line by line."""

    def __init__(self, home, *args):
        self.home, self.port = home, free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memlane.cli", "--home", str(home), "serve", "--port", str(self.port),
             "--log-level", "warning", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        self.lines: list[str] = []
        threading.Thread(target=lambda: self.lines.extend(self.process.stdout), daemon=True).start()

    def wait_ready(self) -> None:
        deadline = time.monotonic() + TIMEOUT
        while local_server.read(self.home) is None:  # announced once the model is loaded and it listens
            assert self.process.poll() is None, "".join(self.lines)
            assert time.monotonic() < deadline, "".join(self.lines)
            time.sleep(0.2)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)

    @property
    def output(self) -> str:
        return "".join(self.lines)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    home = tmp_path_factory.mktemp("first-run-home")
    server = Served(home)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()
    assert local_server.read(home) is None, "server.json must go when the server stops"


def printed_key(output: str) -> str:
    return re.search(r"^\s+(ml_[A-Za-z0-9_-]{43})\s*$", output, re.M).group(1)


@pytest.mark.model  # memlane serve loads the local model in its process
def test_first_start_prints_a_key_once_with_a_curl_line_that_works(served):
    key = printed_key(served.output)
    curl = re.search(r"try it\s+(curl .*)$", served.output, re.M).group(1)
    assert served.url in curl and key in curl
    added = json.loads(subprocess.run(["bash", "-c", curl], capture_output=True, text=True, timeout=TIMEOUT,
                                      check=True).stdout)
    assert [r["event"] for r in added["results"]] == ["ADD"] and "Thai" in added["results"][0]["memory"]
    stored = (served.home / "keys.db").read_bytes()
    assert key.encode() not in stored and digest(key).encode() in stored  # only the hash is kept
    listed = json.loads(memlane(served.home, "--local", "keys", "list", "--json").stdout)
    assert [(k["tenant"], k["admin"]) for k in listed] == [("default", True)]


@pytest.mark.model  # memlane serve loads the local model in its process
def test_the_cli_goes_through_the_running_server(served):
    announced = served.home / "server.json"
    assert stat.S_IMODE(announced.stat().st_mode) == 0o600
    assert local_server.read(served.home).url == served.url
    info = json.loads(memlane(served.home, "info", "--json").stdout)
    assert info["server"] == served.url  # answered by the server, not a store opened here
    added = json.loads(memlane(served.home, "add", "I collect vinyl records", "--user", "bob", "--no-infer",
                               "--json").stdout)
    memory_id = added["results"][0]["id"]
    key = printed_key(served.output)
    with httpx.Client(base_url=served.url, headers={"X-API-Key": key}, timeout=TIMEOUT) as rest:
        assert rest.get(f"/memories/{memory_id}").json()["memory"] == "I collect vinyl records"
        rest.post("/memories", json={"messages": "I play the cello", "user_id": "bob", "infer": False})
    listed = json.loads(memlane(served.home, "list", "--user", "bob", "--json").stdout)
    assert {m["memory"] for m in listed["results"]} == {"I collect vinyl records", "I play the cello"}
    found = json.loads(memlane(served.home, "search", "music instrument", "--user", "bob", "-n", "1", "--json").stdout)
    assert found["results"][0]["memory"] == "I play the cello"
    assert [e["event"] for e in json.loads(memlane(served.home, "history", memory_id, "--json").stdout)] == ["ADD"]
    unknown = memlane(served.home, "history", "no-such-id", check=False)
    assert unknown.returncode == 1 and "no memory with id 'no-such-id'" in unknown.stderr
    scopeless = memlane(served.home, "search", "anything", check=False)
    assert scopeless.returncode == 1 and "--user, --agent or --run" in scopeless.stderr
    wrong_key = memlane(served.home, "list", "--user", "bob", env={"MEMLANE_URL": served.url,
                                                                   "MEMLANE_API_KEY": "ml_wrong"}, check=False)
    assert wrong_key.returncode == 1 and "MEMLANE_API_KEY" in wrong_key.stderr


@pytest.mark.model  # memlane serve loads the local model in its process
def test_a_second_serve_on_the_busy_port_leaves_the_running_server_announced(served):
    announced = (served.home / "server.json").read_bytes()
    second = memlane(served.home, "serve", "--port", str(served.port), check=False)
    assert second.returncode == 1, second.stdout + second.stderr
    assert f"cannot listen on 127.0.0.1:{served.port}" in second.stderr
    assert f"memlane's server for this home already runs there (pid {served.process.pid})" in second.stderr
    assert "memlane server" not in second.stdout  # it stopped before starting anything
    assert (served.home / "server.json").read_bytes() == announced
    assert json.loads(memlane(served.home, "info", "--json").stdout)["server"] == served.url


@pytest.mark.model
def test_another_tenant_works_on_its_own_store_here_while_the_server_serves_default(served):
    """The server's local token acts for tenant default only: --tenant acme is served by acme's store
    in this process (<home>/tenants/acme.db), never by the server's default tenant."""
    added = json.loads(memlane(served.home, "--tenant", "acme", "add", "I grow tomatoes", "--user", "carol",
                               "--no-infer", "--json").stdout)
    assert (served.home / "tenants" / "acme.db").exists()
    assert "server" not in json.loads(memlane(served.home, "--tenant", "acme", "info", "--json").stdout)
    assert json.loads(memlane(served.home, "--tenant", "default", "info", "--json").stdout)["server"] == served.url
    listed = json.loads(memlane(served.home, "--tenant", "acme", "list", "--user", "carol", "--json").stdout)
    assert [m["id"] for m in listed["results"]] == [added["results"][0]["id"]]
    assert json.loads(memlane(served.home, "list", "--user", "carol", "--json").stdout)["results"] == []
    named = memlane(served.home, "--tenant", "acme", "list", "--user", "carol",
                    env={"MEMLANE_URL": served.url, "MEMLANE_API_KEY": printed_key(served.output)}, check=False)
    assert named.returncode == 1 and "--tenant acme" in named.stderr and "MEMLANE_URL" in named.stderr


@pytest.mark.model  # memlane serve loads the local model in its process
def test_mcp_over_http_has_the_same_default_user_as_stdio(served):
    key = printed_key(served.output)

    async def run():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT)
        async with Client(streamable_http_client(served.url + "/mcp", http_client=http),
                          read_timeout_seconds=TIMEOUT) as client:
            return await client.call_tool("add_memory", {"messages": "I keep bees", "infer": False})

    added = anyio.run(run).structured_content
    with httpx.Client(base_url=served.url, headers={"X-API-Key": key}, timeout=TIMEOUT) as rest:
        stored = rest.get(f"/memories/{added['results'][0]['id']}").json()
    assert stored["user_id"] == "default"
    assert "default user default, --mcp-user-id" in served.output


@pytest.mark.model  # memlane serve loads the local model in its process
def test_api_docs_load_their_assets_from_the_server(served):
    with httpx.Client(base_url=served.url, timeout=TIMEOUT) as anonymous:
        page = anonymous.get("/docs")
        assert page.status_code == 200
        sources = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert sources and all(s.startswith("/") for s in sources), sources  # nothing from a CDN
        for asset in sources:
            fetched = anonymous.get(asset)
            assert fetched.status_code == 200 and len(fetched.content) > 1000, asset
        assert "SwaggerUIBundle" in anonymous.get("/docs-assets/swagger-ui-bundle.js").text
        assert anonymous.get("/redoc").status_code == 200
        assert anonymous.get("/docs-assets/%2e%2e/keys.db").status_code == 404  # nothing outside the assets


@pytest.mark.parametrize("loopback, existing, created", [
    (True, [], True),                    # a fresh loopback server: a key to start with
    (True, ["default"], False),          # keys exist already
    (True, ["revoked"], False),          # every key revoked: the operator decided, nothing comes back
    (False, [], False),                  # reachable from other machines: never a key by itself
])
def test_first_start_key_only_on_a_fresh_loopback_server(tmp_path, loopback, existing, created):
    from memlane.hosting.keys import KeyStore

    keys = KeyStore(tmp_path / "keys.db")
    for tenant in existing:
        made = keys.create(tenant)[1]
        if tenant == "revoked":
            keys.revoke(made.id)
    first = first_start_key(tmp_path, loopback=loopback, tenant="default")
    assert (first is not None) == created
    if created:
        assert (first["tenant"], first["admin"]) == ("default", True)
        assert keys.verify(first["key"]).tenant == "default"
    keys.close()


def test_mcp_errors_name_the_flag_of_the_face_that_serves_them(memory):
    from memlane.mcp_server import tools

    for flag in ("memlane mcp --user-id NAME", "memlane serve --mcp-user-id NAME"):
        caller = tools.Caller(memory, default_user_id=None, default_user_flag=flag)
        with pytest.raises(tools.ToolFailure, match=re.escape(flag)):
            tools.search_memories(caller, "anything")


@pytest.mark.model  # memlane serve loads the local model in its process
def test_serve_and_mcp_announce_themselves_as_json(tmp_path):
    server = Served(tmp_path / "home", "--json", "--no-auth")
    try:
        server.wait_ready()
        started = json.loads(server.lines[0])
        assert (started["url"], started["auth"], started["mcp_user_id"]) == (server.url, False, "default")
        assert "first_key" not in started and local_server.read(server.home).key is None  # no keys without auth
        assert json.loads(memlane(server.home, "info", "--json").stdout)["server"] == server.url
    finally:
        server.stop()
    stdio = subprocess.run([sys.executable, "-m", "memlane.cli", "--home", str(tmp_path / "home"), "mcp", "--json"],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=TIMEOUT,
                           env={**os.environ, "HF_HUB_OFFLINE": "1"})
    announced = json.loads(stdio.stderr.splitlines()[0])
    assert (announced["mcp"], announced["default_user_id"]) == ("stdio", "default")
    assert stdio.stdout == ""  # stdout belongs to the protocol
