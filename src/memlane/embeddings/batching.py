"""An embedder wrapper that turns concurrent calls into one model call.

A server has many request threads asking for one short embedding each (a search
query, an ``infer=false`` add). The local model embeds one text in ~10 ms but 32
texts in one batch in not much more, and it runs one call at a time anyway (the
model is shared and locked). So instead of queueing on that lock, callers queue
here: whoever finds the model idle takes every waiting request of the same
purpose, embeds them in one call and hands each caller its rows. Nothing waits
on a timer; a lone request goes straight through.

It implements the ``Embedder`` protocol with the wrapped embedder's ``name`` and
``dims``, so stores see the same embedder, and ``embed_with_tokens`` (sentence
vectors plus contextual token vectors, for late interaction) when the wrapped
embedder has it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from memlane.embeddings.base import Embedder

_TOKENS = "tokens:"  # the job kind of embed_with_tokens calls, with their purpose (never batched with plain embeds)


@dataclass
class _Job:
    texts: list[str]
    purpose: str
    result: Any = None
    error: BaseException | None = None
    done: bool = False
    taken: bool = field(default=False, repr=False)


class BatchingEmbedder:
    def __init__(self, inner: Embedder, *, max_texts: int = 256):
        self.inner = inner
        self.name = inner.name
        self.dims = inner.dims
        self.max_texts = max_texts
        self._cond = threading.Condition()
        self._queue: list[_Job] = []
        self._busy = False
        self.calls = 0  # model calls made (for tests and benchmarks)
        if hasattr(inner, "embed_with_tokens"):
            self.embed_with_tokens = self._embed_with_tokens

    def embed(self, texts: Sequence[str], purpose: str) -> Any:
        return self._submit(_Job(list(texts), purpose))

    def _embed_with_tokens(self, texts: Sequence[str], purpose: str = "document") -> tuple[Any, list[Any]]:
        return self._submit(_Job(list(texts), _TOKENS + purpose))

    def _submit(self, job: _Job) -> Any:
        with self._cond:
            self._queue.append(job)
            while True:
                if job.done:
                    return self._answer(job)
                if not self._busy and not job.taken:
                    batch = self._take(job)
                    self._busy = True
                    break
                self._cond.wait()
        try:
            texts = [t for j in batch for t in j.texts]
            if job.purpose.startswith(_TOKENS):
                rows, tokens = self.inner.embed_with_tokens(  # type: ignore[attr-defined]
                    texts, job.purpose.removeprefix(_TOKENS))
            else:
                rows, tokens = self.inner.embed(texts, job.purpose), None
            matrix = np.asarray(rows)
            start = 0
            for j in batch:
                end = start + len(j.texts)
                j.result = matrix[start:end] if tokens is None else (matrix[start:end], list(tokens[start:end]))
                start = end
        except BaseException as exc:  # every caller of the batch gets the failure, none hangs
            for j in batch:
                j.error = exc
        finally:
            with self._cond:
                self.calls += 1
                for j in batch:
                    j.done = True
                self._busy = False
                self._cond.notify_all()
        return self._answer(job)

    def _take(self, leader: _Job) -> list[_Job]:
        """The leader's job plus every queued job of the same purpose, up to ``max_texts`` texts."""
        batch = [leader]
        count = len(leader.texts)
        for j in self._queue:
            if j is leader or j.purpose != leader.purpose or count + len(j.texts) > self.max_texts:
                continue
            batch.append(j)
            count += len(j.texts)
        for j in batch:
            j.taken = True
        taken = {id(j) for j in batch}
        self._queue = [j for j in self._queue if id(j) not in taken]
        return batch

    @staticmethod
    def _answer(job: _Job) -> Any:
        if job.error is not None:
            raise job.error
        return job.result
