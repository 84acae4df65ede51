"""``memlane context should-search`` and ``memlane context search``: the same ``Memory`` methods
from the shell, with the conversation as text or as a JSON file of messages."""

from __future__ import annotations

import pytest

import json


def test_should_search_from_text_and_file(cli, tmp_path):
    shown = cli("context", "should-search", "Do you remember my favourite curry?").stdout
    assert "search  score 6" in shown and "remember" in shown
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "What is the capital of France?"}]))
    decided = json.loads(cli("context", "should-search", "--file", conversation, "--json").stdout)
    assert decided["should_search"] is False and decided["score"] == 2.0


@pytest.mark.model
def test_context_search_groups_matches(cli, tmp_path):
    cli("add", "I love Thai green curry", "-u", "alice", "--no-infer")
    cli("add", "I am a cooking assistant that likes spicy food", "-a", "chef", "--no-infer")
    conversation = tmp_path / "conversation.json"
    conversation.write_text(json.dumps([{"role": "user", "content": "Which curry should I cook tonight?"}]))
    found = json.loads(cli("context", "search", "-F", conversation, "-u", "alice", "-a", "chef", "--json").stdout)
    assert "curry" in found["search_terms"]
    assert [m["content"] for m in found["user_event_matches"]] == ["I love Thai green curry"]
    table = cli("context", "search", "my curry", "-u", "alice").stdout
    assert "user event" in table and "Thai green curry" in table and "1 matches" in table


def test_errors_are_one_line_messages(cli, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"role": "robot", "content": "hi"}]))
    role = cli("context", "should-search", "-F", bad, ok=False)
    assert role.exit_code == 1 and "conversation[0].role" in role.output
    both = cli("context", "should-search", "hi", "-F", bad, ok=False)
    assert both.exit_code == 2
