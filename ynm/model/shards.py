"""Shard keys: which git notes ref a record lives in.

A record goes to ``refs/notes/ynm/<level>/<namespace>/<type>/<yyyy-mm>``, computed from that
record alone (seed 000, "Each record is appended to one shard"). Refs are parsed from the end so
namespaces with type-like or date-like segments stay unambiguous (reference/storage.md §3.2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NOTES_PREFIX = "refs/notes/ynm"
REMOTE_PREFIX = "refs/notes/ynm-remote"
# Named documents (the people document) live beside the notes, outside every shard
# (reference/storage.md §3.2): refs/ynm/<level>/documents/<name>, tracking copies under
# refs/ynm-remote/<remote>/<level>/documents/<name>.
DOCUMENTS_PREFIX = "refs/ynm"
DOCUMENTS_REMOTE_PREFIX = "refs/ynm-remote"
DOCUMENT_NAME_RE = re.compile(r"^[a-z0-9-]+$")
LEVELS = ("personal", "distributed")
TYPES = ("working", "episodic", "semantic", "procedural", "reflective", "reference")
BUCKET_RE = re.compile(r"^\d{4}-(0[1-9]|1[0-2])$")


@dataclass(frozen=True, order=True, slots=True)
class ShardKey:
    """One shard: ``level``, ``namespace``, memory ``type`` and ``bucket`` (``yyyy-mm``, UTC)."""

    level: str
    namespace: str
    type: str
    bucket: str

    @property
    def shard_id(self) -> str:
        """``<level>/<namespace>/<type>/<bucket>``, the id used in indexes and commit messages."""
        return f"{self.level}/{self.namespace}/{self.type}/{self.bucket}"

    @property
    def ref(self) -> str:
        """The git ref holding this shard: ``refs/notes/ynm/<shard_id>``."""
        return f"{NOTES_PREFIX}/{self.shard_id}"

    def remote_ref(self, remote: str) -> str:
        """The remote-tracking copy: ``refs/notes/ynm-remote/<remote>/<shard_id>``."""
        return f"{REMOTE_PREFIX}/{remote}/{self.shard_id}"


def bucket_of(recorded_at: str) -> str:
    """The month bucket ``yyyy-mm`` of a ``recordedAt`` string: the UTC month of its instant
    (seed 000). The reference takes the first seven characters of the text as written, a
    local month for an offset time (storage.md §3.1, §7.2); ynm deliberately does not.

    Raises:
        ValueError: not an ISO 8601 date-time.
    """
    from ynm.model.records import normalize_datetime  # pydantic: only when needed

    return normalize_datetime(recorded_at)[:7]


def key_from_ref(ref: str, prefix: str = NOTES_PREFIX) -> ShardKey | None:
    """Parse a shard ref back into its key, or None when it is not a valid shard ref.

    Needs ``prefix + "/"``, then at least four parts: level first, bucket last (``yyyy-mm``),
    type second to last, namespace the rest (non-empty). Source: reference/storage.md §3.2.
    """
    head = prefix + "/"
    if not ref.startswith(head):
        return None
    parts = ref[len(head):].split("/")
    if len(parts) < 4:
        return None
    level, *ns_parts, type_, bucket = parts
    if level not in LEVELS or type_ not in TYPES or not BUCKET_RE.match(bucket):
        return None
    namespace = "/".join(ns_parts)
    if not namespace or "" in ns_parts:
        return None
    return ShardKey(level, namespace, type_, bucket)


def ref_prefix_for(level: str, namespace: str | None = None) -> str:
    """Listing prefix ``refs/notes/ynm/<level>/[<namespace>/]`` (storage.md §3.2)."""
    out = f"{NOTES_PREFIX}/{level}/"
    if namespace:
        out += namespace.strip("/") + "/"
    return out


def document_ref(level: str, name: str) -> str:
    """``refs/ynm/<level>/documents/<name>``: the ref whose commits hold a named document
    (reference/storage.md §3.2).

    Raises:
        ValueError: a name that does not match ``^[a-z0-9-]+$``.
    """
    if not DOCUMENT_NAME_RE.match(name):
        raise ValueError(f"bad document name {name!r}: must match ^[a-z0-9-]+$")
    return f"{DOCUMENTS_PREFIX}/{level}/documents/{name}"


def snapshot_fix(ref: str) -> str:
    """What mends an unusable snapshot at ``ref``: ``ynm compact`` writes it again, or
    ``git update-ref -d <ref>`` removes it."""
    return f"`ynm compact` rewrites it, or `git update-ref -d {ref}` removes it"
