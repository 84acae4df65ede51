"""``should_search_memory``: the keyword-scored gate, measured on a labelled set of our own.

``tests/data/should_search.jsonl`` (48 conversations, English and Chinese, both outcomes)
is the set the marker lists were tuned on; ``should_search_holdout.jsonl`` (20) was written
afterwards (its misses led to the shared-past markers; ``test_context_gate_unseen.py`` reads the
unseen set); ``should_search_multilingual.jsonl`` (140: Spanish, German, French, Japanese, Korean)
is the development set of the other languages' markers. The table test reports precision / recall
of the default configuration on each and asserts floors (see docs/context.md for the figures).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memlane.core import validation
from memlane.core.config import ContextConfig
from memlane.core.errors import InvalidInputError
from memlane.retrieval import context, context_markers

DATA = Path(__file__).parents[1] / "data"


def _load(name):
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


def _decide(row, settings=None):
    turns = validation.messages(row["conversation"], validation.Limits(), "conversation")
    return context.decide(turns, row.get("system_prompt", ""), settings or ContextConfig())


def _precision_recall(rows, settings=None):
    tp = fp = fn = 0
    for row in rows:
        said = _decide(row, settings).should_search
        tp += said and row["should_search"]
        fp += said and not row["should_search"]
        fn += (not said) and row["should_search"]
    return tp / (tp + fp) if tp + fp else 0.0, tp / (tp + fn) if tp + fn else 0.0


def test_the_labelled_sets_cover_both_languages_and_outcomes():
    rows = _load("should_search.jsonl")
    assert len(rows) >= 40
    for lang in ("en", "zh"):
        labels = [r["should_search"] for r in rows if r["lang"] == lang]
        assert labels.count(True) >= 10 and labels.count(False) >= 10, lang


# floors: the tuned set must stay perfect-ish; the held-out set is held at what the default
# measured when it was written (P 1.00, R 0.60), so a change that loses recall or precision fails
@pytest.mark.parametrize("gate", ["seed", "tuned"])
@pytest.mark.parametrize("name,min_precision,min_recall", [
    ("should_search.jsonl", 0.95, 0.95),
    ("should_search_holdout.jsonl", 0.9, 0.6),
])
def test_precision_and_recall_of_each_gate(name, min_precision, min_recall, gate, capsys):
    rows = _load(name)
    settings = ContextConfig(gate=gate)
    report = {}
    for lang in ("en", "zh", "all"):
        subset = [r for r in rows if lang == "all" or r["lang"] == lang]
        report[lang] = tuple(round(v, 3) for v in _precision_recall(subset, settings))
    with capsys.disabled():
        print(f"\n{name} ({gate} gate): precision/recall {report}")
    precision, recall = report["all"]
    assert precision >= min_precision and recall >= min_recall, report


@pytest.mark.parametrize("text,signal,expected", [
    ("Do you remember my sister?", "memory_keywords", ["remember"]),
    ("What did we do last time?", "memory_keywords", ["last time"]),
    ("你还记得我上次说的吗", "memory_keywords", ["记得", "上次"]),
    ("我們以前討論過", "memory_keywords", ["以前"]),            # Traditional is read as Simplified
    ("Which one, and why?", "questions", ["which", "why", "?"]),
    ("这是什么？", "questions", ["什么", "？"]),
    ("my team and our plan", "pronouns", ["my", "our"]),
    ("mystery myth", "pronouns", []),                            # whole words only
    ("我们的计划和我的猫", "pronouns", ["我的", "我们"]),
    ("As I mentioned, you said it earlier", "references", ["as i mentioned", "you said", "earlier"]),
    ("你刚才提到的方案", "references", ["提到", "刚才"]),
    ("Which Spanish lessons did you say I should repeat?", "references", ["did you say"]),
    ("What should I cook tonight? Any ideas for me?", "requests", ["ideas", "what should i", "for me"]),
    ("给我推荐几道适合我的菜", "requests", ["推荐", "适合"]),
    ("Write a toast for my sister and my allergies", "personal", ["my allergies", "my sister"]),
    ("帮我写一段给老公的生日祝福", "personal", ["老公"]),
    ("How do I make my resume look more professional?", "know_how", ["how do i"]),
    ("什么是机器学习？", "know_how", ["什么是"]),
    # other languages: accented words are whole words, French elisions are boundaries
    ("¿Te acuerdas de lo que hablamos la última vez?", "memory_keywords", ["te acuerdas", "la última vez"]),
    ("¿Dónde está mi libro?", "questions", ["?", "¿", "dónde"]),
    ("Recomiéndame una serie para mí", "requests", ["recomiéndame", "para mí"]),
    ("Erinnerst du dich an letztes Mal?", "memory_keywords", ["erinnerst", "letztes mal"]),
    ("Ich brauche eine Geschenkidee für meine Schwester", "personal", ["meine schwester"]),
    ("Ich brauche eine Geschenkidee", "requests", ["geschenkidee"]),          # a compound's tail
    ("Tu t'en souviens ? C'était la dernière fois", "memory_keywords", ["souviens", "la dernière fois"]),
    ("Conseille-moi un livre", "requests", ["conseille"]),
    ("Você lembra do meu irmão?", "personal", ["meu irmão"]),
    ("Ты помнишь мою сестру?", "memory_keywords", ["помнишь"]),
    ("前回話したこと、覚えてる？", "memory_keywords", ["覚えて", "前回"]),       # Japanese: substrings
    ("息子の誕生日プレゼントのおすすめは？", "requests", ["おすすめ"]),
    ("지난번에 말한 거 기억해?", "memory_keywords", ["기억해", "지난번에"]),    # Korean: a word with its ending
    ("딸이 좋아할 만한 선물", "pronouns", ["딸이"]),
    ("딸기 주스 만드는 법", "pronouns", []),                                    # 딸기 is a strawberry
    ("한국 교육 제도는 어때?", "pronouns", []),                                  # 제도 is not 제 + 도
    # a language's markers read only where the text shows it: English "was" is no German question
    ("What was the name of it?", "questions", ["what", "?"]),
    ("Was war das?", "questions", ["?", "was"]),
    # what was settled or made together before, an adverb or a time inside (a gap: two words, six characters)
    ("Can we redo the playlist we made for the party?", "references", ["we made"]),
    ("I think I already told you", "references", ["i already told you"]),
    ("Can you explain what is mentioned here?", "references", []),               # a gap of three words
    ("把我们上周一起定的计划拿出来", "references", ["我们上周一起定的"]),
    ("我们。明天定的", "references", []),                                         # not across a clause
    ("Plan meals around my dietary restrictions", "personal", ["my dietary"]),
])
def test_signal_markers(text, signal, expected):
    assert context.hits(text, signal) == expected


def _sample(marker):
    """A text a marker must find: its first alternatives, affixes taken off ("mi|mis herman-" -> "mi herman")."""
    return " ".join(w.split("|")[0].strip("-") if len(w) > 1 else w for w in marker.split())


@pytest.mark.parametrize("signal", sorted(context_markers.MARKERS))
def test_every_marker_is_found_in_its_own_script(signal):
    """Each marker, written out, is a hit of its signal when read as its language (checks how each script
    is compiled: Traditional and Japanese kanji normalised alike, Korean endings, accented words)."""
    missed = []
    for language, markers in context_markers.MARKERS[signal].items():
        readers = tuple(dict.fromkeys((*context_markers.ALWAYS, language)))
        for marker in markers:
            if not context.hits(_sample(marker), signal, readers):
                missed.append((language, marker))
    assert not missed


@pytest.mark.parametrize("text,languages", [
    ("What should I cook tonight?", ("en", "zh")),
    ("¿Qué puedo cocinar esta noche?", ("en", "zh", "es")),
    ("Was soll ich heute kochen?", ("en", "zh", "de")),
    ("Qu'est-ce que je pourrais cuisiner ?", ("en", "zh", "es", "fr", "pt")),   # "que" is theirs too
    ("今夜は何を作ればいい？", ("en", "zh", "ja")),
    ("오늘 저녁 뭐 먹을까?", ("en", "zh", "ko")),
    ("Что мне приготовить?", ("en", "zh", "ru")),
])
def test_the_languages_a_text_is_read_in(text, languages):
    assert context_markers.languages_of(text) == languages


def test_explain_gives_each_signal_its_hits_and_points():
    turns = validation.messages("Remember what we said about my garden?", validation.Limits())
    decision = context.decide(turns, "", ContextConfig(gate="seed"))
    points = {s.signal: (s.hits, s.points) for s in decision.signals}
    assert points["memory_keywords"] == (["remember"], 3.0)
    assert points["questions"] == (["what", "?"], 2.0)
    assert points["pronouns"] == (["my", "we"], 4.0)
    assert decision.score == 9.0 and decision.should_search and decision.threshold == 3.0


def test_hits_per_signal_are_capped():
    turns = validation.messages("what which who when where why how?", validation.Limits())
    decision = context.decide(turns, "", ContextConfig(max_hits_per_signal=2))
    assert decision.score == 2.0 and not decision.should_search


def test_weights_and_threshold_are_configurable():
    turns = validation.messages("What is my name?", validation.Limits())
    assert context.decide(turns, "", ContextConfig()).score == 4.0     # what, ?, my
    assert not context.decide(turns, "", ContextConfig(threshold=5)).should_search
    assert context.decide(turns, "", ContextConfig(pronoun_weight=0)).score == 2.0


def test_in_the_tuned_gate_the_system_prompt_counts_at_a_fraction_and_assistant_turns_not_at_all():
    turns = validation.messages([{"role": "user", "content": "Hi there"},
                                 {"role": "assistant", "content": "Do you remember what we did last time?"}],
                                validation.Limits())
    decision = context.decide(turns, "Remember the user's preferences.", ContextConfig(gate="tuned"))
    memory = next(s for s in decision.signals if s.signal == "memory_keywords")
    assert memory.hits == [] and memory.system_prompt_hits == ["remember"] and memory.points == 1.5
    assert not decision.should_search


def test_the_tuned_gate_reads_only_the_recent_user_turns():
    turns = validation.messages(["Do you remember my dog?", "Nice weather", "Tell me a joke"], validation.Limits())
    assert not context.decide(turns, "", ContextConfig(gate="tuned", recent_turns=2)).should_search
    assert context.decide(turns, "", ContextConfig(gate="tuned", recent_turns=3)).should_search
    assert context.decide(turns, "", ContextConfig(gate="seed")).should_search  # the seed's gate reads them all


def test_memory_facade_returns_a_bool_or_the_explanation(memory):
    assert memory.should_search_memory("你还记得我女儿的名字吗？") is True
    assert memory.should_search_memory("What is the capital of France?") is False
    explained = memory.should_search_memory("What is the capital of France?", explain=True)
    assert isinstance(explained, context.SearchDecision) and explained.score == 2.0


@pytest.mark.parametrize("conversation,system_prompt,field", [
    ([{"role": "robot", "content": "hi"}], "", "conversation[0]"),
    ([{"role": "user", "content": "hi", "extra": 1}], "", "conversation[0]"),
    (42, "", "conversation"),
    ("hi", 7, "system_prompt"),
    ("x" * 10, "y" * 200_000, "conversation"),   # over context.max_conversation_chars together
])
def test_bad_conversations_are_typed_errors_naming_the_field(memory, conversation, system_prompt, field):
    with pytest.raises(InvalidInputError) as raised:
        memory.should_search_memory(conversation, system_prompt)
    assert raised.value.field == field
    with pytest.raises(InvalidInputError) as raised:
        memory.search_memory_with_context(conversation, system_prompt, user_id="u")
    assert raised.value.field == field


GATE = [  # (conversation, should search) under the default gate, no scope named
    ("Thanks, that's really helpful!", False),                      # small talk never searches
    ("Hey, how are you doing today? What's up?", False),
    ("哈哈哈好的，晚安～", False),
    ("What should I cook for dinner tonight?", True),               # a choice made for the speaker
    ("Can you recommend a novel I'd probably enjoy?", True),
    ("给我推荐一个通勤路上听的播客。", True),
    ("Summarize this paragraph: The committee met on Tuesday and postponed the budget.", False),  # brings its material
    ("What's the capital of Australia?", False),
    ("How do I make my resume look more professional?", False),    # know-how is the same for everyone
    ("Recomiéndame una novela que me pueda gustar.", True),          # the same signals in other languages
    ("¿Cuál es la capital de Australia?", False),
    ("jaja vale, ¡buenas noches!", False),
    ("Erinnerst du dich, was ich dir über meine Schwester erzählt habe?", True),
    ("Wie kann ich meinen Lebenslauf professioneller gestalten?", False),
    ("Tu te souviens de ce que je t'ai dit sur mon frère ?", True),
    ("Résume ce paragraphe : Le comité s'est réuni mardi et a reporté sa décision.", False),
    ("前回話したプロジェクトのこと、覚えてる？", True),
    ("半熟卵ってどうやって作るの？", False),
    ("내가 좋아할 만한 소설 추천해 줘.", True),
    ("파이썬에서 리스트를 뒤집으려면 어떻게 해?", False),
]


@pytest.mark.parametrize("conversation,expected", GATE)
def test_the_default_gate(conversation, expected):
    turns = validation.messages(conversation, validation.Limits())
    assert context.decide(turns, "", ContextConfig()).should_search is expected


def test_small_talk_vetoes_and_material_counts_against():
    small = context.decide(validation.messages("lol thanks, see you tomorrow!", validation.Limits()), "",
                           ContextConfig())
    assert not small.should_search and small.signals[-1].signal == "small_talk"
    material = context.decide(validation.messages("Fix my code: def add(a, b): return a - b", validation.Limits()),
                              "", ContextConfig(gate="tuned"))
    assert {s.signal: s.points for s in material.signals}["material"] == -2.0
    seed = context.decide(validation.messages("lol thanks, see you tomorrow!", validation.Limits()), "",
                          ContextConfig(gate="seed"))
    assert [s.signal for s in seed.signals][-1] == "requests"     # the seed's gate has neither


@pytest.mark.parametrize("evidence,expected,last", [
    (context.MemoryEvidence(has_memories=False), False, "no_memories"),   # nothing to find in an empty scope
    (context.MemoryEvidence(has_memories=True, matched_terms=("piano",)), True, "memory_similarity"),
    (context.MemoryEvidence(has_memories=True, best_similarity=0.9), True, "memory_similarity"),
    (context.MemoryEvidence(has_memories=True), False, "memory_similarity"),
])
def test_what_the_scope_holds_is_weighed(evidence, expected, last):
    turns = validation.messages("How is the piano going?", validation.Limits())   # how, ? = 2 points
    decision = context.decide(turns, "", ContextConfig(), evidence)
    assert decision.should_search is expected and decision.signals[-1].signal == last


DEV = DATA / "should_search_dev.jsonl"


@pytest.fixture(scope="module")
def dev_cases(tmp_path_factory, embedder):
    """The dev set read once with the real model: each case's scope filled through ``add``."""
    from memlane import Memory
    from memlane.evaluation import should_search

    path = tmp_path_factory.mktemp("gate") / "m.db"
    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(path)}}}, embedder=embedder) as m:
        yield should_search.features(m, should_search.load_cases(DEV)), m.config.context


MULTILINGUAL = DATA / "should_search_multilingual.jsonl"


def test_the_multilingual_set_is_half_needing_memory_in_each_language():
    rows = _load(MULTILINGUAL.name)
    for lang in ("es", "de", "fr", "ja", "ko"):
        labels = [r["should_search"] for r in rows if r["lang"] == lang]
        assert labels.count(True) == labels.count(False) >= 10, lang
        assert all(r.get("memories") for r in rows if r["lang"] == lang)


def test_the_default_gate_on_the_multilingual_set_without_a_scope(capsys):
    """Words alone (no store, no model): floor 0.9 (docs/context.md has the figures)."""
    rows = _load(MULTILINGUAL.name)
    report = {}
    for lang in ("es", "de", "fr", "ja", "ko", "all"):
        subset = [r for r in rows if lang == "all" or r["lang"] == lang]
        right = sum(_decide(r).should_search == r["should_search"] for r in subset)
        report[lang] = round(right / len(subset), 3)
    with capsys.disabled():
        print(f"\nshould_search_multilingual.jsonl (default gate, no scope): accuracy {report}")
    assert report["all"] >= 0.9 and min(report.values()) >= 0.85, report


def test_the_default_gate_on_the_multilingual_holdout_without_a_scope(capsys):
    """Written after the markers and never tuned on: held at what the default measured then (0.81)."""
    rows = _load("should_search_multilingual_holdout.jsonl")
    right = sum(_decide(r).should_search == r["should_search"] for r in rows)
    with capsys.disabled():
        print(f"\nshould_search_multilingual_holdout.jsonl (default gate, no scope): accuracy {right / len(rows):.3f}")
    assert right / len(rows) >= 0.8


def test_the_default_gate_on_the_multilingual_set_with_its_scopes(tmp_path, embedder, capsys):
    from memlane import Memory
    from memlane.evaluation import should_search

    with Memory({"vector_store": {"provider": "sqlite", "config": {"path": str(tmp_path / "m.db")}}},
                embedder=embedder) as m:
        cases = should_search.features(m, should_search.load_cases(MULTILINGUAL))
        report = should_search.report(cases, m.config.context)
    with capsys.disabled():
        print(f"\nshould_search_multilingual.jsonl (default gate, scoped): {report}")
    assert report["accuracy"] >= 0.9, report


def test_the_dev_set_is_half_needing_memory_in_both_languages():
    rows = _load(DEV.name)
    assert len(rows) >= 100
    for lang in ("en", "zh"):
        labels = [r["should_search"] for r in rows if r["lang"] == lang]
        assert labels.count(True) == labels.count(False) >= 25, lang


def test_the_default_gate_on_the_dev_set_with_its_scopes(dev_cases, capsys):
    """Floors at what the default measured when its weights were chosen (docs/context.md)."""
    from memlane.evaluation import should_search

    cases, settings = dev_cases
    report = should_search.report(cases, settings)
    with capsys.disabled():
        print(f"\nshould_search_dev.jsonl (default gate, scoped): {report}")
    assert report["accuracy"] >= 0.9 and report["precision"] >= 0.85 and report["recall"] >= 0.85, report


def test_cross_validation_scores_every_case_with_settings_chosen_without_it(dev_cases):
    from memlane.evaluation import should_search

    cases, settings = dev_cases
    grid = {"threshold": (2.0, 3.0, 50.0), "request_weight": (3.0,)}
    result = should_search.cross_validate(cases, settings, grid, folds=4)
    assert result["cases"] == len(cases) and len(result["chosen"]) == 4
    assert all(point["threshold"] != 50.0 for point in result["chosen"])   # a gate that never searches loses
    assert result["accuracy"] >= 0.85
