"""Doctor checks of the stores: each mount's health and anchor object, stores that could not
be opened, and hosted stores' sign-ins (reference/cli.md §4.4 items 4 and 6, reference/storage.md
§3.10). Reading a store's bad lines reuses what its cache recorded for every shard the cache is
in step with, and parses only the other shards' blobs, so doctor stays quick on a large store
and never refreshes the cache."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ynm.doctor import Check, check
from ynm.index.inspect import CacheFacts, inspect_cache


@dataclass
class StoreFacts:
    """One open mount as doctor sees it: its ``cache`` (:class:`CacheFacts`), its shard
    ``tips``, the ``bad_lines`` of its shards (``(ref, line, message)``), the bytes of its
    records (``raw_bytes``: the shards' note blobs), and the store ``details`` of the health
    report (``repo``, ``anchor``, ``remote``, ``anchorPresent``, ``shards``, ``badLines``)."""

    mount: Any
    cache: CacheFacts
    tips: dict[str, Any] = field(default_factory=dict)
    bad_lines: list[tuple[str, int, str]] = field(default_factory=list)
    raw_bytes: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    shallow: bool = False


def store_facts(mount: Any) -> StoreFacts:
    """Gather :class:`StoreFacts` for an open mount (:class:`ynm.service.mounts.Mount`),
    reading its refs, its cache file (read-only) and the blobs of shards the cache has not
    seen. A store that cannot be read gives ``error``."""
    from ynm.errors import YnmError
    from ynm.model.jsonl import parse_jsonl

    facts = StoreFacts(mount, inspect_cache(mount.cache_path, verify=True))
    log = mount.log
    try:
        details = log.health_details()
        facts.tips = log.tips()
        usable = facts.cache.current_schema and facts.cache.anchor == log.anchor
        cached_problems: dict[str, list[tuple[str, int, str]]] = {}
        for p in facts.cache.problems:
            cached_problems.setdefault(p[0], []).append(p)
        for ref, tip in facts.tips.items():
            if usable and facts.cache.shards.get(ref) == tip.commit:
                facts.bad_lines += cached_problems.get(ref, [])
                facts.raw_bytes += facts.cache.shard_bytes.get(ref, 0)
                continue
            blob_id = log.note_blob_id(tip.commit)
            data = log.read_blob(blob_id) if blob_id else b""
            facts.raw_bytes += len(data)
            facts.bad_lines += [(ref, p.line, p.message) for p in parse_jsonl(data).problems]
    except YnmError as err:
        facts.error = str(err)
        return facts
    facts.shallow = bool(details.get("shallow"))
    facts.details = {"repo": details["repo"], "anchor": details["anchor"],
                     **({"remote": mount.remote} if mount.remote else {}),
                     "anchorPresent": details["anchorPresent"], "shards": details["shards"],
                     "badLines": len(facts.bad_lines)}
    return facts


def mount_checks(facts: StoreFacts) -> list[Check]:
    """``mount <id> (<provider>)``: ok with ``<location>: <details as compact JSON>``, or an
    error naming why the store cannot be read; then, for a git-notes store whose anchor
    object is not here, ``mount <id> anchor object``: in a shallow clone (git's own answer,
    :func:`ynm.store.repo.is_shallow`) ok, warn, ``not present locally (shallow clone);
    plumbing does not need it`` as the reference; in a store that is not shallow, which then
    holds no history of its own (a ``git init --bare`` copy of an org store, reference/storage.md
    §3.12), ok, info, saying so (the reference calls every absent anchor a shallow clone); or
    an error when the configured anchor is no commit of a full clone
    (:attr:`ynm.service.mounts.Mount.anchor_problem`). Bad lines do not fail the mount (the
    reference fails it): they are skipped on every read and reported by the ``bad lines
    <id>`` check."""
    m = facts.mount
    name = f"mount {m.id} ({m.provider})"
    if facts.error is not None:
        return [check(name, False, facts.error)]
    out = [check(name, True, f"{m.location}: "
                 f"{json.dumps(facts.details, separators=(',', ':'), ensure_ascii=False)}")]
    problem = getattr(m, "anchor_problem", None)
    if problem is not None:
        # a configured anchor that is no commit here: the mount refuses writes
        out.append(check(f"mount {m.id} anchor object", False, problem,
                         fix=getattr(m, "anchor_hint", "") or "ynm init"))
    elif m.provider == "git-notes" and facts.details.get("anchorPresent") is False:
        if facts.shallow:
            out.append(check(f"mount {m.id} anchor object", True,
                             "not present locally (shallow clone); plumbing does not need it",
                             "warn"))
        else:
            out.append(check(f"mount {m.id} anchor object", True,
                             "not present locally (the store holds notes only, no history of "
                             "its own); plumbing does not need it"))
    return out


def problem_check(problem: Any) -> Check:
    """``mount <id> (<provider>)`` (error) for a configured mount that could not be opened
    (:class:`ynm.service.mounts.MountProblem`), with the command that fixes it where one
    does: for a path that holds no repository, correcting the mount's ``path`` if it is
    mistyped, else ``ynm init --bare <path>`` to make a store there; ``git fetch --unshallow``
    for a shallow clone without an anchor."""
    error = problem.error
    fix = None
    if "shallow clone" in error:
        fix = "git fetch --unshallow"
    elif error.startswith("not a git repository") and problem.id not in ("personal", "project"):
        # a mistyped path is likelier than a store never made: name both, the path first
        fix = (f"correct \"path\" of mount {problem.id} in the configuration if it is "
               f"mistyped; to make a new store there: ynm init --bare {problem.location}")
    return check(f"mount {problem.id} ({problem.provider})", False, error, fix=fix)


def personal_not_created(path: str) -> Check:
    """``mount personal (git-notes)`` before the personal store exists: ok (doctor does not
    create it; the first personal write does)."""
    return check("mount personal (git-notes)", True,
                 f"{path}: not created yet; the first personal write creates it")


def personal_broken(path: str, why: str) -> Check:
    """``mount personal (git-notes)`` (error) when the personal store's path holds something
    that is not a repository."""
    return check("mount personal (git-notes)", False,
                 f"{why}; move it away (the next personal write creates the store there) or "
                 "set personalStore in ~/.ynm/config.json")


def hosted_checks(remotes: list[Any]) -> list[Check]:
    """``mount <id> (mcp)`` per hosted store (:class:`ynm.service.remote.RemoteMount`), from
    its sign-in file only (offline): ok/info ``<url>, signed in``, else warn ``<url>: not
    signed in; run `ynm login <id>``` (a damaged sign-in file adds what is wrong with it); a
    sign-in file other users can read is a warning whose fix is the ``chmod`` that closes
    it."""
    out = []
    for r in remotes:
        name = f"mount {r.id} (mcp)"
        if r.token and r.problem:  # signed in, but the token file is readable by others
            fix = r.problem.rpartition("run `")[2].rstrip("`") if "run `" in r.problem else None
            out.append(check(name, False, f"{r.url}, signed in, but {r.problem}", "warn",
                             fix=fix))
        elif r.token:
            out.append(check(name, True, f"{r.url}, signed in"))
        else:
            why = f" ({r.problem})" if r.problem else ""
            out.append(check(name, False, f"{r.url}: not signed in; run `ynm login {r.id}`{why}",
                             "warn", fix=f"ynm login {r.id}"))
    return out
