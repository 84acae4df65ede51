"""Evaluation harnesses over labelled data (``memlane eval ...``)."""
