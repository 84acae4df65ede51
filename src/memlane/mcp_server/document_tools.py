"""The MCP tools of document collections, as plain functions over a ``Caller`` (``tools.py``'s).

Each tool calls the one ``Documents`` method the SDK (``memlane.documents``) and the REST routes
(``server/documents_routes.py``) call, under the same names: ``create_collection``, ``list_collections``,
``get_collection``, ``update_collection``, ``delete_collection``, ``upsert_document``, ``list_documents``,
``get_document``, ``update_document``, ``delete_document`` and ``search_documents``. So the checks and
limits are ``Documents``' own (``documents/inputs.py``: names, metadata size, text and file size, pages,
query_filter), and an argument they refuse is named in the tool's error as REST's 4xx names its field.

Documents are the whole tenant's: a key limited to some users is refused every one of these tools, and
a read-only key the ones that write (``hosting/key_limits.py``'s rules, as REST's ``server/grants.py``).
As REST, a document comes as ``text`` or as a ``file`` in base64 (never a path: over HTTP that would
be the server's file).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Optional

from pydantic import Field

from memlane.hosting.key_limits import LimitedMemory
from memlane.mcp_server.tools import Caller, Limit, ToolFailure, coerce_limit, run

DEFAULT_TOP_K = 3
DEFAULT_LIST_LIMIT = 1000

# -- arguments, as the tools' schemas describe them to an agent ---------------------------------

CollectionName = Annotated[str, Field(description="the collection's name (list_collections shows them)")]
DocumentName = Annotated[str, Field(description="the document's name within its collection "
                                                "(list_documents shows them)")]
Metadata = Annotated[Optional[dict[str, Any]], Field(
    description="a JSON object stored with it and matched by query_filter (at most documents.max_metadata_bytes "
                "as JSON); on an update it replaces the old metadata")]
NewName = Annotated[Optional[str], Field(description="a new name (1-256 characters, none of / \\ %)")]
QueryFilter = Annotated[Optional[dict[str, Any]], Field(
    description='metadata lookup: {"on": "document" | "collection", "key": "year", "value": 2024, '
                '"lookup": "key_lookup" | "contains" | "contained_by" | "has_key" | "has_keys" | '
                '"has_any_keys"}')]
Encoder = Annotated[Optional[str], Field(
    description="the collection's encoder: 'english' (all-MiniLM-L6-v2 token vectors), 'multilingual' "
                "(multilingual-e5-small), or 'auto' (the configured encoder, else chosen by its pages' language)")]
ExpandPages = Annotated[bool, Field(description="include every page's text")]


# -- what every tool does first and last ---------------------------------------------------------


def documents_of(caller: Caller, what: str, *, writes: bool = False) -> Any:
    """The ``Documents`` of the caller's tenant (the one its REST routes use too), once the caller's key
    may do ``what``: a read-only key writes nothing, a user-limited key reaches nothing tenant-wide."""
    from memlane.documents import Documents

    memory = caller.memory
    if isinstance(memory, LimitedMemory):
        if writes:
            run(lambda: memory.require_write(what))
        memory = run(lambda: memory.shared(what))
    return Documents.for_memory(memory)


def run_documents(action: Callable[[], Any], caller: Caller) -> Any:
    """``run`` (memlane's errors as readable tool failures), and the documents' own errors the caller can
    fix (REST's 404 and 409: an unknown name, an encoder other than a collection's, a re-encoding that
    kept being overtaken) as tool failures saying so."""
    from memlane.documents.errors import (CollectionChangedError, CollectionNotFoundError, DocumentsNotFoundError,
                                          EncoderConflictError)

    def call() -> Any:
        try:
            return action()
        except CollectionNotFoundError as exc:  # its message names the SDK's and REST's ways; these are the tools'
            raise ToolFailure(f"no collection named {exc.name!r}; the create_collection tool makes one, "
                              "list_collections shows those there are") from None
        except (DocumentsNotFoundError, EncoderConflictError, CollectionChangedError) as exc:
            raise ToolFailure(str(exc)) from None

    return run(call, caller)


# -- collections ---------------------------------------------------------------------------------


def create_collection(caller: Caller, name: Annotated[str, Field(
        description="the new collection's name: unique in the tenant, 1-256 characters, none of / \\ %; "
                    "'all' is reserved")],
                      *, metadata: Metadata = None, encoder: Encoder = None) -> dict[str, Any]:
    """Create an empty document collection (as POST /collections). Returns it: id, name, metadata,
    num_documents, encoder (null until its first document, unless chosen), created_at."""
    documents = documents_of(caller, "creating a collection", writes=True)
    return run_documents(lambda: documents.create_collection(name, metadata, encoder=encoder), caller)


def list_collections(caller: Caller, *, query_filter: QueryFilter = None) -> dict[str, Any]:
    """The tenant's document collections, by name, each with its metadata and num_documents;
    query_filter (on: collection) keeps those whose metadata match."""
    documents = documents_of(caller, "listing collections")
    found = run_documents(lambda: documents.list_collections(query_filter), caller)
    return {"results": found, "count": len(found)}


def get_collection(caller: Caller, collection_name: CollectionName) -> dict[str, Any]:
    """One document collection: id, name, metadata, num_documents, encoder, created_at, updated_at."""
    documents = documents_of(caller, "reading a collection")
    return run_documents(lambda: documents.get_collection(collection_name), caller)


def update_collection(caller: Caller, collection_name: CollectionName, *, name: NewName = None,
                      metadata: Metadata = None) -> dict[str, Any]:
    """Rename a document collection and/or replace its metadata; its documents stay. Returns it."""
    documents = documents_of(caller, "updating a collection", writes=True)
    return run_documents(lambda: documents.update_collection(collection_name, new_name=name, metadata=metadata),
                         caller)


def delete_collection(caller: Caller, collection_name: CollectionName) -> dict[str, Any]:
    """Delete a document collection with all its documents and pages (no undo). Returns the name
    deleted and pages_deleted."""
    documents = documents_of(caller, "deleting a collection", writes=True)
    return run_documents(lambda: documents.delete_collection(collection_name), caller)


# -- documents -----------------------------------------------------------------------------------


def upsert_document(
    caller: Caller,
    name: Annotated[str, Field(description="the document's name, unique in its collection (1-256 characters, "
                                           "none of / \\ %); an existing one is replaced")],
    collection_name: Annotated[str, Field(description="the collection it goes in (create_collection first)")],
    *,
    text: Annotated[Optional[str], Field(description="the document's text (give text or file)")] = None,
    file: Annotated[Optional[str], Field(description="a file in base64 (give text or file): PDF (its text layer), "
                                                     "Markdown, UTF-8 text, or an image")] = None,
    filename: Annotated[Optional[str], Field(description="the file's name; '.md' reads file or text as "
                                                         "Markdown", max_length=1024)] = None,
    metadata: Metadata = None,
    encoder: Annotated[Optional[str], Field(
        description="the collection's encoder ('english', 'multilingual', 'auto'), for a collection without "
                    "documents; refused when it holds documents of another")] = None,
) -> dict[str, Any]:
    """Add a document to a collection, or replace the pages and metadata of the one of that name (as
    POST /documents/upsert). It is split into pages, each made searchable by search_documents. Returns
    the document (id, name, collection_name, metadata, num_pages), created (false: replaced), kind
    (text, markdown, pdf, image) and warnings (pages not in the collection's encoder's language)."""
    documents = documents_of(caller, "writing a document", writes=True)
    return run_documents(lambda: documents.upsert_document(name, collection_name, text=text, file=file,
                                                           filename=filename, metadata=metadata, encoder=encoder),
                         caller)


def list_documents(caller: Caller, *,
                   collection_name: Annotated[str, Field(description="a collection's name, or 'all' for every "
                                                                     "one")] = "all",
                   query_filter: QueryFilter = None, expand_pages: ExpandPages = False,
                   limit: Limit = DEFAULT_LIST_LIMIT) -> dict[str, Any]:
    """The documents of a collection (or of all), by collection and name, each with its metadata and
    num_pages (and its pages' text with expand_pages); query_filter keeps those whose metadata match."""
    documents = documents_of(caller, "listing documents")
    warnings: list[str] = []
    limit = coerce_limit(limit, DEFAULT_LIST_LIMIT, documents.max_list_limit, warnings)
    found = run_documents(lambda: documents.list_documents(collection_name, query_filter=query_filter,
                                                           expand_pages=expand_pages, limit=limit), caller)
    return {"results": found, "count": len(found), "warnings": warnings}


def get_document(caller: Caller, document_name: DocumentName, collection_name: CollectionName, *,
                 expand_pages: ExpandPages = False) -> dict[str, Any]:
    """One document: id, name, collection, metadata, source, num_pages (and its pages, page_number
    and text, with expand_pages)."""
    documents = documents_of(caller, "reading a document")
    return run_documents(lambda: documents.get_document(document_name, collection_name, expand_pages=expand_pages),
                         caller)


def update_document(caller: Caller, document_name: DocumentName, collection_name: CollectionName, *,
                    name: NewName = None, metadata: Metadata = None) -> dict[str, Any]:
    """Rename a document and/or replace its metadata; its pages stay. Returns the document."""
    documents = documents_of(caller, "updating a document", writes=True)
    return run_documents(lambda: documents.update_document(document_name, collection_name, new_name=name,
                                                           metadata=metadata), caller)


def delete_document(caller: Caller, document_name: DocumentName, collection_name: CollectionName) -> dict[str, Any]:
    """Delete a document and its pages (no undo). Returns the name deleted, its collection_name and
    pages_deleted."""
    documents = documents_of(caller, "deleting a document", writes=True)
    return run_documents(lambda: documents.delete_document(document_name, collection_name), caller)


# -- search --------------------------------------------------------------------------------------


def search_documents(
    caller: Caller,
    query: Annotated[str, Field(description="what to look for in the document collections")],
    *,
    collection_name: Annotated[str, Field(description="a collection's name, or 'all' for every one")] = "all",
    top_k: Limit = DEFAULT_TOP_K,
    query_filter: QueryFilter = None,
    keyword_search: Annotated[Optional[bool], Field(
        description="also match the query's words in the pages' text (BM25 fused with MaxSim): "
                    "names, codes, rare terms")] = None,
) -> dict[str, Any]:
    """Find the document pages most related to a query (late-interaction MaxSim), best first, with
    their text, page number, document and collection, raw_score and normalized_score (0..1); with
    keyword_search also keyword_score and the hybrid_score they are ranked by."""
    if not isinstance(query, str) or not query.strip():
        raise ToolFailure("query must be a non-empty string")
    if not isinstance(collection_name, str) or not collection_name:
        raise ToolFailure("collection_name must be a collection's name, or 'all'")
    documents = documents_of(caller, "searching documents")
    warnings: list[str] = []
    top_k = coerce_limit(top_k, DEFAULT_TOP_K, documents.settings.max_top_k, warnings, name="top_k")
    found = run_documents(lambda: documents.search(query, collection_name=collection_name, top_k=top_k,
                                                   query_filter=query_filter, keyword_search=keyword_search), caller)
    return {**found, "count": len(found["results"]), "warnings": warnings}
