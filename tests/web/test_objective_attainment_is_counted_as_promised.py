"""Issue 51: "P% of letters are resolved within D", counted by PostgreSQL over the last 7 and 30
days (console.services.objectives.attainment), equals a count done here by hand over the same
seeded letters, each with a known capture and resolution time: resolved in time, resolved late,
still open past D (late already), and still open within D (not counted yet); replayed, marked
failed or purged all resolve. Below P over 7 days, the objective is breached."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from console.models import DeadLetter, Objective
from console.services.objectives import attainment, attainments, do_set_objective, evaluate_objectives
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

D = 3600


def test_attainment_over_7_and_30_days_equals_a_count_by_hand(memory_broker, operator):
    place = memory_place(memory_broker)
    other = memory_place(memory_broker, origin="billing")
    now = timezone.now()
    rng = random.Random(51)
    seeded = []
    for n in range(240):
        letter = store_letter(place, f'{{"n": {n}}}'.encode())
        captured = now - timedelta(seconds=rng.uniform(0, 40 * 86400))
        state = rng.choice(["held", "replayed", "failed", "purged", "replayed"])
        took = rng.uniform(0, 3 * D)
        resolved_at = captured + timedelta(seconds=took) if state != "held" else captured
        DeadLetter.objects.filter(pk=letter.pk).update(captured_at=captured, state=state,
                                                       state_changed_at=min(resolved_at, now))
        seeded.append((captured, state, min(took, (now - captured).total_seconds())))
    store_letter(other, b"{}")  # another place's letter is not counted
    objective = do_set_objective(actor=operator, name="an hour, 90%", kind="resolved", seconds=D, percent=90,
                                 place=place)

    def by_hand(days: int) -> float:
        window = [(c, s, t) for c, s, t in seeded if c > now - timedelta(days=days)]
        known = [(c, s, t) for c, s, t in window if s != "held" or (now - c).total_seconds() > D]
        in_time = [1 for _, s, t in known if s != "held" and t <= D]
        return len(in_time) / len(known)

    for days in (7, 30):
        assert attainment(objective, now, days) == pytest.approx(by_hand(days), abs=1e-9)
    assert attainments(objective, now) == pytest.approx([by_hand(7), by_hand(30)], abs=1e-9), "in one pass"
    assert 0.2 < by_hand(7) < 0.6, "the seed makes a share well under 90%"
    evaluate_objectives(now=now + timedelta(days=1))  # counted again: a day later
    objective.refresh_from_db()
    assert objective.state == Objective.State.BREACHED
    assert objective.attainment_30d is not None
