"""examples/langgraph_memory_graph.py: a compiled LangGraph graph with ``MemlaneStore`` as its store
recalls, across turns, what the user said, and what it stored is an ordinary memory of that user."""

from __future__ import annotations

import runpy
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_memory_graph.py"


def test_the_example_graph_remembers_across_turns(model_memory):
    """Recall by meaning ("what am I allergic to?" finds the peanuts): the real local model."""
    memory = model_memory
    example = runpy.run_path(str(EXAMPLE))
    replies = example["main"](memory, user_id="alice")
    assert replies[:2] == ["I don't know anything about that yet."] * 2
    assert "allergic to peanuts" in replies[2] and "cello" not in replies[2]
    assert "cello" in replies[3] and "peanuts" not in replies[3]
    stored = sorted(m["memory"] for m in memory.get_all(user_id="alice")["results"])
    assert stored == ["I play the cello in an orchestra.", "I'm allergic to peanuts."]  # questions are not kept
    assert memory.get_all(user_id="bob")["results"] == []


def test_the_graph_keeps_users_apart(memory):
    example = runpy.run_path(str(EXAMPLE))
    example["main"](memory, user_id="alice")
    graph = example["build_graph"](example["MemlaneStore"](memory, fields=["text"]))
    reply = graph.invoke({"message": "What instrument do I play?"}, context=example["Context"](user_id="bob"))
    assert reply["reply"] == "I don't know anything about that yet."
