"""What the memlane command prints for people, in an 80-column terminal and a wide one: ids and times
whole (never wrapped or cut to '2026…'), nothing wider than the terminal, help without a value
placeholder on plain flags."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from memlane.cli import render

IDS = ["01a21533-877f-7ace-ac45-dde4913b3006", "01a21533-69e5-7ea0-8557-a214f6a4bdae"]
ITEMS = [
    {"id": IDS[0], "memory": "My bike is blue", "metadata": {}, "user_id": "alice", "score": 0.812,
     "created_at": "2026-11-26T00:13:48.123456+00:00"},
    {"id": IDS[1], "memory": "I love Thai food and cook it every Sunday with my sister, who lives in Porto "
                             "[red]and[/red] visits on weekends", "metadata": {"category": "food", "tags": ["thai"]},
     "user_id": "alice", "agent_id": "chef", "run_id": "r-2026-11", "score": 0.305,
     "created_at": "2026-11-25T09:01:02+00:00"},
]


def printed(width: int, items=ITEMS, **kwargs) -> str:
    console = Console(width=width, file=io.StringIO(), record=True)
    render.print_memories(console, items, **kwargs)
    return console.export_text()


@pytest.mark.parametrize("width", [80, 100, 120, 160])
@pytest.mark.parametrize("scored", [True, False], ids=["search", "list"])
def test_ids_and_times_are_whole_at_every_width(width, scored):
    items = [dict(item, score=item["score"] if scored else None) for item in ITEMS]
    text = printed(width, items)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    for item in items:
        assert any(item["id"] in line for line in lines), f"{item['id']} is cut or wrapped"
        when = item["created_at"][:19].replace("T", " ")
        assert any(when in line for line in lines), f"{when} is cut or wrapped"
        assert "…" not in text
    assert "[red]and[/red]" in " ".join(text.split())  # a memory's text is shown as written, not as markup
    assert ("0.812" in text) is scored


def test_a_narrow_terminal_shows_one_block_per_memory_and_a_wide_one_a_table():
    narrow, wide = printed(80), printed(160)
    assert "┃" not in narrow and "user:alice agent:chef run:r-2026-11" in narrow
    assert re.search(r"┃ *score *┃ *memory", wide) and "created (UTC)" in wide


def test_history_times_are_whole_in_80_columns():
    events = [{"created_at": "2026-11-26T00:13:48+00:00", "event": "ADD", "old_memory": None,
               "new_memory": "I love Thai food and cook it every Sunday with my sister in Porto",
               "actor_id": None, "role": "user"},
              {"created_at": "2026-11-27T10:00:00+00:00", "event": "UPDATE",
               "old_memory": "I love Thai food and cook it every Sunday with my sister in Porto",
               "new_memory": "I love Thai curry", "actor_id": "alice", "role": "user"}]
    console = Console(width=80, file=io.StringIO(), record=True)
    console.print(render.history_table(events, IDS[0]))
    text = console.export_text()
    assert "2026-11-26 00:13:48" in text and "2026-11-27 10:00:00" in text
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("args", [["--help"], ["add", "--help"], ["search", "--help"], ["serve", "--help"]])
def test_help_fits_80_columns_and_plain_flags_take_no_placeholder(cli, monkeypatch, args):
    monkeypatch.setenv("COLUMNS", "80")
    text = cli(*args).stdout
    assert max(len(line) for line in text.splitlines()) <= 80
    for line in text.splitlines():
        if re.search(r"--(help|version|local|json|no-auth|postgres)\b", line):
            assert "<bool>" not in line, line
    assert "<bool>" not in text
    if args == ["--help"]:
        assert re.search(r"--tenant +<str>", text)  # an option that takes a value keeps its placeholder
