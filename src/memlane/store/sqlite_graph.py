"""Graph memory on the embedded store: the ``graph_entities`` and ``graph_relations`` tables.

Functions over a connection, called by ``SQLiteStore`` inside its transactions.
Vectors are float32 blobs. Scope conditions are equalities on the scope columns,
which the partial indexes of the schema narrow.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

import numpy as np

from memlane import vectors
from memlane.errors import StoreError
from memlane.filters import SCOPE_COLUMNS
from memlane.graph_models import Entity, GraphChanges, Relation

_ENTITY = "e.id, e.name, e.key, e.user_id, e.agent_id, e.run_id, e.created_at, e.updated_at, e.vector"
_RELATION = (
    "r.id, r.source_id, s.name, r.relationship, r.destination_id, d.name, r.user_id, r.agent_id, r.run_id,"
    " r.created_at, r.updated_at, r.valid_from, r.valid_to, r.invalid_reason, r.superseded_by,"
    " r.source_message_ids, r.vector"
)


def _scope(scope: dict[str, str | None], alias: str) -> tuple[str, list[str]]:
    """Equality per scope key given; a key given as None must be NULL (an exact scope)."""
    parts, params = ["1"], []
    for k in SCOPE_COLUMNS:
        if k in scope:
            if scope[k] is None:
                parts.append(f"{alias}.{k} IS NULL")
            else:
                parts.append(f"{alias}.{k} = ?")
                params.append(scope[k])
    return " AND ".join(parts), params


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else vectors.to_blob(vector, np.dtype("<f4"))


def _vector(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)  # read-only view, never written


def apply(con: sqlite3.Connection, changes: GraphChanges) -> None:
    try:
        con.executemany(
            "INSERT INTO graph_entities(id, name, key, user_id, agent_id, run_id, created_at, updated_at, vector)"
            " VALUES (?,?,?,?,?,?,?,?,?)",
            [(e.id, e.name, e.key, e.user_id, e.agent_id, e.run_id, e.created_at, e.updated_at, _blob(e.vector))
             for e in changes.entities])
        con.executemany(
            "INSERT INTO graph_relations(id, source_id, relationship, destination_id, user_id, agent_id, run_id,"
            " created_at, updated_at, valid_from, valid_to, invalid_reason, superseded_by, source_message_ids, vector)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [(r.id, r.source_id, r.relationship, r.destination_id, r.user_id, r.agent_id, r.run_id, r.created_at,
              r.updated_at, r.valid_from, r.valid_to, r.invalid_reason, r.superseded_by,
              json.dumps(r.source_message_ids), _blob(r.vector)) for r in changes.relations])
    except sqlite3.IntegrityError as exc:
        raise StoreError(f"could not insert graph rows: {exc}") from None
    for inv in changes.invalidations:
        done = con.execute(
            "UPDATE graph_relations SET valid_to = ?, invalid_reason = ?, superseded_by = ?, updated_at = ?"
            " WHERE id = ? AND valid_to IS NULL", (inv.at, inv.reason, inv.superseded_by, inv.at, inv.id)).rowcount
        if not done:  # another writer invalidated it first: nothing half-written, the caller may retry
            raise StoreError(f"relation {inv.id} is no longer valid (changed concurrently); nothing was written")
    for c in changes.confirmations:
        row = con.execute("SELECT source_message_ids FROM graph_relations WHERE id = ?", (c.id,)).fetchone()
        if row is not None:
            sources = json.loads(row[0])
            sources += [i for i in c.source_message_ids if i not in sources]
            con.execute("UPDATE graph_relations SET source_message_ids = ?, updated_at = ? WHERE id = ?",
                        (json.dumps(sources), c.at, c.id))


def entities(con: sqlite3.Connection, scope: dict[str, str]) -> list[Entity]:
    sql, params = _scope(scope, "e")
    rows = con.execute(f"SELECT {_ENTITY} FROM graph_entities e WHERE {sql} ORDER BY e.rowid", params).fetchall()
    return [Entity(id=r[0], name=r[1], key=r[2], user_id=r[3], agent_id=r[4], run_id=r[5], created_at=r[6],
                   updated_at=r[7], vector=_vector(r[8])) for r in rows]


def relations(con: sqlite3.Connection, scope: dict[str, str], *, include_invalid: bool = False,
              as_of: str | None = None, entity_ids: Sequence[str] | None = None,
              limit: int | None = None) -> list[Relation]:
    sql, params = _scope(scope, "r")
    if as_of is not None:
        sql += " AND r.valid_from <= ? AND (r.valid_to IS NULL OR r.valid_to > ?)"
        params += [as_of, as_of]
    elif not include_invalid:
        sql += " AND r.valid_to IS NULL"
    if entity_ids is not None:
        ids = json.dumps(list(entity_ids))
        sql += (" AND (r.source_id IN (SELECT value FROM json_each(?))"
                " OR r.destination_id IN (SELECT value FROM json_each(?)))")
        params += [ids, ids]
    rows = con.execute(
        f"SELECT {_RELATION} FROM graph_relations r JOIN graph_entities s ON s.id = r.source_id"
        f" JOIN graph_entities d ON d.id = r.destination_id WHERE {sql} ORDER BY r.created_at DESC, r.rowid DESC"
        + (" LIMIT ?" if limit is not None else ""), params + ([limit] if limit is not None else [])).fetchall()
    return [_relation(r) for r in rows]


def _relation(r: Sequence) -> Relation:
    return Relation(id=r[0], source_id=r[1], source=r[2], relationship=r[3], destination_id=r[4], destination=r[5],
                    user_id=r[6], agent_id=r[7], run_id=r[8], created_at=r[9], updated_at=r[10], valid_from=r[11],
                    valid_to=r[12], invalid_reason=r[13], superseded_by=r[14],
                    source_message_ids=json.loads(r[15]), vector=_vector(r[16]))


def delete(con: sqlite3.Connection, scope: dict[str, str]) -> int:
    sql, params = _scope(scope, "r")
    count = con.execute(f"DELETE FROM graph_relations AS r WHERE {sql}", params).rowcount
    entity_sql, entity_params = _scope(scope, "e")
    con.execute(f"DELETE FROM graph_entities AS e WHERE {entity_sql} AND NOT EXISTS (SELECT 1 FROM graph_relations r"
                " WHERE r.source_id = e.id OR r.destination_id = e.id)", entity_params)
    return count


def reset(con: sqlite3.Connection) -> None:
    con.execute("DELETE FROM graph_relations")
    con.execute("DELETE FROM graph_entities")
