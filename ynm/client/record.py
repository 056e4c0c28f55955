"""``Record``: one memory a program writes through the client port (seed 003_b7c8dac142c7aed9.txt,
Record), validated as ``ynm remember`` validates it before anything is sent or queued."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ynm.errors import InvalidInput

# Record field -> the name ynm's remember input (and the queued document) gives it.
_WIRE = {"type": "type", "namespace": "namespace", "level": "level", "subject": "subject",
         "summary": "summary", "content": "content", "tags": "tags",
         "data_schema": "dataSchema", "data": "data", "source": "source",
         "valid_from": "validFrom"}


@dataclass(frozen=True, kw_only=True)
class Record:
    """One memory to write (seed 003, Record). Keyword arguments only.

    Attributes:
        type: ``working`` | ``episodic`` | ``semantic`` | ``procedural`` | ``reflective`` |
            ``reference`` (a program's outcomes are ``episodic``).
        content: markdown, 1..65536 characters, not blank.
        namespace: e.g. ``factory/<host>/<owner>/<repo>``; None is ynm's default for the level.
        level: ``personal`` or ``distributed``; None is ynm's default, personal.
        subject: the item key or a failure signature, at most 200 characters.
        summary: one line, at most 280 characters; None lets ynm derive it from the content.
        tags: each 1..64 characters, without commas (``ynm remember --tags`` splits on them).
        data_schema: the name of ``data``'s shape (``ynf.step.v1``), at most 100 characters.
        data: a JSON object.
        source: the step (or URL, file, ticket) that wrote it.
        valid_from: when it happened (ISO 8601 date-time; ynm's ``validFrom``, the event time,
            reference/storage.md §1.1). ynm stamps ``recordedAt`` itself when it writes (the
            transaction time, §1.11: no writer can set it), so a record sent late from the
            queue would otherwise carry no trace of when it was written: when this is None,
            :class:`~ynm.client.queue.Queue` sends the time the record was handed to
            ``Queue.remember`` (its ``queued`` time) here.

    Raises:
        InvalidInput: ``invalid input: <field>: <problem>`` (exit code 2), at construction, by
            the rules of ``ynm remember`` (reference/cli.md §4.20, ``RememberInput``), so a
            record that could never be written is refused at once instead of queued forever.
    """

    type: str
    content: str
    namespace: str | None = None
    level: str | None = None
    subject: str | None = None
    summary: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    data_schema: str | None = None
    data: dict[str, Any] | None = None
    source: str | None = None
    valid_from: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.tags, str):
            raise InvalidInput("tags: expected a list of strings, got one string")
        object.__setattr__(self, "tags", tuple(self.tags))
        for tag in self.tags:
            if isinstance(tag, str) and "," in tag:
                raise InvalidInput(f"tags: {tag!r}: a tag cannot hold a comma (ynm remember "
                                   "--tags splits on commas)")
        if self.data is not None:
            try:
                json.dumps(self.data, allow_nan=False)
            except (TypeError, ValueError) as err:
                raise InvalidInput(f"data: not JSON ({err})") from None
        # pydantic and the model's rules are imported on the first record, not with the package
        from ynm.model.inputs import RememberInput, parse_input

        parse_input(RememberInput, self.to_json())

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON object with ynm's input names (``dataSchema``), without the
        fields left unset: the ``record`` of a queued document and the arguments of
        ``memory_remember``."""
        out: dict[str, Any] = {}
        for name, wire in _WIRE.items():
            value = getattr(self, name)
            if name == "tags":
                if value:
                    out[wire] = list(value)
            elif value is not None:
                out[wire] = value
        return out

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Record:
        """The record of :meth:`to_json`'s object (validated again).

        Raises:
            InvalidInput: a field that is unknown or breaks the rules.
        """
        names = {wire: name for name, wire in _WIRE.items()}
        unknown = sorted(set(doc) - set(names))
        if unknown:
            raise InvalidInput(f"{unknown[0]}: unknown field")
        return cls(**{names[k]: v for k, v in doc.items()})

    def cli_args(self) -> list[str]:
        """The ``ynm remember`` flags for this record; the content goes on standard input
        (``--content -``), so its length is not bounded by the argument limit."""
        args = ["--type", self.type, "--content", "-"]
        for name in ("namespace", "level", "subject", "summary", "data_schema", "source",
                     "valid_from"):
            value = getattr(self, name)
            if value is not None:
                args.append(f"--{name.replace('_', '-')}={value}")
        args.extend(f"--tags={tag}" for tag in self.tags)
        if self.data is not None:
            args.append("--data=" + json.dumps(self.data, ensure_ascii=False))
        return args
