"""Write examples/team-store.jsonl: the exported store of Kestrel Pay, a fictional team of
five people and their coding agents building a payments API, August to November 2026.

Deterministic: run it twice and the bytes are the same. Every record is validated through
``ynm.model.records.Record`` and written with ``serialize_records``, so the file is exactly what
``ynm export`` writes. Every record is ``distributed`` (the demo imports it into a project
store).

    .venv/bin/python examples/make_team_store.py            # rewrite the file
    .venv/bin/python examples/make_team_store.py --check    # exit 1 if the file is stale
"""

from __future__ import annotations

import calendar
import random
import re
import sys
from pathlib import Path
from typing import Any

from ynm.model.ids import iso_ms, new_ulid
from ynm.model.jsonl import serialize_records
from ynm.model.records import Record

OUT = Path(__file__).with_name("team-store.jsonl")
YEAR = 2026
LEVEL = "distributed"

MAYA = "user:maya"    # Maya Okafor, payments team lead
TOM = "user:tom"      # Tom Lindqvist, platform / SRE lead
INES = "user:ines"    # Inès Duarte, data engineer, database owner since October
RAJ = "user:raj"      # Raj Mehta, ledger backend engineer
SAM = "user:sam"      # Sam Whitfield, CTO
CLAUDE = "agent:claude-code"
CODEX = "agent:codex"

REPO = "https://github.com/kestrelpay"


class Store:
    """Collects records; memories are named by a short key so links can be written by name."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.records: list[Record] = []
        self.ids: dict[str, str] = {}        # key -> memoryId
        self.base: dict[str, dict[str, Any]] = {}  # key -> type/namespace/subject
        self.last_at: dict[str, int] = {}    # key -> ms of the memory's latest record
        self.used_ms: set[int] = set()

    # -- helpers ---------------------------------------------------------------------------

    def _ms(self, when: str) -> int:
        """``"MM-DD HH:MM"`` in 2026 (UTC) plus deterministic seconds and milliseconds."""
        date, clock = when.split()
        month, day = (int(x) for x in date.split("-"))
        hour, minute = (int(x) for x in clock.split(":"))
        ms = calendar.timegm((YEAR, month, day, hour, minute, 0)) * 1000
        ms += self.rng.randrange(60_000)
        while ms in self.used_ms:
            ms += 1
        self.used_ms.add(ms)
        return ms

    def _stamp(self, key: str | None, when: str) -> tuple[str, str, int]:
        ms = self._ms(when)
        if key is not None and key in self.last_at and ms <= self.last_at[key]:
            raise ValueError(f"{key}: record at {when} is not after the memory's previous one")
        rid = new_ulid(ms, random_bytes=self.rng.randbytes)
        return rid, iso_ms(ms), ms

    def _links(self, links: list[tuple[str, str]] | None) -> list[dict[str, str]]:
        return [{"rel": rel, "to": self.ids[target]} for rel, target in (links or [])]

    @staticmethod
    def _prov(actor: str, session: str | None, source: str | None,
              tool: str | None) -> dict[str, str]:
        prov = {"actor": actor}
        for name, value in (("session", session), ("source", source), ("tool", tool)):
            if value:
                prov[name] = value
        return prov

    def _add(self, obj: dict[str, Any]) -> Record:
        record = Record.model_validate(obj)
        self.records.append(record)
        return record

    # -- ops -------------------------------------------------------------------------------

    def create(self, key: str, when: str, type_: str, namespace: str, subject: str | None,
               content: str, *, summary: str | None = None, tags: tuple[str, ...] = (),
               actor: str, session: str | None = None, source: str | None = None,
               tool: str | None = None, importance: float = 0.5, confidence: float = 1,
               pinned: bool | None = None, data: dict[str, Any] | None = None,
               data_schema: str | None = None, valid_from: str | None = None,
               ttl: str | None = None, links: list[tuple[str, str]] | None = None) -> None:
        if key in self.ids:
            raise ValueError(f"duplicate key {key}")
        rid, at, ms = self._stamp(None, when)
        text = unwrap(content)
        if type_ == "working" and ttl is None:
            ttl = "PT8H"
        obj: dict[str, Any] = {
            "v": 1, "id": rid, "memoryId": rid, "op": "create", "type": type_, "level": LEVEL,
            "namespace": namespace, "subject": subject, "tags": list(tags),
            "content": text, "summary": summary or summarize(text), "data": data,
            "dataSchema": data_schema, "importance": importance, "confidence": confidence,
            "pinned": pinned, "recordedAt": at, "validFrom": valid_from, "ttl": ttl,
            "provenance": self._prov(actor, session, source, tool), "links": self._links(links),
        }
        self._add({k: v for k, v in obj.items() if v is not None})
        self.ids[key] = rid
        self.base[key] = {"type": type_, "namespace": namespace, "subject": subject}
        self.last_at[key] = ms

    def supersede(self, key: str, when: str, content: str, *, summary: str | None = None,
                  tags: tuple[str, ...] = (), actor: str, session: str | None = None,
                  source: str | None = None, tool: str | None = None, importance: float = 0.5,
                  confidence: float = 1, data: dict[str, Any] | None = None,
                  data_schema: str | None = None, valid_from: str | None = None,
                  links: list[tuple[str, str]] | None = None) -> None:
        """What ``ynm supersede`` writes: type, level and namespace copied from the memory,
        a ``supersedes`` link first, tags/importance/confidence always present."""
        rid, at, ms = self._stamp(key, when)
        base = self.base[key]
        obj: dict[str, Any] = {
            "v": 1, "id": rid, "memoryId": self.ids[key], "op": "supersede",
            "type": base["type"], "level": LEVEL, "namespace": base["namespace"],
            "subject": base["subject"], "tags": list(tags), "content": unwrap(content),
            "summary": summary or summarize(unwrap(content)), "data": data,
            "dataSchema": data_schema,
            "importance": importance, "confidence": confidence, "recordedAt": at,
            "validFrom": valid_from, "provenance": self._prov(actor, session, source, tool),
            "links": [{"rel": "supersedes", "to": self.ids[key]}] + self._links(links),
        }
        self._add({k: v for k, v in obj.items() if v is not None})
        self.last_at[key] = ms

    def annotate(self, key: str, when: str, *, actor: str, tags: tuple[str, ...] = (),
                 links: list[tuple[str, str]] | None = None, importance: float | None = None,
                 confidence: float | None = None, pinned: bool | None = None,
                 needs_review: bool | None = None, reason: str | None = None,
                 session: str | None = None, tool: str | None = None) -> None:
        rid, at, ms = self._stamp(key, when)
        base = self.base[key]
        obj: dict[str, Any] = {
            "v": 1, "id": rid, "memoryId": self.ids[key], "op": "annotate",
            "type": base["type"], "level": LEVEL, "namespace": base["namespace"],
            "tags": list(tags), "importance": importance, "confidence": confidence,
            "pinned": pinned, "needsReview": needs_review, "recordedAt": at,
            "provenance": self._prov(actor, session, None, tool), "links": self._links(links),
            "reason": reason,
        }
        self._add({k: v for k, v in obj.items() if v is not None})
        self.last_at[key] = ms

    def pin(self, key: str, when: str, *, actor: str) -> None:
        """``ynm pin``: an annotate with ``pinned: true`` and reason ``pinned``."""
        self.annotate(key, when, actor=actor, pinned=True, reason="pinned", tool="ynm pin")

    def tombstone(self, key: str, when: str, reason: str, *, actor: str,
                  session: str | None = None, tool: str | None = None) -> None:
        rid, at, ms = self._stamp(key, when)
        base = self.base[key]
        self._add({
            "v": 1, "id": rid, "memoryId": self.ids[key], "op": "tombstone",
            "type": base["type"], "level": LEVEL, "namespace": base["namespace"], "tags": [],
            "recordedAt": at, "provenance": self._prov(actor, session, None, tool),
            "links": [], "reason": reason,
        })
        self.last_at[key] = ms

    def promote(self, key: str, working_key: str, when: str, tombstone_when: str,
                content: str, *, namespace: str, subject: str | None, tags: tuple[str, ...],
                type_: str = "episodic", importance: float = 0.5) -> None:
        """The dream promote pass: a new memory that derives from a working one, then the
        working memory tombstoned with ``promoted to <id>``."""
        self.create(key, when, type_, namespace, subject, content, tags=tags, actor=CLAUDE,
                    tool="ynm dream", importance=importance,
                    links=[("derives-from", working_key)])
        self.tombstone(working_key, tombstone_when, f"promoted to {self.ids[key]}",
                       actor=CLAUDE, tool="ynm dream")

    def jsonl(self) -> str:
        return serialize_records(sorted(self.records, key=lambda r: (r.recorded_at, r.id)))


_LIST_ITEM = re.compile(r"^(?:[-*] |\d+\. )")


def unwrap(text: str) -> str:
    """Join the hard-wrapped lines of each paragraph (the source is wrapped at 100 columns);
    list items start a new line and their indented continuations are joined onto them."""
    paragraphs = []
    for block in re.split(r"\n\s*\n", text.strip()):
        lines: list[str] = []
        for raw in block.splitlines():
            line = raw.strip()
            if lines and not _LIST_ITEM.match(line):
                lines[-1] += " " + line
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def summarize(content: str) -> str:
    """The first sentence of the first line (headings' ``#`` stripped), at most 280 characters."""
    line = next(x for x in content.splitlines() if x.strip()).lstrip("#").strip()
    end = line.find(". ")
    if 0 < end < 279:
        line = line[: end + 1]
    return line if len(line) <= 280 else line[:277] + "..."


def build() -> Store:
    s = Store(seed=20260801)
    _company(s)
    _ledger(s)
    _platform(s)
    _payments(s)
    _payouts(s)
    _sessions(s)
    _later(s)
    _more(s)
    return s


# ---------------------------------------------------------------------------------------
# August: the shared basics


def _company(s: Store) -> None:
    s.create("company", "08-03 08:05", "semantic", "common", "topic:company", """
Kestrel Pay sells a payments API to online marketplaces: pay-ins by card and SEPA Direct Debit,
a double-entry ledger that tracks every seller's balance, and payouts to sellers' bank accounts.
Engineering is two teams: payments (lead Maya Okafor: API, webhooks, fraud, payouts) and platform
(lead Tom Lindqvist: Kubernetes, Postgres, Kafka, CI). Sam Whitfield is CTO.
""", tags=("onboarding", "org"), actor=SAM, importance=0.9, pinned=True,
             source="https://wiki.kestrelpay.example/eng/welcome")

    s.create("money", "08-03 08:20", "semantic", "common", "topic:money-representation", """
Money is always an integer number of minor units (int64) plus an ISO 4217 currency code, e.g.
`{"amount": 1250, "currency": "EUR"}` for 12.50 EUR. Never use floats or decimals in the API or
the ledger. JPY and KRW have no minor unit, so 1250 JPY is 1250.
""", summary="Money is int64 minor units plus an ISO 4217 currency code; never floats.",
             tags=("api", "ledger", "convention"), actor=SAM, importance=1.0, pinned=True,
             source=f"{REPO}/monorepo/blob/main/docs/adr/002-money.md")

    s.create("glossary", "08-03 08:40", "reference", "common", "topic:glossary", """
Glossary of payment terms as we use them: **pay-in** (money a buyer pays us), **payout** (money we
send to a seller's bank), **settlement** (the acquirer paying us the net of a day's card pay-ins),
**journal entry** (one balanced ledger transaction), **hold** (funds reserved pending fraud
review). The full glossary is on the wiki at eng/glossary.
""", summary='Glossary: pay-in, payout, settlement, journal entry, hold.',
             tags=("onboarding",), actor=SAM, source="https://wiki.kestrelpay.example/eng/glossary")

    s.create("adr-index", "08-03 09:02", "reference", "common", "topic:adr", """
Architecture decision records live in `docs/adr/` of the monorepo
(https://github.com/kestrelpay/monorepo/tree/main/docs/adr); `docs/adr/README.md` is the index.
Numbering is sequential; a reversed decision gets a new ADR that links the old one.
""", tags=("docs", "adr"), actor=TOM)

    s.create("review-rules", "08-03 09:30", "semantic", "common", "topic:code-review", """
Every pull request needs one approval. Changes under `ledger/`, `payouts/` or any `migrations/`
directory need two approvals, one of them from a CODEOWNER. Authors merge their own PRs with
squash merge once CI is green.
""", summary='One approval per PR; ledger, payouts and migrations need two, one from a CODEOWNER.',
             tags=("process", "review"), actor=MAYA, importance=0.7,
             source=f"{REPO}/monorepo/blob/main/.github/CODEOWNERS")

    s.create("migration-reviewer", "08-03 09:45", "semantic", "common",
             "topic:database-migrations", """
Database migrations are reviewed by Tom Lindqvist (platform) before merge. Tag @tom on any PR that
touches a `migrations/` directory; he checks lock behaviour, index builds and the rollback.
""", summary="Tom reviews every database migration before merge.",
             tags=("review", "postgres", "owners"), actor=TOM, importance=0.7)

    s.create("release-cadence", "08-04 10:15", "semantic", "common", "topic:release-process", """
The public API ships on a release train: every Tuesday and Thursday at 11:00 CET, cut from `main`
at 10:00. Anything not merged by the cut waits for the next train. Hotfixes can go any time with
Maya's or Tom's approval.
""", summary="API release train: Tuesdays and Thursdays 11:00 CET, cut at 10:00.",
             tags=("release", "process"), actor=MAYA, importance=0.7)

    s.create("severity", "08-04 10:40", "semantic", "common", "topic:incident-severity", """
Incident severities: **SEV1** money is wrong or lost, or pay-ins/payouts are down for everyone;
**SEV2** a major feature is degraded or a large merchant is blocked; **SEV3** minor, workaround
exists. SEV1 and SEV2 page the on-call and need a written postmortem within five working days.
""", tags=("incident", "process"), actor=TOM, importance=0.8, pinned=True)

    s.create("secrets", "08-04 11:05", "semantic", "common", "topic:secrets", """
Secrets live in Vault under `kv/kestrel/<service>/<env>`; pods get them through the Vault agent
injector. Nothing secret goes into `.env` files, CI variables or the repo. Ask Tom for a Vault
policy when a new service needs one.
""", tags=("security", "vault"), actor=TOM, importance=0.8)

    s.create("wrong-secrets", "08-04 11:20", "reference", "common", "topic:secrets", """
The staging database password is in the shared 1Password vault "eng-staging".
""", tags=("security",), actor=CODEX, session="cx-0804-onboarding", tool="mcp:remember",
             confidence=0.4)

    s.create("code-style", "08-05 09:10", "semantic", "common", "topic:code-style", """
Go services use golangci-lint with the repo's `.golangci.yml` and table-driven tests; Python tools
use ruff and pytest. Error messages start lowercase and carry no trailing period (Go style).
Generated code lives in `gen/` and is never edited by hand.
""", tags=("convention", "go", "python"), actor=RAJ)

    s.create("status-page", "08-05 09:25", "reference", "common", "topic:status-page", """
Public status page: https://status.kestrelpay.example (Statuspage). The incident commander
posts the first update within 15 minutes of a SEV1 or SEV2; template in
`runbooks/comms/status-update.md` of the ops repo.
""", tags=("incident", "comms"), actor=TOM)

    s.create("oncall-rota", "08-05 09:50", "reference", "common", "topic:on-call", """
The on-call rota is the PagerDuty schedule "kestrel-primary" (one week, handover Mondays 10:00
CET), with "kestrel-secondary" as escalation after 15 minutes. Swaps go in #oncall.
""", tags=("on-call", "pagerduty"), actor=TOM, importance=0.7)

    s.create("oncall-runbook", "08-05 10:05", "reference", "common", "topic:on-call", """
The on-call runbook is `runbooks/on-call.md` in the ops repo
(https://github.com/kestrelpay/ops/blob/main/runbooks/on-call.md): first five minutes, who to
call, how to declare an incident, links to every service runbook and dashboard.
""", summary="On-call runbook: runbooks/on-call.md in the ops repo.",
             tags=("on-call", "runbook"), actor=TOM, importance=0.8,
             links=[("about", "oncall-rota")])

    s.create("maya-prs", "08-05 14:30", "semantic", "team/payments", "entity:maya", """
Maya prefers small pull requests (under about 400 changed lines) and asks for the API diff
(`make api-diff` output) pasted into the description of any PR that changes the public API.
""", tags=("preference", "review"), actor=MAYA)

    s.create("tom-alerts", "08-05 15:00", "semantic", "team/platform", "entity:tom", """
Tom's rule for alerts: every alert must link a runbook section and have an owner team. Alerts
without a runbook link are deleted at the monthly alert review.
""", tags=("preference", "alerting"), actor=TOM)

    s.create("raj-tests", "08-06 09:15", "semantic", "project/ledger", "entity:raj", """
Raj prefers table-driven tests with `t.Run` subtests and testcontainers-go for anything that
touches Postgres; he pushes back on mocks of the database layer in ledger code.
""", tags=("preference", "testing", "go"), actor=RAJ)

    s.create("ines-sql", "08-06 09:40", "semantic", "common", "entity:ines", """
Inès wants SQL in reviews formatted with one clause per line and an `EXPLAIN (ANALYZE, BUFFERS)`
plan attached for any query that touches the journal tables.
""", tags=("preference", "postgres", "review"), actor=INES)


# ---------------------------------------------------------------------------------------
# The ledger


def _ledger(s: Store) -> None:
    s.create("ledger-model", "08-06 11:00", "semantic", "project/ledger", "entity:ledger-service",
             """
The ledger service is a double-entry ledger. Every journal entry has two or more lines whose
amounts sum to zero per currency; entries are append-only. A mistake is corrected with a reversing
entry, never an UPDATE. Accounts are typed: `seller_available`, `seller_pending`, `platform_fees`,
`acquirer_clearing`, `bank_payouts`.
""", summary="Ledger: double-entry, append-only journal; corrections are reversing entries.",
             tags=("ledger", "architecture"), actor=RAJ, importance=0.9,
             source=f"{REPO}/monorepo/blob/main/docs/adr/004-double-entry.md")

    s.create("ledger-card", "08-06 11:20", "reference", "project/ledger", "entity:ledger-service",
             """
Service card for the ledger service: repo `kestrelpay/monorepo` path `ledger/`, Go 1.23, owners
payments team (Raj primary), database `ledger-db`, dashboard
https://grafana.kestrelpay.example/d/ledger,
SLO 99.95% of journal writes under 150 ms.
""", tags=("ledger", "service-card"), actor=RAJ,
             data={"service": "ledger-service", "repo": "kestrelpay/monorepo", "path": "ledger/",
                   "language": "go", "owners": ["team/payments"], "primary": "raj",
                   "database": "ledger-db",
                   "dashboard": "https://grafana.kestrelpay.example/d/ledger",
                   "slo": {"objective": 0.9995, "latencyMs": 150}},
             data_schema="service-card/v1")

    s.create("event-sourcing", "08-07 16:00", "semantic", "project/ledger",
             "topic:ledger-source-of-truth", """
Decision (ADR-006): the ledger is event-sourced. Kafka topic `ledger.events` is the source of
truth; Postgres tables are projections rebuilt by replaying the topic.
""", tags=("decision", "ledger", "kafka"), actor=RAJ, importance=0.8,
             source=f"{REPO}/monorepo/blob/main/docs/adr/006-ledger-event-sourcing.md")

    s.create("balances", "08-10 10:30", "semantic", "project/ledger", "topic:ledger-balances", """
Decision (ADR-007): balances are kept in `account_balances`, updated in the same transaction that
inserts the journal lines (`SELECT ... FOR UPDATE` on the balance row). Reads never sum the
journal. A nightly job recomputes balances from the journal and alerts on any difference.
""",
             summary='ADR-007: account_balances is updated in the same transaction as the journal.',
             tags=("decision", "ledger", "postgres"), actor=RAJ, importance=0.7,
             source=f"{REPO}/monorepo/blob/main/docs/adr/007-ledger-balances.md")

    s.create("adr7", "08-10 10:45", "reference", "project/ledger", "topic:ledger-balances", """
ADR-007 "Materialised balances" is docs/adr/007-ledger-balances.md; the discussion is in PR #412
(https://github.com/kestrelpay/monorepo/pull/412).
""", tags=("adr", "ledger"), actor=RAJ, links=[("about", "balances")])

    s.create("recon-howto", "08-11 13:00", "procedural", "project/ledger",
             "topic:ledger-reconciliation", """
Running the reconciliation by hand:

1. `kubectl -n ledger exec deploy/ledger-tools -- ledgerctl reconcile --date 2026-08-10 --dry-run`
2. Read the diff: one line per account whose stored balance differs from the journal sum.
3. If the diff is real, open a SEV2 and do **not** fix balances by hand; Raj or Inès writes a
   correcting journal entry with `ledgerctl adjust --reason <ticket>`.
4. Re-run without `--dry-run` only to record a clean run in `reconciliation_runs`.
""",
             summary='Reconcile the ledger by hand with ledgerctl reconcile; never edit balances.',
             tags=("ledger", "runbook"), actor=RAJ, importance=0.7)

    s.create("fx-rounding", "08-12 15:10", "semantic", "project/ledger", "topic:fx", """
FX conversion rounds half-to-even (banker's rounding) once, at conversion time, on the converted
amount in minor units. The rate is the ECB reference rate of the previous business day, stored on
the journal entry as a decimal string with 6 places.
""", tags=("ledger", "fx", "convention"), actor=RAJ, importance=0.7)

    s.create("recon-aug19", "08-19 09:30", "episodic", "project/ledger",
             "topic:ledger-reconciliation", """
Nightly reconciliation on 19 Aug flagged 3 seller accounts off by 1 cent each. Cause: the
GBP->EUR conversion path in `payouts/fx.go` rounded half-up twice (once per leg) instead of once
half-to-even. Fixed in PR #437; Raj posted three correcting entries (ticket LED-211).
""", summary="19 Aug reconciliation: 3 accounts off by 1 cent, double half-up FX rounding.",
             tags=("incident", "ledger", "fx", "sev3"), actor=RAJ, importance=0.6,
             source="https://linear.app/kestrelpay/issue/LED-211",
             valid_from="2026-08-19T02:10:00.000Z",
             links=[("about", "fx-rounding")])

    s.create("ledger-migrations", "08-13 11:30", "procedural", "project/ledger",
             "topic:database-migrations", """
How we write database migrations for ledger-db:

- golang-migrate files in `ledger/migrations/`, `NNNN_name.up.sql` / `.down.sql`.
- Expand, deploy, contract: add nullable columns first, backfill in batches of 10k, add the
  constraint `NOT VALID` then `VALIDATE CONSTRAINT` in a later migration.
- Indexes: `CREATE INDEX CONCURRENTLY` in a migration of its own (no transaction).
- `SET lock_timeout = '3s'` at the top of every migration.
- Never rewrite `journal_lines`: it has 400M rows.
""", summary="Ledger migrations: expand/contract, CONCURRENTLY indexes, lock_timeout 3s.",
             tags=("postgres", "migrations", "howto"), actor=TOM, importance=0.8,
             links=[("supports", "migration-reviewer")])


# ---------------------------------------------------------------------------------------
# Platform: clusters, deploys, databases


def _platform(s: Store) -> None:
    s.create("clusters", "08-07 10:00", "semantic", "team/platform", "entity:kubernetes", """
We run two EKS clusters in eu-west-1: `prod-eu-1` and `staging-eu-1`. Each service has its own
namespace named after it. Node groups: `general` (m7i.xlarge) and `ledger` (r7i.2xlarge, tainted
for ledger pods only).
""", tags=("infra", "kubernetes", "aws"), actor=TOM, importance=0.6)

    s.create("ledger-deploy", "08-07 11:00", "procedural", "team/platform",
             "entity:ledger-service", """
How to deploy the ledger service:

1. Merge to `main`; CI builds `ghcr.io/kestrelpay/ledger:<git sha>` and runs migrations against
   a throwaway database.
2. `make deploy SERVICE=ledger ENV=staging TAG=<sha>` and watch the ledger dashboard for 15 minutes.
3. `make deploy SERVICE=ledger ENV=prod TAG=<sha> CANARY=10` sends 10% of traffic to the new pods
   for 30 minutes.
4. `make promote SERVICE=ledger` finishes the rollout; `make rollback SERVICE=ledger` undoes it.

Deploy the ledger only on the release train, never on Fridays.
""", summary="Deploy the ledger service: make deploy to staging, 10% canary in prod, make promote.",
             tags=("deploy", "ledger", "runbook"), actor=TOM, importance=0.8,
             source=f"{REPO}/ops/blob/main/runbooks/ledger/deploy.md")

    s.create("ledger-db", "08-07 14:00", "semantic", "team/platform", "entity:ledger-db", """
ledger-db is Postgres 15 on RDS (db.r6g.2xlarge, Multi-AZ) with one read replica used by
reporting. Connection pooling through PgBouncer in transaction mode; the ledger service gets 40
server connections.
""", tags=("postgres", "infra", "aws"), actor=TOM, importance=0.6)

    s.create("observability", "08-08 10:20", "semantic", "team/platform", "topic:observability", """
Observability stack: OpenTelemetry SDKs in every service, traces to Tempo, logs to Loki, metrics
to Prometheus (Mimir for long-term), all in Grafana at https://grafana.kestrelpay.example.
Log lines are JSON with `trace_id`; never log full card numbers or IBANs.
""", tags=("observability", "decision"), actor=TOM, importance=0.6)

    s.create("dashboards", "08-08 10:40", "reference", "team/platform", "topic:observability", """
Grafana dashboards: ledger https://grafana.kestrelpay.example/d/ledger, payouts
https://grafana.kestrelpay.example/d/payouts, API gateway
https://grafana.kestrelpay.example/d/gateway,
Kafka https://grafana.kestrelpay.example/d/kafka. The "Money flow" overview is the home dashboard.
""", tags=("dashboard", "observability"), actor=TOM, links=[("about", "observability")])

    s.create("infra-repo", "08-08 11:00", "reference", "team/platform", "entity:terraform", """
Infrastructure is Terraform in `kestrelpay/infra` (https://github.com/kestrelpay/infra); state
in the S3 bucket `kestrel-tfstate` with DynamoDB locking. `make plan ENV=prod` posts the plan to
the PR; only Tom and Sam can apply to prod.
""", tags=("infra", "terraform"), actor=TOM)

    s.create("kafka", "08-08 14:15", "semantic", "team/platform", "entity:kafka", """
Kafka is Amazon MSK, 3 brokers (kafka.m7g.large), 7-day retention, topics created only through
Terraform. Consumers use the `kestrel-go/kafka` wrapper, which commits offsets after processing.
""", tags=("kafka", "infra"), actor=TOM)

    s.create("db-password-rotation", "08-12 16:00", "procedural", "team/platform",
             "entity:ledger-db", """
Rotating the ledger-db password: `vault write -f database/rotate-role/ledger-app` rotates the
dynamic role; pods pick up new credentials within 5 minutes through the Vault agent. For the
master password use the RDS console and then `vault write database/config/ledger-db ...`.
Never paste a password into Slack.
""", tags=("postgres", "vault", "howto"), actor=TOM, links=[("about", "secrets")])

    s.create("ci", "08-13 09:00", "semantic", "team/platform", "topic:ci", """
CI is GitHub Actions. The full gate (`make gate`) runs lint, unit tests, integration tests with
testcontainers and the API contract tests; it takes about 14 minutes. Merges to `main` need a
green gate; flaky tests are quarantined with `//flaky:` and a ticket, never retried silently.
""", summary='CI is GitHub Actions; make gate (about 14 minutes) must be green to merge.',
             tags=("ci", "process"), actor=TOM)

    s.create("gateway", "08-13 15:30", "semantic", "team/platform", "entity:api-gateway", """
The public API sits behind Envoy (api-gateway) with per-merchant rate limits: 100 requests per
second sustained, bursts of 200. Limits live in `gateway/ratelimits.yaml`; raising one for a
merchant needs a ticket from their account manager.
""", tags=("api", "rate-limits"), actor=TOM)


# ---------------------------------------------------------------------------------------
# Payments: API, idempotency, webhooks, fraud


def _payments(s: Store) -> None:
    s.create("api-versioning", "08-06 14:00", "semantic", "team/payments", "entity:public-api", """
The public API is versioned by date: clients send `Kestrel-Version: 2026-07-01`. Breaking changes
ship only under a new version date; old versions are supported for 12 months. The changelog is
generated from `api/changes/*.yaml`.
""", tags=("api", "versioning", "decision"), actor=MAYA, importance=0.7)

    s.create("idempotency", "08-06 14:30", "semantic", "team/payments", "topic:idempotency", """
Every POST to the public API requires an `Idempotency-Key` header. Keys are stored in Redis for
24 hours with the response; a repeat with the same key and body returns the stored response, a
repeat with a different body returns 422.
""", tags=("api", "redis", "decision"), actor=MAYA, importance=0.7)

    s.create("webhook-retries", "08-11 10:00", "semantic", "team/payments",
             "entity:webhook-dispatcher", """
Webhook retry policy: a delivery that does not get a 2xx within 10 seconds is retried with
exponential backoff at 30 s, 2 min, 10 min, 1 h, 6 h and 24 h (six retries). After the last failure
the endpoint is disabled and the merchant's technical contact is emailed.
""", summary="Webhooks retry at 30s, 2m, 10m, 1h, 6h, 24h, then the endpoint is disabled.",
             tags=("webhooks", "retries", "api"), actor=MAYA, importance=0.7,
             data={"timeoutSeconds": 10, "backoffSeconds": [30, 120, 600, 3600, 21600, 86400],
                   "onExhausted": "disable-endpoint-and-email"},
             data_schema="retry-policy/v1")

    s.create("webhook-replay", "08-11 10:30", "procedural", "team/payments",
             "entity:webhook-dispatcher", """
Replaying webhooks for a merchant: `kestrel-admin webhooks replay --merchant <id> --since
2026-08-10T00:00:00Z [--event payment.succeeded]`. It re-enqueues deliveries in order; check the
merchant's endpoint is re-enabled first (`kestrel-admin webhooks endpoint enable <endpoint-id>`).
""", tags=("webhooks", "howto"), actor=MAYA)

    s.create("webhook-signing", "08-11 11:00", "semantic", "team/payments",
             "entity:webhook-dispatcher", """
Webhooks are signed with HMAC-SHA256 over `<timestamp>.<body>`; the header is
`Kestrel-Signature: t=<unix>,v1=<hex>`. Merchants must reject signatures older than 5 minutes.
Secrets rotate with a 24 h overlap during which two `v1` values are sent.
""", tags=("webhooks", "security", "api"), actor=MAYA)

    s.create("fraud-threshold", "08-14 09:45", "semantic", "team/payments",
             "entity:fraud-scorer", """
fraud-scorer returns a score from 0 to 100 for each pay-in. Scores of 85 and above put a hold on
the funds and create a manual review task in the risk queue; scores of 98 and above are declined
outright.
""", tags=("fraud", "risk"), actor=MAYA, importance=0.6)

    s.create("acquirer-docs", "08-14 10:30", "reference", "team/payments", "entity:acquirer", """
Our card acquirer is Northwind Acquiring. API docs: https://docs.northwind-acquiring.example/v3;
sandbox credentials are in Vault at `kv/kestrel/acquirer/staging`. Their support desk answers in
#ext-northwind (shared Slack channel).
""", tags=("cards", "acquirer", "docs"), actor=MAYA)

    s.create("retro-aug", "08-28 16:00", "episodic", "team/payments", "topic:team-retro", """
Payments retro, 28 Aug: the release train works but Thursday trains are too crowded; idempotency
keys expiring after 24 h surprised two merchants who retry batch jobs the next morning; contract
tests caught two breaking API changes before release. Actions: Maya to look at longer key
retention; Raj to document the FX rounding rule.
""", tags=("retro", "meeting"), actor=MAYA, importance=0.4)

    s.create("sepa-mandates", "08-20 11:15", "semantic", "team/payments", "topic:sepa", """
SEPA Direct Debit pay-ins need a mandate reference (`mandate_id`) per buyer; the first debit on
a new mandate has a D-5 business day pre-notification. Returns (R-transactions) can arrive up to
8 weeks later (13 months if unauthorised), so SEPA funds stay in `seller_pending` for 7 days.
""", tags=("sepa", "pay-ins"), actor=MAYA, importance=0.6)

    s.create("dup-charge", "09-09 13:20", "episodic", "team/payments", "topic:idempotency", """
Duplicate charge incident, 9 Sep (SEV2): a Redis failover at 12:41 UTC lost about 90 seconds of
idempotency keys; 14 card pay-ins from one marketplace's retrying client were charged twice.
All 14 were refunded by 15:00. Redis replication is asynchronous, so keys written just before the
failover were gone.
""", summary="9 Sep SEV2: Redis failover lost idempotency keys; 14 pay-ins charged twice.",
             tags=("incident", "sev2", "redis", "idempotency"), actor=MAYA, importance=0.8,
             source="https://linear.app/kestrelpay/issue/INC-2026-011",
             valid_from="2026-09-09T12:41:00.000Z")


# ---------------------------------------------------------------------------------------
# Payouts and the October outage


def _payouts(s: Store) -> None:
    s.create("payout-cutoffs", "08-18 10:00", "semantic", "project/payouts",
             "entity:payout-service",
             """
Payout cut-offs: SEPA Credit Transfer batches go to the bank by SFTP at 14:00 CET on business
days; UK Faster Payments go hourly through the bank's API. A payout requested after the cut-off
leaves the next business day.
""", tags=("payouts", "sepa"), actor=MAYA, importance=0.6)

    s.create("payout-resubmit", "08-18 10:30", "procedural", "project/payouts",
             "entity:payout-service", """
Re-submitting a failed payout batch: `payoutctl batch show <batch-id>` to see the bank's response,
fix the cause, then `payoutctl batch resubmit <batch-id>`. Never create a new batch for the same
payouts: the bank deduplicates on the batch message id and a new id pays twice.
""", tags=("payouts", "runbook"), actor=MAYA, importance=0.7)

    s.create("payout-alert", "08-18 11:00", "semantic", "project/payouts",
             "entity:payout-service", """
Payout alerting: `PayoutBatchStuck` fires when a batch has been in `processing` for more than 2
hours. Pages the payments on-call.
""", tags=("payouts", "alerting"), actor=MAYA)

    s.create("payout-outage", "10-07 13:30", "episodic", "project/payouts", "topic:payout-outage",
             """
Payout outage, 7 Oct 2026, 09:10-11:45 UTC (SEV1). SEPA payout batches sat in `processing` for
2 h 35 min. Root cause: the bank rotated its SFTP host key on 6 Oct; payout-service pins the host
key, so every upload failed the handshake. The uploader treated the failure as retryable and kept
batches in `processing`, and `PayoutBatchStuck` only fires after 2 hours, so nobody knew until a
seller asked. 1,842 payouts (EUR 3.1M) were delayed; none were lost or paid twice. Fix: new key
pinned after out-of-band verification with the bank, batches re-submitted at 11:40.
""", summary="Payout outage, 7 Oct (SEV1): the bank rotated its SFTP host key and uploads "
             "failed silently for 2h35m.",
             tags=("incident", "sev1", "payouts", "postmortem"), actor=MAYA, importance=0.9,
             source="https://linear.app/kestrelpay/issue/INC-2026-014",
             valid_from="2026-10-07T09:10:00.000Z",
             links=[("about", "payout-alert")])

    s.create("outage-actions", "10-09 15:00", "episodic", "project/payouts", "topic:payout-outage",
             """
Payout outage postmortem actions (INC-2026-014): (1) `PayoutBatchStuck` threshold down to 20
minutes; (2) handshake failures are non-retryable and page immediately; (3) subscribe
payments-oncall@ to the bank's technical notices; (4) keep the bank's next host key pre-pinned
as a second trusted key; (5) add a synthetic SFTP upload check every 15 minutes.
""",
             summary='Payout outage actions: 20-minute stuck alert, page on handshake failure.',
             tags=("postmortem", "payouts", "action-items"), actor=MAYA, importance=0.7,
             links=[("derives-from", "payout-outage")])

    s.create("sftp-keys", "10-10 10:00", "procedural", "project/payouts",
             "entity:payout-service", """
Updating the bank's SFTP host key: get the new fingerprint from the bank's technical notice,
confirm it by phone with the bank's ops desk (number in the on-call runbook), then add it to
`payouts/config/known_hosts` alongside the old one and deploy. Remove the old key only after the
bank confirms the switch.
""", tags=("payouts", "sftp", "runbook"), actor=TOM, importance=0.7,
             links=[("derives-from", "payout-outage")])


# ---------------------------------------------------------------------------------------
# Working sessions of people with their agents


def _sessions(s: Store) -> None:
    # Codex onboarding session: the 1Password note was wrong.
    s.create("w-onb-1", "08-04 11:10", "working", "session/cx-0804-onboarding", "topic:secrets",
             """
Looking for staging DB credentials for a local run of the ledger tests. Found a mention of a
1Password vault in an old README; not confirmed.
""", tags=("scratch",), actor=CODEX, session="cx-0804-onboarding", tool="mcp:remember")
    s.tombstone("w-onb-1", "08-04 19:30", "expired", actor=CODEX, tool="ynm session end")
    s.tombstone("wrong-secrets", "08-05 08:50",
                "wrong: staging credentials come from Vault (kv/kestrel/ledger/staging); the "
                "1Password vault was retired in 2025", actor=TOM, tool="ynm forget")

    # Maya and Claude Code move idempotency keys to Postgres (September).
    sid = "cc-0915-idempotency-pg"
    ns = f"session/{sid}"
    s.create("w-idem-1", "09-15 09:05", "working", ns, "topic:idempotency", """
Task: move idempotency keys from Redis to Postgres (table `idempotency_keys`, 72 h retention)
after the 9 Sep duplicate charges. Plan: migration, dual-write behind flag
`idempotency.pg_write`, switch reads, drop Redis path.
""", tags=("plan",), actor=CLAUDE, session=sid, tool="mcp:remember")
    s.create("w-idem-2", "09-15 10:20", "working", ns, "topic:idempotency", """
Migration 0042_idempotency_keys written: primary key (merchant_id, key), `request_hash bytea`,
`response jsonb`, `expires_at timestamptz` with a BRIN index. Waiting on review; tests green.
""", tags=("progress",), actor=CLAUDE, session=sid, tool="mcp:remember",
             links=[("in-session", "w-idem-1")])
    s.create("w-idem-3", "09-15 11:45", "working", ns, "topic:idempotency", """
Gotcha: the partition cleanup job must delete with `expires_at < now() - interval '1 hour'` and in
batches of 5k, or the delete holds locks that slow the insert path. Worth keeping after the
session.
""", tags=("gotcha", "promote"), actor=CLAUDE, session=sid, tool="mcp:remember",
             links=[("in-session", "w-idem-1")])
    s.create("w-idem-4", "09-15 14:10", "working", ns, "topic:idempotency", """
Dual-write deployed to staging; read path still Redis. Next session: flip
`idempotency.pg_read` in staging, run the duplicate-request contract tests.
""", tags=("progress",), actor=CLAUDE, session=sid, tool="mcp:remember",
             links=[("in-session", "w-idem-1")])
    s.promote("idem-cleanup", "w-idem-3", "09-16 02:00", "09-16 02:01", """
Deleting expired idempotency keys: delete in batches of 5,000 with
`expires_at < now() - interval '1 hour'`; one large DELETE holds locks that slow the insert path
of the public API.
""", namespace="team/payments", subject="topic:idempotency", tags=("gotcha", "postgres"),
              type_="procedural", importance=0.6)
    for key, at in (("w-idem-1", "09-16 02:02"), ("w-idem-2", "09-16 02:03"),
                    ("w-idem-4", "09-16 02:04")):
        s.tombstone(key, at, "expired", actor=CLAUDE, tool="ynm dream")

    # Raj and Claude Code investigate consumer lag (September).
    sid = "cc-0922-ledger-lag"
    ns = f"session/{sid}"
    s.create("w-lag-1", "09-22 13:00", "working", ns, "entity:kafka", """
Investigating consumer lag on `payouts.requested` during today's deploy: lag peaked at 48k
messages for 6 minutes. Suspect consumer group rebalances when pods roll.
""", tags=("investigation",), actor=CLAUDE, session=sid, tool="mcp:remember")
    s.create("w-lag-2", "09-22 14:30", "working", ns, "entity:kafka", """
Confirmed: each pod restart triggers a full rebalance (eager protocol) and 20-40 s of no
consumption; 12 pods restarting one by one = 12 rebalances. Cooperative-sticky assignor or static
membership (`group.instance.id`) would avoid most of it.
""", tags=("finding", "promote"), actor=CLAUDE, session=sid, tool="mcp:remember",
             links=[("in-session", "w-lag-1")])
    s.promote("lag-sep22", "w-lag-2", "09-23 02:00", "09-23 02:01", """
Consumer lag on `payouts.requested`, 22 Sep: a rolling deploy of 12 pods caused 12 eager
rebalances, each 20-40 s without consumption; lag peaked at 48k messages for 6 minutes. No payouts
were late.
""", namespace="team/platform", subject="topic:kafka-consumer-lag",
              tags=("incident", "kafka", "sev3"), importance=0.5)
    s.tombstone("w-lag-1", "09-23 02:02", "expired", actor=CLAUDE, tool="ynm dream")

    # Tom and Claude Code move deploys to Argo CD (October).
    sid = "cc-1020-argocd"
    ns = f"session/{sid}"
    s.create("w-argo-1", "10-20 09:30", "working", ns, "entity:ledger-service", """
Migrating ledger deploys from `make deploy` to Argo CD. App manifests in `ops/argocd/apps/ledger`;
canary via Argo Rollouts with analysis on error rate and p99 latency.
""", tags=("plan", "deploy"), actor=CLAUDE, session=sid, tool="mcp:remember", ttl="PT12H")
    s.create("w-argo-2", "10-20 15:00", "working", ns, "entity:ledger-service", """
Argo Rollouts canary steps: 10% for 10 min, 50% for 20 min, then 100%; analysis template
`ledger-slo` aborts on error rate > 0.5% or p99 > 300 ms. Tested on staging twice, both green.
""", tags=("progress", "deploy"), actor=CLAUDE, session=sid, tool="mcp:remember",
             ttl="PT12H", links=[("in-session", "w-argo-1")])

    # Inès and Claude Code prepare the Postgres 16 upgrade (October); session still open.
    sid = "cc-1012-pg16"
    ns = f"session/{sid}"
    s.create("w-pg-1", "10-12 10:00", "working", ns, "entity:ledger-db", """
Upgrade plan for ledger-db 15 -> 16: blue/green deployment on RDS, logical replication catch-up,
switchover in the Tuesday 06:00 CET window. Checked extensions: pg_stat_statements and pgcrypto
both fine on 16.
""", tags=("plan", "postgres"), actor=CLAUDE, session=sid, tool="mcp:remember")
    s.create("w-pg-2", "10-12 16:40", "working", ns, "entity:ledger-db", """
Rehearsal on the staging clone: switchover took 48 s of write unavailability. PgBouncer needs
`server_reset_query` unchanged; update the RDS endpoint in Vault, not in the deployment.
""", tags=("progress", "postgres"), actor=CLAUDE, session=sid, tool="mcp:remember",
             links=[("in-session", "w-pg-1")])
    s.tombstone("w-pg-1", "10-13 02:00", "expired", actor=CLAUDE, tool="ynm dream")
    s.tombstone("w-pg-2", "10-13 02:01", "expired", actor=CLAUDE, tool="ynm dream")

    # Maya and Codex: fraud threshold review (20 Nov), still open at export time.
    sid = "cx-1120-fraud"
    ns = f"session/{sid}"
    s.create("w-fraud-1", "11-20 14:00", "working", ns, "entity:fraud-scorer", """
Reviewing fraud holds for October: 1,204 holds at score >= 85, 71% released by the risk team
without action. Trying thresholds 88 and 90 on October data.
""", tags=("analysis", "fraud"), actor=CODEX, session=sid, tool="mcp:remember")
    s.create("w-fraud-2", "11-20 15:15", "working", ns, "entity:fraud-scorer", """
At 90: holds drop to 402, and 9 of the 11 confirmed fraud cases in October would still have been
held (the other two scored 86 and 89). Maya wants the risk team's view before changing anything.
""", tags=("analysis", "fraud"), actor=CODEX, session=sid, tool="mcp:remember",
             links=[("in-session", "w-fraud-1")])


# ---------------------------------------------------------------------------------------
# September to November: decisions change, incidents, reflections, annotations


def _later(s: Store) -> None:
    # September: the event-sourcing decision is reversed.
    s.supersede("event-sourcing", "09-02 15:30", """
Decision (ADR-009, reverses ADR-006): Postgres is the source of truth for the ledger. Kafka is
only for outbound events, published with the transactional outbox pattern (`ledger_outbox`
table, relayed by `ledger-relay`). Replaying Kafka to rebuild balances was too slow (9 h for
one month) and made reconciliation depend on topic retention.
""", summary="Reversed: Postgres is the ledger's source of truth; Kafka only for outbox events.",
                tags=("decision", "ledger", "kafka", "reversed"), actor=RAJ, importance=0.8,
                source=f"{REPO}/monorepo/blob/main/docs/adr/009-postgres-source-of-truth.md")
    s.create("adr9", "09-02 15:45", "reference", "project/ledger", "topic:ledger-source-of-truth",
             """
ADR-009 "Postgres as the ledger's source of truth" is docs/adr/009-postgres-source-of-truth.md;
it supersedes ADR-006. Benchmarks of the replay in PR #468.
""", tags=("adr", "ledger"), actor=RAJ, links=[("about", "event-sourcing")])
    s.annotate("adr-index", "09-02 16:00", actor=RAJ, tags=("ledger",),
               links=[("about", "adr9")], reason="link ADR-009")

    s.create("outbox-howto", "09-04 10:00", "procedural", "project/ledger", "topic:outbox", """
Publishing a ledger event: insert a row into `ledger_outbox` (topic, key, payload jsonb) in the
same transaction as the journal entry. `ledger-relay` polls with `FOR UPDATE SKIP LOCKED`, sends to
Kafka and marks the row sent. Consumers must be idempotent on the event id; delivery is
at-least-once.
""", tags=("ledger", "kafka", "howto"), actor=RAJ, importance=0.6,
             links=[("derives-from", "event-sourcing")])

    # September: idempotency moves to Postgres after the duplicate charges.
    s.supersede("idempotency", "09-18 11:00", """
Every POST to the public API requires an `Idempotency-Key` header. Since 18 Sep keys are stored in
Postgres (`idempotency_keys`, primary key merchant + key) for 72 hours with the response; Redis is
no longer used for them. Same key and body returns the stored response; same key with a different
body returns 422.
""", summary="Idempotency keys: required on every POST, stored in Postgres for 72 hours.",
                tags=("api", "postgres", "decision"), actor=MAYA, importance=0.8,
                source=f"{REPO}/monorepo/pull/481", links=[("derives-from", "dup-charge")])
    s.annotate("dup-charge", "09-18 11:10", actor=MAYA, tags=("resolved",),
               links=[("supports", "idempotency")], reason="fixed by moving keys to Postgres")
    s.annotate("retro-aug", "09-18 11:15", actor=MAYA, tags=("followed-up",),
               links=[("about", "idempotency")])

    s.create("retro-sep", "09-25 16:00", "episodic", "team/payments", "topic:team-retro", """
Payments retro, 25 Sep: the duplicate-charge incident dominated. Good: refunds done within
2.5 hours, postgres idempotency shipped in a week. Bad: nobody knew Redis replication was
asynchronous. Action: Tom to list every place we rely on Redis for correctness, not just speed.
""", tags=("retro", "meeting"), actor=MAYA, importance=0.4)

    s.create("redis-audit", "09-30 17:00", "semantic", "team/platform", "entity:redis", """
Redis is for caches and rate-limit counters only. After the 30 Sep audit nothing that affects
money (idempotency, payout locks, ledger sequences) may depend on Redis; payout locks moved to
Postgres advisory locks.
""", tags=("redis", "decision", "infra"), actor=TOM, importance=0.7,
             links=[("derives-from", "retro-sep"), ("derives-from", "dup-charge")])

    # October: Inès takes over migration reviews.
    s.supersede("migration-reviewer", "10-01 09:00", """
From 1 Oct Inès Duarte reviews all database migrations (ledger-db, payouts-db, reporting); Tom is
the backup when she is away. Tag @ines on any PR that touches a `migrations/` directory and attach
the lock analysis from `make migration-check`.
""", summary="Inès reviews all database migrations from 1 Oct; Tom is backup.",
                tags=("review", "postgres", "owners"), actor=TOM, importance=0.8,
                valid_from="2026-10-01T00:00:00.000Z",
                source="https://wiki.kestrelpay.example/eng/owners")
    s.pin("migration-reviewer", "10-01 09:05", actor=TOM)

    # The payout outage: annotations and reflection.
    s.supersede("payout-alert", "10-09 16:00", """
Payout alerting: `PayoutBatchStuck` fires when a batch has been in `processing` for more than 20
minutes (was 2 hours until the 7 Oct outage), and `PayoutUploadHandshakeFailed` pages on the first
SFTP handshake failure. Both page the payments on-call.
""", summary="PayoutBatchStuck fires after 20 minutes; SFTP handshake failures page at once.",
                tags=("payouts", "alerting"), actor=MAYA, importance=0.7,
                links=[("derives-from", "outage-actions")])
    s.pin("payout-outage", "10-09 16:10", actor=MAYA)
    s.annotate("severity", "10-09 16:20", actor=TOM, tags=("payouts",),
               links=[("about", "payout-outage")], reason="SEV1 example")

    s.create("lag-oct2", "10-02 11:00", "episodic", "team/platform", "topic:kafka-consumer-lag", """
Consumer lag on `ledger.events`, 2 Oct: deploy of ledger-relay consumers caused 8 rebalances;
lag 31k for 4 minutes; reporting dashboards were stale for 5 minutes.
""", tags=("incident", "kafka", "sev3"), actor=TOM, importance=0.4)
    s.create("lag-oct14", "10-14 15:30", "episodic", "team/platform",
             "topic:kafka-consumer-lag", """
Consumer lag on `payouts.requested`, 14 Oct: a node group upgrade drained 6 nodes; each pod move
rebalanced the group; lag peaked at 60k for 11 minutes and 40 Faster Payments payouts left one
cycle late.
""", tags=("incident", "kafka", "sev3"), actor=TOM, importance=0.5)
    s.create("lag-reflection", "10-16 02:00", "reflective", "team/platform",
             "topic:kafka-consumer-lag", """
Three consumer-lag incidents (22 Sep, 2 Oct, 14 Oct) share one cause: eager rebalances of our
consumer groups whenever pods restart or move. Lag scales with the number of pods restarted, not
with traffic. Static membership (`group.instance.id` = pod name) plus the cooperative-sticky
assignor would remove most of it; it is a config change in `kestrel-go/kafka`.
""", summary="Consumer lag incidents all come from eager rebalances on pod restarts; use static "
             "membership.",
             tags=("reflection", "kafka"), actor=CLAUDE, tool="ynm dream", importance=0.7,
             confidence=0.85,
             links=[("derives-from", "lag-sep22"), ("derives-from", "lag-oct2"),
                    ("derives-from", "lag-oct14")])
    s.supersede("kafka", "10-21 10:00", """
Kafka is Amazon MSK, 3 brokers (kafka.m7g.large), 7-day retention, topics created only through
Terraform. Consumers use the `kestrel-go/kafka` wrapper, which commits offsets after processing
and, since v1.8 (21 Oct), uses static membership and the cooperative-sticky assignor, so pod
restarts no longer stop consumption.
""", tags=("kafka", "infra"), actor=TOM, importance=0.6,
                links=[("derives-from", "lag-reflection")])

    # Postgres 16 upgrade done.
    s.supersede("ledger-db", "10-14 07:30", """
ledger-db is Postgres 16 on RDS (db.r6g.2xlarge, Multi-AZ) since the 14 Oct blue/green switchover
(48 s of write unavailability), with one read replica used by reporting. Connection pooling through
PgBouncer in transaction mode; the ledger service gets 40 server connections.
""", summary="ledger-db: Postgres 16 on RDS since 14 Oct, one reporting replica, PgBouncer.",
                tags=("postgres", "infra", "aws"), actor=INES, importance=0.6,
                valid_from="2026-10-14T05:00:00.000Z", links=[("derives-from", "w-pg-2")])

    # Deploys move to Argo CD.
    s.supersede("ledger-deploy", "10-22 17:00", """
How to deploy the ledger service (since 22 Oct, Argo CD):

1. Merge to `main`; CI builds `ghcr.io/kestrelpay/ledger:<git sha>`, runs migrations against a
   throwaway database and opens a PR on `kestrelpay/ops` bumping
   `argocd/apps/ledger/values-staging.yaml`.
2. Merge the ops PR; Argo CD syncs staging. Check the ledger dashboard.
3. Promote with `make promote-image SERVICE=ledger ENV=prod TAG=<sha>` (another ops PR). Argo
   Rollouts runs the canary: 10% for 10 min, 50% for 20 min, then 100%, aborting automatically
   on error rate > 0.5% or p99 > 300 ms.
4. Roll back with `kubectl argo rollouts undo ledger -n ledger` or by reverting the ops PR.

Deploy the ledger only on the release train, never on Fridays. `make deploy` is retired.
""", summary="Deploy the ledger service through Argo CD: ops PR, staging sync, canary 10/50/100.",
                tags=("deploy", "ledger", "runbook", "argocd"), actor=TOM, importance=0.9,
                source=f"{REPO}/ops/blob/main/runbooks/ledger/deploy.md",
                links=[("derives-from", "w-argo-2")])
    s.pin("ledger-deploy", "10-22 17:05", actor=TOM)
    s.tombstone("w-argo-1", "10-22 17:10", "expired", actor=CLAUDE, tool="ynm session end")
    s.tombstone("w-argo-2", "10-22 17:11", "expired", actor=CLAUDE, tool="ynm session end")

    # Release cadence changes.
    s.supersede("release-cadence", "11-02 09:00", """
From 2 Nov the API ships continuously: every merge to `main` deploys through Argo CD once the
gate is green, behind feature flags for anything merchant-visible. The Tuesday/Thursday release
train is retired; ledger and payouts still deploy only Monday to Thursday.
""", summary="Continuous deploys from 2 Nov behind feature flags; the release train is retired.",
                tags=("release", "process", "decision"), actor=SAM, importance=0.8,
                links=[("derives-from", "ledger-deploy")])
    s.create("release-steps", "11-02 09:30", "procedural", "common", "topic:release-process", """
Shipping a merchant-visible change: put it behind a flag in `flags/` (default off), merge, enable
for the internal test merchant, then for 5% of merchants, then everyone. Announce in #releases
with the flag name. Remove the flag within two weeks of full rollout.
""", tags=("release", "feature-flags", "howto"), actor=MAYA, importance=0.7,
             links=[("derives-from", "release-cadence")])

    # Fraud threshold: a contradicting note, then a review flag.
    s.create("fraud-risk-note", "10-28 14:00", "semantic", "team/payments",
             "entity:fraud-scorer", """
Risk team note: the hold threshold in production is 90, not 85; it was raised on the risk
dashboard in September without a ticket.
""", tags=("fraud", "risk"), actor=CODEX, session="cx-1028-fraud-audit", tool="mcp:remember",
             confidence=0.5)
    s.annotate("fraud-risk-note", "10-28 14:05", actor=CLAUDE, tool="ynm dream",
               needs_review=True, links=[("contradicts", "fraud-threshold")],
               reason="contradicts the 85 threshold; low confidence")
    s.annotate("fraud-threshold", "10-28 14:06", actor=CLAUDE, tool="ynm dream",
               links=[("contradicts", "fraud-risk-note")],
               reason="contradicted by a newer note")
    s.tombstone("fraud-risk-note", "10-30 10:00",
                "checked with the risk team: production threshold is still 85; the 90 was a "
                "staging experiment", actor=MAYA, tool="ynm forget")

    # Misc annotations: importance, tags, pins.
    s.annotate("webhook-retries", "09-05 10:00", actor=MAYA, tags=("merchant-facing",),
               importance=0.8, reason="asked by merchants weekly")
    s.annotate("oncall-runbook", "10-09 17:00", actor=TOM, importance=0.9,
               links=[("about", "payout-resubmit")], reason="added payout section")
    s.pin("oncall-runbook", "10-09 17:02", actor=TOM)
    s.annotate("recon-howto", "09-01 09:00", actor=INES, tags=("postgres",),
               reason="reviewed by the database owner")
    s.annotate("ledger-migrations", "10-01 09:30", actor=INES, tags=("reviewed",),
               links=[("supports", "migration-reviewer")], importance=0.9)
    s.annotate("fx-rounding", "08-29 10:00", actor=RAJ, tags=("documented",),
               links=[("derives-from", "recon-aug19")], reason="retro action from 28 Aug")
    s.annotate("maya-prs", "10-05 12:00", actor=MAYA, tags=("api",),
               reason="also applies to webhook payload changes")

    # November: later facts and a few more episodes.
    s.create("pci-scope", "11-04 10:00", "semantic", "common", "topic:pci", """
PCI DSS scope: card numbers never reach our services; the acquirer's hosted fields tokenise them
in the browser. Only `payments-api` and `fraud-scorer` see tokens and the last four digits. Any
change that would touch a PAN needs Sam's approval and a scope review.
""", tags=("security", "pci", "compliance"), actor=SAM, importance=0.9)
    s.pin("pci-scope", "11-04 10:05", actor=SAM)

    s.create("payouts-db-migration", "11-05 11:00", "episodic", "project/payouts",
             "topic:database-migrations", """
5 Nov: migration 0017 on payouts-db (adding `bank_reference` with a default) took an ACCESS
EXCLUSIVE lock for 41 s and payout requests timed out. Inès reverted it and re-did it as
expand/contract (nullable column, batched backfill). `make migration-check` now flags
`ADD COLUMN ... DEFAULT` on tables over 1M rows.
""", tags=("incident", "postgres", "migrations", "sev3"), actor=INES, importance=0.6,
             links=[("about", "ledger-migrations")])

    s.create("retro-oct", "10-30 16:00", "episodic", "team/payments", "topic:team-retro", """
Payments retro, 30 Oct: the payout outage postmortem actions are all done except the synthetic
SFTP check (Tom, due 7 Nov). Argo CD deploys feel slower but safer. Fraud holds are too noisy;
Maya to review the threshold with the risk team in November.
""", tags=("retro", "meeting"), actor=MAYA, importance=0.4,
             links=[("about", "outage-actions")])

    s.create("synthetic-sftp", "11-06 15:00", "semantic", "project/payouts",
             "entity:payout-service", """
A synthetic check uploads an empty test file to the bank's SFTP sandbox and production endpoints
every 15 minutes (`payouts-canary` CronJob) and alerts on any handshake or auth failure. Closes
the last action of INC-2026-014.
""", tags=("payouts", "alerting", "sftp"), actor=TOM, importance=0.6,
             links=[("supports", "outage-actions")])
    s.annotate("outage-actions", "11-06 15:10", actor=MAYA, tags=("done",),
               reason="all five actions closed")

    s.create("ines-oncall", "11-09 09:00", "semantic", "team/platform", "entity:ines", """
Inès joins the platform on-call rotation from 16 Nov; until then database pages go to Tom.
""", tags=("on-call",), actor=TOM, links=[("about", "oncall-rota")])

    s.create("cost-note", "11-10 14:20", "episodic", "team/platform", "topic:aws-costs", """
October AWS bill: USD 38.2k, up 11% on September. Most of the increase is the RDS blue/green
environment left running 9 days after the Postgres 16 switchover (USD 2.9k). Deleted on 23 Oct.
""", tags=("costs", "aws"), actor=TOM, importance=0.3)

    s.create("tom-friday", "11-11 10:00", "semantic", "team/platform", "entity:tom", """
Tom prefers that nobody deploys ledger or payouts after 15:00 CET on Thursdays or at all on
Fridays, even with continuous deploys; other services are fine any time.
""", tags=("preference", "deploy"), actor=TOM, links=[("about", "release-cadence")])

    s.create("gateway-limit-change", "11-12 11:30", "episodic", "team/platform",
             "entity:api-gateway", """
12 Nov: raised the rate limit for merchant `mch_7QX2` (a ticketing marketplace) to 400 rps
sustained for their on-sale events, ticket SUP-3321. Review again on 12 Dec.
""", tags=("rate-limits", "api", "support"), actor=TOM, importance=0.3)

    s.create("api-version-nov", "11-13 10:00", "episodic", "team/payments", "entity:public-api", """
API version 2026-11-15 released on 13 Nov: `payout.failed` events now carry `failure_code`, and
amounts in list responses are integers (were strings in 2026-07-01). The migration guide is
docs/api/migrations/2026-11-15.md.
""", tags=("api", "release", "versioning"), actor=MAYA, importance=0.5,
             links=[("about", "api-versioning")])

    s.create("sam-docs", "11-16 09:00", "semantic", "common", "entity:sam", """
Sam asks that every decision that changes how money moves is written as an ADR before the code is
merged, even a short one; "we discussed it in Slack" is not a record.
""", tags=("preference", "adr", "process"), actor=SAM, importance=0.6,
             links=[("about", "adr-index")])

    s.create("ledger-holds", "11-17 13:00", "semantic", "project/ledger", "entity:ledger-service",
             """
Fraud holds are ledger entries, not flags: a hold moves funds from `seller_pending` to
`seller_held`; releasing it moves them back. So balances always explain themselves and holds
show up in reconciliation.
""", tags=("ledger", "fraud", "architecture"), actor=RAJ, importance=0.6,
             links=[("about", "fraud-threshold")])

    s.create("runbook-index", "11-18 09:30", "reference", "common", "topic:runbooks", """
Index of runbooks in the ops repo (`runbooks/`): `on-call.md`, `ledger/deploy.md`,
`ledger/reconciliation.md`, `payouts/resubmit-batch.md`, `payouts/sftp-host-key.md`,
`postgres/failover.md`, `kafka/consumer-lag.md`, `comms/status-update.md`.
""", tags=("runbook", "docs"), actor=TOM, importance=0.7,
             links=[("about", "oncall-runbook"), ("about", "ledger-deploy")])

    s.create("dup-runbook-index", "11-18 09:40", "reference", "common", "topic:runbooks", """
Runbooks are in the ops repo under runbooks/ (on-call, ledger deploy, payouts, postgres, kafka).
""", tags=("runbook",), actor=CODEX, session="cx-1118-docs", tool="mcp:remember")
    s.tombstone("dup-runbook-index", "11-19 02:00",
                f"duplicate of {s.ids['runbook-index']}", actor=CLAUDE, tool="ynm dream")
    s.annotate("runbook-index", "11-19 02:01", actor=CLAUDE, tool="ynm dream",
               links=[("derives-from", "dup-runbook-index")], reason="dedupe merge survivor")

    s.create("holiday-freeze", "11-20 10:00", "semantic", "common", "topic:release-process", """
Change freeze for Black Friday and Cyber Monday: no deploys to ledger, payouts or api-gateway from
26 Nov 18:00 CET to 2 Dec 09:00 CET, except SEV1 fixes approved by Sam.
""", tags=("release", "freeze"), actor=SAM, importance=0.8, pinned=True,
             valid_from="2026-11-26T17:00:00.000Z")
    s.annotate("holiday-freeze", "11-20 10:15", actor=MAYA, tags=("merchant-facing",),
               reason="merchants told in the November newsletter")


# ---------------------------------------------------------------------------------------
# More runbooks, references and episodes across the four months


def _more(s: Store) -> None:
    s.create("local-dev", "08-04 14:00", "procedural", "common", "topic:local-development", """
Local development: `make dev` starts Postgres 16, Redis, Kafka (Redpanda) and a fake acquirer in
Docker Compose, runs migrations and seeds two test merchants. `make test` runs unit tests;
`make itest` the integration tests. Needs Docker, Go 1.23, and `direnv allow` for the env vars.
""", tags=("onboarding", "howto", "dev"), actor=RAJ, importance=0.6)
    s.annotate("local-dev", "10-15 10:00", actor=INES, tags=("postgres",),
               reason="compose file moved to Postgres 16 with the ledger-db upgrade")

    s.create("refund-howto", "08-12 10:00", "procedural", "team/payments", "topic:refunds", """
Refunding a pay-in on behalf of a merchant (support escalation): `kestrel-admin refunds create
--payment <pay_id> --amount <minor units> --reason <ticket>`. Partial refunds are fine; the sum of
refunds can never exceed the captured amount. The ledger entry debits `seller_available`; if the
seller's balance is short the refund still goes out and the seller goes negative.
""", tags=("refunds", "support", "howto"), actor=MAYA, importance=0.6)

    s.create("chargebacks", "08-21 15:00", "procedural", "team/payments", "topic:chargebacks", """
Chargebacks arrive from Northwind as `dispute.opened` webhooks. We debit the seller at once
(`seller_available` -> `disputes`), email them, and they have 7 days to upload evidence in the
dashboard; we submit it to Northwind by day 10. Won disputes reverse the debit.
""", tags=("chargebacks", "cards", "howto"), actor=MAYA, importance=0.6,
             links=[("about", "acquirer-docs")])

    s.create("pg-failover", "08-25 11:00", "procedural", "team/platform", "entity:ledger-db", """
ledger-db failover (RDS Multi-AZ): RDS fails over by itself in 60-120 s. During it the ledger
returns 503 on writes; clients retry with their idempotency keys, so nothing is lost. After the
failover: check `pg_stat_replication` on the new primary, confirm PgBouncer reconnected
(`SHOW SERVERS`), and watch the reconciliation the next night. Runbook:
runbooks/postgres/failover.md.
""", tags=("postgres", "runbook", "incident"), actor=TOM, importance=0.7,
             links=[("about", "ledger-db")])

    s.create("gameday", "09-10 16:30", "episodic", "team/platform", "topic:game-day", """
Game day, 10 Sep: we failed over ledger-db on staging under load. Failover took 74 s; the ledger
returned 503s as designed, but `ledger-relay` crashed in a loop because it did not retry its
initial connection. Fixed in PR #476 (backoff on connect). Next game day: kill a Kafka broker.
""", tags=("game-day", "postgres", "resilience"), actor=TOM, importance=0.5,
             links=[("about", "pg-failover")])

    s.create("webhook-backlog", "09-03 18:00", "episodic", "team/payments",
             "entity:webhook-dispatcher", """
Webhook backlog, 3 Sep (SEV3): one merchant's endpoint answered in 9.5 s to every delivery, just
under our 10 s timeout, and tied up dispatcher workers; the queue for everyone else grew to 220k
and deliveries were 25 minutes late. Mitigation: per-endpoint concurrency cap of 5 in-flight
deliveries (PR #459).
""", tags=("incident", "webhooks", "sev3"), actor=MAYA, importance=0.5,
             links=[("about", "webhook-retries")])
    s.create("webhook-isolation", "09-05 11:00", "semantic", "team/payments",
             "entity:webhook-dispatcher", """
Webhook dispatcher isolation: at most 5 in-flight deliveries per endpoint and 200 per merchant;
slow endpoints only delay their own merchant. The dispatcher scales on queue age, not length.
""", tags=("webhooks", "decision"), actor=MAYA, importance=0.6,
             links=[("derives-from", "webhook-backlog")])

    s.create("linear", "08-05 11:30", "reference", "common", "topic:tickets", """
Tickets live in Linear (https://linear.app/kestrelpay): teams PAY (payments), PLAT (platform),
LED (ledger project) and INC for incidents. Support escalations come in from Zendesk as SUP-*.
""", tags=("process", "tools"), actor=SAM)

    s.create("api-docs", "08-06 15:00", "reference", "team/payments", "entity:public-api", """
Public API reference: https://docs.kestrelpay.example/api (generated from `api/openapi.yaml` by
`make docs`); the changelog is https://docs.kestrelpay.example/changelog. Postman collection in
`api/postman/`.
""", tags=("api", "docs"), actor=MAYA)

    s.create("ecb-rates", "08-12 15:30", "reference", "project/ledger", "topic:fx", """
FX reference rates come from the ECB daily XML feed
(https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml), fetched at 16:30 CET by the
`fx-rates` CronJob into the `fx_rates` table. If the fetch fails the previous day's rates stay in
force and #ledger gets a warning.
""", tags=("fx", "ledger"), actor=RAJ, links=[("about", "fx-rounding")])

    s.create("bank-docs", "08-18 12:00", "reference", "project/payouts",
             "entity:payout-service", """
Our payout bank is Harbour & Quay Bank. Technical docs for the SFTP batch format (pain.001.001.09)
and the Faster Payments API are on their portal https://developer.harbourquay.example; the ops desk
phone number is in runbooks/on-call.md. Technical notices go to payments-oncall@kestrelpay.example.
""", tags=("payouts", "bank", "docs"), actor=MAYA, importance=0.6)

    s.create("payouts-onboarding", "08-26 10:00", "episodic", "project/payouts", "entity:bigmarket",
             """
26 Aug: BigMarket (our largest marketplace, ~40% of payout volume) went live on daily payouts.
First batch: 9,310 payouts, all accepted by the bank. They asked for a `payout.paid` webhook with
the bank reference, which we added on 2 Sep.
""", tags=("merchant", "payouts", "launch"), actor=MAYA, importance=0.5)
    s.create("bigmarket-contact", "08-26 10:30", "reference", "team/payments",
             "entity:bigmarket", """
BigMarket's technical contact is their payments platform team (Slack #ext-bigmarket); escalations
through their account manager at Kestrel, Priyanka in sales. They deploy on Wednesdays and
prefer changes announced a week ahead.
""", tags=("merchant", "contacts"), actor=MAYA)
    s.annotate("payout-outage", "10-12 09:00", actor=MAYA, links=[("about", "payouts-onboarding")],
               tags=("bigmarket",), importance=1.0,
               reason="BigMarket had 1,120 of the delayed payouts")

    sid = "cc-0829-fx-doc"
    ns = f"session/{sid}"
    s.create("w-fx-1", "08-29 09:00", "working", ns, "topic:fx", """
Writing docs/ledger/fx.md for the retro action. Sources: ADR-004, payouts/fx.go, LED-211. Noted
that the ECB rate is previous business day, not same day as the README claims.
""", tags=("docs",), actor=CLAUDE, session=sid, tool="mcp:remember")
    s.create("w-fx-2", "08-29 10:30", "working", ns, "topic:fx", """
The README of `payouts/` says rates are same-day; that is wrong (previous business day, see
`fx_rates.valid_for`). Fixed the README in the same PR (#441).
""", tags=("finding",), actor=CLAUDE, session=sid, tool="mcp:remember",
             links=[("in-session", "w-fx-1")])
    s.tombstone("w-fx-1", "08-30 02:00", "expired", actor=CLAUDE, tool="ynm dream")
    s.tombstone("w-fx-2", "08-30 02:01", "expired", actor=CLAUDE, tool="ynm dream")

    s.create("retro-reflection", "11-01 02:00", "reflective", "team/payments", "topic:team-retro",
             """
Across the August, September and October retros the recurring theme is correctness assumptions
nobody wrote down: idempotency retention, Redis replication, alert thresholds on payouts. Each
was fixed after it hurt. Worth a standing retro question: "what are we assuming about money
safety that is not tested or documented?"
""", summary="Retros keep finding unwritten correctness assumptions; ask about them every retro.",
             tags=("reflection", "retro"), actor=CLAUDE, tool="ynm dream", importance=0.6,
             confidence=0.8,
             links=[("derives-from", "retro-aug"), ("derives-from", "retro-sep"),
                    ("derives-from", "retro-oct")])
    s.annotate("retro-reflection", "11-03 09:00", actor=MAYA, tags=("agreed",), importance=0.7,
               reason="added the question to the retro template")

    s.create("contract-tests", "08-19 14:00", "procedural", "team/payments",
             "entity:public-api", """
API contract tests: `make contract` replays the recorded requests in `api/contract/*.http` against
a local stack and diffs responses with the golden files. After an intended API change run
`make contract UPDATE=1` and commit the new goldens together with an entry in `api/changes/`.
""", tags=("api", "testing", "howto"), actor=MAYA)

    s.create("new-endpoint", "09-08 10:00", "procedural", "team/payments", "entity:public-api", """
Adding a public API endpoint: 1) write it in `api/openapi.yaml` first and get Maya's review of the
shape; 2) `make gen` for server stubs and the SDKs; 3) implement with an idempotency key if it is a
POST; 4) contract test + `api/changes/` entry; 5) behind a flag until the docs are live.
""",
             summary='New API endpoint: OpenAPI first, then make gen, contract test, flag.',
             tags=("api", "howto"), actor=MAYA, importance=0.6,
             links=[("about", "api-versioning"), ("about", "contract-tests")])

    s.create("sdk-release", "09-24 11:00", "procedural", "team/payments", "topic:sdks", """
Releasing the SDKs (Node, Python, Go): they are generated from `api/openapi.yaml`. Tag
`sdk-vX.Y.Z` on main; the `sdk-release` workflow publishes to npm, PyPI and the Go proxy. Bump the
minor version for a new API version date, the patch for fixes only.
""", tags=("sdk", "release", "howto"), actor=RAJ)

    s.create("k8s-access", "08-07 10:30", "procedural", "team/platform", "entity:kubernetes", """
Getting kubectl access: `aws sso login --profile kestrel-prod`, then `make kubeconfig ENV=prod`.
Prod access is read-only by default; `kestrel-breakglass` gives write access for 1 hour and pages
the platform on-call, so use it only during incidents.
""", tags=("kubernetes", "access", "howto"), actor=TOM, importance=0.6)

    s.create("staging-down", "10-26 09:40", "episodic", "team/platform", "entity:kubernetes", """
26 Oct: staging-eu-1 was down for 3 hours after the cluster autoscaler upgrade removed the
`ledger` node group label; ledger pods could not schedule. Prod was not affected. Terraform now
pins the label in the node group module.
""", tags=("incident", "kubernetes", "staging"), actor=TOM, importance=0.3)

    s.create("ledger-perf", "11-14 16:00", "episodic", "project/ledger",
             "entity:ledger-service", """
14 Nov load test before Black Friday: ledger sustained 2,400 journal writes per second with p99
110 ms on Postgres 16; the `account_balances` row lock on the platform fee account became the
hot spot above that. Mitigation: shard the fee account into 16 sub-accounts (LED-260).
""", tags=("performance", "load-test", "ledger"), actor=RAJ, importance=0.6,
             links=[("about", "balances")])
    s.annotate("balances", "11-15 10:00", actor=RAJ, tags=("hot-spot",),
               links=[("about", "ledger-perf")], needs_review=True,
               reason="fee account lock contention above 2.4k writes/s; ADR may need an update")


def main(argv: list[str]) -> int:
    text = build().jsonl()
    if "--check" in argv:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is stale: run examples/make_team_store.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {text.count(chr(10))} records to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
