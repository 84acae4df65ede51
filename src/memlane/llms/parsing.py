"""Recover the JSON payload from what a chat model actually wrote.

Model output is untrusted input. This module finds the answer and repairs only
syntax: reasoning blocks (``<think>…</think>``), code fences, prose around the
JSON, trailing commas, single quotes and Python literals (``True``, ``None``),
``\\uXXXX`` escapes, and a whole answer sent as a JSON string whose content is
JSON. It never invents content and never guesses: output cut off mid-value, an
unclosed reasoning block, a refusal, a bare ``null``, or an answer holding two
different JSON values (or one object naming a key twice with different values)
is a ``LLMOutputError``.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any

from memlane.core.errors import MemlaneError
from memlane.llms.base import LLMError


class LLMOutputError(MemlaneError):
    """The model's answer holds no usable JSON."""


_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_OPEN_THINK = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_OPEN_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?")
_PY_WORDS = {"true": "True", "false": "False", "null": "None"}


def parse_json_answer(raw: str | None) -> Any:
    """Return the JSON object or array the model answered with."""
    if raw is None or not raw.strip():
        raise LLMOutputError("the model returned an empty response")
    text = _THINK.sub("", raw)
    opened = _OPEN_THINK.search(text)
    if opened:
        text = text[:opened.start()]  # reasoning that never closed: only what came before it counts
        if not text.strip():
            raise LLMOutputError("the model's reasoning block was never closed and no answer followed")
    inner = _json_string_content(text)
    if inner is not None:  # the whole answer was sent as a JSON string: its content is the answer
        return parse_json_answer(inner)
    fences = _FENCE.findall(text)
    if fences:
        regions = fences
    else:
        unclosed = _OPEN_FENCE.search(text)
        regions = [text[unclosed.end():]] if unclosed else [text]
    values: list[Any] = []
    for region in regions:
        for value in _json_values(region):
            if value not in values:
                values.append(value)
    if len(values) > 1:
        raise LLMOutputError(f"the model's answer holds {len(values)} different JSON values; "
                             f"not guessing which one is meant: {_preview(raw)}")
    if values:
        return values[0]
    raise LLMOutputError(f"no complete JSON object or array in the model's answer: {_preview(raw)}")


def _json_string_content(text: str) -> str | None:
    """The content of an answer that is one JSON string literal holding JSON (``"{\\"facts\\": …}"``)."""
    stripped = text.strip()
    if not (len(stripped) > 1 and stripped[0] == '"' and stripped[-1] == '"'):
        return None
    try:
        content = json.loads(stripped)
    except ValueError:
        return None
    if isinstance(content, str) and content.strip()[:1] in ("{", "[", '"'):
        return content
    return None


def _preview(raw: str) -> str:
    flat = " ".join(raw.split())
    return repr(flat[:120] + ("…" if len(flat) > 120 else ""))


def _json_values(text: str) -> list[Any]:
    """Every top-level balanced ``{…}`` or ``[…]`` in ``text`` that parses (after repair) to an object or array."""
    found = []
    pos = 0
    while pos < len(text):
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            break
        start = min(starts)
        end = _balanced_end(text, start)
        if end is None:  # never closed: the answer was cut off; what is inside it is not an answer
            break
        value = _repair_and_load(text[start:end])
        if isinstance(value, (dict, list)):
            found.append(value)
            pos = end
        else:
            pos = start + 1
    return found


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the bracket closing ``text[start]``, skipping quoted strings of either style."""
    depth = 0
    quote = None
    i = start
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = None
        elif ch in "\"'":
            # an apostrophe inside a word (don't, it's) is not a quote
            if ch == "'" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
                pass
            else:
                quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object that names a key twice must give it one value; two different values are two answers."""
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj and obj[key] != value:
            raise LLMOutputError(f"the model's answer gives the key {key!r} two different values; "
                                 "not guessing which one is meant")
        obj[key] = value
    return obj


def _repair_and_load(segment: str) -> Any:
    for attempt in (segment, _drop_trailing_commas(segment)):
        try:
            return json.loads(attempt, object_pairs_hook=_unique_keys)
        except ValueError:
            pass
    try:  # single quotes and Python literals: read it as a Python literal
        return ast.literal_eval(_python_words(_drop_trailing_commas(segment)))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _outside_strings(segment: str):
    """Yield (index, char, in_string) for each character."""
    quote = None
    escaped = False
    for i, ch in enumerate(segment):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
            yield i, ch, True
            continue
        if ch in "\"'":
            quote = ch
            yield i, ch, True
            continue
        yield i, ch, False


def _drop_trailing_commas(segment: str) -> str:
    out = []
    pending_comma = None
    for _, ch, quoted in _outside_strings(segment):
        if not quoted and ch == ",":
            if pending_comma is not None:
                out.append(pending_comma)
            pending_comma = ch
            continue
        if pending_comma is not None:
            if not quoted and ch.isspace():
                pending_comma += ch
                continue
            if quoted or ch not in "}]":
                out.append(pending_comma)
            else:
                out.append(pending_comma[1:])  # keep the whitespace, drop the comma
            pending_comma = None
        out.append(ch)
    if pending_comma is not None:
        out.append(pending_comma)
    return "".join(out)


def _python_words(segment: str) -> str:
    """Turn JSON's true/false/null (outside strings) into Python's, for ``ast.literal_eval``."""
    out = []
    word = []
    for _, ch, quoted in _outside_strings(segment + " "):
        if not quoted and (ch.isalnum() or ch == "_"):
            word.append(ch)
            continue
        if word:
            token = "".join(word)
            out.append(_PY_WORDS.get(token, token))
            word = []
        out.append(ch)
    return "".join(out)[:-1]


def ask_json(llm: Any, messages: list[dict[str, str]], normalize: Callable[[Any], Any], *, repair: str,
             failure: Callable[[str], Exception], what: str = "answer") -> Any:
    """One chat call whose JSON answer ``normalize`` turns into the caller's shape; if the answer
    cannot be used (``LLMOutputError``), one repair call quoting the problem (``repair`` has a
    ``{problem}`` field). A failed call, or an answer still unusable after the repair, raises
    ``failure(message)``: the caller's own typed error, which its stage reports."""
    try:
        raw = llm.chat(messages)
    except LLMError as exc:
        raise failure(str(exc)) from exc
    try:
        return normalize(parse_json_answer(raw))
    except LLMOutputError as first:
        retry = [*messages, {"role": "assistant", "content": raw or ""},
                 {"role": "user", "content": repair.format(problem=first)}]
        try:
            return normalize(parse_json_answer(llm.chat(retry)))
        except (LLMError, LLMOutputError) as second:
            raise failure(f"the model's {what} could not be used ({first}); "
                          f"after one repair attempt: {second}") from second
