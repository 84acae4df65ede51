"""Graph memory on PostgreSQL: ``memlane_graph_entities`` and ``memlane_graph_relations``.

Functions over a connection, called by ``PostgresStore`` inside its transactions;
every statement names the tenant. Vectors are float32 ``bytea`` (graph lookups
score a scope's few hundred rows in numpy; no vector index is needed).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import psycopg

from memlane.errors import StoreError
from memlane.filters import SCOPE_COLUMNS
from memlane.graph_models import Entity, GraphChanges, Relation

_ENTITY = "e.id, e.name, e.key, e.user_id, e.agent_id, e.run_id, e.created_at, e.updated_at, e.vector"
_RELATION = (
    "r.id, r.source_id, s.name, r.relationship, r.destination_id, d.name, r.user_id, r.agent_id, r.run_id,"
    " r.created_at, r.updated_at, r.valid_from, r.valid_to, r.invalid_reason, r.superseded_by,"
    " r.source_message_ids, r.vector"
)
TABLES = ("memlane_graph_relations", "memlane_graph_entities")


def _scope(tenant: str, scope: dict[str, str | None], alias: str) -> tuple[str, list]:
    """The tenant, then equality per scope key given; a key given as None must be NULL."""
    parts, params = [f"{alias}.tenant = %s"], [tenant]
    for k in SCOPE_COLUMNS:
        if k in scope:
            if scope[k] is None:
                parts.append(f"{alias}.{k} IS NULL")
            else:
                parts.append(f"{alias}.{k} = %s")
                params.append(scope[k])
    return " AND ".join(parts), params


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype="<f4").tobytes()


def _vector(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)  # read-only view, never written


def apply(cur: psycopg.Cursor, tenant: str, changes: GraphChanges) -> None:
    if changes.entities:
        cur.executemany(
            "INSERT INTO memlane_graph_entities (tenant, id, name, key, user_id, agent_id, run_id, created_at,"
            " updated_at, vector) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            [(tenant, e.id, e.name, e.key, e.user_id, e.agent_id, e.run_id, e.created_at, e.updated_at,
              _blob(e.vector)) for e in changes.entities])
    if changes.relations:
        cur.executemany(
            "INSERT INTO memlane_graph_relations (tenant, id, source_id, relationship, destination_id, user_id,"
            " agent_id, run_id, created_at, updated_at, valid_from, valid_to, invalid_reason, superseded_by,"
            " source_message_ids, vector) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
            [(tenant, r.id, r.source_id, r.relationship, r.destination_id, r.user_id, r.agent_id, r.run_id,
              r.created_at, r.updated_at, r.valid_from, r.valid_to, r.invalid_reason, r.superseded_by,
              list(r.source_message_ids), _blob(r.vector)) for r in changes.relations])
    for inv in changes.invalidations:
        done = cur.execute(
            "UPDATE memlane_graph_relations SET valid_to = %s, invalid_reason = %s, superseded_by = %s,"
            " updated_at = %s WHERE tenant = %s AND id = %s AND valid_to IS NULL",
            (inv.at, inv.reason, inv.superseded_by, inv.at, tenant, inv.id)).rowcount
        if not done:  # another writer invalidated it first: the whole transaction rolls back
            raise StoreError(f"relation {inv.id} is no longer valid (changed concurrently); nothing was written")
    for c in changes.confirmations:
        cur.execute(
            "UPDATE memlane_graph_relations SET source_message_ids = source_message_ids"
            " || ARRAY(SELECT x FROM unnest(%s::text[]) AS x WHERE NOT x = ANY(source_message_ids)),"
            " updated_at = %s WHERE tenant = %s AND id = %s", (list(c.source_message_ids), c.at, tenant, c.id))


def entities(con: psycopg.Connection, tenant: str, scope: dict[str, str | None]) -> list[Entity]:
    sql, params = _scope(tenant, scope, "e")
    rows = con.execute(f"SELECT {_ENTITY} FROM memlane_graph_entities e WHERE {sql} ORDER BY e.seq", params).fetchall()
    return [Entity(id=r[0], name=r[1], key=r[2], user_id=r[3], agent_id=r[4], run_id=r[5], created_at=r[6],
                   updated_at=r[7], vector=_vector(r[8])) for r in rows]


def relations(con: psycopg.Connection, tenant: str, scope: dict[str, str | None], *, include_invalid: bool = False,
              as_of: str | None = None, entity_ids: Sequence[str] | None = None,
              limit: int | None = None) -> list[Relation]:
    sql, params = _scope(tenant, scope, "r")
    if as_of is not None:
        sql += " AND r.valid_from <= %s AND (r.valid_to IS NULL OR r.valid_to > %s)"
        params += [as_of, as_of]
    elif not include_invalid:
        sql += " AND r.valid_to IS NULL"
    if entity_ids is not None:
        sql += " AND (r.source_id = ANY(%s) OR r.destination_id = ANY(%s))"
        params += [list(entity_ids), list(entity_ids)]
    rows = con.execute(
        f"SELECT {_RELATION} FROM memlane_graph_relations r"
        " JOIN memlane_graph_entities s ON s.tenant = r.tenant AND s.id = r.source_id"
        f" JOIN memlane_graph_entities d ON d.tenant = r.tenant AND d.id = r.destination_id WHERE {sql}"
        " ORDER BY r.created_at DESC, r.seq DESC" + (" LIMIT %s" if limit is not None else ""),
        params + ([limit] if limit is not None else [])).fetchall()
    return [Relation(id=r[0], source_id=r[1], source=r[2], relationship=r[3], destination_id=r[4], destination=r[5],
                     user_id=r[6], agent_id=r[7], run_id=r[8], created_at=r[9], updated_at=r[10], valid_from=r[11],
                     valid_to=r[12], invalid_reason=r[13], superseded_by=r[14],
                     source_message_ids=list(r[15]), vector=_vector(r[16])) for r in rows]


def delete(con: psycopg.Connection, tenant: str, scope: dict[str, str | None]) -> int:
    sql, params = _scope(tenant, scope, "r")
    count = con.execute(f"DELETE FROM memlane_graph_relations r WHERE {sql}", params).rowcount
    entity_sql, entity_params = _scope(tenant, scope, "e")
    con.execute(f"DELETE FROM memlane_graph_entities e WHERE {entity_sql} AND NOT EXISTS (SELECT 1 FROM"
                " memlane_graph_relations r WHERE r.tenant = e.tenant AND (r.source_id = e.id OR r.destination_id = e.id))",
                entity_params)
    return count
