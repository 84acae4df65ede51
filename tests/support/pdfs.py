"""Real PDF files with a text layer (fpdf2), for the ingestion tests."""

from __future__ import annotations


def make_pdf(pages: list[str]) -> bytes:
    """A PDF with one page per text (empty text: a page without a text layer, like a scan)."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for text in pages:
        pdf.add_page()
        if text:
            pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())
