"""Each default redaction pattern refuses a distributed write and lets the same text through at
personal level (reference/cli.md §5.5)."""

from __future__ import annotations

import json

import pytest

SAMPLES = {
    "-----BEGIN [A-Z ]*PRIVATE KEY-----": "-----BEGIN RSA PRIVATE KEY-----\nMIIE",
    "AKIA[0-9A-Z]{16}": "key AKIA" + "ABCDEFGHIJKLMNOP",
    "gh[pousr]_[A-Za-z0-9]{20,}": "token ghp_" + "a" * 24,
    "sk-[A-Za-z0-9_-]{20,}": "openai sk-" + "b" * 24,
    "xox[baprs]-[A-Za-z0-9-]{10,}": "slack xoxb-" + "1234567890ab",
    "(?i)bearer\\s+[A-Za-z0-9._-]{20,}": "Authorization: BEARER " + "c" * 24,
}


@pytest.mark.parametrize("pattern", sorted(SAMPLES))
def test_default_pattern_refuses_distributed_and_accepts_personal(project, cli_run, pattern):
    text = SAMPLES[pattern]
    r = cli_run("remember", "--type", "semantic", "--level", "distributed", "--content", text)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"Error: refused: content matches 1 redaction pattern: {pattern}"
    assert json.loads(cli_run("list", "--json", "--level", "distributed").stdout) == []
    r = cli_run("remember", "--type", "semantic", "--level", "personal", "--content", text)
    assert r.exit_code == 0, r.stderr


def test_supersede_annotate_and_promote_are_gated(project, cli_run):
    secret = SAMPLES["AKIA[0-9A-Z]{16}"]
    shared = json.loads(cli_run("remember", "--type", "semantic", "--level", "distributed",
                                "--content", "fine", "--json").stdout)["memoryId"]
    assert cli_run("supersede", "--memory-id", shared, "--content", secret).exit_code == 2
    assert cli_run("annotate", "--memory-id", shared, "--data",
                   json.dumps({"k": secret})).exit_code == 2
    mine = json.loads(cli_run("remember", "--type", "semantic", "--content", secret,
                              "--json").stdout)["memoryId"]
    r = cli_run("promote", mine)
    assert r.exit_code == 2 and "refused: content matches" in r.stderr
    assert len(json.loads(cli_run("list", "--json", "--level", "distributed").stdout)) == 1
