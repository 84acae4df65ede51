"""A search's text on multilingual-e5-small runs on threads that spin while the machine has idle cores,
and on the same computation without spinning while every core is busy (embeddings/cpu_load.py)."""

import os

import numpy as np
import pytest

from memlane.embeddings import cpu_load

QUESTIONS = ["What is my dog's name?", "用户养了一只叫什么的狗？", "Where does my brother work now?",
             "¿Dónde trabaja mi hermano?", "when did Melanie paint the sunrise"]


def _raise_oserror():
    raise OSError("no load average")


@pytest.mark.parametrize("load, cores, busy", [
    ((0.3, 0.2, 0.1), 2, False),
    ((1.9, 1.0, 1.0), 2, False),
    ((2.0, 1.0, 1.0), 2, True),
    ((23.0, 20.0, 15.0), 2, True),
    ((3.5, 3.0, 3.0), 4, False),
    (None, 2, False),  # no load average on this platform
])
def test_cores_are_busy_when_the_load_average_fills_them(monkeypatch, load, cores, busy):
    monkeypatch.setattr(os, "getloadavg", (lambda: load) if load else _raise_oserror)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cores)), raising=False)
    assert cpu_load.cores_busy() is busy


def _spins(session) -> str:
    return session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning")


@pytest.mark.model
def test_a_busy_machine_embeds_the_search_without_spinning_and_the_same_vectors(e5_embedder, monkeypatch):
    from memlane.embeddings import e5

    runtime = e5_embedder._model().runtime
    used = []
    for name in ("query_session", "_calm_query"):
        monkeypatch.setattr(runtime, name, getattr(runtime, name))  # put back after the test
    real_runner = runtime._query_runner

    def runner():
        used.append(real_runner())
        return used[-1]

    monkeypatch.setattr(runtime, "_query_runner", runner)
    monkeypatch.setattr(e5, "cores_busy", lambda: False)
    quiet = e5_embedder.embed(QUESTIONS, "query")
    monkeypatch.setattr(e5, "cores_busy", lambda: True)
    busy = e5_embedder.embed(QUESTIONS, "query")
    assert [_spins(s) for s in used] == ["1", "0"]
    assert used[0] is runtime.query_session and used[1] is not runtime.session  # int8, as a search is
    np.testing.assert_allclose(busy, quiet, atol=1e-6)
    e5_embedder.embed(["a stored text"], "document")
    assert len(used) == 2  # stored texts run on their own session, whatever the load
