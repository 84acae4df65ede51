"""The directory of ONNX exports: one file per model, model contents and variant, named::

    <model name>-<source checksum>-<variant tag>.<checksum of this file>.onnx

The source checksum covers every file of the model directory, so a changed model gets a new file; the
variant tag says how the graph was made (``fp32``; ``int8_<recipe>`` for a quantisation recipe). The
file's own checksum is verified on every read, so a corrupt or truncated file is rebuilt rather than
run. A file is written under a temporary name (``.<stem>.<random>.partial``) and renamed into place: a
concurrent process sees the whole file or none. After a write, exports of the same model that no
current setting reads (another source checksum, or another recipe of the same variant) are removed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
from pathlib import Path

from memlane.core.errors import ConfigError

DIGEST = 16  # hex characters of a checksum in a file name
_logger = logging.getLogger(__name__)


def checksum(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:DIGEST]


def file_stem(name: str, source: str, tag: str) -> str:
    """The name of an export without its own checksum: model ``name``, ``source`` checksum, variant ``tag``."""
    return f"{name}-{source[:DIGEST]}-{tag}"


def read_verified(cache: Path, stem: str) -> bytes | None:
    """The cached file of ``stem`` whose contents match the checksum in its name; files that do not
    (corrupt, truncated) are removed."""
    if not cache.is_dir():
        return None
    for file in cache.iterdir():
        name = file.name
        if not (name.startswith(stem + ".") and name.endswith(".onnx")):
            continue
        try:
            data = file.read_bytes()
        except FileNotFoundError:  # another process removed it since the listing
            continue
        if checksum(data) == name[len(stem) + 1:-len(".onnx")]:
            return data
        file.unlink(missing_ok=True)
    return None


def write_atomic(cache: Path, stem: str, data: bytes) -> Path:
    temporary = None
    try:
        cache.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=cache, prefix=f".{stem}.", suffix=".partial")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, 0o644)  # mkstemp's 0600 would hide the export from other users of the cache
        target = cache / f"{stem}.{checksum(data)}.onnx"
        os.replace(temporary, target)
    except OSError as exc:
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)  # a full disk leaves no partial file behind
        raise ConfigError(f"could not write the ONNX export to {cache} ({exc}); set embedder.config.cache_dir "
                          "or $MEMLANE_MODEL_CACHE to a writable directory") from None
    return target


def _variant(tag: str) -> str:
    return tag.split("_", 1)[0]


def remove_stale(cache: Path, name: str, source: str, tag: str) -> list[Path]:
    """Remove the exports of model ``name`` in ``cache`` that the export just written (``source``,
    ``tag``) supersedes: those of another source checksum (an older model; any variant) and those of
    the same source and variant made by another recipe. Only finished exports of this model are
    touched (never a temporary file another process is writing, never anything outside ``cache``);
    a file that cannot be removed is logged and left. Returns the files removed."""
    pattern = re.compile(rf"{re.escape(name)}-(?P<source>[0-9a-f]{{{DIGEST}}})-(?P<tag>[a-z0-9]+(?:_[0-9a-f]+)?)"
                         rf"\.[0-9a-f]{{{DIGEST}}}\.onnx")
    source = source[:DIGEST]
    removed = []
    try:
        entries = list(cache.iterdir())
    except OSError as exc:
        _logger.warning("could not list the model cache %s to remove old exports: %s", cache, exc)
        return removed
    for file in entries:
        match = pattern.fullmatch(file.name)
        if match is None or file.is_symlink() or not file.is_file():
            continue
        if match["source"] == source and (match["tag"] == tag or _variant(match["tag"]) != _variant(tag)):
            continue  # the current export of this model, or its other variant (int8 is made from fp32)
        try:
            file.unlink()
        except FileNotFoundError:
            continue  # another process removed it first
        except OSError as exc:
            _logger.warning("could not remove the old ONNX export %s: %s", file, exc)
            continue
        _logger.info("removed the old ONNX export %s (superseded by %s)", file.name, file_stem(name, source, tag))
        removed.append(file)
    return removed
