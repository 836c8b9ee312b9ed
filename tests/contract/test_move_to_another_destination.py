"""Move publishes letters to a destination the operator names instead of their origin."""

from __future__ import annotations

from tests.contract.conftest import BODIES
from tests.flow import capture, letters_of, move


def test_move_delivers_to_the_chosen_destination_and_not_to_the_origin(harness, dead):
    capture(dead, harness.operator)
    target = harness.make_move_target()
    (first, *rest) = letters_of(dead)

    job = move(harness.operator, [first.id], target)
    assert (job.status, job.done, job.failed) == ("succeeded", 1, 0), job.log
    (arrived,) = harness.target_receives()
    assert arrived[0] == first.body_bytes
    assert harness.origin_receives() == []
    first.refresh_from_db()
    assert (first.state, first.replayed_to) == ("replayed", target)
    assert {letter.state for letter in rest} == {"held"} and len(rest) == len(BODIES) - 1
