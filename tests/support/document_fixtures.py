"""Fixtures of the document tests that encode with the real local model on each backend; a module
imports them (a second ``conftest.py`` would shadow the top-level one that tests import helpers from)."""

import pytest

from memlane import Documents, Memory
from memlane.documents.encoders import LocalTokenEncoder


@pytest.fixture
def encoder(embedder):
    return LocalTokenEncoder(embedder)


@pytest.fixture
def memory(backend_memory):
    """The real model on a fresh store of each backend (conftest's ``backend_memory``); where imported it
    replaces the top-level hashing-embedder ``memory``."""
    return backend_memory


@pytest.fixture
def open_docs(backend, e5_embedder):
    """Opens ``Documents`` (auto, or with a configuration's ``documents`` block: ``open_docs(extra)``) over one
    store, again and again: a reopened one is a new process's view of the same store."""
    store = backend()
    opened = []

    def open_(extra: dict | None = None) -> Documents:
        memory = Memory({**store, **(extra or {})}, embedder=e5_embedder)
        docs = Documents(memory=memory)
        opened.append((memory, docs))
        return docs

    yield open_
    for memory, docs in opened:
        docs.close()
        memory.close()
