"""Late-interaction scoring: exact MaxSim, half-precision storage, token pooling, and a page index
with a fast path (MUVERA fixed-dimensional encodings for candidates, exact MaxSim over them).

MaxSim(Q, P) = sum over query vectors q of max over page vectors p of <q, p> (ColBERT; seed 003 §3).
Exact brute force over every page is the reference; ``PageIndex.search(..., exact=False)`` must
return the same scores for the pages it returns, only faster, at a measured recall
(benchmarks/bench_documents.py).

Functions over arrays, with no store and no model: numpy, and ONNX Runtime for the float16 products
when it is installed (``_OrtProduct``; numpy gives the same scores without it). Arrays of token
vectors are (n_tokens, dims); the encoders (``encoders.py``) L2-normalise rows, these functions do
not care.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
import threading
from dataclasses import dataclass

import numpy as np

from memlane.core.errors import ConfigError, InvalidInputError

HALF = np.dtype("<f2")

#: Token rows scored per matrix product in the exact scorer: bounds the temporary float32 copy
#: (8,192 x 384 x 4 bytes = 12 MiB) and the similarity block, whatever the collection's size.
#: Smaller chunks stay in cache between widening and product: on Cranfield (222k rows x 384) 8,192
#: scored in 20 ms where 65,536 took 30 ms (ONNX Runtime; numpy: 271 vs 313 ms).
CHUNK_TOKENS = 8_192


# ---------------------------------------------------------------------------------------------
# input checks


def as_vectors(value: object, dims: int | None, field: str) -> np.ndarray:
    """``value`` as a C-contiguous float32 (n, dims) matrix with n >= 1 and finite entries."""
    try:
        matrix = np.asarray(value, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{field}: not a matrix of numbers ({exc})", field=field) from None
    if matrix.ndim != 2:
        raise InvalidInputError(f"{field}: expected a (n_tokens, dims) matrix, got shape {matrix.shape}", field=field)
    if matrix.shape[0] == 0:
        raise InvalidInputError(f"{field}: has no token vectors; give at least one", field=field)
    if dims is not None and matrix.shape[1] != dims:
        raise InvalidInputError(f"{field}: vectors have {matrix.shape[1]} dims; this index holds {dims}", field=field)
    if not np.isfinite(matrix).all():
        raise InvalidInputError(f"{field}: contains NaN or infinite values", field=field)
    return np.ascontiguousarray(matrix)


# ---------------------------------------------------------------------------------------------
# exact MaxSim


class _OrtProduct:
    """``query rows @ rows.T`` in one ONNX Runtime call (MatMul, Transpose; float16 rows are widened
    by a Cast node first): ORT's cast is vectorised and its product multi-threaded, where numpy's
    float16 widening alone costs more than the product (Cranfield, 222k x 384 rows: 116 ms to widen,
    84 ms to multiply; ORT 45 ms for both). The ``gather`` graph first picks rows of the whole
    buffer by index (a Gather node), so the fast path's scattered candidates need no numpy copy. The
    product comes out (query rows, rows): the segmented max then runs along contiguous memory (5x
    faster than down columns). Float32 rows (the fast path's encodings) go through ORT too: a numpy
    (BLAS) product wakes BLAS's own threads, which then spin beside ORT's; in the benchmark's
    sequence the fast path took 8.0 / 17.5 ms (p50 / p95) with BLAS, 5.6 / 9.2 ms without.
    ``None`` from ``get`` when onnxruntime (the ``local`` extra) is not installed: numpy does it."""

    _sessions: dict[tuple[int, bool, bool], object] = {}
    _lock = threading.Lock()

    @classmethod
    def get(cls, dims: int, half: bool, gather: bool) -> "object | None":
        with cls._lock:
            if (dims, half, gather) not in cls._sessions:
                cls._sessions[dims, half, gather] = cls._make(dims, half, gather)
            return cls._sessions[dims, half, gather]

    @staticmethod
    def _make(dims: int, half: bool, gather: bool) -> "object | None":
        try:
            import onnxruntime as ort
            from onnx import TensorProto, helper
        except ImportError:
            return None
        stored = TensorProto.FLOAT16 if half else TensorProto.FLOAT
        rows = [helper.make_tensor_value_info("rows", stored, [None, dims])]
        nodes = [helper.make_node("MatMul", ["wide" if half else "rows", "query"], ["product"]),
                 helper.make_node("Transpose", ["product"], ["scores"], perm=[1, 0])]
        if half:
            nodes.insert(0, helper.make_node("Cast", ["rows"], ["wide"], to=TensorProto.FLOAT))
        if gather:
            rows = [helper.make_tensor_value_info("tokens", stored, [None, dims]),
                    helper.make_tensor_value_info("index", TensorProto.INT64, [None])]
            nodes.insert(0, helper.make_node("Gather", ["tokens", "index"], ["rows"], axis=0))
        graph = helper.make_graph(
            nodes, "product", [*rows, helper.make_tensor_value_info("query", TensorProto.FLOAT, [dims, None])],
            [helper.make_tensor_value_info("scores", TensorProto.FLOAT, [None, None])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = min(model.ir_version, 9)
        options = ort.SessionOptions()
        options.log_severity_level = 3
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # idle threads sleep
        return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def maxsim(query: np.ndarray, page: np.ndarray) -> float:
    """The reference: sum over query vectors of the max dot product with the page's vectors."""
    q = as_vectors(query, None, "query")
    p = as_vectors(page, None, "page")
    if q.shape[1] != p.shape[1]:
        raise InvalidInputError(f"query: vectors have {q.shape[1]} dims; the page's have {p.shape[1]}", field="query")
    return float((q @ p.T).max(axis=1).sum())


def maxsim_many(query: np.ndarray, tokens: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Exact MaxSim of one query against many pages stored back to back.

    ``tokens`` holds every page's vectors concatenated (any float dtype; float16 is widened per chunk,
    by ONNX Runtime together with the product when it is installed);
    ``offsets[i]`` is where page i starts, in increasing order, and page i ends where page i + 1 starts
    (the last one at ``len(tokens)``). Every page must have at least one vector.
    """
    q = as_vectors(query, None, "query")
    offsets = np.asarray(offsets, dtype=np.int64)
    if len(offsets) == 0:
        return np.empty(0, dtype=np.float32)
    if tokens.ndim != 2 or tokens.shape[1] != q.shape[1]:
        raise InvalidInputError(f"query: vectors have {q.shape[1]} dims; the pages have {tokens.shape[-1]}",
                                field="query")
    lengths = np.diff(offsets, append=len(tokens))
    if (lengths <= 0).any():
        raise InvalidInputError("pages: every page needs at least one token vector", field="pages")
    return _maxsim(q, tokens, offsets, lengths)


def _maxsim(q: np.ndarray, tokens: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Exact MaxSim of the checked query ``q`` against pages ``tokens[starts[i]: starts[i] + lengths[i]]``
    (each at least one row, anywhere in ``tokens``): one product and one ``np.maximum.reduceat`` per
    chunk of whole pages, about ``CHUNK_TOKENS`` rows. Pages back to back are scored in place; others
    (the fast path's candidates) are gathered by row index chunk by chunk."""
    scores = np.empty(len(starts), dtype=np.float32)
    if len(starts) == 0:
        return scores
    unique, weights = _distinct_rows(q)
    ends = np.cumsum(lengths)  # where each page ends among the rows scored
    firsts = ends - lengths
    in_place = bool(np.array_equal(starts[1:], starts[:-1] + lengths[:-1]))
    index = None if in_place else _rows(starts, lengths)
    product = _product(unique, tokens, gather=index is not None)
    first = 0
    while first < len(starts):
        # as many whole pages as fit in one chunk (at least one page, however long)
        last = max(first + 1, int(np.searchsorted(ends, firsts[first] + CHUNK_TOKENS, side="right")))
        lo, hi = int(firsts[first]), int(ends[last - 1])
        block = product(slice(starts[0] + lo, starts[0] + hi) if index is None else index[lo:hi])
        best = np.maximum.reduceat(block, firsts[first:last] - lo, axis=1)  # (distinct rows, pages in chunk)
        scores[first:last] = weights @ best
        first = last
    return scores


def _distinct_rows(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``q`` and how often each occurs (float32). Equal query rows (the pooled
    vector repeated as query augmentation) have equal maxima: one product row each, weighted by its
    count, is the same sum for a smaller product. Rows compare as raw bytes: np.unique over a 1-d
    view of them takes 10 us, over axis 0 of the matrix 210 us (32 x 128)."""
    as_bytes = np.ascontiguousarray(q).view(np.dtype((np.void, q.dtype.itemsize * q.shape[1]))).ravel()
    _, first_of_each, counts = np.unique(as_bytes, return_index=True, return_counts=True)
    return q[first_of_each], counts.astype(np.float32)


def _product(unique: np.ndarray, tokens: np.ndarray, *, gather: bool) -> "Callable[[slice | np.ndarray], np.ndarray]":
    """``rows -> unique @ tokens[rows].T`` as float32 (rows of ``unique``, rows): ``rows`` is a slice or,
    with ``gather``, row indices. ONNX Runtime widens float16 and multiplies when installed; numpy
    otherwise, widening into one reused buffer (a fresh array per chunk costs page faults every query)."""
    ort_product = _OrtProduct.get(tokens.shape[1], tokens.dtype == HALF, gather) \
        if tokens.dtype in (HALF, np.float32) else None
    if ort_product is not None:
        qt = np.ascontiguousarray(unique.T, dtype=np.float32)
        run = ort_product.run  # type: ignore[attr-defined]
        if gather:
            whole = np.ascontiguousarray(tokens)
            return lambda index: run(None, {"tokens": whole, "index": index, "query": qt})[0]
        return lambda rows: run(None, {"rows": tokens[rows], "query": qt})[0]
    scratch = np.empty((0, tokens.shape[1]), dtype=np.float32)

    def numpy_product(rows: "slice | np.ndarray") -> np.ndarray:
        nonlocal scratch
        picked = tokens[rows]
        if picked.dtype != np.float32:
            if len(picked) > len(scratch):
                scratch = np.empty((len(picked), tokens.shape[1]), dtype=np.float32)
            np.copyto(scratch[: len(picked)], picked, casting="unsafe")
            picked = scratch[: len(picked)]
        return unique @ picked.T

    return numpy_product


# ---------------------------------------------------------------------------------------------
# compact storage


def to_half(page: np.ndarray) -> bytes:
    """Token vectors as little-endian float16 bytes (half the size of float32; pgvector's halfvec).
    Relative error per entry <= 2**-11 for values in float16's normal range (unit vectors are)."""
    matrix = as_vectors(page, None, "page")
    if np.abs(matrix).max() > np.finfo(HALF).max:
        raise InvalidInputError("page: values exceed float16's range (65504); normalise the vectors", field="page")
    return matrix.astype(HALF).tobytes()


def from_half(blob: bytes, dims: int) -> np.ndarray:
    """Inverse of ``to_half``: a float32 (n_tokens, dims) matrix."""
    if dims < 1 or len(blob) == 0 or len(blob) % (HALF.itemsize * dims):
        raise InvalidInputError(
            f"blob: {len(blob)} bytes is not a whole number of {dims}-dim float16 vectors", field="blob")
    return np.frombuffer(blob, dtype=HALF).reshape(-1, dims).astype(np.float32)


def to_fde(encoding: np.ndarray) -> bytes:
    """A fast-path encoding as little-endian float32 bytes (stored exactly: float16 would move the
    candidates the index picks)."""
    return np.asarray(encoding, dtype="<f4").tobytes()


def from_fde(blob: bytes) -> np.ndarray:
    """Inverse of ``to_fde``: a float32 vector."""
    return np.frombuffer(blob, dtype="<f4")


# ---------------------------------------------------------------------------------------------
# token pooling


def pool_tokens(page: np.ndarray, factor: float) -> np.ndarray:
    """Merge near-duplicate token vectors: Ward hierarchical clustering into ceil(n / factor)
    clusters, each replaced by its re-normalised mean (Clavié et al. 2024, "Reducing the footprint
    of multi-vector retrieval with minimal performance impact via token pooling"). ``factor`` 1
    keeps the page as it is; 2 halves its storage and scoring cost. The recall cost is measured in
    benchmarks/bench_documents.py."""
    matrix = as_vectors(page, None, "page")
    if factor < 1:
        raise InvalidInputError(f"pool_factor: {factor} is below 1; use 1 (no pooling) or more", field="pool_factor")
    n = len(matrix)
    clusters = int(np.ceil(n / factor))
    if clusters >= n or n < 3:
        return matrix
    try:
        from scipy.cluster.hierarchy import fcluster, linkage
    except ImportError:  # pragma: no cover - scipy comes with the 'local' extra
        raise ConfigError("token pooling needs scipy: pip install 'memlane[local]'") from None
    labels = fcluster(linkage(matrix, method="ward"), t=clusters, criterion="maxclust") - 1
    sums = np.zeros((labels.max() + 1, matrix.shape[1]), dtype=np.float64)
    np.add.at(sums, labels, matrix)
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (sums / norms).astype(np.float32)


def _small_product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b`` in one thread, without BLAS (for a few rows; see ``FDEEncoder.encode_query``)."""
    return np.einsum("ij,jk->ik", a, b, optimize=False)


# ---------------------------------------------------------------------------------------------
# MUVERA fixed-dimensional encodings (Dhulipala et al. 2024, arXiv 2405.19457)


@dataclass(frozen=True)
class FDEParams:
    """``repetitions`` independent SimHash partitionings of ``2**simhash_bits`` buckets each; every
    bucket holds a ``projection_dims``-dim random +-1 projection of its vectors (query: sum; page:
    mean, with empty buckets filled from the page vector nearest in Hamming distance). The encoding
    has repetitions * 2**simhash_bits * projection_dims dims; its dot product approximates MaxSim."""

    repetitions: int = 20
    simhash_bits: int = 4
    projection_dims: int = 8
    seed: int = 7

    @property
    def buckets(self) -> int:
        return 1 << self.simhash_bits

    @property
    def size(self) -> int:
        return self.repetitions * self.buckets * self.projection_dims


class FDEEncoder:
    """Maps a set of vectors to one vector. Random matrices are drawn once from ``params.seed``, so
    encodings made at different times (incremental adds) live in the same space."""

    def __init__(self, dims: int, params: FDEParams = FDEParams()):
        if params.repetitions < 1 or not 1 <= params.simhash_bits <= 10 or params.projection_dims < 1:
            raise ConfigError(f"invalid fast-path parameters {params}: repetitions >= 1, "
                              "simhash_bits 1..10, projection_dims >= 1")
        self.dims, self.params = dims, params
        rng = np.random.default_rng(params.seed)
        r, b, p = params.repetitions, params.simhash_bits, params.projection_dims
        # all repetitions in one matrix product each: (dims, r * b) hyperplanes, (dims, r * p) projections
        self._planes = rng.standard_normal((dims, r * b)).astype(np.float32)
        self._project = (rng.choice([-1.0, 1.0], size=(dims, r * p)) / np.sqrt(p)).astype(np.float32)
        self._bit_values = (1 << np.arange(b)).astype(np.int64)
        codes = np.arange(params.buckets)
        self._hamming = np.array([[bin(a ^ c).count("1") for c in codes] for a in codes], dtype=np.int64)

    def _buckets_and_projections(self, vectors: np.ndarray, product: Callable[[np.ndarray, np.ndarray], np.ndarray]
                                 = np.matmul) -> tuple[np.ndarray, np.ndarray]:
        """Per vector and repetition: its SimHash bucket (n, r) and its projection (n, r, p)."""
        r, b, p = self.params.repetitions, self.params.simhash_bits, self.params.projection_dims
        bits = (product(vectors, self._planes) > 0).reshape(len(vectors), r, b)
        buckets = bits.astype(np.int64) @ self._bit_values
        projected = product(vectors, self._project).reshape(len(vectors), r, p)
        return buckets, projected

    def encode_query(self, query: np.ndarray) -> np.ndarray:
        q = as_vectors(query, self.dims, "query")
        r, nb, p = self.params.repetitions, self.params.buckets, self.params.projection_dims
        # a query's few rows are multiplied by numpy's own loop, not BLAS: a BLAS call this small
        # still wakes BLAS's worker threads, and on a busy machine waiting for them took up to 24 ms
        # (p95; 0.02 ms p50) where einsum takes 0.1-0.15 ms
        buckets, projected = self._buckets_and_projections(q, _small_product)
        out = np.zeros((r, nb, p), dtype=np.float32)
        reps = np.broadcast_to(np.arange(r), buckets.shape)
        np.add.at(out, (reps, buckets), projected)
        return out.reshape(-1)

    def encode_pages(self, tokens: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        """Encodings of many pages stored back to back (as in ``maxsim_many``): (n_pages, size)."""
        r, nb, p = self.params.repetitions, self.params.buckets, self.params.projection_dims
        offsets = np.asarray(offsets, dtype=np.int64)
        n_pages, n_tokens = len(offsets), len(tokens)
        out = np.zeros((n_pages, r, nb, p), dtype=np.float32)
        if n_pages == 0:
            return out.reshape(0, -1)
        vectors = np.asarray(tokens, dtype=np.float32)
        lengths = np.diff(np.append(offsets, n_tokens))
        page_of = np.repeat(np.arange(n_pages), lengths)
        local = np.arange(n_tokens) - np.repeat(offsets, lengths)
        buckets, projected = self._buckets_and_projections(vectors)
        for rep in range(r):
            cell = page_of * nb + buckets[:, rep]  # (page, bucket) of each vector
            # per-cell means by sorting vectors by cell and one add.reduceat (np.add.at is ~50x slower)
            order = np.argsort(cell, kind="stable")
            sorted_cells = cell[order]
            firsts = np.flatnonzero(np.r_[True, sorted_cells[1:] != sorted_cells[:-1]])
            used = sorted_cells[firsts]
            counts = np.diff(np.r_[firsts, n_tokens])
            sums = np.zeros((n_pages * nb, p), dtype=np.float32)
            sums[used] = np.add.reduceat(projected[order, rep], firsts, axis=0) / counts[:, None]
            filled = np.zeros(n_pages * nb, dtype=bool)
            filled[used] = True
            empty = np.flatnonzero(~filled)
            if len(empty):
                # fill an empty bucket with the page's vector whose SimHash code is nearest in Hamming
                # distance (ties: first vector). min over (distance * stride + local index) per page
                # finds it for every bucket at once.
                stride = int(lengths.max()) + 1
                key = self._hamming[buckets[:, rep]] * stride + local[:, None]  # (n_tokens, nb)
                best = np.minimum.reduceat(key, offsets, axis=0)  # (n_pages, nb)
                pages, bucket = np.divmod(empty, nb)
                chosen = offsets[pages] + best[pages, bucket] % stride
                sums[empty] = projected[chosen, rep]
            out[:, rep] = sums.reshape(n_pages, nb, p)
        return out.reshape(n_pages, -1)


# ---------------------------------------------------------------------------------------------
# the page index


class PageIndex:
    """Pages' token vectors in memory, searchable by MaxSim, with cheap incremental add and remove.

    Token vectors are kept in float16 (half the memory; scores computed in float32), back to back in
    one growing buffer; each page also has its MUVERA encoding (one row of a float32 matrix).
    ``search(exact=True)`` scores every allowed page by brute force; the default fast path ranks the
    allowed pages by encoding dot product, then scores the best ``candidates(k)`` of them exactly.
    Removing marks a page dead; the buffer is compacted once dead vectors outnumber live ones.
    Scores returned are always exact raw MaxSim over the stored (float16) vectors.
    """

    def __init__(self, dims: int, *, fde: FDEParams = FDEParams(), min_candidates: int = 200,
                 candidates_per_result: int = 20, pool_factor: float = 1.0):
        if dims < 1:
            raise ConfigError(f"dims must be >= 1, got {dims}")
        if min_candidates < 1 or candidates_per_result < 1:
            raise ConfigError("min_candidates and candidates_per_result must be >= 1")
        if pool_factor < 1:
            raise ConfigError(f"pool_factor must be >= 1 (1 = no pooling), got {pool_factor}")
        self.dims = dims
        self.min_candidates = min_candidates
        self.candidates_per_result = candidates_per_result
        self.pool_factor = pool_factor
        self._encoder = FDEEncoder(dims, fde)
        self._tokens = np.empty((0, dims), dtype=HALF)
        self._n_tokens = 0
        self._fde = np.empty((0, fde.size), dtype=np.float32)
        self._starts = np.empty(0, dtype=np.int64)
        self._lengths = np.empty(0, dtype=np.int64)
        self._alive = np.empty(0, dtype=bool)
        self._n_slots = 0
        self._ids: list[str] = []
        self._slot: dict[str, int] = {}

    # -- size ----------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._slot)

    def __contains__(self, page_id: object) -> bool:
        return page_id in self._slot

    @property
    def n_vectors(self) -> int:
        """Token vectors held for live pages."""
        return int(self._lengths[: self._n_slots][self._alive[: self._n_slots]].sum())

    @property
    def nbytes(self) -> int:
        """Memory held by live pages: float16 token vectors plus their encodings."""
        return self.n_vectors * self.dims * HALF.itemsize + len(self) * self._fde.shape[1] * 4

    # -- writes --------------------------------------------------------------------------------

    @property
    def encoding_id(self) -> str:
        """Names the fast-path encoding; encodings saved from ``encode`` are valid for an index with
        the same ``encoding_id`` (and the same pool factor)."""
        f = self._encoder.params
        return f"muvera-d{self.dims}-r{f.repetitions}-b{f.simhash_bits}-p{f.projection_dims}-s{f.seed}" + \
            (f"-pool{self.pool_factor:g}" if self.pool_factor > 1 else "")

    @property
    def encoding_size(self) -> int:
        """Dimensions of one page's fast-path encoding."""
        return int(self._fde.shape[1])

    def encode(self, pages: Sequence[np.ndarray]) -> np.ndarray:
        """The fast-path encodings of pages, (n_pages, size) float32, exactly as ``add`` computes
        them: store them beside the pages and pass them back to ``add(encodings=...)`` to skip
        this work when an index is rebuilt."""
        return self._prepare(pages)[2]

    def _prepare(self, pages: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        matrices = [as_vectors(page, self.dims, f"pages[{i}]") for i, page in enumerate(pages)]
        if not matrices:
            return np.empty((0, self.dims), HALF), np.empty(0, np.int64), np.empty((0, self._fde.shape[1]), np.float32)
        if self.pool_factor > 1:
            matrices = [pool_tokens(m, self.pool_factor) for m in matrices]
        lengths = np.array([len(m) for m in matrices], dtype=np.int64)
        tokens = np.concatenate(matrices).astype(HALF)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        # encode from the float16 values actually stored, so the candidates see what exact scoring sees
        return tokens, lengths, self._encoder.encode_pages(tokens, offsets)

    def add(self, ids: Sequence[str], pages: Sequence[np.ndarray], *, encodings: np.ndarray | None = None) -> None:
        """Add pages (an id already present is replaced). All-or-nothing: every page is checked
        before anything changes. ``encodings`` (from ``encode``, same ``encoding_id``) skips
        computing them."""
        if isinstance(ids, str):
            raise InvalidInputError("ids: give a sequence of page ids, not one string", field="ids")
        ids = list(ids)
        if len(ids) != len(pages):
            raise InvalidInputError(f"ids: {len(ids)} ids for {len(pages)} pages", field="ids")
        if len(set(ids)) != len(ids):
            raise InvalidInputError("ids: the same page id appears twice in one add", field="ids")
        for page_id in ids:
            if not isinstance(page_id, str) or not page_id:
                raise InvalidInputError(f"ids: page ids are non-empty strings, got {page_id!r}", field="ids")
        if encodings is None:
            new_tokens, lengths, encodings = self._prepare(pages)
        else:
            encodings = np.asarray(encodings, dtype=np.float32)
            if encodings.shape != (len(ids), self._fde.shape[1]):
                raise InvalidInputError(f"encodings: shape {encodings.shape}; expected ({len(ids)}, "
                                        f"{self._fde.shape[1]}) from encode() of an index with this "
                                        f"encoding_id", field="encodings")
            matrices = [as_vectors(page, self.dims, f"pages[{i}]") for i, page in enumerate(pages)]
            if self.pool_factor > 1:
                matrices = [pool_tokens(m, self.pool_factor) for m in matrices]
            lengths = np.array([len(m) for m in matrices], dtype=np.int64)
            new_tokens = np.concatenate(matrices).astype(HALF) if matrices else np.empty((0, self.dims), HALF)
        if not ids:
            return
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        self.remove([i for i in ids if i in self._slot])
        self._reserve(self._n_tokens + len(new_tokens), self._n_slots + len(ids))
        t0, s0 = self._n_tokens, self._n_slots
        self._tokens[t0: t0 + len(new_tokens)] = new_tokens
        self._fde[s0: s0 + len(ids)] = encodings
        self._starts[s0: s0 + len(ids)] = t0 + offsets
        self._lengths[s0: s0 + len(ids)] = lengths
        self._alive[s0: s0 + len(ids)] = True
        for n, page_id in enumerate(ids):
            self._slot[page_id] = s0 + n
        self._ids.extend(ids)
        self._n_tokens += len(new_tokens)
        self._n_slots += len(ids)

    def remove(self, ids: Collection[str]) -> int:
        """Remove pages by id; unknown ids are ignored. Returns how many were removed."""
        if isinstance(ids, str):
            raise InvalidInputError("ids: give a collection of page ids, not one string", field="ids")
        removed = 0
        for page_id in ids:
            slot = self._slot.pop(page_id, None)
            if slot is not None:
                self._alive[slot] = False
                removed += 1
        if removed and self._n_slots > 64 and len(self._slot) < self._n_slots / 2:
            self._compact()
        return removed

    def _reserve(self, n_tokens: int, n_slots: int) -> None:
        """Grow buffers geometrically, so that n adds cost O(total size), not O(n * size)."""
        def grown(array: np.ndarray, needed: int) -> np.ndarray:
            if needed <= len(array):
                return array
            bigger = np.empty((max(needed, 2 * len(array), 16),) + array.shape[1:], dtype=array.dtype)
            bigger[: len(array)] = array
            return bigger
        self._tokens = grown(self._tokens, n_tokens)
        self._fde = grown(self._fde, n_slots)
        self._starts = grown(self._starts, n_slots)
        self._lengths = grown(self._lengths, n_slots)
        self._alive = grown(self._alive, n_slots)

    def _compact(self) -> None:
        live = np.flatnonzero(self._alive[: self._n_slots])
        starts, lengths = self._starts[live], self._lengths[live]
        rows = _rows(starts, lengths)
        self._tokens = self._tokens[rows].copy()
        self._fde = self._fde[live].copy()
        self._starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        self._lengths = lengths.copy()
        self._alive = np.ones(len(live), dtype=bool)
        self._ids = [self._ids[s] for s in live]
        self._slot = {page_id: n for n, page_id in enumerate(self._ids)}
        self._n_tokens, self._n_slots = len(rows), len(live)

    # -- reads ---------------------------------------------------------------------------------

    def candidates(self, k: int) -> int:
        """How many pages the fast path scores exactly for a top-k search."""
        return max(self.min_candidates, self.candidates_per_result * k)

    def search(self, query: np.ndarray, k: int, *, allowed: Collection[str] | None = None,
               exact: bool = False) -> list[tuple[str, float]]:
        """The k best pages for ``query`` as (page id, raw MaxSim) pairs, best first (ties: the page
        added first). ``allowed`` restricts the search to those page ids (unknown ids are ignored).
        An empty index, or no allowed page, gives an empty list."""
        q = as_vectors(query, self.dims, "query")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInputError(f"k: must be a positive integer, got {k!r}", field="k")
        if allowed is None:
            slots = np.flatnonzero(self._alive[: self._n_slots])
        else:
            if isinstance(allowed, str):
                raise InvalidInputError("allowed: give a collection of page ids, not one string", field="allowed")
            slots = np.array(sorted({self._slot[i] for i in allowed if i in self._slot}), dtype=np.int64)
        if len(slots) == 0:
            return []
        if not exact and len(slots) > self.candidates(k):
            # one product over the whole (contiguous) encoding matrix, then pick the allowed rows:
            # gathering the rows first copies the matrix (100 MB at 10k pages) on every query
            encoded = self._encoder.encode_query(q)[None, :]
            approx = _product(encoded, self._fde[: self._n_slots], gather=False)(slice(None))[0][slots]
            keep = np.argpartition(-approx, self.candidates(k) - 1)[: self.candidates(k)]
            slots = np.sort(slots[keep])
        scores = self._score(q, slots)
        top = _top_k(scores, k)
        return [(self._ids[slots[i]], float(scores[i])) for i in top]

    def score(self, query: np.ndarray, ids: Sequence[str]) -> list[float]:
        """Exact raw MaxSim of ``query`` with each of the given pages (all must be in the index)."""
        q = as_vectors(query, self.dims, "query")
        missing = [i for i in ids if i not in self._slot]
        if missing:
            raise InvalidInputError(f"ids: no page {missing[0]!r} in the index", field="ids")
        slots = np.array([self._slot[i] for i in ids], dtype=np.int64)
        return [float(s) for s in self._score(q, slots)]

    def _score(self, q: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """Exact MaxSim over the given slots."""
        return _maxsim(q, self._tokens[: self._n_tokens], self._starts[slots], self._lengths[slots])


def _rows(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Row indices of several [start, start + length) ranges, concatenated, without a Python loop."""
    total = int(lengths.sum())
    shifts = np.repeat(starts - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return np.arange(total, dtype=np.int64) + shifts


def _top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the k highest scores, best first; equal scores keep their order."""
    if len(scores) > k:
        cut = np.argpartition(-scores, k - 1)[:k]
        threshold = scores[cut].min()
        candidates = np.flatnonzero(scores >= threshold)
    else:
        candidates = np.arange(len(scores))
    order = np.lexsort((candidates, -scores[candidates]))
    return candidates[order][:k]
