"""A ``--json`` command prints its JSON document in every outcome that reaches a result,
failures included (docs/cli.md, the opening paragraph): what it did before the failure, on
stdout, while the error (``Error: <message>`` on stderr) and the exit code stay as without
``--json``. A failure before any result (bad input) prints no JSON.

Real git throughout: a bare origin whose pre-receive hook refuses, a remote that does not
exist; Ctrl-C and mid-way failures are simulated at the call that would meet them.
"""

from __future__ import annotations

import json

import pytest

from tests.cli.test_interrupts import interrupt_on
from tests.cli.test_sync import Net

from .conftest import jsonl, make_record, stop_import_after

REFUSED = ("Error: git push to origin failed: the remote refused it (pre-receive hook "
           "declined): remote: notes are frozen here; error: failed to push some refs to ")


@pytest.fixture
def net(tmp_path, git, cli_run, monkeypatch) -> Net:
    return Net(tmp_path, git, cli_run, monkeypatch)


def refusing(net: Net) -> None:
    hook = net.origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'notes are frozen here' >&2\nexit 1\n")
    hook.chmod(0o755)


def test_sync_whose_push_the_remote_refuses_prints_its_json(net):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    refusing(net)
    human = net.ynm(a, "sync")
    result = net.ynm(a, "sync", "--json")
    assert result.exit_code == human.exit_code == 1
    assert result.stderr == human.stderr and result.stderr.startswith(REFUSED)
    assert human.stdout == ""  # the human report is the error alone, as before
    report = json.loads(result.stdout)["project"]
    assert report["remote"] == "origin"
    assert report["pushed"] == {"shards": [], "records": 0}
    assert report["conflicts"] == [result.stderr.removeprefix("Error: ").rstrip("\n")]
    assert net.refs(net.origin) == {}


def test_sync_json_keeps_what_the_fetch_brought_before_the_push_was_refused(net):
    a, b = net.clone("a"), net.clone("b")
    net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    net.remember(b, "The ledger service owns refunds")
    refusing(net)
    result = net.ynm(b, "sync", "--json", "--quiet")  # a failure prints even with --quiet
    assert result.exit_code == 1
    report = json.loads(result.stdout)["project"]
    assert report["fetched"]["records"] == 1 and len(report["merged"]) == 1
    assert report["conflicts"][-1].startswith(REFUSED.removeprefix("Error: "))


def test_sync_json_names_a_fetch_that_failed(net, git, tmp_path):
    a = net.clone("a")
    git(a.path, "remote", "add", "gone", str(tmp_path / "does-not-exist.git"))
    result = net.ynm(a, "sync", "--remote", "gone", "--json")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: git fetch from gone failed: ")
    report = json.loads(result.stdout)["project"]
    assert report["conflicts"] == [result.stderr.removeprefix("Error: ").rstrip("\n")]
    assert report["fetched"] == {"shards": [], "records": 0}


def test_sync_refused_before_it_starts_prints_no_json(net):
    a = net.clone("a")
    result = net.ynm(a, "sync", "--mount", "personal", "--json")
    assert result.exit_code == 2
    assert result.stdout == ""


def test_sync_stopped_by_ctrl_c_prints_the_mounts_synced_before_it(net, monkeypatch):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    # a second distributed mount, synced after the project's: Ctrl-C comes in it
    team = net.tmp / "team.git"
    net.git(net.tmp, "clone", "-q", "--bare", str(net.origin), str(team))
    (a.path / ".ynm" / "config.local.json").write_text(json.dumps({"mounts": [
        {"id": "team", "level": "distributed", "provider": "git-notes", "path": str(team),
         "anchor": net.anchor}]}))
    interrupt_on(monkeypatch, "ynm.store.sync.sync_log", 2)
    result = net.ynm(a, "sync", "--json")
    assert result.exit_code == 130
    assert result.stderr.startswith("Error: interrupted; synced: project; team stopped part way")
    assert list(json.loads(result.stdout)) == ["project"]


def test_import_stopped_by_ctrl_c_prints_what_it_imported(project, cli_run, tmp_path,
                                                          monkeypatch):
    recs = [make_record() for _ in range(5)]
    path = tmp_path / "five.jsonl"
    path.write_text(jsonl(*recs) + "not json\n")
    stop_import_after(monkeypatch, 2)
    human = cli_run("import", path)
    assert human.stdout == ""
    # the first four lines read before Ctrl-C: one new record, three the first import kept
    path.write_text(jsonl(make_record(), *recs) + "not json\n")
    result = cli_run("import", path, "--json")
    assert result.exit_code == 130
    assert result.stderr == ("Error: interrupted; 1 record was imported and is kept (the "
                             "input was read to line 4); run the import again to add the rest "
                             "(records already there are skipped)\n")
    assert json.loads(result.stdout) == {"imported": 1, "problems": [], "alreadyPresent": 3}


def test_import_stopped_while_writing_a_part_says_those_may_have_landed(project, cli_run,
                                                                        tmp_path, monkeypatch):
    from ynm.cli import import_
    from ynm.index.cache import MountCache

    path = tmp_path / "five.jsonl"
    path.write_text(jsonl(*(make_record() for _ in range(5))))
    real, calls = MountCache.apply_append, []

    def interrupted(self, *args, **kwargs):  # the second part's notes are written, not indexed
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(import_, "CHUNK_LINES", 3)
    monkeypatch.setattr(MountCache, "apply_append", interrupted)
    result = cli_run("import", path, "--json")
    assert result.exit_code == 130
    assert json.loads(result.stdout) == {"imported": 3, "problems": [], "maybeImported": 2}


def test_import_stopped_before_any_record_prints_no_json(project, cli_run, tmp_path,
                                                         monkeypatch):
    path = tmp_path / "two.jsonl"
    path.write_text(jsonl(make_record(), make_record()))
    stop_import_after(monkeypatch, 0)
    result = cli_run("import", path, "--json")
    assert result.exit_code == 130 and result.stdout == ""


def test_import_refused_whole_prints_its_report_once(project, cli_run, tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text("not json\n")
    result = cli_run("import", path, "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["imported"] == 0  # one document, not two


def test_reindex_stopped_by_ctrl_c_prints_the_caches_rebuilt(project, cli_run, load,
                                                             monkeypatch):
    load(make_record(), make_record(level="distributed", namespace="common"))
    interrupt_on(monkeypatch, "ynm.index.cache.MountCache.rebuild", 2)
    result = cli_run("reindex", "--json")
    assert result.exit_code == 130
    assert result.stderr.startswith("Error: interrupted; rebuilt: personal; ")
    assert json.loads(result.stdout) == {"personal": 1}


def test_reindex_stopped_at_once_prints_no_json(project, cli_run, load, monkeypatch):
    load(make_record())
    interrupt_on(monkeypatch, "ynm.index.cache.MountCache.rebuild", 1)
    result = cli_run("reindex", "--json")
    assert result.exit_code == 130 and result.stdout == ""


def test_compact_failing_at_a_later_mount_prints_the_snapshots_written(project, cli_run, load,
                                                                       monkeypatch):
    from ynm import compact
    from ynm.errors import StoreError

    load(make_record(), make_record(level="distributed", namespace="common"))
    real, calls = compact.compact_mount, []

    def failing(mount, embedder):
        calls.append(mount.id)
        if len(calls) == 2:
            raise StoreError("git update-ref failed: disk full")
        return real(mount, embedder)

    monkeypatch.setattr(compact, "compact_mount", failing)
    result = cli_run("compact", "--json")
    assert result.exit_code == 1
    assert result.stderr == "Error: git update-ref failed: disk full\n"
    written = json.loads(result.stdout)
    assert [r["mount"] for r in written] == ["personal"] and written[0]["written"]
    interrupt_on(monkeypatch, "ynm.compact.compact_mount", 1)
    assert cli_run("compact", "--json").stdout == ""  # stopped before any: no result


def test_wiki_build_failing_at_a_later_mount_prints_the_wikis_built(project, cli_run, load,
                                                                    monkeypatch, tmp_path):
    from ynm.errors import YnmError
    from ynm.wiki import build as wiki_build

    load(make_record(), make_record(level="distributed", namespace="common"))
    real = wiki_build.build

    def failing(mount, **kwargs):
        if mount.id == "project":  # built after personal
            raise YnmError(f"cannot write the wiki of {mount.id}")
        return real(mount, **kwargs)

    monkeypatch.setattr(wiki_build, "build", failing)
    result = cli_run("wiki", "build", "--json", "--quiet")
    assert result.exit_code == 1
    assert result.stderr == "Error: cannot write the wiki of project\n"
    assert [r["mount"] for r in json.loads(result.stdout)] == ["personal"]
    assert cli_run("wiki", "build").stdout == ""  # without --json: the error alone
