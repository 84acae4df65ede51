"""First person → third person, checked over generated sentences: subjects' verbs × adverbs × tenses ×
negation. Every expected form is written out here by hand (not computed with the library under test),
so an output word is either the input's own word or the right inflection of it — never invented."""

from __future__ import annotations

import itertools

import pytest

from memlane.ingest.english import third_person

#: (base, third person singular, past, -ing, object) — irregular and -es/-ies spellings included
VERBS = [
    ("like", "likes", "liked", "liking", "jazz"),
    ("enjoy", "enjoys", "enjoyed", "enjoying", "long walks"),
    ("drink", "drinks", "drank", "drinking", "green tea"),
    ("watch", "watches", "watched", "watching", "old films"),
    ("teach", "teaches", "taught", "teaching", "chemistry"),
    ("fix", "fixes", "fixed", "fixing", "old radios"),
    ("carry", "carries", "carried", "carrying", "a notebook"),
    ("study", "studies", "studied", "studying", "Japanese"),
    ("go", "goes", "went", "going", "to the gym"),
    ("miss", "misses", "missed", "missing", "my hometown"),
    ("play", "plays", "played", "playing", "the violin"),
    ("buy", "buys", "bought", "buying", "organic food"),
]
ADVERBS = ["", "really", "no longer", "rarely", "particularly", "absolutely", "still", "also", "never", "usually",
           "often", "definitely"]


def _object(obj: str) -> str:
    return obj.replace("my ", "their ")  # the subject is named already: "User misses their hometown"


def _cases():
    for (base, third, past, ing, obj), adverb in itertools.product(VERBS, ADVERBS):
        a = f"{adverb} " if adverb else ""
        o = _object(obj)
        yield f"I {a}{base} {obj}", f"User {a}{third} {o}"                      # simple present
        yield f"I {a}{past} {obj}", f"User {a}{past} {o}"                        # simple past: as written
        yield f"I am {a}{ing} {obj}", f"User is {a}{ing} {o}"                     # progressive
        yield f"I will {a}{base} {obj}", f"User will {a}{base} {o}"              # modal
        if adverb in ("", "really", "still", "definitely", "usually", "absolutely"):
            yield f"I {a}don't {base} {obj}", f"User {a}doesn't {base} {o}"     # negation
            yield f"I {a}do not {base} {obj}", f"User {a}does not {base} {o}"
            yield f"I {a}didn't {base} {obj}", f"User {a}didn't {base} {o}"


CASES = sorted(set(_cases()))


def test_the_table_is_a_few_hundred_sentences():
    assert len(CASES) >= 300


@pytest.mark.parametrize("sentence, expected", CASES)
def test_third_person(sentence, expected):
    assert third_person(sentence, "User") == expected


MORE = [
    ("I have two rabbits", "User has two rabbits"),
    ("I've been living in Oslo", "User has been living in Oslo"),
    ("I'm not a morning person", "User is not a morning person"),
    ("I haven't seen the sea", "User hasn't seen the sea"),
    ("I quit IBM and now work at Canva", "User quit IBM and now works at Canva"),
    ("I like cats and love dogs", "User likes cats and loves dogs"),
    ("I like cheese and wine", "User likes cheese and wine"),
    ("I really like to swim and run", "User really likes to swim and run"),
    ("I used to smoke", "User used to smoke"),
    ("My wife teaches math and I fix her bike", "User's wife teaches math and User fixes her bike"),
]


@pytest.mark.parametrize("sentence, expected", MORE)
def test_third_person_more(sentence, expected):
    assert third_person(sentence, "User") == expected
