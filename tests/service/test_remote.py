"""Hosted (mcp) mounts without a server: sign-in files, how hosted hits are weighed and
scored, the context join, and which operations call a hosted store
(ynm.service.remote; reference/algorithms.md §2.7, §3.4, server.md §3.1, §6)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from ynm.errors import InvalidInput
from ynm.service import remote
from ynm.service.remote import (
    LeftOut,
    RemoteError,
    RemoteMount,
    auth_path,
    delete_sign_in,
    hosted_hits,
    join_context,
    read_sign_in,
    save_sign_in,
    weigh_hosted,
)

URL = "https://memory.example.com/mcp"


# -- sign-in files -------------------------------------------------------------------------


def test_a_sign_in_file_is_0600_in_a_0700_folder_whatever_the_umask(tmp_path: Path):
    home = tmp_path / "home"
    (home / "auth").mkdir(parents=True, mode=0o755)
    os.chmod(home / "auth", 0o755)  # a folder made earlier, readable by others
    old = os.umask(0)
    try:
        path = save_sign_in(home, "team", URL, "tok-1")
        again = save_sign_in(home, "team", URL, "tok-2")  # replaced, still 0600
    finally:
        os.umask(old)
    assert path == again == home / "auth" / "team.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text()) == {"v": 1, "url": URL, "token": "tok-2"}
    assert [p.name for p in path.parent.iterdir()] == ["team.json"]  # no temporary left


def test_a_token_is_only_read_for_the_url_it_was_saved_for(tmp_path: Path):
    save_sign_in(tmp_path, "team", URL, "tok")
    assert read_sign_in(tmp_path, "team", URL) == "tok"
    assert read_sign_in(tmp_path, "team", "https://evil.example.com/mcp") is None
    assert read_sign_in(tmp_path, "other", URL) is None
    for bad in ("tok en", "tok\nX-Evil: 1", ""):  # never sent as a header
        (tmp_path / "auth" / "team.json").write_text(json.dumps({"url": URL, "token": bad}))
        assert read_sign_in(tmp_path, "team", URL) is None
    (tmp_path / "auth" / "team.json").write_text("not json")
    assert read_sign_in(tmp_path, "team", URL) is None
    assert delete_sign_in(tmp_path, "team") is True
    assert delete_sign_in(tmp_path, "team") is False


@pytest.mark.parametrize("mount_id", ["../team", "a/b", ".hidden", "", "x" * 129])
def test_a_mount_id_that_cannot_name_a_file_in_the_folder_is_refused(tmp_path, mount_id):
    with pytest.raises(InvalidInput, match="cannot name a sign-in file"):
        auth_path(tmp_path, mount_id)
    assert delete_sign_in(tmp_path, mount_id) is False


def test_the_token_is_not_in_the_repr_of_a_hosted_mount():
    assert "tok-secret" not in repr(RemoteMount("team", URL, "tok-secret"))


# -- weighing and scoring hosted hits ------------------------------------------------------


def _hit(summary: str, relevance: float = 1.0, **over):
    h = {"memoryId": over.pop("memoryId", "01J0000000000000000000000A"), "mount": "project",
         "score": 0.9, "explain": {"relevance": relevance}, "type": "semantic",
         "level": "distributed", "namespace": "common", "tags": [], "summary": summary,
         "content": summary, "pinned": False, "importance": 0.5,
         "updatedAt": "2026-01-01T00:00:00.000Z"}
    h.update(over)
    return h


@pytest.mark.parametrize(("hits", "text", "evidence"), [
    ([_hit("The team deploys with helm")], "deploy helm", 1.0),  # porter: deploys ~ deploy
    ([_hit("helm charts")], "deploy helm", 0.125),  # half the words, cubed
    ([_hit("helm charts"), _hit("deploy with helm", 0.5)], "deploy helm", 0.5),
    ([_hit("charts live here", tags=["helm"])], "helm", 1.0),  # tags count
    ([_hit("nothing in common")], "what is helm", 0.0),  # function words do not count
    ([], "helm", 0.0),
    ([_hit("anything")], None, None),  # filter-only: nothing to weigh
])
def test_a_hosted_store_is_weighed_by_its_best_match(hits, text, evidence):
    got = weigh_hosted(hits, text)
    if evidence is None:
        assert got is None
    else:
        assert got == pytest.approx(evidence)


class _Q:
    def __init__(self, text="helm", explain=False):
        self.text, self.explain = text, explain


def test_hosted_hits_are_scored_by_relevance_times_the_store_weight():
    store = RemoteMount("team", URL)
    hits = [_hit("a", 1.0, memoryId="A"), _hit("b", 0.5, memoryId="B"),
            {"memoryId": "C", "summary": "no type"}]
    now = 1_767_225_600_000  # the hits' updatedAt: recency 1
    out = hosted_hits(_Q(explain=True), [(store, hits, 0.5)], strongest=1.0, now_ms=now)
    assert [h["memoryId"] for h in out] == ["A", "B"]  # C cannot be ranked
    assert list(out[0])[:5] == ["memoryId", "mount", "score", "explain", "type"]
    assert out[0]["mount"] == "team"
    assert out[0]["explain"]["relevance"] == pytest.approx(0.5)  # 1.0 x 0.5 / 1.0
    assert out[1]["explain"]["relevance"] == pytest.approx(0.25)
    assert out[0]["score"] == pytest.approx(0.6 * 0.5 + 0.2 + 0.15 * 0.5)
    plain = hosted_hits(_Q(), [(store, hits, 1.0)], strongest=1.0, now_ms=now)
    assert "explain" not in plain[0] and plain[0]["score"] == pytest.approx(0.875)


def test_hosted_hits_of_zero_relevance_are_left_out_with_text():
    store = RemoteMount("team", URL)
    hits = [_hit("a", 1.0, memoryId="A"), _hit("b", 0.0, memoryId="B")]
    now = 1_767_225_600_000
    out = hosted_hits(_Q(explain=True), [(store, hits, 0.5)], strongest=1.0, now_ms=now)
    assert [h["memoryId"] for h in out] == ["A"]  # B matched nothing of the question
    # a store whose evidence is 0 beside a stronger one: all its hits would rank at 0
    assert hosted_hits(_Q(), [(store, hits, 0.0)], strongest=1.0, now_ms=now) == []
    # a filter-only recall ranks without relevance: every hit stays
    kept = hosted_hits(_Q(text=None), [(store, hits, None)], strongest=0.0, now_ms=now)
    assert [h["memoryId"] for h in kept] == ["A", "B"]


def test_join_context_puts_the_local_block_first_and_notes_who_was_left_out():
    local = {"markdown": "## Memory\n- (semantic) a\n", "included": ["A"], "tokens": 9,
             "truncated": False}
    shared = {"markdown": "## Shared memory (team)\n- (semantic) b\n", "included": ["B"],
              "tokens": 12, "truncated": True}
    left = LeftOut("other", URL, "cannot reach it (refused)")
    assert join_context(local, [shared], [left]) == {
        "markdown": local["markdown"] + "\n" + shared["markdown"], "included": ["A", "B"],
        "tokens": 21, "truncated": True,
        "leftOut": [{"mount": "other", "url": URL, "reason": "cannot reach it (refused)"}]}
    empty = {"markdown": "", "included": [], "tokens": 0, "truncated": False}
    assert join_context(empty, [shared], [])["markdown"] == shared["markdown"]
    assert join_context(local, [], []) == local


# -- which operations call a hosted store ----------------------------------------------------


@pytest.fixture
def calls(monkeypatch, ynm_home, project):
    """A hosted mount ``team`` that cannot be reached; every call is recorded."""
    ynm_home.mkdir(parents=True, exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"mounts": [
        {"id": "team", "level": "distributed", "provider": "mcp", "url": URL}]}))
    seen: list[str] = []

    def fake(batch, timeout_s):
        seen.extend(tool for _, tool, _ in batch)
        return [RemoteError("cannot reach it (test)") for _ in batch]

    monkeypatch.setattr(remote, "call_tools", fake)
    return seen


def test_a_local_write_does_not_wait_on_a_hosted_store(calls, project):
    from ynm.model.inputs import RecallQuery, RememberInput
    from ynm.service.ynm import Ynm

    with Ynm.open(project) as y:
        y.remember(RememberInput(type="semantic", level="distributed",
                                 content="We deploy with helm"))
        assert calls == []  # the similar-memory lookup stays local
        hits = y.recall(RecallQuery(text="helm"))
        assert calls == ["memory_recall"]
        assert [h["mount"] for h in hits] == ["project"]
        assert [str(x) for x in y.left_out] == [f"team ({URL}): cannot reach it (test)"]
        y.recall(RecallQuery(text="helm", level=["personal"]))
        y.recall(RecallQuery(text="helm", mount="project"))
        y.recall(RecallQuery(text="C++"))  # nothing to search: nobody is asked
        assert calls == ["memory_recall"] and y.left_out == []


def test_a_store_that_never_answers_is_left_out_after_the_timeout():
    """A server that accepts the connection and says nothing (a hung proxy): the call ends
    at its timeout with a reason; the context's 3 s of the reference (algorithms.md §3.4)."""
    import socket
    import time

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        start = time.monotonic()
        (result,) = remote.call_tools([(RemoteMount("team", url, "tok"), "memory_context", {})],
                                      1.5)
        took = time.monotonic() - start
    assert isinstance(result, RemoteError)
    assert str(result) == ('no answer within 1.5 s (give a slow store more with "timeout" in '
                           "its mount's configuration)")
    assert result.timed_out and 1.4 < took < 10


@pytest.mark.parametrize("timeout", [0.5, 1.0])
def test_a_mounts_timeout_bounds_its_calls_instead_of_the_default(timeout):
    import socket
    import time

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        start = time.monotonic()
        (result,) = remote.call_tools(
            [(RemoteMount("team", url, "tok", timeout=timeout), "memory_recall", {})], 30)
        took = time.monotonic() - start
    assert str(result).startswith(f"no answer within {timeout:g} s ")
    assert timeout - 0.1 < took < timeout + 5


def test_a_write_that_timed_out_does_not_claim_nothing_was_written(monkeypatch):
    from ynm.errors import YnmError

    monkeypatch.setattr(remote, "call_tools", lambda calls, t: [RemoteError(
        "no answer within 10 s")])

    class Inp:
        namespace = None

        def model_dump(self, **_):
            return {"content": "x"}

    with pytest.raises(YnmError) as caught:
        remote.remember_hosted(RemoteMount("team", URL, "tok"), Inp(), "distributed", "common")
    assert str(caught.value) == (
        f"mount team ({URL}): no answer within 10 s; it may or may not have been written: "
        "check with `ynm recall --mount team` before writing it again")
    monkeypatch.setattr(remote, "call_tools", lambda calls, t: [RemoteError(
        "cannot reach it (refused)")])
    with pytest.raises(YnmError, match="cannot reach it \\(refused\\); nothing was written"):
        remote.remember_hosted(RemoteMount("team", URL, "tok"), Inp(), "distributed", "common")


def test_a_refused_connection_says_so():
    from tests.support.serve import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp"
    (result,) = remote.call_tools([(RemoteMount("team", url, "tok"), "memory_status", {})], 5)
    assert isinstance(result, RemoteError) and not result.answered
    assert str(result).startswith("cannot reach it (")
    assert "tok" not in str(result)


@pytest.mark.parametrize(
    ("status", "challenge", "body", "token", "said"),
    [
        (401, 'Bearer error="invalid_token", error_description="token expired"', "", "t",
         "the hosted store refused the sign-in (401 invalid_token: token expired); get a new "
         "token (from the store's operator or your identity provider) and sign in with it: "
         "`ynm login team`"),
        (401, 'Bearer error="invalid_token", error_description="wrong audience", '
              'resource_metadata="https://h/.well-known/oauth-protected-resource"', "", "t",
         "the hosted store refused the sign-in (401 invalid_token: wrong audience); get a new "
         "token (from the store's operator or your identity provider) and sign in with it: "
         "`ynm login team`"),
        (401, "", '{"error": "invalid_token", "error_description": "unknown key"}', "t",
         "the hosted store refused the sign-in (401 invalid_token: unknown key); get a new "
         "token (from the store's operator or your identity provider) and sign in with it: "
         "`ynm login team`"),
        (401, 'Bearer error="invalid_token"', "", None, "not signed in; run `ynm login team`"),
        (403, 'Bearer error="insufficient_scope", error_description="token lacks the scope '
              'memory:write", scope="memory:write"', "", "t",
         "the hosted store refused access (403 insufficient_scope: token lacks the scope "
         "memory:write); the token lacks the scope memory:write: sign in with a token that "
         "has it: `ynm login team`"),
        (403, "", '{"error": "invalid_origin", "error_description": "Origin not allowed"}', "t",
         "the hosted store refused access (403 invalid_origin: Origin not allowed)"),
        (421, "", '{"error": "invalid_host", "error_description": "Host header not allowed"}',
         "t", "the hosted store refused the url's host name (421 invalid_host: Host header not "
              "allowed)"),
    ],
)
def test_a_refusal_gives_the_stores_reason_and_advice_that_can_help(
        status, challenge, body, token, said):
    err = remote._refusal(status, challenge, body, RemoteMount("team", URL, token))
    assert (str(err), err.status) == (said, status)


@pytest.mark.parametrize("hosted_relevance", [1.0, 0.2])
def test_a_memory_held_locally_and_by_a_hosted_store_is_one_hit(
        tmp_path, monkeypatch, hosted_relevance):
    """Deduplicated by memory id, the better-scored copy kept (local or hosted)."""
    from ynm.model.inputs import RecallQuery, RememberInput
    from ynm.service.ynm import Ynm

    monkeypatch.setenv("YNM_HOME", str(tmp_path / "home"))
    with Ynm.open(tmp_path, personal=True) as y:
        mine = y.remember(RememberInput(type="semantic", level="personal",
                                        content="Deploys use helm charts"))["memoryId"]
        other = y.remember(RememberInput(type="semantic", level="personal",
                                         content="Helm deploys are pinned"))["memoryId"]
        local = {h["memoryId"]: h for h in y.recall(RecallQuery(text="helm deploys"))}
        copy = {**local[mine], "explain": {"relevance": hosted_relevance}}
        y.remotes = [RemoteMount("team", URL, "tok")]
        monkeypatch.setattr(remote, "call_tools", lambda calls, t: [[copy]])
        hits = y.recall(RecallQuery(text="helm deploys"))
    ids = [h["memoryId"] for h in hits]
    assert sorted(ids) == sorted([mine, other])
    kept = next(h for h in hits if h["memoryId"] == mine)
    assert kept["mount"] in ("personal", "team")
    assert kept["score"] >= local[mine]["score"] - 1e-6  # never the worse copy
    if hosted_relevance < 1:
        assert kept["mount"] == "personal"
