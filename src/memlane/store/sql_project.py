"""A tenant's project in a SQL store, written once for both dialects: its settings, its webhooks, the
feedback on its memories, its memory exports (core/project.py, core/webhooks.py).

``_announce`` is the webhooks' side of every write: the store calls it with the history rows a
transaction writes, and it queues, in that transaction, one delivery job per active webhook subscribed
to each event (none when the tenant has no webhook: one indexed read).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from memlane.core import timeutil
from memlane.core import webhooks as hooks
from memlane.core.jobs import WEBHOOK, Job
from memlane.core.project import ExportRecord, FeedbackRecord
from memlane.store.sql_dialect import Con, SqlDialect

_WEBHOOK_COLUMNS = "id, name, url, event_types, secret, is_active, created_at, updated_at"
_FEEDBACK_COLUMNS = "id, memory_id, feedback, reason, created_at, user_id, agent_id, run_id"
_EXPORT_COLUMNS = "id, schema, filters, instructions, status, method, result, error, created_at"
#: the tables of a tenant's project (a dialect's ``TABLES`` names each); ``reset`` empties the last two
PROJECT_TABLES = ("project_settings", "webhooks", "feedback", "exports")


class SqlProject(SqlDialect):
    #: the project's name when it is not the rows' tenant (a SQLite file is one tenant's: ``create_store`` names it)
    project_name: str | None = None

    @property
    def project(self) -> str:
        """The project (the tenant) whose settings and webhooks these are, as webhook payloads name it."""
        return self.project_name or self.tenant

    # -- settings ------------------------------------------------------------------------------------

    def project_settings(self) -> dict[str, Any]:
        rows = self._run(lambda con: con.execute(
            self._sql("SELECT key, value FROM {project_settings} WHERE {tenant}TRUE"), self._t()).fetchall())
        return {key: self._json_out(value) for key, value in rows}

    def set_project_settings(self, values: dict[str, Any]) -> None:
        """Write the given fields (a None value is stored as null: the field is cleared)."""
        now = timeutil.now_iso()
        self._run(lambda con: self.write_project(con, settings=[(key, value, now) for key, value in values.items()]),
                  write=True)

    def write_project(self, con: Con, *, settings: Sequence[tuple[str, Any, str]] = (),
                      webhooks: Sequence[hooks.Webhook] = (), feedback: Sequence[FeedbackRecord] = (),
                      exports: Sequence[ExportRecord] = ()) -> None:
        """Write project rows in the caller's transaction on ``con`` (this store's writes, ``memlane migrate``):
        ``settings`` as (key, value, updated_at), replacing a key's value; webhooks replacing theirs (by id)."""
        cur = con.cursor()
        if settings:
            cur.executemany(self._sql(
                "INSERT INTO {project_settings} ({tenant_col}key, value, updated_at) VALUES ({tenant_val}%s, %s, %s)"
                " ON CONFLICT ({tenant_col}key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at"),
                [self._t(key, self._json_in(value), at) for key, value, at in settings])
        if webhooks:
            cur.executemany(self._sql(
                "INSERT INTO {webhooks} ({tenant_col}" + _WEBHOOK_COLUMNS + ") VALUES"
                " ({tenant_val}%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT ({tenant_col}id) DO UPDATE SET"
                " name = excluded.name, url = excluded.url, event_types = excluded.event_types,"
                " is_active = excluded.is_active, updated_at = excluded.updated_at"),
                [self._t(h.id, h.name, h.url, self._list_in(h.event_types), h.secret, h.is_active, h.created_at,
                         h.updated_at) for h in webhooks])
        if feedback:
            cur.executemany(self._sql(
                "INSERT INTO {feedback} ({tenant_col}" + _FEEDBACK_COLUMNS + ") VALUES"
                " ({tenant_val}%s,%s,%s,%s,%s,%s,%s,%s)"),
                [self._t(r.id, r.memory_id, r.feedback, r.reason, r.created_at, r.user_id, r.agent_id, r.run_id)
                 for r in feedback])
        if exports:
            cur.executemany(self._sql(
                "INSERT INTO {exports} ({tenant_col}" + _EXPORT_COLUMNS + ") VALUES"
                " ({tenant_val}%s,%s,%s,%s,%s,%s,%s,%s,%s)"),
                [self._t(e.id, self._json_in(e.schema), self._json_in(e.filters), e.instructions, e.status, e.method,
                         None if e.result is None else self._json_in(e.result), e.error, e.created_at)
                 for e in exports])

    # -- webhooks ------------------------------------------------------------------------------------

    def _webhook(self, row: Sequence[Any]) -> hooks.Webhook:
        return hooks.Webhook(id=row[0], name=row[1], url=row[2], event_types=self._list_out(row[3]), secret=row[4],
                             is_active=bool(row[5]), created_at=row[6], updated_at=row[7])

    def webhooks(self) -> list[hooks.Webhook]:
        rows = self._run(lambda con: con.execute(
            self._sql("SELECT " + _WEBHOOK_COLUMNS + " FROM {webhooks} WHERE {tenant}TRUE ORDER BY seq"),
            self._t()).fetchall())
        return [self._webhook(row) for row in rows]

    def webhook(self, webhook_id: str) -> hooks.Webhook | None:
        row = self._run(lambda con: con.execute(
            self._sql("SELECT " + _WEBHOOK_COLUMNS + " FROM {webhooks} WHERE {tenant}id = %s"),
            self._t(webhook_id)).fetchone())
        return self._webhook(row) if row else None

    def save_webhook(self, hook: hooks.Webhook) -> None:
        """Insert or replace a webhook (its id)."""
        self._run(lambda con: self.write_project(con, webhooks=[hook]), write=True)

    def delete_webhook(self, webhook_id: str) -> bool:
        return bool(self._run(lambda con: con.execute(
            self._sql("DELETE FROM {webhooks} WHERE {tenant}id = %s"), self._t(webhook_id)).rowcount, write=True))

    def _announce(self, con: Con, rows: Sequence[Sequence[Any]]) -> None:
        """Queue the deliveries of history ``rows`` (memory_id, event, old, new, created_at, actor_id, role,
        user_id, agent_id, run_id, reason) in the caller's transaction."""
        if not rows:
            return
        active = con.execute(self._sql("SELECT id, event_types FROM {webhooks} WHERE {tenant}is_active = %s"),
                             self._t(True)).fetchall()
        if not active:
            return
        now = timeutil.now_iso()
        jobs = []
        for memory_id, event, old, new, at, *_, user_id, agent_id, run_id, _reason in rows:
            fired = hooks.fired(event, new)
            scope = {k: v for k, v in (("user_id", user_id), ("agent_id", agent_id), ("run_id", run_id)) if v}
            for webhook_id, types in active:
                if fired in self._list_out(types):
                    jobs.append(Job(id=str(uuid.uuid4()), kind=WEBHOOK, order_key=f"webhook:{webhook_id}",
                                    created_at=now, request={"webhook_id": webhook_id, "payload": hooks.payload(
                                        self.project, webhook_id, event, memory_id, old, new, at, scope)}))
        if jobs:
            self._enqueue(con, jobs)  # type: ignore[attr-defined]  # SqlJobs's, beside this in SqlMemoryStore

    # -- feedback ------------------------------------------------------------------------------------

    def add_feedback(self, record: FeedbackRecord) -> None:
        self._run(lambda con: self.write_project(con, feedback=[record]), write=True)

    def feedback_of(self, memory_id: str) -> list[FeedbackRecord]:
        """The feedback given on a memory, oldest first."""
        rows = self._run(lambda con: con.execute(
            self._sql("SELECT " + _FEEDBACK_COLUMNS + " FROM {feedback} WHERE {tenant}memory_id = %s ORDER BY seq"),
            self._t(memory_id)).fetchall())
        return [FeedbackRecord(*row) for row in rows]

    # -- exports -------------------------------------------------------------------------------------

    def _export(self, row: Sequence[Any]) -> ExportRecord:
        return ExportRecord(id=row[0], schema=self._json_out(row[1]), filters=self._json_out(row[2]),
                            instructions=row[3], status=row[4], method=row[5],
                            result=None if row[6] is None else self._json_out(row[6]), error=row[7], created_at=row[8])

    def save_export(self, export: ExportRecord) -> None:
        self._run(lambda con: self.write_project(con, exports=[export]), write=True)

    def export(self, export_id: str | None = None, filters: dict[str, Any] | None = None) -> ExportRecord | None:
        """The export with this id, else the newest one made with exactly these ``filters`` (else the newest)."""
        if export_id is not None:
            row = self._run(lambda con: con.execute(
                self._sql("SELECT " + _EXPORT_COLUMNS + " FROM {exports} WHERE {tenant}id = %s"),
                self._t(export_id)).fetchone())
            return self._export(row) if row else None
        rows = self._run(lambda con: con.execute(
            self._sql("SELECT " + _EXPORT_COLUMNS + " FROM {exports} WHERE {tenant}TRUE ORDER BY seq DESC LIMIT 1000"),
            self._t()).fetchall())
        found = (self._export(row) for row in rows)
        return next((e for e in found if filters is None or e.filters == filters), None)
