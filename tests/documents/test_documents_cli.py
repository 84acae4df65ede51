"""``memlane docs add|list|search|delete`` in a fresh MEMLANE_HOME (``cli`` fixture), with real files."""

from __future__ import annotations

import pytest

import json

from support.pdfs import make_pdf

CATS = "Cats are small furry animals. A cat purrs when it is content and sleeps most of the day."
MARKETS = "The stock market fell sharply on Monday as investors sold bank shares."


@pytest.mark.model
def test_add_list_search_delete(cli, tmp_path):
    notes = tmp_path / "notes.md"
    notes.write_text("# Pets\n\n" + CATS + "\n\n# Money\n\n" + MARKETS)
    report = tmp_path / "report.pdf"
    report.write_bytes(make_pdf([MARKETS, "Neural networks learn representations from data."]))

    added = json.loads(cli("docs", "add", notes, report, "-c", "papers", "--create", "-m", '{"year": 2024}',
                           "--json").output)
    assert [(d["name"], d["kind"], d["num_pages"]) for d in added] == [("notes.md", "markdown", 2),
                                                                      ("report.pdf", "pdf", 2)]
    assert added[1]["source"] == str(report)
    cli("docs", "add", "-c", "papers", "--text", CATS, "--name", "cats", "-m", '{"year": 2023}')

    listed = json.loads(cli("docs", "list", "-c", "papers", "--json").output)
    assert [d["name"] for d in listed] == ["cats", "notes.md", "report.pdf"]
    collections = json.loads(cli("docs", "list", "--collections", "--json").output)
    assert [(c["name"], c["num_documents"]) for c in collections] == [("papers", 3)]
    assert collections[0]["encoder"].startswith("local/all-MiniLM-L6-v2/")  # English pages: the English model's
    assert "all-MiniLM-L6-v2" in cli("docs", "list", "--collections").output
    assert "report.pdf" in cli("docs", "list").output

    found = json.loads(cli("docs", "search", "why does a cat purr?", "-k", "2", "--json").output)
    assert found["results"][0]["document_name"] in ("cats", "notes.md")
    filtered = json.loads(cli("docs", "search", "cat", "-c", "papers", "-k", "10", "--json",
                              "--filter", '{"key": "year", "value": 2023}').output)
    assert [r["document_name"] for r in filtered["results"]] == ["cats"]
    table = cli("docs", "search", "stock market falls").output
    assert "report.pdf" in table or "notes.md" in table
    hybrid = json.loads(cli("docs", "search", "stock market", "-k", "10", "--keyword", "--json",
                            "--filter", '{"key": "year", "value": 2024}').output)
    assert hybrid["keyword_matches"] == 2  # the markets page of notes.md and of report.pdf
    assert {r["document_name"] for r in hybrid["results"] if r["keyword_score"]} == {"notes.md", "report.pdf"}
    assert "hybrid" in cli("docs", "search", "stock market", "--keyword").output

    again = json.loads(cli("docs", "add", report, "-c", "papers", "-m", '{"year": 2025}', "--json").output)
    assert again[0]["created"] is False and again[0]["metadata"] == {"year": 2025}

    assert "deleted" in cli("docs", "delete", "cats", "-c", "papers").output
    assert [d["name"] for d in json.loads(cli("docs", "list", "--json").output)] == ["notes.md", "report.pdf"]
    gone = json.loads(cli("docs", "delete", "-c", "papers", "--json").output)
    assert gone == {"deleted": "papers", "pages_deleted": 4}
    assert json.loads(cli("docs", "list", "--collections", "--json").output) == []


@pytest.mark.model
def test_a_large_file_shows_progress(cli, tmp_path):
    big = tmp_path / "big.pdf"
    big.write_bytes(make_pdf([f"Page {i}: " + CATS for i in range(40)]))
    result = cli("docs", "add", big, "-c", "big", "--create")
    assert "encoding pages" in result.output and "40 pages" in result.output


def said(result) -> str:
    """The output with rich's line wrapping undone."""
    return " ".join(result.output.split())


@pytest.mark.model
def test_bad_input_fails_with_a_message(cli, tmp_path):
    text = tmp_path / "a.txt"
    text.write_text(CATS)
    missing = cli("docs", "add", text, "-c", "nope", ok=False)
    assert missing.exit_code == 1 and "no collection named 'nope'" in said(missing)
    reserved = cli("docs", "add", text, "-c", "all", "--create", ok=False)
    assert reserved.exit_code == 1 and "reserved" in said(reserved)
    both = cli("docs", "add", text, "-c", "x", "--text", "hi", "--name", "n", ok=False)
    assert both.exit_code == 2 and "not both" in said(both)
    cli("docs", "add", text, "-c", "c", "--create")
    bad_json = cli("docs", "search", "cat", "--filter", "{not json", ok=False)
    assert bad_json.exit_code == 2 and "not valid JSON" in said(bad_json)
    bad_filter = cli("docs", "search", "cat", "--filter", '{"key": "a", "lookup": "has_key", "value": 1}', ok=False)
    assert bad_filter.exit_code == 1 and "has_key takes no value" in said(bad_filter)
    unknown = cli("docs", "delete", "ghost", "-c", "c", ok=False)
    assert unknown.exit_code == 1 and "no document named 'ghost'" in said(unknown)
    image = tmp_path / "scan.png"
    image.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32)
    refused = cli("docs", "add", image, "-c", "c", ok=False)
    assert refused.exit_code == 1 and "does not accept images" in said(refused)
    assert [d["name"] for d in json.loads(cli("docs", "list", "--json").output)] == ["a.txt"]


@pytest.mark.model
def test_a_collections_encoder_is_chosen_warned_of_and_changed(cli):
    unknown = cli("docs", "add", "-c", "langs", "--create", "--text", CATS, "--name", "cats", "--encoder", "klingon",
                  ok=False)
    assert unknown.exit_code == 1 and "--encoder must be one of 'auto'" in said(unknown)
    assert json.loads(cli("docs", "list", "--collections", "--json").output) == []  # nothing created
    cli("docs", "add", "-c", "chosen", "--create", "--text", CATS, "--name", "cats", "--encoder", "multilingual")
    cli("docs", "add", "-c", "langs", "--create", "--text", CATS, "--name", "cats")
    warned = said(cli("docs", "add", "-c", "langs", "--text", "月球的引力牵引着海水，使海面每天涨落两次。", "--name", "tides"))
    assert "added tides" in warned and "warning:" in warned and "memlane docs reencode --encoder multilingual" in warned
    refused = cli("docs", "add", "-c", "langs", "--text", MARKETS, "--name", "markets", "--encoder", "multilingual",
                  ok=False)
    assert refused.exit_code == 1 and "never mixes encoders" in said(refused)
    encoders = {c["name"]: c["encoder"] for c in json.loads(cli("docs", "list", "--collections", "--json").output)}
    assert encoders["chosen"].startswith("e5/") and encoders["langs"].startswith("local/all-MiniLM-L6-v2/")

    done = said(cli("docs", "reencode", "-c", "langs", "--encoder", "multilingual"))
    assert "re-encoded langs: 2 pages, all-MiniLM-L6-v2 -> multilingual-e5-small" in done, done
    assert "nothing re-encoded" in said(cli("docs", "reencode", "-c", "langs", "--encoder", "multilingual"))
    found = json.loads(cli("docs", "search", "海水为什么涨落", "-c", "langs", "-k", "1", "--json").output)
    assert found["results"][0]["document_name"] == "tides"
    back = json.loads(cli("docs", "reencode", "-c", "langs", "--encoder", "english", "--json").output)
    assert back["reencoded_pages"] == 2 and back["encoder"].startswith("local/all-MiniLM-L6-v2/")
