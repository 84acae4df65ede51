"""Which multi-vector encoder a collection's pages and queries use.

- An explicit encoder wins: ``documents.encoder`` naming a provider other than ``local`` or a
  ``model``, an encoder given to ``Documents(encoder=...)``, or a memory whose own local model is
  neither of the two below (its token vectors, as before). Every new collection gets it.
- Otherwise (``auto``) a collection's encoder is chosen from the language of the first pages written
  to it: pages that are all English get the English model's token vectors (all-MiniLM-L6-v2), any
  other language or a mix gets multilingual-e5-small's. Measured on Cranfield's 150 English dev
  queries, MaxSim nDCG@10 0.369 (MiniLM) vs 0.346 (e5); on Chinese pages hit@1 1.00 (e5) vs 0.40.

A collection's user may choose instead (``encoder`` at creation or first upsert, or re-encoding an
existing collection): ``OPTIONS`` names the choices, ``for_option`` builds the encoder of one.

The choice is recorded with the collection (its ``encoder``, the name stored with its pages), so
every later write and query of the collection uses the same encoder; ``named`` finds an encoder
again by that name (a collection keeps its encoder when the configuration changes, as long as the
encoder can still be built).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Literal

from memlane.core.errors import InvalidInputError
from memlane.documents.encoders import EncoderConfig, LocalTokenEncoder, MultiVectorEncoder, create_encoder
from memlane.text import languages

Kind = Literal["english", "multilingual"]

#: pages (and characters of each) whose language decides a new collection's encoder
SAMPLE_PAGES = 8
SAMPLE_CHARS = 2000
#: the memory models the automatic choice shares rather than loads again, by their name's start
_OWN_PREFIX = {"english": "local/all-MiniLM-L6-v2", "multilingual": "e5/"}


#: what a collection's user may choose: ``auto`` (the configured encoder, else its pages' language), or a model
OPTIONS: dict[str, Kind | None] = {"auto": None, "english": "english", "multilingual": "multilingual"}
#: the model of each choice (its token vectors), as the docs and error messages name them
MODELS = {"english": "all-MiniLM-L6-v2", "multilingual": "multilingual-e5-small"}


def option(value: object, field: str = "encoder") -> Kind | None:
    """The kind a user's ``encoder`` names (None: ``auto``, or not given); ``InvalidInputError`` naming
    ``field`` and the allowed names otherwise."""
    if value is None:
        return None
    if not isinstance(value, str) or value.strip().lower() not in OPTIONS:
        allowed = ", ".join(f"{name!r}" + (f" ({MODELS[kind]})" if kind else " (the configured encoder, else "
                                                                                "chosen by the pages' language)")
                            for name, kind in OPTIONS.items())
        raise InvalidInputError(f"{field} must be one of {allowed}; got {value!r}", field=field)
    return OPTIONS[value.strip().lower()]


def kind_of(name: str | None) -> Kind | None:
    """The kind of a recorded encoder name, when it is one of the two models of the automatic choice."""
    return next((k for k, prefix in _OWN_PREFIX.items() if name is not None and name.startswith(prefix)), None)


def pages_language(texts: Sequence[str]) -> str:
    """The language of a collection's first pages: "en" when every sampled page with text is English,
    a language's code when they all are in that one, "mixed" otherwise ("en" for no text at all)."""
    found = {languages.detect(text[:SAMPLE_CHARS]) for text in [t for t in texts if t and t.strip()][:SAMPLE_PAGES]}
    if not found:
        return "en"
    return found.pop() if len(found) == 1 else "mixed"


def kind_for(language: str) -> Kind:
    """English pages get the English model; any other language, or a mix, the multilingual one."""
    return "english" if language == "en" else "multilingual"


class EncoderChoice:
    """The encoders one ``Documents`` may use: the explicit one, or the two of the automatic choice
    (built on first use, sharing the memory's model when it is one of them)."""

    def __init__(self, spec: EncoderConfig, *, explicit: MultiVectorEncoder | None = None, memory_embedder: Any = None):
        self.spec = spec
        own = memory_embedder if memory_embedder is not None and hasattr(memory_embedder, "token_outputs") else None
        own_kind = next((k for k, prefix in _OWN_PREFIX.items() if own is not None
                         and str(getattr(own, "name", "")).startswith(prefix)), None)
        if explicit is None and spec.provider == "local" and not spec.model and own is not None and own_kind is None:
            explicit = LocalTokenEncoder.from_config(spec, own)  # the memory's own model (neither of the two)
        if explicit is None and (spec.provider != "local" or spec.model):
            explicit = create_encoder(spec)
        self.explicit = explicit
        self._built: dict[str, MultiVectorEncoder] = {}
        if own is not None and own_kind is not None:
            self._built[own_kind] = LocalTokenEncoder.from_config(spec, own)
        self._lock = threading.Lock()

    @property
    def auto(self) -> bool:
        """True when new collections get their encoder from their pages' language."""
        return self.explicit is None

    def of_kind(self, kind: Kind) -> MultiVectorEncoder:
        with self._lock:
            found = self._built.get(kind)
            if found is None:
                found = self._built[kind] = self._build(kind)
            return found

    def _build(self, kind: Kind) -> MultiVectorEncoder:
        spec = self.spec
        if kind == "english":
            from memlane.embeddings.local import LocalEmbedder

            embedder: Any = LocalEmbedder(batch_size=spec.batch_size)
        else:
            from memlane.embeddings.e5 import E5Embedder, E5EmbedderConfig

            embedder = E5Embedder(E5EmbedderConfig(batch_size=spec.batch_size))
        return LocalTokenEncoder.from_config(spec, embedder)

    def default(self) -> MultiVectorEncoder:
        """The explicit encoder, else the multilingual one (a page of no known language)."""
        return self.explicit or self.of_kind("multilingual")

    def for_pages(self, texts: Sequence[str]) -> MultiVectorEncoder:
        """The encoder of a new collection whose first pages are ``texts``."""
        return self.explicit or self.of_kind(kind_for(pages_language(texts)))

    def for_option(self, kind: Kind | None) -> MultiVectorEncoder | None:
        """The encoder a user chose (``option``); None for ``auto``."""
        return None if kind is None else self.of_kind(kind)

    def named(self, name: str) -> MultiVectorEncoder | None:
        """The encoder recorded as ``name`` (a collection's), if this process can build it (the explicit
        one, or either model of the automatic choice, which a collection's user may choose whatever the
        configuration)."""
        if self.explicit is not None and self.explicit.name == name:
            return self.explicit
        for kind in ("english", "multilingual"):
            built = self._built.get(kind)
            if built is not None and built.name == name:
                return built
        kind = "english" if name.startswith("local/") else "multilingual" if name.startswith("e5/") else None
        if kind is None or kind in self._built:
            return None
        found = self.of_kind(kind)  # type: ignore[arg-type]
        return found if found.name == name else None
