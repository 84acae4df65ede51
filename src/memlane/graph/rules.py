"""The offline relation extractor: a table of common English and Chinese patterns.

Each pattern reads a subject (first person, or an English capitalised name), an
optional negation ("no longer", "don't", "不再", "不") and an object, and yields
a ``Triple`` with a canonical relationship (``likes``, ``lives_in`` …). First
person ("I", "me", "我") becomes ``models.USER``, which the facade maps to the
scope's user entity. Objects end at punctuation or a connective ("because",
"但是") and lose leading articles; "tea and coffee" gives two triples for the
relationships that hold many values.

"The user" / "User" / 用户 (how agents write notes) is the user too. A predicate
joined by "and" keeps its subject ("I left Google and joined Meta"; in Chinese a
clause without a subject after one that has 我: 我不再在北京工作了，现在在深圳工作).
Changes read as two relations: "moved from Paris to Lisbon" gives ``lives_in
Lisbon`` and retracts ``lives_in Paris``; "left / quit Google" (我从腾讯离职)
retracts ``works_at Google``; "joined Meta" (加入了字节) gives ``works_at Meta``.

It is deliberately conservative: a sentence it does not understand yields
nothing rather than a wrong relation. An LLM extractor covers the rest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from memlane.core.graph_models import USER, Triple

# -- English ---------------------------------------------------------------------------------------

_NOT_NAMES = {"she", "he", "they", "we", "you", "it", "this", "that", "there", "what", "who", "where", "when",
              "why", "how", "do", "does", "did", "my", "our", "your", "his", "her", "their", "the", "a", "an",
              "yes", "no", "and", "but", "so", "if", "then", "also", "maybe", "today", "yesterday", "now"}

#: (verb phrase regex, relationship). Auxiliaries ("I'm", "I've been", "am") are part of the phrase.
_EN_VERBS: list[tuple[str, str]] = [
    (r"(?:really\s+|also\s+|still\s+)?(?:like|likes|enjoy|enjoys|am\s+fond\s+of|is\s+fond\s+of|'m\s+fond\s+of)", "likes"),
    (r"(?:really\s+|also\s+|still\s+)?(?:love|loves|adore|adores)", "loves"),
    (r"(?:really\s+|also\s+|still\s+)?(?:hate|hates|dislike|dislikes|can't\s+stand|cannot\s+stand|detest|detests)", "hates"),
    (r"(?:(?:now\s+)?(?:work|works|am\s+working|'m\s+working|is\s+working)\s+(?:at|for)|am\s+employed\s+(?:at|by)"
     r"|'m\s+employed\s+(?:at|by)|is\s+employed\s+(?:at|by)|(?:have\s+|'ve\s+|has\s+|just\s+|recently\s+)?joined"
     r"|(?:have\s+|'ve\s+|has\s+|just\s+|recently\s+)?started\s+(?:working\s+)?(?:at|for))", "works_at"),
    (r"(?:(?:now\s+|currently\s+)?(?:live|lives|am\s+living|'m\s+living|is\s+living|(?:have|'ve|has)\s+been\s+living)"
     r"\s+in|(?:have\s+|'ve\s+|has\s+|just\s+)?(?:moved|relocated)\s+to|(?:am|'m|is)\s+based\s+in)", "lives_in"),
    (r"(?:am|'m|is|got|get)\s+married\s+to|married", "married_to"),
    (r"(?:was|were)\s+born\s+in", "born_in"),
    (r"(?:have|has|own|owns|'ve\s+got|have\s+got|has\s+got)\s+(?:a|an|one|two|three)\s+", "has"),
]
_EN_NEGATION = (r"(?:no\s+longer|don't|do\s+not|doesn't|does\s+not|never|am\s+not|'m\s+not|is\s+not|isn't"
                r"|not\s+anymore)")
_EN_USER = r"(?:[Tt]he\s+)?[Uu]ser"
_EN_SUBJECT = r"(?P<subject>\bI\b|\b" + _EN_USER + r"\b(?!')|\b[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)"
_EN_PATTERNS = [
    (re.compile(
        _EN_SUBJECT + r"(?P<neg>\s+" + _EN_NEGATION + r")?\s*(?:'d\s+)?\s*(?P<verb>" + verb + r")\s*(?P<object>[^,.;!?\n]+)"
        if relationship == "has" else
        _EN_SUBJECT + r"(?P<neg>\s+" + _EN_NEGATION + r")?\s*(?P<verb>" + verb + r")\s+(?P<object>[^,.;!?\n]+)"),
     relationship)
    for verb, relationship in _EN_VERBS
]
#: "My wife is Sarah", "my name is Tom", "my husband's name is Li"
_EN_MY = r"\b(?:[Mm]y|" + _EN_USER + r"'s)"
_EN_POSSESSIVE = [
    (re.compile(_EN_MY + r"\s+(?:wife|husband|spouse)(?:'s\s+name)?\s+is\s+(?:called\s+|named\s+)?(?P<object>[^,.;!?\n]+)"),
     "married_to"),
    (re.compile(_EN_MY + r"\s+name\s+is\s+(?P<object>[^,.;!?\n]+)|\bI\s+am\s+called\s+(?P<object2>[^,.;!?\n]+)"), "name"),
]
_EN_WHEN = r"(?:have\s+|'ve\s+|has\s+|had\s+|just\s+|recently\s+|finally\s+|already\s+)*"
#: changes: (pattern, [(relationship, group, negated)]) — the new relation first, so that a single-valued
#: relationship supersedes the old one, then the retraction of the old value
_EN_CHANGES: list[tuple[re.Pattern[str], list[tuple[str, str, bool]]]] = [
    (re.compile(_EN_SUBJECT + r"\s+" + _EN_WHEN + r"(?:moved|relocated)\s+from\s+(?P<old>[^,.;!?\n]+?)\s+to\s+"
                r"(?P<object>[^,.;!?\n]+)"), [("lives_in", "object", False), ("lives_in", "old", True)]),
    (re.compile(_EN_SUBJECT + r"\s+" + _EN_WHEN + r"(?:left|quit|resigned\s+from|(?:am|'m|is)\s+leaving)\s+"
                r"(?:(?:my|his|her|their)\s+(?:job|position|role)\s+(?:at|with)\s+(?P<old>[^,.;!?\n]+)"
                r"|(?P<org>[A-Z][^,.;!?\n]*))"), [("works_at", "old", True), ("works_at", "org", True)]),
]
#: "and <verb>": a predicate that keeps the subject of its sentence ("I live in Paris and work at Google")
_EN_AND_VERB = re.compile(
    r"\s*\band\s+(?=(?:then\s+|now\s+|also\s+|recently\s+|just\s+|still\s+)?(?:joined|started|work|works|live|lives"
    r"|moved|relocated|like|likes|love|loves|enjoy|enjoys|hate|hates|dislike|dislikes|left|quit|own|owns|am|is)\b)")
_EN_LEAD = re.compile(r"^\s*(?i:(?:actually|so|well|also|and|but|btw|big\s+news)\b[,:!]?\s*)*" + _EN_SUBJECT)
_EN_STOP = re.compile(
    r"\s+(?:and\s+(?:i|i'm|i've|my|we|he|she|they|it)|because|but|since|so|though|although|when|while|which|who|where|now|anymore|any\s+more|these\s+days"
    r"|nowadays|very\s+much|a\s+lot|too|as\s+well|either|with\s+my|for\s+\d|named|called|last|next|ago|yesterday|today|recently|tomorrow|this\s+(?:week|month|year|morning|summer|winter)|in\s+\d{4})\b.*$", re.IGNORECASE)
_EN_ARTICLE = re.compile(r"^(?:the|a|an|my|some|really)\s+", re.IGNORECASE)
_EN_AND = re.compile(r"\s*(?:,|\band\b|\bor\b|&)\s*")

# -- Chinese ---------------------------------------------------------------------------------------

_ZH_END = r"[^，。！？；、,.!?;\s]"
_ZH_SELF = r"(?:我|用户|用戶|使用者)"  # first person, or the user as agents' notes name them
_ZH_NEGATION = r"(?P<neg>不再|再也不|已经不|已經不|不)?"
_ZH_DEGREE = r"(?:很|也|还|還|真的|特别|特別|非常|更|最|现在|現在)?"
_ZH_NOW = r"(?:已经|已經|刚|剛|刚刚|剛剛|现在|現在|目前)?"
_ZH_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(_ZH_SELF + _ZH_NEGATION + _ZH_DEGREE + r"(?:喜欢|喜歡|喜爱|喜愛)(?P<object>" + _ZH_END + r"+)"), "likes"),
    (re.compile(_ZH_SELF + _ZH_NEGATION + _ZH_DEGREE + r"(?:热爱|熱愛|爱|愛)(?P<object>" + _ZH_END + r"+)"), "loves"),
    (re.compile(_ZH_SELF + _ZH_NEGATION + _ZH_DEGREE + r"(?:讨厌|討厭|厌恶|厭惡|受不了)(?P<object>" + _ZH_END + r"+)"), "hates"),
    (re.compile(_ZH_SELF + _ZH_NEGATION + r"(?:现在|現在|目前)?(?:住在|生活在|居住在)(?P<object>" + _ZH_END + r"+)"), "lives_in"),
    (re.compile(_ZH_SELF + _ZH_NOW + r"(?:搬到|搬去|搬回)了?(?P<object>" + _ZH_END + r"+)"), "lives_in"),
    (re.compile(_ZH_SELF + _ZH_NEGATION + r"(?:现在|現在|目前)?在(?P<object>" + _ZH_END + r"+?)(?:工作|上班|任职|任職)"), "works_at"),
    (re.compile(_ZH_SELF + _ZH_NOW + r"(?:加入了?|入职了?|入職了?|跳槽到了?|跳槽去了?)(?P<object>" + _ZH_END + r"+)"), "works_at"),
    (re.compile(_ZH_SELF + r"(?:的)?(?:妻子|老婆|太太|丈夫|老公|爱人|愛人)(?:的名字)?(?:是|叫)(?P<object>" + _ZH_END + r"+)"), "married_to"),
    (re.compile(_ZH_SELF + r"(?:出生在|出生于|出生於|生于|生於|生在)(?P<object>" + _ZH_END + r"+)"), "born_in"),
    (re.compile(_ZH_SELF + r"(?:家)?(?:有|养了|養了)(?:一|两|兩|三)?(?:只|隻|个|個|条|條|辆|輛|台|位|匹)?(?P<object>" + _ZH_END + r"+)"), "has"),
    (re.compile(_ZH_SELF + r"(?:的名字)?(?:叫|是叫|名叫)(?P<object>" + _ZH_END + r"+)"), "name"),
]
_ZH_CHANGES: list[tuple[re.Pattern[str], list[tuple[str, str, bool]]]] = [
    (re.compile(_ZH_SELF + _ZH_NOW + r"从(?P<old>" + _ZH_END + r"+?)(?:搬到|搬去|搬回)了?(?P<object>" + _ZH_END + r"+)"),
     [("lives_in", "object", False), ("lives_in", "old", True)]),
    (re.compile(_ZH_SELF + r"(?:从|從)(?P<old>" + _ZH_END + r"+?)(?:搬到|搬去|搬回)了?(?P<object>" + _ZH_END + r"+)"),
     [("lives_in", "object", False), ("lives_in", "old", True)]),
    (re.compile(_ZH_SELF + _ZH_NOW + r"(?:(?:从|從)(?P<old>" + _ZH_END + r"+?)(?:离职|離職|辞职|辭職)"
                r"|(?:离开|離開)了?(?P<org>" + _ZH_END + r"+)|(?:辞去|辭去)了?(?P<job>" + _ZH_END + r"+?)的(?:工作|职位|職位))"),
     [("works_at", "old", True), ("works_at", "org", True), ("works_at", "job", True)]),
]
#: a clause that starts with its own subject: it does not inherit 我 from the clause before
_ZH_OWN_SUBJECT = re.compile(r"^(?:他|她|它|你|您|我们|我們|他们|他們|她们|她們|大家|别人|別人)")
_ZH_CLAUSES = re.compile(r"(?<=[，,；;])")
_ZH_STOP = re.compile(r"(?:但是|但|因为|所以|而且|不过|可是|了|啦|呢|吧|哦|呀|啊)+.*$")
_ZH_AND = re.compile(r"(?:和|跟|与|及|、)")

#: relationships whose objects are many values ("likes tea and coffee")
_LISTS = {"likes", "loves", "hates", "has"}
_MAX_OBJECT_WORDS = 6


def _clean_english(obj: str) -> str:
    obj = _EN_STOP.sub("", obj.strip())
    for _ in range(2):
        obj = _EN_ARTICLE.sub("", obj)
    obj = obj.strip(" '\"")
    return obj if 0 < len(obj.split()) <= _MAX_OBJECT_WORDS else ""


def _clean_chinese(obj: str) -> str:
    obj = _ZH_STOP.sub("", obj).strip()
    return obj if 0 < len(obj) <= 16 else ""


def _objects(obj: str, relationship: str, cjk: bool) -> list[str]:
    obj = _ZH_STOP.sub("", obj) if cjk else _EN_STOP.sub("", obj)  # the clause ends first, then lists split
    parts = (_ZH_AND if cjk else _EN_AND).split(obj) if relationship in _LISTS else [obj]
    cleaned = [(_clean_chinese if cjk else _clean_english)(p) for p in parts]
    return [c for c in cleaned if c]


def _subject(raw: str) -> str | None:
    if raw == "I" or re.fullmatch(_EN_USER, raw):
        return USER
    if raw.split()[0].lower() in _NOT_NAMES:
        return None
    return raw


def _changes(sentence: str, patterns: list[tuple[re.Pattern[str], list[tuple[str, str, bool]]]],
             cjk: bool) -> Iterable[Triple]:
    for pattern, outputs in patterns:
        for match in pattern.finditer(sentence):
            subject = USER if cjk else _subject(match["subject"])
            if subject is None:
                continue
            for relationship, group, negated in outputs:
                if match.groupdict().get(group):
                    for name in _objects(match[group], relationship, cjk):
                        yield Triple(source=subject, relationship=relationship, destination=name, negated=negated)


def _keep_subject(sentence: str) -> str:
    """"I live in Paris and work at Google" -> "I live in Paris, I work at Google": the subject carries
    over "and" (and the comma ends the first clause's object)."""
    lead = _EN_LEAD.match(sentence)
    if lead is None or _subject(lead["subject"]) is None:
        return sentence
    return _EN_AND_VERB.sub(f", {lead['subject']} ", sentence)


def _english(sentence: str) -> Iterable[Triple]:
    sentence = _keep_subject(sentence)
    yield from _changes(sentence, _EN_CHANGES, False)
    for pattern, relationship in _EN_PATTERNS:
        for match in pattern.finditer(sentence):
            subject = _subject(match["subject"])
            if subject is None:
                continue
            obj = match["object"]
            negated = bool(match["neg"]) or bool(re.search(r"\b(?:anymore|any\s+more)\b", obj, re.IGNORECASE))
            for name in _objects(obj, relationship, False):
                yield Triple(source=subject, relationship=relationship, destination=name, negated=negated)
    for pattern, relationship in _EN_POSSESSIVE:
        for match in pattern.finditer(sentence):
            obj = match.group("object") or (match.groupdict().get("object2") or "")
            for name in _objects(obj, relationship, False):
                yield Triple(source=USER, relationship=relationship, destination=name)


def _with_subjects(sentence: str) -> str:
    """Clauses without a subject after one with 我 are the speaker's: 我不再…了，现在在深圳工作 -> …，我现在在深圳工作."""
    clauses = _ZH_CLAUSES.split(sentence)
    self_seen = False
    for i, clause in enumerate(clauses):
        if re.search(_ZH_SELF, clause):
            self_seen = True
        elif self_seen and clause.strip() and not _ZH_OWN_SUBJECT.match(clause.strip()):
            clauses[i] = "我" + clause.strip()
    return "".join(clauses)


def _chinese(sentence: str) -> Iterable[Triple]:
    if not re.search(_ZH_SELF, sentence):
        return
    sentence = _with_subjects(sentence)
    changed = list(_changes(sentence, _ZH_CHANGES, True))
    yield from changed
    moved_to = {t.destination for t in changed if t.relationship == "lives_in"}
    for pattern, relationship in _ZH_PATTERNS:
        for match in pattern.finditer(sentence):
            negated = bool(match.groupdict().get("neg"))
            for name in _objects(match["object"], relationship, True):
                if relationship == "lives_in" and name in moved_to:
                    continue  # 从A搬到B: B already came from the change
                yield Triple(source=USER, relationship=relationship, destination=name, negated=negated)


_SENTENCES = re.compile(r"(?<=[.!?;。！？；\n])\s*")


def extract(text: str) -> list[Triple]:
    """The triples stated in ``text``, in order, without duplicates."""
    found: dict[Triple, None] = {}
    for sentence in _SENTENCES.split(text):
        if not sentence.strip():
            continue
        # within a sentence the new relations come before the retractions ("I left Google and joined Meta"):
        # a single-valued new relation then supersedes the old one, which keeps a pointer to it
        for triple in sorted((*_english(sentence), *_chinese(sentence)), key=lambda t: t.negated):
            found.setdefault(triple, None)
    return list(found)
