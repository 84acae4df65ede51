"""A project's rows (settings, webhooks with their secrets, feedback, exports) written through ``Memory``
and read back whole: what a store carried elsewhere (``memlane migrate``, backup and restore, a tenant's
move) must read back the same."""

from __future__ import annotations

import dataclasses

#: an export the memories fill by field names (SUCCEEDED), and one they cannot (FAILED, with its reason)
FILLED = {"type": "object", "properties": {"memories": {"type": "array", "items": {
    "type": "object", "properties": {"memory": {"type": "string"}}}}}}
UNFILLED = {"type": "object", "properties": {"favourite_colour": {"type": "string"}},
            "required": ["favourite_colour"]}


def fill_project(memory, memory_id: str, user_id: str) -> dict:
    """Settings, two webhooks (one paused; neither fires on the memory writes that may follow), feedback on
    ``memory_id`` and two exports of ``user_id``'s memories. Returns what ``read_project`` needs."""
    memory.update_project(custom_instructions="Keep what they eat and drink",
                          custom_categories=["food", {"travel": "trips"}], multilingual=True)
    memory.update_project(decay=False)
    memory.create_webhook("http://127.0.0.1:9/never", "categories", ["memory_categorize"])
    paused = memory.create_webhook("https://example.org/changes", "changes", ["memory_add", "memory_delete"])
    memory.update_webhook(paused["webhook_id"], is_active=False)
    memory.feedback(memory_id, "NEGATIVE", "too vague")
    memory.feedback(memory_id, "POSITIVE")
    exports = [memory.create_memory_export(FILLED, filters={"user_id": user_id})["id"],
               memory.create_memory_export(UNFILLED, filters={"user_id": user_id}, export_instructions="colours")["id"]]
    return {"memory_id": memory_id, "exports": exports}


def read_project(memory, made: dict) -> dict:
    """Everything of the project ``fill_project`` wrote, as the store gives it back (secrets and times too)."""
    return {"settings": memory.get_project(),
            "webhooks": memory.get_webhooks(),
            "feedback": memory.get_feedback(made["memory_id"]),
            "exports": [dataclasses.asdict(memory.store.export(e)) for e in made["exports"]]}


def check_filled(project: dict) -> None:
    """``read_project`` of a store ``fill_project`` wrote: every kind of row is there (a copy that lost one
    must not compare equal by being empty on both sides)."""
    assert project["settings"]["custom_instructions"] == "Keep what they eat and drink"
    assert project["settings"]["decay"] is False
    assert [(h["name"], h["is_active"]) for h in project["webhooks"]] == [("categories", True), ("changes", False)]
    assert all(h["secret"].startswith("whsec_") for h in project["webhooks"])
    assert [f["feedback"] for f in project["feedback"]] == ["NEGATIVE", "POSITIVE"]
    assert [e["status"] for e in project["exports"]] == ["SUCCEEDED", "FAILED"]
