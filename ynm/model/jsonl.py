"""Shard text: a tolerant JSONL reader and a writer that matches the reference byte for byte.

Reader (reference/storage.md §1.4): split on ``\\n``; blank lines are skipped; a line that is not
JSON, not an object, or fails validation is skipped and reported with its 1-based line number;
a record id seen earlier in the same text is dropped (first wins), which is how
``cat_sort_uniq`` leftovers collapse; one whose line differs from the first's is also named in
``conflicting``, for a reader that says so (``ynm import``). Reading never raises.

Writer (storage.md §1.1): compact JSON, keys in the reference order, absent optional keys left
out, ``tags`` and ``links`` always present, non-ASCII written as UTF-8, numbers formatted as
JavaScript formats them (``1`` not ``1.0``, ``1e-7`` not ``1e-07``), one record per line and a
final newline; an empty batch is ``""``.
"""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring  # C-accelerated, leaves non-ASCII as is
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from ynm.model.records import Record, validation_message

# On-disk key order of a record and of its nested objects (storage.md §1.1).
RECORD_KEYS: tuple[tuple[str, str], ...] = (
    ("v", "v"), ("id", "id"), ("memoryId", "memory_id"), ("op", "op"), ("type", "type"),
    ("level", "level"), ("namespace", "namespace"), ("subject", "subject"), ("tags", "tags"),
    ("content", "content"), ("summary", "summary"), ("data", "data"),
    ("dataSchema", "data_schema"), ("importance", "importance"), ("confidence", "confidence"),
    ("pinned", "pinned"), ("needsReview", "needs_review"), ("recordedAt", "recorded_at"),
    ("validFrom", "valid_from"), ("validTo", "valid_to"), ("ttl", "ttl"),
    ("provenance", "provenance"), ("links", "links"), ("reason", "reason"),
)
PROVENANCE_KEYS = ("actor", "client", "session", "source", "tool")


@dataclass(frozen=True, slots=True)
class Problem:
    """A line the reader skipped: 1-based ``line`` number and a ``message``."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(slots=True)
class ParseResult:
    """Records in text order (duplicates by id removed) and the problems met on the way.
    ``lines[i]`` is the text line ``records[i]`` was read from, ``numbers[i]`` its 1-based
    line number; ``repeated`` counts the valid lines dropped because their record id was
    met before (earlier in the text, or in ``seen``); ``conflicting`` lists, once each in
    the order met, the ids among them whose dropped line held another record than the line
    kept (see :func:`parse_jsonl`)."""

    records: list[Record] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    repeated: int = 0
    conflicting: list[str] = field(default_factory=list)


def parse_obj(obj: Any) -> Record:
    """Validate one decoded JSON value as a record.

    Raises:
        ValueError: with the reader's message (``unknown schema version N`` or the first
            validation issues as ``<path>: <message>``).
    """
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object")
    v = obj.get("v")
    if isinstance(v, (int, float)) and not isinstance(v, bool) and v != 1:
        raise ValueError(f"unknown schema version {js_number(v)}")
    try:
        return Record.model_validate(obj)
    except ValidationError as err:
        raise ValueError(validation_message(err)) from None


def parse_line(line: str) -> Record:
    """Parse one JSONL line into a record.

    Raises:
        ValueError: ``invalid JSON: <detail>`` or a validation message (see :func:`parse_obj`).
    """
    try:
        if line.startswith("\ufeff"):  # as json.loads says it
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", line, 0)
        obj = _DECODER.decode(line)
    except ValueError as err:
        raise ValueError(f"invalid JSON: {err}") from None
    return parse_obj(obj)


def _reject_constant(name: str) -> Any:
    # JSON has no NaN or Infinity; Python's parser accepts them, JavaScript's does not.
    raise ValueError(f"{name} is not valid JSON")


# One decoder for every line: json.loads with an argument builds a new decoder per call.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def parse_jsonl(text: str | bytes, first_line: int = 1,
                seen: dict[str, int] | None = None) -> ParseResult:
    """Parse shard text tolerantly (see the module docstring). Never raises.

    A line whose record id an earlier line had is dropped and counted in ``repeated``; when
    it holds another record than the line kept, its id goes to ``conflicting`` (once per
    call). Lines are told apart by their text, trailing white space aside (a fingerprint, so
    a text read in parts keeps no line); when the line kept is in this same call, by the
    records they hold, so the same record written with other spacing or key order is no
    conflict there.

    Args:
        text: the whole blob (bytes are decoded as UTF-8, undecodable bytes replaced).
        first_line: the number of the first line, for reading a tail of a longer blob.
        seen: record id -> fingerprint of the line kept for it, met in earlier parts of the
            same text; those ids are dropped here too, and the ids read are added (a text
            read in parts; default: this text alone).
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    out = ParseResult()
    seen = {} if seen is None else seen
    here: dict[str, int] = {}  # id -> index in out.records, for the ids kept in this call
    for i, raw in enumerate(text.split("\n")):
        if not raw.strip():
            continue
        try:
            record = parse_line(raw)
        except ValueError as err:
            out.problems.append(Problem(first_line + i, str(err)))
            continue
        mark = hash(raw.rstrip())  # str hashes are 64-bit and stable within a process
        kept = seen.get(record.id)
        if kept is not None:
            out.repeated += 1
            if kept != mark and record.id not in out.conflicting:
                at = here.get(record.id)
                if at is None or out.records[at] != record:
                    out.conflicting.append(record.id)
            continue
        seen[record.id] = mark
        here[record.id] = len(out.records)
        out.records.append(record)
        out.lines.append(raw)
        out.numbers.append(first_line + i)
    return out


def js_number(x: int | float) -> str:
    """Format a number as JavaScript's ``Number.prototype.toString`` does (ECMA-262
    Number::toString): shortest round-trip digits; plain notation for exponents in [-7, 21),
    ``1e-7`` / ``1e+21`` style otherwise; whole numbers without a fraction.

    Raises:
        ValueError: for NaN or infinities, which JSON cannot hold.
    """
    if isinstance(x, bool):
        raise TypeError("booleans are not numbers here")
    if isinstance(x, int):
        if -(2**53) <= x <= 2**53:
            return str(x)
        x = float(x)  # JavaScript holds every number as a double
    if math.isnan(x) or math.isinf(x):
        raise ValueError("JSON cannot hold NaN or Infinity")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    # n: position of the decimal point relative to the digit string (value = 0.d1d2... * 10^n).
    n = len(int_part.lstrip("0")) if int_part.strip("0") else -(len(frac_part) - len(frac_part.lstrip("0")))
    n += int(exp) if exp else 0
    digits = digits.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + body


def _dumps_value(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, str):
        return encode_basestring(value)
    if isinstance(value, dict):
        return "{" + ",".join(
            encode_basestring(str(k)) + ":" + _dumps_value(v) for k, v in value.items()
        ) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_dumps_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def record_to_obj(record: Record) -> dict[str, Any]:
    """The record as a JSON-ready dict in on-disk key order, absent optional keys left out
    (``validTo: null`` is kept when it was written)."""
    out: dict[str, Any] = {}
    for key, attr in RECORD_KEYS:
        value = getattr(record, attr)
        if key == "provenance":
            prov = value
            out[key] = {k: getattr(prov, k) for k in PROVENANCE_KEYS if getattr(prov, k) is not None}
        elif key == "links":
            out[key] = [{"rel": link.rel, "to": link.to} for link in value]
        elif key == "tags":
            out[key] = list(value)
        elif value is not None or (key == "validTo" and "valid_to" in record.model_fields_set):
            out[key] = value
    return out


def dumps_record(record: Record) -> str:
    """One record as one compact JSON line (no newline), byte-compatible with the reference."""
    return _dumps_value(record_to_obj(record))


def dumps_obj(obj: Any) -> str:
    """Any JSON value, compact, with JavaScript number formatting."""
    return _dumps_value(obj)


def serialize_records(records: Iterable[Record]) -> str:
    """Records as JSONL: one line each plus a final newline; ``""`` for no records."""
    lines = [dumps_record(r) for r in records]
    return "\n".join(lines) + "\n" if lines else ""


def without_memory(text: bytes, memory_id: str) -> tuple[bytes, int]:
    """Shard text with every line of one memory removed, and how many records went.

    A line goes when it is a JSON object whose ``memoryId`` is ``memory_id`` (valid record or
    not, so a damaged line of the memory cannot keep its content alive), except the memory's
    purge markers, the audit trail; every other line, bad lines included, stays byte for byte. Used by purge (reference/storage.md §3.9, which
    re-serialises the kept records; ynm keeps them as written).
    """
    kept: list[bytes] = []
    gone: set[str] = set()
    dropped = 0
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith(b"{"):
            try:
                obj = json.loads(stripped)
            except ValueError:
                obj = None
            if (isinstance(obj, dict) and obj.get("memoryId") == memory_id
                    and obj.get("op") != "purge-marker"):
                record_id = obj.get("id")
                if not isinstance(record_id, str) or record_id not in gone:
                    dropped += 1
                if isinstance(record_id, str):
                    gone.add(record_id)
                continue
        kept.append(line)
    return b"".join(kept), dropped
