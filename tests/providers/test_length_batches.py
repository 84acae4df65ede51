"""Local models run texts in batches of similar token length (embeddings/length_batches.py): little
padding, every text's vector the one it gets alone, in the order given."""

import numpy as np
import pytest

from memlane.embeddings.length_batches import length_batches


@pytest.mark.parametrize("lengths, max_texts, batches", [
    ([], 64, []),
    ([5], 64, [[0]]),
    # longest first; equal lengths keep their order
    ([3, 9, 3, 7], 64, [[1, 3, 0, 2]]),
    # full batches
    ([10, 10, 10, 10, 10], 2, [[0, 1], [2, 3], [4]]),
    # a batch of enough tokens (128) is closed before a text padded by more than a tenth of its width
    ([100, 100, 90, 50, 45], 64, [[0, 1, 2], [3, 4]]),
    # ... but not before: a few short texts are cheaper padded than run alone
    ([100, 20, 15], 64, [[0, 1, 2]]),
    # padding within a tenth of the width stays in the batch
    ([100, 100, 91], 64, [[0, 1, 2]]),
    ([100, 100, 89], 64, [[0, 1], [2]]),
    ([40] * 4 + [20] * 8 + [10] * 20, 64, [[0, 1, 2, 3], list(range(4, 12)), list(range(12, 32))]),
])
def test_batches_of_similar_length(lengths, max_texts, batches):
    assert length_batches(lengths, max_texts) == batches


def test_every_text_exactly_once():
    rng = np.random.default_rng(3)
    lengths = [int(n) for n in rng.integers(3, 513, 500)]
    batches = length_batches(lengths, 64)
    assert sorted(i for b in batches for i in b) == list(range(500))
    assert max(len(b) for b in batches) <= 64


SENTENCES = [
    "Melanie painted a sunrise over the lake last summer.",
    "Her brother moved to Toronto for a nursing job.",
    "On Sundays they cook Thai food together and watch old films.",
    "The dog, a corgi called Biscuit, hates the vacuum cleaner.",
    "She is saving up for a trip to Japan in the spring.",
    "Caroline started a pottery class that meets every Wednesday.",
    "Their landlord finally fixed the leaking kitchen tap.",
    "He runs five kilometres before work, rain or shine.",
]
#: one to eight sentences each, in a shuffled order: token lengths from about 12 to 110
TEXTS = [" ".join(SENTENCES[(start + j) % len(SENTENCES)] for j in range(count))
         for count, start in [(c, s) for c in range(1, 9) for s in (0, 3, 5)]]
TEXTS = [TEXTS[i] for i in np.random.default_rng(5).permutation(len(TEXTS))]


class _Runs:
    """A session that records the shape of every batch it runs."""

    def __init__(self, session):
        self.session, self.masks = session, []

    def run(self, names, feed):
        self.masks.append(np.asarray(feed["mask"]))
        return self.session.run(names, feed)


@pytest.mark.model
@pytest.mark.parametrize("model", ["embedder", "e5_embedder"])
def test_mixed_lengths_run_with_little_padding_and_come_back_in_order(model, request, monkeypatch):
    embedder = request.getfixturevalue(model)
    runtime = embedder._model()[0] if model == "embedder" else embedder._model().runtime
    alone = np.stack([embedder.embed([t], "document")[0] for t in TEXTS])
    runs = _Runs(runtime.session)
    monkeypatch.setattr(runtime, "session", runs)
    together = np.asarray(embedder.embed(TEXTS, "document"))
    cosines = (together * alone).sum(axis=1)
    assert cosines.min() >= 0.9999, cosines  # numerically the text's own vector, in its place
    real = sum(int(m.sum()) for m in runs.masks)
    padded = sum(m.size for m in runs.masks)
    assert padded <= 1.2 * real, (padded, real, [m.shape for m in runs.masks])
