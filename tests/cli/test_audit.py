"""``ynm audit tail|search`` over a file sink (reference/server.md §2.7 events; ynm's own
command): the file from ``--file`` or ``YNM_AUDIT``, the rotated file read first, each filter,
``-n``, ``--json``, bad lines skipped and reported, and the errors with their exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ynm.server.audit import FileSink


def _event(at: str, **fields) -> dict:
    return {"at": at, "id": f"01KBC{len(at):021d}", "method": "POST", "path": "/mcp",
            "status": 200, "outcome": "ok", "calls": [], "durationMs": 3, **fields}


EVENTS = [
    _event("2026-11-30T23:59:59.999Z", person="paaaaaaaaaaaaaaaa", client="cli-app",
           calls=[{"tool": "memory_recall", "status": "ok", "resultCount": 4}]),
    _event("2026-12-01T08:00:00.000Z", client="static",
           calls=[{"tool": "memory_remember", "status": "ok",
                   "memoryIds": ["01KBC0000000000000000000AA"]}]),
    _event("2026-12-01T09:30:00.000Z", status=401, outcome="refused", reason="invalid_token"),
    _event("2026-12-01T10:00:00.000Z", person="pbbbbbbbbbbbbbbbb",
           calls=[{"tool": "memory_remember", "status": "error"}]),
    _event("2026-12-02T00:00:00.000Z", client="static", status=500, outcome="error"),
]


@pytest.fixture
def audit_file(tmp_path: Path) -> Path:
    """The five events in a file sink: the first two rotated to ``<file>.1``, a line that is
    not an event among the newer ones."""
    path = tmp_path / "audit.jsonl"
    rotated = path.with_name("audit.jsonl.1")
    rotated.write_text("".join(json.dumps(e) + "\n" for e in EVENTS[:2]))
    sink = FileSink(path)
    sink.write(json.dumps(EVENTS[2]))
    sink.write("{not json")
    for e in EVENTS[3:]:
        sink.write(json.dumps(e))
    return path


def _ats(result) -> list[str]:
    assert result.exit_code == 0, result.stderr
    return [e["at"] for e in json.loads(result.stdout)]


def test_search_reads_the_rotated_file_first_and_reports_bad_lines(cli_run, audit_file):
    result = cli_run("audit", "search", "--file", audit_file, "--json")
    assert _ats(result) == [e["at"] for e in EVENTS]
    assert result.stderr == (f"warning: skipped 1 line that is not an audit event (first: "
                             f"{audit_file}:2)\n")


@pytest.mark.parametrize(("flags", "kept"), [
    (("--person", "pbbbbbbbbbbbbbbbb"), [3]),
    (("--client", "static"), [1, 4]),
    (("--tool", "memory_remember"), [1, 3]),
    (("--outcome", "refused"), [2]),
    (("--outcome", "error"), [4]),
    (("--since", "2026-12-01"), [1, 2, 3, 4]),
    (("--until", "2026-12-01T09:30:00Z"), [0, 1, 2]),
    (("--since", "2026-12-01T10:00:00+01:00", "--until", "2026-12-01T10:00:00.000Z"), [2, 3]),
    (("--since", "2026-11-30T23:59:59.9991Z"), [1, 2, 3, 4]),  # a finer since rounds up
    (("--client", "static", "--outcome", "ok"), [1]),
    (("--person", "pzzzzzzzzzzzzzzzz"), []),
])
def test_search_filters(cli_run, audit_file, flags, kept):
    result = cli_run("audit", "search", "--file", audit_file, "--json", *flags)
    assert _ats(result) == [EVENTS[i]["at"] for i in kept]


def test_tail_shows_the_newest_matching_events_oldest_first(cli_run, audit_file):
    assert _ats(cli_run("audit", "tail", "--file", audit_file, "--json", "-n", "2")) == [
        EVENTS[3]["at"], EVENTS[4]["at"]]
    assert _ats(cli_run("audit", "tail", "--file", audit_file, "--json", "--lines", "1",
                        "--tool", "memory_remember")) == [EVENTS[3]["at"]]
    assert _ats(cli_run("audit", "tail", "--file", audit_file, "--json")) == [
        e["at"] for e in EVENTS]  # fewer than the default 20
    assert _ats(cli_run("audit", "tail", "--file", audit_file, "--json", "-n", "0")) == []


def test_human_output_is_a_table(cli_run, audit_file):
    result = cli_run("audit", "tail", "--file", audit_file, "-n", "3")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["AT", "OUTCOME", "STATUS", "PERSON", "CLIENT", "REQUEST",
                                "CALLS", "MS"]
    assert lines[1].split() == ["2026-12-01T09:30:00.000Z", "refused", "(invalid_token)", "401",
                                "-", "-", "POST", "/mcp", "-", "3"]
    assert lines[2].split() == ["2026-12-01T10:00:00.000Z", "ok", "200", "pbbbbbbbbbbbbbbbb",
                                "-", "POST", "/mcp", "memory_remember:error", "3"]
    empty = cli_run("audit", "search", "--file", audit_file, "--person", "pnobody")
    assert empty.stdout == "no audit events\n"


def test_the_file_comes_from_ynm_audit(cli_run, audit_file, monkeypatch):
    monkeypatch.setenv("YNM_AUDIT", json.dumps({"sink": "file", "path": str(audit_file)}))
    assert _ats(cli_run("audit", "tail", "--json", "-n", "1")) == [EVENTS[4]["at"]]


def test_the_file_comes_from_the_ynm_home_env_file(cli_run, audit_file, ynm_home):
    ynm_home.mkdir(parents=True, exist_ok=True)
    (ynm_home / "env").write_text(
        "YNM_AUDIT=" + json.dumps({"sink": "file", "path": str(audit_file)}) + "\n")
    assert _ats(cli_run("audit", "tail", "--json", "-n", "1")) == [EVENTS[4]["at"]]


@pytest.mark.parametrize(("env", "args", "code", "message"), [
    (None, (), 2, ("Error: invalid input: --file: no audit file: YNM_AUDIT names no file "
                   "sink (it is not set)")),
    ('{"sink":"stdout"}', (), 2, ("Error: invalid input: --file: no audit file: YNM_AUDIT "
                                  'names no file sink (sink is "stdout")')),
    ('{"sink":"s3"}', (), 2, 'Error: invalid input: YNM_AUDIT: sink: ynm has no "s3" audit'),
    (None, ("--since", "yesterday"), 2, "Error: invalid input: --since: expected an ISO 8601"),
    (None, ("--until", "2026-12-01T10:00"), 2,
     ("Error: invalid input: --until: expected an ISO 8601 date-time with Z or an offset, got "
      "'2026-12-01T10:00': add Z for UTC (2026-12-01T10:00Z) or an offset "
      "(2026-12-01T10:00+05:00)")),
    (None, ("--outcome", "denied"), 2, ""),
])
def test_errors_and_exit_codes(cli_run, audit_file, monkeypatch, env, args, code, message):
    if env is not None:
        monkeypatch.setenv("YNM_AUDIT", env)
    if args:
        args = ("--file", audit_file, *args)
    result = cli_run("audit", "search", *args)
    assert result.exit_code == code
    assert result.stderr.startswith(message)
    assert "Traceback" not in result.stderr


def test_a_missing_file_is_an_error(cli_run, tmp_path):
    result = cli_run("audit", "tail", "--file", tmp_path / "none.jsonl")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: no audit events at {tmp_path / 'none.jsonl'} (the file is "
                             "created by the first audited request of ynm serve --http)\n")


def test_lines_and_follow_are_for_tail(cli_run, audit_file):
    for flags in (("-n", "2"), ("--follow",)):
        result = cli_run("audit", "search", "--file", audit_file, *flags)
        assert result.exit_code == 2
        assert "is for tail" in result.stderr


def test_follow_prints_new_events_across_a_rotation(audit_file):
    """``ynm audit tail -f --json``: the newest matching event, then each matching event as it
    is written, one JSON line each, including the ones written just before the file rotated."""
    import os
    import queue
    import subprocess
    import sys
    import threading

    proc = subprocess.Popen(
        [sys.executable, "-m", "ynm", "audit", "tail", "-f", "--json", "-n", "1", "--file",
         str(audit_file), "--client", "static"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout],
                     daemon=True).start()
    try:
        assert json.loads(lines.get(timeout=30))["at"] == EVENTS[4]["at"]
        sink = FileSink(audit_file, max_bytes=audit_file.stat().st_size + 250)
        new = [_event(f"2026-12-03T00:00:0{i}.000Z", client="static" if i != 1 else "cli")
               for i in range(4)]
        for event in new:  # the second one rotates the file
            sink.write(json.dumps(event))
        got = [json.loads(lines.get(timeout=15))["at"] for _ in range(3)]
        assert got == [new[0]["at"], new[2]["at"], new[3]["at"]]
        assert audit_file.with_name("audit.jsonl.1").read_text().count("2026-12-03") == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)
