"""The ONNX export of a local model, made once with torch and cached (``export_cache``).

``model_bytes`` returns the ONNX graph of a sentence-transformers model directory (its Transformer
module: token ids, attention mask and token types in, hidden states out), fp32 or with int8 dynamic
quantisation by ``INT8`` (a recipe; its checksum names the cached file and the embedder, so a changed
recipe is neither read from an old file nor mixed with old vectors in a store). torch is needed for the
export only; later processes never import it.
"""

from __future__ import annotations

import hashlib
import io
import json
import tempfile
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

from memlane.core.errors import ConfigError, EmbeddingError
from memlane.embeddings import export_cache
from memlane.embeddings.model_dir import source_checksum

Variant = Literal["fp32", "int8"]
#: the ONNX opset of the export (ONNX Runtime 1.17 and later run it)
OPSET = 17


@dataclass(frozen=True)
class Int8Recipe:
    """How the fp32 graph is quantised: ONNX Runtime's dynamic quantisation (int8 weights, activations
    quantised per run) of the weight MatMuls of ``op_types``, one scale per output channel, except the
    nodes in ``keep_fp32``."""

    keep_fp32: tuple[str, ...] = ()
    op_types: tuple[str, ...] = ("MatMul",)
    per_channel: bool = True

    @property
    def tag(self) -> str:
        """``int8_`` and a checksum of the recipe: the variant in export file names and embedder names."""
        recipe = json.dumps({key: sorted(value) if isinstance(value, tuple) else value
                             for key, value in asdict(self).items()}, sort_keys=True).encode()  # order-blind
        return "int8_" + hashlib.sha256(recipe).hexdigest()[:8]


_FEED_FORWARD_IN, _FEED_FORWARD_OUT = (f"/model/encoder/layer.{{}}/{part}/dense/MatMul"
                                      for part in ("intermediate", "output"))
#: Measured on all-MiniLM-L6-v2 (benchmarks/bench_int8_recipe.py: 369 sentences of prose and personal
#: facts, no evaluation data; history/embedding.md): quantised one at a time, the feed-forward MatMuls
#: cost the most cosine to fp32, sentence and token vectors alike (an attention projection at most a
#: seventh of the worst). Kept in fp32, the ten most costly (every layer's feed-forward input, the
#: outputs of layers 0-3) cut the cosine lost to about a fifth (sentences: mean 0.9986 against 0.9931;
#: tokens, which the MaxSim reranker compares: 0.9982 against 0.9894). The word-embedding table stays
#: fp32 (quantised, it cost the worst sentence 0.011 cosine). Other BERT exports have the same node
#: names; the measurement is this model's.
INT8 = Int8Recipe(keep_fp32=tuple(_FEED_FORWARD_IN.format(layer) for layer in range(6))
                  + tuple(_FEED_FORWARD_OUT.format(layer) for layer in range(4)))


def variant_tag(variant: Variant) -> str:
    return INT8.tag if variant == "int8" else variant


def model_bytes(source: Path, name: str, cache: Path, variant: Variant) -> bytes:
    """The verified ONNX graph of the model in ``source`` (called ``name``) in ``variant``, exported
    (and cached) if need be; older exports of the model in ``cache`` are removed after a new one."""
    checksum, tag = source_checksum(source), variant_tag(variant)
    stem = export_cache.file_stem(name, checksum, tag)
    cached = export_cache.read_verified(cache, stem)
    if cached is not None:
        return cached
    data = quantize_int8(model_bytes(source, name, cache, "fp32")) if variant == "int8" else export_fp32(source)
    export_cache.write_atomic(cache, stem, data)
    export_cache.remove_stale(cache, name, checksum, tag)
    return data


def export_fp32(source: Path) -> bytes:
    """Export the model's Transformer module with torch (the legacy TorchScript exporter)."""
    try:
        import torch
        from transformers import AutoModel
    except ImportError:
        raise ConfigError(
            f"the ONNX runtime of the local embedder needs a one-time export of {source} with torch, which is "
            "not installed: pip install 'memlane[local]' (torch is needed for the export only), or copy an "
            "export made elsewhere into the model cache (embedder.config.cache_dir)") from None
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        model = AutoModel.from_pretrained(str(source), local_files_only=True).eval()

        class Hidden(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, ids, mask, types):  # noqa: ANN001
                return self.model(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state

        sample = torch.tensor([[101, 7592, 2088, 102]]), torch.ones(1, 4, dtype=torch.long), \
            torch.zeros(1, 4, dtype=torch.long)
        axes = {name: {0: "batch", 1: "tokens"} for name in ("ids", "mask", "types", "hidden")}
        out = io.BytesIO()
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(Hidden(), sample, out, input_names=["ids", "mask", "types"], output_names=["hidden"],
                              dynamic_axes=axes, opset_version=OPSET, dynamo=False)
        return out.getvalue()
    except Exception as exc:  # whatever torch raised: say which model could not be exported
        raise EmbeddingError(f"could not export {source} to ONNX ({type(exc).__name__}: {exc}); "
                             "set embedder.config.runtime to 'torch' to run it on torch") from exc


def quantize_int8(fp32: bytes, recipe: Int8Recipe = INT8) -> bytes:
    """The fp32 graph quantised by ``recipe`` (one scale per output channel: per tensor lost 4x more
    cosine to fp32, mean 0.957 against 0.992)."""
    import logging

    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:  # it needs the onnx package
        raise ConfigError("embedder.config.quantize 'int8' needs the onnx package to quantise the export once: "
                          "pip install 'memlane[local]'") from None

    with tempfile.TemporaryDirectory(prefix="memlane-int8-") as tmp:
        source, target = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        source.write_bytes(fp32)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                root = logging.getLogger()
                level, root.level = root.level, logging.ERROR  # its advice to pre-process goes to the root logger
                try:
                    quantize_dynamic(source, target, weight_type=QuantType.QInt8, per_channel=recipe.per_channel,
                                     op_types_to_quantize=list(recipe.op_types),
                                     nodes_to_exclude=list(recipe.keep_fp32))
                finally:
                    root.setLevel(level)
        except Exception as exc:  # the graph rejected: name the step that failed
            raise EmbeddingError(f"could not quantise the ONNX export to int8 ({type(exc).__name__}: {exc})") from exc
        return target.read_bytes()
