"""Text analysis shared by the stores and the pipelines: the keyword analyser and normalisation."""
