"""``ynm hook <event>``: Claude Code / Codex hooks (reference/server.md §4.2, §4.3).

Events: ``session-start`` (SessionStart), ``prompt`` (UserPromptSubmit), ``stop`` (Stop).
stdin is the client's hook JSON (``session_id``, ``cwd``, ``hook_event_name``, ``prompt``,
``source``), read until EOF or a short timeout; anything else counts as ``{}``. stdout is
exactly one compact JSON line, ``{"hookSpecificOutput": {...}}`` or ``{}``; every failure
prints ``{}`` (with the reason on stderr) and exits 0: a hook never blocks or fails a session.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click

from ynm.cli._common import inherit_cwd, say

STDIN_TIMEOUT_S = 1.5
STOP_EVERY_S = 5 * 60
STAMP_MAX_AGE_S = 24 * 3600
EVENT_NAMES = {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "stop": "Stop"}
SESSION_PREFIX_LINE = ("ynm memory for this project follows. Call memory_recall for more; "
                       "store what the user wants kept with memory_remember, not in note files.")


def read_payload(stream: Any = None, timeout: float = STDIN_TIMEOUT_S) -> dict[str, Any]:
    """The hook JSON from ``stream`` (default stdin): ``{}`` when empty, not a JSON object,
    or not complete within ``timeout`` seconds."""
    stream = stream if stream is not None else sys.stdin
    box: list[bytes | str] = []

    def _read() -> None:
        try:
            box.append(stream.buffer.read() if hasattr(stream, "buffer") else stream.read())
        except Exception:  # noqa: BLE001
            pass

    reader = threading.Thread(target=_read, daemon=True)
    reader.start()
    reader.join(timeout)
    if not box:
        return {}
    raw = box[0]
    try:
        text = raw.decode("utf-8-sig", "replace") if isinstance(raw, bytes) else raw
        data = json.loads(text.removeprefix("\ufeff"))
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _out(event: str, context: str | None) -> dict[str, Any]:
    if not context:
        return {}
    return {"hookSpecificOutput": {"hookEventName": EVENT_NAMES[event],
                                   "additionalContext": context}}


def _home() -> Path:
    return Path(os.environ.get("YNM_HOME") or "~/.ynm").expanduser()


def session_start(payload: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """Start a session keyed by the client's session id; the prefix line, the session line
    (:func:`session_line`: working namespace and ttl), then the context block (none when there
    is no memory). The session's settings are kept as ``ynm session start`` keeps them.

    A client id with nothing usable for a namespace (``!!!``; see
    ynm.model.namespaces.normalize_session_id) does not silence the hook: the session starts
    under a new id, and a line after the prefix says why (the block is the same, since a new
    session holds no working memory yet)."""
    from ynm.errors import InvalidInput
    from ynm.model.inputs import SessionStartInput
    from ynm.service.ynm import Ynm

    session_id = payload.get("session_id")
    session_id = session_id if isinstance(session_id, str) and session_id else None
    env = {**os.environ, "YNM_NO_CLAUDE_CLI": "1"}
    note = ""
    with Ynm.open(cwd, env) as ynm:
        try:
            result = ynm.session_start(SessionStartInput(session_id=session_id))
        except InvalidInput as err:
            if session_id is None:
                raise
            result = ynm.session_start(SessionStartInput())
            note = (f"\n\nynm: the client's session id was refused ({err.detail}); the "
                    "session has a new id.")
            say(f"ynm hook: {err}", err=True)
    markdown = result["context"]["markdown"]
    return _out("session-start", SESSION_PREFIX_LINE + note + "\n\n" + session_line(result)
                + ("\n\n" + markdown if markdown else ""))


def session_line(result: dict[str, Any]) -> str:
    """The line telling the agent where this session's scratch notes go: its working namespace
    and ttl (from a ``session_start`` result)."""
    return (f"This session's working namespace is {result['namespace']} (ttl {result['ttl']}): "
            f"write scratch notes there with memory_remember, type working, session "
            f"{result['sessionId']}.")


def prompt(payload: dict[str, Any]) -> dict[str, Any]:
    """A nudge toward ``memory_remember`` when the prompt asks for something to be kept."""
    from ynm.server.intent import NUDGE, has_remember_intent

    text = payload.get("prompt")
    return _out("prompt", NUDGE) if isinstance(text, str) and has_remember_intent(text) else {}


def stop(payload: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """The expire pass for ``session/<id>`` only, at most once per 5 minutes per session."""
    from ynm.model.namespaces import normalize_session_id

    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id:
        return {}
    try:
        sid = normalize_session_id(session_id)
    except ValueError as err:  # no letter or digit: no session namespace to expire
        say(f"ynm hook: {err}", err=True)
        return {}
    stamps = _home() / "hooks"
    stamps.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for old in stamps.glob("stop-*"):
        try:
            if now - old.stat().st_mtime > STAMP_MAX_AGE_S:
                old.unlink()
        except OSError:
            pass
    stamp = stamps / f"stop-{sid}"
    if stamp.exists() and now - stamp.stat().st_mtime < STOP_EVERY_S:
        return {}
    stamp.touch()
    from ynm.service.ynm import Ynm

    env = {**os.environ, "YNM_NO_CLAUDE_CLI": "1"}
    with Ynm.open(cwd, env) as ynm:  # the session goes on: its kept settings stay
        ynm.session_end(sid, expire=True, keep_settings=True)
    return {}


def _shown(value: Any) -> Any:
    """The hook's output with every string's control characters written out, keeping tab and
    line breaks (:func:`ynm.model.controls.visible`): the client shows the context block to
    the person too (a transcript, a status line), so a memory's ESC must not reach a terminal
    through it. JSON would only escape the characters, which the client decodes again."""
    from ynm.model.controls import visible

    if isinstance(value, str):
        return visible(value, lines=True)
    if isinstance(value, dict):
        return {k: _shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown(v) for v in value]
    return value


def run_hook(event: str | None, payload: dict[str, Any], cwd: str | Path | None) -> dict[str, Any]:
    """The hook's output object for ``event``; ``{}`` for an unknown event."""
    where = Path(cwd or payload.get("cwd") or os.getcwd())
    if event == "session-start":
        return session_start(payload, where)
    if event == "prompt":
        return prompt(payload)
    if event == "stop":
        return stop(payload, where)
    return {}


def _describe(err: BaseException) -> str:
    """One line for a hook's failure: ynm's own message (``invalid input: <path>: <message>``
    for a validation error, pydantic's included), a usage error's text, else ``<type>:
    <first line>``."""
    from ynm.errors import YnmError, describe_unexpected

    if isinstance(err, YnmError):
        return str(err)
    if isinstance(err, click.ClickException):
        return err.format_message()
    if "pydantic" in sys.modules:
        from ynm.model.inputs import invalid_input_from

        invalid = invalid_input_from(err)
        if invalid is not None:
            return str(invalid)
    return describe_unexpected(err)


@click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("event", required=False)
@click.option("-C", "--cwd", default=None, callback=inherit_cwd,
              help="Directory to open (default: the hook's cwd).")
@click.pass_context
def hook(ctx: click.Context, event: str | None, cwd: str | None) -> None:
    """Run a client hook: session-start, prompt or stop (reads the hook JSON on stdin).

    \b
    Example (Claude Code settings):
      SessionStart     -> ynm hook session-start
      UserPromptSubmit -> ynm hook prompt
      Stop             -> ynm hook stop
    """
    out: dict[str, Any] = {}
    try:
        if ctx.args:
            raise click.UsageError(f"unexpected arguments: {' '.join(ctx.args)}")
        if event not in EVENT_NAMES:
            raise click.UsageError(f"unknown hook event {event!r}; use session-start, prompt "
                                   "or stop")
        out = run_hook(event, read_payload(), cwd)
    except BaseException as err:  # noqa: BLE001 - a hook never fails the session
        say(f"ynm hook: {_describe(err)}", err=True)
        hint = getattr(err, "hint", None)  # a YnmError's next step (a held lock: who holds it)
        if isinstance(hint, str) and hint:
            say(f"ynm hook: hint: {hint}", err=True)
        out = {}
    sys.stdout.write(json.dumps(_shown(out), separators=(",", ":"), ensure_ascii=False) + "\n")
    sys.stdout.flush()
    ctx.exit(0)
