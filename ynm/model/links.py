"""The rels a link between memories may have, and how links are written as input (``--links``
of remember, supersede and annotate). Imports nothing, so every command's help can name them
without loading the record model (pydantic).

Source: seed 000 and reference/storage.md §1.2 (the rels); reference/cli.md §1.3 (an array
of objects is given to a flag as JSON).
"""

from __future__ import annotations

# The rels of reference/storage.md §1.2, in its order; ynm.model.records.Rel is made of them.
RELS: tuple[str, ...] = ("supersedes", "derives-from", "contradicts", "supports", "about",
                         "in-session")
EXAMPLE_MEMORY_ID = "01JZ8Q6W3N5V2R4T7Y9B1C3D5E"  # a well-formed memory id, for examples only
LINKS_EXAMPLE = f'[{{"rel": "about", "to": "{EXAMPLE_MEMORY_ID}"}}]'
LINKS_FORM = ('a JSON array of {"rel", "to"} objects: rel is one of ' + ", ".join(RELS)
              + "; to is the id of the memory linked to")


def links_hint(flag: str = "--links") -> str:
    """What ``flag`` takes, with an example, for the help and the hint of a malformed value:
    ``--links takes a JSON array of {"rel", "to"} objects: rel is one of supersedes, ...; to
    is the id of the memory linked to; e.g. --links '[{"rel": "about", "to": "01JZ..."}]'``."""
    return f"{flag} takes {LINKS_FORM}; e.g. {flag} '{LINKS_EXAMPLE}'"
