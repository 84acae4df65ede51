"""Graph memory through ``Memory`` (offline rule extractor, the real local model) on SQLite and
PostgreSQL: a conversation over several turns adds, refines, contradicts and retracts relations;
invalidated relations are kept with valid_to and superseded_by; search returns relations next to
results; get_all, delete_all, reset; without enable_graph the outputs are unchanged."""

from __future__ import annotations

import asyncio

import pytest

from memlane import AsyncMemory, Memory


@pytest.fixture
def graph(backend, embedder):
    with Memory({**backend(), "enable_graph": True}, embedder=embedder) as m:
        yield m


def triples(items):
    return {(r["source"], r["relationship"], r["destination"]) for r in items}


def test_a_conversation_adds_refines_contradicts_and_retracts(graph):
    first = graph.add([{"role": "user", "content": "I live in New York City. I like tea and I work at Acme."},
                       {"role": "assistant", "content": "Noted! I like tea too."}], user_id="alice")
    assert triples(first["relations"]["added"]) == {("alice", "lives_in", "New York City"), ("alice", "likes", "tea"),
                                                     ("alice", "works_at", "Acme")}
    assert first["relations"]["invalidated"] == []

    # refine (tea -> green tea), alias of a known entity (NYC), a new multi-valued relation
    second = graph.add("Actually I like green tea. I love NYC, and I like hiking.", user_id="alice")
    assert triples(second["relations"]["added"]) == {("alice", "likes", "green tea"), ("alice", "loves", "New York City"),
                                                      ("alice", "likes", "hiking")}
    assert [(r["destination"], r["reason"]) for r in second["relations"]["invalidated"]] == [("tea", "refined")]

    # contradict a single-valued relation; retract a preference
    third = graph.add("I moved to Berlin. I no longer like hiking.", user_id="alice")
    assert triples(third["relations"]["added"]) == {("alice", "lives_in", "Berlin")}
    assert {(r["destination"], r["reason"]) for r in third["relations"]["invalidated"]} == {
        ("New York City", "contradicted"), ("hiking", "negated")}

    # repeating a known relation keeps it (its provenance grows)
    fourth = graph.add("I work at Acme", user_id="alice")
    assert fourth["relations"] == {"status": "ok", "added": [], "invalidated": []}

    current = graph.get_all(user_id="alice")["relations"]
    assert triples(current) == {("alice", "likes", "green tea"), ("alice", "loves", "New York City"),
                                ("alice", "works_at", "Acme"), ("alice", "lives_in", "Berlin")}
    assert all("valid_to" not in r for r in current)
    acme = next(r for r in current if r["destination"] == "Acme")
    assert acme["source_message_ids"] == first["message_ids"] + fourth["message_ids"]

    everything = {r["destination"]: r for r in graph.get_all(user_id="alice", include_invalid=True)["relations"]
                  if r["relationship"] != "loves"}
    nyc, berlin = everything["New York City"], everything["Berlin"]
    assert nyc["valid_to"] and nyc["invalid_reason"] == "contradicted" and nyc["superseded_by"] == berlin["id"]
    assert everything["tea"]["superseded_by"] == everything["green tea"]["id"]
    assert everything["hiking"]["invalid_reason"] == "negated" and "superseded_by" not in everything["hiking"]
    # as_of: where alice lived before she moved
    before = graph.get_all(user_id="alice", as_of=nyc["valid_from"])["relations"]
    assert {r["destination"] for r in before if r["relationship"] == "lives_in"} == {"New York City"}
    assert ("alice", "likes", "tea") in triples(before) and ("alice", "likes", "green tea") not in triples(before)

    found = graph.search("where does alice live?", user_id="alice")
    assert found["results"] and found["relations"][0]["relationship"] == "lives_in"
    assert found["relations"][0]["destination"] == "Berlin"
    assert set(found["relations"][0]) == {"id", "source", "relationship", "destination", "weight", "score"}
    assert all(0 <= r["score"] <= 1 and r["weight"] == r["score"] for r in found["relations"])  # seed 000: weight
    assert "New York City" not in [r["destination"] for r in found["relations"] if r["relationship"] == "lives_in"]
    # the same search with the optional stages also returns relations
    assert graph.search("where does alice live?", user_id="alice", keyword_search=True)["relations"][0]["destination"] \
        == "Berlin"


def test_chinese_turns_and_first_person_queries(graph):
    graph.add("我住在上海。我喜欢火锅", user_id="li")
    graph.add("我搬到了北京", user_id="li")
    found = graph.search("我住在哪里？", user_id="li")["relations"]
    assert found[0]["relationship"] == "lives_in" and found[0]["destination"] == "北京"
    assert ("li", "likes", "火锅") in triples(found)
    old = [r for r in graph.get_all(user_id="li", include_invalid=True)["relations"] if r["destination"] == "上海"]
    assert old[0]["invalid_reason"] == "contradicted"


CHANGES = [  # (first message, second message, old relation, new relation or None)
    ("I live in Paris.", "I moved from Paris to Lisbon.", ("lives_in", "Paris"), ("lives_in", "Lisbon")),
    ("I work at Google.", "I left Google and joined Meta.", ("works_at", "Google"), ("works_at", "Meta")),
    ("I work at IBM.", "I quit my job at IBM.", ("works_at", "IBM"), None),
    ("I like jogging.", "I no longer like jogging.", ("likes", "jogging"), None),
    ("The user lives in Berlin", "User moved from Berlin to Munich", ("lives_in", "Berlin"), ("lives_in", "Munich")),
    ("我在北京工作。", "我不再在北京工作了，现在在深圳工作。", ("works_at", "北京"), ("works_at", "深圳")),
    ("我住在北京", "我从北京搬到了上海", ("lives_in", "北京"), ("lives_in", "上海")),
]


@pytest.mark.parametrize("first, second, old, new", CHANGES)
def test_a_change_invalidates_the_old_relation(graph, first, second, old, new):
    graph.add(first, user_id="u")
    graph.add(second, user_id="u")
    current = triples(graph.get_all(user_id="u")["relations"])
    assert ("u", *old) not in current
    assert current == ({("u", *new)} if new else set())
    kept = {(r["relationship"], r["destination"]): r
            for r in graph.get_all(user_id="u", include_invalid=True)["relations"]}
    assert kept[old]["valid_to"]  # invalidated, not erased
    if new:
        assert kept[old]["superseded_by"] == kept[new]["id"]


def test_a_query_about_the_user_finds_chinese_relations(graph):
    graph.add("我住在上海", user_id="z")
    for query in ("用户住在哪里", "我住在哪里？", "where does the user live?"):
        found = graph.search(query, user_id="z")["relations"]
        assert [(r["relationship"], r["destination"]) for r in found][:1] == [("lives_in", "上海")], query


def test_scopes_do_not_mix_and_delete_all_clears_them(graph):
    graph.add("I live in Paris", user_id="alice")
    graph.add("I live in Rome", user_id="bob")
    graph.add("I live in Oslo", user_id="bob", run_id="trip")  # its own scope: does not contradict Rome
    assert triples(graph.get_all(user_id="bob")["relations"]) == {("bob", "lives_in", "Rome"),
                                                                  ("bob", "lives_in", "Oslo")}
    assert triples(graph.search("where do I live", user_id="alice")["relations"]) == {("alice", "lives_in", "Paris")}

    # a metadata filter narrows memories, not relations: they stay
    graph.delete_all(user_id="bob", filters={"topic": "none"})
    assert len(graph.get_all(user_id="bob")["relations"]) == 2
    answer = graph.delete_all(user_id="bob", run_id="trip")
    assert answer["deleted_relations"] == 1
    assert triples(graph.get_all(user_id="bob")["relations"]) == {("bob", "lives_in", "Rome")}
    graph.delete_all(user_id="bob")
    assert graph.get_all(user_id="bob", include_invalid=True)["relations"] == []
    assert len(graph.get_all(user_id="alice")["relations"]) == 1
    graph.reset()
    assert graph.get_all(user_id="alice", include_invalid=True)["relations"] == []


@pytest.mark.parametrize("filters", [{"OR": [{"user_id": "alice"}, {"user_id": "bob"}]},
                                     {"user_id": {"in": ["alice", "bob"]}}])
def test_a_search_across_named_scopes_shows_no_other_scopes_relations(graph, filters):
    for user, city in (("alice", "Paris"), ("bob", "Rome"), ("carol", "Lima")):
        graph.add(f"I live in {city}", user_id=user)
    found = graph.search("where does carol live, in Lima?", filters=filters, threshold=0.0)
    assert {r["user_id"] for r in found["results"]} == {"alice", "bob"}
    assert "Lima" not in {r["destination"] for r in found["relations"]}


def test_infer_false_extracts_no_relations(graph):
    out = graph.add("I live in Paris", user_id="alice", infer=False)
    assert "relations" not in out and graph.get_all(user_id="alice")["relations"] == []


def test_without_enable_graph_outputs_are_unchanged(backend, embedder):
    with Memory(backend(), embedder=embedder) as plain:
        added = plain.add("I live in Paris", user_id="alice")
        assert "relations" not in added
        assert set(plain.search("where do I live", user_id="alice")) == {"results"}
        assert set(plain.get_all(user_id="alice")) == {"results"}
        assert "deleted_relations" not in plain.delete_all(user_id="alice")
        assert plain.store.graph_relations({}) == []


def test_async_memory_returns_relations(backend, embedder):
    async def run():
        async with AsyncMemory({**backend(), "enable_graph": True}, embedder=embedder) as m:
            await m.add("I work at Google", user_id="u")
            return await m.search("where does u work", user_id="u"), await m.get_all(user_id="u")

    found, listed = asyncio.run(run())
    assert triples(found["relations"]) == triples(listed["relations"]) == {("u", "works_at", "Google")}


@pytest.mark.parametrize("graph_config, location", [
    ({"graph": {"merge_threshold": 2}}, "config.graph.merge_threshold"),
    ({"graph": {"single_valued": "lives_in"}}, "config.graph.single_valued"),
    ({"graph": {"unknown": 1}}, "config.graph.unknown"),
    ({"enable_graph": "sometimes"}, "config.enable_graph"),
])
def test_bad_graph_settings_are_config_errors_naming_the_setting(graph_config, location):
    from memlane.core.config import load
    from memlane.core.errors import ConfigError

    with pytest.raises(ConfigError, match=location.replace(".", r"\.")):
        load(graph_config)
