"""A language pack: the words the offline engine needs to read one language.

A pack is data, not rules: lists of words and phrases a speaker of the language uses to talk
about themselves (first person, possessives, the people around them), to ask (question words,
question particles), to ask the assistant for something (requests), to open and close a
conversation (small talk), to negate, and to change or end a state (moving, leaving, selling,
quitting, starting). ``Lexicon`` matches them in text the same way for every language:

- a language written with spaces (``spaced``) is read word by word: lower-cased, its words
  compared on their Snowball stems when the pack names a stemmer (so one listed form of a verb
  finds the others: "vivo" and "vive" meet at "viv"), else as written; a form ending in ``-`` is a
  prefix ("mieszk-" finds "mieszkam", "mieszkasz"); a form of several words is matched as a phrase;
- a language written without spaces (Japanese) is matched by substring, as Chinese is.

Forms are written lower-case, with their accents. Keep entries general: how people talk about
themselves, not any particular conversation.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

#: the concepts a pack may name forms for (the same tokens ``ingest/lexicon.py`` uses for English and Chinese)
CONCEPTS = ("RESIDENCE", "JOB", "AGE", "NAME", "ALLERGY", "DIET_VEGETARIAN", "DIET_VEGAN", "PREF", "DISLIKE", "PET",
            "SPOUSE", "ANNIVERSARY")
#: the parties a relation word may name (who a statement is about when it is not the speaker)
PARTIES = ("spouse", "child", "sibling", "parent", "friend", "pet", "work")

#: combining marks that belong inside a word (Python's \w leaves them out): Devanagari vowel signs and virama,
#: Arabic harakat and shadda, Thai vowels and tones, joiners; a word is letters and digits with them
MARKS = ("\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
         "\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963\u0981-\u0983\u09bc-\u09d7\u0a01-\u0a03"
         "\u0a3c-\u0a51\u0b82\u0bbe-\u0bcd\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u200c\u200d")
LETTERS = rf"(?:[^\W_]|[{MARKS}])"
#: a word of any script (hyphenated words kept whole)
WORD = re.compile(rf"{LETTERS}+(?:-{LETTERS}+)*")
_WORD = WORD


@lru_cache(maxsize=32)
def stemmer(algorithm: str):
    import snowballstemmer

    return snowballstemmer.stemmer(algorithm)


@lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """``word`` lower-cased without the accents of its Latin letters ("Telefónica" -> "telefonica", Turkish
    "başladım" -> "basladım"); letters of other scripts keep theirs (Cyrillic й stays й)."""
    out: list[str] = []
    for ch in unicodedata.normalize("NFKD", lower(word)):
        if unicodedata.combining(ch) and out and out[-1].isascii():
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def lower(text: str) -> str:
    """Lower case that keeps Turkish İ one letter ("İstanbul" -> "istanbul", not i + a combining dot)."""
    return text.replace("İ", "i").lower()


@dataclass(frozen=True)
class Pack:
    """The words of one language (see the module's docstring). Every field but ``code`` and ``name``
    may be left empty: the engine then does without it (a language with no pack at all is read by
    punctuation and script alone)."""

    code: str
    name: str
    #: Snowball algorithm (``snowballstemmer.algorithms()``) its words are compared by; None: as written
    stemmer: str | None = None
    #: words are separated by spaces (False: Japanese, matched by substring)
    spaced: bool = True
    #: the verb comes last (ja, ko, tr, hi): a request or a question particle ends a clause rather than opening it
    verb_final: bool = False
    #: the speaker says who they are without a pronoun ("Vivo en Madrid"): a statement without a subject is theirs
    pro_drop: bool = False
    #: words that make a clause about the speaker: I, me, my, we, our, us (all forms)
    first_person: tuple[str, ...] = ()
    #: "my" / "our" before a noun (all genders and numbers): "mi esposa", "meine Frau"
    possessives: tuple[str, ...] = ()
    #: party -> nouns for the people and things in the speaker's life (wife, son, dog, company …)
    relations: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: words that open a question (what, where, how, why, which, who, when, how much …)
    question_words: tuple[str, ...] = ()
    #: particles that end a question said without "?" (ja か, ko 까, ru ли)
    question_particles: tuple[str, ...] = ()
    #: phrases that open a request to the assistant (can you, could you, tell me, recommend, remind me …)
    requests: tuple[str, ...] = ()
    #: greetings, thanks, farewells, acknowledgements, reactions, laughter: a clause made of them is small talk
    small_talk: tuple[str, ...] = ()
    #: words that may stand beside small talk and say nothing (ok, yes, well, so, super, very, you …)
    fillers: tuple[str, ...] = ()
    #: openers of a reason clause, dropped before the statement they introduce (since, as, because, given that)
    reasons: tuple[str, ...] = ()
    #: conjunctive endings trimmed at the end of a clause (ja んですが, けど; ko 는데): the statement without them
    clause_endings: tuple[str, ...] = ()
    #: "and": where a compound statement may be cut in two
    conjunctions: tuple[str, ...] = ()
    #: negation words (not, never, no longer …)
    negation: tuple[str, ...] = ()
    #: markers of a new state (now, from now on, these days)
    now: tuple[str, ...] = ()
    #: function words (articles, prepositions, pronouns, auxiliaries) not compared between statements
    stop_words: tuple[str, ...] = ()
    #: concept -> forms (``CONCEPTS``): where someone lives, their job, age, name, allergies, diet, likes, dislikes,
    #: pets, spouse, anniversaries (a date of birth is ``AGE``)
    concepts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: verbs that end a state: leave, quit, resign, sell, give up, stop, break up, divorce, cancel, close …
    endings: tuple[str, ...] = ()
    #: verbs of moving house
    moves: tuple[str, ...] = ()
    #: verbs of starting something new (a job, a company, a course)
    starts: tuple[str, ...] = ()
    #: verbs of knowing, remembering, telling and summing up, as a question or request to the assistant uses them
    #: (know, remember, told, summarise): asked about the speaker and nothing else, they ask for all that is known
    #: of them ("What do you know about me?", ``retrieval/about_user.py``)
    recall: tuple[str, ...] = ()
    #: words such a question may hold besides: the listener (you), "about", "of", and words for all of it or for
    #: no particular thing (everything, anything, things, information)
    broad: tuple[str, ...] = ()

    @cached_property
    def lexicon(self) -> "Lexicon":
        return Lexicon(self)


class Lexicon:
    """A pack's forms compiled for matching (module docstring)."""

    def __init__(self, pack: Pack):
        self.pack = pack

    # -- words -------------------------------------------------------------------------------

    def words(self, text: str) -> list[str]:
        """The words of ``text``, lower-cased (French elisions split: "j'habite" -> "j", "habite")."""
        return [w.lower() for w in _WORD.findall(lower(text).replace("’", "'").replace("'", " "))]

    def key(self, word: str) -> str:
        """What a word is compared by: its stem (accents folded after stemming), or the word."""
        low = lower(word)
        if self.pack.stemmer:
            low = stemmer(self.pack.stemmer).stemWord(low)
        return fold(low)

    def _form(self, form: str) -> tuple[tuple[str, bool], ...]:
        """A form as (key, is_prefix) per word."""
        parts = []
        for raw in form.lower().replace("’", "'").replace("'", " ").split() if self.pack.spaced else [form]:
            prefix = raw.endswith("-") and len(raw) > 1
            raw = raw.rstrip("-") if prefix else raw
            parts.append((fold(raw) if prefix else self.key(raw), prefix))
        return tuple(parts)

    def find(self, text: str, forms: tuple[str, ...]) -> list[str]:
        """The forms of ``forms`` that ``text`` contains, in the order of ``forms``."""
        if not forms:
            return []
        if not self.pack.spaced:
            return [f for f in forms if f in text]
        keys = [(self.key(w), fold(w)) for w in self.words(text)]
        singles, prefixes, phrases = self._index(forms)
        hit = {form for key, _ in keys for form in singles.get(key, ())}
        hit.update(form for _, folded in keys for prefix, form in prefixes if folded.startswith(prefix))
        hit.update(form for parts, form in phrases
                   if any(self._at(keys, i, parts) for i in range(len(keys) - len(parts) + 1)))
        return [form for form in forms if form in hit]

    def _index(self, forms: tuple[str, ...]):
        """``forms`` compiled once: one-word forms by key, prefix forms, and phrases."""
        cache = self.__dict__.setdefault("_indexes", {})
        if forms not in cache:
            singles: dict[str, list[str]] = {}
            prefixes, phrases = [], []
            for form in forms:
                parts = self._compiled(form)
                if len(parts) == 1 and not parts[0][1]:
                    singles.setdefault(parts[0][0], []).append(form)
                elif len(parts) == 1:
                    prefixes.append((parts[0][0], form))
                elif parts:
                    phrases.append((parts, form))
            cache[forms] = (singles, tuple(prefixes), tuple(phrases))
        return cache[forms]

    def starts(self, text: str, forms: tuple[str, ...], *, exact: bool = False) -> str | None:
        """The first form ``text`` opens with (after punctuation), or None. ``exact``: words compared as
        written, accents included (question words: Spanish "cómo" asks, "como" does not)."""
        if not forms:
            return None
        stripped = text.lstrip(" ¿¡\"'«“「『(-–—")
        if not self.pack.spaced:
            return next((f for f in sorted(forms, key=len, reverse=True) if stripped.startswith(f)), None)
        if exact:
            words = self.words(stripped)
            return next((f for f in sorted(forms, key=len, reverse=True)
                         if words[:len(f.split())] == f.split()
                         or (f.endswith("-") and words and words[0].startswith(f[:-1]))), None)
        keys = [(self.key(w), fold(w)) for w in self.words(stripped)]
        for form in sorted(forms, key=len, reverse=True):
            parts = self._compiled(form)
            if parts and self._at(keys, 0, parts):
                return form
        return None

    def covered(self, text: str, forms: tuple[str, ...]) -> list[bool]:
        """For each word of ``text`` (``words``; a language without spaces: each character), whether a form of
        ``forms`` found there covers it."""
        if not self.pack.spaced:
            marks = [False] * len(text)
            for form in forms:
                for match in re.finditer(re.escape(form), text):
                    marks[match.start():match.end()] = [True] * len(form)
            return marks
        keys = [(self.key(w), fold(w)) for w in self.words(text)]
        marks = [False] * len(keys)
        for i in range(len(keys)):
            for form in forms:
                parts = self._compiled(form)
                if parts and self._at(keys, i, parts):
                    marks[i:i + len(parts)] = [True] * len(parts)
        return marks

    def has(self, text: str, forms: tuple[str, ...]) -> bool:
        return bool(self.find(text, forms))

    def is_one(self, word: str, forms: tuple[str, ...]) -> bool:
        """Whether the single ``word`` is one of the one-word ``forms`` (as ``find`` matches them)."""
        if not self.pack.spaced:
            return word in forms
        singles, prefixes, _ = self._index(forms)
        folded = fold(word)
        return self.key(word) in singles or any(folded.startswith(prefix) for prefix, _ in prefixes)

    def _compiled(self, form: str) -> tuple[tuple[str, bool], ...]:
        cache = self.__dict__.setdefault("_cache", {})
        if form not in cache:
            cache[form] = self._form(form)
        return cache[form]

    @staticmethod
    def _at(keys: list[tuple[str, str]], i: int, parts: tuple[tuple[str, bool], ...]) -> bool:
        if i + len(parts) > len(keys):
            return False
        for (key, folded), (want, prefix) in zip(keys[i:i + len(parts)], parts):
            if prefix:
                if not folded.startswith(want):
                    return False
            elif key != want:
                return False
        return True
