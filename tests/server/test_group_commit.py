"""Group commit in ``ynm serve``: remembers queued behind the single write queue are written as
one append per shard; every record lands exactly once, each caller keeps its order and gets
its own result, and a failure reaches only the callers it concerns."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tests.conftest import run_git
from tests.server.conftest import run
from tests.support.secrets import SECRETS
from ynm.errors import YnmError
from ynm.model.inputs import RememberInput
from ynm.model.jsonl import parse_jsonl
from ynm.server.app import MemoryService
from ynm.server.tools import TOOL_SPECS, ToolOutput

REMEMBER = TOOL_SPECS["memory_remember"]


def _inp(content: str, **extra: Any) -> RememberInput:
    return RememberInput.model_validate({"type": "semantic", "level": "distributed",
                                         "content": content, **extra})


def _stored(service: MemoryService) -> list[dict[str, Any]]:
    """Every create record of the project mount, read from git (not the cache)."""
    def read(ynm):  # type: ignore[no-untyped-def]
        return [json.loads(r.model_dump_json(by_alias=True, exclude_none=True))
                for b in ynm.mount("project").log.read_all().values()
                for r in parse_jsonl(b.data).records if r.op == "create"]
    return service.run_sync(read)


def _writers(service: MemoryService, writers: int, each: int,
             content=lambda w, n: f"writer {w} item {n}") -> list[list[Any]]:
    async def writer(w: int) -> list[Any]:
        outs = []
        for n in range(each):
            try:
                outs.append(await service.call_grouped(REMEMBER.run_many, _inp(content(w, n))))
            except YnmError as err:
                outs.append(err)
        return outs

    async def everyone() -> list[list[Any]]:
        return list(await asyncio.gather(*(writer(w) for w in range(writers))))

    return run(everyone, timeout=120)


def _shard_commits(project, service: MemoryService) -> int:
    refs = run_git(project, "for-each-ref", "--format=%(refname)",
                   "refs/notes/ynm/distributed/").split()
    return sum(int(run_git(project, "rev-list", "--count", ref)) for ref in refs)


def test_eight_writers_land_exactly_once_in_order_with_fewer_commits(project, service) -> None:
    before = _shard_commits(project, service)
    outs = _writers(service, 8, 6)
    results = [o for per in outs for o in per]
    assert all(isinstance(o, ToolOutput) for o in results)
    ids = [o.data["memoryId"] for o in results]
    assert len(set(ids)) == 48
    stored = [r for r in _stored(service) if r["content"].startswith("writer ")]
    assert len(stored) == 48
    assert sorted(r["memoryId"] for r in stored) == sorted(ids)
    by_content = {r["content"]: r for r in stored}
    for w, per in enumerate(outs):
        # each caller's result is its own record, and its records are in its order
        for n, out in enumerate(per):
            record = by_content[f"writer {w} item {n}"]
            assert out.data["memoryId"] == record["memoryId"]
            assert out.data["recordId"] == record["id"]
            shown = run_git(project, "show", f"{out.data['revision']}:"
                            + run_git(project, "rev-list", "--max-parents=0", "HEAD"))
            assert record["id"] in shown
        mine = [r["content"] for r in stored if r["content"].startswith(f"writer {w} ")]
        assert mine == [f"writer {w} item {n}" for n in range(6)]
    # Queued remembers shared commits: fewer appends than records.
    assert _shard_commits(project, service) - before < 48
    # The cache saw every one of them.
    assert service.run_sync(lambda y: y.mount("project").fresh_cache().counts()["memories"]) >= 48


def test_eight_writers_each_get_the_guidance_of_their_own_write(project, service) -> None:
    """Concurrent remembers that each repeat one stored memory, plus words of their own: each
    result names that memory and no other write (two writes share 5 of their 9 words, under
    the 0.6 overlap), whichever group it was committed in."""
    first = service.run_sync(lambda y: y.remember(_inp(
        "The ledger nightly batch reconciles payouts")))["memoryId"]
    outs = _writers(service, 8, 4, content=lambda w, n: (
        f"The ledger nightly batch reconciles payouts w{w}n{n}a w{w}n{n}b w{w}n{n}c "
        f"w{w}n{n}d"))
    results = [o for per in outs for o in per]
    assert all(isinstance(o, ToolOutput) for o in results)
    assert len({o.data["memoryId"] for o in results}) == 32
    for o in results:
        assert o.guidance is not None and o.guidance.startswith(
            f"1 similar memory exists: {first} (The ledger nightly batch reconciles payouts)")
    stored = [r["content"] for r in _stored(service) if r["content"].endswith("d")]
    for w in range(8):
        assert [c for c in stored if f" w{w}n" in c] == [
            f"The ledger nightly batch reconciles payouts w{w}n{n}a w{w}n{n}b w{w}n{n}c "
            f"w{w}n{n}d" for n in range(4)]


def test_a_refused_input_fails_only_its_caller(project, service) -> None:
    _detector, secret = SECRETS["github fine-grained"]
    outs = _writers(service, 4, 3, content=lambda w, n: secret if (w, n) == (2, 1)
                    else f"plain {w} {n}")
    assert isinstance(outs[2][1], YnmError) and "refused" in str(outs[2][1])
    good = [o for per in outs for o in per if isinstance(o, ToolOutput)]
    assert len(good) == 11
    stored = [r["content"] for r in _stored(service)]
    assert secret not in stored
    assert sorted(c for c in stored if c.startswith("plain ")) == sorted(
        f"plain {w} {n}" for w in range(4) for n in range(3) if (w, n) != (2, 1))


def test_a_failed_shard_append_reaches_only_its_callers(project, service,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two shards in one group: the append of one fails; its callers get the error, the
    other shard's callers their results, and only the other shard's records are stored."""
    log = service.run_sync(lambda y: y.mount("project").log)
    real = log.append

    def failing(batches, **kwargs):  # type: ignore[no-untyped-def]
        if any(k.type == "procedural" for k in batches):
            raise YnmError("disk full")
        return real(batches, **kwargs)

    monkeypatch.setattr(log, "append", failing)

    async def both() -> list[Any]:
        jobs = [service.call_grouped(REMEMBER.run_many, _inp(f"fact {n}")) for n in range(3)]
        jobs += [service.call_grouped(REMEMBER.run_many,
                                      _inp(f"how-to {n}", type="procedural")) for n in range(3)]
        return list(await asyncio.gather(*jobs, return_exceptions=True))

    outs = run(both)
    assert all(isinstance(o, ToolOutput) for o in outs[:3])
    assert all(isinstance(o, YnmError) and str(o) == "disk full" for o in outs[3:])
    stored = [r["content"] for r in _stored(service)]
    assert sorted(c for c in stored if c.startswith(("fact ", "how-to "))) == [
        "fact 0", "fact 1", "fact 2"]


def test_remember_many_keeps_each_callers_warnings_and_errors(project) -> None:
    """The service-level grouping rests on Ynm.remember_many: results in input order, an
    invalid route fails its input only."""
    from ynm.service.ynm import Ynm

    with Ynm.open(project) as y:
        outs = y.remember_many([(_inp("one"), None), (_inp("two", mount="nowhere"), None),
                                (_inp("three"), None)])
        assert isinstance(outs[0], dict)
        assert isinstance(outs[1], YnmError)
        assert outs[0]["revision"] == outs[2]["revision"]  # one commit for the shard
        assert "warnings" not in outs[0]
        contents = [r.content for b in y.mount("project").log.read_all().values()
                    for r in parse_jsonl(b.data).records]
        assert contents.count("one") == 1 and contents.count("three") == 1
        assert contents.index("one") < contents.index("three")
