"""A LangGraph graph whose long-term memory is memlane (``MemlaneStore``), offline, no LLM needed.

Each turn the graph recalls what it knows about the user that relates to the
message (natural-language search in the user's namespace), answers with it,
and remembers the message when it states something about the user. The
memories are ordinary memlane memories of that user: ``memlane list --user
alice`` shows them, with their history.

    python examples/langgraph_memory_graph.py           # uses $MEMLANE_HOME (default ~/.memlane)

An LLM node would take the recalled memories as context in the same place as
``answer`` does here.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from memlane import Memory
from memlane.integrations.langgraph_store import MemlaneStore

#: messages that ask rather than tell are not remembered
QUESTION_WORDS = ("what", "where", "who", "when", "which", "how", "do ", "does ", "is ", "are ")


@dataclass
class Context:
    user_id: str


class Turn(TypedDict, total=False):
    message: str
    recalled: list[str]
    reply: str


def recall(state: Turn, runtime: Runtime[Context]) -> Turn:
    found = runtime.store.search((runtime.context.user_id, "memories"), query=state["message"], limit=3)
    return {"recalled": [item.value["text"] for item in found if item.score is not None and item.score >= 0.3]}


def remember(state: Turn, runtime: Runtime[Context]) -> Turn:
    message = state["message"].strip()
    if not message.endswith("?") and not message.lower().startswith(QUESTION_WORDS):
        runtime.store.put((runtime.context.user_id, "memories"), str(uuid.uuid4()), {"text": message})
    return {}


def answer(state: Turn) -> Turn:
    if not state.get("recalled"):
        return {"reply": "I don't know anything about that yet."}
    return {"reply": "From what you told me: " + "; ".join(state["recalled"])}


def build_graph(store: MemlaneStore):
    builder = StateGraph(Turn, context_schema=Context)
    builder.add_node("recall", recall)
    builder.add_node("remember", remember)
    builder.add_node("answer", answer)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "remember")
    builder.add_edge("remember", "answer")
    builder.add_edge("answer", END)
    return builder.compile(store=store)


def main(memory: Memory | None = None, user_id: str = "alice") -> list[str]:
    graph = build_graph(MemlaneStore(memory or Memory(), fields=["text"]))
    replies = []
    for message in ["I'm allergic to peanuts.", "I play the cello in an orchestra.",
                    "Which snacks should I avoid?", "What instrument do I play?"]:
        reply = graph.invoke({"message": message}, context=Context(user_id=user_id))["reply"]
        print(f"> {message}\n{reply}")
        replies.append(reply)
    return replies


if __name__ == "__main__":
    main()
