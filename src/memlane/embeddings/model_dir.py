"""What a sentence-transformers model directory says about itself, read from its files without
importing torch: the output size, whether ONNX Runtime can run it exactly as sentence-transformers
does, and a checksum of its contents (the key of its ONNX export)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: the only sentence-transformers modules the ONNX runtime reproduces (Normalize is applied anyway)
_TRANSFORMER, _POOLING, _NORMALIZE = (f"sentence_transformers.models.{module}"
                                      for module in ("Transformer", "Pooling", "Normalize"))
#: a BERT-style encoder: token ids, attention mask and token types in, hidden states out
_BERT_STYLE = {"bert"}


@dataclass(frozen=True)
class OnnxPlan:
    """How the ONNX runtime reproduces the model: its tokenizer and sentence-transformers' truncation."""

    tokenizer: Path
    max_seq_length: int


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _modules(path: Path) -> list[dict]:
    return _json(path / "modules.json")


def output_dims(path: Path) -> int | None:
    """The sentence vector's size from the pooling config, or None when only the model can tell."""
    try:
        modules = _modules(path)
        if any("Dense" in m.get("type", "") for m in modules):
            return None  # a projection layer changes the size; ask the model
        pooling = next(m for m in modules if m.get("type", "").endswith("Pooling"))
        return int(_json(path / pooling["path"] / "config.json")["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, StopIteration):
        return None


def onnx_plan(path: Path) -> OnnxPlan | str:
    """An ``OnnxPlan`` when the model is a plain BERT-style encoder with mean pooling (and optional
    normalisation), which ONNX Runtime reproduces; otherwise the reason it does not (a string)."""
    try:
        types = [m.get("type", "") for m in _modules(path)]
        if types[:2] != [_TRANSFORMER, _POOLING] or any(t != _NORMALIZE for t in types[2:]):
            return f"its modules are {types}, not Transformer, Pooling (mean) and Normalize"
        pooling_dir = path / _modules(path)[1]["path"]
        pooling = _json(pooling_dir / "config.json")
        modes = {k for k, v in pooling.items() if k.startswith("pooling_mode") and v is True}
        if modes != {"pooling_mode_mean_tokens"}:
            return f"its pooling is {sorted(modes)}, not mean pooling"
        model_type = _json(path / "config.json").get("model_type")
        if model_type not in _BERT_STYLE:
            return f"its model type is {model_type!r}, not BERT-style"
        settings = _json(path / "sentence_bert_config.json")
        if settings.get("do_lower_case") or not isinstance(settings.get("max_seq_length"), int):
            return "its sentence_bert_config.json sets do_lower_case or no max_seq_length"
        if not (path / "tokenizer.json").is_file():
            return "it has no tokenizer.json (a fast tokenizer)"
        return OnnxPlan(tokenizer=path / "tokenizer.json", max_seq_length=settings["max_seq_length"])
    except (OSError, ValueError, KeyError, IndexError, AttributeError) as exc:
        return f"its sentence-transformers files could not be read ({type(exc).__name__}: {exc})"


def source_checksum(path: Path) -> str:
    """sha256 over every file of the model directory (relative names and contents): a changed file
    (weights, config, tokenizer) gives a new checksum, so a stale export is never used."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(file.relative_to(path).as_posix().encode() + b"\0")
        with file.open("rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()
