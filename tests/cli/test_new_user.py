"""A new user's first hour, end to end, as the README and the pages it links tell it, on each store a
home can have: the quickstart in Python; `memlane serve` (on PostgreSQL: `--postgres`, the bundled
server); the README's curl lines and its mem0 client block against it; the MCP tools at /mcp with the
official client, including the one-line error of a wrong argument; a broad question about the user;
then, with the server stopped, the `memlane` commands on the same home (list, backup) still finding what
was served; and formation by an LLM given to `memlane serve --config FILE` as docs/llm.md shows, against
a scripted OpenAI-compatible endpoint on 127.0.0.1.

Everything runs in real processes with real HTTP on free ports; the blocks are read from the pages
themselves, so a page that drifts from what memlane does fails here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from support.openai_server import OpenAIServer, Reply, chat_completion
from support.serve_process import MEMLANE, ServeProcess

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LLM_PAGE = ROOT / "docs" / "llm.md"
TIMEOUT = 300
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)


def blocks(page: Path, language: str) -> list[str]:
    return [code for lang, code in BLOCK.findall(page.read_text(encoding="utf-8")) if lang == language]


def newcomer_environment() -> dict[str, str]:
    """This process's environment without a MEMLANE_ variable: a new user has set none (and tests that
    run a server in this process leave some behind)."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("MEMLANE_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # `memlane`, as installed
    return env


def run(env: dict, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


def memlane(env: dict, *args: str) -> str:
    return run(env, *MEMLANE, *args).stdout


async def mcp_calls(url: str, key: str) -> tuple[dict, dict, str]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=TIMEOUT)
    async with Client(streamable_http_client(url + "/mcp", http_client=http), read_timeout_seconds=TIMEOUT) as client:
        added = await client.call_tool("add_memory", {"messages": "I have a border collie named Rex. My name is Alice.",
                                                      "user_id": "alice"})
        found = await client.call_tool("search_memories", {"query": "what dog does she have?", "user_id": "alice"})
        wrong = await client.call_tool("add_memory", {"messages": 42, "user_id": "alice"})
    assert not added.is_error and not found.is_error and wrong.is_error
    return added.structured_content, found.structured_content, " ".join(b.text for b in wrong.content)


@pytest.mark.model
@pytest.mark.parametrize("store", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_a_new_user_walks_the_readme_on_one_home(tmp_path, store):
    home = tmp_path / "home"
    env = {**newcomer_environment(), "MEMLANE_HOME": str(home), "HF_HUB_OFFLINE": "1", "MEM0_TELEMETRY": "False"}

    if store == "sqlite":  # the quickstart is the SDK's own store, the home's SQLite file
        [quickstart] = [b for b in blocks(README, "python") if "MemoryClient" not in b]
        said = run(env, sys.executable, "-c", quickstart).stdout
        assert "User moved from Lisbon to Porto" in said, said

    with ServeProcess(home, serve_args=["--postgres"] if store == "postgres" else [], env=env) as server:
        port = str(server.port)
        [curls] = [b for b in blocks(README, "bash") if "curl" in b]
        out = run(env, "bash", "-euo", "pipefail", "-c", curls.replace("18088", port) + '\necho; echo "KEY=$KEY"')
        answers = out.stdout.replace(" ", "")  # after the quickstart (same home, same store) it is already known
        assert ('"event":"NONE"' if store == "sqlite" else '"event":"ADD"') in answers, out.stdout
        assert '"memory":"Userisvegetarian"' in answers, out.stdout
        key = out.stdout.strip().splitlines()[-1].removeprefix("KEY=")

        [mem0_block] = [b for b in blocks(README, "python") if "MemoryClient" in b]
        run({**env, "KEY": key}, sys.executable, "-c", mem0_block.replace("18088", port))

        added, found, wrong = anyio.run(mcp_calls, server.url, key)
        assert [r["event"] for r in added["results"]] == ["ADD", "ADD"]  # the mem0 block ended with delete_all
        assert "Rex" in found["results"][0]["memory"]
        assert "messages" in wrong and "\n" not in wrong.strip() and "pydantic" not in wrong, wrong

        broad = httpx.post(server.url + "/search", headers={"X-API-Key": key}, timeout=TIMEOUT,
                           json={"query": "What do you know about me?", "user_id": "alice", "threshold": 0.2})
        assert broad.status_code == 200, broad.text
        known = [r["memory"] for r in broad.json()["results"]]
        assert "Alice" in known[0] and any("Rex" in m for m in known[1:]), known  # profile first
        assert broad.json()["metadata"]["query_kind"] == "about_user"

    # the server has stopped: the home's commands open the store it served
    listed = json.loads(memlane(env, "list", "--user", "alice", "--json"))
    texts = [m["memory"] for m in listed["results"]]
    assert any("Alice" in t for t in texts) and any("Rex" in t for t in texts), texts
    backed = memlane(env, "backup", str(tmp_path / "home.backup"))
    assert f"({store}," in backed and re.search(r"default: [1-9]\d* memor", backed), backed


#: the scripted model: memlane's extraction prompt gets one fact per sentence it was told
def _model(request) -> Reply:
    messages = request.json["messages"]
    assert messages[0]["content"].startswith("You extract durable facts"), "only extraction: the scope is empty"
    facts = [{"fact": "Name is Ana", "type": "profile"}, {"fact": "Works as a nurse in Lyon", "type": "profile"}]
    return Reply(json=chat_completion(json.dumps({"facts": facts}), model=request.json["model"]))


@pytest.mark.model
def test_a_new_user_gives_formation_an_llm_as_the_page_shows(tmp_path):
    """docs/llm.md's server file, its llm block pointed at an OpenAI-compatible endpoint (here a scripted
    one), given to `memlane serve --config FILE`: the memories are the model's."""
    [server_file] = [json.loads(b) for b in blocks(LLM_PAGE, "json") if '"retrieval"' in b]
    [command] = [b for b in blocks(LLM_PAGE, "bash") if "memlane serve --config" in b]
    assert command.split("#")[0].split() == ["memlane", "serve", "--config", "memlane.json"]
    with OpenAIServer() as endpoint:
        endpoint.route("/v1/chat/completions", _model)
        server_file["llm"] = {"provider": "openai", "config": {"model": "qwen-plus", "api_key": "sk-new-user",
                                                              "base_url": endpoint.base_url}}
        (tmp_path / "memlane.json").write_text(json.dumps(server_file))
        home = tmp_path / "home"
        home.mkdir()
        env = {**newcomer_environment(), "MEMLANE_HOME": str(home), "HF_HUB_OFFLINE": "1"}
        with ServeProcess(home, serve_args=["--config", str(tmp_path / "memlane.json")], env=env) as server:
            key = server.create_key("default")
            answer = httpx.post(server.url + "/memories", headers={"X-API-Key": key}, timeout=TIMEOUT,
                                json={"messages": "Je m'appelle Ana, je suis infirmière à Lyon.", "user_id": "ana"})
        calls = endpoint.requests("/v1/chat/completions")
    assert answer.status_code == 200 and answer.json()["status"] == "ok", answer.text
    assert sorted(r["memory"] for r in answer.json()["results"]) == ["Name is Ana", "Works as a nurse in Lyon"]
    assert {c.json["model"] for c in calls} == {"qwen-plus"}
    assert {c.header("authorization") for c in calls} == {"Bearer sk-new-user"}
