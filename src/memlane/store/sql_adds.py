"""The add journal in a SQL store, written once for both dialects (``core/changes.AddRecord``).

An ``add`` is two transactions: the messages are kept first (nothing a user sends is lost, even if
formation fails or the process dies), then what they formed is written. The journal makes the pair
behave as one call that happens exactly once:

* the first transaction writes the messages and a ``pending`` record of the call (its scope, its
  request, its message ids, its idempotency key if any, and who is forming it);
* the second writes the memories and sets the record ``done`` with the call's outcome, on the
  condition that it is still pending (``AddAlreadyDone`` rolls everything back otherwise): two
  processes completing one add cannot both write its memories;
* a completed record keeps its outcome for a while (``forget_adds``; ``ingest/adds.py`` says how
  long), so a retry with the same idempotency key answers the same.

Runs inside the store's transactions (``apply``) or its own. A queue of adds to form later (async
adds) is the same journal: pending records a worker claims (``claim_add``) and completes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memlane.core.changes import DONE, PENDING, AddDone, AddRecord
from memlane.core.errors import AddAlreadyDone, AddKeyTaken
from memlane.core.filters import SCOPE_COLUMNS
from memlane.core import timeutil
from memlane.store.sql_dialect import Con, SqlDialect

_COLUMNS = ("id, key, fingerprint, user_id, agent_id, run_id, request, message_ids, status, outcome, owner,"
            " lease_until, created_at, updated_at")


class SqlAddJournal(SqlDialect):
    def _add_record(self, row: Sequence[Any]) -> AddRecord:
        return AddRecord(id=row[0], key=row[1], fingerprint=row[2], user_id=row[3], agent_id=row[4], run_id=row[5],
                         request=self._json_out(row[6]), message_ids=self._list_out(row[7]), status=row[8],
                         outcome=self._json_out(row[9]) if row[9] is not None else None, owner=row[10],
                         lease_until=row[11], created_at=row[12], updated_at=row[13])

    def write_journal(self, con: Con, record: AddRecord) -> None:
        """Journal an add in the caller's transaction (pending; an async add's done with its answer);
        ``AddKeyTaken`` if its key is journaled."""
        if record.key is not None and con.execute(
                self._sql("SELECT 1 FROM {adds} WHERE {tenant}key = %s"), self._t(record.key)).fetchone():
            raise AddKeyTaken(record.key)
        try:
            con.execute(self._sql("INSERT INTO {adds} ({tenant_col}" + _COLUMNS + ") VALUES"
                                  " ({tenant_val}%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"),
                        self._t(record.id, record.key, record.fingerprint, record.user_id, record.agent_id,
                                record.run_id, self._json_in(record.request), self._list_in(record.message_ids),
                                record.status, self._json_in(record.outcome) if record.outcome is not None else None,
                                record.owner, record.lease_until, record.created_at,
                                record.updated_at or record.created_at))
        except self.INTEGRITY_ERRORS:  # a concurrent call with the same key committed first (PostgreSQL)
            raise AddKeyTaken(record.key or record.id) from None

    def complete_journal(self, con: Con, done: AddDone) -> None:
        """Set a pending add done (or remove it) in the caller's transaction; ``AddAlreadyDone`` if it is not pending."""
        if done.keep:
            changed = con.execute(self._sql("UPDATE {adds} SET status = %s, outcome = %s, owner = NULL,"
                                            " lease_until = NULL, updated_at = %s WHERE {tenant}id = %s AND status = %s"),
                                  (DONE, self._json_in(done.outcome), timeutil.now_iso(), *self._t(done.id), PENDING))
        else:
            if done.forget_messages:
                row = con.execute(self._sql("SELECT message_ids FROM {adds} WHERE {tenant}id = %s AND status = %s"),
                                  (*self._t(done.id), PENDING)).fetchone()
                if row is not None and self._list_out(row[0]):
                    params: list[Any] = list(self._t())
                    con.execute(self._sql("DELETE FROM {messages} WHERE {tenant}{ids}",
                                          ids=self._in("id", self._list_out(row[0]), params)), params)
            changed = con.execute(self._sql("DELETE FROM {adds} WHERE {tenant}id = %s AND status = %s"),
                                  (*self._t(done.id), PENDING))
        if changed.rowcount != 1:
            raise AddAlreadyDone(done.id)

    def add_record(self, *, add_id: str | None = None, key: str | None = None) -> AddRecord | None:
        """The journaled add with this id, or with this idempotency key."""
        column, value = ("id", add_id) if add_id is not None else ("key", key)
        row = self._run(lambda con: con.execute(
            self._sql("SELECT " + _COLUMNS + " FROM {adds} WHERE {tenant}" + column + " = %s"),
            self._t(value)).fetchone())
        return self._add_record(row) if row else None

    def pending_adds(self, scope: dict[str, str] | None = None, limit: int = 100) -> list[AddRecord]:
        """Pending adds, oldest first: all of them, or those of exactly ``scope`` (user, agent, run ids;
        a missing key must be NULL)."""
        # the status as a literal, so SQLite's partial index of pending adds serves the query
        parts, params = [f"status = '{PENDING}'"], []
        if scope is not None:
            for column in SCOPE_COLUMNS:
                if scope.get(column) is None:
                    parts.append(f"{column} IS NULL")
                else:
                    parts.append(f"{column} = %s")
                    params.append(scope[column])
        rows = self._run(lambda con: con.execute(
            self._sql("SELECT " + _COLUMNS + " FROM {adds} WHERE {tenant}" + " AND ".join(parts)
                      + " ORDER BY created_at, id LIMIT %s"), (*self._t(*params), limit)).fetchall())
        return [self._add_record(row) for row in rows]

    def claim_add(self, add_id: str, expected_owner: str | None, owner: str | None,
                  lease_until: str | None) -> bool:
        """Take over a pending add from ``expected_owner`` (compare and set): False if it is done or
        another process took it first."""
        def claim(con: Con) -> int:
            return con.execute(self._sql(
                "UPDATE {adds} SET owner = %s, lease_until = %s, updated_at = %s WHERE {tenant}id = %s"
                " AND status = %s AND " + ("owner IS NULL" if expected_owner is None else "owner = %s")),
                (owner, lease_until, timeutil.now_iso(), *self._t(add_id), PENDING,
                 *(() if expected_owner is None else (expected_owner,)))).rowcount

        return self._run(claim, write=True) == 1

    def forget_adds(self, before: str, keyed_before: str | None = None) -> int:
        """Remove completed adds last changed before ``before`` (ISO time), those with an idempotency
        key before ``keyed_before`` (default ``before``): their keys are free again."""
        keyed_before = keyed_before or before
        return self._run(lambda con: con.execute(
            self._sql("DELETE FROM {adds} WHERE {tenant}status = %s AND updated_at <"
                      " CASE WHEN key IS NULL THEN %s ELSE %s END"),
            self._t(DONE, before, keyed_before)).rowcount, write=True)
