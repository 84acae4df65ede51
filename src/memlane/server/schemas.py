"""Request bodies of the REST API (the mem0 open-source server's shapes).

pydantic checks types and sizes here; what the values mean (ids without
whitespace, metadata rules, thresholds in [-1, 1], filter syntax) is checked
by ``Memory`` itself, so the SDK, the CLI and the server reject the same input
with the same message. Unknown fields are rejected: a misspelt ``user_id``
must not silently become a different request. Types are strict (``true`` is not
the number 1, ``"0.5"`` is not a number), so the OpenAPI schema says exactly what
is accepted.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional, Union

from fastapi import Header
from pydantic import AfterValidator, AliasChoices, BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt

from memlane.core.models import MEMORY_TYPES

MAX_ID_CHARS = 256
MAX_TEXT_CHARS = 1_000_000  # the body limit bounds it first; Memory applies limits.max_text_chars
MAX_MESSAGES = 10_000
MAX_RESULTS = 10_000
#: a filter sent in a query string: short enough that its URL, percent-encoded, stays under the
#: 65,535 bytes the HTTP parser reads (larger filters go in the body of POST /search)
MAX_QUERY_FILTER_CHARS = 16_384


def _int_to_str(value: Any) -> Any:
    """Ids may be sent as integers (mem0 accepts them); they are strings from here on."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


# a string or an integer (the schema says both); the length applies to the string, not to the Optional
# around it (pydantic fails on max_length of None)
Id = Annotated[Optional[Union[Annotated[str, Field(max_length=MAX_ID_CHARS)], StrictInt]], AfterValidator(_int_to_str)]
Number = Union[StrictInt, StrictFloat]
#: a client's name for one add (e.g. a UUID), in a header: a retry with it answers the first request's result
IdempotencyKey = Header(None, alias="Idempotency-Key", min_length=1, max_length=MAX_ID_CHARS,
                        description="a unique key per add: a retry with the same key returns the first result")
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]
MemoryType = Literal[MEMORY_TYPES]  # type: ignore[valid-type]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class MessageIn(Strict):
    role: Literal["user", "assistant", "system", "tool"] = Field(description="who said it")
    content: Text = Field(description="what was said")
    name: Id = Field(None, description="the speaker's name (becomes actor_id)")
    created_at: Optional[Union[StrictInt, StrictFloat, Annotated[str, Field(max_length=64)]]] = Field(
        None, description="when it was said: Unix seconds or ISO-8601 (default: the request's timestamp, else now)")


class MemoryCreate(Strict):
    """``POST /memories``: remember a conversation."""

    messages: Union[Text, Annotated[list[MessageIn], Field(min_length=1, max_length=MAX_MESSAGES)]] = Field(
        description="the conversation: a list of {role, content} messages (or one string, a user message)"
    )
    user_id: Id = None
    agent_id: Id = None
    run_id: Id = None
    metadata: Optional[dict[str, Any]] = Field(None, description="stored with every memory formed")
    infer: StrictBool = Field(True, description="extract and reconcile facts (true) or store each message verbatim")
    memory_type: Optional[MemoryType] = None
    expiration_date: Optional[str] = Field(None, max_length=64, description="ISO-8601 date or datetime in the "
                                                                             "future: the memories added expire then")
    timestamp: Optional[Union[StrictInt, StrictFloat, Annotated[str, Field(max_length=64)]]] = Field(
        None, description="when the conversation was said: Unix seconds or ISO-8601, not in the future (default: now)")
    async_mode: StrictBool = Field(False, description="answer at once (PENDING, with an event id: GET /events/{id}); "
                                                      "what was sent is searchable at once, formed in the background")


class SearchRequest(Strict):
    """``POST /search``: memories of a scope by meaning, best first."""

    query: Text = Field(description="what to look for, in natural language")
    user_id: Id = None
    agent_id: Id = None
    run_id: Id = None
    filters: Optional[dict[str, Any]] = Field(None, description="memlane filter language (see docs/filters.md)")
    # any JSON value: seed 001's rule decides (server/access.search_limit), not pydantic, which reads "7" as 7
    limit: Any = Field(None, description="results to return (default 100); not a positive integer: 5, with a warning")
    top_k: Any = Field(None, description="alias of limit")
    threshold: Optional[Number] = Field(None, description="keep results with score >= threshold (cosine, -1..1)")
    include_invalid: StrictBool = Field(False, description="also return invalidated memories")
    as_of: Optional[str] = Field(None, max_length=64, description="ISO-8601 time: what was valid then")
    keyword_search: Optional[StrictBool] = Field(None, description="fuse BM25 keyword scores with vector scores "
                                                                   "(default from the server's retrieval config)")
    rerank: Optional[StrictBool] = Field(None, description="re-order the top candidates with the configured reranker")
    filter_memories: Optional[StrictBool] = Field(None, description="drop results that do not answer the query")


class MemoryUpdate(Strict):
    """``PUT /memories/{id}``: new text and/or metadata."""

    text: Optional[Text] = Field(None, validation_alias=AliasChoices("text", "data", "memory"),
                                 description="the new text (re-embedded); 'data' and 'memory' are accepted too")
    metadata: Optional[dict[str, Any]] = Field(None, description="replaces the metadata")


class Maintenance(Strict):
    """The scope of a maintenance call, and whether to only plan it."""

    user_id: Id = None
    agent_id: Id = None
    run_id: Id = None
    dry_run: StrictBool = Field(False, description="return the plan without changing anything")


class CleanupRequest(Maintenance):
    """``POST /memories/cleanup``: keep the newest memories of a scope, invalidate the older ones."""

    keep_latest: StrictInt = Field(1000, ge=0, description="how many of the newest valid memories to keep")


class MergeRequest(Maintenance):
    """``POST /memories/merge``: merge a scope's near-duplicates."""

    threshold: Number = Field(0.95, gt=0, le=1, description="cosine similarity at which "
                                                                                   "two memories are the same")


# -- mem0 platform (MemoryClient) bodies: unknown fields are ignored, as the
#    client forwards every keyword argument verbatim ---------------------------


class Lenient(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class PlatformAdd(Lenient):
    messages: Union[Text, dict[str, Any], Annotated[list[Any], Field(max_length=MAX_MESSAGES)]]
    user_id: Id = None
    agent_id: Id = None
    run_id: Id = None
    app_id: Id = None
    filters: Optional[dict[str, Any]] = None
    metadata: Optional[dict[str, Any]] = None
    infer: StrictBool = True
    memory_type: Optional[MemoryType] = None
    expiration_date: Optional[str] = Field(None, max_length=64)
    timestamp: Optional[Union[StrictInt, StrictFloat, Annotated[str, Field(max_length=64)]]] = Field(
        None, description="when the conversation was said: Unix seconds or ISO-8601 (mem0 platform's name)")
    async_mode: Optional[StrictBool] = Field(None, description="answer at once with PENDING and an event id "
                                                               "(GET /v1/event/{id}/)")


class PlatformSearch(Lenient):
    query: Text
    filters: Optional[dict[str, Any]] = None
    top_k: Any = Field(10, description="results to return (default 10); not a positive integer: 5, with a warning")
    limit: Any = Field(None, description="alias of top_k")
    threshold: Optional[Number] = 0.1
    show_expired: StrictBool = False
    keyword_search: Optional[StrictBool] = None
    rerank: Optional[StrictBool] = None
    filter_memories: Optional[StrictBool] = None
    user_id: Id = None
    agent_id: Id = None
    run_id: Id = None
    app_id: Id = None


class PlatformList(Lenient):
    filters: Optional[dict[str, Any]] = None
    top_k: Optional[StrictInt] = Field(None, ge=1, le=MAX_RESULTS, description="at most this many (mem0's get_all)")
    show_expired: StrictBool = False
    user_id: Id = None
    agent_id: Id = None
    run_id: Id = None
    app_id: Id = None


class PlatformUpdate(Lenient):
    text: Optional[Text] = Field(None, validation_alias=AliasChoices("text", "data"),
                                 description="the new text; mem0's 'data' is accepted too")
    metadata: Optional[dict[str, Any]] = None
    timestamp: Optional[Union[StrictInt, StrictFloat, Annotated[str, Field(max_length=64)]]] = Field(
        None, description="when the memory was said (its created_at): Unix seconds or ISO-8601, not in the future")
    expiration_date: Optional[str] = Field(None, max_length=64, description="a future ISO-8601 date or datetime: "
                                                                            "the memory expires then; null: never")
