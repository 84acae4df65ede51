"""Tenants across PostgreSQL databases (store/placement.py, store/tenant_move.py), on two real
databases of the bundled server: ``memlane tenants move`` copies everything of a tenant, loses no
write made while it runs, and every store of the tenant (one opened before the move included)
follows it; other tenants stay where they are."""

from __future__ import annotations

import threading

import numpy as np
import psycopg
import pytest

from memlane import Memory
from memlane.core import config as config_mod
from memlane.core.errors import InvalidInputError
from memlane.documents import Documents
from memlane.embeddings.hashing import HashingEmbedder
from memlane.store import postgres_placement, postgres_settings
from memlane.store.tenant_move import move_tenant
from support.project import check_filled, fill_project, read_project


@pytest.fixture
def deployment(pg):
    """The config of a deployment over two databases (home and "b"), one fresh schema in both."""
    other = pg.other_database()
    schema = pg.fresh_schema()
    config = {"vector_store": {"provider": "postgres",
                               "config": {"dsn": pg.url, "schema": schema, "databases": {"b": other}}}}
    yield config, schema, other
    with psycopg.connect(other, autocommit=True) as con:
        con.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _rows(url: str, schema: str, tenant: str) -> dict[str, int]:
    with psycopg.connect(url, autocommit=True) as con:
        con.execute(f'SET search_path TO "{schema}", public')
        tables = [r[0] for r in con.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant'"
            " WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'"
            " AND c.relname NOT IN ('memlane_move_log', 'memlane_api_keys', 'memlane_tenant_placement')").fetchall()]
        counts = {t: con.execute(f"SELECT count(*) FROM {t} WHERE tenant = %s", (tenant,)).fetchone()[0] for t in tables}
        counts["memlane_meta"] = con.execute("SELECT count(*) FROM memlane_meta WHERE tenant = %s"
                                             " AND key NOT IN ('moving', 'moved_to')", (tenant,)).fetchone()[0]
    return {t: n for t, n in counts.items() if n}


def _fill(memory: Memory, documents: Documents) -> dict:
    first = memory.add("I live in Paris", user_id="alice", infer=False)["results"][0]["id"]
    memory.add([{"role": "user", "content": f"fact number {i}"} for i in range(20)], user_id="alice", infer=False)
    memory.add("Bob likes tea", user_id="bob", infer=False)
    memory.update(first, "I live in Lyon")
    gone = memory.add("a memory to delete", user_id="bob", infer=False)["results"][0]["id"]
    memory.delete(gone)
    documents.create_collection("manuals", metadata={"team": "ops"})
    documents.upsert_document("intro", "manuals", text="The pump must be primed before use.", metadata={"v": 1})
    documents.create_collection("emptied")  # its encoder recorded, its pages all deleted: the encoder stays
    documents.upsert_document("draft", "emptied", text="A draft to delete.")
    documents.delete_document("draft", "emptied")
    return {"updated": first, "deleted": gone, "project": fill_project(memory, first, "alice")}


def test_a_tenant_moves_with_everything_and_no_write_is_lost(deployment, pg, hashing_embedder):
    config, schema, other = deployment
    memory = Memory(config, embedder=hashing_embedder, tenant="acme")
    bystander = Memory(config, embedder=hashing_embedder, tenant="zeta")
    try:
        known = _fill(memory, _docs(memory))
        bystander.add("the bystander stays home", user_id="carol", infer=False)
        before = _rows(pg.url, schema, "acme")
        history_before = memory.history(known["updated"])
        project_before = read_project(memory, known["project"])
        check_filled(project_before)

        acknowledged: list[str] = []
        stop = threading.Event()
        writer = Memory(config, embedder=hashing_embedder, tenant="acme")  # another process's view, opened before

        def write() -> None:
            n = 0
            while not stop.is_set():
                acknowledged.append(writer.add(f"written during the move {n}", user_id="dave",
                                               infer=False)["results"][0]["id"])
                n += 1

        thread = threading.Thread(target=write)
        thread.start()
        try:
            placement = postgres_placement(postgres_settings(config["vector_store"]["config"]))
            report = move_tenant(placement, "acme", "b")
        finally:
            stop.set()
            thread.join(timeout=120)
        acknowledged.append(writer.add("written after the move", user_id="dave", infer=False)["results"][0]["id"])

        assert report.target == "b" and report.rows["memlane_memories"] >= before["memlane_memories"]
        assert _rows(pg.url, schema, "acme") == {}  # nothing of the tenant is left in the source
        after = _rows(other, schema, "acme")
        assert set(after) == set(before)
        assert after["memlane_doc_pages"] == before["memlane_doc_pages"]
        # every acknowledged write is there, read through the store opened before the move
        found = {m["id"] for m in memory.get_all(user_id="dave", limit=10_000)["results"]}
        assert set(acknowledged) <= found and len(acknowledged) > 1
        assert memory.history(known["updated"]) == history_before
        assert read_project(memory, known["project"]) == project_before  # webhooks' secrets too
        assert [m["memory"] for m in memory.get_all(user_id="alice", limit=100)["results"]][-1] == "I live in Lyon"
        messages = memory.get_messages(user_id="alice", limit=100)
        assert [m["content"] for m in messages][-20:] == [f"fact number {i}" for i in range(20)]
        # new rows of the tenant come after the copied ones
        memory.add([{"role": "user", "content": "the newest message"}], user_id="alice", infer=False)
        assert memory.get_messages(user_id="alice", limit=1)[0]["content"] == "the newest message"
        assert _docs(memory).search("prime the pump", collection_name="manuals")["results"]
        assert _docs(memory).get_collection("emptied")["encoder"] == WordVectors.name
        assert [m["memory"] for m in bystander.get_all(user_id="carol")["results"]] == ["the bystander stays home"]
        assert _rows(pg.url, schema, "zeta") and not _rows(other, schema, "zeta")

        with pytest.raises(InvalidInputError, match="already lives"):
            move_tenant(placement, "acme", "b")
        back = move_tenant(placement, "acme", "home")  # and back again
        assert back.rows == report.rows | {"memlane_memories": back.rows["memlane_memories"],
                                           "memlane_history": back.rows["memlane_history"],
                                           "memlane_messages": back.rows["memlane_messages"],
                                           "memlane_adds": back.rows["memlane_adds"]}
        assert _rows(other, schema, "acme") == {} and _rows(pg.url, schema, "acme")
        assert read_project(memory, known["project"]) == project_before
        assert set(acknowledged) <= {m["id"] for m in memory.get_all(user_id="dave", limit=10_000)["results"]}
        placement.close()
        placement.home.close()
    finally:
        for m in (memory, bystander):
            m.close()


class WordVectors:
    """A multi-vector encoder of one hashing vector per word: the test is about where rows live,
    not about the quality of their scores."""

    name, dims, accepts_images = "test/word-hashes", 64, False

    def __init__(self) -> None:
        self.words = HashingEmbedder(dims=self.dims)

    def encode_queries(self, texts):
        return [np.asarray(self.words.embed(text.split() or [text], "document"), dtype=np.float32) for text in texts]

    encode_pages = encode_queries


def _docs(memory: Memory) -> Documents:
    return Documents(memory=memory, encoder=WordVectors())


def test_a_move_that_fails_before_the_switch_leaves_the_tenant_home_and_runs_again(deployment, pg, hashing_embedder,
                                                                                   monkeypatch):
    from memlane.core.errors import StoreError
    from memlane.store import tenant_move

    config, schema, other = deployment
    placement = postgres_placement(postgres_settings(config["vector_store"]["config"]))
    with Memory(config, embedder=hashing_embedder, tenant="acme") as memory:
        memory.add([f"note {i}" for i in range(5)], user_id="alice", infer=False)
        real_verify = tenant_move._verify

        def fail(*args):
            raise StoreError("the copy could not be checked")

        monkeypatch.setattr(tenant_move, "_verify", fail)
        with pytest.raises(StoreError, match="could not be checked"):
            move_tenant(placement, "acme", "b")
        # still served from home, writes included (the pause ended with the failure)
        memory.add("written after the failed move", user_id="alice", infer=False)
        assert placement.location("acme", fresh=True) == ""
        monkeypatch.setattr(tenant_move, "_verify", real_verify)
        report = move_tenant(placement, "acme", "b")
        assert report.resumed and report.rows["memlane_memories"] == 6
        assert len(memory.get_all(user_id="alice")["results"]) == 6
        assert _rows(pg.url, schema, "acme") == {}
    placement.close()
    placement.home.close()


def test_the_tenants_commands(deployment, pg, hashing_embedder, cli, tmp_path):
    import json

    config, schema, other = deployment
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, "embedder": {"provider": "hashing"}}))
    with Memory(config, embedder=hashing_embedder, tenant="acme") as memory:
        memory.add("I live in Paris", user_id="alice", infer=False)
    moved = json.loads(cli("--config", path, "tenants", "move", "acme", "b", "--json").stdout)
    assert moved["target"] == "b" and moved["rows"]["memlane_memories"] == 1
    listed = json.loads(cli("--config", path, "tenants", "list", "--json").stdout)
    assert {"tenant": "acme", "database": "b", "state": "active", "memories": 1} in listed
    failed = cli("--config", path, "tenants", "move", "acme", "b", ok=False)
    assert failed.exit_code == 1 and "already lives in b" in failed.output


def test_the_model_a_deployment_was_filled_with_is_found_in_every_database(deployment, pg, hashing_embedder):
    """A server chooses the model its stores were filled with (``recorded_embedders``): still so when every
    tenant has moved out of the home database."""
    from memlane.store import recorded_embedders

    config, schema, other = deployment
    placement = postgres_placement(postgres_settings(config["vector_store"]["config"]))
    with Memory(config, embedder=hashing_embedder, tenant="acme") as memory:
        memory.add("I live in Paris", user_id="alice", infer=False)
    assert recorded_embedders(config_mod.load(config)) == [hashing_embedder.name]
    move_tenant(placement, "acme", "b")
    assert recorded_embedders(config_mod.load(config)) == [hashing_embedder.name]
    placement.close()
    placement.home.close()

