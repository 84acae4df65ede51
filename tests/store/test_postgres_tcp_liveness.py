"""A connection to PostgreSQL over a network that drops packets silently is found dead in about half a
minute, not the operating system's quarter of an hour: the pool's connections carry libpq's TCP keepalive
and user-timeout settings, unless the DSN names its own."""

from __future__ import annotations

import pytest

from memlane.store.postgres import TCP_LIVENESS, PostgresDatabase, tcp_liveness


@pytest.mark.parametrize("dsn, expected", [
    ("postgresql://u@db:5432/m", TCP_LIVENESS),
    ("postgresql://u@db:5432/m?keepalives_idle=60", {k: v for k, v in TCP_LIVENESS.items() if k != "keepalives_idle"}),
    ("host=db keepalives=0 tcp_user_timeout=0", {k: v for k, v in TCP_LIVENESS.items()
                                                 if k not in ("keepalives", "tcp_user_timeout")}),
])
def test_the_dsn_s_own_settings_win(dsn, expected):
    assert tcp_liveness(dsn) == expected


@pytest.mark.postgres
def test_the_pool_s_connections_carry_the_settings(pg):
    database = PostgresDatabase(pg.url, schema_name=pg.fresh_schema())
    try:
        with database.pool.connection() as con:
            params = dict(item.split("=", 1) for item in con.info.dsn.split())
        assert {name: int(params[name]) for name in TCP_LIVENESS} == TCP_LIVENESS
    finally:
        database.close()
