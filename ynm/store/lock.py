"""The repository lock: one file in the git common dir that serialises ynm writers.

The lock only orders ynm's own writers; correctness against writers that bypass it (git
porcelain, other tools) comes from the compare-and-swap on each shard ref (gitnotes.py).
Source: reference/storage.md §3.5 ("Lock (withLock)").
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from ynm.errors import LockTimeout, StoreError

LOCK_FILE_NAME = "ynm.lock"
LOCK_TIMEOUT_S = 60.0
STALE_MS = 60_000
RETRY_S = 0.015
WAIT_NOTICE_S = 1.0  # seconds of waiting for a live owner before RepoLock's on_wait is told
# A process that dies between creating the break guard and removing it leaves it behind; after
# this long the guard itself is treated as stale.
BREAK_GUARD_STALE_S = 10.0


def _now_ms() -> int:
    return int(time.time() * 1000)


def _pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (signal 0 checks without delivering anything)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        # The process exists but belongs to another user.
        return True
    except OSError:
        return False
    return True


def _read_owner(path: Path) -> tuple[int, int] | None:
    """The ``(pid, epoch ms)`` recorded in a lock file, or None when unreadable or partial."""
    try:
        text = path.read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    lines = text.split("\n")
    if len(lines) < 2:
        return None
    try:
        return int(lines[0]), int(lines[1])
    except ValueError:
        return None


def _holder(owner: tuple[int, int]) -> str:
    """``held by process <pid> (<its command line>) for <s> s`` for the owner ``(pid, epoch
    ms)`` of a lock file; the command line is read from ``/proc`` where there is one (cut to
    80 characters), and left out elsewhere."""
    pid, started_ms = owner
    command = ""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        raw = b""
    args = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
    if args:
        text = " ".join(" ".join([Path(args[0]).name, *args[1:]]).split())  # one line
        command = f" ({text if len(text) <= 80 else text[:77] + '...'})"
    seconds = max(0, _now_ms() - started_ms) / 1000
    return f"held by process {pid}{command} for {seconds:.0f} s"


def holder_hint(path: Path, owner: tuple[int, int] | None) -> str:
    """What holds the lock at ``path`` and what to do, for the hint of a :class:`LockTimeout`:
    ``held by process <pid> (<its command line>) for <s> s: wait for it to finish, then run
    this again (...)`` (:func:`_holder`). ``owner``: the file's ``(pid, epoch ms)``, or None
    while a writer has created it but not yet written it."""
    after = (f"wait for it to finish, then run this again (a lock held over "
             f"{STALE_MS // 1000} s, or whose process has ended, is taken over on its own)")
    if owner is None:
        return f"another ynm process is taking it ({path} holds no owner yet): {after}"
    return f"{_holder(owner)}: {after}"


def waiting_note(path: Path, owner: tuple[int, int] | None, timeout_s: float) -> str:
    """What a writer waiting for the lock at ``path`` says while it waits: ``waiting for
    <path>, held by process <pid> (<command>) for <s> s; giving up after <t> s (a lock held
    over 60 s, or whose process has ended, is taken over)`` (:func:`_holder`)."""
    held = _holder(owner) if owner is not None else "which another ynm process is taking"
    return (f"waiting for {path}, {held}; giving up after {timeout_s:.0f} s (a lock held "
            f"over {STALE_MS // 1000} s, or whose process has ended, is taken over)")


def _is_stale(path: Path, owner: tuple[int, int] | None) -> bool:
    """A lock is stale when its time is over STALE_MS old or its pid is gone.

    A file whose content cannot be parsed may belong to a writer that has created it but not yet
    written it, so it only counts as stale once its mtime is older than STALE_MS.
    """
    if owner is None:
        try:
            age_ms = _now_ms() - int(path.stat().st_mtime * 1000)
        except OSError:
            return False
        return age_ms > STALE_MS
    pid, started_ms = owner
    return _now_ms() - started_ms > STALE_MS or not _pid_alive(pid)


class RepoLock:
    """Exclusive lock on ``path`` (normally ``<git common dir>/ynm.lock``), as a context manager.

    Taking it creates the file with ``O_EXCL`` holding ``"<pid>\\n<epoch ms>\\n"``. When the file
    exists it is taken over if stale (recorded time more than 60 000 ms ago, or the pid is not
    alive); otherwise the lock retries every 15 ms until ``timeout_s`` seconds have passed.
    Releasing unlinks the file if it is still there. Not re-entrant.

    Args:
        path: The lock file path.
        timeout_s: Seconds to wait before giving up.
        on_wait: Told once, after :data:`WAIT_NOTICE_S` seconds of waiting for a live owner,
            who holds the lock (:func:`waiting_note`), so a command that waits does not sit
            silent for up to a minute; None: wait quietly.

    Raises:
        LockTimeout: On enter, ``lock timeout after <ms>ms: <path>`` when the lock stayed taken,
            with the hint of :func:`holder_hint` (who holds it, what to do).
        StoreError: When the lock file cannot be created for another reason (permissions).

    Source: reference/storage.md §3.5 ("Lock (withLock)").
    """

    def __init__(self, path: str | os.PathLike[str], timeout_s: float = LOCK_TIMEOUT_S,
                 on_wait: Callable[[str], None] | None = None) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s
        self.on_wait = on_wait
        self.held = False

    def acquire(self) -> None:
        """Take the lock, breaking a stale one.

        Raises:
            LockTimeout: When the lock is still held by a live owner after ``timeout_s``;
                its ``hint`` names the owner (:func:`holder_hint`).
            StoreError: When the lock file cannot be created for another reason.
        """
        start = time.monotonic()
        deadline = start + self.timeout_s
        told = self.on_wait is None
        while True:
            if self._try_create():
                self.held = True
                return
            owner = _read_owner(self.path)
            if _is_stale(self.path, owner):
                self._break_stale(owner)
                continue
            if not told and time.monotonic() - start >= WAIT_NOTICE_S:
                told = True
                assert self.on_wait is not None
                self.on_wait(waiting_note(self.path, owner, self.timeout_s))
            if time.monotonic() >= deadline:
                ms = int(round(self.timeout_s * 1000))
                err = LockTimeout(f"lock timeout after {ms}ms: {self.path}")
                err.hint = holder_hint(self.path, owner)
                raise err
            time.sleep(RETRY_S)

    def release(self) -> None:
        """Remove the lock file if present. Safe to call when not held."""
        if not self.held:
            return
        self.held = False
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def _try_create(self) -> bool:
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            return False
        except OSError as exc:
            raise StoreError(f"cannot create lock {self.path}: {exc}") from exc
        try:
            os.write(fd, f"{os.getpid()}\n{_now_ms()}\n".encode("ascii"))
        finally:
            os.close(fd)
        return True

    def _break_stale(self, judged: tuple[int, int] | None) -> None:
        """Unlink a lock judged stale, unless it changed hands since it was judged.

        Two waiters can judge the same stale file; without a guard the slower one could unlink
        the lock the faster one has just created. The guard file makes the re-check and unlink
        one step.
        """
        guard = self.path.with_name(self.path.name + ".break")
        try:
            fd = os.open(guard, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            try:
                if time.time() - guard.stat().st_mtime > BREAK_GUARD_STALE_S:
                    guard.unlink()
            except OSError:
                pass
            time.sleep(RETRY_S)
            return
        os.close(fd)
        try:
            if _read_owner(self.path) == judged:
                try:
                    self.path.unlink()
                except FileNotFoundError:
                    pass
        finally:
            try:
                guard.unlink()
            except FileNotFoundError:
                pass

    def __enter__(self) -> RepoLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()
