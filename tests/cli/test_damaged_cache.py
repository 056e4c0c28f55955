"""A cache file damaged on disk is rebuilt from git by the first command that meets the damage,
which says so once on stderr and answers as it would have before (DESIGN.md principle 1: git
is the truth, the cache can be deleted at any time)."""

from __future__ import annotations

import json
import random
from contextlib import closing
from pathlib import Path

import pytest
import sqlean

from .conftest import make_record

PAGE = 4096
WARNING = "warning: the search cache of mount personal ("
COMMANDS = {
    "recall": ("recall", "ledger", "--limit", "200", "--json"),
    "list": ("list", "--limit", "500", "--json"),
    "status": ("status", "--json"),
}
# B-trees each command reads whole, so damage there is met for certain (found with dbstat):
# recall and list read every memory row; status counts records and memories by their indexes.
READS = {"recall": ("memories",), "list": ("memories",),
         "status": ("records_memory", "records_shard", "memories_memory_id", "memories_updated")}


@pytest.fixture
def cache(project, load, ynm_home, cli_run) -> Path:
    """The personal mount's cache file, built for 200 memories (distinct times, so list's
    order is the same however the cache was built) and checkpointed (no ``-wal``)."""
    load(*[make_record(content=f"ledger deploys {n} " + "filler " * 40,
                       summary=f"ledger deploys {n}",
                       recordedAt=f"2026-01-01T{10 + n // 60:02d}:{n % 60:02d}:00.000Z")
           for n in range(200)])
    assert cli_run("status").exit_code == 0  # builds the cache; the WAL is merged on close
    path = ynm_home / "index" / "ynm-cache" / "personal.sqlite"
    assert path.is_file() and not Path(f"{path}-wal").exists()
    return path


def leaves(path: Path, *trees: str) -> list[int]:
    """The 1-based page numbers of the leaf pages of some b-trees, in file order."""
    with closing(sqlean.connect(str(path))) as conn:
        return sorted(n for (n,) in conn.execute(
            "SELECT pageno FROM dbstat WHERE pagetype = 'leaf' AND name IN "
            f"({', '.join('?' * len(trees))})", trees))


def damage(path: Path, page: int, seed: int = 1) -> None:
    """Overwrite one whole page (1-based) with random bytes."""
    with open(path, "r+b") as f:
        f.seek((page - 1) * PAGE)
        f.write(random.Random(seed).randbytes(PAGE))


def healthy(path: Path) -> bool:
    """Whether SQLite finds every page of the file sound."""
    try:
        with closing(sqlean.connect(str(path))) as conn:
            return conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
    except sqlean.DatabaseError:
        return False


class Answer:
    """A command's output, equal to another when they are the same but for recall scores
    within 1e-6 of each other: a score's recency part moves with the wall clock between two
    runs (in the ninth decimal here). JSON is compared parsed; other output (export's lines)
    as text."""

    def __init__(self, stdout: str) -> None:
        try:
            self.value: object = json.loads(stdout)
        except ValueError:
            self.value = stdout

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Answer) and _same(self.value, other.value)

    def __repr__(self) -> str:
        return repr(self.value)[:2000]


def _same(a: object, b: object, key: str | None = None) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], k) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if key == "score" and isinstance(a, float) and isinstance(b, float):
        return abs(a - b) < 1e-6
    return a == b


def answer(stdout: str) -> Answer:
    """:class:`Answer` of ``stdout``."""
    return Answer(stdout)


def page_at(path: Path, command: str, where: str) -> int:
    if where == "header":
        return 1
    pages = leaves(path, *READS[command])
    assert len(pages) >= 3, pages  # a middle and an end of their own
    return pages[len(pages) // 2] if where == "middle" else pages[-1]


@pytest.mark.parametrize("where", ["header", "middle", "end"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_damaged_page_is_rebuilt_and_the_answer_is_the_same(cache, cli_run, command, where):
    before = cli_run(*COMMANDS[command])
    assert before.exit_code == 0 and before.stderr == ""
    page = page_at(cache, command, where)
    damage(cache, page)
    assert not healthy(cache)
    after = cli_run(*COMMANDS[command])
    assert after.exit_code == 0, after.stderr
    assert answer(after.stdout) == answer(before.stdout)
    assert after.stderr.count(WARNING) == 1, after.stderr
    assert after.stderr.count("\n") == 1  # one line, nothing else
    assert f"{cache}) is damaged: " in after.stderr
    assert after.stderr.endswith("; rebuilding it from git (memories live in git notes: "
                                 "nothing is lost)\n")
    assert healthy(cache)
    again = cli_run(*COMMANDS[command])  # the rebuilt file answers without a word
    assert (answer(again.stdout), again.stderr) == (answer(before.stdout), "")


@pytest.mark.parametrize("where", ["middle", "end"])
@pytest.mark.parametrize("command", ["recall", "list"])
def test_a_page_whose_cell_offsets_are_overwritten_is_rebuilt(cache, cli_run, command, where):
    """64 bytes overwritten just after a leaf page's header (its cell offsets), the rest of
    the page intact: without SQLite's cell size check the rows it points at wrong were read
    as other bytes, and recall and list answered without some memories, silently."""
    before = cli_run(*COMMANDS[command])
    page = page_at(cache, command, where)
    with open(cache, "r+b") as f:
        f.seek((page - 1) * PAGE + 8)
        f.write(random.Random(page).randbytes(64))
    after = cli_run(*COMMANDS[command])
    assert after.exit_code == 0, after.stderr
    assert answer(after.stdout) == answer(before.stdout)
    assert after.stderr.count(WARNING) == 1, after.stderr


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_damage_a_command_does_not_read_leaves_its_answer_alone(cache, cli_run, command):
    # status never reads the full-text index: it neither fails nor rebuilds for it
    before = cli_run(*COMMANDS[command])
    damage(cache, leaves(cache, "fts_data")[-1])
    after = cli_run(*COMMANDS[command])
    assert (after.exit_code, answer(after.stdout)) == (0, answer(before.stdout))
    met = after.stderr.count(WARNING)
    assert met in (0, 1)
    assert healthy(cache) == (met == 1)  # rebuilt exactly when the damage was met
    if command == "recall":
        assert met == 1  # a word query reads the full-text index
    if command == "status":
        assert met == 0


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_file_of_random_bytes_is_replaced(cache, cli_run, command):
    before = cli_run(*COMMANDS[command])
    cache.write_bytes(random.Random(7).randbytes(5 * PAGE + 123))
    after = cli_run(*COMMANDS[command])
    assert (after.exit_code, answer(after.stdout)) == (0, answer(before.stdout))
    assert after.stderr.count(WARNING) == 1
    assert "is damaged: file is not a database; rebuilding it from git" in after.stderr
    assert healthy(cache)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_zero_length_file_is_built_like_a_missing_one(cache, cli_run, command):
    # SQLite creates every database as an empty file, so an empty file is no damage to report:
    # the command answers as it does with no file at all (status: "never built", then built)
    for suffix in ("", "-shm"):
        Path(f"{cache}{suffix}").unlink(missing_ok=True)
    missing = cli_run(*COMMANDS[command])
    assert missing.exit_code == 0 and missing.stderr == ""
    cache.write_bytes(b"")
    after = cli_run(*COMMANDS[command])
    assert (after.exit_code, answer(after.stdout), after.stderr) == (0, answer(missing.stdout),
                                                                       "")
    assert healthy(cache) and cache.stat().st_size > 0
    if command != "status":
        assert json.loads(after.stdout)  # the memories are there


@pytest.mark.parametrize("args", [("show", "{id}", "--json"), ("history", "{id}", "--json"),
                                  ("context", "--json"), ("export",),
                                  ("recall", "deploys 7", "--json")])
@pytest.mark.parametrize("where", ["header", "middle"])
def test_every_reading_command_answers(cache, cli_run, load, args, where):
    first = make_record(content="ledger deploys pinned", summary="ledger deploys pinned",
                        pinned=True, recordedAt="2026-01-02T00:00:00.000Z")
    load(first)
    args = tuple(a.format(id=first["id"]) for a in args)
    before = cli_run(*args)
    assert before.exit_code == 0, before.stderr
    damage(cache, 1 if where == "header" else leaves(cache, "memories")[len(leaves(cache,
                                                                              "memories")) // 2])
    after = cli_run(*args)
    assert (after.exit_code, answer(after.stdout)) == (0, answer(before.stdout)), after.stderr
    assert after.stderr.count(WARNING) <= 1
    if where == "header":  # read by every command that opens the cache
        assert after.stderr.count(WARNING) == (0 if args[0] == "export" else 1)


def test_a_write_meets_the_damage_and_writes_once(cache, cli_run, run_json):
    before = {m["memoryId"] for m in run_json("list", "--limit", "500")}
    damage(cache, leaves(cache, "memories")[-1])
    result = cli_run("remember", "--type", "semantic", "--content", "ledger deploys again",
                     "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count(WARNING) == 1
    new = json.loads(result.stdout)["memoryId"]
    after = run_json("list", "--limit", "500")
    assert {m["memoryId"] for m in after} == before | {new}
    assert len(after) == len(before) + 1
    assert healthy(cache)


def test_doctor_names_the_damage_and_the_next_command_repairs_it(cache, cli_run):
    cache.write_bytes(random.Random(3).randbytes(3 * PAGE))
    result = cli_run("doctor", "--json")
    check = next(c for c in json.loads(result.stdout)["checks"] if c["name"] == "cache personal")
    assert (check["ok"], check["level"], check["fix"]) == (False, "error",
                                                          "ynm reindex --mount personal")
    assert check["detail"] == (
        f"{cache}: cache file is damaged: file is not a database; the next command that reads "
        "the damaged part rebuilds it, or run `ynm reindex --mount personal` (memories live "
        "in git notes: nothing is lost)")
    assert cli_run("list").exit_code == 0
    check = next(c for c in json.loads(cli_run("doctor", "--json").stdout)["checks"]
                 if c["name"] == "cache personal")
    assert check["ok"] is True


def test_an_operation_that_wrote_is_not_run_again(cache, project):
    # Damage met after a write: the cache is rebuilt, but the operation stops instead of
    # writing (or reporting) twice, and says so.
    from ynm.errors import YnmError
    from ynm.model.inputs import ListQuery, RememberInput
    from ynm.service.ynm import Ynm

    runs = []

    def op(y: Ynm) -> object:
        runs.append(1)
        y.remember(RememberInput(type="semantic", content="ledger deploys twice?"))
        y.mount("personal").close()  # the next read opens the file as it is on disk
        damage(cache, leaves(cache, "memories")[-1])
        return y.list(ListQuery(limit=500))

    with Ynm.open(project) as y:
        with pytest.raises(YnmError) as caught:
            y.run(op)
        assert str(caught.value).startswith("the search cache of mount personal was damaged (")
        assert str(caught.value).endswith(") and has been rebuilt from git; what was written "
                                          "before it stays: run the command again to finish")
        assert runs == [1]
        found = [m for m in y.list(ListQuery(limit=500))
                 if m["current"]["content"] == "ledger deploys twice?"]
        assert len(found) == 1
    assert healthy(cache)


def _overwrite_inside(path: Path, blob: bytes) -> None:
    """Overwrite the middle of ``blob`` where the file holds it, keeping every page's
    structure: SQLite's page checks pass, the text no longer reads back."""
    data = bytearray(path.read_bytes())
    at = data.find(blob)
    assert at > 0 and data.find(blob, at + 1) == -1
    middle = at + len(blob) // 3
    data[middle: middle + len(blob) // 3] = bytes(len(blob) // 3)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("what", ["current record line", "folded state extra"])
def test_a_stored_text_overwritten_inside_its_page_is_rebuilt(cache, cli_run, load, command,
                                                              what):
    # A few bytes overwritten inside a cell: no page check sees it, but the packed text no
    # longer unpacks. Every memory has a line; the one with a link has an extra.
    linked = make_record(content="ledger deploys linked", summary="ledger deploys linked",
                         links=[{"rel": "about", "to": "01KDVDNA000000000000000001"}],
                         recordedAt="2026-01-03T00:00:00.000Z")
    load(linked)
    assert cli_run("status").exit_code == 0
    before = cli_run(*COMMANDS[command])
    with closing(sqlean.connect(str(cache))) as conn:
        if what == "current record line":
            (blob,) = conn.execute("SELECT line FROM records WHERE id = ?",
                                   (linked["id"],)).fetchone()
        else:
            (blob,) = conn.execute("SELECT extra FROM memories WHERE memory_id = ?",
                                   (linked["id"],)).fetchone()
    assert isinstance(blob, bytes) and len(blob) > 30
    _overwrite_inside(cache, blob)
    after = cli_run(*COMMANDS[command])
    assert (after.exit_code, answer(after.stdout)) == (0, answer(before.stdout)), after.stderr
    met = after.stderr.count(WARNING)
    if command == "status":  # counts rows, reads no text
        assert met == 0
    else:
        assert met == 1, after.stderr
        assert "rebuilding it from git" in after.stderr
    again = cli_run(*COMMANDS[command])
    assert again.stderr.count(WARNING) == 0
