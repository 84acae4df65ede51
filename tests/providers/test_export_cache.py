"""The directory of ONNX exports (no model is loaded): verified reads, and the removal of exports a new
one supersedes: never a file being written, another model's, or anything that is not an export."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from memlane.embeddings import export_cache
from memlane.embeddings.export_cache import checksum, file_stem, read_verified, remove_stale, write_atomic
from memlane.embeddings.onnx_export import INT8, Int8Recipe, variant_tag

MODEL = "all-MiniLM-L6-v2"
OLD, NEW = "a" * 64, "b" * 64  # source checksums of two versions of the model


def _write(cache: Path, name: str, source: str, tag: str, data: bytes | None = None) -> Path:
    return write_atomic(cache, file_stem(name, source, tag), data or f"{name} {source} {tag}".encode())


def _names(cache: Path) -> set[str]:
    return {f.name for f in cache.iterdir()}


def test_an_export_supersedes_the_older_exports_of_its_model_and_nothing_else(tmp_path):
    cache = tmp_path / "models"
    old_fp32 = _write(cache, MODEL, OLD, "fp32")
    old_int8 = _write(cache, MODEL, OLD, "int8")  # the recipe before int8 had a tag of its own
    other_model = _write(cache, "all-MiniLM-L12-v2", OLD, "fp32")
    longer_name = _write(cache, MODEL + "-finetuned", OLD, "fp32")  # its name starts like this model's
    in_flight = cache / f".{file_stem(MODEL, OLD, 'fp32')}.k3j2h1.partial"
    in_flight.write_bytes(b"another process is writing this")
    unrelated = [cache / "notes.txt", cache / f"{MODEL}-readme.onnx", cache / f"{old_fp32.name}.bak"]
    for file in unrelated:
        file.write_text("not an export")
    (cache / f"{MODEL}-{OLD[:16]}-fp32.{'c' * 16}.onnx").mkdir()  # a directory named like an export
    outside = tmp_path / old_fp32.name
    outside.write_bytes(b"an export next to the cache, not in it")
    (cache / f"{MODEL}-{'d' * 16}-fp32.{'e' * 16}.onnx").symlink_to(outside)

    new_fp32 = _write(cache, MODEL, NEW, "fp32")
    removed = remove_stale(cache, MODEL, NEW, "fp32")

    assert sorted(removed) == sorted([old_fp32, old_int8])
    assert not old_fp32.exists() and not old_int8.exists()
    for kept in [new_fp32, other_model, longer_name, in_flight, *unrelated, outside]:
        assert kept.exists(), kept.name
    assert len(_names(cache)) == 9


def test_the_int8_export_keeps_the_fp32_it_was_made_from_and_removes_an_older_recipe(tmp_path):
    fp32 = _write(tmp_path, MODEL, NEW, "fp32")
    old_recipe = _write(tmp_path, MODEL, NEW, "int8_00000000")
    current = _write(tmp_path, MODEL, NEW, INT8.tag)
    assert remove_stale(tmp_path, MODEL, NEW, INT8.tag) == [old_recipe]
    assert _names(tmp_path) == {fp32.name, current.name}
    assert remove_stale(tmp_path, MODEL, NEW, "fp32") == []  # and a new fp32 keeps the int8 of its source


def test_two_files_of_the_current_export_both_stay(tmp_path):
    """Two processes exported at once and their bytes differ: both are the current export."""
    first = _write(tmp_path, MODEL, NEW, "fp32", b"one export")
    second = _write(tmp_path, MODEL, NEW, "fp32", b"a concurrent export")
    assert first != second and remove_stale(tmp_path, MODEL, NEW, "fp32") == []
    assert read_verified(tmp_path, file_stem(MODEL, NEW, "fp32")) in (b"one export", b"a concurrent export")


def test_a_file_that_cannot_be_removed_is_logged_and_left(tmp_path, monkeypatch, caplog):
    old = _write(tmp_path, MODEL, OLD, "fp32")
    older = _write(tmp_path, MODEL, "9" * 64, "fp32")
    real_unlink = Path.unlink

    def unlink(self, missing_ok=False):
        if self == old:
            raise PermissionError(13, "Permission denied", str(self))
        return real_unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", unlink)
    with caplog.at_level(logging.WARNING, logger=export_cache.__name__):
        assert remove_stale(tmp_path, MODEL, NEW, "fp32") == [older]
    assert old.exists() and not older.exists()
    assert "could not remove the old ONNX export" in caplog.text and old.name in caplog.text


def test_a_cache_that_does_not_exist_removes_nothing(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger=export_cache.__name__):
        assert remove_stale(tmp_path / "missing", MODEL, NEW, "fp32") == []
    assert "could not list the model cache" in caplog.text


def test_a_file_removed_between_listing_and_reading_is_a_miss(tmp_path):
    stem = file_stem(MODEL, NEW, "fp32")
    (tmp_path / f"{stem}.{checksum(b'gone')}.onnx").symlink_to(tmp_path / "removed by another process")
    assert read_verified(tmp_path, stem) is None
    data = b"the export"
    write_atomic(tmp_path, stem, data)
    assert read_verified(tmp_path, stem) == data


def test_the_int8_tag_names_the_recipe():
    assert variant_tag("fp32") == "fp32"
    assert variant_tag("int8") == INT8.tag and INT8.tag.startswith("int8_") and len(INT8.tag) == 13
    assert Int8Recipe(keep_fp32=INT8.keep_fp32[::-1]).tag == INT8.tag  # the same recipe, the same tag
    changed = [Int8Recipe(), Int8Recipe(keep_fp32=INT8.keep_fp32, per_channel=False),
               Int8Recipe(keep_fp32=INT8.keep_fp32, op_types=("MatMul", "Gather"))]
    assert len({INT8.tag, *(recipe.tag for recipe in changed)}) == 4


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_an_export_is_readable_by_other_users_of_the_cache(tmp_path):
    assert _write(tmp_path, MODEL, NEW, "fp32").stat().st_mode & 0o777 == 0o644
