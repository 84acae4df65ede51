"""Document collections over REST (seed 003's endpoints). Each handler calls exactly one
``Documents`` method of the request's tenant; the tenant's ``Documents`` shares its
``Memory``'s store (the tenant's SQLite file, or its rows in PostgreSQL) and every tenant
shares one multi-vector encoder (the local one reuses the server's loaded model).

Uploads travel base64 in the JSON body, so the server's ``max_body_bytes`` (``memlane serve
--max-body-bytes``) bounds them before ``documents.max_file_bytes`` does.
"""

from __future__ import annotations

import threading
from typing import Any, Optional

from fastapi import APIRouter, FastAPI, Path, Query, Request
from fastapi.responses import JSONResponse

from memlane.documents import Documents
from memlane.documents.encoders import MultiVectorEncoder
from memlane.documents.errors import (
    CollectionChangedError,
    DocumentsNotFoundError,
    DuplicateNameError,
    EncoderConflictError,
)
from memlane.documents.facade import explicit_encoder
from memlane.server import documents_schemas as schemas
from memlane.server.access import json_param, principal
from memlane.server.errors import ErrorJson
from memlane.server.schemas import MAX_QUERY_FILTER_CHARS
from memlane.server.responses import Json
from memlane.hosting.tenancy import Tenants

router = APIRouter(tags=["documents"])

CollectionName = Path(..., max_length=schemas.MAX_NAME_CHARS, description="the collection's name")
DocumentName = Path(..., max_length=schemas.MAX_NAME_CHARS, description="the document's name")
CollectionQ = Query(..., max_length=schemas.MAX_NAME_CHARS, description="the document's collection")
FilterQ = Query(None, max_length=MAX_QUERY_FILTER_CHARS,
                description='query_filter as JSON, e.g. {"key": "year", "value": 2024}')
ExpandQ = Query(None, pattern="^pages$", description="'pages' to include every page's text")


class DocumentTenants:
    """One ``Documents`` per tenant, over the tenant's ``Memory``, created on first use."""

    def __init__(self, tenants: Tenants):
        self.tenants = tenants
        self._encoder: MultiVectorEncoder | None = None
        self._documents: dict[str, Documents] = {}
        self._lock = threading.Lock()

    def documents(self, tenant: str) -> Documents:
        found = self._documents.get(tenant)
        if found is not None:
            return found
        memory = self.tenants.memory(tenant)
        with self._lock:
            found = self._documents.get(tenant)
            if found is None:
                if self._encoder is None:  # an explicit encoder is built once for every tenant
                    self._encoder = explicit_encoder(self.tenants.config.documents, memory)
                # the same Documents the /mcp tools of this tenant use
                found = self._documents[tenant] = Documents.for_memory(memory, encoder=self._encoder)
        return found


def tenant_documents(request: Request) -> Documents:
    return request.app.state.documents.documents(principal(request).tenant)


def install(app: FastAPI, tenants: Tenants) -> None:
    """Mount the routes and their error answers (404 for unknown names, 409 for taken ones, for an encoder
    other than a collection's, and for a re-encoding that other writes kept overtaking)."""
    app.state.documents = DocumentTenants(tenants)
    app.include_router(router)
    app.add_exception_handler(DocumentsNotFoundError, _not_found)  # type: ignore[arg-type]
    for conflict in (DuplicateNameError, EncoderConflictError, CollectionChangedError):
        app.add_exception_handler(conflict, _conflict)  # type: ignore[arg-type]


async def _not_found(request: Request, exc: DocumentsNotFoundError) -> JSONResponse:
    return ErrorJson({"detail": str(exc), "field": exc.field}, status_code=404)


async def _conflict(request: Request,
                    exc: DuplicateNameError | EncoderConflictError | CollectionChangedError) -> JSONResponse:
    return ErrorJson({"detail": str(exc), "field": exc.field}, status_code=409)


# -- collections ------------------------------------------------------------------------------------


@router.post("/collections", status_code=201, summary="Create a collection")
def create_collection(body: schemas.CollectionCreate, request: Request) -> dict[str, Any]:
    return tenant_documents(request).create_collection(body.name, body.metadata, encoder=body.encoder)


@router.get("/collections", summary="List the collections, by name")
def list_collections(request: Request, query_filter: Optional[str] = FilterQ) -> Json:
    return Json(tenant_documents(request).list_collections(json_param(query_filter, "query_filter")))


@router.get("/collections/{collection_name}", summary="One collection")
def get_collection(request: Request, collection_name: str = CollectionName) -> dict[str, Any]:
    return tenant_documents(request).get_collection(collection_name)


@router.patch("/collections/{collection_name}", summary="Rename a collection and/or replace its metadata")
def update_collection(body: schemas.CollectionUpdate, request: Request,
                      collection_name: str = CollectionName) -> dict[str, Any]:
    return tenant_documents(request).update_collection(collection_name, new_name=body.name, metadata=body.metadata)


@router.post("/collections/{collection_name}/reencode", summary="Give a collection another encoder")
def reencode_collection(body: schemas.CollectionReencode, request: Request,
                        collection_name: str = CollectionName) -> dict[str, Any]:
    """Every page encoded again by ``encoder`` and written with the collection's new encoder in one
    transaction; the answer is the collection with ``reencoded_pages`` and ``previous_encoder``."""
    return tenant_documents(request).reencode_collection(collection_name, body.encoder)


@router.delete("/collections/{collection_name}", summary="Delete a collection with its documents")
def delete_collection(request: Request, collection_name: str = CollectionName) -> dict[str, Any]:
    return tenant_documents(request).delete_collection(collection_name)


# -- documents --------------------------------------------------------------------------------------


@router.post("/documents/upsert", summary="Create a document, or replace the pages and metadata of one")
def upsert_document(body: schemas.DocumentUpsert, request: Request) -> dict[str, Any]:
    """Give ``text`` or ``file`` (base64 of a PDF, Markdown or text file, or an image; ``filename`` tells
    Markdown from text). The document is split into pages, each encoded into token vectors. ``warnings``:
    pages that are not English went into a collection whose English encoder was chosen automatically."""
    return tenant_documents(request).upsert_document(
        body.name, body.collection_name, text=body.text, file=body.file, filename=body.filename,
        metadata=body.metadata, encoder=body.encoder)


@router.get("/documents", summary="List documents (of a collection, or of all)")
def list_documents(request: Request, collection_name: str = Query("all", max_length=schemas.MAX_NAME_CHARS),
                   expand: Optional[str] = ExpandQ, query_filter: Optional[str] = FilterQ,
                   limit: int = Query(1000, ge=1, le=100_000)) -> Json:
    return Json(tenant_documents(request).list_documents(
        collection_name, query_filter=json_param(query_filter, "query_filter"), expand_pages=expand == "pages",
        limit=limit))


@router.get("/documents/{document_name}", summary="One document (with its pages: expand=pages)")
def get_document(request: Request, document_name: str = DocumentName, collection_name: str = CollectionQ,
                 expand: Optional[str] = ExpandQ) -> Json:
    return Json(tenant_documents(request).get_document(document_name, collection_name,
                                                       expand_pages=expand == "pages"))


@router.patch("/documents/{document_name}", summary="Rename a document and/or replace its metadata")
def update_document(body: schemas.DocumentUpdate, request: Request, document_name: str = DocumentName,
                    collection_name: str = CollectionQ) -> dict[str, Any]:
    return tenant_documents(request).update_document(document_name, collection_name, new_name=body.name,
                                                     metadata=body.metadata)


@router.delete("/documents/{document_name}", summary="Delete a document and its pages")
def delete_document(request: Request, document_name: str = DocumentName,
                    collection_name: str = CollectionQ) -> dict[str, Any]:
    return tenant_documents(request).delete_document(document_name, collection_name)


# -- search and filter ------------------------------------------------------------------------------


@router.post("/search/documents", summary="Pages by late-interaction (MaxSim) similarity to a text query")
def search_documents(body: schemas.DocumentSearch, request: Request) -> Json:
    """Results: ``raw_score`` (MaxSim), ``normalized_score`` (raw / number of query vectors), page
    number and text, document and collection names, ids and metadata; best first. With
    ``keyword_search``: ranked by ``hybrid_score`` (BM25 fused with MaxSim), each with ``keyword_score``."""
    return Json(tenant_documents(request).search(body.query, collection_name=body.collection_name,
                                                 top_k=body.top_k, query_filter=body.query_filter,
                                                 keyword_search=body.keyword_search))


@router.post("/search/documents/image", summary="Pages by MaxSim similarity to an image query")
def search_documents_image(body: schemas.ImageSearch, request: Request) -> Json:
    """Needs an encoder that accepts images (documents.encoder); otherwise 422 naming img_base64."""
    return Json(tenant_documents(request).search_image(body.img_base64, collection_name=body.collection_name,
                                                       top_k=body.top_k, query_filter=body.query_filter))


@router.post("/filter", summary="Documents or collections whose metadata match a query_filter")
def filter_documents(body: dict[str, Any], request: Request, expand: Optional[str] = ExpandQ,
                     limit: int = Query(1000, ge=1, le=100_000)) -> Json:
    """The body is a bare query_filter (``{"on", "key", "value", "lookup"}``); ``on: collection``
    returns collections, otherwise documents."""
    return Json(tenant_documents(request).filter(body, expand_pages=expand == "pages", limit=limit))
