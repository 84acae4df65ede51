"""Late-interaction scoring math (random vectors: this is pure math) and the PageIndex contract."""

from __future__ import annotations

import numpy as np
import pytest

from memlane.documents.late_interaction import (
    FDEEncoder,
    FDEParams,
    PageIndex,
    from_half,
    maxsim,
    maxsim_many,
    pool_tokens,
    to_half,
)
from memlane.core.errors import InvalidInputError


def unit(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    m = rng.standard_normal((n, dims)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def naive_maxsim(query: np.ndarray, page: np.ndarray) -> float:
    total = 0.0
    for q in query:
        total += max(float(np.dot(q.astype(np.float64), p.astype(np.float64))) for p in page)
    return total


def clustered(rng: np.random.Generator, n_pages: int, dims: int, n_topics: int = 40, tokens=(20, 60)):
    """Pages drawn from a few topics each (token = topic centre + noise), so rankings are meaningful."""
    centres = unit(rng, n_topics, dims)
    pages, topics = [], []
    for _ in range(n_pages):
        mine = rng.choice(n_topics, size=3, replace=False)
        n = int(rng.integers(*tokens))
        m = centres[rng.choice(mine, size=n)] + 0.6 * unit(rng, n, dims) / np.sqrt(2)
        pages.append(m / np.linalg.norm(m, axis=1, keepdims=True))
        topics.append(mine)
    return centres, pages, topics


def query_for(rng, centres, topics, n=8):
    m = centres[rng.choice(topics, size=n)] + 0.6 * unit(rng, n, centres.shape[1]) / np.sqrt(2)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


# ---------------------------------------------------------------------------------------------
# exact MaxSim


def test_maxsim_matches_the_naive_loop():
    rng = np.random.default_rng(1)
    for nq, np_, dims in [(1, 1, 4), (3, 7, 16), (12, 50, 64)]:
        q, p = unit(rng, nq, dims), unit(rng, np_, dims)
        assert maxsim(q, p) == pytest.approx(naive_maxsim(q, p), abs=1e-4)


def test_maxsim_is_not_symmetric_and_sums_over_query_vectors():
    q = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    p = np.array([[1.0, 0.0]], dtype=np.float32)
    assert maxsim(q, p) == pytest.approx(1.0)  # 1 + 0
    assert maxsim(p, q) == pytest.approx(1.0)
    assert maxsim(q, np.vstack([p, [[0.0, 1.0]]])) == pytest.approx(2.0)


@pytest.fixture(params=["onnxruntime", "numpy"])
def widen(request, monkeypatch):
    """Both products: ONNX Runtime's (MatMul, after a Cast for float16 and a Gather for scattered
    rows), and numpy's, as without the local extra (numpy widens float16, then multiplies)."""
    import memlane.documents.late_interaction as li

    if request.param == "numpy":
        monkeypatch.setattr(li._OrtProduct, "get", classmethod(lambda cls, dims, half, gather: None))
    else:
        assert all(li._OrtProduct.get(24, half, gather) is not None for half in (True, False) for gather in (True, False))
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("chunk", [1, 7, 100_000])
def test_batched_scorer_matches_the_naive_loop_across_chunk_sizes(monkeypatch, chunk, dtype, widen):
    import memlane.documents.late_interaction as li

    monkeypatch.setattr(li, "CHUNK_TOKENS", chunk)  # 1 and 7: pages longer than a chunk, widened alone
    rng = np.random.default_rng(2)
    pages = [unit(rng, int(n), 24).astype(dtype) for n in rng.integers(1, 30, size=40)]
    q = unit(rng, 5, 24)
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in pages])[:-1]])
    got = maxsim_many(q, np.concatenate(pages), offsets)
    assert got == pytest.approx([naive_maxsim(q, p.astype(np.float32)) for p in pages], abs=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_repeated_query_rows_count_as_often_as_they_occur(dtype):
    rng = np.random.default_rng(5)
    pages = [unit(rng, int(n), 16) for n in rng.integers(1, 20, size=30)]
    tokens, distinct = unit(rng, 4, 16), unit(rng, 1, 16)
    q = np.vstack([tokens, np.repeat(distinct, 8, axis=0)])  # the pooled vector repeated x8
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in pages])[:-1]])
    stored = np.concatenate(pages).astype(dtype)
    got = maxsim_many(q, stored, offsets)
    reference = [naive_maxsim(q, p.astype(dtype).astype(np.float32)) for p in pages]
    assert got == pytest.approx(reference, abs=1e-4)


def test_batched_scorer_rejects_an_empty_page():
    rng = np.random.default_rng(3)
    with pytest.raises(InvalidInputError, match="at least one token"):
        maxsim_many(unit(rng, 2, 8), unit(rng, 5, 8), np.array([0, 2, 2]))


@pytest.mark.parametrize("query, message", [
    (np.zeros((0, 8), dtype=np.float32), "no token vectors"),
    (np.ones(8, dtype=np.float32), "matrix"),
    (np.full((2, 8), np.nan, dtype=np.float32), "NaN"),
    (np.ones((2, 9), dtype=np.float32), "9 dims"),
    ([["a"] * 8], "not a matrix of numbers"),
])
def test_bad_queries_are_typed_errors_naming_the_problem(query, message):
    page = np.ones((3, 8), dtype=np.float32)
    with pytest.raises(InvalidInputError, match=message) as info:
        maxsim(query, page)
    assert info.value.field == "query"


# ---------------------------------------------------------------------------------------------
# float16 storage


def test_half_precision_round_trip_error_is_bounded():
    rng = np.random.default_rng(4)
    page = unit(rng, 200, 128)
    blob = to_half(page)
    assert len(blob) == 200 * 128 * 2
    back = from_half(blob, 128)
    assert back.dtype == np.float32 and back.shape == page.shape
    # float16 has an 11-bit significand: relative error <= 2**-11 per entry (entries of unit vectors
    # are well inside the normal range except near zero, where the absolute error is tiny)
    assert np.abs(back - page).max() <= 2 ** -11 * np.abs(page).max() + 1e-7
    q = unit(rng, 16, 128)
    assert maxsim(q, back) == pytest.approx(maxsim(q, page), abs=16 * 2 ** -10)


@pytest.mark.parametrize("blob, dims", [(b"", 4), (b"\x00" * 6, 4), (b"\x00" * 8, 0)])
def test_from_half_rejects_blobs_of_the_wrong_size(blob, dims):
    with pytest.raises(InvalidInputError, match="blob"):
        from_half(blob, dims)


def test_to_half_rejects_values_out_of_float16_range():
    with pytest.raises(InvalidInputError, match="float16"):
        to_half(np.full((1, 2), 1e6, dtype=np.float32))


# ---------------------------------------------------------------------------------------------
# token pooling


def test_pooling_merges_near_duplicates_and_keeps_distinct_vectors():
    rng = np.random.default_rng(5)
    base = unit(rng, 10, 32)
    page = np.repeat(base, 2, axis=0) + 1e-3 * rng.standard_normal((20, 32)).astype(np.float32)
    pooled = pool_tokens(page, 2)
    assert pooled.shape == (10, 32)
    np.testing.assert_allclose(np.linalg.norm(pooled, axis=1), 1.0, atol=1e-5)
    # every original direction survives (nearest pooled vector is almost identical)
    assert (base @ pooled.T).max(axis=1).min() > 0.999
    q = unit(rng, 6, 32)
    assert maxsim(q, pooled) == pytest.approx(maxsim(q, page), abs=0.01)


def test_pooling_factor_one_and_tiny_pages_are_unchanged_and_below_one_is_an_error():
    rng = np.random.default_rng(6)
    page = unit(rng, 9, 8)
    np.testing.assert_array_equal(pool_tokens(page, 1), page)
    np.testing.assert_array_equal(pool_tokens(page[:2], 4), page[:2])
    with pytest.raises(InvalidInputError, match="pool_factor"):
        pool_tokens(page, 0.5)


# ---------------------------------------------------------------------------------------------
# MUVERA encodings


def test_fde_dot_product_tracks_maxsim():
    """The encodings are only a candidate generator, but their dot product must rank pages close
    to MaxSim's order on clustered data."""
    rng = np.random.default_rng(7)
    centres, pages, topics = clustered(rng, 300, 32)
    enc = FDEEncoder(32, FDEParams(repetitions=10, simhash_bits=3, projection_dims=8))
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in pages])[:-1]])
    fdes = enc.encode_pages(np.concatenate(pages), offsets)
    assert fdes.shape == (300, enc.params.size)
    correlations = []
    for t in range(10):
        q = query_for(rng, centres, topics[t])
        exact = maxsim_many(q, np.concatenate(pages), offsets)
        approx = fdes @ enc.encode_query(q)
        correlations.append(np.corrcoef(exact, approx)[0, 1])
    assert np.mean(correlations) > 0.8


def test_fde_of_one_page_does_not_depend_on_its_batch():
    rng = np.random.default_rng(8)
    pages = [unit(rng, n, 16) for n in (3, 40, 1, 17)]
    enc = FDEEncoder(16, FDEParams(repetitions=3, simhash_bits=3, projection_dims=4))
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in pages])[:-1]])
    together = enc.encode_pages(np.concatenate(pages), offsets)
    for n, page in enumerate(pages):
        alone = enc.encode_pages(page, np.array([0]))
        np.testing.assert_allclose(alone[0], together[n], atol=1e-5)
    # no empty buckets in a page's encoding: the fill gives every bucket a vector
    per_bucket = together.reshape(4, 3, 8, 4)
    assert (np.abs(per_bucket).sum(axis=-1) > 0).all()


# ---------------------------------------------------------------------------------------------
# PageIndex


def build(rng, n_pages=400, dims=32, **kwargs):
    centres, pages, topics = clustered(rng, n_pages, dims)
    index = PageIndex(dims, **kwargs)
    ids = [f"p{i}" for i in range(n_pages)]
    index.add(ids, pages)
    return index, ids, pages, centres, topics


@pytest.mark.parametrize("chunk", [1, 50, 100_000])
def test_scattered_pages_are_gathered_and_scored_exactly(monkeypatch, chunk, widen):
    """Pages not back to back in the buffer (the fast path's candidates, a filtered search, score()
    in any order) are gathered by row index, chunk by chunk: the same scores as the naive loop."""
    import memlane.documents.late_interaction as li

    monkeypatch.setattr(li, "CHUNK_TOKENS", chunk)  # 1: one page per chunk; 50: a few pages each
    rng = np.random.default_rng(21)
    index, ids, pages, centres, topics = build(rng, 300, dims=24, min_candidates=30, candidates_per_result=3)
    stored = {i: from_half(to_half(p), 24) for i, p in zip(ids, pages)}
    q = query_for(rng, centres, topics[4])
    picked = [ids[n] for n in rng.permutation(300)[:40]]  # scattered, out of order
    assert index.score(q, picked) == pytest.approx([naive_maxsim(q, stored[i]) for i in picked], abs=1e-4)
    fast = index.search(q, 10)  # 30 candidates of 300 pages, scored exactly
    assert [s for _, s in fast] == pytest.approx([naive_maxsim(q, stored[i]) for i, _ in fast], abs=1e-4)
    allowed = set(ids[1::3])
    got = index.search(q, 5, allowed=allowed, exact=True)
    reference = sorted(((i, naive_maxsim(q, stored[i])) for i in allowed), key=lambda x: -x[1])[:5]
    assert [i for i, _ in got] == [i for i, _ in reference]


def test_searches_without_onnxruntime_return_the_same_pages_and_scores(monkeypatch):
    """The fast path (encoding product, gathered candidates) and exact search give the same answers
    whether ONNX Runtime or numpy does the products."""
    import memlane.documents.late_interaction as li

    rng = np.random.default_rng(22)
    index, ids, pages, centres, topics = build(rng, 600, min_candidates=40, candidates_per_result=4)
    queries = [query_for(rng, centres, topics[t]) for t in range(8)]
    searches = [dict(k=10), dict(k=10, exact=True), dict(k=5, allowed=set(ids[::4]))]
    with_ort = [index.search(q, **s) for q in queries for s in searches]
    monkeypatch.setattr(li._OrtProduct, "get", classmethod(lambda cls, dims, half, gather: None))
    with_numpy = [index.search(q, **s) for q in queries for s in searches]
    for a, b in zip(with_ort, with_numpy):
        assert [i for i, _ in a] == [i for i, _ in b]
        assert [s for _, s in a] == pytest.approx([s for _, s in b], abs=1e-5)


def test_exact_search_is_brute_force_maxsim_best_first():
    rng = np.random.default_rng(9)
    index, ids, pages, centres, topics = build(rng, 120)
    q = query_for(rng, centres, topics[0])
    got = index.search(q, 10, exact=True)
    half = [from_half(to_half(p), 32) for p in pages]
    reference = sorted(((i, naive_maxsim(q, p)) for i, p in zip(ids, half)), key=lambda x: -x[1])[:10]
    assert [i for i, _ in got] == [i for i, _ in reference]
    assert [s for _, s in got] == pytest.approx([s for _, s in reference], abs=1e-3)


def test_fast_path_recalls_the_exact_top_10_on_clustered_data():
    rng = np.random.default_rng(10)
    index, ids, pages, centres, topics = build(rng, 1500, min_candidates=100, candidates_per_result=10)
    assert index.candidates(10) < len(index)  # the fast path really prunes here
    recalls = []
    for t in range(20):
        q = query_for(rng, centres, topics[t])
        exact = index.search(q, 10, exact=True)
        fast = index.search(q, 10)
        recalls.append(len({i for i, _ in exact} & {i for i, _ in fast}) / 10)
        exact_scores = dict(exact)
        for page_id, score in fast:  # scores of the fast path are exact MaxSim too
            if page_id in exact_scores:
                assert score == pytest.approx(exact_scores[page_id], abs=1e-5)
    assert np.mean(recalls) >= 0.9


def test_allowed_restricts_both_paths():
    rng = np.random.default_rng(11)
    index, ids, pages, centres, topics = build(rng, 500, min_candidates=20, candidates_per_result=2)
    allowed = set(ids[::7]) | {"not-a-page"}
    q = query_for(rng, centres, topics[3])
    for exact in (True, False):
        got = index.search(q, 15, allowed=allowed, exact=exact)
        assert len(got) == 15 and {i for i, _ in got} <= allowed
    assert index.search(q, 5, allowed=set()) == []
    assert index.search(q, 5, allowed={"not-a-page"}) == []
    small = index.search(q, 50, allowed={"p1", "p2"})
    assert {i for i, _ in small} == {"p1", "p2"}


def test_add_replaces_existing_ids_and_remove_forgets_them():
    rng = np.random.default_rng(12)
    index = PageIndex(8)
    a, b, c = unit(rng, 3, 8), unit(rng, 4, 8), unit(rng, 5, 8)
    index.add(["a", "b"], [a, b])
    assert len(index) == 2 and "a" in index
    index.add(["a"], [c])  # upsert: a's vectors are now c's
    assert len(index) == 2
    assert index.score(c, ["a"])[0] == pytest.approx(maxsim(c, from_half(to_half(c), 8)), abs=1e-5)
    assert index.remove(["a", "zzz"]) == 1
    assert len(index) == 1 and "a" not in index
    assert [i for i, _ in index.search(a, 5, exact=True)] == ["b"]
    assert index.remove(["a"]) == 0


def test_many_removals_compact_the_buffers_without_changing_results():
    rng = np.random.default_rng(13)
    index, ids, pages, centres, topics = build(rng, 300)
    q = query_for(rng, centres, topics[5])
    keep = set(ids[::3])
    expected = [(i, s) for i, s in index.search(q, 300, exact=True) if i in keep][:10]
    index.remove([i for i in ids if i not in keep])
    assert len(index) == len(keep)
    assert index._n_slots == len(keep)  # compacted
    got = index.search(q, 10, exact=True)
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], abs=1e-5)
    index.add(["new"], [pages[1]])  # still writable after compaction
    assert index.search(pages[1], 1, exact=True)[0][0] in {"new", "p1"}


def test_empty_index_returns_no_results_and_bad_calls_are_typed_errors():
    index = PageIndex(4)
    q = np.eye(4, dtype=np.float32)[:2]
    assert len(index) == 0 and index.search(q, 3) == [] and index.search(q, 3, exact=True) == []
    with pytest.raises(InvalidInputError, match="no token vectors") as info:
        index.search(np.zeros((0, 4), dtype=np.float32), 3)
    assert info.value.field == "query"
    with pytest.raises(InvalidInputError, match="k"):
        index.search(q, 0)
    with pytest.raises(InvalidInputError, match="5 dims"):
        index.search(np.ones((1, 5), dtype=np.float32), 1)


@pytest.mark.parametrize("ids, pages, message", [
    (["a", "b"], [np.ones((2, 4))], "2 ids for 1 pages"),
    (["a", "a"], [np.ones((2, 4))] * 2, "twice"),
    ([""], [np.ones((2, 4))], "non-empty strings"),
    ("ab", [np.ones((2, 4))] * 2, "not one string"),
    (["a", "b"], [np.ones((2, 4)), np.ones((0, 4))], r"pages\[1\]: has no token vectors"),
    (["a", "b"], [np.ones((2, 4)), np.ones((2, 3))], r"pages\[1\]: vectors have 3 dims"),
])
def test_bad_adds_change_nothing(ids, pages, message):
    index = PageIndex(4)
    index.add(["keep"], [np.ones((1, 4))])
    with pytest.raises(InvalidInputError, match=message):
        index.add(ids, pages)
    assert len(index) == 1 and [i for i, _ in index.search(np.ones((1, 4)), 5, exact=True)] == ["keep"]


def test_pooling_index_stores_fewer_vectors_and_keeps_the_ranking_close():
    rng = np.random.default_rng(14)
    centres, pages, topics = clustered(rng, 200, 32)
    ids = [f"p{i}" for i in range(200)]
    full, pooled = PageIndex(32), PageIndex(32, pool_factor=2)
    full.add(ids, pages)
    pooled.add(ids, pages)
    assert pooled.n_vectors <= 0.55 * full.n_vectors and pooled.nbytes < full.nbytes
    overlap = []
    for t in range(10):
        q = query_for(rng, centres, topics[t])
        a = {i for i, _ in full.search(q, 10, exact=True)}
        b = {i for i, _ in pooled.search(q, 10, exact=True)}
        overlap.append(len(a & b) / 10)
    assert np.mean(overlap) >= 0.7


def test_saved_encodings_rebuild_the_same_index_without_recomputing():
    rng = np.random.default_rng(15)
    centres, pages, topics = clustered(rng, 300, 32)
    ids = [f"p{i}" for i in range(300)]
    first = PageIndex(32, min_candidates=20, candidates_per_result=2)
    saved = first.encode(pages)
    assert saved.shape == (300, FDEParams().size) and saved.dtype == np.float32
    first.add(ids, pages)
    again = PageIndex(32, min_candidates=20, candidates_per_result=2)
    assert again.encoding_id == first.encoding_id != PageIndex(32, fde=FDEParams(repetitions=3)).encoding_id
    again.add(ids, pages, encodings=saved)
    np.testing.assert_array_equal(again._fde[:300], first._fde[:300])
    q = query_for(rng, centres, topics[0])
    assert again.search(q, 10) == first.search(q, 10)
    with pytest.raises(InvalidInputError, match="encodings: shape"):
        again.add(["x"], [pages[0]], encodings=saved[:2])
