"""The LoCoMo evidence-recall harness (synthetic data in the LoCoMo layout)."""

import pytest

from memlane import Memory
from memlane.evaluation import locomo

from conftest import sqlite_config

DATA = [{
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana", "speaker_b": "Bo",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a greyhound called Pixel last week."},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "Lovely! Mine is a tabby cat."},
            {"speaker": "Ana", "dia_id": "D1:3", "text": "I also started painting watercolours.",
             "blip_caption": "a watercolour of a lighthouse"},
        ],
        "session_2_date_time": "10:00 am on 1 June, 2023",
        "session_2": [
            {"speaker": "Bo", "dia_id": "D2:1", "text": "I ran my first marathon in Lisbon."},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "Pixel chewed my paint brushes."},
        ],
    },
    "qa": [
        {"question": "What breed is Ana's dog?", "answer": "greyhound", "evidence": ["D1:1"], "category": 4},
        {"question": "Where did Bo run a marathon?", "answer": "Lisbon", "evidence": ["D2:1"], "category": 2},
        {"question": "What did Ana paint?", "answer": "a lighthouse", "evidence": ["D1:3; D2:2"], "category": 1},
        {"question": "Unanswerable?", "adversarial_answer": "x", "evidence": ["D:1:2"], "category": 5},
        {"question": "No evidence", "answer": "x", "evidence": ["D9:9"], "category": 4},
    ],
}]


def test_evidence_ids_are_normalised():
    assert locomo.evidence_ids(["D8:6; D9:17", "D:11:26", "D30:05"]) == {"D8:6", "D9:17", "D11:26", "D30:5"}


def test_turns_carry_text_caption_and_session_time():
    turns = locomo.turns(DATA[0]["conversation"])
    assert turns[2]["text"] == "I also started painting watercolours. [image: a watercolour of a lighthouse]"
    assert turns[2]["speaker"] == "Ana"
    assert turns[3]["session"] == 2 and turns[3]["created_at"].startswith("2023-06-01T10:00:00")


def test_conversations_are_stored_the_way_a_user_stores_them(tmp_path, hashing_embedder):
    """A session is one add of named messages with the session's time: the messages, the speakers and the
    times are the memories' own (nothing a user cannot send)."""
    with Memory(sqlite_config(tmp_path / "user.db"), embedder=hashing_embedder) as memory:
        loaded = locomo.load_conversations(memory, DATA)
        scope = loaded.scopes["conv-x"]
        stored = {m["memory"]: m for m in memory.get_all(user_id=scope)["results"]}
        assert len(memory.get_messages(user_id=scope)) == 5 and len(stored) == 5
        marathon = stored["I ran my first marathon in Lisbon."]
        assert marathon["actor_id"] == "Bo" and marathon["created_at"].startswith("2023-06-01T10:00:00")
        assert sorted(loaded.turn_of.values()) == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
        assert loaded.turn_of[marathon["id"]] == "D2:1"


@pytest.mark.parametrize("mode", list(locomo.MODES))
def test_recall_report(tmp_path, embedder, mode):
    config = sqlite_config(tmp_path / f"{mode}.db")
    with Memory(config, embedder=embedder) as memory:
        report = locomo.run(memory, DATA, ks=(1, 2, 5), mode=mode)
    assert report["questions"] == 4 and report["unmatched_evidence"] == 1
    assert report["overall_1_4"]["R@5"] == 100.0  # five turns: everything is in the top 5
    assert report["by_category"]["4"]["R@1"] == 100.0
    assert set(report["by_category"]) == {"1", "2", "4", "5"}


def test_several_modes_share_one_insertion_and_report_each_conversation(tmp_path, embedder):
    config = sqlite_config(tmp_path / "modes.db")
    with Memory(config, embedder=embedder) as memory:
        reports = locomo.run_modes(memory, DATA, ks=(1, 5), modes=("vector", "full"))
        assert memory.info()["memories"] == 5  # the conversation was stored once for both modes
        single = locomo.run(memory, DATA, ks=(1, 5), mode="full")
    assert set(reports) == {"vector", "full"}
    for report in reports.values():
        assert report["questions"] == 4 and not report["search_ms_includes_embedding"]
        assert report["by_conversation"]["conv-x"] == {"R@1": report["overall_1_4"]["R@1"], "R@5": 100.0,
                                                       "questions": 3}
    assert single["search_ms_includes_embedding"]
    assert single["overall_1_4"] == reports["full"]["overall_1_4"]
    with pytest.raises(ValueError):
        locomo.run_modes(memory, DATA, modes=("dense",))


def test_cross_validation_chooses_each_folds_setting_on_the_other_conversations():
    """Setting A is best on conversation c1, B on c2: c1's fold must be measured with B (chosen on c2)
    and c2's with A, so the held-out figure is worse than either all-conversations figure."""
    questions = [locomo.Question("c1", "1", "q1", {"D1:1"}), locomo.Question("c2", "4", "q2", {"D1:1"}),
                 locomo.Question("c2", "5", "q3", {"D1:1"})]
    loaded = locomo.Loaded({"c1": "s1", "c2": "s2"}, questions, 0)
    settings = [{"keyword_weight": 0.1}, {"keyword_weight": 0.9}]
    per_setting = [
        [{1: 1.0}, {1: 0.0}, {1: 1.0}],  # A: right on c1, wrong on c2 (the category-5 question does not count)
        [{1: 0.0}, {1: 1.0}, {1: 0.0}],  # B: the opposite
    ]
    held_out, folds, best_all = locomo.select(loaded, settings, per_setting, ks=(1,), select_k=1)
    assert [f["setting"] for f in folds] == [settings[1], settings[0]]
    assert [row[1] for row in held_out] == [0.0, 0.0, 1.0]
    assert [f["overall_1_4"]["R@1"] for f in folds] == [0.0, 0.0]
    assert best_all == 0  # a tie on all conversations: the first setting


def test_cross_validation_report_and_its_checks(tmp_path, hashing_embedder):
    two = [DATA[0], {**DATA[0], "sample_id": "conv-y"}]
    config = sqlite_config(tmp_path / "cv.db")
    with Memory(config, embedder=hashing_embedder) as memory:
        before = memory.config.retrieval.model_dump()
        report = locomo.cross_validate(memory, two, grid={"keyword_weight": [0.2, 0.8]}, mode="hybrid", ks=(1, 5))
        assert memory.config.retrieval.model_dump() == before  # the configured settings come back
        plain = locomo.run(memory, two, ks=(1, 5, 10), mode="hybrid")
        with pytest.raises(ValueError, match="unknown retrieval settings: colour"):
            locomo.cross_validate(memory, two, grid={"colour": [1]})
        with pytest.raises(ValueError, match="at least two conversations"):
            locomo.cross_validate(memory, DATA, grid={"keyword_weight": [0.5]})
    assert report["settings_tried"] == 2 and [f["conversation"] for f in report["folds"]] == ["conv-x", "conv-y"]
    assert all(f["setting"] in ({"keyword_weight": 0.2}, {"keyword_weight": 0.8}) for f in report["folds"])
    assert report["configured"]["overall_1_4"] == plain["overall_1_4"]  # select_k 10 was added to the cut-offs
    assert report["cross_validated"]["overall_1_4"]["R@5"] == 100.0
    assert len(report["by_setting"]) == 2


def test_eval_locomo_cv_on_the_command_line(tmp_path, monkeypatch):
    import json

    from typer.testing import CliRunner

    from memlane.cli.app import app

    data = tmp_path / "two.json"
    data.write_text(json.dumps([DATA[0], {**DATA[0], "sample_id": "conv-y"}]))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing"}}))
    runner = CliRunner()
    result = runner.invoke(app, ["--config", str(config), "eval", "locomo", str(data), "--cv", "--mode", "hybrid",
                                 "--grid", '{"keyword_weight": [0.3, 0.7]}'])
    assert result.exit_code == 0, result.output
    assert "cross-validated" in result.output and "mean of folds" in result.output and "conv-y" in result.output
    bad = runner.invoke(app, ["--config", str(config), "eval", "locomo", str(data), "--cv", "--grid", "[1]"])
    assert bad.exit_code == 2 and "setting -> non-empty list" in bad.output
