"""The record: one JSON object per line, one line per change, never edited.

Every field, limit and cross-field rule of seed 000 and reference/storage.md §1.2-§1.3:

- the top level is strict (an unknown key makes the line invalid); ``provenance`` and each link
  drop unknown keys instead (storage.md §1.1, §7.11);
- ``id`` and ``memoryId`` are uppercase ULIDs; ``v`` is the literal ``1``;
- date-times are ISO 8601 with ``Z`` or an offset; a bare ``YYYY-MM-DD`` becomes midnight UTC;
- ``create``/``supersede`` need non-empty content; ``create`` has ``memoryId == id``;
  ``supersede`` carries a ``supersedes`` link; ``snapshot`` carries ``data``; ``working``
  records live under ``session/``.

Field names are snake_case in Python and camelCase on disk (aliases); serialising a record is
:func:`ynm.model.jsonl.dumps_record`, which writes the reference's key order.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ynm.model.durations import ensure_duration
from ynm.model.ids import is_ulid
from ynm.model.namespaces import namespace_problem

SCHEMA_VERSION = 1
Op = Literal["create", "supersede", "annotate", "tombstone", "purge-marker", "snapshot"]
MemoryType = Literal["working", "episodic", "semantic", "procedural", "reflective", "reference"]
Level = Literal["personal", "distributed"]
Rel = Literal["supersedes", "derives-from", "contradicts", "supports", "about", "in-session"]
OPS: tuple[str, ...] = ("create", "supersede", "annotate", "tombstone", "purge-marker", "snapshot")
RELS: tuple[str, ...] = ("supersedes", "derives-from", "contradicts", "supports", "about", "in-session")
RESERVED_TAGS = ("promote", "occurrence")
OCCURRENCE_TAG = "occurrence"
PROMOTE_TAG = "promote"

CONTENT_MAX_CHARS = 65536
SUMMARY_MAX_CHARS = 280
SUBJECT_MAX_CHARS = 200
TAG_MAX_CHARS = 64
DATA_SCHEMA_MAX_CHARS = 100
REASON_MAX_CHARS = 1000

_DATETIME_RE = re.compile(
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$"
)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def js_length(value: str) -> int:
    """Length as JavaScript counts it (UTF-16 code units): characters outside the Basic
    Multilingual Plane count twice. The reference's length limits are in these units."""
    if value.isascii():
        return len(value)
    return len(value) + sum(1 for ch in value if ord(ch) > 0xFFFF)


# Optional keys that may be written as null: only validTo (storage.md §1.2).
_NULLABLE = frozenset({"validTo"})
_LIMITS = (("subject", SUBJECT_MAX_CHARS), ("content", CONTENT_MAX_CHARS),
           ("summary", SUMMARY_MAX_CHARS), ("data_schema", DATA_SCHEMA_MAX_CHARS),
           ("reason", REASON_MAX_CHARS))


def normalize_datetime(value: str) -> str:
    """Check an ISO 8601 date-time (``Z`` or offset required) and return it; a bare date
    ``YYYY-MM-DD`` becomes ``YYYY-MM-DDT00:00:00.000Z`` (reference/storage.md §1.2).

    The string is kept as written: the fold compares ``recordedAt`` as text (storage.md §7.1).

    Raises:
        ValueError: not an ISO 8601 date-time.
    """
    if _DATE_RE.match(value):
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("expected an ISO 8601 date-time") from None
        return value + "T00:00:00.000Z"
    if not _DATETIME_RE.match(value):
        raise ValueError("expected an ISO 8601 date-time")
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError("expected an ISO 8601 date-time") from None
    return value


class _Nested(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True
    )


class Provenance(_Nested):
    """Where a record came from. ``actor`` is required; unknown keys are dropped (storage.md §1.1)."""

    actor: StrictStr = Field(min_length=1)
    client: StrictStr | None = None
    session: StrictStr | None = None
    source: StrictStr | None = None
    tool: StrictStr | None = None


class Link(_Nested):
    """A typed link to another memory: ``rel`` and the target ``memoryId`` in ``to``."""

    rel: Rel
    to: StrictStr

    @field_validator("to")
    @classmethod
    def _to_is_ulid(cls, v: str) -> str:
        if not is_ulid(v):
            raise ValueError("must be a ULID")
        return v

    @property
    def key(self) -> str:
        """``<rel>:<to>``, the identity used when links are merged (storage.md §2.4)."""
        return f"{self.rel}:{self.to}"


class Record(BaseModel):
    """One line of a shard. Immutable. Field order is the on-disk key order (storage.md §1.1)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
    )

    v: Literal[1]
    id: StrictStr
    memory_id: StrictStr
    op: Op
    type: MemoryType
    level: Level
    namespace: StrictStr
    subject: StrictStr | None = Field(default=None, max_length=SUBJECT_MAX_CHARS)
    tags: list[StrictStr] = Field(default_factory=list)
    content: StrictStr | None = Field(default=None, max_length=CONTENT_MAX_CHARS)
    summary: StrictStr | None = Field(default=None, max_length=SUMMARY_MAX_CHARS)
    data: dict[str, Any] | None = None
    data_schema: StrictStr | None = Field(default=None, max_length=DATA_SCHEMA_MAX_CHARS)
    importance: float | None = Field(default=None, ge=0, le=1, strict=True)
    confidence: float | None = Field(default=None, ge=0, le=1, strict=True)
    pinned: StrictBool | None = None
    needs_review: StrictBool | None = None
    recorded_at: StrictStr
    valid_from: StrictStr | None = None
    valid_to: StrictStr | None = None
    ttl: StrictStr | None = None
    provenance: Provenance
    links: list[Link] = Field(default_factory=list)
    reason: StrictStr | None = Field(default=None, max_length=REASON_MAX_CHARS)

    @model_validator(mode="before")
    @classmethod
    def _no_nulls(cls, data: Any) -> Any:
        # JSON null is a value only for validTo; elsewhere an optional key is left out.
        if isinstance(data, dict):
            for key, value in data.items():
                if value is None and key not in _NULLABLE:
                    raise ValueError(f"{key}: expected a value, not null")
            if isinstance(data.get("v"), bool):
                raise ValueError("v: unknown schema version")
        return data

    @field_validator("id", "memory_id")
    @classmethod
    def _ulid(cls, v: str) -> str:
        if not is_ulid(v):
            raise ValueError("must be a ULID")
        return v

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, v: str) -> str:
        problem = namespace_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: list[str]) -> list[str]:
        for tag in v:
            if not 1 <= js_length(tag) <= TAG_MAX_CHARS:
                raise ValueError(f"each tag must be 1..{TAG_MAX_CHARS} characters")
        return v

    @field_validator("recorded_at", "valid_from", "valid_to")
    @classmethod
    def _datetime(cls, v: str | None) -> str | None:
        return None if v is None else normalize_datetime(v)

    _ttl = field_validator("ttl")(classmethod(lambda cls, v: ensure_duration(v)))

    @model_validator(mode="after")
    def _cross_field(self) -> Record:
        for name, limit in _LIMITS:
            value = getattr(self, name)
            if value is not None and not value.isascii() and js_length(value) > limit:
                raise ValueError(f"{to_camel(name)}: must be at most {limit} characters")
        # Cross-field rules of reference/storage.md §1.3, in its order.
        if self.op in ("create", "supersede") and not self.content:
            raise ValueError(f"content: a {self.op} record needs content")
        if self.op == "create" and self.memory_id != self.id:
            raise ValueError("memoryId: a create record has memoryId equal to id")
        if self.op == "supersede" and not any(link.rel == "supersedes" for link in self.links):
            raise ValueError("links: a supersede record needs a supersedes link")
        if self.op == "snapshot" and self.data is None:
            raise ValueError("data: a snapshot record needs data")
        if self.type == "working" and not self.namespace.startswith("session/"):
            raise ValueError("namespace: working memory must live in session/<id>")
        return self

    @property
    def bucket(self) -> str:
        """The UTC month ``yyyy-mm`` of ``recordedAt`` (its first seven characters)."""
        return self.recorded_at[:7]

    @property
    def sort_key(self) -> tuple[str, str]:
        """``(recordedAt, id)``: the fold order (storage.md §2.2)."""
        return (self.recorded_at, self.id)


def validation_message(err: ValidationError) -> str:
    """Render a pydantic error as ``<path.joined.by.dots>: <message>[; ...]`` (cli.md §1.3).

    Model-level errors carry their own ``<field>: `` prefix.
    """
    parts = []
    for issue in err.errors(include_url=False):
        loc = ".".join(to_camel(p) if isinstance(p, str) else str(p) for p in issue["loc"])
        msg = issue["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        parts.append(f"{loc}: {msg}" if loc else msg)
    return "; ".join(parts)
