"""What every client integration shares: the install target, the plan's changes and how they are
applied, the delimited guidance block, and the status report.

Changes (reference/cli.md §4.2, reference/server.md §4.1) have a ``kind``: ``write`` (path,
content, reason), ``merge-json`` (path, patch, reason), ``command`` (argv, reason) or ``note``
(text, reason). Plans are computed without touching anything; a change that would leave its file
as it is is dropped, so a second install plans nothing. JSON merges go through
:mod:`ynm.integrations.jsonc`: only the merged members change, comments and formatting stay.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ynm.errors import YnmError
from ynm.integrations import jsonc
from ynm.model.guidance import MEMORY_SECTION

BEGIN = "<!-- ynm:begin -->"
END = "<!-- ynm:end -->"


@dataclass(frozen=True)
class Target:
    """Where and how to install.

    ``work_tree`` is the project directory, ``home`` the user's home (``HOME``), ``scope``
    ``project`` or ``user``; ``url``/``token`` select the hosted transport (``{type: http, url,
    headers: {Authorization: Bearer <token>}}``) instead of stdio; ``command`` is the argv that
    runs ynm (``serve`` and ``hook <event>`` are appended); ``hooks`` whether to install the
    client's agent hooks; ``env`` the environment (``XDG_CONFIG_HOME``, ``PATH``).
    """

    work_tree: Path
    home: Path
    scope: str = "project"
    url: str | None = None
    token: str | None = None
    command: tuple[str, ...] = ("ynm",)
    hooks: bool = True
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))

    @property
    def http(self) -> bool:
        return self.url is not None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

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
    """One planned change; see the module docstring for the kinds and their fields."""

    kind: str
    reason: str
    path: Path | None = None
    content: str | None = None
    patch: dict[str, Any] | None = None
    argv: list[str] | None = None
    text: str | None = None

    @property
    def target(self) -> str:
        """What the change touches: the path, the command line, or the note's text."""
        if self.kind == "command":
            return " ".join(self.argv or [])
        if self.kind == "note":
            return self.text or ""
        return str(self.path)

    def to_obj(self) -> dict[str, Any]:
        """The JSON shape of reference/cli.md §4.2."""
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
        return obj

    def is_noop(self) -> bool:
        """Whether applying would leave the file exactly as it is (commands and notes never
        are; their plans decide themselves whether they are needed)."""
        if self.kind == "write":
            return read_text(self.path) == self.content
        if self.kind == "merge-json":
            text = read_text(self.path)
            if text is None:
                return False
            current = jsonc.loads(text) if text.strip() else {}
            return jsonc.merged_value(current, self.patch or {}) == current
        return False


def read_text(path: Path | None) -> str | None:
    """A file's text with its line endings as they are (UTF-8), or None when it is absent."""
    if path is None or not path.is_file():
        return None
    return path.read_bytes().decode("utf-8")


def read_json(path: Path) -> Any:
    """A JSON or JSONC file's value; ``{}`` when absent or empty. Raises YnmError naming the
    file when it cannot be parsed."""
    text = read_text(path)
    if text is None or not text.strip():
        return {}
    try:
        return jsonc.loads(text)
    except jsonc.JsoncError as err:
        raise YnmError(f"{path}: not valid JSON ({err}); fix it and run again") from None


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


def apply(changes: list[Change], *, yes: bool = False) -> list[str]:
    """Apply ``changes`` in order and return the "done" lines of reference/cli.md §4.2:
    ``wrote <path>: <reason>``, ``merged <path>: <reason>``, ``next: <text>``, and for commands
    ``run: <argv>`` (not run without ``yes``) or ``ran <argv>``.

    Raises:
        YnmError: a command that exits non-zero (``<argv> exited <code>``) or cannot be
            started (``cannot run <argv0>: ...``), exit 1; a JSON file that cannot be parsed.
    """
    done: list[str] = []
    for c in changes:
        if c.kind == "write":
            c.path.parent.mkdir(parents=True, exist_ok=True)
            c.path.write_bytes((c.content or "").encode("utf-8"))
            done.append(f"wrote {c.path}: {c.reason}")
        elif c.kind == "merge-json":
            text = read_text(c.path) or ""
            try:
                new = jsonc.merge(text, c.patch or {})
            except jsonc.JsoncError as err:
                raise YnmError(f"{c.path}: not valid JSON ({err}); fix it and run again") from None
            c.path.parent.mkdir(parents=True, exist_ok=True)
            c.path.write_bytes(new.encode("utf-8"))
            done.append(f"merged {c.path}: {c.reason}")
        elif c.kind == "note":
            done.append(f"next: {c.text}")
        elif yes:
            argv = c.argv or []
            try:
                proc = subprocess.run(argv, check=False)
            except OSError as err:
                raise YnmError(f"cannot run {argv[0]}: {err.strerror or err}") from None
            if proc.returncode != 0:
                raise YnmError(f"{' '.join(argv)} exited {proc.returncode}")
            done.append(f"ran {' '.join(argv)}")
        else:
            done.append(f"run: {' '.join(c.argv or [])}")
    return done


def guidance_block(newline: str = "\n") -> str:
    """ynm's delimited memory section (:data:`ynm.model.guidance.MEMORY_SECTION` between
    :data:`BEGIN` and :data:`END`), with ``newline`` line endings and no final newline."""
    return newline.join([BEGIN, *MEMORY_SECTION.rstrip("\n").split("\n"), END])


def with_guidance(existing: str | None) -> str:
    """``existing`` (an instruction file's text, None when absent) with ynm's block: an earlier
    block (from :data:`BEGIN` to :data:`END`) is replaced in place, else the block is appended
    after a blank line. Every byte outside the block is kept, line endings (CRLF or LF) and a
    missing final newline included; the block uses the file's line ending."""
    if not existing:
        return guidance_block() + "\n"
    nl = "\r\n" if "\r\n" in existing else "\n"
    block = guidance_block(nl)
    begin = existing.find(BEGIN)
    end = existing.find(END, begin + len(BEGIN)) if begin >= 0 else -1
    if begin >= 0 and end >= 0:
        return existing[:begin] + block + existing[end + len(END):]
    sep = nl if existing.endswith(nl) else nl + nl
    return existing + sep + block + nl


def has_guidance(path: Path) -> bool:
    """Whether ``path`` holds ynm's delimited block."""
    text = read_text(path)
    return text is not None and BEGIN in text and END in text


def guidance_change(path: Path, reason: str | None = None) -> Change:
    """A ``write`` change putting ynm's block into ``path`` (see :func:`with_guidance`)."""
    return Change("write", reason or f"memory guidance for the agent (delimited block in "
                  f"{path.name})", path=path, content=with_guidance(read_text(path)))


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
    """One client's ynm setup, for ``ynm client status`` and ``ynm doctor``.

    ``server``: ynm's MCP server (or pi's extension) is registered; ``guidance``: the memory
    guidance is present; ``hooks``: the agent hooks are installed (None: this client has no
    hooks ynm installs). ``checked`` holds one ``<what padded to 9> <detail>`` line per piece;
    ``level`` is ``ok`` (everything in place), ``warn`` (server registered, guidance or hooks
    missing) or ``off`` (not registered); ``advice`` says what to run for a gap.
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

    @property
    def level(self) -> str:
        if not self.server:
            return "off"
        return "ok" if self.guidance and self.hooks is not False else "warn"

    @property
    def advice(self) -> str | None:
        if not self.server:
            return f"run `ynm client install {self.client}`"
        gaps = [w for w, v in (("guidance", self.guidance), ("hooks", self.hooks)) if v is False]
        return (f"{' and '.join(gaps)} missing; run `ynm client install {self.client}`"
                if gaps else None)

    def to_obj(self) -> dict[str, Any]:
        return {"client": self.client, "detected": self.detected, "detection": self.detection,
                "configured": self.server, "guidance": self.guidance, "hooks": self.hooks,
                "level": self.level, "detail": self.detail, "advice": self.advice,
                "checked": self.checked, "files": self.files}

    def line(self) -> str:
        """One human line: ``ok   <client>: server yes, guidance yes, hooks n/a; <detail>``."""
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
