"""A paraphrase retrieval set: (memory, question) pairs that share no content word.

Each pair is a note a team member or agent would store about a fictional software team's
engineering life, and the question someone would ask later to get it back, worded differently.
Lexical search (BM25 over FTS5) has nothing to match on by construction, so it should score
near zero here; semantic (vector) recall is what this set measures. ``distractors`` generates
a deterministic haystack of other memories from the same domain to hide the pairs in.

Content words (:func:`content_words`): lowercase runs of ``[a-z0-9]+`` of length >= 3, minus
:data:`STOP_WORDS`, each crudely stemmed by stripping one trailing ``ing``, ``ed``, ``es`` or
``s`` (the first of those that matches, longest first). Every pair's content-word sets are
disjoint (:func:`check_pairs`, run by ``python benchmarks/paraphrase.py``).

Example::

    from benchmarks.paraphrase import PAIRS, distractors
    haystack = [m for m, _ in PAIRS] + distractors(1000, seed=0)
"""

from __future__ import annotations

import random
import re

STOP_WORDS: frozenset[str] = frozenset(
    "the and for with that this from are was use uses how what when where who why which does "
    "did our we you your can should would there their they them its into about have has had "
    "been any all get got not one two out off on in of to is it do be by at an as or if so no "
    "up".split()
)
"""Words that never count as content words (checked before and after stemming)."""

_WORD_RE = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ing", "ed", "es", "s")


def _stem(word: str) -> str:
    """Strip one trailing ``ing``, ``ed``, ``es`` or ``s`` (longest first)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def content_words(text: str) -> set[str]:
    """The stemmed content words of ``text`` (see the module docstring)."""
    out = set()
    for word in _WORD_RE.findall(text.lower()):
        if len(word) < 3 or word in STOP_WORDS:
            continue
        stem = _stem(word)
        if stem and stem not in STOP_WORDS:
            out.add(stem)
    return out


PAIRS: list[tuple[str, str]] = [
    # --- databases and data ---------------------------------------------------------------
    ("Production database backups run nightly at 02:00 UTC and are kept for 35 days.",
     "how long do we retain snapshots of the prod DB?"),
    ("Read replicas of the orders Postgres cluster lag by up to 30 seconds during peak traffic.",
     "why might a freshly placed purchase not show up right away on the follower DB?"),
    ("Schema migrations must be backwards compatible for one release so the old and new app "
     "versions can run side by side.",
     "can a DB change break the previous build while both are live during rollout?"),
    ("Database connection pools are capped at 20 per pod to stay under the Postgres "
     "max_connections limit.",
     "why can't each replica open more sockets to the DB?"),
    ("Redis is only a cache here; never treat it as the source of truth for sessions.",
     "can the in-memory key-value store be relied on to persist logins?"),
    ("All timestamps in the data warehouse are stored in UTC.",
     "what timezone are the analytics tables in?"),
    ("Kafka topics keep events for seven days; compacted topics keep the latest value per key "
     "forever.",
     "how long do messages stay on the streaming log?"),
    ("Elasticsearch reindexing for the product catalog runs nightly at 03:00 and takes about "
     "40 minutes.",
     "why are item lookups slow in the small hours?"),
    ("Staging is refreshed from an anonymized copy of production every Sunday night.",
     "when does the pre-prod environment get new scrubbed data?"),
    ("GDPR deletion requests must be completed within 30 days via the privacy admin tool.",
     "how long do we have to erase a user's personal data when asked?"),
    # --- deploys and releases -------------------------------------------------------------
    ("Deploys to production are frozen from Friday 15:00 until Monday morning; only hotfixes "
     "approved by the incident commander may ship.",
     "is it okay to push a release late in the week before the weekend?"),
    ("Kubernetes manifests for all services live in the infra-deploy repository under "
     "k8s/overlays.",
     "where are the cluster yaml files kept?"),
    ("Hotfix branches are cut from the latest release tag, never from main.",
     "what should an urgent patch be based on?"),
    ("The release train leaves every second Wednesday; cutoff for merging is Tuesday 18:00.",
     "what's the deadline to get my change into the biweekly ship?"),
    ("Rollbacks are done by redeploying the previous image tag with the deploy script, not by "
     "reverting commits.",
     "how do I undo a bad ship quickly?"),
    ("The mobile app release needs App Store review, which usually takes two days, so submit "
     "by Wednesday.",
     "how early must iOS builds go to Apple?"),
    ("The CDN caches static assets for 24 hours; purge it via the Fastly console after a "
     "frontend release.",
     "browsers still get stale JS once new UI ships, how do I flush it?"),
    ("Before a big launch, the checklist in the Launch Readiness doc must be signed off by QA "
     "and SRE.",
     "what do I need to complete prior to going live with a major feature?"),
    ("Feature flags are managed in LaunchDarkly; stale flags older than 90 days get cleaned up "
     "by the platform team.",
     "who removes toggles nobody has touched in a quarter?"),
    ("Nightly builds of the Android client are uploaded to Firebase App Distribution for "
     "internal testers.",
     "where do I grab the latest phone beta?"),
    # --- CI and code review ---------------------------------------------------------------
    ("Flaky integration tests are quarantined by adding them to ci/quarantine.txt; the nightly "
     "job retries them three times.",
     "what do I do with an unreliable end-to-end check that keeps failing randomly?"),
    ("Code review SLA: reviewers should respond within one business day.",
     "how quickly am I expected to look at a teammate's PR?"),
    ("The main branch requires two approvals and a green CI run before merge.",
     "how many sign-offs do I need to land on trunk?"),
    ("Docker images are built by GitHub Actions and pushed to ECR with the commit SHA as the "
     "tag.",
     "how are container artifacts labelled in the registry?"),
    ("Python code is formatted with Black at line length 100 and checked with Ruff.",
     "which tools tidy and police our py sources?"),
    ("Dependabot PRs for minor versions are auto-merged if CI passes; majors need a human.",
     "do library upgrades get approved automatically?"),
    ("Test coverage must not drop below 80% on changed files or the pipeline fails.",
     "what's the minimum share of lines exercised by unit checks?"),
    ("Performance regressions over 10% on the benchmark suite block a merge.",
     "will my PR be stopped if it makes things slower?"),
    # --- on-call and incidents ------------------------------------------------------------
    ("The on-call rotation hands over every Tuesday at 10:00 Berlin time.",
     "which weekday does pager duty switch to the next person?"),
    ("PagerDuty escalates to the secondary after 15 minutes without acknowledgement.",
     "if the primary responder ignores an alert, how soon does the backup person get paged?"),
    ("The incident postmortem template is in Confluence under Engineering > Reliability > "
     "Templates.",
     "where can I find the blank doc for writing up an outage review?"),
    ("Sev-1 incidents require a status page update within 20 minutes of detection.",
     "how fast must customers be told publicly when something major breaks?"),
    ("Incident commanders are chosen from the senior engineer pool, not from whoever gets "
     "paged.",
     "who leads the response during an outage?"),
    ("The quarterly disaster recovery drill restores the primary database into a separate "
     "region.",
     "how often do we practise failing over to another geography?"),
    ("Error budgets are reset at the start of each month; if exhausted, feature work pauses "
     "for reliability fixes.",
     "what happens when we burn through our SLO allowance?"),
    ("Oncall engineers get a day off in lieu after a weekend shift.",
     "is there compensation for carrying the pager Saturday and Sunday?"),
    ("Sentry alerts for the checkout service route to the #payments-alerts channel.",
     "where do exceptions from the purchase flow get reported?"),
    ("Customer-facing error messages must never include stack traces.",
     "is it fine to show exception details to end users?"),
    # --- people and their preferences -----------------------------------------------------
    ("Our staff engineer Maya Okafor prefers squash merges and wants each pull request to link "
     "its ticket.",
     "what's the senior IC's stance on combining commits when landing a branch?"),
    ("Tomasz, our backend lead, hates long standups and asked that they end after 15 minutes.",
     "what's the server-side team head's view on morning meetings dragging on?"),
    ("Ravi, our ML engineer, refuses meetings before 10:00 and blocks his calendar until then.",
     "what's the earliest I can book time with the machine-learning person?"),
    ("Ingrid, the principal architect, wants a written proposal for any change spanning more "
     "than two services.",
     "when do I owe the chief designer a spec before coding?"),
    ("Noah, our engineering manager, prefers written async updates over status meetings.",
     "how does the EM like to hear progress from the team?"),
    ("Sofia owns the billing service and is the first contact for invoice bugs.",
     "who should I ping about wrong amounts on customer statements?"),
    # --- where things live ----------------------------------------------------------------
    ("Secrets are stored in Vault under secret/team-payments and rotated every 90 days.",
     "where do credentials for the money service sit, and how often are they changed?"),
    ("Grafana dashboards for latency are in the SRE folder; the main one is called Golden "
     "Signals.",
     "where do I look to see response-time charts?"),
    ("Terraform state is kept in an S3 bucket with DynamoDB locking; never edit it by hand.",
     "where does the infrastructure-as-code tool store what it has provisioned?"),
    ("Log retention in Datadog is 15 days; older logs are archived to cold storage for a year.",
     "how far back can I search application output?"),
    ("Architecture decision records live in docs/adr in the monorepo, numbered sequentially.",
     "where are design choices written down?"),
    ("Cron jobs are defined in the scheduler repo as YAML and deployed with Argo Workflows.",
     "where do periodic background tasks get configured?"),
    ("Weekly retro happens Friday afternoon; action items are tracked in the Retro board on "
     "Jira.",
     "where do follow-ups from our reflection session get recorded?"),
    ("Cost reports for cloud spend are emailed to team leads on the first Monday of each month.",
     "how can I see what our AWS bill looks like?"),
    # --- procedures and policy ------------------------------------------------------------
    ("New hires get production access only after completing the security training module.",
     "when can a fresh joiner touch live systems?"),
    ("Load tests run against the perf environment, never against staging, because staging "
     "shares a database with QA.",
     "where should I point a stress benchmark?"),
    ("The API rate limit for partner integrations is 600 requests per minute per key.",
     "how many calls can an external client make before being throttled?"),
    ("Customer support escalations go to the #help-eng Slack channel, not direct messages.",
     "how should helpdesk staff raise a tricky ticket with developers?"),
    ("The office VPN is required to reach internal dashboards; WireGuard configs are issued "
     "by IT.",
     "why can't I open company monitoring pages from home?"),
    ("The SSL certificates for public domains auto-renew through Let's Encrypt via "
     "cert-manager.",
     "do I have to redo TLS credentials by hand before they lapse?"),
    ("Design review happens Thursdays at 14:00 in the Aquarium meeting room.",
     "when and where is the architecture critique held?"),
    ("The frontend is a React app in the web/ directory; run pnpm dev to start it locally.",
     "how do I spin up the UI on my laptop?"),
]
"""(memory, question) pairs; each question's only relevant memory is its own."""


def check_pairs(pairs: list[tuple[str, str]] = PAIRS) -> list[tuple[int, set[str]]]:
    """``(index, shared content words)`` of every pair whose sides overlap; ``[]`` is good."""
    bad = []
    for i, (memory, question) in enumerate(pairs):
        shared = content_words(memory) & content_words(question)
        if shared:
            bad.append((i, shared))
    return bad


# --- distractors ----------------------------------------------------------------------------
# Facts about made-up internal components (codenames), people's whereabouts, tickets and
# numbers: the same domain and register as the pairs, but none of them answers a question.

_CODENAMES = (
    "marmot", "heron", "quokka", "lynx", "otter", "puffin", "badger", "ibis", "kestrel",
    "gecko", "wombat", "narwhal", "tapir", "ocelot", "pangolin", "magpie", "bison", "dingo",
    "falcon", "koala", "lemur", "mantis", "newt", "osprey", "plover", "raven", "sable", "tern",
    "vole", "walrus",
)
_COMPONENTS = (
    "worker", "API", "ingester", "scheduler", "exporter", "sidecar", "CLI", "admin panel",
    "webhook relay", "batch job", "parser", "renderer", "sync daemon", "rules engine",
    "report builder", "search indexer",
)
_PEOPLE = (
    "Amara", "Bilal", "Camille", "Dmitri", "Elif", "Farid", "Greta", "Hiro", "Isla", "Jonas",
    "Keiko", "Lucas", "Mina", "Nadia", "Oscar", "Paula", "Quentin", "Rania", "Stefan", "Thea",
    "Umar", "Vera", "Wes", "Ximena", "Yara", "Zane",
)
_LIBS = (
    ("pydantic", "2.7"), ("fastapi", "0.111"), ("SQLAlchemy", "2.0"), ("httpx", "0.27"),
    ("celery", "5.4"), ("protobuf", "4.25"), ("grpcio", "1.62"), ("numpy", "1.26"),
    ("boto3", "1.34"), ("structlog", "24.1"), ("orjson", "3.10"), ("uvicorn", "0.29"),
)
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")
_SYMPTOMS = (
    "dropped every tenth message", "returned HTTP 502 under load", "leaked file handles",
    "double-counted retries", "ignored the timezone offset", "crashed on empty payloads",
    "wrote duplicate rows", "spun at 100% CPU", "logged the wrong tenant id",
    "timed out on large uploads", "sorted results in reverse", "lost the last page of results",
)
_FIXES = (
    "pinning the client library", "adding a missing null check", "raising the worker count",
    "switching to streaming reads", "bumping the buffer size", "removing a stale lock",
    "reordering the middleware", "caching the parsed config", "batching the writes",
    "retrying with jitter",
)
_PURPOSES = (
    "currency conversion", "address validation", "thumbnail generation", "geo lookups",
    "email templating", "PDF rendering", "spam scoring", "tax calculation", "image resizing",
    "locale detection",
)
_STAKEHOLDERS = ("the sales team", "the board", "a pilot customer", "the marketing team",
                 "the finance team", "the design guild", "the partner council")
_PROJECTS = ("CORE", "WEB", "OPS", "DATA", "MOB", "PLAT", "INT")
_SIZES = ("c5.large", "c5.xlarge", "m6i.2xlarge", "t3.medium", "r6g.large")

_TEMPLATES = (
    "The {c} {k} is owned by {p}; questions about it go to {q}.",
    "{p} moved the {c} {k} from {l} to {l2} in {m}.",
    "The {c} {k} reads its settings from config/{c}.toml at startup.",
    "Ticket {j}-{n}: the {c} {k} {y}; fixed by {f}.",
    "{p} is away from {d} to {d2} {m}; {q} covers reviews for the {c} {k}.",
    "The {c} {k} exposes Prometheus metrics on port {port}.",
    "The {c} {k} was upgraded to {l} {lv} on {d} {m}.",
    "The {c} {k} calls the {c2} service for {u}.",
    "{p} thinks the {c} {k} should eventually be split into {small} modules.",
    "Load test: the {c} {k} handles {rps} requests per second on one {z} instance.",
    "The {c} team demos the new {k} to {s} on {d} {m}.",
    "Fixture data for the {c} {k} tests lives in tests/fixtures/{c}-{kslug}.json.",
    "The {c} {k} was renamed from {c2}-{kslug} during the {m} cleanup.",
    "{p} paired with {q} on the {c} {k} refactor and wants to finish it by {m}.",
    "The {c} {k} {y} until {p} rewrote the retry loop.",
    "Spike notes: {p} tried {l} for the {c} {k} but the prototype was shelved.",
    "The {c} {k} emits a heartbeat every {sec} seconds to the {c2} monitor.",
    "{p} is the go-to person for anything touching {u} in the {c} {k}.",
)


def _fill(template: str, rng: random.Random) -> str:
    c, c2 = rng.sample(_CODENAMES, 2)
    k = rng.choice(_COMPONENTS)
    p, q = rng.sample(_PEOPLE, 2)
    (lib, lv), (lib2, _) = rng.sample(_LIBS, 2)
    d = rng.randint(1, 20)
    y = rng.choice(_SYMPTOMS)
    text = template.format(
        c=c.capitalize() if template.startswith("{c}") else c, c2=c2, k=k,
        kslug=k.lower().replace(" ", "-"), p=p, q=q, l=lib, l2=lib2, lv=lv,
        m=rng.choice(_MONTHS), d=d, d2=d + rng.randint(2, 8), j=rng.choice(_PROJECTS),
        n=rng.randint(100, 4999), y=y,
        f=rng.choice(_FIXES), u=rng.choice(_PURPOSES), s=rng.choice(_STAKEHOLDERS),
        port=rng.choice((9090, 9100, 9187, 9464, 8081, 8125)), small=rng.randint(2, 5),
        rps=rng.randrange(200, 9000, 50), z=rng.choice(_SIZES), sec=rng.choice((5, 10, 15, 30)),
    )
    return text[:1].upper() + text[1:]


def distractors(n: int = 1000, seed: int = 0) -> list[str]:
    """``n`` distinct distractor memories, deterministic for ``seed``."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < n:
        text = _fill(rng.choice(_TEMPLATES), rng)
        if text not in seen:
            seen.add(text)
            out.append(text)
    return out


if __name__ == "__main__":  # pragma: no cover - manual check
    problems = check_pairs()
    for i, shared in problems:
        print(f"pair {i}: shared {sorted(shared)}: {PAIRS[i][1]!r}")
    print(f"{len(PAIRS)} pairs, {len(problems)} overlapping; "
          f"{len(distractors())} distractors, e.g.:")
    for line in distractors(8):
        print("  " + line)
    raise SystemExit(1 if problems else 0)
