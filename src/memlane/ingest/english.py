"""English statements for the offline engine: first person rewritten to the third, note forms read.

Word classes and inflections come from lemminflect's own dictionary (no model,
no download), so a rewrite conjugates only words it knows to be verbs and never
invents a word: "I no longer drink alcohol" → "User no longer drinks alcohol",
"I particularly enjoy baking" → "User particularly enjoys baking". Adverbs and
negation stay where the speaker put them. A verb whose base and past forms are
the same ("quit", "read", "put") is left as written: the past reading is always
grammatical. Articles for "User: night owl" → "User is a night owl" come from
``inflect``.

Note forms, as agents and people write them:

- third person: "The user is training …" → "User is training …"; "Marco is …", "She …" kept;
- bare predicates: "Likes short meetings and hates phone calls" → one statement per verb;
- ``key: value``: "Favourite editor: Neovim" → "User's favourite editor is Neovim",
  "User: night owl, drinks espresso" → "User is a night owl", "User drinks espresso";
- wrappers: "Remember that …", "Note: …", "FYI …" are removed.
"""

from __future__ import annotations

import re
from functools import lru_cache

from lemminflect import getAllLemmas, getInflection, getLemma

# -- words --------------------------------------------------------------------------------------

#: Adverbs that lemminflect also lists as verbs or adjectives ("still", "even", "just"), and negation.
_ADVERBS = frozenset("""still even just only also now then already ever never not no longer usually always often
sometimes rarely seldom hardly mostly mainly really truly actually currently recently finally generally normally
typically especially particularly absolutely definitely totally completely certainly probably sometimes occasionally
regularly frequently barely nearly almost quite pretty kinda sorta""".split())
_MODALS = frozenset("can could will would shall should may might must ought".split())
_DETERMINERS = frozenset("""a an the my your his her its our their this that these those some any every each no
two three four five six several many few much more most all both""".split())
_SUBJECT_PRONOUNS = frozenset({"he", "she", "they"})
#: English's closed word classes (lemminflect's dictionary holds the open ones: nouns, verbs, adjectives, adverbs)
FUNCTION_WORDS = frozenset("""a an the and or but nor so yet for of to in on at by with from about into onto over under
after before between through during without within against among than as if because while although though since
until unless whether that this these those which who whom whose what where when why how i me my mine myself you
your yours yourself he him his himself she her hers herself it its itself we us our ours ourselves they them their
theirs themselves one some any no none all each every both either neither is am are was were be been being has have
had do does did can could will would shall should may might must not hi hello hey there""".split())


def lemmas(word: str) -> dict[str, tuple[str, ...]]:
    return _lemmas(word.lower().replace("’", "'"))


@lru_cache(maxsize=8192)
def _lemmas(word: str) -> dict[str, tuple[str, ...]]:
    return getAllLemmas(word)


def is_adverb(word: str) -> bool:
    low = word.lower()
    if low in _ADVERBS:
        return True
    found = lemmas(low)
    return "ADV" in found and not ({"VERB", "AUX"} & found.keys())


def is_verb(word: str) -> bool:
    return bool({"VERB", "AUX"} & lemmas(word).keys()) or word.lower() in _MODALS


def _base(word: str) -> str | None:
    found = lemmas(word)
    for upos in ("AUX", "VERB"):
        if upos in found:
            return found[upos][0]
    return None


def verb_form(word: str) -> str | None:
    """``VBZ`` (likes), ``VBD`` (liked, also VBN), ``VB`` (like), ``VBG`` (liking), or None (not a verb)."""
    low = word.lower().replace("’", "'")
    if low in _MODALS:
        return "MD"
    base = _base(low)
    if base is None:
        return None
    if low == base:
        return "VB"
    for tag in ("VBZ", "VBG", "VBD", "VBN"):
        if low in (getInflection(base, tag=tag) or ()):
            return "VBD" if tag == "VBN" else tag
    if low in ("am", "are"):
        return "VB"
    return None


def third_singular(verb: str) -> str:
    """The third person singular present of a base-form verb ("enjoy" → "enjoys"), keeping the case."""
    low = verb.lower()
    if low in _MODALS:
        return verb
    if low in ("am", "are", "be"):
        form = "is"
    elif low == "have":
        form = "has"
    else:
        past = getInflection(low, tag="VBD") or ()
        if low in past:  # "quit", "read", "put": the past reading stays grammatical, the present would guess
            return verb
        form = (getInflection(low, tag="VBZ") or (low,))[0]
    return form[:1].upper() + form[1:] if verb[:1].isupper() else form


def is_plural_noun(word: str) -> bool:
    low = word.lower()
    found = lemmas(low)
    if "NOUN" not in found:
        return low.endswith("s") and not low.endswith("ss")
    singular = getLemma(low, upos="NOUN")
    return bool(singular) and singular[0] != low


def is_noun_only(word: str) -> bool:
    found = lemmas(word)
    return "NOUN" in found and not ({"ADJ", "VERB", "AUX", "ADV"} & found.keys())


@lru_cache(maxsize=1)
def _inflect():
    import inflect

    return inflect.engine()


def with_article(phrase: str) -> str:
    """"night owl" → "a night owl" (inflect's a/an rules)."""
    return _inflect().a(phrase)


# -- first person → third person ------------------------------------------------------------------

_CONTRACTIONS = [
    (r"\bI(?:'|’)m not\b", "{S} is not"), (r"\bI am not\b", "{S} is not"),
    (r"\bI(?:'|’)m\b", "{S} is"), (r"\bI am\b", "{S} is"),
    (r"\bI(?:'|’)ve\b", "{S} has"), (r"\bI have not\b", "{S} has not"), (r"\bI haven(?:'|’)t\b", "{S} hasn't"),
    (r"\bI(?:'|’)d\b", "{S} would"), (r"\bI(?:'|’)ll\b", "{S} will"),
    (r"\bI don(?:'|’)t\b", "{S} doesn't"), (r"\bI do not\b", "{S} does not"),
]
_TOKEN = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?|[^A-Za-z]+")


_NEGATIVE_AUXILIARIES = {"don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "ain't": "isn't"}


def _conjugate_after_i(text: str, subject: str) -> str:
    """Each "I <adverbs> <verb>" → "<subject> <adverbs> <verb, third person>"."""
    tokens = _TOKEN.findall(text)
    for i, token in enumerate(tokens):
        if token != "I":
            continue
        tokens[i] = subject
        j = i + 1
        while j + 1 < len(tokens) and tokens[j].isspace():
            word = tokens[j + 1]
            previous = tokens[j - 1].lower() if j > i + 1 else ""
            if is_adverb(word) or (word.lower() == "longer" and previous == "no"):
                j += 2
                continue
            negative = _NEGATIVE_AUXILIARIES.get(word.lower().replace("’", "'"))
            if negative:  # "I really don't like" → "User really doesn't like"
                tokens[j + 1] = negative
            elif verb_form(word) == "VB":
                tokens[j + 1] = third_singular(word)
            break
    return "".join(tokens)


#: adverbs that open a sentence before "I" and sit just as well after the subject: "Now I especially
#: like X" -> "User now especially likes X" (not "Now User …")
_FRONT_ADVERB = re.compile(r"^(?P<adverb>now|currently|still|also|really|usually|often|always|sometimes|rarely|never"
                           r"|recently|mostly|generally|actually|definitely|honestly|nowadays)\s*,?\s+I\b",
                           re.IGNORECASE)


_WE = [(r"\b[Ww]e(?:'|’)re\b", "{G} are"), (r"\b[Ww]e(?:'|’)ve\b", "{G} have"), (r"\b[Ww]e(?:'|’)d\b", "{G} would"),
       (r"\b[Ww]e(?:'|’)ll\b", "{G} will"), (r"\b[Ww]e\b", "{G}")]


def third_person(sentence: str, subject: str, group: str | None = None) -> str:
    """Rewrite a first-person statement into the third person, word for word. "We" is ``group``
    (default: the subject and their family; ``ingest/people.py`` says who), its verbs stay plural."""
    group = group or f"{subject} and their family"
    text = _FRONT_ADVERB.sub(lambda m: f"I {m['adverb'].lower()}", sentence)
    for pattern, replacement in _CONTRACTIONS:
        text = re.sub(pattern, replacement.format(S=subject), text)
    for pattern, replacement in _WE:
        text = re.sub(pattern, replacement.format(G=group), text)
    text = _conjugate_after_i(text, subject)
    text = _coordinated_verbs(text, subject)

    def possessive(match: re.Match) -> str:  # "User is training for their first marathon"
        return "their" if subject in text[:match.start()] else f"{subject}'s"

    text = re.sub(r"\b[Mm]y\b", possessive, text)
    text = re.sub(r"\b[Mm]ine\b", f"{subject}'s", text)
    text = re.sub(r"\b[Mm]yself\b", "themselves", text)
    text = re.sub(r"\b[Mm]e\b", lambda m: "them" if subject in text[:m.start()] else subject, text)
    text = re.sub(r"\b[Oo]urs\b", lambda m: "theirs" if subject in text[:m.start()] else f"{subject}'s", text)
    text = re.sub(r"\b[Oo]ur\b", lambda m: "their" if subject in text[:m.start()] else f"{subject}'s", text)
    text = re.sub(r"\b[Oo]urselves\b", "themselves", text)
    text = re.sub(r"\b[Uu]s\b", lambda m: "them" if subject in text[:m.start()] else group, text)
    return text


#: verbs also listed as nouns that, joined by "and" to a predicate and followed by a word, are verbs
_USUALLY_VERBS = frozenset("like love hate enjoy prefer adore dislike speak own want need use".split())
#: verbs often used as nouns too, read as verbs after "and" when a preposition or determiner follows
_VERBS_ALSO_NOUNS = frozenset("""work play study cook travel run swim dance walk ride drive shop volunteer cycle bike hike
jog sail ski surf paint garden commute skate climb fish hunt camp bake knit sew blog coach tutor lecture consult train
teach live""".split())
_PREPOSITIONS = frozenset("in at on for with from to by about into near around as".split())
_COORDINATED = re.compile(r"\b(and|but|or)((?:\s+(?:now|also|still|then|currently|often|usually|never|rarely|"
                          r"always|sometimes|really|mostly|no\s+longer))*)\s+([a-z]+)\b(\s+[A-Za-z]+)?")


def _coordinated_verbs(text: str, subject: str) -> str:
    """"User quit IBM and now work at Canva" → "… and now works at Canva": a base-form verb joined to a
    third-person predicate shares its subject. Taken as a verb only when it cannot be read otherwise: an
    adverb came between, or a determiner follows a word that is not a noun too."""
    if not text.startswith(subject) and f" {subject} " not in text or text.startswith(f"{subject} and "):
        return text  # no singular subject ("User and their sister ski and hike": the verbs stay plural)

    def fix(match: re.Match) -> str:
        word, adverbs, following = match.group(3), match.group(2), (match.group(4) or "").strip().lower()
        if verb_form(word) != "VB" or word in _MODALS:
            return match.group(0)
        before = text[:match.start()]
        infinitive = re.search(r"\bto\s+([a-z]+)\b[^,.;]*$", before.split(subject)[-1])
        if infinitive and verb_form(infinitive.group(1)) == "VB":  # "likes to swim and run"
            return match.group(0)
        found = lemmas(word)
        opens_object = following in _DETERMINERS or following in _PREPOSITIONS or following[:1].isdigit()
        clear = (bool(adverbs.strip()) or (following in _DETERMINERS and "NOUN" not in found)
                 or (word in _USUALLY_VERBS and bool(following))
                 # "… and live in Austin", "… and have type 1 diabetes": never a noun, and an adjective only
                 # when what follows cannot be its noun
                 or (bool(following) and "NOUN" not in found and ("ADJ" not in found or opens_object))
                 or (word in _VERBS_ALSO_NOUNS and opens_object))  # "… and work at a bakery"
        if not clear:
            return match.group(0)
        return f"{match.group(1)}{adverbs} {third_singular(word)}{match.group(4) or ''}"

    return _COORDINATED.sub(fix, text)


# -- note forms ---------------------------------------------------------------------------------

#: Wrappers around a note: what follows them is the note itself.
WRAPPERS = ("remember that", "please remember that", "please remember", "remember", "don't forget that",
            "remind me that", "please remind me that", "just remind me that", "don't let me forget that",
            "do not let me forget that", "make sure i remember that",
            "do not forget that", "keep in mind that", "note that", "please note that", "note", "notes", "nb",
            "n.b.", "fyi", "for the record", "for your information", "just so you know", "reminder", "memo",
            "important", "heads up", "ps", "p.s.", "fact", "fun fact", "quick note", "update")
_WRAPPER = re.compile(r"^(?:" + "|".join(re.escape(w) for w in sorted(WRAPPERS, key=len, reverse=True))
                      + r")(?:\s*[:：,—–-]\s*|\s+(?=\S))", re.I)


def strip_wrapper(sentence: str) -> tuple[str, bool]:
    """The note without its wrapper ("Remember that X" → "X"), and whether there was one."""
    stripped = _WRAPPER.sub("", sentence, count=1)
    if stripped == sentence or not stripped.strip():
        return sentence, False
    return stripped.strip(), True


_THE_USER = re.compile(r"\b(?:[Tt]he|[Oo]ur|[Tt]his|[Mm]y)\s+user\b|(?<![A-Za-z'])user\b")


def normalize_user(text: str, subject: str = "User") -> str:
    """"the user's VPN" → "User's VPN": the user, named as memlane names them."""
    return _THE_USER.sub(subject, text)


def names_user(text: str) -> bool:
    return bool(re.search(r"\b(?:the\s+)?users?\b", text, re.I))


def _capitalized_name(word: str) -> bool:
    """A capitalised word that is not an ordinary English word: a person's (or a place's) name."""
    return (word[:1].isupper() and word[1:].islower() and word.lower() not in FUNCTION_WORDS
            and not lemmas(word.lower()))


def subject_of(sentence: str) -> str | None:
    """Who a third-person statement is about: "user", "name", "pronoun", or None."""
    words = re.findall(r"[A-Za-z]+(?:['’][a-z]+)?", sentence)
    if not words:
        return None
    first = words[0]
    if re.match(r"^(?:the\s+)?users?(?:['’]s)?\b", sentence, re.I):
        return "user"
    if first.lower() in _SUBJECT_PRONOUNS or first.lower() in ("his", "her", "their"):
        return "pronoun"
    name = first[:-2] if first.endswith(("'s", "’s")) else first
    if not _capitalized_name(name):
        return None
    if first != name:  # "Marco's sister lives in Rome"
        return "name"
    following = [w for w in words[1:4] if not is_adverb(w)][:1]  # "Marco (also) plays …", "Marco is …"
    return "name" if following and verb_form(_without_not(following[0])) in ("VBZ", "VBD", "MD") else None


_IRREGULAR_NOT = {"can't": "can", "won't": "will", "shan't": "shall", "ain't": "is"}


def _without_not(word: str) -> str:
    """The auxiliary of a negative contraction ("isn't" -> "is", "doesn't" -> "does"); other words as they are."""
    lowered = word.lower().replace("’", "'")
    if lowered in _IRREGULAR_NOT:
        return _IRREGULAR_NOT[lowered]
    return word[:-3] if lowered.endswith("n't") else word


def is_bare_predicate(sentence: str) -> bool:
    """A statement with its subject left out, as notes are written: "Likes short meetings", "Moved to Oslo"."""
    words = re.findall(r"[A-Za-z]+(?:['’][a-z]+)?", sentence)
    i = 0
    while i < len(words) - 1 and is_adverb(words[i]):
        i += 1
    if i >= len(words):
        return False
    form = verb_form(words[i])
    return form in ("VBZ", "VBD") and words[i].lower() not in ("was", "were") or words[i].lower() == "is"


_VERB_SPLIT = re.compile(r",?\s+(?:and|but|while)\s+(?=[a-z]+\b)|,\s+(?=[a-z]+\b)")


def split_predicates(predicate: str) -> list[str]:
    """"likes short meetings and hates phone calls" → ["likes short meetings", "hates phone calls"]:
    split where a conjunction or comma is followed by a third-person or past verb."""
    parts, start = [], 0
    for match in _VERB_SPLIT.finditer(predicate):
        following = re.match(r"[a-z]+", predicate[match.end():])
        if following and verb_form(following.group(0)) in ("VBZ", "VBD") and following.group(0) not in ("was",):
            parts.append(predicate[start:match.start()])
            start = match.end()
    parts.append(predicate[start:])
    return [p.strip(" ,") for p in parts if p.strip(" ,")]


_KEY_VALUE = re.compile(r"^(?P<key>[^:：]{1,48}?)\s*[:：]\s*(?P<value>\S.*)$")


def key_value(sentence: str) -> tuple[str, str] | None:
    """``key: value`` with a short key (at most five words, no sentence of its own)."""
    match = _KEY_VALUE.match(sentence)
    if not match or re.search(r"https?$", match["key"], re.I):
        return None
    key = match["key"].strip()
    if len(key.split()) > 5 or re.search(r"[.!?]", key):
        return None
    return key, match["value"].strip()


def is_label(key: str) -> bool:
    """A key that names a thing (ticket, order) rather than an attribute of the user: it carries an id."""
    return any(re.search(r"\d", w) or (len(w) > 1 and w.isupper()) for w in key.split())


def attribute(subject: str, key: str, value: str) -> str:
    """"Favourite editor", "Neovim" → "User's favourite editor is Neovim" (are for a plural key)."""
    words = key.split()
    if words and words[0][:1].isupper() and words[0][1:].islower() and lemmas(words[0].lower()):
        words[0] = words[0].lower()
    head = re.sub(r"[^A-Za-z]", "", words[-1]) if words else ""
    verb = "are" if head and is_plural_noun(head) else "is"
    return f"{subject}'s {' '.join(words)} {verb} {value}"


def predicate_item(subject: str, item: str) -> str:
    """One item of "User: night owl, drinks espresso" as a statement about the subject."""
    words = re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)*", item)
    if not words:
        return f"{subject}: {item}"
    first = words[0]
    if verb_form(first) in ("VBZ", "VBD") or first.lower() in ("is", "has", "was"):
        return f"{subject} {item}"
    if first.lower() in _DETERMINERS or item[:1].isdigit():
        return f"{subject}: {item}"
    last = words[-1]
    if is_noun_only(last) and not is_plural_noun(last) and not first[:1].isupper():
        return f"{subject} is {with_article(item)}"
    found = lemmas(first)
    if "ADJ" in found or (not found and "-" in first):
        return f"{subject} is {item}"
    return f"{subject}: {item}"
