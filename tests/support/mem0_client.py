"""The official mem0 Python client (``mem0ai``), imported once per test session.

mem0 reads ``MEM0_TELEMETRY`` and ``MEM0_DIR`` when it is first imported (its PostHog client, its
config file), so every test module that drives it shares one import and one directory: telemetry
off, its files in a temporary directory, for the whole session. tests/conftest.py registers this
module as a plugin; a module that imports the fixture as well gets the same directory.
"""

from __future__ import annotations

import pytest

#: the session's mem0 directory, made by the first use of the fixture
_directory: list[str] = []


@pytest.fixture(scope="session")
def mem0(tmp_path_factory):
    if not _directory:
        _directory.append(str(tmp_path_factory.mktemp("mem0-dir")))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEM0_TELEMETRY", "False")
        patch.setenv("MEM0_DIR", _directory[0])
        import mem0
        import mem0.exceptions
        from mem0.memory import telemetry

        assert telemetry.MEM0_TELEMETRY is False, "mem0 was imported before telemetry was switched off"
        yield mem0
