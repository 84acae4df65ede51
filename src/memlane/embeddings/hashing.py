"""A deterministic hashing embedder: no model, no download, the same vector for the same text in
every process (``embedder: {"provider": "hashing"}``).

Each word (lower-cased; a run of Chinese characters is one word, and so is each of its
characters) lands in one of ``dims`` buckets with a sign, both from a BLAKE2 hash of the word;
a text's vector is the normalised sum of its words', so texts sharing words are similar and
texts sharing none are orthogonal (up to bucket collisions). Token vectors (late interaction)
are the words' own vectors. It knows no meaning ("car" and "automobile" are unrelated): it is for
tests and demos that are not about embedding quality, never for real retrieval.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


class HashingEmbedderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    dims: int = Field(384, ge=8, le=4096, description="vector size")


class HashingEmbedder:
    def __init__(self, dims: int = 384):
        self.dims = dims
        self.name = f"hashing/{dims}"

    @classmethod
    def from_config(cls, config: HashingEmbedderConfig) -> "HashingEmbedder":
        return cls(config.dims)

    def _words(self, text: str) -> list[str]:
        words = []
        for word in _WORD.findall(text.lower()):
            words.append(word)
            if _CJK.search(word) and len(word) > 1:
                words.extend(word)
        return words or [text]  # punctuation only: the text itself is the one "word"

    def _word_vectors(self, words: Sequence[str]) -> np.ndarray:
        rows = np.zeros((len(words), self.dims), dtype=np.float32)
        for n, word in enumerate(words):
            digest = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            rows[n, digest % self.dims] = 1.0 if (digest >> 32) & 1 else -1.0
        return rows

    def _sentence(self, text: str, words: np.ndarray) -> np.ndarray:
        total = words.sum(axis=0)
        # two words in one bucket with opposite signs can cancel out: then the whole text is the word
        return total if total.any() else self._word_vectors([text])[0]

    def embed(self, texts: Sequence[str], purpose: str) -> np.ndarray:
        rows = [self._sentence(t, self._word_vectors(self._words(t))) for t in texts]
        return np.stack(rows) if rows else np.empty((0, self.dims), dtype=np.float32)

    def embed_with_tokens(self, texts: Sequence[str], purpose: str = "document"
                          ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Sentence vectors and each text's word vectors (the late-interaction tokens)."""
        tokens = [self._word_vectors(self._words(t)) for t in texts]
        return [self._sentence(t, w) for t, w in zip(texts, tokens)], tokens
