"""Which memories of a scope are near-duplicates: cosine pairs above a threshold, found with matrix
products over blocks of rows (never a Python loop over pairs), then grouped around a centre.

A scope of n memories costs n²/2 dot products in BLAS (10,000 memories of 384 dimensions: about a
second, benchmarks/bench_maintenance.py) and holds one block of ``BLOCK`` × n similarities at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

#: rows of the similarity matrix computed at once (memory: BLOCK × n float32)
BLOCK = 1024


def similar_pairs(vectors: np.ndarray, threshold: float, *, block: int = BLOCK) -> list[tuple[int, int, float]]:
    """Every pair (i, j, cosine) with i < j and cosine >= ``threshold``, best first (ties by i, j)."""
    n = len(vectors)
    if n < 2:
        return []
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.where(norms == 0, 1, norms)
    firsts, seconds, scores = [], [], []
    for start in range(0, n, block):
        stop = min(start + block, n)
        similarity = unit[start:stop] @ unit[start:].T  # rows start..stop against every later-or-equal row
        rows, columns = np.nonzero(similarity >= threshold)
        later = columns > rows  # column index c is memory start + c, row r is memory start + r
        rows, columns = rows[later], columns[later]
        firsts.append(rows + start)
        seconds.append(columns + start)
        scores.append(similarity[rows, columns])
    i, j, s = np.concatenate(firsts), np.concatenate(seconds), np.concatenate(scores)
    order = np.lexsort((j, i, -s))
    return [(int(i[k]), int(j[k]), float(s[k])) for k in order]


@dataclass
class Group:
    """Memories to merge into ``centre``: each member is within the threshold of the centre itself."""

    centre: int
    #: (member index, cosine to the centre), most similar first
    members: list[tuple[int, float]] = field(default_factory=list)


def groups(pairs: list[tuple[int, int, float]]) -> list[Group]:
    """Near-duplicate groups from ``similar_pairs`` (indices ordered oldest first).

    Pairs are taken best first. Two memories in no group yet start one, centred on the older; a
    memory in no group joins the group whose centre it is paired with. A pair of two members, or of
    a member and a memory outside, is left: chains (A near B, B near C, A far from C) never merge
    A with C. Groups come back in the order of their centres."""
    centre_of: dict[int, int] = {}
    found: dict[int, Group] = {}
    for i, j, score in pairs:  # i < j: i is the older
        if i not in centre_of and j not in centre_of:
            centre_of[i] = centre_of[j] = i
            found[i] = Group(i, [(j, score)])
        elif centre_of.get(i) == i and j not in centre_of:
            centre_of[j] = i
            found[i].members.append((j, score))
        elif centre_of.get(j) == j and i not in centre_of:
            centre_of[i] = j
            found[j].members.append((i, score))
    return [found[centre] for centre in sorted(found)]
