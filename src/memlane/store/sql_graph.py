"""Graph memory in a SQL store: the entities and relations tables, written once for both dialects.

Runs inside the store's transactions (``apply``) or its own. Vectors are float32 blobs
(graph lookups score a scope's few hundred rows in numpy; no vector index is needed).
Scope conditions are equalities on the scope columns, which the schemas' partial indexes narrow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from memlane.core.errors import StoreError
from memlane.core.filters import SCOPE_COLUMNS
from memlane.core.graph_models import Entity, GraphChanges, Relation
from memlane.store.sql_dialect import Con, SqlDialect

_ENTITY = "e.id, e.name, e.key, e.user_id, e.agent_id, e.run_id, e.created_at, e.updated_at, e.vector"
_RELATION = (
    "r.id, r.source_id, s.name, r.relationship, r.destination_id, d.name, r.user_id, r.agent_id, r.run_id,"
    " r.created_at, r.updated_at, r.valid_from, r.valid_to, r.invalid_reason, r.superseded_by,"
    " r.source_message_ids, r.vector"
)
#: the graph's tables, relations first (what ``purge`` and ``reset`` erase)
GRAPH_TABLES = ("graph_relations", "graph_entities")


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype="<f4").tobytes()


def _vector(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)  # read-only view, never written


class SqlGraph(SqlDialect):
    def _graph_scope(self, scope: dict[str, str | None], alias: str) -> tuple[str, list[Any]]:
        """The tenant, then equality per scope key given; a key given as None must be NULL (an exact scope)."""
        parts, params = [self._sql("{tenant:" + alias + "}TRUE")], list(self._t())
        for k in SCOPE_COLUMNS:
            if k in scope:
                if scope[k] is None:
                    parts.append(f"{alias}.{k} IS NULL")
                else:
                    parts.append(f"{alias}.{k} = {self.PLACEHOLDER}")
                    params.append(scope[k])
        return " AND ".join(parts), params

    def write_graph(self, con: Con, changes: GraphChanges) -> None:
        """Write graph changes in the caller's transaction on ``con`` (``apply``, ``memlane migrate``)."""
        cur = con.cursor()
        try:
            if changes.entities:
                cur.executemany(self._sql(
                    "INSERT INTO {graph_entities} ({tenant_col}id, name, key, user_id, agent_id, run_id, created_at,"
                    " updated_at, vector) VALUES ({tenant_val}%s,%s,%s,%s,%s,%s,%s,%s,%s)"),
                    [self._t(e.id, e.name, e.key, e.user_id, e.agent_id, e.run_id, e.created_at, e.updated_at,
                             _blob(e.vector)) for e in changes.entities])
            if changes.relations:
                cur.executemany(self._sql(
                    "INSERT INTO {graph_relations} ({tenant_col}id, source_id, relationship, destination_id, user_id,"
                    " agent_id, run_id, created_at, updated_at, valid_from, valid_to, invalid_reason, superseded_by,"
                    " source_message_ids, vector) VALUES ({tenant_val}%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"),
                    [self._t(r.id, r.source_id, r.relationship, r.destination_id, r.user_id, r.agent_id, r.run_id,
                             r.created_at, r.updated_at, r.valid_from, r.valid_to, r.invalid_reason, r.superseded_by,
                             self._list_in(r.source_message_ids), _blob(r.vector)) for r in changes.relations])
        except self.INTEGRITY_ERRORS as exc:
            raise StoreError(f"could not insert graph rows: {exc}") from None
        for inv in changes.invalidations:
            done = con.execute(self._sql(
                "UPDATE {graph_relations} SET valid_to = %s, invalid_reason = %s, superseded_by = %s, updated_at = %s"
                " WHERE {tenant}id = %s AND valid_to IS NULL"),
                (inv.at, inv.reason, inv.superseded_by, inv.at, *self._t(inv.id))).rowcount
            if not done:  # another writer invalidated it first: nothing half-written, the caller may retry
                raise StoreError(f"relation {inv.id} is no longer valid (changed concurrently); nothing was written")
        for c in changes.confirmations:
            row = con.execute(self._sql("SELECT source_message_ids FROM {graph_relations} WHERE {tenant}id = %s{lock}"),
                              self._t(c.id)).fetchone()
            if row is not None:
                sources = self._list_out(row[0])
                sources += [i for i in dict.fromkeys(c.source_message_ids) if i not in sources]
                con.execute(self._sql("UPDATE {graph_relations} SET source_message_ids = %s, updated_at = %s"
                                      " WHERE {tenant}id = %s"), (self._list_in(sources), c.at, *self._t(c.id)))

    def graph_entities(self, scope: dict[str, str]) -> list[Entity]:
        sql, params = self._graph_scope(scope, "e")
        rows = self._run(lambda con: con.execute(
            self._sql("SELECT " + _ENTITY + " FROM {graph_entities} e WHERE {where} ORDER BY e.{seq}", where=sql),
            params).fetchall())
        return [Entity(id=r[0], name=r[1], key=r[2], user_id=r[3], agent_id=r[4], run_id=r[5], created_at=r[6],
                       updated_at=r[7], vector=_vector(r[8])) for r in rows]

    def graph_relations(self, scope: dict[str, str], *, include_invalid: bool = False, as_of: str | None = None,
                        entity_ids: Sequence[str] | None = None, limit: int | None = None) -> list[Relation]:
        sql, params = self._graph_scope(scope, "r")
        if as_of is not None:
            sql += self._sql(" AND r.valid_from <= %s AND (r.valid_to IS NULL OR r.valid_to > %s)")
            params += [as_of, as_of]
        elif not include_invalid:
            sql += " AND r.valid_to IS NULL"
        if entity_ids is not None:
            source = self._in("r.source_id", list(entity_ids), params)
            sql += f" AND ({source} OR {self._in('r.destination_id', list(entity_ids), params)})"
        if limit is not None:
            params.append(limit)
        statement = self._sql(
            "SELECT " + _RELATION + " FROM {graph_relations} r JOIN {graph_entities} s ON {same:s.r}s.id = r.source_id"
            " JOIN {graph_entities} d ON {same:d.r}d.id = r.destination_id WHERE {where}"
            " ORDER BY r.created_at DESC, r.{seq} DESC{limit}", where=sql,
            limit="" if limit is None else f" LIMIT {self.PLACEHOLDER}")
        rows = self._run(lambda con: con.execute(statement, params).fetchall())
        return [Relation(id=r[0], source_id=r[1], source=r[2], relationship=r[3], destination_id=r[4],
                         destination=r[5], user_id=r[6], agent_id=r[7], run_id=r[8], created_at=r[9], updated_at=r[10],
                         valid_from=r[11], valid_to=r[12], invalid_reason=r[13], superseded_by=r[14],
                         source_message_ids=self._list_out(r[15]), vector=_vector(r[16])) for r in rows]

    def delete_graph(self, scope: dict[str, str]) -> int:
        relations_sql, relations_params = self._graph_scope(scope, "r")
        entities_sql, entities_params = self._graph_scope(scope, "e")

        def delete(con: Con) -> int:
            count = con.execute(self._sql("DELETE FROM {graph_relations} AS r WHERE {where}", where=relations_sql),
                                relations_params).rowcount
            con.execute(self._sql("DELETE FROM {graph_entities} AS e WHERE {where} AND NOT EXISTS (SELECT 1 FROM"
                                  " {graph_relations} r WHERE {same:r.e}(r.source_id = e.id OR r.destination_id = e.id))",
                                  where=entities_sql), entities_params)
            return count

        return self._run(delete, write=True)
