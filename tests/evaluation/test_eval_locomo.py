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
    assert turns[2]["text"] == "Ana: I also started painting watercolours. [image: a watercolour of a lighthouse]"
    assert turns[3]["session"] == 2 and turns[3]["created_at"].startswith("2023-06-01T10:00:00")


@pytest.mark.parametrize("mode", list(locomo.MODES))
def test_recall_report(tmp_path, embedder, mode):
    config = {**sqlite_config(tmp_path / f"{mode}.db"), "retrieval": locomo.RETRIEVAL_SETTINGS}
    with Memory(config, embedder=embedder) as memory:
        report = locomo.run(memory, DATA, ks=(1, 2, 5), mode=mode)
    assert report["questions"] == 4 and report["unmatched_evidence"] == 1
    assert report["overall_1_4"]["R@5"] == 100.0  # five turns: everything is in the top 5
    assert report["by_category"]["4"]["R@1"] == 100.0
    assert set(report["by_category"]) == {"1", "2", "4", "5"}


def test_several_modes_share_one_insertion_and_report_each_conversation(tmp_path, embedder):
    config = {**sqlite_config(tmp_path / "modes.db"), "retrieval": locomo.RETRIEVAL_SETTINGS}
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
