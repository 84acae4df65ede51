"""Request bodies of the document endpoints. pydantic checks types and sizes; what the values
mean (reserved names, metadata size, query_filter syntax, file kinds) is checked by
``Documents``, so the SDK, the CLI and the server reject the same input with the same message."""

from __future__ import annotations

from typing import Any, Optional

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StrictBool

MAX_NAME_CHARS = 256
MAX_QUERY_CHARS = 65_536  # Documents applies documents.max_query_chars
MAX_TOP_K = 10_000  # Documents applies documents.max_top_k


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


#: ``encoder``: Documents checks the name (encoder_choice.OPTIONS), so every face refuses an unknown one alike
ENCODER_FIELD = ("the collection's encoder: 'english' (all-MiniLM-L6-v2 token vectors), 'multilingual' "
                 "(multilingual-e5-small), or 'auto' (the configured encoder, else chosen by its pages' language)")


class CollectionCreate(Strict):
    name: str = Field(max_length=MAX_NAME_CHARS, description="unique per tenant; 'all' is reserved")
    metadata: Optional[dict[str, Any]] = None
    encoder: Optional[str] = Field(None, max_length=64, description=ENCODER_FIELD)


class CollectionReencode(Strict):
    encoder: str = Field("auto", max_length=64, description=ENCODER_FIELD + "; every page is encoded again by it")


class CollectionUpdate(Strict):
    name: Optional[str] = Field(None, max_length=MAX_NAME_CHARS, description="a new name")
    metadata: Optional[dict[str, Any]] = Field(None, description="replaces the metadata")


class DocumentUpsert(Strict):
    name: str = Field(max_length=MAX_NAME_CHARS, description="unique within the collection; upserting it again "
                                                             "replaces its pages and metadata")
    collection_name: str = Field(max_length=MAX_NAME_CHARS)
    metadata: Optional[dict[str, Any]] = None
    text: Optional[str] = Field(None, description="the document's text (give text or file)")
    file: Optional[str] = Field(None, validation_alias=AliasChoices("file", "base64"),
                                description="a file, base64 ('base64' is accepted too): PDF, Markdown, UTF-8 text "
                                            "or an image")
    filename: Optional[str] = Field(None, max_length=1024, description="the file's name ('.md': Markdown)")
    encoder: Optional[str] = Field(None, max_length=64, description=ENCODER_FIELD + " — for a collection without "
                                   "documents; 409 when it holds documents of another (re-encode it instead)")


class DocumentUpdate(Strict):
    name: Optional[str] = Field(None, max_length=MAX_NAME_CHARS, description="a new name")
    metadata: Optional[dict[str, Any]] = Field(None, description="replaces the metadata")


class DocumentSearch(Strict):
    query: str = Field(max_length=MAX_QUERY_CHARS)
    collection_name: str = Field("all", max_length=MAX_NAME_CHARS, description="'all': every collection")
    top_k: int = Field(3, ge=1, le=MAX_TOP_K)
    query_filter: Optional[dict[str, Any]] = Field(None, description='e.g. {"on": "document", "key": "year", '
                                                                      '"value": 2024, "lookup": "key_lookup"}')
    keyword_search: Optional[StrictBool] = Field(None, description="fuse BM25 over the pages' text with MaxSim "
                                                                  "(default: documents.keyword_search)")


class ImageSearch(Strict):
    img_base64: str = Field(description="the query image (PNG, JPEG, GIF, WebP), base64")
    collection_name: str = Field("all", max_length=MAX_NAME_CHARS)
    top_k: int = Field(3, ge=1, le=MAX_TOP_K)
    query_filter: Optional[dict[str, Any]] = None
