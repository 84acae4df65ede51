"""The facade: ``Documents`` (sync) and ``AsyncDocuments`` (the same methods, awaited).

``Documents`` validates input, turns files into pages (``ingest``), asks the
multi-vector encoder for token vectors (``encoders``), writes through the document
store of the memory store it shares (same SQLite file or PostgreSQL database, same
tenant), and searches with a ``PageIndex`` (``late_interaction``) it keeps in memory:

- loaded lazily, on the first search, from the stored float16 vectors of the tenant's
  pages encoded by the configured encoder, with each page's fast-path (MUVERA) encoding as
  stored at upsert; a page without one made with this index's parameters (written before
  encodings were stored, or under other parameters) is encoded then, and its encoding written
  back for the next process;
- kept in step with this process's writes (the pages an upsert or delete adds and
  removes), and read again when the store's write counter shows another process wrote.

Searches and writes of one ``Documents`` take turns on its index (a lock): the index is
plain numpy arrays, not safe to change while read.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import functools
import json
import logging
import math
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memlane import config as config_mod
from memlane.documents import ingest
from memlane.documents import query_filter as qf
from memlane.documents.encoders import LocalTokenEncoder, MultiVectorEncoder, create_encoder, encoder_config
from memlane.documents.errors import CollectionNotFoundError, DocumentNotFoundError
from memlane.documents.late_interaction import PageIndex, from_fde, from_half, to_fde, to_half
from memlane.documents.models import (
    RESERVED_COLLECTION_NAMES,
    CollectionOut,
    CollectionRecord,
    DocumentOut,
    DocumentRecord,
    PageHitOut,
    PageOut,
    PageRecord,
    PageWrite,
    StoredVectors,
)
from memlane.documents.store import DocumentStore
from memlane.errors import ConfigError, EmbedderMismatchError, InvalidInputError, StoreError, UnsupportedInputError
from memlane.filters import MATCH_ALL, Node
from memlane.ids import new_id

_log = logging.getLogger(__name__)

MAX_NAME_CHARS = 256
#: pages encoded per model call while upserting (and per progress step)
ENCODE_BATCH = 16
ALL = "all"

Progress = Callable[[str, int, int], None]

#: ``Documents.for_memory``: one Documents per live Memory
_SHARED: "weakref.WeakKeyDictionary[Any, Documents]" = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def document_store(store: Any, tenant: str = "default") -> DocumentStore:
    """The document store sharing a memory store's file or database (and, on PostgreSQL, its tenant)."""
    from memlane.store.sqlite import SQLiteStore

    if isinstance(store, SQLiteStore):
        from memlane.documents.store_sqlite import SQLiteDocumentStore

        return SQLiteDocumentStore(store, tenant)
    try:
        from memlane.store.postgres import PostgresStore
    except ImportError:  # no postgres extra: it cannot be a PostgresStore
        PostgresStore = None  # type: ignore[assignment,misc]
    if PostgresStore is not None and isinstance(store, PostgresStore):
        from memlane.documents.store_postgres import PostgresDocumentStore

        return PostgresDocumentStore(store)
    raise ConfigError(f"document collections need the sqlite or postgres store, not {type(store).__name__}")


def default_encoder(settings: config_mod.DocumentsConfig, memory: Any = None) -> MultiVectorEncoder:
    """The configured encoder; the local one reuses the memory's loaded local model when it is the same model."""
    spec = encoder_config(dict(settings.encoder))
    if memory is not None and spec.provider == "local" and not spec.model:
        from memlane.embeddings.local import LocalEmbedder, default_model_dir

        embedder = getattr(memory.embeddings, "embedder", None)
        embedder = getattr(embedder, "inner", embedder)
        if isinstance(embedder, LocalEmbedder) and embedder.path == default_model_dir():
            return LocalTokenEncoder.from_config(spec, embedder)
    return create_encoder(spec)


class Documents:
    """Document collections searched by late interaction (MaxSim over token vectors).

    ``Documents()`` works offline: the default store (``~/.memlane/memlane.db``) and the local
    model's token vectors. ``Documents(memory=m)`` shares ``m``'s store and model. ``config``'s
    ``documents`` block sets the encoder, page size and limits. ``tenant`` names the owner of the
    rows in a SQLite file (the server gives each tenant a file of its own); a PostgreSQL store is
    already bound to its tenant."""

    def __init__(self, config: config_mod.MemoryConfig | Mapping[str, Any] | None = None, *,
                 memory: Any = None, encoder: MultiVectorEncoder | None = None, store: DocumentStore | None = None,
                 tenant: str = "default"):
        if memory is None and store is None:
            from memlane.memory import Memory

            memory = Memory(config)
            self._owned = memory
        else:
            self._owned = None
        if config is None and memory is not None:
            self.config = memory.config
        else:
            self.config = config_mod.load(dict(config) if isinstance(config, Mapping) else config)
        self.settings = self.config.documents
        self.encoder = encoder or default_encoder(self.settings, memory)
        self.store = store or document_store(memory.store, tenant)
        self._index: PageIndex | None = None
        self._ids: set[str] = set()  # the page ids in the index
        self._index_version = -1
        self._lock = threading.RLock()
        #: computes the encodings stored with the pages at upsert (the same parameters as the index)
        self._encoding = self._new_index()

    @classmethod
    def from_config(cls, config_dict: Mapping[str, Any]) -> "Documents":
        return cls(config_dict)

    @classmethod
    def for_memory(cls, memory: Any, encoder: MultiVectorEncoder | None = None) -> "Documents":
        """The one ``Documents`` of a ``Memory`` (and its store), created on first use, so every face of
        a process (REST, MCP) shares one page index per store."""
        with _SHARED_LOCK:
            found = _SHARED.get(memory)
            if found is None:
                found = _SHARED[memory] = cls(memory=memory, encoder=encoder)
            return found

    # -- collections ------------------------------------------------------------------------------

    def create_collection(self, name: str, metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        name = self._name(name, "name", collection=True)
        return _collection_out(self.store.create_collection(name, self._metadata(metadata)))

    def get_collection(self, name: str) -> dict[str, Any]:
        return _collection_out(self._collection(name))

    def list_collections(self, query_filter: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Every collection of the tenant, by name; ``query_filter`` must be ``on: collection``."""
        where = self._filter(query_filter, allowed=("collection",))
        return [_collection_out(c) for c in self.store.collections(where)]

    def update_collection(self, name: str, *, new_name: str | None = None,
                          metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Rename a collection and/or replace its metadata."""
        name = self._name(name, "collection_name")
        new_name = self._name(new_name, "name", collection=True) if new_name is not None else None
        metadata = self._metadata(metadata) if metadata is not None else None
        return _collection_out(self.store.update_collection(name, new_name=new_name, metadata=metadata))

    def delete_collection(self, name: str) -> dict[str, Any]:
        """Delete a collection with its documents and pages."""
        name = self._name(name, "collection_name")
        version = self._version_before_write()
        removed = self.store.delete_collection(name)
        self._after_write(version, removed, [])
        return {"deleted": name, "pages_deleted": len(removed)}

    # -- documents --------------------------------------------------------------------------------

    def upsert_document(self, name: str, collection_name: str, *, text: str | None = None,
                        file: bytes | str | None = None, filename: str | None = None, path: str | Path | None = None,
                        metadata: Mapping[str, Any] | None = None, progress: Progress | None = None) -> dict[str, Any]:
        """Create a document from one of ``text``, ``file`` (bytes, or base64 text) or ``path`` (a local
        file), or replace the pages and metadata of the document of that name in the collection.

        Files: PDF (text layer), Markdown (``filename``/``path`` ending .md), UTF-8 text, or an image
        (needs an encoder that accepts images). ``progress(stage, done, total)`` is called while pages
        are read and encoded."""
        name = self._name(name, "name")
        collection_name = self._name(collection_name, "collection_name")
        stored_metadata = self._metadata(metadata)
        kind, pages, source = self._pages(text, file, filename, path, progress)
        self._collection(collection_name)  # unknown collection: fail before the costly encoding
        writes = self._with_encodings(self._encode(pages, progress))
        version = self._version_before_write()
        result = self.store.upsert_document(collection_name, name, stored_metadata, source, writes,
                                            self.encoder.name, self.encoder.dims)
        self._after_write(version, result.removed_page_ids, writes)
        out = _document_out(result.document)
        out["created"] = result.created
        out["kind"] = kind
        return out

    def get_document(self, name: str, collection_name: str, *, expand_pages: bool = False) -> dict[str, Any]:
        name = self._name(name, "document_name")
        collection_name = self._name(collection_name, "collection_name")
        document = self.store.document(collection_name, name)
        if document is None:
            self._collection(collection_name)
            raise DocumentNotFoundError(name, collection_name)
        return _document_out(document, self.store.pages(document.id) if expand_pages else None)

    def list_documents(self, collection_name: str = ALL, *, query_filter: Mapping[str, Any] | None = None,
                       expand_pages: bool = False, limit: int = 1000) -> list[dict[str, Any]]:
        """Documents of one collection (or of ``all``), by collection and name."""
        scope = self._scope(collection_name)
        where = self._filter(query_filter)
        limit = _positive_int(limit, "limit", self.settings.max_top_k * 100)
        documents = self.store.documents(scope, where, limit)
        return [_document_out(d, self.store.pages(d.id) if expand_pages else None) for d in documents]

    def update_document(self, name: str, collection_name: str, *, new_name: str | None = None,
                        metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Rename a document and/or replace its metadata (its pages stay)."""
        name = self._name(name, "document_name")
        collection_name = self._name(collection_name, "collection_name")
        new_name = self._name(new_name, "name") if new_name is not None else None
        metadata = self._metadata(metadata) if metadata is not None else None
        return _document_out(self.store.update_document(collection_name, name, new_name=new_name, metadata=metadata))

    def delete_document(self, name: str, collection_name: str) -> dict[str, Any]:
        name = self._name(name, "document_name")
        collection_name = self._name(collection_name, "collection_name")
        version = self._version_before_write()
        removed = self.store.delete_document(collection_name, name)
        self._after_write(version, removed, [])
        return {"deleted": name, "collection_name": collection_name, "pages_deleted": len(removed)}

    # -- search -----------------------------------------------------------------------------------

    def search(self, query: str, *, collection_name: str = ALL, top_k: int = 3,
               query_filter: Mapping[str, Any] | None = None, exact: bool | None = None) -> dict[str, Any]:
        """The ``top_k`` pages with the highest MaxSim to the query's token vectors, best first.

        Each result carries ``raw_score`` (MaxSim) and ``normalized_score`` (raw / number of query
        vectors), its page number and text, and its document's and collection's names, ids and metadata."""
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("query must be a non-empty string", field="query")
        if len(query) > self.settings.max_query_chars:
            raise InvalidInputError(f"query has {len(query):,} characters; the limit is "
                                    f"{self.settings.max_query_chars:,} (documents.max_query_chars)", field="query")
        scope, where, top_k = self._search_options(collection_name, query_filter, top_k)
        vectors = self.encoder.encode_queries([query])[0]
        return {"query": query, "results": self._search(vectors, scope, where, top_k, exact)}

    def search_image(self, image: bytes | str, *, collection_name: str = ALL, top_k: int = 3,
                     query_filter: Mapping[str, Any] | None = None, exact: bool | None = None) -> dict[str, Any]:
        """Like ``search`` with an image (bytes, or base64 text) as the query; needs an encoder that accepts images."""
        data = _binary(image, "img_base64", self.settings.max_file_bytes)
        if not ingest.is_image(data):
            raise InvalidInputError("img_base64 is not a PNG, JPEG, GIF or WebP image", field="img_base64")
        scope, where, top_k = self._search_options(collection_name, query_filter, top_k)
        vectors = self._images([data], "img_base64")[0]
        return {"query": None, "results": self._search(vectors, scope, where, top_k, exact)}

    def filter(self, query_filter: Mapping[str, Any], *, expand_pages: bool = False,
               limit: int = 1000) -> dict[str, Any]:
        """Documents (``on: document``) or collections (``on: collection``) whose metadata match."""
        where = self._filter(query_filter)
        if where == MATCH_ALL:
            raise qf.filter_error(
                "give a lookup, e.g. {\"on\": \"document\", \"key\": \"year\", \"value\": 2024}", "query_filter")
        if query_filter_on(where) == "collection":
            return {"on": "collection", "results": [_collection_out(c) for c in self.store.collections(where)]}
        limit = _positive_int(limit, "limit", self.settings.max_top_k * 100)
        documents = self.store.documents(None, where, limit)
        return {"on": "document",
                "results": [_document_out(d, self.store.pages(d.id) if expand_pages else None) for d in documents]}

    def info(self) -> dict[str, Any]:
        with self._lock:
            loaded = self._index is not None
            return {"encoder": self.encoder.name, "dims": self.encoder.dims,
                    "pages_by_encoder": self.store.encoders(), "index_loaded": loaded,
                    "index_pages": len(self._index) if loaded else 0,
                    "index_bytes": self._index.nbytes if loaded else 0}

    def close(self) -> None:
        with self._lock:
            self._index = None
        if self._owned is not None:
            self._owned.close()

    def __enter__(self) -> "Documents":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- internals: search ------------------------------------------------------------------------

    def _search_options(self, collection_name: str, query_filter: Mapping[str, Any] | None,
                        top_k: int) -> tuple[str | None, Node, int]:
        scope = self._scope(collection_name)
        where = self._filter(query_filter)
        return scope, where, _positive_int(top_k, "top_k", self.settings.max_top_k)

    def _search(self, vectors: np.ndarray, scope: str | None, where: Node, top_k: int,
                exact: bool | None) -> list[dict[str, Any]]:
        if exact is None:
            exact = self.settings.exact_search
        allowed = None if scope is None and where == MATCH_ALL else set(self.store.page_ids(scope, where))
        with self._lock:
            index = self._current_index()
            found = index.search(vectors, top_k, allowed=allowed, exact=bool(exact)) if len(index) else []
        hits = self.store.hits([page_id for page_id, _ in found])
        n = len(vectors)
        results = []
        for page_id, raw in found:
            hit = hits.get(page_id)
            if hit is None:  # deleted by another process since the index was read
                continue
            results.append(PageHitOut(
                collection_name=hit.collection.name, collection_id=hit.collection.id,
                collection_metadata=hit.collection.metadata, document_name=hit.document.name,
                document_id=hit.document.id, document_metadata=hit.document.metadata,
                page_number=hit.page.page_number, page_id=page_id, text=hit.page.text, raw_score=raw,
                normalized_score=raw / n, img_base64=_b64(hit.page.image)).model_dump())
        return results

    def _current_index(self) -> PageIndex:
        """The index of the store's current pages (call with the lock held).

        Page ids never change (an upsert writes new pages), so after another process wrote, the
        index catches up by the difference of its page ids and the stored ones: one query for
        the ids, and the vectors of the new pages only."""
        version = self.store.version()
        if self._index is not None and version == self._index_version:
            return self._index
        encoders = self.store.encoders()
        others = {name: count for name, count in encoders.items() if name != self.encoder.name}
        if others:
            raise EmbedderMismatchError(
                f"pages of this store were encoded by {sorted(others)} but the configured encoder is "
                f"{self.encoder.name!r}; configure that encoder (documents.encoder), or upsert those "
                "documents again with this one")
        fde_config = self._encoding.encoding_id
        if self._index is None:
            self._index, self._ids = self._new_index(), set()
            for batch in self.store.iter_vectors(self.encoder.name, fde_config):
                self._add_rows(batch, save=True)
        else:
            stored = set(self.store.page_ids_of_encoder(self.encoder.name))
            gone = self._ids - stored
            self._index.remove(gone)
            self._ids -= gone
            new = sorted(stored - self._ids)
            for start in range(0, len(new), 500):
                self._add_rows(self.store.vectors(new[start:start + 500], fde_config), save=True)
        self._index_version = version
        return self._index

    def _new_index(self) -> PageIndex:
        """An empty page index; the one place its fast-path parameters are chosen, so the encodings
        stored at upsert and the index that reads them back agree."""
        return PageIndex(self.encoder.dims)

    def _with_encodings(self, writes: list[PageWrite]) -> list[PageWrite]:
        """The pages with their fast-path encodings, computed from the float16 vectors about to be
        stored, as the index computes them at load (up to float32 rounding: BLAS sums a matrix
        product of other row counts in another order). Stored once, every process then uses the
        same encoding of a page."""
        if writes:
            dims = self.encoder.dims
            encodings = self._encoding.encode([from_half(p.vectors, dims) for p in writes])
            for page, encoding in zip(writes, encodings):
                page.fde, page.fde_config = to_fde(encoding), self._encoding.encoding_id
        return writes

    def _add_rows(self, rows: Sequence[StoredVectors], *, save: bool = False) -> None:
        """Add stored pages to the index with their stored encodings; pages without a usable one are
        encoded here, and (``save``) their encodings written back to the store."""
        if not rows:
            return
        index = self._index
        assert index is not None
        dims, size = self.encoder.dims, self._encoding.encoding_size
        pages = [from_half(row.vectors, dims) for row in rows]
        encodings = np.empty((len(rows), size), dtype=np.float32)
        missing = []
        for n, row in enumerate(rows):
            if row.fde is not None and len(row.fde) == size * 4:
                encodings[n] = from_fde(row.fde)
            else:
                missing.append(n)
        if missing:
            encodings[missing] = index.encode([pages[n] for n in missing])
            if save:
                self._save_encodings([(rows[n].id, to_fde(encodings[n])) for n in missing])
        index.add([row.id for row in rows], pages, encodings=encodings)
        self._ids.update(row.id for row in rows)

    def _save_encodings(self, encodings: list[tuple[str, bytes]]) -> None:
        """Write encodings computed at load back to the store. Best effort: they are a cache of what
        the pages' vectors determine, so a store that refuses the write (a read-only file, a lock
        held too long) costs the next process the same encoding work, nothing else."""
        try:
            self.store.save_encodings(encodings, self._encoding.encoding_id)
        except StoreError as exc:
            _log.warning("could not store the fast-path encodings of %d pages (%s); they are computed "
                         "again when the next process loads its page index", len(encodings), exc)

    def _version_before_write(self) -> int:
        with self._lock:
            return self._index_version if self._index is not None else -1

    def _after_write(self, before: int, removed: Sequence[str], added: Sequence[PageWrite]) -> None:
        """Apply this process's write to the loaded index when it is the only write since the index
        was brought up to date; otherwise leave it to the next search to catch up by page ids."""
        with self._lock:
            if self._index is None:
                return
            version = self.store.version()
            if before == self._index_version and version == before + 1:
                self._index.remove(list(removed))
                self._ids.difference_update(removed)
                if added:
                    self._add_rows([StoredVectors(p.id, p.n_tokens, p.vectors, p.fde) for p in added])
                self._index_version = version
            else:
                self._index_version = -1

    # -- internals: input -------------------------------------------------------------------------

    def _pages(self, text: str | None, file: bytes | str | None, filename: str | None, path: str | Path | None,
               progress: Progress | None) -> tuple[str, list[ingest.PageInput], str | None]:
        given = [k for k, v in (("text", text), ("file", file), ("path", path)) if v is not None]
        if len(given) != 1:
            raise InvalidInputError("give exactly one of text, file (base64) or path"
                                    + (f"; got {', '.join(given)}" if given else ""), field="text")
        limit = self.settings.page_chars
        if text is not None:
            if not isinstance(text, str):
                raise InvalidInputError(f"text must be a string, got {type(text).__name__}", field="text")
            if len(text) > self.settings.max_text_chars:
                raise InvalidInputError(f"text has {len(text):,} characters; the limit is "
                                        f"{self.settings.max_text_chars:,} (documents.max_text_chars)", field="text")
            kind = "markdown" if filename and ingest.detect_kind(filename, b"") == "markdown" else "text"
            pages, source = ingest.pages_from_text(text, kind, limit), filename
        else:
            if path is not None:
                field, file_path = "path", Path(path).expanduser()
                if not file_path.is_file():
                    raise InvalidInputError(f"path {str(path)!r} is not a readable file", field="path")
                size = file_path.stat().st_size
                if size > self.settings.max_file_bytes:
                    raise InvalidInputError(f"{path} has {size:,} bytes; the limit is "
                                            f"{self.settings.max_file_bytes:,} (documents.max_file_bytes)", field="path")
                data, filename, source = file_path.read_bytes(), filename or file_path.name, str(file_path)
            else:
                field = "file"
                data, source = _binary(file, "file", self.settings.max_file_bytes), filename
            kind, pages = ingest.pages_from_file(data, filename, limit, progress=progress, field=field)
        if not pages:
            raise InvalidInputError("the document has no text to index (a scanned PDF without a text layer, "
                                    "or an empty file)", field="file" if text is None else "text")
        if len(pages) > self.settings.max_pages:
            raise InvalidInputError(f"the document has {len(pages):,} pages; the limit is "
                                    f"{self.settings.max_pages:,} (documents.max_pages)", field="file")
        return kind, pages, source

    def _encode(self, pages: Sequence[ingest.PageInput], progress: Progress | None) -> list[PageWrite]:
        """Token vectors of every page, as float16, before anything is written (an encoder that
        cannot read a page fails the whole upsert)."""
        images = [p for p in pages if p.image is not None]
        image_vectors = self._images([p.image for p in images], "file") if images else []  # type: ignore[misc]
        by_page = {id(p): v for p, v in zip(images, image_vectors)}
        texts = [p for p in pages if p.image is None]
        for start in range(0, len(texts), ENCODE_BATCH):
            batch = texts[start:start + ENCODE_BATCH]
            for page, vectors in zip(batch, self.encoder.encode_pages([p.text for p in batch])):
                by_page[id(page)] = vectors
            if progress is not None:
                progress("encoding pages", min(start + ENCODE_BATCH, len(texts)), len(texts))
        out = []
        for page in pages:
            vectors = by_page[id(page)]
            out.append(PageWrite(page.page_number, page.text, page.image, int(len(vectors)), to_half(vectors),
                                 id=new_id()))
        return out

    def _images(self, images: list[bytes], field: str) -> list[np.ndarray]:
        try:
            return self.encoder.encode_images(images)
        except UnsupportedInputError as exc:
            raise UnsupportedInputError(str(exc), field=field) from None

    def _collection(self, name: str) -> CollectionRecord:
        name = self._name(name, "collection_name")
        found = self.store.collection(name)
        if found is None:
            raise CollectionNotFoundError(name)
        return found

    def _scope(self, collection_name: str | None) -> str | None:
        """None for every collection (``all``); else the collection's name, which must exist."""
        if collection_name is None or collection_name == ALL:
            return None
        return self._collection(collection_name).name

    def _filter(self, value: Mapping[str, Any] | None, allowed: Sequence[str] = qf.TARGETS) -> Node:
        where = qf.parse(value)
        wrong = qf.targets(where) - set(allowed)
        if wrong:
            raise qf.filter_error(f"this call filters on {' or '.join(allowed)} metadata; "
                                            f"'on: {sorted(wrong)[0]}' does not apply here", "query_filter.on")
        return where

    def _name(self, value: Any, field: str, *, collection: bool = False) -> str:
        if not isinstance(value, str):
            raise InvalidInputError(f"{field} must be a string, got {type(value).__name__}", field=field)
        if not value.strip() or value != value.strip():
            raise InvalidInputError(f"{field} must be non-empty without leading or trailing spaces, got {value!r}",
                                    field=field)
        if len(value) > MAX_NAME_CHARS:
            raise InvalidInputError(f"{field} is longer than {MAX_NAME_CHARS} characters", field=field)
        if any(ord(c) < 32 or c == "/" for c in value):
            raise InvalidInputError(f"{field} must not contain '/' or control characters", field=field)
        if collection and value.casefold() in RESERVED_COLLECTION_NAMES:
            raise InvalidInputError(f"{value!r} is reserved (collection_name \"all\" searches every collection); "
                                    "choose another name", field=field)
        return value

    def _metadata(self, value: Mapping[str, Any] | None) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise InvalidInputError(f"metadata must be a JSON object, got {type(value).__name__}", field="metadata")
        try:
            encoded = json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"metadata must be JSON ({exc})", field="metadata") from None
        if len(encoded.encode()) > self.settings.max_metadata_bytes:
            raise InvalidInputError(f"metadata is {len(encoded.encode()):,} bytes as JSON; the limit is "
                                    f"{self.settings.max_metadata_bytes:,} (documents.max_metadata_bytes)",
                                    field="metadata")
        return json.loads(encoded)


def query_filter_on(where: Node) -> str:
    """What ``filter`` returns for a parsed query_filter: collections when it reads only their metadata."""
    return "collection" if qf.targets(where) == {"collection"} else "document"


def _positive_int(value: Any, field: str, maximum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{field} must be a positive integer, got {value!r}", field=field)
    if value > maximum:
        raise InvalidInputError(f"{field} is {value}; the limit is {maximum}", field=field)
    return value


def _binary(value: Any, field: str, max_bytes: int) -> bytes:
    """Bytes, or base64 text (a ``data:...;base64,`` prefix is accepted), at most ``max_bytes``."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
    elif isinstance(value, str):
        text = value.split(",", 1)[1] if value.startswith("data:") and "," in value else value
        if math.ceil(len(text) * 3 / 4) > max_bytes + 3:
            raise InvalidInputError(f"{field} is larger than {max_bytes:,} bytes (documents.max_file_bytes)",
                                    field=field)
        try:
            data = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInputError(f"{field} is not valid base64", field=field) from None
    else:
        raise InvalidInputError(f"{field} must be bytes or base64 text, got {type(value).__name__}", field=field)
    if not data:
        raise InvalidInputError(f"{field} is empty", field=field)
    if len(data) > max_bytes:
        raise InvalidInputError(f"{field} has {len(data):,} bytes; the limit is {max_bytes:,} "
                                "(documents.max_file_bytes)", field=field)
    return data


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode("ascii") if data else None


def _collection_out(c: CollectionRecord) -> dict[str, Any]:
    return CollectionOut(id=c.id, name=c.name, metadata=c.metadata, num_documents=c.num_documents,
                         created_at=c.created_at, updated_at=c.updated_at).model_dump()


def _document_out(d: DocumentRecord, pages: list[PageRecord] | None = None) -> dict[str, Any]:
    return DocumentOut(
        id=d.id, name=d.name, collection_id=d.collection_id, collection_name=d.collection_name, metadata=d.metadata,
        source=d.source, num_pages=d.num_pages, created_at=d.created_at, updated_at=d.updated_at,
        pages=None if pages is None else [PageOut(page_number=p.page_number, text=p.text, img_base64=_b64(p.image))
                                          for p in pages],
    ).model_dump(exclude_none=pages is None)


# -- async ----------------------------------------------------------------------------------------


def _offload(name: str) -> Callable[..., Any]:
    method = getattr(Documents, name)

    @functools.wraps(method)
    async def call(self: "AsyncDocuments", *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(method, self.sync, *args, **kwargs)

    return call


class AsyncDocuments:
    """``Documents`` for asyncio code: the same methods and results, awaited (run in worker threads)."""

    def __init__(self, config: config_mod.MemoryConfig | Mapping[str, Any] | None = None, *,
                 memory: Any = None, encoder: MultiVectorEncoder | None = None, documents: Documents | None = None):
        self.sync = documents or Documents(config, memory=memory, encoder=encoder)

    create_collection = _offload("create_collection")
    get_collection = _offload("get_collection")
    list_collections = _offload("list_collections")
    update_collection = _offload("update_collection")
    delete_collection = _offload("delete_collection")
    upsert_document = _offload("upsert_document")
    get_document = _offload("get_document")
    list_documents = _offload("list_documents")
    update_document = _offload("update_document")
    delete_document = _offload("delete_document")
    search = _offload("search")
    search_image = _offload("search_image")
    filter = _offload("filter")
    info = _offload("info")
    close = _offload("close")

    async def __aenter__(self) -> "AsyncDocuments":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
