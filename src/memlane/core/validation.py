"""Checks for every argument that crosses the public API.

Each failure raises ``InvalidInputError`` naming the argument and what would be
accepted, before anything is embedded or written.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from memlane.core import timeutil
from memlane.core.errors import InvalidInputError
from memlane.core.models import Message

log = logging.getLogger("memlane.core.validation")

ROLES = ("user", "assistant", "system", "tool")
MAX_ID_CHARS = 256
#: Metadata keys that name record fields; they cannot be set through metadata.
RESERVED_METADATA_KEYS = ("id", "memory", "hash", "score", "created_at", "updated_at", "user_id", "agent_id", "run_id")
#: Metadata keys that mem0 promotes to record fields; memlane does the same.
PROMOTABLE_METADATA_KEYS = ("actor_id", "role")


@dataclass(frozen=True)
class Limits:
    max_text_chars: int = 32_768
    max_metadata_bytes: int = 65_536
    max_messages: int = 10_000
    max_results: int = 10_000


TENANT_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

#: How deep a JSON value given as metadata (or any JSON argument) may nest. SQLite's JSON functions
#: stop at 1,000 levels and Python's encoder at the recursion limit; nobody's metadata needs more.
MAX_JSON_DEPTH = 64

#: Characters no store keeps: NUL (PostgreSQL refuses it in text and jsonb; SQLite would keep it,
#: and C strings end at it) and lone surrogates U+D800-U+DFFF (half of a UTF-16 pair: no UTF-8 form).
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def storable(value: Any, field: str, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """The one rule for text that crosses the public API, on every backend alike: no string in
    ``value`` (a string, or a JSON value with strings as keys and values) holds a NUL character or a
    lone surrogate, and it nests at most ``max_depth`` levels. Raises ``InvalidInputError`` naming
    where (``metadata.tags[2]``), before anything is written. Walks without recursion, so any depth
    is refused cleanly."""
    stack: list[tuple[Any, str, int]] = [(value, field, 0)]
    while stack:
        item, where, depth = stack.pop()
        if isinstance(item, str):
            _check_chars(item, where)
        elif isinstance(item, (Mapping, list, tuple)):
            if depth >= max_depth:
                raise InvalidInputError(f"{field} nests deeper than {max_depth} levels", field=field)
            if isinstance(item, Mapping):
                for key, inner in item.items():
                    if isinstance(key, str):
                        _check_chars(key, f"{where} key {key[:40]!r}", field=where)
                    stack.append((inner, f"{where}.{key}", depth + 1))
            else:
                stack.extend((inner, f"{where}[{i}]", depth + 1) for i, inner in enumerate(item))


def unstorable(text: str) -> str | None:
    """What in ``text`` no store keeps ("a NUL character (U+0000) at position 3"), or None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    char = found.group()
    what = "a NUL character (U+0000)" if char == "\x00" else f"a lone surrogate (U+{ord(char):04X}, half of a UTF-16 pair)"
    return f"{what} at position {found.start()}"


def _check_chars(text: str, where: str, field: str | None = None) -> None:
    problem = unstorable(text)
    if problem is not None:
        raise InvalidInputError(f"{where} contains {problem}; send valid Unicode text without NUL characters",
                                field=field or where)


def tenant_name(value: Any) -> str:
    """A tenant name: 1-64 letters, digits, ``_`` or ``-`` (it names a file)."""
    if not isinstance(value, str) or not TENANT_PATTERN.match(value):
        raise InvalidInputError(
            f"tenant must be 1-64 characters of letters, digits, '_' or '-', got {value!r}", field="tenant"
        )
    return value


def identifier(value: Any, field: str, *, required: bool = False) -> str | None:
    """An id: non-empty string without whitespace; integers are converted."""
    if value is None:
        if required:
            raise InvalidInputError(f"{field} is required", field=field)
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}", field=field)
    if not value:
        raise InvalidInputError(f"{field} must not be empty", field=field)
    _check_chars(value, field)
    if any(c.isspace() for c in value):
        raise InvalidInputError(f"{field} must not contain whitespace, got {value!r}", field=field)
    if len(value) > MAX_ID_CHARS:
        raise InvalidInputError(f"{field} is longer than {MAX_ID_CHARS} characters", field=field)
    return value


def text(value: Any, field: str, limits: Limits) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}", field=field)
    _check_chars(value, field)
    if not value.strip():
        raise InvalidInputError(f"{field} must not be empty or whitespace", field=field)
    if len(value) > limits.max_text_chars:
        raise InvalidInputError(
            f"{field} has {len(value):,} characters; the limit is {limits.max_text_chars:,} "
            "(configure limits.max_text_chars to change it)",
            field=field,
        )
    return value


def metadata(value: Any, limits: Limits) -> tuple[dict[str, Any], dict[str, str]]:
    """Return (metadata to store, promoted fields such as actor_id / role)."""
    if value is None:
        return {}, {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"metadata must be a dict, got {type(value).__name__}", field="metadata")
    storable(value, "metadata")
    for key in value:
        if not isinstance(key, str) or not key:
            raise InvalidInputError(f"metadata keys must be non-empty strings, got {key!r}", field="metadata")
        if key in RESERVED_METADATA_KEYS:
            raise InvalidInputError(
                f"metadata key {key!r} is reserved; pass it as the {key} argument instead"
                if key in ("user_id", "agent_id", "run_id")
                else f"metadata key {key!r} is reserved for a memory field",
                field="metadata",
            )
    try:
        encoded = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata is not JSON-serialisable: {exc}", field="metadata") from None
    if len(encoded.encode()) > limits.max_metadata_bytes:
        raise InvalidInputError(
            f"metadata is {len(encoded.encode()):,} bytes as JSON; the limit is {limits.max_metadata_bytes:,}",
            field="metadata",
        )
    stored = json.loads(encoded)  # a private deep copy
    promoted = {}
    for key in PROMOTABLE_METADATA_KEYS:
        if key in stored:
            promoted[key] = identifier_text(stored.pop(key), f"metadata.{key}")
    return stored, promoted


def idempotency_key(value: Any, field: str = "idempotency_key") -> str | None:
    """A key naming one add, so that its retries are applied once: 1-256 characters, or None."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS:
        raise InvalidInputError(f"{field} must be a non-empty string of at most {MAX_ID_CHARS} characters, "
                                f"got {value!r}", field=field)
    _check_chars(value, field)
    return value


def identifier_text(value: Any, field: str) -> str:
    """A label such as actor_id or role: a non-empty string (spaces allowed)."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_ID_CHARS:
        raise InvalidInputError(f"{field} must be a non-empty string of at most {MAX_ID_CHARS} characters", field=field)
    _check_chars(value, field)
    return value


def flag(value: Any, field: str, default: bool) -> bool:
    if value is None:
        return default
    if not isinstance(value, bool):
        raise InvalidInputError(f"{field} must be true or false, got {value!r}", field=field)
    return value


def choice(value: Any, allowed: tuple[str, ...], field: str) -> str | None:
    if value is None:
        return None
    if value not in allowed:
        raise InvalidInputError(f"{field} must be one of {', '.join(allowed)}, got {value!r}", field=field)
    return value


def moment(value: Any, field: str) -> str:
    """A point in time: ISO-8601 text, datetime or date (naive = UTC), in the stored form."""
    try:
        return timeutil.canonical(value)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{field} must be an ISO-8601 date or datetime, got {value!r}", field=field) from None


#: how far ahead of this server's clock a said time may be (another machine's clock may run a little fast)
CLOCK_SKEW_SECONDS = 60


def said_time(value: Any, field: str) -> str | None:
    """When something was said: Unix seconds (int or float), ISO-8601 text, datetime or date (naive =
    UTC), in the stored form; None for "now". A time in the future is refused: nothing has been said
    then yet."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise InvalidInputError(f"{field} must be Unix seconds or an ISO-8601 date or datetime, got {value!r}",
                                field=field)
    if isinstance(value, (int, float)):
        try:
            value = datetime.fromtimestamp(value, tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise InvalidInputError(f"{field} {value!r} is not a time (Unix seconds, 1970 to 9999)",
                                    field=field) from None
    elif isinstance(value, str) and value.strip().lstrip("-").replace(".", "", 1).isdigit():
        return said_time(float(value), field)  # Unix seconds as text (a query string, a form)
    stored = moment(value, field)
    limit = (datetime.now(timezone.utc) + timedelta(seconds=CLOCK_SKEW_SECONDS)).isoformat(timespec="microseconds")
    if stored > limit:
        raise InvalidInputError(f"{field} {stored[:19]} UTC is in the future (now is {timeutil.now_iso()[:19]} UTC); "
                                "give when it was said", field=field)
    return stored


def expiration(value: Any, field: str = "expiration_date") -> str | None:
    """When a new memory expires: a future ISO-8601 date (its start, UTC) or datetime, or None."""
    if value is None:
        return None
    moment_ = moment(value, field)
    now = timeutil.now_iso()
    if moment_ <= now:
        raise InvalidInputError(f"{field} {value!s} is not in the future (now is {now[:19]} UTC): a memory would be "
                                "expired before it is stored; give a later date or none", field=field)
    return moment_


def limit(value: Any, limits: Limits, field: str = "limit") -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInputError(f"{field} must be an integer, got {type(value).__name__} {value!r}", field=field)
    if not 1 <= value <= limits.max_results:
        raise InvalidInputError(f"{field} must be between 1 and {limits.max_results}, got {value}", field=field)
    return value


def count(value: Any, field: str) -> int:
    """A whole number of things, zero or more."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInputError(f"{field} must be an integer of at least 0, got {value!r}", field=field)
    return value


def similarity_threshold(value: Any, field: str = "threshold") -> float:
    """A cosine similarity above which two memories are the same: a number in (0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0.0 < value <= 1.0:
        raise InvalidInputError(f"{field} is the cosine similarity at which memories merge and must lie in (0, 1], "
                                f"got {value!r}", field=field)
    return float(value)


def lenient_limit(value: Any, default: int, maximum: int, field: str = "limit") -> tuple[int, str | None]:
    """Seed 001's rule for a ``limit`` sent to a face (REST, MCP): a value that is not an integer
    (a string such as ``"7"``, a float such as ``2.0``, null, a list; a boolean is not a count either)
    or is <= 0 becomes ``default``, with a warning; above ``maximum`` it becomes ``maximum``, with a
    warning. Returns (limit, warning or None); the warning is also logged. The SDK stays strict
    (``limit``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        warning = f"invalid {field} {value!r} (not a positive integer); using the default {default}"
    elif value > maximum:
        warning, default = f"{field} {value} is above the maximum {maximum}; using {maximum}", maximum
    else:
        return value, None
    log.warning("%s", warning)
    return default, warning


def threshold(value: Any) -> float | None:
    """Cosine-similarity threshold: a number in [-1, 1], or None."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInputError(f"threshold must be a number, got {type(value).__name__} {value!r}", field="threshold")
    if not math.isfinite(value) or not -1.0 <= value <= 1.0:
        raise InvalidInputError(
            f"threshold is a cosine similarity and must lie in [-1, 1], got {value}", field="threshold"
        )
    return float(value)


def messages(value: Any, limits: Limits, field: str = "messages") -> list[Message]:
    """Normalise a string, a message dict or a list of message dicts (or strings: user messages).
    ``field`` names the argument in errors."""
    if isinstance(value, str):
        value = [{"role": "user", "content": value}]
    elif isinstance(value, Mapping):
        value = [value]
    elif not isinstance(value, list):
        raise InvalidInputError(
            f"{field} must be a string, a message dict or a list of messages, got {type(value).__name__}",
            field=field,
        )
    if not value:
        raise InvalidInputError(f"{field} is empty", field=field)
    if len(value) > limits.max_messages:
        raise InvalidInputError(f"{len(value)} messages in one call; the limit is {limits.max_messages}", field=field)
    return [_message(item, f"{field}[{i}]", limits) for i, item in enumerate(value)]


def _message(item: Any, field: str, limits: Limits) -> Message:
    if isinstance(item, str):
        item = {"role": "user", "content": item}
    if not isinstance(item, Mapping):
        raise InvalidInputError(f"{field} must be a dict with role and content, got {type(item).__name__}", field=field)
    unknown = sorted(set(item) - {"role", "content", "name", "created_at"})
    if unknown:
        raise InvalidInputError(f"{field} has unknown keys {unknown}; a message has role, content, name and "
                                "created_at", field=field)
    role = item.get("role", "user")
    if role not in ROLES:
        raise InvalidInputError(f"{field}.role must be one of {', '.join(ROLES)}, got {role!r}", field=field)
    content = item.get("content")
    if isinstance(content, list):  # OpenAI content parts: keep the text parts
        parts = [p.get("text") for p in content if isinstance(p, Mapping) and p.get("type") == "text"]
        if len(parts) != len(content) or not all(isinstance(p, str) for p in parts):
            raise InvalidInputError(f"{field}.content parts must all be {{'type': 'text', 'text': ...}}", field=field)
        content = "\n".join(parts)
    content = text(content, f"{field}.content", limits)
    name = item.get("name")
    if name is not None:
        name = identifier_text(name, f"{field}.name")
    return Message(role=role, content=content, name=name, created_at=said_time(item.get("created_at"),
                                                                               f"{field}.created_at"))


def conversation(value: Any, system_prompt: Any, limits: Limits, max_chars: int) -> tuple[list[Message], str]:
    """A conversation (text: one user message; or a list of messages) and its system prompt, together
    at most ``max_chars`` characters (``context.max_conversation_chars``). Empty is not an error
    (seed 004: "functions handle empty inputs gracefully"): a missing, blank or empty conversation is
    no turns, and a message without content is left out."""
    if isinstance(value, Mapping):
        value = [value]
    if value is None or (isinstance(value, str) and not value.strip()):
        value = []
    elif isinstance(value, list):
        value = [item for item in value if not _blank(item)]
    turns = messages(value, limits, "conversation") if value != [] else []
    if system_prompt is None:
        system_prompt = ""
    if not isinstance(system_prompt, str):
        raise InvalidInputError(f"system_prompt must be a string, got {type(system_prompt).__name__}",
                                field="system_prompt")
    _check_chars(system_prompt, "system_prompt")
    size = len(system_prompt) + sum(len(m.content) for m in turns)
    if size > max_chars:
        raise InvalidInputError(
            f"conversation and system_prompt have {size:,} characters; the limit is {max_chars:,} "
            "(send the recent turns, or configure context.max_conversation_chars)", field="conversation")
    return turns, system_prompt


def _blank(item: Any) -> bool:
    """A message that says nothing: None, blank text, or a message dict without content."""
    if item is None or isinstance(item, str):
        return item is None or not item.strip()
    if isinstance(item, Mapping):
        content = item.get("content")
        return content is None or (isinstance(content, str) and not content.strip())
    return False
