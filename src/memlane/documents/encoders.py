"""Multi-vector encoders: a query or a page becomes a matrix of L2-normalised token vectors.

- ``local`` (default, offline): the local sentence-transformers model's contextual token
  embeddings, from the same loaded model the memory embedder uses (no second copy, no download).
- ``http``: a ColBERT / ColPali / ColQwen service speaking the protocol of seed 003 §4.2:
  ``POST {"input": {"task": "query"|"document"|"image", "input_data": [...]}}`` answered by
  ``{"output": {"data": [{"embedding": [[...], ...], "index": 0}, ...]}}``.

Adding a provider means one class and one ``ENCODERS.register``; nothing that scores pages changes.
"""

from __future__ import annotations

import base64
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, Literal, Optional, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from memlane.core.deadline import DeadlineExceeded, call_within, retry_after_status
from memlane.embeddings.base import unit_rows
from memlane.core.errors import ConfigError, EmbeddingError, UnsupportedInputError
from memlane.core.registry import Registry

Task = Literal["query", "document", "image"]

IMAGES_UNSUPPORTED = (
    "the configured multi-vector encoder {name!r} does not accept images; configure an encoder that "
    "accepts images (documents.encoder: provider 'http', a ColPali/ColQwen service, accepts_images: true)"
)


@runtime_checkable
class MultiVectorEncoder(Protocol):
    """``name`` identifies the model (recorded with the stored vectors); ``dims`` the vector size."""

    name: str
    dims: int
    accepts_images: bool

    def encode_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        """One (n_tokens, dims) float32 matrix with L2-normalised rows per text."""
        ...

    def encode_pages(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Like ``encode_queries``, for page text (an encoder may treat the two sides differently)."""
        ...

    def encode_images(self, images: Sequence[bytes]) -> list[np.ndarray]:
        """One matrix per image (encoded image bytes: PNG, JPEG...). Raises ``UnsupportedInputError``
        when ``accepts_images`` is False."""
        ...


def unit_token_rows(raw: Any, dims: int | None, provider: str) -> np.ndarray:
    """Check one item's token vectors from a provider and return them as L2-normalised float32 rows."""
    return unit_rows(raw, None, dims, provider, source="encoder")


# ---------------------------------------------------------------------------------------------
# configuration


class EncoderConfig(BaseModel):
    """``documents.encoder`` in memlane's configuration."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    provider: str = Field("local", description="a name in ENCODERS: local, http, or a registered one")
    # local
    model: Optional[str] = Field(None, description="local: a sentence-transformers model's directory, or "
                                                   "'all-MiniLM-L6-v2' for the English model installed with memlane "
                                                   "(default: the token vectors of the memory's own model)")
    device: str = "cpu"
    skip_punctuation: bool = Field(True, description="local: drop vectors of punctuation-only word pieces")
    global_vector: bool = Field(True, description="local: add the text's pooled sentence vector as one more row")
    query_global_weight: int = Field(8, ge=0, le=64, description="local: copies of the query's pooled vector "
                                     "among its rows (its weight in MaxSim; 0 = none)")
    # http
    url: Optional[str] = Field(None, description="http: the service's endpoint, e.g. https://host/v1/embed")
    api_key: Optional[SecretStr] = Field(None, description="http: sent as 'Authorization: Bearer <key>'")
    name: Optional[str] = Field(None, description="http: model name recorded with the vectors (default: the url)")
    dims: Optional[int] = Field(None, ge=1, description="http: vector size (ColPali/ColQwen: 128)")
    timeout: float = Field(60.0, gt=0, description="http: seconds for one request, retries included")
    retries: int = Field(1, ge=0, le=5, description="http: retries after a timeout, connection error, 429 or 5xx")
    batch_size: int = Field(8, ge=1, le=1024, description="inputs per request / forward pass")
    accepts_images: bool = Field(False, description="http: the service encodes images (ColPali, ColQwen)")

    @model_validator(mode="after")
    def _provider_fields(self) -> "EncoderConfig":
        if self.provider not in ENCODERS:
            raise ValueError(f"provider {self.provider!r} is unknown; known providers: {', '.join(ENCODERS.known())}")
        if self.provider == "http":
            if not self.url:
                raise ValueError("provider 'http' needs url (the encoder service's endpoint)")
            if not self.url.startswith(("http://", "https://")):
                raise ValueError(f"url must start with http:// or https://, got {self.url!r}")
            if self.dims is None:
                raise ValueError("provider 'http' needs dims (the size of the service's vectors; ColPali: 128)")
        elif self.provider == "local" and self.accepts_images:
            raise ValueError("the local encoder reads text only; accepts_images needs provider 'http'")
        return self


def encoder_config(config: EncoderConfig | dict | None = None) -> EncoderConfig:
    """``config`` validated (default: the offline local encoder); a bad one is a ``ConfigError``."""
    if config is None:
        return EncoderConfig()
    if isinstance(config, EncoderConfig):
        return config
    try:
        return EncoderConfig.model_validate(config)
    except ValueError as exc:
        raise ConfigError(f"documents.encoder: {exc}") from None


def create_encoder(config: EncoderConfig | dict | None = None) -> MultiVectorEncoder:
    """The encoder a configuration names (default: the offline local one)."""
    config = encoder_config(config)
    return ENCODERS.get(config.provider)(config)


# ---------------------------------------------------------------------------------------------
# local


def _is_punctuation(piece: str) -> bool:
    """A piece that is punctuation only: WordPiece's ``##`` and SentencePiece's ``▁`` (a space) are
    markers, not content; a bare ``▁`` is whitespace and counts as punctuation too."""
    marker = piece.startswith("\u2581")
    piece = piece.removeprefix("##").replace("\u2581", "")
    return (marker and not piece) or (bool(piece) and all(unicodedata.category(ch).startswith("P") for ch in piece))


class LocalTokenEncoder:
    """Contextual token embeddings of the local model (all-MiniLM-L6-v2 by default: 384 dims).

    [CLS] and [SEP] are dropped (in a mean-pooled model they are not trained as summaries), and so
    are punctuation-only word pieces unless ``skip_punctuation`` is False; a text made only of such
    pieces keeps them all rather than vanishing.

    With ``global_vector`` (default), every text also gets its pooled sentence vector (the model's
    own single-vector embedding, from the same forward pass) as one more row, and a query carries
    ``query_global_weight`` copies of it. This is the role ColBERT's [MASK] query augmentation
    plays (extra query vectors that summarise the whole query); MiniLM was not trained with such
    tokens, but it was trained for its pooled vector. MaxSim is unchanged: the copies weigh
    whole-text similarity against the per-term matches. On Cranfield, tokens alone are level with
    single-vector search; with the global vector MaxSim beats it (benchmarks/RESULTS.md,
    "Documents (issue 7)").
    """

    accepts_images = False

    def __init__(self, embedder: Any = None, *, skip_punctuation: bool = True, global_vector: bool = True,
                 query_global_weight: int = 8, batch_size: int = 32):
        if embedder is None:
            from memlane.embeddings.local import LocalEmbedder

            embedder = LocalEmbedder(batch_size=batch_size)
        self.embedder = embedder
        # the name is recorded with stored page vectors: it names every choice that changes them
        self.name = f"{embedder.name}/tokens" + ("" if skip_punctuation else "+punct") + \
            ("+global" if global_vector else "")
        self.dims = int(embedder.dims)
        self.skip_punctuation = skip_punctuation
        self.global_vector = global_vector
        self.query_global_weight = query_global_weight if global_vector else 0
        self.batch_size = batch_size

    @classmethod
    def from_config(cls, config: EncoderConfig, embedder: Any = None) -> "LocalTokenEncoder":
        """``embedder``: an already loaded ``LocalEmbedder`` of the same model to share (one model copy)."""
        from memlane.embeddings.local import LocalEmbedder

        if embedder is None:
            embedder = LocalEmbedder(config.model, device=config.device, batch_size=config.batch_size)
        return cls(embedder,
                   skip_punctuation=config.skip_punctuation, global_vector=config.global_vector,
                   query_global_weight=config.query_global_weight, batch_size=config.batch_size)

    def token_outputs(self, texts: Sequence[str], purpose: str = "document") -> list[Any]:
        """The model's per-text ``TokenOutput`` (token ids and vectors, sentence vector), from one
        forward pass on the shared model copy; ``purpose`` is the role of a model that has two (E5)."""
        return self.embedder.token_outputs(texts, batch_size=self.batch_size, purpose=purpose)

    def _encode(self, texts: Sequence[str], global_copies: int, purpose: str) -> list[np.ndarray]:
        texts = list(texts)
        if not texts:
            return []
        special = self.embedder.special_ids
        result = []
        for out in self.token_outputs(texts, purpose):
            ids = out.ids.tolist()
            vectors = out.tokens
            keep = [i for i, tid in enumerate(ids) if tid not in special]
            if self.skip_punctuation:
                pieces = self.embedder.pieces([ids[i] for i in keep])
                content = [i for i, piece in zip(keep, pieces) if not _is_punctuation(piece)]
                keep = content or keep
            rows = vectors[keep]
            if global_copies:
                rows = np.vstack([rows] + [out.sentence[None, :]] * global_copies)
            elif not keep:  # an empty text: its [CLS] vector stands for it rather than no vector at all
                rows = vectors[:1]
            result.append(unit_token_rows(rows, self.dims, self.name))
        return result

    def encode_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self._encode(texts, self.query_global_weight, "query")

    def encode_pages(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self._encode(texts, 1 if self.global_vector else 0, "document")

    def encode_images(self, images: Sequence[bytes]) -> list[np.ndarray]:
        raise UnsupportedInputError(IMAGES_UNSUPPORTED.format(name=self.name), field="image")


# ---------------------------------------------------------------------------------------------
# http


class HttpMultiVectorEncoder:
    """A ColBERT / ColPali / ColQwen embedding service (seed 003 §4.2), through httpx.

    Inputs go in batches of ``batch_size``; each request is retried ``retries`` times after a
    timeout, a connection error, 429 or 5xx (other 4xx are the caller's fault and are not retried),
    within one deadline of ``timeout`` seconds for the request, retries included (``memlane.core.deadline``).
    A reply that is not the documented shape, has the wrong number of items or wrong-sized vectors
    is an ``EmbeddingError`` naming what was wrong; nothing partial is returned.
    """

    def __init__(self, config: EncoderConfig, *, client: Any = None):
        import httpx

        if config.provider != "http" or not config.url or config.dims is None:
            raise ConfigError("HttpMultiVectorEncoder needs an 'http' encoder config with url and dims")
        self.url = config.url
        self.name = config.name or f"http/{config.url}"
        self.dims = config.dims
        self.accepts_images = config.accepts_images
        self.batch_size = config.batch_size
        self.retries = config.retries
        self.timeout = config.timeout
        headers = {"Authorization": f"Bearer {config.api_key.get_secret_value()}"} if config.api_key else {}
        self._client = client or httpx.Client(timeout=config.timeout, headers=headers)
        self._httpx = httpx

    @classmethod
    def from_config(cls, config: EncoderConfig) -> "HttpMultiVectorEncoder":
        return cls(config)

    def close(self) -> None:
        self._client.close()

    def encode_queries(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self._encode("query", list(texts))

    def encode_pages(self, texts: Sequence[str]) -> list[np.ndarray]:
        return self._encode("document", list(texts))

    def encode_images(self, images: Sequence[bytes]) -> list[np.ndarray]:
        if not self.accepts_images:
            raise UnsupportedInputError(IMAGES_UNSUPPORTED.format(name=self.name), field="image")
        return self._encode("image", [base64.b64encode(bytes(image)).decode("ascii") for image in images])

    def _encode(self, task: Task, inputs: list[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        for start in range(0, len(inputs), self.batch_size):
            batch = inputs[start: start + self.batch_size]
            out.extend(self._parse(self._post({"input": {"task": task, "input_data": batch}}), len(batch), task))
        return out

    def _post(self, payload: dict) -> Any:
        httpx = self._httpx
        attempts = 0

        def attempt(time_left: float) -> Any:
            nonlocal attempts
            attempts += 1
            return self._client.post(self.url, json=payload, timeout=time_left).raise_for_status()

        def retry_after(exc: Exception) -> float | None:
            if isinstance(exc, httpx.TransportError):  # includes timeouts
                return 0.0
            if isinstance(exc, httpx.HTTPStatusError):
                return retry_after_status(exc.response.status_code, exc.response.headers)
            return None

        try:
            response = call_within(attempt, seconds=self.timeout, retries=self.retries, retry_after=retry_after)
        except (httpx.TimeoutException, DeadlineExceeded) as exc:
            raise EmbeddingError(f"encoder {self.name} timed out: no answer within {self.timeout:g} s "
                                 f"(documents.encoder.timeout, the deadline for one request, retries included; "
                                 f"{type(exc).__name__} after {attempts} attempt(s))") from None
        except httpx.HTTPStatusError as exc:
            failure = f"HTTP {exc.response.status_code}: {exc.response.text[:200]}"
            if retry_after_status(exc.response.status_code, exc.response.headers) is None:
                raise EmbeddingError(f"encoder {self.name} rejected the request ({failure})") from None
            raise EmbeddingError(f"encoder {self.name} failed after {attempts} attempt(s): {failure}") from None
        except httpx.TransportError as exc:
            raise EmbeddingError(f"encoder {self.name} failed after {attempts} attempt(s): "
                                 f"{type(exc).__name__}: {exc}") from None
        try:
            return response.json()
        except ValueError:
            raise EmbeddingError(f"encoder {self.name} answered {response.status_code} with a body that is not "
                                 f"JSON: {response.text[:200]!r}") from None

    def _parse(self, body: Any, expected: int, task: str) -> list[np.ndarray]:
        try:
            data = body["output"]["data"]
        except (TypeError, KeyError):
            raise EmbeddingError(f"encoder {self.name} answered without output.data (expected "
                                 '{"output": {"data": [{"embedding": [[...], ...]}]}})') from None
        if not isinstance(data, list) or len(data) != expected:
            got = len(data) if isinstance(data, list) else type(data).__name__
            raise EmbeddingError(f"encoder {self.name} returned {got} items for {expected} {task} inputs")
        if all(isinstance(item, dict) and isinstance(item.get("index"), int) for item in data):
            if sorted(item["index"] for item in data) != list(range(expected)):
                raise EmbeddingError(f"encoder {self.name} returned item indexes that are not 0..{expected - 1}")
            data = sorted(data, key=lambda item: item["index"])
        result = []
        for n, item in enumerate(data):
            if not isinstance(item, dict) or "embedding" not in item:
                raise EmbeddingError(f"encoder {self.name}: output.data[{n}] has no 'embedding'")
            result.append(unit_token_rows(item["embedding"], self.dims, self.name))
        return result


#: encoder factories by ``documents.encoder.provider`` (a new one: ``ENCODERS.register``, or an entry point in
#: the group ``memlane.encoders``)
ENCODERS: Registry[Callable[[EncoderConfig], MultiVectorEncoder]] = Registry("encoders", "documents.encoder.provider")
ENCODERS.register("local", LocalTokenEncoder.from_config)
ENCODERS.register("http", HttpMultiVectorEncoder.from_config)
