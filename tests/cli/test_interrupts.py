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


def _records(cli_run) -> list[dict]:
    return [json.loads(line) for line in cli_run("export").stdout.splitlines()]


def test_dream_json_stopped_by_ctrl_c_prints_the_passes_that_ended(project, cli_run, load,
                                                                   monkeypatch):
    """``ynm dream --json`` stopped in a pass prints the report of the passes before it, says
    where it stopped and that that pass wrote nothing (it queues its writes until it ends),
    and writes no dream marks, so the next run judges everything again."""
    load(make_record(), make_record(content="Deploys go out on Tuesdays."))
    before = _records(cli_run)
    interrupt_on(monkeypatch, "ynm.dream.passes.dedupe", 1)
    result = cli_run("dream", "--json")
    assert result.exit_code == 130
    assert result.stderr.startswith("Error: interrupted; the changes written before it are kept")
    report = json.loads(result.stdout)
    assert list(report["passes"]) == ["expire", "retention", "promote"]
    assert report["full"]["stopped"] == {"pass": "dedupe", "written": "nothing"}
    assert report["full"]["dreamed"] == 0 and report["dryRun"] is False
    assert _records(cli_run) == before  # no marks, nothing of dedupe


def test_dream_json_stopped_while_writing_says_part_may_be_written(project, cli_run, load,
                                                                   monkeypatch):
    load(make_record())
    interrupt_on(monkeypatch, "ynm.dream.engine.mark_dreamed", 1)
    result = cli_run("dream", "--json")
    assert result.exit_code == 130
    report = json.loads(result.stdout)
    assert list(report["passes"]) == ["expire", "retention", "promote", "dedupe", "contradict", "reflect",
                                      "normalise"]
    assert report["full"]["stopped"] == {"pass": "marks", "written": "part"}
    dry = cli_run("dream", "--dry-run", "--json")  # no marks were written: all still fresh
    assert json.loads(dry.stdout)["full"]["fresh"] == 1


def test_dream_json_stopped_before_it_began_prints_no_json(project, cli_run, load,
                                                           monkeypatch):
    load(make_record())
    interrupt_on(monkeypatch, "ynm.dream.engine.run_dream", 1)
    result = cli_run("dream", "--json")
    assert (result.exit_code, result.stdout) == (130, "")


def test_wiki_build_json_stopped_by_ctrl_c_prints_the_wikis_built(project, cli_run, load,
                                                                  monkeypatch, tmp_path):
    load(make_record(), make_record(level="distributed", namespace="common"))
    interrupt_on(monkeypatch, "ynm.wiki.build.build", 2)
    result = cli_run("wiki", "build", "--json")
    assert result.exit_code == 130
    assert [r["mount"] for r in json.loads(result.stdout)] == ["personal"]
    assert result.stderr == (
        "Error: interrupted; built: personal; project's wiki was not finished (a directory "
        "may hold part of its pages; an orphan branch is one commit, so it is as it was); "
        "run `ynm wiki build` again to build the rest\n")


def test_login_json_stopped_by_ctrl_c_prints_the_sign_ins_kept(project, cli_run, ynm_home,
                                                               monkeypatch):
    """A url names two hosted mounts; Ctrl-C while the second's browser sign-in is waited
    for: the first stays signed in, and ``--json`` prints it."""
    from types import SimpleNamespace

    from ynm.service import oauth

    url = "https://memory.example.com/mcp"
    ynm_home.mkdir(parents=True, exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"mounts": [
        {"id": m, "level": "distributed", "provider": "mcp", "url": url}
        for m in ("team", "team2")]}))
    monkeypatch.setattr(oauth, "advertised_issuer", lambda *_: "https://idp.example.com")
    signed = SimpleNamespace(token="tok", oauth=None, scopes=["memory"])
    monkeypatch.setattr(oauth, "browser_sign_in", lambda *_, **__: signed)
    interrupt_on(monkeypatch, "ynm.service.oauth.browser_sign_in", 2)
    result = cli_run("login", url, "--browser", "--no-open", "--json")
    assert result.exit_code == 130
    assert json.loads(result.stdout) == [
        {"mount": "team", "url": url, "signedIn": True, "scopes": ["memory"]}]
    assert result.stderr.endswith(
        "Error: interrupted; signed in to team and kept; team2 was not signed in; run `ynm "
        "login team2` to sign in to it\n")
    assert (ynm_home / "auth" / "team.json").exists()
    assert not (ynm_home / "auth" / "team2.json").exists()
