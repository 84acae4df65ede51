"""Language handling for the offline engine: scripts, sentences, and comparable terms.

English and Chinese (Simplified and Traditional, and code-switched text).
Traditional text is compared through OpenCC's Traditional→Simplified mapping,
so a memory written in either script matches a fact in the other.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

from memlane.ingest import lexicon
from memlane.text import languages
from memlane.text.languages.pack import LETTERS
from memlane.text.normalize import CJK as _CJK
from memlane.text.normalize import has_cjk, to_simplified

Script = Literal["en", "zh-Hans", "zh-Hant"]

_LATIN_WORD = re.compile(r"[a-z0-9]+(?:['’][a-z]+)?")


def script(text: str) -> Script:
    """``en`` without Chinese characters; ``zh-Hant`` when OpenCC would change any character."""
    if not has_cjk(text):
        return "en"
    return "zh-Hant" if to_simplified(text) != text else "zh-Hans"


def subject_word(text_script: Script, agent: bool = False) -> str:
    if agent:
        return "Agent" if text_script == "en" else ("助手" if text_script == "zh-Hans" else "助理")
    return {"en": "User", "zh-Hans": "用户", "zh-Hant": "使用者"}[text_script]


# -- sentences -----------------------------------------------------------------------------------

_EN_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])|\n+|;\s+")
_ZH_SENTENCE_END = re.compile(r"(?<=[。！？!?；;])|\n+")


def sentences(text: str) -> list[str]:
    """Split a message into sentences (English punctuation and Chinese full-width punctuation)."""
    parts = []
    for chunk in _ZH_SENTENCE_END.split(text):
        if not chunk or not chunk.strip():
            continue
        parts.extend(p for p in _EN_SENTENCE_END.split(chunk) if p and p.strip())
    return [p.strip() for p in parts]


def clauses_zh(sentence: str) -> list[str]:
    return [c.strip() for c in re.split(r"[，,、：:]", sentence) if c.strip()]


# -- terms for comparison -------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _stemmer():
    import snowballstemmer

    return snowballstemmer.stemmer("english")


def _concept_patterns() -> tuple[list[tuple[re.Pattern, str]], dict[str, str], list[tuple[str, str]]]:
    """English phrases (matched as phrases), English single words (matched on their stem), Chinese forms."""
    phrases, stems, cjk = [], {}, []
    for concept, forms in lexicon.CONCEPTS.items():
        for form in forms:
            if has_cjk(form):
                cjk.append((form, concept))
            elif re.fullmatch(r"[a-z]+", form):
                stems.setdefault(_stemmer().stemWord(form), concept)
            else:
                phrases.append((re.compile(r"(?<![a-z])" + re.escape(form) + r"(?![a-z])"), concept))
    # longest forms first so "risk tolerance" wins over "risk", "不喜欢" over "喜欢"
    phrases.sort(key=lambda item: -len(item[0].pattern))
    cjk.sort(key=lambda item: -len(item[0]))
    return phrases, stems, cjk


_LATIN_PHRASES, _LATIN_STEMS, _CJK_CONCEPTS = _concept_patterns()


@lru_cache(maxsize=4096)
def terms(text: str) -> frozenset[str]:
    """Comparable content of a statement: concept tokens, stemmed English content words,
    and Chinese content characters. Subject words, fillers and function words are dropped.
    Other languages: ``pack_terms``."""
    code = languages.detect(text)
    if code not in ("en", "zh"):
        return pack_terms(text, code)
    return _terms_en_zh(text)


#: an age said as a birthday or a bare number: "turned 4", "turns 40", "is 7" (not "is 7 km away")
_NUMBER = (r"(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
           r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[- ]\w+)?")
_TURNED = re.compile(rf"\bturn(?:s|ed|ing)?\s+{_NUMBER}\b|\b(?:is|are|was|am)\s+{_NUMBER}"
                     r"(?:\s*(?:years?|yrs?)(?:\s+old)?)?\s*(?:$|[,.;!]|\s+(?:and|now|today|this|next|last)\b)", re.I)


def _terms_en_zh(text: str) -> frozenset[str]:
    found: set[str] = set()
    if _TURNED.search(text):
        found.add("AGE")
    simplified = _fold_latin(to_simplified(text).lower().replace("’", "'"))
    # English concepts and words
    latin_text = simplified
    for pattern, concept in _LATIN_PHRASES:
        if pattern.search(latin_text):
            found.add(concept)
            latin_text = pattern.sub(" ", latin_text)
    for word in _LATIN_WORD.findall(latin_text):
        word = word[:-2] if word.endswith("'s") else word
        if word in lexicon.STOPWORDS_EN or (len(word) < 2 and not word.isdigit()):
            continue
        stem = _stemmer().stemWord(word)
        found.add(_LATIN_STEMS.get(stem, stem))
    # Chinese concepts and characters
    cjk_text = "".join(ch if _CJK.match(ch) else " " for ch in simplified)
    for word in lexicon.NOT_CONCEPT_ZH:
        cjk_text = cjk_text.replace(word, " ")
    for form, concept in _CJK_CONCEPTS:
        if form in cjk_text:
            found.add(concept)
            cjk_text = cjk_text.replace(form, " ")
    for word in sorted(lexicon.FUNCTION_ZH, key=len, reverse=True):
        cjk_text = cjk_text.replace(word, " ")
    found.update(ch for ch in cjk_text if _CJK.match(ch))
    return frozenset(found)


def _fold_latin(text: str) -> str:
    """Accents off Latin letters ("telefónica" -> "telefonica"), so a name compares the same in any language."""
    if text.isascii():
        return text
    return "".join(languages.fold(ch) if ch.isalpha() and not _CJK.match(ch) else ch for ch in text)


#: Korean particles and endings glued to a word's end: "인천에서" is "인천" (longest first)
_PARTICLES_KO = tuple(sorted("""에서 에게 에는 에도 으로 로는 로 에 은 는 이 가 을 를 의 도 와 과 하고 이랑 랑 까지 부터 처럼 보다 만
이에요 예요 이다 입니다""".split(), key=len, reverse=True))
_KANA_RUN = re.compile(r"[\u30a0-\u30ff\u31f0-\u31ffー]{2,}")
#: languages whose names take case endings ("w Krakowie", "Krakowa'dan", "в Яндексе")
_DECLINES_NAMES = frozenset({"pl", "tr", "ru", "uk", "fi", "hu", "cs", "sk", "lt", "lv", "et"})
_LATIN_NAME = re.compile(r"^[A-Za-z\u00c0-\u024f'’-]+$")
#: pack fields whose forms name a concept besides ``concepts`` itself
_CHANGE_CONCEPTS = (("moves", "RESIDENCE"),)


@lru_cache(maxsize=64)
def _bare_pack(code: str) -> languages.Pack:
    """A language without a pack: its words as written (Japanese: by character)."""
    return languages.Pack(code=code, name=languages.name(code), spaced=code != "ja")


@lru_cache(maxsize=4096)
def pack_terms(text: str, code: str) -> frozenset[str]:
    """Comparable content of a statement in language ``code`` (not English or Chinese), read with its
    pack (``text/languages``): concept tokens (the same as English's and Chinese's: "vivo en", 住んで,
    살아 -> RESIDENCE), then content words compared by stem, function words and first-person words
    dropped. A capitalised word inside a sentence is a name: compared folded and English-stemmed,
    as an English memory compares it ("Madrid", "Telefónica"), so names meet across languages.
    Japanese: its Chinese characters (as Chinese compares them) and katakana words; Korean: words
    without their particles."""
    pack = languages.pack(code) or _bare_pack(code)
    found: set[str] = set()
    if _TURNED.search(text):
        found.add("AGE")
    lexicon = pack.lexicon
    consumed: set[str] = set()
    groups = [*pack.concepts.items(), *((concept, getattr(pack, field)) for field, concept in _CHANGE_CONCEPTS)]
    for concept, forms in groups:
        for form in lexicon.find(text, tuple(forms)):
            found.add(concept)
            consumed.add(form)
    if not pack.spaced:  # Japanese
        rest = text
        for form in sorted(consumed | set(pack.first_person) | set(pack.possessives), key=len, reverse=True):
            rest = rest.replace(form, " ")
        found.update(k.lower() for k in _KANA_RUN.findall(rest))
        return frozenset(found | (_terms_en_zh(rest) - {"AGE"} if _CJK.search(rest) else set()))
    ignore = pack.stop_words + pack.first_person + pack.possessives + pack.negation + pack.now + pack.conjunctions
    consumed_keys = {key for form in consumed for key, _ in lexicon._compiled(form) if " " not in form}
    words = re.findall(rf"{LETTERS}+(?:['’-]{LETTERS}+)*", text)
    for i, word in enumerate(words):
        folded = languages.fold(word)
        if (len(folded) < 2 and not folded.isdigit()) or lexicon.is_one(word, ignore):
            continue
        if code == "ko":
            for particle in _PARTICLES_KO:
                if folded.endswith(particle) and len(folded) > len(particle):
                    folded = folded[:-len(particle)]
                    break
            found.add(folded)
            continue
        key = lexicon.key(word)
        if key in consumed_keys:
            continue
        name = word[:1].isupper() and word[1:2].islower() and (i > 0 or folded not in languages.vocabulary(code))
        if name and word.isascii() or name and _LATIN_NAME.match(word):
            # a name, compared as an English memory compares it ("Madrid", "Telefónica"), so names meet across
            # languages; in a language that declines names, its own stem too ("Krakowie", "Krakowa")
            found.add(_stemmer().stemWord(_fold_latin(word.lower())))
            if code not in _DECLINES_NAMES:
                continue
        found.add(key)
    return frozenset(found)


#: "User is Alice", "User is called Mara Lopez": a statement that says only who the user is
_IS_NAMED = re.compile(r"^(?:User|Agent) is (?:called |named )?[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2}\.?$")


def is_name_statement(text: str) -> bool:
    """Whether ``text`` only names the user ("User is Alice"), as formation writes "I'm Alice"."""
    return _IS_NAMED.match(text.strip()) is not None


def announces_change(text: str) -> bool:
    """A statement in a language with a pack that says something changed: a verb of moving or starting, or
    a marker of a new state ("ahora", "jetzt", 今は, 이제)."""
    code = languages.detect(text)
    pack = languages.pack(code) if code not in ("en", "zh") else None
    return pack is not None and pack.lexicon.has(text, pack.moves + pack.starts + pack.now)


def without(text: str, phrases: tuple[str, ...]) -> str:
    """``text`` (simplified, lower-cased) with every phrase removed: whole words for English, substrings for Chinese."""
    result = to_simplified(text).lower().replace("’", "'")
    for phrase in sorted(phrases, key=len, reverse=True):
        if has_cjk(phrase):
            result = result.replace(phrase, " ")
        else:
            result = re.sub(r"(?<![a-z])" + re.escape(phrase) + r"(?![a-z])", " ", result)
    return result


def contains_any(text: str, markers: tuple[str, ...]) -> bool:
    """Phrase match: whole words for English markers, substrings for Chinese ones. A clitic marker
    ("n't", "'ll") is part of the word before it, so it matches at that word's end ("doesn't")."""
    lowered = to_simplified(text).lower().replace("’", "'")
    for marker in markers:
        if has_cjk(marker):
            if marker in lowered:
                return True
        elif re.search(("" if _is_clitic(marker) else r"(?<![a-z])") + re.escape(marker) + r"(?![a-z])", lowered):
            return True
    return False


def _is_clitic(marker: str) -> bool:
    return marker.startswith("'") or marker.startswith("n'")


def scale_values(text: str) -> set[str]:
    """Members of a level/polarity scale (high, low, 高, 低 …) that the text uses."""
    lowered = to_simplified(text).lower()
    found = set()
    for scale in lexicon.SCALES:
        for value in scale:
            if (value in lowered) if has_cjk(value) else re.search(rf"\b{re.escape(value)}\b", lowered):
                found.add(value)
    return found
