"""The redaction gate: distributed writes whose text holds a secret are refused.

Two kinds of check run on every distributed write (remember, supersede, annotate, promote,
import); personal writes are not gated. A hit refuses the whole write; nothing is rewritten.

* **Secret detectors** (config ``redactionDetectors``, default ``"default"``): the format
  detectors of the detect-secrets library (:data:`DETECT_SECRETS_PLUGINS`) plus our own
  :data:`SUPPLEMENT` for current formats the library does not know (GitHub fine-grained
  ``github_pat_`` tokens, OpenAI ``sk-proj-``/``sk-svcacct-``/``sk-admin-`` keys, Anthropic
  ``sk-ant-`` keys, other ``sk-`` keys, newer Slack tokens, Stripe test keys and webhook secrets,
  every ``-----BEGIN ... PRIVATE KEY-----`` block, bearer tokens, Google API keys, npm and
  Hugging Face tokens). ``"entropy"`` adds detect-secrets' two high-entropy string detectors
  (quoted base64 above 4.5 bits a character, quoted hex above 3.0), which also refuse quoted
  commit SHAs and other random ids; ``"none"`` turns the detectors off.
* **Configured patterns** (config ``redaction``, default none): regexes the user adds; a pattern
  starting ``(?i)`` is matched case-insensitively with that prefix removed. They are matched as
  written.

Every detector match is bounded on the left: it counts only where the character before it is
not a letter or digit, so ``sk-`` inside ``risk-based-...`` or ``AKIA`` inside a longer word is
not a secret. The reference (cli.md §5.5) has six hand-written, unbounded patterns instead of
detectors; its ``sk-[A-Za-z0-9_-]{20,}`` refuses ordinary hyphenated words and none of them
knows a ``github_pat_`` token.

ynm checks every text a record carries (content, summary, subject, tags, data, dataSchema,
reason and the provenance strings); the reference checks only content, summary and data (and
only content and summary on import), which lets a secret through in a tag or a source URL.

detect-secrets is imported only when a distributed write is checked, so commands that write
nothing start without it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from ynm.errors import Refused, YnmError, pip_install
from ynm.model.records import Record
from ynm.model.words import counted

DetectorSet = Literal["default", "entropy", "none"]
"""Which secret detectors run: the format detectors, those plus the entropy ones, or none."""

DETECT_SECRETS_PLUGINS: tuple[tuple[str, str], ...] = (
    ("artifactory", "ArtifactoryDetector"),
    ("aws", "AWSKeyDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"),
    ("basic_auth", "BasicAuthDetector"),
    ("cloudant", "CloudantDetector"),
    ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"),
    ("gitlab_token", "GitLabTokenDetector"),
    ("ibm_cos_hmac", "IbmCosHmacDetector"),
    ("jwt", "JwtTokenDetector"),
    ("mailchimp", "MailchimpDetector"),
    ("npm", "NpmDetector"),
    ("openai", "OpenAIDetector"),
    ("private_key", "PrivateKeyDetector"),
    ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"),
    ("slack", "SlackDetector"),
    ("softlayer", "SoftlayerDetector"),
    ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"),
    ("telegram_token", "TelegramBotTokenDetector"),
    ("twilio", "TwilioKeyDetector"),
)
"""The detect-secrets plugins (module under ``detect_secrets.plugins``, class) run by default:
every one that recognises a provider's token format. Left out: ``KeywordDetector``, measured on
tests/support/secrets.py (PASSWORDS, PASSWORD_PROSE): reading a string with no file type it
takes only quoted values (5 of 16 written-out passwords found; ``"password": "string"``
refused), its file-type modes also refuse prose (14 of 34 sentences: ``password: required``,
``The secret: keep it small``), and its patterns take seconds on a 4 KB line repeating
``password``; ynm's own :func:`_password_assignment` reports under its name instead.
``IbmCloudIamDetector`` (any long value after ``key:``), ``IPPublicDetector`` (an address is no
secret) and the two entropy detectors (opt-in, see :data:`ENTROPY_PLUGINS`) are left out too."""

ENTROPY_PLUGINS: tuple[tuple[str, str, float], ...] = (
    ("high_entropy_strings", "Base64HighEntropyString", 4.5),
    ("high_entropy_strings", "HexHighEntropyString", 3.0),
)
"""The detect-secrets entropy detectors run when ``redactionDetectors`` is ``"entropy"``:
(module, class, limit in bits a character; detect-secrets' own defaults). They read quoted
strings only and refuse one whose Shannon entropy is above the limit."""

_SK_KEY = (r"sk-(?!(?:proj|svcacct|admin|ant)-)(?:[a-z0-9]{1,8}-){0,2}"
           r"(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{20,}")

_PLUGIN_NEEDS: dict[str, str] = {"OpenAIDetector": "T3BlbkFJ"}
"""A literal every match of the plugin holds: a line without it is not given to the plugin (its
regex takes time quadratic in the length of a run of ``sk-``s)."""

SUPPLEMENT: tuple[tuple[str, str] | tuple[str, str, str], ...] = (
    # GitHub fine-grained personal access tokens (github_pat_<22>_<59>, 2022); detect-secrets
    # knows only ghp_/gho_/ghu_/ghs_/ghr_.
    ("GitHub Token", r"github_pat_[A-Za-z0-9_]{22,}"),
    # OpenAI project, service-account and admin keys; detect-secrets knows only the legacy
    # sk-<20>T3BlbkFJ<20> form.
    ("OpenAI Token", r"sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
    ("Anthropic API Key", r"sk-ant-[a-z]+[0-9]*-[A-Za-z0-9_-]{20,}"),
    # Other providers' sk- keys (sk-<run>, sk-or-v1-<run>): a run of 20+ letters and digits
    # holding both, so sk-learn-compatible-... is no key; the legacy OpenAI form is left to
    # detect-secrets.
    ("sk- API Key", _SK_KEY, "T3BlbkFJ"),
    # Slack app-level (xapp-) and refresh/configuration (xoxe-, xoxe.xoxp-) tokens.
    ("Slack Token", r"xapp-[0-9]+-[A-Za-z0-9-]{20,}"),
    ("Slack Token", r"xoxe(?:\.xox[a-z])?-[0-9]+-[A-Za-z0-9-]{20,}"),
    # Stripe test-mode keys and webhook signing secrets (detect-secrets: live keys only).
    ("Stripe Access Key", r"[rs]k_test_[0-9A-Za-z]{24,}"),
    ("Stripe Webhook Secret", r"whsec_[A-Za-z0-9]{24,}"),
    # Every PEM/PGP private key block, ENCRYPTED and PKCS#8 ones included.
    ("Private Key", r"-----BEGIN[A-Z0-9 ]* PRIVATE KEY(?: BLOCK)?-----"),
    # An HTTP bearer token: 20+ token characters holding a digit (so "bearer token-based-..."
    # prose passes).
    ("Bearer Token", r"(?i:bearer)\s+(?=[A-Za-z0-9._~+/-]*[0-9])[A-Za-z0-9._~+/-]{20,}"),
    ("Google API Key", r"AIza[0-9A-Za-z_-]{35}"),
    ("NPM tokens", r"npm_[A-Za-z0-9]{36}"),
    ("Hugging Face Token", r"hf_[A-Za-z]{34,}"),
)
"""Our detectors for formats detect-secrets 1.5 does not know: (detector name, regex[, literal
that makes a match not count]). A name shared with a detect-secrets plugin reports as that
plugin."""


KEYWORD = "Secret Keyword"
"""The name :func:`_password_assignment` reports as (that of detect-secrets' KeywordDetector,
which it stands in for)."""

# A name that holds a password: password/passwd/passphrase ending it (PGPASSWORD,
# MYSQL_ROOT_PASSWORD, db_password, --password), or pass/pwd/secret as its last part (DB_PASS,
# smtp_pwd, client_secret), either maybe followed by _key/_value/a number (secret_key); not a
# name for where or how one is kept (password_file, password_hash) nor bypass or requirepass.
_KEY_NAME = re.compile(r"(?:.*pass(?:word|wd|phrase)|(?:.*[_.-])?(?:pass|pwd|secret))"
                       r"(?:[_.-]?(?:key|value|[0-9]+))?", re.IGNORECASE)
_NAME_BEFORE = re.compile(r"[A-Za-z0-9_.-]{1,64}$")
_QUOTED = re.compile(r"[ \t]*(['\"])([^'\"]+)\1")
_BARE = re.compile(r"[^\s'\"`,;&)]+")
_LAST = re.compile(r"[ \t]+([^\s'\"`]+)[ \t]*[,;]?$")
_PLACEHOLDER_WORDS = frozenset({
    "required", "optional", "none", "null", "nil", "true", "false", "empty", "string", "str",
    "text", "number", "integer", "boolean", "password", "passwd", "secret", "redacted",
    "hidden", "masked", "prompt", "unset", "undefined", "your-password", "yourpassword",
})


def _placeholder(value: str) -> bool:
    """A value that stands for a password rather than being one: a variable or template
    (``$PGPASSWORD``, ``${{ secrets.X }}``, ``<password>``, ``%s``, ``{pw}``), a mask
    (``********``, ``xxxx``), a type or a word for the field (``string``, ``required``), an
    expression (``os.environ[...]``, ``getpass()``, ``self.password``)."""
    v = value.strip().rstrip(".,;:")
    if len(v) < 4 or v.lower() in _PLACEHOLDER_WORDS or len(set(v.lower())) == 1:
        return True
    if v[0] in "$%<{[(*#@:" or "(" in v or "${" in v or "{{" in v:
        return True
    if set(v.lower()) <= {"x", "*", ".", "-", "_"}:
        return True
    # an attribute or module path (self.password, os.environ.get, process.env.DB_PASS)
    return re.fullmatch(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\[.*)?", v) is not None


def _looks_like_password(value: str) -> bool:
    """Whether an unquoted value ending a ``name: value`` line is a password rather than a
    word: it holds a digit or a symbol, or mixes upper and lower case (``Summer2024!``, not
    ``required`` or ``monthly``)."""
    v = value.rstrip(".,;:")
    return (any(c.isdigit() for c in v) or any(c in "!@#$%^&*+=?~/|" for c in v)
            or (v.lower() != v and v.upper() != v))


def _password_assignment(line: str) -> bool:
    """Whether ``line`` writes a password out after a password-like name (:data:`_KEY_NAME`):
    a quoted value after ``=`` or ``:`` (``db_password: "S3cr3t!"``, ``"password": "..."``,
    ``passphrase = "open sesame 42"``); ``name=value`` with no space before ``=`` (shell, env
    files, URLs, flags: ``password=hunter2``, ``PGPASSWORD=Tr0ub4dor``,
    ``--password=letmein42``); or ``name: value`` ending the line with a value that looks like
    a password (:func:`_looks_like_password`: ``smtp_pwd: Mailer#2024``). Placeholders
    (:func:`_placeholder`), code passing a variable on (``password=password``,
    ``password=db_password``, ``password = secret_from_env``) and prose (``reset your password
    in settings``, ``password: required``, ``Note the password: it rotates``) pass.

    Measured on tests/support/secrets.py: 15 of 16 written-out passwords (PASSWORDS; the
    space-separated ``requirepass foobared99`` of a redis.conf is missed), none of 34 sentences
    about passwords (PASSWORD_PROSE), none of ORDINARY, none of the 2000 memories of the
    synthetic corpus (benchmarks/corpus.py). Linear in the line: each ``:``/``=`` looks back at
    most 80 characters."""
    for sep in re.finditer(r"[:=]", line):
        at = sep.start()
        before = line[max(0, at - 80):at].rstrip(" \t\"'")
        name = _NAME_BEFORE.search(before)
        if name is None or not _KEY_NAME.fullmatch(name.group()):
            continue
        after = at + 1
        quoted = _QUOTED.match(line, after)
        if quoted is not None:
            if not _placeholder(quoted.group(2)):
                return True
            continue
        if sep.group() == "=" and line[at - 1:at] not in (" ", "\t"):
            bare = _BARE.match(line, after)  # password=hunter2, not password = variable
            if bare is None or _placeholder(bare.group()):
                continue
            value = bare.group()
            if re.fullmatch(r"[a-z_]+", value) and ("_" in value or value in line[:at]):
                continue  # a variable passed on: password=db_password, f(password=password)
            return True
        if sep.group() == ":":
            last = _LAST.match(line, after)
            if last is not None and not _placeholder(last.group(1)) \
                    and _looks_like_password(last.group(1)):
                return True
    return False


@dataclass(frozen=True)
class Findings:
    """What the gate found in a record's texts.

    Attributes:
        detectors: names of the secret detectors that fired, sorted, each once
            (e.g. ``["AWS Access Key", "GitHub Token"]``).
        patterns: the configured patterns that matched, as configured, in config order.
    """

    detectors: list[str]
    patterns: list[str]

    def __bool__(self) -> bool:
        return bool(self.detectors or self.patterns)

    def message(self) -> str:
        """``refused: content matches <n> secret detector[s]: <name>, ...`` and/or
        ``<n> redaction pattern[s]: <pattern>, ...`` (joined by ``; ``). The pattern part alone
        is the reference's message (cli.md §2)."""
        parts = []
        if self.detectors:
            parts.append(f"{counted(len(self.detectors), 'secret detector')}: "
                         f"{', '.join(self.detectors)}")
        if self.patterns:
            parts.append(f"{counted(len(self.patterns), 'redaction pattern')}: "
                         f"{', '.join(self.patterns)}")
        return "refused: content matches " + "; ".join(parts)


@lru_cache(maxsize=32)
def _compile(patterns: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    out = []
    for p in patterns:
        flags = 0
        body = p
        if body.startswith("(?i)"):
            body, flags = body[4:], re.IGNORECASE
        out.append((p, re.compile(body, flags)))
    return tuple(out)


def matching_patterns(texts: Iterable[str | None], patterns: Sequence[str]) -> list[str]:
    """The configured patterns (as configured) that match any of ``texts``, in pattern order."""
    compiled = _compile(tuple(patterns))
    present = [t for t in texts if t]
    return [p for p, rx in compiled if any(rx.search(t) for t in present)]


def _bounded(text: str, start: int) -> bool:
    """True when the match at ``start`` is not preceded by a letter or digit."""
    return start == 0 or not text[start - 1].isalnum()


WINDOW = 4096
"""Longest piece of a line given to a detect-secrets plugin at once. Longer lines go in pieces
of this size overlapping by half, so a secret of up to ``WINDOW // 2`` characters is always
seen whole, and the plugins' regexes that take quadratic time on long runs (JWT, basic auth,
npm) stay bounded."""


def _windows(line: str) -> list[tuple[int, int]]:
    """The (start, end) pieces of ``line`` given to the plugins (see :data:`WINDOW`)."""
    if len(line) <= WINDOW:
        return [(0, len(line))]
    step = WINDOW // 2
    return [(i, min(i + WINDOW, len(line))) for i in range(0, len(line) - step, step)]


def _library_hit(line: str, value: str, start: int, end: int) -> bool:
    """True when a value a detect-secrets plugin reported in ``line[start:end]`` stands there
    bounded on the left (the plugins report values, not positions)."""
    at = line.find(value, start, end)
    while at != -1:
        if _bounded(line, at):
            return True
        at = line.find(value, at + 1, end)
    return False


@lru_cache(maxsize=4)
def _plugins(detectors: DetectorSet) -> tuple[tuple[Any, float | None], ...]:
    """The detect-secrets plugin instances for a detector set, each with its entropy limit
    (None for a format detector)."""
    specs: list[tuple[str, str, float | None]] = [(m, c, None) for m, c in DETECT_SECRETS_PLUGINS]
    if detectors == "entropy":
        specs += ENTROPY_PLUGINS
    try:
        out = []
        for module, cls, limit in specs:
            plugin_cls = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)
            out.append((plugin_cls() if limit is None else plugin_cls(limit=limit), limit))
    except ImportError as exc:
        raise YnmError(f"the redaction gate needs the detect-secrets package ({exc}), which "
                       f"comes with ynm; install ynm again: {pip_install()}") from exc
    return tuple(out)


@lru_cache(maxsize=1)
def _supplement() -> tuple[tuple[str, re.Pattern[str], str | None], ...]:
    return tuple((entry[0], re.compile(entry[1]), entry[2] if len(entry) > 2 else None)
                 for entry in SUPPLEMENT)


def detect(texts: Iterable[str | None], detectors: DetectorSet = "default") -> list[str]:
    """Names of the secret detectors that fire on any of ``texts`` (each line read on its own),
    sorted, each once; ``[]`` for ``detectors="none"``.

    Raises:
        YnmError: detect-secrets is not installed (exit 1).
    """
    if detectors == "none":
        return []
    lines = [line for t in texts if t for line in t.splitlines() if line.strip()]
    if not lines:
        return []
    found: set[str] = set()
    for plugin, limit in _plugins(detectors):
        name = plugin.secret_type
        if name in found:
            continue
        needs = _PLUGIN_NEEDS.get(type(plugin).__name__, "")
        if any(_library_hit(line, value, start, end)
               for line in lines if needs in line
               for start, end in _windows(line)
               for value in plugin.analyze_string(line[start:end])
               if limit is None or plugin.calculate_shannon_entropy(value) > limit):
            found.add(name)
    if KEYWORD not in found and any(_password_assignment(line[start:end]) for line in lines
                                    for start, end in _windows(line)):
        found.add(KEYWORD)
    for name, rx, unless in _supplement():
        if name not in found and any(_bounded(line, m.start()) for line in lines
                                     for m in rx.finditer(line)
                                     if unless is None or unless not in m.group()):
            found.add(name)
    return sorted(found)


def find(texts: Iterable[str | None], patterns: Sequence[str],
         detectors: DetectorSet = "default") -> Findings:
    """What the detectors and the configured ``patterns`` find in ``texts``."""
    texts = list(texts)
    return Findings(detect(texts, detectors), matching_patterns(texts, patterns))


def record_texts(record: Record) -> list[str | None]:
    """Every text of a record that the gate reads."""
    from ynm.model.jsonl import dumps_obj

    prov = record.provenance
    return [record.content, record.summary, record.subject, *record.tags,
            dumps_obj(record.data) if record.data is not None else None, record.data_schema,
            record.reason, prov.actor, prov.client, prov.session, prov.source, prov.tool]


def check_record(record: Record, patterns: Sequence[str],
                 detectors: DetectorSet = "default") -> None:
    """Refuse a record when any of its texts holds a secret (see :func:`check`)."""
    check(record_texts(record), patterns, detectors)


def check(texts: Iterable[str | None], patterns: Sequence[str],
          detectors: DetectorSet = "default") -> None:
    """Refuse when a secret detector fires or a configured pattern matches.

    Raises:
        Refused: :meth:`Findings.message`, e.g. ``refused: content matches 1 secret detector:
            GitHub Token`` or ``refused: content matches 1 redaction pattern: secret-[0-9]+``
            (exit 2, reference/cli.md §2).
        YnmError: detect-secrets is not installed (exit 1).
    """
    findings = find(texts, patterns, detectors)
    if findings:
        raise Refused(findings.message())
