"""The batching embedder (the server's shared model): concurrent calls share model calls, every
caller gets exactly its own rows (equal to embedding alone), token vectors included, and
failures reach every caller."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from memlane.embeddings.batching import BatchingEmbedder


class SlowRecorder:
    """A fake model: row i of a text is a deterministic function of the text; records each call."""

    name = "fake/recorder"
    dims = 4

    def __init__(self, fail_on: str | None = None):
        self.calls: list[tuple[list[str], str]] = []
        self.fail_on = fail_on
        self.gate = threading.Event()

    def embed(self, texts, purpose):
        self.gate.wait(5)  # hold the first call so that others queue up behind it
        self.calls.append((list(texts), purpose))
        if self.fail_on and self.fail_on in texts:
            raise RuntimeError("model exploded")
        return np.array([[len(t), sum(map(ord, t)) % 97, 1.0 if purpose == "query" else 2.0, 3.0] for t in texts])


def _run_concurrently(embedder, inner, jobs):
    """Start every job, let the (gated) model go after they have queued up; results or exceptions."""
    pool = ThreadPoolExecutor(max_workers=len(jobs))
    futures = [pool.submit(embedder.embed, texts, purpose) for texts, purpose in jobs]
    threading.Timer(0.3, inner.gate.set).start()
    outcomes = []
    for future in futures:
        try:
            outcomes.append(future.result(timeout=30))
        except RuntimeError as exc:
            outcomes.append(exc)
    pool.shutdown()
    return outcomes


class _Open(SlowRecorder):
    def __init__(self):
        super().__init__()
        self.gate.set()


def test_concurrent_calls_are_batched_and_each_gets_its_rows():
    inner = SlowRecorder()
    batching = BatchingEmbedder(inner)
    jobs = [([f"text {i}", f"second {i}"] if i % 3 == 0 else [f"text {i}"], "query" if i % 2 else "document")
            for i in range(24)]
    for (texts, purpose), rows in zip(jobs, _run_concurrently(batching, inner, jobs)):
        assert np.array_equal(rows, _Open().embed(texts, purpose))
    assert len(inner.calls) < len(jobs)  # batched; each call holds one purpose (rows say which)
    for texts, purpose in inner.calls:
        assert {row[2] for row in _Open().embed(texts, purpose)} == {1.0 if purpose == "query" else 2.0}
    assert sum(len(texts) for texts, _ in inner.calls) == sum(len(texts) for texts, _ in jobs)
    assert batching.name == "fake/recorder" and batching.dims == 4


def test_a_lone_call_goes_straight_through():
    inner = _Open()
    batching = BatchingEmbedder(inner)
    assert batching.embed(["solo"], "query").shape == (1, 4)
    assert inner.calls == [(["solo"], "query")]


def test_a_failure_reaches_every_caller_of_the_batch_and_the_next_calls_work():
    inner = SlowRecorder(fail_on="boom")
    batching = BatchingEmbedder(inner)
    outcomes = _run_concurrently(batching, inner, [(["boom"], "query")] + [([f"t{i}"], "query") for i in range(6)])
    failed = [o for o in outcomes if isinstance(o, RuntimeError)]
    assert isinstance(outcomes[0], RuntimeError) and all(str(f) == "model exploded" for f in failed)
    assert all(isinstance(o, np.ndarray) or o in failed for o in outcomes)
    assert batching.embed(["fine"], "query").shape == (1, 4)


def test_real_model_rows_match_embedding_alone(embedder):
    batching = BatchingEmbedder(embedder)
    texts = [f"I like {food}" for food in ("sushi", "Thai curry", "a very long sentence about dark chocolate cake")]
    with ThreadPoolExecutor(max_workers=3) as pool:
        rows = list(pool.map(lambda t: batching.embed([t], "query")[0], texts))
    for text, row in zip(texts, rows):
        assert np.allclose(row, embedder.embed([text], "query")[0], atol=1e-5)


@pytest.mark.parametrize("max_texts", [1, 3])
def test_batches_respect_max_texts(max_texts):
    inner = SlowRecorder()
    batching = BatchingEmbedder(inner, max_texts=max_texts)
    outcomes = _run_concurrently(batching, inner, [([f"t{i}"], "query") for i in range(8)])
    assert all(isinstance(o, np.ndarray) and o.shape == (1, 4) for o in outcomes)
    assert max(len(texts) for texts, _ in inner.calls) <= max_texts


def test_token_vectors_are_batched_too_and_match_embedding_alone(embedder):
    batching = BatchingEmbedder(embedder)
    texts = ["My sister works as a nurse", "XJ-9000", "We walked on the beach in Porto last summer"]
    with ThreadPoolExecutor(max_workers=3) as pool:
        answers = list(pool.map(lambda t: batching.embed_with_tokens([t]), texts))
    for text, (sentences, tokens) in zip(texts, answers):
        alone_sentences, alone_tokens = embedder.embed_with_tokens([text])
        assert len(sentences) == len(tokens) == 1
        assert np.allclose(sentences[0], alone_sentences[0], atol=1e-5)
        assert tokens[0].shape == alone_tokens[0].shape and np.allclose(tokens[0], alone_tokens[0], atol=1e-4)


def test_token_vectors_are_offered_only_when_the_wrapped_embedder_has_them(embedder):
    assert not hasattr(BatchingEmbedder(_Open()), "embed_with_tokens")
    assert hasattr(BatchingEmbedder(embedder), "embed_with_tokens")
