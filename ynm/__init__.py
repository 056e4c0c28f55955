"""ynm: long-term memory for coding agents and their people, kept in git notes.

Memories are append-only JSON records stored in git notes refs; a rebuildable SQLite cache
holds the folded state for fast recall. See README.md and docs/.
"""

__version__ = "0.1.0"
