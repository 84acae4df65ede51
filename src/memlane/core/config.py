"""Configuration: a mem0-style dict validated by pydantic with helpful errors.

    {
      "vector_store": {"provider": "sqlite", "config": {"path": "~/.memlane"}},
      "embedder": {"provider": "local", "config": {"model": "/path/to/model"}},
      "llm": {"provider": "openai", "config": {...}},
      "history_db_path": "...",
    }

Each provider validates its own ``config`` block (see ``embeddings`` and
``store``); this module holds the top level and the shared helpers.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Optional, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from memlane.core.defaults import HOME_ENV, memlane_home  # noqa: F401  (re-exported)
from memlane.core.errors import ConfigError
from memlane.core.validation import Limits

MODEL_CACHE_ENV = "MEMLANE_MODEL_CACHE"


def model_cache() -> Path:
    """Where the local model's ONNX exports are cached unless configured: ``$MEMLANE_MODEL_CACHE`` or
    ``models/`` in the user's cache directory (``~/.cache/memlane/models`` on Linux, ``$XDG_CACHE_HOME``
    respected; ``~/Library/Caches/memlane/models`` on macOS; ``%LOCALAPPDATA%\\memlane\\Cache\\models``
    on Windows). One cache per user, shared by every memlane home: an export depends on the model, not
    on a home's data."""
    configured = os.environ.get(MODEL_CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    from platformdirs import user_cache_path

    return user_cache_path("memlane", appauthor=False) / "models"


class ProviderSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: str
    config: dict[str, Any] = Field(default_factory=dict)


class LimitsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_text_chars: int = Field(32_768, ge=1)
    max_metadata_bytes: int = Field(65_536, ge=2)
    max_messages: int = Field(10_000, ge=1)
    max_results: int = Field(10_000, ge=1)

    def to_limits(self) -> Limits:
        return Limits(**self.model_dump())


class FormationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    #: similar active memories looked up per fact
    top_k: int = Field(5, ge=1, le=100)
    #: the scope's turns said just before an add (within retrieval.neighbour_gap_seconds) that the offline
    #: engine reads for whom a pronoun points to ("My dog is a husky." … "He is scared of fireworks."); 0: none
    earlier_turns: int = Field(2, ge=0, le=10)


class RetrievalConfig(BaseModel):
    """Defaults of ``search``'s advanced stages, and how memories are indexed for them."""

    model_config = ConfigDict(extra="forbid")

    #: hybrid search (keyword_search) by default: LoCoMo through add, R@10 61.2 vector-only -> 78.2
    #: hybrid, cross-validated; p95 at 100k memories incl. the query's embedding 17.2 ms, 1.36x
    #: vector-only's (benchmarks/RESULTS.md). Written here or given as a flag it is seed 001's advanced
    #: retrieval (metadata, fallback); by default a search answers as a plain one (Searcher.asked).
    #: Rerank did not help with the default model's tokens
    keyword_search: bool = True
    rerank: bool = False
    filter_memories: bool = False
    #: candidates the vector and keyword stages each contribute to fusion
    candidates: int = Field(100, ge=1, le=1000)
    #: how many of the best candidates the reranker scores again
    rerank_top: int = Field(50, ge=1, le=1000)
    fusion: Literal["weighted", "rrf"] = "weighted"
    #: share of the keyword score (a share of the query, store/bm25.py) in weighted fusion (the vector
    #: score has the rest); 0.7 chosen by every fold of LoCoMo's leave-one-conversation-out tuning
    #: (conversations stored through ``add``, replies' context in their keyword entries)
    keyword_weight: float = Field(0.7, ge=0, le=1)
    rrf_k: int = Field(60, ge=1)
    #: bonus (on min-max normalised scores) for memories created on a date the query names ("in August 2023")
    date_weight: float = Field(0.5, ge=0, le=1)
    #: share of the better time-neighbour's score each candidate gains (a reply next to the matching turn);
    #: 0.6 chosen by four of five folds of LoCoMo's leave-one-conversation-out tuning once speakers were in
    #: the memories' keyword terms (0.8 before)
    neighbour_weight: float = Field(0.6, ge=0, le=1)
    #: candidates created at most this far apart (seconds) count as neighbours
    neighbour_gap_seconds: float = Field(3600, ge=0)
    #: the reranker ``rerank`` runs. Unwritten, it is maxsim but not run: a rerank asked for answers with the
    #: fused order and a warning (``retrieval/rerank.py``, ``unchosen_reason``): MaxSim over the local
    #: models' token vectors measured no recall gain on LoCoMo. Written (``maxsim`` too), it runs
    reranker: ProviderSpec = Field(default_factory=lambda: ProviderSpec(provider="maxsim"))
    #: share of the reranker's score in the final order (the fused score has the rest); None: the
    #: reranker's own (``default_weight``: maxsim 0.3, cross_encoder and llm 0.5)
    rerank_weight: Optional[float] = Field(None, ge=0, le=1)
    #: a query naming an actor (a memory's ``actor_id``) adds that actor's nearest memories and lifts
    #: them by this much on the normalised score (retrieval/actors.py); 0 = off
    actor_weight: float = Field(0.3, ge=0, le=1)
    #: when a memory's late-interaction token vectors (MaxSim reranking; ~0.8 KB per word piece) are
    #: stored at insert: None (default) when the maxsim reranker is chosen (``reranker`` written),
    #: True always, False never. Whatever it says, the token vectors a rerank computes for a
    #: candidate that has none are written back, so each memory's are computed once
    store_token_vectors: Optional[bool] = None
    max_token_vectors: int = Field(64, ge=1, le=512)
    #: metadata values written before a memory's text when it is embedded (e.g. a session date)
    embed_metadata: list[str] = Field(default_factory=list)
    #: who said a memory (its ``actor_id``: a message's ``name``) written with the metadata values
    #: before its text whenever it is embedded ("Melanie: I'm off to go swimming with the kids")
    embed_actor: bool = True
    #: earlier messages of the same ``add`` embedded with each verbatim memory that answers them (the
    #: message before is another speaker's) as context (LoCoMo through add, vector-only R@10: 54.3
    #: without, 61.2 with the previous message)
    context_messages: int = Field(1, ge=0, le=5)

    @property
    def tokens_at_insert(self) -> bool:
        """Whether memories get their token vectors when inserted (``store_token_vectors``)."""
        if self.store_token_vectors is not None:
            return self.store_token_vectors
        return self.reranker_chosen and self.reranker.provider == "maxsim"

    @property
    def reranker_chosen(self) -> bool:
        """Whether ``reranker`` was written in the configuration (else a rerank asked for is skipped)."""
        return "reranker" in self.model_fields_set


class ContextConfig(BaseModel):
    """``should_search_memory`` (a keyword-scored gate) and ``search_memory_with_context``
    (terms of a whole conversation plus the meaning of its recent turns); docs/context.md."""

    model_config = ConfigDict(extra="forbid")

    #: gate: ``"seed"`` reads as seed 004 (PersonaLab's ``should_search_memory``) does: the whole
    #: conversation and the system prompt alike, three signals (memory words x 3, question words x 1,
    #: pronouns x 2), every distinct marker counted, search at 3. ``"tuned"`` is memlane's gate: the
    #: last ``recent_turns`` user messages, the system prompt at half weight, a fourth signal
    #: (references to earlier turns, x 2), at most 2 markers per signal. A setting given explicitly
    #: wins over the preset.
    #: ``"tuned"`` also reads requests to choose for the speaker ("what should I cook", 推荐…), does
    #: not search for small talk, counts a turn that brings its own material ("Summarize this: …")
    #: against searching, and, when the call names a scope, what the scope holds: nothing to search
    #: in an empty scope, points for the turn's words found in its memories and for a memory close
    #: in meaning (docs/context.md). It is the default: the best measured (issue 32).
    gate: Literal["seed", "tuned"] = "tuned"
    #: gate: points per distinct hit of each signal (memory words, question words,
    #: relationship pronouns, references to earlier turns, requests to choose for the speaker, people,
    #: pets and constraints of the speaker's own: "my sister", "my allergies", 老公, 我的预算)
    memory_keyword_weight: float = Field(3.0, ge=0)
    question_weight: float = Field(1.0, ge=0)
    pronoun_weight: float = Field(2.0, ge=0)
    reference_weight: float = Field(3.0, ge=0)
    request_weight: float = Field(0.0, ge=0)
    personal_weight: float = Field(0.0, ge=0)
    #: gate: points per distinct marker of a request for know-how ("how do I", "why is my", 如何,
    #: 什么是): how a thing is done is the same for everyone, so it counts against searching (≤ 0)
    know_how_weight: float = Field(0.0, le=0)
    #: gate: points taken off when the last user turn brings the material it asks about (a quoted or
    #: pasted text after a colon, code): the answer is in the conversation
    material_penalty: float = Field(0.0, ge=0)
    #: gate: no search when the last user turn is small talk (thanks, greetings, laughter)
    skip_small_talk: bool = False
    #: gate, when the call names a scope: no search when it holds no valid memory
    require_memories: bool = False
    #: gate, when the call names a scope: points per distinct word of the last user turn that a memory
    #: of the scope contains (at most ``max_hits_per_signal``)
    memory_term_weight: float = Field(0.0, ge=0)
    #: gate, when the call names a scope: points when a memory's cosine similarity to the last user
    #: turn reaches ``memory_similarity`` (on the common similarity scale, embeddings/calibration.py: the
    #: same with every model)
    memory_similarity_weight: float = Field(0.0, ge=0)
    memory_similarity: float = Field(0.5, ge=-1, le=1)
    #: gate: distinct hits counted per signal (None: all of them), so one long message full of "my"
    #: cannot outvote the rest
    max_hits_per_signal: Optional[int] = Field(None, ge=1)
    #: gate: the system prompt's hits count at this fraction (it is the same every turn)
    system_prompt_factor: float = Field(1.0, ge=0, le=1)
    #: gate: what of the conversation it reads: every message, or the last ``recent_turns`` user messages
    gate_reads: Literal["conversation", "recent_user_turns"] = "conversation"
    #: gate: search when the score reaches this
    threshold: float = Field(3.0, ge=0)
    #: the user messages the gate reads, and the messages the semantic query is made of, from the end
    recent_turns: int = Field(2, ge=1, le=50)
    #: search terms extracted from the conversation (later turns first)
    max_terms: int = Field(20, ge=1, le=100)
    #: share of the semantic similarity in match_score (the term score has the rest)
    semantic_weight: float = Field(0.5, ge=0, le=1)
    #: a memory that shares no term is a match when its similarity to the recent turns reaches this, on the
    #: common similarity scale that ``search`` scores on (embeddings/calibration.py: unrelated texts ≈ 0.1,
    #: related 0.2 and up), so it means the same with every model (0.35 missed multilingual-e5-small's
    #: paraphrases, which score 0.25–0.5 there)
    min_similarity: float = Field(0.25, ge=-1, le=1)
    #: candidates each of the vector and keyword searches contributes, per category pool
    candidates: int = Field(100, ge=1, le=1000)
    #: size limit of one call: all messages and the system prompt together
    max_conversation_chars: int = Field(200_000, ge=1)

    @model_validator(mode="after")
    def _gate_preset(self) -> "ContextConfig":
        if self.gate == "tuned":
            for name, value in TUNED_GATE.items():
                if name not in self.model_fields_set:
                    setattr(self, name, value)
        return self


#: ``context.gate = "tuned"``: memlane's gate settings (each may still be set on its own)
#: (the new signals' weights, the threshold and ``memory_similarity`` chosen by 5-fold cross-validation on
#: ``tests/data/should_search_dev.jsonl``: ``memlane.evaluation.should_search``; ``memory_similarity``
#: is on the common similarity scale (embeddings/calibration.py): all-MiniLM-L6-v2's cosine)
TUNED_GATE: dict[str, Any] = {"reference_weight": 2.0, "max_hits_per_signal": 2, "system_prompt_factor": 0.5,
                              "gate_reads": "recent_user_turns", "request_weight": 3.0, "personal_weight": 1.0,
                              "know_how_weight": -2.0, "material_penalty": 2.0, "skip_small_talk": True, "require_memories": True,
                              "memory_term_weight": 1.0, "memory_similarity_weight": 1.0, "memory_similarity": 0.7}


class GraphConfig(BaseModel):
    """Graph memory (``enable_graph``): how relations are reconciled and looked up (docs/graph.md)."""

    model_config = ConfigDict(extra="forbid")

    #: relationships a source holds one destination of at a time: a new destination supersedes the old
    single_valued: list[str] = Field(default_factory=lambda: ["lives_in", "works_at", "married_to", "born_in",
                                                              "name"])
    #: relationships that contradict each other on the same (source, destination): "likes" vs "hates"
    opposites: dict[str, str] = Field(default_factory=lambda: {"likes": "hates", "loves": "hates"})
    #: a new entity merges into an existing one whose name vector is at least this similar
    merge_threshold: float = Field(0.9, ge=0, le=1)
    #: ... or this similar when one name is the initials of the other ("NYC", "New York City")
    acronym_threshold: float = Field(0.7, ge=0, le=1)
    #: an entity matches a query at this cosine (or when the query names it)
    entity_threshold: float = Field(0.5, ge=0, le=1)
    #: search returns relations scoring at least this much, at most ``max_relations`` of them
    relation_threshold: float = Field(0.3, ge=0, le=1)
    max_relations: int = Field(20, ge=1, le=1000)


class DocumentsConfig(BaseModel):
    """Document collections (``memlane.Documents``): the multi-vector encoder, page splitting, limits."""

    model_config = ConfigDict(extra="forbid")

    #: the multi-vector encoder (``memlane.documents.encoders.EncoderConfig``; default: local token vectors)
    encoder: dict[str, Any] = Field(default_factory=lambda: {"provider": "local"})
    #: text, Markdown and long PDF text are split into pages of about this many characters
    #: (the local model reads 256 word pieces, about 1,000 characters of English)
    page_chars: int = Field(1000, ge=100, le=100_000)
    #: score every allowed page exactly instead of the fast path (candidates, then exact MaxSim)
    exact_search: bool = False
    #: default of ``search(keyword_search=)``: fuse BM25 over page text with MaxSim
    keyword_search: bool = False
    #: pages the MaxSim and the keyword side each bring to the fusion of a hybrid search
    keyword_candidates: int = Field(100, ge=1, le=1000)
    #: how a hybrid search fuses the two rankings (retrieval/fusion.py): ``rrf`` (reciprocal rank fusion,
    #: ``rrf_k``; chosen on half of Cranfield's dev queries, benchmarks/history/documents-late-interaction.md)
    #: or ``weighted`` (``keyword_weight``)
    fusion: Literal["weighted", "rrf"] = "rrf"
    rrf_k: int = Field(60, ge=1)
    #: weighted fusion: share of BM25 (divided by the pool's best); min-max normalised MaxSim has the rest
    keyword_weight: float = Field(0.5, ge=0, le=1)
    #: pseudo-relevance feedback of a hybrid search (RM3, ``retrieval/feedback.py``): the keyword side is
    #: searched again with the query expanded by the ``feedback_terms`` strongest terms of the first
    #: fusion's best ``feedback_pages`` pages (0: off), the query's own terms keeping
    #: ``feedback_query_weight`` of the weight. Chosen on half of Cranfield's dev queries
    #: (benchmarks/history/documents-late-interaction.md).
    feedback_pages: int = Field(5, ge=0, le=50)
    feedback_terms: int = Field(20, ge=1, le=200)
    feedback_query_weight: float = Field(0.4, ge=0, le=1)
    max_file_bytes: int = Field(50 * 1024 * 1024, ge=1)
    max_text_chars: int = Field(5_000_000, ge=1)
    max_pages: int = Field(5_000, ge=1)
    max_query_chars: int = Field(4_096, ge=1)
    max_top_k: int = Field(1_000, ge=1)
    max_metadata_bytes: int = Field(65_536, ge=2)


class BackgroundConfig(BaseModel):
    """Background formation (``add(async_mode=True)``; docs/deployment.md): the worker threads of a
    process and the leases of the jobs they hold."""

    model_config = ConfigDict(extra="forbid")

    #: threads forming queued adds in this process (``memlane serve``, ``memlane worker``, a ``Memory``
    #: after its first async add); 0: none here (another process's workers form them)
    workers: int = Field(2, ge=0, le=256)
    #: how long a claimed job stays held without its worker renewing it (every third of it): the time a
    #: dead worker's job waits before another worker forms it again
    lease_seconds: float = Field(30.0, gt=0)
    #: an idle worker looks for jobs this often (a job queued by the same process wakes it at once)
    poll_seconds: float = Field(0.5, gt=0)
    #: a job that raises is tried this many times in all, ``retry_seconds`` x its attempt apart
    max_attempts: int = Field(3, ge=1)
    retry_seconds: float = Field(5.0, ge=0)
    #: ended jobs (their events) are kept this long, then erased
    keep_days: float = Field(7.0, gt=0)
    housekeeping_seconds: float = Field(300.0, gt=0)
    #: what an async add sent is searchable at once, verbatim, until its formation replaces it
    provisional: bool = True
    #: how long closing a ``Memory`` (or stopping a server) waits for the jobs being formed
    stop_seconds: float = Field(10.0, ge=0)


class WebhooksConfig(BaseModel):
    """Webhook deliveries (docs/webhooks.md): where they may go and how long one may take. Retries follow
    ``background`` (``max_attempts``, ``retry_seconds`` x the attempt): deliveries are background jobs."""

    model_config = ConfigDict(extra="forbid")

    #: the URL schemes a webhook may use
    schemes: list[Literal["http", "https"]] = Field(default_factory=lambda: ["http", "https"], min_length=1)
    #: deliver to loopback, private, link-local and other non-public addresses (a self-hosted receiver is often
    #: one); False: a webhook's host must resolve to public addresses only, checked at creation and where each
    #: delivery connects, to a checked address (against server-side request forgery and DNS rebinding)
    private_networks: bool = True
    #: how long one delivery may take (connect, send, answer)
    timeout_seconds: float = Field(10.0, gt=0, le=300)


class BucketConfig(BaseModel):
    """A token bucket: ``rate`` requests a second on average, up to ``burst`` at once."""

    model_config = ConfigDict(extra="forbid")

    rate: float = Field(gt=0)
    burst: int = Field(ge=1)


class RateLimitConfig(BaseModel):
    """``memlane serve``'s limits per API key and per tenant (docs/rest.md, Limits): over one, a request
    is answered 429 with ``Retry-After``. Counted per server process."""

    model_config = ConfigDict(extra="forbid")

    #: False: no limit at all (``memlane serve --no-rate-limit``)
    enabled: bool = True
    #: requests of one API key (None: no per-key bucket). 100/s holds a flood of cheap requests (a quiet
    #: tenant's p95 0.85x its own alone; 500/s: 1.41x, none: 2.2x) and leaves a client sending one request
    #: after another, or 32 at once for a while, alone (benchmarks/bench_flood.py, RESULTS.md)
    per_key: Optional[BucketConfig] = Field(default_factory=lambda: BucketConfig(rate=100, burst=400))
    #: requests of all the keys of one tenant together (None: no per-tenant bucket)
    per_tenant: Optional[BucketConfig] = Field(default_factory=lambda: BucketConfig(rate=200, burst=800))
    #: requests of one tenant being answered at once; more wait their turn (None: no cap). 4 holds a flood
    #: of searches that each embed (quiet tenant's p95 1.34x alone; no limits: 2.6x)
    concurrency_per_tenant: Optional[int] = Field(4, ge=1)
    #: requests of one tenant that may wait for a turn; one more is answered 429
    queue_per_tenant: int = Field(64, ge=0)


class ServerConfig(BaseModel):
    """Read by ``memlane serve`` only (a ``Memory`` ignores it)."""

    model_config = ConfigDict(extra="forbid")

    rate_limit: RateLimitConfig = Field(default_factory=RateLimitConfig)


class MemoryConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    vector_store: ProviderSpec = Field(default_factory=lambda: ProviderSpec(provider="sqlite"))
    #: the embedding model; unset: a store keeps the model it was filled with, a new store gets
    #: multilingual-e5-small (``embeddings/choice.py``)
    embedder: ProviderSpec = Field(default_factory=lambda: ProviderSpec(provider="multilingual-e5-small"))
    #: The LLM of memory formation. Without one, the offline engine forms memories. Unset, the
    #: ``MEMLANE_LLM_*`` variables may name one (``llm_from_env``)
    llm: Optional[ProviderSpec] = None
    custom_fact_extraction_prompt: Optional[str] = None
    custom_update_memory_prompt: Optional[str] = None
    formation: FormationConfig = Field(default_factory=FormationConfig)
    retrieval: RetrievalConfig = Field(default_factory=RetrievalConfig)
    #: graph memory: entities and relations extracted by add, returned next to search results
    enable_graph: bool = False
    graph: GraphConfig = Field(default_factory=GraphConfig)
    context: ContextConfig = Field(default_factory=ContextConfig)
    #: mem0 kept history in a second SQLite file. memlane keeps it in the store
    #: itself (so every write is atomic); used as the store file when
    #: vector_store names no path.
    history_db_path: Optional[str] = None
    version: str = "v1.1"
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    documents: DocumentsConfig = Field(default_factory=DocumentsConfig)
    query_cache_size: int = Field(1024, ge=0)
    background: BackgroundConfig = Field(default_factory=BackgroundConfig)
    webhooks: WebhooksConfig = Field(default_factory=WebhooksConfig)
    #: the REST server's own settings (rate limits)
    server: ServerConfig = Field(default_factory=ServerConfig)

    @model_validator(mode="before")
    @classmethod
    def _llm_from_env(cls, data: Any) -> Any:
        return llm_from_env(data, os.environ) if isinstance(data, dict) else data


#: the LLM settings the environment may give: ``MEMLANE_LLM_PROVIDER`` (default ``openai``),
#: ``MEMLANE_LLM_MODEL``, ``MEMLANE_LLM_BASE_URL``, ``MEMLANE_LLM_API_KEY`` (docs/llm.md)
LLM_ENV = {"model": "MEMLANE_LLM_MODEL", "base_url": "MEMLANE_LLM_BASE_URL", "api_key": "MEMLANE_LLM_API_KEY"}
LLM_PROVIDER_ENV = "MEMLANE_LLM_PROVIDER"


def llm_from_env(data: dict[str, Any], env: Any) -> dict[str, Any]:
    """The config ``data`` with the ``MEMLANE_LLM_*`` variables of ``env`` in the ``llm`` settings it
    leaves out; the config wins. A config that names no ``llm`` gets one when ``MEMLANE_LLM_MODEL`` or
    ``MEMLANE_LLM_BASE_URL`` is set (a key alone never switches it on); ``"llm": null`` means none.
    Every face reads its config through ``MemoryConfig``, so this is the one place the variables are read."""
    given = {name: env[var] for name, var in LLM_ENV.items() if env.get(var)}
    llm = data.get("llm", ...)
    if llm is None or not given:
        return data
    if llm is ...:
        if not given.keys() & {"model", "base_url"}:
            return data
        llm = {"provider": env.get(LLM_PROVIDER_ENV) or "openai", "config": {}}
    elif isinstance(llm, dict) and isinstance(llm.get("config", {}), dict):
        llm = {**llm, "config": dict(llm.get("config") or {})}
    else:
        return data  # a ProviderSpec, or a shape validation will refuse: as given
    settings = llm["config"]
    for name, value in given.items():
        if name == "base_url" and any(key.endswith("base_url") for key in settings):
            continue  # mem0's ollama_base_url & co. name it already
        settings.setdefault(name, value)
    return {**data, "llm": llm}


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: Any, where: str) -> M:
    """Validate ``data`` against ``model``; raise ``ConfigError`` listing every problem with its location."""
    if isinstance(data, model):
        return data
    try:
        return model.model_validate(data if data is not None else {})
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            location = ".".join(str(part) for part in (where, *error["loc"]) if part != "")
            message = error["msg"]
            if error["type"] == "extra_forbidden" and len(error["loc"]) == 1:
                known = ", ".join(model.model_fields)
                message = f"unknown setting (known: {known})"
            problems.append(f"{location}: {message}")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems)) from None


def load(config: MemoryConfig | dict[str, Any] | None) -> MemoryConfig:
    return validate(MemoryConfig, config, "config") if config is not None else MemoryConfig()
