"""Configuration: the schema, the five layers that build it, and where the git repository is.

Layers, later wins, merged shallowly one top-level key at a time (reference/cli.md §5.1):

```
defaults -> $YNM_HOME/config.json -> <repo>/.ynm/config.json
         -> <worktree>/.ynm/config.local.json -> YNM_* environment variables
```

``<repo>`` is the main work tree (all linked worktrees share one store, one lock and one project
index); ``<worktree>`` is the work tree holding the current directory. Git discovery walks the
file system for ``.git`` instead of starting ``git`` or importing pygit2, because it runs on
every CLI call. Source: reference/cli.md §5 and §6, reference/storage.md §5.3, §5.4 and §5.6.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.alias_generators import to_camel

from ynm.errors import ConfigError, InvalidConfig, InvalidInput
from ynm.store.repo import GitLocation, discover_git

__all__ = [
    "ANCHOR_PATTERN",
    "DEFAULT_REDACTION",
    "ENV_KEYS",
    "ClaudeConfig",
    "Config",
    "DreamConfig",
    "DreamThresholds",
    "GitLocation",
    "LoadedConfig",
    "MountConfig",
    "OpenAIConfig",
    "ReflectThresholds",
    "ThresholdBand",
    "TypesafeConfig",
    "discover_git",
    "index_path",
    "load_config",
    "normalize_user_id",
    "project_config_path",
    "read_env_file",
    "require_mount_anchor",
    "write_project_anchor",
]

ANCHOR_PATTERN = r"^[0-9a-f]{40}([0-9a-f]{24})?$"
ANCHOR_PROBLEM = ("must be a full commit id (40 or 64 lowercase hex digits; `git rev-parse "
                  "<abbreviated id>` prints it)")


def _check_anchor(value: str | None) -> str | None:
    """An anchor in configuration must be a full id (reference/cli.md §5.2): an abbreviated
    one could name another commit, or none, as the repository grows."""
    if value is not None and not re.match(ANCHOR_PATTERN, value):
        raise ValueError(ANCHOR_PROBLEM)
    return value
"""A git object id: 40 hex (SHA-1) or 64 hex (SHA-256). Source: reference/cli.md §5.2."""

DEFAULT_REDACTION: tuple[str, ...] = ()
"""Configured redaction patterns when ``redaction`` is unset: none. The secret detectors of
:mod:`ynm.service.redaction` stand in for the reference's six hand-written patterns (cli.md
§5.5), which refuse ordinary hyphenated words and miss current token formats."""

ENV_KEYS: dict[str, str] = {
    "YNM_ANCHOR": "anchor",
    "YNM_REMOTE": "remote",
    "YNM_PROVIDER": "provider",
    "YNM_PERSONAL_STORE": "personalStore",
    "YNM_USER": "userId",
    "YNM_ACTOR": "actor",
    "YNM_INDEX": "index",
    "YNM_EMBEDDER": "embedder",
    "YNM_EMBEDDER_KEY_ENV": "embedderKeyEnv",
}
"""Environment variable -> top-level config key it replaces (cli.md §5.7). ``YNM_MOUNTS`` is
handled apart because it holds JSON. ``YNM_EMBEDDER`` is ours, reserved for vector search."""

CONFIG_FILE = "config.json"
LOCAL_CONFIG_FILE = "config.local.json"
_USER_ID_BAD_CHAR = re.compile(r"[^a-z0-9._-]")
_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Values the reference accepts that this ynm does not implement: refused with a message naming
# the key (reference/cli.md §5.2, §5.3), never accepted and then ignored. ynm keeps memory in
# git notes only (DESIGN.md), and reaches a hosted store over MCP (provider ``mcp``).
SUPPORTED_PROVIDERS = ("git-notes",)
SUPPORTED_MOUNT_PROVIDERS = ("git-notes", "mcp")
REFERENCE_PROVIDERS = ("git-notes", "fs", "sqlite", "memory", "s3", "mcp")


def _check_provider(value: str, supported: tuple[str, ...]) -> str:
    """A ``provider`` value ynm implements, else ValueError saying why not: one the reference
    knows (``fs``, ``sqlite``, ``memory``, ``s3``) is not supported here; any other is
    unknown. Source: reference/cli.md §5.2-§5.3, reference/storage.md §5.2."""
    if value in supported:
        return value
    have = " or ".join(supported)
    if value in REFERENCE_PROVIDERS:
        hint = (" (a hosted store is mounted with provider mcp and a url)"
                if "mcp" in supported else "")
        raise ValueError(f"the {value} provider is not supported by this ynm, which keeps "
                         f"memory in git notes: use {have}{hint}")
    raise ValueError(f"unknown provider {value!r}: use {have}")


_MODEL_CONFIG = ConfigDict(
    strict=True,
    extra="forbid",
    alias_generator=to_camel,
    populate_by_name=True,
    frozen=True,
)



# --------------------------------------------------------------------------------------------
# Schema
# --------------------------------------------------------------------------------------------


def _check_url(value: str | None) -> str | None:
    """A hosted store's url must be absolute ``http://`` or ``https://`` with a host: a url
    without a scheme (``localhost:8080/mcp``) would only fail at the first call, as a store
    that cannot be reached."""
    if value is None:
        return value
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        raise ValueError(f"expected an http:// or https:// url with a host, got {value!r} "
                         "(for example https://memory.example.com/mcp)")
    return value


def _check_mount_ids(mounts: list[MountConfig]) -> list[MountConfig]:
    """Mount ids name one mount each, whatever the providers: ``personal`` and ``project`` are
    the built-in local mounts', and no two entries share an id (``--mount``, hits' ``mount``
    and sign-in files would otherwise mean two stores)."""
    seen: set[str] = set()
    for mc in mounts:
        if mc.id in ("personal", "project"):
            raise ValueError(f"mount id {mc.id!r} is the built-in {mc.id} mount's: choose "
                             "another id")
        if mc.id in seen:
            raise ValueError(f"mount id {mc.id!r} is used twice: give each mount its own id")
        seen.add(mc.id)
    return mounts


class MountConfig(BaseModel):
    """One entry of ``mounts[]``: an extra store (org bare repo, directory, hosted store).

    JSON keys are camelCase. ``provider`` is ``git-notes`` (needs ``path``) or ``mcp`` (a
    hosted store: needs ``url``, ``level: distributed``, and a sign-in kept apart from the
    configuration, see :mod:`ynm.service.remote`; ``timeout``: seconds each call to it may
    take, over 0 and at most 600, instead of the defaults there); the reference's ``fs``, ``sqlite``,
    ``memory`` and ``s3`` providers, and any unknown one, are refused with a message naming
    the key. A ``git-notes`` mount also needs ``anchor``, but that is checked when the mount is
    opened (:func:`require_mount_anchor`), not here. Source: reference/cli.md §5.3.
    """

    model_config = _MODEL_CONFIG

    id: str = Field(min_length=1)
    level: Literal["personal", "distributed"]
    provider: str = "git-notes"
    path: str | None = None
    url: str | None = None
    timeout: float | None = Field(default=None, gt=0, le=600)
    anchor: str | None = None
    remote: str | None = None
    bucket: str | None = None
    prefix: str | None = None
    region: str | None = None

    _anchor = field_validator("anchor")(classmethod(lambda cls, v: _check_anchor(v)))
    _provider = field_validator("provider")(
        classmethod(lambda cls, v: _check_provider(v, SUPPORTED_MOUNT_PROVIDERS)))
    _url = field_validator("url")(classmethod(lambda cls, v: _check_url(v)))

    @model_validator(mode="after")
    def _provider_rules(self) -> MountConfig:
        if self.provider not in ("s3", "mcp") and not self.path:
            raise ValueError(f"a {self.provider} mount needs a path")
        if self.provider == "mcp":
            if not self.url:
                raise ValueError("an mcp mount needs a url")
            if self.level != "distributed":
                raise ValueError("an mcp mount is distributed: a hosted store is shared")
        if self.provider == "s3" and not self.bucket:
            raise ValueError("an s3 mount needs a bucket")
        return self


def require_mount_anchor(mount: MountConfig) -> str:
    """Return a git-notes mount's anchor, or fail the way opening it must.

    Args:
        mount: a configured mount of any provider.

    Returns:
        The 40- or 64-hex anchor.

    Raises:
        ConfigError: ``mount <id>: git-notes provider needs an anchor`` when it has none.

    Source: reference/cli.md §5.3 (the check happens at open time, not at validation).
    """
    if not mount.anchor:
        raise ConfigError(f"mount {mount.id}: git-notes provider needs an anchor")
    return mount.anchor


class ThresholdBand(BaseModel):
    """An ``act``/``review`` pair in 0..1 (inclusive). Both keys are required when the object is
    given, and ``review <= act``. Source: reference/cli.md §5.6."""

    model_config = _MODEL_CONFIG

    act: float = Field(ge=0, le=1)
    review: float = Field(ge=0, le=1)

    @model_validator(mode="after")
    def _ordered(self) -> ThresholdBand:
        if self.review > self.act:
            raise ValueError("review threshold must not exceed act threshold")
        return self


class ReflectThresholds(BaseModel):
    """``dream.thresholds.reflect``: ``minEpisodes`` (integer >= 2, default 3) episodes a subject
    needs before reflection; ``flagAt`` (0..1, default 0.7) withholds a draft whose verification
    question scores at or above it. Source: reference/cli.md §5.6."""

    model_config = _MODEL_CONFIG

    min_episodes: int = Field(default=3, ge=2)
    flag_at: float = Field(default=0.7, ge=0, le=1)


class DreamThresholds(BaseModel):
    """``dream.thresholds``: bands for ``dedupe`` (0.85/0.6), ``contradict`` (0.85/0.6) and
    ``promote`` (0.7/0.5), plus ``reflect``. Source: reference/cli.md §5.6."""

    model_config = _MODEL_CONFIG

    dedupe: ThresholdBand = Field(default_factory=lambda: ThresholdBand(act=0.85, review=0.6))
    contradict: ThresholdBand = Field(
        default_factory=lambda: ThresholdBand(act=0.85, review=0.6)
    )
    promote: ThresholdBand = Field(default_factory=lambda: ThresholdBand(act=0.7, review=0.5))
    reflect: ReflectThresholds = Field(default_factory=ReflectThresholds)


class TypesafeConfig(BaseModel):
    """``dream.typesafe``: ``model`` (None = the service's latest) and ``apiKeyEnv`` (the
    variable holding the key, default ``TYPESAFE_API_KEY``). Source: reference/cli.md §5.6.
    ``baseUrl`` is ours (default ``https://api.typesafe.ai``; ``YNM_TYPESAFE_BASE_URL``
    overrides it): the endpoint the judge posts ``/v1/systemone`` to."""

    model_config = _MODEL_CONFIG

    model: str | None = None
    api_key_env: str = "TYPESAFE_API_KEY"
    base_url: str = "https://api.typesafe.ai"


class OpenAIConfig(BaseModel):
    """``dream.openai``: an OpenAI-compatible endpoint (``baseUrl``, ``model``, ``apiKeyEnv``).
    ``YNM_OPENAI_BASE_URL`` / ``YNM_OPENAI_MODEL`` override under ``writer: auto`` (applied by
    the writer, not here). Source: reference/cli.md §5.6."""

    model_config = _MODEL_CONFIG

    base_url: str = "http://localhost:11434/v1"
    model: str = "qwen3:latest"
    api_key_env: str = "OPENAI_API_KEY"


class ClaudeConfig(BaseModel):
    """``dream.claude``: ``model`` for ``claude -p`` (None = the CLI's default) and ``useApiKey``
    (keep ``ANTHROPIC_API_KEY`` for the CLI; default False). Source: reference/cli.md §5.6."""

    model_config = _MODEL_CONFIG

    model: str | None = None
    use_api_key: bool = False


class DreamConfig(BaseModel):
    """The ``dream`` block: judge, writer, thresholds and limits of consolidation.

    Every nested object gets its defaults when omitted; a threshold band given partially is
    invalid. ``occurrenceRetention`` is an ISO 8601 duration string in the grammar of
    :mod:`ynm.model.durations` (whole numbers, as the reference's ``durationMs`` reads them)
    longer than zero, or ``null`` (keep forever): a window of no length would forget every
    occurrence at the next dream.
    Limits: ``maxPairsPerRun`` >= 1 (2000), ``candidatesPerMemory`` 1..20 (5), ``rerankTopK``
    1..50 (15), all inclusive. Source: reference/cli.md §5.6. ``judge: similarity`` is ours
    (ynm.dream.judges.SimilarityJudge; resolution in ynm.dream.resolve).
    """

    model_config = _MODEL_CONFIG

    judge: Literal["auto", "heuristic", "typesafe", "writer-emulated", "similarity"] = "auto"
    writer: Literal["auto", "none", "claude-cli", "openai-compatible"] = "auto"
    judge_on_write: bool = True
    thresholds: DreamThresholds = Field(default_factory=DreamThresholds)
    occurrence_retention: str | None = "P90D"
    max_pairs_per_run: int = Field(default=2000, ge=1)
    candidates_per_memory: int = Field(default=5, ge=1, le=20)
    rerank: bool = True
    rerank_top_k: int = Field(default=15, ge=1, le=50)
    typesafe: TypesafeConfig = Field(default_factory=TypesafeConfig)
    openai: OpenAIConfig = Field(default_factory=OpenAIConfig)
    claude: ClaudeConfig = Field(default_factory=ClaudeConfig)

    @field_validator("occurrence_retention")
    @classmethod
    def _iso_duration(cls, value: str | None) -> str | None:
        from ynm.model.durations import duration_ms, is_duration

        if value is not None and not is_duration(value):
            raise ValueError(f"expected an ISO 8601 duration such as P90D, got {value!r}")
        if value is not None and duration_ms(value) == 0:
            raise ValueError(f"must be longer than zero, got {value!r}: it would forget every "
                             "occurrence at the next dream; use null to keep them forever")
        return value


class Config(BaseModel):
    """The merged configuration (top-level keys of reference/cli.md §5.2), camelCase in JSON.

    ``personal_store``, ``user_id`` and ``actor`` are None in a layer that does not set them;
    :func:`load_config` fills them with the runtime defaults of §5.1. ``redaction`` lists patterns
    that refuse a distributed write on top of the secret detectors (default none, where the
    reference has six patterns of its own, §5.5); a pattern starting ``(?i)`` is
    case-insensitive. ``redactionDetectors`` (ours) picks the detectors: ``default``,
    ``entropy`` (plus the high-entropy string ones) or ``none`` (see
    :mod:`ynm.service.redaction`). ``embedder``
    and ``embedderKeyEnv`` are ours (not in the reference): the embedding model for vector
    search (see :mod:`ynm.index.embedders`) and the variable holding an HTTP provider's key.
    Unknown keys anywhere are errors, and so are values of the reference this ynm does not
    implement (``provider`` other than ``git-notes``, ``index: memory``): each is refused
    naming its key rather than accepted and ignored.
    """

    model_config = _MODEL_CONFIG

    anchor: str | None = None
    remote: str = "origin"
    provider: str = "git-notes"
    personal_store: str | None = None
    user_id: str | None = None
    actor: str | None = None
    redaction: list[str] = Field(default_factory=lambda: list(DEFAULT_REDACTION))
    redaction_detectors: Literal["default", "entropy", "none"] = "default"
    mounts: list[MountConfig] = Field(default_factory=list)
    hooks: bool = True
    index: str = "sqlite-fts"
    dream: DreamConfig = Field(default_factory=DreamConfig)
    embedder: str = "auto"
    embedder_key_env: str = "OPENAI_API_KEY"

    _anchor = field_validator("anchor")(classmethod(lambda cls, v: _check_anchor(v)))
    _provider = field_validator("provider")(
        classmethod(lambda cls, v: _check_provider(v, SUPPORTED_PROVIDERS)))
    _mount_ids = field_validator("mounts")(classmethod(lambda cls, v: _check_mount_ids(v)))

    @field_validator("index")
    @classmethod
    def _index_supported(cls, value: str) -> str:
        # the reference's in-process ``memory`` index: ynm's cache is always SQLite, so the
        # value would be ignored (reference/algorithms.md §7.1)
        if value == "sqlite-fts":
            return value
        if value == "memory":
            raise ValueError("the memory index is not supported by this ynm, whose cache is "
                             "always SQLite: use sqlite-fts")
        raise ValueError(f"unknown index {value!r}: use sqlite-fts")

    @field_validator("redaction")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            body = pattern.removeprefix("(?i)")
            try:
                re.compile(body)
            except re.error as exc:
                raise ValueError(f"invalid pattern {pattern!r}: {exc}") from exc
        return patterns


# --------------------------------------------------------------------------------------------
# Git discovery
# --------------------------------------------------------------------------------------------


# ``GitLocation`` and ``discover_git`` live in ynm.store.repo (imported above).


# --------------------------------------------------------------------------------------------
# Env files and user id
# --------------------------------------------------------------------------------------------


def read_env_file(path: str | Path) -> dict[str, str]:
    """Parse a ``KEY=VALUE`` secrets file; a missing file gives ``{}``.

    Rules: blank lines and lines starting ``#`` are skipped; an ``export `` prefix is dropped;
    key and value are stripped; one pair of matching single or double quotes around the value
    is removed (no escapes are interpreted). Lines without ``=`` or with a key that is not a
    shell name are skipped. Later lines win within one file.

    Returns:
        Key -> value, in file order.

    Source: reference/cli.md §5.1 (Secrets).
    """
    file = Path(path)
    if not file.is_file():
        return {}
    try:
        text = file.read_text(encoding="utf-8-sig", errors="replace")
    except OSError:
        return {}
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not _ENV_KEY.match(key):
            continue
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key] = value
    return values


def normalize_user_id(name: str | None) -> str:
    """Lowercase ``name`` and replace each character outside ``[a-z0-9._-]`` with ``-``.

    Returns ``me`` for an empty or missing name. Source: reference/cli.md §5.1.
    """
    user_id = _USER_ID_BAD_CHAR.sub("-", (name or "").lower())
    return user_id or "me"


def _os_user_name(env: Mapping[str, str]) -> str | None:
    # getpass.getuser()'s order, over the env mapping we were given rather than os.environ
    for key in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if env.get(key):
            return env[key]
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError, AttributeError, OSError):
        return None


def _expand_home(value: str, env: Mapping[str, str]) -> Path:
    if value == "~" or value.startswith("~/"):
        home = env.get("HOME") or str(Path.home())
        return Path(home + value[1:])
    return Path(value)


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


@dataclass
class LoadedConfig:
    """The merged configuration and where it came from.

    Attributes:
        config: the merged :class:`Config` with runtime defaults applied (``user_id``,
            ``actor`` = ``user:<userId>``, ``personal_store`` = ``<home>/store.git``).
        files: the configuration files actually read, in layer order.
        home: ``YNM_HOME`` (default ``~/.ynm``), absolute; it need not exist.
        repo: the main work tree of the repository holding cwd (for a linked worktree, the
            main repository's work tree; for a bare repository, the bare dir); None outside git.
        worktree: the current work tree root; None outside git and in a bare repository.
        git_common_dir: the shared git dir; None outside git.
        bare: True when cwd is inside a bare repository.
        env: the environment used: the given mapping plus the values of the env files.
        sources: top-level key -> where its value came from: the configuration file that
            set it last, or the ``YNM_*`` variable (``YNM_MOUNTS`` for ``mounts``); keys left
            at their defaults are absent. Messages name it (``anchor ... (from YNM_ANCHOR)``).
        unusable_anchor: the ``anchor`` of the project's ``.ynm/config.json`` that was left
            out because it is unusable (only with ``load_config(replacing_anchor=True)``);
            None otherwise.

    Source: reference/cli.md §5.1.
    """

    config: Config
    files: list[str]
    home: Path
    repo: Path | None
    worktree: Path | None
    git_common_dir: Path | None
    bare: bool = False
    env: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    unusable_anchor: Any = None


def _problems(exc: ValidationError) -> str:
    """Pydantic errors as ``<key.path>: <plain message>``, ``; ``-separated, keys as written
    in the file (:func:`ynm.model.records.validation_message`)."""
    from ynm.model.records import validation_message

    return validation_message(exc, unknown="unknown key", camel=False)


def _anchor_fix(source: str, project: bool) -> str:
    """What mends an unusable top-level ``anchor`` in ``source``: ``ynm init --anchor`` for
    the project's ``.ynm/config.json`` (the file it writes, replacing any value there), a hand
    edit for any other file, which ``ynm init`` does not write."""
    if project:
        return ("`ynm init --anchor <commit>` replaces it (an abbreviated id is resolved; "
                "`git rev-list --max-parents=0 HEAD` prints the root commit)")
    return f'correct or remove "anchor" in {source}'


def _validate_layer(data: dict[str, Any], source: str, project: bool = False) -> None:
    """Validate one configuration file's keys; a bad top-level ``anchor`` names its fix
    (:func:`_anchor_fix`). Raises InvalidConfig ``<source>: <key.path>: <problem>``."""
    try:
        Config.model_validate(data, by_name=False)
    except ValidationError as exc:
        fix = ""
        if any(tuple(e["loc"][:1]) == ("anchor",) for e in exc.errors()):
            fix = "; " + _anchor_fix(source, project)
        raise InvalidConfig(f"{source}: {_problems(exc)}{fix}") from exc


def _bad_anchor_only(data: dict[str, Any]) -> bool:
    """Whether ``data`` fails validation on its top-level ``anchor`` and on nothing else."""
    try:
        Config.model_validate(data, by_name=False)
    except ValidationError as exc:
        return all(tuple(e["loc"][:1]) == ("anchor",) for e in exc.errors())
    return False


CONFIG_HINT = 'a configuration file holds one JSON object of keys, e.g. {"remote": "origin"}'
"""The hint of a configuration file that is not valid JSON or holds no JSON object."""
MOUNTS_HINT = ("YNM_MOUNTS takes a JSON array of mount objects, quoted for the shell; e.g. "
               """YNM_MOUNTS='[{"id": "org", "level": "distributed", "provider": "git-notes", """
               """"path": "~/.ynm/org.git", "anchor": "<commit>"}]'""")
"""The hint of a ``YNM_MOUNTS`` that is not valid JSON or not an array of objects."""


def _read_config_file(path: Path, project: bool = False,
                      drop_bad_anchor: bool = False) -> dict[str, Any] | None:
    """One configuration file's keys (None when absent). With ``drop_bad_anchor`` (``ynm init
    --anchor``, which replaces it) an unusable ``anchor`` is left out instead of refused when
    it is the file's only fault."""
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))  # a leading BOM is dropped
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        refused = InvalidConfig(f"{path}: not valid JSON: {exc}")
        refused.hint = CONFIG_HINT
        raise refused from exc
    if not isinstance(data, dict):
        from ynm.model.words import json_kind

        refused = InvalidConfig(f"{path}: expected a JSON object, got {json_kind(data)}")
        refused.hint = CONFIG_HINT
        raise refused
    if drop_bad_anchor and "anchor" in data and _bad_anchor_only(data):
        data = {k: v for k, v in data.items() if k != "anchor"}
    _validate_layer(data, str(path), project)
    return data


def _env_layer(env: Mapping[str, str]) -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for var, key in ENV_KEYS.items():
        if env.get(var):
            layer[key] = env[var]
    raw_mounts = env.get("YNM_MOUNTS")
    if raw_mounts:
        try:
            mounts = json.loads(raw_mounts)
        except json.JSONDecodeError as exc:
            refused = InvalidConfig(f"YNM_MOUNTS: not valid JSON: {exc}")
            refused.hint = MOUNTS_HINT
            raise refused from exc
        if not isinstance(mounts, list) or not all(isinstance(m, dict) for m in mounts):
            refused = InvalidConfig("YNM_MOUNTS: must be a JSON array of mounts")
            refused.hint = MOUNTS_HINT
            raise refused
        layer["mounts"] = mounts
    try:
        Config.model_validate(layer, by_name=False)
    except ValidationError as exc:
        var_of = {key: var for var, key in ENV_KEYS.items()} | {"mounts": "YNM_MOUNTS"}
        parts = []
        from ynm.model.records import validation_problems

        for path, msg in validation_problems(exc, unknown="unknown key", camel=False):
            key, _, rest = path.partition(".")
            var = var_of.get(key, key)
            parts.append(f"{var}: {rest}: {msg}" if rest else f"{var}: {msg}")
        if "anchor" in layer and any(tuple(e["loc"][:1]) == ("anchor",) for e in exc.errors()):
            parts.append("unset YNM_ANCHOR, or set it to a full commit id")
        raise InvalidConfig("; ".join(parts)) from exc
    return layer


def load_config(
    cwd: str | Path | None = None, env: Mapping[str, str] | None = None, *,
    replacing_anchor: bool = False,
) -> LoadedConfig:
    """Read every configuration layer for ``cwd`` and merge them.

    Steps: copy ``env`` (default ``os.environ``; never mutated); find ``YNM_HOME`` and the git
    repository; add ``$YNM_HOME/env`` then ``<repo>/.env`` to the copy without overriding a
    variable already present; then merge, later wins, one top-level key at a time: defaults,
    ``$YNM_HOME/config.json``, ``<repo>/.ynm/config.json``, ``<worktree>/.ynm/config.local.json``,
    then ``YNM_ANCHOR``, ``YNM_REMOTE``, ``YNM_PROVIDER``, ``YNM_PERSONAL_STORE``, ``YNM_USER``,
    ``YNM_ACTOR``, ``YNM_INDEX``, ``YNM_EMBEDDER`` and ``YNM_MOUNTS`` (a JSON array replacing
    ``mounts``). Empty-string variables count as unset. Runtime defaults fill ``userId`` (the OS
    user, normalised), ``actor`` and ``personalStore`` last.

    Args:
        cwd: the directory the command runs in; default the process's current directory.
        env: the environment; default ``os.environ``.
        replacing_anchor: ``ynm init --anchor``, which writes the project's anchor: an
            unusable ``anchor`` in ``<repo>/.ynm/config.json`` (abbreviated, not a string) is
            left out instead of refused, and kept in :attr:`LoadedConfig.unusable_anchor`.

    Returns:
        The merged configuration with the files read, home, repository paths and environment.

    Raises:
        ConfigError: a file that is not JSON or not a JSON object (``<file>: expected a JSON
            object``), a value that fails validation (``<file>: <key.path>: <problem>``,
            ``unknown key`` for keys outside the schema), or a bad ``YNM_*`` variable.

    Source: reference/cli.md §5.1, §5.2, §5.7; reference/storage.md §5.6.
    """
    here = Path.cwd() if cwd is None else Path(cwd).expanduser().absolute()
    merged_env: dict[str, str] = dict(os.environ if env is None else env)

    home_value = merged_env.get("YNM_HOME") or "~/.ynm"
    home = _expand_home(home_value, merged_env)
    if not home.is_absolute():
        home = here / home

    location = discover_git(here)
    repo = location.repo if location else None
    worktree = location.worktree if location else None

    env_files = [home / "env"] + ([repo / ".env"] if repo is not None else [])
    for env_file in env_files:
        for key, value in read_env_file(env_file).items():
            merged_env.setdefault(key, value)

    config_files = [home / CONFIG_FILE]
    if repo is not None:
        config_files.append(project_config_path(repo))
    if worktree is not None:
        config_files.append(worktree / ".ynm" / LOCAL_CONFIG_FILE)

    merged: dict[str, Any] = {}
    files: list[str] = []
    sources: dict[str, str] = {}
    project_file = project_config_path(repo) if repo is not None else None
    unusable: Any = None
    for path in config_files:
        is_project = path == project_file
        data = _read_config_file(path, is_project, replacing_anchor and is_project)
        if is_project and replacing_anchor and data is not None and "anchor" not in data:
            unusable = json.loads(path.read_text(encoding="utf-8-sig")).get("anchor")
        if data is not None:
            files.append(str(path))
            merged.update(data)
            sources.update(dict.fromkeys(data, str(path)))
    env_layer = _env_layer(merged_env)
    merged.update(env_layer)
    var_of = {key: var for var, key in ENV_KEYS.items()} | {"mounts": "YNM_MOUNTS"}
    sources.update({key: var_of[key] for key in env_layer})

    config = Config.model_validate(merged, by_name=False)
    user_id = config.user_id or normalize_user_id(_os_user_name(merged_env))
    personal_store = (
        str(_expand_home(config.personal_store, merged_env))
        if config.personal_store
        else str(home / "store.git")
    )
    config = config.model_copy(
        update={
            "user_id": user_id,
            "actor": config.actor or f"user:{user_id}",
            "personal_store": personal_store,
        }
    )
    return LoadedConfig(
        config=config,
        files=files,
        home=home,
        repo=repo,
        worktree=worktree,
        git_common_dir=location.common_dir if location else None,
        bare=location.bare if location else False,
        env=merged_env,
        sources=sources,
        unusable_anchor=unusable,
    )


# --------------------------------------------------------------------------------------------
# Project files and index locations
# --------------------------------------------------------------------------------------------


def project_config_path(repo: str | Path) -> Path:
    """Return ``<repo>/.ynm/config.json``, the committed project config (cli.md §5.1)."""
    return Path(repo) / ".ynm" / CONFIG_FILE


def write_project_anchor(repo: str | Path, anchor: str, remote: str | None = None) -> bool:
    """Record ``anchor`` (and ``remote``, when given) in ``<repo>/.ynm/config.json``, keeping
    every other key.

    The file is written (2-space indent, trailing newline, other keys in their order) only when
    its anchor, or the remote asked for, differs; it is created with its folder when missing.

    Args:
        repo: the main work tree (or bare repository).
        anchor: a 40- or 64-hex commit id.
        remote: the remote ``ynm sync`` uses (``ynm init --remote``); None leaves the key as
            it is (absent means ``origin``).

    Returns:
        True when the file was written, False when it already held this anchor.

    Raises:
        InvalidInput: ``anchor`` is not a git object id.
        ConfigError: the existing file is not valid JSON or not a JSON object.

    Source: reference/cli.md §5.1 (``ynm init`` writes the anchor the team commits).
    """
    if not re.match(ANCHOR_PATTERN, anchor):
        raise InvalidInput(f"anchor: expected a 40- or 64-hex git object id, got {anchor!r}")
    path = project_config_path(repo)
    data: dict[str, Any] = {}
    if path.is_file():
        try:
            loaded = json.loads(path.read_text(encoding="utf-8-sig"))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: invalid JSON: {exc}") from exc
        if not isinstance(loaded, dict):
            raise ConfigError(f"{path}: expected a JSON object")
        data = loaded
    if data.get("anchor") == anchor and (remote is None
                                         or data.get("remote", "origin") == remote):
        return False
    data["anchor"] = anchor
    if remote is not None and data.get("remote", "origin") != remote:
        data["remote"] = remote
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return True


CACHE_DIR = "ynm-cache"  # ynm's cache folder, apart from the reference's index files


def index_path(loaded: LoadedConfig, mount_id: str) -> Path:
    """Return the cache file of a mount.

    ``project`` -> ``<repo>/.ynm/index/ynm-cache/project.sqlite`` (shared by every worktree);
    any other mount -> ``<home>/index/ynm-cache/<mount_id>.sqlite``. Folders are not created
    here.

    The reference implementation keeps its index at ``<repo>/.ynm/index/project.sqlite`` and
    ``<home>/index/<mountId>.sqlite`` (reference/cli.md §5.4, algorithms.md §7.2) with other
    columns under the same table names; ynm's cache lives in its own ``ynm-cache`` folder so
    neither implementation ever opens, rebuilds or deletes the other's file (DESIGN.md, "The
    cache"; docs/design.md, "Where the cache lives").

    Raises:
        ConfigError: ``project`` asked for outside a git repository.
    """
    if mount_id == "project":
        if loaded.repo is None:
            raise ConfigError("the project mount needs a git repository")
        return loaded.repo / ".ynm" / "index" / CACHE_DIR / "project.sqlite"
    return loaded.home / "index" / CACHE_DIR / f"{mount_id}.sqlite"
