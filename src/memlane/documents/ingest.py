"""Turn a file or a text into pages: plain text, Markdown, PDF (text layer, via pypdf) or one image.

Pure functions (bytes in, pages out); they never open the store or a model.

- Text is split into page-sized chunks of about ``page_chars`` characters at paragraph
  breaks, else at sentence ends, else at spaces (a chunk never cuts a word it can avoid).
- Markdown starts a new page at every heading, so a section is not glued to the end of
  the previous one; long sections are split like text.
- A PDF gives one page per PDF page (its number is the PDF's page number); a PDF page
  with more text than the encoder can read is still one page (the local model reads its
  first ~256 word pieces). Scanned pages without a text layer come out empty and are
  skipped; a PDF with no text at all is an error (OCR is out of scope).
- An image (PNG, JPEG, GIF, WebP) is one page with no text: it needs an encoder that
  accepts images (``documents.encoder.accepts_images``), else the upsert fails before
  anything is written.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePath

from memlane.core.errors import InvalidInputError

KINDS = ("text", "markdown", "pdf", "image")
_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown", ".mkd")
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")
_HEADING = re.compile(r"^#{1,6}\s", re.MULTILINE)
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")

Progress = Callable[[str, int, int], None]


@dataclass(slots=True)
class PageInput:
    page_number: int
    text: str
    image: bytes | None = None


def is_image(data: bytes) -> bool:
    return data.startswith(_IMAGE_MAGIC) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def detect_kind(filename: str | None, data: bytes) -> str:
    """What a file is, from its first bytes (PDF, images) and then its name (Markdown vs text)."""
    if data.startswith(b"%PDF-"):
        return "pdf"
    if is_image(data):
        return "image"
    if filename and PurePath(filename).suffix.lower() in _MARKDOWN_SUFFIXES:
        return "markdown"
    return "text"


def decode_text(data: bytes, field: str = "file") -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InvalidInputError(
            f"{field} is neither a PDF, an image (PNG, JPEG, GIF, WebP) nor UTF-8 text "
            f"(byte {exc.start} is not UTF-8); convert it to UTF-8 text or PDF", field=field) from None


def split_text(text: str, page_chars: int) -> list[str]:
    """Page-sized chunks of ``text`` (see the module docstring), stripped, none empty."""
    paragraphs = (p.strip() for p in re.split(r"\n\s*\n", text))
    return _pack((piece for p in paragraphs if p
                  for piece in ([p] if len(p) <= page_chars else _split_long(p, page_chars))), page_chars, "\n\n")


def _split_long(paragraph: str, page_chars: int) -> list[str]:
    """A paragraph longer than a page: at sentence ends, then at spaces, then hard cuts."""
    def words() -> Iterator[str]:
        for sentence in _SENTENCE_END.split(paragraph):
            for word in [sentence] if len(sentence) <= page_chars else sentence.split():
                # no space to cut at (e.g. Chinese text, a long token): cut every page_chars characters
                yield from (word[i:i + page_chars] for i in range(0, len(word), page_chars))

    return _pack(words(), page_chars, " ")


def _pack(pieces: Iterable[str], page_chars: int, sep: str) -> list[str]:
    """Pieces joined by ``sep`` into as few chunks of at most ``page_chars`` as their order allows."""
    out: list[str] = []
    current = ""
    for piece in pieces:
        if current and len(current) + len(sep) + len(piece) > page_chars:
            out.append(current)
            current = ""
        current = f"{current}{sep}{piece}" if current else piece
    if current:
        out.append(current)
    return out


def split_markdown(text: str, page_chars: int) -> list[str]:
    starts = [m.start() for m in _HEADING.finditer(text)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    sections = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    return [chunk for section in sections for chunk in split_text(section, page_chars)]


def pdf_pages(data: bytes, *, progress: Progress | None = None, field: str = "file") -> list[PageInput]:
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise InvalidInputError(f"{field} is an encrypted PDF; decrypt it first", field=field)
        total = len(reader.pages)
        pages = []
        for number, page in enumerate(reader.pages, 1):
            text = (page.extract_text() or "").strip()
            if text:
                pages.append(PageInput(number, text))
            if progress is not None:
                progress("reading PDF", number, total)
    except InvalidInputError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise InvalidInputError(f"{field} is not a readable PDF ({type(exc).__name__}: {str(exc)[:200]})",
                                field=field) from None
    return pages


def pages_from_text(text: str, kind: str, page_chars: int) -> list[PageInput]:
    chunks = split_markdown(text, page_chars) if kind == "markdown" else split_text(text, page_chars)
    return [PageInput(n, chunk) for n, chunk in enumerate(chunks, 1)]


def pages_from_file(data: bytes, filename: str | None, page_chars: int, *, progress: Progress | None = None,
                    field: str = "file") -> tuple[str, list[PageInput]]:
    """(kind, pages) of a file's bytes."""
    kind = detect_kind(filename, data)
    if kind == "pdf":
        return kind, pdf_pages(data, progress=progress, field=field)
    if kind == "image":
        return kind, [PageInput(1, "", image=data)]
    return kind, pages_from_text(decode_text(data, field), kind, page_chars)
