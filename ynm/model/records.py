"""The record: one JSON object per line, one line per change, never edited.

Every field, limit and cross-field rule of seed 000 and reference/storage.md §1.2-§1.3:

- the top level is strict (an unknown key makes the line invalid); ``provenance`` and each link
  drop unknown keys instead (storage.md §1.1, §7.11);
- ``id`` and ``memoryId`` are uppercase ULIDs; ``v`` is the literal ``1``;
- date-times are ISO 8601 with ``Z`` or an offset, or a bare ``YYYY-MM-DD`` (midnight UTC);
  each is held as its instant in canonical UTC, ``YYYY-MM-DDTHH:MM:SS.sssZ``;
- ``create``/``supersede`` need non-empty content; ``create`` has ``memoryId == id``;
  ``supersede`` carries a ``supersedes`` link; ``snapshot`` carries ``data``; ``working``
  records live under ``session/``.

Field names are snake_case in Python and camelCase on disk (aliases); serialising a record is
:func:`ynm.model.jsonl.dumps_record`, which writes the reference's key order.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta, timezone
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
from ynm.model.links import RELS
from ynm.model.namespaces import namespace_problem
from ynm.model.words import counted

SCHEMA_VERSION = 1
Op = Literal["create", "supersede", "annotate", "tombstone", "purge-marker", "snapshot"]
MemoryType = Literal["working", "episodic", "semantic", "procedural", "reflective", "reference"]
Level = Literal["personal", "distributed"]
Rel = Literal[RELS]  # the rels of ynm.model.links (reference/storage.md §1.2), written once
OPS: tuple[str, ...] = ("create", "supersede", "annotate", "tombstone", "purge-marker", "snapshot")
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
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?"
    r"(?:Z|([+-])(\d{2})(?::?(\d{2}))?)",
    re.ASCII,
)
# ISO 8601 basic format: 20261130T120000Z, 20261130T120000.5+0530, 20261130T1200-05.
_BASIC_DATETIME_RE = re.compile(
    r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(?:(\d{2})(?:[.,](\d+))?)?"
    r"(?:Z|([+-])(\d{2})(\d{2})?)",
    re.ASCII,
)
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_CANONICAL_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z", re.ASCII)
_NO_OFFSET_RE = re.compile(
    r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?|\d{8}T\d{4}(?:\d{2}(?:[.,]\d+)?)?",
    re.ASCII)


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


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MS = timedelta(milliseconds=1)
DATETIME_PROBLEM = "expected an ISO 8601 date-time"
DATETIME_FORMS = ("2026-11-30T12:00:00Z, 2026-11-30T17:30:00.250+05:30, 20261130T120000Z "
                  "(basic format) or a date 2026-11-30 (midnight UTC)")
SHOWN_VALUE_CHARS = 40  # of a refused value quoted in its message


def shown_value(value: object) -> str:
    """``value`` as a message quotes it, ``'2026-13'``: Python's repr (control characters
    escaped, so a message never carries a terminal escape), cut to :data:`SHOWN_VALUE_CHARS`
    characters of the value with ``...`` after."""
    if isinstance(value, str) and len(value) > SHOWN_VALUE_CHARS:
        return repr(value[:SHOWN_VALUE_CHARS]) + "..."
    return repr(value)


def datetime_ms(value: str, *, round_up: bool = False, expected: str = DATETIME_PROBLEM,
                forms: str = DATETIME_FORMS) -> int:
    """The instant of an ISO 8601 date-time, in whole milliseconds since the epoch.

    Accepted, in ISO 8601 extended format: ``YYYY-MM-DDTHH:MM[:SS[.fraction]]`` followed by
    ``Z`` or an offset ``+HH:MM``, ``-HH:MM``, ``+HHMM`` or ``+HH``; in basic format:
    ``YYYYMMDDTHHMM[SS[.fraction]]`` followed by ``Z`` or ``+HHMM``/``+HH``
    (``20261130T120000Z``, ``20261130T120000.5+0530``); the fraction may follow a comma (ISO
    8601 allows both marks); and a bare date ``YYYY-MM-DD``, which means midnight UTC of that
    day (reference/storage.md §1.2; eight bare digits stay refused, too easily a number). A
    date-time without ``Z`` or an offset is refused: its instant is unknown. Digits past the millisecond are dropped (the
    instant is rounded down), or with ``round_up`` rounded up to the next millisecond, which is
    how a lower bound keeps excluding every millisecond stamp before it.

    ``expected`` and ``forms`` open the messages and list what is accepted, for a caller
    that takes more than date-times (``ynm export`` also takes a month).

    Raises:
        ValueError: each message names the value refused (:func:`shown_value`):
            ``expected an ISO 8601 date-time such as <forms>, got '2026-13'``
            (:data:`DATETIME_FORMS`) for any other form; ``expected an ISO 8601 date-time,
            got '2026-02-30': no such day or time`` (or ``offset``) for one that does not
            exist (``2026-02-30``, ``25:00``, offset minutes over 59); ``expected an ISO
            8601 date-time with Z or an offset, got '2026-11-30T12:00': add Z for UTC
            (2026-11-30T12:00Z) or an offset (2026-11-30T12:00+05:00)`` for a time without
            one; ``expected an ISO 8601 date-time in years 0001..9999 (UTC), got ...`` for an
            instant outside them.
    """
    got = f"got {shown_value(value)}"
    if not isinstance(value, str):
        raise ValueError(f"{expected} such as {forms}, {got}")
    if len(value) == 24 and _CANONICAL_RE.fullmatch(value):
        # the canonical form every stored date-time has (recall reads dozens per question)
        try:
            return (datetime.fromisoformat(value) - _EPOCH) // _ONE_MS
        except ValueError:
            pass  # no such day: the general path below names the fault
    if _DATE_RE.fullmatch(value):
        value += "T00:00:00Z"
    m = _DATETIME_RE.fullmatch(value) or _BASIC_DATETIME_RE.fullmatch(value)
    if m is None:
        if _NO_OFFSET_RE.fullmatch(value):
            # a time without Z or an offset names no instant: show the two ways to give one
            raise ValueError(f"{expected} with Z or an offset, {got}: add Z for UTC "
                             f"({value}Z) or an offset ({value}+05:00)")
        raise ValueError(f"{expected} such as {forms}, {got}")
    year, month, day, hour, minute, second, fraction, sign, off_h, off_m = m.groups()
    if sign and int(off_m or 0) > 59:
        raise ValueError(f"{expected}, {got}: no such offset")
    try:
        offset = timedelta(0)
        if sign:
            offset = (timedelta(hours=int(off_h), minutes=int(off_m or 0))
                      * (-1 if sign == "-" else 1))
        local = datetime(int(year), int(month), int(day), int(hour), int(minute),
                         int(second or 0), tzinfo=timezone(offset))
        ms = (local - _EPOCH) // _ONE_MS
        if fraction:
            ms += int(fraction[:3].ljust(3, "0"))
            if round_up and fraction[3:].strip("0"):
                ms += 1
    except (ValueError, OverflowError):
        raise ValueError(f"{expected}, {got}: no such day or time") from None
    try:
        canonical_datetime(ms)
    except OverflowError:
        raise ValueError(f"{expected} in years 0001..9999 (UTC), {got}") from None
    return ms


def canonical_datetime(ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.sssZ`` for ``ms`` milliseconds since the epoch: UTC, always the
    milliseconds, what ynm's clock stamps (ynm.model.ids.iso_ms) and JavaScript's
    ``toISOString`` writes. Strings of this form sort as their instants do.

    Raises:
        OverflowError: the instant is outside years 0001..9999.
    """
    t = _EPOCH + timedelta(milliseconds=ms)
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:"
            f"{t.second:02d}.{t.microsecond // 1000:03d}Z")


def normalize_datetime(value: str, *, round_up: bool = False, expected: str = DATETIME_PROBLEM,
                       forms: str = DATETIME_FORMS) -> str:
    """Check an ISO 8601 date-time and return its instant in the canonical form
    ``YYYY-MM-DDTHH:MM:SS.sssZ`` (UTC, milliseconds); see :func:`datetime_ms` for what is
    accepted, bare dates (midnight UTC) and sub-millisecond digits (dropped, or rounded up with
    ``round_up``).

    Every date-time entering ynm passes here (records' ``recordedAt``, ``validFrom``,
    ``validTo``; flags and tool inputs), so comparing two of them as text compares their
    instants. The reference keeps the string as written and compares text
    (reference/storage.md §1.6, §7.1, §7.2); ynm deliberately does not.

    Raises:
        ValueError: ``expected an ISO 8601 date-time such as <forms>, got '<value>'`` and the
            other messages of :func:`datetime_ms` (``expected`` and ``forms`` as there).
    """
    if isinstance(value, str) and _CANONICAL_RE.fullmatch(value):
        # Already canonical (what ynm and the reference stamp): only the calendar is checked.
        try:
            datetime.fromisoformat(value[:-1])
        except ValueError:
            raise ValueError(f"{expected}, got {shown_value(value)}: no such day or "
                             "time") from None
        return value
    return canonical_datetime(datetime_ms(value, round_up=round_up, expected=expected,
                                          forms=forms))


class _Nested(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", frozen=True,
        defer_build=True,
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


def union_links(first: list[Link], second: Iterable[Link]) -> list[Link]:
    """``first`` as it is, then each link of ``second`` whose ``rel`` to ``to`` (``Link.key``)
    is not there yet, in order: how a fold unites a memory's links (storage.md §2.4), and,
    from an empty ``first``, a new record's links without exact repeats."""
    out = list(first)
    seen = {link.key for link in out}
    for link in second:
        if link.key not in seen:
            seen.add(link.key)
            out.append(link)
    return out


def non_finite_at(value: Any, path: str = "") -> str | None:
    """Where (``a.0.b``, dot-joined keys and indexes; ``""`` for ``value`` itself) the first
    NaN, infinite or out-of-range number of a JSON value is, or None. JSON has no such numbers
    (RFC 8259 §6) and no record holding one can be written (ynm.model.jsonl.js_number), but
    Python's json reads ``NaN``, ``Infinity`` and ``1e400`` (infinite) as floats, and an
    integer of 400 digits as an int that no double holds."""
    if isinstance(value, float):
        return None if math.isfinite(value) else path
    if isinstance(value, int) and not isinstance(value, bool):
        return None if abs(value) <= _MAX_DOUBLE else path
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = non_finite_at(item, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None


_MAX_DOUBLE = sys.float_info.max


def non_finite_problem(data: Any) -> str | None:
    """Why ``data`` cannot be a record's data because of a number in it
    (:func:`non_finite_at`): ``key <path> is NaN, Infinity or a number out of range, which
    JSON cannot hold``; None when every number is one JSON holds."""
    where = non_finite_at(data) if data is not None else None
    if where is None:
        return None
    return (f"key {where} is NaN, Infinity or a number out of range, which JSON cannot hold"
            if where else "NaN, Infinity or a number out of range, which JSON cannot hold")


def _finite(data: Any) -> Any:
    problem = non_finite_problem(data)
    if problem is not None:
        raise ValueError(problem)
    return data


class Record(BaseModel):
    """One line of a shard. Immutable. Field order is the on-disk key order (storage.md §1.1)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        defer_build=True,
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

    _finite_data = field_validator("data")(
        classmethod(lambda cls, v: _finite(v)))

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
        """The UTC month ``yyyy-mm`` of ``recordedAt``: its first seven characters, since
        ``recordedAt`` is held in canonical UTC (:func:`normalize_datetime`)."""
        return self.recorded_at[:7]

    @property
    def sort_key(self) -> tuple[str, str]:
        """``(recordedAt, id)``: the fold order (storage.md §2.2). ``recordedAt`` is canonical
        UTC, so the order is that of the instants, whatever offset a line was written with."""
        return (self.recorded_at, self.id)


# pydantic's error types -> a plain message (ctx fills the braces); see plain_message.
_PLAIN = {
    "missing": "required",
    "string_type": "must be text (a string)",
    "string_unicode": "must be text (a string)",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "finite_number": "must be a finite number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "dict_type": "must be an object",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
    "list_type": "must be a list",
    "tuple_type": "must be a list",
    "greater_than_equal": "must be at least {ge}",
    "greater_than": "must be more than {gt}",
    "less_than_equal": "must be at most {le}",
    "less_than": "must be less than {lt}",
    "string_pattern_mismatch": "has the wrong form",
    "json_invalid": "not valid JSON",
    "json_type": "not valid JSON",
    "none_required": "must be null",
}
# pydantic's error types whose limit is a count: (phrase, the limit's key in ``ctx``, noun).
_COUNTED = {
    "string_too_long": ("must be at most", "max_length", "character"),
    "too_long": ("must have at most", "max_length", "item"),
    "too_short": ("must have at least", "min_length", "item"),
}
# Parts of a pydantic error location that name a union member or a validator, not a field.
_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "dict", "list", "none", "nonetype"})


def plain_message(issue: Mapping[str, Any]) -> str:
    """One pydantic error (an item of ``ValidationError.errors()``) as a plain phrase: no
    ``[type=...]``, no input value, no URL, no pydantic wording (``Input should be ...``):
    ``required``, ``unknown field``, ``must be one of a, b, c``, ``must be at most 280
    characters`` (a limit of one: ``1 character``, ``1 item``), ``must be a whole number``;
    a message ynm's own validators raise is kept as written (without pydantic's ``Value
    error, `` prefix)."""
    kind = issue.get("type", "")
    ctx = issue.get("ctx") or {}
    msg = str(issue.get("msg", ""))
    if kind == "extra_forbidden":
        return "unknown field"
    if kind in ("literal_error", "enum"):
        choices = re.findall(r"'((?:[^'\\]|\\.)*)'", str(ctx.get("expected", "")))
        if choices:
            return "must be one of " + ", ".join(choices)
    if kind == "string_too_short":
        n = ctx.get("min_length", 1)
        return "must not be empty" if n == 1 else f"must be at least {n} characters"
    if kind in ("value_error", "assertion_error"):
        return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if kind in _COUNTED and isinstance(ctx.get(_COUNTED[kind][1]), int):
        phrase, key, noun = _COUNTED[kind]
        return f"{phrase} {counted(ctx[key], noun)}"
    template = _PLAIN.get(kind)
    if template is not None:
        shown = {k: int(v) if isinstance(v, float) and v.is_integer() else v
                 for k, v in ctx.items()}
        try:
            return template.format(**shown)
        except (KeyError, IndexError):
            pass
    return msg.removeprefix("Value error, ")


def _field_path(loc: tuple[Any, ...] | list[Any], camel: bool) -> str:
    parts = []
    for p in loc:
        if isinstance(p, int):
            parts.append(str(p))
        elif "[" in p or p.lower() in _TYPE_TAGS:
            continue  # a union member (``list[str]``, ``function-after[...]``): not a field
        else:
            parts.append(to_camel(p) if camel else p)
    return ".".join(parts)


def validation_problems(err: ValidationError, *, unknown: str = "unknown field",
                        camel: bool = True) -> list[tuple[str, str]]:
    """``(field path, plain message)`` per failing field of a pydantic error, in order: the
    path dotted (camelCase with ``camel``; an unknown field as the caller spelled it, union
    members and validator names left out), the message from :func:`plain_message`
    (``unknown`` for an unknown field). A field that failed several ways (each member of a
    union) is reported once, by its first failure. The path is empty for a model-level error,
    whose message names its fields itself."""
    out: dict[str, str] = {}
    for issue in err.errors(include_url=False, include_input=False):
        extra = issue["type"] == "extra_forbidden"
        loc = _field_path(issue["loc"], camel and not extra)
        if loc not in out:
            out[loc] = unknown if extra else plain_message(issue)
    return list(out.items())


def validation_message(err: ValidationError, *, unknown: str = "unknown field",
                       camel: bool = True) -> str:
    """Render a pydantic error as ``<path.joined.by.dots>: <plain message>[; ...]`` on one
    line (cli.md §1.3; :func:`validation_problems`), without pydantic's ``[type=...]``, input
    values and URLs. This is the one formatter of validation errors: CLI flags, MCP tool
    inputs, imported lines, configuration files and variables, hook input."""
    return "; ".join(f"{loc}: {msg}" if loc else msg
                     for loc, msg in validation_problems(err, unknown=unknown, camel=camel))
