"""Graph memory in the CLI: add reports relations, search and list print them (table and --json)."""

import json

import pytest


@pytest.mark.model
def test_cli_shows_relations(cli, tmp_path):
    config = tmp_path / "graph.json"
    config.write_text(json.dumps({"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "g")}},
                                  "enable_graph": True}))
    added = cli("--config", config, "add", "I live in Lisbon and I like fado", "-u", "ana").stdout
    assert "RELATE ana lives_in Lisbon" in added and "RELATE ana likes fado" in added
    moved = cli("--config", config, "add", "I moved to Porto", "-u", "ana").stdout
    assert "UNRELATE ana lives_in Lisbon  (contradicted)" in moved
    table = cli("--config", config, "search", "where does ana live", "-u", "ana").stdout
    assert "relations" in table and "Porto" in table and "Lisbon" not in table.split("relations", 1)[1]
    listed = json.loads(cli("--config", config, "list", "-u", "ana", "--json").stdout)
    assert {(r["relationship"], r["destination"]) for r in listed["relations"]} == {("lives_in", "Porto"),
                                                                                    ("likes", "fado")}
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "p")}}}))
    cli("--config", plain, "add", "I live in Lisbon", "-u", "ana")
    assert "relations" not in cli("--config", plain, "search", "where do I live", "-u", "ana").stdout
