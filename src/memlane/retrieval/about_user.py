"""Questions that ask for everything known about the speaker, or about someone of theirs.

"What do you know about me?", "Tell me about myself", "What have I told you?", 我的情况你知道哪些？,
¿Qué sabes de mí?, Was weißt du über mich? name no topic a memory could share words or meaning
with: a similarity search ranks the scope's memories by chance and a threshold drops them all. Such
a question is read from its structure, in the language it is asked in (the language packs,
``text/languages``):

- it asks: a question word, a question mark or particle, or a request (tell me, dime, 告诉我);
- it has a verb of knowing, remembering, telling or summing up (``Pack.recall``: know, remember,
  told, summarise; sabes, weißt, 知道, 记得, 覚えて);
- the speaker is in it outside the request ("me", "I", mí, mich, 我; the "me" of "tell me" is
  whom to tell, so "Tell me everything" is not about the speaker);
- nothing else is: every other word is a function word of the language, the listener, "about", or
  a word for all of it (``Pack.broad``: everything, information, 一切). "Do you remember where I
  parked?" keeps "parked", "What do you know about Python?" keeps "Python": normal searches.

When what is left is one of the speaker's people ("my wife", mi esposa, 我老婆: ``Pack.relations``,
a possessive before it), the question is about them. The searcher answers both from the scope's
memories (``about_answer.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from memlane.ingest import lexicon
from memlane.text import languages
from memlane.text.languages import Pack
from memlane.text.languages.pack import WORD
from memlane.text.normalize import to_simplified

#: Chinese characters and kana
CJK_OR_KANA = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

#: the parties a question may ask about (people and pets; "my work" is a topic, searched as one)
PEOPLE = ("spouse", "child", "sibling", "parent", "friend", "pet")
#: a longer text is a question about something
MAX_WORDS = 16
MAX_CHARS = 80
_ASKED = re.compile(r"[?？؟]")

#: English, read as the packs are (the English reader has no pack of its own)
ENGLISH = Pack(
    code="en", name="English", stemmer="english",
    first_person=("i", "me", "my", "myself", "mine", "we", "us", "our", "ourselves", "i've", "i'm", "i'd", "i'll"),
    possessives=("my", "our"),
    relations={party: tuple(w for w in forms if w.isascii()) for party, forms in lexicon.PARTIES.items()},
    question_words=("what", "what's", "whats", "how much", "do you", "did you", "have you", "can you", "could you",
                    "would you", "will you", "are you", "do i", "did i", "have i"),
    requests=("tell me", "remind me", "show me", "give me", "list", "please", "can you", "could you", "would you"),
    stop_words=("do", "does", "did", "have", "has", "had", "is", "are", "am", "was", "were", "be", "been", "can",
                "could", "would", "will", "the", "a", "an", "that", "this", "so", "far", "up", "to", "just", "really",
                "actually", "else", "already", "yet", "ever", "now", "currently"),
    recall=("know", "knows", "knew", "known", "remember", "remembers", "remembered", "recall", "recalls", "tell",
            "told", "said", "say", "shared", "mentioned", "summarise", "summarize", "summary", "describe",
            "learned", "learnt", "stored", "saved", "kept", "have on"),
    broad=("you", "your", "u", "ya", "about", "of", "on", "regarding", "concerning", "everything", "anything", "all", "things",
           "thing", "stuff", "information", "info", "details", "memories", "far", "so far", "whole", "lot", "much",
           "what"),
)

#: Chinese (Simplified; text is converted before reading), matched by substring
CHINESE = Pack(
    code="zh", name="Chinese", spaced=False,
    first_person=("我们", "我", "咱们", "咱", "本人"),
    possessives=("我们的", "我的", "我们", "我"),
    relations={party: tuple(w for w in forms if not w.isascii()) for party, forms in lexicon.PARTIES.items()},
    question_words=("什么", "哪些", "多少", "啥", "几", "哪"),
    question_particles=("吗", "呢", "么"),
    requests=("告诉我", "跟我说说", "跟我说", "给我讲讲", "给我说说", "说说", "讲讲", "列出", "总结一下", "总结", "概括",
              "请", "帮我"),
    recall=("知道", "记得", "记住", "记下", "了解", "说过", "讲过", "提过", "告诉过", "告诉", "掌握", "记录", "存了", "记了"),
    broad=("你", "您", "关于", "对于", "对", "都", "些", "一切", "所有", "全部", "情况", "事情", "事儿", "事", "信息",
           "资料", "东西", "的", "了", "过", "有", "还", "多", "啊", "呀", "吧", "下", "一下"),
)


@dataclass(frozen=True)
class AboutQuestion:
    """A question asking for everything known about ``party``: ``"user"`` (the speaker) or one of ``PEOPLE``."""

    party: str
    language: str


def pack_of(code: str) -> Pack | None:
    if code == "en":
        return ENGLISH
    if code == "zh":
        return CHINESE
    return languages.pack(code)


@lru_cache(maxsize=4096)
def read(text: str) -> AboutQuestion | None:
    """The question ``text`` asks if it asks for everything known about the speaker or one of their people
    (module docstring), else None."""
    text = text.strip()
    if not text or len(text) > MAX_CHARS or len(text.split()) > MAX_WORDS or not _may_recall(text):
        return None
    code = languages.detect(text)
    pack = pack_of(code)
    if pack is None or not pack.recall:
        return None
    if code == "zh":
        text = to_simplified(text)
    lex = pack.lexicon
    if not lex.has(text, pack.recall):
        return None
    asks = bool(_ASKED.search(text)) or lex.has(text, pack.question_words + pack.question_particles + pack.requests) \
        or lex.starts(text, pack.recall) is not None
    if not asks:
        return None
    request = lex.covered(text, pack.requests)
    speaker = lex.covered(text, pack.first_person + pack.possessives)
    if not any(s and not r for s, r in zip(speaker, request)):
        return None  # "Tell me everything": the "me" is whom to tell
    allowed = (pack.question_words + pack.question_particles + pack.requests + pack.recall + pack.first_person
               + pack.possessives + pack.broad + pack.stop_words)
    covered = lex.covered(text, allowed)
    if not _left(text, covered, pack):
        return AboutQuestion("user", code)
    if not lex.has(text, pack.possessives):
        return None
    for party, forms in pack.relations.items():  # "my wife": all that is left is one of the speaker's people
        if party in PEOPLE and not _left(text, [a or b for a, b in zip(covered, lex.covered(text, forms))], pack):
            return AboutQuestion(party, code)
    return None


def _may_recall(text: str) -> bool:
    """Whether ``text`` may hold a verb of ``Pack.recall`` in some language: a word opening as one does, or
    Chinese or Japanese text. Cheap, so that most questions skip telling their language."""
    if CJK_OR_KANA.search(text):
        return True
    whole, openings = _recall_openings()
    return any(word in whole or word[:4] in openings or word[:2] in openings or word[:3] in openings
               for word in map(languages.fold, WORD.findall(text)))


@lru_cache(maxsize=1)
def _recall_openings() -> tuple[frozenset[str], frozenset[str]]:
    """The longest word of each form of every spaced pack's ``recall`` (folded; a form matches only where all its
    words are): short ones whole, the others by their first four letters (a prefix form by itself: "기억-")."""
    packs = [ENGLISH, *(languages.pack(code) for code in languages.PACKS)]
    words = [(languages.fold(max(WORD.findall(form.rstrip("-")), key=len)), form.endswith("-"))
             for pack in packs if pack is not None and pack.spaced for form in pack.recall]
    return (frozenset(w for w, prefix in words if len(w) < 4 and not prefix),
            frozenset(w[:4] for w, prefix in words if len(w) >= 4 or prefix))


def _left(text: str, covered: list[bool], pack: Pack) -> list[str]:
    """The words (a language without spaces: characters) of ``text`` no form covers, punctuation aside."""
    if not pack.spaced:
        return [ch for ch, c in zip(text, covered) if not c and ch.isalnum()]
    return [w for w, c in zip(pack.lexicon.words(text), covered) if not c]
