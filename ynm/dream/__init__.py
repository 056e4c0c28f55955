"""Consolidation ("dream"): the passes that keep a store clean, and the judge and writer seams
the passes consult. Source: seed 001_081b959aa587e8cd.txt and reference/algorithms.md §4."""
