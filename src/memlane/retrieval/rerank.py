"""Rerankers: score the top candidates again with a costlier model, chosen by ``retrieval.reranker``.

- ``maxsim``: late interaction on the local model's contextual token
  vectors — for each query token the best-matching memory token, averaged. No
  extra model. Token vectors come from the store (stored at insert once maxsim is chosen,
  ``retrieval.store_token_vectors``); a candidate without them gets them computed on the spot
  and written back. It runs only when chosen: with ``retrieval.reranker`` unwritten a rerank
  asked for is skipped with a warning (``unchosen_reason``), as MaxSim over the local models'
  token vectors measured no recall gain (LoCoMo dev, docs/retrieval.md).
- ``cross_encoder``: any sentence-transformers CrossEncoder in a local directory.
- ``llm``: the configured chat model grades every candidate in one call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memlane.core.config import MemoryConfig, ProviderSpec, validate
from memlane.core.errors import ConfigError
from memlane.core.registry import Registry
from memlane.retrieval.candidates import Candidate
from memlane.core.vectors import maxsim


class Reranker(Protocol):
    name: str
    #: candidates must carry ``tokens`` (late-interaction vectors) before ``scores`` is called
    needs_tokens: bool
    #: its share of the final order when ``retrieval.rerank_weight`` is not set
    default_weight: float

    def scores(self, query: str, candidates: list[Candidate]) -> np.ndarray: ...


class MaxSimReranker:
    name = "maxsim"
    needs_tokens = True
    #: chosen by leave-one-conversation-out tuning on LoCoMo (every fold: 0.2-0.3; benchmarks/RESULTS.md)
    default_weight = 0.3

    def __init__(self, embeddings: Any):
        if not embeddings.has_tokens:
            raise ConfigError(f"the maxsim reranker needs token vectors, which embedder {embeddings.name} does not give; "
                              "use the local embedder, or the cross_encoder or llm reranker")
        self.embeddings = embeddings

    def scores(self, query: str, candidates: list[Candidate]) -> np.ndarray:
        query_tokens = self.embeddings.query_tokens(query)
        return np.array([maxsim(query_tokens, c.tokens) for c in candidates])


class CrossEncoderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: str = Field(..., description="directory of a sentence-transformers CrossEncoder")
    batch_size: int = Field(32, ge=1)
    device: str = "cpu"


class CrossEncoderReranker:
    name = "cross_encoder"
    needs_tokens = False
    default_weight = 0.5  # a model trained to judge relevance: as much say as the fused score

    def __init__(self, config: CrossEncoderConfig):
        path = Path(config.model).expanduser()
        if not path.is_dir():
            raise ConfigError(f"retrieval.reranker.config.model: {config.model!r} is not a directory; the cross-encoder "
                              "is loaded from disk, never downloaded")
        from sentence_transformers import CrossEncoder

        self.model = CrossEncoder(str(path), device=config.device)
        self.batch_size = config.batch_size
        self._lock = threading.Lock()

    def scores(self, query: str, candidates: list[Candidate]) -> np.ndarray:
        with self._lock:
            raw = self.model.predict([(query, c.record.text) for c in candidates], batch_size=self.batch_size,
                                     show_progress_bar=False)
        return np.asarray(raw, dtype=np.float64).reshape(len(candidates))


RERANK_PROMPT = """Rate how well each memory helps answer the query, from 0 (irrelevant) to 10 (answers it).

Query: {query}

Memories:
{memories}

Answer with only a JSON object: {{"scores": [<one number per memory, in order>]}}"""


class LLMReranker:
    name = "llm"
    needs_tokens = False
    default_weight = 0.5

    def __init__(self, llm: Any):
        self.llm = llm

    def scores(self, query: str, candidates: list[Candidate]) -> np.ndarray:
        from memlane.llms.parsing import parse_json_answer

        listing = "\n".join(f"{n}. {c.record.text}" for n, c in enumerate(candidates))
        answer = parse_json_answer(self.llm.chat([{"role": "user", "content": RERANK_PROMPT.format(
            query=query, memories=listing)}]))
        values = answer.get("scores") if isinstance(answer, dict) else answer
        if not isinstance(values, list) or len(values) != len(candidates):
            raise ValueError(f"the model graded {len(values) if isinstance(values, list) else 'no'} of "
                             f"{len(candidates)} memories")
        return np.array([float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0
                         for v in values])


#: reranker factories by ``retrieval.reranker.provider``: (its spec, the whole config, the facade's embeddings)
RERANKERS: Registry[Callable[[ProviderSpec, MemoryConfig, Any], Reranker]] = Registry(
    "rerankers", "retrieval.reranker.provider")


@RERANKERS.register("maxsim")
def _maxsim(spec: ProviderSpec, config: MemoryConfig, embeddings: Any) -> Reranker:
    return MaxSimReranker(embeddings)


@RERANKERS.register("cross_encoder")
def _cross_encoder(spec: ProviderSpec, config: MemoryConfig, embeddings: Any) -> Reranker:
    return CrossEncoderReranker(validate(CrossEncoderConfig, spec.config, "retrieval.reranker.config"))


@RERANKERS.register("llm")
def _llm(spec: ProviderSpec, config: MemoryConfig, embeddings: Any) -> Reranker:
    from memlane.llms import create_llm

    llm_spec = ProviderSpec(**spec.config) if spec.config else config.llm
    if llm_spec is None:
        raise ConfigError("the llm reranker needs an llm: configure `llm`, or give provider and config in "
                          "retrieval.reranker.config")
    return LLMReranker(create_llm(llm_spec))


#: why ``rerank=True`` reranks nothing while ``retrieval.reranker`` is unwritten (the search's warning)
UNCHOSEN = ("no reranker is configured (retrieval.reranker). The built-in maxsim reranker is off unless chosen: "
            "over the local models' token vectors it measured no recall gain, and its first searches in a scope "
            "spend up to seconds computing token vectors. The results keep the search's own order; set "
            "retrieval.reranker to llm or cross_encoder, or to maxsim to run it anyway")


def unchosen_reason(config: MemoryConfig) -> str | None:
    """Why a rerank asked for is not run (``UNCHOSEN``), or None when ``retrieval.reranker`` was chosen."""
    return None if config.retrieval.reranker_chosen else UNCHOSEN


def create_reranker(config: MemoryConfig, embeddings: Any) -> Reranker:
    spec = config.retrieval.reranker
    return RERANKERS.get(spec.provider)(spec, config, embeddings)
