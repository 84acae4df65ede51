"""The facade: ``Documents`` (sync) and ``AsyncDocuments`` (the same methods, awaited).

``Documents`` validates input (``inputs``), turns files into pages (``ingest``), asks the
multi-vector encoder for token vectors (``encoders``), writes through the document store of the
memory store it shares (same SQLite file or PostgreSQL database, same tenant), and searches with
the page index it keeps in memory and in step with the store (``live_index``).
"""

from __future__ import annotations

import base64
import functools
import threading
import weakref
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from memlane.core import config as config_mod
from memlane.core import validation
from memlane.core.closing import AsyncClosing, Closing
from memlane.core.offload import offload
from memlane.documents import encoder_choice, ingest, inputs
from memlane.documents import query_filter as qf
from memlane.documents.encoder_choice import EncoderChoice
from memlane.documents.encoders import MultiVectorEncoder, encoder_config
from memlane.documents.errors import (
    CollectionChangedError,
    CollectionNotFoundError,
    DocumentNotFoundError,
    EncoderConflictError,
)
from memlane.documents.late_interaction import to_half
from memlane.documents.live_index import LiveIndex
from memlane.documents.models import (
    CollectionOut,
    CollectionRecord,
    DocumentOut,
    DocumentRecord,
    PageHitOut,
    PageOut,
    PageRecord,
    PageWrite,
)
from memlane.documents.backends import document_store
from memlane.documents.store import DocumentStore
from memlane.core.errors import EmbedderMismatchError, InvalidInputError, UnsupportedInputError
from memlane.core.filters import MATCH_ALL, Node
from memlane.core.ids import new_id
from memlane.retrieval import feedback, fusion
from memlane.text import keywords

#: pages encoded per model call while upserting (and per progress step)
ENCODE_BATCH = 16
ALL = "all"
#: times ``reencode_collection`` reads and encodes a collection whose pages other writes keep changing
REENCODE_ATTEMPTS = 3

Progress = inputs.Progress

#: ``Documents.for_memory``: one Documents per live Memory
_SHARED: "weakref.WeakKeyDictionary[Any, Documents]" = weakref.WeakKeyDictionary()
_SHARED_LOCK = threading.Lock()


def choose_encoders(settings: config_mod.DocumentsConfig, memory: Any = None,
                   encoder: MultiVectorEncoder | None = None) -> EncoderChoice:
    """The encoders of the configuration (``encoder_choice.py``): ``encoder`` or the configured one when
    explicit, else chosen per collection by its pages' language, sharing the memory's own model (one
    loaded copy) when it is one of the two."""
    embedder = getattr(memory.embeddings, "embedder", None) if memory is not None else None
    embedder = getattr(embedder, "inner", embedder)
    return EncoderChoice(encoder_config(dict(settings.encoder)), explicit=encoder, memory_embedder=embedder)


def explicit_encoder(settings: config_mod.DocumentsConfig, memory: Any = None) -> MultiVectorEncoder | None:
    """The encoder every new collection gets, or None when each one's is chosen by its pages' language."""
    return choose_encoders(settings, memory).explicit


class Documents(Closing):
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
        self.store = store or document_store(memory.store, tenant)
        #: the encoders collections may use: the explicit one, or chosen per collection by its pages' language
        self.encoders = choose_encoders(self.settings, memory, encoder)
        #: a page index per encoder (of the pages it encoded), kept in step with the store
        self._indexes: dict[str, LiveIndex] = {}
        self._indexes_lock = threading.Lock()

    @property
    def encoder(self) -> MultiVectorEncoder:
        """The explicit encoder, else the multilingual one of the automatic choice."""
        return self.encoders.default()

    @property
    def index(self) -> LiveIndex:
        """The page index of ``encoder``."""
        return self._index_of(self.encoder)

    @property
    def max_list_limit(self) -> int:
        """The most documents ``list_documents`` returns in one call (``documents.max_top_k`` x 100)."""
        return self.settings.max_top_k * 100

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

    def create_collection(self, name: str, metadata: Mapping[str, Any] | None = None, *,
                          encoder: str | None = None) -> dict[str, Any]:
        """A new empty collection. ``encoder`` (``encoder_choice.OPTIONS``): ``english`` (all-MiniLM-L6-v2's
        token vectors) or ``multilingual`` (multilingual-e5-small's) for its pages and queries; ``auto`` or
        None: the configured encoder, else chosen by the language of its first pages."""
        name = inputs.name(name, "name", collection=True)
        metadata = inputs.metadata(metadata, self.settings)
        chosen = self.encoders.for_option(encoder_choice.option(encoder)) or self.encoders.explicit
        return _collection_out(self.store.create_collection(name, metadata,
                                                            chosen.name if chosen is not None else None))

    def get_collection(self, name: str) -> dict[str, Any]:
        return _collection_out(self._collection(name))

    def list_collections(self, query_filter: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Every collection of the tenant, by name; ``query_filter`` must be ``on: collection``."""
        where = inputs.query_filter(query_filter, allowed=("collection",))
        return [_collection_out(c) for c in self.store.collections(where)]

    def update_collection(self, name: str, *, new_name: str | None = None,
                          metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Rename a collection and/or replace its metadata."""
        name = inputs.name(name, "collection_name", existing=True)
        new_name = inputs.name(new_name, "name", collection=True) if new_name is not None else None
        metadata = inputs.metadata(metadata, self.settings) if metadata is not None else None
        return _collection_out(self.store.update_collection(name, new_name=new_name, metadata=metadata))

    def delete_collection(self, name: str) -> dict[str, Any]:
        """Delete a collection with its documents and pages."""
        name = inputs.name(name, "collection_name", existing=True)
        versions = self._versions_before_write()
        removed = self.store.delete_collection(name)
        self._after_write(versions, removed)
        return {"deleted": name, "pages_deleted": len(removed)}

    # -- documents --------------------------------------------------------------------------------

    def upsert_document(self, name: str, collection_name: str, *, text: str | None = None,
                        file: bytes | str | None = None, filename: str | None = None, path: str | Path | None = None,
                        metadata: Mapping[str, Any] | None = None, progress: Progress | None = None,
                        encoder: str | None = None) -> dict[str, Any]:
        """Create a document from one of ``text``, ``file`` (bytes, or base64 text) or ``path`` (a local
        file), or replace the pages and metadata of the document of that name in the collection.

        Files: PDF (text layer), Markdown (``filename``/``path`` ending .md), UTF-8 text, or an image
        (needs an encoder that accepts images). ``progress(stage, done, total)`` is called while pages
        are read and encoded.

        ``encoder`` (as ``create_collection``'s): the collection's encoder, for a collection without
        documents (it replaces the one recorded at its creation); ``EncoderConflictError`` when the
        collection holds documents of another (``reencode_collection`` changes it). The answer carries
        ``warnings`` when pages that are not English go into a collection whose English encoder was
        chosen automatically."""
        name = inputs.name(name, "name")
        collection_name = inputs.name(collection_name, "collection_name", existing=True)
        stored_metadata = inputs.metadata(metadata, self.settings)
        asked = encoder_choice.option(encoder)
        kind, pages, source = inputs.pages(self.settings, text, file, filename, path, progress)
        collection = self._collection(collection_name)  # unknown collection: fail before the costly encoding
        chosen = self.encoders.for_option(asked)
        if chosen is not None and collection.encoder not in (None, chosen.name) and collection.num_documents:
            raise EncoderConflictError(collection.name, collection.num_documents, str(collection.encoder), chosen.name)
        used = chosen or (self._encoder_named(collection) if collection.encoder is not None
                          else self.encoders.for_pages([p.text for p in pages]))
        warnings = self._language_warnings(collection.name, used, asked, [p.text for p in pages])
        index = self._index_of(used)
        writes = index.with_encodings(self._encode(used, pages, progress))
        versions = self._versions_before_write()
        result = self.store.upsert_document(collection_name, name, stored_metadata, source, writes,
                                            used.name, used.dims, chosen=chosen is not None)
        self._after_write(versions, result.removed_page_ids, index, writes)
        out = _document_out(result.document)
        out["created"] = result.created
        out["kind"] = kind
        if warnings:
            out["warnings"] = warnings
        return out

    def reencode_collection(self, name: str, encoder: str | None = "auto", *,
                            progress: Progress | None = None) -> dict[str, Any]:
        """Give a collection another encoder: every page encoded again by it and written, with the
        collection's new ``encoder``, in one transaction (a failure, or a page the encoder cannot read,
        leaves the collection as it was). ``encoder`` as ``create_collection``'s; ``auto``: the
        configured encoder, else chosen by the language of the collection's pages. A collection that
        has that encoder already is left alone. The answer is the collection with ``reencoded_pages``
        and ``previous_encoder``. Pages written by another process meanwhile are read and encoded
        again (``CollectionChangedError`` after ``REENCODE_ATTEMPTS``)."""
        name = inputs.name(name, "collection_name", existing=True)
        asked = encoder_choice.option(encoder)
        for _ in range(REENCODE_ATTEMPTS):
            collection = self._collection(name)
            records = self.store.collection_pages(collection.name)
            # auto without pages: its first upsert chooses, as for a new one
            target = (None if asked is None and not records else
                      self.encoders.for_option(asked) or self.encoders.for_pages([r.text or "" for r in records]))
            if target is None or collection.encoder == target.name:
                return {**_collection_out(collection), "reencoded_pages": 0, "previous_encoder": collection.encoder}
            index = self._index_of(target)
            pages = [ingest.PageInput(r.page_number, r.text or "", r.image) for r in records]
            writes = index.with_encodings(self._encode(target, pages, progress, field="encoder"))
            versions = self._versions_before_write()
            try:
                removed = self.store.reencode_collection(
                    collection.name, [r.id for r in records], [(r.document_id, w) for r, w in zip(records, writes)],
                    target.name, target.dims)
            except CollectionChangedError:
                continue
            self._after_write(versions, removed, index, writes)
            return {**self.get_collection(collection.name), "reencoded_pages": len(writes),
                    "previous_encoder": collection.encoder}
        raise CollectionChangedError(name)

    def get_document(self, name: str, collection_name: str, *, expand_pages: bool = False) -> dict[str, Any]:
        name = inputs.name(name, "document_name", existing=True)
        collection_name = inputs.name(collection_name, "collection_name", existing=True)
        document = self.store.document(collection_name, name)
        if document is None:
            self._collection(collection_name)
            raise DocumentNotFoundError(name, collection_name)
        return _document_out(document, self.store.pages(document.id) if expand_pages else None)

    def list_documents(self, collection_name: str = ALL, *, query_filter: Mapping[str, Any] | None = None,
                       expand_pages: bool = False, limit: int = 1000) -> list[dict[str, Any]]:
        """Documents of one collection (or of ``all``), by collection and name."""
        scope = self._scope(collection_name)
        where = inputs.query_filter(query_filter)
        limit = inputs.positive_int(limit, "limit", self.max_list_limit)
        documents = self.store.documents(scope, where, limit)
        return [_document_out(d, self.store.pages(d.id) if expand_pages else None) for d in documents]

    def update_document(self, name: str, collection_name: str, *, new_name: str | None = None,
                        metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Rename a document and/or replace its metadata (its pages stay)."""
        name = inputs.name(name, "document_name", existing=True)
        collection_name = inputs.name(collection_name, "collection_name", existing=True)
        new_name = inputs.name(new_name, "name") if new_name is not None else None
        metadata = inputs.metadata(metadata, self.settings) if metadata is not None else None
        return _document_out(self.store.update_document(collection_name, name, new_name=new_name, metadata=metadata))

    def delete_document(self, name: str, collection_name: str) -> dict[str, Any]:
        name = inputs.name(name, "document_name", existing=True)
        collection_name = inputs.name(collection_name, "collection_name", existing=True)
        versions = self._versions_before_write()
        removed = self.store.delete_document(collection_name, name)
        self._after_write(versions, removed)
        return {"deleted": name, "collection_name": collection_name, "pages_deleted": len(removed)}

    # -- search -----------------------------------------------------------------------------------

    def search(self, query: str, *, collection_name: str = ALL, top_k: int = 3,
               query_filter: Mapping[str, Any] | None = None, exact: bool | None = None,
               keyword_search: bool | None = None) -> dict[str, Any]:
        """The ``top_k`` pages with the highest MaxSim to the query's token vectors, best first.

        Each result carries ``raw_score`` (MaxSim) and ``normalized_score`` (raw / number of query
        vectors), its page number and text, and its document's and collection's names, ids and metadata.

        ``keyword_search`` (default: ``documents.keyword_search``): fuse BM25 over the pages' text (the
        memories' analyser and rule) with MaxSim: the best ``documents.keyword_candidates`` pages of
        each, ranked by ``hybrid_score``; each result also carries ``keyword_score`` (BM25, null when
        the page has none of the query's terms), and the answer ``keyword_matches``."""
        query = inputs.query_text(query, self.settings)
        scope, where, top_k = self._search_options(collection_name, query_filter, top_k)
        keyword_search = validation.flag(keyword_search, "keyword_search", self.settings.keyword_search)
        rankings, matches = [], 0
        for index in self._indexes_of(scope):  # each encoder's pages, the query encoded by it
            vectors = index.encoder.encode_queries([query])[0]
            if not keyword_search:
                rankings.append(self._search(index, vectors, scope, where, top_k, exact))
                continue
            ranked, found = self._hybrid(index, query, vectors, scope, where, top_k, exact)
            rankings.append(self._results(ranked, len(vectors)))
            matches += found
        results = _interleave(rankings, top_k)
        return {"query": query, "results": results, **({"keyword_matches": matches} if keyword_search else {})}

    def search_image(self, image: bytes | str, *, collection_name: str = ALL, top_k: int = 3,
                     query_filter: Mapping[str, Any] | None = None, exact: bool | None = None) -> dict[str, Any]:
        """Like ``search`` with an image (bytes, or base64 text) as the query; needs an encoder that accepts images."""
        data = inputs.binary(image, "img_base64", self.settings.max_file_bytes)
        if not ingest.is_image(data):
            raise InvalidInputError("img_base64 is not a PNG, JPEG, GIF or WebP image", field="img_base64")
        scope, where, top_k = self._search_options(collection_name, query_filter, top_k)
        indexes = self._indexes_of(scope)
        readers = [index for index in indexes if index.encoder.accepts_images]
        if not readers:  # none of the scope's encoders reads images (an empty scope: the default encoder)
            self._images(indexes[0].encoder if indexes else self.encoder, [data], "img_base64")
        rankings = [self._search(index, self._images(index.encoder, [data], "img_base64")[0], scope, where, top_k,
                                 exact) for index in readers]
        return {"query": None, "results": _interleave(rankings, top_k)}

    def filter(self, query_filter: Mapping[str, Any], *, expand_pages: bool = False,
               limit: int = 1000) -> dict[str, Any]:
        """Documents (``on: document``) or collections (``on: collection``) whose metadata match."""
        where = inputs.query_filter(query_filter)
        if where == MATCH_ALL:
            raise qf.filter_error(
                "give a lookup, e.g. {\"on\": \"document\", \"key\": \"year\", \"value\": 2024}", "query_filter")
        if query_filter_on(where) == "collection":
            return {"on": "collection", "results": [_collection_out(c) for c in self.store.collections(where)]}
        limit = inputs.positive_int(limit, "limit", self.settings.max_top_k * 100)
        documents = self.store.documents(None, where, limit)
        return {"on": "document",
                "results": [_document_out(d, self.store.pages(d.id) if expand_pages else None) for d in documents]}

    def info(self) -> dict[str, Any]:
        """``encoder``: what a new collection gets (``auto``: chosen by its pages' language)."""
        explicit = self.encoders.explicit
        with self._indexes_lock:
            indexes = list(self._indexes.values())
        loaded = [index.info() for index in indexes]
        return {"encoder": explicit.name if explicit is not None else "auto",
                "dims": explicit.dims if explicit is not None else self.encoder.dims,
                "pages_by_encoder": self.store.encoders(),
                "index_loaded": any(i["index_loaded"] for i in loaded),
                "index_pages": sum(int(i["index_pages"]) for i in loaded),
                "index_bytes": sum(int(i["index_bytes"]) for i in loaded)}

    def close(self) -> None:
        with self._indexes_lock:
            for index in self._indexes.values():
                index.drop()
        if self._owned is not None:
            self._owned.close()

    # -- internals -------------------------------------------------------------------------------

    def _search_options(self, collection_name: str, query_filter: Mapping[str, Any] | None,
                        top_k: int) -> tuple[str | None, Node, int]:
        scope = self._scope(collection_name)
        where = inputs.query_filter(query_filter)
        return scope, where, inputs.positive_int(top_k, "top_k", self.settings.max_top_k)

    def _search(self, index: LiveIndex, vectors: np.ndarray, scope: str | None, where: Node, top_k: int,
                exact: bool | None) -> list[dict[str, Any]]:
        return self._results([Ranked(page_id, raw) for page_id, raw in
                              self._maxsim(index, vectors, scope, where, top_k, exact)], len(vectors))

    def _maxsim(self, index: LiveIndex, vectors: np.ndarray, scope: str | None, where: Node, top_k: int,
                exact: bool | None) -> list[tuple[str, float]]:
        if exact is None:
            exact = self.settings.exact_search
        allowed = None if scope is None and where == MATCH_ALL else set(self.store.page_ids(scope, where))
        return index.search(vectors, top_k, allowed, bool(exact))

    def _hybrid(self, index: LiveIndex, query: str, vectors: np.ndarray, scope: str | None, where: Node, top_k: int,
                exact: bool | None) -> tuple[list["Ranked"], int]:
        """The best pages by MaxSim and by BM25 (``keyword_candidates`` each), every one with its exact
        MaxSim, fused as memories are (``retrieval/fusion.py``, ``documents.fusion``); and how many
        pages matched the query's keywords.

        With ``feedback_pages``, the keyword side is searched again with the query expanded from the
        words of the best pages of that fusion (RM3: ``retrieval/feedback.py``) and fused anew; the
        pages' ``keyword_score`` is then the expanded query's BM25."""
        settings = self.settings
        pool = max(top_k, settings.keyword_candidates)
        dense = self._maxsim(index, vectors, scope, where, pool, exact)
        maxsim = dict(dense)
        keyword = self.store.keyword_search(query, scope, where, index.encoder.name, pool)
        ranked = self._fuse(index, vectors, dense, keyword, maxsim)
        if settings.feedback_pages and ranked:
            best = self.store.hits([r.page_id for r in ranked[: settings.feedback_pages]])
            expanded = feedback.expand(
                keywords.analyze(query), [keywords.analyze(hit.page.text or "") for hit in best.values()],
                terms=settings.feedback_terms, query_weight=settings.feedback_query_weight)
            if expanded:
                ranked = self._fuse(index, vectors, dense, self.store.keyword_search(
                    expanded, scope, where, index.encoder.name, pool), maxsim)
        return ranked[:top_k], len(keyword)

    def _fuse(self, index: LiveIndex, vectors: np.ndarray, dense: list[tuple[str, float]],
              keyword: list[tuple[str, float]], maxsim: dict[str, float]) -> list["Ranked"]:
        """Every page of either side, best first by the configured fusion; ``maxsim`` (page id -> exact
        MaxSim, the dense side's to start with) gains the pages found by their words only."""
        settings = self.settings
        maxsim.update(index.score(vectors, [page_id for page_id, _ in keyword if page_id not in maxsim]))
        # a page the index lacks (written or deleted by another process since it was read) is left out
        keyword = [(page_id, score) for page_id, score in keyword if page_id in maxsim]
        matches, by_maxsim = dict(keyword), dict(dense)
        ids = list(by_maxsim) + [i for i in matches if i not in by_maxsim]  # MaxSim's, then found by words only
        if settings.fusion == "rrf":
            by_rank = fusion.rrf(list(by_maxsim), [i for i, _ in keyword], k=settings.rrf_k)
            fused = [by_rank[i] for i in ids]
        else:
            fused = list(fusion.weighted([maxsim[i] for i in ids], [matches.get(i, 0.0) for i in ids],
                                         settings.keyword_weight))
        order = sorted(range(len(ids)), key=lambda n: -fused[n])  # ties keep MaxSim's order
        return [Ranked(ids[n], maxsim[ids[n]], matches.get(ids[n]), float(fused[n])) for n in order]

    def _results(self, ranked: list["Ranked"], n_vectors: int) -> list[dict[str, Any]]:
        hits = self.store.hits([r.page_id for r in ranked])
        hybrid = {} if ranked and ranked[0].hybrid_score is not None else {"exclude": {"keyword_score", "hybrid_score"}}
        results = []
        for r in ranked:
            hit = hits.get(r.page_id)
            if hit is None:  # deleted by another process since the index was read
                continue
            results.append(PageHitOut(
                collection_name=hit.collection.name, collection_id=hit.collection.id,
                collection_metadata=hit.collection.metadata, document_name=hit.document.name,
                document_id=hit.document.id, document_metadata=hit.document.metadata,
                page_number=hit.page.page_number, page_id=r.page_id, text=hit.page.text, raw_score=r.raw_score,
                normalized_score=r.raw_score / n_vectors, keyword_score=r.keyword_score, hybrid_score=r.hybrid_score,
                img_base64=_b64(hit.page.image)).model_dump(**hybrid))
        return results

    def _encode(self, encoder: MultiVectorEncoder, pages: Sequence[ingest.PageInput],
                progress: Progress | None, *, field: str = "file") -> list[PageWrite]:
        """Token vectors of every page, as float16, before anything is written (an encoder that
        cannot read a page fails the whole write; ``field`` names what the error blames)."""
        images = [p for p in pages if p.image is not None]
        image_vectors = self._images(encoder, [p.image for p in images], field) if images else []  # type: ignore[misc]
        by_page = {id(p): v for p, v in zip(images, image_vectors)}
        texts = [p for p in pages if p.image is None]
        for start in range(0, len(texts), ENCODE_BATCH):
            batch = texts[start:start + ENCODE_BATCH]
            for page, vectors in zip(batch, encoder.encode_pages([p.text for p in batch])):
                by_page[id(page)] = vectors
            if progress is not None:
                progress("encoding pages", min(start + ENCODE_BATCH, len(texts)), len(texts))
        out = []
        for page in pages:
            vectors = by_page[id(page)]
            out.append(PageWrite(page.page_number, page.text, page.image, int(len(vectors)), to_half(vectors),
                                 id=new_id()))
        return out

    def _images(self, encoder: MultiVectorEncoder, images: list[bytes], field: str) -> list[np.ndarray]:
        try:
            return encoder.encode_images(images)
        except UnsupportedInputError as exc:
            raise UnsupportedInputError(str(exc), field=field) from None

    def _collection(self, name: str) -> CollectionRecord:
        name = inputs.name(name, "collection_name", existing=True)
        found = self.store.collection(name)
        if found is None:
            raise CollectionNotFoundError(name)
        return found

    def _language_warnings(self, collection_name: str, encoder: MultiVectorEncoder,
                           asked: encoder_choice.Kind | None, texts: Sequence[str]) -> list[str]:
        """A warning when pages that are not all English go into a collection whose encoder is the English
        model's and was chosen automatically (no encoder configured, none given to this upsert)."""
        if asked is not None or not self.encoders.auto or encoder_choice.kind_of(encoder.name) != "english":
            return []
        language = encoder_choice.pages_language(texts)
        if language == "en":
            return []
        english, multilingual = encoder_choice.MODELS["english"], encoder_choice.MODELS["multilingual"]
        return [(f"collection {collection_name!r} uses the English model's token vectors ({english}, chosen from the "
                 f"language of its first pages), but these pages are not all English (detected: {language}): it "
                 f"finds them less well. Re-encode the collection with encoder 'multilingual' ({multilingual}: "
                 f"Documents.reencode_collection, POST /collections/{collection_name}/reencode, memlane docs reencode "
                 "--encoder multilingual), or give encoder 'english' with the upsert to keep it and not be told again")]

    def _index_of(self, encoder: MultiVectorEncoder) -> LiveIndex:
        """The page index of ``encoder``'s pages (created empty on first use, loaded on first search)."""
        with self._indexes_lock:
            found = self._indexes.get(encoder.name)
            if found is None:
                found = self._indexes[encoder.name] = LiveIndex(self.store, encoder)
            return found

    def _encoder_named(self, collection: CollectionRecord) -> MultiVectorEncoder:
        """The encoder a collection recorded; ``EmbedderMismatchError`` when this process cannot build it."""
        name = collection.encoder
        assert name is not None
        found = self.encoders.named(name)
        if found is None:
            raise EmbedderMismatchError(
                f"the pages of collection {collection.name!r} were encoded by {name!r}, which the configured "
                f"encoder is not; configure that encoder (documents.encoder), or upsert its documents into a new "
                "collection")
        return found

    def _indexes_of(self, scope: str | None) -> list[LiveIndex]:
        """The page indexes a search of ``scope`` (a collection's name, None: all) reads: its collection's
        encoder, or every encoder of the tenant's pages (none: an empty scope)."""
        if scope is not None:
            collection = self._collection(scope)
            return [self._index_of(self._encoder_named(collection))] if collection.encoder is not None else []
        indexes = []  # the encoders of the collections (a few rows), not of every page
        for name in sorted({c.encoder for c in self.store.collections(MATCH_ALL) if c.encoder is not None}):
            encoder = self.encoders.named(name)
            if encoder is None:
                raise EmbedderMismatchError(
                    f"pages of this store were encoded by {name!r}, which the configured encoder is not; configure "
                    "that encoder (documents.encoder), or search the collections of the other encoders by name")
            indexes.append(self._index_of(encoder))
        return indexes

    def _versions_before_write(self) -> dict[str, int]:
        with self._indexes_lock:
            return {name: index.version_before_write() for name, index in self._indexes.items()}

    def _after_write(self, versions: dict[str, int], removed: Sequence[str], written: LiveIndex | None = None,
                     added: Sequence[PageWrite] = ()) -> None:
        """Every page index takes the write's removed pages, ``written`` its added ones too."""
        with self._indexes_lock:
            indexes = list(self._indexes.values())
        for index in indexes:
            index.after_write(versions.get(index.encoder.name, -1), removed, list(added) if index is written else [])

    def _scope(self, collection_name: str | None) -> str | None:
        """None for every collection (``all``); else the collection's name, which must exist."""
        if collection_name is None or collection_name == ALL:
            return None
        return self._collection(collection_name).name

class Ranked(NamedTuple):
    """A page of a search's answer with its scores (``keyword_score``, ``hybrid_score``: hybrid search)."""

    page_id: str
    raw_score: float
    keyword_score: float | None = None
    hybrid_score: float | None = None


def _interleave(rankings: list[list[dict[str, Any]]], top_k: int) -> list[dict[str, Any]]:
    """The best ``top_k`` of the rankings of several encoders' pages: by rank (the encoders' scores are not
    on one scale), pages of the same rank by ``normalized_score``. One ranking is returned as it is."""
    if len(rankings) == 1:
        return rankings[0][:top_k]
    merged = [(rank, -hit["normalized_score"], n, hit) for n, ranking in enumerate(rankings)
              for rank, hit in enumerate(ranking)]
    return [hit for *_, hit in sorted(merged, key=lambda item: item[:3])][:top_k]


def query_filter_on(where: Node) -> str:
    """What ``filter`` returns for a parsed query_filter: collections when it reads only their metadata."""
    return "collection" if qf.targets(where) == {"collection"} else "document"


def _b64(data: bytes | None) -> str | None:
    return base64.b64encode(data).decode("ascii") if data else None


def _collection_out(c: CollectionRecord) -> dict[str, Any]:
    return CollectionOut(id=c.id, name=c.name, metadata=c.metadata, num_documents=c.num_documents,
                         created_at=c.created_at, updated_at=c.updated_at, encoder=c.encoder).model_dump()


def _document_out(d: DocumentRecord, pages: list[PageRecord] | None = None) -> dict[str, Any]:
    return DocumentOut(
        id=d.id, name=d.name, collection_id=d.collection_id, collection_name=d.collection_name, metadata=d.metadata,
        source=d.source, num_pages=d.num_pages, created_at=d.created_at, updated_at=d.updated_at,
        pages=None if pages is None else [PageOut(page_number=p.page_number, text=p.text, img_base64=_b64(p.image))
                                          for p in pages],
    ).model_dump(exclude_none=pages is None)


# -- async ----------------------------------------------------------------------------------------


_offload = functools.partial(offload, Documents)


class AsyncDocuments(AsyncClosing):
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
    reencode_collection = _offload("reencode_collection")
    get_document = _offload("get_document")
    list_documents = _offload("list_documents")
    update_document = _offload("update_document")
    delete_document = _offload("delete_document")
    search = _offload("search")
    search_image = _offload("search_image")
    filter = _offload("filter")
    info = _offload("info")
    close = _offload("close")
