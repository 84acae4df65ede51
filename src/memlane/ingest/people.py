"""Who a statement is about when the speaker does not say "I": the people of one message.

People talk about others: "My brother Tom just moved to Oslo. He is a dentist." — "He" is Tom,
not the user; "My sister and I both love sushi" is about two people; "We're expecting our second
baby" is about the user and their family. ``People`` follows one message sentence by sentence
(questions included: "What should I get my mum? She loves gardening."):

- it notices who is mentioned: a relative or friend ("my older sister", "my son's party",
  我妹妹), a name that follows one ("my friend Priya") or opens a statement ("Priya is a pilot");
- ``resolve_en`` / ``resolve_zh`` name the person a statement's leading "He"/"She" (他/她) points
  to: the most recent mention whose gender agrees (a relation's word gives it; a name or "friend"
  agrees with either);
- ``compound_en`` rewrites a subject made of the speaker and someone else ("My wife and I",
  "Me and my dad", "Sofia and I") to "User and their wife", kept for a later "we";
- ``group_en`` is what "we" means: that compound subject, else the user's colleagues when the
  sentence is about work, else their family. Chinese 我们 is read by ``we_zh``.

Nothing is guessed beyond the message: a pronoun with no agreeing mention is left as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from memlane.ingest import english
from memlane.text.normalize import to_simplified
from memlane.text.relations import PETS_EN, PETS_ZH, PLURAL_RELATIONS_EN, RELATIONS_EN, RELATIONS_ZH

_PRONOUN_GENDER = {"he": "m", "him": "m", "his": "m", "she": "f", "her": "f", "hers": "f", "it": "n", "its": "n",
                   "他": "m", "她": "f", "它": "n"}
#: things people own and talk about as "it"
THINGS_EN = frozenset("car bike bicycle house flat apartment phone laptop computer boat garden van truck scooter".split())
#: the gender of a mention that is not a person: a pet ("p": he, she or it) or a thing ("n": it)
_KIND_GENDER = {**dict.fromkeys(PETS_EN, "p"), **dict.fromkeys(THINGS_EN, "n")}

_RELATION_WORDS = "|".join(sorted(RELATIONS_EN.keys() | PLURAL_RELATIONS_EN | PETS_EN | THINGS_EN, key=len, reverse=True))
#: "my (best|older|little) friend(,) (named|called) Priya", "my son's"
_MENTION_EN = re.compile(
    r"\b(?:[Mm]y|[Oo]ur)\s+(?P<phrase>(?:[a-z]+[\s-]+){0,2}?(?P<relation>" + _RELATION_WORDS + r"))\b"
    r"(?:(?:['’]s)|,?\s+(?:(?:named|called)\s+)?(?P<name>[A-Z][a-z]+)\b)?")
_NAME_SUBJECT_EN = re.compile(r"^(?P<name>[A-Z][a-z]+)\s+(?:is|was|has|had|and|works|lives|loves|likes|plays)\b")
_LEADING_PRONOUN_EN = re.compile(r"^(?P<pronoun>he|she|his|her|it|its)(?P<contraction>['’]s)?\b(?=\s)", re.I)
_COMPOUND_EN = re.compile(
    r"^(?:(?P<other>(?:[Mm]y|[Oo]ur)\s+(?:[a-z]+[\s-]+){0,2}?[a-z]+|[A-Z][a-z]+)\s+and\s+(?:I|me)"
    r"|(?:I|me|Me)\s+and\s+(?P<other2>[Mm]y\s+(?:[a-z]+[\s-]+){0,2}?[a-z]+|[A-Z][a-z]+))\b(?=\s+[a-z])")
#: what the speaker owns or drives: "I drive a Honda Civic", "We just bought an old farmhouse"
_OWNED_EN = re.compile(r"\b(?:I|[Ww]e)\s+(?:just\s+|recently\s+|finally\s+)?(?:drive|own|have|bought|got|ride|use)\s+"
                       r"(?:a|an|the)\s+(?P<thing>(?:[A-Z][\w-]*\s+)*[A-Z][\w-]*|(?:[a-z]+\s+)?[a-z]+)\b(?=\s*[.,;!]|$)")
#: a word that may name a thing (three letters or more); what is too common to name anything in particular
_THING_WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")
_NOT_THINGS = frozenset("""the and but for with from about this that these those there here have has had was were are
been being will would could should just really very also still now then when what which who how why you your they them
their our out new old one two get got make made like love want need said says say thing things stuff lot day week
year time today yesterday tomorrow""".split())
_NOT_THINGS_ZH = frozenset("时候 东西 事情 问题 时间 今年 去年 明年 最近 现在 用户 使用者".split())
#: "The Corolla's brakes", "The hospital I work at": the words of a sentence opening with "The", up to its verb
_THE_SUBJECT_EN = re.compile(r"^[Tt]he\s+(?P<phrase>(?:[A-Za-z0-9'’-]+\s+){0,4}?[A-Za-z0-9'’-]+)\s+(?P<verb>[a-z]+)\b")
_WORK_EN = re.compile(r"\b(?:work|job|office|team|company|startup|firm|client|clients|project|colleagues|"
                      r"sprint|release|customers|product|shift|department)\b", re.I)
_KIN_ZH = "|".join(sorted(RELATIONS_ZH, key=len, reverse=True))
_MENTION_ZH = re.compile(r"我(?:的|家的?)?(?P<relation>" + _KIN_ZH + "|" + "|".join(PETS_ZH) + r")")


def _opens_predicate(rest: str) -> bool:
    """Whether ``rest`` starts with a verb, maybe after adverbs ("is", "just died", "needs", "was stolen")."""
    for word in re.findall(r"[A-Za-z']+", rest)[:3]:
        if english.is_adverb(word):
            continue
        return word.lower() in ("is", "was", "has", "name") or english.verb_form(word) in ("VBZ", "VBD", "MD")
    return False


@dataclass
class Person:
    """Someone a message mentioned: how a statement names them, and the gender their pronoun has."""

    name: str
    gender: str = ""


@dataclass
class People:
    """The people one message has mentioned so far (the most recent last) and what its "we" means."""

    subject: str = "User"
    mentioned: list[Person] = field(default_factory=list)
    group: str | None = None
    #: the names and nouns the speaker has used so far (lower-cased): what a later "The X …" may be about
    said: set[str] = field(default_factory=set)

    # -- English -------------------------------------------------------------------------------

    def notice_en(self, sentence: str) -> None:
        """Remember who ``sentence`` mentions, in order, and the things it names."""
        self.said.update(w.lower() for w in _THING_WORD.findall(sentence) if w.lower() not in _NOT_THINGS)
        found: list[tuple[int, Person]] = []
        for match in _MENTION_EN.finditer(sentence):
            relation = match["relation"].lower()
            if relation in PLURAL_RELATIONS_EN:
                continue
            name = match["name"]
            if name and name.lower() in ("and", "or", "but", "is", "was"):
                name = None
            found.append((match.start(), Person(name or f"{self.subject}'s {match['phrase'].lower()}",
                                                RELATIONS_EN.get(relation, _KIND_GENDER.get(relation, "")))))
        for owned in _OWNED_EN.finditer(sentence):  # "I drive a Honda Civic": "it" may be the Civic
            thing = owned["thing"]
            found.append((owned.start(), Person(f"{self.subject}'s {thing}", _KIND_GENDER.get(thing.split()[-1].lower(), "n"))))
        subject = _NAME_SUBJECT_EN.match(sentence)
        if subject and not any(p.name.endswith(subject["name"]) for _, p in found):
            found.append((0, Person(subject["name"])))
        self.mentioned.extend(person for _, person in sorted(found, key=lambda item: item[0]))

    def referent_en(self, sentence: str) -> tuple[str, str] | None:
        """(who, the rest) when ``sentence`` opens with He/She/His/Her pointing to someone mentioned:
        "He's a dentist" → ("Tom", "is a dentist"), "Her cat is called Mo" → ("User's mom's cat", "is called Mo")."""
        match = _LEADING_PRONOUN_EN.match(sentence)
        if not match:
            return None
        person = self._referent(_PRONOUN_GENDER[match["pronoun"].lower()])
        if person is None:
            return None
        pronoun, rest = match["pronoun"].lower(), sentence[match.end():].strip()
        if match["contraction"]:  # "He's a dentist" → "Tom is …"; "He's been" / "He's got" → "Tom has …"
            verb = "has" if re.match(r"(?:been|got|gotten|had|done|moved|started|become)\b", rest) else "is"
            return person.name, f"{verb} {rest}"
        if pronoun in ("his", "her", "its"):
            for noun in re.finditer(r"[\w-]+(?:['’]s)?", rest[:60]):  # "His favourite toy is …": up to the verb
                if _opens_predicate(rest[noun.end():]):
                    return f"{person.name}'s {rest[:noun.end()]}", rest[noun.end():].strip()
                if noun.start() > 30:
                    break
            return None  # "her" as an object ("Her? No.") or an unclear phrase
        return person.name, rest

    def opens_with_something_said_zh(self, clause: str) -> bool:
        """Whether a (Simplified) clause opens with a name or noun the speaker used before (鸿海今年要发年终奖金
        after 我在鸿海上班): a statement about what is theirs."""
        return any(clause.startswith(word) for word in self.said if not word.isascii())

    def names_something_said(self, sentence: str) -> bool:
        """Whether ``sentence`` opens with "The …" naming a thing the speaker named before ("The Corolla's
        brakes need replacing" after "I drive a Corolla"): a statement about what is theirs."""
        subject = _THE_SUBJECT_EN.match(sentence)
        if not subject or not (subject["verb"] in ("is", "are", "was", "were", "has", "have", "had", "just", "will", "can")
                               or english.verb_form(subject["verb"]) in ("VBZ", "VBD")):
            return False
        return bool({w.lower() for w in _THING_WORD.findall(subject["phrase"])} & self.said)

    def resolve_en(self, sentence: str) -> str:
        """``sentence`` with a leading He/She/His/Her replaced by the person it points to."""
        found = self.referent_en(sentence)
        return f"{found[0]} {found[1]}" if found else sentence

    def compound_en(self, sentence: str) -> str:
        """"My sister and I both love sushi" → "User and their sister both love sushi" (the verb stays plural)."""
        match = _COMPOUND_EN.match(sentence)
        if not match:
            return sentence
        other = match["other"] or match["other2"]
        words = other.split(maxsplit=1)
        other = f"their {words[1]}" if words[0].lower() in ("my", "our") and len(words) > 1 else other
        self.group = f"{self.subject} and {other}"
        return self.group + sentence[match.end():]

    def group_en(self, sentence: str) -> str:
        """What "we" means in ``sentence``."""
        if self.group:
            return self.group
        return f"{self.subject} and their {'colleagues' if _WORK_EN.search(sentence) else 'family'}"

    # -- Chinese -------------------------------------------------------------------------------

    def notice_zh(self, text: str) -> None:
        """Remember who (Simplified) ``text`` mentions, and the names and nouns it uses."""
        import rjieba

        self.said.update(w for w, tag in rjieba.tag(text) if tag[:1] == "n" and len(w) >= 2 and w not in _NOT_THINGS_ZH)
        for match in _MENTION_ZH.finditer(text):
            relation = match["relation"]
            gender = RELATIONS_ZH.get(relation, "p" if relation in PETS_ZH else "")
            self.mentioned.append(Person(f"{self.subject}的{relation}", gender))

    def resolve_zh(self, clause: str) -> str:
        """A clause opening with 他/她 (not 他们/她们) names the person it points to."""
        if not clause.startswith(("他", "她", "它")) or clause.startswith(("他们", "她们", "它们", "他人")):
            return clause
        person = self._referent(_PRONOUN_GENDER[clause[0]])
        return person.name + clause[1:] if person else clause

    # -- both ----------------------------------------------------------------------------------

    def _referent(self, gender: str) -> Person | None:
        """The latest mention a pronoun of ``gender`` agrees with: he/she a person of that gender or of either,
        or a pet; it a pet or a thing."""
        for person in reversed(self.mentioned):
            if person.gender == gender or person.gender == "p" or (not person.gender and gender in ("m", "f")):
                return person
        return None


def possessive_kin_zh(text: str, subject: str) -> str:
    """我哥哥 → 用户的哥哥, 我和我老公 → 用户和老公 (a relative of the speaker, named as theirs)."""
    text = re.sub(r"和我的?(?=" + _KIN_ZH + ")", "和", text)
    return re.sub(r"我(?=" + _KIN_ZH + ")", f"{subject}的", text)


def we_zh(text: str, subject: str) -> str:
    """我们 (我們) as the user and others: 我们家 → 用户家, 我们公司 → 用户的公司 (a noun after it: theirs),
    else 用户和家人. Traditional text is read through its Simplified form (OpenCC maps character to
    character) and written back in its own characters."""
    simplified = to_simplified(text)
    if "我们" not in simplified:
        return text
    import rjieba

    out, tokens, at = [], rjieba.tag(simplified), 0
    same_length = len(simplified) == len(text)
    for i, (word, _) in enumerate(tokens):
        original = text[at:at + len(word)] if same_length else word
        at += len(word)
        if word != "我们":
            out.append(original if word != "俩" or not i or tokens[i - 1][0] != "我们" else "")
            continue
        following, tag = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
        if following.startswith(("家", "全家")):
            out.append(subject)
        elif tag.startswith("n") and tag != "nr":
            out.append(f"{subject}的")
        else:
            out.append(f"{subject}和家人")
    return "".join(out)
