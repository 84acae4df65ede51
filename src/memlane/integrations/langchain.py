"""memlane for LangChain: a retriever and memory tools (``pip install memlane[langchain]``).

    from memlane import Memory
    from memlane.integrations.langchain import MemlaneRetriever, memory_tools

    memory = Memory()
    retriever = MemlaneRetriever(memory=memory, user_id="alice", k=3)
    retriever.invoke("what does alice eat?")      # [Document(page_content="Alice is vegetarian", ...)]
    tools = memory_tools(memory, user_id="alice") # add_memory, search_memories: bind to any tool-calling model

A ``Document`` is one memory: ``id`` is the memory id, ``page_content`` its
text, and ``metadata`` holds ``score``, the scope (``user_id`` / ``agent_id`` /
``run_id``), ``created_at``, ``updated_at`` and the memory's own metadata
under ``"metadata"``.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import ConfigDict, Field, model_validator

from memlane.core import scope
from memlane.integrations.agent_tools import TOOLS, ScopedTools, ToolFailure, description
from memlane.async_memory import AsyncMemory
from memlane.memory import Memory

#: memory fields a Document's metadata carries (besides the memory's own metadata)
DOCUMENT_FIELDS = ("score", "user_id", "agent_id", "run_id", "actor_id", "role", "memory_type", "created_at",
                   "updated_at")


def to_document(memory: dict[str, Any]) -> Document:
    """One memlane memory (a search or get_all item) as a LangChain ``Document``."""
    metadata = {key: memory[key] for key in DOCUMENT_FIELDS if memory.get(key) is not None}
    metadata["id"] = memory["id"]
    metadata["metadata"] = memory.get("metadata", {})
    return Document(id=memory["id"], page_content=memory["memory"], metadata=metadata)


class MemlaneRetriever(BaseRetriever):
    """The memories of one scope most related to a query, as ``Document``s, best first.

    ``k`` results at most; ``threshold`` keeps those scoring at least that much;
    ``filters`` is a memlane filter on the memories' metadata; ``search_kwargs``
    passes further ``Memory.search`` options (``keyword_search``, ``rerank`` ...).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Any = Field(default=None, description="a memlane Memory or AsyncMemory (default: Memory())")
    user_id: Optional[str] = None
    agent_id: Optional[str] = None
    run_id: Optional[str] = None
    k: int = Field(default=5, ge=1)
    threshold: Optional[float] = None
    filters: Optional[dict[str, Any]] = None
    search_kwargs: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check(self) -> "MemlaneRetriever":
        scope.require_ids(scope.scope_ids(self.user_id, self.agent_id, self.run_id))
        if self.memory is None:
            self.memory = Memory()
        elif isinstance(self.memory, AsyncMemory):
            self.memory = self.memory.sync
        elif not isinstance(self.memory, Memory):
            raise TypeError(f"memory must be a memlane Memory or AsyncMemory, got {type(self.memory).__name__}")
        return self

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        found = self.memory.search(query, user_id=self.user_id, agent_id=self.agent_id, run_id=self.run_id,
                                   filters=self.filters, limit=self.k, threshold=self.threshold,
                                   **self.search_kwargs)
        return [to_document(m) for m in found["results"]]

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        return await asyncio.to_thread(self._get_relevant_documents, query,
                                       run_manager=run_manager.get_sync())


def _invalid_arguments(error: Exception) -> str:
    """What the model reads when its arguments do not fit the tool's schema."""
    details = error.errors(include_url=False) if hasattr(error, "errors") else str(error)
    return f"invalid arguments: {details}"


def memory_tools(memory: Memory | AsyncMemory | None = None, *, user_id: str | None = None,
                 agent_id: str | None = None, run_id: str | None = None) -> list[BaseTool]:
    """``add_memory`` and ``search_memories`` for the scope, as LangChain tools (sync and async).

    A failure the model can fix (say, an empty query) comes back to it as the
    tool's answer, so the agent can correct itself."""
    scoped = ScopedTools(memory, user_id=user_id, agent_id=agent_id, run_id=run_id)

    def tool(name: str) -> BaseTool:
        def run(**arguments: Any) -> dict[str, Any]:
            try:
                return scoped.call(name, arguments)
            except ToolFailure as exc:
                raise ToolException(str(exc)) from None

        async def arun(**arguments: Any) -> dict[str, Any]:
            return await asyncio.to_thread(run, **arguments)

        return StructuredTool.from_function(func=run, coroutine=arun, name=name, description=description(name),
                                            args_schema=TOOLS[name], handle_tool_error=True,
                                            handle_validation_error=_invalid_arguments)

    return [tool(name) for name in TOOLS]
