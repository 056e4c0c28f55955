"""What every client integration shares: the install target, the plan's changes and how they are
applied, the delimited guidance block, and the status report.

Changes (reference/cli.md §4.2, reference/server.md §4.1) have a ``kind``: ``write`` (path,
content, reason), ``merge-json`` (path, patch, reason), ``command`` (argv, reason) or ``note``
(text, reason). Plans are computed without touching anything; a change that would leave its file
as it is is dropped, so a second install plans nothing. JSON merges go through
:mod:`ynm.integrations.jsonc`: only the merged members change, comments and formatting stay;
the JSON files ynm writes never start with a byte order mark (RFC 8259 §8.1: Node's
``JSON.parse`` rejects one), so a BOM found in a file ynm merges into is dropped.

Safety rules every client follows (docs/cli.md "ynm client"):

- A file that is not valid JSON is refused (:class:`~ynm.errors.InvalidInput`, exit 2) before
  anything is written; :func:`apply` renders every change before it writes the first one.
- A value that is not ynm's (a non-object where ynm needs an object, an ``ynm`` server entry
  that runs something else) is refused (exit 2) unless ``Target.force``; ``ynm init`` leaves it
  alone and says so in a note.
- A server entry is one transport: writing the other one replaces the entry whole.
- A bearer token is never printed (:attr:`Change.secrets` are masked as ``***``); it goes into
  shared files only as an environment variable reference the client expands.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ynm.errors import InvalidInput, Refused, YnmError
from ynm.integrations import jsonc
from ynm.model.guidance import MEMORY_SECTION

BEGIN = "<!-- ynm:begin -->"
END = "<!-- ynm:end -->"
BOM = "\ufeff"
TOKEN_VAR = "YNM_MCP_TOKEN"
"""The environment variable a shared client file names instead of the bearer token."""


@dataclass(frozen=True)
class Target:
    """Where and how to install.

    ``work_tree`` is the project directory, ``home`` the user's home (``HOME``), ``scope``
    ``project`` or ``user``; ``url``/``token`` select the hosted transport (``{type: http, url,
    headers: {Authorization: Bearer <token>}}``) instead of stdio; ``command`` is the argv that
    runs ynm (``serve`` and ``hook <event>`` are appended); ``hooks`` whether to install the
    client's agent hooks; ``env`` the environment (``XDG_CONFIG_HOME``, ``PATH``); ``force``
    lets an install replace values that are not ynm's; ``init`` marks ``ynm init``'s client step,
    which leaves such values, and a hosted server entry, alone with a note instead.
    """

    work_tree: Path
    home: Path
    scope: str = "project"
    url: str | None = None
    token: str | None = None
    command: tuple[str, ...] = ("ynm",)
    hooks: bool = True
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    force: bool = False
    init: bool = False

    @property
    def http(self) -> bool:
        return self.url is not None

    @property
    def headers(self) -> dict[str, str]:
        """The token's header, written literally (only into a user's own, 0600 file)."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def headers_ref(self, reference: str) -> dict[str, str]:
        """The token's header naming an environment variable (``reference``, in the client's
        own syntax, e.g. ``${YNM_MCP_TOKEN}``) instead of the token."""
        return {"Authorization": f"Bearer {reference}"} if self.token else {}

    def serve_argv(self) -> list[str]:
        return [*self.command, "serve"]

    def hook_argv(self, event: str) -> list[str]:
        return [*self.command, "hook", event]

    def config_home(self) -> Path:
        """``$XDG_CONFIG_HOME``, else ``~/.config``."""
        xdg = self.env.get("XDG_CONFIG_HOME")
        return Path(xdg) if xdg else self.home / ".config"

    def on_path(self, name: str) -> bool:
        return shutil.which(name, path=self.env.get("PATH")) is not None


@dataclass
class Change:
    """One planned change; see the module docstring for the kinds and their fields.

    ``replace`` lists key paths of a ``merge-json`` patch whose value is set whole instead of
    merged member by member (a server entry changing transport); ``secrets`` are strings (a
    bearer token) masked as ``***`` wherever the change is shown; ``mode`` (e.g. ``0o600``) is
    the file's permission bits after the write, for a file holding a secret.
    """

    kind: str
    reason: str
    path: Path | None = None
    content: str | None = None
    patch: dict[str, Any] | None = None
    argv: list[str] | None = None
    text: str | None = None
    replace: tuple[tuple[str, ...], ...] = ()
    secrets: tuple[str, ...] = ()
    mode: int | None = None

    @property
    def target(self) -> str:
        """What the change touches: the path, the command line, or the note's text."""
        if self.kind == "command":
            return _mask(" ".join(self.argv or []), self.secrets)
        if self.kind == "note":
            return _mask(self.text or "", self.secrets)
        return str(self.path)

    def to_obj(self) -> dict[str, Any]:
        """The JSON shape of reference/cli.md §4.2, with every secret shown as ``***``."""
        obj: dict[str, Any] = {"kind": self.kind}
        if self.kind == "write":
            obj.update(path=str(self.path), content=self.content)
        elif self.kind == "merge-json":
            obj.update(path=str(self.path), patch=self.patch)
        elif self.kind == "command":
            obj["argv"] = self.argv
        else:
            obj["text"] = self.text
        obj["reason"] = self.reason
        return _mask(obj, self.secrets)

    def render(self, text: str | None) -> str:
        """The file's new text given its current ``text`` (None: absent). Raises InvalidInput
        naming the file when a ``merge-json`` file is not valid JSON or not an object."""
        if self.kind == "write":
            return self.content or ""
        try:
            return jsonc.merge(text or "", self.patch or {}, replace=self.replace)
        except jsonc.JsoncError as err:
            raise invalid_json(self.path, err) from None

    def is_noop(self) -> bool:
        """Whether applying would leave the file exactly as it is (commands and notes never
        are; their plans decide themselves whether they are needed). Raises InvalidInput for a
        ``merge-json`` file that is not valid JSON."""
        if self.kind == "write":
            return read_text(self.path) == self.content
        if self.kind == "merge-json":
            text = read_text(self.path)
            if text is None or text.startswith(BOM):
                return False
            current = parse_json(self.path, text)
            return jsonc.merged_value(current, self.patch or {}, self.replace) == current
        return False


def _mask(value: Any, secrets: tuple[str, ...]) -> Any:
    """``value`` (a string, or lists and dicts of them) with each secret replaced by ``***``."""
    if isinstance(value, str):
        for secret in secrets:
            if secret:
                value = value.replace(secret, "***")
        return value
    if isinstance(value, dict):
        return {k: _mask(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v, secrets) for v in value]
    return value


def invalid_json(path: Path | None, err: Exception) -> InvalidInput:
    """``invalid input: <path>: not valid JSON (<why>); fix it and run again`` (exit 2)."""
    return InvalidInput(f"{path}: not valid JSON ({err}); fix it and run again")


def read_text(path: Path | None) -> str | None:
    """A file's text with its line endings as they are (UTF-8), or None when it is absent.
    Raises InvalidInput naming the file when it is not UTF-8."""
    if path is None or not path.is_file():
        return None
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise InvalidInput(f"{path}: not UTF-8 text ({err.reason} at byte {err.start}); "
                           "save it as UTF-8 and run again") from None


def parse_json(path: Path, text: str | None) -> Any:
    """The value of a JSON or JSONC file's ``text``; ``{}`` for None or blank text. Raises
    InvalidInput naming the file when it cannot be parsed."""
    if text is None or not text.strip():
        return {}
    try:
        return jsonc.loads(text)
    except jsonc.JsoncError as err:
        raise invalid_json(path, err) from None


def read_json(path: Path) -> Any:
    """A JSON or JSONC file's value; ``{}`` when absent or empty. Raises InvalidInput naming
    the file when it cannot be parsed."""
    return parse_json(path, read_text(path))


def json_member(path: Path, *keys: str) -> Any:
    """``data[k1][k2]...`` of a JSON file, or None when absent or unreadable."""
    try:
        value = read_json(path)
    except YnmError:
        return None
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def json_problem(path: Path) -> str | None:
    """Why a client's JSON file cannot be used (``<path>: not valid JSON (...)``), or None."""
    try:
        read_json(path)
    except YnmError as err:
        return str(err).removeprefix("invalid input: ").split("; fix it")[0].split("; save it")[0]
    return None


@dataclass(frozen=True)
class Problem:
    """A fault in a client's files that no install can mend by itself.

    ``what`` is the piece it breaks (``server``, ``guidance``, ``hooks``, ``manifest``);
    ``detail`` names the file (``<path>: not valid JSON (...)``, ``<path>:<line>: ...`` for a
    malformed guidance block, ``<path>: "mcpServers.ynm" mixes ...``); ``fix`` is what works
    in this state (a hand edit, or the install command that replaces the value); ``level`` is
    ``error`` where the client cannot use the file or ynm's server (a file that is not valid
    JSON, a server entry no client can run), ``warn`` for a malformed guidance block (the
    server still works; the reference rates a guidance gap as a warning, reference/cli.md
    §4.4 item 7).
    """

    what: str
    detail: str
    fix: str
    level: str = "error"


def json_problems(what: str, *paths: Path) -> list[Problem]:
    """A :class:`Problem` for each of ``paths`` that is not valid JSON (or not UTF-8): fix
    ``fix the JSON in <path>`` (``ynm client install`` refuses such a file, exit 2)."""
    out = []
    for path in paths:
        why = json_problem(path)
        if why:
            out.append(Problem(what, why, f"fix the JSON in {path}"))
    return out


def entry_problems(client: str, path: Path, keys: tuple[str, ...], *,
                   scope: str = "project") -> list[Problem]:
    """A :class:`Problem` when the server entry at ``keys`` of ``path`` is unusable
    (:func:`entry_problem`), with the install command that replaces it: a broken entry
    (both transports, or neither) is replaced whole by a plain install, a value that is not
    ynm's (not an object, another command) only with ``--force``. ``scope`` is the install
    scope that writes ``path``."""
    if json_problem(path):
        return []
    entry = json_member(path, *keys)
    why = entry_problem(entry, keys)
    if not why:
        return []
    command = f"ynm client install {client}" + (" --scope user" if scope == "user" else "")
    if not (isinstance(entry, dict) and transport(entry) in ("mixed", "none")):
        command += " --force"
    return [Problem("server", f"{path}: {why}", command)]


def apply(changes: list[Change], *, yes: bool = False) -> list[str]:
    """Apply ``changes`` in order and return the "done" lines of reference/cli.md §4.2:
    ``wrote <path>: <reason>``, ``merged <path>: <reason>``, ``next: <text>``, and for commands
    ``run: <argv>`` (not run without ``yes``) or ``ran <argv>``.

    Every file's new text is computed before the first one is written, so a file that is not
    valid JSON (InvalidInput, exit 2) leaves every file as it was.

    Raises:
        InvalidInput: a JSON file that cannot be parsed or whose root is not an object.
        YnmError: a command that exits non-zero (``<argv> exited <code>``) or cannot be
            started (``cannot run <argv0>: ...``), exit 1.
    """
    rendered: dict[Path, str] = {}
    for c in changes:
        if c.kind in ("write", "merge-json"):
            current = rendered[c.path] if c.path in rendered else read_text(c.path)
            rendered[c.path] = c.render(current).removeprefix(BOM) if c.path.suffix in (
                ".json", ".jsonc") else c.render(current)
    done: list[str] = []
    for c in changes:
        if c.kind in ("write", "merge-json"):
            _write(c.path, rendered.pop(c.path) if c.path in rendered else None, c.mode)
            verb = "wrote" if c.kind == "write" else "merged"
            done.append(f"{verb} {c.path}: {c.reason}")
        elif c.kind == "note":
            done.append(f"next: {_mask(c.text or '', c.secrets)}")
        elif yes:
            argv = c.argv or []
            shown = _mask(" ".join(argv), c.secrets)
            try:
                proc = subprocess.run(argv, check=False)
            except OSError as err:
                raise YnmError(f"cannot run {argv[0]}: {err.strerror or err}") from None
            if proc.returncode != 0:
                raise YnmError(f"{shown} exited {proc.returncode}")
            done.append(f"ran {shown}")
        else:
            done.append(f"run: {_mask(' '.join(c.argv or []), c.secrets)}")
    return done


def _write(path: Path, text: str | None, mode: int | None) -> None:
    """Write ``text`` (None: the file was written by an earlier change of the same plan) as
    UTF-8; with ``mode`` a new file is created with those permission bits and an existing one
    is brought to them, so a secret is never readable by others, not even for a moment."""
    if text is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        path.write_bytes(text.encode("utf-8"))
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.fchmod(fd, mode)
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)


def guidance_block(newline: str = "\n") -> str:
    """ynm's delimited memory section (:data:`ynm.model.guidance.MEMORY_SECTION` between
    :data:`BEGIN` and :data:`END`), with ``newline`` line endings and no final newline."""
    return newline.join([BEGIN, *MEMORY_SECTION.rstrip("\n").split("\n"), END])


def guidance_span(text: str, path: Path | str) -> tuple[int, int] | None:
    """Where ynm's block is in an instruction file's ``text``: ``(start of BEGIN, end of END)``,
    or None when the file has no marker.

    Raises:
        InvalidInput: the markers are not exactly one :data:`BEGIN` followed by one
            :data:`END` (a begin without an end, an end without a begin, two of either, end
            before begin): ``<path>:<line>: ...; fix or remove ynm's markers and run again``.
            Nothing is written then, so no line of the user's is lost.
    """
    marks = sorted([(m, BEGIN) for m in _find_all(text, BEGIN)]
                   + [(m, END) for m in _find_all(text, END)])
    if not marks:
        return None
    kinds = [k for _, k in marks]
    if kinds == [BEGIN, END]:
        return marks[0][0], marks[1][0] + len(END)

    def at(i: int) -> str:
        return f"{path}:{text.count(chr(10), 0, marks[i][0]) + 1}"

    if kinds[0] == END:
        what = f"{at(0)}: {END} comes before any {BEGIN}"
    elif len(kinds) == 1:
        what = f"{at(0)}: {BEGIN} has no {END} after it"
    else:
        i = next(i for i in range(1, len(kinds)) if kinds[i] == kinds[i - 1] or i >= 2)
        what = (f"{at(i)}: a second {kinds[i]}" if kinds[i] == kinds[i - 1]
                else f"{at(i)}: a second ynm block")
    raise InvalidInput(f"{what} (ynm's memory guidance block is half-written); fix or remove "
                       "ynm's markers and run again")


def _find_all(text: str, needle: str) -> list[int]:
    out, i = [], text.find(needle)
    while i >= 0:
        out.append(i)
        i = text.find(needle, i + len(needle))
    return out


def with_guidance(existing: str | None, path: Path | str = "the instruction file") -> str:
    """``existing`` (an instruction file's text, None when absent) with ynm's block: an earlier
    block (from :data:`BEGIN` to :data:`END`) is replaced in place, else the block is appended
    after a blank line. Every byte outside the block is kept, line endings (CRLF or LF), a
    byte order mark and a missing final newline included; the block uses the file's line
    ending. Raises InvalidInput for malformed markers (:func:`guidance_span`)."""
    if not existing:
        return guidance_block() + "\n"
    span = guidance_span(existing, path)
    if span is not None:  # the block keeps the line ending it was written with
        nl = "\r\n" if "\r\n" in existing[span[0]:span[1]] else "\n"
        return existing[:span[0]] + guidance_block(nl) + existing[span[1]:]
    nl = "\r\n" if "\r\n" in existing else "\n"
    block = guidance_block(nl)
    sep = nl if existing.endswith(nl) else nl + nl
    return existing + sep + block + nl


def has_guidance(path: Path) -> bool:
    """Whether ``path`` holds ynm's delimited block, well formed."""
    try:
        text = read_text(path)
        return text is not None and guidance_span(text, path) is not None
    except InvalidInput:
        return False


def guidance_problems(client: str, *paths: Path) -> list[Problem]:
    """A ``warn`` :class:`Problem` for each of ``paths`` (the instruction files the client
    reads) holding a malformed guidance block (``<path>:<line>: ...``, :func:`guidance_span`),
    or not UTF-8. ``ynm client install`` refuses to touch such a file (exit 2), so the fix is
    a hand edit, then the install."""
    out = []
    for path in paths:
        try:
            text = read_text(path)
            if text is not None:
                guidance_span(text, path)
        except InvalidInput as err:
            detail = str(err).removeprefix("invalid input: ").split("; fix")[0]
            detail = detail.split("; save it")[0]
            how = (f"save {path} as UTF-8" if "not UTF-8" in detail
                   else f"remove or complete ynm's markers in {path}")
            out.append(Problem("guidance", detail, f"{how}, then run `ynm client install "
                               f"{client}`", "warn"))
    return out


def guidance_change(path: Path, reason: str | None = None) -> Change:
    """A ``write`` change putting ynm's block into ``path`` (see :func:`with_guidance`)."""
    return Change("write", reason or f"memory guidance for the agent (delimited block in "
                  f"{path.name})", path=path, content=with_guidance(read_text(path), path))


@dataclass
class Detection:
    """Whether a client is used by the project (``project``: its files are there) or only
    present on the machine (``machine``: its binary on PATH or its home directory), and how."""

    project: bool
    machine: bool
    how: str

    @property
    def found(self) -> bool:
        return self.project or self.machine


def detect_by(target: Target, *, bin: str, user: list[Path], project: list[str]) -> Detection:
    """Detection from signals: ``project`` paths relative to the work tree, ``user`` paths (in
    the home directory), and a binary on PATH."""
    hows: list[str] = []
    in_project = [p for p in project if (target.work_tree / p).exists()]
    hows += in_project
    mine = [p for p in user if p.exists()]
    hows += [f"~/{p.relative_to(target.home)}" if p.is_relative_to(target.home) else str(p)
             for p in mine]
    binary = target.on_path(bin)
    if binary:
        hows.append(f"{bin} on PATH")
    return Detection(bool(in_project), bool(mine) or binary, ", ".join(hows) or "not found")


@dataclass
class ClientStatus:
    """One client's ynm setup: the one computation ``ynm client status``, ``ynm doctor`` and
    ``ynm validate`` all report.

    ``server``: ynm's MCP server (or pi's extension) is registered; ``guidance``: the memory
    guidance is present; ``hooks``: the agent hooks are installed (None: this client has no
    hooks ynm installs). ``checked`` holds one ``<what padded to 9> <detail>`` line per piece;
    ``problems`` the faults found (:class:`Problem`: a config file that is not valid JSON, a
    server entry no client can use, a malformed guidance block in any instruction file the
    client reads). ``level`` is ``error`` (an ``error`` problem), ``warn`` (a ``warn`` problem,
    or the server registered with guidance or hooks missing), ``off`` (not registered) or
    ``ok``; ``advice`` says what to run or do first.
    """

    client: str
    detected: bool
    detection: str
    server: bool
    guidance: bool
    hooks: bool | None
    detail: str
    checked: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def problem(self) -> str | None:
        """The first problem's detail, or None."""
        return self.problems[0].detail if self.problems else None

    @property
    def level(self) -> str:
        levels = {p.level for p in self.problems}
        if "error" in levels:
            return "error"
        if levels:
            return "warn"
        if not self.server:
            return "off"
        return "ok" if self.guidance and self.hooks is not False else "warn"

    @property
    def fix(self) -> str:
        """The command that completes the setup (the first problem's fix when there is one)."""
        return self.problems[0].fix if self.problems else f"ynm client install {self.client}"

    @property
    def advice(self) -> str | None:
        if self.problems:
            return "; ".join(f"{p.detail}; fix: {p.fix}" for p in self.problems)
        if not self.server:
            return f"run `ynm client install {self.client}`"
        gaps = [w for w, v in (("guidance", self.guidance), ("hooks", self.hooks)) if v is False]
        return (f"{' and '.join(gaps)} missing; run `ynm client install {self.client}`"
                if gaps else None)

    def to_obj(self) -> dict[str, Any]:
        return {"client": self.client, "detected": self.detected, "detection": self.detection,
                "configured": self.server, "guidance": self.guidance, "hooks": self.hooks,
                "level": self.level, "detail": self.detail, "advice": self.advice,
                "checked": self.checked, "files": self.files, "problem": self.problem,
                "problems": [{"what": p.what, "level": p.level, "detail": p.detail,
                              "fix": p.fix} for p in self.problems]}

    def line(self) -> str:
        """One human line: ``ok   <client>: server yes, guidance yes, hooks n/a; <detail>``;
        with problems ``err  <client>: <detail>; fix: <fix>`` (``warn`` for a ``warn`` one)."""
        if self.problems:
            tag = "err " if self.level == "error" else "warn"
            return f"{tag} {self.client}: {self.advice}"
        if self.level == "off":
            seen = f"detected ({self.detection}); " if self.detected else "not detected; "
            return f"--   {self.client}: {seen}{self.detail}"
        yn = {True: "yes", False: "no", None: "n/a"}
        tag = "ok  " if self.level == "ok" else "warn"
        return (f"{tag} {self.client}: server yes, guidance {yn[self.guidance]}, hooks "
                f"{yn[self.hooks]}; {self.advice or self.detail}")


def check(what: str, detail: str) -> str:
    """A ``checked`` line: ``what`` padded to 9 characters, then the detail."""
    return f"{what:<9} {detail}"


def transport(entry: Any) -> str:
    """The transport of a server entry: ``stdio`` (a ``command``), ``http`` (a ``url``),
    ``mixed`` (both: no client can tell which to use) or ``none`` (neither)."""
    if not isinstance(entry, dict):
        return "none"
    has_command, has_url = "command" in entry, "url" in entry
    if has_command and has_url:
        return "mixed"
    return "stdio" if has_command else "http" if has_url else "none"


def entry_argv(entry: dict[str, Any]) -> list[str]:
    """A stdio entry's command line: ``command`` (a string, or opencode's array) and ``args``."""
    command = entry.get("command")
    args = entry.get("args") if isinstance(entry.get("args"), list) else []
    argv = command if isinstance(command, list) else [command, *args]
    return [str(a) for a in argv if a is not None]


def runs_ynm(entry: dict[str, Any]) -> bool:
    """Whether a stdio entry runs ``ynm serve``, however ynm is called (``ynm``, a path to it,
    or ``python -m ynm``)."""
    argv = entry_argv(entry)
    if len(argv) < 2 or argv[-1] != "serve":
        return False
    head = argv[:-1]
    return Path(head[0]).name == "ynm" or head[-2:] == ["-m", "ynm"]


def _shown(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _dig(value: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def entry_problem(entry: Any, keys: tuple[str, ...]) -> str | None:
    """What is wrong with the server entry at ``keys`` for a client to use it, or None: not an
    object, both transports (``mixed``), no transport, or a command that is not ynm."""
    dotted = ".".join(keys)
    if entry is None:
        return None
    if not isinstance(entry, dict):
        return f'"{dotted}" holds {_shown(entry)}, not a server entry'
    kind = transport(entry)
    if kind == "mixed":
        return (f'"{dotted}" mixes a local command and a hosted url (one entry is one '
                "transport)")
    if kind == "none":
        return f'"{dotted}" names neither a command nor a url'
    if kind == "stdio" and not runs_ynm(entry):
        return f'"{dotted}" runs `{" ".join(entry_argv(entry))}`, not `ynm serve`'
    return None


def merge_change(t: Target, client: str, path: Path, patch: dict[str, Any], reason: str, *,
                 entry: tuple[str, ...] | None = None, secrets: tuple[str, ...] = (),
                 mode: int | None = None) -> Change:
    """A ``merge-json`` change of ``patch`` into ``path``, after checking that it overwrites
    nothing that is not ynm's.

    ``entry`` is the key path of ynm's server entry in the patch: an entry of the other
    transport, or a broken one (both transports, or none), is replaced whole, never merged
    member by member; ``ynm init`` (``t.init``) keeps a hosted entry and returns a ``note``.
    Values that are not ynm's (a non-object where the patch needs an object, an array where it
    needs one, an entry that runs another command) are replaced only with ``t.force``; under
    ``ynm init`` the change becomes a ``note`` saying what was left alone.

    Raises:
        InvalidInput: ``path`` is not valid JSON, or its root is not an object (exit 2).
        Refused: a value that is not ynm's, without ``t.force`` (exit 2); the message names
            the file and the key and says how to go on.
    """
    current = read_json(path)
    if not isinstance(current, dict):
        raise InvalidInput(f"{path}: holds {_shown(current)}, not a JSON object; fix it and "
                           "run again")
    replace: list[tuple[str, ...]] = []
    problems: list[str] = []
    if entry is not None:
        have, want = _dig(current, entry), _dig(patch, entry)
        problem = entry_problem(have, entry)
        kind = transport(have)
        if have is None:
            pass
        elif problem and isinstance(have, dict) and kind in ("mixed", "none"):
            replace.append(entry)
            reason += f"; replaces the broken entry whole ({problem})"
        elif problem:
            problems.append(problem)
            replace.append(entry)
        elif kind != transport(want):
            if t.init and kind == "http":
                return Change("note", "ynm init keeps a hosted server", text=(
                    f"kept the hosted ynm server in {path} ({have.get('url')}); to run a local "
                    f"`ynm serve` instead: ynm client install {client}"))
            replace.append(entry)
            reason += (f"; replaces the {'hosted' if kind == 'http' else 'local'} entry "
                       "whole")
    for keys, value in jsonc.clashes(current, patch, skip=[entry] if entry else []):
        need = "an object" if isinstance(_dig(patch, keys), dict) else "an array"
        problems.append(f'"{".".join(keys)}" holds {_shown(value)} where ynm needs {need}')
    if problems:
        if t.init:
            return Change("note", "a value that is not ynm's", text=(
                f"left {path} alone: {problems[0]}; to replace it: ynm client install "
                f"{client} --force"))
        if not t.force:
            raise Refused(f"{path}: {problems[0]}; ynm does not overwrite what it did not "
                          f"write: fix it by hand, or run `ynm client install {client} "
                          "--force` to replace it")
        reason += "; --force replaces what was not ynm's: " + "; ".join(problems)
    return Change("merge-json", reason, path=path, patch=patch, replace=tuple(replace),
                  secrets=secrets, mode=mode)


def token_note(t: Target, label: str) -> Change:
    """The ``note`` telling the user which variable to set when a shared file names
    :data:`TOKEN_VAR` instead of the bearer token (the token itself is never shown)."""
    unset = "" if t.env.get(TOKEN_VAR) else f" ({TOKEN_VAR} is not set in this shell)"
    return Change("note", "the bearer token is not written into a file the team shares",
                  text=f"set {TOKEN_VAR} to your ynm token where {label} starts, e.g. "
                       f"`export {TOKEN_VAR}=<token>` in your shell profile{unset}: the "
                       "project's file names the variable, not the token")
