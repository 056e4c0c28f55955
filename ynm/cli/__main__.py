"""``python -m ynm.cli``: the same as the ``ynm`` command."""

from ynm.cli import main

main()
