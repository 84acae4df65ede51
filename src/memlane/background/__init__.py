"""Background formation: queued adds formed by worker threads (workers.py)."""
