"""A scripted LLM for formation (tests/support/openai_server.py) that answers every chat call from its
request, after ``delay`` seconds: the slow LLM of the background-formation tests and of
``benchmarks/bench_async_add.py``.

- Fact extraction: each user line of the conversation is one fact, as said ("I live in Paris").
- Reconciliation: a new fact whose first three words are those of an existing memory replaces it
  (UPDATE: "I live in Berlin" after "I live in Paris"), any other fact is added.
- A merge (maintenance): the newer memory's text.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from support.openai_server import OpenAIServer, Reply, chat_completion

CHAT = "/v1/chat/completions"


def _prefix(text: str) -> str:
    return " ".join(text.lower().split()[:3])


class FormationLLM:
    """``OpenAIServer`` route handler; counts the calls it answered."""

    def __init__(self, delay: float = 0.0):
        self.delay = delay
        self.calls = 0
        self._lock = threading.Lock()

    def __call__(self, request: Any) -> Reply:
        with self._lock:
            self.calls += 1
        prompt = request.json["messages"][-1]["content"]
        if "Older memory:" in prompt and "Newer memory:" in prompt:  # a merge: the newer text
            newer = prompt.split("Newer memory:", 1)[1].split("\n\n", 1)[0].strip()
            return Reply(json=chat_completion(newer, model="gpt-test"), delay=self.delay)
        if "New facts:" in prompt and "Existing memories:" in prompt:
            existing = json.loads(prompt.split("Existing memories:", 1)[1].split("New facts:", 1)[0])
            facts = json.loads(prompt.split("New facts:", 1)[1].split("Answer with only", 1)[0])
            decided = []
            for n, fact in enumerate(facts):
                same = next((m for m in existing if _prefix(m["text"]) == _prefix(fact)), None)
                decided.append({"id": same["id"], "text": fact, "event": "UPDATE", "old_memory": same["text"]}
                               if same else {"id": f"new{n}", "text": fact, "event": "ADD"})
            answer = {"memory": decided}
        else:
            lines = prompt.split("Conversation:\n", 1)[-1].splitlines()
            answer = {"facts": [line.split(": ", 1)[1] for line in lines if line.startswith("user")]}
        return Reply(json=chat_completion(json.dumps(answer), model="gpt-test"), delay=self.delay)


def llm_config(server: OpenAIServer) -> dict:
    """The ``llm`` block of a config that forms with ``server`` (no retries: a failure shows)."""
    return {"provider": "openai", "config": {"model": "gpt-test", "api_key": "sk-test", "base_url": server.base_url,
                                             "max_retries": 0, "timeout": 60.0}}


def start(delay: float = 0.0) -> tuple[OpenAIServer, FormationLLM]:
    """A running server whose chat route forms with a ``FormationLLM`` of ``delay`` seconds."""
    llm = FormationLLM(delay)
    return OpenAIServer().route(CHAT, llm).start(), llm
