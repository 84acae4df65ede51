"""Memory maintenance (seed 002): cleaning up old memories and merging near-duplicates.

``similar`` finds near-duplicate groups in a scope's vectors; ``plans`` turns a call into change
sets and its report. Nothing here opens the store: ``Memory`` reads, embeds and applies.
"""
