"""The SQLite cache of one mount: shard state, raw records, folded memories, FTS5 search.

Git is the truth; this file can be deleted at any time and is rebuilt on the next read
(DESIGN.md, "The cache").
"""
