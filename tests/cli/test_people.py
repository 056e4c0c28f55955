"""``ynm people`` and the people document on its own ref (reference/cli.md §4.14,
server.md §2.4, storage.md §3.2), and ``author`` in recall, list and review output."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import make_record
from ynm.model.people import person_id

REF = "refs/ynm/distributed/documents/people"
PA = person_id("https://idp.example.com", "alice")
PB = person_id("https://idp.example.com", "bob")


def show(git, repo) -> dict:
    """The document as git itself reads it: ``people.json`` in the ref's commit."""
    return json.loads(git(repo, "show", f"{REF}:people.json"))


def test_nickname_clear_and_link_write_the_document_on_its_ref(project, cli_run, run_json, git):
    assert cli_run("people", "list").stdout == (
        "no people yet: a person appears once they set a nickname or a login is linked to "
        "them\n")
    assert run_json("people", "list") == {"v": 1, "people": {}}

    out = cli_run("people", "nickname", PA, "--nickname", "  Ada  ")
    assert out.exit_code == 0 and out.stdout == f"{PA} is now shown as Ada\n"
    entry = show(git, project)["people"][PA]
    assert entry["nickname"] == "Ada" and entry["logins"] == []
    assert entry["updatedAt"].endswith("Z")

    linked = run_json("people", "link", PB, "--issuer", "https://idp.example.com",
                      "--subject", "alice-2")
    assert linked["logins"] == ["https://idp.example.com alice-2"]
    # moving the login to another person takes it from the first
    moved = cli_run("people", "link", PA, "--issuer", "https://idp.example.com",
                    "--subject", "alice-2")
    assert moved.stdout == (f"linked https://idp.example.com alice-2 to {PA}: it now writes "
                            "as that person\n")
    doc = show(git, project)
    assert doc["people"][PA]["logins"] == ["https://idp.example.com alice-2"]
    assert doc["people"][PB]["logins"] == []
    assert cli_run("people", "list").stdout == (
        f"{PA}  Ada                  1 linked login\n"
        f"{PB}  -                    0 linked logins\n")

    cleared = cli_run("people", "clear", PA, "--json")
    assert "nickname" not in json.loads(cleared.stdout)
    assert cli_run("people", "clear", PA).stdout == f"cleared the nickname of {PA}\n"
    assert "nickname" not in show(git, project)["people"][PA]

    # each write is one commit "ynm: document people" on top of the last (compare-and-swap)
    log = git(project, "log", "--format=%s %P", REF).splitlines()
    assert len(log) == 5 and all(line.startswith("ynm: document people") for line in log)
    assert log[-1] == "ynm: document people "  # the first has no parent
    # the stored text is the reference's form: 2-space JSON and a final newline
    blob = git(project, "cat-file", "blob", f"{REF}:people.json")
    assert blob.startswith('{\n  "v": 1,\n  "people": {\n')
    # the document never moves the anchor and is never a shard
    assert git(project, "for-each-ref", "--format=%(refname)", "refs/notes/") == ""


@pytest.mark.parametrize(("args", "message"), [
    (("nickname", PA), "nickname needs --nickname"),
    (("nickname", "--nickname", "ada"), "nickname needs a person id"),
    (("clear",), "clear needs a person id"),
    (("link", PA, "--issuer", "i"), "link needs --issuer and --subject"),
    (("link", "--issuer", "i", "--subject", "s"), "link needs a person id"),
    (("nickname", "bob", "--nickname", "ada"), "invalid input: person: must be a person id"),
    (("clear", PA.upper()), "invalid input: person: must be a person id"),
    (("nickname", PA, "--nickname", "a\nb"), "invalid input: nickname: must be one line"),
    (("nickname", PA, "--nickname", "x" * 65), "invalid input: nickname: must be 1..64"),
    (("link", PA, "--issuer", " ", "--subject", "s"), "invalid input: link needs a non-empty"),
])
def test_refusals_exit_2_and_write_nothing(project, cli_run, git, args, message):
    result = cli_run("people", *args)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"Error: {message}")
    assert git(project, "for-each-ref", REF) == ""


def test_a_store_without_a_distributed_mount_keeps_no_people(git_repo, cli_run, monkeypatch):
    monkeypatch.chdir(git_repo)  # not `ynm init`: only the personal store
    result = cli_run("people", "list")
    assert result.exit_code == 1
    assert result.stderr == ("Error: this store keeps no people (it has no distributed mount "
                             "that can)\n")
    assert cli_run("people", "nickname", PA, "--nickname", "ada").exit_code == 1


def test_whoami_names_this_machine_s_actor(project, cli_run, run_json):
    assert run_json("people", "whoami") == {"actor": "user:tester"}
    assert cli_run("people", "whoami").stdout == (
        "user:tester on this machine; on a hosted store you write as the person your sign-in "
        "resolves to (ask the agent for memory_people whoami)\n")


def test_a_corrupt_document_is_an_error_not_a_crash(project, cli_run, git):
    blob = git(project, "hash-object", "-w", "--stdin", input=b'{"v": 1, "people": []}')
    tree = git(project, "mktree", input=f"100644 blob {blob}\tpeople.json\n".encode())
    commit = git(project, "commit-tree", tree, "-m", "ynm: document people")
    git(project, "update-ref", REF, commit)
    result = cli_run("people", "list")
    assert result.exit_code == 1
    assert "the people document" in result.stderr and "people: must be an object" in result.stderr
    assert "Traceback" not in result.stderr


# ------------------------------------------------------------------------------ author


def signed_in(pid: str, content: str, **over) -> dict:
    return make_record(level="distributed", namespace=f"user/{pid}", content=content,
                       summary=content, provenance={"actor": f"user:{pid}", "client": "app"},
                       **over)


@pytest.fixture
def authored(project, load, cli_run):
    """Three distributed memories: by Ada (nickname), by Bob (no nickname), by this machine."""
    load(signed_in(PA, "Ada deploys the ledger on Tuesdays",
                   recordedAt="2026-01-01T10:00:03.000Z"),
         signed_in(PB, "Bob deploys the ledger on Fridays",
                   recordedAt="2026-01-01T10:00:02.000Z", needsReview=True),
         make_record(level="distributed", namespace="common",
                     content="The ledger deploys from main", summary="The ledger deploys "
                     "from main", recordedAt="2026-01-01T10:00:01.000Z"))
    assert cli_run("people", "nickname", PA, "--nickname", "ada").exit_code == 0


def test_recall_hits_carry_the_author_after_updated_at(authored, run_json, cli_run):
    hits = {h["summary"].split()[0]: h for h in run_json("recall", "ledger deploys")}
    assert hits["Ada"]["author"] == "ada"
    assert hits["Bob"]["author"] == PB  # no nickname: the person id
    assert "author" not in hits["The"]  # user:tester is not a signed-in person
    keys = list(hits["Ada"])
    assert keys[keys.index("updatedAt") + 1] == "author"
    text = cli_run("recall", "ledger deploys").stdout
    assert "Ada deploys the ledger on Tuesdays  (ada)" in text
    assert f"Bob deploys the ledger on Fridays  ({PB})" in text
    assert "The ledger deploys from main\n" in text


def test_list_and_review_carry_the_author(authored, run_json, cli_run):
    listed = {m["summary"].split()[0]: m for m in run_json("list")}
    assert listed["Ada"]["author"] == "ada" and listed["Bob"]["author"] == PB
    assert "author" not in listed["The"]
    assert list(listed["Ada"])[-1] == "author"
    text = cli_run("list").stdout
    assert "Ada deploys the ledger on Tuesdays  (ada)" in text
    assert "The ledger deploys from main\n" in text
    review = run_json("review", "list")
    assert [m["author"] for m in review] == [PB]
    assert f"Bob deploys the ledger on Fridays  ({PB})" in cli_run("review", "list").stdout


def test_a_nickname_change_shows_in_new_processes(authored, run_json, cli_run):
    assert cli_run("people", "nickname", PA, "--nickname", "Ada L.").exit_code == 0
    hits = {h["summary"].split()[0]: h for h in run_json("recall", "ledger deploys")}
    assert hits["Ada"]["author"] == "Ada L."


# ------------------------------------------------------------------------------ sync


def test_two_clones_syncing_keep_one_people_document_merged_per_person(
        tmp_path, git, cli_run, monkeypatch):
    from tests.cli.test_sync import Net

    net = Net(tmp_path, git, cli_run, monkeypatch)
    a, b = net.clone("a"), net.clone("b")
    net.ok(a, "people", "nickname", PA, "--nickname", "ada")
    net.ok(a, "people", "link", PA, "--issuer", "https://idp.example.com", "--subject", "a2")
    first = net.sync(a)
    assert first["documents"] == {"fetched": [], "merged": [], "pushed": ["people"]}
    # b changed the document apart: Bob's nickname, and a later nickname for Ada
    net.ok(b, "people", "nickname", PB, "--nickname", "bob")
    net.ok(b, "people", "link", PA, "--issuer", "https://other.example.com", "--subject", "a3")
    net.ok(b, "people", "nickname", PA, "--nickname", "Ada L.")
    second = net.sync(b)
    assert second["conflicts"] == []
    assert second["documents"] == {"fetched": ["people"], "merged": ["people"],
                                   "pushed": ["people"]}
    text = net.ok(b, "sync", "--dry-run").stdout
    assert "conflicts" not in text
    net.sync(a)
    docs = [net.json(c, "people", "list") for c in (a, b)]
    assert docs[0] == docs[1]  # one document on both clones and on origin
    assert git(a.path, "rev-parse", REF) == git(b.path, "rev-parse", REF) == git(
        net.origin, "rev-parse", REF)
    people = docs[0]["people"]
    assert people[PA]["nickname"] == "Ada L."  # b's entry for Ada is newer
    assert people[PA]["logins"] == ["https://idp.example.com a2", "https://other.example.com a3"]
    assert people[PB]["nickname"] == "bob"
    # the human report names the document
    net.ok(a, "people", "clear", PB)
    assert "people document" in net.ok(a, "sync").stdout


def test_show_carries_the_author(authored, run_json, cli_run):
    ada = next(m for m in run_json("list") if m["summary"].startswith("Ada"))
    shown = run_json("show", ada["memoryId"])
    assert shown["author"] == "ada"
    assert "\nauthor      ada\n" in cli_run("show", ada["memoryId"]).stdout
    other = next(m for m in run_json("list") if m["summary"].startswith("The"))
    assert "author" not in run_json("show", other["memoryId"])
    assert "author " not in cli_run("show", other["memoryId"]).stdout


def test_an_unreadable_document_shows_person_ids_and_warns(authored, cli_run, git, project):
    blob = git(project, "hash-object", "-w", "--stdin", input=b"not json")
    tree = git(project, "mktree", input=f"100644 blob {blob}\tpeople.json\n".encode())
    commit = git(project, "commit-tree", tree, "-p", git(project, "rev-parse", REF),
                 "-m", "ynm: document people")
    git(project, "update-ref", REF, commit)
    result = cli_run("list", "--json")
    assert result.exit_code == 0
    authors = {m["summary"].split()[0]: m.get("author") for m in json.loads(result.stdout)}
    assert authors == {"Ada": PA, "Bob": PB, "The": None}
    assert "warning: authors shown by person id: the people document" in result.stderr


def test_a_document_written_by_git_itself_is_read(project, cli_run, git, run_json):
    text = json.dumps({"v": 1, "people": {PA: {"nickname": "ada", "logins": ["i s"],
                                               "updatedAt": "2026-01-01T00:00:00.000Z"}}},
                      indent=2) + "\n"
    blob = git(project, "hash-object", "-w", "--stdin", input=text.encode())
    tree = git(project, "mktree", input=f"100644 blob {blob}\tpeople.json\n".encode())
    git(project, "update-ref", REF, git(project, "commit-tree", tree, "-m",
                                        "ynm: document people"))
    assert run_json("people", "list")["people"][PA]["nickname"] == "ada"
    assert run_json("people", "nickname", PB, "--nickname", "bob")["nickname"] == "bob"
    assert set(show(git, project)["people"]) == {PA, PB}
