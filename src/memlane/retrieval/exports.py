"""A memory export: memories shaped by a JSON schema (mem0's ``create_memory_export``).

Two ways to fill the schema, both checked against it (``jsonschema``):

* **offline** (no LLM configured): by field names. A list whose items are objects gets one object per
  memory, each property that names a memory attribute filled from it (``id``, ``memory`` / ``text`` /
  ``content``, ``created_at``, ``updated_at``, ``user_id``, ``agent_id``, ``run_id``, ``metadata``,
  ``categories``, ``memory_type``, ``hash``, ``actor_id``, ``role``, ``expiration_date``) or, failing that,
  from the memory's metadata key of that name; a list of strings gets the memories' texts; ``count`` /
  ``total`` the number of memories; ``user_id`` / ``agent_id`` / ``run_id`` the filters' ids; anything
  else its ``default``, or null when the schema allows it. A schema describing one memory (its
  properties name memory attributes) at the top level gets a list of such objects only if it is an
  array; an object schema is one object.
* **with an LLM**: the model reads the memories and answers the JSON, as mem0's platform does; an answer
  that does not validate is sent back once with the problem, then the export fails.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from memlane.llms.parsing import LLMOutputError, ask_json

ALIASES = {"memory": "memory", "text": "memory", "content": "memory", "fact": "memory", "id": "id",
           "memory_id": "id", "created_at": "created_at", "updated_at": "updated_at", "user_id": "user_id",
           "agent_id": "agent_id", "run_id": "run_id", "metadata": "metadata", "categories": "categories",
           "memory_type": "memory_type", "hash": "hash", "actor_id": "actor_id", "role": "role",
           "expiration_date": "expiration_date"}
TEXT_LISTS = ("memories", "facts", "items", "results", "texts")
COUNTS = ("count", "total", "total_memories")
SCOPE = ("user_id", "agent_id", "run_id")
_MISSING = object()

SYSTEM = """You export what a long-term memory holds about someone as one JSON value that validates against \
a JSON schema. Use only what the memories say; a field they say nothing about is null (or left out when it \
is optional). Answer with the JSON value only."""
REPAIR = "That answer cannot be used: {problem}. Answer again with only a JSON value that validates against the schema."


class ExportFailed(Exception):
    """The schema could not be filled (the reason says why)."""


def problems(schema: Mapping[str, Any], value: Any) -> list[str]:
    """Where ``value`` breaks ``schema`` (empty: it validates)."""
    try:
        from jsonschema import validators
    except ImportError:  # pragma: no cover - jsonschema comes with the MCP SDK
        return []
    validator = validators.validator_for(schema)(schema)
    return [f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
            for error in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))]


def _resolve(schema: Any, root: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with a local ``$ref`` (``#/$defs/X``) followed, and a nullable ``anyOf`` reduced to its other branch."""
    for _ in range(20):
        if not isinstance(schema, Mapping):
            return {}
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            target: Any = root
            for part in ref[2:].split("/"):
                target = target.get(part, {}) if isinstance(target, Mapping) else {}
            schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
            continue
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list):
            kept = [b for b in branches if not (isinstance(b, Mapping) and b.get("type") == "null")]
            if len(kept) == 1:
                schema = {**kept[0], **{k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}}
                continue
        return dict(schema)
    return dict(schema)


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    found = set(kind) if isinstance(kind, list) else {kind} if isinstance(kind, str) else set()
    if not found and "properties" in schema:
        found.add("object")
    if not found and "items" in schema:
        found.add("array")
    return found


def _nullable(schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    if "null" in _types(schema):
        return True
    branches = schema.get("anyOf") or schema.get("oneOf") or []
    return any(isinstance(b, Mapping) and "null" in _types(_resolve(b, root)) for b in branches)


def _attribute(memory: Mapping[str, Any], name: str) -> Any:
    key = ALIASES.get(name.lower())
    if key == "categories":
        return memory.get("categories") or (memory.get("metadata") or {}).get("categories") or []
    if key is not None:
        return memory.get(key, _MISSING) if key in memory else _MISSING
    metadata = memory.get("metadata") or {}
    return metadata.get(name, _MISSING)


def _object(schema: Mapping[str, Any], root: Mapping[str, Any], value_of: Any) -> dict[str, Any]:
    required = set(schema.get("required") or ())
    out: dict[str, Any] = {}
    for name, raw in (schema.get("properties") or {}).items():
        prop = _resolve(raw, root)
        value = value_of(name, prop)
        if value is _MISSING and "default" in prop:
            value = prop["default"]
        if value is _MISSING and (name in required or _nullable(raw, root) or _nullable(prop, root)):
            value = None
        if value is not _MISSING:
            out[name] = value
    return out


def _memory_object(schema: Mapping[str, Any], root: Mapping[str, Any], memory: Mapping[str, Any]) -> Any:
    if "object" not in _types(schema):
        return memory.get("memory")
    return _object(schema, root, lambda name, prop: _attribute(memory, name))


def fill(schema: Mapping[str, Any], memories: Sequence[Mapping[str, Any]], scope: Mapping[str, Any]) -> Any:
    """The offline export (see the module's docstring)."""
    root = schema
    top = _resolve(schema, root)

    def listing(prop: Mapping[str, Any]) -> list[Any]:
        items = _resolve(prop.get("items") or {}, root)
        return [_memory_object(items, root, m) for m in memories]

    if "array" in _types(top):
        return listing(top)

    def value_of(name: str, prop: Mapping[str, Any]) -> Any:
        kinds = _types(prop)
        if "array" in kinds:
            items = _resolve(prop.get("items") or {}, root)
            if "object" in _types(items) or name.lower() in TEXT_LISTS or "string" in _types(items):
                return listing(prop)
        if name.lower() in COUNTS and kinds & {"integer", "number"}:
            return len(memories)
        if name in SCOPE and scope.get(name) is not None:
            return scope[name]
        return _MISSING

    return _object(top, root, value_of)


def ask(llm: Any, schema: Mapping[str, Any], memories: Sequence[Mapping[str, Any]],
        instructions: str | None) -> Any:
    """The export an LLM writes (one repair call if its answer does not validate); ``ExportFailed`` else."""
    listing = "\n".join(f"- [{m.get('created_at', '')}] {m.get('memory', '')}" for m in memories) or "(none)"
    prompt = (f"JSON schema:\n{json.dumps(schema, ensure_ascii=False)}\n\nMemories:\n{listing}"
              + (f"\n\nInstructions:\n{instructions}" if instructions else ""))

    def checked(value: Any) -> Any:
        found = problems(schema, value)
        if found:
            raise LLMOutputError(f"it does not validate against the schema: {'; '.join(found[:5])}")
        return value

    return ask_json(llm, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}], checked,
                    repair=REPAIR, failure=ExportFailed, what="export")
