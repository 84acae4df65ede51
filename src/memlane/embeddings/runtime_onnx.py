"""The local model on ONNX Runtime: an exported graph (``onnx_export``), the model's fast tokenizer
(``tokenizers``, Rust) with sentence-transformers' truncation, mean pooling and L2 normalisation in
numpy. Importing this module loads neither torch nor transformers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from memlane.core.errors import ConfigError, EmbeddingError
from memlane.embeddings.length_batches import length_batches
from memlane.embeddings.model_dir import OnnxPlan
from memlane.embeddings.runtime import TokenOutput


class OnnxRuntime:
    def __init__(self, graph: bytes, plan: OnnxPlan, threads: int | None, origin: Path):
        """Run ``graph`` (the ONNX export of the model in ``origin``) with the model's tokenizer."""
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            raise ConfigError("the local embedder's ONNX runtime needs onnxruntime and tokenizers: "
                              "pip install 'memlane[local]', or set embedder.config.runtime to 'torch'") from None
        self.tokenizer = Tokenizer.from_file(str(plan.tokenizer))
        # sentence-transformers truncates at max_seq_length and pads per batch (tokenizer.json may say otherwise)
        self.tokenizer.enable_truncation(plan.max_seq_length)
        self.tokenizer.no_padding()
        self.special_ids = frozenset(i for i, token in self.tokenizer.get_added_tokens_decoder().items()
                                     if token.special)
        options = ort.SessionOptions()
        # idle intra-op threads sleep instead of spinning: spinning takes the cores from the Python threads
        # around the model (and from other processes); on the busy 2-core machine a query took 3.8 ms
        # instead of 7.7, a batch of 64 123 ms instead of 167 (benchmarks/history/embedding.md)
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if threads is not None:
            options.intra_op_num_threads = threads
        try:
            self.session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # a graph ONNX Runtime rejects (the checksum matched: written so)
            raise EmbeddingError(f"ONNX Runtime could not load the export of {origin}: {exc}") from exc

    def use_threads(self, threads: int | None) -> None:
        """Nothing to do: the session was created with the embedder's threads (a session option)."""

    def sentences(self, texts: Sequence[str], batch_size: int) -> np.ndarray:
        outputs = self.outputs(texts, batch_size)
        return np.stack([o.sentence for o in outputs]) if outputs else np.empty((0, 0), dtype=np.float32)

    def outputs(self, texts: Sequence[str], batch_size: int) -> list[TokenOutput]:
        encodings = self.tokenizer.encode_batch(list(texts))
        result: list[TokenOutput | None] = [None] * len(encodings)
        for batch in length_batches([len(e.ids) for e in encodings], batch_size):  # similar lengths, longest first
            width = len(encodings[batch[0]].ids)
            ids = np.zeros((len(batch), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                ids[row, :n], mask[row, :n] = encodings[i].ids, 1
            hidden = self.session.run(None, {"ids": ids, "mask": mask, "types": np.zeros_like(ids)})[0]
            for row, i in enumerate(batch):
                n = len(encodings[i].ids)
                tokens = np.ascontiguousarray(hidden[row, :n], dtype=np.float32)
                pooled = tokens.mean(axis=0)
                result[i] = TokenOutput(ids=ids[row, :n].copy(), tokens=tokens,
                                        sentence=pooled / max(float(np.linalg.norm(pooled)), 1e-12))
        return result  # type: ignore[return-value]

    def pieces(self, ids: Sequence[int]) -> list[str]:
        return [self.tokenizer.id_to_token(int(i)) or "" for i in ids]
