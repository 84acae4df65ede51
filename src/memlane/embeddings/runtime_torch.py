"""The local model on sentence-transformers and torch (any sentence-transformers model, any device)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memlane.core.errors import ConfigError, EmbeddingError
from memlane.embeddings.runtime import TokenOutput


class TorchRuntime:
    def __init__(self, path: Path, device: str):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
            from transformers.utils import logging as hf_logging
        except ImportError:
            raise ConfigError("the local embedder's torch runtime needs the 'local' extra: "
                              "pip install 'memlane[local]'") from None
        hf_logging.disable_progress_bar()
        try:
            self.model = SentenceTransformer(str(path), device=device)
        except Exception as exc:  # a broken model directory: report it, whatever the library raised
            raise EmbeddingError(f"could not load the sentence-transformers model in {path}: {exc}") from exc
        self.special_ids = frozenset(self.model.tokenizer.all_special_ids)

    def use_threads(self, threads: int | None) -> None:
        """torch's threads are process-wide: set them before each call (callers hold the model lock). With 2
        threads on 2 cores that other processes also use, every forward pass waits for a descheduled
        thread: one thread was 10x steadier."""
        if threads is not None:
            import torch

            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)

    def sentences(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        return self.model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)

    def outputs(self, texts: Sequence[str], batch_size: int) -> list[TokenOutput]:
        raw = self.model.encode(list(texts), batch_size=batch_size, output_value=None,
                                normalize_embeddings=True, show_progress_bar=False)
        result = []
        for out in raw:
            mask = out["attention_mask"].bool()
            result.append(TokenOutput(ids=out["input_ids"][mask].cpu().numpy().astype(np.int64),
                                      tokens=out["token_embeddings"][mask].float().cpu().numpy(),
                                      sentence=out["sentence_embedding"].float().cpu().numpy()))
        return result

    def pieces(self, ids: Sequence[int]) -> list[str]:
        return self.model.tokenizer.convert_ids_to_tokens(list(ids))
