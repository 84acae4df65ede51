"""The project over a real server, through the official mem0 client: its settings (custom instructions
reach the LLM's extraction prompt, checked on a scripted OpenAI-compatible server), feedback on memories,
and memory exports (offline by field names; by the LLM when one is configured)."""

from __future__ import annotations

import json
from collections import deque

import pytest

from support import slow_llm
from support.openai_server import OpenAIServer, Reply, chat_completion
from support.server_fixtures import serving

MEMORIES_SCHEMA = {
    "type": "object",
    "properties": {
        "user_id": {"type": "string"},
        "count": {"type": "integer"},
        "memories": {"type": "array", "items": {"$ref": "#/$defs/Memory"}},
    },
    "required": ["memories"],
    "$defs": {"Memory": {"type": "object", "required": ["id", "memory"], "properties": {
        "id": {"type": "string"}, "memory": {"type": "string"}, "created_at": {"type": "string"},
        "categories": {"type": "array", "items": {"type": "string"}}, "mood": {"type": ["string", "null"]}}}},
}
PROFILE_SCHEMA = {"type": "object", "required": ["full_name", "favourite_food"], "properties": {
    "full_name": {"type": "string", "minLength": 2}, "favourite_food": {"type": "string"}}}


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    from memlane.embeddings.hashing import HashingEmbedder

    with serving(tmp_path_factory.mktemp("project-home"), HashingEmbedder()) as server:
        yield server


class ProjectLLM(slow_llm.FormationLLM):
    """Forms memories as ``FormationLLM`` does; answers an export prompt from ``exports``."""

    def __init__(self):
        super().__init__()
        self.exports: deque[str] = deque()

    def __call__(self, request):
        if any(m["content"].startswith("JSON schema:") for m in request.json["messages"] if m["role"] == "user"):
            return Reply(json=chat_completion(self.exports.popleft(), model="gpt-test"))
        return super().__call__(request)


@pytest.fixture(scope="module")
def llm():
    handler = ProjectLLM()
    with OpenAIServer().route(slow_llm.CHAT, handler) as server:
        server.handler = handler
        yield server


@pytest.fixture(scope="module")
def with_llm(tmp_path_factory, llm):
    from memlane.embeddings.hashing import HashingEmbedder

    config = {"llm": slow_llm.llm_config(llm)}
    with serving(tmp_path_factory.mktemp("project-llm-home"), HashingEmbedder(), config=config) as server:
        yield server


def _system_prompts(llm, since: int) -> list[str]:
    return [r.json["messages"][0]["content"] for r in llm.requests(slow_llm.CHAT)[since:]
            if r.json["messages"][0]["role"] == "system"]


# -- settings -------------------------------------------------------------------------------------------

def test_the_mem0_client_reads_and_changes_the_projects_settings(mem0, offline):
    client = mem0.MemoryClient(api_key=offline.key("p-settings", admin=True), host=offline.url)
    assert client.project.get()["custom_instructions"] is None
    client.project.update(custom_instructions="Only food preferences", custom_categories=[{"food": "what they eat"}],
                          multilingual=True)
    got = client.project.get(fields=["custom_instructions", "custom_categories"])
    assert got["custom_instructions"] == "Only food preferences"
    assert got["custom_categories"] == [{"food": "what they eat"}] and "multilingual" not in got
    assert got["project_id"] == "p-settings"
    client.update_project(custom_instructions="Food and drink")  # the 1.x client's methods
    assert client.get_project(fields=["custom_instructions"])["custom_instructions"] == "Food and drink"
    assert client.project.get()["multilingual"] is True


@pytest.mark.parametrize("method, path, body, status, field", [
    ("patch", "/api/v1/orgs/organizations/memlane/projects/p-bad/", {"colour": "red"}, 422, "colour"),
    ("patch", "/api/v1/orgs/organizations/memlane/projects/p-bad/", {"custom_categories": 5}, 422, "custom_categories"),
    ("patch", "/api/v1/orgs/organizations/memlane/projects/p-bad/", {}, 422, "body"),
    ("patch", "/api/v1/orgs/organizations/memlane/projects/another/", {"custom_instructions": "x"}, 404, "project_id"),
    ("get", "/api/v1/orgs/organizations/acme/projects/p-bad/", None, 404, "org_id"),
    ("get", "/api/v1/orgs/organizations/memlane/projects/p-bad/?fields=colour", None, 422, "fields"),
])
def test_bad_settings_requests_are_clear_4xx(offline, method, path, body, status, field):
    with offline.client(offline.key("p-bad", admin=True)) as http:
        answer = http.request(method.upper(), path, json=body)
    assert answer.status_code == status and answer.json()["field"] == field, answer.json()


def test_changing_the_settings_needs_an_admin_key(offline):
    with offline.client(offline.key("p-reader")) as http:
        path = "/api/v1/orgs/organizations/memlane/projects/p-reader/"
        assert http.get(path).status_code == 200
        answer = http.patch(path, json={"custom_instructions": "x"})
    assert answer.status_code == 403 and "admin" in answer.json()["detail"]


def test_custom_instructions_are_in_the_llms_extraction_prompt(mem0, with_llm, llm):
    client = mem0.MemoryClient(api_key=with_llm.key("p-llm", admin=True), host=with_llm.url)
    since = len(llm.requests())
    client.add("I love ramen", user_id="u1")
    [plain] = _system_prompts(llm, since)
    assert "The project's own instructions" not in plain

    client.project.update(custom_instructions="Remember only what the user eats.",
                          agent_custom_instructions="Remember only the agent's tools.")
    since = len(llm.requests())
    client.add("I love udon", user_id="u1")
    client.add([{"role": "assistant", "content": "I use a calculator"}], agent_id="helper")
    user_prompt, agent_prompt = _system_prompts(llm, since)
    assert user_prompt.startswith(plain)
    assert user_prompt.endswith("The project's own instructions about what to remember and how (they take precedence"
                                " over the rules above):\nRemember only what the user eats.")
    assert agent_prompt.endswith("Remember only the agent's tools.") and "what the user eats" not in agent_prompt

    other = mem0.MemoryClient(api_key=with_llm.key("p-llm-other", admin=True), host=with_llm.url)
    since = len(llm.requests())
    other.add("I love soba", user_id="u1")  # another project: its own (no) instructions
    assert "The project's own instructions" not in _system_prompts(llm, since)[0]


# -- feedback -------------------------------------------------------------------------------------------

def test_feedback_is_kept_and_listed_with_its_memory(mem0, offline):
    key = offline.key("p-feedback")
    client = mem0.MemoryClient(api_key=key, host=offline.url)
    memory_id = client.add("I live in Porto", user_id="u1", infer=False)["results"][0]["id"]
    answer = client.feedback(memory_id, feedback="negative", feedback_reason="I moved to Lisbon")
    assert (answer["message"], answer["feedback"], answer["memory_id"]) == ("Feedback recorded", "NEGATIVE", memory_id)
    client.feedback(memory_id, feedback="POSITIVE")
    with offline.client(key) as http:
        listed = http.get(f"/v1/memories/{memory_id}/feedback/").json()
        bad = http.post("/v1/feedback/", json={"memory_id": memory_id, "feedback": "MEH"})
        missing = http.post("/v1/feedback/", json={"memory_id": "no-such-memory", "feedback": "POSITIVE"})
        elsewhere = offline.client(offline.key("p-feedback-other")).post(
            "/v1/feedback/", json={"memory_id": memory_id, "feedback": "POSITIVE"})
    assert listed["count"] == 2
    assert [(f["feedback"], f["feedback_reason"]) for f in listed["results"]] == [
        ("NEGATIVE", "I moved to Lisbon"), ("POSITIVE", None)]
    assert bad.status_code == 422 and bad.json()["field"] == "feedback"
    assert missing.status_code == 404 and missing.json()["field"] == "memory_id"
    assert elsewhere.status_code == 404  # another project's memory is not there


# -- exports --------------------------------------------------------------------------------------------

def test_an_offline_export_fills_the_schema_by_field_names(mem0, offline):
    client = mem0.MemoryClient(api_key=offline.key("p-export"), host=offline.url)
    first = client.add("I love Thai curry", user_id="ana", infer=False, metadata={"mood": "happy"})["results"][0]
    second = client.add("I play chess", user_id="ana", infer=False)["results"][0]
    client.add("I am someone else", user_id="ben", infer=False)
    made = client.create_memory_export(schema=json.dumps(MEMORIES_SCHEMA), user_id="ana")
    assert (made["status"], made["method"]) == ("SUCCEEDED", "offline") and made["id"]
    data = client.get_memory_export(memory_export_id=made["id"])
    assert (data["user_id"], data["count"]) == ("ana", 2)
    assert sorted((m["id"], m["memory"], m["mood"], m["categories"]) for m in data["memories"]) == sorted([
        (first["id"], "I love Thai curry", "happy", []), (second["id"], "I play chess", None, [])])
    assert all(m["created_at"] for m in data["memories"])
    assert client.get_memory_export(filters={"user_id": "ana"}) == data  # the newest export with these filters


def test_an_export_the_memories_cannot_fill_fails_with_the_reason(mem0, offline):
    key = offline.key("p-export-fail")
    client = mem0.MemoryClient(api_key=key, host=offline.url)
    client.add("I love Thai curry", user_id="ana", infer=False)
    made = client.create_memory_export(schema=PROFILE_SCHEMA, filters={"user_id": "ana"})
    assert made["status"] == "FAILED" and "full_name" in made["error"] and "configure an LLM" in made["error"]
    with offline.client(key) as http:
        failed = http.post("/v1/exports/get/", json={"memory_export_id": made["id"]})
        unknown = http.post("/v1/exports/get/", json={"memory_export_id": "no-such-export"})
        not_a_schema = http.post("/v1/exports/", json={"schema": {"type": "objekt"}, "filters": {"user_id": "ana"}})
        not_json = http.post("/v1/exports/", json={"schema": "{nope", "filters": {"user_id": "ana"}})
        app_id = http.post("/v1/exports/", json={"schema": PROFILE_SCHEMA, "app_id": "a"})
    assert failed.status_code == 422 and "full_name" in failed.json()["detail"]
    assert unknown.status_code == 404 and unknown.json()["field"] == "memory_export_id"
    assert not_a_schema.status_code == 422 and not_a_schema.json()["field"] == "schema"
    assert not_json.status_code == 422 and "not JSON" in not_json.json()["detail"]
    assert app_id.status_code == 422 and app_id.json()["field"] == "app_id"


def test_with_an_llm_the_export_is_written_by_the_model(mem0, with_llm, llm):
    client = mem0.MemoryClient(api_key=with_llm.key("p-llm-export"), host=with_llm.url)
    client.add("My name is Ana Lima and I love ramen", user_id="ana", infer=False)
    llm.handler.exports.extend(['{"full_name": "A"}',  # too short: sent back once with the problem
                                '{"full_name": "Ana Lima", "favourite_food": "ramen"}'])
    since = len(llm.requests())
    made = client.create_memory_export(schema=PROFILE_SCHEMA, filters={"user_id": "ana"},
                                       export_instructions="Use the full name.")
    assert (made["status"], made["method"]) == ("SUCCEEDED", "llm")
    assert client.get_memory_export(memory_export_id=made["id"]) == {"full_name": "Ana Lima", "favourite_food": "ramen"}
    ask, repair = llm.requests(slow_llm.CHAT)[since:]
    prompt = ask.json["messages"][1]["content"]
    assert json.dumps(PROFILE_SCHEMA) in prompt and "My name is Ana Lima and I love ramen" in prompt
    assert prompt.endswith("Instructions:\nUse the full name.")
    assert "full_name" in repair.json["messages"][-1]["content"]
