"""Moves publish to a chosen subject; a subject no stream stores is refused; a replay published
twice (a worker crash between publish and record) reaches the consumer once."""

from __future__ import annotations

import pytest

from console.brokers import Outgoing
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.letters.values import from_json
from console.models import Job
from tests.nats.flow import capture, discover_place, letters_of

pytestmark = [pytest.mark.nats, pytest.mark.django_db]


def _move(letter, target: str) -> Job:
    job = request_job("move", target=target, actor="tests", reason="elsewhere", ids=[letter.id])
    run_job(job.pk)
    return Job.objects.get(pk=job.pk)


def test_move_to_a_subject_of_the_stream_then_to_a_subject_nobody_stores(nats_broker, failing_consumer):
    source = failing_consumer()
    seq = source.publish(b"move me")
    source.fail_until_dead(1)
    place = discover_place(nats_broker, source)
    capture(place)
    (letter,) = letters_of(place)

    nowhere = _move(letter, "dlo.nobody.listens.here")
    assert (nowhere.status, nowhere.done, nowhere.failed) == ("failed", 0, 1)
    assert any("no stream for subject 'dlo.nobody.listens.here'" in e["message"] for e in nowhere.log)
    assert source.stored(seq) is not None, "a refused move leaves the original where it was"

    moved = _move(letter, source.subject("parking"))
    assert (moved.status, moved.done, moved.failed) == ("succeeded", 1, 0)
    (arrived,) = source.fetch()
    assert (arrived.subject, arrived.data) == (source.subject("parking"), b"move me")
    assert source.stored(seq) is None


def test_the_same_replay_published_twice_reaches_the_consumer_once(nats_broker, failing_consumer):
    source = failing_consumer()
    seq = source.publish(b"only once", headers={"Nats-Msg-Id": "original-id"})
    source.fail_until_dead(1)
    place = discover_place(nats_broker, source)
    capture(place)
    (letter,) = letters_of(place)
    out = Outgoing(key=letter.id, destination=letter.origin_queue, body=letter.body_bytes,
                   headers={**from_json(letter.headers), "x-dlo-replay-id": "replay-1"},
                   properties=from_json(letter.properties), scope=place.scope)

    with nats_broker.adapter() as adapter:
        first = adapter.publish([out], window=10)
        second = adapter.publish([out], window=10)  # the original is gone by now: that is fine
    assert [r.ok for r in first + second] == [True, True]
    assert source.stored(seq) is None
    delivered = source.fetch()
    assert [(m.data, m.headers["Nats-Msg-Id"]) for m in delivered] == [(b"only once", "replay-1")]
