"""Agent context endpoints: ``POST /context/should-search`` and ``POST /context/search``.

Each handler calls one ``Memory`` method of the request's tenant (plain ``def``: FastAPI
runs it in its threadpool). The tenant is the boundary: an agent-scoped search with no
``user_id`` reads the users recorded with that agent inside the caller's tenant only.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from fastapi import APIRouter, Request
from pydantic import Field, StrictBool

from memlane.server.access import tenant_memory
from memlane.server.schemas import MAX_RESULTS, Id, MessageIn, Strict, Text

router = APIRouter(prefix="/context", tags=["context"])

#: a context call reads the recent conversation, not a whole history
MAX_CONTEXT_MESSAGES = 1_000

Conversation = Union[Text, Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_CONTEXT_MESSAGES)]]


class ShouldSearchRequest(Strict):
    """``POST /context/should-search``: does the conversation's next reply need long-term memory?"""

    conversation: Conversation = Field(description="the conversation: a list of {role, content} messages "
                                                   "(or one string, a user message)")
    system_prompt: Text = Field("", description="the agent's system prompt (its hits count at a fraction)")
    explain: StrictBool = Field(False, description="return the score of each signal")


class ContextSearchRequest(Strict):
    """``POST /context/search``: the memories a conversation calls for, grouped by category."""

    conversation: Conversation = Field(description="the conversation: a list of {role, content} messages "
                                                   "(or one string, a user message)")
    system_prompt: Text = Field("", description="the agent's system prompt (its terms count least)")
    user_id: Id = None
    agent_id: Id = None
    max_results: int = Field(10, ge=1, le=MAX_RESULTS, description="matches per category")


def _messages(conversation: Any) -> Any:
    return conversation if isinstance(conversation, str) else [m.model_dump(exclude_none=True) for m in conversation]


@router.post("/should-search", summary="Whether the conversation needs a memory search")
def should_search(body: ShouldSearchRequest, request: Request) -> dict[str, Any]:
    """``{"should_search": bool}``; with ``explain``, also ``score``, ``threshold`` and each signal's
    hits and points (``Memory.should_search_memory``)."""
    decision = tenant_memory(request).should_search_memory(_messages(body.conversation), body.system_prompt,
                                                            explain=True)
    return decision.model_dump() if body.explain else {"should_search": decision.should_search}


@router.post("/search", summary="Memories a conversation calls for, by category")
def search(body: ContextSearchRequest, request: Request) -> dict[str, Any]:
    """``Memory.search_memory_with_context``: ``search_terms``, ``agent_profile_matches``,
    ``agent_event_matches``, ``user_profile_matches``, ``user_event_matches``, ``total_matches``."""
    return tenant_memory(request).search_memory_with_context(
        _messages(body.conversation), body.system_prompt, user_id=body.user_id, agent_id=body.agent_id,
        max_results=body.max_results)

