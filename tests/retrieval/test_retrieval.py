"""Advanced retrieval: hybrid keyword + vector search, reranking, relevance filtering, and
per-stage graceful degradation (seed 001)."""

import json

import numpy as np
import pytest

from memlane import ConfigError, InvalidInputError, Memory
from memlane.text.keywords import analyze, query_terms
from memlane.core.models import MemoryItem, MemoryRecord, NewMemory
from memlane.core.query import Query, date_windows
from memlane.store.sqlite import match_expression
from memlane.retrieval import fusion, judge, timeline
from memlane.retrieval.candidates import Candidate, Pool
from support.openai_server import Reply, chat_completion
from support.notes import NOTES
from support.counting import TokenCounting

from conftest import sqlite_config

@pytest.fixture
def hybrid(tmp_path, embedder):
    config = {**sqlite_config(tmp_path / "h.db"), "retrieval": {"reranker": {"provider": "maxsim"},
                                                                "store_token_vectors": True}}
    with Memory(config, embedder=embedder) as m:
        m.add(NOTES, user_id="u", infer=False, metadata={"kind": "note"})
        m.add(["Order XJ-9000 was cancelled by another customer"], user_id="other", infer=False)
        yield m


def texts(result):
    return [r["memory"] for r in result["results"]]


def test_analyzer_stems_english_and_splits_chinese():
    assert analyze("Running shoes, the runner runs") == ["run", "shoe", "runner", "run"]
    assert analyze("火锅") == ["火锅"]  # jieba's words (tests/text/test_keywords.py)
    assert analyze("龍井") == analyze("龙井")  # Traditional and Simplified index the same
    assert query_terms("the run of runs and") == ["run"]
    assert match_expression(query_terms("the of and"), {}) is None
    scoped = match_expression(query_terms("hot pot"), {"user_id": ["a"]})
    assert scoped.startswith('("hot" OR "pot") AND (') and scoped.endswith(")")


def test_the_stemmer_is_the_c_build():
    """Every insert stems its text in the keyword index trigger: the pure-Python fallback made
    inserts 5x slower, so PyStemmer is a dependency and must be what the analyzer gets."""
    from memlane.text.keywords import _stemmer

    assert type(_stemmer()).__module__ == "Stemmer"


def test_keyword_search_finds_exact_codes_and_stays_in_scope(hybrid):
    result = hybrid.search("XJ-9000", user_id="u", keyword_search=True, limit=3)
    assert texts(result)[0] == "Order XJ-9000 shipped to the Berlin warehouse"
    assert all(r["user_id"] == "u" for r in result["results"])
    first = result["results"][0]
    MemoryItem.model_validate(first)
    assert first["scores"]["keyword"] > 0 and -1 <= first["scores"]["vector"] <= 1
    assert result["metadata"]["stages"]["keyword"]["ran"] and result["metadata"]["fallback_used"] is False


def test_chinese_queries_match_chinese_memories_by_keyword(hybrid):
    assert texts(hybrid.search("火锅", user_id="u", keyword_search=True, limit=1)) == ["我喜欢吃四川火锅"]
    assert texts(hybrid.search("龙井", user_id="u", keyword_search=True, limit=1)) == ["我住在杭州，每天喝龍井茶"]
    matches = hybrid.store.keyword_search("龙井", hybrid.embeddings.query("龙井"),
                                          __import__("memlane.core.scope", fromlist=["x"]).scoped_filter({"user_id": "u"}, None), 10)
    assert [r.text for r, _, _ in matches] == ["我住在杭州，每天喝龍井茶"]


def test_filters_threshold_and_limit_apply_to_hybrid_results(hybrid):
    hybrid.add("XJ-9000 is also the name of a robot vacuum", user_id="u", infer=False, metadata={"kind": "trivia"})
    only_trivia = hybrid.search("XJ-9000", user_id="u", keyword_search=True, filters={"kind": "trivia"})
    assert texts(only_trivia) == ["XJ-9000 is also the name of a robot vacuum"]
    assert len(hybrid.search("XJ-9000", user_id="u", keyword_search=True, limit=2)["results"]) == 2
    everything = hybrid.search("XJ-9000 order", user_id="u", keyword_search=True)["results"]
    cut = everything[1]["score"] + 1e-9  # the threshold keeps the scores a user sees: a prefix of the list
    kept = hybrid.search("XJ-9000 order", user_id="u", keyword_search=True, threshold=cut)["results"]
    assert kept == everything[:1] or [r["id"] for r in kept] == [r["id"] for r in everything[:len(kept)]]
    assert kept and all(r["score"] >= cut for r in kept) and len(kept) < len(everything)


def test_keyword_index_follows_updates_deletes_and_validity(hybrid):
    target = next(r for r in hybrid.get_all(user_id="u")["results"] if "password" in r["memory"])
    hybrid.update(target["id"], text="The staging server key rotates monthly")
    assert "password" not in " ".join(texts(hybrid.search("password", user_id="u", keyword_search=True, limit=1,
                                                          threshold=0.3)))
    assert texts(hybrid.search("monthly key", user_id="u", keyword_search=True, limit=1)) == [
        "The staging server key rotates monthly"]
    hybrid.delete(target["id"])
    assert target["id"] not in {r["id"] for r in hybrid.search("monthly key", user_id="u", keyword_search=True)["results"]}
    count = hybrid.store._con.execute("SELECT count(*) FROM memories_fts").fetchone()[0]
    assert count == hybrid.store._con.execute("SELECT count(*) FROM memories").fetchone()[0]
    hybrid.delete_all(user_id="other", purge=True)
    assert hybrid.store._con.execute("SELECT count(*) FROM memories_fts").fetchone()[0] == count - 1


def test_fusion_methods():
    def rec(name):
        return MemoryRecord(id=name, text=name, hash="", created_at="", updated_at="")

    def vector(*hits):
        return Pool.of([(rec(name), cos) for name, cos in hits])

    def ids(pool):
        return [record.id for record in pool.records]

    # a memory's keyword score: its share of the query
    weighted = fusion.fuse(vector(("a", 0.9), ("b", 0.5), ("c", 0.1)), [(rec("c"), 1.0, 0.1), (rec("d"), 0.25, 0.0)],
                           method="weighted", keyword_weight=0.5)
    # cosine min-max over the pool: a 1, b .56, c .11, d 0; shares as they are: c 1, d .25
    assert ids(weighted) == ["c", "a", "b", "d"]
    assert weighted.best(1)[0].keyword == 1.0 and weighted.best()[2].keyword is None  # b matched no keyword
    weak = fusion.fuse(vector(("a", .9), ("b", .5), ("c", .1)), [(rec("c"), 0.1, 0.1)], method="weighted",
                       keyword_weight=0.5)
    assert ids(weak) == ["a", "b", "c"]  # a small share (a common word) lifts nothing
    rrf = fusion.fuse(vector(("a", .9), ("b", .5), ("c", .1)), [(rec("c"), 8.0, .1), (rec("d"), 2.0, 0.0)], method="rrf")
    assert ids(rrf)[0] in ("a", "c") and set(ids(rrf)) == {"a", "b", "c", "d"}
    blended = fusion.blend(weighted.best(), np.array([0.0, 0.0, 1.0, 0.0]), 1.0)
    assert blended[0].record.id == "b" and blended[0].rerank == 1.0


def test_dates_named_in_a_query_become_time_windows():
    def spans(query):
        return [(a.date().isoformat(), b.date().isoformat()) for a, b in date_windows(query)]

    assert spans("What did Tim say on 16 November, 2023?") == [("2023-11-16", "2023-11-17")]
    assert spans("the photo shared on December 1,2023") == [("2023-12-01", "2023-12-02")]
    assert spans("finished reading on 8th December, 2023") == [("2023-12-08", "2023-12-09")]
    assert spans("logs from 2024-02-29") == [("2024-02-29", "2024-03-01")]
    assert spans("What did he learn in August 2023?") == [("2023-08-01", "2023-09-01")]
    assert spans("plans for Dec 2023") == [("2023-12-01", "2024-01-01")]
    assert spans("any award in 2022?") == [("2022-01-01", "2023-01-01")]
    assert spans("the 31 February 2023 party") == [("2023-02-01", "2023-03-01")]  # no such day: the month
    assert spans("what did we do last week?") == [] and spans("my May plans") == []


def _candidate(name, score, created, user="u", actor=None, context=None):
    record = MemoryRecord(id=name, text=name, hash="", created_at=created, updated_at=created, user_id=user,
                          actor_id=actor, context=context)
    return record, score


def _apply(hits, query, **weights):
    ranked, info = timeline.apply(Pool.of(hits), query, **weights)
    return ranked.best(), info


def test_timeline_lends_neighbours_score_and_boosts_named_dates():
    cand = _candidate

    def pool():
        return [cand("match", 0.9, "2023-05-08T13:56:00+00:00", actor="Ana"),
                cand("isolated", 0.5, "2023-01-01T10:00:00+00:00"),
                cand("reply", 0.5, "2023-05-08T13:56:01+00:00", actor="Bo", context="match"),  # right after the match
                cand("later", 0.5, "2023-05-08T15:00:00+00:00", actor="Ana"),  # two hours after the reply: too far
                cand("elsewhere", 0.5, "2023-05-08T13:56:02+00:00", user="v", actor="Cy"),  # another user's memory
                cand("bottom", 0.1, "2023-02-01T00:00:00+00:00")]

    ranked, info = _apply(pool(), Query("where will it be?"), date_weight=0.3, neighbour_weight=0.4,
                                  neighbour_gap_seconds=3600)
    assert [c.record.id for c in ranked[:2]] == ["match", "reply"] and info == {"neighbour_pairs": 1}
    assert ranked[0].score == pytest.approx(1 + 0.4 * 0.5) and ranked[1].score == pytest.approx(0.5 + 0.4)
    dated, info = _apply(pool(), Query("what happened in January 2023?"), date_weight=0.3, neighbour_weight=0.0,
                                 neighbour_gap_seconds=3600)
    assert [c.record.id for c in dated[:2]] == ["match", "isolated"] and info == {"date_windows": 1, "in_window": 1}
    unchanged, info = _apply(pool(), Query("where will it be?"), date_weight=0.3, neighbour_weight=0.0,
                                     neighbour_gap_seconds=3600)
    assert [c.record.id for c in unchanged] == [record.id for record, _ in pool()] and info == {}


@pytest.mark.parametrize("first, second, lent", [
    ({}, {}, False),  # two notes stored one after another (no speakers, no reply): not a conversation
    ({"actor": "Ana"}, {"actor": "Ana"}, False),  # one person's consecutive notes
    ({"actor": "Ana"}, {"actor": "Bo"}, True),  # two people talking
    ({}, {"context": "the message it answers"}, True),  # a reply stored with what it answers
    ({"actor": "Ana", "context": "Bo's question"}, {"actor": "Ana"}, True),  # a reply, then its speaker goes on
])
def test_only_turns_of_a_conversation_lend_each_other_score(first, second, lent):
    pool = [_candidate("a", 0.9, "2023-05-08T13:56:00+00:00", **first),
            _candidate("b", 0.2, "2023-05-08T13:56:30+00:00", **second)]
    ranked, info = _apply(pool, Query("anything"), date_weight=0.3, neighbour_weight=0.5,
                                  neighbour_gap_seconds=3600)
    assert info["neighbour_pairs"] == int(lent)
    assert {c.record.id: c.score for c in ranked}["b"] == pytest.approx(0.5 if lent else 0.0)


@pytest.mark.parametrize("first, second, query, reads_times", [
    ({}, {}, "anything", False),  # notes of one user: no neighbours to lend, no date named
    ({"actor": "Ana"}, {"actor": "Ana"}, "anything", False),  # one speaker's notes
    ({}, {}, "what happened in May 2023?", True),  # a named date is looked for in every memory's time
    ({"actor": "Ana"}, {"actor": "Bo"}, "anything", True),  # two speakers may be turns of a conversation
    ({}, {"context": "the message it answers"}, "anything", True),  # a reply
])
def test_the_timeline_reads_the_times_only_of_a_pool_it_can_change(monkeypatch, first, second, query, reads_times):
    read: list[str] = []
    moment = timeline._moment
    monkeypatch.setattr(timeline, "_moment", lambda text: read.append(text) or moment(text))
    pool = [_candidate("a", 0.9, "2023-05-08T13:56:00+00:00", **first),
            _candidate("b", 0.2, "2023-05-08T13:56:30+00:00", **second),
            _candidate("c", 0.4, "2023-05-09T08:00:00+00:00", **first)]
    ranked, info = _apply(pool, Query(query), date_weight=0.3, neighbour_weight=0.5,
                                  neighbour_gap_seconds=3600)
    assert bool(read) is reads_times
    if not reads_times:  # the pool's order and its min-max normalised scores, as when nothing is lent
        assert [(c.record.id, c.score) for c in ranked] == [("a", 1.0), ("c", pytest.approx(2 / 7)), ("b", 0.0)]
        assert info == {"neighbour_pairs": 0}
TALK = [
    ("2023-05-08T13:56:00+00:00", "Ana: Have you picked a place for the team offsite yet?"),
    ("2023-05-08T13:56:01+00:00", "Bo: Yes, we booked a lodge by Lake Tahoe for the second week of June."),
    ("2023-05-08T13:56:02+00:00", "Ana: Lovely, I will bring my camera."),
    ("2023-06-20T09:00:00+00:00", "Bo: We booked a table at the sushi place for Friday."),
    ("2023-06-20T09:00:01+00:00", "Ana: The new office has a great view of the lake."),
    ("2023-08-12T18:00:00+00:00", "Ana: I went hiking in the Alps with my brother."),
    ("2023-03-02T18:00:00+00:00", "Ana: I went hiking near the coast with my cousin."),
]


@pytest.mark.parametrize("timeline_on", [False, True])
def test_search_weighs_time_neighbours_and_named_dates(tmp_path, embedder, timeline_on):
    weights = {"neighbour_weight": 0.4, "date_weight": 0.3} if timeline_on else {"neighbour_weight": 0, "date_weight": 0}
    # the reranker given an even say, where it alone puts the look-alike first: the timeline's part shows
    # the speakers are named (turns of a conversation), their names already in the texts: not embedded again
    config = {**sqlite_config(tmp_path / "t.db"), "retrieval": {"reranker": {"provider": "maxsim"}, "rerank_weight": 0.5,
                                                                "embed_actor": False, **weights}}
    with Memory(config, embedder=embedder) as m:
        m.insert([NewMemory(text=text, user_id="u", created_at=at, updated_at=at, actor_id=text.split(":")[0])
                  for at, text in TALK])
        offsite = m.search("Where will the team offsite be?", user_id="u", keyword_search=True, rerank=True, limit=3)
        hiking = m.search("Who did Ana go hiking with in August 2023?", user_id="u", keyword_search=True, limit=2)
        vector = m.search("Who did Ana go hiking with in August 2023?", user_id="u", limit=2, keyword_search=False)
    # the reply right after the matching question outranks a look-alike from another day
    reply = TALK[1][1]
    assert (texts(offsite).index(reply) < texts(offsite).index(TALK[3][1])) == timeline_on
    assert (texts(hiking)[0] == TALK[5][1]) == timeline_on  # created in the month the question names
    stages = hiking["metadata"]["stages"]
    assert set(stages) == {"vector", "keyword"}  # a step of the hybrid stage: API clients see the same stages
    if timeline_on:
        step = stages["keyword"]["timeline"]
        assert step == {**step, "ran": True, "date_windows": 1, "in_window": 1}
        assert stages["keyword"]["ms"] >= step["ms"]
    else:
        assert "timeline" not in stages["keyword"]
    assert "metadata" not in vector  # plain vector search is untouched


def test_maxsim_rerank_uses_stored_or_computed_token_vectors_alike(hybrid, tmp_path, embedder):
    stored = hybrid.search("what does my sister do for a living?", user_id="u", rerank=True, limit=3)
    assert texts(stored)[0] == "My sister lives in Toronto and works as a nurse"
    assert stored["metadata"]["stages"]["rerank"]["reranker"] == "maxsim"
    assert hybrid.store._con.execute("SELECT count(*) FROM memory_tokens").fetchone()[0] == 7
    unstored = {"reranker": {"provider": "maxsim"}, "store_token_vectors": False}
    with Memory({**sqlite_config(tmp_path / "plain.db"), "retrieval": unstored}, embedder=embedder) as plain:
        plain.add(NOTES, user_id="u", infer=False, metadata={"kind": "note"})
        computed = plain.search("what does my sister do for a living?", user_id="u", rerank=True, limit=3)
    assert [(r["memory"], round(r["scores"]["rerank"], 4)) for r in computed["results"]] == \
        [(r["memory"], round(r["scores"]["rerank"], 4)) for r in stored["results"]]


def test_a_failing_stage_degrades_instead_of_failing(hybrid, monkeypatch):
    plain = hybrid.search("beach walks", user_id="u", limit=3, keyword_search=False)

    def broken(*args, **kwargs):
        raise RuntimeError("keyword index unavailable")

    monkeypatch.setattr(hybrid.store, "keyword_search", broken)
    result = hybrid.search("beach walks", user_id="u", limit=3, keyword_search=True)
    assert [r["id"] for r in result["results"]] == [r["id"] for r in plain["results"]]
    meta = result["metadata"]
    # seed 001: a stage that failed and was skipped is in stages_failed; no fallback happened
    assert meta["stages_failed"] == {"keyword_search": "RuntimeError: keyword index unavailable"}
    assert meta["fallback_used"] is False and meta["original_error"] is None and meta["advanced_retrieval"] is True
    assert meta["stages"]["keyword"]["ran"] is False and meta["stages"]["vector"]["ran"] is True
    assert all(isinstance(s["ms"], float) for s in meta["stages"].values())

    monkeypatch.undo()  # the keyword index works again; now the timeline step fails: the fused order stands
    settings = hybrid.config.retrieval
    hybrid.config.retrieval = settings.model_copy(update={"neighbour_weight": 0, "date_weight": 0})
    fused = hybrid.search("beach walks", user_id="u", limit=3, keyword_search=True)
    hybrid.config.retrieval = settings
    monkeypatch.setattr(timeline, "apply", broken)
    untimed = hybrid.search("beach walks", user_id="u", limit=3, keyword_search=True)
    assert [r["id"] for r in untimed["results"]] == [r["id"] for r in fused["results"]]
    keyword = untimed["metadata"]["stages"]["keyword"]
    assert keyword["ran"] is True and keyword["timeline"]["ran"] is False
    assert untimed["metadata"]["stages_failed"] == {"timeline": "RuntimeError: keyword index unavailable"}

    monkeypatch.setattr(type(hybrid.searcher.reranker()), "scores", broken)
    reranked = hybrid.search("beach walks", user_id="u", limit=3, rerank=True)
    assert reranked["metadata"]["stages"]["rerank"]["ran"] is False and reranked["results"]


def test_filter_memories_drops_unrelated_results_but_never_a_clear_first_hit(hybrid):
    everything = hybrid.search("Where does my sister live?", user_id="u", limit=10)
    filtered = hybrid.search("Where does my sister live?", user_id="u", limit=10, filter_memories=True)
    assert texts(filtered)[0] == "My sister lives in Toronto and works as a nurse"
    assert 0 < len(filtered["results"]) < len(everything["results"])
    assert filtered["metadata"]["stages"]["filter"]["dropped"] == len(everything["results"]) - len(filtered["results"])
    nothing = hybrid.search("quantum chromodynamics lattice", user_id="u", limit=5, filter_memories=True)
    assert all(r["scores"]["vector"] >= judge.MIN_COSINE for r in nothing["results"])


def test_judge_rules():
    def cand(text, cos):
        return Candidate(MemoryRecord(id=text, text=text, hash="", created_at="", updated_at=""), cos, score=cos)

    clear = [cand("sister lives in Toronto", 0.6), cand("unrelated", 0.05)]
    assert [c.record.text for c in judge.offline_filter(Query("where does my sister live"), clear)] == ["sister lives in Toronto"]
    assert judge._never_empty("where does my sister live", clear, []) == clear[:1]
    vague = [cand("unrelated", 0.1)]
    assert judge.offline_filter(Query("where does my sister live"), vague) == []


def test_flags_are_validated_and_config_defaults_apply(hybrid, tmp_path, embedder):
    with pytest.raises(InvalidInputError, match="keyword_search must be true or false"):
        hybrid.search("x", user_id="u", keyword_search="yes")
    config = {**sqlite_config(tmp_path / "d.db"), "retrieval": {"keyword_search": True}}
    with Memory(config, embedder=embedder) as m:
        m.add(NOTES, user_id="u", infer=False)
        assert "keyword" in m.search("XJ-9000", user_id="u")["metadata"]["stages"]
        assert "metadata" not in m.search("XJ-9000", user_id="u", keyword_search=False)


def test_rerankers_are_chosen_by_config(tmp_path, embedder):
    bad = {**sqlite_config(tmp_path / "x.db"), "retrieval": {"reranker": {"provider": "cross_encoder",
                                                                           "config": {"model": "/no/such/model"}}}}
    with Memory(bad, embedder=embedder) as m:
        m.add("x", user_id="u", infer=False)
        result = m.search("x", user_id="u", rerank=True)  # a misconfigured reranker degrades the search ...
        assert "is not a directory" in result["metadata"]["stages_failed"]["rerank"]
    with pytest.raises(ConfigError, match="unknown; known providers: maxsim, cross_encoder, llm"):
        from memlane.core.config import load
        from memlane.retrieval.rerank import create_reranker

        create_reranker(load({"retrieval": {"reranker": {"provider": "bm42"}}}), None)


def test_llm_reranker_and_judge(tmp_path, embedder, openai_server):
    llm = {"provider": "openai", "config": {"model": "judge", "api_key": "k", "base_url": openai_server.base_url,
                                            "max_retries": 0}}
    config = {**sqlite_config(tmp_path / "l.db"), "llm": llm, "retrieval": {"reranker": {"provider": "llm"}}}
    with Memory(config, embedder=embedder) as m:
        m.add(["I play the cello", "I own a red bicycle", "My cat is called Miso"], user_id="u", infer=False)

        def grade(request):
            listing = request.json["messages"][-1]["content"]
            lines = [line for line in listing.splitlines() if line[:1].isdigit()]
            return Reply(json=chat_completion(json.dumps({"scores": [10 if "cello" in l else 1 for l in lines]})))

        openai_server.route("/v1/chat/completions", grade)
        assert texts(m.search("bicycle", user_id="u", keyword_search=False, rerank=True))[0] == "I play the cello"

        def relevant(request):
            listing = request.json["messages"][-1]["content"]
            lines = [line for line in listing.splitlines() if line[:1].isdigit()]
            return Reply(json=chat_completion(json.dumps({"relevant": [n for n, l in enumerate(lines) if "cat" in l]})))

        openai_server.route("/v1/chat/completions", relevant)
        assert texts(m.search("what pets?", user_id="u", filter_memories=True)) == ["My cat is called Miso"]
        openai_server.route("/v1/chat/completions", lambda request: Reply.error(500))
        degraded = m.search("what pets?", user_id="u", filter_memories=True)
        assert "filter_memories" in degraded["metadata"]["stages_failed"] and len(degraded["results"]) == 3




@pytest.mark.parametrize("retrieval, flags, reranks", [
    ({}, {"rerank": True}, False),                                 # no reranker chosen: skipped, with the reason
    ({"rerank": True}, {}, False),                                 # on by default, still none chosen
    ({"reranker": {"provider": "maxsim"}}, {"rerank": True}, True),  # maxsim chosen: it runs
    ({"rerank": True, "reranker": {"provider": "maxsim"}}, {}, True),
])
def test_a_rerank_runs_only_with_a_reranker_chosen(tmp_path, hashing_embedder, retrieval, flags, reranks):
    """MaxSim over the local models' token vectors measured no recall gain on LoCoMo, so a rerank asked for
    without ``retrieval.reranker`` written does no work (no token vectors) and says why; written, it runs."""
    counting = TokenCounting(hashing_embedder)
    with Memory({**sqlite_config(tmp_path / "r.db"), "retrieval": {**retrieval, "store_token_vectors": False}},
                embedder=counting) as m:
        m.add(NOTES, user_id="u", infer=False)
        hybrid = m.search("what does my sister do?", user_id="u", keyword_search=True, rerank=False)
        found = m.search("what does my sister do?", user_id="u", **flags)
    meta, stage = found["metadata"], found["metadata"]["stages"]["rerank"]
    assert stage["ran"] is reranks and meta["stages_failed"] == {} and meta["fallback_used"] is False
    assert "rerank" in meta["stages_requested"]
    assert bool(counting.token_texts) is reranks  # the candidates' (and the query's) token vectors
    assert all(("rerank" in r["scores"]) is reranks for r in found["results"])
    if reranks:
        assert meta["warnings"] == [] and "skipped" not in stage
    else:
        assert "retrieval.reranker" in stage["skipped"] and stage["ms"] == 0.0
        assert meta["warnings"] == [f"rerank skipped: {stage['skipped']}"]
        assert [r["id"] for r in found["results"]] == [r["id"] for r in hybrid["results"]]


@pytest.mark.parametrize("retrieval, weight", [
    ({"reranker": {"provider": "maxsim"}}, 0.3),                 # maxsim's own
    ({"reranker": {"provider": "maxsim"}, "rerank_weight": 0.7}, 0.7),  # set: whatever the reranker
    ({"reranker": {"provider": "llm"}}, 0.5),                    # a model judging relevance: an even say
    ({"reranker": {"provider": "llm"}, "rerank_weight": 0.0}, 0.0),
])
def test_the_rerank_weight_is_the_rerankers_own_unless_set(tmp_path, hashing_embedder, openai_server, retrieval, weight):
    llm = {"provider": "openai", "config": {"model": "judge", "api_key": "k", "base_url": openai_server.base_url,
                                            "max_retries": 0}}
    openai_server.route("/v1/chat/completions",
                        lambda request: Reply(json=chat_completion(json.dumps({"scores": [5, 5]}))))
    with Memory({**sqlite_config(tmp_path / "w.db"), "llm": llm, "retrieval": retrieval}, embedder=hashing_embedder) as m:
        m.add(["I play the cello", "I own a red bicycle"], user_id="u", infer=False)
        stage = m.search("cello", user_id="u", rerank=True)["metadata"]["stages"]["rerank"]
    assert stage["ran"] and stage["weight"] == weight
