"""Offline fact extraction: keep what a message states about a person, in its own language.

Each message of the speaker whose facts we want is split into sentences (and
Chinese clauses). A sentence is read as one of the forms people and agents use:

- first person: "I like X" → "User likes X", 我喜欢X → 用户喜欢X (``english.third_person``);
- third person: "The user is training …", "Marco is lactose intolerant", 用户住在苏州;
- a bare predicate (a note with its subject left out): "Likes short meetings", 不吃香菜;
- ``key: value``: "Favourite editor: Neovim", "User: night owl, drinks espresso";
- wrapped: "Remember that …", "Note: …", 记一下：… (the wrapper is dropped).

Questions, requests, greetings and small talk are dropped, and so is what states
nothing about anyone; every sentence dropped has a reason, and ``skip_reason``
gives a message's reason when nothing of it was kept, so ``add`` never stores
nothing silently. A request to forget something becomes a ``forget`` fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from memlane.ingest import any_language, english, language, lexicon
from memlane.ingest.people import People, possessive_kin_zh, we_zh
from memlane.ingest.types import Fact
from memlane.core.models import Message
from memlane.text import languages, small_talk

_FIRST_PERSON_EN = re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b", re.I)
_YOU_EN = re.compile(r"\b(you|your|yours)\b", re.I)
_OPENER_EN = re.compile(
    r"^(?:" + "|".join(re.escape(o) for o in sorted(lexicon.OPENERS_EN, key=len, reverse=True)) + r")\b[\s:,!—–-]*",
    re.I,
)
#: where a first-person sentence holds a second statement: "…, and I also keep rabbits", "…, I speak French"
_AND_I_EN = re.compile(r",?\s+(?:and|but|also|plus)\s+(?=(?:i|i'm|i've|i'd|my|we|our)\b)|,\s+(?=(?:i|i'm|i've|my)\b)"
                       r"|,\s+(?:and\s+)?(?:so|which is why|that's why|and now)\s+(?=(?:now\s+|then\s+)?(?:i|i'm|i've|we|we're)\b)",
                       re.I)
_REQUEST_VERBS_EN = ("please", "tell", "help", "show", "give", "remind", "recommend", "suggest", "translate", "explain",
                     "find", "let's", "book", "make", "write", "send", "check", "look", "search", "call", "order")

_BULLET = re.compile(r"^\s*(?:[-*•·–—]|\d{1,2}[.)、]|[（(]\d{1,2}[）)])\s*")

# reasons, as the add result words them
QUESTION = "a question"
REQUEST = "a request to the assistant"
SMALL_TALK = "a greeting or small talk"
NO_STATEMENT = "no statement about a person"
CONTEXT = "an assistant turn: context for the user's facts, not a source of them"
SYSTEM = "a system message: instructions, not facts"
#: reasons any engine can give by looking at a message (not at what a model made of it)
EVIDENT_REASONS = (QUESTION, REQUEST, SMALL_TALK, CONTEXT, SYSTEM)


@dataclass
class Reading:
    """What one message gave: statements to remember, requests to forget, and why the rest was dropped."""

    statements: list[str] = field(default_factory=list)
    forget: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    #: statements said as a refinement of something said before ("Specifically, …")
    refining: set[str] = field(default_factory=set)

    def reason(self) -> str:
        """The message's reason for giving no fact: its sentences' reasons, most frequent first."""
        if not self.reasons:
            return NO_STATEMENT
        counts: dict[str, int] = {}
        for r in self.reasons:
            counts[r] = counts.get(r, 0) + 1
        return ", ".join(sorted(counts, key=lambda r: -counts[r]))


def _finish(text: str) -> str:
    text = text.strip().rstrip(".!。！;；,，").strip()
    return text[:1].upper() + text[1:] if text else text


# -- English ------------------------------------------------------------------------------------

def _kind_en(sentence: str) -> str | None:
    """QUESTION, REQUEST or SMALL_TALK when the sentence is one, else None."""
    lowered = sentence.lower().strip()
    first = re.findall(r"[a-z']+", lowered)[:1]
    if first and first[0] in _REQUEST_VERBS_EN:
        return REQUEST
    if language.contains_any(lowered, ("can you", "could you", "would you", "will you")):
        return REQUEST
    if lowered.endswith("?"):
        return QUESTION
    if small_talk.is_small_talk_en(sentence):
        return SMALL_TALK
    return None


def _strip_openers(sentence: str) -> str:
    while (stripped := _OPENER_EN.sub("", sentence, count=1)) != sentence and stripped.strip():
        sentence = stripped
    return sentence


def _first_person_en(sentence: str, subject: str, people: People) -> list[str]:
    found = []
    sentence = people.compound_en(sentence)  # "My sister and I …" → "User and their sister …"
    for part in _AND_I_EN.split(sentence):
        clauses = [c for c in re.split(r",\s+", part) if c.strip()]
        # drop trailing asides addressed to the assistant ("so keep that in mind whenever you …")
        kept = [c for c in clauses if not (_YOU_EN.search(c) and not _FIRST_PERSON_EN.search(c))]
        statement = ", ".join(kept)
        ours = _FIRST_PERSON_EN.search(statement) or (people.group and statement.startswith(people.group))
        if statement and ours and not small_talk.is_small_talk_en(statement):
            rewritten = english.third_person(statement, subject, people.group_en(statement))
            if rewritten.startswith(subject + " ") and not rewritten.startswith(subject + " and "):
                # "User is vegetarian and lives in Austin": two facts, so a move later leaves the diet alone
                found.extend(_with_subject(subject, rewritten[len(subject) + 1:]))
            else:
                found.append(rewritten)
    return found


#: clauses of a question that state something: "Since I'm vegan, …?", "As someone with celiac disease, …?",
#: "Being a night-shift worker, …?", "I'm vegan, what should I cook?"
_BECAUSE_EN = re.compile(r"^(?:since|because|as|given that|now that|seeing as|seeing that|considering)\s+"
                         r"(?=(?:i|i'm|i've|i'd|my|we|we're|we've|our)\b)", re.I)
_AS_SOMEONE_EN = re.compile(r"^as\s+(?:someone|somebody|a person|one|a guy|a girl|a woman|a man)\s+(?P<link>with|who|that)"
                            r"\s+", re.I)
_AS_A_EN = re.compile(r"^(?:as|being)\s+(?=(?:a|an)\s)|^being\s+(?=[a-z])", re.I)
#: a first-person clause that asks rather than states ("I was wondering", "I need ideas", "I'd like to know")
_SEEKING_EN = re.compile(
    r"^(?:so\s+|and\s+|but\s+)?(?:i|i'm|i am|im|i've been|i was|i'd|i would)\s+(?:(?:just|really|also|kind of|kinda|"
    r"still|now|a bit|a little|so)\s+)*(?:wonder|wondering|curious|thinking|not sure|unsure|confused|stuck|trying to|"
    r"looking for|(?:need|want|would like|'d like|like)\s+(?:you|to know|to ask|to find|help|advice|ideas|some|a|an|"
    r"suggestions|recommendations|tips)|have a question|have a quick question|hoping|hope|can't decide|"
    r"cannot decide|can't figure|can't choose|can't remember|forgot|was told|should|must|have to|got to|gotta)\b",
    re.I)
_CLAUSE_EN = re.compile(r"\s*(?:[,;:]|\s[-–—]+\s)\s*")


def _inside_question_en(sentence: str, subject: str, people: People) -> list[str]:
    """What a question or request states on the way ("Since I'm vegan, what should I cook tonight?" →
    "User is vegan"); the question itself is not a statement."""
    found: list[str] = []
    clauses = [c.strip() for c in _CLAUSE_EN.split(sentence) if c.strip()]
    for clause in clauses:
        if clause.endswith("?") or _kind_en(clause) in (QUESTION, REQUEST) or re.match(
                r"^(?:" + "|".join(lexicon.QUESTION_WORDS_EN) + r")\b", clause, re.I):
            people.notice_en(clause)
            continue
        clause = clause.rstrip(".!")
        if (because := _BECAUSE_EN.match(clause)) is not None:
            clause = clause[because.end():]
        elif (someone := _AS_SOMEONE_EN.match(clause)) is not None:
            rest = clause[someone.end():]
            clause = f"I have {rest}" if someone["link"].lower() == "with" else f"{subject} {rest}"
        elif (role := _AS_A_EN.match(clause)) is not None:
            clause = f"I am {clause[role.end():]}"
        clause = people.resolve_en(clause)
        if _SEEKING_EN.match(clause):
            people.notice_en(clause)
            continue
        if clause.startswith(subject + " ") or clause.startswith(people.subject + "'s "):
            found.append(clause)
        elif re.match(r"^(?:i|i'm|i've|i'd|my|we|we're|we've|our|me and)\b", clause, re.I) or \
                people.group and clause.startswith(people.group):
            found.extend(_first_person_en(clause, subject, people))
        elif english.subject_of(clause) in ("name", "user"):
            found.extend(_third_person_en(clause, subject) or [])
        people.notice_en(clause)
    return found


def _with_subject(subject: str, predicate: str) -> list[str]:
    """"likes X and hates Y" → ["User likes X", "User hates Y"]."""
    return [f"{subject} {part}" for part in english.split_predicates(predicate)]


def _lower_first(text: str) -> str:
    word = re.match(r"[A-Za-z]+", text)
    if word and word.group(0)[1:].islower() and english.lemmas(word.group(0).lower()):
        return text[:1].lower() + text[1:]
    return text


def _third_person_en(sentence: str, subject: str) -> list[str] | None:
    """Statements of a sentence about the user, a named person, or with its subject left out."""
    who = english.subject_of(sentence)
    if who == "user":
        text = english.normalize_user(sentence, subject)
        head = re.match(rf"{subject}(?:'s\s+[A-Za-z-]+)?\s+", text)  # "User", "User's son"
        return _with_subject(head.group(0).strip(), text[head.end():]) if head else [text]
    if who in ("name", "pronoun"):
        first = re.match(r"[A-Za-z]+", sentence)
        rest = sentence[first.end():].lstrip() if first else sentence
        if first and not rest.startswith(("'", "’")):
            return _with_subject(first.group(0), rest)
        return [sentence]
    if english.is_bare_predicate(sentence):
        return _with_subject(subject, _lower_first(sentence))
    words = re.findall(r"[A-Za-z]+", sentence)
    if len(words) >= 2 and "ADJ" in english.lemmas(words[0]) and words[1].lower() in (
            "to", "of", "about", "with", "in", "at", "for", "from", "on"):  # "Allergic to peanuts"
        return [f"{subject} is {_lower_first(sentence)}"]
    return None


def _key_value_en(key: str, value: str, subject: str) -> list[str]:
    if english.names_user(key) and len(key.split()) <= 2:  # "User: night owl, drinks espresso"
        items = [i.strip() for i in re.split(r"[;,]\s*", value) if i.strip()]
        return [english.predicate_item(subject, item) for item in items]
    if english.is_label(key) or english.subject_of(value) or english.names_user(value):
        return [f"{key}: {english.normalize_user(value, subject)}"]  # "Ticket INC-2290: User's VPN drops …"
    return [english.attribute(subject, key, value)]


def _statements_en(sentence: str, subject: str, people: People,
                   wrapped: bool = False) -> tuple[list[str], str | None]:
    """The statements of one English sentence, or none and the reason."""
    sentence = sentence.strip()
    unwrapped, found_wrapper = english.strip_wrapper(sentence)
    wrapped = wrapped or found_wrapper
    sentence = _strip_openers(unwrapped)
    pair = english.key_value(sentence)
    if not wrapped and not (pair and english.is_label(pair[0])):  # "Order 7731-B: …" is a note, not an order
        kind = _kind_en(sentence)
        if kind:
            stated = _inside_question_en(sentence, subject, people) if kind in (QUESTION, REQUEST) else []
            return (stated, None) if stated else ([], kind)
    if pair:
        key, value = pair
        key_lower = key.lower()
        if key_lower in english.WRAPPERS or key_lower in lexicon.OPENERS_EN:
            return _statements_en(value, subject, people, wrapped=True)
        if _FIRST_PERSON_EN.search(value) and not english.is_label(key):
            return _statements_en(value, subject, people, wrapped)
        return _key_value_en(key, value, subject), None
    referent = people.referent_en(sentence)  # "He is a dentist" after "My brother Tom …": "Tom is a dentist"
    if referent and not _FIRST_PERSON_EN.search(referent[1]):
        return _with_subject(*referent), None
    if referent:
        sentence = " ".join(referent)
    if _FIRST_PERSON_EN.search(sentence):
        found = _first_person_en(sentence, subject, people)
        return (found, None) if found else ([], REQUEST if _YOU_EN.search(sentence) else NO_STATEMENT)
    found = _third_person_en(sentence, subject)
    if found:
        return found, None
    if wrapped:  # the speaker asked for it to be remembered: keep it as written
        return [sentence], None
    if people.names_something_said(sentence):  # "The Corolla's brakes need replacing" after "I drive a Corolla"
        return [sentence], None
    return [], REQUEST if _YOU_EN.search(sentence) else NO_STATEMENT


# -- Chinese ------------------------------------------------------------------------------------

_WRAPPER_ZH = re.compile(r"^(?:请|麻烦|帮我|你)?(?:别忘了|不要忘了|别忘记|记一下|记下来|记下|记住|记着|记录一下|记录|备注|注意|提醒一下|提醒)"
                         r"(?:一下)?(?:吧)?[：:，,\s]*")
_SUBJECT_ZH = ("用户", "使用者", "他", "她", "它")
#: clause openers that continue the statement before them (its object, a reason, a name)
_LINKS_ZH = ("叫", "名叫", "是", "因为", "所以", "但", "不过", "而且", "然后", "就", "也就是", "比如", "包括", "尤其")
_CONCEPT_TOKENS = frozenset(lexicon.CONCEPTS)
_NOUN_TAGS = ("n", "nr", "ns", "nt", "nz", "nrt", "i", "j", "l", "r", "m", "q", "x", "eng")


@lru_cache(maxsize=4096)
def _first_tag(clause: str) -> str:
    import rjieba

    tags = rjieba.tag(language.to_simplified(clause))
    return tags[0][1] if tags else ""


_QUESTION_WORDS_ZH = re.compile(r"什么|怎么|为什么|哪(?!怕)|多少|是否|能不能|可不可以|有没有")
#: question words that ask nothing: "不怎么" (not much), "没什么" (nothing much), "什么都" (anything)
_NOT_QUESTION_ZH = re.compile(r"[不没](?:怎么|什么)|什么都|什么也|怎么也|怎么都|哪儿都|哪里都")


def _is_question_zh(clause: str) -> bool:
    simplified = language.to_simplified(clause).strip()
    if simplified.endswith(("?", "？")) or re.search(r"[吗嘛呢][\s!！。.~～…]*$", simplified):
        return True
    return bool(_QUESTION_WORDS_ZH.search(_NOT_QUESTION_ZH.sub("", simplified)))


def _clause_kind_zh(clause: str) -> str:
    """skip:<reason> | first | subject | bare | noun."""
    simplified = language.to_simplified(clause)
    bare = re.sub(r"[\s!！。.?？~～…]+", "", simplified)
    if not bare or bare in lexicon.SMALL_TALK_ZH:
        return "skip:" + SMALL_TALK
    if _is_question_zh(clause):
        return "skip:" + QUESTION
    if any(simplified.startswith(r) for r in lexicon.REQUEST_ZH) or "推荐" in simplified or "建议" in simplified:
        return "skip:" + REQUEST
    if "我" not in clause and "你" in clause:  # an aside to the assistant ("你记一下")
        return "skip:" + REQUEST
    if "我" in clause:
        return "first"
    if simplified.startswith(_SUBJECT_ZH) or _first_tag(clause) in ("nr", "nt", "nz"):  # 用户…, 她…, 小明…, 腾讯…
        return "subject"
    if simplified.startswith(_LINKS_ZH) or _first_tag(clause) in _NOUN_TAGS:
        return "noun"
    return "bare"


def third_person_zh(text: str, subject: str) -> str:
    """我 → 用户, 我哥哥 → 用户的哥哥, 我们公司 → 用户的公司, 我们 → 用户和家人 (``ingest/people.py``)."""
    return possessive_kin_zh(we_zh(text, subject), subject).replace("我", subject)


#: a first-person clause of a question that asks rather than states (我想问一下, 我该…, 请问)
_ASKING_ZH = re.compile(r"^(?:请问|我(?:想|要|得|就)?(?:问|知道|请教|了解|咨询|打听)|我(?:该|应该|能不能|可不可以|要不要|能否))")


def _statements_zh(sentence: str, subject: str, people: People) -> tuple[list[str], list[str]]:
    """The statements of one Chinese sentence (clause by clause), and the reasons for clauses dropped.
    In a question only the clauses that state something about someone are kept (我对海鲜过敏，晚饭吃什么好？)."""
    reasons: list[str] = []
    sentence = _WRAPPER_ZH.sub("", sentence.strip())
    in_question = sentence.rstrip().endswith(("?", "？"))
    key_value = re.match(r"^([^：:，,。]{1,8})[：:](.+)$", sentence)
    if key_value and "我" not in key_value.group(1) and not in_question:
        key, value = key_value.group(1).strip(), key_value.group(2).strip().rstrip("。！!；;")
        if key in ("用户", "使用者"):
            sentence = f"{key}{value}"
        else:
            return [f"{subject}的{key}：{value}"], reasons
    found: list[list[str]] = []
    for clause in language.clauses_zh(sentence.rstrip("。！!；;")):
        kind = _clause_kind_zh(clause)
        if kind in ("noun", "bare") and not found and people.opens_with_something_said_zh(language.to_simplified(clause)):
            kind = "subject"  # 鸿海今年要发年终奖金 after 我在鸿海上班: about what is theirs
        people.notice_zh(language.to_simplified(clause))
        if kind.startswith("skip:"):
            reasons.append(kind[5:])
            continue
        if in_question and (kind not in ("first", "subject") or _ASKING_ZH.match(language.to_simplified(clause))):
            reasons.append(QUESTION)
            continue
        if kind in ("first", "subject"):
            found.append([people.resolve_zh(clause)])
            continue
        # a clause without a subject starts a statement of its own when it names an attribute of its own
        # ("…，风险承受度中等", "…，更喜欢看书"); else it continues the one before ("…，吃了会起疹子", "…，香蕉和梨")
        own = bool(language.terms(clause) & _CONCEPT_TOKENS) and kind == "bare" or (
            kind == "noun" and bool(language.terms(clause) & _CONCEPT_TOKENS)
            and not language.to_simplified(clause).startswith(_LINKS_ZH))
        if found and not own:
            found[-1].append(clause)
        elif kind == "bare" or own:
            found.append([subject + clause])
        else:
            reasons.append(NO_STATEMENT)
    return [third_person_zh("，".join(parts), subject) for parts in found], reasons


# -- messages -----------------------------------------------------------------------------------

_KEEP_IN_MIND = re.compile(r"\b(?:don'?t|do not|never|not)\s+(?:let\s+(?:me|us)\s+)?forget\b|别忘了|不要忘了|别忘记",
                           re.I)


def _forget_topic(sentence: str) -> str | None:
    """The subject of a request to forget, or None if the sentence asks nothing of the kind."""
    if not language.contains_any(sentence, lexicon.FORGET_EN + lexicon.FORGET_ZH):
        return None
    if english.strip_wrapper(sentence)[1] or _KEEP_IN_MIND.search(sentence):  # "Don't forget that I'm …": keep it
        return None
    if not (language.has_cjk(sentence) or _FIRST_PERSON_EN.search(sentence) or _YOU_EN.search(sentence)):
        return None
    return sentence


_REFINE_EN = re.compile(r"^(?:" + "|".join(re.escape(m) for m in lexicon.REFINE_EN) + r")\b", re.I)


def _refines(sentence: str) -> bool:
    """Opens with a refinement marker ("Specifically, …", "To be precise, …", 具体来说…)."""
    return bool(_REFINE_EN.match(sentence.strip())) or language.to_simplified(sentence).strip().startswith(
        lexicon.REFINE_ZH)


def _primed(earlier: tuple[str, ...], speaker_is_agent: bool) -> dict[str, People]:
    """Who the turns just before a message mentioned, so its "He …", "It …", 它… point to them."""
    people: dict[str, People] = {}
    for text in earlier:
        for sentence in language.sentences(text):
            if language.has_cjk(sentence):
                subject = language.subject_word(language.script(sentence), speaker_is_agent)
                people.setdefault(subject, People(subject)).notice_zh(language.to_simplified(sentence))
            else:
                subject = language.subject_word("en", speaker_is_agent)
                people.setdefault(subject, People(subject)).notice_en(sentence)
    return people


def read(message: Message, *, speaker_is_agent: bool, earlier: tuple[str, ...] = ()) -> Reading:
    """Statements, requests to forget and reasons of one message, sentence by sentence. ``earlier``: the same
    speaker's turns just before it (who they mentioned)."""
    reading = Reading()
    # who the message (and the turns before it) mentions, by the subject word of its language
    people: dict[str, People] = _primed(earlier, speaker_is_agent)
    said_in = languages.detect(message.content)
    split = language.sentences if said_in in ("en", "zh") else any_language.sentences
    for sentence in split(message.content):
        sentence = _BULLET.sub("", sentence)  # "- likes tea", "2) 不吃辣"
        if not sentence:
            continue
        code = languages.detect(sentence, said_in)
        if code not in ("en", "zh"):  # the speaker's own sentence, read with its language's pack
            statements, reasons = any_language.statements(sentence, code)
            reading.reasons.extend(reasons)
            reading.statements.extend(statements)
            continue
        topic = _forget_topic(sentence) if not speaker_is_agent else None
        if topic is not None:
            reading.forget.append(topic)
            continue
        if language.has_cjk(sentence):
            subject = language.subject_word(language.script(sentence), speaker_is_agent)
            sentence = small_talk.strip_zh(sentence, language.to_simplified(sentence))
            if not sentence:
                reading.reasons.append(SMALL_TALK)
                continue
            statements, reasons = _statements_zh(sentence, subject, people.setdefault(subject, People(subject)))
            reading.reasons.extend(reasons)
        else:
            subject = language.subject_word("en", speaker_is_agent)
            who = people.setdefault(subject, People(subject))
            kept = small_talk.strip_en(sentence)
            if not kept:
                reading.reasons.append(SMALL_TALK)
                continue
            statements, reason = _statements_en(kept, subject, who)
            who.notice_en(sentence)
            if reason == NO_STATEMENT and (other := languages.besides_english(sentence)):
                # code-switched: "Mi hermana vive en London and she works as a nurse" says it in the other language
                found, _ = any_language.statements(sentence, other)
                pack = languages.pack(other)
                if found and pack is not None and pack.lexicon.has(sentence, pack.first_person + pack.possessives):
                    statements, reason = found, None
            if reason:
                reading.reasons.append(reason)
        refines = _refines(sentence)
        for statement in filter(None, map(_finish, statements)):
            reading.statements.append(statement)
            if refines:
                reading.refining.add(statement)
    return reading


#: words that place a happening at one time: relative days and weeks (English, Chinese, Japanese)
_WHEN = re.compile(r"\b(?:yesterday|today|tomorrow|tonight|last|next|ago|recently|just|this (?:week|weekend|month|year)|"
                   r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
                   r"|昨天|今天|明天|上周|下周|下个月|上个月|明年|去年|今年|最近|刚|周末|星期|礼拜"
                   r"|昨日|今日|明日|先週|来週|先周|来周|先月|来月|来年")
#: calendar dates: months, years, days of a month
_DATE = re.compile(r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
                   r"\d{4})\b|[月日号]")


def classify(text: str) -> str:
    """fact | preference | event | profile, from the words a statement uses (docs/formation.md, "Memory types").
    A statement dated by the calendar or the week is an ``event`` ("went to Paris last May"), unless the date is
    one that comes back every year — a birthday, a date of birth, an anniversary (``lexicon.RECURRING_DATES``)
    — and the statement does not say when it happened this once ("celebrated my birthday yesterday")."""
    found = language.terms(text)
    simplified = language.to_simplified(text).lower()
    if found & {"PREF", "DISLIKE"}:
        return "preference"
    when = _WHEN.search(simplified) is not None
    if when or (_DATE.search(simplified) and not found & lexicon.RECURRING_DATES):
        return "event"
    if found & set(lexicon.PROFILE) or language.is_name_statement(text):
        return "profile"
    return "fact"


def skip_reason(message: Message, *, agent_facts: bool) -> str:
    """Why a message gave no fact (a greeting, a question, an assistant turn …)."""
    if message.role == "system":
        return SYSTEM
    if message.role not in ("user", "assistant"):
        return f"a {message.role} message: not a source of facts"
    if message.role == "assistant" and not agent_facts:
        return CONTEXT
    return read(message, speaker_is_agent=message.role == "assistant").reason()


def extract(messages: list[Message], *, agent_facts: bool, earlier: list[Message] | tuple = ()) -> list[Fact]:
    """The facts of ``messages``; ``earlier``: the turns said just before them (a pronoun of the first
    message may point to someone they mentioned: "My dog is a husky." … "He is scared of fireworks.")."""
    facts: list[Fact] = []
    seen: set[tuple[str, str]] = set()
    said: list[Message] = list(earlier)
    for index, message in enumerate(messages):
        speaker_is_agent = message.role == "assistant"
        before = tuple(m.content for m in said if (m.role, m.name) == (message.role, message.name))[-2:]
        said.append(message)
        if message.role not in ("user", "assistant") or (speaker_is_agent and not agent_facts):
            continue
        reading = read(message, speaker_is_agent=speaker_is_agent, earlier=before)
        facts.extend(Fact(text=topic, kind="forget", sources=(index,)) for topic in reading.forget)
        for statement in reading.statements:
            key = (message.name or "", statement.casefold())  # the same words from two speakers are two facts
            if key not in seen:
                seen.add(key)
                facts.append(Fact(text=statement, memory_type=classify(statement), sources=(index,),
                                  refines=statement in reading.refining))
    return facts
