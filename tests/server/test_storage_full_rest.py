"""A full disk through every face of a real server on 127.0.0.1: REST answers 507 naming the cause with a
request id for an add or an update, searches and lists still 200; the command line's client raises
``StorageFullError``; an MCP tool call is a tool error naming it; the ``memlane`` command prints one line
and exits non-zero. Once there is room the retried add (same Idempotency-Key) is stored once and the file
is intact. The store is made full with ``PRAGMA max_page_count`` (tests/support/full_store.py)."""

from __future__ import annotations

import asyncio
import json

import pytest

from memlane import StorageFullError
from memlane.cli.remote import RemoteMemory
from memlane.hosting.local_server import ServerAddress
from support.full_store import PageCap, integrity
from support.server_fixtures import call_tool, mcp_client, serving

TEXT = "I keep a diary about the garden; " * 40


def _add_body(n: int) -> dict:
    return {"messages": [{"role": "user", "content": f"note {n}: {TEXT}"}], "user_id": "ann", "infer": False}


def test_a_full_store_answers_507_on_every_face_and_takes_the_retry_once(tmp_path, hashing_embedder):
    with serving(tmp_path / "home", hashing_embedder, mcp_user_id="ann") as live:
        key = live.key("garden")
        memory = live.memory("garden")
        with live.client(key) as api:
            acked = [api.post("/memories", json=_add_body(n), headers={"Idempotency-Key": f"k{n}"}).json()
                     ["results"][0]["id"] for n in range(3)]
            cap = PageCap(memory.store)
            cap.fill()
            for n in range(3, 200):
                answer = api.post("/memories", json=_add_body(n), headers={"Idempotency-Key": f"k{n}"})
                if answer.status_code != 200:
                    break
                acked.append(answer.json()["results"][0]["id"])
            failed = n
            assert answer.status_code == 507, answer.text
            body = answer.json()
            assert body["detail"].startswith("the disk holding the store is full: nothing of this request was stored")
            assert body["request_id"] and body["request_id"] == answer.headers["X-Request-ID"]
            assert str(tmp_path) not in answer.text  # the server's paths stay in its log

            updated = api.put(f"/memories/{acked[0]}", json={"text": "changed: " + TEXT * 10})
            assert updated.status_code == 507 and "disk holding the store is full" in updated.json()["detail"]
            assert api.post("/search", json={"query": "garden diary", "user_id": "ann"}).status_code == 200
            listed = api.get("/memories", params={"user_id": "ann", "limit": 1000})
            assert listed.status_code == 200 and len(listed.json()["results"]) == len(acked)
            assert api.get("/health").status_code == 200

            with pytest.raises(StorageFullError):  # the memlane command's client of a running server
                RemoteMemory(ServerAddress(url=live.url, key=key, pid=0)).add(
                    [{"role": "user", "content": f"note remote: {TEXT}"}], user_id="ann", infer=False)

            async def mcp_add():
                async with mcp_client(live, key) as client:
                    return await call_tool(client, "add_memory", {"messages": f"note mcp: {TEXT}", "infer": False})

            tool = asyncio.run(mcp_add())
            assert "StorageFullError: the disk holding the store is full" in tool["error"], tool

            cap.lift()
            first = api.post("/memories", json=_add_body(failed), headers={"Idempotency-Key": f"k{failed}"})
            again = api.post("/memories", json=_add_body(failed), headers={"Idempotency-Key": f"k{failed}"})
            assert first.status_code == again.status_code == 200 and first.json() == again.json()
            assert api.put(f"/memories/{acked[0]}", json={"text": "changed: " + TEXT * 10}).status_code == 200
            ids = [m["id"] for m in api.get("/memories", params={"user_id": "ann", "limit": 1000}).json()["results"]]
            assert sorted(ids) == sorted(acked + [first.json()["results"][0]["id"]])
            messages = api.get("/messages", params={"user_id": "ann", "limit": 1000}).json()
            assert [m["content"] for m in messages].count(f"note {failed}: {TEXT}") == 1
        path = memory.store.path
    assert integrity(path) == "ok"


def test_the_command_line_says_it_in_one_line(cli, tmp_path, monkeypatch):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing"}}))
    cli("--config", config, "add", "--user", "ann", "--no-infer", "I keep a diary")
    from memlane.store.sqlite import SQLiteStore

    opened = SQLiteStore._connect

    def capped(self):
        con = opened(self)
        con.execute("PRAGMA max_page_count = 1")  # the file may not grow past its size now
        return con

    monkeypatch.setattr(SQLiteStore, "_connect", capped)
    for n in range(200):
        result = cli("--config", config, "add", "--user", "ann", "--no-infer", f"note {n}: {TEXT}", ok=False)
        if result.exit_code != 0:
            break
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert lines == [("error: the disk holding the store is full: nothing of this request was stored; free space "
                      "on it, then retry")], result.output
