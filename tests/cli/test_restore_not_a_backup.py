"""``memlane restore FILE`` with a file that is no memlane backup: one line saying so and why, exit status 1,
nothing restored and no store opened, whatever the file is."""

from __future__ import annotations

import io
import json
import tarfile

import pytest


def _tar(path, members: dict[str, bytes], mode: str = "w:gz") -> None:
    with tarfile.open(path, mode) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


CASES = [
    # (what the file is, how it is made, the reason given)
    ("a text file", lambda p: p.write_text("hello\n"), "not a tar archive"),
    ("an empty file", lambda p: p.write_bytes(b""), "an empty file"),
    ("a missing file", lambda p: None, "no such file"),
    ("a gzipped tar of something else", lambda p: _tar(p, {"notes.txt": b"hi"}), "a tar archive without manifest.json"),
    ("a plain tar of something else", lambda p: _tar(p, {"notes.txt": b"hi"}, "w"), "without manifest.json"),
    ("a tar whose manifest is not JSON", lambda p: _tar(p, {"manifest.json": b"nope"}), "is not a memlane backup's"),
    ("a tar with another program's manifest", lambda p: _tar(p, {"manifest.json": json.dumps({"format": "x"}).encode()}),
     "is not a memlane backup's"),
    ("a memlane backup of a later format", lambda p: _tar(p, {"manifest.json": json.dumps(
        {"format": "memlane-backup", "version": 99}).encode()}), "format version 99"),
    ("a truncated gzip", lambda p: p.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 6), "not a memlane backup"),
]


@pytest.mark.parametrize("what, make, reason", CASES, ids=[c[0] for c in CASES])
def test_restore_says_the_file_is_not_a_backup(cli, tmp_path, what, make, reason):
    file = tmp_path / "not-a-backup"
    make(file)
    result = cli("restore", file, ok=False)
    message = " ".join(result.stderr.split())
    assert result.exit_code == 1, result.output
    assert f"{file} is not a memlane backup (" in message and reason in message, message
    assert "ReadError" not in result.output and "method gz" not in result.output and "Traceback" not in result.output
    assert not (tmp_path / "home" / "memlane.db").exists()  # nothing was opened or restored
