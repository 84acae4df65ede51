"""The command line: ``memlane`` (cli/app.py) and its command groups."""

from memlane.cli.app import main

__all__ = ["main"]
