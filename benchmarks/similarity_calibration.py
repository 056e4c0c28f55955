"""Calibrate the similarity judge: centred embedding cosine -> P(same fact), P(same subject).

A labelled set of memory pairs of a fictional software team, three kinds:

- ``SAME``: the same fact stated twice in different words (what dedupe should merge);
- ``SUBJECT``: the same subject with a different or opposite claim (what dedupe must keep
  apart, and contradict looks at);
- unrelated: two memories on different subjects (the pairs' sides shuffled, plus the
  distractors of benchmarks/paraphrase.py).

Every text is embedded with the configured local model (all-MiniLM-L6-v2) inside a store of
1,000 distractor memories, centred as recall centres (the store's mean vector with
ynm.index.search.CENTROID_PRIOR), and two logistic curves ``1 / (1 + exp(-(a*c + b)))`` are
fitted by maximum likelihood: ``sameFact`` on SAME (1) against SUBJECT and unrelated (0), and
``sameSubject`` on SAME and SUBJECT (1) against unrelated (0). The printed ``(a, b)`` pairs go
into ynm.dream.judges.SIMILARITY_CALIBRATION.

Run: ``PYTHONPATH=. python benchmarks/similarity_calibration.py`` (needs the ``vector`` extra).
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
    from ynm.index.embedders import open_embedder
    from ynm.index.search import CENTROID_PRIOR

    embedder, problem = open_embedder("sentence-transformers", Path(tempfile.mkdtemp()))
    if embedder is None:
        sys.exit(f"no embedder: {problem}")
    rng = random.Random(0)
    texts = sorted({t for pair in SAME + SUBJECT for t in pair})
    haystack = distractors(1000, seed=1)
    vectors = embedder.embed_all(texts + haystack)
    of = dict(zip(texts, vectors[: len(texts)]))
    center = vectors.sum(axis=0) / (len(vectors) + CENTROID_PRIOR)

    def cos(x: str, y: str) -> float:
        a, b = of[x] - center, of[y] - center
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    # the i-th SAME and SUBJECT pairs share their subject: unrelated pairs take two subjects
    group = {t: i for pairs in (SAME, SUBJECT) for i, pair in enumerate(pairs) for t in pair}
    unrelated = []
    while len(unrelated) < 120:
        x, y = rng.sample(texts, 2)
        if group[x] != group[y]:
            unrelated.append((x, y))
    same = [cos(a, b) for a, b in SAME]
    subject = [cos(a, b) for a, b in SUBJECT]
    other = [cos(a, b) for a, b in unrelated]
    fact = _fit(same + subject + other, [1] * len(same) + [0] * (len(subject) + len(other)))
    subj = _fit(same + subject + other, [1] * (len(same) + len(subject)) + [0] * len(other))
    return {"same": same, "subject": subject, "other": other, "sameFact": fact,
            "sameSubject": subj, "model": embedder.name}


def _summary(name: str, values: list[float]) -> str:
    v = sorted(values)
    q = lambda f: v[min(len(v) - 1, int(f * len(v)))]
    return (f"{name:8s} n={len(v):3d} min {v[0]:.2f} p10 {q(0.1):.2f} median {q(0.5):.2f} "
            f"p90 {q(0.9):.2f} max {v[-1]:.2f}")


if __name__ == "__main__":  # pragma: no cover - manual measurement
    r = measure()
    print(f"model: {r['model']}")
    for key in ("same", "subject", "other"):
        print(_summary(key, r[key]))  # type: ignore[arg-type]
    for key in ("sameFact", "sameSubject"):
        a, b = r[key]  # type: ignore[misc]
        print(f"{key}: a={a:.2f} b={b:.2f}  (p=0.5 at c={-b / a:.2f})")
    a, b = r["sameFact"]  # type: ignore[misc]
    def p(c: float) -> float:
        return 1 / (1 + math.exp(-(a * c + b)))
    for name in ("same", "subject", "other"):
        vals = r[name]  # type: ignore[assignment]
        flagged = sum(p(c) >= 0.6 for c in vals)  # dedupe's review band
        print(f"  sameFact >= 0.6 (dedupe review): {name} {flagged}/{len(vals)}")
