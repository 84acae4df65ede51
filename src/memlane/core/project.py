"""A project's settings (a tenant's: mem0's ``project``), the feedback given on memories, and memory exports.

The settings are what mem0's clients read and write (``client.project.get()`` / ``.update()``).
``custom_instructions`` reach formation: the LLM engine's extraction prompt carries them
(``agent_custom_instructions`` for an agent's own memories); the other fields are kept and shown.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memlane.core import field_errors
from memlane.core.errors import InvalidInputError

MAX_INSTRUCTIONS_CHARS = 20_000
MAX_SCHEMA_BYTES = 256 * 1024

#: mem0's feedback values
FEEDBACK = ("POSITIVE", "NEGATIVE", "VERY_NEGATIVE")


class ProjectSettings(BaseModel):
    """The fields ``PATCH .../projects/{project}/`` takes (mem0's ``ProjectUpdateOptions``); unset ones keep their value."""

    model_config = ConfigDict(extra="forbid")

    custom_instructions: Optional[str] = Field(None, max_length=MAX_INSTRUCTIONS_CHARS)
    agent_custom_instructions: Optional[str] = Field(None, max_length=MAX_INSTRUCTIONS_CHARS)
    custom_categories: Optional[list[Union[str, dict[str, Any]]]] = Field(None, max_length=1000)
    memory_depth: Optional[str] = Field(None, max_length=200)
    usecase_setting: Optional[Union[str, int, float, dict[str, Any]]] = None
    multilingual: Optional[bool] = None
    decay: Optional[bool] = None
    version: Optional[str] = Field(None, max_length=50)


FIELDS = tuple(ProjectSettings.model_fields)


def settings_update(values: dict[str, Any]) -> dict[str, Any]:
    """The fields of an update that were given (``InvalidInputError`` naming a bad or unknown one)."""
    try:
        checked = ProjectSettings.model_validate(values)
    except ValidationError as exc:
        errors = field_errors.field_errors(exc.errors())
        raise InvalidInputError(field_errors.summary(errors) or "invalid project settings",
                                field=errors[0]["field"] if errors else None) from None
    given = checked.model_dump(exclude_unset=True)
    if not given:
        raise InvalidInputError(f"give at least one of {', '.join(FIELDS)}", field="body")
    return given


def fields_wanted(fields: list[str] | None) -> tuple[str, ...]:
    if not fields:
        return FIELDS
    unknown = [f for f in fields if f not in FIELDS]
    if unknown:
        raise InvalidInputError(f"unknown project field {unknown[0]!r}; fields are {', '.join(FIELDS)}",
                                field="fields")
    return tuple(fields)


def instructions(settings: dict[str, Any], *, agent_facts: bool) -> str | None:
    """The instructions formation follows: an agent's own memories use ``agent_custom_instructions`` when set."""
    if agent_facts and settings.get("agent_custom_instructions"):
        return settings["agent_custom_instructions"]
    return settings.get("custom_instructions") or None


def feedback_value(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or value.upper() not in FEEDBACK:
        raise InvalidInputError(f"feedback must be one of {', '.join(FEEDBACK)} or null", field="feedback")
    return value.upper()


@dataclass(slots=True)
class FeedbackRecord:
    id: str
    memory_id: str
    feedback: str | None
    reason: str | None
    created_at: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    def to_item(self) -> dict[str, Any]:
        return {"id": self.id, "memory_id": self.memory_id, "feedback": self.feedback,
                "feedback_reason": self.reason, "created_at": self.created_at}


#: an export's states (made when it is created: no pending state)
SUCCEEDED, FAILED = "SUCCEEDED", "FAILED"


@dataclass(slots=True)
class ExportRecord:
    id: str
    schema: dict[str, Any]
    filters: dict[str, Any]
    status: str
    created_at: str
    instructions: str | None = None
    result: Any = None
    error: str | None = None
    #: how it was filled: ``offline`` (memory attributes by field name) or ``llm``
    method: str = "offline"
    extra: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        answer = {"id": self.id, "status": self.status, "method": self.method, "created_at": self.created_at}
        if self.error:
            answer["error"] = self.error
        return answer


def export_schema(value: Any) -> dict[str, Any]:
    """A JSON schema given as an object or as JSON text (mem0's Python client sends a string)."""
    if isinstance(value, str):
        if len(value.encode()) > MAX_SCHEMA_BYTES:
            raise InvalidInputError(f"schema is larger than {MAX_SCHEMA_BYTES} bytes", field="schema")
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(f"schema is not JSON: {exc}", field="schema") from None
    if not isinstance(value, dict) or not value:
        raise InvalidInputError("schema must be a JSON schema object", field="schema")
    if len(json.dumps(value).encode()) > MAX_SCHEMA_BYTES:
        raise InvalidInputError(f"schema is larger than {MAX_SCHEMA_BYTES} bytes", field="schema")
    try:
        from jsonschema import exceptions, validators
    except ImportError:  # pragma: no cover - jsonschema comes with the MCP SDK
        return value
    try:
        validators.validator_for(value).check_schema(value)
    except exceptions.SchemaError as exc:
        raise InvalidInputError(f"schema is not a valid JSON schema: {exc.message}", field="schema") from None
    return value
