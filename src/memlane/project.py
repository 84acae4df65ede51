"""``Memory``'s project features (mem0's platform): the project's settings, its webhooks, feedback on
memories and memory exports (docs/webhooks.md). A mixin, as ``background.formation.FormsInBackground``:
it names ``Memory`` without importing it.

The project is the store's tenant. Its settings and webhooks live in the store (store/sql_project.py);
``custom_instructions`` reach formation (ingest/formation.py); webhook deliveries are queued by the store
with the history of each change and posted by the background workers (background/webhooks.py).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from memlane.core import project as proj
from memlane.core import timeutil, validation
from memlane.core import webhooks as hooks
from memlane.core.errors import InvalidInputError, MemoryNotFoundError, NotFoundError
from memlane.core.jobs import STATES
from memlane.retrieval import exports

#: the ``Memory`` (memory.py) whose side this is
Facade = Any


class ProjectFeatures:
    # -- settings ------------------------------------------------------------------------------------

    def get_project(self: Facade, fields: Sequence[str] | None = None) -> dict[str, Any]:
        """The project's settings (``fields``: only those), each unset one as None."""
        stored = self.store.project_settings()
        return {name: stored.get(name) for name in proj.fields_wanted(list(fields) if fields else None)}

    def update_project(self: Facade, **fields: Any) -> dict[str, Any]:
        """Set the given settings (``custom_instructions``, ``agent_custom_instructions``, ``custom_categories``,
        ``memory_depth``, ``usecase_setting``, ``multilingual``, ``decay``, ``version``; None clears one)."""
        given = proj.settings_update(fields)
        self.store.set_project_settings(given)
        return {"message": "Updated project settings", **self.get_project()}

    # -- webhooks ------------------------------------------------------------------------------------

    def _project(self: Facade) -> str:
        return getattr(self.store, "project", None) or getattr(self.store, "tenant", "default")

    def _url(self: Facade, url: Any) -> str:
        settings = self.config.webhooks
        return hooks.check_url(url, schemes=settings.schemes, private_networks=settings.private_networks)

    def _webhook(self: Facade, webhook_id: Any) -> hooks.Webhook:
        webhook_id = validation.identifier(str(webhook_id) if isinstance(webhook_id, int) else webhook_id,
                                           "webhook_id", required=True)
        hook = self.store.webhook(webhook_id)
        if hook is None:
            raise NotFoundError("webhook", webhook_id, field="webhook_id")
        return hook

    def get_webhooks(self: Facade) -> list[dict[str, Any]]:
        return [hook.to_item(self._project()) for hook in self.store.webhooks()]

    def create_webhook(self: Facade, url: str, name: str, event_types: Sequence[str]) -> dict[str, Any]:
        """A webhook posting the project's memory events of ``event_types`` (``memory_add``, ``memory_update``,
        ``memory_delete``) to ``url``, signed with its ``secret`` (in the answer)."""
        now = timeutil.now_iso()
        hook = hooks.Webhook(id=hooks.new_id(), name=hooks.name(name), url=self._url(url),
                             event_types=hooks.event_types(list(event_types) if isinstance(event_types, (list, tuple))
                                                           else event_types),
                             secret=hooks.new_secret(), is_active=True, created_at=now, updated_at=now)
        self.store.save_webhook(hook)
        return hook.to_item(self._project())

    def update_webhook(self: Facade, webhook_id: Any, *, name: str | None = None, url: str | None = None,
                       event_types: Sequence[str] | None = None, is_active: bool | None = None) -> dict[str, Any]:
        hook = self._webhook(webhook_id)
        if name is None and url is None and event_types is None and is_active is None:
            raise InvalidInputError("give at least one of name, url, event_types, is_active", field="body")
        if name is not None:
            hook.name = hooks.name(name)
        if url is not None:
            hook.url = self._url(url)
        if event_types is not None:
            hook.event_types = hooks.event_types(list(event_types) if isinstance(event_types, (list, tuple))
                                                 else event_types)
        if is_active is not None:
            hook.is_active = validation.flag(is_active, "is_active", True)
        hook.updated_at = timeutil.now_iso()
        self.store.save_webhook(hook)
        return {"message": "Webhook updated successfully", **hook.to_item(self._project())}

    def delete_webhook(self: Facade, webhook_id: Any) -> dict[str, str]:
        hook = self._webhook(webhook_id)
        self.store.delete_webhook(hook.id)
        return {"message": "Webhook deleted successfully"}

    def webhook_deliveries(self: Facade, webhook_id: Any, status: str | None = None,
                           limit: int = 100) -> list[dict[str, Any]]:
        """The webhook's newest deliveries, newest first: status, attempts, the last error, what was sent."""
        hook = self._webhook(webhook_id)
        status = validation.choice(status, STATES, "status")
        jobs = self.store.jobs(status, validation.limit(limit, self.limits), order_key=f"webhook:{hook.id}")
        return [{"delivery_id": job.id, "status": job.status, "attempts": job.attempts, "error": job.error,
                 "result": job.result, "created_at": job.created_at, "finished_at": job.finished_at,
                 "event_type": job.request["payload"]["event_type"], "payload": job.request["payload"]}
                for job in jobs]

    # -- feedback ------------------------------------------------------------------------------------

    def feedback(self: Facade, memory_id: str, feedback: str | None = None,
                 feedback_reason: str | None = None) -> dict[str, Any]:
        """Keep feedback on a memory (``POSITIVE``, ``NEGATIVE``, ``VERY_NEGATIVE`` or None, and a reason);
        ``get_feedback`` lists it. It changes nothing else."""
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        value = proj.feedback_value(feedback)
        if feedback_reason is not None:
            feedback_reason = validation.text(feedback_reason, "feedback_reason", self.limits)
        record = self.store.get(memory_id)
        if record is None:
            raise MemoryNotFoundError(memory_id)
        kept = proj.FeedbackRecord(id=str(uuid.uuid4()), memory_id=memory_id, feedback=value, reason=feedback_reason,
                                   created_at=timeutil.now_iso(), user_id=record.user_id, agent_id=record.agent_id,
                                   run_id=record.run_id)
        self.store.add_feedback(kept)
        return {"message": "Feedback recorded", **kept.to_item()}

    def get_feedback(self: Facade, memory_id: str) -> list[dict[str, Any]]:
        """The feedback given on a memory, oldest first (kept after the memory is deleted, erased with its
        scope by ``delete_all(purge=True)``)."""
        memory_id = validation.identifier(memory_id, "memory_id", required=True)
        return [record.to_item() for record in self.store.feedback_of(memory_id)]

    # -- exports -------------------------------------------------------------------------------------

    def create_memory_export(self: Facade, schema: Mapping[str, Any] | str, filters: Mapping[str, Any] | None = None,
                             export_instructions: str | None = None) -> dict[str, Any]:
        """Shape the memories ``filters`` select by the JSON ``schema``: by the LLM when one is configured,
        else by field names (retrieval/exports.py); kept for ``get_memory_export``. The export is made now:
        its answer says whether it ``SUCCEEDED`` (the result validates against the schema) or ``FAILED`` (why)."""
        checked = proj.export_schema(schema)
        if filters is not None and not isinstance(filters, Mapping):
            raise InvalidInputError("filters must be an object", field="filters")
        chosen = dict(filters or {})
        if export_instructions is not None:
            export_instructions = validation.text(export_instructions, "export_instructions", self.limits)
        memories = self.get_all(filters=chosen or None, limit=self.limits.max_results)["results"]
        llm = getattr(self.engine, "llm", None)
        record = proj.ExportRecord(id=str(uuid.uuid4()), schema=checked, filters=chosen, status=proj.SUCCEEDED,
                                   created_at=timeutil.now_iso(), instructions=export_instructions,
                                   method="llm" if llm is not None else "offline")
        try:
            if llm is not None:
                record.result = exports.ask(llm, checked, memories, export_instructions)
            else:
                record.result = exports.fill(checked, memories, _scope(chosen))
                found = exports.problems(checked, record.result)
                if found:
                    raise exports.ExportFailed("the memories do not fill the schema by field names (configure an "
                                               "LLM to fill it by meaning): " + "; ".join(found[:5]))
        except exports.ExportFailed as exc:
            record.status, record.error = proj.FAILED, str(exc)
        self.store.save_export(record)
        message = ("Memory export request received. The export is ready." if record.status == proj.SUCCEEDED
                   else "Memory export failed: " + (record.error or ""))
        return {"message": message, **record.summary()}

    def get_memory_export(self: Facade, memory_export_id: str | None = None,
                          filters: Mapping[str, Any] | None = None) -> Any:
        """The export with this id, else the newest made with these ``filters``: its data (the JSON the schema
        describes). One that failed raises ``InvalidInputError`` with the reason; none, ``NotFoundError``."""
        if memory_export_id is not None:
            memory_export_id = validation.identifier(memory_export_id, "memory_export_id", required=True)
        if filters is not None and not isinstance(filters, Mapping):
            raise InvalidInputError("filters must be an object", field="filters")
        record = self.store.export(memory_export_id, dict(filters) if filters is not None else None)
        if record is None:
            raise NotFoundError("memory export", memory_export_id or f"for filters {dict(filters or {})}",
                                field="memory_export_id")
        if record.status != proj.SUCCEEDED:
            raise InvalidInputError(f"memory export {record.id} failed: {record.error}", field="schema")
        return record.result


def _scope(filters: Mapping[str, Any]) -> dict[str, str]:
    """The scope ids a filter names as plain equalities (top level, or in a top-level ``AND``)."""
    found: dict[str, str] = {}
    parts = [filters, *[p for p in filters.get("AND", []) if isinstance(p, Mapping)]]
    for part in parts:
        for key in ("user_id", "agent_id", "run_id"):
            if isinstance(part.get(key), str):
                found[key] = part[key]
    return found
