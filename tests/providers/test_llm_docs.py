"""docs/llm.md's configurations are accepted as written: each JSON block, and each ``config = {...}``
of its Python blocks (also valid JSON, as the page promises: the same text is the server's file), is
a configuration ``Memory.from_config`` validates, and its ``llm`` block makes a chat model (nothing
is sent: no network)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from memlane.core.config import load
from memlane.llms import check_llm, create_llm

PAGE = Path(__file__).resolve().parents[2] / "docs" / "llm.md"
BLOCK = re.compile(r"^```(?P<lang>\w+)\n(?P<code>.*?)^```", re.M | re.S)


def blocks(language: str) -> list[str]:
    return [m["code"] for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8")) if m["lang"] == language]


def python_configs() -> list[str]:
    """The source text of every ``config = {...}`` in the page's Python blocks."""
    found = []
    for code in blocks("python"):
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["config"]:
                found.append(ast.get_source_segment(code, node.value))
    return found


CONFIGS = [("json", code) for code in blocks("json")] + [("python", code) for code in python_configs()]


def test_the_page_has_a_config_for_every_server_it_names():
    assert len(python_configs()) == 7 and blocks("json")


@pytest.mark.parametrize("kind,code", CONFIGS, ids=[f"{kind}{i}" for i, (kind, _) in enumerate(CONFIGS)])
def test_a_config_of_the_page_is_accepted(kind, code, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    parsed = json.loads(code)  # the Python dicts too: they are pasted into the server's JSON file
    if kind == "python":
        assert ast.literal_eval(code) == parsed
    config = load(parsed)
    assert config.llm is not None
    check_llm(config)
    llm = create_llm(config.llm)
    assert llm.name == f"{config.llm.provider}/{parsed['llm']['config']['model']}"
