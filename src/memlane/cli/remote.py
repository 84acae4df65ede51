"""``RemoteMemory``: the ``Memory`` methods the ``memlane`` command uses, sent to a running server.

The CLI uses it when a local server is running (or ``$MEMLANE_URL`` names one): the server has
the model loaded, so a command answers in milliseconds instead of loading it again. Results are the
server's JSON, which is ``Memory``'s result as is; the server's 4xx answers (and 507, a full disk; 503 with
``Retry-After``, its database away) become the same typed errors ``Memory`` raises.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from memlane.core.closing import Closing
from memlane.core.errors import (InvalidInputError, MemlaneError, MemoryNotFoundError, ScopeError, StorageFullError,
                                 StoreUnavailableError)
from memlane.hosting import http_client
from memlane.hosting.local_server import KEY_ENV, ServerAddress


class ServerError(MemlaneError):
    """The server could not be reached, refused the key, or failed."""


class RemoteMemory(Closing):
    def __init__(self, address: ServerAddress):
        self.address = address
        self._headers = {"Authorization": f"Bearer {address.key}"} if address.key else {}

    def _call(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
              body: Mapping[str, Any] | None = None, memory_id: str | None = None) -> Any:
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = http_client.request(self.address.url, method, path, params=query, body=body,
                                           headers=self._headers)
        except (OSError, http.client.HTTPException) as exc:
            raise ServerError(f"the memlane server at {self.address.url} did not answer ({exc}); "
                              "run it again or use --local") from None
        if response.status_code < 400:
            return response.json()
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        detail = answer.get("detail") if isinstance(answer, dict) else None
        if not isinstance(detail, str):
            detail = json.dumps(detail) if detail is not None else response.text[:500]
        if response.status_code == 404 and memory_id is not None:
            raise MemoryNotFoundError(memory_id)
        if response.status_code in (401, 403):
            raise ServerError(f"the memlane server at {self.address.url} refused the request: {detail} "
                              f"(set {KEY_ENV} to a key of its tenant, or use --local)")
        if response.status_code == 400 and detail.startswith("At least one of"):
            raise ScopeError(detail, field=answer.get("field", "user_id"))
        if 400 <= response.status_code < 500:
            raise InvalidInputError(detail, field=answer.get("field"))
        if response.status_code == 507:
            raise StorageFullError(self.address.url, detail)
        retry_after = response.headers.get("retry-after", "")
        if response.status_code == 503 and retry_after.isdigit():  # the server's database is away: retry later
            raise StoreUnavailableError(f"the memlane server at {self.address.url} cannot serve now: {detail}",
                                        retry_after=int(retry_after))
        raise ServerError(f"the memlane server at {self.address.url} failed: {detail}")

    def add(self, messages: Any, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, metadata: Mapping[str, Any] | None = None, infer: bool = True,
            memory_type: str | None = None, timestamp: Any = None) -> dict[str, Any]:
        body = {"messages": messages, "user_id": user_id, "agent_id": agent_id, "run_id": run_id,
                "metadata": metadata, "infer": infer, "memory_type": memory_type, "timestamp": timestamp}
        return self._call("POST", "/memories", body={k: v for k, v in body.items() if v is not None})

    def search(self, query: str, **options: Any) -> dict[str, Any]:
        return self._call("POST", "/search", body={"query": query, **{k: v for k, v in options.items() if v is not None}})

    def get(self, memory_id: str) -> dict[str, Any] | None:
        try:
            return self._call("GET", f"/memories/{quote(memory_id, safe='')}", memory_id=memory_id)
        except MemoryNotFoundError:
            return None

    def get_all(self, *, filters: Mapping[str, Any] | None = None, **params: Any) -> dict[str, Any]:
        return self._call("GET", "/memories", params={**params, "filters": json.dumps(filters) if filters else None})

    def delete(self, memory_id: str) -> dict[str, Any]:
        return self._call("DELETE", f"/memories/{quote(memory_id, safe='')}", memory_id=memory_id)

    def delete_all(self, *, filters: Mapping[str, Any] | None = None, **params: Any) -> dict[str, Any]:
        return self._call("DELETE", "/memories", params={**params, "filters": json.dumps(filters) if filters else None})

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        try:
            return self._call("GET", f"/memories/{quote(memory_id, safe='')}/history", memory_id=memory_id)
        except MemoryNotFoundError:
            return []

    def get_messages(self, **params: Any) -> list[dict[str, Any]]:
        return self._call("GET", "/messages", params=params)

    def info(self) -> dict[str, Any]:
        return {**self._call("GET", "/info"), "server": self.address.url}

    def close(self) -> None:
        pass  # one connection per call: nothing is kept open
