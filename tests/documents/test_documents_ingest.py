"""Files and texts into pages (``memlane.documents.ingest``): pure functions, real files."""

from __future__ import annotations

import pytest

from memlane.documents import ingest
from memlane.core.errors import InvalidInputError
from support.pdfs import make_pdf

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16


@pytest.mark.parametrize("filename, data, kind", [
    ("a.pdf", b"%PDF-1.7\n...", "pdf"),
    ("no-suffix", b"%PDF-1.4\n...", "pdf"),  # content wins over the name
    ("scan.png", PNG, "image"),
    ("photo.jpg", b"\xff\xd8\xff\xe0" + b"\x00" * 8, "image"),
    ("anim.gif", b"GIF89a" + b"\x00" * 8, "image"),
    ("pic.webp", b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image"),
    ("notes.md", b"# Title", "markdown"),
    ("NOTES.MARKDOWN", b"# Title", "markdown"),
    ("notes.txt", b"# not markdown", "text"),
    (None, b"plain", "text"),
])
def test_detect_kind(filename, data, kind):
    assert ingest.detect_kind(filename, data) == kind


def test_text_is_split_at_paragraphs_then_sentences_then_spaces():
    paragraphs = ["First paragraph is short.", "Second one too.", "x" * 50]
    assert ingest.split_text("\n\n".join(paragraphs), 200) == ["First paragraph is short.\n\nSecond one too.\n\n" + "x" * 50]
    assert ingest.split_text("\n\n".join(paragraphs), 60) == ["First paragraph is short.\n\nSecond one too.", "x" * 50]
    assert ingest.split_text("\n\n".join(paragraphs), 45) == ["First paragraph is short.\n\nSecond one too.", "x" * 45,
                                                              "x" * 5]
    sentences = "One sentence here. Another sentence there. A third one to finish."
    assert ingest.split_text(sentences, 45) == ["One sentence here. Another sentence there.", "A third one to finish."]
    words = "word " * 30
    chunks = ingest.split_text(words, 50)
    assert all(len(c) <= 50 for c in chunks) and " ".join(chunks).split() == words.split()
    unbroken = "猫" * 25  # no spaces to cut at: hard cuts
    assert ingest.split_text(unbroken, 10) == ["猫" * 10, "猫" * 10, "猫" * 5]
    assert ingest.split_text("  \n\n  \n", 100) == []


def test_markdown_starts_a_page_at_each_heading():
    text = "Intro line.\n\n# One\n\nAlpha.\n\n## Two\n\nBeta.\n\n# Three\n\n" + "Gamma. " * 30
    pages = ingest.pages_from_text(text, "markdown", 120)
    assert [p.page_number for p in pages] == list(range(1, len(pages) + 1))
    assert pages[0].text == "Intro line." and pages[1].text == "# One\n\nAlpha." and pages[2].text == "## Two\n\nBeta."
    assert pages[3].text.startswith("# Three") and len(pages) > 4 and all(len(p.text) <= 120 for p in pages)


def test_pdf_gives_one_page_per_pdf_page_skipping_pages_without_text():
    data = make_pdf(["The first page talks about cats.", "", "The third page talks about markets."])
    seen = []
    kind, pages = ingest.pages_from_file(data, "x.pdf", 1000, progress=lambda *a: seen.append(a))
    assert kind == "pdf"
    assert [(p.page_number, p.text) for p in pages] == [(1, "The first page talks about cats."),
                                                        (3, "The third page talks about markets.")]
    assert seen == [("reading PDF", 1, 3), ("reading PDF", 2, 3), ("reading PDF", 3, 3)]


@pytest.mark.parametrize("data, message", [
    (b"%PDF-1.7 this is not really a pdf", "not a readable PDF"),
    (b"\xff\xfe\x00\x81 binary", "neither a PDF, an image"),
])
def test_unreadable_files_are_invalid_input(data, message):
    with pytest.raises(InvalidInputError, match=message) as caught:
        ingest.pages_from_file(data, "f", 1000)
    assert caught.value.field == "file"


def test_an_image_is_one_page_without_text():
    assert ingest.pages_from_file(PNG, "scan.png", 1000) == ("image", [ingest.PageInput(1, "", PNG)])


def test_utf8_with_bom_is_text():
    kind, pages = ingest.pages_from_file("\ufeffBonjour à tous".encode("utf-8"), "a.txt", 1000)
    assert kind == "text" and pages[0].text == "Bonjour à tous"
