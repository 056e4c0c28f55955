"""A deterministic, seeded synthetic store: records with labelled duplicates, contradictions
and relevant-query sets.

Modelled on the reference's generator (reference/benchmarks.md §6); vocabulary, values and
paraphrases are our own. Randomness is mulberry32, bit-for-bit the JavaScript one, so a seed
always yields the same bytes.

Each record states one *claim*: a template, an entity and a value. After each record one roll
decides whether a paraphrase of the same claim (a duplicate) or, for an exclusive template, the
same entity with another value (a contradiction) follows. Labels are then derived from claim
identity, so chance collisions count too.

Example::

    corpus = generate_corpus(seed=11, count=2000, namespaces=("user/eval",))
    write_jsonl(corpus.records, "corpus.jsonl")
"""

from __future__ import annotations

import calendar
import gc
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

from ynm.model.jsonl import serialize_records
from ynm.model.records import Record

_MASK = 0xFFFFFFFF


class Mulberry32:
    """The mulberry32 generator as JavaScript writes it; calling it returns a float in [0, 1).

    ``t = a += 0x6D2B79F5; t = Math.imul(t ^ t >>> 15, t | 1);
    t ^= t + Math.imul(t ^ t >>> 7, t | 61); return ((t ^ t >>> 14) >>> 0) / 4294967296``.
    State and intermediates are kept as unsigned 32-bit integers and every step is taken
    modulo 2^32, which is what ``Math.imul``, ``^`` and ``>>> 0`` do in JavaScript.
    """

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & _MASK

    def __call__(self) -> float:
        # Literal masks: a global lookup per step doubles the cost. t ^ t >> 14 < 2^32 already.
        self.state = t = (self.state + 0x6D2B79F5) & 0xFFFFFFFF
        t = ((t ^ (t >> 15)) * (t | 1)) & 0xFFFFFFFF
        t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
        return (t ^ (t >> 14)) / 4294967296

    def bytes(self, n: int) -> bytes:
        """``n`` bytes, each ``floor(r() * 256) & 255`` (how the reference fills a ULID's
        random part from an injected ``random()``); the same draws as ``n`` calls."""
        a = self.state
        out = bytearray(n)
        for i in range(n):
            a = (a + 0x6D2B79F5) & 0xFFFFFFFF
            t = ((a ^ (a >> 15)) * (a | 1)) & 0xFFFFFFFF
            t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
            out[i] = (t ^ (t >> 14)) >> 24  # floor(x / 2^32 * 256)
        self.state = a
        return bytes(out)


def mulberry32(seed: int) -> Mulberry32:
    """A mulberry32 generator seeded with ``seed`` (see :class:`Mulberry32`)."""
    return Mulberry32(seed)


_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_PAIRS = tuple(a + b for a in _CROCKFORD for b in _CROCKFORD)  # 10 bits -> 2 characters


def ulid(ms: int, random_part: bytes) -> str:
    """The ULID of ``ms`` and 10 random bytes; the same string as ``ynm.model.ids.new_ulid``,
    several times faster (13 table lookups of 10 bits each)."""
    n = (ms << 80) | int.from_bytes(random_part, "big")
    return "".join([_PAIRS[(n >> shift) & 1023] for shift in range(120, -10, -10)])


# --- vocabulary ---------------------------------------------------------------------------

SERVICES: tuple[str, ...] = (
    "payments", "search", "billing", "checkout", "inventory", "notifications", "auth",
    "identity", "gateway", "ledger", "payouts", "reporting", "analytics", "catalog", "pricing",
    "shipping", "orders", "accounts", "onboarding", "messaging", "scheduler", "exports",
    "imports", "webhooks", "storage", "media", "recommendations", "support", "feature-flags",
    "audit",
)

PEOPLE: tuple[str, ...] = (
    "David", "Priya", "Marcus", "Aiko", "Lena", "Omar", "Sofia", "Tariq", "Hannah", "Mateo",
    "Grace", "Yusuf", "Chloe", "Nikhil", "Ingrid", "Kwame", "Rosa", "Felix", "Mei", "Ethan",
)

DETAILS: tuple[str, ...] = (
    "Agreed in the weekly sync.",
    "Confirmed by the on-call engineer.",
    "Noted during the retro.",
    "Written down after a long thread in chat.",
    "Double-checked against the docs.",
    "",
)


@dataclass(frozen=True, slots=True)
class Template:
    """One kind of claim: ``{e}`` is an entity built from ``entities`` (``{s}`` a service,
    ``{p}`` a person) and ``{v}`` one of ``values``. ``exclusive``: an entity holds one value
    at a time, so two different values contradict."""

    type: str
    entities: tuple[str, ...]
    values: tuple[str, ...]
    paraphrases: tuple[str, str, str, str]
    tags: tuple[str, ...]
    exclusive: bool


TEMPLATES: tuple[Template, ...] = (
    Template(
        "semantic",
        ("the {s} staging environment", "the {s} production environment",
         "the {s} demo environment"),
        ("blue-heron", "red-kite", "green-finch", "amber-owl", "silver-crane", "black-swan",
         "copper-wren", "grey-plover"),
        ("{e} deploys to the {v} cluster.",
         "The deploy target for {e} is the {v} cluster.",
         "{e} runs on the {v} cluster.",
         "We host {e} on the {v} Kubernetes cluster."),
        ("deploy", "infra"),
        True,
    ),
    Template(
        "procedural",
        ("a {s} release", "a {s} hotfix", "a {s} schema migration", "a {s} dependency bump"),
        ("run the full gate", "get two approvals", "update the changelog",
         "tag the commit before merging", "announce it in #releases", "bump the minor version",
         "wait for a green canary", "attach the rollback plan"),
        ("Before {e}, always {v}.",
         "For {e} the rule is: {v}.",
         "Remember to {v} when doing {e}.",
         "Our checklist for {e} says to {v}."),
        ("process", "release"),
        False,
    ),
    Template(
        "semantic",
        ("the {s} team", "the {s} guild", "the {s} on-call rotation"),
        ("Monday at 09:30", "Tuesday at 14:00", "Wednesday at 10:00", "Wednesday at 16:30",
         "Thursday at 11:00", "Thursday at 15:00", "Friday at 09:00", "Friday at 13:30"),
        ("{e} meets every {v}.",
         "The weekly sync of {e} is on {v}.",
         "{e} holds its standing meeting on {v}.",
         "Every week {e} gets together on {v}."),
        ("meetings",),
        True,
    ),
    Template(
        "semantic",
        ("the {s} CLI", "the {s} service", "the {s} worker", "the {s} SDK"),
        ("SQLite with FTS5", "Python 3.11 or newer", "Node 20 or newer", "a running Redis",
         "Postgres 15", "git 2.40 or newer", "a valid API token", "a full clone of the monorepo"),
        ("{e} requires {v}.",
         "To run {e} you need {v}.",
         "{e} depends on {v}.",
         "{e} will not start without {v}."),
        ("tooling",),
        False,
    ),
    Template(
        "episodic",
        ("the {s} 1.2 release", "the {s} March outage", "the {s} migration", "the {s} rewrite"),
        ("an expired TLS certificate", "a missing database index",
         "a misconfigured feature flag", "a full disk on the primary"),
        ("{e} failed because of {v}.",
         "The root cause of {e} was {v}.",
         "{e} went wrong due to {v}.",
         "Postmortem: {e} broke because of {v}."),
        ("incident",),
        True,
    ),
    Template(
        "reference",
        ("the {s} on-call rota", "the {s} deploy runbook", "the {s} ADR index",
         "the {s} dashboard"),
        ("the wiki under Engineering", "docs/runbooks in the monorepo",
         "the #ops channel topic", "the Grafana folder Services", "the shared drive",
         "the Notion page Platform", "the README of the infra repo",
         "the PagerDuty service directory"),
        ("{e} lives in {v}.",
         "You can find {e} in {v}.",
         "{e} is kept in {v}.",
         "Look for {e} in {v}."),
        ("reference",),
        True,
    ),
    Template(
        "semantic",
        ("{p}", "{p} (as reviewer)", "{p} (as release manager)"),
        ("small pull requests", "tabs over spaces", "squash merges", "tests before code",
         "written design docs", "async updates over meetings", "explicit type hints",
         "short commit messages"),
        ("{e} prefers {v}.",
         "{e} likes {v}.",
         "When it comes to work, {e} favours {v}.",
         "{e} asked for {v}."),
        ("preference",),
        False,
    ),
    Template(
        "procedural",
        ("the {s} store", "the {s} index", "the {s} cache", "the {s} queue"),
        ("ynm doctor", "make reindex", "ynm dream --dry-run", "kubectl rollout restart",
         "redis-cli FLUSHDB", "make migrate", "ynm sync --remote origin", "git notes prune"),
        ("To repair {e}, run `{v}`.",
         "If {e} looks wrong, `{v}` fixes it.",
         "Run `{v}` to rebuild {e}.",
         "The fix when {e} is broken is `{v}`."),
        ("howto",),
        False,
    ),
)

DEFAULT_NAMESPACES = {
    "personal": ("user/test",),
    "distributed": ("common", "org/eyelock/project/ynm"),
}

START_MS = calendar.timegm((2026, 6, 1, 0, 0, 0)) * 1000
MONTHS = (6, 7, 8, 9)
DAY_MS = 86_400_000
SESSIONS = tuple(f"s{i}" for i in range(50))
SUMMARY_CHARS = 120
MAX_QUERIES = 50

_SLUG_RE = re.compile(r"[^a-z0-9]+")


def slug(entity: str) -> str:
    """``the payments CLI`` -> ``payments-cli``: leading ``the `` dropped, lowercased, each
    run of non-alphanumerics one ``-``, no leading or trailing ``-``."""
    text = entity.lower()
    if text.startswith("the "):
        text = text[4:]
    return _SLUG_RE.sub("-", text).strip("-")


@lru_cache(maxsize=None)
def _subject(entity: str) -> str:
    return "entity:" + slug(entity)


# --- output -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Query:
    """A recall query and the ids of every memory relevant to it."""

    text: str
    relevant: set[str]


class Claim(NamedTuple):
    """What a record says: template index, entity, value index, and how it was emitted
    (``original``, ``duplicate`` or ``contradiction``)."""

    template: int
    entity: str
    value: int
    kind: str


@dataclass
class Corpus:
    """A generated corpus. ``claims[i]`` describes ``records[i]``.

    ``duplicates`` and ``contradictions`` are id pairs (earlier record first), derived from claim
    identity on first access: same template and entity with an equal value is a duplicate;
    with a different value, on an exclusive template, a contradiction. At 100k records there
    are millions of pairs, hence the laziness.
    """

    records: list[Record]
    claims: list[Claim]
    queries: list[Query] = field(default_factory=list)

    def _groups(self) -> dict[tuple[int, str], list[int]]:
        groups: dict[tuple[int, str], list[int]] = {}
        for i, c in enumerate(self.claims):
            groups.setdefault((c.template, c.entity), []).append(i)
        return groups

    @cached_property
    def duplicates(self) -> list[tuple[str, str]]:
        out = []
        for members in self._groups().values():
            for i, j in combinations(members, 2):
                if self.claims[i].value == self.claims[j].value:
                    out.append((self.records[i].id, self.records[j].id))
        return out

    @cached_property
    def contradictions(self) -> list[tuple[str, str]]:
        out = []
        for (template, _), members in self._groups().items():
            if not TEMPLATES[template].exclusive:
                continue
            for i, j in combinations(members, 2):
                if self.claims[i].value != self.claims[j].value:
                    out.append((self.records[i].id, self.records[j].id))
        return out


# --- generation ---------------------------------------------------------------------------


def generate_corpus(
    seed: int = 42,
    count: int = 1000,
    level: str = "personal",
    namespaces: Sequence[str] | None = None,
    duplicate_rate: float = 0.05,
    contradiction_rate: float = 0.02,
) -> Corpus:
    """Generate ``count`` validated ``create`` records, deterministically from ``seed``.

    Args:
        seed: mulberry32 seed (default 42, as the reference).
        count: number of records.
        level: ``personal`` or ``distributed``.
        namespaces: namespaces to pick from; default ``("user/test",)`` for personal and
            ``("common", "org/eyelock/project/ynm")`` for distributed.
        duplicate_rate: chance that a paraphrase of the same claim follows a record.
        contradiction_rate: chance (after the duplicate roll fails) that the same entity with
            another value follows, on exclusive templates only.
    """
    if level not in DEFAULT_NAMESPACES:
        raise ValueError(f"level must be personal or distributed, not {level!r}")
    # Cyclic GC finds nothing here but rescans the growing record list: pausing it saves ~30%.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _generate(seed, count, level, namespaces, duplicate_rate, contradiction_rate)
    finally:
        if was_enabled:
            gc.enable()


def _generate(
    seed: int, count: int, level: str, namespaces: Sequence[str] | None,
    duplicate_rate: float, contradiction_rate: float,
) -> Corpus:
    spaces = tuple(namespaces) if namespaces else DEFAULT_NAMESPACES[level]
    rng = Mulberry32(seed)
    r = rng.__call__  # bound once: cheaper per draw
    days = {  # (month, day) -> (date prefix of recordedAt, ms at midnight UTC)
        (m, d): (f"2026-{m:02d}-{d:02d}T", calendar.timegm((2026, m, d, 0, 0, 0)) * 1000)
        for m in MONTHS for d in range(1, 28)
    }
    n_months, n_sessions, n_spaces = len(MONTHS), len(SESSIONS), len(spaces)
    clock = START_MS
    records: list[Record] = []
    claims: list[Claim] = []

    def pick(xs: Sequence):  # xs[floor(r() * len)]
        return xs[int(r() * len(xs))]

    def emit(t_index: int, entity: str, value: int, detail: str, para: int, kind: str) -> None:
        nonlocal clock
        t = TEMPLATES[t_index]
        sentence = t.paraphrases[para].replace("{e}", entity, 1).replace("{v}", t.values[value], 1)
        sentence = sentence[:1].upper() + sentence[1:]
        clock += 1000 + int(r() * 5000)
        month = MONTHS[int(r() * n_months)]
        prefix, midnight = days[(month, 1 + int(r() * 27))]
        tod = clock % DAY_MS  # the clock's time of day is kept
        hours, rest = divmod(tod, 3_600_000)
        minutes, rest = divmod(rest, 60_000)
        recorded_at = f"{prefix}{hours:02d}:{minutes:02d}:{rest // 1000:02d}.{rest % 1000:03d}Z"
        ulid_ = ulid(midnight + tod + int(r() * 1000), rng.bytes(10))
        importance = math.floor(r() * 100 + 0.5) / 100  # Math.round
        namespace = spaces[int(r() * n_spaces)]
        session = SESSIONS[int(r() * n_sessions)]
        records.append(Record.model_validate({
            "v": 1, "id": ulid_, "memoryId": ulid_, "op": "create", "type": t.type,
            "level": level, "namespace": namespace, "subject": _subject(entity),
            "tags": list(t.tags), "content": f"{sentence} {detail}" if detail else sentence,
            "summary": sentence[:SUMMARY_CHARS], "importance": importance, "confidence": 1,
            "recordedAt": recorded_at,
            "provenance": {"actor": "generator", "session": session}, "links": [],
        }))
        claims.append(Claim(t_index, entity, value, kind))

    while len(records) < count:
        t_index = int(r() * len(TEMPLATES))
        t = TEMPLATES[t_index]
        pattern = pick(t.entities)
        entity = pattern.replace("{s}", pick(SERVICES)) if "{s}" in pattern else \
            pattern.replace("{p}", pick(PEOPLE))
        value = int(r() * len(t.values))
        detail = pick(DETAILS)
        para = int(r() * len(t.paraphrases))
        emit(t_index, entity, value, detail, para, "original")
        if len(records) >= count:
            break
        roll = r()
        if roll < duplicate_rate:
            other = (para + 1 + int(r() * (len(t.paraphrases) - 1))) % len(t.paraphrases)
            emit(t_index, entity, value, detail, other, "duplicate")
        elif roll < duplicate_rate + contradiction_rate and t.exclusive:
            changed = (value + 1 + int(r() * (len(t.values) - 1))) % len(t.values)
            emit(t_index, entity, changed, pick(DETAILS), int(r() * len(t.paraphrases)),
                 "contradiction")

    return Corpus(records=records, claims=claims, queries=_queries(records))


def _queries(records: Iterable[Record]) -> list[Query]:
    by_subject: dict[str, set[str]] = {}
    for rec in records:
        by_subject.setdefault(rec.subject or "", set()).add(rec.memory_id)
    out = []
    for subject, ids in by_subject.items():  # dicts keep first-seen order
        if len(ids) < 2:
            continue
        out.append(Query(subject.removeprefix("entity:").replace("-", " "), ids))
        if len(out) == MAX_QUERIES:
            break
    return out


def write_jsonl(records: Iterable[Record], path: str | Path) -> None:
    """Write records as a JSONL file in the on-disk format (``serialize_records``)."""
    Path(path).write_text(serialize_records(records), encoding="utf-8")


if __name__ == "__main__":  # pragma: no cover - manual timing aid
    import sys
    import time

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    t0 = time.perf_counter()
    c = generate_corpus(count=n)
    t1 = time.perf_counter()
    text = serialize_records(c.records)
    t2 = time.perf_counter()
    print(f"{n} records: generate {t1 - t0:.2f}s, serialize {t2 - t1:.2f}s, "
          f"{len(text) / n:.0f} bytes/line, {len(c.queries)} queries")
