"""The pure core: records, ids, namespaces, durations, shards, the fold and the ranker. No I/O."""
