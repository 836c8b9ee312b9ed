"""What the rules' tests share."""

from __future__ import annotations

from collections import Counter

import pytest

from console.jobs.automation import rules_at_work as rounds


@pytest.fixture
def decided(monkeypatch) -> Counter:
    """How many times a round of the rules gave each letter to decide()."""
    counts: Counter = Counter()
    real = rounds.decide

    def counting(rules, letters):
        counts.update(letters.values_list("id", flat=True))
        return real(rules, letters)

    monkeypatch.setattr(rounds, "decide", counting)
    return counts
