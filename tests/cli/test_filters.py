"""Read filters follow the write rules: a value no memory could hold is refused with exit 2 and
the write's words, not answered with "no memories"; namespace filters are lower-cased and lose
trailing slashes first (seed 000: namespaces are lowercase-only; reference/algorithms.md §1.3)."""

from __future__ import annotations

import pytest

BAD_NAMESPACES = [
    ("Team//x", "namespace must be /-separated segments"),
    ("a b", "namespace must be /-separated segments"),
    ("/leading", "namespace must be /-separated segments"),
    ("x/a..b", "namespace segments must not contain '..'"),
    ("x/y.lock", "or end in '.lock'"),
    ("a" * 513, "namespace must be at most 512 characters"),
]
# every read with a --namespace filter, as (command words, extra arguments)
NAMESPACE_READS = [
    ("recall",), ("list",), ("context",), ("export",), ("session", "start", "t1"), ("dream",),
]


@pytest.mark.parametrize("command", NAMESPACE_READS, ids=lambda c: " ".join(c))
@pytest.mark.parametrize(("value", "words"), BAD_NAMESPACES, ids=lambda v: str(v)[:12])
def test_namespace_filter_refused_like_a_write(project, cli_run, command, value, words):
    result = cli_run(*command, "--namespace", value)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Error: invalid input: namespace: ")
    assert words in result.stderr
    # the write refuses the same value with the same words
    write = cli_run("remember", "--type", "semantic", "--namespace", value, "--content", "x")
    assert write.exit_code == 2 and words in write.stderr


def test_namespace_filter_is_lower_cased_and_loses_trailing_slashes(project, cli_run, run_json):
    made = run_json("remember", "--type", "semantic", "--level", "distributed",
                    "--namespace", "team/payments", "--content", "Ledger deploys on Tuesdays")
    for value in ("Team/Payments", "TEAM/payments/", "team/PAYMENTS//", "Team"):
        hits = run_json("recall", "ledger", "--namespace", value)
        assert [h["memoryId"] for h in hits] == [made["memoryId"]], value
        listed = run_json("list", "--namespace", value)
        assert [m["memoryId"] for m in listed] == [made["memoryId"]], value
    assert run_json("recall", "ledger", "--namespace", "team/pay") == []


@pytest.mark.parametrize(("args", "message"), [
    (("--tags", "x" * 65), "invalid input: tags: each tag must be 1..64 characters"),
    (("--tags", "ok", "--tags", "y" * 100), "invalid input: tags: each tag must be 1..64 characters"),
    (("--subject", "s" * 201), "invalid input: subject: must be at most 200 characters"),
])
def test_tag_and_subject_filters_no_memory_can_match_are_refused(project, cli_run, args, message):
    result = cli_run("recall", "anything", *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"Error: {message}"


def test_tag_and_subject_filters_at_the_limits_still_match(project, cli_run, run_json):
    tag, subject = "t" * 64, "entity:" + "s" * 193
    made = run_json("remember", "--type", "semantic", "--content", "limits here",
                    "--tags", tag, "--subject", subject)
    hits = run_json("recall", "limits", "--tags", tag, "--subject", subject)
    assert [h["memoryId"] for h in hits] == [made["memoryId"]]
