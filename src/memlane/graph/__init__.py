"""Graph memory: entities and the relations between them, extracted from conversations.

Pipelines decide, the facade applies: extraction (``extract``, ``rules``,
``llm_extract``), entity resolution (``resolve``), reconciliation of relations
(``reconcile``) and the graph lookup of a search (``lookup``) are functions over
values; ``memory.py`` reads the store, calls them and writes the outcome.
"""

from memlane.core.graph_models import Entity, Relation, Triple

__all__ = ["Entity", "Relation", "Triple"]
