"""Named documents beside the shards (the people document): a commit holding ``<name>.json``
on ``refs/ynm/<level>/documents/<name>``, written whole by compare-and-swap, and carried by sync
(reference/storage.md §3.2, §3.6, §4 "Documents reconcile", §5.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.store.test_sync import clone, open_log, origin, write  # noqa: F401 (origin: fixture)
from tests.support.git import git
from ynm.errors import StoreConflict
from ynm.model.people import merge_people_text
from ynm.service.people import People
from ynm.store.sync import sync_log

REF = "refs/ynm/distributed/documents/people"
TRACKING = "refs/ynm-remote/origin/distributed/documents/people"
PA, PB = "p" + "a" * 16, "p" + "b" * 16


def doc_text(**people) -> str:
    return json.dumps({"v": 1, "people": people}, indent=2) + "\n"


def test_write_is_a_compare_and_swap_on_the_version(repo: Path):
    log = open_log(repo)
    assert log.read_document("people") is None
    v1 = log.write_document("people", "{}\n", None)
    assert v1 is not None and log.read_document("people") == ("{}\n", v1)
    assert log.write_document("people", "stale\n", None) is None  # expected absent: it exists
    v2 = log.write_document("people", '{"v": 1}\n', v1)
    assert v2 is not None and v2 != v1
    assert log.write_document("people", "stale\n", v1) is None  # lost the race: nothing moves
    assert log.read_document("people") == ('{"v": 1}\n', v2)
    # git reads it: people.json in a commit whose parent is the previous version
    assert git(repo, "show", f"{REF}:people.json") == '{"v": 1}'
    assert git(repo, "log", "--format=%s|%P", REF).splitlines() == [
        f"ynm: document people|{v1}", "ynm: document people|"]
    with pytest.raises(ValueError, match="bad document name"):
        log.read_document("../people")


def test_a_level_reads_only_its_own_documents(repo: Path):
    open_log(repo, "distributed").write_document("people", "{}\n", None)
    assert open_log(repo, "personal").read_document("people") is None


class Interloper:
    """A document log where another writer moves the document before each of our first
    ``times`` writes."""

    def __init__(self, log, times: int) -> None:
        self.log, self.times, self.writes = log, times, 0

    def read_document(self, name):
        return self.log.read_document(name)

    def write_document(self, name, text, expected):
        self.writes += 1
        if self.times:
            self.times -= 1
            current = self.log.read_document(name)
            other = json.loads(current[0]) if current else {"v": 1, "people": {}}
            other["people"][PB] = {"logins": [], "updatedAt": f"2026-01-0{self.writes}T00:00:00.000Z"}
            self.log.write_document(name, json.dumps(other), current[1] if current else None)
        return self.log.write_document(name, text, expected)


def test_people_update_retries_a_lost_race_and_keeps_the_other_write(repo: Path):
    log = open_log(repo)
    people = People(Interloper(log, times=2), now_ms=lambda: 1_767_225_600_000)
    entry = people.set_nickname(PA, "ada")
    assert entry == {"nickname": "ada", "logins": [], "updatedAt": "2026-01-01T00:00:00.000Z"}
    stored = json.loads(log.read_document("people")[0])["people"]
    assert stored[PA]["nickname"] == "ada" and PB in stored  # both writes survive


def test_people_update_gives_up_after_5_attempts(repo: Path):
    log = open_log(repo)
    wrapped = Interloper(log, times=99)
    with pytest.raises(StoreConflict, match="after 5 attempts"):
        People(wrapped).set_nickname(PA, "ada")
    assert wrapped.writes == 5
    assert PA not in json.loads(log.read_document("people")[0])["people"]


def test_people_cache_is_trusted_for_30_seconds(repo: Path):
    log = open_log(repo)
    clock = [100.0]
    people = People(log, monotonic=lambda: clock[0])
    assert people.document() == {"v": 1, "people": {}}
    People(log).set_nickname(PA, "ada")  # another process
    clock[0] += 29.9
    assert people.document() == {"v": 1, "people": {}}  # still the cached copy
    assert people.document(fresh=True)["people"][PA]["nickname"] == "ada"
    People(log).set_nickname(PA, "ada2")
    clock[0] += 30
    assert people.author(f"user:{PA}") == "ada2"  # read again after 30 s


# ------------------------------------------------------------------------------ sync


def test_sync_merges_diverged_documents_per_person_and_pushes_them(origin):  # noqa: F811
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    write(la)  # a shard too, so documents travel beside shards
    la.write_document("people", doc_text(**{PA: {"nickname": "ada", "logins": ["i a"],
                                                 "updatedAt": "2026-01-02T00:00:00.000Z"}}), None)
    first = sync_log(la, "origin", merge_documents={"people": merge_people_text})
    assert first.to_obj()["documents"] == {"fetched": [], "merged": [], "pushed": ["people"]}
    assert git(origin, "rev-parse", REF) == la._ref_target(REF)

    lb.write_document("people", doc_text(**{
        PA: {"nickname": "old", "logins": ["i a2"], "updatedAt": "2026-01-01T00:00:00.000Z"},
        PB: {"nickname": "bob", "logins": [], "updatedAt": "2026-01-01T00:00:00.000Z"}}), None)
    second = sync_log(lb, "origin", merge_documents={"people": merge_people_text})
    assert second.conflicts == []
    assert second.documents_fetched == ["people"] and second.documents_merged == ["people"]
    assert second.documents_pushed == ["people"]
    merged = json.loads(git(b, "show", f"{REF}:people.json"))["people"]
    assert merged[PA] == {"nickname": "ada", "logins": ["i a", "i a2"],
                          "updatedAt": "2026-01-02T00:00:00.000Z"}
    assert merged[PB]["nickname"] == "bob"
    tip = lb._ref_target(REF)
    assert git(b, "log", "-1", "--format=%s", tip) == "ynm: merge document people"
    assert len(git(b, "log", "-1", "--format=%P", tip).split()) == 2  # ours and theirs

    third = sync_log(la, "origin", merge_documents={"people": merge_people_text})
    assert third.documents_fetched == ["people"] and third.documents_merged == []  # ff
    assert la._ref_target(REF) == tip == git(origin, "rev-parse", REF)
    again = sync_log(la, "origin", merge_documents={"people": merge_people_text})
    assert "documents" not in again.to_obj()  # nothing moved


def test_a_document_without_a_merge_rule_stays_local_and_is_a_conflict(origin):  # noqa: F811
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    la.write_document("other", "a\n", None)
    sync_log(la, "origin")
    mine = lb.write_document("other", "b\n", None)
    result = sync_log(lb, "origin")
    assert result.conflicts == [("documents/other: changed here and on the remote, and ynm has "
                                "no merge rule for it; kept the local copy")]
    assert lb._ref_target("refs/ynm/distributed/documents/other") == mine
    assert git(origin, "show", "refs/ynm/distributed/documents/other:other.json") == "a"


def test_a_remote_copy_that_cannot_be_merged_keeps_the_local_one(origin):  # noqa: F811
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    la.write_document("people", "not json\n", None)
    sync_log(la, "origin")
    mine = lb.write_document("people", doc_text(), None)
    result = sync_log(lb, "origin", merge_documents={"people": merge_people_text})
    assert len(result.conflicts) == 1
    assert result.conflicts[0].startswith("documents/people: cannot merge (not JSON")
    assert lb._ref_target(REF) == mine
    assert git(origin, "show", f"{REF}:people.json") == "not json"  # not pushed over


def test_dry_run_reports_a_document_and_moves_nothing(origin):  # noqa: F811
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    la.write_document("people", doc_text(), None)
    sync_log(la, "origin")
    result = sync_log(lb, "origin", dry_run=True, merge_documents={"people": merge_people_text})
    assert result.documents_fetched == ["people"]
    assert lb._ref_target(REF) is None
