"""Namespace grammar, whole-segment prefix matching and session ids.

Source: seed 000 (namespaces), reference/storage.md §1.7 and §1.8.
"""

from __future__ import annotations

import re

from ynm.model.shards import BUCKET_RE, TYPES

NAMESPACE_MAX_CHARS = 512
SESSION_ID_MAX_CHARS = 100
_NAMESPACE_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*(/[a-z0-9][a-z0-9._-]*)*$")
_SESSION_RUN_RE = re.compile(r"[^a-z0-9._-]+")
_SESSION_LEAD_RE = re.compile(r"^[^a-z0-9]+")
_DOTS_RE = re.compile(r"\.{2,}")

COMMON = "common"
SESSION_PREFIX = "session/"


def namespace_problem(ns: str) -> str | None:
    """Return why ``ns`` is not a valid namespace, or None when it is.

    Rules: 1..512 characters; ``/``-separated segments, each starting with ``[a-z0-9]`` and made
    of ``[a-z0-9._-]``; no segment contains ``..`` or ends in ``.lock`` (each segment must be a
    valid git ref component). Source: reference/storage.md §1.7.
    """
    if not ns:
        return "namespace must not be empty"
    if len(ns) > NAMESPACE_MAX_CHARS:
        return f"namespace must be at most {NAMESPACE_MAX_CHARS} characters"
    if not _NAMESPACE_RE.match(ns):
        return (
            "namespace must be /-separated segments of [a-z0-9._-], each starting with [a-z0-9]"
        )
    for segment in ns.split("/"):
        if ".." in segment or segment.endswith(".lock"):
            return "namespace segments must not contain '..' or end in '.lock'"
    return None


def shard_collision_problem(ns: str) -> str | None:
    """Return why a *new* memory may not use namespace ``ns`` because one of its shard refs
    could collide with a shard ref of another namespace, or None when it cannot.

    Namespace segments are real ref components, and a shard ref is
    ``refs/notes/ynm/<level>/<namespace>/<type>/<yyyy-mm>``. A namespace holding a memory type
    followed by a month bucket (``yyyy-mm``, month 01..12) after its first segment (``docs/reference/2026-12``,
    ``a/semantic/2026-09/x``) has refs that need ``.../docs/reference/2026-12`` to be a
    directory, while namespace ``docs`` writes a ref file there for its reference memories of
    December 2026; git refuses whichever comes second (reference/storage.md §7.22). Refusing
    such namespaces for new writes removes the conflict in either order: no other namespace can
    make a ref of ``ns`` a prefix of its own. Filters and records already stored are not
    affected: a reader still reads them.
    """
    segments = ns.split("/")
    for i in range(1, len(segments) - 1):
        if segments[i] in TYPES and BUCKET_RE.match(segments[i + 1]):
            clash = "/".join(segments[:i])
            return (f"namespace must not contain a type segment followed by a month "
                    f"('{segments[i]}/{segments[i + 1]}'): its shard refs would collide with "
                    f"those of namespace '{clash}' (use e.g. '{segments[i]}-{segments[i + 1]}')")
    return None


def write_namespace_problem(ns: str) -> str | None:
    """:func:`namespace_problem`, then :func:`shard_collision_problem`: the rule for the
    namespace of a new memory or a new version of one. None when ``ns`` may be written."""
    return namespace_problem(ns) or shard_collision_problem(ns)


def is_valid_namespace(ns: str) -> bool:
    """True when ``ns`` satisfies :func:`namespace_problem`."""
    return namespace_problem(ns) is None


def namespace_matches(ns: str, prefix: str) -> bool:
    """Whole-segment prefix match: ``ns == prefix`` or ``ns`` starts with ``prefix + "/"``.

    ``org/eyelock`` matches ``org/eyelock/x`` but not ``org/eyelockx``. An empty prefix matches
    everything. Source: reference/storage.md §1.7.
    """
    if not prefix:
        return True
    return ns == prefix or ns.startswith(prefix + "/")


def normalize_filter_namespace(ns: str | None) -> str | None:
    """A namespace *filter* in the form a stored namespace can have, or None for no filter.

    Forgiving only where the write rules allow: lower-cased (namespaces are lowercase-only,
    seed 000) and trailing slashes stripped (``Team/Payments/`` -> ``team/payments``; ``/`` and
    ``""`` -> None, reference/algorithms.md §1.3). What is left must satisfy
    :func:`namespace_problem`, since a filter no stored namespace can satisfy would only ever
    answer "no memories". Shard collisions (:func:`shard_collision_problem`) are not checked:
    they refuse new writes, and older stores may hold such namespaces.

    Raises:
        ValueError: ``namespace must be /-separated segments ...`` (the write rule's words).
    """
    if ns is None:
        return None
    stripped = ns.lower().rstrip("/")
    if not stripped:
        return None
    problem = namespace_problem(stripped)
    if problem:
        raise ValueError(problem)
    return stripped


def normalize_session_id(session_id: str) -> str:
    """Normalise a session id into a valid ``session/<id>`` namespace segment, deterministically.

    Steps: lowercase; each run of characters outside ``[a-z0-9._-]`` becomes ``-`` (seed 000);
    each run of dots becomes one dot (a segment must not contain ``..``); leading characters
    outside ``[a-z0-9]`` are stripped (a segment starts with ``[a-z0-9]``); cut to 100
    characters (reference/storage.md §1.8); a trailing ``.lock`` becomes ``-lock`` (a segment
    must not end in ``.lock``). Examples: ``My Session!`` -> ``my-session-``, ``a..b`` ->
    ``a.b``, ``x.lock`` -> ``x-lock``, ``-lead`` -> ``lead``, ``.hidden`` -> ``hidden``.
    The result always passes :func:`namespace_problem` as ``session/<id>`` (at most 108
    characters) and normalising it again changes nothing.

    Unlike the reference, an id with nothing usable left (``!!!``, ``...``, empty) is refused
    rather than becoming ``session``: two such ids would otherwise share one session's
    working memory.

    Raises:
        ValueError: ``session id <id> has no letter or digit ...`` when nothing is left.
    """
    out = _SESSION_RUN_RE.sub("-", session_id.lower())
    out = _DOTS_RE.sub(".", out)
    out = _SESSION_LEAD_RE.sub("", out)
    out = out[:SESSION_ID_MAX_CHARS]
    if out.endswith(".lock"):
        out = out[: -len(".lock")] + "-lock"
    if not out:
        shown = session_id if len(session_id) <= 40 else session_id[:40] + "..."
        raise ValueError(f"session id {shown!r} has no letter or digit [a-z0-9] to name a "
                         "session namespace; use letters, digits, '.', '_' or '-'")
    return out


def session_namespace(session_id: str) -> str:
    """``session/<normalised id>`` (reference/storage.md §1.8).

    Raises:
        ValueError: the id has nothing usable (see :func:`normalize_session_id`)."""
    return SESSION_PREFIX + normalize_session_id(session_id)
