"""The spend guard (reference/algorithms.md §4.17): YNM_TOKEN_BUDGET input tokens per process."""

from __future__ import annotations

import pytest

from ynm.dream.budget import (
    DEFAULT_TOKEN_BUDGET,
    TokenBudget,
    estimate_tokens,
    process_budget,
    reset_process_budget,
)
from ynm.dream.seams import ModelUnavailable
from ynm.errors import ConfigError


@pytest.fixture(autouse=True)
def _fresh_process_budget():
    reset_process_budget()
    yield
    reset_process_budget()


@pytest.mark.parametrize("value, tokens", [
    ("", 1),              # '""' is 2 characters
    ("abcdef", 2),        # '"abcdef"' is 8
    ({"a": 1}, 2),        # '{"a":1}' is 7
    ({"k": "é" * 9}, 5),  # characters, not bytes: 17 (26 bytes would give 7)
])
def test_estimate_is_a_quarter_of_the_compact_json(value, tokens):
    assert estimate_tokens(value) == tokens


def test_reserve_refuses_what_would_pass_the_budget():
    b = TokenBudget(100)
    b.reserve(60)
    with pytest.raises(ModelUnavailable, match="token budget spent"):
        b.reserve(60)  # 60 held + 60 > 100
    b.release(60)
    b.reserve(100)  # exactly the limit is allowed
    b.charge(100, 40)
    assert b.spent == 40


@pytest.mark.parametrize("reported, booked", [(30, 30), (None, 50), (0, 50), (-5, 50)])
def test_charge_books_reported_tokens_or_the_estimate(reported, booked):
    b = TokenBudget(1000)
    b.reserve(50)
    b.charge(50, reported)
    assert b.spent == booked


def test_charge_refuses_once_over():
    b = TokenBudget(100)
    b.reserve(50)
    with pytest.raises(ModelUnavailable, match="150 of 100"):
        b.charge(50, 150)
    with pytest.raises(ModelUnavailable):
        b.reserve(1)


def test_process_budget_reads_the_variable_once():
    b = process_budget({"YNM_TOKEN_BUDGET": "1234"})
    assert b.limit == 1234
    assert process_budget({"YNM_TOKEN_BUDGET": "99"}) is b  # one per process
    reset_process_budget()
    assert process_budget({}).limit == DEFAULT_TOKEN_BUDGET == 2_000_000
    reset_process_budget()
    assert process_budget({"YNM_TOKEN_BUDGET": "0"}).limit == 0


@pytest.mark.parametrize("raw", ["lots", "-1", "1.5"])
def test_a_bad_budget_is_a_clear_config_error(raw):
    with pytest.raises(ConfigError, match=f"YNM_TOKEN_BUDGET must be a whole number .*{raw}"):
        process_budget({"YNM_TOKEN_BUDGET": raw})
