"""The spend guard: one budget of input tokens per process for metered model calls.

``YNM_TOKEN_BUDGET`` (default 2,000,000) input tokens. Before a metered call the caller
:meth:`~TokenBudget.reserve`\\ s its estimate, refused when ``spent + reserved + estimate``
would pass the budget; after it, :meth:`~TokenBudget.charge` books the input tokens the
provider reported (the estimate when it reported none or ``<= 0``) and refuses once the budget
is passed. Both refusals are :class:`~ynm.dream.seams.ModelUnavailable`, so a pass takes its
no-model fallback and a dream run goes on.

What is metered: TypeSafe always (estimate: state plus questions tokens); an OpenAI-compatible
writer only when an API key is set (estimate ``ceil(len(prompt) / 4) + 200``); the ``claude``
CLI never (it bills the user's own login). Source: reference/algorithms.md §4.17.

Ours: an estimate is held while its call runs (reranking judges several hits at once), so
calls in flight together cannot pass the budget between them.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Mapping
from typing import Any

from ynm.dream.seams import ModelUnavailable
from ynm.errors import ConfigError

__all__ = [
    "DEFAULT_TOKEN_BUDGET",
    "Metered",
    "TokenBudget",
    "check_token_budget",
    "estimate_tokens",
    "process_budget",
    "reset_process_budget",
]

DEFAULT_TOKEN_BUDGET = 2_000_000
"""Input tokens a process may spend on metered calls when ``YNM_TOKEN_BUDGET`` is unset."""


def estimate_tokens(value: Any) -> int:
    """Estimated tokens of a JSON value: ``ceil(len(compact JSON) / 4)`` (a string counts as
    its JSON encoding, quotes included). Source: reference/algorithms.md §4.17."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return math.ceil(len(text) / 4)


class TokenBudget:
    """A budget of ``limit`` input tokens; thread-safe.

    Attributes:
        limit: the most input tokens that may be spent.
        spent: input tokens booked so far.
    """

    def __init__(self, limit: int = DEFAULT_TOKEN_BUDGET) -> None:
        if limit < 0:
            raise ValueError("a token budget cannot be negative")
        self.limit = limit
        self.spent = 0
        self._held = 0
        self._lock = threading.Lock()

    def reserve(self, estimate: int) -> None:
        """Hold ``estimate`` tokens for a call about to be made.

        Raises:
            ModelUnavailable: ``spent + held + estimate > limit`` (nothing is held then).
        """
        with self._lock:
            if self.spent + self._held + estimate > self.limit:
                raise ModelUnavailable(
                    f"token budget spent: {self.spent} of {self.limit} input tokens used, the "
                    f"next call needs about {estimate} (raise YNM_TOKEN_BUDGET to allow more)")
            self._held += estimate

    def release(self, estimate: int) -> None:
        """Give back a reservation whose call was not made or failed before answering."""
        with self._lock:
            self._held = max(0, self._held - estimate)

    def charge(self, estimate: int, reported: int | None) -> None:
        """Book a finished call: its ``reported`` input tokens, or ``estimate`` when the
        provider reported none or ``<= 0``; the reservation of ``estimate`` is released.

        Raises:
            ModelUnavailable: the budget is now passed (the call's answer is not used).
        """
        with self._lock:
            self._held = max(0, self._held - estimate)
            self.spent += reported if reported is not None and reported > 0 else estimate
            if self.spent > self.limit:
                raise ModelUnavailable(
                    f"token budget spent: {self.spent} of {self.limit} input tokens used "
                    "(raise YNM_TOKEN_BUDGET to allow more)")


_PROCESS: TokenBudget | None = None
_PROCESS_LOCK = threading.Lock()


def _limit_from(env: Mapping[str, str]) -> int:
    raw = env.get("YNM_TOKEN_BUDGET", "").strip()
    if not raw:
        return DEFAULT_TOKEN_BUDGET
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ConfigError(f"YNM_TOKEN_BUDGET must be a whole number of tokens >= 0, got {raw!r}")
    return value


def check_token_budget(env: Mapping[str, str] | None = None) -> int:
    """The ``YNM_TOKEN_BUDGET`` of ``env`` (default ``os.environ``) checked without making the
    process budget: a dream run checks it when it starts (CLI and MCP alike), whether or not
    it will call a metered model, so a bad value is refused the same way every time rather
    than only when a metered call first happens.

    Raises:
        InvalidInput: not a whole number >= 0 (``abc``, ``-5``, ``1.5``): exit 2.
    """
    import os

    from ynm.errors import InvalidInput

    try:
        return _limit_from(os.environ if env is None else env)
    except ConfigError as err:
        raise InvalidInput(str(err)) from None


def process_budget(env: Mapping[str, str] | None = None) -> TokenBudget:
    """This process's budget, made on first use from ``env`` (default ``os.environ``):
    ``YNM_TOKEN_BUDGET`` input tokens, default :data:`DEFAULT_TOKEN_BUDGET`. Later calls
    return the same budget whatever ``env`` they pass (one budget per process, §4.17).

    Raises:
        ConfigError: ``YNM_TOKEN_BUDGET`` is not a whole number >= 0.
    """
    global _PROCESS
    with _PROCESS_LOCK:
        if _PROCESS is None:
            import os

            _PROCESS = TokenBudget(_limit_from(os.environ if env is None else env))
        return _PROCESS


def reset_process_budget() -> None:
    """Forget this process's budget (the next :func:`process_budget` makes a new one); for
    tests and long-running servers that start a new accounting period."""
    global _PROCESS
    with _PROCESS_LOCK:
        _PROCESS = None


class Metered:
    """A model client that books its calls on a :class:`TokenBudget`: the one given to its
    constructor (``self._budget``), else the process's (:func:`process_budget`), taken on
    first use so that a test's reset of the process budget is seen."""

    _budget: TokenBudget | None = None

    @property
    def budget(self) -> TokenBudget:
        """The spend guard this client books its calls on."""
        if self._budget is None:
            self._budget = process_budget()
        return self._budget
