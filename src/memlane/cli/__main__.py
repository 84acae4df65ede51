"""``python -m memlane.cli``: the ``memlane`` command."""

from memlane.cli.app import main

main()
