"""Errors of document collections; all are ``memlane.core.errors`` types, so callers catch them the same way."""

from __future__ import annotations

from memlane.core.errors import InvalidInputError, MemlaneError


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
