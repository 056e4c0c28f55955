"""``ynm import`` (reference/cli.md §4.9, §2, §8 item 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import jsonl, make_record, stop_import_after

FAKE_AWS = "AKIA" + "ABCDEFGHIJKLMNOP"


@pytest.fixture
def dump(tmp_path):
    def _dump(text: str):
        path = tmp_path / "in.jsonl"
        path.write_text(text)
        return path

    return _dump


def export_ids(cli_run, *args):
    out = cli_run("export", *args).stdout
    return [json.loads(line)["id"] for line in out.splitlines()]


def test_from_file_human(project, cli_run, dump):
    a, b = make_record(), make_record()
    result = cli_run("import", dump(jsonl(a, b)))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "imported 2 record(s)\n"
    assert sorted(export_ids(cli_run)) == sorted([a["id"], b["id"]])


def test_from_stdin(project, cli_run):
    a = make_record()
    result = cli_run("import", "--json", input=jsonl(a))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"imported": 1, "problems": []}
    assert export_ids(cli_run) == [a["id"]]


def test_dash_is_stdin(project, cli_run):
    """``ynm import -`` reads standard input, as ``--content -`` does for remember."""
    a, b = make_record(), make_record()
    result = cli_run("import", "-", input=jsonl(a, b))
    assert (result.exit_code, result.stdout) == (0, "imported 2 record(s)\n"), result.stderr
    assert sorted(export_ids(cli_run)) == sorted([a["id"], b["id"]])


def test_json_key_order(project, cli_run, dump):
    result = cli_run("import", dump(jsonl(make_record())), "--json")
    assert list(json.loads(result.stdout)) == ["imported", "problems"]


def test_bad_line_reported_rest_imported(project, cli_run, dump):
    a, c = make_record(), make_record()
    text = jsonl(a) + "{broken\n" + jsonl(c)
    result = cli_run("import", dump(text), "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out["imported"] == 2
    assert len(out["problems"]) == 1 and out["problems"][0].startswith("line 2: invalid JSON")
    assert sorted(export_ids(cli_run)) == sorted([a["id"], c["id"]])


def test_bad_lines_human(project, cli_run, dump):
    a = make_record()
    bad = make_record(type="fact")
    text = "not json\n" + jsonl(a) + jsonl(bad)
    result = cli_run("import", dump(text))
    assert result.exit_code == 0
    first, rest = result.stdout.rstrip("\n").split("; skipped 2: ", 1)
    assert first == "imported 1 record(s)"
    assert rest.startswith("line 1: invalid JSON")
    assert "; line 3: type: " in rest


def test_import_twice_imports_nothing_the_second_time(project, cli_run, dump, tmp_path):
    a = make_record()
    b = make_record(level="distributed", namespace="common")
    cli_run("import", dump(jsonl(a, b)))
    exported = tmp_path / "export.jsonl"
    exported.write_text(cli_run("export").stdout)
    result = cli_run("import", exported, "--json")
    # the reference's two keys first, then ours (cli.md §4.9)
    assert json.loads(result.stdout) == {"imported": 0, "problems": [], "alreadyPresent": 2}
    assert list(json.loads(result.stdout)) == ["imported", "problems", "alreadyPresent"]
    assert cli_run("import", exported).stdout == "imported 0 record(s); 2 already present\n"
    assert len(cli_run("export").stdout.splitlines()) == 2


def test_records_already_present_are_counted_on_the_result_line_only(project, cli_run, dump):
    """A file imported again says how many of its records the store held on the result line
    and prints nothing on stderr; docs/cli.md says so, and promises no stderr note (the
    reference prints no count of them at all, reference/cli.md §4.9)."""
    path = dump(jsonl(*(make_record() for _ in range(6))))
    assert cli_run("import", path).stdout == "imported 6 record(s)\n"
    again = cli_run("import", path)
    assert (again.exit_code, again.stdout, again.stderr) == (
        0, "imported 0 record(s); 6 already present\n", "")
    doc = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    section = " ".join(doc.split("\n## ynm import\n", 1)[1].split("\n## ", 1)[0].split())
    assert "`imported 0 record(s); 6 already present`" in section
    assert "nothing is printed on stderr for them" in section
    assert "already in the store" not in section


def test_a_half_new_file_gives_both_counts(project, cli_run, dump):
    old = [make_record() for _ in range(3)] + [
        make_record(level="distributed", namespace="common") for _ in range(2)]
    new = [make_record() for _ in range(4)] + [
        make_record(level="distributed", namespace="common")]
    cli_run("import", dump(jsonl(*old)))
    mixed = [r for pair in zip(old, new) for r in pair] + new[len(old):]
    result = cli_run("import", dump(jsonl(*mixed)), "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"imported": 5, "problems": [], "alreadyPresent": 5}
    assert sorted(export_ids(cli_run)) == sorted(r["id"] for r in old + new)
    again = [*new[:2], make_record()]
    result = cli_run("import", dump(jsonl(*again)))
    assert result.stdout == "imported 1 record(s); 2 already present\n"


def test_ids_repeated_inside_the_file_are_counted_apart(project, cli_run, dump):
    """A line whose record id an earlier line of the input had is dropped and counted as
    repeated, not as already present: the store did not hold it before the import."""
    a, b, c = make_record(), make_record(), make_record()
    changed_b = dict(b, content="same id, other text")  # the first line with the id wins
    text = jsonl(a, b, a, c, changed_b, a)
    result = cli_run("import", dump(text), "--json")
    assert result.exit_code == 0, result.stderr
    warning = conflict_warning(b["id"])
    assert json.loads(result.stdout) == {"imported": 3, "problems": [], "repeated": 3,
                                         "warnings": [warning]}
    assert result.stderr == f"warning: {warning}\n"
    assert sorted(export_ids(cli_run)) == sorted([a["id"], b["id"], c["id"]])
    assert b["content"] in cli_run("export").stdout
    assert cli_run("import", dump(text)).stdout == (
        "imported 0 record(s); 3 already present; 3 repeated in the input\n")
    d = make_record()
    result = cli_run("import", dump(jsonl(d, a, d) + "{broken\n"))
    assert result.stdout.startswith(
        "imported 1 record(s); 1 already present; 1 repeated in the input; skipped 1: line 4: ")


def conflict_warning(*ids: str, more: int = 0) -> str:
    n = len(ids) + more
    shown = ", ".join(ids) + (f", and {more} more" if more else "")
    if n == 1:
        return (f"1 record id appears more than once in the input with different content "
                f"({shown}): only the first line with that id was read, the later ones were "
                "skipped; a record id names one record, so give each changed record a new id "
                "(`ynm show <id>` shows what the store holds)")
    return (f"{n} record ids appear more than once in the input with different content "
            f"({shown}): only the first line with each id was read, the later ones were "
            "skipped; a record id names one record, so give each changed record a new id "
            "(`ynm show <id>` shows what the store holds)")


def test_the_same_record_twice_is_no_conflict(project, cli_run, dump):
    """Two exports joined (the same lines twice), or the same record with other spacing
    or key order in the same part: repeated, and nothing to warn about."""
    a, b = make_record(), make_record()
    reordered = json.dumps(dict(reversed(list(b.items())))) + "  \r"
    result = cli_run("import", dump(jsonl(a, b) + jsonl(a, b) + reordered + "\n"))
    assert result.stdout == "imported 2 record(s); 3 repeated in the input\n"
    assert result.stderr == ""


def test_ids_repeated_with_other_content_are_warned_about_once(project, cli_run, dump,
                                                               monkeypatch):
    """Five ids each met again with another record, across the parts the input is read
    in: one warning, naming how many and the first three in input order; what is written
    is the first line with each id."""
    from ynm.cli import import_

    monkeypatch.setattr(import_, "CHUNK_LINES", 2)
    firsts = [make_record(content=f"first version {i}") for i in range(5)]
    later = [dict(r, content=f"changed {i}") for i, r in enumerate(firsts)]
    text = jsonl(*firsts, *reversed(later), *later)
    result = cli_run("import", dump(text))
    assert result.stdout == "imported 5 record(s); 10 repeated in the input\n"
    ids = [r["id"] for r in reversed(firsts)]  # the order the later lines came in
    assert result.stderr == f"warning: {conflict_warning(*ids[:3], more=2)}\n"
    exported = cli_run("export").stdout
    assert all(r["content"] in exported for r in firsts) and "changed" not in exported


def test_routes_by_level(project, cli_run, dump):
    a = make_record()
    b = make_record(level="distributed", namespace="common")
    cli_run("import", dump(jsonl(a, b)))
    assert export_ids(cli_run, "--mount", "personal") == [a["id"]]
    assert export_ids(cli_run, "--mount", "project") == [b["id"]]


def test_ids_and_times_are_kept(project, cli_run, dump):
    a = make_record(recordedAt="2025-06-01T12:00:00.000Z")
    cli_run("import", dump(jsonl(a)))
    (rec,) = [json.loads(x) for x in cli_run("export").stdout.splitlines()]
    assert rec == a


def test_mount_flag(project, cli_run, dump):
    b = make_record(level="distributed", namespace="common")
    result = cli_run("import", dump(jsonl(b)), "--mount", "project")
    assert result.exit_code == 0, result.stderr
    assert export_ids(cli_run, "--mount", "project") == [b["id"]]


def test_mount_level_mismatch(project, cli_run, dump):
    a = make_record()
    result = cli_run("import", dump(jsonl(a)), "--mount", "project")
    assert result.exit_code == 1
    assert result.stderr.strip() == (
        'Error: mount "project" is distributed; cannot take a personal record')
    assert result.stdout == ('imported 0 record(s); skipped 1: line 1: mount "project" is '
                             'distributed; cannot take a personal record\n')
    assert export_ids(cli_run) == []


def test_every_record_refused_fails_with_the_first_refusal(project, cli_run, dump, git):
    bad = [make_record(level="distributed", namespace="common", content=f"key {FAKE_AWS} {i}")
           for i in range(3)]
    result = cli_run("import", dump(jsonl(*bad) + "{broken\n"), "--json")
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        "Error: refused: content matches 1 secret detector: AWS Access Key")
    out = json.loads(result.stdout)
    assert out["imported"] == 0
    assert [p.split(":")[0] for p in out["problems"]] == ["line 1", "line 2", "line 3", "line 4"]
    assert git(project, "for-each-ref", "refs/notes") == ""


def test_unknown_mount(project, cli_run, dump):
    result = cli_run("import", dump(jsonl(make_record())), "--mount", "nope")
    assert result.exit_code == 2
    assert result.stderr.startswith('Error: no mount "nope" (have: personal, project); to add '
                                    "it: ")


NO_PROJECT = ("Error: no distributed mount: run `ynm init` in the project (or configure a "
              "mount)\nhint: {repo} has no .ynm/config.json: run `ynm init` there (a clone "
              "gets it only when it is committed where ynm init ran){more}\n")
PERSONAL_ALONE = "; an export of personal records alone imports with --mount personal"


def test_distributed_without_init(git_repo, cli_run, dump, monkeypatch):
    monkeypatch.chdir(git_repo)
    b = make_record(level="distributed", namespace="common")
    result = cli_run("import", dump(jsonl(b)))
    assert result.exit_code == 1
    assert result.stderr == NO_PROJECT.format(repo=git_repo, more=PERSONAL_ALONE)


def test_a_clone_without_the_config_fails_once_before_reading(git_repo, cli_run, monkeypatch,
                                                              git, tmp_path):
    """A clone of a repository whose .ynm/config.json was never committed: one error, exit 1,
    before a line is read (standard input that fails when read shows it), not one problem
    per line; ``--mount personal`` takes the personal records and names the others once."""
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(git_repo), str(clone))
    monkeypatch.chdir(clone)

    class Unread:
        def __iter__(self):
            raise AssertionError("read before the store was checked")

    monkeypatch.setattr("sys.stdin", type("In", (), {"buffer": Unread()})())
    result = cli_run("import")
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == NO_PROJECT.format(repo=clone, more=PERSONAL_ALONE)
    assert cli_run("remember", "--type", "semantic", "--level", "distributed", "--content",
                   "x").stderr == NO_PROJECT.format(repo=clone, more="")
    mine = make_record()
    shared = [make_record(level="distributed", namespace="common") for _ in range(4)]
    path = tmp_path / "mixed.jsonl"
    path.write_text(jsonl(shared[0], mine, *shared[1:]))
    result = cli_run("import", path, "--mount", "personal", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"imported": 1, "problems": [
        ('line 1: mount "personal" is personal; cannot take a distributed record (and 3 more '
        "distributed records, the last on line 5)")]}


def test_redaction_refuses_records_not_the_batch(project, cli_run, dump, git):
    """A record the gate refuses is skipped and reported with its line; the rest land."""
    ok = [make_record(level="distributed", namespace="common", content=f"fact {i}")
          for i in range(4)]
    bad = make_record(level="distributed", namespace="common", content=f"key {FAKE_AWS}")
    bad2 = make_record(level="distributed", namespace="common", tags=[FAKE_AWS])
    result = cli_run("import", dump(jsonl(ok[0], bad, ok[1], ok[2], bad2, ok[3])), "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["imported"] == 4
    assert [p.split(":")[0] for p in out["problems"]] == ["line 2", "line 5"]
    assert all("refused: content matches 1 secret detector: AWS Access Key" in p
               for p in out["problems"])
    assert sorted(export_ids(cli_run)) == sorted(r["id"] for r in ok)


def test_colliding_namespaces_reported_per_record(project, cli_run, dump):
    """Records whose namespace could collide with another namespace's shard refs are
    reported by line (storage.md §7.22); the others, in either order, land."""
    parent = make_record(level="distributed", namespace="docs", type="reference",
                         recordedAt="2026-12-01T10:00:00.000Z")
    child = make_record(level="distributed", namespace="docs/reference/2026-12",
                        type="reference", recordedAt="2026-12-01T11:00:00.000Z")
    other = make_record(level="distributed", namespace="a/semantic/2026-01/b")
    fine = make_record(level="distributed", namespace="docs/reference")
    result = cli_run("import", dump(jsonl(child, parent, other, fine)), "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["imported"] == 2
    assert len(out["problems"]) == 2
    assert out["problems"][0].startswith("line 1: invalid input: namespace: namespace must not")
    assert out["problems"][1].startswith("line 3: invalid input: namespace: namespace must not")
    assert sorted(export_ids(cli_run)) == sorted([parent["id"], fine["id"]])


def test_records_no_mount_can_take_are_reported_once(tmp_path, cli_run, dump, monkeypatch):
    """Outside a repository a distributed record has nowhere to go: the first is reported,
    with how many more there were, and the personal records beside them are imported."""
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.chdir(outside)
    a, c = make_record(), make_record()
    b, d, e = (make_record(level="distributed", namespace="common") for _ in range(3))
    result = cli_run("import", dump(jsonl(a, b, c, d, e)), "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["imported"] == 2
    assert out["problems"] == [("line 2: no distributed mount: run `ynm init` in the project "
                               "(or configure a mount) (and 2 more distributed records, the "
                               "last on line 5)")]


def test_redaction_not_applied_to_personal_records(project, cli_run, dump):
    a = make_record(content=f"key {FAKE_AWS}")
    assert cli_run("import", dump(jsonl(a))).exit_code == 0
    assert export_ids(cli_run) == [a["id"]]


@pytest.mark.parametrize("text, why", [("", "empty"), ("\n \n\n", "only blank lines"),
                                       ("\ufeff", "only a byte order mark"),
                                       ("\ufeff\n\n", "only blank lines")])
def test_an_input_with_no_line_to_read_says_so(project, cli_run, dump, text, why):
    """Nothing to import is no failure (the reference's import of an empty text reports
    ``{imported: 0, problems: []}``), but it is said on stderr; stdout keeps the report."""
    path = dump(text)
    for args, out in (((), "imported 0 record(s)\n"),
                      (("--json",), '{\n  "imported": 0,\n  "problems": []\n}\n')):
        result = cli_run("import", path, *args)
        assert result.exit_code == 0
        assert result.stdout == out
        assert result.stderr == f"nothing to import ({path}: {why})\n"
    result = cli_run("import", input=text)
    assert result.stderr == f"nothing to import (standard input: {why})\n"


def test_a_binary_input_is_named_as_not_text(project, cli_run, tmp_path):
    path = tmp_path / "picture.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    result = cli_run("import", path)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: invalid input: input: no valid record in it (")
    assert result.stderr.splitlines()[1] == (
        f"hint: {path} is not UTF-8 text (invalid start byte at byte 0); ynm imports the "
        "JSONL ynm export writes")


def test_a_lock_held_from_a_later_part_on_fails_once_and_says_what_is_kept(
        project, cli_run, dump, monkeypatch):
    """Another process takes the store's lock after the first part was appended: the import
    waits for it once, fails with the lock's error, and its hint says what is kept and who
    holds the lock; a second import adds the rest only."""
    import os
    import time

    from ynm.cli import import_
    from ynm.store.gitnotes import GitNotesLog
    from ynm.store.lock import LOCK_FILE_NAME, RepoLock

    recs = [make_record(level="distributed", namespace="common") for _ in range(6)]
    path = dump(jsonl(*recs))
    whole = import_.line_chunks
    lock = project / ".git" / "ynm.lock"  # the project mount's

    def then_locked(stream, lines):
        parts = whole(stream, lines)
        yield next(parts)
        lock.write_text(f"{os.getpid()}\n{int(time.time() * 1000)}\n")  # a live holder
        yield from parts

    monkeypatch.setattr(import_, "CHUNK_LINES", 2)
    monkeypatch.setattr(import_, "line_chunks", then_locked)
    monkeypatch.setattr(GitNotesLog, "lock",
                        lambda self: RepoLock(self.common_dir / LOCK_FILE_NAME, 0.3))
    started = time.monotonic()
    result = cli_run("import", path)
    assert time.monotonic() - started < 3
    assert result.exit_code == 1
    err, hint = result.stderr.splitlines()
    assert err == f"Error: lock timeout after 300ms: {lock.resolve()}"
    assert hint.startswith(
        "hint: 2 records were imported and are kept (the input was read to line 4); run the "
        "import again to add the rest (records already there are skipped); held by process "
        f"{os.getpid()} ")
    lock.unlink()
    monkeypatch.setattr(import_, "line_chunks", whole)
    assert cli_run("import", path).stdout == "imported 4 record(s); 2 already present\n"


def test_ctrl_c_after_records_landed_says_what_is_kept(project, cli_run, dump, monkeypatch):
    """The parts appended before Ctrl-C stay; the message says how many records and what to
    do, exit 130; a second import adds the rest only."""
    from ynm.cli import import_

    recs = [make_record() for _ in range(5)]
    path = dump(jsonl(*recs))
    whole = stop_import_after(monkeypatch, 2)
    result = cli_run("import", path)
    assert result.exit_code == 130
    assert result.stdout == ""
    assert result.stderr == ("Error: interrupted; 4 records were imported and are kept (the "
                             "input was read to line 4); run the import again to add the rest "
                             "(records already there are skipped)\n")
    assert sorted(export_ids(cli_run)) == sorted(r["id"] for r in recs[:4])
    monkeypatch.setattr(import_, "line_chunks", whole)
    assert cli_run("import", path).stdout == "imported 1 record(s); 4 already present\n"


def test_ctrl_c_before_any_part_was_read_says_nothing_was_imported(project, cli_run, dump,
                                                                    monkeypatch):
    """Ctrl-C while the first part is being read: nothing was imported, and the message says
    so without a line number of zero or a "rest" to add."""

    path = dump(jsonl(make_record(), make_record()))
    stop_import_after(monkeypatch, 0)
    result = cli_run("import", path)
    assert result.exit_code == 130
    assert result.stderr == ("Error: interrupted; no record was imported (it came while the "
                             "first part of the input was read); run the import again\n")
    assert export_ids(cli_run) == []


def test_missing_file(project, tmp_path):
    """A missing file is an ordinary failure: ``Error: <message>``, exit 1, no traceback
    (cli.md §2 "everything else: the error's message verbatim, exit 1")."""
    from click.testing import CliRunner

    from ynm.cli import cli

    result = CliRunner().invoke(cli, ["import", str(tmp_path / "missing.jsonl")])
    assert not isinstance(result.exception, FileNotFoundError), "traceback instead of an error"
    assert result.exit_code == 2  # refused input: the file argument names no file
    assert "Error: Invalid value for '[FILE]'" in result.stderr
    assert "missing.jsonl" in result.stderr and "does not exist" in result.stderr


def test_cwd(project, cli_run, dump, tmp_path, monkeypatch):
    b = make_record(level="distributed", namespace="common")
    path = dump(jsonl(b))
    monkeypatch.chdir(tmp_path)
    assert cli_run("import", path, "--cwd", project).exit_code == 0
    assert export_ids(cli_run, "--cwd", project, "--mount", "project") == [b["id"]]


@pytest.mark.parametrize("text", ["not json\n", '{"v":1}\n', "# A README\n\nSome prose.\n" * 20])
def test_input_with_no_valid_record_is_refused(project, cli_run, dump, git, text):
    result = cli_run("import", dump(text))
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: invalid input: input: no valid record in it (")
    assert result.stdout.startswith("imported 0 record(s); skipped ")
    assert len(result.stdout) < 3000  # at most ten problems listed, each cut short
    assert git(project, "for-each-ref", "refs/notes") == ""


def test_many_bad_lines_are_summed_up_in_the_human_line(project, cli_run, dump):
    good = make_record()
    result = cli_run("import", dump(jsonl(good) + "{bad\n" * 25))
    assert result.exit_code == 0
    assert result.stdout.rstrip().endswith("; ... and 15 more (--json lists them all)")
    assert len(json.loads(cli_run("import", dump(jsonl(good) + "{bad\n" * 25),
                                  "--json").stdout)["problems"]) == 25


def test_a_file_read_in_parts_imports_as_one_text(project, cli_run, dump, monkeypatch):
    """Three lines at a time: bad lines, refusals, a repeated id in a later part, a byte
    order mark at a part's start and a record already present give the report one whole-text
    import gives, with line numbers of the whole file."""
    from ynm.cli import import_

    present = make_record(level="distributed", namespace="common")
    cli_run("import", dump(jsonl(present)))
    recs = [make_record(level="distributed", namespace="common") for _ in range(6)]
    secret = make_record(level="distributed", namespace="common", content=f"key {FAKE_AWS}")
    lines = [jsonl(recs[0]), jsonl(present), "{broken\n", "\ufeff" + jsonl(recs[1]),
             jsonl(secret), jsonl(recs[2]), jsonl(recs[0]), jsonl(recs[3]), "\n",
             jsonl(make_record(op="explode")), jsonl(recs[4]),
             jsonl(dict(secret, content="clean now")),  # refused once: dropped as a repeat
             jsonl(recs[5]).rstrip("\n")]
    text = "".join(lines)
    monkeypatch.setattr(import_, "CHUNK_LINES", 3)
    result = cli_run("import", dump(text), "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["imported"] == 6
    assert (out["alreadyPresent"], out["repeated"]) == (1, 2)
    assert [p.split(":")[0] for p in out["problems"]] == ["line 3", "line 5", "line 10"]
    assert "secret detector" in out["problems"][1]
    assert sorted(export_ids(cli_run)) == sorted(r["id"] for r in [present, *recs])


def test_ctrl_c_after_a_part_was_committed_says_it_may_be_imported(project, cli_run, dump,
                                                                   monkeypatch):
    """Ctrl-C while the cache takes in a part whose records git already holds: the message
    does not say the part was not imported (it was), and a second import adds nothing."""
    from ynm.index.cache import MountCache

    recs = [make_record() for _ in range(5)]
    path = dump(jsonl(*recs))
    real = MountCache.apply_append
    calls = []

    def interrupted(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    from ynm.cli import import_

    monkeypatch.setattr(import_, "CHUNK_LINES", 3)
    monkeypatch.setattr(MountCache, "apply_append", interrupted)
    result = cli_run("import", path)
    assert result.exit_code == 130
    assert result.stderr == (
        "Error: interrupted; 3 records were imported and are kept, and some or all of the 2 "
        "records being written when it came may be imported too (the input was read to line "
        "5); run the import again to add the rest (records already there are skipped)\n")
    monkeypatch.setattr(MountCache, "apply_append", real)
    assert sorted(export_ids(cli_run)) == sorted(r["id"] for r in recs)
    assert cli_run("import", path).stdout == "imported 0 record(s); 5 already present\n"


def test_imports_of_one_file_at_once_write_each_record_once(project, dump):
    """Three processes import the same file at once: which records the store lacks is asked
    under the lock their appends take, so each record lands in the notes once and the other
    imports find it present."""
    import subprocess
    import sys

    N = 1500  # enough that the three imports overlap
    recs = [make_record(level="distributed", namespace="common") for _ in range(N)]
    path = dump(jsonl(*recs))
    procs = [subprocess.Popen([sys.executable, "-m", "ynm.cli", "import", str(path), "--json"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    results = [json.loads(out) for out, _ in outs]
    assert sum(r["imported"] for r in results) == N
    assert sum(r.get("alreadyPresent", 0) for r in results) == 2 * N

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=project, check=True, capture_output=True,
                              text=True).stdout

    lines = 0
    for ref in git("for-each-ref", "--format=%(refname)", "refs/notes/ynm").split():
        for entry in git("ls-tree", "-r", ref).splitlines():
            blob = entry.split()[2]
            lines += sum(1 for line in git("cat-file", "blob", blob).splitlines() if line)
    assert lines == N
