"""Memory formation: from messages to facts (extract) and from facts to decisions (reconcile).

Pipelines decide, the facade applies: nothing here opens the store.
"""

from memlane.core.config import MemoryConfig
from memlane.ingest.types import Engine


def create_engine(config: MemoryConfig) -> Engine:
    """The LLM engine when an ``llm`` is configured, else the offline engine."""
    if config.llm is None:
        from memlane.ingest.offline import OfflineEngine

        return OfflineEngine()
    from memlane.ingest.llm_engine import LLMEngine

    return LLMEngine.from_config(config)
