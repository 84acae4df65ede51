"""``memlane tenants move TENANT TARGET``: move one tenant to another PostgreSQL database, online.

Everything of the tenant moves (memories with their vectors, history, messages, token vectors,
idempotency keys, graph memory, document collections, background jobs, the store's metadata),
and no write is lost while the servers keep serving it:

1. The source gets a ``moving`` mark for the tenant and a trigger on every tenant table that,
   while a mark exists, logs the key of each row of a marked tenant that changes
   (``memlane_move_log``; the trigger costs other tenants one primary-key lookup per row).
2. Each table's rows of the tenant are copied with binary ``COPY`` (source to target, streamed).
3. The log is replayed in rounds: each changed key is copied again, or deleted from the target
   when the source no longer has it, until a round finds little to do.
4. *Pause.* The mover takes the tenant's move lock (exclusive) in the source; every write
   transaction of the tenant takes it shared first (store/postgres.py), so writes in flight end
   and new ones wait. The rest of the log is replayed, the identity sequences of the target are
   set past the copied rows, and the tenant's row counts are compared table by table.
5. The directory (store/placement.py) places the tenant in the target, ``switching``; the source
   gets ``moved_to``; the lock is released. A writer that still uses the source finds
   ``moved_to``, reads the directory again, and waits there while it says ``switching``. After
   ``switch_seconds`` (longer than any process keeps the directory unread while it serves the
   tenant), the directory says ``active`` and writes go on in the target. Writes wait for the
   pause and the switch (about 1.5 s), and no process reads the tenant from a place that can
   differ from the other: nothing is written anywhere while both can be read.
6. The tenant's rows are deleted from the source (``keep_source`` keeps them), and the triggers
   dropped when no other move of the source runs.

A mover that dies before step 5 leaves the tenant served from the source; running the command
again starts over (the target's partial copy is cleared). One that dies after it leaves the
switch to finish; running it again finishes it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import psycopg
from psycopg import sql as pgsql

from memlane.core import timeutil
from memlane.core.errors import InvalidInputError, StoreError
from memlane.store.placement import ACTIVE, HOME, MOVE_LOCK, SWITCHING, Placement

#: tables with a tenant column that are not a tenant's data
_NOT_TENANT_DATA = ("memlane_move_log", "memlane_api_keys", "memlane_tenant_placement")
#: the marks of a move in memlane_meta, which stay where they are
_MARKS = ("moving", "moved_to")
#: a replay round this small is followed by the pause
_SMALL_ROUND = 200
_MAX_ROUNDS = 20
_TRIGGER = "memlane_move_log"


@dataclass
class MoveReport:
    tenant: str
    source: str
    target: str
    #: rows of the tenant per table, in the target after the move
    rows: dict[str, int] = field(default_factory=dict)
    #: changed rows copied again after the first copy (writes during the move)
    replayed: int = 0
    rounds: int = 0
    #: how long the tenant's writes waited (pause and switch)
    paused_seconds: float = 0.0
    seconds: float = 0.0
    resumed: bool = False
    source_kept: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Table:
    name: str
    columns: tuple[str, ...]  # copied columns (not generated), tenant first
    keys: tuple[tuple[str, str], ...]  # primary key columns besides the tenant, with their types
    identity: tuple[str, ...]  # identity columns

    @property
    def extra(self) -> str:
        """What of the tenant's rows is not copied: the move's own marks."""
        return " AND key NOT IN ('moving', 'moved_to')" if self.name == "memlane_meta" else ""


def move_tenant(placement: Placement, tenant: str, target: str, *, keep_source: bool = False,
                switch_seconds: float | None = None,
                progress: Callable[[str, int, int], None] | None = None) -> MoveReport:
    """Move ``tenant`` into ``target`` (a label of ``vector_store.config.databases``, a DSN, or
    ``home``); see the module's description. ``progress(stage, done, total)`` reports each table."""
    started = time.monotonic()
    target_name = HOME if target in ("home", HOME) else placement.name(target)
    placement.entries(fresh=True)
    source_name, state = placement.location(tenant), placement.where(tenant)[1]
    report = MoveReport(tenant=tenant, source=_shown(placement, source_name), target=_shown(placement, target_name),
                        source_kept=keep_source)
    switch = switch_seconds if switch_seconds is not None else 2 * placement.refresh_seconds + 0.25
    with _connection(placement.home) as home, _mover_lock(home, tenant):
        if state == SWITCHING:  # a mover died while switching: finish its move
            if source_name != target_name:
                raise InvalidInputError(f"tenant {tenant!r} is being switched to {report.source}; run the move to "
                                        "that database again to finish it", field="target")
            report.resumed = True
            _activate(home, tenant, target_name, switch)
            return _finish(placement, report, started)
        if source_name == target_name:
            raise InvalidInputError(f"tenant {tenant!r} already lives in {report.target}", field="target")
        source_db, target_db = placement.database(source_name), placement.database(target_name)
        with _connection(source_db) as src, _connection(target_db) as dst:
            tables = _tables(src)
            report.resumed = _mark(src, dst, tables, tenant, target_name)
            _install_triggers(src, tables)
            build = _bulk_copy(src, dst, target_db, tables, tenant, progress)
            log_from = 0
            for _ in range(_MAX_ROUNDS):
                done, log_from = _replay(src, dst, tables, tenant, log_from)
                report.replayed += done
                report.rounds += 1
                if done < _SMALL_ROUND:
                    break
            paused = time.monotonic()
            src.execute("SELECT pg_advisory_lock(%s::int4, hashtext(%s))", (MOVE_LOCK, tenant))
            try:
                while True:
                    done, log_from = _replay(src, dst, tables, tenant, log_from)
                    report.replayed += done
                    report.rounds += 1
                    if not done:
                        break
                _advance_sequences(dst, tables)
                report.rows = _verify(src, dst, tables, tenant)
                if build:
                    target_db.finish_bulk_load(build)
                dst.execute("DELETE FROM memlane_meta WHERE tenant = %s AND key IN ('moving', 'moved_to')", (tenant,))
                _place(home, tenant, target_name, SWITCHING)
                src.execute("INSERT INTO memlane_meta (tenant, key, value) VALUES (%s, 'moved_to', %s)"
                            " ON CONFLICT (tenant, key) DO UPDATE SET value = excluded.value", (tenant, target_name))
                src.execute("DELETE FROM memlane_meta WHERE tenant = %s AND key = 'moving'", (tenant,))
            finally:
                src.execute("SELECT pg_advisory_unlock(%s::int4, hashtext(%s))", (MOVE_LOCK, tenant))
            _activate(home, tenant, target_name, switch)
            report.paused_seconds = round(time.monotonic() - paused, 3)
            _clean_source(src, tables, tenant, keep_source)
    return _finish(placement, report, started)


def _finish(placement: Placement, report: MoveReport, started: float) -> MoveReport:
    placement.entries(fresh=True)
    report.seconds = round(time.monotonic() - started, 3)
    return report


def _shown(placement: Placement, location: str) -> str:
    """A database for people: its label, or its DSN without the password."""
    from memlane.store.postgres import redact

    if location == HOME:
        return f"home ({placement.home.location})"
    return location if location in placement.labels else redact(location)


@contextmanager
def _connection(database: Any) -> Iterator[psycopg.Connection]:
    """A connection of its own (not pooled) to ``database``'s schema."""
    con = database._connect()
    try:
        database._set_path(con)
        yield con
    finally:
        con.close()


@contextmanager
def _mover_lock(home: psycopg.Connection, tenant: str) -> Iterator[None]:
    if not home.execute("SELECT pg_try_advisory_lock(%s::int4 + 1, hashtext(%s))", (MOVE_LOCK, tenant)).fetchone()[0]:
        raise StoreError(f"another `memlane tenants move` of tenant {tenant!r} is running")
    try:
        yield
    finally:
        home.execute("SELECT pg_advisory_unlock(%s::int4 + 1, hashtext(%s))", (MOVE_LOCK, tenant))


def _tables(con: psycopg.Connection) -> list[_Table]:
    """The tenant tables of the schema, parents before the tables that reference them."""
    names = [r[0] for r in con.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant'"
        " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r' AND c.relname LIKE 'memlane%%'"
        " AND NOT a.attisdropped AND c.relname <> ALL(%s) ORDER BY c.relname", (list(_NOT_TENANT_DATA),)).fetchall()]
    parents: dict[str, set[str]] = {name: set() for name in names}
    for child, parent in con.execute(
            "SELECT conrelid::regclass::text, confrelid::regclass::text FROM pg_constraint"
            " WHERE contype = 'f' AND connamespace = current_schema()::regnamespace").fetchall():
        if child in parents and parent in parents and parent != child:
            parents[child].add(parent)
    ordered: list[str] = []
    while len(ordered) < len(names):
        ready = [n for n in names if n not in ordered and parents[n] <= set(ordered)]
        if not ready:
            raise StoreError(f"the tenant tables reference each other in a cycle: {sorted(set(names) - set(ordered))}")
        ordered.extend(ready)
    tables = []
    for name in ordered:
        columns = con.execute(
            "SELECT attname, attidentity FROM pg_attribute WHERE attrelid = %s::regclass AND attnum > 0"
            " AND NOT attisdropped AND attgenerated = '' ORDER BY attnum", (name,)).fetchall()
        keys = con.execute(
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_index i,"
            " unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)"
            " JOIN pg_attribute a ON a.attnum = k.attnum WHERE i.indrelid = %s::regclass AND i.indisprimary"
            " AND a.attrelid = i.indrelid AND a.attname <> 'tenant' ORDER BY k.ord", (name,)).fetchall()
        tables.append(_Table(name, tuple(c for c, _ in columns), tuple((k, t) for k, t in keys),
                             tuple(c for c, identity in columns if identity)))
    return tables


def _count(con: psycopg.Connection, table: _Table, tenant: str) -> int:
    return con.execute(pgsql.SQL("SELECT count(*) FROM {} WHERE tenant = %s" + table.extra).format(
        pgsql.Identifier(table.name)), (tenant,)).fetchone()[0]


def _mark(src: psycopg.Connection, dst: psycopg.Connection, tables: list[_Table], tenant: str, target: str) -> bool:
    """Mark the tenant as moving in the source. The target must hold nothing of it, unless an
    interrupted move to the same target left a partial copy there (cleared now; returns True)."""
    row = src.execute("SELECT value FROM memlane_meta WHERE tenant = %s AND key = 'moving'", (tenant,)).fetchone()
    resumed = row is not None and row[0] == target
    held = [t.name for t in tables if _count(dst, t, tenant)]
    if held and not resumed:
        raise InvalidInputError(f"the target already holds rows of tenant {tenant!r} ({', '.join(held)}); "
                                "move it to an empty place", field="target")
    with dst.transaction():
        for table in reversed(tables):
            dst.execute(pgsql.SQL("DELETE FROM {} WHERE tenant = %s" + table.extra).format(
                pgsql.Identifier(table.name)), (tenant,))
    with src.transaction():
        src.execute("DELETE FROM memlane_move_log WHERE tenant = %s", (tenant,))
        src.execute("INSERT INTO memlane_meta (tenant, key, value) VALUES (%s, 'moving', %s)"
                    " ON CONFLICT (tenant, key) DO UPDATE SET value = excluded.value", (tenant, target))
    return resumed


def _install_triggers(src: psycopg.Connection, tables: list[_Table]) -> None:
    """The change log's trigger on every tenant table (once the mark is committed; the triggers of a
    concurrent move of another tenant are the same ones). One table per transaction: a trigger waits
    for the writes in flight on its table, and a transaction locking several tables could deadlock
    with a writer of several. A write committed before its table's trigger is read by the copy,
    which starts after the last one."""
    for table in tables:
        arguments = pgsql.SQL(", ").join(pgsql.Literal(key) for key, _ in table.keys)
        with src.transaction():
            src.execute("SELECT pg_advisory_xact_lock(%s::int4, 0)", (MOVE_LOCK,))  # moves of other tenants take turns
            src.execute(pgsql.SQL("CREATE OR REPLACE TRIGGER {} AFTER INSERT OR UPDATE OR DELETE ON {} FOR EACH ROW"
                                  " EXECUTE FUNCTION memlane_log_move({})").format(
                pgsql.Identifier(_TRIGGER), pgsql.Identifier(table.name), arguments))


def _select(table: _Table, condition: pgsql.Composable = pgsql.SQL("")) -> pgsql.Composed:
    return pgsql.SQL("SELECT {} FROM {} WHERE tenant = %s" + table.extra + "{}").format(
        pgsql.SQL(", ").join(map(pgsql.Identifier, table.columns)), pgsql.Identifier(table.name), condition)


def _stream(src: psycopg.Connection, dst: psycopg.Connection, query: pgsql.Composed, params: tuple,
            into: str, columns: tuple[str, ...]) -> None:
    """Rows of ``query`` on the source into table ``into`` of the target, in binary COPY format."""
    out = pgsql.SQL("COPY ({}) TO STDOUT (FORMAT BINARY)").format(query)
    inp = pgsql.SQL("COPY {} ({}) FROM STDIN (FORMAT BINARY)").format(
        pgsql.Identifier(into), pgsql.SQL(", ").join(map(pgsql.Identifier, columns)))
    with src.cursor().copy(out, params) as reader, dst.cursor().copy(inp) as writer:
        for chunk in reader:
            writer.write(chunk)


def _bulk_copy(src: psycopg.Connection, dst: psycopg.Connection, target_db: Any, tables: list[_Table], tenant: str,
               progress: Callable[[str, int, int], None] | None) -> int | None:
    """Copy every table's rows of the tenant. Returns the dimensions whose vector index the copy
    went without (built after it: ``finish_bulk_load``), or None."""
    build = None
    row = src.execute("SELECT value FROM memlane_meta WHERE tenant = %s AND key = 'dims'", (tenant,)).fetchone()
    if row is not None and target_db.prepare_bulk_load(int(row[0])) == "build":
        build = int(row[0])
    for n, table in enumerate(tables, 1):
        with dst.transaction():
            _stream(src, dst, _select(table), (tenant,), table.name, table.columns)
        if progress:
            progress(table.name, n, len(tables))
    return build


def _replay(src: psycopg.Connection, dst: psycopg.Connection, tables: list[_Table], tenant: str,
            after: int) -> tuple[int, int]:
    """Copy the rows logged after log entry ``after`` again (or delete them from the target when the
    source has them no more), in one target transaction. Returns (rows, the last entry replayed)."""
    entries = src.execute("SELECT id, tbl, key FROM memlane_move_log WHERE tenant = %s AND id > %s ORDER BY id"
                          " LIMIT 20000", (tenant, after)).fetchall()
    if not entries:
        return 0, after
    changed: dict[str, dict[str, dict]] = {}
    for _, name, key in entries:
        changed.setdefault(name, {})[json.dumps(key, sort_keys=True)] = key
    with dst.transaction():
        for table in tables:
            if table.name in changed:
                _stage(src, dst, table, tenant, list(changed[table.name].values()))
        for table in reversed(tables):  # rows the source lost, children first
            if table.name in changed:
                logged = pgsql.SQL(" AND ({}) IN ({})").format(
                    _keys(table), _logged(table, list(changed[table.name].values()))) if table.keys else pgsql.SQL("")
                dst.execute(pgsql.SQL("DELETE FROM {t} WHERE tenant = %s" + table.extra + "{logged}"
                                      " AND ({k}) NOT IN (SELECT {k} FROM {s})").format(
                    t=pgsql.Identifier(table.name), logged=logged, k=_keys(table),
                    s=pgsql.Identifier(_stage_name(table))), (tenant,))
        for table in tables:  # rows the source has, parents first
            if table.name in changed:
                _upsert(dst, table)
    return sum(len(keys) for keys in changed.values()), entries[-1][0]


def _stage_name(table: _Table) -> str:
    return f"_move_{table.name}"


def _keys(table: _Table) -> pgsql.Composable:
    """The key columns of a row within the tenant (the tenant alone for a table of one row per tenant)."""
    return pgsql.SQL(", ").join(pgsql.Identifier(k) for k, _ in table.keys) if table.keys \
        else pgsql.Identifier("tenant")


def _logged(table: _Table, keys: list[dict]) -> pgsql.Composable:
    """Logged keys of ``table`` as a row source of its key columns."""
    return pgsql.SQL("SELECT {k} FROM jsonb_to_recordset({data}::jsonb) AS x({types})").format(
        k=_keys(table), data=pgsql.Literal(json.dumps(keys)),
        types=pgsql.SQL(", ").join(pgsql.SQL("{} {}").format(pgsql.Identifier(k), pgsql.SQL(t)) for k, t in table.keys))


def _stage(src: psycopg.Connection, dst: psycopg.Connection, table: _Table, tenant: str, keys: list[dict]) -> None:
    """The source's current rows of the logged keys, into a temporary table of the target."""
    stage = _stage_name(table)
    dst.execute(pgsql.SQL("DROP TABLE IF EXISTS {}").format(pgsql.Identifier(stage)))
    dst.execute(pgsql.SQL("CREATE TEMPORARY TABLE {} ON COMMIT DROP AS SELECT {} FROM {} WITH NO DATA").format(
        pgsql.Identifier(stage), pgsql.SQL(", ").join(map(pgsql.Identifier, table.columns)),
        pgsql.Identifier(table.name)))
    condition = pgsql.SQL(" AND ({}) IN ({})").format(_keys(table), _logged(table, keys)) if table.keys \
        else pgsql.SQL("")
    _stream(src, dst, _select(table, condition), (tenant,), stage, table.columns)


def _upsert(dst: psycopg.Connection, table: _Table) -> None:
    conflict = pgsql.SQL(", ").join(pgsql.Identifier(c) for c in ("tenant", *(k for k, _ in table.keys)))
    updated = [c for c in table.columns if c not in ("tenant", *(k for k, _ in table.keys), *table.identity)]
    action = pgsql.SQL("DO UPDATE SET {}").format(pgsql.SQL(", ").join(
        pgsql.SQL("{c} = excluded.{c}").format(c=pgsql.Identifier(c)) for c in updated)) if updated \
        else pgsql.SQL("DO NOTHING")
    columns = pgsql.SQL(", ").join(map(pgsql.Identifier, table.columns))
    dst.execute(pgsql.SQL("INSERT INTO {t} ({c}) OVERRIDING SYSTEM VALUE SELECT {c} FROM {s}"
                          " ON CONFLICT ({k}) {action}").format(
        t=pgsql.Identifier(table.name), c=columns, s=pgsql.Identifier(_stage_name(table)), k=conflict, action=action))


def _advance_sequences(dst: psycopg.Connection, tables: list[_Table]) -> None:
    """Set each identity sequence of the target past the copied rows, so the tenant's new rows
    come after its old ones (``seq`` orders messages and memories)."""
    for table in tables:
        for column in table.identity:
            sequence = dst.execute("SELECT pg_get_serial_sequence(%s, %s)", (table.name, column)).fetchone()[0]
            top = dst.execute(pgsql.SQL("SELECT max({}) FROM {}").format(
                pgsql.Identifier(column), pgsql.Identifier(table.name))).fetchone()[0]
            if sequence and top is not None:
                dst.execute("SELECT setval(%s::regclass, greatest(%s, coalesce(pg_sequence_last_value(%s::regclass), 1)))",
                            (sequence, top, sequence))


def _verify(src: psycopg.Connection, dst: psycopg.Connection, tables: list[_Table], tenant: str) -> dict[str, int]:
    counts = {}
    for table in tables:
        there, here = _count(src, table, tenant), _count(dst, table, tenant)
        if there != here:
            raise StoreError(f"moving tenant {tenant!r}: {table.name} has {there} rows in the source and {here} in "
                             "the target after the copy; nothing was switched, run the move again")
        counts[table.name] = here
    return counts


def _place(home: psycopg.Connection, tenant: str, location: str, state: str) -> None:
    home.execute("INSERT INTO memlane_tenant_placement (tenant, location, state, updated_at) VALUES (%s, %s, %s, %s)"
                 " ON CONFLICT (tenant) DO UPDATE SET location = excluded.location, state = excluded.state,"
                 " updated_at = excluded.updated_at", (tenant, location, state, timeutil.now_iso()))


def _activate(home: psycopg.Connection, tenant: str, location: str, switch_seconds: float) -> None:
    """After the switch window, let writes go on in the new place (a tenant back home leaves the directory)."""
    time.sleep(switch_seconds)
    if location == HOME:
        home.execute("DELETE FROM memlane_tenant_placement WHERE tenant = %s", (tenant,))
    else:
        _place(home, tenant, location, ACTIVE)


def _clean_source(src: psycopg.Connection, tables: list[_Table], tenant: str, keep: bool) -> None:
    with src.transaction():
        if not keep:
            for table in reversed(tables):
                src.execute(pgsql.SQL("DELETE FROM {} WHERE tenant = %s" + table.extra).format(
                    pgsql.Identifier(table.name)), (tenant,))
        src.execute("DELETE FROM memlane_move_log WHERE tenant = %s", (tenant,))
    for table in tables:  # one table per transaction, as they were put there
        with src.transaction():
            src.execute("SELECT pg_advisory_xact_lock(%s::int4, 0)", (MOVE_LOCK,))
            if src.execute("SELECT 1 FROM memlane_meta WHERE key = 'moving' LIMIT 1").fetchone():
                return  # another tenant's move needs them
            src.execute(pgsql.SQL("DROP TRIGGER IF EXISTS {} ON {}").format(
                pgsql.Identifier(_TRIGGER), pgsql.Identifier(table.name)))
