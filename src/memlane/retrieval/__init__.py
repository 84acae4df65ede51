"""Retrieval stages beyond plain vector search: keyword fusion, reranking, relevance filtering.

Each stage is a function over a candidate list; ``memory.py`` fetches the
candidates and runs the stages under a ``Trace`` so that any stage can fail on
its own without failing the search.
"""
