"""The ONNX export of a local model, made once with torch and cached.

``model_bytes`` returns the ONNX graph of a sentence-transformers model directory (its Transformer
module: token ids, attention mask and token types in, hidden states out), fp32 or with int8 dynamic
quantisation. Exports are cached in one directory under names that carry two checksums::

    all-MiniLM-L6-v2-<source checksum>-fp32.<checksum of this file>.onnx

The source checksum covers every file of the model directory, so a changed model gets a new export;
the file's own checksum is verified on every load, so a corrupt or truncated file is rebuilt rather
than run. A file is written under a temporary name and renamed into place: a concurrent process sees
the whole file or none. torch is needed for the export only; later processes never import it.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import warnings
from pathlib import Path
from typing import Literal

from memlane.core.errors import ConfigError, EmbeddingError
from memlane.embeddings.model_dir import source_checksum

Variant = Literal["fp32", "int8"]
_DIGEST = 16  # hex characters of a checksum in a file name
#: the ONNX opset of the export (ONNX Runtime 1.17 and later run it)
OPSET = 17


def model_bytes(source: Path, name: str, cache: Path, variant: Variant) -> bytes:
    """The verified ONNX graph of the model in ``source`` (called ``name``) in ``variant``, exported
    (and cached) if need be."""
    stem = f"{name}-{source_checksum(source)[:_DIGEST]}-{variant}"
    cached = _read_verified(cache, stem)
    if cached is not None:
        return cached
    data = quantize_int8(model_bytes(source, name, cache, "fp32")) if variant == "int8" else export_fp32(source)
    _write_atomic(cache, stem, data)
    return data


def _checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:_DIGEST]


def _read_verified(cache: Path, stem: str) -> bytes | None:
    """The cached file of ``stem`` whose contents match the checksum in its name; files that do not
    (corrupt, truncated) are removed."""
    if not cache.is_dir():
        return None
    for file in cache.iterdir():
        name = file.name
        if not (name.startswith(stem + ".") and name.endswith(".onnx")):
            continue
        data = file.read_bytes()
        if _checksum(data) == name[len(stem) + 1:-len(".onnx")]:
            return data
        file.unlink(missing_ok=True)
    return None


def _write_atomic(cache: Path, stem: str, data: bytes) -> Path:
    temporary = None
    try:
        cache.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=cache, prefix=f".{stem}.", suffix=".partial")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide the export from other users of the cache
        target = cache / f"{stem}.{_checksum(data)}.onnx"
        os.replace(temporary, target)
    except OSError as exc:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)  # a full disk leaves no partial file behind
        raise ConfigError(f"could not write the ONNX export to {cache} ({exc}); set embedder.config.cache_dir "
                          "or $MEMLANE_MODEL_CACHE to a writable directory") from None
    return target


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


def quantize_int8(fp32: bytes) -> bytes:
    """Dynamic quantisation: int8 weights, one scale per output channel (per tensor lost 4x more cosine to
    fp32 on LoCoMo turns: mean 0.957 against 0.992), activations quantised per run."""
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
                    quantize_dynamic(source, target, weight_type=QuantType.QInt8, per_channel=True)
                finally:
                    root.setLevel(level)
        except Exception as exc:  # the graph rejected: name the step that failed
            raise EmbeddingError(f"could not quantise the ONNX export to int8 ({type(exc).__name__}: {exc})") from exc
        return target.read_bytes()
