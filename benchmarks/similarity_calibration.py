"""Calibrate the similarity judge: centred embedding cosine -> P(same fact), P(same subject),
and its own review threshold for dedupe.

Labelled memory pairs, written ones of a fictional software team:

- ``SAME``: the same fact stated twice in other words (what dedupe should flag);
- ``LOOSE``: the same fact with the sentence turned around and often an incidental remark
  on one side (how memories written at different times restate a fact);
- ``SUBJECT``: the same subject with a different or opposite claim (what dedupe must keep
  apart, and contradict looks at);
- ``VALUE``: the same claim with another value, or negated;
- unrelated: two memories of no common pair (the pairs' sides shuffled, plus the distractors
  of benchmarks/paraphrase.py);

and generated ones: the near pairs (each memory's 5 nearest of its type) of stores from
benchmarks/consolidation.py's generator at :data:`GENERATED_SEEDS`, labelled duplicate / same
subject / other (none of them is a seed the consolidation table is read at: 7, and 3, 11, 23
to check for overfitting).

Written texts are embedded with the configured local model (all-MiniLM-L6-v2) inside a store
of 1,000 distractor memories, generated ones inside their own store, each centred as recall
centres (the store's mean vector with ynm.index.search.CENTROID_PRIOR). Two logistic curves
``1 / (1 + exp(-(a*c + b)))`` are fitted by maximum likelihood:

- ``sameFact`` on the population the judge answers it for: candidate pairs, near neighbours of
  each other (the written pairs but the shuffled unrelated ones, and the generated near pairs),
  that ynm.dream.judges.claim_mismatch finds no difference in (it answers the others itself);
  restatements and duplicates (1) against the rest (0). Shuffled unrelated pairs are left out:
  dedupe never hands the judge such a pair, and they would only pull the curve towards the
  cosines of unrelated memories;
- ``sameSubject`` on the written pairs, every kind but unrelated (1) against unrelated (0).

Then the similarity judge's dedupe review threshold (ynm.dream.judges.SIMILARITY_REVIEW): the
``sameFact`` that :data:`TARGET_RECALL` of the calibration's duplicates (written restatements
and generated duplicates; those claim_mismatch tells apart count as missed) reach. The judge
only flags, and a flag costs a person a look, so it flags down to the level where it finds
that share of duplicates rather than at the reference's 0.6, which is set for a calibrated
judge's review band (below its act band) and misses a third of them.

The printed ``(a, b)`` pairs go into ynm.dream.judges.SIMILARITY_CALIBRATION and the threshold
into SIMILARITY_REVIEW, with how many of each kind claim_mismatch tells apart and how many
that threshold flags.

Run: ``PYTHONPATH=. python benchmarks/similarity_calibration.py`` (needs the ``vector`` extra;
a few minutes).
"""

from __future__ import annotations

import math
import random
import sys
import tempfile
from pathlib import Path

SAME: list[tuple[str, str]] = [
    ("The payments service deploys every Tuesday after the release review.",
     "We ship the payments service on Tuesdays, once the release review is done."),
    ("Use pnpm, not npm, in the web repository; the lockfile is pnpm-lock.yaml.",
     "The web repo is managed with pnpm and its pnpm-lock.yaml; do not run npm install there."),
    ("The staging database is reset every night at 02:00 UTC.",
     "Every night at 2am UTC the staging DB gets wiped and reseeded."),
    ("Alice owns the authentication service and reviews every change to it.",
     "Any change to the auth service needs Alice's review; she is its owner."),
    ("Integration tests need Docker running because they start Postgres in a container.",
     "Start Docker before the integration tests: they spin up a Postgres container."),
    ("The API rate limit is 100 requests per minute per token.",
     "Each token may make at most 100 API calls a minute."),
    ("We decided to store timestamps in UTC everywhere and convert only in the UI.",
     "Decision: all timestamps are kept in UTC; only the frontend converts to local time."),
    ("The mobile app's minimum supported iOS version is 16.",
     "iOS 16 is the oldest iOS version the mobile app supports."),
    ("Feature flags live in LaunchDarkly; the config file only has defaults.",
     "We manage feature flags in LaunchDarkly, and the config file just holds their defaults."),
    ("The search cluster runs Elasticsearch 8 on three nodes.",
     "Our search runs on a three-node Elasticsearch 8 cluster."),
    ("Run `make lint` before pushing; CI fails on any lint warning.",
     "CI rejects lint warnings, so run make lint before you push."),
    ("Customer data must never be copied to developer laptops.",
     "Never put customer data on a developer's laptop."),
    ("The billing job retries a failed charge three times, one hour apart.",
     "A failed charge is retried by the billing job up to three times with an hour between tries."),
    ("Logs are kept for 30 days in Loki and then deleted.",
     "Loki keeps our logs for a month before they are removed."),
    ("The frontend is built with Vite and deployed to Cloudflare Pages.",
     "We build the frontend with Vite and host it on Cloudflare Pages."),
    ("On-call engineers must acknowledge a page within 15 minutes.",
     "Pages have to be acknowledged by the on-call engineer in under 15 minutes."),
    ("The Python services target Python 3.12.",
     "All our Python services run on Python 3.12."),
    ("Secrets are stored in Vault and injected at deploy time.",
     "We keep secrets in Vault; the deploy step injects them."),
    ("The nightly backup of the main database goes to an S3 bucket in eu-west-1.",
     "Main DB backups run nightly and land in S3 in the eu-west-1 region."),
    ("Pull requests need two approvals before merging to main.",
     "Merging into main requires two approving reviews on the pull request."),
    ("The GraphQL gateway times out upstream calls after 5 seconds.",
     "Upstream calls from the GraphQL gateway are cut off at a 5 second timeout."),
    ("Bob prefers squash merges so that main keeps one commit per feature.",
     "Bob likes squash merging: one commit per feature on main."),
    ("The CSV export is limited to 50,000 rows.",
     "Exports to CSV stop at 50k rows."),
    ("Kubernetes pods of the worker have a memory limit of 2 GiB.",
     "The worker's pods are capped at 2 GiB of memory in Kubernetes."),
    ("The design system's primary colour is #1A73E8.",
     "Our design system uses #1A73E8 as its main colour."),
    ("Sentry alerts for the checkout flow go to the #payments-alerts channel.",
     "Checkout errors from Sentry are posted in #payments-alerts."),
    ("The release branch is cut every second Monday.",
     "Every other Monday we cut the release branch."),
    ("Terraform state is stored remotely in a GCS bucket with locking.",
     "Our Terraform state lives in a locked remote GCS bucket."),
    ("Password reset links expire after one hour.",
     "A password reset link is valid for 60 minutes."),
    ("The recommendation model is retrained weekly on Sunday night.",
     "Each Sunday night the recommendation model gets retrained."),
]
"""Pairs stating the same fact in other words."""


LOOSE: list[tuple[str, str]] = [
    ("If the nightly import fails, ask Dana; she wrote it. From the handover notes.",
     "Dana is the author of the nightly import job."),
    ("Anything about the billing schema goes through Farid, who owns it.",
     "Farid owns the billing schema. Mentioned in standup."),
    ("Staging is where the QA team runs the regression suite every morning.",
     "Every morning QA runs its regression pass on staging. Confirmed with the QA lead."),
    ("The worker queue is backed by Redis.",
     "Jobs for the workers sit in a Redis list until picked up. I checked the config."),
    ("To reach the admin UI locally, open port 8443.",
     "The admin UI is served on 8443 in development. Noted while pairing."),
    ("Before tagging a release, bump the version in pyproject.toml.",
     "The release checklist starts with bumping the pyproject.toml version. Agreed at the retro."),
    ("Our docs site is generated by MkDocs from the docs folder.",
     "The docs folder is turned into the documentation site with MkDocs."),
    ("The mobile team ships through TestFlight first, then the App Store.",
     "Builds of the iOS app go to TestFlight before they reach the App Store. Per the mobile lead."),
    ("Support tickets tagged urgent page the on-call engineer.",
     "An urgent support ticket triggers a page to whoever is on call."),
    ("The analytics warehouse is BigQuery.",
     "All analytics data ends up in BigQuery tables. From an old thread, still true."),
    ("The cron that rotates API keys runs on the first of every month.",
     "On the 1st of each month a scheduled job rotates the API keys."),
    ("Image uploads are stored in the media bucket, not in the database.",
     "We keep uploaded images in the media bucket; the database only has their paths."),
    ("The load balancer health check hits /healthz every ten seconds.",
     "Every 10 seconds the LB probes /healthz. Double-checked in the console."),
    ("Grace approves all changes to the payment provider integration.",
     "Changes to how we integrate with the payment provider need Grace's sign-off."),
    ("The search index is rebuilt from scratch every Sunday.",
     "Each Sunday we rebuild the search index completely. Written down after the outage."),
    ("Translations are managed in Crowdin and synced by a bot.",
     "A bot keeps our strings in sync with Crowdin, where translators work."),
    ("New services must expose Prometheus metrics before launch.",
     "No service launches without Prometheus metrics. Platform team rule."),
    ("The web app talks to the API through the gateway, never directly.",
     "All API traffic from the web app goes via the gateway. Heard this from Sam."),
    ("Database migrations run automatically during deploy.",
     "Deploys apply pending database migrations on their own."),
    ("The default branch of every repository is main.",
     "Every repo uses main as its default branch. Checked across the org."),
]
"""Looser restatements: the same fact with the sentence turned around, a name or value moved
to another place, and often an incidental remark that the other side lacks (how memories
written at different times restate a fact)."""

SUBJECT: list[tuple[str, str]] = [
    ("The payments service deploys every Tuesday after the release review.",
     "The payments service deploys on Fridays, without a release review."),
    ("Use pnpm, not npm, in the web repository; the lockfile is pnpm-lock.yaml.",
     "The web repository switched from pnpm to yarn last month."),
    ("The staging database is reset every night at 02:00 UTC.",
     "The staging database is never reset; it keeps last quarter's data."),
    ("Alice owns the authentication service and reviews every change to it.",
     "Carol took over the authentication service from Alice in March."),
    ("Integration tests need Docker running because they start Postgres in a container.",
     "Integration tests run against a shared Postgres server; Docker is not needed."),
    ("The API rate limit is 100 requests per minute per token.",
     "The API rate limit was raised to 1,000 requests per minute for enterprise tokens."),
    ("We decided to store timestamps in UTC everywhere and convert only in the UI.",
     "Timestamps in the reporting service are stored in the customer's local time zone."),
    ("The mobile app's minimum supported iOS version is 16.",
     "The mobile app crashes on iOS 17 when the camera permission is denied."),
    ("Feature flags live in LaunchDarkly; the config file only has defaults.",
     "We are moving feature flags off LaunchDarkly to an in-house service."),
    ("The search cluster runs Elasticsearch 8 on three nodes.",
     "The search cluster ran out of disk on one node last week."),
    ("Run `make lint` before pushing; CI fails on any lint warning.",
     "CI only reports lint warnings; they do not fail the build."),
    ("Customer data must never be copied to developer laptops.",
     "Anonymised customer data may be copied to laptops for debugging."),
    ("The billing job retries a failed charge three times, one hour apart.",
     "The billing job sends an invoice email after every successful charge."),
    ("Logs are kept for 30 days in Loki and then deleted.",
     "Audit logs are kept for seven years in cold storage."),
    ("The frontend is built with Vite and deployed to Cloudflare Pages.",
     "The frontend build takes twelve minutes because of the image optimisation step."),
    ("On-call engineers must acknowledge a page within 15 minutes.",
     "On-call rotations change every Wednesday at noon."),
    ("The Python services target Python 3.12.",
     "The data pipeline is still on Python 3.9 because of a pinned dependency."),
    ("Secrets are stored in Vault and injected at deploy time.",
     "The Vault server was upgraded and its root token rotated."),
    ("The nightly backup of the main database goes to an S3 bucket in eu-west-1.",
     "Restoring the main database from backup takes about four hours."),
    ("Pull requests need two approvals before merging to main.",
     "Pull requests that only change docs can be merged without review."),
    ("The GraphQL gateway times out upstream calls after 5 seconds.",
     "The GraphQL gateway caches schema introspection for an hour."),
    ("Bob prefers squash merges so that main keeps one commit per feature.",
     "Bob prefers rebase merges to keep every commit of a feature."),
    ("The CSV export is limited to 50,000 rows.",
     "The CSV export uses semicolons as separators for German customers."),
    ("Kubernetes pods of the worker have a memory limit of 2 GiB.",
     "The worker pods restart when the queue backs up past ten thousand jobs."),
    ("The design system's primary colour is #1A73E8.",
     "The design system's buttons use rounded corners of 8 pixels."),
    ("Sentry alerts for the checkout flow go to the #payments-alerts channel.",
     "Sentry sampling for the checkout flow is set to 10 percent."),
    ("The release branch is cut every second Monday.",
     "Hotfixes are merged straight into the release branch and then back to main."),
    ("Terraform state is stored remotely in a GCS bucket with locking.",
     "Terraform plans must be posted on the pull request before apply."),
    ("Password reset links expire after one hour.",
     "Password reset emails are sometimes marked as spam by Outlook."),
    ("The recommendation model is retrained weekly on Sunday night.",
     "The recommendation model's click-through rate dropped after the last retrain."),
]
"""Pairs on the same subject with a different or opposite claim."""


VALUE: list[tuple[str, str]] = [
    ("Farid owns the billing schema.", "Grace owns the billing schema now."),
    ("The analytics warehouse is BigQuery.", "Analytics data lives in Snowflake."),
    ("The admin UI is served on port 8443 in development.",
     "The admin UI is served on port 9443 in development."),
    ("The worker queue is backed by Redis.", "The worker queue is backed by RabbitMQ."),
    ("Staging is reset every Monday morning.", "Staging is reset every Friday evening."),
    ("The load balancer health check hits /healthz every ten seconds.",
     "The load balancer health check runs every 30 seconds."),
    ("The docs site is generated by MkDocs.", "The docs site is generated by Docusaurus."),
    ("Release candidates are cut from the main branch.",
     "Release candidates are cut from the develop branch."),
    ("The mobile app ships through TestFlight first.",
     "The mobile app no longer ships through TestFlight first."),
    ("Database migrations run automatically during deploy.",
     "Database migrations are never run during deploy; an engineer runs them by hand."),
]
"""The same subject and the same kind of claim with another value (or the claim negated):
what a cosine sees as nearly the same and :func:`ynm.dream.judges.claim_mismatch` must tell
apart."""


GENERATED_SEEDS = (1, 2, 4, 5, 6)
"""The consolidation generator's seeds for the calibration's generated pairs (its table is
read at 7, and at 3, 11 and 23 for overfitting: none of them)."""
TARGET_RECALL = 0.9
"""The share of the calibration's duplicates the similarity judge's dedupe review threshold
flags (the recall the consolidation benchmark's quality target asks of dedupe)."""
NEAR = 0.3
"""Generated pairs at least this near (centred cosine) are calibration pairs."""
NEIGHBOURS = 5
"""Each generated memory's nearest memories of its type taken (``dream.candidatesPerMemory``,
default 5): the pairs candidate generation hands the judge."""


def _fit(xs: list[float], ys: list[int], steps: int = 20000, lr: float = 0.5
         ) -> tuple[float, float]:
    """Maximum-likelihood logistic regression on one feature (gradient ascent)."""
    a, b = 1.0, 0.0
    n = len(xs)
    for _ in range(steps):
        ga = gb = 0.0
        for x, y in zip(xs, ys):
            p = 1.0 / (1.0 + math.exp(-(a * x + b)))
            ga += (y - p) * x
            gb += y - p
        a += lr * ga / n * 10
        b += lr * gb / n
    return a, b


def measure() -> dict[str, object]:
    import numpy as np

    from benchmarks.paraphrase import distractors
    from ynm.dream.judges import claim_mismatch
    from ynm.index.embedders import open_embedder
    from ynm.index.search import CENTROID_PRIOR

    embedder, problem = open_embedder("sentence-transformers", Path(tempfile.mkdtemp()))
    if embedder is None:
        sys.exit(f"no embedder: {problem}")
    rng = random.Random(0)
    sets = {"same": SAME, "loose": LOOSE, "subject": SUBJECT, "value": VALUE}
    texts = sorted({t for pairs in sets.values() for pair in pairs for t in pair})
    haystack = distractors(1000, seed=1)
    vectors = embedder.embed_all(texts + haystack)
    of = dict(zip(texts, vectors[: len(texts)]))
    center = vectors.sum(axis=0) / (len(vectors) + CENTROID_PRIOR)

    def cos(x: str, y: str) -> float:
        a, b = of[x] - center, of[y] - center
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    # the i-th SAME and SUBJECT pairs share their subject, as do LOOSE and VALUE ones that
    # name the same thing: unrelated pairs take two texts of no common pair
    group: dict[str, set[str]] = {}
    for name, pairs in sets.items():
        for i, pair in enumerate(pairs):
            for t in pair:
                group.setdefault(t, set()).add(f"{'s' if name in ('same', 'subject') else name}{i}")
    unrelated = []
    while len(unrelated) < 120:
        x, y = rng.sample(texts, 2)
        if not group[x] & group[y]:
            unrelated.append((x, y))
    sets["other"] = unrelated

    def brief(t: str) -> dict[str, str]:
        return {"summary": "", "content": t}

    measured: dict[str, list[tuple[float, list[str]]]] = {
        name: [(cos(a, b), claim_mismatch(brief(a), brief(b))) for a, b in pairs]
        for name, pairs in sets.items()}
    for seed in GENERATED_SEEDS:
        for name, values in _generated(embedder, seed).items():
            measured.setdefault(name, []).extend(values)
    # sameFact is fitted on candidate pairs (not the shuffled unrelated ones) that
    # claim_mismatch lets through (it answers the others)
    positive = ("same", "loose", "generated-same")
    xs, ys = [], []
    for name, values in measured.items():
        if name == "other":
            continue
        for c, why in values:
            if not why:
                xs.append(c)
                ys.append(1 if name in positive else 0)
    fact = _fit(xs, ys)
    # sameSubject on the written pairs only: the generated near pairs are not a sample of
    # unrelated memories
    written = {k: v for k, v in measured.items() if not k.startswith("generated")}
    xs = [c for values in written.values() for c, _ in values]
    ys = [1 if name != "other" else 0 for name, values in written.items() for _ in values]
    subj = _fit(xs, ys)
    # the review threshold: the sameFact TARGET_RECALL of the duplicates reach
    reached = sorted(((0.0 if why else _p(fact, c)) for name in positive
                      for c, why in measured[name]), reverse=True)
    review = reached[math.ceil(TARGET_RECALL * len(reached)) - 1]
    return {"measured": measured, "sameFact": fact, "sameSubject": subj,
            "review": math.floor(review * 100) / 100, "model": embedder.name}


def _p(ab: tuple[float, float], c: float) -> float:
    return 1.0 / (1.0 + math.exp(-(ab[0] * c + ab[1])))


def _generated(embedder: object, seed: int
               ) -> dict[str, list[tuple[float, list[str]]]]:
    """Near pairs of a store made by benchmarks/consolidation.py's generator at ``seed`` (not
    the seed its table is measured on): each memory with its :data:`NEIGHBOURS` nearest
    memories of its type by centred cosine in that store, at least :data:`NEAR` (what dedupe's
    candidate generation hands the judge), as
    ``generated-same`` (its duplicate pairs), ``generated-subject`` (one subject, another
    claim) and ``generated-other``."""
    import numpy as np

    from benchmarks.consolidation import generate_set
    from ynm.dream.judges import claim_mismatch
    from ynm.index.cache import embedding_text
    from ynm.index.search import CENTROID_PRIOR

    labelled = generate_set(seed=seed)
    records = labelled.records
    vectors = embedder.embed_all(  # type: ignore[attr-defined]
        [embedding_text(r.summary or "", r.content) for r in records])
    centred = vectors - vectors.sum(axis=0) / (len(vectors) + CENTROID_PRIOR)
    centred /= np.linalg.norm(centred, axis=1, keepdims=True)
    sims = centred @ centred.T
    out: dict[str, list[tuple[float, list[str]]]] = {
        "generated-same": [], "generated-subject": [], "generated-other": []}
    pairs: set[tuple[int, int]] = set()
    for i, r in enumerate(records):
        row = sims[i].copy()
        row[i] = -2.0
        same_type = [k for k in np.argsort(-row) if records[k].type == r.type][:NEIGHBOURS]
        pairs.update((min(i, k), max(i, k)) for k in same_type if row[k] >= NEAR)
    for i, k in sorted(pairs):
        a, b = records[i], records[k]
        label = labelled.pair_label(a.memory_id, b.memory_id)
        name = {"duplicate": "generated-same", "different": "generated-other"}.get(
            label, "generated-subject")
        why = claim_mismatch({"content": a.content, "subject": a.subject},
                             {"content": b.content, "subject": b.subject})
        out[name].append((float(sims[i, k]), why))
    return out


def _summary(name: str, values: list[float]) -> str:
    v = sorted(values)
    q = lambda f: v[min(len(v) - 1, int(f * len(v)))]
    return (f"{name:8s} n={len(v):3d} min {v[0]:.2f} p10 {q(0.1):.2f} median {q(0.5):.2f} "
            f"p90 {q(0.9):.2f} max {v[-1]:.2f}")


if __name__ == "__main__":  # pragma: no cover - manual measurement
    r = measure()
    print(f"model: {r['model']}")
    measured = r["measured"]  # type: ignore[assignment]
    for key, values in measured.items():  # type: ignore[union-attr]
        print(_summary(key, [c for c, _ in values]))
    for key in ("sameFact", "sameSubject"):
        a, b = r[key]  # type: ignore[misc]
        print(f"{key}: a={a:.2f} b={b:.2f}  (p=0.5 at c={-b / a:.2f})")
    fact = r["sameFact"]  # type: ignore[assignment]
    review = r["review"]  # type: ignore[assignment]
    a, b = fact  # type: ignore[misc]
    print(f"dedupe review threshold (sameFact {TARGET_RECALL:.0%} of the duplicates reach): "
          f"{review:.2f} (c = {(math.log(review / (1 - review)) - b) / a:.2f})")
    for name, values in measured.items():  # type: ignore[union-attr]
        vetoed = [why for _, why in values if why]
        flagged = sum(1 for c, why in values if not why and _p(fact, c) >= review)
        default = sum(1 for c, why in values if not why and _p(fact, c) >= 0.6)
        reasons = sorted({w for why in vetoed for w in why})
        print(f"  {name}: {len(vetoed)}/{len(values)} told apart by claim_mismatch "
              f"({', '.join(reasons) or '-'}); sameFact >= {review:.2f}: "
              f"{flagged}/{len(values)} (>= 0.6: {default})")
