"""The MCP tools, defined once: ``TOOL_SPECS`` (reference/server.md §1.3, §1.4).

Each :class:`ToolSpec` names the tool, the CLI command it mirrors, its strict input model
(camelCase JSON field names, unknown fields rejected), whether it only reads, and ``run(ynm,
input)``, which calls one service method: the code path the CLI command takes. The server
(:mod:`ynm.server.app`) registers tools from this table and nothing else; the parity test in
tests/server checks every input field against the mirrored command's options.

A tool's outcome is a :class:`ToolOutput`: the JSON ``data`` and an optional ``guidance``
sentence for the agent. Invalid input raises :class:`ynm.errors.InvalidInput` with the CLI's
message (``invalid input: <path>: <message>``); the server turns every ynm error into a tool
error whose only text is that message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from ynm.errors import InvalidInput, Refused
from ynm.model.inputs import (
    AnnotateInput,
    ContextQuery,
    ForgetInput,
    OneOrManyInput,
    RecallQuery,
    RememberInput,
    SessionStartInput,
    SupersedeInput,
    parse_input,
    to_invalid_input,
)
from ynm.model.namespaces import normalize_filter_namespace

if TYPE_CHECKING:
    from ynm.service.ynm import Ynm


class _ToolInput(OneOrManyInput):
    """Inputs only the MCP tools have (the others come from :mod:`ynm.model.inputs`)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class SessionInput(_ToolInput):
    """Input of ``memory_session`` (server.md §1.4): ``start`` or ``end`` a session."""

    action: Literal["start", "end"]
    session_id: str | None = None
    namespace: str | None = None
    budget_tokens: int = Field(default=1500, ge=1, le=50_000)
    ttl: str = "PT8H"
    expire: bool = True


DREAM_PASSES = ("expire", "promote", "dedupe", "contradict", "reflect", "normalise")
DreamPass = Literal["expire", "promote", "dedupe", "contradict", "reflect", "normalise"]


class ConsolidateInput(_ToolInput):
    """Input of ``memory_consolidate`` (server.md §1.4; mirrors ``ynm dream``)."""

    passes: list[DreamPass] | None = None
    namespace: str | None = None
    dry_run: bool = False
    judge: bool = False
    max_pairs: int | None = Field(default=None, ge=1)

    @field_validator("namespace")
    @classmethod
    def _ns(cls, v: str | None) -> str | None:
        # "" (or "/") would read as every namespace: refused, as `ynm dream --namespace ''`
        if v is not None and not v.strip().strip("/"):
            raise ValueError("names no namespace (leave namespace out for all memories)")
        return normalize_filter_namespace(v)

    @model_validator(mode="after")
    def _judge_needs_dry_run(self) -> ConsolidateInput:
        # the reference's words (cli.md §2), in this tool's field names (`ynm dream` says
        # --judge and --dry-run)
        if self.judge and not self.dry_run:
            raise InvalidInput("judge: judge only applies to a dry run; add dryRun")
        return self


class SyncInput(_ToolInput):
    """Input of ``memory_sync`` (server.md §1.4; cli.md §4.26)."""

    remote: str | None = None
    push: bool = True
    pull: bool = True
    dry_run: bool = False
    mount: str | None = None


class StatusInput(_ToolInput):
    """Input of ``memory_status``: no fields."""


class PeopleInput(_ToolInput):
    """Input of ``memory_people`` (server.md §1.4): ``whoami``, ``nickname`` (with
    ``nickname``, 1..64 characters on one line) or ``clear``, on the caller's own entry."""

    action: Literal["whoami", "nickname", "clear"] = Field(
        description="whoami: your person id and login; nickname: set yours; clear: remove yours")
    nickname: str | None = Field(
        default=None, description="For nickname: how you appear to everyone who can read the "
                                  "store; not a real name")


@dataclass
class ToolOutput:
    """What a tool returns: ``data`` (JSON-ready) and ``guidance`` for the agent, or None."""

    data: Any
    guidance: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool.

    Attributes:
        name: the MCP tool name, ``memory_<verb>``.
        command: the mirrored CLI command (``ynm <command>``).
        input: the strict input model; its aliases are the tool's JSON field names.
        read_only: True for tools that never write (``readOnlyHint`` and ``idempotentHint``).
        destructive: True only for ``memory_forget`` (``destructiveHint``).
        description: what the agent reads in ``tools/list``.
        run: ``run(ynm, input) -> ToolOutput``, one service call.
        run_many: For tools the server may group (``memory_remember``): ``run_many(ynm,
            [(input, caller), ...]) -> [ToolOutput | exception, ...]``, one group commit for
            the calls queued together; None for the rest.
    """

    name: str
    command: str
    input: type[BaseModel]
    read_only: bool
    description: str
    run: Callable[[Ynm, Any], ToolOutput]
    destructive: bool = False
    run_many: Callable[[Ynm, list[tuple[Any, Any]]], list[ToolOutput | BaseException]] | None = (
        None)

    def parse(self, arguments: dict[str, Any] | None) -> Any:
        """Validate tool arguments: camelCase names only, unknown fields rejected.

        Raises:
            InvalidInput: ``invalid input: <path>: <message>``, as the CLI words it.
        """
        try:
            return self.input.model_validate(arguments or {}, by_alias=True, by_name=False)
        except ValidationError as err:
            raise _invalid(err) from None

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the input, camelCase, ``additionalProperties: false``."""
        schema = self.input.model_json_schema(by_alias=True)
        schema.pop("title", None)
        schema.pop("description", None)
        schema.setdefault("properties", {})
        schema["additionalProperties"] = False
        for name, prop in schema["properties"].items():
            schema["properties"][name] = _one_or_many_schema(prop)
        return schema


def _one_or_many_schema(prop: dict[str, Any]) -> dict[str, Any]:
    """An array property that also allows one value, as the input models accept
    (:func:`ynm.model.inputs.one_or_many`): ``anyOf`` the array, a string (one value or a
    comma-separated list) for string items, or the item itself for object items (one link);
    the description says so. Other properties are returned as they are."""
    variants = prop.get("anyOf", [prop])
    arrays = [v for v in variants if v.get("type") == "array"]
    if not arrays:
        return prop
    items = arrays[0].get("items", {})
    stringy = items.get("type") == "string" or "enum" in items
    single = {"type": "string"} if stringy else items
    array = {k: v for k, v in arrays[0].items() if k in ("type", "items")}
    others = [v for v in variants if v.get("type") != "array"]
    out = {k: v for k, v in prop.items() if k not in ("anyOf", "type", "items")}
    out["anyOf"] = [array, single, *others]
    said = ("A list, or one value; a string may list several separated by commas."
            if stringy else "A list, or one object.")
    out["description"] = f"{prop['description']} {said}" if prop.get("description") else said
    return out


def _invalid(err: ValidationError) -> InvalidInput:
    """The CLI's message (:func:`to_invalid_input`); an unknown field is named as the caller
    spelled it (``memory_id: unknown field``), not camelCased."""
    return to_invalid_input(err)


# -- run functions ------------------------------------------------------------------------


def _remember(ynm: Ynm, inp: RememberInput) -> ToolOutput:
    return _remember_output(ynm.remember(inp))


def _remember_many(ynm: Ynm, calls: list[tuple[RememberInput, Any]]
                   ) -> list[ToolOutput | BaseException]:
    return [out if isinstance(out, BaseException) else _remember_output(out)
            for out in ynm.remember_many(calls)]


def _remember_output(written: dict[str, Any]) -> ToolOutput:
    result = dict(written)
    guidance = result.pop("guidance", None)
    if guidance:
        guidance = guidance.replace("`ynm supersede`", "`memory_supersede`")
    return _unknown_links(ToolOutput(result, guidance))


def _unknown_links(output: ToolOutput) -> ToolOutput:
    """``output`` with the write result's ``unknownLinks`` (ids its ``links`` point at that
    no memory here has; the links are kept) taken out of the data and said in the guidance:
    ``Note: links point at <id>[, <id>], which no memory here has; kept as given (check the
    ids).``"""
    unknown = output.data.pop("unknownLinks", None) if isinstance(output.data, dict) else None
    if unknown:
        told = (f"Note: links point at {', '.join(unknown)}, which no memory here has; kept "
                "as given (check the ids).")
        output.guidance = f"{output.guidance} {told}" if output.guidance else told
    return output


NO_HITS = ("No memory matched. Try broader terms or fewer filters, or read memory_context "
           "for an overview.")


def _left_out(output: ToolOutput, ynm: Ynm) -> ToolOutput:
    """``output`` with the hosted stores the read left out named in its guidance
    (reference/algorithms.md §2.7): ``Shared memory left out: <mount> (<url>): <why>.``"""
    if ynm.left_out:
        told = "Shared memory left out: " + "; ".join(str(x) for x in ynm.left_out) + "."
        output.guidance = f"{output.guidance} {told}" if output.guidance else told
    return output


def _recall(ynm: Ynm, q: RecallQuery) -> ToolOutput:
    return _left_out(_recall_local(ynm, q), ynm)


def _recall_local(ynm: Ynm, q: RecallQuery) -> ToolOutput:
    from ynm.model.text import has_no_search_words, no_search_words_reason

    hits = ynm.recall(q)
    if has_no_search_words(q.text):
        reason = no_search_words_reason(q.text).replace("the query", "The text", 1)
        return ToolOutput(hits, f"{reason}. Use words of the subject, or filters without "
                                "text.")
    if hits:
        return ToolOutput(hits)
    return ToolOutput(hits, _scope_conflict(ynm, q.mount, q.level) or NO_HITS)


def _scope_conflict(ynm: Ynm, mount: str | None, levels: list[str]) -> str | None:
    """The guidance of a read whose ``mount`` is of a level ``level`` leaves out, so nothing
    was read (:meth:`Ynm.scope_conflict`): ``mount and level select no mount: mount project
    is distributed, not personal; drop one of them.``; None otherwise."""
    why = ynm.scope_conflict(mount, levels)
    return None if why is None else f"mount and level select no mount: {why}; drop one of them."


def _context(ynm: Ynm, q: ContextQuery) -> ToolOutput:
    block = ynm.context(q)
    return _left_out(ToolOutput(block, None if block["included"]
                                else _scope_conflict(ynm, q.mount, q.level)), ynm)


def _written(result: dict[str, Any]) -> ToolOutput:
    """A write's output; one that changed nothing (``"unchanged": true``, nothing written)
    says so in the guidance: ``Unchanged: <note>; nothing was written.``"""
    if result.get("unchanged"):
        return ToolOutput(result, f"Unchanged: {result['note']}; nothing was written.")
    return ToolOutput(result)


def _supersede(ynm: Ynm, inp: SupersedeInput) -> ToolOutput:
    result = ynm.supersede(inp)
    if result.get("dropped"):
        return _unknown_links(ToolOutput(
            result, f"The new version dropped the previous version's "
                    f"{', '.join(result['dropped'])} (a supersede carries none "
                    "over); pass them again to keep them."))
    return _unknown_links(_written(result))


def _annotate(ynm: Ynm, inp: AnnotateInput) -> ToolOutput:
    return _unknown_links(_written(ynm.annotate(inp)))


def _forget(ynm: Ynm, inp: ForgetInput) -> ToolOutput:
    return _written(ynm.forget(inp))


def _session(ynm: Ynm, inp: SessionInput) -> ToolOutput:
    if inp.action == "end":
        if not inp.session_id:
            # the CLI's words for the same mistake (ynm session end without an id)
            raise Refused("session end needs a sessionId")
        return ToolOutput(ynm.session_end(inp.session_id, inp.expire))
    start = parse_input(SessionStartInput, {
        k: v for k, v in {"session_id": inp.session_id, "namespace": inp.namespace,
                          "budget_tokens": inp.budget_tokens, "ttl": inp.ttl}.items()
        if v is not None
    })
    result = ynm.session_start(start)
    guidance = (f"Write this session's scratch notes with memory_remember, type working, "
                f"session {result['sessionId']}: they go to namespace {result['namespace']} "
                f"with ttl {result['ttl']} unless you give others; lasting facts go to "
                f"their own namespace. End the session with memory_session action end, "
                f"sessionId {result['sessionId']}.")
    return ToolOutput(result, guidance)




def _consolidate(ynm: Ynm, inp: ConsolidateInput) -> ToolOutput:
    result = ynm.consolidate(inp.passes, inp.namespace, inp.dry_run, judge=inp.judge,
                             max_pairs=inp.max_pairs)
    full = result["full"]
    flagged = sorted({i for p in full["passes"].values() for i in p["flagged"]})
    notes = []
    if flagged and not inp.dry_run:
        notes.append(f"{len(flagged)} flagged for review; a person decides with `ynm review "
                     "list` and `ynm review clear <id>`.")
    if not full["judge"]["calibrated"] and full["judged"] and full["fresh"]:
        notes.append(f"The {full['judge']['name']} judge is uncalibrated: it only flags, "
                     "never merges or supersedes.")
    return ToolOutput(result, " ".join(notes) or None)


def _sync(ynm: Ynm, inp: SyncInput) -> ToolOutput:
    result = ynm.sync(inp.mount, inp.remote, push=inp.push, pull=inp.pull, dry_run=inp.dry_run)
    notes = [f"{mount}: {r['skipped']}" for mount, r in result.items() if r.get("skipped")]
    notes += [f"{mount}: {'; '.join(r['conflicts'])}" for mount, r in result.items()
              if r["conflicts"]]
    return ToolOutput(result, ("Not synced: " + " | ".join(notes)) if notes else None)


def _status(ynm: Ynm, inp: StatusInput) -> ToolOutput:
    return ToolOutput(ynm.status())


NOT_SIGNED_IN = (
    "memory_people acts only for a person signed in to this store with an identity provider "
    "(a token naming both issuer and subject); this connection is {who}. People are managed "
    "on the store with `ynm people list|nickname|clear|link` on the command line.")


def _people(ynm: Ynm, inp: PeopleInput) -> ToolOutput:
    """``memory_people`` on the caller's own entry (server.md §1.4, §2.5): refused unless the
    caller is a signed-in person."""
    from ynm.errors import YnmError

    caller = ynm.caller
    if caller is None or not caller.may_use_people or caller.person is None:
        who = "not signed in" if caller is None else f"writing as {caller.actor}"
        raise YnmError(NOT_SIGNED_IN.format(who=who))
    person = caller.person
    if inp.action == "whoami":
        people = ynm.people
        entry = people.entry(person) if people is not None else None
        login = ({"issuer": caller.login[0], "subject": caller.login[1]}
                 if caller.login else None)
        return ToolOutput({"person": person, "nickname": (entry or {}).get("nickname"),
                           "client": caller.client, "login": login})
    if inp.action == "nickname" and inp.nickname is None:
        raise InvalidInput("nickname: needed for action nickname")
    entry = ynm.people_nickname(person, inp.nickname if inp.action == "nickname" else None)
    return ToolOutput({"person": person, "nickname": entry.get("nickname")})


TOOL_SPECS: dict[str, ToolSpec] = {spec.name: spec for spec in (
    ToolSpec(
        "memory_remember", "remember", RememberInput, False,
        "Store one new fact, preference, decision or procedure in long-term memory (one fact "
        "per memory; never secrets). type: semantic (facts), procedural (how-to), episodic "
        "(what happened), reflective, reference, or working (session scratch, namespace "
        "session/<id> only). level: personal (private, default) or distributed (shared with "
        "the team; only for team-safe project facts). If the memory already exists, use "
        "memory_supersede instead.",
        _remember,
        run_many=_remember_many,
    ),
    ToolSpec(
        "memory_recall", "recall", RecallQuery, True,
        "Search long-term memory by text and filters, best first. Use before answering about "
        "the user, their preferences, the project or past decisions.",
        _recall,
    ),
    ToolSpec(
        "memory_context", "context", ContextQuery, True,
        "The memory block for a task: pinned memories first, then the most relevant ones, "
        "packed into a token budget (markdown).",
        _context,
    ),
    ToolSpec(
        "memory_supersede", "supersede", SupersedeInput, False,
        "Replace a memory's content with a new version (keeps its type, level and namespace; "
        "history kept). Use when a remembered fact changed.",
        _supersede,
    ),
    ToolSpec(
        "memory_annotate", "annotate", AnnotateInput, False,
        "Add tags or links to a memory, or set importance, confidence, pinned or needsReview; "
        "the content stays as it is.",
        _annotate,
    ),
    ToolSpec(
        "memory_forget", "forget", ForgetInput, False,
        "Forget a memory: it disappears from recall and context; its history is kept.",
        _forget, destructive=True,
    ),
    ToolSpec(
        "memory_session", "session", SessionInput, False,
        "Start a session (returns its working namespace, the ttl for working memory and the "
        "context block) or end one (forgets its expired working memory).",
        _session,
    ),
    ToolSpec(
        "memory_consolidate", "dream", ConsolidateInput, False,
        "Consolidate memory: expire working memory past its ttl, promote working memory "
        "tagged promote, flag or merge duplicates, link contradictions, reflect on repeated "
        "episodes, make relative dates absolute. Only memories new since the last run are "
        "judged; dryRun reports without writing (judge: true also judges).",
        _consolidate,
    ),
    ToolSpec(
        "memory_sync", "sync", SyncInput, False,
        "Share memory through git: fetch, merge and push the notes of each distributed mount. "
        "The personal store syncs only when named with mount and an explicit remote.",
        _sync,
    ),
    ToolSpec(
        "memory_status", "status", StatusInput, True,
        "Mounts, shard counts, index freshness and problems of the memory store.",
        _status,
    ),
    ToolSpec(
        "memory_people", "people", PeopleInput, False,
        "Your own entry in a hosted store's people document, when you are signed in: whoami "
        "(your person id, nickname, client and login), nickname (set how your memories are "
        "shown to others; not a real name) or clear (remove it).",
        _people,
    ),
)}


def run_tool(ynm: Ynm, name: str, arguments: dict[str, Any] | None) -> ToolOutput:
    """Parse ``arguments`` for tool ``name`` and run it (the one path stdio, HTTP and tests use).

    Raises:
        InvalidInput: unknown tool or invalid arguments.
        YnmError: whatever the service raises.
    """
    spec = TOOL_SPECS.get(name)
    if spec is None:
        raise InvalidInput(f"name: unknown tool {name!r}")
    inp = spec.parse(arguments)
    ynm.warnings.clear()
    output = spec.run(ynm, inp)
    # What went wrong without failing the call (a recall that fell back to full text, a cache
    # update after a committed write) is told to the agent in the guidance; write results
    # also carry it as ``warnings``.
    if ynm.warnings:
        told = " ".join(f"Warning: {w}." for w in ynm.warnings)
        output.guidance = f"{output.guidance} {told}" if output.guidance else told
        ynm.warnings.clear()
    return output
