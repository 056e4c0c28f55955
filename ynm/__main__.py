"""``python -m ynm``: the same as the ``ynm`` command."""

from ynm.cli import main

main()
