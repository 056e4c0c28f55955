"""Writers that call a model: ``claude-cli`` and ``openai-compatible``, on one fail-closed loop.

The loop (:meth:`ModelWriter.write`): build a prompt from the instructions, the JSON state and
the JSON Schema of the pydantic model; call the model; take the first JSON value of its answer
(:func:`extract_json`); validate it with the model. When that fails, ask once more with the
validation issues appended (``path: message; ...``); after two failed attempts raise
:class:`~ynm.dream.seams.StructuredOutputError`. Usage sums both attempts.

A model that cannot be reached (HTTP 429/529/5xx, a network error, a timeout, the ``claude``
executable missing or failing, a spent token budget) raises
:class:`~ynm.dream.seams.ModelUnavailable`, which passes turn into their no-model fallback. A
request the endpoint refuses as wrong (another 4xx, e.g. a bad key or an unknown model) raises
:class:`ModelRequestError`: a configuration to fix, not a pause.

The ``none`` writer lives in :mod:`ynm.dream.writers_none`. Source:
reference/algorithms.md §4.17.
"""

from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import threading
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ynm.dream.budget import Metered, TokenBudget
from ynm.dream.seams import ModelUnavailable, StructuredOutputError, Usage, Written
from ynm.errors import YnmError

__all__ = [
    "CLAUDE_TIMEOUT_S",
    "OPENAI_TIMEOUT_S",
    "ClaudeCliWriter",
    "ModelRequestError",
    "ModelWriter",
    "OpenAICompatibleWriter",
    "build_prompt",
    "claude_available",
    "claude_env",
    "extract_json",
    "issues_of",
]

T = TypeVar("T", bound=BaseModel)

OPENAI_TIMEOUT_S = 120.0
CLAUDE_TIMEOUT_S = 180.0
CLAUDE_PROBE_TIMEOUT_S = 10.0
ATTEMPTS = 2  # the first try and one retry carrying the issues
UNAVAILABLE_STATUS = frozenset({408, 429, 529})  # plus every 5xx
ARGV_PROMPT_MAX = 100_000  # bytes; a longer prompt goes to claude on stdin (argv limit 128 KiB)
CLAUDE_ENV_DROPPED = ("OTEL_LOG_USER_PROMPTS", "OTEL_LOG_TOOL_DETAILS")


class ModelRequestError(YnmError):
    """The model endpoint refused the request as wrong (an HTTP 4xx other than 408/429, or an
    answer that is not the endpoint's JSON shape): a key, URL or model name to fix."""


# --------------------------------------------------------------------------------------------
# The loop's parts
# --------------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[^\n`]*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def extract_json(text: str) -> Any:
    """The first JSON value in a model's answer.

    Where the answer holds a fenced block (```` ```json ... ``` ````, any info string or none),
    only the first block's contents are read; else the whole text. From the first ``{`` or
    ``[`` to its balanced closer, skipping brackets inside JSON strings (escapes honoured), the
    slice is parsed. A ``<think>...</think>`` block (reasoning models such as qwen3) is dropped
    first: it is no answer and may hold braces.

    Raises:
        ValueError: no ``{``/``[``, no balanced closer, or the slice is not valid JSON.
    """
    text = _THINK.sub("", text)
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1)
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON object or array in the answer")
    start = min(starts)
    closer = {"{": "}", "[": "]"}
    stack: list[str] = []
    in_string = escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"':
            in_string = True
        elif ch in closer:
            stack.append(closer[ch])
        elif ch in "}]":
            if not stack or stack.pop() != ch:
                raise ValueError(f"unbalanced {ch!r} at offset {i}")
            if not stack:
                try:
                    return json.loads(text[start: i + 1])
                except json.JSONDecodeError as err:
                    raise ValueError(f"not valid JSON: {err.msg}") from None
    raise ValueError("the JSON value in the answer is not closed")


def issues_of(err: ValidationError) -> list[str]:
    """``path: message`` per pydantic error, the path's parts joined by dots (``(root)`` for
    the value itself)."""
    out = []
    for e in err.errors(include_url=False):
        path = ".".join(str(p) for p in e["loc"]) or "(root)"
        out.append(f"{path}: {e['msg']}")
    return out


def build_prompt(instructions: str, state: Any, schema: type[BaseModel],
                 issues: list[str] | None = None) -> str:
    """The prompt a writer sends: the instructions, the state as JSON, the JSON Schema the
    answer must satisfy, and on a retry the previous answer's issues (``path: message; ...``)."""
    parts = [
        instructions.strip(),
        "",
        "State (JSON):",
        json.dumps(state, ensure_ascii=False, indent=2),
        "",
        ("Answer with a single JSON value that validates against this JSON Schema, and "
         "nothing else:"),
        json.dumps(schema.model_json_schema(), ensure_ascii=False),
    ]
    if issues:
        parts += ["", "Your previous answer was invalid: " + "; ".join(issues)
                  + ". Answer again with JSON that fixes these issues."]
    return "\n".join(parts)


def _schema_name(schema: type[BaseModel], given: str | None) -> str:
    """A name for ``response_format.json_schema.name``: letters, digits, ``_`` and ``-``,
    at most 64 characters (OpenAI's rule)."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", given or schema.__name__)[:64]
    return name or "answer"


class ModelWriter:
    """The fail-closed loop shared by the writers that call a model. Subclasses implement
    :meth:`_call` and set ``name``."""

    name = "model"

    def _call(self, prompt: str, schema: type[BaseModel], schema_name: str
              ) -> tuple[str, Usage | None, str]:
        """Ask the model once: returns ``(answer text, usage or None, model name)``.

        Raises:
            ModelUnavailable, ModelRequestError.
        """
        raise NotImplementedError

    def write(self, instructions: str, state: Any, schema: type[T],
              schema_name: str | None = None) -> Written[T]:
        """A value of ``schema`` written from ``instructions`` and ``state`` (see the module
        docstring for the loop).

        Raises:
            ModelUnavailable: the model cannot be reached now.
            ModelRequestError: the endpoint refused the request as wrong.
            StructuredOutputError: two answers in a row failed validation; ``issues`` holds
                the last one's.
        """
        name = _schema_name(schema, schema_name)
        usage: Usage | None = None
        model = self.name
        issues: list[str] = []
        for _ in range(ATTEMPTS):
            text, used, model = self._call(build_prompt(instructions, state, schema, issues),
                                           schema, name)
            if used is not None:
                usage = used if usage is None else usage + used
            try:
                value = schema.model_validate(extract_json(text))
            except ValueError as err:  # ValidationError is a ValueError
                issues = (issues_of(err) if isinstance(err, ValidationError)
                          else [f"(root): {err}"])
                continue
            written = Written[schema]  # type: ignore[valid-type]
            return written(value=value, model=model, usage=usage)
        raise StructuredOutputError(
            f"{self.name} gave no valid {name} in {ATTEMPTS} attempts: " + "; ".join(issues),
            issues)


# --------------------------------------------------------------------------------------------
# openai-compatible
# --------------------------------------------------------------------------------------------


class OpenAICompatibleWriter(ModelWriter, Metered):
    """POST ``<base_url>/chat/completions`` with one user message, ``temperature 0`` and
    ``response_format: {type: json_schema, json_schema: {name, schema}}``; 120 s timeout; a
    bearer header only when ``api_key`` is set. Reads ``choices[0].message.content``,
    ``usage.prompt_tokens``/``completion_tokens`` and ``model``.

    Metered (the process budget, or ``budget``) only when ``api_key`` is set: estimate
    ``ceil(len(prompt) / 4) + 200``. Source: reference/algorithms.md §4.17.

    Args:
        base_url: e.g. ``http://localhost:11434/v1`` (a trailing ``/`` is ignored).
        model: the model name sent.
        api_key: the key, or None for a local server.
        budget: the spend guard (default :func:`ynm.dream.budget.process_budget`).
        timeout_s: seconds before a call counts as unavailable.
    """

    name = "openai-compatible"

    def __init__(self, base_url: str, model: str, api_key: str | None = None, *,
                 budget: TokenBudget | None = None, timeout_s: float = OPENAI_TIMEOUT_S) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.api_key = api_key or None
        self.timeout_s = timeout_s
        self._budget = budget

    def _call(self, prompt: str, schema: type[BaseModel], schema_name: str
              ) -> tuple[str, Usage | None, str]:
        body = {
            "model": self.model,
            "messages": [{"role": "user", "content": prompt}],
            "temperature": 0,
            "response_format": {"type": "json_schema", "json_schema": {
                "name": schema_name, "schema": schema.model_json_schema()}},
        }
        headers = {"Content-Type": "application/json"}
        estimate = 0
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
            estimate = math.ceil(len(prompt) / 4) + 200
            self.budget.reserve(estimate)
        url = f"{self.base_url}/chat/completions"
        try:
            response = post_json(url, body, headers, self.timeout_s, "openai-compatible writer")
        except BaseException:
            if estimate:
                self.budget.release(estimate)
            raise
        usage = None
        raw_usage = response.get("usage")
        if isinstance(raw_usage, dict):
            usage = Usage(input_tokens=_int(raw_usage.get("prompt_tokens")),
                          output_tokens=_int(raw_usage.get("completion_tokens")))
        if estimate:
            self.budget.charge(estimate, usage.input_tokens if usage else None)
        try:
            text = response["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ModelRequestError(f"{url} answered without choices[0].message.content"
                                    ) from None
        if not isinstance(text, str):
            text = json.dumps(text)  # some servers return the parsed object
        model = response.get("model") if isinstance(response.get("model"), str) else self.model
        return text, usage, model


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


_CLIENT: Any = None
_CLIENT_LOCK = threading.Lock()


def _client() -> Any:
    """One ``httpx.Client`` per process (thread-safe), so the reranker's parallel judgments
    and a dream run's many calls reuse their connections instead of a TLS handshake each."""
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is None:
            import httpx

            _CLIENT = httpx.Client()
        return _CLIENT


def post_json(url: str, body: Any, headers: dict[str, str], timeout_s: float,
              who: str) -> dict[str, Any]:
    """POST ``body`` as JSON and return the JSON object answered (shared by the HTTP writer
    and judges).

    Raises:
        ModelUnavailable: HTTP 408, 429, 529 or any 5xx; a network error or timeout.
        ModelRequestError: another non-2xx status, or an answer that is not a JSON object.
    """
    import httpx

    try:
        response = _client().post(url, json=body, headers=headers, timeout=timeout_s)
    except httpx.TimeoutException:
        raise ModelUnavailable(f"{who}: {url} did not answer within {timeout_s:g} s") from None
    except httpx.HTTPError as err:
        raise ModelUnavailable(f"{who}: cannot reach {url} ({type(err).__name__}: {err})"
                               ) from None
    status = response.status_code
    if status >= 300:
        detail = response.text.strip().replace("\n", " ")[:200]
        message = f"{who}: {url} answered HTTP {status}" + (f": {detail}" if detail else "")
        if status in UNAVAILABLE_STATUS or status >= 500:
            raise ModelUnavailable(message)
        raise ModelRequestError(message)
    try:
        data = response.json()
    except ValueError:
        raise ModelRequestError(f"{who}: {url} answered with something that is not JSON"
                                ) from None
    if not isinstance(data, dict):
        raise ModelRequestError(f"{who}: {url} answered with JSON that is not an object")
    return data


# --------------------------------------------------------------------------------------------
# claude-cli
# --------------------------------------------------------------------------------------------


def claude_env(env: Mapping[str, str], use_api_key: bool = False) -> dict[str, str]:
    """The environment the ``claude`` child gets: ``env`` without ``ANTHROPIC_API_KEY`` (unless
    ``use_api_key``: by default the CLI uses the user's own login), ``OTEL_LOG_USER_PROMPTS``
    and ``OTEL_LOG_TOOL_DETAILS`` (no prompt text into telemetry), with
    ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``. Source: reference/algorithms.md §4.17."""
    out = dict(env)
    for name in CLAUDE_ENV_DROPPED + (() if use_api_key else ("ANTHROPIC_API_KEY",)):
        out.pop(name, None)
    out["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
    return out


def claude_available(env: Mapping[str, str] | None = None,
                     timeout_s: float = CLAUDE_PROBE_TIMEOUT_S) -> bool:
    """True when ``claude --version`` exits 0 within ``timeout_s`` (the ``auto`` probe of
    reference/algorithms.md §4.17). ``env`` (default ``os.environ``) gives ``PATH``."""
    env = dict(os.environ if env is None else env)
    try:
        proc = subprocess.run(["claude", "--version"], capture_output=True, env=env,
                              timeout=timeout_s, stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return proc.returncode == 0


class ClaudeCliWriter(ModelWriter):
    """Runs ``claude -p <prompt> --output-format json --strict-mcp-config --mcp-config
    {"mcpServers":{}}`` (plus ``--model <model>`` when set) with the environment of
    :func:`claude_env`; 180 s, then the child's whole process group is killed (SIGKILL).
    Reads ``result``, ``usage`` and ``model`` from the JSON it prints. Not metered: the CLI
    bills the user's own login.

    Ours: a prompt over 100 kB (the kernel refuses an argument over 128 KiB) is given on stdin
    instead, with ``-p`` and no prompt argument, which ``claude`` reads the same way. Input
    tokens are ``usage.input_tokens`` plus the cache creation and cache read input tokens.

    Args:
        model: ``dream.claude.model`` (None: the CLI's default).
        use_api_key: ``dream.claude.useApiKey``: keep ``ANTHROPIC_API_KEY`` for the child.
        env: the environment to start from (default ``os.environ``).
        executable: the program to run (default ``claude`` on ``PATH``).
    """

    name = "claude-cli"

    def __init__(self, model: str | None = None, *, use_api_key: bool = False,
                 env: Mapping[str, str] | None = None, executable: str = "claude",
                 timeout_s: float = CLAUDE_TIMEOUT_S) -> None:
        self.model = model
        self.use_api_key = use_api_key
        self.env = dict(os.environ if env is None else env)
        self.executable = executable
        self.timeout_s = timeout_s

    def argv(self, prompt: str | None) -> list[str]:
        """The command line; ``prompt`` None means it goes on stdin."""
        argv = [self.executable, "-p"] + ([prompt] if prompt is not None else [])
        argv += ["--output-format", "json", "--strict-mcp-config",
                 "--mcp-config", '{"mcpServers":{}}']
        if self.model:
            argv += ["--model", self.model]
        return argv

    def _call(self, prompt: str, schema: type[BaseModel], schema_name: str
              ) -> tuple[str, Usage | None, str]:
        on_stdin = len(prompt.encode()) > ARGV_PROMPT_MAX
        try:
            proc = subprocess.Popen(
                self.argv(None if on_stdin else prompt),
                stdin=subprocess.PIPE if on_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=claude_env(self.env, self.use_api_key), start_new_session=True)
        except OSError as err:
            raise ModelUnavailable(f"claude-cli: cannot run {self.executable} ({err})") from None
        try:
            out, err_out = proc.communicate(prompt.encode() if on_stdin else None,
                                            timeout=self.timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            proc.communicate()
            raise ModelUnavailable(f"claude-cli: no answer within {self.timeout_s:g} s; "
                                   "stopped it") from None
        if proc.returncode != 0:
            tail = (err_out or out).decode(errors="replace").strip().replace("\n", " ")[-300:]
            raise ModelUnavailable(f"claude-cli: claude exited {proc.returncode}: {tail}")
        try:
            data = json.loads(out)
        except ValueError:
            raise ModelUnavailable("claude-cli: claude printed something that is not JSON"
                                   ) from None
        if not isinstance(data, dict) or data.get("is_error") is True:
            detail = data.get("result") if isinstance(data, dict) else None
            raise ModelUnavailable(f"claude-cli: claude reported an error: {detail}")
        result = data.get("result")
        if not isinstance(result, str):
            raise ModelUnavailable("claude-cli: claude's JSON has no result text")
        usage = None
        raw = data.get("usage")
        if isinstance(raw, dict):
            usage = Usage(
                input_tokens=_int(raw.get("input_tokens"))
                + _int(raw.get("cache_creation_input_tokens"))
                + _int(raw.get("cache_read_input_tokens")),
                output_tokens=_int(raw.get("output_tokens")))
        model = data.get("model")
        if not isinstance(model, str) or not model:
            model = self.model or "claude"
        return result, usage, model


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL the child and everything it started (it leads its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        proc.kill()
