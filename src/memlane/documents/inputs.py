"""What ``Documents`` accepts: names, metadata, counts, files and text, checked against the
``documents`` limits. Each check returns the clean value or raises ``InvalidInputError`` naming
the field and the problem; nothing is written before every check passed."""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from memlane.core.config import DocumentsConfig
from memlane.documents import ingest
from memlane.documents import query_filter as qf
from memlane.documents.models import RESERVED_COLLECTION_NAMES
from memlane.core.errors import InvalidInputError
from memlane.core.filters import Node
from memlane.core.validation import storable

MAX_NAME_CHARS = 256
#: characters a name may not hold: they mean something else in a URL path or a file path
#: (``/collections/{name}``, ``memlane docs add DIR/FILE``), so a name never changes meaning on its way
NAME_FORBIDDEN = "/\\%"

Progress = Callable[[str, int, int], None]


def name(value: Any, field: str, *, collection: bool = False, existing: bool = False) -> str:
    """A collection or document name, by one rule: 1-256 characters, no leading or trailing space,
    no control character (NUL included) or lone surrogate, none of ``/ \\ %`` (each means something
    else in a URL or a file path), and not ``.`` or ``..``; a collection may not be named ``all``
    (it means every collection). Letters of every script, digits, spaces, ``. _ - ( ) [ ] , + & # @ '``
    and the like are fine: ``Q4 report (final).pdf``, ``合同 2024``. ``existing``: the name of something
    to look up, which only has to be a string no store refuses (a name given before this rule still works)."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}", field=field)
    storable(value, field)
    if not value.strip() or value != value.strip():
        raise InvalidInputError(f"{field} must be non-empty without leading or trailing spaces, got {value!r}",
                                field=field)
    if len(value) > MAX_NAME_CHARS:
        raise InvalidInputError(f"{field} is longer than {MAX_NAME_CHARS} characters", field=field)
    if existing:
        return value
    bad = next((c for c in value if c in NAME_FORBIDDEN or ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise InvalidInputError(f"{field} {value!r} contains {bad!r}: a name may not hold '/', '\\', '%' or "
                                "control characters (they mean something else in a URL or a file path)", field=field)
    if value in (".", ".."):
        raise InvalidInputError(f"{field} may not be {value!r} (it means a directory in a path)", field=field)
    if collection and value.casefold() in RESERVED_COLLECTION_NAMES:
        raise InvalidInputError(f"{value!r} is reserved (collection_name \"all\" searches every collection); "
                                "choose another name", field=field)
    return value


def metadata(value: Mapping[str, Any] | None, settings: DocumentsConfig) -> dict[str, Any]:
    """A JSON object of at most ``max_metadata_bytes`` (None: empty)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"metadata must be a JSON object, got {type(value).__name__}", field="metadata")
    storable(value, "metadata")
    try:
        encoded = json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata must be JSON ({exc})", field="metadata") from None
    if len(encoded.encode()) > settings.max_metadata_bytes:
        raise InvalidInputError(f"metadata is {len(encoded.encode()):,} bytes as JSON; the limit is "
                                f"{settings.max_metadata_bytes:,} (documents.max_metadata_bytes)", field="metadata")
    return json.loads(encoded)


def query_text(value: Any, settings: DocumentsConfig) -> str:
    """A search query: non-empty text of at most ``max_query_chars``."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInputError("query must be a non-empty string", field="query")
    storable(value, "query")
    if len(value) > settings.max_query_chars:
        raise InvalidInputError(f"query has {len(value):,} characters; the limit is "
                                f"{settings.max_query_chars:,} (documents.max_query_chars)", field="query")
    return value


def query_filter(value: Mapping[str, Any] | None, allowed: Sequence[str] = qf.TARGETS) -> Node:
    """A parsed ``query_filter`` that reads only the metadata of ``allowed`` (document, collection)."""
    where = qf.parse(value)
    wrong = qf.targets(where) - set(allowed)
    if wrong:
        raise qf.filter_error(f"this call filters on {' or '.join(allowed)} metadata; "
                              f"'on: {sorted(wrong)[0]}' does not apply here", "query_filter.on")
    return where


def positive_int(value: Any, field: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{field} must be a positive integer, got {value!r}", field=field)
    if value > maximum:
        raise InvalidInputError(f"{field} is {value}; the limit is {maximum}", field=field)
    return value


def binary(value: Any, field: str, max_bytes: int) -> bytes:
    """Bytes, or base64 text (a ``data:...;base64,`` prefix is accepted), at most ``max_bytes``."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    elif isinstance(value, str):
        text = value.split(",", 1)[1] if value.startswith("data:") and "," in value else value
        if math.ceil(len(text) * 3 / 4) > max_bytes + 3:
            raise InvalidInputError(f"{field} is larger than {max_bytes:,} bytes (documents.max_file_bytes)",
                                    field=field)
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInputError(f"{field} is not valid base64", field=field) from None
    else:
        raise InvalidInputError(f"{field} must be bytes or base64 text, got {type(value).__name__}", field=field)
    if not data:
        raise InvalidInputError(f"{field} is empty", field=field)
    if len(data) > max_bytes:
        raise InvalidInputError(f"{field} has {len(data):,} bytes; the limit is {max_bytes:,} "
                                "(documents.max_file_bytes)", field=field)
    return data


def pages(settings: DocumentsConfig, text: str | None, file: bytes | str | None, filename: str | None,
          path: str | Path | None, progress: Progress | None) -> tuple[str, list[ingest.PageInput], str | None]:
    """The document's kind, pages and source from exactly one of ``text``, ``file`` or ``path``."""
    given = [k for k, v in (("text", text), ("file", file), ("path", path)) if v is not None]
    if len(given) != 1:
        raise InvalidInputError("give exactly one of text, file (base64) or path"
                                + (f"; got {', '.join(given)}" if given else ""), field="text")
    limit = settings.page_chars
    if text is not None:
        if not isinstance(text, str):
            raise InvalidInputError(f"text must be a string, got {type(text).__name__}", field="text")
        storable(text, "text")
        if len(text) > settings.max_text_chars:
            raise InvalidInputError(f"text has {len(text):,} characters; the limit is "
                                    f"{settings.max_text_chars:,} (documents.max_text_chars)", field="text")
        kind = "markdown" if filename and ingest.detect_kind(filename, b"") == "markdown" else "text"
        found, source = ingest.pages_from_text(text, kind, limit), filename
    else:
        if path is not None:
            field, file_path = "path", Path(path).expanduser()
            if not file_path.is_file():
                raise InvalidInputError(f"path {str(path)!r} is not a readable file", field="path")
            size = file_path.stat().st_size
            if size > settings.max_file_bytes:
                raise InvalidInputError(f"{path} has {size:,} bytes; the limit is "
                                        f"{settings.max_file_bytes:,} (documents.max_file_bytes)", field="path")
            data, filename, source = file_path.read_bytes(), filename or file_path.name, str(file_path)
        else:
            field = "file"
            data, source = binary(file, "file", settings.max_file_bytes), filename
        kind, found = ingest.pages_from_file(data, filename, limit, progress=progress, field=field)
    if not found:
        raise InvalidInputError("the document has no text to index (a scanned PDF without a text layer, "
                                "or an empty file)", field="file" if text is None else "text")
    if len(found) > settings.max_pages:
        raise InvalidInputError(f"the document has {len(found):,} pages; the limit is "
                                f"{settings.max_pages:,} (documents.max_pages)", field="file")
    return kind, found, source
