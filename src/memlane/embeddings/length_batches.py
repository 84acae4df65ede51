"""Which texts a local model runs together: batches of similar token length.

A forward pass pads every text of a batch to the batch's longest, and the padding costs as much as
words do (attention more). Texts are taken longest first, and a batch is closed when it is full
(``max_texts``) or when the next text would be padded by more than ``max_padding`` of the batch's
width, once the batch holds ``min_tokens`` tokens: fewer tokens than that run at a worse rate per
token than the padding costs (a pass is a hundred operators, each with its fixed cost). The runtimes
(``e5``, ``runtime_onnx``) run each batch and put every text's output back in its place.
"""

from __future__ import annotations

from collections.abc import Sequence

#: a text padded by more than this share of its batch's width starts the next batch (0.1: 13 % more texts/s
#: than 0.2 for short texts, 6 % for mixed lengths; 0.05 no better: benchmarks/bench_length_batches.py)
MAX_PADDING = 0.1
#: a batch holding fewer tokens than this takes the next text however much padding it needs
MIN_TOKENS = 128


def length_batches(lengths: Sequence[int], max_texts: int, *, max_padding: float = MAX_PADDING,
                   min_tokens: int = MIN_TOKENS) -> list[list[int]]:
    """The indices of ``lengths`` in batches, longest texts first (equal lengths in their given order);
    every index exactly once."""
    if max_texts < 1:
        raise ValueError(f"max_texts must be at least 1, not {max_texts}")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    width = tokens = 0
    for i in order:
        n = lengths[i]
        if current and (len(current) >= max_texts or (tokens >= min_tokens and width - n > max_padding * width)):
            batches.append(current)
            current = []
        if not current:
            width, tokens = n, 0
        current.append(i)
        tokens += n
    if current:
        batches.append(current)
    return batches
