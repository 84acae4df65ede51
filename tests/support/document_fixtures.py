"""Fixtures of the document tests that encode with the real local model on each backend; a module
imports them (a second ``conftest.py`` would shadow the top-level one that tests import helpers from)."""

import pytest

from memlane.documents.encoders import LocalTokenEncoder


@pytest.fixture
def encoder(embedder):
    return LocalTokenEncoder(embedder)


@pytest.fixture
def memory(backend_memory):
    """The real model on a fresh store of each backend (conftest's ``backend_memory``); where imported it
    replaces the top-level hashing-embedder ``memory``."""
    return backend_memory
