"""Document collections searched by late interaction (multi-vector MaxSim).

    from memlane import Documents
    docs = Documents()                                   # the default store, local token vectors, offline
    docs.create_collection("papers", metadata={"team": "ml"})
    docs.upsert_document("attention", "papers", path="attention.pdf", metadata={"year": 2017})
    docs.search("what is multi-head attention?", collection_name="papers", top_k=3)
"""

from memlane.documents.facade import AsyncDocuments, Documents

__all__ = ["AsyncDocuments", "Documents"]
