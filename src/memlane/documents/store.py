"""The document store seam: what ``Documents`` needs from a backend (SQLite or PostgreSQL).

Both backends keep the same three tables (collections, documents, pages with their
token vectors as float16 bytes and their fast-path encodings as float32 bytes) under a tenant column, compile ``query_filter`` with
the filter language's compilers, and count their writes per tenant (``version``), so
the in-memory page index of a process notices another process's writes. Every write is
one transaction. ``tests/test_documents_conformance.py`` runs the same tests on both.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Protocol

from memlane.documents.models import (
    CollectionRecord,
    DocumentRecord,
    PageHit,
    PageRecord,
    PageWrite,
    StoredVectors,
    UpsertResult,
)
from memlane.core.filters import Node

#: the columns every backend reads for a document (joined with its collection)
DOCUMENT_COLUMNS = ("d.id, d.collection_id, c.name, d.name, d.metadata, d.source, d.created_at, d.updated_at,"
                    " (SELECT count(*) FROM {pages} p WHERE p.tenant = d.tenant AND p.document_id = d.id)")
COLLECTION_COLUMNS = ("c.id, c.name, c.metadata, c.created_at, c.updated_at,"
                      " (SELECT count(*) FROM {documents} d WHERE d.tenant = c.tenant AND d.collection_id = c.id),"
                      # its recorded encoder; a collection written before they were recorded: its pages' encoder
                      " coalesce(c.encoder, (SELECT p.encoder FROM {documents} d JOIN {pages} p ON p.tenant = d.tenant"
                      " AND p.document_id = d.id WHERE d.tenant = c.tenant AND d.collection_id = c.id LIMIT 1))")
#: a page hit: page, document and collection columns
HIT_COLUMNS = ("p.id, p.document_id, p.page_number, p.text, p.image,"
               " d.id, d.collection_id, c.name, d.name, d.metadata, d.source, d.created_at, d.updated_at,"
               " c.id, c.name, c.metadata, c.created_at, c.updated_at")


class DocumentStore(Protocol):
    tenant: str

    def create_collection(self, name: str, metadata: dict[str, Any], encoder: str | None = None) -> CollectionRecord:
        """``DuplicateNameError`` when the tenant has a collection of that name. ``encoder``: the name of the
        encoder of its pages, when known already (else recorded by its first upsert)."""

    def collection(self, name: str) -> CollectionRecord | None: ...

    def collections(self, where: Node) -> list[CollectionRecord]:
        """Collections whose metadata matches ``where`` (targets: collection), by name."""

    def update_collection(self, name: str, *, new_name: str | None, metadata: dict[str, Any] | None) -> CollectionRecord: ...

    def delete_collection(self, name: str) -> list[str]:
        """Delete the collection, its documents and pages; returns the deleted page ids."""

    def upsert_document(self, collection_name: str, name: str, metadata: dict[str, Any], source: str | None,
                        pages: Sequence[PageWrite], encoder: str, dims: int, *, chosen: bool = False) -> UpsertResult:
        """Create the document, or replace the pages and metadata of the one of that name. Records
        ``encoder`` as the collection's when it has none; ``EmbedderMismatchError`` when it has another
        (a collection never mixes encoders). ``chosen``: the encoder is the user's choice, which replaces
        the recorded one of a collection without documents (``EncoderConflictError`` when it has some)."""

    def collection_pages(self, collection_name: str) -> list[PageRecord]:
        """Every page of the collection (text and image), by document and page number."""

    def reencode_collection(self, collection_name: str, read_page_ids: Sequence[str],
                            pages: Sequence[tuple[str, PageWrite]], encoder: str, dims: int) -> list[str]:
        """In one transaction: replace every page of the collection by ``pages`` ((document id, page) with
        ``encoder``'s token vectors) and record ``encoder`` as its own; returns the replaced page ids.
        ``CollectionChangedError`` (nothing written) when its pages are no longer ``read_page_ids``."""

    def document(self, collection_name: str, name: str) -> DocumentRecord | None: ...

    def documents(self, collection_name: str | None, where: Node, limit: int) -> list[DocumentRecord]:
        """Documents (of one collection, or all) matching ``where`` (targets: document, collection)."""

    def update_document(self, collection_name: str, name: str, *, new_name: str | None,
                        metadata: dict[str, Any] | None) -> DocumentRecord: ...

    def delete_document(self, collection_name: str, name: str) -> list[str]:
        """Delete the document and its pages; returns the deleted page ids."""

    def pages(self, document_id: str) -> list[PageRecord]: ...

    def page_ids(self, collection_name: str | None, where: Node) -> list[str]:
        """Ids of the pages a search may return (collection and ``query_filter`` applied)."""

    def iter_vectors(self, encoder: str, fde_config: str | None = None,
                     batch_size: int = 500) -> Iterator[list[StoredVectors]]:
        """Every page of the tenant encoded by ``encoder``: page id, number of token vectors, float16
        bytes, and its stored fast-path encoding when it was made with ``fde_config`` (else None)."""

    def page_ids_of_encoder(self, encoder: str) -> list[str]:
        """Ids of every page of the tenant encoded by ``encoder`` (the index catches up by them)."""

    def vectors(self, page_ids: Sequence[str], fde_config: str | None = None) -> list[StoredVectors]:
        """Like ``iter_vectors``, for the given pages that exist."""

    def save_encodings(self, encodings: Sequence[tuple[str, bytes]], fde_config: str) -> None:
        """Store (page id, fast-path encoding) of existing pages, made with ``fde_config``."""

    def encoders(self) -> dict[str, int]:
        """The encoders that encoded the tenant's pages, with their page counts."""

    def hits(self, page_ids: Sequence[str]) -> dict[str, PageHit]: ...

    def version(self) -> int:
        """How many writes the tenant's documents have seen (0: none)."""
