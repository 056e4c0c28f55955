"""Which writer and which judge a run uses: ``dream.writer`` then ``dream.judge``, with
``auto`` resolved from what this machine has. Source: reference/algorithms.md §4.17 and
reference/cli.md §5.6.

Writer, ``auto``:

1. The ``claude`` CLI is probed (``claude --version`` exits 0 within 10 s) only when no
   OpenAI key (``dream.openai.apiKeyEnv``) and no ``YNM_OPENAI_BASE_URL`` are set and
   ``YNM_NO_CLAUDE_CLI`` is not ``1`` (the hooks set it). If the probe passes: ``claude-cli``.
2. Else ``openai-compatible`` when an OpenAI key or ``YNM_OPENAI_BASE_URL`` is set; under
   ``auto`` ``YNM_OPENAI_BASE_URL`` and ``YNM_OPENAI_MODEL`` override ``dream.openai``.
3. Else ``none``.

An explicit writer is used as configured (no probe, no variable overrides).

Judge, ``auto`` (ours adds ``similarity`` before the heuristic floor):

1. ``typesafe`` when its key variable is set;
2. else ``writer-emulated:<writer>`` when the writer is not ``none``;
3. else ``similarity`` when vector search is on (an embedder is given);
4. else ``heuristic``.

An explicit ``typesafe`` without a key is a ConfigError; an explicit ``writer-emulated``
over the ``none`` writer is ``writer-emulated:none``, whose every question is unavailable
(passes fall back); an explicit ``similarity`` without vectors is the heuristic judge, under
its own name, so the dream version (reference/algorithms.md §4.4) names the judge that
actually judged and memories marked under ``similarity`` are judged again.

The read and write paths (recall's reranker, remember's judge) only ever use a *calibrated*
judge: :func:`calibrated_judge` finds it without probing for a writer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ynm.errors import ConfigError

if TYPE_CHECKING:  # the seams' models are defined on first use: recall asks only whether a
    # calibrated judge is configured, most often to hear that none is
    from ynm.dream.budget import TokenBudget
    from ynm.dream.seams import Judge, JudgeLimits, Writer

__all__ = [
    "calibrated_judge",
    "resolve",
    "resolve_for",
    "resolve_judge",
    "resolve_writer",
    "service_judge",
    "typesafe_judge",
]


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    import os

    return os.environ if env is None else env


def key_of(env: Mapping[str, str], name: str) -> str | None:
    """The API key in variable ``name`` of ``env``, stripped; None when unset, empty or
    blanks only (``TYPESAFE_API_KEY="   "`` is no key: it would only fail at the first call).
    Ours: the reference counts any non-empty value (reference/algorithms.md §4.17)."""
    value = (env.get(name) or "").strip()
    return value or None


class JudgeNotConfigured(ConfigError):
    """The configured judge cannot be built (``dream.judge: typesafe`` without its key) for a
    run whose passes need it. A configuration problem the run refuses before writing
    anything: exit 2."""

    exit_code = 2


NO_JUDGE_PASSES = ("expire", "normalise")
"""Passes that never ask the judge (reference/algorithms.md §4.6, §4.7, §4.12); promote of
``promote``-tagged memories does not either, but promote judges the others."""


def resolve_writer(dream: Any, env: Mapping[str, str] | None = None, *,
                   probe: Callable[[Mapping[str, str]], bool] | None = None) -> Writer:
    """The writer ``dream.writer`` names, ``auto`` resolved as in the module docstring.

    Args:
        dream: the ``dream`` config block (:class:`ynm.service.config.DreamConfig`).
        env: the environment (default ``os.environ``; give ``LoadedConfig.env`` so ``.env``
            files count).
        probe: replaces the ``claude --version`` probe (tests).
    """
    from ynm.dream.writers import ClaudeCliWriter, OpenAICompatibleWriter, claude_available

    env = _env(env)
    choice = dream.writer
    openai = dream.openai
    key = key_of(env, openai.api_key_env)
    if choice == "claude-cli":
        return ClaudeCliWriter(dream.claude.model, use_api_key=dream.claude.use_api_key,
                               env=env)
    if choice == "openai-compatible":
        return OpenAICompatibleWriter(openai.base_url, openai.model, key)
    if choice == "none":
        return _none_writer()
    base_override = (env.get("YNM_OPENAI_BASE_URL") or "").strip() or None
    if (not key and not base_override and env.get("YNM_NO_CLAUDE_CLI") != "1"
            and (probe or claude_available)(env)):
        return ClaudeCliWriter(dream.claude.model, use_api_key=dream.claude.use_api_key,
                               env=env)
    if key or base_override:
        return OpenAICompatibleWriter(base_override or openai.base_url,
                                      env.get("YNM_OPENAI_MODEL") or openai.model, key)
    return _none_writer()


def typesafe_judge(dream: Any, env: Mapping[str, str] | None = None, *,
                   budget: TokenBudget | None = None) -> Judge:
    """The ``typesafe`` judge of this configuration: key from ``dream.typesafe.apiKeyEnv``,
    model ``dream.typesafe.model`` (default ``jev-latest``), base URL
    ``YNM_TYPESAFE_BASE_URL`` or ``dream.typesafe.baseUrl``.

    Raises:
        ConfigError: the key variable is not set.
    """
    from ynm.dream.judges import TypesafeJudge

    env = _env(env)
    ts = dream.typesafe
    return TypesafeJudge(key_of(env, ts.api_key_env), ts.model,
                         env.get("YNM_TYPESAFE_BASE_URL") or ts.base_url,
                         key_env=ts.api_key_env, budget=budget)


def resolve_judge(dream: Any, writer: Writer, env: Mapping[str, str] | None = None, *,
                  embedder: Any = None, center: Any = None,
                  budget: TokenBudget | None = None,
                  lookup: Callable[[list[str]], list[bytes]] | None = None) -> Judge:
    """The judge ``dream.judge`` names, ``auto`` resolved as in the module docstring.

    Args:
        dream: the ``dream`` config block.
        writer: the resolved writer (:func:`resolve_writer`).
        env: the environment (default ``os.environ``).
        embedder: the configured embedder when vector search is on (``Ynm.embedder``),
            else None.
        center: the centroid the similarity judge subtracts (ynm.index.search.centroid of
            the mount judged), or None.
        budget: the spend guard for typesafe (default the process budget).
        lookup: where the similarity judge reads vectors (texts -> float32 bytes), e.g. the
            mount cache's embeddings store; None embeds with ``embedder``.

    Raises:
        ConfigError: ``typesafe`` chosen explicitly without its key.
    """
    env = _env(env)
    choice = dream.judge
    if choice == "typesafe" or (choice == "auto" and key_of(env, dream.typesafe.api_key_env)):
        return typesafe_judge(dream, env, budget=budget)
    if choice == "writer-emulated" or (choice == "auto" and writer.name != "none"):
        from ynm.dream.judges import WriterEmulatedJudge

        return WriterEmulatedJudge(writer)
    if choice == "similarity" or (choice == "auto" and embedder is not None):
        from ynm.dream.judges import SimilarityJudge

        if embedder is None:  # no vectors: the heuristic judges, under its own name (§4.4)
            return _heuristic_judge()
        return SimilarityJudge.from_embedder(embedder, _heuristic_judge(), center=center,
                                             lookup=lookup)
    return _heuristic_judge()


def resolve(dream: Any, env: Mapping[str, str] | None = None, *, embedder: Any = None,
            center: Any = None, budget: TokenBudget | None = None,
            probe: Callable[[Mapping[str, str]], bool] | None = None) -> tuple[Judge, Writer]:
    """``(judge, writer)`` for a dream run: the writer first, then the judge over it (see the
    module docstring). Arguments as :func:`resolve_writer` and :func:`resolve_judge`.

    Raises:
        ConfigError: ``typesafe`` chosen explicitly without its key.
    """
    writer = resolve_writer(dream, env, probe=probe)
    return resolve_judge(dream, writer, env, embedder=embedder, center=center,
                         budget=budget), writer


PASSES = ("expire", "promote", "dedupe", "contradict", "reflect", "normalise")


class UnbuiltJudge:
    """Stands for a configured judge that could not be built (its key is missing) in a run
    that asks it nothing (:func:`resolve_for`): the configured ``name``, so memories' dream
    versions (reference/algorithms.md §4.4) stay those of that judge; :meth:`judge` raises
    :class:`ModelUnavailable` with ``why`` should a pass ask it anyway."""

    calibrated = False

    def __init__(self, name: str, why: str) -> None:
        self.name = name
        self.why = why

    def limits(self) -> JudgeLimits:
        """No calls are made: nominal limits."""
        from ynm.dream.seams import JudgeLimits

        return JudgeLimits(state_tokens=0, request_tokens=0, max_choices=0)

    def judge(self, state: Any, questions: Any) -> Any:
        """Never answers. Raises: ModelUnavailable (``why``)."""
        from ynm.dream.seams import ModelUnavailable

        raise ModelUnavailable(self.why)


NO_MODEL_RUN = ("expire",)
"""Passes whose run alone needs no judge or writer resolved (see :func:`resolve_for`)."""


def resolve_for(ynm: Any, mount: Any = None, *,
                probe: Callable[[Mapping[str, str]], bool] | None = None,
                passes: Sequence[str] | None = None,
                judging: bool = True) -> tuple[Judge, Writer]:
    """:func:`resolve` for a :class:`ynm.service.ynm.Ynm`: its ``dream`` config, its
    environment (``.env`` files included), its embedder when vector search is on (so ``auto``
    can pick ``similarity``) and, when ``mount`` is given, that mount's centroid for the
    similarity judge, whose vectors are then read from that mount's embeddings store (where
    every memory's already is). The embedder is opened only when the judge could be
    ``similarity``.

    ``passes`` names the passes of the run (None: all six). A run of expire alone (with its
    retention; reference/algorithms.md §4.6, §4.7: no model), such as the one a session's end
    runs, gets the heuristic judge and the ``none`` writer whatever is configured: no
    ``claude --version`` probe, no embedder opened, no key needed. Normalise asks no model
    either but is not included: which memories are fresh, and so whether it runs at all,
    depends on the judge's name (§4.4), so it keeps the configured judge.

    ``judging`` says whether the run asks the judge at all (False for a dry run without
    ``--judge``). When the configured judge cannot be built (``typesafe`` without its key) and
    the run asks it nothing (``judging`` False, or only expire and normalise requested), the
    run goes on with :class:`UnbuiltJudge`, which keeps the configured judge's name (so which
    memories are fresh does not change) and is never asked. Ours: the reference refuses every
    run of such a configuration (reference/algorithms.md §4.17).

    Raises:
        JudgeNotConfigured: the configured judge cannot be built and a pass of the run needs
            it (exit 2; the message names the passes and the way out).
    """
    if passes and set(passes) <= set(NO_MODEL_RUN):
        return _heuristic_judge(), _none_writer()
    dream = ynm.config.dream
    env = ynm.loaded.env or None
    writer = resolve_writer(dream, env, probe=probe)
    embedder = center = None
    wants_vectors = dream.judge == "similarity" or (
        dream.judge == "auto" and writer.name == "none"
        and not key_of(_env(env), dream.typesafe.api_key_env))
    if wants_vectors and ynm.config.embedder != "none":
        try:
            embedder = ynm.embedder
        except Exception as err:  # noqa: BLE001 (no vectors: the heuristic floor answers)
            embedder = None
            ynm.embedder_problem = ynm.embedder_problem or str(err)
        if embedder is None:  # as status and recall say it
            ynm.warnings.append(
                f"vector search is off ({ynm.embedder_problem or 'the embedder did not open'}"
                "): dream judges with the heuristic judge (word overlap) instead of the "
                "similarity judge")
        if embedder is not None and mount is not None:
            from ynm.index.search import centroid

            try:
                center = centroid(mount.cache.conn)  # the vectors the mount holds now
            except Exception:  # noqa: BLE001 (uncentred cosine is still an answer)
                center = None
    if dream.judge == "similarity" and ynm.config.embedder == "none":
        ynm.warnings.append("dream.judge is similarity but the embedder is none (no vectors): "
                            "dream judges with the heuristic judge (word overlap)")
    lookup = None
    if embedder is not None and mount is not None:
        def lookup(texts: list[str]) -> list[bytes]:
            return mount.cache.embeddings_of(embedder, texts)
    try:
        return resolve_judge(dream, writer, env, embedder=embedder, center=center,
                             lookup=lookup), writer
    except ConfigError as err:
        needing = [p for p in (passes or PASSES) if p not in NO_JUDGE_PASSES]
        if judging and needing:
            raise JudgeNotConfigured(
                f"{err}; the {', '.join(needing)} pass{'es' if len(needing) > 1 else ''} "
                f"need{'' if len(needing) > 1 else 's'} the judge (run only "
                f"--passes {','.join(NO_JUDGE_PASSES)}, or a dry run without --judge, to do "
                "without it)") from None
        return UnbuiltJudge(dream.judge, str(err)), writer


def calibrated_judge(dream: Any, env: Mapping[str, str] | None = None, *,
                     budget: TokenBudget | None = None) -> Judge | None:
    """The calibrated judge the read and write paths may use, or None: ``typesafe`` when
    ``dream.judge`` is ``typesafe`` or ``auto`` and its key is set. Never probes for a writer
    and never fails (an explicit ``typesafe`` without a key gives None: recall and remember
    go on unjudged; ``ynm dream`` is where that configuration error is reported)."""
    env = _env(env)
    if dream.judge not in ("auto", "typesafe") or not key_of(env, dream.typesafe.api_key_env):
        return None
    return typesafe_judge(dream, env, budget=budget)


_UNSET = object()


def service_judge(ynm: Any) -> Judge | None:
    """:func:`calibrated_judge` for a :class:`ynm.service.ynm.Ynm`, from its configuration
    and environment, made once per service object (kept as ``ynm._calibrated_judge``)."""
    judge = getattr(ynm, "_calibrated_judge", _UNSET)
    if judge is _UNSET:
        judge = calibrated_judge(ynm.config.dream, ynm.loaded.env or None)
        ynm._calibrated_judge = judge
    return judge  # type: ignore[return-value]


def _none_writer() -> Writer:
    from ynm.dream.writers_none import NoneWriter

    return NoneWriter()


def _heuristic_judge() -> Judge:
    from ynm.dream.heuristic import HeuristicJudge

    return HeuristicJudge()
