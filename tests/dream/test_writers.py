"""The model-backed writers and their fail-closed loop (reference/algorithms.md §4.17), against
a real OpenAI-compatible server on 127.0.0.1 and a fake ``claude`` executable on PATH."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from tests.dream.fakes import FakeChatServer, chat_reply
from ynm.dream.budget import TokenBudget
from ynm.dream.seams import ModelUnavailable, StructuredOutputError, Usage
from ynm.dream.writers import (
    ClaudeCliWriter,
    ModelRequestError,
    OpenAICompatibleWriter,
    claude_available,
    extract_json,
)


class Note(BaseModel):
    text: str
    n: int = Field(ge=0)


def replies(*contents: str, **kw):
    """A verdict answering the given contents in turn (the last one repeats)."""
    queue = list(contents)

    def verdict(req):
        return chat_reply(queue.pop(0) if len(queue) > 1 else queue[0], **kw)
    return verdict


def writer(server, key=None, budget=None, **kw):
    return OpenAICompatibleWriter(server.url + "/v1", "qwen-test", key,
                                  budget=budget or TokenBudget(10**9), **kw)


# -- JSON extraction ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, value", [
    ('{"a": 1}', {"a": 1}),
    ('Here you go: {"a": [1, 2]} hope that helps {"b": 2}', {"a": [1, 2]}),
    ('[{"a": "}"}, 2] trailing ]', [{"a": "}"}, 2]),
    ('{"a": "quote \\" and brace { inside"}', {"a": 'quote " and brace { inside'}),
    ('prose {"x": 0}\n```json\n{"a": 2}\n```\n```\n{"a": 3}\n```', {"a": 2}),
    ('```\n[1, 2]\n```', [1, 2]),
    ('<think>maybe {"a": 0}?</think>\n{"a": 1}', {"a": 1}),
])
def test_extract_json_takes_the_first_value(text, value):
    assert extract_json(text) == value


@pytest.mark.parametrize("text", ["no json here", '{"a": 1', '{"a": 1]', "{'a': 1}"])
def test_extract_json_refuses_what_is_no_json(text):
    with pytest.raises(ValueError):
        extract_json(text)


# -- openai-compatible ---------------------------------------------------------------------------


def test_valid_answer_and_the_request_shape():
    with FakeChatServer(replies('{"text": "hello", "n": 2}', model="served-model")) as server:
        out = writer(server).write("Write a note.", {"memory": "x"}, Note, "note")
    assert out.value == Note(text="hello", n=2)
    assert out.model == "served-model"
    assert out.usage == Usage(input_tokens=10, output_tokens=5)
    (body,) = server.seen
    assert server.paths == ["/v1/chat/completions"]
    assert body["model"] == "qwen-test" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "note", "schema": Note.model_json_schema()}}
    prompt = body["messages"][0]["content"]
    assert prompt.startswith("Write a note.") and '"memory": "x"' in prompt
    assert json.dumps(Note.model_json_schema()) in prompt
    assert "authorization" not in server.headers[0]  # no key: no bearer


def test_bearer_only_with_a_key():
    with FakeChatServer(replies('{"text": "a", "n": 0}')) as server:
        writer(server, key="sk-test").write("w", {}, Note)
    assert server.headers[0]["authorization"] == "Bearer sk-test"
    assert server.seen[0]["response_format"]["json_schema"]["name"] == "Note"


def test_fenced_json_answer():
    answer = 'Sure! Here it is:\n```json\n{"text": "fenced", "n": 1}\n```\nAnything else?'
    with FakeChatServer(replies(answer)) as server:
        assert writer(server).write("w", {}, Note).value == Note(text="fenced", n=1)


def test_invalid_then_valid_retries_once_with_the_issues():
    with FakeChatServer(replies('{"text": 5, "n": -1}', '{"text": "ok", "n": 1}')) as server:
        out = writer(server).write("w", {"k": 1}, Note)
    assert out.value == Note(text="ok", n=1)
    assert len(server.seen) == 2
    first, second = server.prompts
    assert "previous answer was invalid" not in first
    assert "text: Input should be a valid string" in second
    assert "n: Input should be greater than or equal to 0" in second
    assert out.usage == Usage(input_tokens=20, output_tokens=10)  # both tries


def test_no_json_then_valid():
    with FakeChatServer(replies("I cannot answer in JSON.", '{"text": "ok", "n": 0}')) as s:
        assert writer(s).write("w", {}, Note).value.text == "ok"
    assert "(root): no JSON object or array in the answer" in s.prompts[1]


def test_invalid_twice_is_a_structured_output_error():
    with FakeChatServer(replies('{"text": "x"}')) as server:
        with pytest.raises(StructuredOutputError) as caught:
            writer(server).write("w", {}, Note)
    assert len(server.seen) == 2
    assert caught.value.issues == ["n: Field required"]


@pytest.mark.parametrize("status", [429, 529, 500, 503, 408])
def test_busy_or_failing_endpoint_is_unavailable(status):
    with FakeChatServer(lambda req: (status, {"error": {"message": "slow down"}})) as server:
        with pytest.raises(ModelUnavailable, match=f"HTTP {status}"):
            writer(server).write("w", {}, Note)
    assert len(server.seen) == 1  # no retry on an unavailable model


@pytest.mark.parametrize("status", [400, 401, 404])
def test_refused_request_is_a_request_error(status):
    with FakeChatServer(lambda req: (status, {"error": {"message": "bad model"}})) as server:
        with pytest.raises(ModelRequestError, match=f"HTTP {status}: .*bad model"):
            writer(server).write("w", {}, Note)


def test_unreachable_and_slow_endpoints_are_unavailable():
    server = FakeChatServer(replies('{"text": "x", "n": 1}')).start()
    url = server.url
    server.stop()
    with pytest.raises(ModelUnavailable, match="cannot reach"):
        OpenAICompatibleWriter(url + "/v1", "m", budget=TokenBudget(10**6)).write("w", {}, Note)

    def slow(req):
        time.sleep(1.0)
        return chat_reply('{"text": "x", "n": 1}')
    with FakeChatServer(slow) as server:
        with pytest.raises(ModelUnavailable, match="did not answer within 0.2 s"):
            writer(server, timeout_s=0.2).write("w", {}, Note)


def test_metered_only_with_a_key_and_refused_over_budget():
    budget = TokenBudget(50)
    with FakeChatServer(replies('{"text": "x", "n": 1}', prompt_tokens=30)) as server:
        # no key: a local server is not metered
        writer(server, budget=budget).write("w", {}, Note)
        assert budget.spent == 0
        # with a key the estimate (prompt / 4 + 200) is over 50: refused before any request
        with pytest.raises(ModelUnavailable, match="token budget spent"):
            writer(server, key="k", budget=budget).write("w", {}, Note)
    assert len(server.seen) == 1


def test_reported_tokens_are_charged_and_passing_the_budget_refuses():
    budget = TokenBudget(5000)
    with FakeChatServer(replies('{"text": "x", "n": 1}', prompt_tokens=1200)) as server:
        w = writer(server, key="k", budget=budget)
        w.write("w", {}, Note)
        assert budget.spent == 1200
        w.write("w", {}, Note)
        w.write("w", {}, Note)
        assert budget.spent == 3600
        with pytest.raises(ModelUnavailable, match="4800 of 5000"):
            w.write("w", {}, Note)  # reserve: 3600 + estimate (~400) fits; charge 4800 fits
            w.write("w", {}, Note)  # reserve: 4800 + estimate > 5000: refused
    assert len(server.seen) == 4


def test_no_usage_reported_charges_the_estimate():
    budget = TokenBudget(10**6)
    with FakeChatServer(replies('{"text": "x", "n": 1}', prompt_tokens=None)) as server:
        out = writer(server, key="k", budget=budget).write("w", {}, Note)
    assert out.usage is None
    assert budget.spent == (len(server.prompts[0]) + 3) // 4 + 200


# -- claude-cli ----------------------------------------------------------------------------------

FAKE_CLAUDE = """#!{python}
import json, os, sys, time
log = os.environ["FAKE_CLAUDE_LOG"]
args = sys.argv[1:]
if args == ["--version"]:
    print("2.0.0 (Claude Code)")
    sys.exit(0)
stdin = sys.stdin.read() if "-p" in args and (len(args) < 2 or args[1].startswith("--")) else None
with open(log, "a") as f:
    f.write(json.dumps({{"argv": args, "env": dict(os.environ), "stdin": stdin}}) + "\\n")
mode = os.environ.get("FAKE_CLAUDE_MODE", "ok")
if mode == "sleep":
    time.sleep(30)
if mode == "fail":
    print("not logged in", file=sys.stderr)
    sys.exit(3)
result = os.environ.get("FAKE_CLAUDE_RESULT", '{{"text": "from claude", "n": 3}}')
print(json.dumps({{"type": "result", "subtype": "success", "is_error": mode == "error",
                  "result": result, "model": "claude-fake-1",
                  "usage": {{"input_tokens": 7, "cache_read_input_tokens": 100,
                            "cache_creation_input_tokens": 20, "output_tokens": 9}}}}))
"""


@pytest.fixture
def fake_claude(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A ``claude`` on PATH that logs argv, env and stdin (one JSON line per call) to the
    returned file and answers like ``claude -p --output-format json``."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "claude"
    script.write_text(FAKE_CLAUDE.format(python=sys.executable))
    script.chmod(0o755)
    log = tmp_path / "claude.log"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(log))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-should-not-pass")
    monkeypatch.setenv("OTEL_LOG_USER_PROMPTS", "1")
    monkeypatch.setenv("OTEL_LOG_TOOL_DETAILS", "1")
    monkeypatch.setenv("KEEP_ME", "kept")

    def calls():
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return calls


def test_claude_cli_flags_env_and_answer(fake_claude):
    out = ClaudeCliWriter().write("Write a note.", {"m": 1}, Note)
    assert out.value == Note(text="from claude", n=3)
    assert out.model == "claude-fake-1"
    assert out.usage == Usage(input_tokens=127, output_tokens=9)
    (call,) = fake_claude()
    argv = call["argv"]
    assert argv[0] == "-p" and argv[1].startswith("Write a note.")
    assert argv[2:] == ["--output-format", "json", "--strict-mcp-config",
                        "--mcp-config", '{"mcpServers":{}}']
    env = call["env"]
    assert "ANTHROPIC_API_KEY" not in env
    assert "OTEL_LOG_USER_PROMPTS" not in env and "OTEL_LOG_TOOL_DETAILS" not in env
    assert env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert env["KEEP_ME"] == "kept"


def test_claude_cli_model_and_api_key_opt_in(fake_claude):
    ClaudeCliWriter("opus-test", use_api_key=True).write("w", {}, Note)
    (call,) = fake_claude()
    assert call["argv"][-2:] == ["--model", "opus-test"]
    assert call["env"]["ANTHROPIC_API_KEY"] == "sk-ant-should-not-pass"


def test_claude_cli_long_prompt_goes_on_stdin(fake_claude):
    ClaudeCliWriter().write("w", {"big": "x" * 120_000}, Note)
    (call,) = fake_claude()
    assert call["argv"][:2] == ["-p", "--output-format"]
    assert call["stdin"].startswith("w\n") and "x" * 1000 in call["stdin"]


def test_claude_cli_retries_an_invalid_result(fake_claude, monkeypatch):
    monkeypatch.setenv("FAKE_CLAUDE_RESULT", '{"text": "no n"}')
    with pytest.raises(StructuredOutputError):
        ClaudeCliWriter().write("w", {}, Note)
    first, second = fake_claude()
    assert "n: Field required" in second["argv"][1]
    assert "n: Field required" not in first["argv"][1]


@pytest.mark.parametrize("mode, message", [
    ("fail", "claude exited 3: not logged in"),
    ("error", "claude reported an error"),
])
def test_claude_cli_failures_are_unavailable(fake_claude, monkeypatch, mode, message):
    monkeypatch.setenv("FAKE_CLAUDE_MODE", mode)
    with pytest.raises(ModelUnavailable, match=message):
        ClaudeCliWriter().write("w", {}, Note)


def test_claude_cli_timeout_kills_it(fake_claude, monkeypatch):
    monkeypatch.setenv("FAKE_CLAUDE_MODE", "sleep")
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match="no answer within 0.5 s"):
        ClaudeCliWriter(timeout_s=0.5).write("w", {}, Note)
    assert time.monotonic() - started < 10


def test_claude_cli_missing_is_unavailable(tmp_path):
    with pytest.raises(ModelUnavailable, match="cannot run"):
        ClaudeCliWriter(executable=str(tmp_path / "no-claude")).write("w", {}, Note)


def test_claude_probe(fake_claude, tmp_path):
    assert claude_available()
    assert not claude_available({"PATH": str(tmp_path / "empty")})
