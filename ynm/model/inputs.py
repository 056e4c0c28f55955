"""Validated inputs of the operations, shared by the CLI and (later) the MCP tools.

Strict: unknown fields are rejected. Field names are snake_case with camelCase aliases, as in
the reference's input schemas (reference/cli.md §1.3, §4; reference/algorithms.md §2.1).
Validation failures become ``invalid input: <path>: <message>`` (exit 2) through
:func:`to_invalid_input`.
"""

from __future__ import annotations

import re
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from ynm.errors import InvalidInput
from ynm.model.controls import control_character_problem
from ynm.model.durations import ensure_ttl
from ynm.model.ids import is_ulid
from ynm.model.namespaces import (
    normalize_filter_namespace,
    session_namespace,
    write_namespace_problem,
)
from ynm.model.records import (
    CONTENT_MAX_CHARS,
    DATA_SCHEMA_MAX_CHARS,
    DATETIME_FORMS,
    SUBJECT_MAX_CHARS,
    SUMMARY_MAX_CHARS,
    TAG_MAX_CHARS,
    Level,
    Link,
    MemoryType,
    js_length,
    non_finite_problem,
    normalize_datetime,
    shown_value,
    union_links,
    validation_message,
    validation_problems,
)

TEXT_MAX_CHARS = 2000
RECALL_LIMIT_MAX = 200
LIST_LIMIT_MAX = 10_000


def one_or_many(value: Any) -> Any:
    """A list field's value as a list: a string becomes its comma-separated parts (stripped,
    empty parts dropped: ``"a, b"`` -> ``["a", "b"]``, as the CLI splits ``--tags a,b``); any
    other single value (a number, an object such as one link) becomes a one-element list; a
    list, a tuple and None pass through for the field's own validation. Agents often send one
    value where the schema says array."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if value is None or isinstance(value, list | tuple):
        return value
    return [value]


def one_or_many_objects(value: Any) -> Any:
    """A list-of-objects field's value (``links``) as a list: one object becomes a
    one-element list; anything else (a string, a number, None, a list) passes through for the
    field's own validation, which refuses what is no list. Unlike :func:`one_or_many`, a
    string is not split: ``"links": ""`` is not an empty list but a refused value."""
    return [value] if isinstance(value, dict) else value


def _is_list_field(annotation: Any) -> bool:
    if get_origin(annotation) is list:
        return True
    return get_origin(annotation) in (Union, UnionType) and any(
        get_origin(arg) is list for arg in get_args(annotation))


def _holds_objects(annotation: Any) -> bool:
    """Whether a list field's items are models (objects, as a link), not strings."""
    lists = [annotation] if get_origin(annotation) is list else [
        arg for arg in get_args(annotation) if get_origin(arg) is list]
    return any(isinstance(item, type) and issubclass(item, BaseModel)
               for lst in lists for item in get_args(lst))


class LinkInput(Link):
    """A link given as input (``--links``, a tool's ``links``): a :class:`Link` whose unknown
    keys are refused (``invalid input: links.0.note: unknown field``), where a stored record's
    are dropped. Source: reference/cli.md §1.3 ("Schemas are strict: unknown fields are
    rejected (only relevant for JSON inputs like --links)"); storage.md §7.11 for records."""

    model_config = ConfigDict(extra="forbid")


class OneOrManyInput(BaseModel):
    """A model whose list fields also take one value or a comma-separated string
    (:func:`one_or_many`), under their name or their alias; a list of objects (``links``)
    takes one object, never a string (:func:`one_or_many_objects`).

    Its models build their validators on first use (pydantic's ``defer_build``), not at import:
    a command validates one or two of them, and building every schema up front cost ~50 ms of
    CPU time at each process's start-up (measured on ``ynm recall``). pydantic 2.14 and later
    build a deferred model under a lock, so threads that first validate it at once are safe."""

    model_config = ConfigDict(defer_build=True)

    @model_validator(mode="before")
    @classmethod
    def _one_or_many(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for name, field in cls.model_fields.items():
            if _is_list_field(field.annotation):
                one = one_or_many_objects if _holds_objects(field.annotation) else one_or_many
                for key in {name, field.alias or name}:
                    if key in out:
                        out[key] = one(out[key])
        return out


class _Input(OneOrManyInput):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


def _check_tags(v: list[str]) -> list[str]:
    for tag in v:
        if not 1 <= js_length(tag) <= TAG_MAX_CHARS:
            raise ValueError(f"each tag must be 1..{TAG_MAX_CHARS} characters")
        problem = control_character_problem(tag, lines=False)
        if problem:
            raise ValueError(f"each tag {problem}")
    return v


def _no_controls(lines: bool) -> Any:
    """An after-validator refusing text with control characters
    (:func:`ynm.model.controls.control_character_problem`): NUL, ESC, BEL, DEL, C1 controls, and
    with ``lines`` False also tab and line breaks."""

    def check(v: str | None) -> str | None:
        problem = None if v is None else control_character_problem(v, lines=lines)
        if problem:
            raise ValueError(problem)
        return v

    return check


def _js_limit(limit: int) -> Any:
    """An after-validator refusing a string longer than ``limit`` UTF-16 code units, the unit
    of the store's limits (ynm.model.records.js_length): pydantic's ``max_length`` counts
    characters, so text of emoji or other characters outside the Basic Multilingual Plane
    passed it and failed later, when the record was built, as an unexpected error."""

    def check(v: str | None) -> str | None:
        if v is not None and not v.isascii() and js_length(v) > limit:
            raise ValueError(f"must be at most {limit} characters (characters outside the "
                             "Basic Multilingual Plane, such as emoji, count twice)")
        return v

    return check


def _check_content(v: Any) -> Any:
    # Runs before the length check, so "" and "  " get the same message.
    if isinstance(v, str) and not v.strip():
        raise ValueError("must not be blank")
    return v


def _check_datetime(v: str | None) -> str | None:
    return None if v is None else normalize_datetime(v)


def _check_lower_bound(v: str | None) -> str | None:
    # A ``since`` finer than a millisecond rounds up, so it still excludes the stamps before it.
    return None if v is None else normalize_datetime(v, round_up=True)


def bounds_problem(since: str | None, until: str | None, *, since_name: str = "since",
                   until_name: str = "until", since_start: str | None = None,
                   until_end: str | None = None) -> str | None:
    """Why a ``since``/``until`` pair can match nothing, or None: ``<since_name>: <since> is
    later than <until_name> <until>, so nothing can match; swap them, or leave one out``.

    Both bounds are inclusive (reference/cli.md §4.11), so equal bounds are fine. The values
    are compared as canonical UTC instants (:func:`ynm.model.records.normalize_datetime`,
    whose text sorts as the instants do); ``since_start``/``until_end`` replace them in the
    comparison when a bound stands for a span (an export month: its first instant, and a key
    after its last), while the message names the values as given. The reference takes such
    a pair and answers nothing; ynm refuses it (docs/cli.md, date-time flags)."""
    if since is None or until is None:
        return None
    if (since_start or since) > (until_end or until):
        return (f"{since_name}: {since} is later than {until_name} {until}, so nothing can "
                "match; swap them, or leave one out")
    return None


def _check_bounds(model: Any) -> Any:
    """A model validator: refuse a ``since`` later than ``until`` (:func:`bounds_problem`)."""
    problem = bounds_problem(model.since, model.until)
    if problem:
        raise ValueError(problem)
    return model


def _check_data(v: dict[str, Any] | None) -> dict[str, Any] | None:
    """A field validator: refuse ``data`` holding a number JSON cannot hold
    (:func:`ynm.model.records.non_finite_problem`), naming where."""
    problem = non_finite_problem(v)
    if problem is not None:
        raise ValueError(problem)
    return v


class _Content(_Input):
    """The fields a new version of a memory carries, shared by remember and supersede."""

    content: str = Field(min_length=1, max_length=CONTENT_MAX_CHARS)
    summary: str | None = Field(default=None, max_length=SUMMARY_MAX_CHARS)
    subject: str | None = Field(default=None, max_length=SUBJECT_MAX_CHARS)
    tags: list[str] = Field(default_factory=list)
    data: dict[str, Any] | None = None
    data_schema: str | None = Field(default=None, max_length=DATA_SCHEMA_MAX_CHARS)
    valid_from: str | None = None
    valid_to: str | None = None
    ttl: str | None = None
    session: str | None = None
    source: str | None = None
    links: list[LinkInput] = Field(default_factory=list)

    _tags = field_validator("tags")(classmethod(lambda cls, v: _check_tags(v)))
    _content_units = field_validator("content")(
        classmethod(lambda cls, v: _js_limit(CONTENT_MAX_CHARS)(v)))
    _summary_units = field_validator("summary")(
        classmethod(lambda cls, v: _js_limit(SUMMARY_MAX_CHARS)(v)))
    _subject_units = field_validator("subject")(
        classmethod(lambda cls, v: _js_limit(SUBJECT_MAX_CHARS)(v)))
    _schema_units = field_validator("data_schema")(
        classmethod(lambda cls, v: _js_limit(DATA_SCHEMA_MAX_CHARS)(v)))
    _body_controls = field_validator("content")(classmethod(lambda cls, v: _no_controls(True)(v)))
    _data = field_validator("data")(classmethod(lambda cls, v: _check_data(v)))
    _line_controls = field_validator("summary", "subject", "data_schema")(
        classmethod(lambda cls, v: _no_controls(False)(v)))
    _content = field_validator("content", mode="before")(
        classmethod(lambda cls, v: _check_content(v))
    )
    _dates = field_validator("valid_from", "valid_to")(
        classmethod(lambda cls, v: _check_datetime(v))
    )
    _ttl = field_validator("ttl")(classmethod(lambda cls, v: ensure_ttl(v)))
    _links = field_validator("links", mode="before")(
        classmethod(lambda cls, v: _upper_link_targets(v))
    )
    # an exact repeat of a link says nothing more; a base record's own repeats would be
    # stored and shown twice (the fold unites only later records' links with it)
    _unique_links = field_validator("links")(classmethod(lambda cls, v: union_links([], v)))


class RememberInput(_Content):
    """Input of ``remember`` (reference/cli.md §4.20). ``level`` None means the default level
    (personal where a personal store is open); ``namespace`` None means the level's default,
    except for ``working`` memory with a ``session``: ``session/<normalised session id>``.
    Working memory must live in ``session/<id>``."""

    type: MemoryType
    level: Level | None = None
    namespace: str | None = None
    importance: float = Field(default=0.5, ge=0, le=1)
    confidence: float = Field(default=1.0, ge=0, le=1)
    mount: str | None = None

    @field_validator("namespace")
    @classmethod
    def _namespace(cls, v: str | None) -> str | None:
        if v is not None:
            problem = write_namespace_problem(v)
            if problem:
                raise ValueError(problem)
        return v

    @model_validator(mode="after")
    def _working(self) -> RememberInput:
        # Working memory with a session and no namespace goes to that session's namespace
        # (session/<normalised id>, reference/storage.md §1.8); its ttl default is the
        # service's (the session's kept ttl, else PT8H).
        if self.type == "working" and self.namespace is None and self.session is not None:
            try:
                self.namespace = session_namespace(self.session)
            except ValueError as err:
                raise ValueError(f"session: {err}") from None
        if self.type == "working" and not (self.namespace or "").startswith("session/"):
            raise ValueError("namespace: working memory must live in session/<id>")
        if self.ttl is not None and self.type != "working":
            # seed 000: ttl is for working memory only; nothing would ever expire it
            raise ValueError(f"ttl: only working memory expires; a {self.type} memory takes "
                             "no ttl")
        return self


class RecallQuery(_Input):
    """Input of ``recall`` (reference/algorithms.md §2.1). ``since``/``until`` are ISO
    date-times or bare dates (midnight UTC), held as canonical UTC instants
    (:func:`ynm.model.records.normalize_datetime`; ``since`` rounds sub-millisecond digits up,
    ``until`` down). Filters follow the write rules, so a value no memory can hold is refused
    rather than answered with nothing: the namespace filter is lower-cased, loses trailing
    slashes and must then be a valid namespace
    (:func:`ynm.model.namespaces.normalize_filter_namespace`); ``subject`` is at most 200
    characters and each tag 1..64 (reference/storage.md §1.2 limits). ``data_key`` is any string
    (a ``data`` object may have any key)."""

    text: str | None = Field(default=None, max_length=TEXT_MAX_CHARS)
    type: list[MemoryType] = Field(default_factory=list)
    level: list[Level] = Field(default_factory=list)
    namespace: str | None = None
    subject: str | None = Field(default=None, max_length=SUBJECT_MAX_CHARS)
    tags: list[str] = Field(default_factory=list)
    data_key: str | None = None
    since: str | None = None
    until: str | None = None
    pinned_only: bool = False
    include_tombstoned: bool = False
    limit: int = Field(default=10, ge=1, le=RECALL_LIMIT_MAX)
    explain: bool = False
    rerank: bool | None = None
    mount: str | None = None

    _since = field_validator("since")(classmethod(lambda cls, v: _check_lower_bound(v)))
    _until = field_validator("until")(classmethod(lambda cls, v: _check_datetime(v)))
    _bounds = model_validator(mode="after")(_check_bounds)
    _ns = field_validator("namespace")(
        classmethod(lambda cls, v: normalize_filter_namespace(v))
    )
    # A filter a write would refuse could never match: refused with the write's words.
    _tags = field_validator("tags")(classmethod(lambda cls, v: _check_tags(v)))
    _subject_units = field_validator("subject")(
        classmethod(lambda cls, v: _js_limit(SUBJECT_MAX_CHARS)(v)))


class ListQuery(_Input):
    """Input of ``list`` (reference/cli.md §4.11). ``since``/``until`` as in
    :class:`RecallQuery`: canonical UTC instants."""

    level: Level | None = None
    type: MemoryType | None = None
    namespace: str | None = None
    since: str | None = None
    until: str | None = None
    include_tombstoned: bool = False
    needs_review: bool | None = None
    limit: int | None = Field(default=None, ge=1, le=LIST_LIMIT_MAX)
    mount: str | None = None

    _since = field_validator("since")(classmethod(lambda cls, v: _check_lower_bound(v)))
    _until = field_validator("until")(classmethod(lambda cls, v: _check_datetime(v)))
    _bounds = model_validator(mode="after")(_check_bounds)
    _ns = field_validator("namespace")(
        classmethod(lambda cls, v: normalize_filter_namespace(v))
    )


# What ``export --since/--until`` take: a month beside the date-times every other filter takes.
MONTH_PROBLEM = "expected a month YYYY-MM or an ISO 8601 date-time"
MONTH_FORMS = f"2026-11 (the whole month), {DATETIME_FORMS}"


class ExportQuery(_Input):
    """Input of ``export`` (reference/cli.md §4.6). ``since``/``until`` prune whole months, so
    a month ``YYYY-MM`` is accepted beside a date-time; a date-time becomes a canonical UTC
    instant first, so its month is the UTC month (the month of its shard bucket)."""

    level: Level | None = None
    type: MemoryType | None = None
    namespace: str | None = None
    since: str | None = None
    until: str | None = None
    mount: str | None = None

    @field_validator("since", "until")
    @classmethod
    def _month_or_datetime(cls, v: str | None) -> str | None:
        if v is None or re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", v):
            return v
        if re.fullmatch(r"\d{4}-\d{2}", v):
            raise ValueError(f"{MONTH_PROBLEM}, got {shown_value(v)}: no such month")
        return normalize_datetime(v, expected=MONTH_PROBLEM, forms=MONTH_FORMS)

    @model_validator(mode="after")
    def _bounds(self) -> ExportQuery:
        # a month stands for all of it: from its first instant through its last ("~" sorts
        # after every "-DDThh..." of that month and before the next month)
        month = re.compile(r"\d{4}-\d{2}")
        problem = bounds_problem(
            self.since, self.until,
            since_start=f"{self.since}-01T00:00:00.000Z" if self.since and month.fullmatch(
                self.since) else None,
            until_end=f"{self.until}~" if self.until and month.fullmatch(self.until) else None)
        if problem:
            raise ValueError(problem)
        return self

    _ns = field_validator("namespace")(
        classmethod(lambda cls, v: normalize_filter_namespace(v))
    )


def input_ulid(value: Any) -> Any:
    """A ULID as given on input, in the upper case every record holds: Crockford base 32 is
    case-insensitive, and ynm prints session ids in lower case. Non-strings pass through for
    the validator to refuse. Records read from a store stay strict (reference/storage.md §7.25)."""
    return value.strip().upper() if isinstance(value, str) else value


def check_memory_id(value: str, field: str = "memoryId") -> str:
    """Return ``value`` in upper case when it is a ULID in either case.

    Raises:
        InvalidInput: ``invalid input: memoryId: must be a ULID``.
    """
    value = input_ulid(value)
    if not is_ulid(value):
        raise InvalidInput(f"{field}: must be a ULID")
    return value


def to_invalid_input(err: ValidationError) -> InvalidInput:
    """Turn a pydantic error into ``InvalidInput`` with paths joined by dots (cli.md §1.3);
    its ``fields`` are those paths (``links.0.rel``)."""
    return InvalidInput(validation_message(err),
                        fields=tuple(loc for loc, _ in validation_problems(err)))


def invalid_input_from(err: BaseException) -> InvalidInput | None:
    """The :class:`InvalidInput` a pydantic ``ValidationError`` stands for (one line,
    :func:`to_invalid_input`), or None for any other exception. The CLI and the MCP server
    use it on errors that reach them, so a model validated outside :func:`parse_input` still
    reads ``invalid input: <path>: <message>`` (exit 2), never pydantic's own text."""
    return to_invalid_input(err) if isinstance(err, ValidationError) else None


def parse_input(model: type[_Input], data: dict[str, Any]) -> Any:
    """Validate ``data`` (snake_case or camelCase keys) against ``model``.

    Raises:
        InvalidInput: the data failed validation.
    """
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise to_invalid_input(err) from None


def _check_ulid(v: str) -> str:
    v = input_ulid(v)
    if not is_ulid(v):
        raise ValueError("must be a ULID")
    return v


def _upper_link_targets(v: Any) -> Any:
    """Input links with their ``to`` ids upper-cased (see :func:`input_ulid`)."""
    if isinstance(v, list):
        return [{**item, "to": input_ulid(item["to"])}
                if isinstance(item, dict) and "to" in item else item for item in v]
    return v


class SupersedeInput(_Content):
    """Input of ``supersede`` (reference/cli.md §4.25). Unlike the reference, importance,
    confidence, pinned and needs-review are written only when given (never reset to defaults),
    and ``ttl`` may be given; a working memory otherwise keeps its ttl."""

    memory_id: str
    importance: float | None = Field(default=None, ge=0, le=1)
    confidence: float | None = Field(default=None, ge=0, le=1)
    pinned: bool | None = None
    needs_review: bool | None = None

    _id = field_validator("memory_id")(classmethod(lambda cls, v: _check_ulid(v)))


class AnnotateInput(_Input):
    """Input of ``annotate`` (reference/cli.md §4.1): adds tags and links, sets the scalars
    given; content is never changed."""

    memory_id: str
    tags: list[str] = Field(default_factory=list)
    links: list[LinkInput] = Field(default_factory=list)
    importance: float | None = Field(default=None, ge=0, le=1)
    confidence: float | None = Field(default=None, ge=0, le=1)
    pinned: bool | None = None
    needs_review: bool | None = None
    reason: str | None = Field(default=None, max_length=1000)
    session: str | None = None
    data: dict[str, Any] | None = None

    _reason_controls = field_validator("reason")(
        classmethod(lambda cls, v: _no_controls(True)(v)))
    _id = field_validator("memory_id")(classmethod(lambda cls, v: _check_ulid(v)))
    _tags = field_validator("tags")(classmethod(lambda cls, v: _check_tags(v)))
    _data = field_validator("data")(classmethod(lambda cls, v: _check_data(v)))
    _links = field_validator("links", mode="before")(
        classmethod(lambda cls, v: _upper_link_targets(v))
    )
    _unique_links = field_validator("links")(classmethod(lambda cls, v: union_links([], v)))


class ForgetInput(_Input):
    """Input of ``forget`` (reference/cli.md §4.7): a tombstone with an optional reason."""

    memory_id: str
    reason: str | None = Field(default=None, max_length=1000)
    session: str | None = None

    _reason_controls = field_validator("reason")(
        classmethod(lambda cls, v: _no_controls(True)(v)))
    _id = field_validator("memory_id")(classmethod(lambda cls, v: _check_ulid(v)))


class PurgeInput(_Input):
    """Input of ``purge`` (reference/cli.md §4.17)."""

    memory_id: str
    reason: str = Field(min_length=1, max_length=1000)
    forget_history: bool = False

    _reason_controls = field_validator("reason")(
        classmethod(lambda cls, v: _no_controls(True)(v)))
    _id = field_validator("memory_id")(classmethod(lambda cls, v: _check_ulid(v)))


class ContextQuery(_Input):
    """Input of ``context`` (reference/algorithms.md §3.1)."""

    namespace: str | None = None
    level: list[Level] = Field(default_factory=list)
    type: list[MemoryType] = Field(default_factory=list)
    text: str | None = Field(default=None, max_length=TEXT_MAX_CHARS)
    budget_tokens: int = Field(default=1500, ge=1, le=50_000)
    mount: str | None = None

    _ns = field_validator("namespace")(
        classmethod(lambda cls, v: normalize_filter_namespace(v))
    )


class SessionStartInput(_Input):
    """Input of ``session start`` (reference/cli.md §4.23)."""

    session_id: str | None = None
    namespace: str | None = None
    budget_tokens: int = Field(default=1500, ge=1, le=50_000)
    ttl: str = "PT8H"

    _ns = field_validator("namespace")(
        classmethod(lambda cls, v: normalize_filter_namespace(v))
    )

    _ttl = field_validator("ttl")(classmethod(lambda cls, v: ensure_ttl(v)))
