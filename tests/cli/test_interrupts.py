"""Ctrl-C part way through a long command: exit 130 and one ``Error: interrupted; <what was
kept>; <what to do>`` line (docs/cli.md, exit codes). ``ynm import``'s is in test_import.py."""

from __future__ import annotations

import importlib
import json

import pytest

from .conftest import make_record

NOTHING_LOST = ("run `ynm reindex` again, or let the next command catch up (memories live in "
                "git notes: nothing is lost)")


def interrupt_on(monkeypatch: pytest.MonkeyPatch, target: str, call: int) -> None:
    """Make the ``call``-th call (1 = the first) and later ones of ``target`` (``module.attr`` or
    ``module.Class.method``) raise KeyboardInterrupt, as Ctrl-C would there; earlier calls
    run as usual."""
    module, _, name = target.rpartition(".")
    try:
        holder = importlib.import_module(module)
    except ModuleNotFoundError:  # module.Class.method
        module, _, cls = module.rpartition(".")
        holder = getattr(importlib.import_module(module), cls)
    real = getattr(holder, name)
    calls = []

    def stopping(*args, **kwargs):
        calls.append(1)
        if len(calls) >= call:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(holder, name, stopping)


def test_reindex_names_the_caches_rebuilt_and_the_one_left_as_it_was(project, cli_run, load,
                                                                     monkeypatch):
    load(make_record(), make_record(level="distributed", namespace="common"))
    interrupt_on(monkeypatch, "ynm.index.cache.MountCache.rebuild", 2)
    result = cli_run("reindex")
    assert result.exit_code == 130
    assert result.stdout == ""
    assert result.stderr == ("Error: interrupted; rebuilt: personal; project's cache is as it "
                             f"was before; {NOTHING_LOST}\n")
    # the next command reads both mounts (a read refreshes; it does not call rebuild)
    assert len(json.loads(cli_run("recall", "--json").stdout)) == 2


def test_reindex_stopped_while_embedding_says_the_cache_is_rebuilt(project, cli_run, load,
                                                                    monkeypatch):
    load(make_record())
    interrupt_on(monkeypatch, "ynm.service.ynm.Ynm._vectors_current", 1)
    result = cli_run("reindex", "--mount", "personal")
    assert result.exit_code == 130
    assert result.stderr == ("Error: interrupted; personal's cache is rebuilt, the next recall "
                             f"embeds what is left; {NOTHING_LOST}\n")


def test_compact_names_the_snapshots_written(project, cli_run, load, monkeypatch, git):
    load(make_record(), make_record(level="distributed", namespace="common"))
    interrupt_on(monkeypatch, "ynm.compact.compact_mount", 2)
    result = cli_run("compact")
    assert result.exit_code == 130
    assert result.stderr == ("Error: interrupted; personal's snapshot is done; project's was not "
                             "written (the notes are never changed by compact); run `ynm "
                             "compact` again to write the rest\n")
    assert git(project, "for-each-ref", "refs/ynm") == ""  # project's snapshot: none


def test_sync_says_what_the_mount_it_stopped_in_kept(project, cli_run, load, monkeypatch, git,
                                                      tmp_path):
    load(make_record(level="distributed", namespace="common"))
    git(tmp_path, "init", "-q", "--bare", str(tmp_path / "origin.git"))
    git(project, "remote", "add", "origin", str(tmp_path / "origin.git"))
    interrupt_on(monkeypatch, "ynm.store.sync.sync_log", 1)
    result = cli_run("sync")
    assert result.exit_code == 130
    assert result.stderr == (
        "Error: interrupted; project stopped part way: what it fetched and merged is kept (each "
        "shard moves with one ref update), and a push that did not finish leaves the remote as "
        "it was or partly updated; run `ynm sync` again to finish\n")
    result = cli_run("sync", "--dry-run")  # the same stop in a dry run changed nothing
    assert result.exit_code == 130
    assert result.stderr == ("Error: interrupted; nothing was changed (dry run); run `ynm sync` "
                             "again to finish\n")


def test_dream_says_its_changes_are_kept(project, cli_run, load, monkeypatch):
    load(make_record())
    interrupt_on(monkeypatch, "ynm.dream.engine.run_dream", 1)
    result = cli_run("dream")
    assert result.exit_code == 130
    assert result.stderr == (
        "Error: interrupted; the changes written before it are kept (each is its own record); "
        "run `ynm dream` again to finish: the memories this run did not mark as dreamed are "
        "judged again\n")
    result = cli_run("dream", "--dry-run")
    assert result.stderr == ("Error: interrupted; nothing was written (dry run); run the dry "
                             "run again for its report\n")


def test_ctrl_c_elsewhere_keeps_the_short_message(project, cli_run, monkeypatch):
    interrupt_on(monkeypatch, "ynm.service.ynm.Ynm.status", 1)
    result = cli_run("status")
    assert result.exit_code == 130
    assert result.stderr == "Error: interrupted\n"
