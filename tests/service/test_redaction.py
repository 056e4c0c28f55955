"""The redaction gate: current secret formats are refused with the detector named, ordinary
developer text passes (every detector is bounded on the left), configured patterns still refuse
by pattern, and personal writes are never gated (ynm/service/redaction.py)."""

from __future__ import annotations

import json

import pytest

from tests.support.secrets import (
    ALNUM,
    GLUED,
    JWT,
    ORDINARY,
    PASSWORD_PROSE,
    PASSWORDS,
    SECRETS,
    fake,
)
from ynm.errors import Refused
from ynm.service import redaction
from ynm.service.config import Config


def defaults() -> tuple[list[str], str]:
    config = Config()
    return config.redaction, config.redaction_detectors


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_current_secret_formats_are_refused_with_the_detector_named(name):
    detector, text = SECRETS[name]
    with pytest.raises(Refused) as caught:
        redaction.check([text], *defaults())
    assert str(caught.value) == f"refused: content matches 1 secret detector: {detector}"


@pytest.mark.parametrize("text", ORDINARY + GLUED)
def test_ordinary_developer_text_passes(text):
    redaction.check([text], *defaults())  # raises Refused on a false positive


def test_several_detectors_are_counted_and_sorted():
    texts = [SECRETS["github fine-grained"][1], "tag " + SECRETS["aws"][1]]
    with pytest.raises(Refused) as caught:
        redaction.check(texts, *defaults())
    assert str(caught.value) == ("refused: content matches 2 secret detectors: "
                                 "AWS Access Key, GitHub Token")


def test_a_secret_on_a_later_line_is_found():
    text = "notes\n\n" + SECRETS["stripe live"][1] + "\nmore"
    assert redaction.find([text], []).detectors == ["Stripe Access Key"]


def test_configured_patterns_are_reported_by_pattern_next_to_detectors():
    patterns = ["ACME-[0-9]{6}", "(?i)internal\\.acme\\.corp"]
    one = redaction.find(["ticket ACME-123456"], patterns)
    assert one.message() == "refused: content matches 1 redaction pattern: ACME-[0-9]{6}"
    both = redaction.find(["ACME-123456 on INTERNAL.acme.corp", SECRETS["aws"][1]], patterns)
    assert both.message() == ("refused: content matches 1 secret detector: AWS Access Key; "
                              "2 redaction patterns: ACME-[0-9]{6}, (?i)internal\\.acme\\.corp")
    assert not redaction.find(["acme-123456 on example.org"], patterns)


def test_detectors_none_leaves_only_the_patterns():
    assert redaction.find([SECRETS["aws"][1]], [], "none").detectors == []
    assert redaction.find([SECRETS["aws"][1]], ["AKIA"], "none").patterns == ["AKIA"]


def test_entropy_detectors_are_opt_in():
    quoted = 'the fixture uses "' + fake(40, ALNUM + "+/") + '" as its seed'
    sha = 'pinned to "3f2a9c1e5b7d4f6a8c0e2b4d6f8a0c2e4b6d8f0a"'
    assert redaction.find([quoted, sha], []).detectors == []
    assert redaction.find([quoted, sha], [], "entropy").detectors == [
        "Base64 High Entropy String", "Hex High Entropy String"]
    plain = 'a "short" or "aaaaaaaaaaaaaaaaaaaa" string'
    assert redaction.find([plain], [], "entropy").detectors == []


@pytest.mark.parametrize("offset", [0, 2040, 4090, 9000, 60000])
def test_a_secret_anywhere_in_a_long_line_is_found(offset):
    line = ("word-" * 13200)[:offset] + " " + JWT + " " + "tail-" * 2000
    assert redaction.find([line], []).detectors == ["JSON Web Token"]
    glued = ("word-" * 13200)[:offset] + "x" + SECRETS["aws"][1].split()[-1]
    assert redaction.find([glued], []).detectors == []


@pytest.mark.parametrize("run", ["sk-", "eyJ", "://a:", "//r/:_authToken=", "risk-"])
def test_long_runs_of_a_secret_prefix_are_checked_in_bounded_time(run):
    """Some detect-secrets regexes take time quadratic in such runs (about 100 s of CPU for a
    64 KiB line of ``sk-``); the gate reads long lines in overlapping pieces."""
    import time

    line = (run * 30000)[:65536]
    started = time.process_time()
    assert redaction.find([line], []).detectors == []
    assert time.process_time() - started < 10


# ------------------------------------------------------------------------- through the CLI


def remember(cli_run, level, text, *extra):
    return cli_run("remember", "--type", "semantic", "--level", level, "--content", text, *extra)


@pytest.mark.parametrize("name", ["github fine-grained", "anthropic", "jwt", "slack bot"])
def test_cli_refuses_distributed_and_accepts_personal(project, cli_run, name):
    detector, text = SECRETS[name]
    r = remember(cli_run, "distributed", text)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"Error: refused: content matches 1 secret detector: {detector}"
    assert json.loads(cli_run("list", "--json", "--level", "distributed").stdout) == []
    r = remember(cli_run, "personal", text)
    assert r.exit_code == 0, r.stderr


def test_cli_stores_ordinary_hyphenated_text(project, cli_run):
    for text in ORDINARY[:3]:
        r = remember(cli_run, "distributed", text)
        assert r.exit_code == 0, r.stderr
    stored = json.loads(cli_run("list", "--json", "--level", "distributed").stdout)
    assert sorted(m["current"]["content"] for m in stored) == sorted(ORDINARY[:3])


def test_cli_configured_patterns_and_detector_switch(project, cli_run, ynm_home):
    ynm_home.mkdir(exist_ok=True)
    config = ynm_home / "config.json"
    config.write_text(json.dumps({"redaction": ["ACME-[0-9]{6}"]}))
    r = remember(cli_run, "distributed", "see ACME-123456")
    assert r.exit_code == 2
    assert r.stderr.strip() == "Error: refused: content matches 1 redaction pattern: ACME-[0-9]{6}"
    r = remember(cli_run, "distributed", SECRETS["aws"][1])  # the detectors still run
    assert r.exit_code == 2 and "1 secret detector: AWS Access Key" in r.stderr
    config.write_text(json.dumps({"redactionDetectors": "none"}))
    assert remember(cli_run, "distributed", SECRETS["aws"][1]).exit_code == 0
    config.write_text(json.dumps({"redactionDetectors": "sometimes"}))
    r = remember(cli_run, "distributed", "fine")
    assert r.exit_code != 0 and "redactionDetectors" in r.stderr


def test_supersede_annotate_and_promote_are_gated(project, cli_run):
    secret = SECRETS["github fine-grained"][1]
    shared = json.loads(cli_run("remember", "--type", "semantic", "--level", "distributed",
                                "--content", "fine", "--json").stdout)["memoryId"]
    assert cli_run("supersede", "--memory-id", shared, "--content", secret).exit_code == 2
    assert cli_run("annotate", "--memory-id", shared, "--data",
                   json.dumps({"k": secret})).exit_code == 2
    mine = json.loads(cli_run("remember", "--type", "semantic", "--content", secret,
                              "--json").stdout)["memoryId"]
    r = cli_run("promote", mine)
    assert r.exit_code == 2
    assert "refused: content matches 1 secret detector: GitHub Token" in r.stderr
    assert len(json.loads(cli_run("list", "--json", "--level", "distributed").stdout)) == 1


def test_detect_secrets_is_imported_only_by_a_gated_write(project):
    """``ynm --help``, ``recall`` and personal writes start without the detector library."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    probe = ("import sys\nfrom ynm.cli import cli\n"
             "try:\n    cli.main(sys.argv[1:], prog_name='ynm')\nexcept SystemExit:\n    pass\n"
             "print('detect_secrets' in sys.modules, file=sys.stderr)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}

    def loaded(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True,
                              text=True, env=env, cwd=project, timeout=120)
        return proc.stderr.strip().splitlines()[-1]

    assert loaded("--help") == "False"
    assert loaded("recall", "anything") == "False"
    assert loaded("remember", "--type", "semantic", "--content", "mine") == "False"
    assert loaded("remember", "--type", "semantic", "--level", "distributed",
                  "--content", "ours") == "True"


def test_a_missing_detector_library_is_an_error_not_a_pass(monkeypatch):
    from ynm.errors import YnmError

    redaction._plugins.cache_clear()
    monkeypatch.setitem(__import__("sys").modules, "detect_secrets.plugins.aws", None)
    try:
        with pytest.raises(YnmError, match="needs the detect-secrets package") as caught:
            redaction.check(["harmless"], [])
        assert not isinstance(caught.value, Refused)
    finally:
        redaction._plugins.cache_clear()


# -- passwords written out after a password-like name ("Secret Keyword") --------------------


@pytest.mark.parametrize("text", PASSWORDS)
def test_written_out_passwords_are_refused_naming_the_detector(text):
    with pytest.raises(Refused) as caught:
        redaction.check([text], *defaults())
    assert str(caught.value) == "refused: content matches 1 secret detector: Secret Keyword"


@pytest.mark.parametrize("text", PASSWORD_PROSE)
def test_prose_and_code_about_passwords_passes(text):
    redaction.check([text], *defaults())  # raises Refused on a false positive


def test_the_synthetic_corpus_passes_the_password_rule():
    import sys
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    from benchmarks.corpus import generate_corpus

    texts = [r["content"] if isinstance(r, dict) else r.content
             for r in generate_corpus(count=500).records]
    assert [t for t in texts if redaction.detect([t])] == []


@pytest.mark.parametrize("line", ["password=" * 10_000, "passwordpassword_" * 5000,
                                  '"password": "' * 5000, "p:" * 50_000])
def test_the_password_rule_takes_linear_time(line):
    import time

    start = time.perf_counter()
    redaction.detect([line])
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize("text", ["password=hunter2", 'db_password: "S3cr3t!"',
                                  "PGPASSWORD=Tr0ub4dor psql -h db"])
def test_cli_refuses_a_distributed_password_and_keeps_a_personal_one(project, cli_run, text):
    r = remember(cli_run, "distributed", text)
    assert r.exit_code == 2
    assert r.stderr.strip() == "Error: refused: content matches 1 secret detector: Secret Keyword"
    assert remember(cli_run, "personal", text).exit_code == 0
    for prose in ("reset your password in settings", "the password field is required"):
        assert remember(cli_run, "distributed", prose).exit_code == 0
