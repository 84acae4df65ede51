"""The nouns of document search (seed 003): collections, documents, pages, search hits.

Records are what the stores read and write (plain dataclasses); the ``*Out``
pydantic models are what the facade returns (``model_dump()`` dicts), the same
shapes over the SDK, REST, MCP and the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional

from pydantic import BaseModel

#: ``collection_name="all"`` searches every collection of the tenant, so no collection may be called that.
RESERVED_COLLECTION_NAMES = ("all",)


@dataclass(slots=True)
class CollectionRecord:
    id: str
    name: str
    metadata: dict[str, Any]
    created_at: str
    updated_at: str
    num_documents: int = 0
    #: the name of the encoder of its pages (None: not chosen yet, the collection is empty)
    encoder: str | None = None


@dataclass(slots=True)
class DocumentRecord:
    id: str
    collection_id: str
    collection_name: str
    name: str
    metadata: dict[str, Any]
    source: str | None
    created_at: str
    updated_at: str
    num_pages: int = 0


@dataclass(slots=True)
class PageWrite:
    """A page about to be stored: its text (and image) with its token vectors as float16 bytes."""

    page_number: int
    text: str
    image: bytes | None
    n_tokens: int
    vectors: bytes
    id: str = ""
    #: the page's fast-path encoding (float32 bytes) and the name of its parameters; None: not computed
    fde: bytes | None = None
    fde_config: str | None = None


class StoredVectors(NamedTuple):
    """A stored page as the page index loads it: token vectors (float16 bytes) and, when stored with the
    requested parameters, its fast-path encoding (float32 bytes; else None)."""

    id: str
    n_tokens: int
    vectors: bytes
    fde: bytes | None = None


@dataclass(slots=True)
class PageRecord:
    id: str
    document_id: str
    page_number: int
    text: str
    image: bytes | None = None


@dataclass(slots=True)
class PageHit:
    """A page found by search, with its document and collection (scores added by the facade)."""

    page: PageRecord
    document: DocumentRecord
    collection: CollectionRecord


@dataclass(slots=True)
class UpsertResult:
    document: DocumentRecord
    #: ids of the pages the upsert replaced (removed from the in-memory index)
    removed_page_ids: list[str] = field(default_factory=list)
    created: bool = True


class CollectionOut(BaseModel):
    id: str
    name: str
    metadata: dict[str, Any]
    num_documents: int
    created_at: str
    updated_at: str
    #: the encoder of its pages and queries (null: chosen by its first upsert; see docs/documents.md)
    encoder: Optional[str] = None


class PageOut(BaseModel):
    page_number: int
    text: str
    img_base64: Optional[str] = None


class DocumentOut(BaseModel):
    id: str
    name: str
    collection_id: str
    collection_name: str
    metadata: dict[str, Any]
    source: Optional[str] = None
    num_pages: int
    created_at: str
    updated_at: str
    pages: Optional[list[PageOut]] = None


class PageHitOut(BaseModel):
    """One search result (seed 003's ``PageOutQuery``)."""

    collection_name: str
    collection_id: str
    collection_metadata: dict[str, Any]
    document_name: str
    document_id: str
    document_metadata: dict[str, Any]
    page_number: int
    page_id: str
    text: str
    #: MaxSim: the sum over query vectors of each one's best dot product with the page's vectors
    raw_score: float
    #: raw_score / number of query vectors: comparable across queries (in [-1, 1])
    normalized_score: float
    #: hybrid search only: BM25 of the query's terms in the page's text (null: none of them)
    keyword_score: Optional[float] = None
    #: hybrid search only: the fused score the results are ranked by (retrieval.fusion.weighted)
    hybrid_score: Optional[float] = None
    img_base64: Optional[str] = None
