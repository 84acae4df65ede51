"""A loopback multi-vector embedding service for tests: the ColBERT / ColPali / ColQwen protocol of
seed 003 §4.2, on top of the scripted ``OpenAIServer`` (same threading server, scripts, recording).

    with MultiVectorServer(dims=16) as server:
        server.script(server.path, [Reply(status=503), Reply(json={"output": {}})])
        encoder = create_encoder({"provider": "http", "url": server.endpoint, "dims": 16})
        ...
        assert server.requests(server.path)[0].json["input"]["task"] == "query"

Once its script is used up, the endpoint answers every well-formed request with deterministic
vectors (``vectors_for``): one row per whitespace-separated word of a text, ``image_patches`` rows
per image, so a test can compute what the encoder must return.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from typing import Any

import numpy as np

from support.openai_server import OpenAIServer, Reply, Request

PATH = "/v1/embed"


def vectors_for(task: str, item: str, dims: int, image_patches: int = 4) -> np.ndarray:
    """The (unnormalised) rows the service returns for one input: seeded by task and content."""
    rows = image_patches if task == "image" else max(1, len(item.split()))
    seed = int.from_bytes(hashlib.sha256(f"{task}\x00{item}".encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal((rows, dims)).astype(np.float32) * 3.0


def body(embeddings: list[Any], *, with_index: bool = True) -> dict:
    """A well-formed reply carrying the given per-input token matrices."""
    data = []
    for n, emb in enumerate(embeddings):
        item = {"embedding": np.asarray(emb).tolist() if not isinstance(emb, list) else emb, "object": "embedding"}
        if with_index:
            item["index"] = n
        data.append(item)
    return {"output": {"data": data}}


class ServiceHandler:
    """The default answer: validates the request like a strict service, then embeds."""

    def __init__(self, dims: int, image_patches: int = 4):
        self.dims, self.image_patches = dims, image_patches

    def __call__(self, request: Request) -> Reply:
        payload = request.json
        try:
            task = payload["input"]["task"]
            items = payload["input"]["input_data"]
        except (TypeError, KeyError):
            return Reply(status=422, json={"detail": "expected {input: {task, input_data}}"})
        if task not in ("query", "document", "image") or not isinstance(items, list) \
                or not all(isinstance(i, str) for i in items):
            return Reply(status=422, json={"detail": f"bad task {task!r} or input_data"})
        if task == "image":
            try:
                for item in items:
                    base64.b64decode(item, validate=True)
            except (binascii.Error, ValueError):
                return Reply(status=422, json={"detail": "image input_data must be base64"})
        return Reply(json=body([vectors_for(task, i, self.dims, self.image_patches) for i in items]))


class MultiVectorServer(OpenAIServer):
    def __init__(self, dims: int = 16, image_patches: int = 4):
        super().__init__()
        self.dims = dims
        self.path = PATH
        self.route(PATH, ServiceHandler(dims, image_patches))

    @property
    def endpoint(self) -> str:
        return self.url + PATH
