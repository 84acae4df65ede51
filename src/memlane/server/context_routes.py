"""Agent context endpoints: ``POST /context/should-search`` and ``POST /context/search``.

Each handler calls one ``Memory`` method of the request's tenant (plain ``def``: FastAPI
runs it in its threadpool). The tenant is the boundary: an agent-scoped search with no
``user_id`` reads the users recorded with that agent inside the caller's tenant only, and a search
naming neither a user nor an agent (seed 004: every memory) reads the caller's tenant, with an admin
key (like every read across all users of a tenant).
"""

from __future__ import annotations

from typing import Annotated, Any, Optional, Union

from fastapi import APIRouter, Request
from pydantic import Field, StrictBool

from memlane.server.access import require_admin, tenant_memory
from memlane.server.schemas import MAX_RESULTS, Id, MessageIn, Strict, Text

router = APIRouter(prefix="/context", tags=["context"])

#: a context call reads the recent conversation, not a whole history
MAX_CONTEXT_MESSAGES = 1_000

#: empty or missing is not an error (seed 004): no search, the empty groups
Conversation = Optional[Union[Text, Annotated[list[MessageIn], Field(max_length=MAX_CONTEXT_MESSAGES)]]]


class ShouldSearchRequest(Strict):
    """``POST /context/should-search``: does the conversation's next reply need long-term memory?"""

    conversation: Conversation = Field(None, description="the conversation: a list of {role, content} messages "
                                                         "(or one string, a user message)")
    system_prompt: Text = Field("", description="the agent's system prompt")
    explain: StrictBool = Field(False, description="return the score of each signal")
    user_id: Id = Field(None, description="whose memories: the gate also weighs what this scope holds")
    agent_id: Id = None


class ContextSearchRequest(Strict):
    """``POST /context/search``: the memories a conversation calls for, grouped by category."""

    conversation: Conversation = Field(None, description="the conversation: a list of {role, content} messages "
                                                         "(or one string, a user message)")
    system_prompt: Text = Field("", description="the agent's system prompt (its terms count least)")
    user_id: Any = Field(None, description="whose memories; an invalid id is ignored (seed 004); with neither "
                                           "user_id nor agent_id every memory of the tenant (admin keys)")
    agent_id: Id = None
    max_results: int = Field(10, ge=1, le=MAX_RESULTS, description="matches per category")


def _messages(conversation: Any) -> Any:
    if conversation is None or isinstance(conversation, str):
        return conversation
    return [m.model_dump(exclude_none=True) for m in conversation]


@router.post("/should-search", summary="Whether the conversation needs a memory search")
def should_search(body: ShouldSearchRequest, request: Request) -> dict[str, Any]:
    """``{"should_search": bool}``; with ``explain``, also ``score``, ``threshold`` and each signal's
    hits and points (``Memory.should_search_memory``)."""
    decision = tenant_memory(request).should_search_memory(_messages(body.conversation), body.system_prompt,
                                                            explain=True, user_id=body.user_id,
                                                            agent_id=body.agent_id)
    return decision.model_dump() if body.explain else {"should_search": decision.should_search}


@router.post("/search", summary="Memories a conversation calls for, by category")
def search(body: ContextSearchRequest, request: Request) -> dict[str, Any]:
    """``Memory.search_memory_with_context``: ``search_terms``, ``agent_profile_matches``,
    ``agent_event_matches``, ``user_profile_matches``, ``user_event_matches``, ``total_matches``."""
    if body.user_id is None and body.agent_id is None:
        require_admin(request, "a context search over every memory of the tenant (no user_id or agent_id)")
    return tenant_memory(request).search_memory_with_context(
        _messages(body.conversation), body.system_prompt, user_id=body.user_id, agent_id=body.agent_id,
        max_results=body.max_results)

