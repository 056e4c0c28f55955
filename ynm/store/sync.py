"""Sync a git-notes shard log with a remote, the way code moves: fetch, merge, push.

Source: reference/storage.md §4 and §7.23; seed 000 ("Sync fetches remote shards into
refs/notes/ynm-remote/<remote>/... and merges them with git notes merge -s cat_sort_uniq").

- Remote shards are fetched into ``refs/notes/ynm-remote/<remote>/<level>/*`` (forced there,
  never into ``refs/notes/ynm/*``, so unpushed local records can never be lost).
- The fetch moves only what changed, one shard per transfer (:func:`fetch_changed`): one
  ``git ls-remote`` lists the remote's tips; a tip this repository already holds only moves its
  tracking ref; each other shard is fetched by its own ``git fetch``. Every shard's note blob
  sits at the same path (the anchor), and git's pack builder only tries ``pack.window`` (10)
  same-named objects as delta bases, so one fetch of many shards pairs a shard's new blob with
  another shard's old one: deltas half the blob's size after seconds of delta search over
  multi-MB blobs. Alone in its fetch, a shard's new blob meets only its own previous version,
  and the delta is the appended lines. Building that delta still costs the sender an index of
  the whole old blob (~2 s for a 65 MB shard of a 1M-memory store) and the receiver a rebuild
  and recompression of the whole new blob, one core each, so the per-shard fetches run
  side by side (:data:`TRANSFER_JOBS`), without writing ``FETCH_HEAD`` or starting
  ``git maintenance`` (each would race the others; the store packs its loose objects itself,
  ``ynm.store.gitnotes``).
- Each tracking ref is then brought into its local shard: fast-forward when the local tip is
  missing or an ancestor; nothing when local is ahead; otherwise a merge computed in-process
  that gives the same blob as ``git notes merge -s cat_sort_uniq`` (both blobs' lines, empty
  ones dropped, byte-sorted, duplicates removed) and the same two-parent commit shape
  (parents local then remote, message ``Merged notes from <remote ref> into <local ref>``).
- Local shards are pushed without force; a rejected push (someone pushed in between) is fetched,
  merged and pushed again, three rounds at most. A shard whose older tip the remote holds (by
  its tracking ref) is pushed alone, for the same reason a changed shard is fetched alone, and
  these pushes run side by side as the fetches do; the others (new shards) and the named
  documents go in one last push.
- Transport runs the ``git`` executable, so credential helpers, SSH keys and proxies work; every
  call carries ``YNM_SYNC_IN_PROGRESS=1`` so the pre-push hook does not re-enter.
- A remote that is not configured is reported under ``skipped`` (never as a conflict); the
  caller decides whether that is a failure (docs/cli.md "ynm sync").
- Named documents (``refs/ynm/<level>/documents/<name>``, the people document) travel in the
  same fetch and push: fetched into ``refs/ynm-remote/<remote>/<level>/documents/*``, then per
  document: same commit, nothing; local missing or behind, fast-forward; remote behind,
  nothing; diverged, a two-parent commit ``ynm: merge document <name>`` of the document's
  merge rule (``merge_documents[name](ours, theirs)``), compare-and-swapped in; without a rule
  (or when the rule fails) the local copy stays, the document is a conflict and is not pushed
  (reference/storage.md §4, "Documents reconcile").
- Snapshots (``refs/ynm/<level>/snapshots/<name>``, written by ``ynm compact``) travel too:
  fetched into ``refs/ynm-remote/<remote>/<level>/snapshots/*`` after the shards; the remote's
  replaces the local one when it fits the merged shard tips (every shard it covers is at or
  behind the local tip: :func:`ynm.store.snapshots.fits`) and is newer (``createdAt``), or when
  there is no local one. A local snapshot the remote lacks or holds older is pushed with
  ``--force-with-lease`` on the commit the fetch saw (a snapshot commit has no parent, so each
  replaces the last); a lease lost to another clone's push is left for the next sync.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from shlex import quote
from typing import Any

from ynm.errors import StoreError, YnmError
from ynm.model.shards import (
    DOCUMENTS_PREFIX,
    DOCUMENTS_REMOTE_PREFIX,
    NOTES_PREFIX,
    REMOTE_PREFIX,
    key_from_ref,
)
from ynm.store.gitnotes import GitNotesLog
from ynm.store.libgit import pygit2
from ynm.store.objects import write_blob
from ynm.store.repo import git_failure_line, read_refs, refs_under, signature
from ynm.store.snapshots import (
    Snapshot,
    check_snapshot,
    compare_and_swap,
    fits,
    snapshots_prefix,
    snapshots_tracking_prefix,
)

MAX_ROUNDS = 3
GIT_TRUE = ("true", "yes", "on", "1")  # git's spellings of a true boolean
GIT_TIMEOUT_S = 120
# Per-shard fetches (pushes) run at once, at most this many and at most one per local core:
# each is one core of git work on each side (module docstring), and more only queue.
TRANSFER_JOBS = min(4, os.cpu_count() or 1)
# git fetch flags (git >= 2.29) that keep concurrent fetches into one repository apart.
FETCH_FLAGS = ("--quiet", "--no-write-fetch-head", "--no-auto-maintenance")
_REJECTED = re.compile(r"rejected|fetch first|non-fast-forward|failed to push", re.IGNORECASE)
# a ref of ``git push --porcelain`` the remote turned down because it moved (``[rejected]
# (fetch first)``, ``(non-fast-forward)``, ``(stale info)``), and one it refused outright
# (``[remote rejected] (pre-receive hook declined)``)
_PORCELAIN_RACE = re.compile(r"^!\t[^\t]*\t\[rejected\]", re.MULTILINE)
_PORCELAIN_REFUSED = re.compile(r"^!\t[^\t]*\t\[remote rejected\] \(([^)]*)\)", re.MULTILINE)


@dataclass
class SyncResult:
    """What one sync moved, in shards and records (reference/cli.md §4.26, with counts of what
    moved rather than of the refs that exist; docs/cli.md "ynm sync").

    - ``fetched``: local shards that took in remote records (each fast-forwarded or merged),
      ``fetched_records`` the records new to them;
    - ``fast_forwarded`` / ``merged``: those shards split by how they moved (a dry run lists
      what would move under ``fetched`` and how in these two);
    - ``pushed``: remote shards the push moved, ``pushed_records`` the records new to them;
    - ``conflicts``: what failed (exit 1); ``retries``: rejected pushes retried;
    - ``skipped``: why nothing was synced (a remote that is not configured), never a conflict;
    - ``refspec_added``: the fetch refspec added to the remote's config;
    - ``documents_fetched`` / ``documents_merged`` / ``documents_pushed``: names of the named
      documents (``people``) that took in the remote's copy (fast-forward or merge), of those
      that needed a merge, and of those the push moved;
    - ``snapshots_fetched`` / ``snapshots_pushed``: names of the snapshots (``ynm compact``,
      ``cache-v<n>``) that took the remote's copy, and that the push moved;
    - ``warnings``: what went wrong without failing the sync (an unusable snapshot replaced,
      dropped or not taken), one line each, naming the ref, why and the fix.
    """

    fetched: list[str] = field(default_factory=list)
    fetched_records: int = 0
    fast_forwarded: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    pushed: list[str] = field(default_factory=list)
    pushed_records: int = 0
    conflicts: list[str] = field(default_factory=list)
    retries: int = 0
    skipped: str | None = None
    refspec_added: str | None = None
    remote: str = ""
    documents_fetched: list[str] = field(default_factory=list)
    documents_merged: list[str] = field(default_factory=list)
    documents_pushed: list[str] = field(default_factory=list)
    snapshots_fetched: list[str] = field(default_factory=list)
    snapshots_pushed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def to_obj(self) -> dict[str, Any]:
        """JSON shape: ``{remote, fetched: {shards: [ref], records: n}, fastForwarded: [ref],
        merged: [ref], pushed: {shards: [ref], records: n}, conflicts: [text], retries: n,
        skipped?: text, refspecAdded?: refspec, documents?: {fetched: [name], merged: [name],
        pushed: [name]}, snapshots?: {fetched: [name], pushed: [name]}, warnings?: [text]}``
        (``documents`` only when a named document moved, ``snapshots`` only when a snapshot
        did, ``warnings`` only when there is one)."""
        out: dict[str, Any] = {
            "remote": self.remote,
            "fetched": {"shards": self.fetched, "records": self.fetched_records},
            "fastForwarded": self.fast_forwarded, "merged": self.merged,
            "pushed": {"shards": self.pushed, "records": self.pushed_records},
            "conflicts": self.conflicts, "retries": self.retries,
        }
        if self.skipped is not None:
            out["skipped"] = self.skipped
        if self.refspec_added is not None:
            out["refspecAdded"] = self.refspec_added
        if self.documents_fetched or self.documents_pushed:
            out["documents"] = {"fetched": self.documents_fetched,
                                "merged": self.documents_merged,
                                "pushed": self.documents_pushed}
        if self.snapshots_fetched or self.snapshots_pushed:
            out["snapshots"] = {"fetched": self.snapshots_fetched,
                                "pushed": self.snapshots_pushed}
        if self.warnings:
            out["warnings"] = self.warnings
        return out


def new_records(repo: pygit2.Repository, new: str, old: str | None) -> int:
    """Records (note lines) in notes commit ``new`` that notes commit ``old`` does not hold;
    every record of ``new`` when ``old`` is None. Only notes whose blobs differ are read, and
    of those only the new blob when it appends to the old one (:func:`_appended_lines`)."""
    new_notes = _notes_by_object(repo[new].peel(pygit2.Tree))
    old_notes = _notes_by_object(repo[old].peel(pygit2.Tree)) if old is not None else {}
    count = 0
    for obj, blob in new_notes.items():
        before = old_notes.get(obj)
        if before != blob:
            count += _lines_not_in(repo, repo[blob].data, before)
    return count


TAIL_SEARCH_LINES = 64  # up to this many appended lines are looked up in the old blob by search


def _lines_not_in(repo: pygit2.Repository, data: bytes, before: pygit2.Oid | None) -> int:
    """Distinct non-empty lines of blob content ``data`` that are not lines of blob
    ``before`` (none when None).

    When ``data`` appends to ``before`` (a fast-forward of a shard), the old blob is never
    read: its size comes from the object header, and ``data``'s prefix of that size is its
    content exactly when the git object id of that prefix (``sha1``/``sha256`` of
    ``blob <size>\\0<content>``, by the id's length) is ``before``; only the appended lines
    are split, and up to :data:`TAIL_SEARCH_LINES` of them are looked up in the prefix in
    one scan (:func:`_held_lines`) rather than splitting the whole shard. Inflating a 65 MB
    old shard (of a 1M-memory store) costs more than hashing the prefix."""
    size = repo.odb.read_header(before)[1] if before is not None else 0
    if 0 < size <= len(data) and data[size - 1:size] == b"\n":
        digest = hashlib.new("sha1" if len(str(before)) == 40 else "sha256",
                             b"blob %d\0" % size)
        digest.update(memoryview(data)[:size])
        if digest.hexdigest() == str(before):
            tail = {line for line in data[size:].split(b"\n") if line}
            if len(tail) > TAIL_SEARCH_LINES:
                return len(tail - set(data[:size].split(b"\n")))
            return len(tail - _held_lines(data, size, tail))
    old = repo[before].data if before is not None else b""
    lines = {line for line in data.split(b"\n") if line}
    return len(lines - set(old.split(b"\n")))


def _held_lines(data: bytes, size: int, lines: set[bytes]) -> set[bytes]:
    """Which of ``lines`` (non-empty, without newlines) are whole lines of ``data[:size]``,
    whose last byte is a newline. One regular-expression scan of the prefix for all of them:
    at each newline the candidates are tried in turn, and each fails within the first bytes
    its record differs in (the record id), so a 65 MB shard takes ~30 ms for 7 lines and
    ~65 ms for 64, where one ``bytes.find`` per line read the whole prefix each time (~24 ms
    a line not held). The first line of ``data`` has no newline before it and is compared
    apart."""
    held = {line for line in lines if data.startswith(line + b"\n")}
    pattern = re.compile(b"\n(" + b"|".join(re.escape(line) for line in lines) + b")(?=\n)")
    held.update(match.group(1) for match in pattern.finditer(data, 0, size))
    return held


def cat_sort_uniq(ours: bytes, theirs: bytes) -> bytes:
    """The note git's ``cat_sort_uniq`` strategy makes of two notes: every line of both,
    empty lines dropped, sorted by bytes, duplicates removed, each ending in a newline
    (git notes.c, ``combine_notes_cat_sort_uniq``)."""
    lines = {line for line in ours.split(b"\n") + theirs.split(b"\n") if line}
    return b"".join(line + b"\n" for line in sorted(lines))


def documents_fetch_refspec(remote: str, level: str = "distributed") -> str:
    """``+refs/ynm/<level>/documents/*:refs/ynm-remote/<remote>/<level>/documents/*``."""
    return (f"+{DOCUMENTS_PREFIX}/{level}/documents/*:"
            f"{DOCUMENTS_REMOTE_PREFIX}/{remote}/{level}/documents/*")


DocumentMerger = Callable[[str, str], str]


def fetch_refspec(remote: str, level: str = "distributed") -> str:
    """``+refs/notes/ynm/<level>/*:refs/notes/ynm-remote/<remote>/<level>/*``."""
    return f"+{NOTES_PREFIX}/{level}/*:{REMOTE_PREFIX}/{remote}/{level}/*"


class Transport:
    """Runs the ``git`` executable in a repository with ``YNM_SYNC_IN_PROGRESS=1``."""

    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir
        self.env = {**os.environ, "YNM_SYNC_IN_PROGRESS": "1"}

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run ``git --git-dir=<repo> <args>``.

        Raises:
            StoreError: git failed (with ``check``) or could not run.
        """
        try:
            proc = subprocess.run(["git", f"--git-dir={self.git_dir}", *args], check=False,
                                  env=self.env,
                                  capture_output=True, text=True, timeout=GIT_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise StoreError(f"git {args[0]} failed: {exc}") from exc
        if check and proc.returncode != 0:
            raise StoreError(f"git {' '.join(args[:1])} failed: {git_failure_line(proc)}")
        return proc

    def run_all(self, runs: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
        """Run ``git <args>`` for each of ``runs`` (unchecked), up to :data:`TRANSFER_JOBS`
        at once; their results in the order of ``runs``.

        Raises:
            StoreError: a git could not run.
        """
        if len(runs) <= 1:
            return [self.run(*args, check=False) for args in runs]
        from concurrent.futures import ThreadPoolExecutor  # brings logging: only here

        with ThreadPoolExecutor(min(TRANSFER_JOBS, len(runs))) as pool:
            return list(pool.map(lambda args: self.run(*args, check=False), runs))


@dataclass(frozen=True)
class FetchSpec:
    """Remote refs under ``source`` (``refs/notes/ynm/<level>/``) forced into the tracking refs
    under ``tracking`` with the same tail; ``per_ref``: a ref whose old tip this repository
    holds is fetched alone (shards, see the module docstring), else all in one fetch."""

    source: str
    tracking: str
    per_ref: bool = True


def fetch_changed(repo: pygit2.Repository, git: Transport, target: str,
                  specs: list[FetchSpec]) -> int:
    """Bring ``target``'s refs under each spec's ``source`` into its tracking refs, as the
    glob refspec ``+<source>*:<tracking>*`` would, transferring only what changed (module
    docstring): one ``git ls-remote``; a tip already held here moves its tracking ref without
    a transfer; refs new here (no old version to delta against) come in
    one ``git fetch`` together; every other changed ref of a ``per_ref`` spec (its tracking
    ref, or a local ref of the same name, is here) comes in its own ``git fetch``, so git's
    thin pack deltas its new note blob against its own old one.
    Tracking refs whose remote ref is gone are kept (as a fetch without ``--prune``).
    Up to :data:`TRANSFER_JOBS` of these fetches run at once (module docstring).

    Returns the number of ``git fetch`` runs (0 when nothing changed).

    Raises:
        StoreError: ``git fetch from <target> failed: <git's first line>`` when the remote
            cannot be listed or a fetch fails (an unreachable remote is never "up to date").
    """
    listing = git.run("ls-remote", target, *(f"{spec.source}*" for spec in specs), check=False)
    if listing.returncode != 0:
        raise StoreError(f"git fetch from {target} failed: {git_failure_line(listing)}")
    batch: list[str] = []
    alone: list[str] = []
    for line in listing.stdout.splitlines():
        sha, _, ref = line.partition("\t")
        spec = next((sp for sp in specs if ref.startswith(sp.source)), None)
        if spec is None or not ref[len(spec.source):]:
            continue
        tracking = spec.tracking + ref[len(spec.source):]
        try:
            old = repo.references.get(tracking)
        except (ValueError, pygit2.GitError):
            continue  # a name git would not take either
        if old is not None and str(old.target) == sha:
            continue
        refspec = f"+{ref}:{tracking}"
        if sha in repo:
            repo.references.create(tracking, pygit2.Oid(hex=sha), force=True)
        elif spec.per_ref and (old is not None or repo.references.get(ref) is not None):
            alone.append(refspec)  # an old version is here, by its tracking or local ref
        else:
            batch.append(refspec)
    runs = [batch] if batch else []
    runs += [[refspec] for refspec in alone]
    procs = git.run_all([["fetch", *FETCH_FLAGS, target, *refspecs] for refspecs in runs])
    failed = next((proc for proc in procs if proc.returncode != 0), None)
    if failed is not None:
        raise StoreError(f"git fetch from {target} failed: {git_failure_line(failed)}")
    return len(runs)


def lost_race(proc: subprocess.CompletedProcess[str]) -> bool:
    """Whether a failed ``git push --porcelain`` failed only because the remote moved since it
    was fetched (a ref marked ``[rejected]``: fetch first, non-fast-forward, a stale lease),
    which a fetch and merge mend. A ref the remote refused outright (``[remote rejected]``: a
    pre-receive hook, a protected ref) is never a race, so it is not retried."""
    out = proc.stdout or ""
    if _PORCELAIN_REFUSED.search(out):
        return False
    if _PORCELAIN_RACE.search(out):
        return True
    return bool(_REJECTED.search(proc.stderr or "")) and "remote rejected" not in (
        proc.stderr or "")


def push_failure(proc: subprocess.CompletedProcess[str]) -> str:
    """Why a ``git push --porcelain`` failed, on one line (:func:`git_failure_line`), led by
    the remote's refusal when it refused a ref (``the remote refused it (pre-receive hook
    declined): remote: <the hook's words>; error: failed to push some refs to '<url>'``)."""
    line = git_failure_line(proc)
    refused = _PORCELAIN_REFUSED.search(proc.stdout or "")
    if refused is not None:
        return f"the remote refused it ({refused.group(1)}): {line}"
    return line


def config_value(repo: pygit2.Repository, name: str) -> str | None:
    """A git config value of ``repo`` (e.g. ``remote.origin.url``), or None when unset."""
    try:
        return str(repo.config[name])
    except KeyError:
        return None


def fetch_shards(repo: pygit2.Repository, remote: str, level: str = "distributed") -> str | None:
    """Fetch ``remote``'s shards of ``level`` into the tracking refs
    ``refs/notes/ynm-remote/<remote>/<level>/*``, as the first step of a sync does (the same
    transport: the ``git`` executable, a mirror remote by its URL, :func:`fetch_changed`),
    merging nothing: ``ynm
    init`` uses it to learn the team's anchor from the notes (their tree path is the anchor,
    reference/storage.md §3.4) before choosing one.

    Returns None when the fetch ran (whether or not the remote holds any shard), else why
    not, on one line: the remote is not configured, or git's first error line (offline, no
    such repository, no access). Never raises.
    """
    url = config_value(repo, f"remote.{remote}.url")
    if not url:
        return f'remote "{remote}" is not configured'
    mirror = (config_value(repo, f"remote.{remote}.mirror") or "").lower() in GIT_TRUE
    git = Transport(str(repo.path))
    target = url if mirror else remote
    try:
        fetch_changed(repo, git, target, [FetchSpec(f"{NOTES_PREFIX}/{level}/",
                                                    f"{REMOTE_PREFIX}/{remote}/{level}/")])
    except StoreError as err:
        detail = str(err).removeprefix(f"git fetch from {target} failed: ")
        return detail.removeprefix("fatal: ").removeprefix("error: ")
    return None


def merge_shard(log: GitNotesLog, local_ref: str, remote_ref: str, local: str,
                remote: str) -> str:
    """Write the merge of two diverged notes commits (see the module docstring) and return the
    new commit id; no ref is moved.

    Per note path: the same blob on both sides, or a side equal to the merge base, takes the
    other side as is (as git does); notes changed on both sides are combined by
    :func:`cat_sort_uniq`.
    """
    repo = log.repo
    base_oid = repo.merge_base(local, remote)
    trees = [repo[local].peel(pygit2.Tree), repo[remote].peel(pygit2.Tree)]
    base_tree = repo[base_oid].peel(pygit2.Tree) if base_oid is not None else None
    notes = [_notes_by_object(t) for t in trees]
    base_notes = _notes_by_object(base_tree) if base_tree is not None else {}
    merged: dict[str, pygit2.Oid] = {}
    for obj in sorted(notes[0].keys() | notes[1].keys()):
        ours, theirs, base = notes[0].get(obj), notes[1].get(obj), base_notes.get(obj)
        if ours == theirs or theirs == base:
            pick = ours
        elif ours == base:
            pick = theirs
        elif ours is None or theirs is None:
            pick = ours or theirs
        else:
            data = cat_sort_uniq(repo[ours].data, repo[theirs].data)
            pick = write_blob(repo, log.common_dir / "objects", data)
        if pick is not None:
            merged[obj] = pick
    builder = repo.TreeBuilder()
    for obj, blob in merged.items():
        builder.insert(obj, blob, pygit2.enums.FileMode.BLOB)
    tree_id = builder.write()
    message = f"Merged notes from {remote_ref} into {local_ref}"
    return str(repo.create_commit(None, signature(repo, "AUTHOR"), signature(repo, "COMMITTER"),
                                  message, tree_id, [local, remote]))


def _notes_by_object(tree: pygit2.Tree, prefix: str = "") -> dict[str, pygit2.Oid]:
    """Annotated object id -> note blob, reading flat and fanned-out paths alike."""
    out: dict[str, pygit2.Oid] = {}
    for entry in tree:
        name = prefix + entry.name  # a fan-out path's parts join into the object id
        if isinstance(entry, pygit2.Tree):
            out.update(_notes_by_object(entry, name))
        else:
            out[name] = entry.id
    return out


def sync_log(
    log: GitNotesLog,
    remote: str,
    *,
    push: bool = True,
    pull: bool = True,
    dry_run: bool = False,
    before_push: Callable[[int], None] | None = None,
    after_merge: Callable[[], list[str]] | None = None,
    merge_documents: Mapping[str, DocumentMerger] | None = None,
) -> SyncResult:
    """Fetch, merge and push every shard of ``log``'s level with ``remote`` (module docstring).

    Args:
        log: the shard log (its level decides which refs move).
        remote: a remote name configured in the repository.
        push, pull, dry_run: as the ``ynm sync`` flags.
        before_push: test seam, called with the round number just before each push.
        after_merge: called (under the lock) after the first round's pull and after any round
            that moved a shard, before its push; the service uses it to re-apply purges that a
            merge brought back. It returns problems (text), reported under ``conflicts``.

    Raises:
        AnchorNotCommit: the log's anchor is no commit of its repository (nothing moves).
        StoreError: a git failure other than a rejected push (a push the remote refused
            outright, a fetch that failed); its ``result`` is this sync's
            :class:`SyncResult` up to the failure, with the error's message last under
            ``conflicts`` (what was fetched and merged before it stays).
    """
    log.check_writable()
    result = SyncResult(remote=remote)
    try:
        return _sync_log(log, remote, result, push=push, pull=pull, dry_run=dry_run,
                         before_push=before_push, after_merge=after_merge,
                         merge_documents=merge_documents)
    except YnmError as err:
        result.conflicts.append(str(err))
        err.result = result
        raise


def _sync_log(
    log: GitNotesLog,
    remote: str,
    result: SyncResult,
    *,
    push: bool,
    pull: bool,
    dry_run: bool,
    before_push: Callable[[int], None] | None,
    after_merge: Callable[[], list[str]] | None,
    merge_documents: Mapping[str, DocumentMerger] | None,
) -> SyncResult:
    """The body of :func:`sync_log`, filling ``result`` as it goes."""
    repo = log.repo
    git = Transport(str(log.common_dir))
    url = config_value(repo, f"remote.{remote}.url")
    if not url:
        # a bare store (the personal store in YNM_HOME, a shared one) is not the repository
        # the command runs in: name it, or the fix would add the remote to the wrong one
        where, flag = "", ""
        if repo.is_bare:
            path = repo.path.rstrip("/")
            where, flag = f" in {path}", f"-C {quote(path)} "
        result.skipped = (f'remote "{remote}" is not configured{where}; add it with '
                          f"`git {flag}remote add {remote} <url>` and sync again")
        return result
    mirror = (config_value(repo, f"remote.{remote}.mirror") or "").lower() in GIT_TRUE
    target = url if mirror else remote
    level = log.level
    local_prefix = f"{NOTES_PREFIX}/{level}/"
    tracking_prefix = f"{REMOTE_PREFIX}/{remote}/{level}/"
    if dry_run:
        return _dry_run(log, remote, target, result, push=push, pull=pull,
                        merge_documents=merge_documents or {})
    docs = _Documents(log, remote, merge_documents or {})
    snaps = _Snapshots(log, remote)
    if level == "distributed" and not mirror:
        spec = fetch_refspec(remote, level)
        if spec not in repo.remotes[remote].fetch_refspecs:
            repo.remotes.add_fetch(remote, spec)
            result.refspec_added = spec
    with log.lock():
        for round_ in range(MAX_ROUNDS):
            moved = pull and _pull(log, git, target, local_prefix, tracking_prefix, False,
                                   result, docs, snaps)
            if after_merge is not None and pull and (moved or round_ == 0):
                result.conflicts.extend(after_merge())
            if not push:
                return result
            local = refs_under(repo, local_prefix)
            doc_refs = docs.pushable()
            if not local and not doc_refs:
                return result  # git rejects a push of a pattern that matches nothing
            if before_push is not None:
                before_push(round_)
            # each shard the remote holds an older tip of goes alone (its thin pack is a delta
            # against its own old blob, module docstring); then one push of the rest, in which
            # those already pushed are up to date
            tracking = refs_under(repo, tracking_prefix)
            pushes = [[f"{ref}:{ref}"] for ref, sha in sorted(local.items())
                      if tracking.get(tracking_prefix + ref[len(local_prefix):]) not in (None, sha)]
            last = [f"{local_prefix}*:{local_prefix}*"] if local else []
            last += [f"{ref}:{ref}" for ref in doc_refs]  # never forced
            pushes.append(last)
            rejected = False
            # the single shards side by side (as fetches are), then the rest
            for batch in (pushes[:-1], pushes[-1:]):
                for proc in git.run_all([["push", "--porcelain", target, *specs]
                                         for specs in batch]):
                    if proc.returncode == 0:
                        _count_pushed(repo, proc.stdout, local, result)
                        docs.count_pushed(proc.stdout, result)
                    elif lost_race(proc):
                        _count_pushed(repo, proc.stdout, local, result)  # what did go through
                        rejected = True
                    else:
                        raise StoreError(f"git push to {remote} failed: {push_failure(proc)}")
            if not rejected:
                snaps.push(git, target, result)
                return result
            result.retries += 1
    result.conflicts.append(f"push to {remote} still rejected after {MAX_ROUNDS} rounds")
    return result


def _dry_run(log: GitNotesLog, remote: str, target: str, result: SyncResult, *,
             push: bool, pull: bool, merge_documents: Mapping[str, DocumentMerger]
             ) -> SyncResult:
    """What a sync of ``log`` with ``remote`` would fetch and push, changing no ref, note,
    object or configuration of the store (``ynm sync --dry-run``).

    The sync runs in a throwaway copy of the store: a bare repository in a temporary folder
    whose object database borrows the store's (``objects/info/alternates``) and whose
    configuration includes the store's (so the remote, its URL rewrites, credential helpers
    and SSH command are the same), holding copies of the level's shard, document and
    snapshot refs and their tracking refs. The copy fetches from the remote as a sync does
    (:func:`fetch_changed`; what the fetch brings lands in the copy's objects) and, with
    ``pull``, merges its shards and documents as a sync does; its snapshots report what they
    would do (warnings say "would"). Then, with ``push``, each shard whose tip the remote
    (as just listed) does not hold and that does not lie behind the remote's is listed under
    ``pushed`` with the records the remote lacks (:func:`new_records` against the remote's
    tip), each document likewise under ``documents_pushed``, each snapshot the push would
    send under ``snapshots_pushed``. Without ``pull``, a shard or document behind or apart
    from the remote's would be rejected: a warning names it. The purges a real sync
    re-applies after a merge are not re-applied. The folder is removed on return.

    Raises:
        StoreError: the remote cannot be listed or fetched from (git's first line).
    """
    import tempfile

    if not (push or pull):
        return result
    level = log.level
    local_prefix = f"{NOTES_PREFIX}/{level}/"
    tracking_prefix = f"{REMOTE_PREFIX}/{remote}/{level}/"
    with tempfile.TemporaryDirectory(prefix="ynm-sync-dry-run-") as tmp:
        copy = _store_copy(log, remote, Path(tmp) / "store.git")
        git = Transport(str(copy.common_dir))
        docs = _Documents(copy, remote, merge_documents)
        snaps = _Snapshots(copy, remote)
        if pull:
            _pull(copy, git, target, local_prefix, tracking_prefix, False, result, docs,
                  snaps, snapshots_dry_run=True)
        else:  # learn the remote's tips only
            fetch_changed(copy.repo, git, target, [
                FetchSpec(local_prefix, tracking_prefix),
                FetchSpec(docs.local_prefix, docs.tracking_prefix, per_ref=False),
                FetchSpec(snaps.local_prefix, snaps.tracking_prefix, per_ref=False)])
        if push:
            _would_push(copy, local_prefix, tracking_prefix, docs, pull, result)
            snaps.push(git, target, result, dry_run=True)
        copy.repo.free()
    return result


def _store_copy(log: GitNotesLog, remote: str, path: Path) -> GitNotesLog:
    """The throwaway copy of ``log``'s store at ``path`` that :func:`_dry_run` syncs: a bare
    repository of the same object format borrowing the store's objects, including its
    configuration, with copies of the level's refs under ``refs/notes/ynm/<level>/``,
    ``refs/ynm/<level>/`` and ``remote``'s tracking refs of both."""
    repo = log.repo
    fmt = "sha256" if len(log.anchor) == 64 else "sha1"  # the anchor is a commit id
    made = subprocess.run(["git", "init", "-q", "--bare", f"--object-format={fmt}", str(path)],
                          capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    if made.returncode != 0:
        raise StoreError(f"git init of a dry run's copy failed: {git_failure_line(made)}")
    objects = (log.common_dir / "objects").resolve()
    (path / "objects" / "info").mkdir(parents=True, exist_ok=True)
    (path / "objects" / "info" / "alternates").write_text(f"{objects}\n")
    own = (path / "config").read_text()
    # the store's settings first, the copy's own (bare, object format) after them, so they win
    (path / "config").write_text(
        f"[include]\n\tpath = {(log.common_dir / 'config').resolve()}\n" + own)
    level = log.level
    refs: dict[str, str] = {}
    for prefix in (f"{NOTES_PREFIX}/{level}/", f"{REMOTE_PREFIX}/{remote}/{level}/",
                   f"{DOCUMENTS_PREFIX}/{level}/", f"{DOCUMENTS_REMOTE_PREFIX}/{remote}/{level}/"):
        refs.update(refs_under(repo, prefix))
    # one packed-refs file rather than a file per ref: a large store has thousands of shards
    (path / "packed-refs").write_text("# pack-refs with: peeled fully-peeled sorted \n" + "".join(
        f"{sha} {ref}\n" for ref, sha in sorted(refs.items(), key=lambda item: item[0].encode())))
    copy = GitNotesLog(path, level=level, anchor=log.anchor, mount_id=log.mount_id)
    copy.pack_after_bytes = None
    return copy


def _would_push(copy: GitNotesLog, local_prefix: str, tracking_prefix: str, docs: _Documents,
                pulled: bool, result: SyncResult) -> None:
    """Add to ``result`` the shards and documents of ``copy`` a push would move (see
    :func:`_dry_run`), each with the records the remote's tip lacks."""
    repo = copy.repo
    tracking = refs_under(repo, tracking_prefix)
    for ref, sha in sorted(refs_under(repo, local_prefix).items()):
        theirs = tracking.get(tracking_prefix + ref[len(local_prefix):])
        if theirs == sha or (theirs is not None and copy.is_ancestor(sha, theirs)):
            if theirs != sha and not pulled:
                result.warnings.append(
                    f"{ref}: the remote holds records this clone lacks, so a push without "
                    "a pull would be rejected; sync without --no-pull")
            continue  # the remote holds all of it
        if theirs is not None and not copy.is_ancestor(theirs, sha):
            if not pulled:
                result.warnings.append(
                    f"{ref}: this clone and the remote both hold records the other lacks, so "
                    "a push without a pull would be rejected; sync without --no-pull")
            continue
        result.pushed.append(ref)
        result.pushed_records += new_records(repo, sha, theirs)
    for ref in docs.pushable():
        name = ref[len(docs.local_prefix):]
        sha = refs_under(repo, ref).get(ref)
        theirs = refs_under(repo, docs.tracking_prefix + name).get(docs.tracking_prefix + name)
        if sha is None or theirs == sha or (theirs is not None
                                             and not copy.is_ancestor(theirs, sha)):
            if theirs is not None and sha is not None and theirs != sha and not pulled:
                result.warnings.append(
                    f"{ref}: the remote's copy has changes this clone lacks, so a push "
                    "without a pull would be rejected; sync without --no-pull")
            continue
        result.documents_pushed.append(name)


def _pull(log: GitNotesLog, git: Transport, target: str, local_prefix: str,
          tracking_prefix: str, dry_run: bool, result: SyncResult,
          docs: _Documents | None = None, snaps: _Snapshots | None = None,
          snapshots_dry_run: bool = False) -> bool:
    """Fetch the remote's shards (and named documents) into the tracking refs and bring each
    into its local shard (document), adding what moved to ``result`` (a shard counted once
    however many rounds move it). Returns True when a local shard moved (or would, in a dry
    run). ``snapshots_dry_run``: report what the snapshots would do and move none (the dry
    run's copy of the store, :func:`_dry_run`, merges its shards but never its snapshots, so
    its warnings say "would")."""
    repo = log.repo
    specs = [FetchSpec(local_prefix, tracking_prefix)]
    if docs is not None:
        specs.append(FetchSpec(docs.local_prefix, docs.tracking_prefix, per_ref=False))
    if snaps is not None:
        specs.append(FetchSpec(snaps.local_prefix, snaps.tracking_prefix, per_ref=False))
    fetch_changed(repo, git, target, specs)
    if docs is not None:
        docs.reconcile(dry_run, result)
    moved = False
    for tref, tsha in sorted(refs_under(repo, tracking_prefix).items()):
        lref = local_prefix + tref[len(tracking_prefix):]
        if key_from_ref(lref) is None:
            continue
        lsha = log._ref_target(lref)
        if lsha == tsha or (lsha is not None and repo.descendant_of(lsha, tsha)):
            continue  # nothing new, or local is ahead: the push brings the remote up
        forward = lsha is None or repo.descendant_of(tsha, lsha)
        if dry_run:
            new = tsha
        elif forward:
            new = tsha
            if not log._compare_and_swap(lref, lsha, pygit2.Oid(hex=tsha),
                                         f"ynm sync: fast-forward from {tref}"):
                result.conflicts.append(f"{lref}: moved during sync")
                continue
        else:
            new = merge_shard(log, lref, tref, lsha, tsha)
            if not log._compare_and_swap(lref, lsha, pygit2.Oid(hex=new),
                                         f"ynm sync: merged {tref}"):
                result.conflicts.append(f"{lref}: moved during sync")
                continue
        moved = True
        result.fetched_records += new_records(repo, tsha, lsha)
        if lref not in result.fetched:
            result.fetched.append(lref)
        kind = result.fast_forwarded if forward else result.merged
        if lref not in kind:
            kind.append(lref)
    result.fetched.sort()
    result.fast_forwarded.sort()
    result.merged.sort()
    if snaps is not None:
        snaps.reconcile(dry_run or snapshots_dry_run, result)
    return moved


class _Snapshots:
    """The snapshots of one sync (module docstring): which copy of each wins, which local
    ones are replaced or dropped, and which are pushed. Only a usable snapshot
    (:func:`ynm.store.snapshots.check_snapshot` against the local shard tips) is ever taken
    or pushed."""

    def __init__(self, log: GitNotesLog, remote: str) -> None:
        self.log = log
        self.local_prefix = snapshots_prefix(log.level)
        self.tracking_prefix = snapshots_tracking_prefix(remote, log.level)

    def _check(self, ref: str, tips: dict[str, str]
               ) -> tuple[Snapshot | None, str | None, bool]:
        """``(snapshot, why it is unusable or None, damaged)``: ``damaged`` when the snapshot
        itself is unusable (:func:`check_snapshot` without tips), False when it only does not
        fit ``tips`` (a remote's copy whose notes a pull has not brought)."""
        found, why = check_snapshot(self.log.repo, ref)
        if why is not None or found is None:
            return found, why, why is not None
        unfit = fits(self.log.repo, found.meta, tips)
        if unfit is not None:
            return found, f"snapshot {ref} does not match the notes ({unfit})", False
        return found, None, False

    def reconcile(self, dry_run: bool, result: SyncResult) -> None:
        """Per snapshot name, local against fetched copy: an unusable local one is replaced by
        the remote's usable one, or dropped when the remote has none (a warning each, naming
        the ref and why); of two usable ones the winner (:func:`_wins`) stays or is taken, so
        the losing clone stops pushing; a damaged remote copy is said once and replaced by
        the next push of a usable local one."""
        log, repo = self.log, self.log.repo
        tips = {ref: tip.commit for ref, tip in log.tips().items()}
        tracking = refs_under(repo, self.tracking_prefix)
        local = refs_under(repo, self.local_prefix)
        names = sorted({r[len(self.tracking_prefix):] for r in tracking}
                       | {r[len(self.local_prefix):] for r in local})
        for name in names:
            tref, lref = self.tracking_prefix + name, self.local_prefix + name
            tsha, lsha = tracking.get(tref), local.get(lref)
            if lsha is not None and lsha == tsha:
                why = self._check(lref, tips)[1]
                if why is not None:  # the remote holds the same copy: drop it here
                    self._drop(lref, lsha, why, "the remote holds the same copy", dry_run,
                               result)
                continue
            theirs, their_why, damaged = self._check(tref, tips) if tsha else (None, None, False)
            ours, our_why, _ = self._check(lref, tips) if lsha else (None, None, False)
            if damaged and their_why is not None:
                then = ("the local one replaces it" if ours is not None and our_why is None
                        else "`ynm compact` writes a new one, which the next sync pushes")
                result.warnings.append(
                    f"the remote's {their_why.replace(tref, lref, 1)}; it is not taken; {then}")
            if theirs is None or their_why is not None:
                if lsha is not None and our_why is not None:
                    self._drop(lref, lsha, our_why, "the remote has no usable copy", dry_run,
                               result)
                continue
            if ours is not None and our_why is None and not _wins(theirs, ours):
                continue  # ours stays, and the push replaces the remote's
            if our_why is not None:
                done = "the remote's copy would replace it" if dry_run else \
                    "replaced by the remote's copy"
                result.warnings.append(f"{our_why}; {done}")
            if not dry_run and not compare_and_swap(repo, lref, lsha, pygit2.Oid(hex=tsha),
                                                    f"ynm sync: snapshot from {tref}"):
                continue
            if name not in result.snapshots_fetched:
                result.snapshots_fetched.append(name)

    def _drop(self, lref: str, lsha: str, why: str, because: str, dry_run: bool,
              result: SyncResult) -> None:
        """Delete the unusable local snapshot ``lref`` (compare-and-swap on ``lsha``), with a
        warning naming it, why, and what mends it."""
        if dry_run or compare_and_swap(self.log.repo, lref, lsha, None,
                                       "ynm sync: drop an unusable snapshot"):
            done = "would be dropped" if dry_run else "is dropped"
            result.warnings.append(f"{why}; {because}, so it {done} here and never pushed; "
                                   "`ynm compact` writes a new one")

    def push(self, git: Transport, target: str, result: SyncResult,
             dry_run: bool = False) -> None:
        """Push each usable local snapshot (checked against the local shard tips) that the
        remote (as last fetched) lacks, or holds an unusable or losing copy of, leased on
        that copy; a lost lease (another clone pushed one since) is left for the next sync to
        reconcile. An unusable local snapshot is never pushed. ``dry_run``: list under
        ``snapshots_pushed`` what would be pushed, and push nothing.

        Raises:
            StoreError: the push failed for another reason than a rejection.
        """
        repo = self.log.repo
        tips = {ref: tip.commit for ref, tip in self.log.tips().items()}
        tracking = refs_under(repo, self.tracking_prefix)
        for lref, lsha in sorted(refs_under(repo, self.local_prefix).items()):
            name = lref[len(self.local_prefix):]
            tref = self.tracking_prefix + name
            seen = tracking.get(tref)
            if seen == lsha:
                continue
            ours, why, _ = self._check(lref, tips)
            if ours is None or why is not None:
                continue
            if seen is not None:
                theirs, their_why, _ = self._check(tref, tips)
                if theirs is not None and their_why is None and _wins(theirs, ours):
                    continue  # the remote's is the winner: the next pull takes it
            if dry_run:
                result.snapshots_pushed.append(name)
                continue
            proc = git.run("push", "--porcelain", f"--force-with-lease={lref}:{seen or ''}",
                           target, f"{lref}:{lref}", check=False)
            if proc.returncode == 0:
                repo.references.create(tref, pygit2.Oid(hex=lsha), force=True)
                result.snapshots_pushed.append(name)
            elif not lost_race(proc):  # a lost lease: "[rejected] (stale info)"
                raise StoreError(f"git push of {lref} failed: {push_failure(proc)}")


def _wins(a: Snapshot, b: Snapshot) -> bool:
    """Whether usable snapshot ``a`` beats ``b``: the newer (``createdAt``), the commit id
    breaking a tie, so two clones always pick the same one and stop replacing each other's."""
    return (a.meta.created_at, a.commit) > (b.meta.created_at, b.commit)


class _Documents:
    """The named documents of one sync: where they are fetched to, how each is reconciled
    with its tracking copy, and which are pushed (module docstring)."""

    def __init__(self, log: GitNotesLog, remote: str,
                 mergers: Mapping[str, DocumentMerger]) -> None:
        self.log = log
        self.local_prefix = f"{DOCUMENTS_PREFIX}/{log.level}/documents/"
        self.tracking_prefix = f"{DOCUMENTS_REMOTE_PREFIX}/{remote}/{log.level}/documents/"
        self.fetch_spec = f"+{self.local_prefix}*:{self.tracking_prefix}*"
        self.mergers = mergers
        self.conflicted: set[str] = set()

    def reconcile(self, dry_run: bool, result: SyncResult) -> None:
        """Bring each fetched document into the local one; record what moved in ``result``
        and each failure under ``conflicts`` (``documents/<name>: <why>``)."""
        log, repo = self.log, self.log.repo
        for tref, tsha in sorted(refs_under(repo, self.tracking_prefix).items()):
            name = tref[len(self.tracking_prefix):]
            lref = self.local_prefix + name
            lsha = log._ref_target(lref)
            if lsha == tsha or (lsha is not None and log.is_ancestor(tsha, lsha)):
                continue  # the same, or the remote is behind: the push brings it up
            forward = lsha is None or log.is_ancestor(lsha, tsha)
            if dry_run:
                self._moved(name, forward, result)
                continue
            if forward:
                new = tsha
                message = f"ynm sync: fast-forward from {tref}"
            else:
                merger = self.mergers.get(name)
                if merger is None:
                    self._conflict(name, "changed here and on the remote, and ynm has no "
                                         "merge rule for it; kept the local copy", result)
                    continue
                try:
                    ours = log.document_text_at(lsha, name) or ""
                    theirs = log.document_text_at(tsha, name) or ""
                    text = merger(ours, theirs)
                except Exception as exc:  # noqa: BLE001 - a bad copy never stops the sync
                    self._conflict(name, f"cannot merge ({exc}); kept the local copy", result)
                    continue
                new = log.document_commit(name, text, [lsha, tsha],
                                          f"ynm: merge document {name}")
                message = f"ynm: merge document {name}"
            if not log._compare_and_swap(lref, lsha, pygit2.Oid(hex=new), message):
                self._conflict(name, "moved during sync", result)
                continue
            self._moved(name, forward, result)

    def _moved(self, name: str, forward: bool, result: SyncResult) -> None:
        if name not in result.documents_fetched:
            result.documents_fetched.append(name)
        if not forward and name not in result.documents_merged:
            result.documents_merged.append(name)

    def _conflict(self, name: str, why: str, result: SyncResult) -> None:
        self.conflicted.add(name)
        text = f"documents/{name}: {why}"
        if text not in result.conflicts:
            result.conflicts.append(text)

    def pushable(self) -> list[str]:
        """The local document refs to push: all but the conflicted ones."""
        refs = refs_under(self.log.repo, self.local_prefix)
        return sorted(ref for ref in refs
                      if ref[len(self.local_prefix):] not in self.conflicted)

    def count_pushed(self, porcelain: str, result: SyncResult) -> None:
        """Add the documents ``git push --porcelain`` moved to ``result``."""
        for line in porcelain.splitlines():
            parts = line.split("\t")
            if len(parts) != 3 or parts[0] not in (" ", "*", "+"):
                continue
            ref = parts[1].split(":", 1)[0]
            if ref.startswith(self.local_prefix):
                name = ref[len(self.local_prefix):]
                if name not in result.documents_pushed:
                    result.documents_pushed.append(name)


def _count_pushed(repo: pygit2.Repository, porcelain: str, local: dict[str, str],
                  result: SyncResult) -> None:
    """Read ``git push --porcelain`` output: every ref line not flagged ``=`` (up to date)
    moved the remote; its records are those of the local tip that the old remote tip (the
    ``old..new`` summary, absent for a new ref) did not hold."""
    for line in porcelain.splitlines():
        parts = line.split("\t")
        if len(parts) != 3 or parts[0] not in (" ", "*", "+"):
            continue
        ref = parts[1].split(":", 1)[0]
        sha = local.get(ref)
        if sha is None:
            continue
        old = None
        if ".." in parts[2]:
            try:
                old = str(repo.revparse_single(parts[2].split("..", 1)[0].strip()).id)
            except (KeyError, ValueError, pygit2.GitError):
                old = None
        result.pushed.append(ref)
        result.pushed_records += new_records(repo, sha, old)
    result.pushed.sort()


def unmerged_shards(log: GitNotesLog, remote: str) -> list[str]:
    """Tracking refs of ``remote`` (``refs/notes/ynm-remote/<remote>/<level>/...``, filled by
    ``git fetch`` once ``ynm init`` added the fetch refspec) that hold records the local shard
    lacks: the local shard is missing, or its tip is neither the tracking tip nor a descendant
    of it. One pass over the ref names; a history walk only for shards whose tips differ.
    Returns the tracking ref names, sorted. Source: docs/cli.md "ynm list" (the unmerged
    note)."""
    tracking_prefix = f"{REMOTE_PREFIX}/{remote}/{log.level}/"
    local_prefix = f"{NOTES_PREFIX}/{log.level}/"
    # read from the ref files when they can say (no repository opened: ynm.store.libgit)
    tracking = read_refs(log.common_dir, tracking_prefix)
    local = read_refs(log.common_dir, local_prefix) if tracking else {}
    if tracking is None or local is None:
        tracking = refs_under(log.repo, tracking_prefix)
        local = None
    out = []
    for tref, tsha in sorted(tracking.items()):
        lref = local_prefix + tref[len(tracking_prefix):]
        if key_from_ref(lref) is None:
            continue
        lsha = log._ref_target(lref) if local is None else local.get(lref)
        if lsha == tsha:
            continue
        try:
            if lsha is not None and log.repo.descendant_of(lsha, tsha):
                continue
        except (KeyError, ValueError, pygit2.GitError):
            pass  # an object missing: report it, sync sorts it out
        out.append(tref)
    return out
