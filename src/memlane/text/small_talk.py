"""Small talk: greetings, thanks, farewells, acknowledgements and laughter, in English and Chinese.

A person keeps none of it: "Haha thanks, have a nice day!", "Sounds good, talk tomorrow.",
"I'm doing well, thanks for asking.", 好的，谢谢你，明天再聊！ store nothing. When a message mixes
a pleasantry with a statement ("Perfect, we love curry.", "lol yeah, I just adopted a beagle"),
the pleasantry is cut off and the statement kept.

How: a sentence is cut into segments (at commas, dashes, Chinese clause marks). A segment is small
talk when, once emoji, emoticons, laughter and the pleasantry phrases below are taken out, no
word is left but conversational fillers (``FILLERS_EN``: ok, yeah, so, then …) — so
"I'm doing well" is small talk and "I'm doing well at my new school" is not. Small-talk segments
at the start and at the end of a sentence are dropped; what lies between is the statement.
The phrases describe how people open, close and acknowledge a conversation, not any particular one.
Formation skips small talk (``ingest/offline_extract.py``); the agent-context gate does not search
memory for it (``retrieval/context.py``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from memlane.text.languages.pack import LETTERS, MARKS
from memlane.text.normalize import to_simplified


# -- English ------------------------------------------------------------------------------------

_GOOD = r"(?:nice|good|great|lovely|wonderful|fantastic|fab|brilliant|fun|safe|relaxing|restful)"
_LATER = r"(?:tomorrow|tmrw|tonight|later|soon|again|next time|next week|in a bit|then|around|monday|tuesday|" \
         r"wednesday|thursday|friday|saturday|sunday|on \w+day)"
_FEEL = r"(?:well|good|fine|great|ok|okay|alright|all right|not bad|pretty good|really good|very well|amazing|" \
        r"fantastic|wonderful|grand)"
_REACTION = r"(?:funny|hilarious|cool|great|awesome|amazing|nice|interesting|helpful|useful|perfect|wonderful|lovely|" \
            r"fantastic|brilliant|sweet|fair|true|right|good|fun|neat|wild|crazy|insane|adorable|cute|kind|sad|" \
            r"a shame|a pity|too bad|so true|spot on|a good idea|a great idea|good to know|great to hear|" \
            r"good to hear|nice to hear)"
#: phrases that open, close or acknowledge a conversation (matched as whole words, lower-cased)
PLEASANTRIES_EN = (
    r"thanks?(?: you)?(?: (?:so|very) much| a (?:lot|ton|bunch))? for (?:asking|the (?:help|tip|tips|advice|info|information|suggestion|suggestions|"
    r"recommendation|recommendations|reminder|chat|answer|explanation)|your help|helping|that|this|everything|"
    r"listening|checking|letting me know)",
    r"thanks?(?: you)?(?: (?:so|very) much| a (?:lot|ton|bunch|million))?(?: (?:again|anyway|though))?",
    r"thank u|thx|ty|tysm|many thanks|much appreciated|(?:i )?(?:really )?appreciate (?:it|that|this|you|your help)",
    rf"(?:you )?(?:have|enjoy) (?:a|an|the) (?:really |very )?{_GOOD} (?:day|night|evening|morning|afternoon|weekend|"
    rf"week|one|time|trip|holiday|vacation|flight|meal|lunch|dinner|rest)",
    rf"(?:enjoy|happy) (?:your|the) (?:day|weekend|evening|trip|holiday|meal|dinner|lunch)|happy (?:friday|monday|holidays)",
    r"good (?:morning|afternoon|evening|night|day)|morning|evening|gn|night night|nighty night|sweet dreams|"
    r"sleep well|take care|stay safe|be safe|cheers|bye(?: bye| for now)?|goodbye|ciao|see ya|cya|later|"
    r"peace(?: out)?|until next time|have fun",
    rf"(?:i'll |we'll |let's )?(?:talk|speak|chat|catch up)(?: (?:to|with) you)?(?: {_LATER})+|ttyl|"
    rf"(?:i'll )?(?:see|catch) (?:you|ya|u)(?: {_LATER})*",
    rf"(?:i hope|hope|hoping) (?:you(?:'re| are)|you have|you're having|you are having|all is|everything is|"
    rf"that helps|it helps|you're doing|you are doing)(?: (?:well|good|great|fine|ok|okay|a {_GOOD} \w+|"
    rf"going well))?",
    r"how (?:are|r) (?:you|u|ya)(?: doing)?(?: today| these days)?|how(?:'s| is| has) (?:it going|your day|"
    r"everything|life|things)(?: going)?|how about (?:you|yourself)|what about you|and (?:you|yourself)|"
    r"you\?|what's up|whats up|sup|how have you been|how you doing",
    rf"(?:i'm|i am|im|doing|all|everything's|everything is|things are|i've been|i have been|been)"
    rf"(?: (?:doing|feeling|pretty|really|very|quite|just|so|too))* {_FEEL}(?: (?:thanks|thank you|too))?",
    r"not (?:too |so )?bad|(?:same|me too|you too|same to you|same here|likewise|ditto)",
    rf"(?:(?:oh|wow|ah)\s+)?(?:(?:that's|thats|that is|it's|its|this is|that was|it was|how|what a)\s+)?"
    rf"(?:(?:so|really|very|pretty|super|totally|absolutely|quite|kinda|just|too)\s+)*{_REACTION}",
    r"sounds? (?:good|great|perfect|like a plan|fun|nice|lovely|about right|fair|interesting|right|awesome|cool)|"
    r"good to know|makes sense|fair enough|no (?:problem|worries|prob|probs)|not a problem|my pleasure|"
    r"will do|got it|noted|"
    r"all good|all set|of course|for sure|sure thing|absolutely|definitely|exactly|indeed|okie dokie|"
    r"i see|i know right|right on|nice one|good one|well done|congrats|congratulations|bless you|"
    r"oh (?:well|no|dear|my|man|boy)|oh my (?:god|gosh)|omg|oh wow|wow|whoa|woah|yay|woohoo|hooray|damn|dang|"
    r"aw+|phew|ugh|oops|whoops|huh|hm+|um+|uh+",
    r"(?:ha)+h?|(?:he)+h?|(?:hi)+hi|lo+l|lmao|lmfao|rofl|xd|:\)|:-\)|:d|;\)|:p|<3|\^\^",
    # a remark about the listener: "you're so funny", "you are a genius", "you're right"
    rf"(?:you're|you are|youre|ur|u r)(?: (?:so|really|very|too|such|just|truly|absolutely|pretty|quite|the|a|an))* "
    rf"(?:welcome|the best|a star|a lifesaver|a genius|a legend|a gem|smart|clever|witty|silly|{_REACTION})",
)
_PLEASANTRY_EN = re.compile(r"(?<![\w'])(?:" + "|".join(f"(?:{p})" for p in PLEASANTRIES_EN) + r")(?![\w'])")
#: what a segment may keep besides pleasantries and still be small talk: fillers and addressing words
FILLERS_EN = frozenset("""ok okay k sure thanks thank thx ty cheers great cool nice awesome perfect alright right yes
yeah yep no nope hi hello hey bye goodbye lol haha hmm got it sounds good good noted understood welcome morning evening
night there everyone everybody all guys folks you so much very a lot see later soon take care again too then anyway
anyways though buddy mate man dude bot oh ah well that this it""".split())
_WORD_EN = re.compile(r"[a-z]+(?:'[a-z]+)?")
_SEGMENT_EN = re.compile(r"\s*(?:[,;:]|\s[-–—]+\s|[-–—]{2,}|\.\.\.|…)\s*")


def _plain(text: str) -> str:
    """Lower-cased, with emoji and pictographs removed and curly quotes straightened."""
    text = "".join(ch for ch in text if not _pictograph(ch))
    return text.lower().replace("’", "'").replace("‘", "'")


def _pictograph(ch: str) -> bool:
    """Emoji, pictographs, variation selectors and zero-width joiners."""
    if ch in "\u200d\ufe0f\ufe0e":
        return True
    category = unicodedata.category(ch)
    return category == "So" or (category == "Sk" and ord(ch) > 0x1F000) or 0x1F300 <= ord(ch) <= 0x1FAFF


def is_small_talk_en(segment: str) -> bool:
    """No word left once pleasantries, laughter and fillers are taken out (an empty segment counts)."""
    rest = _PLEASANTRY_EN.sub(" ", _plain(segment))
    return all(word in FILLERS_EN for word in _WORD_EN.findall(rest))


_FIRST_PERSON = re.compile(r"(?<![\w'])(?:i|i'm|i've|i'd|i'll|im|my|we|we're|we've|our|me)(?![\w'])", re.I)


def strip_en(sentence: str) -> str:
    """``sentence`` without its leading and trailing small-talk segments ("" when all of it is small
    talk), and without small-talk words just before its first "I", "my" or "we" ("lol yeah I just …")."""
    sentence = _strip(sentence, _SEGMENT_EN, lambda start, end: is_small_talk_en(sentence[start:end]))
    first = _FIRST_PERSON.search(sentence)
    if first and first.start() > 0 and is_small_talk_en(sentence[:first.start()]):
        return sentence[first.start():]
    return sentence


# -- Chinese ------------------------------------------------------------------------------------

#: Chinese pleasantries (Simplified; text is converted before matching), longest first when matched
PLEASANTRIES_ZH = (
    "好的呢", "好的", "好吧", "好啊", "好呀", "好滴", "好嘞", "行吧", "行啊", "那好", "可以的", "可以", "没问题", "没事",
    "没关系", "不要紧", "谢谢你", "谢谢您", "谢谢啦", "谢谢了", "谢谢", "多谢", "非常感谢", "感谢你", "感谢您", "感谢",
    "辛苦你了", "辛苦了", "辛苦啦", "辛苦", "麻烦你了", "不客气", "不用谢", "晚安", "早安", "早上好", "中午好", "下午好",
    "晚上好", "你好", "您好", "大家好", "嗨", "哈喽", "再见", "拜拜", "回头见", "明天见", "下次见", "待会见", "一会儿见",
    "回头聊", "再聊", "先这样", "就这样", "太棒了", "真棒", "好棒", "棒棒", "厉害", "太好了", "好主意", "有道理",
    "明白了", "明白", "知道了", "收到", "了解", "懂了", "真有意思", "有意思", "太好笑了", "好笑", "笑死我了", "笑死",
    "愉快", "快乐", "顺利", "开心", "我很好", "我挺好的", "我挺好", "我还好", "还不错", "还行", "挺好的", "挺好",
    "你呢", "你怎么样", "最近怎么样", "最近好吗", "在吗", "对的", "对", "是的", "没错", "确实", "当然", "好",
    "嗯", "哦", "噢", "喔", "啊", "呀", "哇", "诶", "欸", "耶", "嘿", "哈", "呵", "嘻", "嘿嘿", "嘻嘻",
)
#: what may surround a Chinese pleasantry: times and addressees ("明天再聊", "祝你周末愉快", "谢谢你啦")
_FILLERS_ZH = ("明天", "下次", "改天", "回头", "晚点", "有空", "一会儿", "待会儿", "待会", "今天", "周末", "旅途",
               "假期", "新年", "节日", "生日", "祝你", "祝您", "祝", "你", "您", "大家", "也", "都", "很", "真",
               "太", "了", "啦", "呢", "吧", "哈", "嘛", "哒", "的", "哟", "咯", "喽")
#: a remark about the listener: 你太逗了, 你真可爱, 你说得对, 你真是个天才
_REMARK_ZH = re.compile(r"[你您](?:也|可|真是|可真|实在|简直|说得|讲得)?(?:太|真|好|很|挺|蛮|超级|超|特别|非常|最)?"
                        r"(?:是个|是)?(?:逗|搞笑|幽默|有趣|好玩|可爱|聪明|机智|厉害|棒|贴心|暖心|靠谱|给力|牛|有才|好笑|对|"
                        r"有道理|调皮|皮|懂我|体贴|温柔|会说话|天才|宝藏|开心果)")
_PLEASANTRY_ZH = re.compile("|".join(re.escape(p) for p in sorted(PLEASANTRIES_ZH + _FILLERS_ZH, key=len, reverse=True)))
_SEGMENT_ZH = re.compile(r"\s*[，,、；;：:]\s*")
_PUNCTUATION = re.compile(r"[\s\W_]+")


def is_small_talk_zh(segment: str, simplified: str | None = None) -> bool:
    """Nothing left of a Chinese segment (``simplified``: its Simplified form) once pleasantries,
    laughter, particles and punctuation are taken out; English words in it must be small talk too."""
    text = _plain(simplified if simplified is not None else segment)
    rest = _PLEASANTRY_ZH.sub(" ", _REMARK_ZH.sub(" ", text))
    latin = " ".join(re.findall(r"[a-z']+", rest))
    return not _PUNCTUATION.sub("", re.sub(r"[a-z']+", "", rest)) and (not latin or is_small_talk_en(latin))


def strip_zh(sentence: str, simplified: str) -> str:
    """``sentence`` without its leading and trailing small-talk clauses ("" when all of it is small talk).
    ``simplified`` is the same sentence in Simplified characters (the same length: OpenCC maps one
    character to one)."""
    if len(simplified) != len(sentence):
        simplified = sentence
    return _strip(sentence, _SEGMENT_ZH, lambda start, end: is_small_talk_zh(sentence[start:end], simplified[start:end]))


# -- other languages (their packs: ``text/languages``) ---------------------------------------------

#: laughter and reactions in any script: haha, jaja, ahah, kkk, хаха, ㅋㅋ, ㅎㅎ, www, 笑, 555
_LAUGHTER = re.compile(r"(?<![^\W\d_])(?:[aeiou]?(?:[hjk][aeiou]){2,}[hjk]?|a?h+a(?:h+a)+h*|k{3,}|"
                       r"(?:х[аеи]){2,}х?|(?:ㅋ|ㅎ|ㅠ|ㅜ)+|w{3,}|笑|草|5{3,}|lol|xd)(?![^\W\d_])", re.I)
_SEGMENT_ANY = re.compile(r"\s*(?:[,;:、，；：]|\s[-–—]+\s|\.\.\.|…)\s*")


def _is_small_talk_pack(segment: str, pack) -> bool:
    """Nothing left of ``segment`` once the pack's pleasantries, laughter, emoji, fillers and punctuation
    are taken out."""
    text = _plain(segment)
    for phrase in sorted(pack.small_talk, key=len, reverse=True):
        text = _remove(text, phrase, pack.spaced)
    text = _LAUGHTER.sub(" ", text)
    if pack.spaced:
        fillers = {f.lower() for f in pack.fillers} | {"ok", "okay", "super", "lol", "xd"}
        return all(w in fillers for w in re.findall(rf"(?:[^\W\d_]|[{MARKS}])+", text))
    for filler in sorted(pack.fillers, key=len, reverse=True):
        text = text.replace(filler, " ")
    return not _PUNCTUATION.sub("", text)


def _remove(text: str, phrase: str, spaced: bool) -> str:
    if not spaced:
        return text.replace(phrase, " ")
    return re.sub(rf"(?<!{LETTERS})" + re.escape(phrase.lower()) + rf"(?!{LETTERS})", " ", text)


def is_small_talk(text: str, code: str | None = None) -> bool:
    """Whether ``text`` (in any language; ``code`` when the caller knows it) is small talk only: every
    segment a pleasantry, laughter or filler. A language without a pack: only laughter, emoji and
    punctuation count."""
    from memlane.text import languages

    code = code or languages.detect(text)
    if code == "en":
        return is_small_talk_en(text)
    if code == "zh":
        return is_small_talk_zh(text, to_simplified(text))
    pack = languages.pack(code)
    if pack is None:
        rest = _LAUGHTER.sub(" ", _plain(text))
        return not _PUNCTUATION.sub("", rest)
    return all(_is_small_talk_pack(text[start:end], pack) for start, end in _segments(text, _SEGMENT_ANY))


def strip_any(sentence: str, code: str) -> str:
    """``sentence`` (language ``code``, not English or Chinese) without its leading and trailing
    small-talk segments ("" when all of it is small talk)."""
    return _strip(sentence, _SEGMENT_ANY, lambda start, end: is_small_talk(sentence[start:end], code))


# -- both ---------------------------------------------------------------------------------------

def _segments(text: str, separator: re.Pattern[str]) -> list[tuple[int, int]]:
    spans, start = [], 0
    for match in separator.finditer(text):
        spans.append((start, match.start()))
        start = match.end()
    spans.append((start, len(text)))
    return spans


def _strip(sentence: str, separator: re.Pattern[str], small: Callable[[int, int], bool]) -> str:
    """The span from the first to the last segment that is not small talk (``small(start, end)``)."""
    segments = _segments(sentence, separator)
    keep = [i for i, (start, end) in enumerate(segments) if not small(start, end)]
    if not keep:
        return ""
    return sentence[segments[keep[0]][0]:segments[keep[-1]][1]].strip()
