"""Errors of document collections; all are ``memlane.core.errors`` types, so callers catch them the same way."""

from __future__ import annotations

from memlane.core.errors import EmbedderMismatchError, InvalidInputError, MemlaneError


class DocumentsNotFoundError(MemlaneError, LookupError):
    """Base of the lookups that found nothing (REST: 404). ``field`` names the argument that named it."""

    def __init__(self, message: str, *, field: str):
        super().__init__(message)
        self.field = field


class CollectionNotFoundError(DocumentsNotFoundError):
    def __init__(self, name: str):
        super().__init__(f"no collection named {name!r}; create it first (POST /collections, "
                         "Documents.create_collection) or list them (GET /collections)", field="collection_name")
        self.name = name


class DocumentNotFoundError(DocumentsNotFoundError):
    def __init__(self, name: str, collection_name: str):
        super().__init__(f"no document named {name!r} in collection {collection_name!r}", field="document_name")
        self.name = name
        self.collection_name = collection_name


class DuplicateNameError(InvalidInputError):
    """A collection (per tenant) or document (per collection) of that name exists already (REST: 409)."""


class EncoderConflictError(EmbedderMismatchError):
    """The encoder asked for is not the one of a collection that holds documents already (REST: 409):
    a collection never mixes encoders; ``reencode_collection`` changes it. ``field`` is ``encoder``."""

    def __init__(self, collection_name: str, num_documents: int, recorded: str, asked: str):
        super().__init__(
            f"collection {collection_name!r} holds {num_documents} document(s) encoded by {recorded!r}, not "
            f"{asked!r}; a collection never mixes encoders: re-encode it first (Documents.reencode_collection, "
            f"POST /collections/{collection_name}/reencode, memlane docs reencode), or write into another collection")
        self.field = "encoder"


class CollectionChangedError(MemlaneError):
    """A collection's pages changed (another write) every time they were re-encoded, so nothing was
    written (REST: 409); retry. ``field`` is ``collection_name``."""

    def __init__(self, name: str):
        super().__init__(f"the pages of collection {name!r} kept changing while they were re-encoded (other writes "
                         "to it); nothing was changed: retry when its writers pause")
        self.field = "collection_name"
