"""Keyword analyzers beyond English and Chinese, measured on retrieval (``text/keywords.py``).

For each analyzer variant, the cases of ``--cases`` files (the format ``memlane eval multilingual``
reads: one scope a line, memories stored with ``add(infer=False)``, questions with the strings their
memory holds) are stored in a fresh SQLite store with the default model (multilingual-e5-small),
and every question is searched twice: by the default search (``Memory.search``, hybrid) and by the
keyword stage alone (the store's ``keyword_search``, BM25 over the analyzer's terms). A question is
found at k when one of the first k memories holds one of its strings. Also reported: the
analyzer's time per memory (warm, mean over every memory of the cases) and its first call in a
fresh process (imports and dictionaries loaded), and how often a question's detected language
differs from its memory's (``memlane.text.languages.detect``).

Variants (``--variants``, comma-separated):

- ``before``: the analyzer of VERSION 2 (English stems for every alphabet, Japanese kanji as Chinese
  words and kana as characters and pairs, Korean words as written), as it was
  (``tests/support/keywords_v2.py``);
- ``current``: ``text/keywords.py`` as it is;
- ``no-lemma``: ``current`` with each language's own term the Snowball stem of the word, not of its
  ``simplemma`` lemma;
- ``own-only``: the language's own term instead of the shared (English-stemmed) form, for text read
  as a language with a stemmer (the query and its memory then meet only when read as one language);
- ``no-fallback``: the detector's language alone (a text it calls English is English, though it holds
  none of English's own words and another language's function words);
- ``ja-sudachi``, ``ja-janome``: Japanese content words (nouns, verbs, adjectives) by SudachiPy
  (core dictionary, split mode B, normalised forms) or Janome (base forms);
- ``ko-kiwi``: Korean content morphemes (nouns, verb and adjective stems, roots, foreign words, numbers)
  by Kiwi.

The optional analyzers are imported only by their variants (``pip install sudachipy sudachidict-core
janome kiwipiepy``).

    python benchmarks/bench_keyword_languages.py --cases tests/data/retrieval_european.jsonl \\
        --variants before,current,no-lemma,own-only,no-fallback [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from memlane.text import keywords  # noqa: E402
from common import write_report  # noqa: E402

Analyzer = Callable[[str], list[str]]

# the analyzer before (VERSION 2), as it was: tests/support/keywords_v2.py
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.keywords_v2 import analyze as before  # noqa: E402


# -- variants of the current analyzer ---------------------------------------------------------------------

def no_lemma() -> Analyzer:
    _patched("_LEMMATIZED", frozenset())
    keywords._language.cache_clear()
    return keywords.analyze


def own_only() -> Analyzer:
    def spaced(words, language):
        if language is None:
            return original(words, None)
        kept = [w for w in words if w not in keywords.STOPWORDS and keywords._fold(w) not in language.stop_words]
        return [t for t in (language.term(w) for w in kept) if t]

    original = keywords._spaced
    return _patched("_spaced", spaced)


def no_fallback() -> Analyzer:
    from memlane.text import languages

    def text_language(text, lowered):
        if keywords._english(lowered):
            return None
        code = languages.detect(text)
        return keywords._language("ru" if code == "en" and keywords._CYRILLIC.search(text) else code)

    return _patched("_text_language", text_language)


_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff]")
_JAPANESE_RUN = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff々〆ヶー]+")
_HANGUL = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]")
#: Japanese verbs that carry grammar, not content (する, いる, ある, なる, できる)
_JA_LIGHT = frozenset("為る 居る 有る 成る 出来る する いる ある なる できる れる られる".split())


_CURRENT = keywords.analyze


def _split_off(text: str, pattern: re.Pattern[str], analyzer: Callable[[str], list[str]]) -> list[str]:
    """``analyzer``'s terms of the runs of ``pattern`` in ``text``, then the current analyzer's of the rest."""
    runs = pattern.findall(text)
    rest = pattern.sub(" ", text)
    return [t for run in runs for t in analyzer(run)] + _CURRENT(rest)


def ja_sudachi() -> Analyzer:
    from sudachipy import Dictionary, SplitMode

    tokenizer = Dictionary(dict="core").create(SplitMode.B)
    keep = {"名詞", "動詞", "形容詞", "形状詞", "副詞", "接頭辞"}

    def run_terms(run):
        return [m.normalized_form() for m in tokenizer.tokenize(run)
                if m.part_of_speech()[0] in keep and m.normalized_form() not in _JA_LIGHT]

    def analyze(text):
        if not _KANA.search(text):
            return _CURRENT(text)
        return _split_off(text, _JAPANESE_RUN, run_terms)
    return analyze


def ja_janome() -> Analyzer:
    from janome.tokenizer import Tokenizer

    tokenizer = Tokenizer()

    def run_terms(run):
        terms = []
        for token in tokenizer.tokenize(run):
            pos = token.part_of_speech.split(",")
            if pos[0] in ("名詞", "動詞", "形容詞", "副詞") and pos[1] not in ("代名詞", "非自立", "接尾") \
                    and token.base_form not in _JA_LIGHT:
                terms.append(token.base_form)
        return terms

    def analyze(text):
        if not _KANA.search(text):
            return _CURRENT(text)
        return _split_off(text, _JAPANESE_RUN, run_terms)
    return analyze


def ko_kiwi() -> Analyzer:
    from kiwipiepy import Kiwi

    kiwi = Kiwi()
    keep = {"NNG", "NNP", "NR", "VV", "VA", "XR", "SL", "SN", "SH", "MAG"}
    korean_run = re.compile(r"[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+(?:\s+[\uac00-\ud7af\u1100-\u11ff\u3130-\u318f]+)*")

    def run_terms(run):
        return [t.form for t in kiwi.tokenize(run) if t.tag.split("-")[0] in keep]

    def analyze(text):
        if not _HANGUL.search(text):
            return _CURRENT(text)
        return _split_off(text, korean_run, run_terms)
    return analyze


_PATCHES: list[tuple[str, Any]] = []


def _patched(name: str, value: Any) -> Analyzer:
    _PATCHES.append((name, getattr(keywords, name)))
    setattr(keywords, name, value)
    return keywords.analyze


VARIANTS: dict[str, Callable[[], Analyzer]] = {
    "before": lambda: before,
    "current": lambda: keywords.analyze,
    "no-lemma": no_lemma,
    "own-only": own_only,
    "no-fallback": no_fallback,
    "ja-sudachi": ja_sudachi,
    "ja-janome": ja_janome,
    "ko-kiwi": ko_kiwi,
}


@contextmanager
def variant(name: str):
    """``keywords.analyze`` replaced by the variant's analyzer (the stores and queries call it there)."""
    original = keywords.analyze
    analyzer = VARIANTS[name]()
    keywords.analyze = analyzer
    try:
        yield analyzer
    finally:
        keywords.analyze = original
        while _PATCHES:
            attr, value = _PATCHES.pop()
            setattr(keywords, attr, value)
        keywords._language.cache_clear()


def load_cases(paths: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for path in paths for line in Path(path).read_text(encoding="utf-8").splitlines()
            if line.strip()]


def _found(texts: list[str], expect: list[str]) -> tuple[bool, bool]:
    hits = [any(e in text for e in expect) for text in texts[:3]]
    return bool(hits) and hits[0], any(hits)


def measure(name: str, cases: list[dict[str, Any]], embedder: Any) -> dict[str, Any]:
    from memlane import Memory
    from memlane.core import scope as scopes

    rows: dict[str, dict[str, list[tuple[bool, bool]]]] = defaultdict(lambda: {"default": [], "keyword": []})
    misses = []
    with tempfile.TemporaryDirectory() as tmp, variant(name) as analyzer:
        config = {"vector_store": {"provider": "sqlite", "config": {"path": str(Path(tmp) / "m.db")}}}
        with Memory(config, embedder=embedder) as memory:
            for case in cases:
                user = f"{case['id']}-{uuid.uuid4().hex[:6]}"
                for text in case["memories"]:
                    memory.add(text, user_id=user, infer=False)
                where = scopes.scoped_filter({"user_id": user}, None)
                for query in case["queries"]:
                    default = [h["memory"] for h in memory.search(query["q"], user_id=user, limit=3)["results"]]
                    vector = embedder.embed([query["q"]], "query")[0]
                    keyword = [r.text for r, _, _ in memory.store.keyword_search(query["q"], vector, where, 3)]
                    rows[case["lang"]]["default"].append(_found(default, query["expect"]))
                    rows[case["lang"]]["keyword"].append(_found(keyword, query["expect"]))
                    if not _found(keyword, query["expect"])[1]:
                        misses.append({"q": query["q"], "terms": analyzer(query["q"]), "keyword": keyword})
        texts = [t for case in cases for t in case["memories"]]
        per_memory_us = _per_text_us(analyzer, texts)
    def rates(found):
        return {"hit@1": round(sum(a for a, _ in found) / len(found), 3),
                "hit@3": round(sum(b for _, b in found) / len(found), 3)}

    every = {stage: [f for lang in rows.values() for f in lang[stage]] for stage in ("default", "keyword")}
    return {"by_lang": {lang: {stage: rates(found) for stage, found in stages.items()} | {"questions": len(stages["default"])}
                        for lang, stages in sorted(rows.items())},
            "overall": {stage: rates(found) for stage, found in every.items()},
            "analyze_us_per_memory": per_memory_us, "keyword_misses": misses}


def _per_text_us(analyzer: Analyzer, texts: list[str], rounds: int = 5) -> dict[str, float]:
    """Mean microseconds per text: with every cache emptied first (a new memory: the language detector's
    answer computed), and of the detector alone on the same texts."""
    from memlane.text import languages

    def clear():
        for cached in (languages.detect, getattr(languages, "_detect", None), keywords._lemma, keywords._fold):
            if hasattr(cached, "cache_clear"):
                cached.cache_clear()

    for text in texts:  # everything loaded
        analyzer(text)
    analysis = detection_only = 0.0
    for _ in range(rounds):
        clear()
        started = time.perf_counter()
        for text in texts:
            analyzer(text)
        analysis += time.perf_counter() - started
        clear()
        started = time.perf_counter()
        for text in texts:
            languages.detect(text)
        detection_only += time.perf_counter() - started
    scale = 1e6 / (rounds * len(texts))
    return {"analyze": round(analysis * scale, 1), "of_which_detect_at_most": round(detection_only * scale, 1)}


def first_call_seconds(name: str, sample: str) -> float:
    """The variant's first analysis in a fresh process: imports, dictionaries and models loaded."""
    code = (f"import sys, time; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            "import bench_keyword_languages as b; started = time.perf_counter(); "
            f"ctx = b.variant({name!r}); analyzer = ctx.__enter__(); analyzer({sample!r}); "
            "print(time.perf_counter() - started)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return round(float(out.strip().splitlines()[-1]), 3)


def detection(cases: list[dict[str, Any]]) -> dict[str, Any]:
    from memlane.text import languages

    out = {}
    for case in cases:
        memories = [languages.detect(m) for m in case["memories"]]
        queries = [languages.detect(q["q"]) for q in case["queries"]]
        out[case["lang"]] = {"memories_as_own": round(sum(c == case["lang"] for c in memories) / len(memories), 2),
                             "questions_as_own": round(sum(c == case["lang"] for c in queries) / len(queries), 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", action="append", required=True, help="a cases file (repeatable)")
    parser.add_argument("--variants", default="before,current")
    parser.add_argument("--out")
    args = parser.parse_args()
    from memlane.embeddings.e5 import E5Embedder

    cases = load_cases(args.cases)
    embedder = E5Embedder()
    sample = " ".join(case["memories"][0] for case in cases)
    result: dict[str, Any] = {"cases": args.cases, "questions": sum(len(c["queries"]) for c in cases),
                              "detection": detection(cases), "variants": {}}
    for name in args.variants.split(","):
        report = measure(name, cases, embedder)
        report["first_call_s"] = first_call_seconds(name, sample)
        result["variants"][name] = report
    write_report(result, args.out)


if __name__ == "__main__":
    main()
