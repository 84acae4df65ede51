"""Test doubles that count a search's or an insert's work, not its time."""

from __future__ import annotations


class TokenCounting:
    """An embedder wrapper recording the texts whose token vectors it computes (MaxSim's work)."""

    def __init__(self, inner):
        self.inner, self.name, self.dims = inner, inner.name, inner.dims
        self.token_texts: list[str] = []

    def embed(self, texts, purpose):
        return self.inner.embed(texts, purpose)

    def embed_with_tokens(self, texts, purpose="document"):
        self.token_texts.extend(texts)
        return self.inner.embed_with_tokens(texts, purpose)


def built_records(monkeypatch, store_class) -> list[str]:
    """A list that receives, in order, the id of every record ``store_class`` builds from a row (``_record``)
    until ``monkeypatch`` undoes it at the test's end."""
    built: list[str] = []
    original = store_class._record

    def counting(self, row):
        record = original(self, row)
        built.append(record.id)
        return record

    monkeypatch.setattr(store_class, "_record", counting)
    return built


def sent_statements(monkeypatch) -> list[str]:
    """A list that receives the text of every statement a psycopg connection executes, until
    ``monkeypatch`` undoes it (its ``undo()`` stops the counting early)."""
    import psycopg

    sent: list[str] = []
    execute = psycopg.Connection.execute

    def counting(self, query, params=None, **kwargs):
        sent.append(str(query))
        return execute(self, query, params, **kwargs)

    monkeypatch.setattr(psycopg.Connection, "execute", counting)
    return sent
