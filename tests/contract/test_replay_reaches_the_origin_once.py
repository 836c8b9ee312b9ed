"""Replay publishes each letter back to the origin it died in: the origin's consumer receives
each exactly once, carrying the letter's replay id."""

from __future__ import annotations

from console.models import AuditEvent
from console.services.custody import REPLAY_ID_HEADER
from tests.contract.conftest import BODIES
from tests.flow import capture, letters_of, replay


def test_replay_reaches_the_origin_exactly_once_with_the_replay_id(harness, dead):
    capture(dead, harness.operator)
    letters = letters_of(dead)

    job = replay(harness.operator, [letter.id for letter in letters])
    assert (job.status, job.done, job.failed) == ("succeeded", len(BODIES), 0), job.log

    received = harness.origin_receives()
    assert sorted(body for body, _ in received) == sorted(BODIES)
    replay_ids = {letter.body_bytes: letter.replay_id for letter in letters_of(dead)}
    for body, headers in received:
        assert headers[REPLAY_ID_HEADER] == replay_ids[body]
        assert headers["trace"] == str(BODIES.index(body)), "the application's own headers go along"
    assert len(set(replay_ids.values())) == len(BODIES)
    assert harness.origin_receives() == [], "each letter reaches the origin once"
    assert {letter.state for letter in letters_of(dead)} == {"replayed"}
    assert AuditEvent.objects.filter(action="replay", outcome="confirmed", job_id=job.pk).exists()
